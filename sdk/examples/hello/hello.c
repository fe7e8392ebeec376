/* hello.c: the smallest complete kgate backend, as a template.
 *
 * It answers all four questions of the ABI honestly, and honestly means
 * that it never lets `kgate run` pick it: it starts the program with no
 * box at all, so its doctor always says BLOCKED.  Copy it, keep the shape,
 * and replace the middle of each function with what your sandbox does.
 *
 * Build (see the Makefile):
 *     cc -fPIC -shared -fvisibility=hidden $(pkg-config --cflags kgate-plugin) \
 *        -o hello.so hello.c
 * On Linux the Makefile adds the SDK's Linux support library (pkg-config
 * kgate-linux, -DHELLO_KGATE_LINUX), whose spawn helper launch uses.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kgate/kgate-plugin.h>
#ifdef HELLO_KGATE_LINUX
/* The SDK's Linux support library, where the Makefile found it. */
#include <kgate/kgate-linux.h>
#endif

/* The tool this backend would drive.  A real backend looks for bwrap,
 * sandbox-exec, runsc, ... */
#define HELLO_TOOL "/usr/bin/env"

/* probe: what is on this machine.  QUICK must stay cheap (kgate run asks
 * on every command): stat, no child processes.  THOROUGH (doctor, plugins)
 * may try the tool.  A missing tool is not an error: it is available = 0
 * with a reason. */
static int hello_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe,
                       kgate_err *err)
{
    struct stat st;
    (void)err;
    host->log(host, KGATE_LOG_DEBUG, "probing %s (%s)", HELLO_TOOL,
              depth == KGATE_PROBE_THOROUGH ? "thorough" : "quick");
    if (stat(HELLO_TOOL, &st) != 0 || !(st.st_mode & S_IXUSR)) {
        strcpy(probe->reason, HELLO_TOOL " not found");
        kgate_probe_set_fact(probe, "tool", 0);
        return 0;
    }
    probe->available = 1;
    probe->score = 0; /* lower than any real backend */
    strcpy(probe->tool_path, HELLO_TOOL);
    strcpy(probe->version, "1.0");
    strcpy(probe->reason, "example backend: starts programs without a sandbox");
    kgate_probe_set_fact(probe, "tool", 1);
    return 0;
}

/* doctor: a pure function of the policy and the probe.  No I/O: tests hand
 * it made-up probes to check the verdict table on any machine.  Every
 * finding is one line with an id; the worst one is the verdict.  Ids are
 * for programs: reuse a documented one ("net.open") when the finding means
 * the same thing, and prefix your own with the backend's name. */
static int hello_doctor(const kgate_host *host, const kgate_policy *policy,
                        const kgate_probe *probe, kgate_report *rep)
{
    host->report_detail(rep, "tool", probe->tool_path[0] ? probe->tool_path : "none");
    if (!kgate_probe_fact(probe, "tool", 0))
        return host->report(rep, KGATE_BLOCKED, KGATE_FINDING_TOOL_MISSING, "%s", probe->reason);
    if (policy->network == KGATE_NET_OPEN)
        host->report(rep, KGATE_DEGRADED, KGATE_FINDING_NET_OPEN,
                     "network: open (the host's network)");
    /* The honest verdict for a backend that encloses nothing. */
    return host->report(rep, KGATE_BLOCKED, "hello.no-sandbox",
                        "hello is an example: programs in %s would run with no sandbox",
                        policy->project ? policy->project : "the project");
}

/* plan: the exact argv that launch will exec.  It is data: kgate shows it
 * with --dry-run and never hands it to a shell. */
static int hello_plan(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                      kgate_plan *plan, kgate_err *err)
{
    if (host->plan_arg(plan, probe->tool_path) < 0 || host->plan_arg(plan, "--") < 0 ||
        host->plan_args(plan, &policy->argv) < 0)
        return kgate_err_set(err, ENOMEM, "out of memory");
    return host->plan_note(plan, "no sandbox: this is the SDK example");
}

/* launch: start the plan and return at once; the core waits, relays
 * output, forwards signals and reports the exit status. */
static int hello_launch(const kgate_host *host, const kgate_policy *policy,
                        const kgate_probe *probe, const kgate_plan *plan, const kgate_launch *io,
                        kgate_proc *proc, kgate_err *err)
{
    /* probe is the one plan was given.  hello keeps no state of its own
     * (probe->state stays NULL and .release unset); a backend that found
     * more than the probe's fields hold keeps it there (kgate-plugin(7)). */
    (void)probe;
    size_t argc = 0;
    const char *const *argv = host->plan_argv(plan, &argc);
    if (argc == 0) return kgate_err_set(err, EINVAL, "empty plan");
    /* plan_argv is not NULL-terminated: build execve's vector before the
     * fork, where allocating is still allowed. */
    char **args = calloc(argc + 1, sizeof *args);
    if (!args) return kgate_err_set(err, ENOMEM, "out of memory");
    for (size_t i = 0; i < argc; i++) args[i] = (char *)argv[i];
#ifdef HELLO_KGATE_LINUX
    /* The SDK's spawn helper (kgate-linux.h): a step before the exec that
     * fails (stdio, the project directory, the exec itself) comes back
     * here as err, which kgate turns into one `kgate:` line and exit 125;
     * once the exec happened, the status is the program's own.  A real
     * Linux backend adds its box here: the descriptors bwrap is given
     * (.pass), the guard's process group (.group), the setup gate. */
    const kgl_spawn spawn = {
        .path = args[0],
        .argv = args,
        .envp = (char *const *)io->envp,
        .stdio = {io->stdin_fd, io->stdout_fd, io->stderr_fd},
        .dir = policy->project,
        .pdeathsig = 1,
    };
    pid_t pid = kgl_spawn_run(&spawn, err);
    free(args);
    if (pid < 0) return -1;
#else
    /* Without the Linux support library (macOS): the same steps by hand.
     * A step that fails ends the child with 125, which kgate cannot tell
     * from a program's own 125; kgate-linux's helper reports it instead. */
    pid_t pid = fork();
    if (pid < 0) {
        free(args);
        return kgate_err_set(err, errno, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        /* The child: only async-signal-safe calls until execve. */
        if (dup2(io->stdin_fd, 0) < 0 || dup2(io->stdout_fd, 1) < 0 || dup2(io->stderr_fd, 2) < 0 ||
            chdir(policy->project) < 0)
            _exit(125);
        execve(args[0], args, (char *const *)io->envp);
        _exit(125);
    }
    free(args);
#endif
    proc->pid = pid;
    return 0;
}

static const kgate_backend hello_backend = {
    KGATE_BACKEND_INIT, /* struct_size, abi_major, abi_minor: never by hand */
    .name = "hello",      .description = "SDK example: shows the ABI, enforces nothing",
    .probe = hello_probe, .doctor = hello_doctor,
    .plan = hello_plan,   .launch = hello_launch,
};

/* The one exported symbol. */
KGATE_PLUGIN_DEFINE(hello_backend)
