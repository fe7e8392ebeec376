/* kgl-fork.c: the ways the support library starts a process of its own
 * (kgl_fork_blocked, kgl_vfork_blocked, kgate-linux.h).  Every signal is
 * blocked across the start: the core's handlers (and whatever a backend
 * installed) would otherwise run in a child that shares nothing with the
 * state they touch, between the start and the child's first line. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kgate/kgate-linux.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child's stack in kgl_vfork_blocked: it runs a few system calls and
 * an execve, far below this. */
#define VFORK_STACK (256 * 1024)

static void block_all(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, old);
}

/* The caller's mask back, errno as the start left it. */
static void restore(const sigset_t *old)
{
    int e = errno;
    sigprocmask(SIG_SETMASK, old, NULL);
    errno = e;
}

pid_t kgl_fork_blocked(void)
{
    sigset_t old;
    block_all(&old);
    pid_t pid = fork();
    if (pid == 0) return 0;
    restore(&old);
    return pid;
}

/* The check after the prctl is what makes the tie hold: the signal is
 * armed for the parent the child has at the prctl, and a parent that had
 * already ended left the child to init or a subreaper (so not necessarily
 * pid 1), which may live on for ever. */
int kgl_tie_to_parent(int sig, pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, sig) < 0) return -1;
    if (getppid() != parent) {
        errno = ESRCH;
        return -1;
    }
    return 0;
}

pid_t kgl_vfork_blocked(int (*fn)(void *), void *arg)
{
    void *stack = mmap(NULL, VFORK_STACK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return -1;
    sigset_t old;
    block_all(&old);
    pid_t pid = clone(fn, (char *)stack + VFORK_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
    restore(&old);
    int e = errno;
    munmap(stack, VFORK_STACK);
    errno = e;
    return pid;
}

__attribute__((noreturn)) void kgl_end_like(int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        sigaction(sig, &sa, NULL);
        sigset_t m;
        sigemptyset(&m);
        sigaddset(&m, sig);
        sigprocmask(SIG_UNBLOCK, &m, NULL);
        kill(getpid(), sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 125);
}
