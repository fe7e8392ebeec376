/* netevents.c: a backend's event records -> audit lines and the summary.
 *
 * The records come from the backend's helpers (a resolver, a packet
 * filter's log reader), processes that read what the program sends: the
 * parser takes nothing on trust.  A record is used whole or not at all;
 * what it says about names and addresses goes to the audit log through the
 * JSON escaper and to the terminal through kg_say, never raw. */
#include "netevents.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "kgate/kgate-plugin.h"

/* Lines of kind net one run may add to the audit log: a program that
 * looks up names in a loop must not fill the user's disk.  What is over
 * is counted in one last line. */
#define KG_NET_AUDIT_MAX 10000
/* Distinct names and connections remembered for the summary's counts;
 * past this every new record counts as a new one. */
#define KG_NET_TRACK 4096

typedef struct seen {
    char *key;
    UT_hash_handle hh;
} seen;

typedef struct tally {
    seen *set;
    size_t n_set, distinct;
    char *shown[KG_NET_SHOWN];
} tally;

struct kg_netlog {
    kg_audit_log *log; /* not owned; NULL: no audit lines */
    const kg_audit_event *base;
    char part[KGATE_EVENT_MAX];
    size_t part_len;
    bool overlong; /* the current line is past KGATE_EVENT_MAX: skip to \n */
    size_t refused, bad, logged, unlogged, audit_failed;
    bool finished;
    tally names, conns;
    kg_events *events; /* not owned; NULL: no channel */
};

/* ------------------------------------------------------------------------ */
/* One record                                                               */
/* ------------------------------------------------------------------------ */

static bool name_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '*' || c == '_' || c == '-';
}

/* The name field: "-", or bytes of the alphabet and \DDD escapes. */
static int parse_name(const char *s, size_t n, char *out, size_t outlen)
{
    if (n == 1 && s[0] == '-') {
        out[0] = '\0';
        return 0;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c;
        if (s[i] == '\\') {
            if (n - i < 4) return -1; /* a backslash and three digits */
            unsigned v = 0;
            for (size_t k = 1; k <= 3; k++) {
                if (s[i + k] < '0' || s[i + k] > '9') return -1;
                v = v * 10 + (unsigned)(s[i + k] - '0');
            }
            /* NUL would cut the name short in every later use. */
            if (v == 0 || v > 255) return -1;
            c = (unsigned char)v;
            i += 3;
        } else if (name_byte(s[i])) {
            c = (unsigned char)s[i];
        } else {
            return -1;
        }
        if (o + 1 >= outlen) return -1;
        out[o++] = (char)c;
    }
    if (o == 0) return -1;
    out[o] = '\0';
    return 0;
}

static int parse_addr(const char *s, size_t n, char *out, size_t outlen)
{
    if (n == 1 && s[0] == '-') {
        out[0] = '\0';
        return 0;
    }
    char tmp[INET6_ADDRSTRLEN];
    if (n == 0 || n >= sizeof tmp) return -1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    unsigned char bin[16];
    if (inet_pton(AF_INET, tmp, bin) == 1)
        return inet_ntop(AF_INET, bin, out, (socklen_t)outlen) ? 0 : -1;
    if (inet_pton(AF_INET6, tmp, bin) == 1)
        return inet_ntop(AF_INET6, bin, out, (socklen_t)outlen) ? 0 : -1;
    return -1;
}

static int parse_port(const char *s, size_t n, unsigned *out)
{
    if (n == 0 || n > 5 || (n > 1 && s[0] == '0')) return -1;
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v > 65535) return -1;
    *out = v;
    return 0;
}

/* The reasons a record may give (kgate-plugin.h), each with what the
 * caller's channel is told.  An unknown word is an unreadable record: a
 * sentence is never made of what a backend's helper wrote. */
static const char *const net_reasons[] = {"unlisted", "private", "never", "unanswered", "listen"};

static int parse_reason(const char *s, size_t n, char *out, size_t outlen)
{
    for (size_t i = 0; i < sizeof net_reasons / sizeof *net_reasons; i++) {
        size_t l = strlen(net_reasons[i]);
        if (n == l && memcmp(s, net_reasons[i], l) == 0 && l < outlen) {
            memcpy(out, s, l);
            out[l] = '\0';
            return 0;
        }
    }
    return -1;
}

int kg_net_event_parse(const char *line, size_t len, kg_net_event *out)
{
    /* Five fields, or six with a reason, each separated by one space. */
    const char *f[6];
    size_t fl[6], nf = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] != ' ') continue;
        if (nf == 6) return -1;
        f[nf] = line + start;
        fl[nf] = i - start;
        if (fl[nf] == 0) return -1;
        nf++;
        start = i + 1;
    }
    if (nf != 5 && nf != 6) return -1;
    if (fl[0] != 3 || memcmp(f[0], "net", 3) != 0) return -1;
    if (fl[1] >= sizeof out->verdict) return -1;
    for (size_t i = 0; i < fl[1]; i++)
        if (f[1][i] < 'a' || f[1][i] > 'z') return -1;
    memcpy(out->verdict, f[1], fl[1]);
    out->verdict[fl[1]] = '\0';
    if (parse_name(f[2], fl[2], out->name, sizeof out->name) < 0) return -1;
    if (parse_addr(f[3], fl[3], out->addr, sizeof out->addr) < 0) return -1;
    if (parse_port(f[4], fl[4], &out->port) < 0) return -1;
    out->reason[0] = '\0';
    if (nf == 6 && parse_reason(f[5], fl[5], out->reason, sizeof out->reason) < 0) return -1;
    /* Nothing named and nothing addressed: not a report of anything. */
    if (!out->name[0] && !out->addr[0]) return -1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* A run's records                                                          */
/* ------------------------------------------------------------------------ */

kg_netlog *kg_netlog_new(kg_audit_log *log, const kg_audit_event *base)
{
    kg_netlog *l = calloc(1, sizeof *l);
    if (!l) kg_oom();
    l->log = log;
    l->base = base;
    return l;
}

static void tally_free(tally *t)
{
    seen *e, *tmp;
    HASH_ITER(hh, t->set, e, tmp)
    {
        HASH_DEL(t->set, e);
        free(e->key);
        free(e);
    }
    for (size_t i = 0; i < KG_NET_SHOWN; i++) free(t->shown[i]);
}

void kg_netlog_free(kg_netlog *l)
{
    if (!l) return;
    tally_free(&l->names);
    tally_free(&l->conns);
    free(l);
}

/* true when key was not seen before (or can no longer be told apart: past
 * KG_NET_TRACK distinct keys, each counts as new). */
static bool tally_add(tally *t, const char *key)
{
    seen *e = NULL;
    HASH_FIND_STR(t->set, key, e);
    if (e) return false;
    if (t->distinct < KG_NET_SHOWN) {
        t->shown[t->distinct] = strdup(key);
        if (!t->shown[t->distinct]) kg_oom();
    }
    t->distinct++;
    if (t->n_set >= KG_NET_TRACK) return true;
    e = calloc(1, sizeof *e);
    if (!e) kg_oom();
    e->key = strdup(key);
    if (!e->key) kg_oom();
    HASH_ADD_KEYPTR(hh, t->set, e->key, strlen(e->key), e);
    t->n_set++;
    return true;
}

/* Why a refusal happened, in the words the caller's channel and the audit
 * line carry: from the record's reason, never guessed from its shape when
 * the backend said (issue 43: a listed name whose answer was private used
 * to be reported as "not in allow_hosts"). */
static const char *name_why(const kg_net_event *e)
{
    if (strcmp(e->reason, "unlisted") == 0)
        return "the name is not in allow_hosts, so the box's resolver does not ask for it";
    if (strcmp(e->reason, "private") == 0)
        return "the name is in allow_hosts, but its answer was a private, loopback or "
               "link-local address, which the box's resolver empties (a DNS rebinding "
               "guard); an address entry in allow_hosts (ADDR:PORT) would allow it";
    return "the box's resolver did not answer it";
}

static const char *conn_why(const kg_net_event *e)
{
    if (strcmp(e->reason, "never") == 0)
        return "the address is this host's, a metadata service's or another that no "
               "answer may open; only an address entry in allow_hosts allows it";
    if (strcmp(e->reason, "unanswered") == 0)
        return "it is not an address and port that a name in allow_hosts resolved to";
    if (strcmp(e->reason, "listen") == 0)
        return "a server in this box listens only on loopback, so that nothing outside "
               "connects in";
    return "the box's packet filter refused it";
}

static const char *net_code(const kg_net_event *e)
{
    if (strcmp(e->reason, "listen") == 0) return "net_listen_refused";
    if (!e->addr[0])
        return strcmp(e->reason, "private") == 0 ? "net_answer_private" : "net_name_refused";
    return strcmp(e->reason, "never") == 0 ? "net_address_never" : "net_connect_refused";
}

/* The caller's channel hears of each distinct refusal once: a program that
 * retries a name a thousand times is one thing for a harness to explain. */
static void tell_name(kg_netlog *l, const kg_net_event *e)
{
    char what[600];
    snprintf(what, sizeof what, "Looking up %s was refused: %s", e->name[0] ? e->name : "a name",
             name_why(e));
    kg_events_blocked(l->events, &(kg_event_block){.code = net_code(e),
                                                   .resource_type = "network",
                                                   .host = e->name[0] ? e->name : NULL,
                                                   .operation = "resolve",
                                                   .rule_key = "allow_hosts",
                                                   .description = what});
}

static void tell_conn(kg_netlog *l, const kg_net_event *e, const char *key)
{
    char what[800];
    int listen = strcmp(e->reason, "listen") == 0;
    snprintf(what, sizeof what, "%s %s was refused: %s",
             listen ? "Listening on" : "A connection to", key, conn_why(e));
    kg_events_blocked(l->events, &(kg_event_block){.code = net_code(e),
                                                   .resource_type = "network",
                                                   .host = e->name[0] ? e->name : NULL,
                                                   .addr = e->addr,
                                                   .port = e->port,
                                                   .operation = listen ? "listen" : "connect",
                                                   .rule_key = "allow_hosts",
                                                   .description = what});
}

void kg_netlog_set_events(kg_netlog *l, kg_events *events) { l->events = events; }

static void write_line(kg_netlog *l, kg_audit_event *ev)
{
    if (!l->log) return;
    kg_error err = {0};
    if (kg_audit_append(l->log, ev, &err) < 0) l->audit_failed++;
}

static void record(kg_netlog *l, const char *line, size_t len)
{
    kg_net_event e;
    if (kg_net_event_parse(line, len, &e) < 0) {
        l->bad++;
        return;
    }
    if (l->logged < KG_NET_AUDIT_MAX) {
        kg_audit_event ev = *l->base;
        ev.kind = "net";
        ev.verdict = e.verdict;
        ev.name = e.name[0] ? e.name : NULL;
        ev.addr = e.addr[0] ? e.addr : NULL;
        ev.port = e.port;
        /* Only a reason the backend gave: the audit line says what was
         * reported, not what kgate supposes. */
        if (e.reason[0]) ev.reason = e.addr[0] ? conn_why(&e) : name_why(&e);
        write_line(l, &ev);
        l->logged++;
    } else {
        l->unlogged++;
    }
    if (strcmp(e.verdict, "refused") != 0) return;
    l->refused++;
    if (!e.addr[0]) {
        if (tally_add(&l->names, e.name) && l->events) tell_name(l, &e);
        return;
    }
    char key[sizeof e.addr + sizeof e.name + 16];
    bool v6 = strchr(e.addr, ':') != NULL;
    int n = e.port ? snprintf(key, sizeof key, v6 ? "[%s]:%u" : "%s:%u", e.addr, e.port)
                   : snprintf(key, sizeof key, "%s", e.addr);
    if (e.name[0] && n > 0 && (size_t)n < sizeof key)
        snprintf(key + n, sizeof key - (size_t)n, " (%s)", e.name);
    if (tally_add(&l->conns, key) && l->events) tell_conn(l, &e, key);
}

void kg_netlog_feed(kg_netlog *l, const char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (c == '\n') {
            if (l->overlong)
                l->bad++;
            else
                record(l, l->part, l->part_len);
            l->part_len = 0;
            l->overlong = false;
            continue;
        }
        if (l->overlong) continue;
        /* KGATE_EVENT_MAX counts the newline. */
        if (l->part_len + 1 >= KGATE_EVENT_MAX) {
            l->overlong = true;
            continue;
        }
        l->part[l->part_len++] = c;
    }
}

void kg_netlog_finish(kg_netlog *l)
{
    if (l->finished) return;
    l->finished = true;
    if (l->part_len || l->overlong) l->bad++;
    l->part_len = 0;
    l->overlong = false;
    if (l->unlogged || l->bad) {
        char reason[160] = "";
        if (l->unlogged)
            snprintf(reason, sizeof reason,
                     "%zu records over the limit of %d per run not "
                     "logged%s",
                     l->unlogged, KG_NET_AUDIT_MAX, l->bad ? "; " : "");
        if (l->bad)
            snprintf(reason + strlen(reason), sizeof reason - strlen(reason),
                     "%zu unreadable records from the backend ignored", l->bad);
        kg_audit_event ev = *l->base;
        ev.kind = "net";
        ev.reason = reason;
        write_line(l, &ev);
    }
}

size_t kg_netlog_refused(const kg_netlog *l) { return l->refused; }
size_t kg_netlog_bad(const kg_netlog *l) { return l->bad; }

static void tally_print(const tally *t, const char *one, const char *many, UT_string *out)
{
    utstring_printf(out, "%zu %s: ", t->distinct, t->distinct == 1 ? one : many);
    size_t k = t->distinct < KG_NET_SHOWN ? t->distinct : KG_NET_SHOWN;
    for (size_t i = 0; i < k; i++) utstring_printf(out, "%s%s", i ? ", " : "", t->shown[i]);
    if (t->distinct > k) utstring_printf(out, " and %zu more", t->distinct - k);
}

bool kg_netlog_summary(const kg_netlog *l, UT_string *out)
{
    bool any = false;
    if (l->names.distinct || l->conns.distinct) {
        utstring_printf(out, "refused ");
        if (l->names.distinct) tally_print(&l->names, "name", "names", out);
        if (l->names.distinct && l->conns.distinct) utstring_printf(out, "; ");
        if (l->conns.distinct) tally_print(&l->conns, "connection", "connections", out);
        any = true;
    }
    if (l->bad) {
        utstring_printf(out, "%s%zu unreadable event record%s from the backend ignored",
                        any ? "; " : "", l->bad, l->bad == 1 ? "" : "s");
        any = true;
    }
    if (l->audit_failed) {
        utstring_printf(out, "%s%zu net audit line%s could not be written", any ? "; " : "",
                        l->audit_failed, l->audit_failed == 1 ? "" : "s");
        any = true;
    }
    return any;
}
