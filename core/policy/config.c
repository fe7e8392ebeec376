/* config.c: one YAML file into one config layer.
 *
 * The file is untrusted (a project's .kgate.yaml comes with the repository),
 * so the parser is deliberately narrow: libyaml's event API, a mapping of
 * known keys to scalars or flat lists of scalars, and nothing else.  No
 * document tree is built, so nesting depth costs nothing; anchors, aliases
 * and tags are refused outright (billion laughs needs aliases); the input is
 * capped at 1 MiB and each scalar at 4 KiB.  Every error names
 * file:line:column, 1-based, where column counts characters as libyaml does. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "msg.h"
#include "oom.h" /* uthash, utarray, utstring */
#include "kgate/kgate-hostspec.h"
#include <yaml.h>

#define KG_CONFIG_MAX_BYTES (1024 * 1024)
#define KG_CONFIG_MAX_SCALAR 4096

/* What an entry of a list key may look like, checked at parse time so that
 * no later stage (an SBPL profile, an iptables rule) sees a surprise. */
typedef enum entry_kind {
    ENTRY_HOST, /* kgate-hostspec.h: [*.]name[:port] or IPv4, stored lowercase */
    ENTRY_PATH, /* any printable text; resolved later by paths.c */
    ENTRY_WORD, /* command names, prefixes: printable, no white space */
    ENTRY_ENV, /* a variable name or a shell glob over names */
    ENTRY_MACH, /* a mach service name: [A-Za-z0-9._-] */
} entry_kind;

static const struct {
    const char *name;
    entry_kind kind;
} list_keys[KG_N_LIST_KEYS] = {
    [KG_KEY_ALLOW_HOSTS] = {"allow_hosts", ENTRY_HOST},
    [KG_KEY_ALLOW_PATHS] = {"allow_paths", ENTRY_PATH},
    [KG_KEY_READ_PATHS] = {"read_paths", ENTRY_PATH},
    [KG_KEY_DENY_READ] = {"deny_read", ENTRY_PATH},
    [KG_KEY_DENY_EXEC] = {"deny_exec", ENTRY_PATH},
    [KG_KEY_MASK_PREFIXES] = {"mask_prefixes", ENTRY_WORD},
    [KG_KEY_PASS_ENV] = {"pass_env", ENTRY_ENV},
    [KG_KEY_DENY_ENV] = {"deny_env", ENTRY_ENV},
    [KG_KEY_PROTECT_PATHS] = {"protect_paths", ENTRY_PATH},
    [KG_KEY_UNPROTECT_PATHS] = {"unprotect_paths", ENTRY_PATH},
    [KG_KEY_ALLOW_SOCKETS] = {"allow_sockets", ENTRY_PATH},
    [KG_KEY_MACOS_ALLOW_MACH] = {"macos_allow_mach", ENTRY_MACH},
};

/* The comment kg_config_write puts above each key, in file order. */
static const char *const key_comments[KG_N_LIST_KEYS] = {
    [KG_KEY_ALLOW_HOSTS] =
        "hosts reachable when network is restricted: name, \"*.name\", name:port",
    [KG_KEY_ALLOW_PATHS] = "extra read-write paths beside the project",
    [KG_KEY_READ_PATHS] = "extra read-only paths (for example ~/.gitconfig)",
    [KG_KEY_DENY_READ] = "hidden inside the sandbox; relative paths are project-relative",
    [KG_KEY_DENY_EXEC] = "refused before exec: by name, by path, or a copy of the same file",
    [KG_KEY_MASK_PREFIXES] = "secret prefixes masked in output, beside the built-in ones",
    [KG_KEY_PASS_ENV] = "environment variables passed in although their names look secret",
    [KG_KEY_DENY_ENV] = "environment variables never passed in, beside the built-in patterns",
    [KG_KEY_PROTECT_PATHS] = "read-only although inside a writable root; project-relative",
    [KG_KEY_UNPROTECT_PATHS] = "built-in protected paths to leave writable (.git/hooks, ...)",
    [KG_KEY_ALLOW_SOCKETS] = "host Unix sockets the program may connect to",
    [KG_KEY_MACOS_ALLOW_MACH] = "macOS mach services allowed again (strict profile)",
};

const char *kg_list_key_name(kg_list_key k)
{
    return (unsigned)k < KG_N_LIST_KEYS ? list_keys[k].name : "?";
}

const char *kg_network_name(kgate_network n)
{
    switch (n) {
    case KGATE_NET_OFF: return "off";
    case KGATE_NET_RESTRICTED: return "restricted";
    case KGATE_NET_OPEN: return "open";
    }
    return "?";
}

static const char *profile_name(kgate_macos_profile p)
{
    return p == KGATE_MACOS_STRICT ? "strict" : "permissive";
}

static kg_config *config_new(const char *file)
{
    kg_config *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->file = strdup(file ? file : "");
    for (int k = 0; k < KG_N_LIST_KEYS; k++) c->lists[k] = kg_strv_new();
    c->network = KGATE_NET_RESTRICTED;
    c->macos_profile = KGATE_MACOS_PERMISSIVE;
    c->max_processes = KG_DEFAULT_MAX_PROCESSES;
    return c;
}

void kg_config_free(kg_config *c)
{
    if (!c) return;
    free(c->file);
    for (int k = 0; k < KG_N_LIST_KEYS; k++) {
        kg_strv_free(c->lists[k]);
        free(c->lines[k]);
    }
    free(c);
}

kg_config *kg_config_defaults(void)
{
    kg_config *c = config_new("(defaults)");
    if (!c) return NULL;
    c->has_network = true;
    c->network = KGATE_NET_RESTRICTED;
    c->has_macos_profile = true;
    c->macos_profile = KGATE_MACOS_PERMISSIVE;
    c->has_max_processes = true;
    c->max_processes = KG_DEFAULT_MAX_PROCESSES;
    for (int k = 0; k < KG_N_LIST_KEYS; k++) c->has[k] = true;
    kg_strv_push(c->lists[KG_KEY_DENY_READ], ".env");
    kg_strv_push(c->lists[KG_KEY_DENY_EXEC], "curl");
    kg_strv_push(c->lists[KG_KEY_DENY_EXEC], "wget");
    return c;
}

/* ------------------------------------------------------------------------ */
/* Validation of single values                                              */
/* ------------------------------------------------------------------------ */

bool kg_host_entry_norm(const char *entry, char norm[KG_HOST_ENTRY_MAX], const char **why)
{
    const char *dummy;
    if (!why) why = &dummy;
    kgate_hostspec h;
    if (kgate_hostspec_parse(entry, &h, why) < 0) return false;
    /* Copied, not printed: a list of 10,000 entries is normalised on
     * every launch.  "*." + at most 253 + ":65535" fits (config.h). */
    size_t n = 0, len = strnlen(h.name, sizeof h.name - 1);
    if (h.wildcard) {
        memcpy(norm, "*.", 2);
        n = 2;
    }
    memcpy(norm + n, h.name, len);
    n += len;
    if (h.port) {
        char digits[8];
        size_t d = 0;
        for (unsigned p = h.port; p; p /= 10) digits[d++] = (char)('0' + p % 10);
        norm[n++] = ':';
        while (d) norm[n++] = digits[--d];
    }
    norm[n] = '\0';
    return true;
}

bool kg_host_name_valid(const char *entry)
{
    char norm[KG_HOST_ENTRY_MAX];
    return kg_host_entry_norm(entry, norm, NULL);
}

/* Whether s may be an entry of the given kind; *why says what is wrong.
 * A host entry's normal form goes into norm (KG_HOST_ENTRY_MAX bytes),
 * so that a list's entries are each parsed once. */
static bool entry_valid(entry_kind kind, const char *s, const char **why, char *norm)
{
    if (!*s) {
        *why = "empty entry";
        return false;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            *why = "control character in entry";
            return false;
        }
    }
    switch (kind) {
    case ENTRY_HOST: return kg_host_entry_norm(s, norm, why);
    case ENTRY_PATH: return true;
    case ENTRY_WORD:
        for (const char *p = s; *p; p++)
            if (*p == ' ') {
                *why = "white space in entry";
                return false;
            }
        return true;
    case ENTRY_ENV:
        for (const char *p = s; *p; p++) {
            unsigned char c = (unsigned char)*p;
            if (!isalnum(c) && !strchr("_*?[]!-", c)) {
                *why = "not a variable name or a glob over names";
                return false;
            }
        }
        return true;
    case ENTRY_MACH:
        for (const char *p = s; *p; p++) {
            unsigned char c = (unsigned char)*p;
            if (!isalnum(c) && !strchr("._-", c)) {
                *why = "not a mach service name ([A-Za-z0-9._-])";
                return false;
            }
        }
        return true;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct parse_ctx {
    const char *name;
    const char *buf;
    size_t len;
    kg_error *err;
    kg_config *c;
    bool seen_network, seen_profile, seen_max_processes, seen_audit_sink;
    bool quiet; /* a project file: no message quotes its text */
} parse_ctx;

static int err_at(parse_ctx *x, yaml_mark_t m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int err_at(parse_ctx *x, yaml_mark_t m, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return kg_err_set(x->err, EINVAL, "%s:%zu:%zu: %s", x->name, m.line + 1, m.column + 1, msg);
}

/* libyaml's reader errors carry a byte offset only; turn it into a line and
 * a character column like the scanner's marks. */
static yaml_mark_t mark_from_offset(const char *buf, size_t len, size_t off)
{
    yaml_mark_t m = {0, 0, 0};
    if (off > len) off = len;
    for (size_t i = 0; i < off; i++) {
        if (buf[i] == '\n') {
            m.line++;
            m.column = 0;
        } else if (((unsigned char)buf[i] & 0xC0) != 0x80) {
            m.column++;
        }
    }
    m.index = off;
    return m;
}

static int yaml_error(parse_ctx *x, const yaml_parser_t *p)
{
    const char *problem = p->problem ? p->problem : "YAML error";
    if (p->error == YAML_READER_ERROR)
        return err_at(x, mark_from_offset(x->buf, x->len, p->problem_offset), "invalid input: %s",
                      problem);
    if (p->error == YAML_MEMORY_ERROR)
        return kg_err_set(x->err, ENOMEM, "%s: out of memory parsing YAML", x->name);
    /* The problem mark is where libyaml noticed; the context mark is where
     * the construct it was reading began, which is often the useful one. */
    /* "- *.example.com" is a YAML alias, not a string: say how to write
     * the wildcard host entry the person almost certainly meant. */
    const char *hint = p->context && strstr(p->context, "alias")
                           ? " (quote an entry that starts with '*': \"*.example.com\")"
                           : "";
    if (p->context)
        return err_at(x, p->problem_mark, "YAML syntax error: %s %s at %zu:%zu%s", problem,
                      p->context, p->context_mark.line + 1, p->context_mark.column + 1, hint);
    return err_at(x, p->problem_mark, "YAML syntax error: %s", problem);
}

/* Anchors, aliases and tags are refused wherever they appear. */
static int check_plain_event(parse_ctx *x, const yaml_event_t *ev)
{
    const yaml_char_t *anchor = NULL, *tag = NULL;
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        return err_at(x, ev->start_mark, "YAML aliases are not allowed in a kgate config");
    case YAML_SCALAR_EVENT:
        anchor = ev->data.scalar.anchor;
        tag = ev->data.scalar.tag;
        break;
    case YAML_SEQUENCE_START_EVENT:
        anchor = ev->data.sequence_start.anchor;
        tag = ev->data.sequence_start.tag;
        break;
    case YAML_MAPPING_START_EVENT:
        anchor = ev->data.mapping_start.anchor;
        tag = ev->data.mapping_start.tag;
        break;
    default: break;
    }
    if (anchor) return err_at(x, ev->start_mark, "YAML anchors are not allowed in a kgate config");
    if (tag) return err_at(x, ev->start_mark, "YAML tags are not allowed in a kgate config");
    return 0;
}

static int next_event(parse_ctx *x, yaml_parser_t *p, yaml_event_t *ev)
{
    if (!yaml_parser_parse(p, ev)) return yaml_error(x, p);
    if (check_plain_event(x, ev) < 0) {
        yaml_event_delete(ev);
        return -1;
    }
    return 0;
}

/* A plain scalar that YAML reads as null: "", "~", "null". */
static bool scalar_is_null(const yaml_event_t *ev)
{
    if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return false;
    const char *v = (const char *)ev->data.scalar.value;
    return !*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
           strcmp(v, "NULL") == 0;
}

static const char *event_kind(const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT: return "a scalar";
    case YAML_SEQUENCE_START_EVENT: return "a list";
    case YAML_MAPPING_START_EVENT: return "a mapping";
    default: return "something else";
    }
}

/* A scalar: must hold no NUL (libyaml allows "\0" escapes) and fit the
 * length cap. */
static int scalar_ok(parse_ctx *x, const yaml_event_t *ev, const char *what)
{
    size_t l = ev->data.scalar.length;
    if (l > KG_CONFIG_MAX_SCALAR)
        return err_at(x, ev->start_mark, "%s: value longer than %d bytes", what,
                      KG_CONFIG_MAX_SCALAR);
    if (memchr(ev->data.scalar.value, '\0', l))
        return err_at(x, ev->start_mark, "%s: NUL byte in value", what);
    return 0;
}

static int parse_enum(parse_ctx *x, yaml_parser_t *p, const char *key, const char *const *names,
                      int n, int *out)
{
    yaml_event_t ev;
    if (next_event(x, p, &ev) < 0) return -1;
    int rc = -1;
    if (ev.type != YAML_SCALAR_EVENT) {
        err_at(x, ev.start_mark, "%s: expected a scalar, got %s", key, event_kind(&ev));
        goto out;
    }
    if (scalar_ok(x, &ev, key) < 0) goto out;
    const char *v = (const char *)ev.data.scalar.value;
    for (int i = 0; i < n; i++) {
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            rc = 0;
            goto out;
        }
    }
    char s[80];
    kg_msg_quote(s, sizeof s, v, ev.data.scalar.length);
    UT_string *alts;
    utstring_new(alts);
    for (int i = 0; i < n; i++)
        utstring_printf(alts, "%s%s", i ? (i == n - 1 ? " or " : ", ") : "", names[i]);
    if (x->quiet)
        err_at(x, ev.start_mark, "%s: invalid value (expected %s)", key, utstring_body(alts));
    else
        err_at(x, ev.start_mark, "%s: invalid value '%s' (expected %s)", key, s,
               utstring_body(alts));
    utstring_free(alts);
out:
    yaml_event_delete(&ev);
    return rc;
}

/* A count of processes: decimal digits only (no sign, no 0x, no YAML
 * float), 1 to KG_MAX_MAX_PROCESSES, or the word "unlimited" (0). */
static int parse_count(parse_ctx *x, yaml_parser_t *p, const char *key, long *out)
{
    yaml_event_t ev;
    if (next_event(x, p, &ev) < 0) return -1;
    int rc = -1;
    if (ev.type != YAML_SCALAR_EVENT) {
        err_at(x, ev.start_mark, "%s: expected a number, got %s", key, event_kind(&ev));
        goto out;
    }
    if (scalar_ok(x, &ev, key) < 0) goto out;
    const char *v = (const char *)ev.data.scalar.value;
    size_t len = ev.data.scalar.length;
    if (strcmp(v, "unlimited") == 0) {
        *out = 0;
        rc = 0;
        goto out;
    }
    long n = 0;
    bool ok = len > 0 && len <= 8;
    for (size_t i = 0; ok && i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            ok = false;
        else
            n = n * 10 + (v[i] - '0');
    }
    if (ok && n >= 1 && n <= KG_MAX_MAX_PROCESSES) {
        *out = n;
        rc = 0;
        goto out;
    }
    char s[80];
    kg_msg_quote(s, sizeof s, v, len);
    if (x->quiet)
        err_at(x, ev.start_mark,
               "%s: invalid value (expected a number from 1 to %ld, "
               "or unlimited)",
               key, KG_MAX_MAX_PROCESSES);
    else
        err_at(x, ev.start_mark,
               "%s: invalid value '%s' (expected a number from 1 to %ld, "
               "or unlimited)",
               key, s, KG_MAX_MAX_PROCESSES);
out:
    yaml_event_delete(&ev);
    return rc;
}

/* The entries a list already holds, for dropping repeats: a hash, since a
 * host list may hold 10,000 names and a linear search per entry made the
 * parse quadratic (0.37 s for 10,000). */
typedef struct seen_entry {
    const char *s; /* owned by the list */
    UT_hash_handle hh;
} seen_entry;

static void seen_free(seen_entry **seen)
{
    seen_entry *e, *tmp;
    HASH_ITER(hh, *seen, e, tmp)
    {
        HASH_DEL(*seen, e);
        free(e);
    }
}

/* 1 when s was already in the list; otherwise pushes it and returns 0. */
static int push_unseen(kg_strv *v, seen_entry **seen, const char *s)
{
    seen_entry *e;
    HASH_FIND_STR(*seen, s, e);
    if (e) return 1;
    kg_strv_push(v, s);
    e = calloc(1, sizeof *e);
    if (!e) kg_oom();
    e->s = kg_strv_get(v, kg_strv_len(v) - 1);
    HASH_ADD_KEYPTR(hh, *seen, e->s, strlen(e->s), e);
    return 0;
}

static int parse_list_entries(parse_ctx *x, yaml_parser_t *p, kg_list_key k, seen_entry **seen);

/* Records the line of the entry just pushed onto c->lists[k].  The array
 * holds 16, then doubles when full (n a power of two from 16 on): one
 * realloc an entry cost a list of 10,000 names as much as the rest of
 * its parse, copies mostly. */
static void push_line(kg_config *c, kg_list_key k, unsigned line)
{
    size_t n = c->nlines[k];
    unsigned *l = c->lines[k];
    if (n == 0 || (n >= 16 && (n & (n - 1)) == 0)) {
        l = realloc(l, (n ? 2 * n : 16) * sizeof *l);
        if (!l) kg_oom();
    }
    l[n] = line;
    c->lines[k] = l;
    c->nlines[k] = n + 1;
}

unsigned kg_config_entry_line(const kg_config *c, kg_list_key k, size_t i)
{
    if ((unsigned)k >= KG_N_LIST_KEYS || i >= c->nlines[k]) return 0;
    return c->lines[k][i];
}

/* An entry that is not valid for its key.  A project file's entry is not
 * quoted (a link or a moved file could have put text there that the run
 * could not read); the reason is kgate's own words either way. */
static void entry_error(parse_ctx *x, const yaml_event_t *ev, const char *key, bool host,
                        const char *why)
{
    char s[80];
    kg_msg_quote(s, sizeof s, (const char *)ev->data.scalar.value, ev->data.scalar.length);
    if (x->quiet && host)
        err_at(x, ev->start_mark, "%s: invalid host name: %s", key, why);
    else if (x->quiet)
        err_at(x, ev->start_mark, "%s: %s", key, why);
    else if (host)
        err_at(x, ev->start_mark, "%s: invalid host name '%s': %s", key, s, why);
    else
        err_at(x, ev->start_mark, "%s: %s '%s'", key, why, s);
}

static int parse_list(parse_ctx *x, yaml_parser_t *p, kg_list_key k)
{
    kg_strv *v = x->c->lists[k];
    seen_entry *seen = NULL;
    for (size_t i = 0; i < kg_strv_len(v); i++) {
        seen_entry *e = calloc(1, sizeof *e);
        if (!e) kg_oom();
        e->s = kg_strv_get(v, i);
        HASH_ADD_KEYPTR(hh, seen, e->s, strlen(e->s), e);
    }
    int rc = parse_list_entries(x, p, k, &seen);
    seen_free(&seen);
    return rc;
}

static int parse_list_entries(parse_ctx *x, yaml_parser_t *p, kg_list_key k, seen_entry **seen)
{
    const char *key = list_keys[k].name;
    kg_strv *v = x->c->lists[k];
    yaml_event_t ev;
    if (next_event(x, p, &ev) < 0) return -1;
    if (ev.type == YAML_SCALAR_EVENT && scalar_is_null(&ev)) {
        /* "key:" with nothing after it reads as an empty list. */
        yaml_event_delete(&ev);
        return 0;
    }
    if (ev.type != YAML_SEQUENCE_START_EVENT) {
        err_at(x, ev.start_mark, "%s: expected a list, got %s", key, event_kind(&ev));
        yaml_event_delete(&ev);
        return -1;
    }
    yaml_event_delete(&ev);
    for (;;) {
        if (next_event(x, p, &ev) < 0) return -1;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        if (ev.type != YAML_SCALAR_EVENT) {
            err_at(x, ev.start_mark, "%s: list entries must be scalars, got %s", key,
                   event_kind(&ev));
            yaml_event_delete(&ev);
            return -1;
        }
        if (scalar_ok(x, &ev, key) < 0) {
            yaml_event_delete(&ev);
            return -1;
        }
        char *val = (char *)ev.data.scalar.value;
        const char *why = NULL;
        if (scalar_is_null(&ev)) {
            err_at(x, ev.start_mark, "%s: empty list entry", key);
            yaml_event_delete(&ev);
            return -1;
        }
        char norm[KG_HOST_ENTRY_MAX];
        if (!entry_valid(list_keys[k].kind, val, &why, norm)) {
            entry_error(x, &ev, key, list_keys[k].kind == ENTRY_HOST, why);
            yaml_event_delete(&ev);
            return -1;
        }
        if (list_keys[k].kind == ENTRY_HOST) val = norm;
        if (push_unseen(v, seen, val) == 0) push_line(x->c, k, (unsigned)ev.start_mark.line + 1);
        yaml_event_delete(&ev);
    }
}

static int parse_mapping(parse_ctx *x, yaml_parser_t *p)
{
    static const char *const nets[] = {"off", "restricted", "open"};
    static const char *const profiles[] = {"permissive", "strict"};
    static const char *const sinks[] = {"file", "journald", "syslog"};
    for (;;) {
        yaml_event_t ev;
        if (next_event(x, p, &ev) < 0) return -1;
        if (ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        if (ev.type != YAML_SCALAR_EVENT) {
            err_at(x, ev.start_mark, "keys must be plain names, got %s", event_kind(&ev));
            yaml_event_delete(&ev);
            return -1;
        }
        if (scalar_ok(x, &ev, "key") < 0) {
            yaml_event_delete(&ev);
            return -1;
        }
        const char *key = (const char *)ev.data.scalar.value;
        yaml_mark_t km = ev.start_mark;
        int rc = 0;
        bool known = false, dup = false;
        if (strcmp(key, "network") == 0) {
            known = true;
            dup = x->seen_network;
            x->seen_network = true;
        } else if (strcmp(key, "macos_profile") == 0) {
            known = true;
            dup = x->seen_profile;
            x->seen_profile = true;
        } else if (strcmp(key, "max_processes") == 0) {
            known = true;
            dup = x->seen_max_processes;
            x->seen_max_processes = true;
        } else if (strcmp(key, "audit_sink") == 0) {
            known = true;
            dup = x->seen_audit_sink;
            x->seen_audit_sink = true;
        }
        int lk = -1;
        for (int k = 0; !known && k < KG_N_LIST_KEYS; k++)
            if (strcmp(key, list_keys[k].name) == 0) {
                known = true;
                lk = k;
                dup = x->c->has[k];
                x->c->has[k] = true;
            }
        char s[80];
        kg_msg_quote(s, sizeof s, key, ev.data.scalar.length);
        /* A key kgate does not know is text of the file: a project file's
         * is not shown (the case: a link to ~/.config/gh/hosts.yml
         * printed "unknown key 'github.com'"). */
        if (!known && x->quiet)
            rc = err_at(x, km,
                        "unknown key (not shown: kgate quotes no text of a project "
                        "file; the keys are in kgate.yaml(5))");
        else if (!known)
            rc = err_at(x, km, "unknown key '%s'", s);
        else if (dup)
            rc = err_at(x, km, "duplicate key '%s'", s);
        else if (lk >= 0)
            rc = parse_list(x, p, (kg_list_key)lk);
        else if (strcmp(key, "network") == 0) {
            int n = 0;
            rc = parse_enum(x, p, "network", nets, 3, &n);
            if (rc == 0) {
                x->c->has_network = true;
                x->c->network = n == 0   ? KGATE_NET_OFF
                                : n == 1 ? KGATE_NET_RESTRICTED
                                         : KGATE_NET_OPEN;
            }
        } else if (strcmp(key, "audit_sink") == 0) {
            int n = 0;
            rc = parse_enum(x, p, "audit_sink", sinks, 3, &n);
            if (rc == 0) {
                x->c->has_audit_sink = true;
                x->c->audit_sink = n;
            }
        } else if (strcmp(key, "max_processes") == 0) {
            long n = 0;
            rc = parse_count(x, p, "max_processes", &n);
            if (rc == 0) {
                x->c->has_max_processes = true;
                x->c->max_processes = n;
            }
        } else {
            int n = 0;
            rc = parse_enum(x, p, "macos_profile", profiles, 2, &n);
            if (rc == 0) {
                x->c->has_macos_profile = true;
                x->c->macos_profile = n ? KGATE_MACOS_STRICT : KGATE_MACOS_PERMISSIVE;
            }
        }
        yaml_event_delete(&ev);
        if (rc < 0) return -1;
    }
}

/* Walks the event stream: at most one document, whose root is a mapping
 * (or nothing, or a null scalar: both an empty layer). */
static int parse_stream(parse_ctx *x, yaml_parser_t *p)
{
    yaml_event_t ev;
    int docs = 0;
    for (;;) {
        if (next_event(x, p, &ev) < 0) return -1;
        yaml_event_type_t t = ev.type;
        yaml_mark_t m = ev.start_mark;
        int rc = 0;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        if (t == YAML_DOCUMENT_START_EVENT) {
            if (ev.data.document_start.version_directive ||
                ev.data.document_start.tag_directives.start !=
                    ev.data.document_start.tag_directives.end)
                rc = err_at(x, m, "YAML directives are not allowed in a kgate config");
            else if (++docs > 1)
                rc = err_at(x, m, "more than one YAML document");
        } else if (t == YAML_MAPPING_START_EVENT) {
            rc = parse_mapping(x, p);
        } else if (t == YAML_SCALAR_EVENT && scalar_is_null(&ev)) {
            /* "---" alone: an empty layer. */
        } else if (t == YAML_SCALAR_EVENT || t == YAML_SEQUENCE_START_EVENT) {
            rc = err_at(x, m, "the top level must be a mapping of keys, got %s", event_kind(&ev));
        }
        yaml_event_delete(&ev);
        if (rc < 0) return -1;
    }
}

static kg_config *config_parse(const char *name, const char *buf, size_t len, bool quiet,
                               kg_error *err)
{
    if (!name) name = "(config)";
    if (len > KG_CONFIG_MAX_BYTES) {
        kg_err_set(err, EFBIG, "%s:1:1: file larger than %d bytes", name, KG_CONFIG_MAX_BYTES);
        return NULL;
    }
    kg_config *c = config_new(name);
    if (!c) {
        kg_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        kg_config_free(c);
        kg_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
    c->quiet = quiet;
    parse_ctx x = {.name = name, .buf = buf, .len = len, .err = err, .c = c, .quiet = quiet};
    int rc = parse_stream(&x, &p);
    yaml_parser_delete(&p);
    if (rc < 0) {
        kg_config_free(c);
        return NULL;
    }
    return c;
}

kg_config *kg_config_parse(const char *name, const char *buf, size_t len, kg_error *err)
{
    return config_parse(name, buf, len, false, err);
}

kg_config *kg_config_parse_project(const char *name, const char *buf, size_t len, kg_error *err)
{
    return config_parse(name, buf, len, true, err);
}

/* Reads fd (closed here) with the size cap and parses it. */
static kg_config *load_fd(int fd, const char *file, bool quiet, kg_error *err)
{
    /* Read one byte past the cap, whatever st_size says (the file may be
     * growing), so an oversized file is refused rather than truncated. */
    size_t cap = KG_CONFIG_MAX_BYTES + 1, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        kg_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    while (len < cap) {
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(fd);
            free(buf);
            kg_err_set(err, e, "%s: %s", file, strerror(e));
            return NULL;
        }
        if (n == 0) break;
        len += (size_t)n;
    }
    close(fd);
    kg_config *c = config_parse(file, buf, len, quiet, err);
    free(buf);
    return c;
}

kg_config *kg_config_load(const char *file, kg_error *err)
{
    /* O_NONBLOCK: a FIFO in the way would otherwise block open() forever.
     * Regular files ignore the flag.  The user's own file may be a link (a
     * dotfile manager's): it lives in ~/.kgate, which no run can write. */
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        kg_err_set(err, e, "%s: %s", file, strerror(e));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        kg_err_set(err, EINVAL, "%s: not a regular file", file);
        return NULL;
    }
    return load_fd(fd, file, false, err);
}

/* Why the opened project file is not read, or NULL.  Checked on the
 * descriptor that is then read, so nothing can be swapped in between. */
static const char *project_file_unfit(const struct stat *st, char *buf, size_t len)
{
    if (!S_ISREG(st->st_mode))
        return "not a regular file; kgate reads a project file only when it is one";
    if (st->st_uid != getuid()) {
        snprintf(buf, len,
                 "owned by uid %u, not by you (uid %u); kgate reads only your "
                 "own project file",
                 (unsigned)st->st_uid, (unsigned)getuid());
        return buf;
    }
    /* A second name for the same file: like a symbolic link, a hard link
     * would give .kgate.yaml the text of a file that has another purpose.
     * A checkout writes each file with one name. */
    if (st->st_nlink != 1) {
        snprintf(buf, len,
                 "has %lu hard links; kgate reads a project file only when it "
                 "has one name",
                 (unsigned long)st->st_nlink);
        return buf;
    }
    return NULL;
}

/* The project file is there but cannot be read.  The Landlock box cannot
 * stop a chmod (Landlock has no right for it), so a run can make it mode
 * 000 and every later run would refuse: say what mends it, when it is
 * the user's own regular file and its mode is the reason. */
static void unreadable(const char *file, kg_error *err)
{
    struct stat st;
    if (lstat(file, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() &&
        !(st.st_mode & S_IRUSR))
        kg_err_set(err, EACCES,
                   "%s: its mode is %04o, so kgate cannot read the project policy (a "
                   "run in the Landlock box can change it); to mend it, run: chmod 644 %s",
                   file, (unsigned)(st.st_mode & 07777), file);
    else
        kg_err_set(err, EACCES, "%s: %s", file, strerror(EACCES));
}

kg_config *kg_config_load_project(const char *file, kg_error *err)
{
    /* O_NOFOLLOW: a run can create .kgate.yaml as a link to a file outside
     * the box (~/.config/gh/hosts.yml); kgate, outside, must not read it.
     * O_NONBLOCK: a FIFO must not hang the open. */
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP)
            kg_err_set(err, e,
                       "%s: is a symbolic link; kgate reads a project file only when "
                       "it is a regular file (a link could make it read a file "
                       "outside the project): remove it",
                       file);
        else if (e == EACCES)
            unreadable(file, err);
        else
            kg_err_set(err, e, "%s: %s", file, strerror(e));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        kg_err_set(err, e, "%s: %s", file, strerror(e));
        return NULL;
    }
    char why[160];
    const char *unfit = project_file_unfit(&st, why, sizeof why);
    if (unfit) {
        close(fd);
        kg_err_set(err, EPERM, "%s: %s", file, unfit);
        return NULL;
    }
    return load_fd(fd, file, true, err);
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/* Every entry is written double-quoted, so no path can be read back as
 * another type or break the line: '"' and '\' are escaped, control
 * characters (refused on input anyway) as \xNN. */
static void emit_quoted(UT_string *out, const char *s)
{
    utstring_bincpy(out, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            utstring_bincpy(out, e, 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            utstring_printf(out, "\\x%02x", *p);
        } else {
            utstring_bincpy(out, p, 1);
        }
    }
    utstring_bincpy(out, "\"", 1);
}

static void emit_list(UT_string *out, kg_list_key k, const kg_strv *v)
{
    utstring_printf(out, "# %s\n%s:", key_comments[k], list_keys[k].name);
    if (kg_strv_len(v) == 0) {
        utstring_printf(out, " []\n");
        return;
    }
    utstring_printf(out, "\n");
    for (size_t i = 0; i < kg_strv_len(v); i++) {
        utstring_printf(out, "  - ");
        emit_quoted(out, kg_strv_get(v, i));
        utstring_printf(out, "\n");
    }
}

/* The text kg_config_write writes; exposed for tests through the file. */
static void config_render(const kg_config *c, UT_string *out)
{
    kg_config *d = kg_config_defaults();
    utstring_printf(out, "# kgate user configuration; see kgate.yaml(5).\n"
                         "# Written by kgate; `kgate network` rewrites this file and does not\n"
                         "# keep comments.  A project's .kgate.yaml may only narrow it.\n\n");
    kgate_network net = c->has_network ? c->network : d->network;
    utstring_printf(out, "# off | open | restricted\nnetwork: %s\n", kg_network_name(net));
    static const kg_list_key order[] = {
        KG_KEY_ALLOW_HOSTS,   KG_KEY_ALLOW_PATHS,     KG_KEY_READ_PATHS,    KG_KEY_DENY_READ,
        KG_KEY_DENY_EXEC,     KG_KEY_MASK_PREFIXES,   KG_KEY_PASS_ENV,      KG_KEY_DENY_ENV,
        KG_KEY_PROTECT_PATHS, KG_KEY_UNPROTECT_PATHS, KG_KEY_ALLOW_SOCKETS, KG_KEY_MACOS_ALLOW_MACH,
    };
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        kg_list_key k = order[i];
        emit_list(out, k, c->has[k] ? c->lists[k] : d->lists[k]);
    }
    kgate_macos_profile prof = c->has_macos_profile ? c->macos_profile : d->macos_profile;
    utstring_printf(out,
                    "# macOS base profile: permissive (allow default, known doors "
                    "closed) | strict (deny default)\nmacos_profile: %s\n",
                    profile_name(prof));
    long maxp = c->has_max_processes ? c->max_processes : d->max_processes;
    if (maxp > 0)
        utstring_printf(out,
                        "# most processes in the box at once (or unlimited)\n"
                        "max_processes: %ld\n",
                        maxp);
    else
        utstring_printf(out, "# most processes in the box at once (or unlimited)\n"
                             "max_processes: unlimited\n");
    kg_config_free(d);
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int kg_config_write(const kg_config *c, const char *file, kg_error *err)
{
    UT_string *text;
    utstring_new(text);
    config_render(c, text);

    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp.XXXXXX", file) < 0) {
        utstring_free(text);
        return kg_err_set(err, ENOMEM, "out of memory");
    }
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        kg_err_set(err, e, "%s: cannot create a temporary file: %s", file, strerror(e));
        free(tmp);
        utstring_free(text);
        return -1;
    }
    int e = 0;
    if (fchmod(fd, 0600) < 0 || write_all(fd, utstring_body(text), utstring_len(text)) < 0 ||
        fsync(fd) < 0)
        e = errno;
    if (close(fd) < 0 && !e) e = errno;
    if (!e && rename(tmp, file) < 0) e = errno;
    utstring_free(text);
    if (e) {
        unlink(tmp);
        free(tmp);
        return kg_err_set(err, e, "%s: cannot write: %s", file, strerror(e));
    }
    free(tmp);
    return 0;
}

void kg_config_apply(kg_config *base, const kg_config *layer)
{
    if (layer->has_network) {
        base->has_network = true;
        base->network = layer->network;
    }
    if (layer->has_macos_profile) {
        base->has_macos_profile = true;
        base->macos_profile = layer->macos_profile;
    }
    if (layer->has_max_processes) {
        base->has_max_processes = true;
        base->max_processes = layer->max_processes;
    }
    if (layer->has_audit_sink) {
        base->has_audit_sink = true;
        base->audit_sink = layer->audit_sink;
    }
    for (int k = 0; k < KG_N_LIST_KEYS; k++) {
        if (!layer->has[k]) continue;
        base->has[k] = true;
        kg_strv_free(base->lists[k]);
        base->lists[k] = kg_strv_dup(layer->lists[k]);
        free(base->lines[k]);
        base->lines[k] = NULL;
        base->nlines[k] = 0;
        for (size_t i = 0; i < layer->nlines[k]; i++)
            push_line(base, (kg_list_key)k, layer->lines[k][i]);
    }
}
