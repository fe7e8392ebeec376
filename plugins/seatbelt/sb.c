/* sb.c: the macOS backend.  probe, doctor, plan and launch around the
 * profile builder in sb-profile.c.
 *
 * It builds and probes everywhere; only on macOS with sandbox-exec present
 * does probe say available, so on Linux the core never calls launch and
 * `kgate run --dry-run --backend seatbelt` still shows the profile.
 */
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

static int sb_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe,
                    kgate_err *err)
{
    sb_host_probe(probe); /* sb-host-<os>.c */
    return 0;
}

/* Pure: only policy and probe. */
static int sb_doctor(const kgate_host *host, const kgate_policy *pol, const kgate_probe *probe,
                     kgate_report *rep)
{
    const char *base = sb_profile_name(pol->macos_profile);
    host->report_detail(rep, "profile", base);

    sb_host_state hs = sb_host_decide(kgate_probe_fact(probe, "macos", 0),
                                      kgate_probe_fact(probe, "sandbox_exec", 0),
                                      kgate_probe_fact(probe, "sandboxed", -1));
    if (hs == SB_HOST_NOT_MACOS)
        host->report(rep, KGATE_BLOCKED, "host.not-macos", "%s",
                     probe->reason[0] ? probe->reason : "sandbox-exec is macOS-only");
    else if (hs == SB_HOST_NESTED)
        host->report(rep, KGATE_BLOCKED, "host.nested-sandbox", "%s", sb_nested_sentence());
    else if (hs == SB_HOST_NO_TOOL || !probe->available)
        host->report(rep, KGATE_BLOCKED, KGATE_FINDING_TOOL_MISSING, "sandbox-exec missing: %s",
                     probe->reason[0] ? probe->reason : SB_TOOL " not found");
    else
        host->report(rep, KGATE_READY, KGATE_FINDING_FS_HOME_HIDDEN,
                     "filesystem: Seatbelt profile (%s base): $HOME hidden, "
                     "project read-write, writes elsewhere denied",
                     base);
    if (hs == SB_HOST_READY && kgate_probe_fact(probe, "sandboxed", -1) < 0)
        host->report(rep, KGATE_READY, "host.nested-unknown",
                     "nested sandbox: not known (sandbox_check failed); "
                     "sandbox-exec refuses by itself inside another profile");

    /* restricted with no hosts arrives as off; checked again here so a
     * made-up policy in a test cannot read better than plan would.  net_id
     * is kept: plan's own refusal of the same thing, below, has that id and
     * is not reported twice. */
    const char *net_id = KGATE_FINDING_NET_OFF;
    if (pol->network == KGATE_NET_RESTRICTED && pol->allow_hosts.n > 0) {
        net_id = KGATE_FINDING_NET_HOSTS_UNSUPPORTED;
        host->report(rep, KGATE_BLOCKED, net_id, "%s", sb_restricted_hosts_sentence());
    } else if (pol->network == KGATE_NET_OPEN) {
        net_id = KGATE_FINDING_NET_OPEN;
        host->report(rep, KGATE_DEGRADED, net_id,
                     "network open: no network rules, the filesystem box "
                     "still holds");
    } else {
        host->report(rep, KGATE_READY, net_id, "network off: outbound denied except localhost");
    }

    host->report(rep, KGATE_READY, "seatbelt.doors-closed",
                 "closed doors: Apple Events, LaunchServices, pasteboard, "
                 "keychain");
    for (size_t i = 0; i < pol->macos_allow_mach.n; i++) {
        const char *name = pol->macos_allow_mach.v[i];
        const char *door = sb_door_for_mach(name);
        if (!sb_mach_name_ok(name)) continue; /* the builder refuses it below */
        if (door)
            host->report(rep, KGATE_DEGRADED, "seatbelt.door-open",
                         "macos_allow_mach re-allows %s: the %s door is open", name, door);
        else
            host->report(rep, KGATE_READY, "seatbelt.mach-allowed", "macos_allow_mach re-allows %s",
                         name);
    }
    /* Whatever plan would refuse, doctor calls BLOCKED with the same
     * words and id: the builder is pure, so run it. */
    sb_profile prof;
    kgate_err e = {0};
    if (sb_build(pol, SB_FORM_PARAMS, &prof, &e) < 0) {
        const char *id = sb_refusal_id(&e);
        if (strcmp(id, net_id) != 0) host->report(rep, KGATE_BLOCKED, id, "%s", e.msg);
    } else {
        sb_profile_clear(&prof);
    }
    host->report(rep, KGATE_READY, KGATE_FINDING_SOCKETS_UNIX,
                 "host Unix sockets: none reachable (network-outbound to "
                 "unix-socket denied)%s, %zu allow_sockets entr%s",
                 pol->network == KGATE_NET_OPEN ? " except mDNSResponder's" : "",
                 pol->allow_sockets.n, pol->allow_sockets.n == 1 ? "y" : "ies");
    return 0;
}

static int sb_plan(const kgate_host *host, const kgate_policy *pol, const kgate_probe *probe,
                   kgate_plan *plan, kgate_err *err)
{
    if (!pol->command_path || pol->command_path[0] != '/')
        return kgate_err_set(err, EINVAL, "the command has no absolute path");

    sb_profile prof, shown;
    if (sb_build(pol, SB_FORM_PARAMS, &prof, err) < 0) return -1;
    if (sb_build(pol, SB_FORM_INLINE, &shown, err) < 0) {
        sb_profile_clear(&prof);
        return -1;
    }

    const char *tool = probe && probe->tool_path[0] ? probe->tool_path : SB_TOOL;
    int r = host->plan_arg(plan, tool);
    for (size_t i = 0; r == 0 && i < prof.n_params; i++) {
        r = host->plan_arg(plan, "-D");
        if (r == 0) r = host->plan_arg(plan, prof.params[i]);
    }
    if (r == 0) r = host->plan_arg(plan, "-p");
    if (r == 0) r = host->plan_arg(plan, prof.text);
    /* sandbox-exec takes the command as its first non-option argument; the
     * command path is absolute, so it can never be read as an option and
     * no "--" is needed (and none is known to be accepted). */
    if (r == 0) r = host->plan_arg(plan, pol->command_path);
    for (size_t i = 1; r == 0 && i < pol->argv.n; i++) r = host->plan_arg(plan, pol->argv.v[i]);
    if (r == 0) r = host->plan_file(plan, "seatbelt profile", prof.text);
    if (r == 0)
        r = host->plan_file(plan,
                            "seatbelt profile, parameters inlined "
                            "(for reading only)",
                            shown.text);
    sb_profile_clear(&prof);
    sb_profile_clear(&shown);
    if (r < 0) return kgate_err_set(err, ENOMEM, "out of memory building the plan");
    return 0;
}

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

static int sb_launch(const kgate_host *host, const kgate_policy *pol, const kgate_probe *probe,
                     const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc,
                     kgate_err *err)
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

static const kgate_backend sb_backend = {
    KGATE_BACKEND_INIT,
    .name = "seatbelt",
    .description = "macOS Seatbelt profile for sandbox-exec",
    .probe = sb_probe,
    .doctor = sb_doctor,
    .plan = sb_plan,
    .launch = sb_launch,
};

KGATE_PLUGIN_DEFINE(sb_backend)
