/* sb-watch.c: the watcher that kills the program when kgate ends (see
 * sb-watch.h).  It runs in a forked copy of kgate and never returns into
 * it: it only calls async-signal-safe functions and leaves with _exit. */
#include "sb-watch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void watcher(pid_t parent, pid_t program, int ready)
{
    /* A session of its own: the terminal's Ctrl-C and hangup are for kgate
     * and the program, not for the watcher that must outlive both. */
    (void)setsid();
    sb_watch_close_fds(ready);
    static const int quiet[] = {SIGINT, SIGQUIT, SIGHUP, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU};
    for (size_t i = 0; i < sizeof quiet / sizeof *quiet; i++) signal(quiet[i], SIG_IGN);

    sb_watch w;
    int armed = sb_watch_arm(&w, parent);
    char b = armed < 0 ? 'e' : 'k';
    /* kgate may already be gone: nobody reads then, which is fine. */
    (void)!write(ready, &b, 1);
    close(ready);
    if (armed < 0) _exit(1);
    if (armed == 0 && getppid() == parent) sb_watch_wait(&w);
    /* The group first (the program's children), then the program itself,
     * in case it had not yet made its session when kgate ended. */
    kill(-program, SIGKILL);
    kill(program, SIGKILL);
    _exit(0);
}

pid_t sb_watch_start(pid_t program)
{
    int p[2];
    if (pipe(p) < 0) return -1;
    (void)fcntl(p[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(p[1], F_SETFD, FD_CLOEXEC);
    pid_t parent = getpid();
    pid_t w = fork();
    if (w == 0) {
        close(p[0]);
        watcher(parent, program, p[1]);
    }
    int e = errno;
    close(p[1]);
    if (w < 0) {
        close(p[0]);
        errno = e;
        return -1;
    }
    char b = 0;
    ssize_t n;
    do {
        n = read(p[0], &b, 1);
    } while (n < 0 && errno == EINTR);
    close(p[0]);
    if (n == 1 && b == 'k') return w;
    /* It could not watch: reap it and say so. */
    kill(w, SIGKILL);
    while (waitpid(w, NULL, 0) < 0 && errno == EINTR) {}
    errno = n == 1 ? ENOSYS : ECHILD;
    return -1;
}
