/* sb-watch-linux.c: waiting for kgate's end with a pidfd (see sb-watch.h).
 * The seatbelt backend never launches on Linux; this counterpart lets the
 * tests run the watcher, the same logic with Linux's way of watching a
 * process: a pidfd (readable once the process has exited) and a signalfd
 * for SIGTERM. */
#include "sb-watch.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

int sb_watch_arm(sb_watch *w, pid_t parent)
{
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &term, NULL) < 0) return -1;
    int pfd = (int)syscall(SYS_pidfd_open, parent, 0);
    if (pfd < 0) return errno == ESRCH ? 1 : -1;
    int sfd = signalfd(-1, &term, SFD_CLOEXEC);
    if (sfd < 0) {
        int e = errno;
        close(pfd);
        errno = e;
        return -1;
    }
    w->fd[0] = pfd;
    w->fd[1] = sfd;
    return 0;
}

void sb_watch_wait(sb_watch *w)
{
    struct pollfd p[2] = {{.fd = w->fd[0], .events = POLLIN}, {.fd = w->fd[1], .events = POLLIN}};
    while (poll(p, 2, -1) < 0 && errno == EINTR) {}
}

void sb_watch_close_fds(int keep)
{
    if (keep > 0) (void)syscall(SYS_close_range, 0U, (unsigned)keep - 1, 0U);
    (void)syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0U);
}
