/* kgl-guard.c: nothing of the sandbox outlives kgate, whatever the
 * moment kgate dies.
 *
 * bwrap arms the parent-death signal of the sandbox's pid 1 only in its
 * reaper loop, after the mounts, the block fd, setsid and a fork (bwrap
 * 0.8.0).  The outer bwrap has --die-with-parent from its start, so a kgate
 * killed earlier takes the outer bwrap with it and leaves pid 1 (and soon
 * the program) running, reparented to init: measured in about one start in
 * twenty with kill -9 in the first 100 ms.
 *
 * The guard closes that window.  It is a tiny child of kgate that leads a
 * process group of its own; the process that becomes the outer bwrap joins
 * that group before exec, so the sandbox's pid 1 is born in it and stays in
 * it until its setsid.  By then kgate has read bwrap's info and told the
 * guard pid 1's number, which the guard holds as a pidfd.  Only then does
 * kgate queue the record bwrap's pid 1 reads from its --block-fd before its
 * setsid; the guard holds kgate's end of that socket too, so a kgate that
 * dies earlier leaves pid 1 waiting there, in the guard's group.  The guard waits
 * for SIGTERM: from kgate at the end of the run (it is one of the
 * backend's helpers), or as its parent-death signal when kgate dies.
 * Either way it SIGKILLs pid 1 through the pidfd (which takes the whole
 * PID namespace) and its own group (the outer bwrap, and pid 1 before its
 * setsid), and is gone.
 *
 * Without the gate (a kernel where the block socket does not behave, see
 * gate_open), pid 1 could pass its setsid before a slow guard kills the
 * group, if kgate died before it read bwrap's info. */
#include "kgate/kgate-linux.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* Only system calls from here on: the guard is a fork of kgate and never
 * execs. */
__attribute__((noreturn)) static void guard_main(int rfd, int hold, pid_t kgate)
{
    /* All signals are blocked (the parent forked us so) and stay blocked:
     * SIGTERM is read from a signalfd. */
    bool orphan = kgl_tie_to_parent(SIGTERM, kgate) < 0;
    setpgid(0, 0);
    /* Nothing of kgate's: a copy of the program's output pipe held here
     * would keep the relay waiting for an EOF. */
    /* Kept: the pipe from kgate as 3, and as 4 kgate's end of bwrap's
     * setup gate (kgl-bwrap.c): while we hold it, bwrap's pid 1 sees no
     * EOF at its block fd when kgate dies, and waits there, still in our
     * group, for our kill. */
    /* Copies above 4 first, so that the dup2s below clobber neither;
     * not above 100, as it was: with an open-file limit of 100 or less
     * (ulimit -n 64) that fcntl fails, and the guard with it. */
    int r2 = fcntl(rfd, F_DUPFD, 5), h2 = hold >= 0 ? fcntl(hold, F_DUPFD, 5) : -1;
    if (r2 < 0 || dup2(r2, 3) < 0) _exit(1);
    rfd = 3;
    if (h2 >= 0 && dup2(h2, 4) < 0) _exit(1);
    for (int fd = 0; fd < 3; fd++) close(fd);
    unsigned first = h2 >= 0 ? 5U : 4U;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, first, ~0U, 0U) < 0)
#endif
        for (int fd = (int)first; fd < 4096; fd++) close(fd);

    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    int sfd = signalfd(-1, &term, SFD_CLOEXEC);
    int pidfd = -1;
    pid_t told = 0;
    /* A kgate that ends from here on queues the SIGTERM this reads. */
    bool act = sfd < 0 || orphan;
    while (!act) {
        struct pollfd p[2] = {{.fd = sfd, .events = POLLIN}, {.fd = rfd, .events = POLLIN}};
        if (poll(p, rfd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (p[0].revents) break;
        if (rfd >= 0 && p[1].revents) {
            pid_t pid = 0;
            ssize_t n = read(rfd, &pid, sizeof pid);
            if (n == (ssize_t)sizeof pid && pid > 1 && pidfd < 0) {
                pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
                told = pid;
            }
            if (n <= 0) { /* kgate said all it had to say */
                close(rfd);
                rfd = -1;
            }
        }
    }
    /* kgate may have told us pid 1 and died at once: the number can be
     * waiting in the pipe behind the signal.  (Non-blocking: a SIGTERM
     * from someone else while kgate lives must not hang here.) */
    if (rfd >= 0 && pidfd < 0) {
        pid_t pid = 0;
        fcntl(rfd, F_SETFL, O_NONBLOCK);
        if (read(rfd, &pid, sizeof pid) == (ssize_t)sizeof pid && pid > 1) {
            pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
            told = pid;
        }
    }
    /* The sandbox's own process group too, but only while the process is
     * alive: its pid is then in use, so the group of that number can only
     * be the one it leads (or none).  For bwrap's pid 1 the namespace
     * takes them anyway.  (The Landlock box tells no pid: its reaper ends
     * that run, ll-reaper.c.) */
    if (pidfd >= 0 && told > 1 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0)
        kill(-told, SIGKILL);
    if (pidfd >= 0) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
    kill(-getpid(), SIGKILL);
    _exit(0);
}

int kgl_guard_start(kgl_guard *g, int hold, kgate_err *err)
{
    int p[2];
    g->pid = -1;
    g->wfd = -1;
    if (pipe2(p, O_CLOEXEC) < 0)
        return kgate_err_set(err, errno, "cannot start the guard: %s", strerror(errno));
    pid_t self = getpid();
    pid_t pid = kgl_fork_blocked();
    int e = errno;
    if (pid == 0) {
        close(p[1]);
        guard_main(p[0], hold, self);
    }
    close(p[0]);
    if (pid < 0) {
        close(p[1]);
        return kgate_err_set(err, e, "cannot start the guard: %s", strerror(e));
    }
    /* Here too, so the group exists before the sandbox's first process
     * asks to join it, whoever runs first. */
    setpgid(pid, pid);
    g->pid = pid;
    g->wfd = p[1];
    return 0;
}

void kgl_guard_tell(kgl_guard *g, pid_t sandbox)
{
    if (g->wfd < 0) return;
    ssize_t n;
    do {
        n = write(g->wfd, &sandbox, sizeof sandbox);
    } while (n < 0 && errno == EINTR);
    close(g->wfd);
    g->wfd = -1;
}

void kgl_guard_stop(kgl_guard *g)
{
    if (g->wfd >= 0) close(g->wfd);
    g->wfd = -1;
    if (g->pid <= 0) return;
    /* TERM, not KILL: the guard takes its group with it (a bwrap that
     * failed half-way may have left pid 1 there). */
    kill(g->pid, SIGTERM);
    while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR) {}
    g->pid = -1;
}
