#include "host.h"
#include "msg.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 1, 0))) static char *vformat(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) return NULL;
    return s;
}

kgate_plan *kg_plan_new(void)
{
    kgate_plan *p = calloc(1, sizeof *p);
    if (!p) kg_oom(); /* its lists would end the same way */
    p->argv = kg_strv_new();
    p->file_labels = kg_strv_new();
    p->file_contents = kg_strv_new();
    p->notes = kg_strv_new();
    return p;
}

void kg_plan_free(kgate_plan *p)
{
    if (!p) return;
    kg_strv_free(p->argv);
    kg_strv_free(p->file_labels);
    kg_strv_free(p->file_contents);
    kg_strv_free(p->notes);
    free(p);
}

static int host_plan_arg(kgate_plan *p, const char *arg)
{
    if (!p || !arg) {
        if (p) p->failed = 1;
        return -1;
    }
    kg_strv_push(p->argv, arg);
    return 0;
}

__attribute__((format(printf, 2, 3))) static int host_plan_argf(kgate_plan *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    int r = host_plan_arg(p, s);
    free(s);
    return r;
}

static int host_plan_args(kgate_plan *p, const kgate_strlist *l)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (host_plan_arg(p, l->v[i]) < 0) return -1;
    return 0;
}

static int host_plan_file(kgate_plan *p, const char *label, const char *content)
{
    if (!p || !label || !content) {
        if (p) p->failed = 1;
        return -1;
    }
    kg_strv_push(p->file_labels, label);
    kg_strv_push(p->file_contents, content);
    return 0;
}

__attribute__((format(printf, 2, 3))) static int host_plan_note(kgate_plan *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    if (!s) {
        p->failed = 1;
        return -1;
    }
    kg_strv_push(p->notes, s);
    free(s);
    return 0;
}

static const char *const *host_plan_argv(const kgate_plan *p, size_t *argc)
{
    kgate_strlist l = kg_strv_list(p->argv);
    if (argc) *argc = l.n;
    return l.v;
}

static const char *host_plan_file_content(const kgate_plan *p, const char *label)
{
    for (size_t i = 0; i < kg_strv_len(p->file_labels); i++)
        if (strcmp(kg_strv_get(p->file_labels, i), label) == 0)
            return kg_strv_get(p->file_contents, i);
    return NULL;
}

void kg_shell_quote(UT_string *out, const char *s)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                               "@%+=:,./-_";
    if (*s && strspn(s, safe) == strlen(s)) {
        utstring_bincpy(out, s, strlen(s));
        return;
    }
    if (!kg_msg_is_plain(s)) {
        /* Control bytes, bytes that are not UTF-8, invisible characters:
         * bash's $'...' with \xHH, so the plan stays exact and prints no
         * raw escape sequence (msg.h). */
        utstring_bincpy(out, "$'", 2);
        for (const unsigned char *u = (const unsigned char *)s; *u; u++) {
            if (*u == '\\' || *u == '\'')
                utstring_printf(out, "\\%c", *u);
            else if (*u < 0x20 || *u >= 0x7f)
                utstring_printf(out, "\\x%02x", *u);
            else
                utstring_bincpy(out, u, 1);
        }
        utstring_bincpy(out, "'", 1);
        return;
    }
    utstring_bincpy(out, "'", 1);
    for (; *s; s++) {
        if (*s == '\'')
            utstring_bincpy(out, "'\\''", 4);
        else
            utstring_bincpy(out, s, 1);
    }
    utstring_bincpy(out, "'", 1);
}

void kg_plan_print(const kgate_plan *p, FILE *out)
{
    UT_string *line;
    utstring_new(line);
    for (size_t i = 0; i < kg_strv_len(p->argv); i++) {
        if (i) utstring_bincpy(line, " ", 1);
        kg_shell_quote(line, kg_strv_get(p->argv, i));
    }
    fprintf(out, "%s\n", utstring_body(line));
    utstring_free(line);
    for (size_t i = 0; i < kg_strv_len(p->file_labels); i++) {
        const char *c = kg_strv_get(p->file_contents, i);
        size_t n = strlen(c);
        fprintf(out, "--- file: %s ---\n%s%s--- end: %s ---\n", kg_strv_get(p->file_labels, i), c,
                (n && c[n - 1] == '\n') ? "" : "\n", kg_strv_get(p->file_labels, i));
    }
    for (size_t i = 0; i < kg_strv_len(p->notes); i++)
        kg_msg_line(out, "note: ", "%s", kg_strv_get(p->notes, i));
}

kgate_report *kg_report_new(void)
{
    kgate_report *r = calloc(1, sizeof *r);
    if (!r) kg_oom(); /* its lists would end the same way */
    r->detail_keys = kg_strv_new();
    r->detail_values = kg_strv_new();
    r->keep_details = true;
    return r;
}

void kg_report_free(kgate_report *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_items; i++) {
        free(r->items[i].id);
        free(r->items[i].text);
    }
    free(r->items);
    free(r->bad_id);
    kg_strv_free(r->detail_keys);
    kg_strv_free(r->detail_values);
    free(r);
}

const char *kg_verdict_name(kgate_verdict v)
{
    switch (v) {
    case KGATE_READY: return "READY";
    case KGATE_DEGRADED: return "DEGRADED";
    default: return "BLOCKED";
    }
}

int kg_finding_id_ok(const char *id)
{
    if (!id || !(*id >= 'a' && *id <= 'z')) return 0;
    size_t n = 0;
    for (const char *c = id; *c; c++, n++) {
        int ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                 (*c == '.' && c[1] != '.');
        if (!ok || n >= KGATE_FINDING_ID_MAX) return 0;
    }
    return id[n - 1] != '.' && id[n - 1] != '-';
}

/* A finding the core cannot name is a finding nobody can rely on: it is
 * not recorded, and the report reads BLOCKED (select.c replaces nothing,
 * it adds core.finding-id-invalid), so a backend with a broken id table
 * is refused rather than half-believed. */
static int report_bad_id(kgate_report *r, const char *id)
{
    r->verdict = KGATE_BLOCKED;
    if (!r->bad_id) {
        const char *shown = id ? id : "(null)";
        r->bad_id = strndup(shown, KGATE_FINDING_ID_MAX + 16);
        if (!r->bad_id) kg_oom();
    }
    return -1;
}

__attribute__((format(printf, 4, 5))) static int host_report(kgate_report *r, kgate_verdict v,
                                                             const char *id, const char *fmt, ...)
{
    if (!kg_finding_id_ok(id)) return report_bad_id(r, id);
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    char *sid = s ? strdup(id) : NULL;
    kg_report_item *items = sid ? realloc(r->items, (r->n_items + 1) * sizeof *items) : NULL;
    if (!items) {
        free(s);
        free(sid);
        /* A report that lost a finding must not read better than it is. */
        r->verdict = KGATE_BLOCKED;
        return -1;
    }
    r->items = items;
    r->items[r->n_items++] = (kg_report_item){v, sid, s};
    if (v > r->verdict) r->verdict = v;
    return 0;
}

static int host_report_detail(kgate_report *r, const char *key, const char *value)
{
    if (!r->keep_details) return 0;
    kg_strv_push(r->detail_keys, key);
    kg_strv_push(r->detail_values, value ? value : "");
    return 0;
}

__attribute__((format(printf, 3, 4))) static void
host_log(const kgate_host *h, kgate_log_level level, const char *fmt, ...)
{
    const kg_host *host = (const kg_host *)h;
    if (level == KGATE_LOG_DEBUG && !host->debug) return;
    /* A plugin's message may quote anything (a host name a program asked
     * for, a path): escaped like every other line, one line. */
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0) text = NULL;
    va_end(ap);
    kg_say("%s%s%s", host->current ? host->current : "", host->current ? ": " : "",
           text ? text : "(out of memory)");
    free(text);
}

void kg_host_init(kg_host *host)
{
    *host = (kg_host){0};
    host->pub = (kgate_host){
        .struct_size = sizeof(kgate_host),
        .abi_major = KGATE_ABI_MAJOR,
        .abi_minor = KGATE_ABI_MINOR,
        .log = host_log,
        .plan_arg = host_plan_arg,
        .plan_argf = host_plan_argf,
        .plan_args = host_plan_args,
        .plan_file = host_plan_file,
        .plan_note = host_plan_note,
        .plan_argv = host_plan_argv,
        .plan_file_content = host_plan_file_content,
        .report = host_report,
        .report_detail = host_report_detail,
    };
    host->debug = kg_debug();
    host->details = true;
}
