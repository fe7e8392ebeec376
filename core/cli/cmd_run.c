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
            *status = kg_cli_usage_error(run_usage, "run: '--' must come before the command "
                                                    "(kgate run [OPTION]... -- %s ...)", arg);
            return -1;
        } else {
            *status = kg_cli_usage_error(run_usage, "run: unknown or incomplete option '%s'",
                                         arg);
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

/* Everything an audit line needs that is known so far. */
typedef struct run_ctx {
    run_args args;
    char *home;
    char *cwd;
    char *log_path;
    char *runs_dir;              /* ~/.kgate/runs: markers of launched runs */
    char run_id[KG_RUN_ID_LEN];  /* on every record of this run */
    kg_policy *policy;
    kg_events *events;  /* the caller's refusal channel, or NULL */
    bool started;       /* the program ran (for the events summary) */
    size_t masked;      /* secrets the mask replaced */
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
static int refuse_event(const run_ctx *c, kg_audit_event *ev, int status,
                        const char *reason)
{
    kg_error aerr = {0};
    bool logged = true;
    ev->reason = reason;
    /* Before the configuration is read, the sink is not known: the file. */
    if (c->log_path && !c->args.dry_run)
        logged = kg_audit_write_sink(c->log_path, c->policy ? c->policy->audit_sink : 0, ev,
                                     &aerr) == 0;
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
    bool failed;   /* the log refused the line: err says why */
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
static void end_record(const run_ctx *c, launch_commit *lc, const char *backend,
                       int status, const struct timespec *stop, const char *reason)
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
        return kgate_err_set(kerr, lc->err.code, "audit log %s: %s: nothing was started",
                             lc->path, lc->err.msg);
    }
    lc->written = true;
    return 0;
}

static bool want_pty(int forced)
{
    if (forced >= 0) return forced == 1;
    return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
}

static int run(run_ctx *c)
{
    kg_error err = {0};
    char msg[1200];

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
    /* The channel the caller asked for, or nothing starts: a harness
     * waiting for objects that never come would misread the run. */
    if (c->args.events_fd) {
        c->events = kg_events_open(c->args.events_fd, &err);
        if (!c->events) return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
        kg_events_begin(c->events, c->run_id, (const char *const *)c->args.cmd,
                        (size_t)c->args.cmd_argc);
    }

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

    const char *path_env = getenv("PATH");
    if (!path_env) path_env = "/usr/local/bin:/usr/bin:/bin";
    /* The deny list first: a denied name is blocked (126, an audit line of
     * kind block) whether or not it is installed here, so the attempt is on
     * record and the answer does not depend on the machine. */
    char *cache_dir = NULL;
    if (asprintf(&cache_dir, "%s/.kgate/cache", pub->home) < 0) cache_dir = NULL;
    kg_denyexec *deny = kg_denyexec_new(c->policy->deny_exec, path_env, cache_dir, &err);
    free(cache_dir);
    if (!deny) return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
    char reason[512] = "";
    int blocked = kg_denyexec_check(deny, (const char *const *)c->args.cmd,
                                    (size_t)c->args.cmd_argc, pub->project, reason,
                                    sizeof reason, &err);
    if (blocked > 0) {
        const char *entry = kg_denyexec_matched(deny);
        kg_events_blocked(c->events, &(kg_event_block){
            /* What was denied: the entry's program, which may be a word
             * inside a shell string rather than the command itself. */
            .code = "exec_denied", .resource_type = "exec", .path = entry ? entry : c->args.cmd[0],
            .operation = "exec", .rule_key = "deny_exec", .rule_entry = entry,
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

    char *command_path = kg_exec_resolve(c->args.cmd[0], path_env, pub->project);
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
    kg_policy_set_command(c->policy, (const char *const *)c->args.cmd,
                          (size_t)c->args.cmd_argc, command_path);
    free(command_path);

    /* A repository that already sends git elsewhere is refused; else a
     * snapshot, to find what the run planted for the host's git. */
    kg_gitguard *gg = kg_gitguard_begin(pub->project, !c->args.dry_run, &err);
    if (!gg) return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
    /* A missing protected path gets an empty placeholder for the length of
     * the run, so that no backend leaves it creatable (protected.c); a dry
     * run makes none. */
    kg_placeholders *ph = NULL;
    if (!c->args.dry_run &&
        !(ph = kg_placeholders_make(pub->project, c->policy->protect_paths, &err))) {
        kg_gitguard_free(gg);
        return refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
    }

    /* Decided before the plan: a program with a terminal of its own needs a
     * different session layout from one on pipes. */
    bool use_pty = want_pty(c->args.pty);
    c->policy->pub.pty = use_pty;
    /* The pty copies its modes and size from fd 0 and makes fd 0 raw; a
     * pipe there has neither.  Refused here, before the audit line says
     * launch.  --dry-run only prints the plan a pty would get. */
    if (use_pty && !c->args.dry_run && !isatty(STDIN_FILENO)) {
        kg_placeholders_release(ph);
        kg_gitguard_free(gg);
        return refuse(c, "refuse", KG_EXIT_REFUSED,
                      "--pty needs a terminal on standard input");
    }

    kg_host host;
    kg_host_init(&host);
    /* The quick probes of the last run, where nothing they depend on has
     * changed: kgate's own directory, which no box can see or write. */
    char *probe_dir = NULL;
    if (asprintf(&probe_dir, "%s/.kgate/cache", pub->home) < 0) kg_oom();
    host.probes = kg_probecache_new(probe_dir, host.debug);
    free(probe_dir);
    kg_registry *reg = kg_registry_load_for(c->policy->allow_paths, 0);
    if (!reg) kg_oom();
    kg_choice chosen;
    int status;
    if (!reg) return refuse(c, "refuse", KG_EXIT_REFUSED, "out of memory");
    /* A box that could write a directory kgate loads plugins from would
     * have its code run by the user's next kgate command, outside every
     * box: such a box is not started (docs/plugins.md). */
    if (kg_strv_len(reg->exposed) > 0) {
        snprintf(msg, sizeof msg, "refusing to run: plugin %s: move it out or take it "
                 "off KGATE_PLUGIN_PATH", kg_strv_get(reg->exposed, 0));
        status = refuse(c, "refuse", KG_EXIT_REFUSED, msg);
        goto out_registry;
    }
    /* A plugin that was asked for and not loaded is news, even for run. */
    for (size_t i = 0; i < kg_strv_len(reg->refusals); i++)
        fprintf(stderr, "kgate: plugin %s\n", kg_strv_get(reg->refusals, i));
    if (kg_select_choose(reg, &host, pub, c->args.backend, KGATE_PROBE_QUICK, &chosen,
                         &err) < 0) {
        /* A backend named with --backend may still show what it would
         * install, even where it cannot install it (the seatbelt profile
         * on Linux): a dry run starts nothing, so nothing is weakened. */
        if (!(c->args.dry_run && c->args.backend && chosen.box)) {
            kg_report_free(chosen.rep);
            status = refuse(c, "refuse", KG_EXIT_REFUSED, err.msg);
            goto out_registry;
        }
        kg_say("note: %s; showing its plan anyway (dry run)", err.msg);
    }
    kg_report_free(chosen.rep);
    kg_events_set_backend(c->events, chosen.name);
    /* A composed run is started by its network stage, inside the network
     * it builds; the box's plan is what it starts (kgate-plugin.h). */
    kg_plugin *launcher = chosen.stage ? chosen.stage : chosen.box;
    host.current = launcher->name;

    kgate_plan *plan = kg_plan_new();
    kgate_err perr = {0};
    const char *who = chosen.box->name;
    if (kg_select_plan(&chosen, &host, pub, plan, &who, &perr) < 0) {
        snprintf(msg, sizeof msg, "%s: %s", who,
                 perr.msg[0] ? perr.msg : "could not build a plan");
        status = refuse(c, "refuse", KG_EXIT_REFUSED, msg);
        goto out_plan;
    }

    if (c->args.dry_run) {
        /* The whole plan first, then one write: running out of memory
         * half-way must not leave half a plan on stdout (kg_oom). */
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        if (!m) kg_oom();
        kg_plan_print(plan, m);
        if (fclose(m) != 0 || !text) kg_oom();
        status = fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0 ? KG_EXIT_OK
                                                                           : KG_EXIT_FAIL;
        free(text);
        goto out_plan;
    }

    kg_strv *env = kg_strv_new(), *withheld = kg_strv_new();
    kg_env_filter(environ, c->policy->pass_env, c->policy->deny_env, env, withheld);

    kg_audit_event ev;
    audit_base(c, &ev, "launch");
    ev.backend = chosen.name;
    ev.network = kg_network_name(pub->network);
    ev.withheld_env = withheld;
    /* One descriptor for the launch line and for the net lines written
     * while the program runs: a log that cannot take the first is refused
     * before anything starts, and the others need no second open. */
    kg_audit_log *alog = kg_audit_open_sink(c->log_path, c->policy->audit_sink, &err);
    /* A backend that commits (ABI 2.1) has the line written from inside
     * its launch, once all that can fail is in place: a launch refused on
     * the way then leaves a refusal line, not a launch line. */
    bool deferred = KGATE_HAS_FIELD(&launcher->be, kgate_backend, commits) &&
                    launcher->be.commits;
    launch_commit lc = {.log = alog, .ev = &ev, .path = c->log_path,
                        .runs_dir = c->runs_dir};
    /* Runs whose kgate was killed get their end records first. */
    if (alog && kg_run_recover(c->runs_dir, alog, &err) < 0) {
        kg_audit_close(alog);
        alog = NULL;
    }
    if (alog && !deferred && launch_record(&lc) < 0) {
        err = lc.err;
        kg_audit_close(alog);
        alog = NULL;
    }
    if (!alog) {
        if (c->policy->audit_sink) /* the message names the sink */
            kg_say("%s: nothing was started", err.msg);
        else
            kg_say("audit log %s: %s: nothing was started", c->log_path, err.msg);
        status = KG_EXIT_REFUSED;
        goto out_env;
    }

    /* What the backend refuses while the program runs: a line of kind net
     * each, as it happens. */
    kg_audit_event nev;
    audit_base(c, &nev, "net");
    nev.backend = chosen.name;
    nev.allow_paths = nev.allow_hosts = NULL; /* on the launch line */
    nev.publish = NULL;
    kg_netlog *net = kg_netlog_new(alog, &nev);
    kg_netlog_set_events(net, c->events);

    char **envp = kg_strv_nullterm(env);
    bool outlived = false;
    kg_supervise_opts opts = {
        .mask_prefixes = c->policy->mask_prefixes,
        .use_pty = use_pty,
        .max_processes = c->policy->max_processes,
        .net = net,
        .commit = deferred ? write_launch_line : NULL,
        .commit_ctx = &lc,
        .masked = &c->masked,
        .outlived = &outlived,
    };
    int exit_status = KG_EXIT_REFUSED;
    if (!envp) kg_oom();
    if (kg_supervise(&launcher->be, &host, pub, &launcher->probe, plan,
                     (const char *const *)envp, &opts, &exit_status, &err) == 0) {
        c->started = true;
    } else {
        exit_status = KG_EXIT_REFUSED;
        /* The launch failed: whatever the probes said, the next run asks
         * again (a cached answer must never keep a failing choice). */
        kg_probecache_forget(host.probes, chosen.box->name);
        if (chosen.stage) kg_probecache_forget(host.probes, chosen.stage->name);
        /* A run whose processes could not all be ended did run. */
        c->started = outlived;
        if (outlived) {
            /* Its one line; the checks below are not run. */
            kg_say("%s: %s", launcher->name, err.msg);
        } else if (lc.failed) {
            /* The same line as a log that refuses before the launch. */
            kg_say("audit log %s: %s: nothing was started", c->log_path, lc.err.msg);
        } else if (deferred && !lc.written) {
            /* Nothing ran: the refusal is the run's one audit line. */
            char *why = NULL;
            if (asprintf(&why, "%s: %s", launcher->name, err.msg) < 0) kg_oom();
            kg_audit_event rev;
            audit_base(c, &rev, "refuse");
            rev.backend = chosen.name;
            rev.network = ev.network;
            refuse_event(c, &rev, KG_EXIT_REFUSED, why);
            free(why);
        } else {
            kg_say("%s: %s", launcher->name, err.msg);
        }
    }
    struct timespec stop;
    clock_gettime(CLOCK_MONOTONIC, &stop);
    free(envp);
    status = exit_status;
    /* One line, after the program's own output: why a lookup failed or a
     * connection was refused, which the program itself cannot tell. */
    UT_string *sum;
    utstring_new(sum);
    if (kg_netlog_summary(net, sum) && !c->args.quiet) kg_say("%s", utstring_body(sum));
    utstring_free(sum);
    kg_netlog_free(net);
    /* Also after a failed launch: bwrap may have run part of the way.
     * A finding leaves the exit status alone; its line says what moved,
     * and the audit log keeps it. */
    kg_placeholders_release(ph); /* before git's check: they are not the run's */
    ph = NULL;
    kg_strv *found = kg_strv_new();
    /* A process of the run may still be writing: a check now could say
     * clean and be wrong a moment later, so none is made (fail closed). */
    if (!outlived) kg_gitguard_end(gg, found);
    for (size_t i = 0; i < kg_strv_len(found); i++) {
        const char *f = kg_strv_get(found, i);
        kg_say("git: %s", f); /* names files the program chose: escaped */
        kg_events_blocked(c->events, &(kg_event_block){
            .code = "git_neutralised", .resource_type = "file", .operation = "write",
            .rule_key = "git_check", .description = f});
        kg_audit_event gev;
        audit_base(c, &gev, "git");
        gev.backend = chosen.name;
        gev.reason = f;
        kg_error aerr = {0};
        if (kg_audit_append(alog, &gev, &aerr) < 0)
            kg_say("audit log %s: %s", c->log_path, aerr.msg);
    }
    kg_strv_free(found);
    /* Last of the run's records: every launch record gets its end. */
    if (lc.marker) end_record(c, &lc, chosen.name, status, &stop, outlived ? err.msg : NULL);
    kg_audit_close(alog);
out_env:
    kg_strv_free(env);
    kg_strv_free(withheld);
out_plan:
    kg_plan_free(plan);
out_registry:
    kg_registry_free(reg);
    kg_probecache_free(host.probes);
    kg_placeholders_release(ph);
    kg_gitguard_free(gg);
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
               "started", strerror(errno));
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
