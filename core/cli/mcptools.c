/* mcptools.c: the two tools of `kgate mcp`.
 *
 * `run` is `kgate run --no-pty --events-fd 3 -- /bin/sh -c COMMAND`, in
 * a child that is this kgate binary again (mcprun.c): the same checks,
 * deny list, box, audit record and refusal objects as a command typed at
 * a terminal, and no shell outside the box.  `doctor` is `kgate doctor
 * --json`.  Both start in the directory the server was started in (the
 * project); `run` may start lower in it (cwd), never elsewhere. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "json.h"
#include "mcprun.h"
#include "mcptools.h"
#include "os.h"
#include "paths.h"
#include "kgate/kgate-path.h"

/* Bytes kept of a run's stdout, of its stderr and of its refusal objects. */
#define STREAM_LIMIT ((size_t)1 << 20)
/* Linux's bound on one argument of execve (MAX_ARG_STRLEN, 32 pages, with
 * the NUL): the command is one argument of sh -c. */
#define COMMAND_MAX 131071
/* A day: longer is a mistake, not a build. */
#define TIMEOUT_MAX 86400000L
/* doctor's probes are bounded by kgate itself; this is a backstop. */
#define DOCTOR_TIMEOUT_MS 120000L

static const char run_tool[] =
    "{\"name\":\"run\",\"title\":\"Run a shell command in the kgate box\","
    "\"description\":\"Runs COMMAND with /bin/sh -c inside kgate's sandbox (kgate run): the "
    "project is writable, the rest of the system read-only, the home directory hidden, the "
    "network as the user configured it, commands on the exec deny list refused. Returns the "
    "exit status, stdout, stderr (each cut after 1 MiB) and the refusals kgate reported. Exit "
    "status 125: kgate refused to start the run; 126: the command is on the deny list; 127: "
    "not found. Do not retry a refused command in another spelling: the refusal says which "
    "rule decided.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"command\":{\"type\":\"string\",\"description\":\"A shell command line, run as the one "
    "argument of /bin/sh -c inside the box.\"},"
    "\"cwd\":{\"type\":\"string\",\"description\":\"Working directory: a directory of the "
    "project, relative to it or absolute; symbolic links are not followed. Default: the "
    "project.\"},"
    "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":86400000,"
    "\"description\":\"The run is ended after this many milliseconds.\"}},"
    "\"required\":[\"command\"],\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"exit_status\":{\"type\":\"integer\"},\"timed_out\":{\"type\":\"boolean\"},"
    "\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
    "\"stdout_cut_bytes\":{\"type\":\"integer\"},\"stderr_cut_bytes\":{\"type\":\"integer\"},"
    "\"events\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
    "\"events_cut\":{\"type\":\"boolean\"}},"
    "\"required\":[\"exit_status\",\"timed_out\",\"stdout\",\"stderr\",\"stdout_cut_bytes\","
    "\"stderr_cut_bytes\",\"events\",\"events_cut\"]},"
    "\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":true,\"idempotentHint\":false,"
    "\"openWorldHint\":false}}";

static const char doctor_tool[] =
    "{\"name\":\"doctor\",\"title\":\"kgate doctor\","
    "\"description\":\"Reports whether kgate can box commands here (kgate doctor --json): the "
    "verdict READY, DEGRADED or BLOCKED, the backend, and the findings that explain it. A "
    "BLOCKED verdict means every run will be refused.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"exit_status\":{\"type\":\"integer\"},\"report\":{\"type\":\"object\"},"
    "\"stderr\":{\"type\":\"string\"}},\"required\":[\"exit_status\",\"report\",\"stderr\"]},"
    "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}}";

void kg_mcp_tools_list(UT_string *out)
{
    utstring_printf(out, "{\"tools\":[%s,%s]}", run_tool, doctor_tool);
}

/* A result that says a tool failed before anything ran. */
static void tool_error(UT_string *out, const char *text)
{
    utstring_printf(out, "{\"content\":[{\"type\":\"text\",\"text\":");
    kg_json_str(out, text);
    utstring_printf(out, "}],\"isError\":true}");
}

/* ---- run's arguments ------------------------------------------------------ */

typedef struct run_req {
    const char *command;
    const char *cwd; /* NULL: the project */
    long timeout_ms; /* 0: none */
} run_req;

static int bad(char *msg, size_t ml, const char *what)
{
    snprintf(msg, ml, "run: %s", what);
    return KG_RPC_INVALID_PARAMS;
}

/* The arguments checked against run's inputSchema: anything else is the
 * client's mistake (-32602), not a run. */
static int run_args(const kg_jv *args, run_req *r, char *msg, size_t ml)
{
    *r = (run_req){0};
    for (size_t i = 0; args && i < args->n; i++) {
        const char *k = args->members[i].key;
        if (strcmp(k, "command") && strcmp(k, "cwd") && strcmp(k, "timeout_ms"))
            return bad(msg, ml, "unknown argument (expected command, cwd, timeout_ms)");
    }
    const kg_jv *c = kg_jv_get(args, "command"), *d = kg_jv_get(args, "cwd"),
                *t = kg_jv_get(args, "timeout_ms");
    if (!c || c->type != KG_JV_STRING) return bad(msg, ml, "command must be a string");
    if (!(r->command = kg_jv_cstr(c))) return bad(msg, ml, "command holds a NUL character");
    if (d && d->type != KG_JV_STRING) return bad(msg, ml, "cwd must be a string");
    if (d && !(r->cwd = kg_jv_cstr(d))) return bad(msg, ml, "cwd holds a NUL character");
    if (t) {
        if (t->type != KG_JV_NUMBER || t->num != (double)(long)t->num || t->num < 1 ||
            t->num > TIMEOUT_MAX)
            return bad(msg, ml, "timeout_ms must be an integer from 1 to 86400000");
        r->timeout_ms = (long)t->num;
    }
    return 0;
}

/* ---- where a run starts --------------------------------------------------- */

/* The directory a run starts in, as a handle opened from the project one
 * component at a time without following a symbolic link (so what was
 * checked is what the child's fchdir gets, whatever changes meanwhile).
 * A directory on the way that holds a project file is refused: the run's
 * project is its working directory, and that file would not apply there.
 * -1 with why. */
static int open_cwd(const kg_mcp_server *s, const char *cwd, char *why, size_t wl)
{
    kg_error err = {0};
    kg_autofree char *lex = kg_path_lexical(cwd, s->project, NULL, &err);
    if (!lex) return snprintf(why, wl, "cwd: %s", err.msg), -1;
    if (!kgate_path_under(lex, s->project))
        return snprintf(why, wl, "cwd: %s is outside the project %s; nothing was run", lex,
                        s->project),
               -1;
    int fd = fcntl(s->projfd, F_DUPFD_CLOEXEC, 3);
    const char *rest = lex + strlen(s->project);
    while (fd >= 0 && *rest) {
        while (*rest == '/') rest++;
        size_t n = strcspn(rest, "/");
        if (!n) break;
        struct stat st;
        if (fstatat(fd, ".kgate.yaml", &st, AT_SYMLINK_NOFOLLOW) == 0) {
            close(fd);
            return snprintf(why, wl,
                            "cwd: %s: the project file of a directory above it would not apply "
                            "there (a run's project is its working directory); run from the "
                            "project and cd in the command; nothing was run",
                            lex),
                   -1;
        }
        char name[NAME_MAX + 1];
        snprintf(name, sizeof name, "%.*s", (int)n, rest);
        int next = kg_os_openat_dir_handle(fd, name);
        int e = errno;
        close(fd);
        if (next < 0)
            return snprintf(why, wl,
                            "cwd: %s: %s (a directory of the project; symbolic links are not "
                            "followed); nothing was run",
                            lex, strerror(e)),
                   -1;
        fd = next;
        rest += n;
    }
    if (fd < 0) snprintf(why, wl, "cwd: cannot open the project: %s", strerror(errno));
    return fd;
}

/* ---- a finished run as a result ------------------------------------------- */

/* The refusal objects kgate wrote, as an array; each line is read back so
 * that what the client gets is JSON whatever the pipe held.  The
 * descriptions of the refusals go to text too, one line each. */
static void events_array(UT_string *out, const UT_string *ev, UT_string *text)
{
    const char *p = utstring_body(ev), *end = p + utstring_len(ev);
    bool first = true;
    utstring_printf(out, "[");
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break; /* cut short by the bound: not an object */
        kg_error err = {0};
        kg_jv *v = kg_json_parse(p, (size_t)(nl - p), &err);
        if (v && v->type == KG_JV_OBJECT) {
            if (!first) utstring_printf(out, ",");
            first = false;
            kg_json_write(out, v, 0);
            const kg_jv *rule = kg_jv_get(v, "rule");
            const char *type = kg_jv_get_cstr(v, "type"), *d = kg_jv_get_cstr(v, "description"),
                       *key = kg_jv_get_cstr(rule, "key"), *entry = kg_jv_get_cstr(rule, "entry");
            /* A refusal's "refused" object repeats its kgate: line (stderr). */
            if (type && d && !strcmp(type, "blocked"))
                utstring_printf(text, "kgate refused: %s (rule: %s: %s)\n", d, key ? key : "?",
                                entry ? entry : "?");
        }
        kg_jv_free(v);
        p = nl + 1;
    }
    utstring_printf(out, "]");
}

/* kg_json_strn, with room made first: utstring grows by exactly what
 * each append needs, so a megabyte escaped byte by byte would be a
 * realloc per byte (minutes under AddressSanitizer, which copies each
 * time).  Six bytes is the longest escape of one byte (\u00XX). */
static void json_strn(UT_string *out, const char *s, size_t n)
{
    utstring_reserve(out, 6 * n + 2);
    kg_json_strn(out, s, n);
}

static void stream_text(UT_string *text, const char *name, const kg_mcp_stream *s)
{
    if (!utstring_len(s->buf) && !s->cut) return;
    utstring_printf(text, "--- %s ---\n", name);
    utstring_bincpy(text, utstring_body(s->buf), utstring_len(s->buf));
    if (utstring_len(s->buf) && utstring_body(s->buf)[utstring_len(s->buf) - 1] != '\n')
        utstring_printf(text, "\n");
    if (s->cut) utstring_printf(text, "[%s cut: %zu more bytes not shown]\n", name, s->cut);
}

static void run_result(UT_string *out, const kg_mcp_out *o, long timeout_ms)
{
    UT_string *text, *events;
    utstring_new(text);
    utstring_new(events);
    utstring_printf(text, "exit status %d", o->status);
    if (o->timed_out)
        utstring_printf(text, " (killed: the run took longer than %ld ms)", timeout_ms);
    if (o->input_eof) utstring_printf(text, " (killed: the client closed the server's input)");
    utstring_printf(text, "\n");
    events_array(events, o->events.buf, text);
    stream_text(text, "stdout", &o->out);
    stream_text(text, "stderr", &o->err);
    utstring_printf(out, "{\"content\":[{\"type\":\"text\",\"text\":");
    json_strn(out, utstring_body(text), utstring_len(text));
    utstring_printf(out, "}],\"structuredContent\":{\"exit_status\":%d,\"timed_out\":%s,",
                    o->status, o->timed_out ? "true" : "false");
    utstring_printf(out, "\"stdout\":");
    json_strn(out, utstring_body(o->out.buf), utstring_len(o->out.buf));
    utstring_printf(out, ",\"stderr\":");
    json_strn(out, utstring_body(o->err.buf), utstring_len(o->err.buf));
    utstring_printf(out, ",\"stdout_cut_bytes\":%zu,\"stderr_cut_bytes\":%zu,\"events\":%s",
                    o->out.cut, o->err.cut, utstring_body(events));
    utstring_printf(out, ",\"events_cut\":%s},\"isError\":%s}", o->events.cut ? "true" : "false",
                    o->status != 0 ? "true" : "false");
    utstring_free(text);
    utstring_free(events);
}

/* ---- the tools ------------------------------------------------------------ */

static char **tool_argv(const kg_mcp_server *s, kg_strv *v, const char *const *words, size_t n)
{
    kg_strv_push(v, "kgate");
    for (size_t i = 0; i < n; i++) {
        if (!words[i]) {
            /* The backend goes where the command's options end. */
            if (s->backend) {
                kg_strv_push(v, "--backend");
                kg_strv_push(v, s->backend);
            }
            continue;
        }
        kg_strv_push(v, words[i]);
    }
    return kg_strv_nullterm(v);
}

/* Runs argv in dirfd; the result in o (o->why when it did not start). */
static int start(kg_mcp_server *s, char **argv, int dirfd, bool events, long timeout_ms,
                 kg_mcp_out *o)
{
    kg_mcp_job j = {
        .exe = s->self,
        .argv = argv,
        .dirfd = dirfd,
        .events = events,
        .timeout_ms = timeout_ms,
        .limit = STREAM_LIMIT,
        .input_fd = s->input_fd,
        .input = s->input,
        .input_cap = s->input_cap,
    };
    int rc = kg_mcp_run(&j, o);
    if (o->input_eof) s->input_ended = true;
    return rc;
}

static int tool_run(kg_mcp_server *s, const kg_jv *args, UT_string *out, char *msg, size_t ml)
{
    run_req r;
    int rc = run_args(args, &r, msg, ml);
    if (rc) return rc;
    char why[1024];
    if (strlen(r.command) > COMMAND_MAX) {
        snprintf(why, sizeof why,
                 "run: the command is %zu bytes; one argument of a program can be at most %d; "
                 "nothing was run",
                 strlen(r.command), COMMAND_MAX);
        return tool_error(out, why), 0;
    }
    kg_autoclose int dirfd =
        r.cwd ? open_cwd(s, r.cwd, why, sizeof why) : fcntl(s->projfd, F_DUPFD_CLOEXEC, 3);
    if (dirfd < 0) {
        if (!r.cwd) snprintf(why, sizeof why, "run: cannot open the project: %s", strerror(errno));
        return tool_error(out, why), 0;
    }
    const char *words[] = {"run", "--no-pty", "--events-fd", "3",      NULL,
                           "--",  "/bin/sh",  "-c",          r.command};
    kg_autostrv kg_strv *v = kg_strv_new();
    kg_autofree char **argv = tool_argv(s, v, words, sizeof words / sizeof words[0]);
    kg_mcp_out o;
    kg_mcp_out_init(&o);
    if (start(s, argv, dirfd, true, r.timeout_ms, &o) < 0) {
        snprintf(why, sizeof why, "run: %s; nothing was run", o.why);
        tool_error(out, why);
    } else {
        run_result(out, &o, r.timeout_ms);
    }
    kg_mcp_out_free(&o);
    return 0;
}

static void doctor_result(UT_string *out, const kg_mcp_out *o)
{
    kg_error err = {0};
    kg_jv *rep = kg_json_parse(utstring_body(o->out.buf), utstring_len(o->out.buf), &err);
    if (!rep || rep->type != KG_JV_OBJECT || o->out.cut) {
        UT_string *t;
        utstring_new(t);
        utstring_printf(t, "doctor: exit status %d, no report (%s)\n", o->status,
                        rep ? "not an object" : err.msg);
        utstring_bincpy(t, utstring_body(o->err.buf), utstring_len(o->err.buf));
        tool_error(out, utstring_body(t));
        utstring_free(t);
        kg_jv_free(rep);
        return;
    }
    /* BLOCKED (exit 1) is an answer, not a failure of the tool. */
    utstring_printf(out, "{\"content\":[{\"type\":\"text\",\"text\":");
    json_strn(out, utstring_body(o->out.buf), utstring_len(o->out.buf));
    utstring_printf(out, "}],\"structuredContent\":{\"exit_status\":%d,\"report\":", o->status);
    kg_json_write(out, rep, 0);
    utstring_printf(out, ",\"stderr\":");
    json_strn(out, utstring_body(o->err.buf), utstring_len(o->err.buf));
    utstring_printf(out, "},\"isError\":false}");
    kg_jv_free(rep);
}

static int tool_doctor(kg_mcp_server *s, const kg_jv *args, UT_string *out, char *msg, size_t ml)
{
    if (args && args->n) {
        snprintf(msg, ml, "doctor: takes no arguments");
        return KG_RPC_INVALID_PARAMS;
    }
    kg_autoclose int dirfd = fcntl(s->projfd, F_DUPFD_CLOEXEC, 3);
    const char *words[] = {"doctor", "--json", NULL};
    kg_autostrv kg_strv *v = kg_strv_new();
    kg_autofree char **argv = tool_argv(s, v, words, sizeof words / sizeof words[0]);
    kg_mcp_out o;
    kg_mcp_out_init(&o);
    if (dirfd < 0 || start(s, argv, dirfd, false, DOCTOR_TIMEOUT_MS, &o) < 0) {
        char why[512];
        snprintf(why, sizeof why, "doctor: %s", dirfd < 0 ? strerror(errno) : o.why);
        tool_error(out, why);
    } else {
        doctor_result(out, &o);
    }
    kg_mcp_out_free(&o);
    return 0;
}

int kg_mcp_tools_call(kg_mcp_server *s, const kg_jv *params, UT_string *out, char *msg,
                      size_t msglen)
{
    const char *name = kg_jv_get_cstr(params, "name");
    const kg_jv *args = kg_jv_get(params, "arguments");
    if (!name) {
        snprintf(msg, msglen, "tools/call: params.name must be a string");
        return KG_RPC_INVALID_PARAMS;
    }
    if (args && args->type != KG_JV_OBJECT) {
        snprintf(msg, msglen, "tools/call: params.arguments must be an object");
        return KG_RPC_INVALID_PARAMS;
    }
    if (!strcmp(name, "run")) return tool_run(s, args, out, msg, msglen);
    if (!strcmp(name, "doctor")) return tool_doctor(s, args, out, msg, msglen);
    snprintf(msg, msglen, "tools/call: unknown tool (the tools are run and doctor)");
    return KG_RPC_INVALID_PARAMS;
}
