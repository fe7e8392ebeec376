/* sb-launch.c: the seatbelt backend's launch: a child that takes stdio,
 * a session and the project, then waits for the go byte and execs
 * sandbox-exec; the watcher (sb-watch.c) ends it with kgate. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kgate/kgate-plugin.h"
#include "sb-host.h"
#include "sb-profile.h"
#include "sb-watch.h"
#include "sb-internal.h"

/* What the launch child reports when a step before the exec fails. */
enum { SB_STEP_STDIO = 1, SB_STEP_SESSION, SB_STEP_CHDIR, SB_STEP_EXEC };

/* The words after "could not", and the path they are about (or ""). */
static const char *sb_step_name(int step, const char *project, const char *tool, const char **what)
{
    *what = "";
    switch (step) {
    case SB_STEP_STDIO: return "set up the program's stdio";
    case SB_STEP_SESSION: return "give the program a session of its own";
    case SB_STEP_CHDIR: *what = project; return "enter the project ";
    default: *what = tool; return "execute ";
    }
}

/* In the child, before the exec: exactly the signals ignored when kgate
 * started stay ignored, every other one at its default (an older core
 * does not say: then only a handler is reset, by the exec). */
static void start_signals(const kgate_launch *io)
{
    if (!KGATE_HAS_FIELD(io, kgate_launch, sig_ignored_at_start)) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    for (int s = 1; s < NSIG && s <= 128; s++) {
        unsigned long long bit = io->sig_ignored_at_start[(s - 1) / 64] >> ((s - 1) % 64);
        sa.sa_handler = (bit & 1ULL) ? SIG_IGN : SIG_DFL;
        sigaction(s, &sa, NULL);
    }
}

/* The child, between fork and exec: stdio, a session, the signals kgate
 * was started with, the project, then the go byte and sandbox-exec.  A
 * step that fails is reported on errp (step, errno) and ends the child. */
__attribute__((noreturn)) static void sb_child(const kgate_policy *pol, const kgate_launch *io,
                                               int want_pty, char **av, int go_r, int errp_w)
{
    int step = SB_STEP_STDIO;
    int fds[3] = {io->stdin_fd, io->stdout_fd, io->stderr_fd};
    /* Move the sources above 2 first so one dup2 cannot clobber a
     * source another one still needs. */
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0 && fds[i] <= 2) {
            fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
            if (fds[i] < 0) goto fail;
        }
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0 && dup2(fds[i], i) < 0) goto fail;
    /* A session of its own, as bubblewrap's --new-session gives: its
     * process group is what the core signals and the watcher kills.
     * With a pty, that becomes the program's controlling terminal, so
     * Ctrl-C and job control reach it and not the user's terminal;
     * without one, the program has no controlling terminal. */
    step = SB_STEP_SESSION;
    if (setsid() < 0 || (want_pty && ioctl(0, TIOCSCTTY, 0) < 0)) goto fail;
    /* The program starts with the dispositions kgate's caller gave
     * kgate (the core's own handlers say nothing about those), and
     * no signal blocked, whatever the core was doing while it forked. */
    start_signals(io);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    step = SB_STEP_CHDIR;
    if (chdir(pol->project) < 0) goto fail;
    char b;
    ssize_t n;
    do {
        n = read(go_r, &b, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(125); /* launch gave up: nobody reads a report */
    step = SB_STEP_EXEC;
    execve(av[0], av, (char *const *)io->envp);
fail:;
    int report[2] = {step, errno};
    (void)!write(errp_w, report, sizeof report);
    _exit(125);
}

/* After the watcher is in place: the go byte, then the child's report,
 * EOF when sandbox-exec runs.  0, or -1 with the step that failed (the
 * child and the watcher then reaped). */
static int sb_release_child(const kgate_policy *pol, const char *tool, pid_t pid, pid_t watch,
                            int go_w, int errp_r, kgate_err *err)
{
    /* A child that failed before reading (its _exit(127) is the answer)
     * must not kill kgate with SIGPIPE: ignored for this one write, which
     * discards the signal, then put back as it was. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    (void)!write(go_w, "g", 1);
    sigaction(SIGPIPE, &old, NULL);
    close(go_w);
    int report[2];
    ssize_t got;
    do {
        got = read(errp_r, report, sizeof report);
    } while (got < 0 && errno == EINTR);
    close(errp_r);
    if (got != (ssize_t)sizeof report) return 0;
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    kill(watch, SIGTERM);
    while (waitpid(watch, NULL, 0) < 0 && errno == EINTR) {}
    const char *what;
    const char *step = sb_step_name(report[0], pol->project, tool, &what);
    return kgate_err_set(err, report[1], "could not %s%s: %s", step, what, strerror(report[1]));
}

int sb_launch(const kgate_host *host, const kgate_policy *pol, const kgate_probe *probe,
              const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc, kgate_err *err)
{
    /* The plan carries all launch needs; seatbelt keeps no state. */
    (void)probe;
    size_t argc = 0;
    const char *const *argv = host->plan_argv(plan, &argc);
    if (!argv || argc == 0) return kgate_err_set(err, EINVAL, "empty plan");
    /* The plan's vector may not be NULL-terminated: copy it before fork so
     * the child only calls async-signal-safe functions. */
    char **av = calloc(argc + 1, sizeof *av);
    if (!av) return kgate_err_set(err, ENOMEM, "out of memory");
    for (size_t i = 0; i < argc; i++) av[i] = (char *)argv[i];
    /* A core older than the pty field never asks for one. */
    int want_pty = KGATE_HAS_FIELD(io, kgate_launch, pty) && io->pty;
    /* The program waits at this pipe until the watcher (sb-watch.h) is in
     * place, so there is no moment in which a killed kgate would leave it
     * running.  EOF instead of the byte: it exits 127 unstarted. */
    int go[2];
    if (pipe(go) < 0) {
        int e = errno;
        free(av);
        return kgate_err_set(err, e, "pipe: %s", strerror(e));
    }
    (void)fcntl(go[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(go[1], F_SETFD, FD_CLOEXEC);
    /* The child's report of a step that failed before the exec; the exec
     * closes it (close-on-exec), so EOF means sandbox-exec runs and every
     * status after that is the program's (or sandbox-exec's own). */
    int errp[2];
    if (pipe(errp) < 0) {
        int e = errno;
        free(av);
        close(go[0]);
        close(go[1]);
        return kgate_err_set(err, e, "pipe: %s", strerror(e));
    }
    (void)fcntl(errp[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(errp[1], F_SETFD, FD_CLOEXEC);

    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        free(av);
        close(go[0]);
        close(go[1]);
        close(errp[0]);
        close(errp[1]);
        return kgate_err_set(err, e, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        close(go[1]);
        close(errp[0]);
        sb_child(pol, io, want_pty, av, go[0], errp[1]);
    }
    free(av);
    close(go[0]);
    close(errp[1]);
    pid_t watch = sb_watch_start(pid);
    if (watch < 0) {
        int e = errno;
        close(go[1]);
        close(errp[0]);
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        return kgate_err_set(err, e,
                             "cannot watch for kgate's end, so the program "
                             "could outlive it: %s",
                             strerror(e));
    }
    if (sb_release_child(pol, argv[0], pid, watch, go[1], errp[0], err) < 0) return -1;
    proc->pid = pid;
    /* The whole group, as under bubblewrap: the program's children too. */
    proc->signal_pid = -pid;
    proc->helpers[0] = watch;
    proc->n_helpers = 1;
    return 0;
}
