/* kgl-userns.c: can this process make a user namespace?
 *
 * The sysctls say what the kernel allows in general; they cannot see a
 * container's seccomp profile (Docker and Podman refuse CLONE_NEWUSER by
 * default), bwrap's --disable-userns (a limit of its user namespace) or
 * AppArmor's per-program restriction.  Only trying says.  A fork without
 * exec is cheap enough for a quick probe, and the namespace dies with the
 * child. */
#include "kgate/kgate-linux.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

int kgl_userns_trial(void)
{
    /* The core's handlers must not run in the child. */
    pid_t pid = kgl_fork_blocked();
    if (pid == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
    if (pid < 0) return -1;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 1 : 0;
}
