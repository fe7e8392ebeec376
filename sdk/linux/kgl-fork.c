/* kgl-fork.c: the one way the support library forks a helper of its own
 * (kgl_fork_blocked, kgate-linux.h).  Every signal is blocked across the
 * fork: the core's handlers (and whatever a backend installed) would
 * otherwise run in a child that shares nothing with the state they
 * touch, between the fork and the child's first line. */
#include "kgate/kgate-linux.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

pid_t kgl_fork_blocked(void)
{
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    if (pid == 0) return 0;
    int e = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return pid;
}
