/* select.c: asking every loaded backend what it found on this machine and
 * whether it can enforce the policy, then picking one.
 *
 * Selection fails closed: a backend whose probe failed, that is not
 * available, that lacks a method the launch needs, or that gave no finding
 * at all counts as BLOCKED, whatever else it said. */
#include "select.h"

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exitcode.h"
#include "msg.h"
#include "probecache.h"

/* ------------------------------------------------------------------------ */
/* Calling into a plugin                                                     */
/* ------------------------------------------------------------------------ */

/* Plugins write fixed-size strings; make sure each one ends, and that none
 * of them can put a second line into our output (msg.c's rule). */
static void tidy(char *s, size_t len)
{
    s[len - 1] = '\0';
    kg_msg_flatten(s);
}

/* A probe that never returns (a tool it asks hangs, a plugin loops) would
 * hang every kgate command.  It runs in our process, so it cannot be
 * stopped and let go on: an alarm ends kgate instead, with one kgate: line
 * naming the plugin, and nothing is started (fail closed).  Two syscalls on
 * the normal path.  The bound is generous: QUICK is meant to stat a binary,
 * THOROUGH may run the tool once. */
#define PROBE_QUICK_S 10
#define PROBE_THOROUGH_S 30

static const char *volatile alarm_plugin; /* the probe's name */
static volatile sig_atomic_t alarm_secs;

static void put(const char *s)
{
    if (s) (void)!write(STDERR_FILENO, s, strlen(s));
}

static void on_probe_alarm(int sig)
{
    (void)sig;
    char secs[8];
    int n = alarm_secs, i = (int)sizeof secs - 1;
    secs[i] = '\0';
    do {
        secs[--i] = (char)('0' + n % 10);
        n /= 10;
    } while (n > 0 && i > 0);
    put("kgate: plugin ");
    put(alarm_plugin);
    put(": its probe did not finish within ");
    put(secs + i);
    put(" s: nothing was started\n");
    _exit(KG_EXIT_REFUSED);
}

void kg_select_probe(kg_plugin *p, kg_host *host, kgate_probe_depth depth)
{
    if (p->probed && p->probe_depth >= depth) return;
    kg_plugin_release_state(p);
    kgate_probe_init(&p->probe);
    p->probe_failed = 0;
    p->probe_error[0] = '\0';
    /* Only QUICK results are kept: doctor and plugins always look afresh. */
    int cacheable = depth == KGATE_PROBE_QUICK && host->probes && p->be.probe && p->path;
    if (cacheable && kg_probecache_get(host->probes, p->name, p->path, &p->probe)) {
        p->probed = 1;
        p->probe_depth = depth;
        return;
    }
    if (!p->be.probe) {
        snprintf(p->probe.reason, sizeof p->probe.reason, "plugin has no probe method");
    } else {
        kgate_err e = {0};
        const char *prev = host->current;
        host->current = p->name;
        struct sigaction sa = {.sa_handler = on_probe_alarm}, old_sa;
        sigemptyset(&sa.sa_mask);
        alarm_plugin = p->name;
        alarm_secs = depth == KGATE_PROBE_THOROUGH ? PROBE_THOROUGH_S : PROBE_QUICK_S;
        sigaction(SIGALRM, &sa, &old_sa);
        alarm((unsigned)alarm_secs);
        int rc = p->be.probe(&host->pub, depth, &p->probe, &e);
        alarm(0);
        sigaction(SIGALRM, &old_sa, NULL);
        alarm_plugin = NULL;
        host->current = prev;
        /* Whatever the plugin did to them, these fields are ours now. */
        p->probe.struct_size = sizeof p->probe;
        if (p->probe.n_facts > KGATE_PROBE_MAX_FACTS) p->probe.n_facts = KGATE_PROBE_MAX_FACTS;
        for (size_t i = 0; i < p->probe.n_facts; i++)
            tidy(p->probe.facts[i].name, sizeof p->probe.facts[i].name);
        tidy(p->probe.version, sizeof p->probe.version);
        tidy(p->probe.tool_path, sizeof p->probe.tool_path);
        tidy(p->probe.reason, sizeof p->probe.reason);
        tidy(e.msg, sizeof e.msg);
        if (rc < 0) {
            p->probe_failed = 1;
            p->probe.available = 0;
            snprintf(p->probe_error, sizeof p->probe_error, "%s",
                     e.msg[0] ? e.msg : "probe failed without a message");
        }
        p->probe.available = p->probe.available ? 1 : 0;
        /* A probe that keeps a state (tool paths for launch) must run. */
        if (cacheable && rc == 0 && !p->probe.state)
            kg_probecache_put(host->probes, p->name, p->path, &p->probe);
    }
    p->probed = 1;
    p->probe_depth = depth;
}

void kg_select_probe_all(kg_registry *r, kg_host *host, kgate_probe_depth depth)
{
    kg_plugin *p, *tmp;
    HASH_ITER(hh, r->by_name, p, tmp) kg_select_probe(p, host, depth);
}

/* ------------------------------------------------------------------------ */
/* Doctor                                                                    */
/* ------------------------------------------------------------------------ */

static void add(kg_host *host, kgate_report *rep, kgate_verdict v, const char *id, const char *text)
{
    host->pub.report(rep, v, id, "%s", text);
}

kgate_report *kg_select_doctor(kg_plugin *p, kg_host *host, const kgate_policy *policy,
                               kgate_probe_depth depth)
{
    kgate_report *rep = kg_report_new();
    if (!rep) return NULL;
    rep->keep_details = host->details;
    kg_select_probe(p, host, depth);
    if (p->probe_failed) {
        char msg[600];
        snprintf(msg, sizeof msg, "probe failed: %s", p->probe_error);
        add(host, rep, KGATE_BLOCKED, "core.probe-failed", msg);
        return rep;
    }
    /* doctor() is pure, so it is asked even when probe found nothing: the
     * backend usually explains that better than "not available". */
    if (p->be.doctor) {
        const char *prev = host->current;
        host->current = p->name;
        int rc = p->be.doctor(&host->pub, policy, &p->probe, rep);
        host->current = prev;
        if (rc < 0) add(host, rep, KGATE_BLOCKED, "core.doctor-failed", "doctor failed");
    } else {
        add(host, rep, KGATE_BLOCKED, "core.doctor-missing", "plugin has no doctor method");
    }
    if (rep->bad_id) {
        /* Fail closed: findings that cannot be named cannot be composed or
         * checked, so the backend's whole report is refused. */
        char msg[200];
        snprintf(msg, sizeof msg,
                 "doctor refused: finding id \"%s\" is not valid (1 to %d of a-z, 0-9, "
                 "'.', '-')",
                 rep->bad_id, KGATE_FINDING_ID_MAX);
        add(host, rep, KGATE_BLOCKED, "core.finding-id-invalid", msg);
    }
    for (size_t i = 0; i < rep->n_items; i++)
        if (rep->items[i].text) tidy(rep->items[i].text, strlen(rep->items[i].text) + 1);
    if (rep->n_items == 0)
        add(host, rep, KGATE_BLOCKED, "core.no-finding", "doctor gave no finding");
    /* "Not BLOCKED" here means as a box of a composition would read it:
     * a box that says only that it cannot filter hosts must still say
     * when it cannot run at all. */
    if (!p->probe.available && kg_report_composed_verdict(rep) != KGATE_BLOCKED) {
        char msg[300];
        snprintf(msg, sizeof msg, "not available here: %s",
                 p->probe.reason[0] ? p->probe.reason : "probe says so");
        add(host, rep, KGATE_BLOCKED, "core.unavailable", msg);
    }
    if ((!p->be.plan || !p->be.launch) && kg_report_composed_verdict(rep) != KGATE_BLOCKED)
        add(host, rep, KGATE_BLOCKED, "core.cannot-launch",
            "plugin cannot launch (no plan or launch method)");
    return rep;
}

static int is_hosts_finding(const kg_report_item *it)
{
    return it->id && strcmp(it->id, KGATE_FINDING_NET_HOSTS_UNSUPPORTED) == 0;
}

int kg_report_needs_stage(const kgate_report *rep)
{
    for (size_t i = 0; rep && i < rep->n_items; i++)
        if (is_hosts_finding(&rep->items[i])) return 1;
    return 0;
}

kgate_verdict kg_report_composed_verdict(const kgate_report *rep)
{
    kgate_verdict v = KGATE_READY;
    int blocked_item = 0;
    for (size_t i = 0; i < rep->n_items; i++) {
        const kg_report_item *it = &rep->items[i];
        if (it->verdict == KGATE_BLOCKED && !is_hosts_finding(it)) blocked_item = 1;
        if (!is_hosts_finding(it) && it->verdict > v) v = it->verdict;
    }
    /* A report that is BLOCKED with no finding saying so (a bad id, a
     * finding lost to memory) stays BLOCKED. */
    if (rep->bad_id ||
        (rep->verdict == KGATE_BLOCKED && !blocked_item && !kg_report_needs_stage(rep)))
        return KGATE_BLOCKED;
    return v;
}

void kg_report_reasons(const kgate_report *rep, kg_strv *out)
{
    for (size_t i = 0; rep && i < rep->n_items; i++)
        if (rep->items[i].verdict == rep->verdict && rep->items[i].text)
            kg_strv_push(out, rep->items[i].text);
}

static char *joined_reasons(const kgate_report *rep)
{
    kg_strv *v = kg_strv_new();
    kg_report_reasons(rep, v);
    size_t len = 1;
    for (size_t i = 0; i < kg_strv_len(v); i++) len += strlen(kg_strv_get(v, i)) + 2;
    char *s = calloc(1, len);
    for (size_t i = 0; s && i < kg_strv_len(v); i++) {
        if (i) strcat(s, "; ");
        strcat(s, kg_strv_get(v, i));
    }
    kg_strv_free(v);
    return s;
}

/* ------------------------------------------------------------------------ */
/* Selection                                                                 */
/* ------------------------------------------------------------------------ */

static void names_of(kg_registry *r, char *buf, size_t len)
{
    kg_plugin *p, *tmp;
    size_t used = 0;
    buf[0] = '\0';
    HASH_ITER(hh, r->by_name, p, tmp)
    {
        int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", p->name);
        if (n < 0 || (size_t)n >= len - used) break;
        used += (size_t)n;
    }
}

static void no_plugin_error(kg_registry *r, kg_error *err)
{
    char dirs[600] = "";
    size_t used = 0;
    for (size_t i = 0; i < kg_strv_len(r->searched); i++) {
        int n = snprintf(dirs + used, sizeof dirs - used, "%s%s", i ? ":" : "",
                         kg_strv_get(r->searched, i));
        if (n < 0 || (size_t)n >= sizeof dirs - used) break;
        used += (size_t)n;
    }
    size_t refused = kg_strv_len(r->refusals);
    if (refused)
        kg_err_set(err, 0, "no usable backend plugin in %s (%zu refused: see kgate plugins)",
                   used ? dirs : "(no directory)", refused);
    else
        kg_err_set(err, 0, "no backend plugin found in %s (set KGATE_PLUGIN_PATH?)",
                   used ? dirs : "(no directory)");
}

/* Ordering of candidates: better is lower.  Usable ones (not BLOCKED) come
 * first, READY before DEGRADED, then the higher score; among BLOCKED ones
 * an available backend is the more useful report.  Equal ranks keep the
 * load order, which is sorted and so deterministic.  va and vb are the
 * verdicts compared (a box's with its stage, when it has one). */
static int better(const kg_plugin *a, kgate_verdict va, const kg_plugin *b, kgate_verdict vb)
{
    if (va != vb) return va < vb;
    if (va == KGATE_BLOCKED && a->probe.available != b->probe.available)
        return a->probe.available > b->probe.available;
    return a->probe.score > b->probe.score;
}

static int is_stage(const kg_plugin *p) { return p->be.kind == KGATE_KIND_NETWORK; }

/* 1 when stage names box among the boxes whose plans it can start. */
static int stage_takes(const kg_plugin *stage, const kg_plugin *box)
{
    for (const char *const *b = stage->be.boxes; b && *b; b++)
        if (strcmp(*b, box->name) == 0) return 1;
    return 0;
}

/* One backend as selection sees it: its doctor report, and for a box that
 * needs a network stage, the stage it would run in. */
typedef struct sel_cand {
    kg_plugin *p;
    kgate_report *rep;
    struct sel_cand *stage;
    kgate_verdict verdict; /* with the stage's, for a composed box */
} sel_cand;

kgate_report *kg_compose_report(kg_host *host, const kgate_report *box, const kgate_report *stage)
{
    kgate_report *rep = kg_report_new();
    rep->keep_details = host->details;
    const kgate_report *part[2] = {box, stage};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < part[k]->n_items; i++) {
            const kg_report_item *it = &part[k]->items[i];
            if (k == 0 && is_hosts_finding(it)) continue;
            host->pub.report(rep, it->verdict, it->id, "%s", it->text);
        }
        for (size_t i = 0; i < kg_strv_len(part[k]->detail_keys); i++)
            host->pub.report_detail(rep, kg_strv_get(part[k]->detail_keys, i),
                                    kg_strv_get(part[k]->detail_values, i));
    }
    /* Whatever made either report BLOCKED without a finding still holds. */
    kgate_verdict v = kg_report_composed_verdict(box);
    if (v < stage->verdict) v = stage->verdict;
    if (rep->verdict < v) rep->verdict = v;
    return rep;
}

static void append_blocked(char *buf, size_t len, size_t *used, const char *name,
                           const kgate_report *rep)
{
    char *why = joined_reasons(rep);
    int n = snprintf(buf + *used, len - *used, "%s%s: %s", *used ? "; " : "", name,
                     why ? why : "BLOCKED");
    if (n > 0) *used = (size_t)n >= len - *used ? len - 1 : *used + (size_t)n;
    free(why);
}

/* What --backend names: a box, a stage, or BOX+STAGE.  A box named alone
 * runs alone (so `--backend bubblewrap` with a host list is refused, as
 * bubblewrap alone cannot filter hosts); a stage named alone runs with the
 * best box it can start. */
static int parse_forced(kg_registry *r, const char *forced, kg_plugin **box, kg_plugin **stage,
                        int *alone, kg_error *err)
{
    char first[130];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(forced, "+"), forced);
    const char *second = strchr(forced, '+');
    const char *names[2] = {first, second ? second + 1 : NULL};
    kg_plugin *found[2] = {NULL, NULL};
    for (int k = 0; k < 2 && names[k]; k++) {
        found[k] = kg_registry_find(r, names[k]);
        if (found[k]) continue;
        if (!r->by_name) {
            no_plugin_error(r, err);
            return kg_err_wrap(err, "backend %s not found", names[k]);
        }
        char list[512];
        names_of(r, list, sizeof list);
        return kg_err_set(err, 0, "backend %s not found (found: %s)", names[k], list);
    }
    *alone = 0;
    if (!second) {
        if (is_stage(found[0]))
            *stage = found[0];
        else
            *box = found[0], *alone = 1;
        return 0;
    }
    if (is_stage(found[0]) || !is_stage(found[1]))
        return kg_err_set(err, 0,
                          "--backend %s: expected BOX+STAGE (a box, then a network "
                          "stage)",
                          forced);
    *box = found[0];
    *stage = found[1];
    return 0;
}

static void fill_name(kg_choice *c)
{
    if (!c->box)
        snprintf(c->name, sizeof c->name, "none");
    else if (!c->stage)
        snprintf(c->name, sizeof c->name, "%s", c->box->name);
    else
        snprintf(c->name, sizeof c->name, "%s+%s", c->box->name, c->stage->name);
}

/* 1 when the one that would launch c (its stage, else the box) forwards
 * kgate_policy.publish.  A plugin older than ABI 2.2 has no such field: its
 * bytes there are padding, never a promise. */
static int launcher_publishes(const kg_plugin *p)
{
    return p->abi_minor >= 2 && p->be.publishes == 1;
}

static int cand_publishes(const sel_cand *c)
{
    return launcher_publishes(c->stage ? c->stage->p : c->p);
}

/* --publish in a network mode where no box can keep its promise: open
 * shares the host's network, where the program's port already is the
 * host's, on whatever address it binds, which kgate cannot narrow to the
 * loopback.  Off is the boxes' to forward (bubblewrap's forwarder, the
 * Landlock box's loopback listen) or refuse with their reason. */
static int publish_refusal(const kgate_policy *policy, kg_error *err)
{
    if (policy->network == KGATE_NET_OPEN)
        return kg_err_set(err, 0,
                          "--publish cannot be used with network: open: the "
                          "program shares the host's network, so a port it listens on is "
                          "already the host's, on whatever address it binds, and kgate "
                          "cannot keep it to the loopback");
    return 0;
}

/* Each box's verdict: its own, or, when all it lacks is a host filter
 * and composing is allowed, its own without that finding joined with the
 * best stage that can start it. */
static void compose_verdicts(sel_cand *boxes, size_t nb, sel_cand *stages, size_t ns, int compose)
{
    for (size_t i = 0; i < nb; i++) {
        sel_cand *b = &boxes[i];
        b->verdict = b->rep->verdict;
        /* A box BLOCKED for anything else is not composed. */
        if (!compose || !kg_report_needs_stage(b->rep) ||
            kg_report_composed_verdict(b->rep) == KGATE_BLOCKED)
            continue;
        for (size_t k = 0; k < ns; k++)
            if (stage_takes(stages[k].p, b->p) &&
                (!b->stage ||
                 better(stages[k].p, stages[k].verdict, b->stage->p, b->stage->verdict)))
                b->stage = &stages[k];
        if (!b->stage) continue; /* stays BLOCKED with its own reasons */
        kgate_verdict v = kg_report_composed_verdict(b->rep);
        b->verdict = v > b->stage->verdict ? v : b->stage->verdict;
    }
}

/* The best box.  With ports to publish, only a launcher that forwards them
 * is a candidate; when none is, the best one is taken (and refused by the
 * caller, by name).  With a stage forced (--backend STAGE), only a box
 * composed with it is: another box that could run the policy alone (the
 * Landlock box filters hosts itself) is not what was asked for. */
static sel_cand *pick_best(sel_cand *boxes, size_t nb, int publishing, int need_stage)
{
    sel_cand *best = NULL;
    for (int pass = publishing ? 0 : 1; pass < 2 && !best; pass++)
        for (size_t i = 0; i < nb; i++)
            if ((!need_stage || boxes[i].stage) && (pass == 1 || cand_publishes(&boxes[i])) &&
                (!best || better(boxes[i].p, boxes[i].verdict, best->p, best->verdict)))
                best = &boxes[i];
    return best;
}

/* ------------------------------------------------------------------------ */
/* A stronger box lost for want of a tool                                    */
/* ------------------------------------------------------------------------ */

static int is_tool_finding(const kg_report_item *it)
{
    return it->id && strncmp(it->id, "tool.", 5) == 0;
}

/* 1 when every BLOCKED finding of c (the box's, without the host list a
 * stage supplies, and its stage's) is a missing tool, and there is one:
 * installing those tools is all it would take for c to run. */
static int blocked_by_tools_only(const sel_cand *c)
{
    const kgate_report *part[2] = {c->rep, c->stage ? c->stage->rep : NULL};
    int tools = 0;
    for (int k = 0; k < 2 && part[k]; k++) {
        if (part[k]->bad_id) return 0;
        for (size_t i = 0; i < part[k]->n_items; i++) {
            const kg_report_item *it = &part[k]->items[i];
            if (it->verdict != KGATE_BLOCKED) continue;
            if (k == 0 && c->stage && is_hosts_finding(it)) continue;
            if (!is_tool_finding(it)) return 0;
            tools++;
        }
    }
    return tools > 0;
}

/* 1 when rep says id at DEGRADED or worse: then the picked box does not
 * lack it in comparison. */
static int reports_degraded(const kgate_report *rep, const char *id)
{
    for (size_t i = 0; rep && i < rep->n_items; i++)
        if (rep->items[i].id && strcmp(rep->items[i].id, id) == 0 &&
            rep->items[i].verdict >= KGATE_DEGRADED)
            return 1;
    return 0;
}

/* Appends the strings up to a NULL, cut at the end of buf. */
static void cat_to(char *buf, size_t len, size_t *used, ...)
{
    va_list ap;
    va_start(ap, used);
    for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *)) {
        int n = snprintf(buf + *used, len - *used, "%s", s);
        if (n > 0) *used = (size_t)n >= len - *used ? len - 1 : *used + (size_t)n;
    }
    va_end(ap);
}

/* The first clause of a finding's sentence (up to its first ':', ';' or
 * '('), the short name of what the box lacks; the full sentence is
 * doctor's. */
static void clause_of(const char *text, char *out, size_t len)
{
    size_t n = strcspn(text, ":;(");
    while (n > 0 && text[n - 1] == ' ') n--;
    if (n > 100) n = 100;
    snprintf(out, len, "%.*s", (int)n, text);
}

/* The sentence of kg_choice.fallback.  Only a box scored above the picked
 * one counts (bubblewrap over Landlock): a box that loses on its score
 * was never the better one.  Forced backends never get here. */
static void describe_fallback(const sel_cand *best, const sel_cand *boxes, size_t nb, char *out,
                              size_t len)
{
    out[0] = '\0';
    const sel_cand *lost = NULL;
    for (size_t i = 0; i < nb; i++)
        if (&boxes[i] != best && boxes[i].verdict == KGATE_BLOCKED &&
            boxes[i].p->probe.score > best->p->probe.score && blocked_by_tools_only(&boxes[i]) &&
            (!lost || boxes[i].p->probe.score > lost->p->probe.score))
            lost = &boxes[i];
    if (!lost) return;
    char best_name[140], lost_name[140];
    snprintf(best_name, sizeof best_name, "%s%s%s", best->p->name, best->stage ? "+" : "",
             best->stage ? best->stage->p->name : "");
    snprintf(lost_name, sizeof lost_name, "%s%s%s", lost->p->name, lost->stage ? "+" : "",
             lost->stage ? lost->stage->p->name : "");
    size_t used = 0;
    cat_to(out, len, &used, "picked ", best_name, ", a weaker box: ", lost_name,
           " would give the stronger one", (char *)NULL);
    const sel_cand *part[2] = {lost, lost->stage};
    const char *sep = " but lacks a tool (";
    for (int k = 0; k < 2 && part[k]; k++)
        for (size_t i = 0; i < part[k]->rep->n_items; i++) {
            const kg_report_item *it = &part[k]->rep->items[i];
            if (it->verdict != KGATE_BLOCKED || !is_tool_finding(it)) continue;
            cat_to(out, len, &used, sep, part[k]->p->name, ": ", it->text ? it->text : it->id,
                   (char *)NULL);
            sep = "; ";
        }
    cat_to(out, len, &used, ")", (char *)NULL);
    /* What the picked box is DEGRADED for where the stronger one is not;
     * net.open is the policy's choice, not a box's want. */
    sep = "; what ";
    const sel_cand *pb[2] = {best, best->stage};
    for (int k = 0; k < 2 && pb[k]; k++)
        for (size_t i = 0; i < pb[k]->rep->n_items; i++) {
            const kg_report_item *it = &pb[k]->rep->items[i];
            if (it->verdict != KGATE_DEGRADED || !it->id || !it->text ||
                strcmp(it->id, KGATE_FINDING_NET_OPEN) == 0 ||
                reports_degraded(lost->rep, it->id) ||
                (lost->stage && reports_degraded(lost->stage->rep, it->id)))
                continue;
            char clause[110];
            clause_of(it->text, clause, sizeof clause);
            if (strcmp(sep, "; what ") == 0) {
                cat_to(out, len, &used, sep, best_name, " lacks: ", (char *)NULL);
                sep = "";
            }
            cat_to(out, len, &used, sep, clause, " (", it->id, ")", (char *)NULL);
            sep = ", ";
        }
}

int kg_select_choose(kg_registry *r, kg_host *host, const kgate_policy *policy, const char *forced,
                     kgate_probe_depth depth, kg_choice *out, kg_error *err)
{
    memset(out, 0, sizeof *out);
    kg_plugin *fbox = NULL, *fstage = NULL;
    int alone = 0;
    if (forced && parse_forced(r, forced, &fbox, &fstage, &alone, err) < 0) return -1;
    if (!forced && !r->by_name) {
        no_plugin_error(r, err);
        return -1;
    }
    int hosts = policy->network == KGATE_NET_RESTRICTED;
    if (policy->n_publish > 0 && publish_refusal(policy, err) < 0) return -1;
    if (fstage && !hosts)
        return kg_err_set(err, 0,
                          "backend %s is a network stage: it only runs for "
                          "network: restricted with hosts",
                          fstage->name);

    /* Every candidate's doctor, each asked once.  Stages only for a host
     * list: off and open never involve one. */
    size_t n = HASH_COUNT(r->by_name), nb = 0, ns = 0;
    sel_cand *boxes = calloc(n ? n : 1, sizeof *boxes);
    sel_cand *stages = calloc(n ? n : 1, sizeof *stages);
    if (!boxes || !stages) kg_oom();
    kg_plugin *p, *tmp;
    HASH_ITER(hh, r->by_name, p, tmp)
    {
        if (is_stage(p)) {
            if (!hosts || alone || (fstage && p != fstage)) continue;
            stages[ns++] =
                (sel_cand){p, kg_select_doctor(p, host, policy, depth), NULL, KGATE_BLOCKED};
            stages[ns - 1].verdict = stages[ns - 1].rep->verdict;
        } else {
            if (fbox && p != fbox) continue;
            boxes[nb++] =
                (sel_cand){p, kg_select_doctor(p, host, policy, depth), NULL, KGATE_BLOCKED};
        }
    }
    compose_verdicts(boxes, nb, stages, ns, hosts && !alone);
    sel_cand *best = pick_best(boxes, nb, policy->n_publish > 0, fstage != NULL);

    int rc = 0;
    if (!best) {
        rc = fstage ? kg_err_set(err, 0, "no box can start in the network stage %s", fstage->name)
                    : kg_err_set(err, 0, "no box backend loaded (only network stages)");
    } else {
        out->box = best->p;
        out->stage = best->stage ? best->stage->p : NULL;
        out->rep = best->stage ? kg_compose_report(host, best->rep, best->stage->rep) : best->rep;
        fill_name(out);
        if (!forced && best->verdict != KGATE_BLOCKED) {
            describe_fallback(best, boxes, nb, out->fallback, sizeof out->fallback);
            if (out->fallback[0])
                host->pub.report(out->rep, KGATE_DEGRADED, "core.fallback", "%s", out->fallback);
        }
        if (policy->n_publish > 0 && !cand_publishes(best)) {
            rc = kg_err_set(err, 0,
                            "--publish: %s cannot forward a port from the host "
                            "into its box (bubblewrap, its slirp-filter stage and "
                            "landlock can, docs/network.md)",
                            out->name);
        } else if (out->rep->verdict == KGATE_BLOCKED && forced) {
            char *why = joined_reasons(out->rep);
            rc = kg_err_set(err, 0, "backend %s cannot enforce this policy: %s", out->name,
                            why ? why : "BLOCKED");
            free(why);
        } else if (out->rep->verdict == KGATE_BLOCKED) {
            /* Every box's reasons, then every stage's: the one shown may
             * only be saying "another backend does this". */
            char blocked[900] = "";
            size_t used = 0;
            for (size_t i = 0; i < nb; i++)
                if (boxes[i].rep->verdict == KGATE_BLOCKED)
                    append_blocked(blocked, sizeof blocked, &used, boxes[i].p->name, boxes[i].rep);
            for (size_t k = 0; k < ns; k++)
                if (stages[k].rep->verdict == KGATE_BLOCKED)
                    append_blocked(blocked, sizeof blocked, &used, stages[k].p->name,
                                   stages[k].rep);
            rc = kg_err_set(err, 0, "no backend can enforce this policy: %s", blocked);
        }
        if (!best->stage) best->rep = NULL; /* now out's */
    }
    for (size_t i = 0; i < nb; i++) kg_report_free(boxes[i].rep);
    for (size_t k = 0; k < ns; k++) kg_report_free(stages[k].rep);
    free(boxes);
    free(stages);
    return rc;
}

int kg_select_candidate(kg_registry *r, kg_host *host, const kgate_policy *policy,
                        const char *forced, kgate_probe_depth depth, kg_plugin **cand,
                        kgate_report **rep, kg_error *err)
{
    kg_choice c;
    int rc = kg_select_choose(r, host, policy, forced, depth, &c, err);
    *cand = c.box;
    *rep = c.rep;
    return rc;
}

kg_plugin *kg_select_backend(kg_registry *r, kg_host *host, const kgate_policy *policy,
                             const char *forced, kgate_probe_depth depth, kgate_report **rep,
                             kg_error *err)
{
    kg_plugin *cand = NULL;
    if (kg_select_candidate(r, host, policy, forced, depth, &cand, rep, err) < 0) return NULL;
    return cand;
}

int kg_select_plan(const kg_choice *c, kg_host *host, const kgate_policy *policy, kgate_plan *plan,
                   const char **who, kg_error *err)
{
    return kg_compose_plan(host, &c->box->be, &c->box->probe, c->stage ? &c->stage->be : NULL,
                           c->stage ? &c->stage->probe : NULL, policy, plan, who, err);
}

int kg_compose_plan(kg_host *host, const kgate_backend *box, const kgate_probe *box_probe,
                    const kgate_backend *stage, const kgate_probe *stage_probe,
                    const kgate_policy *policy, kgate_plan *plan, const char **who, kg_error *err)
{
    /* The box plans with the network left to the stage: the host's
     * network as the box sees it, the stage's namespace around it. */
    kgate_policy box_policy = *policy;
    if (stage) box_policy.network = KGATE_NET_OPEN;
    const char *prev = host->current;
    *who = box->name;
    host->current = box->name;
    int rc = box->plan ? box->plan(&host->pub, &box_policy, box_probe, plan, err) : -1;
    if (rc == 0 && plan->failed) rc = -1;
    if (rc == 0 && stage) {
        *who = stage->name;
        host->current = stage->name;
        size_t before = kg_strv_len(plan->argv);
        rc = stage->plan ? stage->plan(&host->pub, policy, stage_probe, plan, err) : -1;
        if (rc == 0 && plan->failed) rc = -1;
        /* The stage starts the box's argv: it adds files and notes only. */
        if (rc == 0 && kg_strv_len(plan->argv) != before)
            rc = kgate_err_set(err, 0, "a network stage changed the box's argv");
    }
    host->current = prev;
    return rc;
}
