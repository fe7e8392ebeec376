/* auditread.c: one audit record back from its JSON line (auditread.h).
 *
 * The grammar is what audit.c writes and nothing more: {"key":value,...}
 * with value a string, an integer, true, false, null or an array of
 * strings.  Unknown keys are read and skipped, so a record from a later
 * kgate still reads.  Anything else fails the record: `kgate audit`
 * counts it as unreadable rather than guess. */
#include "auditread.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "oom.h"

typedef struct rd {
    const char *p, *end;
} rd;

static bool eat(rd *r, char c)
{
    if (r->p < r->end && *r->p == c) {
        r->p++;
        return true;
    }
    return false;
}

static int hex4(rd *r, unsigned *v)
{
    if (r->end - r->p < 4) return -1;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *r->p++;
        unsigned d = (c >= '0' && c <= '9')   ? (unsigned)(c - '0')
                     : (c >= 'a' && c <= 'f') ? (unsigned)(c - 'a' + 10)
                     : (c >= 'A' && c <= 'F') ? (unsigned)(c - 'A' + 10)
                                              : 16;
        if (d > 15) return -1;
        *v = *v * 16 + d;
    }
    return 0;
}

/* A code point as UTF-8; U+DC80..U+DCFF is the raw byte it stands for
 * (audit.c's surrogateescape). */
static void put_code(UT_string *u, unsigned cp)
{
    char b[4];
    size_t n;
    if (cp >= 0xdc80 && cp <= 0xdcff)
        b[0] = (char)(cp - 0xdc00), n = 1;
    else if (cp < 0x80)
        b[0] = (char)cp, n = 1;
    else if (cp < 0x800)
        b[0] = (char)(0xc0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
    else {
        b[0] = (char)(0xe0 | cp >> 12);
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    }
    utstring_bincpy(u, b, n);
}

static int escape(rd *r, UT_string *u)
{
    if (r->p >= r->end) return -1;
    char c = *r->p++, out;
    switch (c) {
    case '"':
    case '\\':
    case '/': out = c; break;
    case 'n': out = '\n'; break;
    case 't': out = '\t'; break;
    case 'r': out = '\r'; break;
    case 'b': out = '\b'; break;
    case 'f': out = '\f'; break;
    case 'u': {
        unsigned cp;
        if (hex4(r, &cp) < 0 || cp == 0) return -1;
        put_code(u, cp);
        return 0;
    }
    default: return -1;
    }
    utstring_bincpy(u, &out, 1);
    return 0;
}

/* A string; *s is a new C string (a NUL inside refuses the record). */
static int str(rd *r, char **s)
{
    if (!eat(r, '"')) return -1;
    UT_string *u;
    utstring_new(u);
    int ok = -1;
    while (r->p < r->end) {
        char c = *r->p++;
        if (c == '"') {
            ok = 0;
            break;
        }
        if ((unsigned char)c < 0x20 || (c == '\\' && escape(r, u) < 0)) break;
        if (c != '\\') utstring_bincpy(u, &c, 1);
    }
    if (ok == 0) {
        *s = strdup(utstring_body(u));
        if (!*s) kg_oom();
    }
    utstring_free(u);
    return ok;
}

static int num(rd *r, long long *v)
{
    char *e;
    errno = 0;
    *v = strtoll(r->p, &e, 10);
    if (e == r->p || e > r->end || errno) return -1;
    r->p = e;
    return 0;
}

static int strarray(rd *r, kg_strv *v)
{
    if (!eat(r, '[')) return -1;
    if (eat(r, ']')) return 0;
    do {
        char *s;
        if (str(r, &s) < 0) return -1;
        kg_strv_push(v, s);
        free(s);
    } while (eat(r, ','));
    return eat(r, ']') ? 0 : -1;
}

static int word(rd *r, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n) != 0) return -1;
    r->p += n;
    return 0;
}

/* A value of a key this reader does not know. */
static int skip(rd *r)
{
    long long n;
    char *s;
    if (r->p >= r->end) return -1;
    if (*r->p == '"') {
        if (str(r, &s) < 0) return -1;
        free(s);
        return 0;
    }
    if (*r->p == '[') {
        kg_strv *v = kg_strv_new();
        int x = strarray(r, v);
        kg_strv_free(v);
        return x;
    }
    if (*r->p == 't') return word(r, "true");
    if (*r->p == 'f') return word(r, "false");
    if (*r->p == 'n') return word(r, "null");
    return num(r, &n);
}

static int field(rd *r, const char *key, kg_audit_rec *rec)
{
    static const struct {
        const char *k;
        size_t off;
    } strs[] = {
        {"time", offsetof(kg_audit_rec, time)},       {"kind", offsetof(kg_audit_rec, kind)},
        {"run", offsetof(kg_audit_rec, run)},         {"cwd", offsetof(kg_audit_rec, cwd)},
        {"backend", offsetof(kg_audit_rec, backend)}, {"network", offsetof(kg_audit_rec, network)},
        {"verdict", offsetof(kg_audit_rec, verdict)}, {"name", offsetof(kg_audit_rec, name)},
        {"addr", offsetof(kg_audit_rec, addr)},       {"reason", offsetof(kg_audit_rec, reason)},
    };
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
        if (strcmp(key, strs[i].k) != 0) continue;
        char **slot = (char **)((char *)rec + strs[i].off);
        free(*slot);
        *slot = NULL;
        return str(r, slot);
    }
    if (strcmp(key, "argv") == 0) return strarray(r, rec->argv);
    if (strcmp(key, "pid") == 0) return num(r, &rec->pid);
    if (strcmp(key, "port") == 0) return num(r, &rec->port);
    if (strcmp(key, "duration_ms") == 0) return num(r, &rec->duration_ms);
    if (strcmp(key, "exit") == 0) {
        rec->has_exit = true;
        return num(r, &rec->exit_status);
    }
    if (strcmp(key, "recovered") == 0) {
        rec->recovered = word(r, "true") == 0;
        return rec->recovered ? 0 : word(r, "false");
    }
    return skip(r);
}

int kg_audit_rec_parse(const char *line, size_t len, kg_audit_rec *rec)
{
    *rec = (kg_audit_rec){.argv = kg_strv_new()};
    rd r = {line, line + len};
    if (!eat(&r, '{')) return -1;
    do {
        char *key;
        if (str(&r, &key) < 0) return -1;
        int x = eat(&r, ':') ? field(&r, key, rec) : -1;
        free(key);
        if (x < 0) return -1;
    } while (eat(&r, ','));
    if (!eat(&r, '}') || r.p != r.end) return -1;
    return rec->time && rec->kind ? 0 : -1;
}

void kg_audit_rec_clear(kg_audit_rec *rec)
{
    char **strs[] = {&rec->time,    &rec->kind,    &rec->run,  &rec->cwd,  &rec->backend,
                     &rec->network, &rec->verdict, &rec->name, &rec->addr, &rec->reason};
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
        free(*strs[i]);
        *strs[i] = NULL;
    }
    kg_strv_free(rec->argv);
    rec->argv = NULL;
}
