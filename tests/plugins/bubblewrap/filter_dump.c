/* filter_dump.c: writes the seccomp program the plugins hand bwrap to
 * stdout, byte for byte (the memfd kgl_seccomp_fd makes at launch).
 *
 * For tests/integration/layers.sh, which replays kgate's --dry-run plan
 * with bwrap directly so that each layer of a layered protection can be
 * tried alone: the plan carries no descriptors, so a replay has no filter
 * unless it is given this one (--seccomp FD).  A test tool, never
 * installed: kgate itself has no way to run without its filter. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kgate/kgate-linux.h"

int main(void)
{
    kgate_err err = {0};
    int fd = kgl_seccomp_fd(&err);
    if (fd < 0) {
        fprintf(stderr, "filter_dump: %s\n", err.msg);
        return 1;
    }
    char buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            fprintf(stderr, "filter_dump: read: %s\n", strerror(errno));
            return 1;
        }
        if (n == 0) break;
        if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n) return 1;
    }
    close(fd);
    return fflush(stdout) == 0 ? 0 : 1;
}
