/* cmd_audit.c: `kgate audit`, what a person reads instead of grepping the
 * JSON of ~/.kgate/audit.log.
 *
 *   verify [FILE...]                the chain (auditverify.c): exit 0 when
 *                                   intact, 1 when a record does not follow
 *                                   or a file cannot be read
 *   runs [--since WHEN] [FILE...]   one line per run: when, id, how it
 *                                   ended, how long, what it ran
 *   show RUN [FILE...]              every record of one run (an id prefix)
 *   refusals [--since WHEN] [FILE...]  refusals counted by kind, with the
 *                                   most frequent reasons
 * Files are read in order (oldest first); default ~/.kgate/audit.log.
 * Every line printed goes through kg_msg (records hold the command lines
 * and names programs chose). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "auditread.h"
#include "commands.h"
#include "msg.h"
#include "oom.h"

static const char audit_usage[] =
    "usage: kgate audit verify [FILE...]\n"
    "       kgate audit runs [--since WHEN] [FILE...]\n"
    "       kgate audit show RUN [FILE...]\n"
    "       kgate audit refusals [--since WHEN] [FILE...]\n"
    "WHEN: 2026-12-04, 2026-12-04T10:00 (UTC), or an age: 30m, 2h, 7d\n";

/* ~/.kgate/audit.log, or NULL (with the line said) when HOME is unusable. */
static char *default_log(void)
{
    const char *home = getenv("HOME");
    if (!home || home[0] != '/') {
        kg_say("HOME is not set to an absolute path: name the log file");
        return NULL;
    }
    char *p = NULL;
    if (asprintf(&p, "%s/.kgate/audit.log", home) < 0) kg_oom();
    return p;
}

/* The arguments every subcommand shares. */
typedef struct args {
    char since[32]; /* "" or a prefix of a record's time to compare with */
    const char *run; /* show */
    kg_strv *files;
} args;

/* WHEN as the time text records carry ("2026-12-04T10:00:00"), so that a
 * string comparison orders them. */
static int parse_since(const char *when, char out[32])
{
    char *end;
    long n = strtol(when, &end, 10);
    long unit = !strcmp(end, "s")   ? 1
                : !strcmp(end, "m") ? 60
                : !strcmp(end, "h") ? 3600
                : !strcmp(end, "d") ? 86400
                                    : 0;
    if (end != when && n >= 0 && unit) {
        time_t t = time(NULL) - (time_t)(n * unit);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
        return 0;
    }
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    size_t len = strlen(when);
    if (len < 10 || len > sizeof shape - 1) return -1;
    for (size_t i = 0; i < len; i++)
        if (shape[i] == 'd' ? (when[i] < '0' || when[i] > '9') : when[i] != shape[i]) return -1;
    snprintf(out, 32, "%s", when);
    return 0;
}

/* Returns 0, or -1 with *status set (help, usage error, no HOME). */
static int parse(int argc, char **argv, bool want_run, bool want_since, args *a, int *status)
{
    *a = (args){.files = kg_strv_new()};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (kg_cli_is_help(s)) {
            *status = kg_cli_help(audit_usage);
            return -1;
        }
        if (want_since && strcmp(s, "--since") == 0 && i + 1 < argc) {
            if (parse_since(argv[++i], a->since) < 0) {
                *status = kg_cli_usage_error(audit_usage,
                                             "audit: --since '%s': not a date "
                                             "or an age",
                                             argv[i]);
                return -1;
            }
        } else if (s[0] == '-' && s[1]) {
            *status = kg_cli_usage_error(audit_usage,
                                         "audit %s: unknown or incomplete "
                                         "option '%s'",
                                         argv[0], s);
            return -1;
        } else if (want_run && !a->run) {
            a->run = s;
        } else {
            kg_strv_push(a->files, s);
        }
    }
    if (want_run && (!a->run || strlen(a->run) < 4)) {
        *status = kg_cli_usage_error(audit_usage, "audit show: name a run (4 or more "
                                                  "characters of its id)");
        return -1;
    }
    if (kg_strv_len(a->files) == 0) {
        char *def = default_log();
        if (!def) {
            *status = KG_EXIT_FAIL;
            return -1;
        }
        kg_strv_push(a->files, def);
        free(def);
    }
    return 0;
}

typedef int (*rec_fn)(const kg_audit_rec *rec, void *ctx);

/* Every record of the files, in order, to fn; unreadable ones counted. */
static int each_record(const args *a, rec_fn fn, void *ctx, size_t *bad)
{
    *bad = 0;
    for (size_t i = 0; i < kg_strv_len(a->files); i++) {
        const char *file = kg_strv_get(a->files, i);
        FILE *f = fopen(file, "re");
        if (!f) {
            kg_say("cannot read %s: %s", file, strerror(errno));
            return -1;
        }
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        while ((len = getline(&line, &cap, f)) > 0) {
            kg_audit_rec rec;
            size_t n = (size_t)len - (line[len - 1] == '\n');
            if (kg_audit_rec_parse(line, n, &rec) == 0)
                fn(&rec, ctx);
            else
                (*bad)++;
            kg_audit_rec_clear(&rec);
        }
        free(line);
        fclose(f);
    }
    return 0;
}

static void argv_text(const kg_strv *argv, UT_string *u)
{
    for (size_t i = 0; i < kg_strv_len(argv); i++) {
        if (i) utstring_bincpy(u, " ", 1);
        const char *s = kg_strv_get(argv, i);
        bool quote = !*s || strpbrk(s, " \t'\"\\$`;&|<>*?()") != NULL;
        utstring_printf(u, quote ? "'%s'" : "%s", s);
    }
}

static void say_bad(size_t bad)
{
    if (bad)
        kg_say("%zu record%s could not be read (not kgate's format)", bad, bad == 1 ? "" : "s");
}

/* ---- runs ---------------------------------------------------------------- */

typedef struct run_row {
    char *id;
    char *time; /* its first record's */
    char *command;
    char status[48];
    long long duration_ms; /* -1: unknown */
    size_t net, git;
    UT_hash_handle hh;
} run_row;

typedef struct runs_ctx {
    run_row *by_id;
    UT_array *order; /* run_row *, by first record */
} runs_ctx;

static const UT_icd row_icd = {sizeof(run_row *), NULL, NULL, NULL};

static int runs_add(const kg_audit_rec *rec, void *vctx)
{
    runs_ctx *c = vctx;
    if (!rec->run) return 0; /* written before run ids */
    run_row *row = NULL;
    HASH_FIND_STR(c->by_id, rec->run, row);
    if (!row) {
        row = calloc(1, sizeof *row);
        if (!row) kg_oom();
        UT_string *u;
        utstring_new(u);
        argv_text(rec->argv, u);
        row->id = strdup(rec->run);
        row->time = strdup(rec->time);
        row->command = strdup(utstring_body(u));
        utstring_free(u);
        if (!row->id || !row->time || !row->command) kg_oom();
        row->duration_ms = -1;
        snprintf(row->status, sizeof row->status, "?");
        HASH_ADD_KEYPTR(hh, c->by_id, row->id, strlen(row->id), row);
        utarray_push_back(c->order, &row);
    }
    const char *k = rec->kind;
    if (!strcmp(k, "launch"))
        snprintf(row->status, sizeof row->status, "no end yet");
    else if (!strcmp(k, "block"))
        snprintf(row->status, sizeof row->status, "blocked");
    else if (!strcmp(k, "refuse"))
        snprintf(row->status, sizeof row->status, "refused");
    else if (!strcmp(k, "net") && rec->verdict)
        row->net++; /* not the count line */
    else if (!strcmp(k, "git"))
        row->git++;
    else if (!strcmp(k, "end") && rec->recovered && strcmp(row->status, "no end yet") == 0)
        snprintf(row->status, sizeof row->status, "killed");
    else if (!strcmp(k, "end") && rec->has_exit) {
        snprintf(row->status, sizeof row->status, "exit %lld", rec->exit_status);
        row->duration_ms = rec->duration_ms;
    }
    return 0;
}

static void runs_free(runs_ctx *c)
{
    run_row *row, *tmp;
    HASH_ITER(hh, c->by_id, row, tmp)
    {
        HASH_DEL(c->by_id, row);
        free(row->id);
        free(row->time);
        free(row->command);
        free(row);
    }
    utarray_free(c->order);
}

static void duration_text(long long ms, char *buf, size_t n)
{
    if (ms < 0)
        snprintf(buf, n, "-");
    else if (ms < 10000)
        snprintf(buf, n, "%.2fs", (double)ms / 1000);
    else if (ms < 3600000)
        snprintf(buf, n, "%lldm%02llds", ms / 60000, ms / 1000 % 60);
    else
        snprintf(buf, n, "%lldh%02lldm", ms / 3600000, ms / 60000 % 60);
}

static int cmd_runs(int argc, char **argv)
{
    args a;
    int status;
    if (parse(argc, argv, false, true, &a, &status) < 0) {
        kg_strv_free(a.files);
        return status;
    }
    runs_ctx c = {0};
    utarray_new(c.order, &row_icd);
    size_t bad;
    int r = each_record(&a, runs_add, &c, &bad);
    if (r == 0) {
        printf("%-19s  %-8s  %-10s  %8s  %s\n", "TIME (UTC)", "RUN", "STATUS", "DURATION",
               "COMMAND");
        for (run_row **p = NULL; (p = (run_row **)utarray_next(c.order, p));) {
            run_row *row = *p;
            if (a.since[0] && strcmp(row->time, a.since) < 0) continue;
            char dur[32], extra[64] = "";
            duration_text(row->duration_ms, dur, sizeof dur);
            if (row->net || row->git)
                snprintf(extra, sizeof extra, "  [%zu net refused, %zu git]", row->net, row->git);
            kg_msg_line(stdout, "", "%-19.19s  %-8.8s  %-10s  %8s  %s%s", row->time, row->id,
                        row->status, dur, row->command, extra);
        }
        say_bad(bad);
    }
    runs_free(&c);
    kg_strv_free(a.files);
    if (fflush(stdout) != 0) return KG_EXIT_FAIL;
    return r == 0 ? KG_EXIT_OK : KG_EXIT_FAIL;
}

/* ---- show ---------------------------------------------------------------- */

typedef struct show_ctx {
    const char *prefix;
    char first[64]; /* the first matching run id */
    bool ambiguous;
    kg_strv *lines;
} show_ctx;

static int show_add(const kg_audit_rec *rec, void *vctx)
{
    show_ctx *c = vctx;
    if (!rec->run || strncmp(rec->run, c->prefix, strlen(c->prefix)) != 0) return 0;
    if (!c->first[0])
        snprintf(c->first, sizeof c->first, "%s", rec->run);
    else if (strcmp(c->first, rec->run) != 0)
        c->ambiguous = true;
    UT_string *u;
    utstring_new(u);
    utstring_printf(u, "%s  %-6s  ", rec->time, rec->kind);
    const char *k = rec->kind;
    if (!strcmp(k, "launch")) {
        utstring_printf(u, "%s, network %s: ", rec->backend ? rec->backend : "?",
                        rec->network ? rec->network : "?");
        argv_text(rec->argv, u);
    } else if (!strcmp(k, "end") && rec->has_exit) {
        char dur[32];
        duration_text(rec->duration_ms, dur, sizeof dur);
        utstring_printf(u, "exit %lld after %s", rec->exit_status, dur);
    } else if (!strcmp(k, "net") && rec->verdict) {
        utstring_printf(u, "%s %s%s%s", rec->verdict, rec->name ? rec->name : "",
                        rec->name && rec->addr ? " " : "", rec->addr ? rec->addr : "");
        if (rec->addr) utstring_printf(u, " port %lld", rec->port);
    } else if (rec->reason) {
        utstring_printf(u, "%s", rec->reason);
        if (!strcmp(k, "refuse") || !strcmp(k, "block")) {
            utstring_printf(u, ": ");
            argv_text(rec->argv, u);
        }
    }
    kg_strv_push(c->lines, utstring_body(u));
    utstring_free(u);
    return 0;
}

static int cmd_show(int argc, char **argv)
{
    args a;
    int status;
    if (parse(argc, argv, true, false, &a, &status) < 0) {
        kg_strv_free(a.files);
        return status;
    }
    show_ctx c = {.prefix = a.run, .lines = kg_strv_new()};
    size_t bad;
    int r = each_record(&a, show_add, &c, &bad);
    if (r == 0 && c.ambiguous) {
        kg_say("run %s: more than one run's id starts so; give more of it", a.run);
        r = -1;
    } else if (r == 0 && !c.first[0]) {
        kg_say("run %s: no such run in %s", a.run, kg_strv_get(a.files, 0));
        r = -1;
    } else if (r == 0) {
        kg_msg_line(stdout, "", "run %s", c.first);
        for (size_t i = 0; i < kg_strv_len(c.lines); i++)
            kg_msg_line(stdout, "", "  %s", kg_strv_get(c.lines, i));
        say_bad(bad);
    }
    kg_strv_free(c.lines);
    kg_strv_free(a.files);
    if (fflush(stdout) != 0) return KG_EXIT_FAIL;
    return r == 0 ? KG_EXIT_OK : KG_EXIT_FAIL;
}

/* ---- refusals ------------------------------------------------------------ */

typedef struct tally_row {
    char *what;
    size_t n;
    UT_hash_handle hh;
} tally_row;

enum { T_BLOCK, T_REFUSE, T_NET, T_GIT, T_KILLED, T_KINDS };
static const char *const tally_name[T_KINDS] = {
    "blocked (exec deny list)",      "refused before launch",  "network refused",
    "git neutralised after the run", "killed (end recovered)",
};

typedef struct refusals_ctx {
    const char *since;
    tally_row *rows[T_KINDS];
    size_t total[T_KINDS];
} refusals_ctx;

static void tally(refusals_ctx *c, int kind, const char *what)
{
    tally_row *row = NULL;
    HASH_FIND_STR(c->rows[kind], what, row);
    if (!row) {
        row = calloc(1, sizeof *row);
        if (!row || !(row->what = strdup(what))) kg_oom();
        HASH_ADD_KEYPTR(hh, c->rows[kind], row->what, strlen(row->what), row);
    }
    row->n++;
    c->total[kind]++;
}

static int refusals_add(const kg_audit_rec *rec, void *vctx)
{
    refusals_ctx *c = vctx;
    if (c->since[0] && strcmp(rec->time, c->since) < 0) return 0;
    const char *k = rec->kind;
    char buf[512];
    if (!strcmp(k, "block"))
        tally(c, T_BLOCK, rec->reason ? rec->reason : "?");
    else if (!strcmp(k, "refuse"))
        tally(c, T_REFUSE, rec->reason ? rec->reason : "?");
    else if (!strcmp(k, "git"))
        tally(c, T_GIT, rec->reason ? rec->reason : "?");
    else if (!strcmp(k, "end") && rec->recovered) {
        UT_string *u;
        utstring_new(u);
        argv_text(rec->argv, u);
        tally(c, T_KILLED, utstring_body(u));
        utstring_free(u);
    } else if (!strcmp(k, "net") && rec->verdict) {
        if (rec->addr)
            snprintf(buf, sizeof buf, "%s port %lld%s%s%s", rec->addr, rec->port,
                     rec->name ? " (" : "", rec->name ? rec->name : "", rec->name ? ")" : "");
        else
            snprintf(buf, sizeof buf, "name %s", rec->name ? rec->name : "?");
        tally(c, T_NET, buf);
    }
    return 0;
}

static int by_count(const tally_row *x, const tally_row *y)
{
    if (x->n != y->n) return x->n < y->n ? 1 : -1;
    return strcmp(x->what, y->what);
}

static int cmd_refusals(int argc, char **argv)
{
    args a;
    int status;
    if (parse(argc, argv, false, true, &a, &status) < 0) {
        kg_strv_free(a.files);
        return status;
    }
    refusals_ctx c = {.since = a.since};
    size_t bad;
    int r = each_record(&a, refusals_add, &c, &bad);
    for (int k = 0; k < T_KINDS; k++) {
        if (r == 0) printf("%-30s %zu\n", tally_name[k], c.total[k]);
        HASH_SORT(c.rows[k], by_count);
        size_t shown = 0;
        tally_row *row, *tmp;
        HASH_ITER(hh, c.rows[k], row, tmp)
        {
            if (r == 0 && shown++ < 5) kg_msg_line(stdout, "", "%8zu  %s", row->n, row->what);
            HASH_DEL(c.rows[k], row);
            free(row->what);
            free(row);
        }
        if (r == 0 && shown > 5) printf("%8s  and %zu more\n", "", shown - 5);
    }
    if (r == 0) say_bad(bad);
    kg_strv_free(a.files);
    if (fflush(stdout) != 0) return KG_EXIT_FAIL;
    return r == 0 ? KG_EXIT_OK : KG_EXIT_FAIL;
}

static int cmd_verify(int argc, char **argv)
{
    args a;
    int status;
    if (parse(argc, argv, false, false, &a, &status) < 0) {
        kg_strv_free(a.files);
        return status;
    }
    UT_string *out;
    utstring_new(out);
    kg_error err = {0};
    size_t records = 0;
    const char **files = calloc(kg_strv_len(a.files), sizeof *files);
    if (!files) kg_oom();
    for (size_t i = 0; i < kg_strv_len(a.files); i++) files[i] = kg_strv_get(a.files, i);
    int r = kg_audit_verify(files, kg_strv_len(a.files), &records, out, &err);
    if (r < 0)
        kg_say("%s", err.msg);
    else
        kg_msg_line(stdout, "", "%s", utstring_body(out));
    free(files);
    utstring_free(out);
    kg_strv_free(a.files);
    if (fflush(stdout) != 0) return KG_EXIT_FAIL;
    return r == 0 ? KG_EXIT_OK : KG_EXIT_FAIL;
}

int kg_cmd_audit(int argc, char **argv)
{
    if (argc < 2) return kg_cli_usage_error(audit_usage, "audit: no subcommand given");
    const char *sub = argv[1];
    if (kg_cli_is_help(sub)) return kg_cli_help(audit_usage);
    if (strcmp(sub, "verify") == 0) return cmd_verify(argc - 1, argv + 1);
    if (strcmp(sub, "runs") == 0) return cmd_runs(argc - 1, argv + 1);
    if (strcmp(sub, "show") == 0) return cmd_show(argc - 1, argv + 1);
    if (strcmp(sub, "refusals") == 0) return cmd_refusals(argc - 1, argv + 1);
    return kg_cli_usage_error(audit_usage, "audit: unknown subcommand '%s'", sub);
}
