/* kgl-bwrap.c: start bwrap from a plan, and learn enough about the
 * sandbox to signal the program in it (kgate-linux.h, kgl_bwrap).  The
 * bubblewrap box starts its plan with kgl_bwrap_start; the slirp-filter
 * stage runs the same steps one by one, setting up its network between
 * spawn and exec_wait (its prepare runs in the launch child).
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
 * the spawn helper (kgl_spawn_start and kgl_spawn_finish), whose one
 * failure protocol turns any step before the exec into an error here.
 *
 * The descriptors are added here, not in the plan, so the plan stays a
 * plain argv that --dry-run can print and another backend can run. */
#include "kgate/kgate-linux.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int exit_code_of(int st, const char **kind)
{
    *kind = st >= 0 && WIFSIGNALED(st) ? "signal" : "exit status";
    return st < 0 ? -1 : WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st);
}

static int start_failed(kgate_err *err)
{
    return kgate_err_set(err, errno, "cannot start bwrap: %s", strerror(errno));
}

/* The info pipe, the pins, the filter and the gate: everything bwrap is
 * handed as a descriptor. */
static int open_descriptors(kgl_bwrap *b, kgate_err *err)
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
 * options and the pinned sources; and the descriptors to pass.  Passed
 * close-on-exec and cleared only right before the exec (kgl-launch.c), so
 * that nothing a prepare forks inherits them. */
static int build_argv(kgl_bwrap *b, kgate_err *err)
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

int kgl_bwrap_open(kgl_bwrap *b, kgate_err *err)
{
    if (open_descriptors(b, err) < 0) return -1;
    return build_argv(b, err);
}

/* The guard, then bwrap in the guard's group. */
int kgl_bwrap_spawn(kgl_bwrap *b, kgate_err *err)
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
    b->spawn = (kgl_spawn){
        .path = b->path,
        .argv = b->argv,
        .envp = (char *const *)b->io->envp,
        .stdio = {b->io->stdin_fd, b->io->stdout_fd, b->io->stderr_fd},
        .pass = b->pass,
        .n_pass = b->n_pass,
        .dir = b->dir,
        .group = b->guard.pid,
        .pdeathsig = 1,
        .prepare = b->prepare,
        .ctx = b->ctx,
        .prepare_name = b->prepare_name,
        .ignored = kgl_launch_ignored(b->io),
    };
    if (kgl_spawn_start(&b->spawn, &b->child, err) < 0) return -1;
    /* The child has its copies; nothing forked later gets one. */
    kgl_closep(&b->info_w);
    kgl_closep(&b->filter);
    for (size_t i = 0; i < b->pins.n_fds; i++) kgl_closep(&b->pins.fds[i]);
    /* gate.theirs stays open here until the gate is decided: while we hold
     * the peer too, bwrap closing or dying does not purge the record (that
     * would look like a read); only bwrap reading it does. */
    return 0;
}

int kgl_bwrap_exec_wait(kgl_bwrap *b, kgate_err *err)
{
    return kgl_spawn_finish(&b->spawn, &b->child, err);
}

/* bwrap ended (or was killed) before the sandbox was ready: reaped, and
 * its status named; its own message is on the program's stderr. */
static int bwrap_failed(kgl_bwrap *b, const char *what, kgate_err *err)
{
    const char *kind = NULL;
    int code = exit_code_of(kgl_reap(b->child.pid), &kind);
    b->child.pid = -1;
    return kgate_err_set(err, 0, "bwrap could not %s the sandbox (%s %d); its message is above",
                         what, kind, code);
}

/* Until bwrap is past its last mount: its pid 1 from the info, then the
 * gate.  A bwrap that failed on the way is reaped and its status named. */
int kgl_bwrap_await(kgl_bwrap *b, kgate_err *err)
{
    /* bwrap writes the info and closes it right after it created the
     * namespaces, before the mounts; a bwrap that fails earlier (no user
     * namespaces, a bad option) closes it with nothing written. */
    char info[1024] = "";
    ssize_t n = kgl_read_to_eof(b->info_r, info, sizeof info, b->info_wait_ms, KGL_READ_FILL);
    b->sandbox = kgl_info_child_pid(info);
    if (b->sandbox) kgl_guard_tell(&b->guard, b->sandbox);
    if (b->sandbox && kgl_gate_arm(&b->gate) < 0) {
        int e = errno;
        return kgate_err_set(err, e, "cannot open bwrap's setup gate: %s", strerror(e));
    }
    if (!b->sandbox) {
        /* A bound that ran out: bwrap still runs, and says nothing more. */
        if (n < 0 && b->info_wait_ms > 0) kill(b->child.pid, SIGKILL);
        return bwrap_failed(b, "create", err);
    }
    int gated = kgl_gate_wait(&b->gate, b->child.pid);
    if (gated == KGL_GATE_FAILED) return bwrap_failed(b, "set up", err);
    /* bwrap is past its last mount and waits for the filter: the program
     * has not started. */
    if (gated == KGL_GATE_UNKNOWN)
        return kgate_err_set(err, errno,
                             "cannot tell when bwrap has made its mounts (%s), so "
                             "they cannot be checked; nothing was started",
                             strerror(errno));
    return 0;
}

/* Check what the program would see, then let it go; the core gets the
 * processes to signal and end. */
int kgl_bwrap_let_run(kgl_bwrap *b, kgate_proc *proc, kgate_err *err)
{
    if (proc->n_helpers >= KGATE_MAX_HELPERS)
        return kgate_err_set(err, EINVAL, "no room for bwrap's guard among the helpers");
    /* The mounts are checked and the program waits for its filter: the
     * last moment before it runs, so the audit launch line goes now. */
    if (kgl_pins_verify(&b->pins, b->sandbox, err) < 0 || kgate_launch_commit(b->io, err) < 0 ||
        kgl_seccomp_send(b->filter_w, err) < 0)
        return -1;
    kgl_closep(&b->filter_w);
    proc->pid = b->child.pid;
    /* In pty mode the program leaves this group for a session of its own
     * (the shim); the core then signals it through the pty, and this group
     * is only the fallback for a signal that comes before the shim ran. */
    proc->signal_pid = -b->sandbox;
    proc->helpers[proc->n_helpers++] = b->guard.pid;
    /* The core's to end now. */
    b->guard.pid = -1;
    b->child.pid = -1;
    return 0;
}

int kgl_bwrap_start(kgl_bwrap *b, kgate_proc *proc, kgate_err *err)
{
    if (kgl_bwrap_open(b, err) < 0 || kgl_bwrap_spawn(b, err) < 0 ||
        kgl_bwrap_exec_wait(b, err) < 0 || kgl_bwrap_await(b, err) < 0)
        return -1;
    return kgl_bwrap_let_run(b, proc, err);
}

void kgl_bwrap_release(kgl_bwrap *b)
{
    /* Started and not handed over: while filter_w is open bwrap is still
     * waiting, so nothing ran. */
    if (b->child.pid > 0 && b->sandbox > 0) kill(b->sandbox, SIGKILL);
    kgl_spawn_abandon(&b->child);
    kgl_guard_stop(&b->guard);
    kgl_closep(&b->filter_w);
    kgl_pins_free(&b->pins);
    kgl_closep(&b->filter);
    kgl_gate_close(&b->gate);
    kgl_closep(&b->info_r);
    kgl_closep(&b->info_w);
    free(b->argv);
    b->argv = NULL;
    free(b->pass);
    b->pass = NULL;
    b->n_pass = 0;
}
