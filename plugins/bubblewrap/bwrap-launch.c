/* bwrap-launch.c: start the plan, and learn enough about the sandbox to
 * signal the program in it.
 *
 * bwrap with --unshare-pid is three processes: the outer bwrap (our child,
 * it waits and passes the exit status on), pid 1 of the namespace (bwrap's
 * reaper), and the program.  Measured with bwrap 0.8.0, as root and as uid
 * 65534 (docs/bubblewrap.md): SIGTERM to the outer bwrap kills it, and
 * --die-with-parent then SIGKILLs the sandbox; the program never sees the
 * signal it could have handled.  With --new-session the reaper leads a
 * session and process group of its own that the program is in, and a signal
 * to that group reaches the program (the reaper, pid 1, ignores signals it
 * has no handler for).  bwrap names the reaper's pid on --info-fd, so
 * launch adds --info-fd and hands the core that group as signal_pid.
 *
 * bwrap's info is written before the mounts are made, so it cannot say
 * whether they worked.  --block-fd is read after the last mount and the
 * final pivot_root (measured with strace, bwrap 0.8.0), just before the
 * program is started.  The setup gate (kgl-launch.c) makes that read
 * visible: bwrap exiting before it means setup failed (its message is on
 * the program's stderr), and launch returns an error instead of passing
 * bwrap's exit status 1 off as the program's.  The child is started by
 * kgl_spawn_run, whose one failure protocol turns any step before the exec
 * into an error here.
 *
 * Both descriptors are added here, not in the plan, so the plan stays a
 * plain argv that --dry-run can print and another backend can run. */
#include "bwrap-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int reap(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return st;
}

static void close_fd(int *fd)
{
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static ssize_t read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static int exit_code_of(int st, const char **kind)
{
    *kind = st >= 0 && WIFSIGNALED(st) ? "signal" : "exit status";
    return st < 0 ? -1 : WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st);
}

int bwrap_launch(const kgate_host *host, const kgate_policy *policy,
                const kgate_probe *probe, const kgate_plan *plan,
                const kgate_launch *io, kgate_proc *proc, kgate_err *err)
{
    /* The plan carries all launch needs; bubblewrap keeps no state. */
    (void)probe;
    size_t argc = 0;
    const char *const *pargv = host->plan_argv(plan, &argc);
    int info_r = -1, info_w = -1, filter = -1, filter_w = -1, fds[2];
    kgl_gate gate = {.ours = -1, .theirs = -1};
    kgl_pins pins = {0};
    kgl_guard guard = {.pid = -1, .wfd = -1};
    char **argv = NULL;
    int *pass = NULL;
    int r = -1;
    pid_t pid = -1;

    if (argc < 2 || !pargv[0] || pargv[0][0] != '/')
        return kgate_err_set(err, EINVAL, "the plan does not start with an "
                                          "absolute bwrap path");
    if (!policy->project || policy->project[0] != '/')
        return kgate_err_set(err, EINVAL, "no project directory");

    if (pipe2(fds, O_CLOEXEC) < 0) goto sys_fail;
    info_r = fds[0];
    /* Numbers >= 10 stay clear of the 0, 1, 2 the child is about to fill,
     * even when the core runs with one of those closed. */
    info_w = fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
    close(fds[1]);
    if (info_w < 0) goto sys_fail;

    /* Every bind source becomes a descriptor opened here (kgl-pin.c). */
    if (kgl_pins_open(pargv, argc, &pins, err) < 0) goto out;

    /* Fail closed: a sandbox without its filter does not start.  Through a
     * pipe that stays empty until the mounts are checked: bwrap waits for
     * it after its last mount, before the program. */
    filter = kgl_seccomp_pipe(&filter_w, err);
    if (filter < 0) goto out;

    /* The gate says when the mounts are done, which is when they can be
     * checked; without it they cannot, and nothing starts. */
    if (kgl_gate_open(&gate) < 0) {
        kgate_err_set(err, ENOTSUP,
                      "cannot tell when bwrap has made its mounts on this "
                      "kernel, so they cannot be checked; nothing was started");
        goto out;
    }

    char infonum[16], blocknum[16], filternum[16];
    snprintf(infonum, sizeof infonum, "%d", info_w);
    snprintf(blocknum, sizeof blocknum, "%d", gate.theirs);
    snprintf(filternum, sizeof filternum, "%d", filter);
    argv = calloc(pins.argc + 7, sizeof *argv);
    pass = calloc(pins.n_fds + 3, sizeof *pass);
    if (!argv || !pass) goto sys_fail;
    size_t k = 0;
    argv[k++] = (char *)pargv[0];
    argv[k++] = (char *)"--info-fd";
    argv[k++] = infonum;
    argv[k++] = (char *)"--block-fd";
    argv[k++] = blocknum;
    /* bwrap loads it last, just before it execs the program, so bwrap's
     * own setup (mounts, pivot_root) is not subject to it. */
    argv[k++] = (char *)"--seccomp";
    argv[k++] = filternum;
    for (size_t i = 1; i < pins.argc; i++) argv[k++] = (char *)pins.argv[i];
    size_t n_pass = 0;
    pass[n_pass++] = info_w;
    pass[n_pass++] = gate.theirs;
    pass[n_pass++] = filter;
    for (size_t i = 0; i < pins.n_fds; i++) pass[n_pass++] = pins.fds[i];

    /* The guard holds our end of the gate too: if kgate dies before it
     * queued the record, bwrap's pid 1 waits at the block fd (no EOF) until
     * the guard kills it. */
    if (kgl_guard_start(&guard, gate.ours, err) < 0) goto out;

    /* The group: out of the terminal's foreground group, so a Ctrl-C
     * reaches kgate, which forwards it to the program's group, and not
     * bwrap's outer process, whose death would SIGKILL the program.  The
     * same with a pty (io->pty): the pty must not become the controlling
     * terminal here, where bwrap's outer process would share its session
     * and get the Ctrl-C typed into it.  The shim inside the sandbox takes
     * it (stage_pty in bwrap-plan.c).  The group is the guard's
     * (kgl-guard.c): the sandbox's pid 1 is born in it.  The parent death
     * signal: bwrap's --die-with-parent is armed only after bwrap has
     * started, and a kgate dying before that must take the child too. */
    const kgl_spawn spawn = {
        .path = pargv[0],
        .argv = argv,
        .envp = (char *const *)io->envp,
        .stdio = {io->stdin_fd, io->stdout_fd, io->stderr_fd},
        .pass = pass,
        .n_pass = n_pass,
        .dir = policy->project,
        .group = guard.pid,
        .pdeathsig = 1,
        .ignored = kgl_launch_ignored(io),
    };
    pid = kgl_spawn_run(&spawn, err);
    if (pid < 0) goto out;
    close_fd(&info_w);
    close_fd(&filter);
    for (size_t i = 0; i < pins.n_fds; i++) close_fd(&pins.fds[i]);
    /* gate.theirs stays open here until the gate is decided: while we hold
     * the peer too, bwrap closing or dying does not purge the record (that
     * would look like a read); only bwrap reading it does. */

    /* bwrap writes the info and closes it right after it created the
     * namespaces, before the mounts; a bwrap that fails earlier (no user
     * namespaces, a bad option) closes it with nothing written. */
    char info[1024];
    ssize_t n = read_full(info_r, info, sizeof info - 1);
    info[n > 0 ? n : 0] = '\0';
    pid_t sandbox = kgl_info_child_pid(info);
    if (sandbox) kgl_guard_tell(&guard, sandbox);
    if (sandbox && kgl_gate_arm(&gate) < 0) {
        int e = errno;
        kill(pid, SIGKILL);
        reap(pid);
        kgate_err_set(err, e, "cannot open bwrap's setup gate: %s", strerror(e));
        goto out;
    }
    const char *kind;
    if (!sandbox) {
        int code = exit_code_of(reap(pid), &kind);
        kgate_err_set(err, 0,
                      "bwrap could not create the sandbox (%s %d); its "
                      "message is above",
                      kind, code);
        goto out;
    }
    int gated = kgl_gate_wait(&gate, pid);
    if (gated == KGL_GATE_FAILED) {
        int code = exit_code_of(reap(pid), &kind);
        kgate_err_set(err, 0,
                      "bwrap could not set up the sandbox (%s %d); its "
                      "message is above",
                      kind, code);
        goto out;
    }
    /* bwrap is past its last mount and waits for the filter: the program
     * has not started.  Check what it would see, then let it go. */
    if (gated == KGL_GATE_UNKNOWN) {
        kgate_err_set(err, errno,
                      "cannot tell when bwrap has made its mounts (%s), so "
                      "they cannot be checked; nothing was started",
                      strerror(errno));
        goto kill_sandbox;
    }
    /* The mounts are checked and the program waits for its filter: the
     * last moment before it runs, so the audit launch line goes now. */
    if (kgl_pins_verify(&pins, sandbox, err) < 0 ||
        kgate_launch_commit(io, err) < 0 ||
        kgl_seccomp_send(filter_w, err) < 0)
        goto kill_sandbox;
    close_fd(&filter_w);
    proc->pid = pid;
    /* In pty mode the program leaves this group for a session of its own
     * (the shim); the core then signals it through the pty, and this group
     * is only the fallback for a signal that comes before the shim ran. */
    proc->signal_pid = -sandbox;
    proc->helpers[0] = guard.pid;
    proc->n_helpers = 1;
    guard.pid = -1; /* the core's to end now */
    host->log(host, KGATE_LOG_DEBUG, "bwrap pid %ld, sandbox pid 1 is %ld",
              (long)pid, (long)sandbox);
    r = 0;
    goto out;

kill_sandbox:
    /* While filter_w is open bwrap is still waiting: nothing ran. */
    kill(sandbox, SIGKILL);
    kill(pid, SIGKILL);
    reap(pid);
    goto out;

sys_fail:
    kgate_err_set(err, errno, "cannot start bwrap: %s", strerror(errno));
out:
    kgl_guard_stop(&guard);
    close_fd(&filter_w);
    kgl_pins_free(&pins);
    close_fd(&filter);
    kgl_gate_close(&gate);
    close_fd(&info_r);
    close_fd(&info_w);
    free(argv);
    free(pass);
    return r;
}
