/* sb-watch-macos.c: waiting for kgate's end with kqueue (see sb-watch.h).
 * EVFILT_PROC with NOTE_EXIT names the process itself, not a parent
 * relation, and fires once it has exited.  EVFILT_SIGNAL records a SIGTERM
 * even while the signal is ignored, so the core's stop is seen without a
 * handler. */
#include "sb-watch.h"

#include <errno.h>
#include <signal.h>
#include <sys/event.h>
#include <sys/resource.h>
#include <unistd.h>

int sb_watch_arm(sb_watch *w, pid_t parent)
{
    signal(SIGTERM, SIG_IGN);
    int kq = kqueue();
    if (kq < 0) return -1;
    struct kevent ev;
    EV_SET(&ev, SIGTERM, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL);
    if (kevent(kq, &ev, 1, NULL, 0, NULL) < 0) goto fail;
    EV_SET(&ev, parent, EVFILT_PROC, EV_ADD | EV_ONESHOT, NOTE_EXIT, 0, NULL);
    if (kevent(kq, &ev, 1, NULL, 0, NULL) < 0) {
        if (errno == ESRCH) { /* ended already */
            close(kq);
            return 1;
        }
        goto fail;
    }
    w->fd[0] = kq;
    w->fd[1] = -1;
    return 0;
fail:;
    int e = errno;
    close(kq);
    errno = e;
    return -1;
}

void sb_watch_wait(sb_watch *w)
{
    struct kevent ev;
    while (kevent(w->fd[0], NULL, 0, &ev, 1, NULL) < 0 && errno == EINTR) {}
}

void sb_watch_close_fds(int keep)
{
    /* No close_range: every number up to the descriptor limit (256 by
     * default on macOS). */
    struct rlimit rl;
    int max =
        getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 65536
            ? (int)rl.rlim_cur
            : 65536;
    for (int fd = 0; fd < max; fd++)
        if (fd != keep) (void)close(fd);
}
