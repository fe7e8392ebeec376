/* bwrap-seccomp-fd.c: hands bwrap the seccomp program compiled at build
 * time (seccomp-gen.c) in a memfd, for --seccomp FD. */
#include "bwrap-share.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kgbw-seccomp-program.h"

int kgbw_seccomp_fd(kgate_err *err)
{
    int mfd = memfd_create("kgate-seccomp", MFD_CLOEXEC);
    if (mfd < 0)
        return kgate_err_set(err, errno, "seccomp filter: cannot create a memfd: %s",
                             strerror(errno));
    /* >= 10, clear of the stdio numbers the launch child fills. */
    int fd = fcntl(mfd, F_DUPFD_CLOEXEC, 10);
    int saved = errno;
    close(mfd);
    if (fd < 0)
        return kgate_err_set(err, saved, "seccomp filter: cannot move the memfd: %s",
                             strerror(saved));
    const unsigned char *p = kgbw_seccomp_program;
    size_t left = sizeof kgbw_seccomp_program;
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            saved = n < 0 ? errno : EIO;
            close(fd);
            return kgate_err_set(err, saved, "seccomp filter: cannot write the program: %s",
                                 strerror(saved));
        }
        p += n;
        left -= (size_t)n;
    }
    if (lseek(fd, 0, SEEK_SET) != 0) {
        saved = errno;
        close(fd);
        return kgate_err_set(err, saved, "seccomp filter: cannot rewind: %s",
                             strerror(saved));
    }
    return fd;
}
