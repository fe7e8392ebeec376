/* sf_driver: runs the slirp-filter network stage's real launch without the
 * kgate command, composed (by the core's kg_compose_plan) with a minimal
 * stand-in for the bubblewrap backend or, with --bwrap-plugin, the real one.  For debugging and for
 * tests/integration/restricted_net.sh while `kgate run` is not wired:
 *
 *   sf_driver [--dry-run] [--off] [--events FILE] [--host NAME]... -- COMMAND [ARG...]
 *
 * Exit status: the program's, 128+N for a signal, 125 when the launch
 * failed (one "kgate: ..." line on stderr), like kgate run. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host.h"
#include "select.h"
#include "sf-internal.h"

extern char **environ;
const kgate_backend *kgate_plugin_entry(void);

static int bw_plan(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                   kgate_plan *plan, kgate_err *err)
{
    (void)probe;
    if (policy->network == KGATE_NET_RESTRICTED)
        return kgate_err_set(err, 0, "stand-in bubblewrap: no host lists");
    host->plan_arg(plan, "/usr/bin/bwrap");
    const char *fixed[] = {
        "--ro-bind",    "/",       "/",    "--dev",          "/dev",          "--proc",
        "/proc",        "--tmpfs", "/tmp", "--unshare-user", "--unshare-pid", "--die-with-parent",
        "--new-session"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) host->plan_arg(plan, fixed[i]);
    host->plan_arg(plan, "--uid");
    host->plan_argf(plan, "%u", (unsigned)policy->uid);
    host->plan_arg(plan, "--gid");
    host->plan_argf(plan, "%u", (unsigned)policy->gid);
    if (policy->network == KGATE_NET_OFF) host->plan_arg(plan, "--unshare-net");
    host->plan_arg(plan, "--tmpfs");
    host->plan_arg(plan, policy->home);
    host->plan_arg(plan, "--bind");
    host->plan_arg(plan, policy->project);
    host->plan_arg(plan, policy->project);
    host->plan_arg(plan, "--chdir");
    host->plan_arg(plan, policy->project);
    host->plan_arg(plan, "--");
    host->plan_args(plan, &policy->argv);
    return 0;
}

static int bw_doctor(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                     kgate_report *rep)
{
    (void)policy, (void)probe;
    return host->report(rep, KGATE_READY, "fs.home-hidden", "stand-in bubblewrap");
}

static int bw_launch(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                     const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc,
                     kgate_err *err)
{
    (void)probe;
    size_t n;
    const char *const *argv = host->plan_argv(plan, &n);
    char **v = calloc(n + 1, sizeof *v);
    if (!v) return kgate_err_set(err, ENOMEM, "out of memory");
    memcpy(v, argv, n * sizeof *v);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(io->stdin_fd, 0);
        dup2(io->stdout_fd, 1);
        dup2(io->stderr_fd, 2);
        if (chdir(policy->project) < 0) _exit(125);
        execve(v[0], v, (char *const *)io->envp);
        _exit(127);
    }
    free(v);
    if (pid < 0) return kgate_err_set(err, errno, "fork: %s", strerror(errno));
    proc->pid = pid;
    return 0;
}

static const kgate_backend stand_in = {
    KGATE_BACKEND_INIT, .name = "bubblewrap", .doctor = bw_doctor,
    .plan = bw_plan,    .launch = bw_launch,
};
static kgate_probe stand_in_probe;
/* --bwrap-plugin: the real bubblewrap backend instead of the stand-in. */
static const kgate_backend *real_bw;

static volatile pid_t g_signal_pid;

static void forward(int sig)
{
    if (g_signal_pid) kill(g_signal_pid, sig);
}

int main(int argc, char **argv)
{
    int dry = 0, off = 0, doctor = 0, pty = 0;
    const char *events_path = NULL;
    const char *hosts[64];
    size_t n_hosts = 0;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--dry-run") == 0)
            dry = 1;
        else if (strcmp(argv[i], "--off") == 0)
            off = 1;
        else if (strcmp(argv[i], "--doctor") == 0)
            doctor = 1;
        else if (strcmp(argv[i], "--pty") == 0)
            pty = 1;
        else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
            events_path = argv[++i];
        else if (strcmp(argv[i], "--host") == 0 && i + 1 < argc && n_hosts < 64)
            hosts[n_hosts++] = argv[++i];
        else if (strcmp(argv[i], "--bwrap-plugin") == 0 && i + 1 < argc) {
            void *h = dlopen(argv[++i], RTLD_NOW | RTLD_LOCAL);
            void *sym = h ? dlsym(h, KGATE_PLUGIN_ENTRY_SYMBOL) : NULL;
            kgate_plugin_entry_fn entry = NULL;
            /* ISO C has no object-to-function pointer cast; POSIX makes
             * the representation the same. */
            memcpy(&entry, &sym, sizeof entry);
            if (!entry) {
                fprintf(stderr, "sf_driver: %s\n", dlerror());
                return 2;
            }
            real_bw = entry();
        } else {
            fprintf(stderr, "usage: sf_driver [--dry-run] [--doctor] [--off] "
                            "[--events FILE] [--host NAME]... -- COMMAND [ARG...]\n");
            return 2;
        }
    }
    if (i >= argc - 1) return 2;
    const char *const *cmd = (const char *const *)&argv[i + 1];
    size_t n_cmd = (size_t)(argc - i - 1);

    kg_host host;
    kg_host_init(&host);
    host.current = "slirp-filter";
    kgate_probe_init(&stand_in_probe);
    stand_in_probe.available = 1;
    if (real_bw) {
        kgate_err e = {0};
        if (real_bw->probe(&host.pub, KGATE_PROBE_QUICK, &stand_in_probe, &e) < 0) {
            fprintf(stderr, "kgate: bubblewrap: %s\n", e.msg);
            return 125;
        }
    }

    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return 125;
    const char *home = getenv("HOME");
    char cmd_path[PATH_MAX];
    if (strchr(cmd[0], '/'))
        snprintf(cmd_path, sizeof cmd_path, "%s", cmd[0]);
    else if (sf_find_tool(cmd[0], cmd_path, sizeof cmd_path) < 0) {
        fprintf(stderr, "kgate: %s: command not found\n", cmd[0]);
        return 127;
    }
    kgate_network net = off || n_hosts == 0 ? KGATE_NET_OFF : KGATE_NET_RESTRICTED;
    kgate_policy pol = {
        .struct_size = sizeof pol,
        .network = net,
        .configured_network = net,
        .allow_hosts = {hosts, n_hosts},
        .project = cwd,
        .home = home ? home : "/nonexistent",
        .uid = getuid(),
        .gid = getgid(),
        .argv = {cmd, n_cmd},
        .command_path = cmd_path,
        .pty = pty,
    };

    const kgate_backend *be = kgate_plugin_entry();
    kgate_probe probe;
    kgate_probe_init(&probe);
    kgate_err err = {0};
    if (be->probe(&host.pub, doctor ? KGATE_PROBE_THOROUGH : KGATE_PROBE_QUICK, &probe, &err) < 0) {
        fprintf(stderr, "kgate: slirp-filter: %s\n", err.msg);
        return 125;
    }
    /* As the core composes them: a stage only for a host list. */
    const kgate_backend *bw = real_bw ? real_bw : &stand_in;
    const kgate_backend *stage = net == KGATE_NET_RESTRICTED ? be : NULL;
    if (doctor) {
        kgate_report *brep = kg_report_new(), *rep = brep;
        bw->doctor(&host.pub, &pol, &stand_in_probe, brep);
        if (stage) {
            kgate_report *srep = kg_report_new();
            stage->doctor(&host.pub, &pol, &probe, srep);
            rep = kg_compose_report(&host, brep, srep);
            kg_report_free(srep);
            kg_report_free(brep);
        }
        for (size_t k = 0; k < rep->n_items; k++)
            printf("%s: %s\n", kg_verdict_name(rep->items[k].verdict), rep->items[k].text);
        printf("%s\n", kg_verdict_name(rep->verdict));
        int r = rep->verdict == KGATE_BLOCKED;
        kg_report_free(rep);
        return r;
    }
    kgate_plan *plan = kg_plan_new();
    const char *who = NULL;
    if (kg_compose_plan(&host, bw, &stand_in_probe, stage, &probe, &pol, plan, &who, &err) < 0) {
        fprintf(stderr, "kgate: %s: %s\n", who, err.msg);
        kg_plan_free(plan);
        return 125;
    }
    if (dry) {
        kg_plan_print(plan, stdout);
        kg_plan_free(plan);
        return 0;
    }
    kgate_launch io = {.struct_size = sizeof io,
                       .stdin_fd = 0,
                       .stdout_fd = 1,
                       .stderr_fd = 2,
                       .envp = (const char *const *)environ,
                       .events_fd = -1};
    /* --events: the stage's event records are appended to FILE (the core
     * reads a pipe; a file keeps them for the test to read). */
    if (events_path &&
        (io.events_fd = open(events_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0) {
        fprintf(stderr, "kgate: %s: %s\n", events_path, strerror(errno));
        return 125;
    }
    /* --pty: the program gets a pseudo-terminal of its own, whose output
     * is copied to stdout (no input). */
    int master = -1;
    if (pty) {
        master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        int slave = -1;
        if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
            (slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
            fprintf(stderr, "kgate: pty: %s\n", strerror(errno));
            return 125;
        }
        io.stdin_fd = io.stdout_fd = io.stderr_fd = slave;
        io.pty = 1;
    }
    kgate_proc proc = {.struct_size = sizeof proc};
    int launched = stage ? stage->launch(&host.pub, &pol, &probe, plan, &io, &proc, &err)
                         : bw->launch(&host.pub, &pol, &stand_in_probe, plan, &io, &proc, &err);
    /* As the core does once the command is over: both states go back. */
    if (be->release) be->release(probe.state);
    if (real_bw && real_bw->release) real_bw->release(stand_in_probe.state);
    kg_plan_free(plan);
    if (launched < 0) {
        fprintf(stderr, "kgate: slirp-filter: %s\n", err.msg);
        return 125;
    }
    if (pty) {
        close(io.stdin_fd);
        char buf[4096];
        ssize_t n;
        while ((n = read(master, buf, sizeof buf)) > 0)
            if (write(1, buf, (size_t)n) < 0) break;
        close(master);
    }
    /* As the core does: SIGINT and SIGTERM go to signal_pid (the sandbox's
     * process group) when the backend named one. */
    g_signal_pid = proc.signal_pid ? proc.signal_pid : proc.pid;
    struct sigaction fwd = {.sa_handler = forward};
    sigaction(SIGINT, &fwd, NULL);
    sigaction(SIGTERM, &fwd, NULL);
    int st = 0;
    while (waitpid(proc.pid, &st, 0) < 0 && errno == EINTR) {}
    for (size_t k = 0; k < proc.n_helpers; k++) {
        kill(proc.helpers[k], SIGTERM);
        while (waitpid(proc.helpers[k], NULL, 0) < 0 && errno == EINTR) {}
    }
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}
