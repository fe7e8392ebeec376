/* kgl-bwrap.c: start the plan, and learn enough about the sandbox to
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
#include "kgate/kgate-linux.h"

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

/* One start of bwrap, from the plan to the program let go: what the steps
 * below hand on to one another, released by start_release whichever step
 * stopped.  -1 (or empty) where not open. */
typedef struct bw_start {
    const kgate_host *host;
    const kgate_policy *policy;
    const kgate_launch *io;
    const char *const *pargv; /* the plan's argv */
    size_t argc;
    int info_r, info_w; /* bwrap's --info-fd */
    int filter, filter_w; /* --seccomp: empty until the mounts are checked */
    kgl_gate gate; /* --block-fd */
    kgl_pins pins;
    kgl_guard guard;
    char infonum[16], blocknum[16], filternum[16];
    char **argv; /* the plan's, with the descriptors added */
    int *pass; /* the descriptors bwrap inherits */
    size_t n_pass;
    pid_t pid; /* the outer bwrap */
    pid_t sandbox; /* its pid 1, once bwrap names it */
} bw_start;

static int start_failed(kgate_err *err)
{
    return kgate_err_set(err, errno, "cannot start bwrap: %s", strerror(errno));
}

/* The info pipe, the pins, the filter and the gate: everything bwrap is
 * handed as a descriptor. */
static int open_descriptors(bw_start *b, kgate_err *err)
{
    int fds[2] = {-1, -1};
    if (pipe2(fds, O_CLOEXEC) < 0) return start_failed(err);
    b->info_r = fds[0];
    /* Numbers >= 10 stay clear of the 0, 1, 2 the child is about to fill,
     * even when the core runs with one of those closed. */
    b->info_w = fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
    close(fds[1]);
    if (b->info_w < 0) return start_failed(err);

    /* Every bind source becomes a descriptor opened here (kgl-pin.c). */
    if (kgl_pins_open(b->pargv, b->argc, &b->pins, err) < 0) return -1;

    /* Fail closed: a sandbox without its filter does not start.  Through a
     * pipe that stays empty until the mounts are checked: bwrap waits for
     * it after its last mount, before the program. */
    b->filter = kgl_seccomp_pipe(&b->filter_w, err);
    if (b->filter < 0) return -1;

    /* The gate says when the mounts are done, which is when they can be
     * checked; without it they cannot, and nothing starts. */
    if (kgl_gate_open(&b->gate) < 0)
        return kgate_err_set(err, ENOTSUP,
                             "cannot tell when bwrap has made its mounts on this "
                             "kernel, so they cannot be checked; nothing was started");
    return 0;
}

/* bwrap's argv: the plan's with the three descriptors in front of its
 * options and the pinned sources; and the descriptors to pass. */
static int build_argv(bw_start *b, kgate_err *err)
{
    snprintf(b->infonum, sizeof b->infonum, "%d", b->info_w);
    snprintf(b->blocknum, sizeof b->blocknum, "%d", b->gate.theirs);
    snprintf(b->filternum, sizeof b->filternum, "%d", b->filter);
    b->argv = calloc(b->pins.argc + 7, sizeof *b->argv);
    b->pass = calloc(b->pins.n_fds + 3, sizeof *b->pass);
    if (!b->argv || !b->pass) return start_failed(err);
    size_t k = 0;
    b->argv[k++] = (char *)b->pargv[0];
    b->argv[k++] = (char *)"--info-fd";
    b->argv[k++] = b->infonum;
    b->argv[k++] = (char *)"--block-fd";
    b->argv[k++] = b->blocknum;
    /* bwrap loads it last, just before it execs the program, so bwrap's
     * own setup (mounts, pivot_root) is not subject to it. */
    b->argv[k++] = (char *)"--seccomp";
    b->argv[k++] = b->filternum;
    for (size_t i = 1; i < b->pins.argc; i++) b->argv[k++] = (char *)b->pins.argv[i];
    b->pass[b->n_pass++] = b->info_w;
    b->pass[b->n_pass++] = b->gate.theirs;
    b->pass[b->n_pass++] = b->filter;
    for (size_t i = 0; i < b->pins.n_fds; i++) b->pass[b->n_pass++] = b->pins.fds[i];
    return 0;
}

/* The guard, then bwrap in the guard's group. */
static int spawn_bwrap(bw_start *b, kgate_err *err)
{
    /* The guard holds our end of the gate too: if kgate dies before it
     * queued the record, bwrap's pid 1 waits at the block fd (no EOF) until
     * the guard kills it. */
    if (kgl_guard_start(&b->guard, b->gate.ours, err) < 0) return -1;

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
        .path = b->pargv[0],
        .argv = b->argv,
        .envp = (char *const *)b->io->envp,
        .stdio = {b->io->stdin_fd, b->io->stdout_fd, b->io->stderr_fd},
        .pass = b->pass,
        .n_pass = b->n_pass,
        .dir = b->policy->project,
        .group = b->guard.pid,
        .pdeathsig = 1,
        .ignored = kgl_launch_ignored(b->io),
    };
    b->pid = kgl_spawn_run(&spawn, err);
    if (b->pid < 0) return -1;
    close_fd(&b->info_w);
    close_fd(&b->filter);
    for (size_t i = 0; i < b->pins.n_fds; i++) close_fd(&b->pins.fds[i]);
    /* gate.theirs stays open here until the gate is decided: while we hold
     * the peer too, bwrap closing or dying does not purge the record (that
     * would look like a read); only bwrap reading it does. */
    return 0;
}

static void kill_sandbox(bw_start *b)
{
    /* While filter_w is open bwrap is still waiting: nothing ran. */
    kill(b->sandbox, SIGKILL);
    kill(b->pid, SIGKILL);
    reap(b->pid);
}

/* Until bwrap is past its last mount: its pid 1 from the info, then the
 * gate.  A bwrap that failed on the way is reaped and its status named. */
static int await_setup(bw_start *b, kgate_err *err)
{
    /* bwrap writes the info and closes it right after it created the
     * namespaces, before the mounts; a bwrap that fails earlier (no user
     * namespaces, a bad option) closes it with nothing written. */
    char info[1024] = "";
    ssize_t n = read_full(b->info_r, info, sizeof info - 1);
    info[n > 0 ? n : 0] = '\0';
    b->sandbox = kgl_info_child_pid(info);
    if (b->sandbox) kgl_guard_tell(&b->guard, b->sandbox);
    if (b->sandbox && kgl_gate_arm(&b->gate) < 0) {
        int e = errno;
        kill(b->pid, SIGKILL);
        reap(b->pid);
        return kgate_err_set(err, e, "cannot open bwrap's setup gate: %s", strerror(e));
    }
    const char *kind = NULL;
    if (!b->sandbox) {
        int code = exit_code_of(reap(b->pid), &kind);
        return kgate_err_set(err, 0,
                             "bwrap could not create the sandbox (%s %d); its "
                             "message is above",
                             kind, code);
    }
    int gated = kgl_gate_wait(&b->gate, b->pid);
    if (gated == KGL_GATE_FAILED) {
        int code = exit_code_of(reap(b->pid), &kind);
        return kgate_err_set(err, 0,
                             "bwrap could not set up the sandbox (%s %d); its "
                             "message is above",
                             kind, code);
    }
    /* bwrap is past its last mount and waits for the filter: the program
     * has not started. */
    if (gated == KGL_GATE_UNKNOWN) {
        kgate_err_set(err, errno,
                      "cannot tell when bwrap has made its mounts (%s), so "
                      "they cannot be checked; nothing was started",
                      strerror(errno));
        kill_sandbox(b);
        return -1;
    }
    return 0;
}

/* Check what the program would see, then let it go; the core gets the
 * processes to signal and end. */
static int let_run(bw_start *b, kgate_proc *proc, kgate_err *err)
{
    /* The mounts are checked and the program waits for its filter: the
     * last moment before it runs, so the audit launch line goes now. */
    if (kgl_pins_verify(&b->pins, b->sandbox, err) < 0 || kgate_launch_commit(b->io, err) < 0 ||
        kgl_seccomp_send(b->filter_w, err) < 0) {
        kill_sandbox(b);
        return -1;
    }
    close_fd(&b->filter_w);
    proc->pid = b->pid;
    /* In pty mode the program leaves this group for a session of its own
     * (the shim); the core then signals it through the pty, and this group
     * is only the fallback for a signal that comes before the shim ran. */
    proc->signal_pid = -b->sandbox;
    proc->helpers[0] = b->guard.pid;
    proc->n_helpers = 1;
    b->guard.pid = -1; /* the core's to end now */
    b->host->log(b->host, KGATE_LOG_DEBUG, "bwrap pid %ld, sandbox pid 1 is %ld", (long)b->pid,
                 (long)b->sandbox);
    return 0;
}

static void start_release(bw_start *b)
{
    kgl_guard_stop(&b->guard);
    close_fd(&b->filter_w);
    kgl_pins_free(&b->pins);
    close_fd(&b->filter);
    kgl_gate_close(&b->gate);
    close_fd(&b->info_r);
    close_fd(&b->info_w);
    free(b->argv);
    free(b->pass);
}

int kgl_bwrap_launch(const kgate_host *host, const kgate_policy *policy, const kgate_plan *plan,
                     const kgate_launch *io, kgate_proc *proc, kgate_err *err)
{
    bw_start b = {.host = host,
                  .policy = policy,
                  .io = io,
                  .info_r = -1,
                  .info_w = -1,
                  .filter = -1,
                  .filter_w = -1,
                  .gate = {.ours = -1, .theirs = -1},
                  .guard = {.pid = -1, .wfd = -1},
                  .pid = -1};
    b.pargv = host->plan_argv(plan, &b.argc);
    if (b.argc < 2 || !b.pargv[0] || b.pargv[0][0] != '/')
        return kgate_err_set(err, EINVAL,
                             "the plan does not start with an "
                             "absolute bwrap path");
    if (!policy->project || policy->project[0] != '/')
        return kgate_err_set(err, EINVAL, "no project directory");
    int r = -1;
    if (open_descriptors(&b, err) == 0 && build_argv(&b, err) == 0 && spawn_bwrap(&b, err) == 0 &&
        await_setup(&b, err) == 0 && let_run(&b, proc, err) == 0)
        r = 0;
    start_release(&b);
    return r;
}
