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
 * The info descriptor is added here, not in the plan, so the plan stays a
 * plain argv that --dry-run can print and another backend can run. */
#include "bwrap-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the child reports through the error pipe before it _exits. */
enum { STEP_STDIO = 1, STEP_TTY, STEP_FD, STEP_CHDIR, STEP_EXEC };

static const char *step_name(int step)
{
    switch (step) {
    case STEP_STDIO: return "set up stdio";
    case STEP_TTY: return "take the pseudo-terminal";
    case STEP_FD: return "pass the info descriptor";
    case STEP_CHDIR: return "enter the project";
    default: return "execute";
    }
}

/* Only async-signal-safe calls from here to execve: the core may have
 * threads (the output relay) and the heap may be in any state. */
__attribute__((noreturn)) static void child(char *const *argv,
                                            const kgate_launch *io,
                                            const int hi[3], int info_w,
                                            int err_w, const char *project)
{
    int report[2] = {0, 0};
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    /* Dispositions the core installed (or ignored) must not reach bwrap
     * and through it the program.  All signals are blocked until execve. */
    for (int s = 1; s < NSIG; s++) sigaction(s, &dfl, NULL);

    int pty = KGATE_HAS_FIELD(io, kgate_launch, pty) && io->pty;
    if (pty) {
        setsid();
    } else {
        /* Out of the terminal's foreground group: a Ctrl-C reaches kgate,
         * which forwards it to the program's group, and not bwrap's outer
         * process, whose death would SIGKILL the program. */
        setpgid(0, 0);
    }
    /* hi[] are >= 10, so these never overwrite one another. */
    for (int i = 0; i < 3; i++) {
        if (dup2(hi[i], i) < 0) {
            report[0] = STEP_STDIO;
            goto fail;
        }
    }
    if (pty && ioctl(0, TIOCSCTTY, 0) < 0) {
        report[0] = STEP_TTY;
        goto fail;
    }
    if (fcntl(info_w, F_SETFD, 0) < 0) {
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

int kgbw_launch(const kgate_host *host, const kgate_policy *policy,
                const kgate_plan *plan, const kgate_launch *io,
                kgate_proc *proc, kgate_err *err)
{
    size_t argc = 0;
    const char *const *pargv = host->plan_argv(plan, &argc);
    int info_r = -1, info_w = -1, err_r = -1, err_w = -1, hi[3] = {-1, -1, -1};
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

    char fdnum[16];
    snprintf(fdnum, sizeof fdnum, "%d", info_w);
    argv = calloc(argc + 3, sizeof *argv);
    if (!argv) goto sys_fail;
    argv[0] = (char *)pargv[0];
    argv[1] = (char *)"--info-fd";
    argv[2] = fdnum;
    for (size_t i = 1; i < argc; i++) argv[i + 2] = (char *)pargv[i];

    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid = fork();
    if (pid == 0) child(argv, io, hi, info_w, err_w, policy->project);
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        errno = fork_errno;
        goto sys_fail;
    }
    close_fd(&err_w);
    close_fd(&info_w);
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
    if (!sandbox) {
        int st = reap(pid);
        kgate_err_set(err, 0,
                      "bwrap could not create the sandbox (%s %d); its "
                      "message is above",
                      st >= 0 && WIFSIGNALED(st) ? "signal" : "exit status",
                      st < 0 ? -1 : WIFSIGNALED(st) ? WTERMSIG(st)
                                                    : WEXITSTATUS(st));
        goto out;
    }
    proc->pid = pid;
    /* With a pty of its own there is no --new-session, so the reaper leads
     * no group; the core signals the outer bwrap then (the sandbox dies
     * with it, see docs/bubblewrap.md). */
    int pty = KGATE_HAS_FIELD(io, kgate_launch, pty) && io->pty;
    proc->signal_pid = pty ? 0 : -sandbox;
    proc->n_helpers = 0;
    host->log(host, KGATE_LOG_DEBUG, "bwrap pid %ld, sandbox pid 1 is %ld",
              (long)pid, (long)sandbox);
    r = 0;
    goto out;

sys_fail:
    kgate_err_set(err, errno, "cannot start bwrap: %s", strerror(errno));
out:
    close_fd(&info_r);
    close_fd(&info_w);
    close_fd(&err_r);
    close_fd(&err_w);
    for (int i = 0; i < 3; i++) close_fd(&hi[i]);
    free(argv);
    return r;
}
