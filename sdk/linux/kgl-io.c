/* kgl-io.c: the small descriptor, process and clock helpers that the
 * SDK's launch pieces and the Linux plugins all need, written once.  Each
 * is async-signal-safe but kgl_now_ms (clock_gettime is, on Linux), so a
 * forked child may use them before its exec. */
#include "kgate/kgate-linux.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int kgl_reap(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return st;
}

void kgl_kill_reap(pid_t pid)
{
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    kgl_reap(pid);
}

long kgl_now_ms(void)
{
    struct timespec ts = {0, 0};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int kgl_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}
