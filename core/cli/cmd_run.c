/* cmd_run.c: `kgate run`, from the command line to the program's exit
 * status.  The order is the contract: everything that can refuse runs
 * before anything starts, the audit launch line is on disk before the
 * program runs (before the backend is asked to launch, or, for a backend
 * that commits, when it says all is in place), and every refusal is one
 * "kgate:" line. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "auditrun.h"
#include "boxhome.h"
#include "cleanup.h"
#include "commands.h"
#include "config.h"
#include "denyexec.h"
#include "envfilter.h"
#include "events.h"
#include "gitguard.h"
#include "protected.h"
#include "host.h"
#include "loader.h"
#include "msg.h"
#include "netevents.h"
#include "os.h"
#include "paths.h"
#include "policy.h"
#include "probecache.h"
#include "select.h"
#include "supervise.h"
#include "kgate/kgate-tool.h"

extern char **environ;

typedef struct run_args {
    kg_flags flags;
    const char *backend;
    bool dry_run;
    bool quiet; /* no summary of what the network filter refused */
    const char *events_fd; /* --events-fd or KGATE_EVENTS_FD; NULL: none */
    int pty; /* -1: decide from the terminal, 0: never, 1: always */
    char **cmd;
    int cmd_argc;
} run_args;

static const char run_usage[] =
    "usage: kgate run [--allow-path PATH]... [--allow-net HOST]... [--backend NAME]\n"
    "                 [--dry-run] [--events-fd N] [--pty | --no-pty] [--quiet]\n"
    "                 [--publish [127.0.0.1:]HOSTPORT:PORT]...\n"
    "                 -- COMMAND [ARG...]\n";

/* Accepts "--opt VALUE" and "--opt=VALUE".  Returns the value or NULL. */
static const char *opt_value(const char *opt, int argc, char **argv, int *i)
{
    size_t n = strlen(opt);
    if (strncmp(argv[*i], opt, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
}

/* Returns 0 with a command to run, or -1 with the status to exit with
 * (--help answered, or a usage error printed). */
static int parse_args(int argc, char **argv, run_args *a, int *status)
{
    *a = (run_args){.pty = -1};
    a->flags.allow_paths = kg_strv_new();
    a->flags.allow_hosts = kg_strv_new();
    a->flags.publish = kg_strv_new();
    int i;
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        if (strcmp(arg, "--") == 0) break;
        if (kg_cli_is_help(arg)) {
            *status = kg_cli_help(run_usage);
            return -1;
        }
        if ((v = opt_value("--allow-path", argc, argv, &i))) {
            kg_strv_push(a->flags.allow_paths, v);
        } else if ((v = opt_value("--allow-net", argc, argv, &i))) {
            kg_strv_push(a->flags.allow_hosts, v);
        } else if ((v = opt_value("--publish", argc, argv, &i))) {
            /* Checked with the policy (publish.c): a bad one is a refusal. */
            kg_strv_push(a->flags.publish, v);
        } else if ((v = opt_value("--backend", argc, argv, &i))) {
            a->backend = v;
        } else if ((v = opt_value("--events-fd", argc, argv, &i))) {
            a->events_fd = v;
        } else if (strcmp(arg, "--dry-run") == 0) {
            a->dry_run = true;
        } else if (strcmp(arg, "--quiet") == 0) {
            a->quiet = true;
        } else if (strcmp(arg, "--pty") == 0) {
            a->pty = 1;
        } else if (strcmp(arg, "--no-pty") == 0) {
            a->pty = 0;
        } else if (arg[0] != '-') {
            /* The spec's synopsis has "--" before the command: without it,
             * a command whose name looks like an option of ours would be
             * taken for one. */
            *status = kg_cli_usage_error(run_usage,
                                         "run: '--' must come before the command "
                                         "(kgate run [OPTION]... -- %s ...)",
                                         arg);
            return -1;
        } else {
            *status = kg_cli_usage_error(run_usage, "run: unknown or incomplete option '%s'", arg);
            return -1;
        }
    }
    if (i + 1 >= argc) {
        *status = kg_cli_usage_error(run_usage, "run: no command given (it goes after '--')");
        return -1;
    }
    a->cmd = argv + i + 1;
    a->cmd_argc = argc - i - 1;
    return 0;
}

static void free_args(run_args *a)
{
    kg_strv_free(a->flags.allow_paths);
    kg_strv_free(a->flags.allow_hosts);
    kg_strv_free(a->flags.publish);
}

/* Everything an audit line needs that is known so far, and what the
 * steps of run() hand on to one another (released by run_release,
 * whichever step stopped the run). */
typedef struct run_ctx {
    run_args args;
    char *home;
    char *cwd;
    char *log_path;
    char *runs_dir; /* ~/.kgate/runs: markers of launched runs */
    char run_id[KG_RUN_ID_LEN]; /* on every record of this run */
    kg_policy *policy;
    kg_events *events; /* the caller's refusal channel, or NULL */
    bool started; /* the program ran (for the events summary) */
    size_t masked; /* secrets the mask replaced */
    const char *path_env; /* PATH as the deny list and the lookup read it */
    kg_gitguard *gg; /* the host's git, from before the launch to after */
    kg_placeholders *ph; /* missing protected paths, made for the run */
    kg_boxhome *bh; /* the box's .gitconfig, excludes, empty file */
    kgate_home_file home_files[2]; /* the policy's view of bh */
    bool use_pty;
    kg_host host; /* set up by step_choose; zero before */
    kg_registry *reg;
    kg_choice chosen;
    kg_plugin *launcher; /* the stage of a composed run, else the box */
    kgate_plan *plan;
} run_ctx;

/* The code a harness switches on for a run that did not start. */
static const char *refusal_code(int status)
{
    switch (status) {
    case KG_EXIT_BLOCKED: return "exec_denied";
    case KG_EXIT_NOTFOUND: return "command_not_found";
    default: return "run_refused";
    }
}

static void audit_base(const run_ctx *c, kg_audit_event *ev, const char *kind)
{
    *ev = (kg_audit_event){
        .kind = kind,
        .argv = (const char *const *)c->args.cmd,
        .argc = (size_t)c->args.cmd_argc,
        .cwd = c->cwd ? c->cwd : "",
        .run = c->run_id,
    };
    /* The one-shot flags, resolved; as typed when the policy could not
     * be built (they may be why). */
    ev->allow_paths = c->policy ? c->policy->oneshot_paths : c->args.flags.allow_paths;
    ev->allow_hosts = c->policy ? c->policy->oneshot_hosts : c->args.flags.allow_hosts;
    ev->publish = c->policy ? c->policy->published : c->args.flags.publish;
}

/* A refusal: a best-effort audit line, one line on stderr, the status.
 * A refusal whose audit line cannot be written is still a refusal, and
 * still one line (the spec promises harnesses exactly one): the audit
 * failure is appended to it. */
static int refuse_event(const run_ctx *c, kg_audit_event *ev, int status, const char *reason)
{
    kg_error aerr = {0};
    bool logged = true;
    ev->reason = reason;
    /* Before the configuration is read, the sink is not known: the file. */
    if (c->log_path && !c->args.dry_run)
        logged =
            kg_audit_write_sink(c->log_path, c->policy ? c->policy->audit_sink : 0, ev, &aerr) == 0;
    /* kg_say escapes: the reason holds the command line, paths and YAML
     * values, and must stay one line that forges nothing. */
    if (logged)
        kg_say("%s", reason);
    else
        kg_say("%s (not in the audit log: %s)", reason, aerr.msg);
    kg_events_refused(c->events, refusal_code(status), status, reason);
    return status;
}

static int refuse(const run_ctx *c, const char *kind, int status, const char *reason)
{
    kg_audit_event ev;
    audit_base(c, &ev, kind);
    return refuse_event(c, &ev, status, reason);
}

/* The audit launch line, written when a committing backend says all is
 * in place (kgate_launch.commit). */
typedef struct launch_commit {
    kg_audit_log *log;
    const kg_audit_event *ev;
    const char *path;
    const char *runs_dir;
    kg_run_marker *marker; /* from the launch record to the end record */
    struct timespec start; /* when the launch record was written */
    bool written;
    bool failed; /* the log refused the line: err says why */
    kg_error err;
} launch_commit;

/* The run's marker first (auditrun.c: a killed kgate's run still gets its
 * end record), then the launch record. */
static int launch_record(launch_commit *lc)
{
    lc->marker = kg_run_marker_new(lc->runs_dir, lc->ev, &lc->err);
    if (!lc->marker) return -1;
    if (kg_audit_append(lc->log, lc->ev, &lc->err) < 0) {
        kg_run_marker_done(lc->marker);
        lc->marker = NULL;
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &lc->start);
    return 0;
}

/* The end record of a launched run: its exit status and how long it ran.
 * One that cannot be written leaves the marker, so that a later kgate
 * writes a recovered end instead. */
static void end_record(const run_ctx *c, launch_commit *lc, const char *backend, int status,
                       const struct timespec *stop, const char *reason)
{
    kg_audit_event ev;
    audit_base(c, &ev, "end");
    ev.reason = reason; /* why the run could not be ended cleanly, or NULL */
    ev.allow_paths = ev.allow_hosts = NULL; /* on the launch record */
    ev.publish = NULL;
    ev.backend = backend;
    ev.has_exit = true;
    ev.exit_status = status;
    ev.duration_ms = (long long)(stop->tv_sec - lc->start.tv_sec) * 1000 +
                     (stop->tv_nsec - lc->start.tv_nsec) / 1000000;
    kg_error aerr = {0};
    if (kg_audit_append(lc->log, &ev, &aerr) < 0) {
        kg_say("audit log %s: the end record: %s", c->log_path, aerr.msg);
        kg_run_marker_keep(lc->marker);
    } else {
        kg_run_marker_done(lc->marker);
    }
    lc->marker = NULL;
}

static int write_launch_line(void *ctx, kgate_err *kerr)
{
    launch_commit *lc = ctx;
    if (launch_record(lc) < 0) {
        lc->failed = true;
        return kgate_err_set(kerr, lc->err.code, "audit log %s: %s: nothing was started", lc->path,
                             lc->err.msg);
    }
    lc->written = true;
    return 0;
}

static bool want_pty(int forced)
{
    if (forced >= 0) return forced == 1;
    return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
}

/* Where the run's own records go, and its id: nothing else is known yet. */
static int step_setup(run_ctx *c)
{
    const char *home = getenv("HOME");
    if (!home || home[0] != '/') {
        kg_say("HOME is not set to an absolute path: nothing to hide, refusing to guess");
        return KG_EXIT_REFUSED;
    }
    c->home = strdup(home);
    c->cwd = getcwd(NULL, 0);
    if (asprintf(&c->log_path, "%s/.kgate/audit.log", home) < 0) c->log_path = NULL;
    if (asprintf(&c->runs_dir, "%s/.kgate/runs", home) < 0) c->runs_dir = NULL;
    if (kg_run_id_new(c->run_id) < 0) {
        kg_say("no random bytes for the run id: %s: nothing was started", strerror(errno));
        return KG_EXIT_REFUSED;
    }
    if (!c->home || !c->cwd || !c->log_path || !c->runs_dir)
        return refuse(c, "refuse", KG_EXIT_REFUSED, "cannot determine the working directory");
    return 0;
}

/* The channel the caller asked for, or nothing starts: a harness waiting
 * for objects that never come would misread the run. */
static int step_events(run_ctx *c)
{
    kg_error err = {0};
    if (!c->args.events_fd) return 0;
    c->events = kg_events_open(c->args.events_fd, &err);
    if (!c->events) return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
    kg_events_begin(c->events, c->run_id, (const char *const *)c->args.cmd,
                    (size_t)c->args.cmd_argc);
    return 0;
}

/* The directories kgate takes the tools it runs outside the box from, and
 * host git, must not be writable in the box: a later run would run what
 * this one put there (kgate-tool.h; each backend checks its own tools). */
static int step_tools_safe(run_ctx *c, const kgate_policy *pub)
{
    kgate_err err = {0};
    char git[PATH_MAX];
    if (kgate_tool_dirs_outside_policy(pub, &err) < 0 ||
        (kgate_tool_find("git", git, sizeof git, &(kgate_err){0}) == 0 &&
         kgate_tool_outside_policy(git, pub, &err) < 0))
        return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
    return 0;
}

static int step_policy(run_ctx *c)
{
    kg_error err = {0};
    char msg[1200] = "";
    c->policy = kg_policy_load(c->home, c->cwd, &c->args.flags, &err);
    if (!c->policy) return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
    const kgate_policy *pub = &c->policy->pub;
    if (kg_path_covers_home(pub->project, pub->home)) {
        snprintf(msg, sizeof msg,
                 "refusing to run in %s: it is the home directory %s or one of its "
                 "ancestors, so the whole home would be writable; cd into a project",
                 pub->project, pub->home);
        return refuse(c, "refuse", KG_EXIT_REFUSED, msg);
    }
    return step_tools_safe(c, pub);
}

/* The deny list first: a denied name is blocked (126, an audit line of
 * kind block) whether or not it is installed here, so the attempt is on
 * record and the answer does not depend on the machine. */
static int step_deny(run_ctx *c)
{
    kg_error err = {0};
    char msg[1200] = "", reason[512] = "";
    const kgate_policy *pub = &c->policy->pub;
    c->path_env = getenv("PATH");
    if (!c->path_env) c->path_env = "/usr/local/bin:/usr/bin:/bin";
    kg_autofree char *cache_dir = NULL;
    if (asprintf(&cache_dir, "%s/.kgate/cache", pub->home) < 0) cache_dir = NULL;
    kg_denyexec *deny = kg_denyexec_new(c->policy->deny_exec, c->path_env, cache_dir, &err);
    if (!deny) return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
    int blocked =
        kg_denyexec_check(deny, (const char *const *)c->args.cmd, (size_t)c->args.cmd_argc,
                          pub->project, reason, sizeof reason, &err);
    if (blocked > 0) {
        const char *entry = kg_denyexec_matched(deny);
        kg_events_blocked(
            c->events,
            &(kg_event_block){/* What was denied: the entry's program, which may be a word
             * inside a shell string rather than the command itself. */
                              .code = "exec_denied",
                              .resource_type = "exec",
                              .path = entry ? entry : c->args.cmd[0],
                              .operation = "exec",
                              .rule_key = "deny_exec",
                              .rule_entry = entry,
                              .description = reason});
    }
    kg_denyexec_free(deny);
    if (blocked < 0) {
        /* A deny list that cannot be evaluated is not a pass. */
        snprintf(msg, sizeof msg, "exec deny list: %s", err.msg);
        return refuse(c, "refuse", KG_EXIT_REFUSED, msg);
    }
    if (blocked > 0) {
        snprintf(msg, sizeof msg, "blocked: %s", reason);
        return refuse(c, "block", KG_EXIT_BLOCKED, msg);
    }
    return 0;
}

/* The command as a file: the policy records it for the plan. */
static int step_resolve(run_ctx *c)
{
    char msg[1200] = "";
    kg_autofree char *command_path =
        kg_exec_resolve(c->args.cmd[0], c->path_env, c->policy->pub.project);
    if (!command_path) {
        /* Still 127 (126 means the deny list), but say what is wrong with
         * a path that is there. */
        struct stat st;
        if (strchr(c->args.cmd[0], '/') && stat(c->args.cmd[0], &st) == 0)
            snprintf(msg, sizeof msg, "%s: not an executable file", c->args.cmd[0]);
        else
            snprintf(msg, sizeof msg, "%s: command not found", c->args.cmd[0]);
        return refuse(c, "refuse", KG_EXIT_NOTFOUND, msg);
    }
    kg_policy_set_command(c->policy, (const char *const *)c->args.cmd, (size_t)c->args.cmd_argc,
                          command_path);
    return 0;
}

/* Before a refusal of step_guard's own: the project is as it was when
 * the refusal is told. */
static void guard_release(run_ctx *c)
{
    kg_placeholders_release(c->ph);
    c->ph = NULL;
    kg_gitguard_free(c->gg);
    c->gg = NULL;
}

/* What the run must leave as it was (the host's git, the protected
 * paths), guarded from here to after the run; and the terminal. */
static int step_guard(run_ctx *c)
{
    kg_error err = {0};
    const kgate_policy *pub = &c->policy->pub;
    /* A repository that already sends git elsewhere is refused; else a
     * snapshot, to find what the run planted for the host's git. */
    c->gg = kg_gitguard_begin(pub->project, !c->args.dry_run, &err);
    if (!c->gg) return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
    /* A missing protected path gets an empty placeholder for the length of
     * the run, so that no backend leaves it creatable (protected.c); a dry
     * run makes none. */
    if (!c->args.dry_run &&
        !(c->ph = kg_placeholders_make(pub->project, c->policy->protect_paths, &err))) {
        guard_release(c);
        return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
    }
    /* Decided before the plan: a program with a terminal of its own needs a
     * different session layout from one on pipes. */
    c->use_pty = want_pty(c->args.pty);
    c->policy->pub.pty = c->use_pty;
    /* The pty copies its modes and size from fd 0 and makes fd 0 raw; a
     * pipe there has neither.  Refused here, before the audit line says
     * launch.  --dry-run only prints the plan a pty would get. */
    if (c->use_pty && !c->args.dry_run && !isatty(STDIN_FILENO)) {
        guard_release(c);
        return refuse(c, "refuse", KG_EXIT_REFUSED, "--pty needs a terminal on standard input");
    }
    return 0;
}

/* The files the box shows in its HOME (git's identity and the excludes
 * that keep the placeholders just made out of git add) and the file of
 * mode 0 it covers a deny_read file with (boxhome.c); a dry run only
 * names them.  A run whose box would
 * lack them refuses: without the cover a deny_read file is not hidden. */
static int step_boxhome(run_ctx *c)
{
    kg_error err = {0};
    kg_strv *names = kg_strv_new();
    kg_placeholders_top(c->ph, names);
    kg_boxhome_in in = {c->home, getenv("XDG_CONFIG_HOME"), c->policy->pub.project,
                        c->policy->deny_read, names};
    c->bh = c->args.dry_run ? kg_boxhome_names() : kg_boxhome_make(&in, &err);
    kg_strv_free(names);
    if (!c->bh) {
        guard_release(c);
        return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
    }
    size_t n = kg_boxhome_count(c->bh);
    for (size_t i = 0; i < n && i < 2; i++)
        c->home_files[i] =
            (kgate_home_file){kg_boxhome_name(c->bh, i), kg_boxhome_source(c->bh, i)};
    c->policy->pub.home_files = c->home_files;
    c->policy->pub.n_home_files = n < 2 ? n : 2;
    c->policy->pub.empty_file = kg_boxhome_empty(c->bh);
    return 0;
}

/* The plugins, and what enforces this policy: a box, and the network
 * stage it runs in when the box cannot filter hosts itself. */
static int step_choose(run_ctx *c)
{
    kg_error err = {0};
    char msg[1200] = "";
    const kgate_policy *pub = &c->policy->pub;
    kg_host_init(&c->host);
    c->host.details = false; /* a run shows no doctor details */
    /* The quick probes of the last run, where nothing they depend on has
     * changed: kgate's own directory, which no box can see or write. */
    kg_autofree char *probe_dir = NULL;
    if (asprintf(&probe_dir, "%s/.kgate/cache", pub->home) < 0) kg_oom();
    c->host.probes = kg_probecache_new(probe_dir);
    c->reg = kg_registry_load_for(c->policy->allow_paths, 0);
    if (!c->reg) kg_oom();
    /* A box that could write a directory kgate loads plugins from would
     * have its code run by the user's next kgate command, outside every
     * box: such a box is not started (docs/plugins.md). */
    if (kg_strv_len(c->reg->exposed) > 0) {
        snprintf(msg, sizeof msg,
                 "refusing to run: plugin %s: move it out or take it "
                 "off KGATE_PLUGIN_PATH",
                 kg_strv_get(c->reg->exposed, 0));
        return refuse(c, "refuse", KG_EXIT_REFUSED, msg);
    }
    /* A plugin that was asked for and not loaded is news, even for run.
     * Through kg_say: the loader only masks control bytes, and a file
     * name may hold bidirectional controls or bytes that are not UTF-8. */
    for (size_t i = 0; i < kg_strv_len(c->reg->refusals); i++)
        kg_say("plugin %s", kg_strv_get(c->reg->refusals, i));
    if (kg_select_choose(c->reg, &c->host, pub, c->args.backend, KGATE_PROBE_QUICK, &c->chosen,
                         &err) < 0) {
        /* A backend named with --backend may still show what it would
         * install, even where it cannot install it (the seatbelt profile
         * on Linux): a dry run starts nothing, so nothing is weakened. */
        if (!(c->args.dry_run && c->args.backend && c->chosen.box)) {
            kg_report_free(c->chosen.rep);
            c->chosen.rep = NULL;
            return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
        }
        kg_say("note: %s; showing its plan anyway (dry run)", err.msg);
    }
    /* A weaker box than this host could give, for want of a tool, is
     * said before anything starts (docs/landlock.md, "Selection"). */
    if (c->chosen.fallback[0]) kg_say("%s", c->chosen.fallback);
    kg_report_free(c->chosen.rep);
    c->chosen.rep = NULL;
    kg_events_set_backend(c->events, c->chosen.name);
    /* A composed run is started by its network stage, inside the network
     * it builds; the box's plan is what it starts (kgate-plugin.h). */
    c->launcher = c->chosen.stage ? c->chosen.stage : c->chosen.box;
    c->host.current = c->launcher->name;
    return 0;
}

static int step_plan(run_ctx *c)
{
    kg_error err = {0};
    const char *who = c->chosen.box->name;
    c->plan = kg_plan_new();
    if (kg_select_plan(&c->chosen, &c->host, &c->policy->pub, c->plan, &who, &err) < 0) {
        if (!err.msg[0]) kg_err_set(&err, 0, "could not build a plan");
        kg_err_wrap(&err, "%s", who);
        return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
    }
    return 0;
}

/* --dry-run: the whole plan first, then one write: running out of memory
 * half-way must not leave half a plan on stdout (kg_oom). */
static int print_plan(const run_ctx *c)
{
    kg_autofree char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) kg_oom();
    kg_plan_print(c->plan, m);
    if (fclose(m) != 0 || !text) kg_oom();
    return fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0 ? KG_EXIT_OK : KG_EXIT_FAIL;
}

/* What the steps of a launch hand on to one another. */
typedef struct launch_state {
    kg_strv *env; /* what the program gets */
    kg_strv *withheld; /* names kept from it, for the launch record */
    kg_audit_event ev; /* the launch record */
    kg_audit_event nev; /* the base of every net record (the netlog keeps it) */
    kg_audit_log *alog;
    bool deferred; /* the backend commits: it has the launch record written */
    launch_commit lc;
    kg_netlog *net;
    bool outlived; /* processes of the run could not all be ended */
    int exit_status;
    struct timespec stop;
    kg_error err;
} launch_state;

/* The program's environment, and the log open with the launch record
 * written (or, for a backend that commits, ready to be). */
static int launch_open_log(run_ctx *c, launch_state *l)
{
    l->env = kg_strv_new();
    l->withheld = kg_strv_new();
    kg_env_filter(environ, c->policy->pass_env, c->policy->deny_env, l->env, l->withheld);
    audit_base(c, &l->ev, "launch");
    l->ev.backend = c->chosen.name;
    l->ev.network = kg_network_name(c->policy->pub.network);
    l->ev.withheld_env = l->withheld;
    /* One descriptor for the launch line and for the net lines written
     * while the program runs: a log that cannot take the first is refused
     * before anything starts, and the others need no second open. */
    l->alog = kg_audit_open_sink(c->log_path, c->policy->audit_sink, &l->err);
    /* A backend that commits (ABI 2.1) has the line written from inside
     * its launch, once all that can fail is in place: a launch refused on
     * the way then leaves a refusal line, not a launch line. */
    l->deferred =
        KGATE_HAS_FIELD(&c->launcher->be, kgate_backend, commits) && c->launcher->be.commits;
    l->lc =
        (launch_commit){.log = l->alog, .ev = &l->ev, .path = c->log_path, .runs_dir = c->runs_dir};
    /* Runs whose kgate was killed get their end records first. */
    if (l->alog && kg_run_recover(c->runs_dir, l->alog, &l->err) < 0) {
        kg_audit_close(l->alog);
        l->alog = NULL;
    }
    if (l->alog && !l->deferred && launch_record(&l->lc) < 0) {
        l->err = l->lc.err;
        kg_audit_close(l->alog);
        l->alog = NULL;
    }
    if (l->alog) return 0;
    if (c->policy->audit_sink) /* the message names the sink */
        kg_say("%s: nothing was started", l->err.msg);
    else
        kg_say("audit log %s: %s: nothing was started", c->log_path, l->err.msg);
    return KG_EXIT_REFUSED;
}

/* A launch that failed: whatever the probes said, the next run asks again
 * (a cached answer must never keep a failing choice); and the run's one
 * line, which is its audit record when nothing was recorded yet. */
static void launch_failed(run_ctx *c, launch_state *l)
{
    const char *name = c->launcher->name;
    kg_probecache_forget(c->host.probes, c->chosen.box->name);
    if (c->chosen.stage) kg_probecache_forget(c->host.probes, c->chosen.stage->name);
    /* A run whose processes could not all be ended did run. */
    c->started = l->outlived;
    if (l->outlived) {
        /* Its line; the checks below are made all the same. */
        kg_say("%s: %s", name, l->err.msg);
    } else if (l->lc.failed) {
        /* The same line as a log that refuses before the launch. */
        kg_say("audit log %s: %s: nothing was started", c->log_path, l->lc.err.msg);
    } else if (l->deferred && !l->lc.written) {
        /* Nothing ran: the refusal is the run's one audit line. */
        kg_autofree char *why = NULL;
        if (asprintf(&why, "%s: %s", name, l->err.msg) < 0) kg_oom();
        kg_audit_event rev = {0};
        audit_base(c, &rev, "refuse");
        rev.backend = c->chosen.name;
        rev.network = l->ev.network;
        refuse_event(c, &rev, KG_EXIT_REFUSED, why);
    } else {
        kg_say("%s: %s", name, l->err.msg);
    }
}

/* The program, supervised to its end; what the backend refuses while it
 * runs becomes a record of kind net each, as it happens. */
static void launch_supervise(run_ctx *c, launch_state *l)
{
    audit_base(c, &l->nev, "net");
    l->nev.backend = c->chosen.name;
    l->nev.allow_paths = l->nev.allow_hosts = NULL; /* on the launch line */
    l->nev.publish = NULL;
    l->net = kg_netlog_new(l->alog, &l->nev);
    kg_netlog_set_events(l->net, c->events);
    kg_autofree char **envp = kg_strv_nullterm(l->env);
    kg_supervise_opts opts = {
        .mask_prefixes = c->policy->mask_prefixes,
        .use_pty = c->use_pty,
        .max_processes = c->policy->max_processes,
        .net = l->net,
        .commit = l->deferred ? write_launch_line : NULL,
        .commit_ctx = &l->lc,
        .masked = &c->masked,
        .outlived = &l->outlived,
    };
    l->exit_status = KG_EXIT_REFUSED;
    if (!envp) kg_oom();
    if (kg_supervise(&c->launcher->be, &c->host, &c->policy->pub, &c->launcher->probe, c->plan,
                     (const char *const *)envp, &opts, &l->exit_status, &l->err) == 0) {
        c->started = true;
    } else {
        l->exit_status = KG_EXIT_REFUSED;
        launch_failed(c, l);
    }
    clock_gettime(CLOCK_MONOTONIC, &l->stop);
}

/* What the run left for the host's git: one line, one event and one audit
 * record each.  A finding leaves the exit status alone. */
static void launch_check_git(run_ctx *c, launch_state *l)
{
    kg_autostrv kg_strv *found = kg_strv_new();
    /* Also when a process of the run may still be writing (outlived):
     * the check may be wrong a moment later, but what it finds now is
     * there now, and a skipped check let the host's git run a hook the
     * survivor planted.  The run still fails (125, and its line says so). */
    kg_gitguard_end(c->gg, found);
    for (size_t i = 0; i < kg_strv_len(found); i++) {
        const char *f = kg_strv_get(found, i);
        /* Names files the program chose, escaped by the check already. */
        kg_msg_line_escaped(stderr, "kgate: git: ", f);
        kg_events_blocked(c->events, &(kg_event_block){.code = "git_neutralised",
                                                       .resource_type = "file",
                                                       .operation = "write",
                                                       .rule_key = "git_check",
                                                       .description = f});
        kg_audit_event gev = {0};
        audit_base(c, &gev, "git");
        gev.backend = c->chosen.name;
        gev.reason = f;
        kg_error aerr = {0};
        if (kg_audit_append(l->alog, &gev, &aerr) < 0)
            kg_say("audit log %s: %s", c->log_path, aerr.msg);
    }
}

/* After the program, also after a failed launch (bwrap may have run part
 * of the way): the network summary, the placeholders, git's check, and
 * last of the run's records the end record every launch record gets. */
static void launch_finish(run_ctx *c, launch_state *l)
{
    /* One line, after the program's own output: why a lookup failed or a
     * connection was refused, which the program itself cannot tell. */
    UT_string *sum;
    utstring_new(sum);
    if (kg_netlog_summary(l->net, sum) && !c->args.quiet) kg_say("%s", utstring_body(sum));
    utstring_free(sum);
    kg_netlog_free(l->net);
    l->net = NULL;
    kg_placeholders_release(c->ph); /* before git's check: they are not the run's */
    c->ph = NULL;
    launch_check_git(c, l);
    if (l->lc.marker)
        end_record(c, &l->lc, c->chosen.name, l->exit_status, &l->stop,
                   l->outlived ? l->err.msg : NULL);
}

/* The launch, from the program's environment to its end record. */
static int run_launch(run_ctx *c)
{
    launch_state l = {.exit_status = KG_EXIT_REFUSED};
    int status = launch_open_log(c, &l);
    if (status == 0) {
        launch_supervise(c, &l);
        launch_finish(c, &l);
        status = l.exit_status;
    }
    kg_audit_close(l.alog);
    kg_strv_free(l.env);
    kg_strv_free(l.withheld);
    return status;
}

static void run_release(run_ctx *c)
{
    kg_plan_free(c->plan);
    kg_registry_free(c->reg);
    kg_probecache_free(c->host.probes);
    kg_placeholders_release(c->ph);
    kg_gitguard_free(c->gg);
    kg_boxhome_free(c->bh);
    c->bh = NULL;
    c->plan = NULL;
    c->reg = NULL;
    c->host.probes = NULL;
    c->ph = NULL;
    c->gg = NULL;
}

/* kgate run, as the steps of the contract at the top of this file: each
 * returns 0 to go on, or the status the run ends with (a refusal has
 * said why by then).  The last prints the plan or launches. */
static int run(run_ctx *c)
{
    static int (*const steps[])(run_ctx *) = {
        step_setup, step_events,  step_policy, step_deny, step_resolve,
        step_guard, step_boxhome, step_choose, step_plan,
    };
    int status = KG_EXIT_OK;
    for (size_t i = 0; status == KG_EXIT_OK && i < sizeof steps / sizeof steps[0]; i++)
        status = steps[i](c);
    if (status == KG_EXIT_OK) status = c->args.dry_run ? print_plan(c) : run_launch(c);
    run_release(c);
    return status;
}

/* The descriptors kgate was started with.  Any the caller leaked to us
 * (a harness's directory descriptor, a socket, a log file) would reach the
 * program through bwrap, which passes on what it inherits: a descriptor of
 * a directory under $HOME opens the hidden home, read and write.  So every
 * one above stderr becomes close-on-exec before anything else; what kgate
 * opens later is close-on-exec by its own choice.  And 0, 1 and 2 are made
 * to exist (/dev/null): closed, they would be taken by kgate's own pipes,
 * and the program would get one of those as its stdin. */
static int prepare_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
        int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (n < 0) return -1;
        if (n != fd) { /* cannot happen: lower ones are open */
            close(n);
            return -1;
        }
    }
    if (kg_os_cloexec_range(3) == 0) return 0;
    DIR *d = opendir(kg_os_fd_dir());
    if (!d) d = opendir("/dev/fd");
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || fd <= 2 || fd == dirfd(d)) continue;
        int flags = fcntl((int)fd, F_GETFD);
        if (flags >= 0 && fcntl((int)fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    return 0;
}

int kg_cmd_run(int argc, char **argv)
{
    if (prepare_fds() < 0) {
        kg_say("cannot close the descriptors inherited from the caller: %s: nothing was "
               "started",
               strerror(errno));
        return KG_EXIT_REFUSED;
    }
    run_ctx c = {0};
    int status;
    if (parse_args(argc, argv, &c.args, &status) < 0) {
        free_args(&c.args);
        return status;
    }
    /* For harnesses that cannot pass options; the option wins.  Taken out
     * of the environment, so the program is not told of a descriptor it
     * does not have. */
    char *events_env = NULL;
    const char *ev_fd = getenv("KGATE_EVENTS_FD");
    if (ev_fd && !(events_env = strdup(ev_fd))) kg_oom();
    unsetenv("KGATE_EVENTS_FD");
    if (!c.args.events_fd && events_env) c.args.events_fd = events_env;
    status = run(&c);
    /* Every run with a channel ends with one summary, refused or not. */
    kg_events_summary(c.events, c.started, status, c.masked);
    kg_events_close(c.events);
    free(events_env);
    kg_policy_free(c.policy);
    free(c.home);
    free(c.cwd);
    free(c.log_path);
    free(c.runs_dir);
    free_args(&c.args);
    return status;
}
