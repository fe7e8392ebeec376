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
 * program is started.  Launch makes that read visible: the block fd is a
 * SOCK_SEQPACKET socket with a tiny send buffer, and one record queued on
 * it keeps our end unwritable until bwrap consumes it.  Our end turning
 * writable means setup is done; bwrap exiting first means it failed (its
 * message is on the program's stderr), and launch returns an error instead
 * of passing bwrap's exit status 1 off as the program's.
 *
 * Both descriptors are added here, not in the plan, so the plan stays a
 * plain argv that --dry-run can print and another backend can run. */
#include "bwrap-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the child reports through the error pipe before it _exits. */
enum { STEP_STDIO = 1, STEP_FD, STEP_CHDIR, STEP_GROUP, STEP_EXEC };

/* Descriptors the child passes to bwrap (-1 when not used). */
typedef struct passfds {
    int info;
    int block;
    int seccomp;
    const int *pins; /* the bind sources (kgl-pin.c) */
    size_t n_pins;
} passfds;

static const char *step_name(int step)
{
    switch (step) {
    case STEP_STDIO: return "set up stdio for";
    case STEP_FD: return "pass descriptors to";
    case STEP_CHDIR: return "enter the project";
    case STEP_GROUP: return "join the guard's process group for";
    default: return "execute";
    }
}

/* Only async-signal-safe calls from here to execve: the core may have
 * threads (the output relay) and the heap may be in any state. */
__attribute__((noreturn)) static void child(char *const *argv,
                                            const kgate_launch *io,
                                            const int hi[3], passfds pass,
                                            int err_w, const char *project,
                                            pid_t group, pid_t kgate)
{
    int report[2] = {0, 0};
    struct sigaction dfl, cur;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    /* Handlers the core installed must not run here (all signals are
     * blocked until execve, which resets them anyway).  An ignored signal
     * stays ignored, as execve leaves it: the core ignores nothing itself,
     * so that is one kgate's caller ignored, and the program would have
     * inherited it without kgate. */
    for (int s = 1; s < NSIG; s++)
        if (sigaction(s, NULL, &cur) == 0 && cur.sa_handler != SIG_IGN)
            sigaction(s, &dfl, NULL);

    /* Out of the terminal's foreground group: a Ctrl-C reaches kgate,
     * which forwards it to the program's group, and not bwrap's outer
     * process, whose death would SIGKILL the program.  The same with a pty
     * (io->pty): the pty must not become the controlling terminal here,
     * where bwrap's outer process would share its session and get the
     * Ctrl-C typed into it.  The shim inside the sandbox takes it
     * (stage_pty in bwrap-plan.c).  The group is the guard's
     * (kgl-guard.c): the sandbox's pid 1 is born in it. */
    if (setpgid(0, group) < 0) {
        report[0] = STEP_GROUP;
        goto fail;
    }
    /* bwrap's --die-with-parent is armed only after bwrap has started: a
     * kgate dying before that (after the guard's group kill, which may
     * have let us join the group of a guard not yet reaped) must take us
     * too.  Kept across execve (bwrap is not set-user-ID). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != kgate) _exit(127);
    /* hi[] are >= 10, so these never overwrite one another. */
    for (int i = 0; i < 3; i++) {
        if (dup2(hi[i], i) < 0) {
            report[0] = STEP_STDIO;
            goto fail;
        }
    }
    if (fcntl(pass.info, F_SETFD, 0) < 0 ||
        (pass.block >= 0 && fcntl(pass.block, F_SETFD, 0) < 0) ||
        fcntl(pass.seccomp, F_SETFD, 0) < 0) {
        report[0] = STEP_FD;
        goto fail;
    }
    for (size_t i = 0; i < pass.n_pins; i++)
        if (fcntl(pass.pins[i], F_SETFD, 0) < 0) {
            report[0] = STEP_FD;
            goto fail;
        }
    if (chdir(project) < 0) {
        report[0] = STEP_CHDIR;
        goto fail;
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(argv[0], argv, (char *const *)io->envp);
    report[0] = STEP_EXEC;
fail:
    report[1] = errno;
    if (write(err_w, report, sizeof report) < 0) _exit(127);
    _exit(127);
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

/* The number after "child-pid" in bwrap's info JSON, or 0. */
static pid_t parse_child_pid(const char *json)
{
    const char *k = strstr(json, "\"child-pid\"");
    if (!k) return 0;
    k = strchr(k, ':');
    if (!k) return 0;
    char *end;
    long v = strtol(k + 1, &end, 10);
    return end != k + 1 && v > 1 ? (pid_t)v : 0;
}

/* Our end of the block socket, with one record queued that keeps it
 * unwritable until bwrap reads it; *theirs is bwrap's end (>= 10).  Returns
 * -1 when this kernel does not behave that way: launch then goes on
 * without the gate. */
static int gate_open(int *theirs, size_t *reclen)
{
    int sv[2];
    *theirs = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return -1;
    int one = 1, sndbuf = 0;
    socklen_t len = sizeof sndbuf;
    char rec[2048];
    memset(rec, 'k', sizeof rec);
    /* The kernel raises this to its minimum (a few KiB); a 2 KiB record
     * then holds more than a quarter of it, which is when a unix socket
     * stops being writable. */
    if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &one, sizeof one) < 0 ||
        getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) < 0)
        goto fail;
    size_t n = sizeof rec;
    if ((size_t)sndbuf < n + 64) n = sndbuf > 128 ? (size_t)sndbuf - 64 : 64;
    if (send(sv[0], rec, n, MSG_DONTWAIT) != (ssize_t)n) goto fail;
    struct pollfd p = {.fd = sv[0], .events = POLLOUT};
    if (poll(&p, 1, 0) != 0) goto fail; /* writable already: no gate */
    /* Taken back: the record goes in only once the guard knows the
     * sandbox's pid 1 (gate_arm), so bwrap's pid 1 waits at the block fd,
     * still in the guard's process group, until then. */
    if (recv(sv[1], rec, sizeof rec, MSG_DONTWAIT) != (ssize_t)n) goto fail;
    *reclen = n;
    *theirs = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    close(sv[1]);
    if (*theirs < 0) {
        close(sv[0]);
        return -1;
    }
    return sv[0];
fail:
    close(sv[0]);
    close(sv[1]);
    return -1;
}

/* Queues the record bwrap's pid 1 waits for. */
static int gate_arm(int ours, size_t reclen)
{
    char rec[2048];
    memset(rec, 'k', sizeof rec);
    return send(ours, rec, reclen, MSG_DONTWAIT) == (ssize_t)reclen ? 0 : -1;
}

/* 1 when bwrap consumed the record (setup done), 0 when it exited first,
 * -1 when poll fails. */
static int gate_wait(int ours, pid_t pid)
{
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) {
        /* No pidfd (a kernel before 5.3, or valgrind): the same question,
         * asked every 10 ms.  WNOWAIT leaves bwrap for the caller to reap. */
        for (;;) {
            struct pollfd g = {.fd = ours, .events = POLLOUT};
            if (poll(&g, 1, 10) == 1 && (g.revents & POLLOUT)) return 1;
            siginfo_t si;
            memset(&si, 0, sizeof si);
            if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                si.si_pid == pid) {
                /* It read the record before it could exit, if it did. */
                struct pollfd again = {.fd = ours, .events = POLLOUT};
                return poll(&again, 1, 0) == 1 && (again.revents & POLLOUT) ? 1 : 0;
            }
        }
    }
    struct pollfd p[2] = {{.fd = ours, .events = POLLOUT},
                          {.fd = pidfd, .events = POLLIN}};
    while (poll(p, 2, -1) < 0)
        if (errno != EINTR) {
            close(pidfd);
            return -1;
        }
    close(pidfd);
    /* The read happens before any exit, so a program that already ended
     * still shows as a consumed record. */
    struct pollfd again = {.fd = ours, .events = POLLOUT};
    return poll(&again, 1, 0) == 1 && again.revents == POLLOUT ? 1 : 0;
}

static int exit_code_of(int st, const char **kind)
{
    *kind = st >= 0 && WIFSIGNALED(st) ? "signal" : "exit status";
    return st < 0 ? -1 : WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st);
}

int kgbw_launch(const kgate_host *host, const kgate_policy *policy,
                const kgate_probe *probe, const kgate_plan *plan,
                const kgate_launch *io, kgate_proc *proc, kgate_err *err)
{
    /* The plan carries all launch needs; bubblewrap keeps no state. */
    (void)probe;
    size_t argc = 0;
    const char *const *pargv = host->plan_argv(plan, &argc);
    int info_r = -1, info_w = -1, err_r = -1, err_w = -1, hi[3] = {-1, -1, -1};
    int gate = -1, block_w = -1, filter = -1, filter_w = -1;
    kgl_pins pins = {0};
    kgl_guard guard = {.pid = -1, .wfd = -1};
    char **argv = NULL;
    int r = -1, fds[2];
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
    const int io_fds[3] = {io->stdin_fd, io->stdout_fd, io->stderr_fd};
    for (int i = 0; i < 3; i++)
        if ((hi[i] = fcntl(io_fds[i], F_DUPFD_CLOEXEC, 10)) < 0) goto sys_fail;
    if (pipe2(fds, O_CLOEXEC) < 0) goto sys_fail;
    err_r = fds[0];
    err_w = fds[1];

    /* Every bind source becomes a descriptor opened here (kgl-pin.c). */
    if (kgl_pins_open(pargv, argc, &pins, err) < 0) goto out;

    /* Fail closed: a sandbox without its filter does not start.  Through a
     * pipe that stays empty until the mounts are checked: bwrap waits for
     * it after its last mount, before the program. */
    filter = kgl_seccomp_pipe(&filter_w, err);
    if (filter < 0) goto out;

    /* The gate says when the mounts are done, which is when they can be
     * checked; without it they cannot, and nothing starts. */
    size_t reclen = 0;
    gate = gate_open(&block_w, &reclen);
    if (gate < 0) {
        kgate_err_set(err, ENOTSUP,
                      "cannot tell when bwrap has made its mounts on this "
                      "kernel, so they cannot be checked; nothing was started");
        goto out;
    }

    char infonum[16], blocknum[16], filternum[16];
    snprintf(infonum, sizeof infonum, "%d", info_w);
    snprintf(blocknum, sizeof blocknum, "%d", block_w);
    snprintf(filternum, sizeof filternum, "%d", filter);
    argv = calloc(pins.argc + 7, sizeof *argv);
    if (!argv) goto sys_fail;
    size_t k = 0;
    argv[k++] = (char *)pargv[0];
    argv[k++] = (char *)"--info-fd";
    argv[k++] = infonum;
    if (gate >= 0) {
        argv[k++] = (char *)"--block-fd";
        argv[k++] = blocknum;
    }
    /* bwrap loads it last, just before it execs the program, so bwrap's
     * own setup (mounts, pivot_root) is not subject to it. */
    argv[k++] = (char *)"--seccomp";
    argv[k++] = filternum;
    for (size_t i = 1; i < pins.argc; i++) argv[k++] = (char *)pins.argv[i];

    /* The guard holds our end of the gate too: if kgate dies before it
     * queued the record, bwrap's pid 1 waits at the block fd (no EOF) until
     * the guard kills it. */
    if (kgl_guard_start(&guard, gate, err) < 0) goto out;

    pid_t self = getpid();
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid = fork();
    if (pid == 0)
        child(argv, io, hi,
              (passfds){info_w, block_w, filter, pins.fds, pins.n_fds}, err_w,
              policy->project, guard.pid, self);
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        errno = fork_errno;
        goto sys_fail;
    }
    close_fd(&err_w);
    close_fd(&info_w);
    close_fd(&filter);
    for (size_t i = 0; i < pins.n_fds; i++) close_fd(&pins.fds[i]);
    /* block_w stays open here until the gate is decided: while we hold the
     * peer too, bwrap closing or dying does not purge the record (that
     * would look like a read); only bwrap reading it does. */
    for (int i = 0; i < 3; i++) close_fd(&hi[i]);

    int report[2];
    if (read_full(err_r, report, sizeof report) == (ssize_t)sizeof report) {
        reap(pid);
        kgate_err_set(err, report[1], "could not %s %s: %s",
                      step_name(report[0]),
                      report[0] == STEP_CHDIR ? policy->project : pargv[0],
                      strerror(report[1]));
        goto out;
    }

    /* bwrap writes the info and closes it right after it created the
     * namespaces, before the mounts; a bwrap that fails earlier (no user
     * namespaces, a bad option) closes it with nothing written. */
    char info[1024];
    ssize_t n = read_full(info_r, info, sizeof info - 1);
    info[n > 0 ? n : 0] = '\0';
    pid_t sandbox = parse_child_pid(info);
    if (sandbox) kgl_guard_tell(&guard, sandbox);
    if (sandbox && gate >= 0 && gate_arm(gate, reclen) < 0) {
        kill(pid, SIGKILL);
        reap(pid);
        kgate_err_set(err, errno, "cannot open bwrap's setup gate: %s",
                      strerror(errno));
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
    int gated = gate_wait(gate, pid);
    if (gated == 0) {
        int code = exit_code_of(reap(pid), &kind);
        kgate_err_set(err, 0,
                      "bwrap could not set up the sandbox (%s %d); its "
                      "message is above",
                      kind, code);
        goto out;
    }
    /* bwrap is past its last mount and waits for the filter: the program
     * has not started.  Check what it would see, then let it go. */
    if (gated < 0) {
        kgate_err_set(err, errno,
                      "cannot tell when bwrap has made its mounts (%s), so "
                      "they cannot be checked; nothing was started",
                      strerror(errno));
        goto kill_sandbox;
    }
    if (kgl_pins_verify(&pins, sandbox, err) < 0 ||
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
    close_fd(&gate);
    close_fd(&block_w);
    close_fd(&info_r);
    close_fd(&info_w);
    close_fd(&err_r);
    close_fd(&err_w);
    for (int i = 0; i < 3; i++) close_fd(&hi[i]);
    free(argv);
    return r;
}
