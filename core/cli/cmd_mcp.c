/* cmd_mcp.c: `kgate mcp`, a Model Context Protocol server on stdio.
 *
 * Messages are JSON-RPC 2.0, one a line, both ways (the MCP stdio
 * transport).  Requests are handled one at a time, in the order they
 * arrive: a tools/call that runs a command answers when the run has ended,
 * and what the client sends meanwhile waits (a ping too).  The server
 * answers initialize, ping, tools/list and tools/call, takes the
 * notifications it knows and ignores the others, answers every other
 * request -32601, and a line that is not JSON -32700.  It ends, status 0,
 * at end of its input, and a run still going is then ended with it.
 *
 * What reaches the boxed program: only the command string, as the one
 * argument of /bin/sh -c inside the box (mcptools.c).  The server's stdin
 * and stdout are the protocol channel and no run gets them. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "commands.h"
#include "json.h"
#include "jsonread.h"
#include "kgate-config.h"
#include "mcptools.h"
#include "msg.h"
#include "os.h"

#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

/* A message longer than this is refused unread (-32600).  Four times the
 * longest command a run can take, escaped as \uXXXX throughout. */
#define LINE_MAX_BYTES ((size_t)4 << 20)

/* The newest first: the answer when the client asks for one not here. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

static const char mcp_usage[] =
    "usage: kgate mcp [--backend NAME]\n"
    "  A Model Context Protocol server on stdin and stdout, for an MCP client\n"
    "  (an agent) started in a project: its tool run runs a command in the box\n"
    "  as kgate run would, its tool doctor reports as kgate doctor --json.\n";

typedef struct mcp {
    kg_mcp_server s;
    bool skipping; /* inside a line that was too long, until its newline */
    bool out_gone; /* stdout cannot be written: the client left */
} mcp;

/* ---- writing -------------------------------------------------------------- */

static void send_line(mcp *m, UT_string *msg)
{
    utstring_bincpy(msg, "\n", 1);
    const char *p = utstring_body(msg);
    size_t n = utstring_len(msg);
    while (n && !m->out_gone) {
        ssize_t w = write(1, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            m->out_gone = true;
            break;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* The id of the request as it came (a string or a number), or null. */
static void put_id(UT_string *o, const kg_jv *id)
{
    if (id)
        kg_json_write(o, id, 0);
    else
        utstring_printf(o, "null");
}

static void send_error(mcp *m, const kg_jv *id, int code, const char *text)
{
    UT_string *o;
    utstring_new(o);
    utstring_printf(o, "{\"jsonrpc\":\"2.0\",\"id\":");
    put_id(o, id);
    utstring_printf(o, ",\"error\":{\"code\":%d,\"message\":", code);
    kg_json_str(o, text);
    utstring_printf(o, "}}");
    send_line(m, o);
    utstring_free(o);
}

static void send_result(mcp *m, const kg_jv *id, const UT_string *result)
{
    UT_string *o;
    utstring_new(o);
    utstring_printf(o, "{\"jsonrpc\":\"2.0\",\"id\":");
    put_id(o, id);
    utstring_printf(o, ",\"result\":");
    utstring_bincpy(o, utstring_body(result), utstring_len(result));
    utstring_printf(o, "}");
    send_line(m, o);
    utstring_free(o);
}

/* ---- the methods ---------------------------------------------------------- */

static int do_initialize(const kg_jv *params, UT_string *r, char *msg, size_t ml)
{
    const char *asked = kg_jv_get_cstr(params, "protocolVersion");
    if (!params || params->type != KG_JV_OBJECT || !asked) {
        snprintf(msg, ml, "initialize: params.protocolVersion must be a string");
        return KG_RPC_INVALID_PARAMS;
    }
    const char *v = versions[0];
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
        if (!strcmp(asked, versions[i])) v = versions[i];
    utstring_printf(r,
                    "{\"protocolVersion\":\"%s\",\"capabilities\":{\"tools\":"
                    "{\"listChanged\":false}},\"serverInfo\":{\"name\":\"kgate\",\"version\":",
                    v);
    kg_json_str(r, KGATE_VERSION);
    utstring_printf(r, "},\"instructions\":");
    kg_json_str(r, "Use the run tool for every shell command: it runs the command in kgate's "
                   "sandbox, where the project is writable and the home directory and network "
                   "are not. A refused command (exit 125 or 126) says why; do not retry it in "
                   "another spelling.");
    utstring_printf(r, "}");
    return 0;
}

/* Answers one request (id set): 0 with the result in r, or an error
 * code with msg. */
static int dispatch(mcp *m, const char *method, const kg_jv *params, UT_string *r, char *msg,
                    size_t ml)
{
    if (params && params->type != KG_JV_OBJECT && params->type != KG_JV_ARRAY) {
        snprintf(msg, ml, "%s: params must be an object", method);
        return KG_RPC_INVALID_REQUEST;
    }
    if (!strcmp(method, "initialize")) return do_initialize(params, r, msg, ml);
    if (!strcmp(method, "ping")) return utstring_printf(r, "{}"), 0;
    if (!strcmp(method, "tools/list")) return kg_mcp_tools_list(r), 0;
    if (!strcmp(method, "tools/call")) {
        if (!params || params->type != KG_JV_OBJECT) {
            snprintf(msg, ml, "tools/call: params must be an object");
            return KG_RPC_INVALID_PARAMS;
        }
        return kg_mcp_tools_call(&m->s, params, r, msg, ml);
    }
    snprintf(msg, ml, "method not found");
    return KG_RPC_NO_METHOD;
}

/* What is wrong with a message's envelope: 0, or an error code with msg
 * and *reply_id (NULL: answer with id null; *quiet: answer nothing, for a
 * notification or a client's response). */
static int envelope(const kg_jv *v, const kg_jv **reply_id, bool *quiet, const char **msg)
{
    *reply_id = NULL;
    *quiet = false;
    if (v->type != KG_JV_OBJECT) {
        *msg = v->type == KG_JV_ARRAY ? "batches are not supported" : "a message must be an object";
        return KG_RPC_INVALID_REQUEST;
    }
    const kg_jv *id = kg_jv_get(v, "id"), *method = kg_jv_get(v, "method");
    if (id && id->type != KG_JV_STRING && id->type != KG_JV_NUMBER) {
        *msg = "id must be a string or a number";
        return KG_RPC_INVALID_REQUEST;
    }
    *reply_id = id;
    /* Without an id nobody waits for an answer: a notification (initialized,
     * cancelled, ...) or a response to a request the server never sends. */
    *quiet = !id || (!method && (kg_jv_get(v, "result") || kg_jv_get(v, "error")));
    const char *version = kg_jv_get_cstr(v, "jsonrpc");
    if (!version || strcmp(version, "2.0") != 0) {
        *msg = "jsonrpc must be \"2.0\"";
        return KG_RPC_INVALID_REQUEST;
    }
    if (!kg_jv_cstr(method)) {
        *msg = "method must be a string";
        return KG_RPC_INVALID_REQUEST;
    }
    return 0;
}

/* One message: a request gets one answer, a notification none. */
static void handle_message(mcp *m, const kg_jv *v)
{
    const kg_jv *id;
    const char *what = "";
    bool quiet;
    int code = envelope(v, &id, &quiet, &what);
    if (code || quiet) {
        if (!quiet) send_error(m, id, code, what);
        return;
    }
    UT_string *r;
    utstring_new(r);
    char msg[512] = "";
    code = dispatch(m, kg_jv_get_cstr(v, "method"), kg_jv_get(v, "params"), r, msg, sizeof msg);
    if (code)
        send_error(m, id, code, msg);
    else
        send_result(m, id, r);
    utstring_free(r);
}

static void handle_line(mcp *m, const char *p, size_t n)
{
    while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
    size_t lead = strspn(p, " \t");
    if (lead >= n) return; /* an empty line is no message */
    kg_error err = {0};
    kg_jv *v = kg_json_parse(p, n, &err);
    if (!v) {
        send_error(m, NULL, KG_RPC_PARSE_ERROR, err.msg);
        return;
    }
    handle_message(m, v);
    kg_jv_free(v);
}

/* ---- reading -------------------------------------------------------------- */

/* Handles every whole line of the input buffer and keeps the rest.  A
 * line past the bound is answered once and skipped to its newline. */
static void handle_lines(mcp *m)
{
    UT_string *in = m->s.input;
    size_t off = 0, len = utstring_len(in);
    while (!m->out_gone && !m->s.input_ended) {
        const char *b = utstring_body(in) + off;
        const char *nl = memchr(b, '\n', len - off);
        if (!nl) break;
        if (!m->skipping) handle_line(m, b, (size_t)(nl - b));
        m->skipping = false;
        off += (size_t)(nl - b) + 1;
        /* A run may have appended to the buffer meanwhile. */
        len = utstring_len(in);
    }
    if (len - off > LINE_MAX_BYTES && !m->skipping) {
        send_error(m, NULL, KG_RPC_INVALID_REQUEST, "message longer than 4 MiB");
        m->skipping = true;
    }
    if (m->skipping) off = len;
    memmove(utstring_body(in), utstring_body(in) + off, len - off);
    utstring_len(in) = len - off;
    utstring_body(in)[utstring_len(in)] = '\0';
}

static int serve(mcp *m)
{
    char b[65536];
    for (;;) {
        handle_lines(m);
        /* The client is gone: what it sent last is not acted on. */
        if (m->out_gone || m->s.input_ended) return KG_EXIT_OK;
        ssize_t n = read(0, b, sizeof b);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        utstring_bincpy(m->s.input, b, (size_t)n);
    }
    /* The last message may lack its newline. */
    if (utstring_len(m->s.input) && !m->skipping)
        handle_line(m, utstring_body(m->s.input), utstring_len(m->s.input));
    return KG_EXIT_OK;
}

/* ---- the command ---------------------------------------------------------- */

/* The kgate binary running now, by its path: every tool runs it again.
 * Resolved once, at start. */
static char *self_exe(void)
{
#ifdef __APPLE__
    char buf[PATH_MAX];
    uint32_t n = sizeof buf;
    if (_NSGetExecutablePath(buf, &n) != 0) return NULL;
    return realpath(buf, NULL);
#else
    return realpath("/proc/self/exe", NULL);
#endif
}

static int parse_args(int argc, char **argv, const char **backend, int *status)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (kg_cli_is_help(a)) return *status = kg_cli_help(mcp_usage), -1;
        if (!strcmp(a, "--backend") && i + 1 < argc) {
            *backend = argv[++i];
        } else if (!strncmp(a, "--backend=", 10)) {
            *backend = a + 10;
        } else {
            *status = kg_cli_usage_error(mcp_usage, "mcp: unknown or incomplete argument '%s'", a);
            return -1;
        }
    }
    return 0;
}

int kg_cmd_mcp(int argc, char **argv)
{
    int status = KG_EXIT_OK;
    mcp m = {.s = {.projfd = -1, .input_fd = 0, .input_cap = 2 * LINE_MAX_BYTES}};
    if (parse_args(argc, argv, &m.s.backend, &status) < 0) return status;
    kg_autofree char *cwd = getcwd(NULL, 0);
    kg_autofree char *project = cwd ? realpath(cwd, NULL) : NULL;
    kg_autofree char *self = self_exe();
    if (!project || !self) {
        kg_msg_line(stderr, "kgate: ", "mcp: cannot resolve %s: %s",
                    project ? "the kgate binary" : "the working directory", strerror(errno));
        return KG_EXIT_REFUSED;
    }
    kg_autoclose int projfd = kg_os_open_dir_handle(project);
    if (projfd < 0) {
        kg_msg_line(stderr, "kgate: ", "mcp: cannot open %s: %s", project, strerror(errno));
        return KG_EXIT_REFUSED;
    }
    m.s.project = project;
    m.s.projfd = projfd;
    m.s.self = self;
    /* A client that closes its end must not kill the server mid-answer:
     * the write fails and the server ends at its next read. */
    signal(SIGPIPE, SIG_IGN);
    utstring_new(m.s.input);
    status = serve(&m);
    utstring_free(m.s.input);
    return status;
}
