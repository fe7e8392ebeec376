/* sbpl-eval.c: see sbpl-eval.h.  Written for the tests only: fixed limits,
 * loud failures, no attempt at speed. */
#include "sbpl-eval.h"

#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPS 8
#define MAX_FILTERS 64
#define MAX_RULES 1024

typedef enum fkind {
    F_SUBPATH,
    F_LITERAL,
    F_REGEX,
    F_GLOBAL_NAME,
    F_GLOBAL_NAME_PREFIX,
    F_REMOTE_IP,
    F_TARGET,
    F_SYSCTL_NAME,
    F_SYSCTL_NAME_PREFIX,
    F_EXTENSION, /* never held: the evaluator models a process without
                      sandbox extensions, the conservative reading */
    F_REQUIRE_ALL, /* every sub-filter matches */
    F_REMOTE_UNIX, /* (remote unix-socket [(path-literal P)]); value "" = any */
} fkind;

static const char *const fnames[] = {
    "subpath",
    "literal",
    "regex",
    "global-name",
    "global-name-prefix",
    "remote-ip",
    "target",
    "sysctl-name",
    "sysctl-name-prefix",
    "extension",
    "require-all",
    "remote-unix-socket",
};

typedef struct filter {
    fkind kind;
    char *value;
    regex_t re;
    int has_re;
    struct filter *subs; /* require-all */
    size_t n_subs;
} filter;

typedef struct rule {
    int allow;
    char *ops[MAX_OPS];
    size_t n_ops;
    filter filters[MAX_FILTERS];
    size_t n_filters;
} rule;

struct sbe_profile {
    rule rules[MAX_RULES];
    size_t n_rules;
    int version_seen;
};

/* ------------------------------------------------------------------------ */
/* Reader: s-expressions of symbols, strings, #"regex" strings and lists.    */

typedef enum ntype { N_SYM, N_STR, N_REGEX, N_LIST } ntype;

typedef struct node {
    ntype type;
    char *s; /* atoms */
    struct node **kids;
    size_t n_kids;
} node;

typedef struct reader {
    const char *p;
    char *err;
    size_t errlen;
    int failed;
} reader;

__attribute__((format(printf, 2, 3))) static void fail(reader *r, const char *fmt, ...)
{
    if (r->failed) return;
    r->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
}

static void node_free(node *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->n_kids; i++) node_free(n->kids[i]);
    free(n->kids);
    free(n->s);
    free(n);
}

static void skip_space(reader *r)
{
    for (;;) {
        while (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r') r->p++;
        if (*r->p != ';') return;
        while (*r->p && *r->p != '\n') r->p++;
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* After the opening quote. */
static char *read_string(reader *r)
{
    size_t cap = 64, len = 0;
    char *s = malloc(cap);
    for (;;) {
        char c = *r->p++;
        if (c == '\0') {
            fail(r, "unterminated string");
            free(s);
            return NULL;
        }
        if (c == '"') break;
        if (c == '\n') {
            fail(r, "raw newline inside a string");
            free(s);
            return NULL;
        }
        if (c == '\\') {
            char e = *r->p++;
            switch (e) {
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'x': {
                int h = hexval(r->p[0]), l = h < 0 ? -1 : hexval(r->p[1]);
                if (l < 0) {
                    fail(r, "bad \\x escape");
                    free(s);
                    return NULL;
                }
                c = (char)(h * 16 + l);
                r->p += 2;
                break;
            }
            default:
                fail(r, "unknown escape \\%c", e ? e : '0');
                free(s);
                return NULL;
            }
        }
        if (len + 2 > cap) s = realloc(s, cap *= 2);
        s[len++] = c;
    }
    s[len] = '\0';
    return s;
}

static node *read_node(reader *r, int depth)
{
    skip_space(r);
    if (depth > 16) {
        fail(r, "nesting too deep");
        return NULL;
    }
    node *n = calloc(1, sizeof *n);
    char c = *r->p;
    if (c == '(') {
        r->p++;
        n->type = N_LIST;
        for (;;) {
            skip_space(r);
            if (*r->p == ')') {
                r->p++;
                return n;
            }
            if (*r->p == '\0') {
                fail(r, "unbalanced '('");
                node_free(n);
                return NULL;
            }
            node *k = read_node(r, depth + 1);
            if (!k) {
                node_free(n);
                return NULL;
            }
            n->kids = realloc(n->kids, (n->n_kids + 1) * sizeof *n->kids);
            n->kids[n->n_kids++] = k;
        }
    }
    if (c == ')') {
        fail(r, "unexpected ')'");
        free(n);
        return NULL;
    }
    if (c == '"' || (c == '#' && r->p[1] == '"')) {
        n->type = c == '"' ? N_STR : N_REGEX;
        r->p += c == '"' ? 1 : 2;
        n->s = read_string(r);
        if (!n->s) {
            free(n);
            return NULL;
        }
        return n;
    }
    const char *start = r->p;
    while (*r->p && !strchr(" \t\r\n();\"", *r->p)) r->p++;
    if (r->p == start) {
        fail(r, "unexpected character 0x%02x", (unsigned char)*r->p);
        free(n);
        return NULL;
    }
    n->type = N_SYM;
    n->s = strndup(start, (size_t)(r->p - start));
    return n;
}

/* ------------------------------------------------------------------------ */
/* Interpreting the forms                                                    */

typedef struct pctx {
    reader *r;
    const char *const *params;
    size_t n_params;
} pctx;

static int is_sym(const node *n, const char *s)
{
    return n && n->type == N_SYM && strcmp(n->s, s) == 0;
}

/* A string argument: a literal or (param "NAME"). */
static char *string_arg(pctx *c, const node *n)
{
    if (n->type == N_STR) return strdup(n->s);
    if (n->type == N_LIST && n->n_kids == 2 && is_sym(n->kids[0], "param") &&
        n->kids[1]->type == N_STR) {
        size_t k = strlen(n->kids[1]->s);
        for (size_t i = 0; i < c->n_params; i++)
            if (strncmp(c->params[i], n->kids[1]->s, k) == 0 && c->params[i][k] == '=')
                return strdup(c->params[i] + k + 1);
        fail(c->r, "parameter %s not given", n->kids[1]->s);
        return NULL;
    }
    fail(c->r, "expected a string or (param ...)");
    return NULL;
}

static void filter_clear(filter *fl)
{
    free(fl->value);
    if (fl->has_re) regfree(&fl->re);
    for (size_t i = 0; i < fl->n_subs; i++) filter_clear(&fl->subs[i]);
    free(fl->subs);
}

static int read_filter(pctx *c, filter *fl, const node *f, int depth)
{
    memset(fl, 0, sizeof *fl);
    if (f->type != N_LIST || f->n_kids < 2 || f->kids[0]->type != N_SYM) {
        fail(c->r, "malformed filter");
        return -1;
    }
    const char *name = f->kids[0]->s;
    if (strcmp(name, "require-all") == 0) {
        if (depth > 0) {
            fail(c->r, "nested require-all");
            return -1;
        }
        fl->kind = F_REQUIRE_ALL;
        fl->value = strdup("");
        fl->subs = calloc(f->n_kids - 1, sizeof *fl->subs);
        for (size_t i = 1; i < f->n_kids; i++) {
            if (read_filter(c, &fl->subs[fl->n_subs], f->kids[i], depth + 1) < 0) return -1;
            fl->n_subs++;
        }
        return 0;
    }
    if (strcmp(name, "remote") == 0 && is_sym(f->kids[1], "unix-socket")) {
        /* (remote unix-socket) is every Unix socket; with (path-literal P)
         * exactly that path. */
        fl->kind = F_REMOTE_UNIX;
        if (f->n_kids == 2) {
            fl->value = strdup("");
        } else if (f->n_kids == 3 && f->kids[2]->type == N_LIST && f->kids[2]->n_kids == 2 &&
                   is_sym(f->kids[2]->kids[0], "path-literal")) {
            fl->value = string_arg(c, f->kids[2]->kids[1]);
            if (!fl->value) return -1;
            if (!fl->value[0]) {
                fail(c->r, "empty path-literal");
                return -1;
            }
        } else {
            fail(c->r, "only (remote unix-socket [(path-literal P)]) is known");
            return -1;
        }
    } else if (strcmp(name, "remote") == 0) {
        if (f->n_kids != 3 || !is_sym(f->kids[1], "ip") || f->kids[2]->type != N_STR) {
            fail(c->r, "only (remote ip \"HOST:PORT\") is known");
            return -1;
        }
        fl->kind = F_REMOTE_IP;
        fl->value = strdup(f->kids[2]->s);
    } else if (strcmp(name, "target") == 0) {
        if (f->n_kids != 2 || !is_sym(f->kids[1], "same-sandbox")) {
            fail(c->r, "only (target same-sandbox) is known");
            return -1;
        }
        fl->kind = F_TARGET;
        fl->value = strdup("same-sandbox");
    } else if (strcmp(name, "regex") == 0) {
        if (f->n_kids != 2 || f->kids[1]->type != N_REGEX) {
            fail(c->r, "regex wants one #\"...\" literal");
            return -1;
        }
        fl->kind = F_REGEX;
        fl->value = strdup(f->kids[1]->s);
        if (regcomp(&fl->re, fl->value, REG_EXTENDED | REG_NOSUB) != 0) {
            fail(c->r, "bad regex");
            return -1;
        }
        fl->has_re = 1;
    } else {
        size_t k;
        for (k = 0; k < sizeof fnames / sizeof fnames[0]; k++)
            if (strcmp(fnames[k], name) == 0) break;
        if (k == sizeof fnames / sizeof fnames[0] || k == F_REMOTE_IP || k == F_TARGET ||
            k == F_REGEX || k == F_REQUIRE_ALL || k == F_REMOTE_UNIX || f->n_kids != 2) {
            fail(c->r, "unknown filter (%s ...)", name);
            return -1;
        }
        fl->kind = (fkind)k;
        fl->value = string_arg(c, f->kids[1]);
        if (!fl->value) return -1;
    }
    return 0;
}

static int add_filter(pctx *c, rule *ru, const node *f)
{
    if (ru->n_filters == MAX_FILTERS) {
        fail(c->r, "too many filters");
        return -1;
    }
    /* Counted before reading so a half-read filter is still freed. */
    return read_filter(c, &ru->filters[ru->n_filters++], f, 0);
}

static int add_rule(pctx *c, sbe_profile *p, const node *n)
{
    if (p->n_rules == MAX_RULES) {
        fail(c->r, "too many rules");
        return -1;
    }
    rule *ru = &p->rules[p->n_rules];
    memset(ru, 0, sizeof *ru);
    ru->allow = is_sym(n->kids[0], "allow");
    p->n_rules++; /* counted now so sbe_free releases a half-built rule */
    for (size_t i = 1; i < n->n_kids; i++) {
        const node *k = n->kids[i];
        if (k->type == N_SYM) {
            if (ru->n_filters) {
                fail(c->r, "operation %s after a filter", k->s);
                return -1;
            }
            if (ru->n_ops == MAX_OPS) {
                fail(c->r, "too many operations");
                return -1;
            }
            ru->ops[ru->n_ops++] = strdup(k->s);
        } else if (add_filter(c, ru, k) < 0) {
            return -1;
        }
    }
    if (!ru->n_ops) {
        fail(c->r, "rule without an operation");
        return -1;
    }
    return 0;
}

sbe_profile *sbe_parse(const char *text, const char *const *params, size_t n_params, char *err,
                       size_t errlen)
{
    reader r = {.p = text, .err = err, .errlen = errlen};
    pctx c = {&r, params, n_params};
    sbe_profile *p = calloc(1, sizeof *p);
    for (;;) {
        skip_space(&r);
        if (!*r.p) break;
        node *n = read_node(&r, 0);
        if (!n) break;
        if (n->type != N_LIST || n->n_kids == 0) {
            fail(&r, "top level: expected a list");
        } else if (is_sym(n->kids[0], "version")) {
            if (n->n_kids != 2 || !is_sym(n->kids[1], "1") || p->version_seen || p->n_rules)
                fail(&r, "(version 1) must come first, once");
            p->version_seen = 1;
        } else if (is_sym(n->kids[0], "allow") || is_sym(n->kids[0], "deny")) {
            if (!p->version_seen)
                fail(&r, "rule before (version 1)");
            else
                add_rule(&c, p, n);
        } else {
            fail(&r, "unknown form");
        }
        node_free(n);
        if (r.failed) break;
    }
    if (!r.failed && !p->version_seen) fail(&r, "no (version 1)");
    if (r.failed) {
        sbe_free(p);
        return NULL;
    }
    return p;
}

void sbe_free(sbe_profile *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n_rules; i++) {
        rule *ru = &p->rules[i];
        for (size_t k = 0; k < ru->n_ops; k++) free(ru->ops[k]);
        for (size_t k = 0; k < ru->n_filters; k++) filter_clear(&ru->filters[k]);
    }
    free(p);
}

/* ------------------------------------------------------------------------ */
/* Evaluation                                                                */

static int op_matches(const char *pattern, const char *op)
{
    if (strcmp(pattern, "default") == 0) return 1;
    size_t n = strlen(pattern);
    if (n && pattern[n - 1] == '*') return strncmp(pattern, op, n - 1) == 0;
    return strcmp(pattern, op) == 0;
}

static int is_loopback(const char *host)
{
    return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0;
}

static int ip_matches(const char *pattern, const char *addr)
{
    char host[128], port[16];
    const char *colon;
    if (addr[0] == '[') {
        const char *end = strchr(addr, ']');
        if (!end || end[1] != ':') return 0;
        snprintf(host, sizeof host, "%.*s", (int)(end - addr - 1), addr + 1);
        colon = end + 1;
    } else {
        colon = strrchr(addr, ':');
        if (!colon) return 0;
        snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
    }
    snprintf(port, sizeof port, "%s", colon + 1);
    const char *pc = strrchr(pattern, ':');
    if (!pc) return 0;
    size_t hl = (size_t)(pc - pattern);
    int host_ok = (hl == 1 && pattern[0] == '*') ||
                  (hl == 9 && strncmp(pattern, "localhost", 9) == 0 && is_loopback(host));
    int port_ok = strcmp(pc + 1, "*") == 0 || strcmp(pc + 1, port) == 0;
    return host_ok && port_ok;
}

static int filter_matches(const filter *f, sbe_kind kind, const char *v)
{
    size_t n = strlen(f->value);
    switch (f->kind) {
    case F_SUBPATH:
        if (kind != SBE_PATH) return 0;
        if (strcmp(f->value, "/") == 0) return v[0] == '/';
        return strncmp(f->value, v, n) == 0 && (v[n] == '\0' || v[n] == '/');
    case F_LITERAL: return kind == SBE_PATH && strcmp(f->value, v) == 0;
    case F_REGEX: return kind == SBE_PATH && regexec(&f->re, v, 0, NULL, 0) == 0;
    case F_GLOBAL_NAME: return kind == SBE_MACH && strcmp(f->value, v) == 0;
    case F_GLOBAL_NAME_PREFIX: return kind == SBE_MACH && strncmp(f->value, v, n) == 0;
    case F_REMOTE_IP: return kind == SBE_ADDR && ip_matches(f->value, v);
    case F_TARGET: return kind == SBE_TARGET && strcmp(f->value, v) == 0;
    case F_SYSCTL_NAME: return kind == SBE_SYSCTL && strcmp(f->value, v) == 0;
    case F_SYSCTL_NAME_PREFIX: return kind == SBE_SYSCTL && strncmp(f->value, v, n) == 0;
    case F_EXTENSION: return 0;
    case F_REMOTE_UNIX: return kind == SBE_UNIX && (n == 0 || strcmp(f->value, v) == 0);
    case F_REQUIRE_ALL:
        for (size_t i = 0; i < f->n_subs; i++)
            if (!filter_matches(&f->subs[i], kind, v)) return 0;
        return f->n_subs > 0;
    }
    return 0;
}

int sbe_allows(const sbe_profile *p, const char *op, sbe_kind kind, const char *value)
{
    int verdict = 0; /* nothing matched: Seatbelt denies */
    for (size_t i = 0; i < p->n_rules; i++) {
        const rule *ru = &p->rules[i];
        int op_ok = 0;
        for (size_t k = 0; k < ru->n_ops && !op_ok; k++) op_ok = op_matches(ru->ops[k], op);
        if (!op_ok) continue;
        int f_ok = ru->n_filters == 0;
        for (size_t k = 0; k < ru->n_filters && !f_ok; k++)
            f_ok = filter_matches(&ru->filters[k], kind, value ? value : "");
        if (f_ok) verdict = ru->allow;
    }
    return verdict;
}

size_t sbe_rule_count(const sbe_profile *p) { return p->n_rules; }

static void put(char **out, size_t *len, size_t *cap, char ch)
{
    if (*len + 8 > *cap) *out = realloc(*out, *cap *= 2);
    (*out)[(*len)++] = ch;
    (*out)[*len] = '\0';
}

/* Escapes everything that could make two different rules print alike. */
static void dump_str(char **out, size_t *len, size_t *cap, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x21 || ch > 0x7e || strchr("\\=[]", ch)) {
            char hex[8];
            snprintf(hex, sizeof hex, "\\x%02x", ch);
            for (char *h = hex; *h; h++) put(out, len, cap, *h);
        } else {
            put(out, len, cap, (char)ch);
        }
    }
}

static void dump_filter(char **out, size_t *len, size_t *cap, const filter *f)
{
    dump_str(out, len, cap, fnames[f->kind]);
    if (f->kind == F_REQUIRE_ALL) {
        put(out, len, cap, '[');
        for (size_t i = 0; i < f->n_subs; i++) {
            if (i) put(out, len, cap, ' ');
            dump_filter(out, len, cap, &f->subs[i]);
        }
        put(out, len, cap, ']');
        return;
    }
    put(out, len, cap, '=');
    dump_str(out, len, cap, f->value);
}

char *sbe_escape(const char *s)
{
    size_t cap = 64, len = 0;
    char *out = malloc(cap);
    out[0] = '\0';
    dump_str(&out, &len, &cap, s);
    return out;
}

char *sbe_dump(const sbe_profile *p)
{
    size_t cap = 256, len = 0;
    char *out = malloc(cap);
    out[0] = '\0';
    for (size_t i = 0; i < p->n_rules; i++) {
        const rule *ru = &p->rules[i];
        dump_str(&out, &len, &cap, ru->allow ? "allow" : "deny");
        for (size_t k = 0; k < ru->n_ops; k++) {
            put(&out, &len, &cap, ' ');
            dump_str(&out, &len, &cap, ru->ops[k]);
        }
        for (size_t k = 0; k < ru->n_filters; k++) {
            put(&out, &len, &cap, ' ');
            dump_filter(&out, &len, &cap, &ru->filters[k]);
        }
        put(&out, &len, &cap, '\n');
    }
    return out;
}
