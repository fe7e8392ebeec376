/* cmd_hook.c: kgate hook claude-code | gemini | codex: the command an
 * agent runs before each of its tool calls (docs/agents.md).
 *
 * It reads the agent's JSON on stdin.  For the agent's shell tool it
 * answers with the same call whose command is the original run through
 * `kgate run` (agentwrap.h), or, for Codex, which does not take a changed
 * command, refuses every command not already in that form.  Whatever it
 * cannot read or does not know, and a doctor verdict of BLOCKED, refuse
 * the call: exit 2 and one `kgate:` line on stderr, which each agent shows
 * the model.  Never an answer that lets a command run unboxed. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agentwrap.h"
#include "commands.h"
#include "jsonread.h"
#include "msg.h"
#include "os.h"

extern char **environ;

/* What an agent's hook may send: far more than any command line, far less
 * than memory. */
#define HOOK_INPUT_MAX (64u << 20)
/* The agents' own refusal status: exit 2 blocks the call and passes stderr
 * to the model (Claude Code, Gemini CLI, Codex CLI alike). */
#define HOOK_REFUSE 2

static const char hook_usage[] =
    "usage: kgate hook claude-code | gemini | codex\n"
    "  (run by the agent, reading its hook JSON on stdin; see kgate setup)\n";

static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kg_msg_vline(stderr, "kgate: refused: ", fmt, ap);
    va_end(ap);
    return HOOK_REFUSE;
}

/* All of stdin, or NULL (too big, or a read error). */
static char *read_stdin(size_t *len)
{
    UT_string *u;
    utstring_new(u);
    char buf[65536];
    for (;;) {
        ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || utstring_len(u) + (size_t)n > HOOK_INPUT_MAX) {
            utstring_free(u);
            return NULL;
        }
        if (n == 0) break;
        utstring_bincpy(u, buf, (size_t)n);
    }
    *len = utstring_len(u);
    char *r = malloc(*len + 1);
    if (!r) kg_oom();
    memcpy(r, utstring_body(u), *len + 1);
    utstring_free(u);
    return r;
}

/* Why doctor says BLOCKED: its first BLOCKED finding, else its last line
 * (the verdict line). */
static void doctor_why(const char *out, char *why, size_t size)
{
    const char *f = strstr(out, "  BLOCKED ");
    if (f) {
        f += strspn(f, " ");
        snprintf(why, size, "%.*s", (int)strcspn(f, "\n"), f);
        return;
    }
    size_t n = strlen(out);
    while (n && out[n - 1] == '\n') n--;
    size_t start = n;
    while (start && out[start - 1] != '\n') start--;
    snprintf(why, size, "%.*s", (int)(n - start), out + start);
}

/* Runs `kgate doctor` (this binary) and returns 0 when its verdict is not
 * BLOCKED.  Anything else (it cannot start, it fails, it is killed) is a
 * refusal: a check that cannot finish refuses. */
static int doctor_ok(const char *self, char *why, size_t size)
{
    int p[2];
    snprintf(why, size, "kgate doctor could not run");
    if (kg_os_pipe(p, false) < 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char *argv[] = {(char *)self, "doctor", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, self, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    UT_string *out;
    utstring_new(out);
    char buf[4096];
    ssize_t n;
    while (rc == 0 && ((n = read(p[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
        if (n > 0) utstring_bincpy(out, buf, (size_t)n);
    close(p[0]);
    int st = 0;
    if (rc == 0)
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (rc == 0 && utstring_len(out)) doctor_why(utstring_body(out), why, size);
    utstring_free(out);
    return rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* The keys of a shell tool's input this hook knows; any other could change
 * how the command runs, so it refuses rather than guess. */
static const char *unknown_key(const kg_jv *input, const char *const *known)
{
    for (size_t i = 0; i < input->n; i++) {
        bool ok = false;
        for (const char *const *k = known; *k && !ok; k++)
            ok = strcmp(input->members[i].key, *k) == 0;
        if (!ok) return input->members[i].key;
    }
    return NULL;
}

typedef struct agent {
    const char *name; /* kgate hook NAME */
    const char *event; /* hook_event_name it is run for */
    const char *tool; /* the shell tool's name; NULL: any call with a command */
    const char *out_key; /* where the changed input goes; NULL: refuse only */
    const char *const *known;
} agent;

static const char *const claude_keys[] = {
    "command", "timeout", "description", "run_in_background", "dangerouslyDisableSandbox", NULL};
static const char *const gemini_keys[] = {
    "command", "description", "dir_path", "is_background", "delay_ms", "additional_permissions",
    NULL};

static const agent agents[] = {
    {"claude-code", "PreToolUse", "Bash", "updatedInput", claude_keys},
    {"gemini", "BeforeTool", "run_shell_command", "tool_input", gemini_keys},
    /* Codex: never changed, so any other field is left as it is. */
    {"codex", "PreToolUse", NULL, NULL, NULL},
};

/* The answer: the same input, its command wrapped, under the agent's key. */
static int answer(const agent *a, const kg_jv *input, const char *self, const char *cmd)
{
    kg_jv *changed = kg_jv_copy(input);
    UT_string *w;
    utstring_new(w);
    kg_agent_wrap(w, self, cmd);
    kg_jv_set(changed, "command", kg_jv_new_str(utstring_body(w)));
    utstring_free(w);
    kg_jv *spec = kg_jv_new(KG_JV_OBJECT);
    kg_jv_set(spec, "hookEventName", kg_jv_new_str(a->event));
    kg_jv_set(spec, a->out_key, changed);
    kg_jv *top = kg_jv_new(KG_JV_OBJECT);
    kg_jv_set(top, "hookSpecificOutput", spec);
    UT_string *o;
    utstring_new(o);
    kg_json_write(o, top, 0);
    utstring_printf(o, "\n");
    kg_jv_free(top);
    size_t len = utstring_len(o);
    bool ok = fwrite(utstring_body(o), 1, len, stdout) == len && fflush(stdout) == 0;
    utstring_free(o);
    /* An answer that did not get out would let the original run. */
    return ok ? KG_EXIT_OK : refuse("cannot write the hook's answer");
}

/* Codex does not run a changed command (docs/agents.md): every command
 * must already be the wrapped form, and the refusal names it. */
static int codex_refusal(const char *self)
{
    UT_string *pre;
    utstring_new(pre);
    kg_agent_prefix(pre, self);
    bool plain = true;
    for (const unsigned char *p = (const unsigned char *)utstring_body(pre); *p; p++)
        plain = plain && *p >= 0x20 && *p != 0x7f;
    /* Written as it is, not escaped for a person (msg.h would double the
     * backslash of '\'', and the model is to copy it): the only text not
     * kgate's own is its path, checked for control bytes above. */
    if (plain)
        fprintf(stderr,
                "kgate: refused: every shell command must run boxed: run it again as "
                "%s'<the command, each ' in it written as '\\''>' (exactly this prefix, the "
                "command in one pair of single quotes)\n",
                utstring_body(pre));
    else
        refuse("every shell command must run boxed, and kgate's path cannot be shown");
    utstring_free(pre);
    return HOOK_REFUSE;
}

static int decide(const agent *a, const kg_jv *in, const char *self)
{
    const char *event = kg_jv_get_cstr(in, "hook_event_name");
    const char *tool = kg_jv_get_cstr(in, "tool_name");
    if (!event || strcmp(event, a->event) != 0)
        return refuse("the hook was run for %s, not %s", event ? event : "an unnamed event",
                      a->event);
    if (!tool) return refuse("the hook's input names no tool");
    const kg_jv *input = kg_jv_get(in, "tool_input");
    if (a->tool ? strcmp(tool, a->tool) != 0 : !kg_jv_get(input, "command"))
        return KG_EXIT_OK; /* not the shell: no answer */
    if (!input || input->type != KG_JV_OBJECT)
        return refuse("the %s call has no tool_input object", tool);
    const char *extra = a->known ? unknown_key(input, a->known) : NULL;
    if (extra) return refuse("the %s call has a field kgate does not know (%s)", tool, extra);
    const char *cmd = kg_jv_get_cstr(input, "command");
    if (!cmd) return refuse("the %s call's command is missing, not a string, or holds a NUL", tool);
    char why[512];
    if (doctor_ok(self, why, sizeof why) < 0)
        return refuse("kgate cannot box commands here (doctor: %s); see `kgate doctor`", why);
    char *inner = kg_agent_unwrap(self, cmd);
    if (inner) {
        free(inner);
        return KG_EXIT_OK; /* already exactly the boxed form: it runs as it is */
    }
    if (!a->out_key) return codex_refusal(self);
    return answer(a, input, self, cmd);
}

int kg_cmd_hook(int argc, char **argv)
{
    if (argc == 2 && kg_cli_is_help(argv[1])) return kg_cli_help(hook_usage);
    if (argc != 2) return kg_cli_usage_error(hook_usage, "kgate hook takes one agent name");
    const agent *a = NULL;
    for (size_t i = 0; i < sizeof agents / sizeof *agents; i++)
        if (strcmp(argv[1], agents[i].name) == 0) a = &agents[i];
    if (!a) return refuse("no hook for an agent named '%s'", argv[1]);
    char self[PATH_MAX];
    kg_error err = {0};
    if (kg_agent_self(self, sizeof self, &err) < 0) return refuse("%s", err.msg);
    size_t len = 0;
    char *buf = read_stdin(&len);
    if (!buf) return refuse("cannot read the hook's input (unreadable, or over 64 MiB)");
    kg_jv *in = kg_json_parse(buf, len, &err);
    free(buf);
    if (!in) return refuse("the hook's input is not JSON kgate reads: %s", err.msg);
    int rc = in->type == KG_JV_OBJECT ? decide(a, in, self)
                                      : refuse("the hook's input is not a JSON object");
    kg_jv_free(in);
    return rc;
}
