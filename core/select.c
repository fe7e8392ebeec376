/* select.c: asking every loaded backend what it found on this machine and
 * whether it can enforce the policy, then picking one.
 *
 * Selection fails closed: a backend whose probe failed, that is not
 * available, that lacks a method the launch needs, or that gave no finding
 * at all counts as BLOCKED, whatever else it said. */
#include "select.h"

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

/* ------------------------------------------------------------------------ */
/* Calling into a plugin                                                     */
/* ------------------------------------------------------------------------ */

/* Plugins write fixed-size strings; make sure each one ends, and that none
 * of them can put a second line into our output. */
static void tidy(char *s, size_t len)
{
    s[len - 1] = '\0';
    for (unsigned char *c = (unsigned char *)s; *c; c++)
        if (*c < 0x20 || *c == 0x7f) *c = ' ';
}

static const kgate_probe *find_probe(void *ctx, const char *name);

/* A probe that never returns (a tool it asks hangs, a plugin loops) would
 * hang every kgate command.  It runs in our process, so it cannot be
 * stopped and let go on: an alarm ends kgate instead, with one kgate: line
 * naming the plugin, and nothing is started (fail closed).  Two syscalls on
 * the normal path.  The bound is generous: QUICK is meant to stat a binary,
 * THOROUGH may run the tool once. */
#define PROBE_QUICK_S 10
#define PROBE_THOROUGH_S 30

static const char *volatile alarm_plugin; /* the outermost probe's name */
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
    if (p->probing) return;
    if (p->probed && p->probe_depth >= depth) return;
    kg_plugin_release_state(p);
    kgate_probe_init(&p->probe);
    p->probe_failed = 0;
    p->probe_error[0] = '\0';
    if (!p->be.probe) {
        snprintf(p->probe.reason, sizeof p->probe.reason, "plugin has no probe method");
    } else {
        kgate_err e = {0};
        const char *prev = host->current;
        /* A backend that asks for another's probe gets one as deep as its
         * own. */
        kg_registry *r = host->find_probe == find_probe ? host->ctx : NULL;
        kgate_probe_depth prev_depth = r ? r->depth : depth;
        if (r) r->depth = depth;
        host->current = p->name;
        p->probing = 1;
        /* Only the outermost probe arms the alarm (a backend may ask for
         * another's probe): its bound covers both. */
        bool arm = alarm_plugin == NULL;
        struct sigaction sa = {.sa_handler = on_probe_alarm}, old_sa;
        if (arm) {
            sigemptyset(&sa.sa_mask);
            alarm_plugin = p->name;
            alarm_secs = depth == KGATE_PROBE_THOROUGH ? PROBE_THOROUGH_S : PROBE_QUICK_S;
            sigaction(SIGALRM, &sa, &old_sa);
            alarm((unsigned)alarm_secs);
        }
        int rc = p->be.probe(&host->pub, depth, &p->probe, &e);
        if (arm) {
            alarm(0);
            sigaction(SIGALRM, &old_sa, NULL);
            alarm_plugin = NULL;
        }
        p->probing = 0;
        host->current = prev;
        if (r) r->depth = prev_depth;
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
    }
    p->probed = 1;
    p->probe_depth = depth;
}

void kg_select_probe_all(kg_registry *r, kg_host *host, kgate_probe_depth depth)
{
    kg_plugin *p, *tmp;
    r->depth = depth;
    HASH_ITER(hh, r->by_name, p, tmp) kg_select_probe(p, host, depth);
}

/* ------------------------------------------------------------------------ */
/* Host wiring                                                               */
/* ------------------------------------------------------------------------ */

static const kgate_backend *find_backend(void *ctx, const char *name)
{
    kg_plugin *p = kg_registry_find(ctx, name);
    return p ? &p->be : NULL;
}

/* A backend that composes another (the host filter wraps bubblewrap) asks
 * for its probe; probing it on demand keeps `run` from probing plugins
 * nobody needs. */
static const kgate_probe *find_probe(void *ctx, const char *name)
{
    kg_registry *r = ctx;
    kg_plugin *p = kg_registry_find(r, name);
    if (!p) return NULL;
    if (r->host) kg_select_probe(p, r->host, r->depth);
    return p->probed ? &p->probe : NULL;
}

void kg_select_bind_host(kg_host *host, kg_registry *r)
{
    host->find_backend = find_backend;
    host->find_probe = find_probe;
    host->ctx = r;
    r->host = host;
}

/* ------------------------------------------------------------------------ */
/* Doctor                                                                    */
/* ------------------------------------------------------------------------ */

static void add(kg_host *host, kgate_report *rep, kgate_verdict v, const char *id,
                const char *text)
{
    host->pub.report(rep, v, id, "%s", text);
}

kgate_report *kg_select_doctor(kg_plugin *p, kg_host *host,
                               const kgate_policy *policy,
                               kgate_probe_depth depth)
{
    kgate_report *rep = kg_report_new();
    if (!rep) return NULL;
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
    if (!p->probe.available && rep->verdict != KGATE_BLOCKED) {
        char msg[300];
        snprintf(msg, sizeof msg, "not available here: %s",
                 p->probe.reason[0] ? p->probe.reason : "probe says so");
        add(host, rep, KGATE_BLOCKED, "core.unavailable", msg);
    }
    if ((!p->be.plan || !p->be.launch) && rep->verdict != KGATE_BLOCKED)
        add(host, rep, KGATE_BLOCKED, "core.cannot-launch",
            "plugin cannot launch (no plan or launch method)");
    return rep;
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
    HASH_ITER(hh, r->by_name, p, tmp) {
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
 * load order, which is sorted and so deterministic. */
static int better(const kg_plugin *a, const kgate_report *ra, const kg_plugin *b,
                  const kgate_report *rb)
{
    if (ra->verdict != rb->verdict) return ra->verdict < rb->verdict;
    if (ra->verdict == KGATE_BLOCKED && a->probe.available != b->probe.available)
        return a->probe.available > b->probe.available;
    return a->probe.score > b->probe.score;
}

int kg_select_candidate(kg_registry *r, kg_host *host,
                        const kgate_policy *policy, const char *forced,
                        kgate_probe_depth depth, kg_plugin **cand,
                        kgate_report **rep, kg_error *err)
{
    *cand = NULL;
    *rep = NULL;
    r->depth = depth;
    if (forced) {
        kg_plugin *p = kg_registry_find(r, forced);
        if (!p) {
            if (!r->by_name) {
                no_plugin_error(r, err);
                return kg_err_wrap(err, "backend %s not found", forced);
            }
            char names[512];
            names_of(r, names, sizeof names);
            return kg_err_set(err, 0, "backend %s not found (found: %s)", forced, names);
        }
        *cand = p;
        *rep = kg_select_doctor(p, host, policy, depth);
        if (!*rep) kg_oom();
        if ((*rep)->verdict == KGATE_BLOCKED) {
            char *why = joined_reasons(*rep);
            kg_err_set(err, 0, "backend %s cannot enforce this policy: %s", p->name,
                       why ? why : "BLOCKED");
            free(why);
            return -1;
        }
        return 0;
    }
    if (!r->by_name) {
        no_plugin_error(r, err);
        return -1;
    }
    kg_plugin *p, *tmp, *best = NULL;
    kgate_report *best_rep = NULL;
    char blocked[900] = "";
    size_t used = 0;
    HASH_ITER(hh, r->by_name, p, tmp) {
        kgate_report *pr = kg_select_doctor(p, host, policy, depth);
        if (!pr) continue;
        if (pr->verdict == KGATE_BLOCKED) {
            char *why = joined_reasons(pr);
            int n = snprintf(blocked + used, sizeof blocked - used, "%s%s: %s",
                             used ? "; " : "", p->name, why ? why : "BLOCKED");
            if (n > 0) used = (size_t)n >= sizeof blocked - used ? sizeof blocked - 1 : used + (size_t)n;
            free(why);
        }
        if (!best || better(p, pr, best, best_rep)) {
            kg_report_free(best_rep);
            best = p;
            best_rep = pr;
        } else {
            kg_report_free(pr);
        }
    }
    *cand = best;
    *rep = best_rep;
    if (!best) kg_oom(); /* every doctor report failed to allocate */
    if (best_rep->verdict == KGATE_BLOCKED)
        return kg_err_set(err, 0, "no backend can enforce this policy: %s", blocked);
    return 0;
}

kg_plugin *kg_select_backend(kg_registry *r, kg_host *host,
                             const kgate_policy *policy, const char *forced,
                             kgate_probe_depth depth, kgate_report **rep,
                             kg_error *err)
{
    kg_plugin *cand = NULL;
    if (kg_select_candidate(r, host, policy, forced, depth, &cand, rep, err) < 0)
        return NULL;
    return cand;
}
