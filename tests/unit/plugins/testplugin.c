/* testplugin.c: one source, built once per TP_* variant, giving the loader
 * tests one plugin for each way a plugin can be wrong (and two right). */
#include <errno.h>
#include <stddef.h>

#include <kgate/kgate-plugin.h>

__attribute__((unused)) static int tp_probe(const kgate_host *host, kgate_probe_depth depth,
                                            kgate_probe *probe, kgate_err *err)
{
    (void)host;
    (void)err;
    probe->available = 1;
    probe->score = depth == KGATE_PROBE_THOROUGH ? 7 : 3;
    kgate_probe_set_fact(probe, "thorough", depth == KGATE_PROBE_THOROUGH);
    return 0;
}

/* TP_BADID reports the same table under ids the core must refuse. */
#if defined(TP_BADID)
#define TP_ID(id) "Not An Id!"
#else
#define TP_ID(id) id
#endif

__attribute__((unused)) static int tp_doctor(const kgate_host *host, const kgate_policy *policy,
                                             const kgate_probe *probe, kgate_report *rep)
{
    (void)probe;
    /* Enough of a verdict table for the doctor and plugins tests to see
     * each verdict come through. */
    host->report_detail(rep, "network",
                        policy->network == KGATE_NET_OPEN  ? "open"
                        : policy->network == KGATE_NET_OFF ? "off"
                                                           : "restricted");
    if (policy->network == KGATE_NET_OPEN)
        return host->report(rep, KGATE_DEGRADED, TP_ID("net.open"), "network open: no network box");
    if (policy->network == KGATE_NET_RESTRICTED)
        return host->report(rep, KGATE_BLOCKED, TP_ID(KGATE_FINDING_NET_HOSTS_UNSUPPORTED),
                            "a host list needs a filter this plugin lacks");
    return host->report(rep, KGATE_READY, TP_ID("tp.ready"), "test plugin is ready");
}

__attribute__((unused)) static int tp_plan(const kgate_host *host, const kgate_policy *policy,
                                           const kgate_probe *probe, kgate_plan *plan,
                                           kgate_err *err)
{
    (void)policy;
    (void)probe;
    (void)err;
    return host->plan_arg(plan, "/bin/true");
}

__attribute__((unused)) static int tp_launch(const kgate_host *host, const kgate_policy *policy,
                                             const kgate_probe *probe, const kgate_plan *plan,
                                             const kgate_launch *io, kgate_proc *proc,
                                             kgate_err *err)
{
    (void)host;
    (void)policy;
    (void)probe;
    (void)plan;
    (void)io;
    (void)proc;
    return kgate_err_set(err, ENOSYS, "test plugin does not launch");
}

#if defined(TP_EVENTS) || defined(TP_EVENTS0)
#include <stdio.h>
#include <string.h>
#include <unistd.h>
/* A launch that reports what "its filter refused" through events_fd (ABI
 * 2.1), each record with one write as the SDK asks, then starts the
 * program as a plain child (no sandbox: the test runs harmless commands).
 * The child shows which events_fd the backend was given and whether the
 * program inherited it. */
static int ev_launch(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                     const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc,
                     kgate_err *err)
{
    (void)host;
    (void)probe;
    (void)plan;
    int efd = -1;
    if (KGATE_HAS_FIELD(io, kgate_launch, events_fd)) efd = io->events_fd;
    if (efd >= 0) {
        static const char *const recs[] = {
            "net refused evil.example - 0\n",
            "net refused api.example 198.18.0.9 80\n",
            /* not a record: counted, never logged */
            "net refused bad\\name\n",
        };
        for (size_t i = 0; i < sizeof recs / sizeof *recs; i++)
            if (write(efd, recs[i], strlen(recs[i])) < 0)
                return kgate_err_set(err, errno, "events write failed");
    }
    char fdtext[16];
    snprintf(fdtext, sizeof fdtext, "%d", efd);
    pid_t pid = fork();
    if (pid < 0) return kgate_err_set(err, errno, "fork failed");
    if (pid == 0) {
        if (dup2(io->stdin_fd, 0) < 0 || dup2(io->stdout_fd, 1) < 0 || dup2(io->stderr_fd, 2) < 0)
            _exit(127);
        const char *const *argv = policy->argv.v;
        char *args[] = {"sh",
                        "-c",
                        "echo events_fd=$0; if [ \"$0\" -ge 0 ] && [ -e /proc/self/fd/$0 ]; "
                        "then echo events_fd_inherited; fi; exec \"$@\"",
                        fdtext,
                        NULL,
                        NULL,
                        NULL,
                        NULL};
        /* The program's first words, enough for the test's commands. */
        for (size_t i = 0; i < 3 && i < policy->argv.n; i++) args[4 + i] = (char *)argv[i];
        execv("/bin/sh", args);
        _exit(127);
    }
    proc->pid = pid;
    return 0;
}
static const kgate_backend backend = {
#if defined(TP_EVENTS0)
    /* Built before events_fd existed: the core must not hand it one. */
    .struct_size = sizeof(kgate_backend),
    .abi_major = KGATE_ABI_MAJOR,
    .abi_minor = 0,
    .name = "events0",
#else
    KGATE_BACKEND_INIT,
    .name = "events",
#endif
    .description = "a test backend that reports refusals through events_fd",
    .probe = tp_probe,
    .doctor = tp_doctor,
    .plan = tp_plan,
    .launch = ev_launch,
};
KGATE_PLUGIN_DEFINE(backend)

#elif defined(TP_COMMIT)
#include <unistd.h>
/* A backend that sets commits (ABI 2.1): the core writes its audit launch
 * line when launch calls kgate_launch_commit.  The program's words choose
 * the launch's path (run_audit.sh): "kg-fail-before-commit" fails the way
 * a filter that cannot be loaded does; "kg-skip-commit" starts the program
 * without committing (a broken backend the core must stop); anything else
 * commits, then runs the program as a plain child. */
static int has_word(const kgate_policy *policy, const char *w)
{
    for (size_t i = 0; i < policy->argv.n; i++)
        if (strcmp(policy->argv.v[i], w) == 0) return 1;
    return 0;
}

static int commit_launch(const kgate_host *host, const kgate_policy *policy,
                         const kgate_probe *probe, const kgate_plan *plan, const kgate_launch *io,
                         kgate_proc *proc, kgate_err *err)
{
    (void)host;
    (void)probe;
    (void)plan;
    if (has_word(policy, "kg-fail-before-commit"))
        return kgate_err_set(err, 0, "the test filter could not be loaded");
    if (!has_word(policy, "kg-skip-commit") && kgate_launch_commit(io, err) < 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return kgate_err_set(err, errno, "fork failed");
    if (pid == 0) {
        if (dup2(io->stdin_fd, 0) < 0 || dup2(io->stdout_fd, 1) < 0 || dup2(io->stderr_fd, 2) < 0)
            _exit(127);
        char *args[16] = {0}; /* argv.v need not end in NULL */
        for (size_t i = 0; i < 15 && i < policy->argv.n; i++) args[i] = (char *)policy->argv.v[i];
        execvp(args[0], args);
        _exit(127);
    }
    proc->pid = pid;
    return 0;
}
static const kgate_backend backend = {
    KGATE_BACKEND_INIT,
    .name = "commit",
    .description = "a test backend that writes the launch line through commit",
    .probe = tp_probe,
    .doctor = tp_doctor,
    .plan = tp_plan,
    .launch = commit_launch,
    .commits = 1,
};
KGATE_PLUGIN_DEFINE(backend)

#elif defined(TP_HANG)
#include <unistd.h>
/* A probe that never returns (faults.sh): the core's alarm must end it. */
static int hang_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe,
                      kgate_err *err)
{
    (void)host;
    (void)depth;
    (void)probe;
    (void)err;
    for (;;) sleep(600);
    return 0;
}
static const kgate_backend backend = {
    KGATE_BACKEND_INIT,  .name = "hang",      .description = "a backend whose probe never returns",
    .probe = hang_probe, .doctor = tp_doctor, .plan = tp_plan,
    .launch = tp_launch,
};
KGATE_PLUGIN_DEFINE(backend)

#elif defined(TP_GOOD) || defined(TP_DUP) || defined(TP_BADID)
/* TP_BADID: the same backend under another name, its finding ids not
 * valid (doctor.sh): its doctor is refused. */
#if defined(TP_BADID)
#define TP_NAME "badid"
#else
#define TP_NAME "good"
#endif
static const kgate_backend backend = {
    KGATE_BACKEND_INIT,  .name = TP_NAME,     .description = "a valid test backend",
    .probe = tp_probe,   .doctor = tp_doctor, .plan = tp_plan,
    .launch = tp_launch,
};
KGATE_PLUGIN_DEFINE(backend)

#elif defined(TP_MAJOR)
static const kgate_backend backend = {
    .struct_size = sizeof(kgate_backend),
    .abi_major = KGATE_ABI_MAJOR + 1,
    .abi_minor = 0,
    .name = "major",
};
KGATE_PLUGIN_DEFINE(backend)

#elif defined(TP_OLD)
/* A plugin built against ABI 1.0, spelled out as that header declared it:
 * launch without the probe, no release.  Its major alone refuses it. */
typedef struct v1_backend {
    size_t struct_size;
    uint32_t abi_major;
    uint32_t abi_minor;
    const char *name;
    const char *description;
    int (*probe)(const kgate_host *, kgate_probe_depth, kgate_probe *, kgate_err *);
    int (*doctor)(const kgate_host *, const kgate_policy *, const kgate_probe *, kgate_report *);
    int (*plan)(const kgate_host *, const kgate_policy *, const kgate_probe *, kgate_plan *,
                kgate_err *);
    int (*launch)(const kgate_host *, const kgate_policy *, const kgate_plan *,
                  const kgate_launch *, kgate_proc *, kgate_err *);
} v1_backend;
static int v1_launch(const kgate_host *host, const kgate_policy *policy, const kgate_plan *plan,
                     const kgate_launch *io, kgate_proc *proc, kgate_err *err)
{
    return tp_launch(host, policy, NULL, plan, io, proc, err);
}
/* Only what tells it apart: the version and the old launch. */
static const v1_backend backend = {
    sizeof(v1_backend), 1, 0, "old", "built against ABI 1.0", .launch = v1_launch,
};
KGATE_EXPORT const void *kgate_plugin_entry(void);
KGATE_EXPORT const void *kgate_plugin_entry(void) { return &backend; }

#elif defined(TP_NOSYM)
/* Exports something, just not the entry point. */
KGATE_EXPORT int kgate_plugin_entry_typo(void);
KGATE_EXPORT int kgate_plugin_entry_typo(void) { return 0; }

#elif defined(TP_SMALL)
/* A descriptor that stops before release: smaller than ABI 2.0 ever was. */
static const kgate_backend backend = {
    .struct_size = offsetof(kgate_backend, release),
    .abi_major = KGATE_ABI_MAJOR,
    .abi_minor = 0,
    .name = "small",
    .probe = tp_probe,
};
KGATE_PLUGIN_DEFINE(backend)

#elif defined(TP_NEWER)
/* A plugin built against a later minor: one method appended that this
 * core does not know; it must load and read as a plain 2.x backend. */
typedef struct newer_backend {
    kgate_backend base;
    int (*future_method)(void);
} newer_backend;
static int future(void) { return 42; }
static const newer_backend backend = {
    .base =
        {
            .struct_size = sizeof(newer_backend),
            .abi_major = KGATE_ABI_MAJOR,
            .abi_minor = KGATE_ABI_MINOR + 1,
            .name = "newer",
            .description = "built against a later minor",
            .probe = tp_probe,
            .doctor = tp_doctor,
            .plan = tp_plan,
            .launch = tp_launch,
        },
    .future_method = future,
};
KGATE_EXPORT const kgate_backend *kgate_plugin_entry(void);
KGATE_EXPORT const kgate_backend *kgate_plugin_entry(void) { return &backend.base; }

#elif defined(TP_PARTIAL)
/* Probe and doctor only: it can be listed, never picked. */
static const kgate_backend backend = {
    KGATE_BACKEND_INIT,
    .name = "partial",
    .probe = tp_probe,
    .doctor = tp_doctor,
};
KGATE_PLUGIN_DEFINE(backend)

#elif defined(TP_NULL)
KGATE_EXPORT const kgate_backend *kgate_plugin_entry(void);
KGATE_EXPORT const kgate_backend *kgate_plugin_entry(void) { return NULL; }

#elif defined(TP_NONAME)
static const kgate_backend backend = {KGATE_BACKEND_INIT, .probe = tp_probe};
KGATE_PLUGIN_DEFINE(backend)

#elif defined(TP_BADNAME)
static const kgate_backend backend = {
    KGATE_BACKEND_INIT,
    .name = "Bad\nName",
    .probe = tp_probe,
};
KGATE_PLUGIN_DEFINE(backend)

#else
#error "define one TP_* variant"
#endif
