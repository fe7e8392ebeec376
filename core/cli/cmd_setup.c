/* cmd_setup.c: kgate setup claude-code | gemini | codex [--project]
 * [--remove]: puts `kgate hook AGENT` into the agent's settings, or takes
 * it out again (docs/agents.md).
 *
 * A settings file is edited as a whole tree (jsonread.h): everything in it
 * but what kgate adds is written back as it was; run twice, the second run
 * changes nothing; --remove takes out what setup adds and nothing else.  A
 * file kgate cannot read, or whose shape it does not know, is left
 * untouched and the command refuses with one `kgate:` line.  Codex's TOML
 * is not parsed: kgate appends one block between two marker lines and
 * removes exactly that block. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentwrap.h"
#include "commands.h"
#include "jsonread.h"
#include "msg.h"

static const char setup_usage[] =
    "usage: kgate setup claude-code | gemini | codex [--project] [--remove]\n"
    "  adds `kgate hook AGENT` to the agent's user settings (with --project, the\n"
    "  settings of the project in the current directory); --remove takes it out\n";

#define SETTINGS_MAX (16u << 20)

typedef struct target {
    const char *agent; /* kgate hook NAME */
    const char *dir; /* under $HOME, or the project */
    const char *file;
    const char *event;
    const char *matcher;
    const char *const *deny; /* permissions.deny rules added, NULL: none */
} target;

/* Claude Code's own file tools run in its process, outside the box: these
 * rules keep them from editing the hook away, or kgate's own config.  (An
 * Edit rule covers every file-editing tool; 2.1.337 warns that a Write rule
 * matches nothing.) */
static const char *const claude_deny[] = {
    "Edit(~/.claude/settings.json)", "Edit(**/.claude/settings*.json)", "Edit(~/.kgate/**)", NULL};

static const target targets[] = {
    {"claude-code", ".claude", "settings.json", "PreToolUse", "Bash", claude_deny},
    {"gemini", ".gemini", "settings.json", "BeforeTool", "run_shell_command", NULL},
    {"codex", ".codex", "config.toml", "PreToolUse", "Bash", NULL},
};

typedef struct setup {
    const target *t;
    bool remove;
    char path[PATH_MAX];
    char hookcmd[PATH_MAX + 64]; /* '<kgate>' hook AGENT */
} setup;

/* ---- files ---- */

/* The file's bytes, "" with *existed false when there is none.  A symbolic
 * link is refused: writing through one would edit another file. */
static char *read_settings(const char *path, size_t *len, bool *existed, mode_t *mode,
                           kg_error *err)
{
    struct stat st;
    *existed = false;
    *mode = 0600;
    *len = 0;
    if (lstat(path, &st) < 0) {
        if (errno != ENOENT) return kg_err_set(err, errno, "%s: %s", path, strerror(errno)), NULL;
        char *e = strdup("");
        if (!e) kg_oom();
        return e;
    }
    if (!S_ISREG(st.st_mode))
        return kg_err_set(err, EINVAL, "%s is not a regular file", path), NULL;
    if (st.st_size > SETTINGS_MAX) return kg_err_set(err, EFBIG, "%s is over 16 MiB", path), NULL;
    FILE *f = fopen(path, "rbe");
    if (!f) return kg_err_set(err, errno, "%s: %s", path, strerror(errno)), NULL;
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) kg_oom();
    *len = fread(buf, 1, (size_t)st.st_size + 1, f);
    bool bad = ferror(f) || *len != (size_t)st.st_size;
    fclose(f);
    if (bad) {
        free(buf);
        return kg_err_set(err, EIO, "%s changed or could not be read", path), NULL;
    }
    buf[*len] = '\0';
    *existed = true;
    *mode = st.st_mode & 07777;
    return buf;
}

static int mkdir_parent(const char *path, kg_error *err)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return kg_err_set(err, errno, "cannot make %s: %s", dir, strerror(errno));
    return 0;
}

/* Replaces path by data in one rename, keeping its mode: a reader sees the
 * old file or the new one, never half. */
static int write_settings(const char *path, const char *data, size_t len, mode_t mode,
                          kg_error *err)
{
    if (mkdir_parent(path, err) < 0) return -1;
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.kgate-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) return kg_err_set(err, errno, "cannot write beside %s: %s", path, strerror(errno));
    bool ok = fchmod(fd, mode) == 0 && write(fd, data, len) == (ssize_t)len && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return kg_err_set(err, e, "cannot write %s: %s", path, strerror(e));
    }
    return 0;
}

/* ---- the JSON settings (Claude Code, Gemini CLI) ---- */

/* Whether a matcher group is one kgate setup wrote for this agent, with
 * this kgate or another (a kgate since moved): one command hook whose
 * command is '<.../kgate>' hook AGENT. */
static bool is_kgate_group(const kg_jv *g, const char *agent)
{
    const kg_jv *hooks = kg_jv_get(g, "hooks");
    if (!hooks || hooks->type != KG_JV_ARRAY || hooks->n != 1) return false;
    const char *cmd = kg_jv_get_cstr(hooks->items[0], "command");
    if (!cmd) return false;
    char tail[64];
    snprintf(tail, sizeof tail, "/kgate' hook %s", agent);
    size_t n = strlen(cmd), t = strlen(tail);
    return cmd[0] == '\'' && n > t && strcmp(cmd + n - t, tail) == 0;
}

static kg_jv *kgate_group(const setup *s)
{
    kg_jv *h = kg_jv_new(KG_JV_OBJECT);
    kg_jv_set(h, "type", kg_jv_new_str("command"));
    kg_jv_set(h, "command", kg_jv_new_str(s->hookcmd));
    kg_jv *hooks = kg_jv_new(KG_JV_ARRAY);
    kg_jv_push(hooks, h);
    kg_jv *g = kg_jv_new(KG_JV_OBJECT);
    kg_jv_set(g, "matcher", kg_jv_new_str(s->t->matcher));
    kg_jv_set(g, "hooks", hooks);
    return g;
}

/* obj[key] as a container of the given type, made when missing; NULL when
 * it is there and something else (a shape kgate does not know). */
static kg_jv *child(kg_jv *obj, const char *key, kg_jv_type type, bool make)
{
    kg_jv *c = kg_jv_get(obj, key);
    if (!c && make) {
        c = kg_jv_new(type);
        kg_jv_set(obj, key, c);
    }
    return c && c->type == type ? c : NULL;
}

static int edit_hooks(const setup *s, kg_jv *root, kg_error *err)
{
    bool had_hooks = kg_jv_get(root, "hooks") != NULL;
    kg_jv *hooks = child(root, "hooks", KG_JV_OBJECT, !s->remove);
    if (!hooks)
        return had_hooks ? kg_err_set(err, EINVAL, "%s: \"hooks\" is not an object", s->path) : 0;
    bool had_event = kg_jv_get(hooks, s->t->event) != NULL;
    kg_jv *list = child(hooks, s->t->event, KG_JV_ARRAY, !s->remove);
    if (!list)
        return had_event
                   ? kg_err_set(err, EINVAL, "%s: hooks.%s is not a list", s->path, s->t->event)
                   : 0;
    kg_jv *mine = kgate_group(s);
    bool kept = false, removed = false;
    for (size_t i = list->n; i-- > 0;) {
        if (!is_kgate_group(list->items[i], s->t->agent)) continue;
        /* The one already there stays where it is: a second run changes
         * nothing. */
        if (!s->remove && !kept && kg_jv_equal(list->items[i], mine)) {
            kept = true;
            continue;
        }
        kg_jv_remove(list, i);
        removed = true;
    }
    if (!s->remove && !kept) kg_jv_push(list, kg_jv_copy(mine));
    kg_jv_free(mine);
    if (removed && list->n == 0) kg_jv_del(hooks, s->t->event);
    if (removed && hooks->n == 0) kg_jv_del(root, "hooks");
    return 0;
}

static int edit_deny(const setup *s, kg_jv *root, kg_error *err)
{
    if (!s->t->deny) return 0;
    bool had = kg_jv_get(root, "permissions") != NULL;
    kg_jv *perm = child(root, "permissions", KG_JV_OBJECT, !s->remove);
    if (!perm)
        return had ? kg_err_set(err, EINVAL, "%s: \"permissions\" is not an object", s->path) : 0;
    had = kg_jv_get(perm, "deny") != NULL;
    kg_jv *deny = child(perm, "deny", KG_JV_ARRAY, !s->remove);
    if (!deny)
        return had ? kg_err_set(err, EINVAL, "%s: permissions.deny is not a list", s->path) : 0;
    for (const char *const *r = s->t->deny; *r; r++) {
        kg_jv *rule = kg_jv_new_str(*r);
        bool found = false;
        for (size_t i = deny->n; i-- > 0;)
            if (kg_jv_equal(deny->items[i], rule)) {
                found = true;
                if (s->remove) kg_jv_remove(deny, i);
            }
        if (!found && !s->remove)
            kg_jv_push(deny, rule);
        else
            kg_jv_free(rule);
    }
    if (s->remove && deny->n == 0) kg_jv_del(perm, "deny");
    if (s->remove && perm->n == 0) kg_jv_del(root, "permissions");
    return 0;
}

static int setup_json(const setup *s, kg_error *err)
{
    size_t len;
    bool existed;
    mode_t mode;
    char *buf = read_settings(s->path, &len, &existed, &mode, err);
    if (!buf) return -1;
    kg_jv *root = existed ? kg_json_parse(buf, len, err) : kg_jv_new(KG_JV_OBJECT);
    free(buf);
    if (!root) return kg_err_wrap(err, "%s (left untouched)", s->path);
    kg_jv *before = kg_jv_copy(root);
    int rc = root->type == KG_JV_OBJECT
                 ? 0
                 : kg_err_set(err, EINVAL, "%s is not a JSON object", s->path);
    if (rc == 0) rc = edit_hooks(s, root, err);
    if (rc == 0) rc = edit_deny(s, root, err);
    bool same = rc == 0 && kg_jv_equal(before, root) && (existed || s->remove);
    if (rc == 0 && !same) {
        UT_string *o;
        utstring_new(o);
        kg_json_write(o, root, 2);
        utstring_printf(o, "\n");
        rc = write_settings(s->path, utstring_body(o), utstring_len(o), mode, err);
        utstring_free(o);
    }
    if (rc == 0)
        kg_msg_line(stdout, "kgate: ", "%s: %s", s->path,
                    same        ? "nothing to change"
                    : s->remove ? "took out kgate's hook"
                                : "added kgate's hook");
    kg_jv_free(before);
    kg_jv_free(root);
    return rc;
}

/* ---- Codex's config.toml: one marked block ---- */

#define MARK_BEGIN \
    "# >>> kgate setup codex: every shell command runs boxed (kgate setup codex --remove) >>>\n"
#define MARK_END "# <<< kgate setup codex <<<\n"

/* The block, with the command as a TOML basic string. */
static void codex_block(UT_string *o, const setup *s)
{
    utstring_printf(
        o, "%s[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"",
        MARK_BEGIN);
    for (const char *p = s->hookcmd; *p; p++) {
        if (*p == '"' || *p == '\\') utstring_bincpy(o, "\\", 1);
        utstring_bincpy(o, p, 1);
    }
    utstring_printf(o, "\"\n%s", MARK_END);
}

/* The file without kgate's block into out; -1 when the markers are not one
 * clean pair (unsure what is kgate's: refuse). */
static int codex_strip(const char *text, UT_string *out, bool *had)
{
    const char *b = strstr(text, MARK_BEGIN);
    *had = b != NULL;
    if (!b) {
        utstring_printf(out, "%s", text);
        return strstr(text, MARK_END) ? -1 : 0;
    }
    if (b != text && b[-1] != '\n') return -1;
    const char *e = strstr(b, MARK_END);
    if (!e || strstr(e + 1, MARK_BEGIN) || strstr(e + strlen(MARK_END), MARK_END)) return -1;
    utstring_bincpy(out, text, (size_t)(b - text));
    utstring_printf(out, "%s", e + strlen(MARK_END));
    return 0;
}

static int setup_codex(const setup *s, kg_error *err)
{
    size_t len;
    bool existed, had;
    mode_t mode;
    char *text = read_settings(s->path, &len, &existed, &mode, err);
    if (!text) return -1;
    if (strlen(text) != len) {
        free(text);
        return kg_err_set(err, EINVAL, "%s holds a NUL byte; left untouched", s->path);
    }
    UT_string *out, *block;
    utstring_new(out);
    utstring_new(block);
    codex_block(block, s);
    int rc = codex_strip(text, out, &had);
    if (rc < 0)
        kg_err_set(err, EINVAL, "%s: kgate's marker lines are not one pair; left untouched",
                   s->path);
    if (rc == 0 && !s->remove) {
        if (utstring_len(out) && utstring_body(out)[utstring_len(out) - 1] != '\n')
            utstring_printf(out, "\n");
        utstring_concat(out, block);
    }
    bool same = rc == 0 && strcmp(utstring_body(out), text) == 0;
    if (rc == 0 && !same && !(s->remove && !existed))
        rc = write_settings(s->path, utstring_body(out), utstring_len(out), mode, err);
    if (rc == 0)
        kg_msg_line(stdout, "kgate: ", "%s: %s", s->path,
                    same || (s->remove && !had) ? "nothing to change"
                    : s->remove                 ? "took out kgate's hook"
                                                : "added kgate's hook");
    utstring_free(out);
    utstring_free(block);
    free(text);
    return rc;
}

/* ---- the command ---- */

static int find_path(setup *s, bool project, kg_error *err)
{
    char base[PATH_MAX];
    if (project) {
        if (!getcwd(base, sizeof base))
            return kg_err_set(err, errno, "cannot tell the current directory");
    } else {
        const char *home = getenv("HOME");
        if (!home || home[0] != '/')
            return kg_err_set(err, EINVAL, "HOME is not set to an absolute path");
        snprintf(base, sizeof base, "%s", home);
    }
    int n = snprintf(s->path, sizeof s->path, "%s/%s/%s", base, s->t->dir, s->t->file);
    if (n < 0 || (size_t)n >= sizeof s->path)
        return kg_err_set(err, ENAMETOOLONG, "the settings path is too long");
    return 0;
}

int kg_cmd_setup(int argc, char **argv)
{
    setup s = {0};
    bool project = false;
    for (int i = 1; i < argc; i++) {
        if (kg_cli_is_help(argv[i])) return kg_cli_help(setup_usage);
        if (strcmp(argv[i], "--project") == 0)
            project = true;
        else if (strcmp(argv[i], "--remove") == 0)
            s.remove = true;
        else if (argv[i][0] == '-')
            return kg_cli_usage_error(setup_usage, "unknown option '%s'", argv[i]);
        else if (s.t)
            return kg_cli_usage_error(setup_usage, "unexpected argument '%s'", argv[i]);
        else
            for (size_t k = 0; k < sizeof targets / sizeof *targets; k++)
                if (strcmp(argv[i], targets[k].agent) == 0) s.t = &targets[k];
        if (!s.t && argv[i][0] != '-')
            return kg_cli_usage_error(setup_usage, "no agent named '%s'", argv[i]);
    }
    if (!s.t)
        return kg_cli_usage_error(setup_usage, "name the agent: claude-code, gemini or codex");
    kg_error err = {0};
    char self[PATH_MAX];
    int rc = kg_agent_self(self, sizeof self, &err);
    if (rc == 0) rc = find_path(&s, project, &err);
    if (rc == 0) {
        UT_string *q;
        utstring_new(q);
        kg_sh_quote(q, self);
        snprintf(s.hookcmd, sizeof s.hookcmd, "%s hook %s", utstring_body(q), s.t->agent);
        utstring_free(q);
        rc = strcmp(s.t->agent, "codex") == 0 ? setup_codex(&s, &err) : setup_json(&s, &err);
    }
    if (rc < 0) {
        kg_say("%s", err.msg);
        return KG_EXIT_FAIL;
    }
    return KG_EXIT_OK;
}
