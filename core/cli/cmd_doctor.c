/* cmd_doctor.c: `kgate doctor` (can the chosen backend enforce the
 * effective policy here?) and `kgate plugins` (what was found, what each
 * backend's probe says, and which one `run` would pick).
 *
 * Neither command starts anything.  Doctor is deliberately built from the
 * same selection `run` uses, so it cannot promise what run would refuse. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "oom.h" /* uthash, utarray, utstring */

#include "commands.h"
#include "envfilter.h"
#include "json.h"
#include "loader.h"
#include "msg.h"
#include "paths.h"
#include "policy.h"
#include "proclimit.h"
#include "select.h"
#include "kgate/kgate-tool.h"

/* ------------------------------------------------------------------------ */
/* The effective policy of the working directory                             */
/* ------------------------------------------------------------------------ */

/* What doctor and plugins need from the environment, and every reason the
 * core itself (not a backend) has to say BLOCKED. */
typedef struct env_policy {
    kg_policy *pol;
    kg_strv *blocked; /* the core's own BLOCKED findings */
    kg_strv *blocked_ids; /* and their ids, in the same order */
    char *why_none; /* when pol is NULL: why there is no policy */
} env_policy;

static void env_policy_load(env_policy *e)
{
    *e = (env_policy){.blocked = kg_strv_new(), .blocked_ids = kg_strv_new()};
    const char *home = getenv("HOME");
    char *cwd = getcwd(NULL, 0);
    kg_error err = {0};
    if (!home || !*home) {
        kg_err_set(&err, 0, "HOME is not set: kgate cannot tell what to hide");
    } else if (!cwd) {
        kg_err_set(&err, errno, "cannot read the working directory: %s", strerror(errno));
    } else {
        e->pol = kg_policy_load(home, cwd, NULL, &err);
    }
    if (!e->pol) {
        /* A policy that cannot be read is not a policy: nothing can be
         * enforced, so doctor says BLOCKED rather than failing apart. */
        e->why_none = strdup(err.msg);
        char msg[1200];
        snprintf(msg, sizeof msg, "the policy cannot be built: %s", err.msg);
        kg_strv_push(e->blocked, msg);
        kg_strv_push(e->blocked_ids, "core.policy-invalid");
    }
    char *rhome = home && *home ? realpath(home, NULL) : NULL;
    char *rcwd = cwd ? realpath(cwd, NULL) : NULL;
    const char *h = e->pol && e->pol->pub.home ? e->pol->pub.home : rhome;
    const char *d = e->pol && e->pol->pub.project ? e->pol->pub.project : rcwd;
    if (h && d && kg_path_covers_home(d, h)) {
        char msg[1200];
        snprintf(msg, sizeof msg,
                 "the working directory %s covers $HOME (%s): kgate run refuses to start here", d,
                 h);
        kg_strv_push(e->blocked, msg);
        kg_strv_push(e->blocked_ids, "core.project-covers-home");
    }
    free(rhome);
    free(rcwd);
    free(cwd);
}

static void env_policy_free(env_policy *e)
{
    kg_policy_free(e->pol);
    kg_strv_free(e->blocked);
    kg_strv_free(e->blocked_ids);
    free(e->why_none);
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

static const char doctor_usage[] = "usage: kgate doctor [--json] [--backend NAME]\n";
static const char plugins_usage[] = "usage: kgate plugins [--json]\n";

/* Returns 0 to go on, or -1 with the status to exit with (--help
 * answered, or a usage error printed). */
static int parse(int argc, char **argv, int *json, const char **backend, const char *usage,
                 int *status)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            *json = 1;
        } else if (backend && strcmp(a, "--backend") == 0) {
            if (i + 1 >= argc) {
                *status = kg_cli_usage_error(usage, "%s: --backend needs a NAME", argv[0]);
                return -1;
            }
            *backend = argv[++i];
        } else if (backend && strncmp(a, "--backend=", 10) == 0) {
            *backend = a + 10;
        } else if (kg_cli_is_help(a)) {
            *status = kg_cli_help(usage);
            return -1;
        } else {
            *status = kg_cli_usage_error(usage, "%s: unknown argument '%s'", argv[0], a);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* doctor                                                                    */
/* ------------------------------------------------------------------------ */

static void json_report(UT_string *o, const kgate_report *rep)
{
    kg_strv *reasons = kg_strv_new();
    kg_report_reasons(rep, reasons);
    utstring_printf(o, ",\"reasons\":");
    kg_json_strv(o, reasons);
    kg_strv_free(reasons);
    utstring_printf(o, ",\"findings\":[");
    for (size_t i = 0; i < rep->n_items; i++) {
        utstring_printf(o, "%s{\"id\":", i ? "," : "");
        kg_json_str(o, rep->items[i].id);
        utstring_printf(o, ",\"verdict\":");
        kg_json_str(o, kg_verdict_name(rep->items[i].verdict));
        utstring_printf(o, ",\"text\":");
        kg_json_str(o, rep->items[i].text);
        utstring_printf(o, "}");
    }
    utstring_printf(o, "],\"details\":{");
    for (size_t i = 0; i < kg_strv_len(rep->detail_keys); i++) {
        if (i) utstring_printf(o, ",");
        kg_json_str(o, kg_strv_get(rep->detail_keys, i));
        utstring_printf(o, ":");
        kg_json_str(o, kg_strv_get(rep->detail_values, i));
    }
    utstring_printf(o, "}");
}

static void json_refused(UT_string *o, const kg_registry *r)
{
    utstring_printf(o, "[");
    for (size_t i = 0; r && i < kg_strv_len(r->refused_files); i++) {
        utstring_printf(o, "%s{\"file\":", i ? "," : "");
        kg_json_str(o, kg_strv_get(r->refused_files, i));
        utstring_printf(o, ",\"reason\":");
        kg_json_str(o, kg_strv_get(r->refused_reasons, i));
        utstring_printf(o, "}");
    }
    utstring_printf(o, "]");
}

static void print_doctor_text(const kg_plugin *cand, const kg_plugin *stage, const char *name,
                              const env_policy *e, const kgate_report *rep)
{
    /* Every line escaped (msg.h): paths and findings quote what the user
     * and the project chose. */
    if (cand) {
        kg_msg_line(stdout, NULL, "backend: %s (%s)", cand->name, cand->path);
        kg_msg_line(stdout, NULL, "version: %s",
                    cand->probe.version[0] ? cand->probe.version : "unknown");
        if (stage) {
            kg_msg_line(stdout, NULL, "network stage: %s (%s)", stage->name, stage->path);
            kg_msg_line(stdout, NULL, "network stage version: %s",
                        stage->probe.version[0] ? stage->probe.version : "unknown");
        }
    } else {
        kg_msg_line(stdout, NULL, "backend: none");
    }
    if (e->pol) {
        kg_msg_line(stdout, NULL, "config: %s%s", e->pol->user_file ? e->pol->user_file : "?",
                    e->pol->user_file_missing ? " (missing: defaults apply)" : "");
        if (e->pol->project_file)
            kg_msg_line(stdout, NULL, "project file: %s", e->pol->project_file);
    }
    for (size_t i = 0; i < kg_strv_len(rep->detail_keys); i++)
        kg_msg_line(stdout, NULL, "%s: %s", kg_strv_get(rep->detail_keys, i),
                    kg_strv_get(rep->detail_values, i));
    for (size_t i = 0; i < rep->n_items; i++)
        kg_msg_line(stdout, NULL, "  %-8s  %s", kg_verdict_name(rep->items[i].verdict),
                    rep->items[i].text);

    /* The verdict line is the last line, and short (a backend name is at
     * most 64 characters, so it stays under about 110; a composed run names
     * its box and its stage, "bubblewrap+slirp-filter"): harnesses read its
     * first word, people read the findings above it. */
    size_t count[3] = {0, 0, 0};
    for (size_t i = 0; i < rep->n_items; i++) {
        unsigned v = (unsigned)rep->items[i].verdict;
        if (v <= KGATE_BLOCKED) count[v]++;
    }
    kg_msg_line(stdout, NULL, "%s %s: %zu blocked, %zu degraded, %zu ready",
                kg_verdict_name(rep->verdict),
                !cand   ? "none"
                : stage ? name
                        : cand->name,
                count[KGATE_BLOCKED], count[KGATE_DEGRADED], count[KGATE_READY]);
}

/* The environment filter is the core's, not a backend's: which names of
 * this environment `kgate run` would withhold (names only, as in the audit
 * line). */
/* POSIX: the application declares it (glibc's unistd.h does too, macOS's
 * does not). */
extern char **environ;

static void env_detail(kg_host *host, const kg_policy *pol, kgate_report *rep)
{
    kg_strv *out = kg_strv_new(), *withheld = kg_strv_new();
    kg_env_filter(environ, pol->pass_env, pol->deny_env, out, withheld);
    size_t n = kg_strv_len(withheld);
    UT_string *names;
    utstring_new(names);
    for (size_t i = 0; i < n; i++)
        utstring_printf(names, "%s%s", i ? ", " : "", kg_strv_get(withheld, i));
    /* A detail, not a finding: it never changes the verdict, and the
     * verdict line stays the backend's. */
    char *line = NULL;
    if (asprintf(&line, "%zu secret-looking variable%s will be withheld%s%s", n, n == 1 ? "" : "s",
                 n ? ": " : "", utstring_body(names)) >= 0) {
        host->pub.report_detail(rep, "environment", line);
        free(line);
    }
    utstring_free(names);
    kg_strv_free(out);
    kg_strv_free(withheld);
}

/* Which file each program kgate runs outside the box is, or why there is
 * none: looked up as the backends and the git check look them up
 * (kgate-tool.h), never on PATH.  Details: they never change the verdict
 * (a backend that needs a missing tool says so in its findings). */
static void tools_detail(kg_host *host, kgate_report *rep)
{
#ifdef __APPLE__
    static const char *const names[] = {"sandbox-exec", "git"};
#else
    static const char *const names[] = {"bwrap", "slirp4netns", "dnsmasq", "nft", "git"};
#endif
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char key[64], path[PATH_MAX];
        kgate_err why = {0};
        snprintf(key, sizeof key, "tool %s", names[i]);
        int found = kgate_tool_find(names[i], path, sizeof path, &why) == 0;
        host->pub.report_detail(rep, key, found ? path : why.msg);
    }
}

/* doctor --json: the verdict, the backend, the findings, the policy. */
static void print_doctor_json(const kg_plugin *cand, const kg_choice *choice, const env_policy *e,
                              const kgate_report *rep, const kg_registry *r)
{
    UT_string *o;
    utstring_new(o);
    utstring_printf(o, "{\"verdict\":");
    kg_json_str(o, kg_verdict_name(rep->verdict));
    utstring_printf(o, ",\"backend\":");
    if (cand)
        kg_json_str(o, choice->stage ? choice->name : cand->name);
    else
        utstring_printf(o, "null");
    utstring_printf(o, ",\"stage\":");
    if (choice->stage)
        kg_json_str(o, choice->stage->name);
    else
        utstring_printf(o, "null");
    utstring_printf(o, ",\"file\":");
    if (cand)
        kg_json_str(o, cand->path);
    else
        utstring_printf(o, "null");
    utstring_printf(o, ",\"version\":");
    if (cand)
        kg_json_str(o, cand->probe.version);
    else
        utstring_printf(o, "null");
    json_report(o, rep);
    utstring_printf(o, ",\"policy\":");
    if (e->pol)
        kg_policy_to_json(e->pol, o);
    else
        utstring_printf(o, "null");
    utstring_printf(o, ",\"plugins_refused\":");
    json_refused(o, r);
    utstring_printf(o, "}\n");
    fputs(utstring_body(o), stdout);
    utstring_free(o);
}

int kg_cmd_doctor(int argc, char **argv)
{
    int json = 0;
    const char *forced = NULL;
    int status;
    if (parse(argc, argv, &json, &forced, doctor_usage, &status) < 0) return status;

    kg_host host;
    kg_host_init(&host);
    /* The policy first: where its boxes could write, no plugin loads. */
    env_policy e;
    env_policy_load(&e);
    kg_registry *r = kg_registry_load_for(e.pol ? e.pol->allow_paths : NULL, 1);
    if (!r) kg_oom();

    kg_plugin *cand = NULL;
    kg_choice choice = {0};
    kgate_report *brep = NULL;
    kg_error err = {0};
    int rc = -1;
    if (e.pol) {
        rc = kg_select_choose(r, &host, &e.pol->pub, forced, KGATE_PROBE_THOROUGH, &choice, &err);
        cand = choice.box;
        brep = choice.rep;
    } else if (forced) {
        /* No policy to judge, but the user still learns whether the backend
         * they named exists. */
        cand = kg_registry_find(r, forced);
        if (cand) kg_select_probe(cand, &host, KGATE_PROBE_THOROUGH);
    }

    /* The core's findings first (they hold whatever the backend says),
     * then the backend's own. */
    kgate_report *rep = kg_report_new();
    for (size_t i = 0; i < kg_strv_len(e.blocked); i++)
        host.pub.report(rep, KGATE_BLOCKED, kg_strv_get(e.blocked_ids, i), "%s",
                        kg_strv_get(e.blocked, i));
    if (e.pol && rc < 0 && !cand)
        host.pub.report(rep, KGATE_BLOCKED, "core.no-backend", "%s", err.msg);
    if (!e.pol && forced && !cand)
        host.pub.report(rep, KGATE_BLOCKED, "core.backend-not-found", "backend %s not found",
                        forced);
    if (brep) {
        for (size_t i = 0; i < brep->n_items; i++)
            host.pub.report(rep, brep->items[i].verdict, brep->items[i].id, "%s",
                            brep->items[i].text);
        /* A refused report keeps its verdict even where no finding says it
         * (an id that was not valid, a finding lost to memory). */
        if (brep->verdict > rep->verdict) rep->verdict = brep->verdict;
        for (size_t i = 0; i < kg_strv_len(brep->detail_keys); i++)
            host.pub.report_detail(rep, kg_strv_get(brep->detail_keys, i),
                                   kg_strv_get(brep->detail_values, i));
    }
    if (e.pol) env_detail(&host, e.pol, rep);
    tools_detail(&host, rep);
    if (e.pol) {
        /* What max_processes means for this user now (proclimit.h). */
        kg_proclimit lim;
        kg_proclimit_describe(e.pol->max_processes, &lim);
        host.pub.report_detail(rep, "process bound", lim.text);
    }
    /* The report shown is one backend's; when none could enforce the
     * policy, every backend's reason belongs in the verdict line too (the
     * one shown may only be saying "another backend does this"). */
    if (e.pol && rc < 0 && cand && !forced)
        host.pub.report(rep, KGATE_BLOCKED, "core.selection", "selection: %s", err.msg);
    if (rep->n_items == 0)
        host.pub.report(rep, KGATE_BLOCKED, "core.nothing-to-report", "nothing to report");

    if (json)
        print_doctor_json(cand, &choice, &e, rep, r);
    else
        print_doctor_text(cand, choice.stage, choice.name, &e, rep);
    status = rep->verdict == KGATE_BLOCKED ? KG_EXIT_FAIL : KG_EXIT_OK;
    kg_report_free(rep);
    kg_report_free(brep);
    env_policy_free(&e);
    kg_registry_free(r);
    return status;
}

/* ------------------------------------------------------------------------ */
/* plugins                                                                   */
/* ------------------------------------------------------------------------ */

static void json_probe(UT_string *o, const kg_plugin *p)
{
    utstring_printf(o, "{\"available\":%s,\"score\":%d,\"depth\":",
                    p->probe.available ? "true" : "false", p->probe.score);
    kg_json_str(o, p->probe_depth == KGATE_PROBE_THOROUGH ? "thorough" : "quick");
    utstring_printf(o, ",\"version\":");
    kg_json_str(o, p->probe.version);
    utstring_printf(o, ",\"tool_path\":");
    kg_json_str(o, p->probe.tool_path);
    utstring_printf(o, ",\"reason\":");
    kg_json_str(o, p->probe.reason);
    utstring_printf(o, ",\"error\":");
    if (p->probe_failed)
        kg_json_str(o, p->probe_error);
    else
        utstring_printf(o, "null");
    utstring_printf(o, ",\"facts\":{");
    for (size_t i = 0; i < p->probe.n_facts; i++) {
        if (i) utstring_printf(o, ",");
        kg_json_str(o, p->probe.facts[i].name);
        utstring_printf(o, ":%d", p->probe.facts[i].value);
    }
    utstring_printf(o, "}}");
}

/* plugins --json: every plugin with its probe, the refused, the pick. */
static void print_plugins_json(const kg_registry *r, const kg_plugin *pick,
                               const kg_plugin *pick_stage, const char *picked,
                               const char *why_none)
{
    UT_string *o;
    utstring_new(o);
    utstring_printf(o, "{\"plugins\":[");
    kg_plugin *p, *tmp;
    int first = 1;
    HASH_ITER(hh, r->by_name, p, tmp)
    {
        utstring_printf(o, "%s{\"name\":", first ? "" : ",");
        first = 0;
        kg_json_str(o, p->name);
        utstring_printf(o, ",\"file\":");
        kg_json_str(o, p->path);
        utstring_printf(o, ",\"description\":");
        kg_json_str(o, p->be.description ? p->be.description : "");
        utstring_printf(o, ",\"kind\":");
        kg_json_str(o, p->be.kind == KGATE_KIND_NETWORK ? "network" : "box");
        utstring_printf(o, ",\"abi\":\"%d.%u\",\"abi_major\":%d,\"abi_minor\":%u", KGATE_ABI_MAJOR,
                        (unsigned)p->abi_minor, KGATE_ABI_MAJOR, (unsigned)p->abi_minor);
        utstring_printf(o, ",\"probe\":");
        json_probe(o, p);
        utstring_printf(o, ",\"selected\":%s}", p == pick || p == pick_stage ? "true" : "false");
    }
    utstring_printf(o, "],\"refused\":");
    json_refused(o, r);
    utstring_printf(o, ",\"searched\":");
    kg_json_strv(o, r->searched);
    utstring_printf(o, ",\"selected\":");
    if (picked)
        kg_json_str(o, picked);
    else
        utstring_printf(o, "null");
    utstring_printf(o, ",\"selection_error\":");
    if (why_none)
        kg_json_str(o, why_none);
    else
        utstring_printf(o, "null");
    utstring_printf(o, "}\n");
    fputs(utstring_body(o), stdout);
    utstring_free(o);
}

/* One plugin in the text of `kgate plugins`. */
static void print_plugin_text(const kg_plugin *p, bool selected)
{
    kg_msg_line(stdout, NULL, "%s%s (ABI %d.%u) %s", selected ? "* " : "  ", p->name,
                KGATE_ABI_MAJOR, (unsigned)p->abi_minor, p->path);
    if (p->be.description) kg_msg_line(stdout, NULL, "    %s", p->be.description);
    if (p->probe_failed)
        kg_msg_line(stdout, NULL, "    probe failed: %s", p->probe_error);
    else if (p->be.kind == KGATE_KIND_NETWORK) {
        /* A stage is never picked by score: it is composed with the
         * box it names when the policy needs it (select.c). */
        UT_string *b;
        utstring_new(b);
        for (const char *const *n = p->be.boxes; n && *n; n++)
            utstring_printf(b, "%s%s", n == p->be.boxes ? "" : ", ", *n);
        kg_msg_line(stdout, NULL, "    %s, network stage for %s, version %s%s%s",
                    p->probe.available ? "available" : "not available",
                    utstring_len(b) ? utstring_body(b) : "no box",
                    p->probe.version[0] ? p->probe.version : "unknown",
                    p->probe.reason[0] ? ": " : "", p->probe.reason);
        utstring_free(b);
    } else
        kg_msg_line(stdout, NULL, "    %s, score %d, version %s%s%s",
                    p->probe.available ? "available" : "not available", p->probe.score,
                    p->probe.version[0] ? p->probe.version : "unknown",
                    p->probe.reason[0] ? ": " : "", p->probe.reason);
}

static void print_plugins_text(const kg_registry *r, const kg_plugin *pick,
                               const kg_plugin *pick_stage, const char *picked,
                               const char *why_none)
{
    kg_plugin *p, *tmp;
    HASH_ITER(hh, r->by_name, p, tmp) print_plugin_text(p, p == pick || p == pick_stage);
    if (!r->by_name) kg_msg_line(stdout, NULL, "no plugin found");
    for (size_t i = 0; i < kg_strv_len(r->refusals); i++)
        kg_msg_line(stdout, NULL, "refused: %s", kg_strv_get(r->refusals, i));
    UT_string *searched;
    utstring_new(searched);
    utstring_printf(searched, "searched:");
    for (size_t i = 0; i < kg_strv_len(r->searched); i++)
        utstring_printf(searched, " %s", kg_strv_get(r->searched, i));
    kg_msg_line(stdout, NULL, "%s", utstring_body(searched));
    utstring_free(searched);
    if (picked)
        kg_msg_line(stdout, NULL, "run would pick: %s", picked);
    else
        kg_msg_line(stdout, NULL, "run would pick: none (%s)", why_none ? why_none : "unknown");
}

int kg_cmd_plugins(int argc, char **argv)
{
    int json = 0;
    int status;
    if (parse(argc, argv, &json, NULL, plugins_usage, &status) < 0) return status;

    kg_host host;
    kg_host_init(&host);
    /* The policy first: where its boxes could write, no plugin loads. */
    env_policy e;
    env_policy_load(&e);
    kg_registry *r = kg_registry_load_for(e.pol ? e.pol->allow_paths : NULL, 1);
    if (!r) kg_oom();
    kg_select_probe_all(r, &host, KGATE_PROBE_THOROUGH);

    /* What run would pick for the working directory's policy. */
    kg_plugin *pick = NULL;
    kg_plugin *pick_stage = NULL; /* the network stage pick runs in, if any */
    kg_choice pick_c = {0};
    char *why_none = NULL;
    if (!e.pol) {
        if (asprintf(&why_none, "the policy cannot be built: %s", e.why_none) < 0) why_none = NULL;
    } else {
        kg_error err = {0};
        if (kg_select_choose(r, &host, &e.pol->pub, NULL, KGATE_PROBE_THOROUGH, &pick_c, &err) == 0)
            pick = pick_c.box, pick_stage = pick_c.stage;
        kg_report_free(pick_c.rep);
        if (!pick) why_none = strdup(err.msg);
        /* run refuses this directory before asking any backend. */
        if (pick && kg_strv_len(e.blocked)) {
            pick = pick_stage = NULL;
            why_none = strdup(kg_strv_get(e.blocked, 0));
        }
    }

    const char *picked = pick ? pick_c.name : NULL;
    if (json)
        print_plugins_json(r, pick, pick_stage, picked, why_none);
    else
        print_plugins_text(r, pick, pick_stage, picked, why_none);
    free(why_none);
    env_policy_free(&e);
    kg_registry_free(r);
    return KG_EXIT_OK;
}
