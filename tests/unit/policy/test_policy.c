/* test_policy.c: layering, the narrowing rules, one-shot flags
 * (core/policy/policy.c). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "testutil.h"

static char root[PATH_MAX];
static char home[PATH_MAX + 16];
static char proj[PATH_MAX + 32];

static void mkdirs(const char *rel)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "mkdir -p '%s/%s'", home, rel);
    ck_assert_int_eq(system(p), 0);
}

static void setup(void)
{
    char t[] = "/tmp/kgtest-policy.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(t));
    ck_assert_ptr_nonnull(realpath(t, root));
    snprintf(home, sizeof home, "%s/home", root);
    snprintf(proj, sizeof proj, "%s/proj", home);
    ck_assert_int_eq(mkdir(home, 0700), 0);
    ck_assert_int_eq(mkdir(proj, 0700), 0);
    mkdirs("a");
    mkdirs("b");
    mkdirs("c");
    mkdirs(".kgate");
    unsetenv("TMPDIR");
}

static void teardown(void)
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
}

static void write_user(const char *yaml)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/.kgate/config.yaml", home);
    if (yaml)
        kgt_write_text(p, yaml);
    else
        unlink(p);
}

static void write_project(const char *yaml)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/.kgate.yaml", proj);
    if (yaml)
        kgt_write_text(p, yaml);
    else
        unlink(p);
}

/* Replaces every "$H" with home and "$P" with the project. */
static const char *expand(const char *s, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    while (*s && o + 1 < len) {
        const char *rep = NULL;
        if (s[0] == '$' && s[1] == 'H')
            rep = home;
        else if (s[0] == '$' && s[1] == 'P')
            rep = proj;
        if (rep) {
            o += (size_t)snprintf(buf + o, len - o, "%s", rep);
            s += 2;
        } else {
            buf[o++] = *s++;
            buf[o] = '\0';
        }
    }
    return buf;
}

static const kg_strv *list_of(const kg_policy *p, const char *key)
{
    const kg_strv *v = kg_policy_list(p, key);
    ck_assert_msg(v != NULL, "no list %s", key);
    return v;
}

/* One row: a user file and a project file; either the load fails with a
 * message containing err (after $H/$P expansion), or it succeeds and the
 * effective list key contains has and lacks lacks. */
typedef struct narrow_case {
    const char *what;
    const char *user, *project;
    const char *err;
    const char *key, *has, *lacks;
} narrow_case;

static const narrow_case cases[] = {
    /* network: open > restricted > off */
    {"network narrows", "network: open\n", "network: restricted\n", NULL, NULL, NULL, NULL},
    {"network keeps", "network: off\n", "network: off\n", NULL, NULL, NULL, NULL},
    {"network widens off->open", "network: off\n", "network: open\n",
     "$P/.kgate.yaml: network: 'open' is wider than the user config's 'off'", NULL, NULL, NULL},
    {"network widens restricted->open", "network: restricted\n", "network: open\n",
     "network: 'open' is wider than the user config's 'restricted'", NULL, NULL, NULL},
    {"network widens off->restricted", "network: off\n", "network: restricted\n",
     "network: 'restricted' is wider than the user config's 'off'", NULL, NULL, NULL},
    {"network widens the defaults", NULL, "network: open\n",
     "network: 'open' is wider than the user config's 'restricted'", NULL, NULL, NULL},
    /* macos_profile: permissive > strict */
    {"macos_profile narrows", "macos_profile: permissive\n", "macos_profile: strict\n", NULL, NULL,
     NULL, NULL},
    {"macos_profile widens", "macos_profile: strict\n", "macos_profile: permissive\n",
     "macos_profile: 'permissive' is wider than the user config's 'strict'", NULL, NULL, NULL},
    /* may drop, never add */
    {"allow_hosts drops", "allow_hosts: [a.com, b.com]\n", "allow_hosts: [A.COM]\n", NULL,
     "allow_hosts", "a.com", "b.com"},
    {"allow_hosts adds", "allow_hosts: [a.com]\n", "allow_hosts: [a.com, evil.com]\n",
     ".kgate.yaml:1: allow_hosts: the entry is not in the user config", NULL, NULL, NULL},
    {"allow_paths drops", "allow_paths: [~/a, b]\n", "allow_paths: [../a]\n", NULL, "allow_paths",
     "$H/a", "$H/b"},
    {"allow_paths adds", "allow_paths: [~/a]\n", "allow_paths: [~/a, ~/c]\n",
     ".kgate.yaml:1: allow_paths: the entry is not in the user config", NULL, NULL, NULL},
    {"read_paths drops", "read_paths: [~/a, ~/b]\n", "read_paths: []\n", NULL, "read_paths", NULL,
     "$H/a"},
    {"read_paths adds", "read_paths: [~/a]\n", "read_paths: [~/b]\n",
     ".kgate.yaml:1: read_paths: the entry is not in the user config", NULL, NULL, NULL},
    {"pass_env drops", "pass_env: [A_TOKEN, B_KEY]\n", "pass_env: [A_TOKEN]\n", NULL, "pass_env",
     "A_TOKEN", "B_KEY"},
    {"pass_env adds", "pass_env: [A_TOKEN]\n", "pass_env: [C_SECRET]\n",
     ".kgate.yaml:1: pass_env: the entry is not in the user config", NULL, NULL, NULL},
    {"unprotect_paths drops", "unprotect_paths: [.vscode, .idea]\n", "unprotect_paths: [.vscode]\n",
     NULL, "protect_paths", "$P/.idea", "$P/.vscode"},
    {"unprotect_paths adds", "unprotect_paths: [.vscode]\n",
     "unprotect_paths: [.vscode, .git/hooks]\n",
     ".kgate.yaml:1: unprotect_paths: the entry is not in the user config", NULL, NULL, NULL},
    {"allow_sockets drops", "allow_sockets: [~/agent.sock]\n", "allow_sockets: []\n", NULL,
     "allow_sockets", NULL, "$H/agent.sock"},
    {"allow_sockets adds", "allow_sockets: [~/agent.sock]\n", "allow_sockets: [/run/docker.sock]\n",
     ".kgate.yaml:1: allow_sockets: the entry is not in the user config", NULL, NULL, NULL},
    {"macos_allow_mach drops", "macos_allow_mach: [com.a, com.b]\n", "macos_allow_mach: [com.b]\n",
     NULL, "macos_allow_mach", "com.b", "com.a"},
    {"macos_allow_mach adds", "macos_allow_mach: [com.a]\n", "macos_allow_mach: [com.x]\n",
     ".kgate.yaml:1: macos_allow_mach: the entry is not in the user config", NULL, NULL, NULL},
    /* may add; leaving an entry out does not remove it */
    {"deny_read adds", NULL, "deny_read: [secret.pem]\n", NULL, "deny_read", "$P/secret.pem", NULL},
    {"deny_read cannot drop", NULL, "deny_read: []\n", NULL, "deny_read", "$P/.env", NULL},
    {"deny_exec adds", NULL, "deny_exec: [nc]\n", NULL, "deny_exec", "nc", NULL},
    {"deny_exec cannot drop", NULL, "deny_exec: [nc]\n", NULL, "deny_exec", "curl", NULL},
    {"mask_prefixes adds", "mask_prefixes: [a_]\n", "mask_prefixes: [b_]\n", NULL, "mask_prefixes",
     "b_", NULL},
    {"mask_prefixes cannot drop", "mask_prefixes: [a_]\n", "mask_prefixes: []\n", NULL,
     "mask_prefixes", "a_", NULL},
    {"deny_env adds", NULL, "deny_env: [DB_*]\n", NULL, "deny_env", "DB_*", NULL},
    {"deny_env cannot drop", "deny_env: [X]\n", "deny_env:\n", NULL, "deny_env", "X", NULL},
    {"protect_paths adds", NULL, "protect_paths: [Makefile]\n", NULL, "protect_paths",
     "$P/Makefile", NULL},
    {"protect_paths cannot drop", "protect_paths: [build.sh]\n", "protect_paths: []\n", NULL,
     "protect_paths", "$P/build.sh", NULL},
    /* allow_hosts: a wildcard narrows to names under it, a port narrows
     * an entry without one; nothing wider, and no suffix that is not a
     * label boundary */
    {"allow_hosts wildcard to a name", "allow_hosts: [\"*.example.com\", b.org]\n",
     "allow_hosts: [API.example.com]\n", NULL, "allow_hosts", "api.example.com", "b.org"},
    {"allow_hosts wildcard to a deeper wildcard", "allow_hosts: [\"*.example.com\"]\n",
     "allow_hosts: [\"*.api.example.com\", \"*.example.com\"]\n", NULL, "allow_hosts",
     "*.api.example.com", NULL},
    {"allow_hosts a port added", "allow_hosts: [a.com, \"*.example.com\"]\n",
     "allow_hosts: [\"a.com:443\", \"x.y.example.com:8443\"]\n", NULL, "allow_hosts", "a.com:443",
     "a.com"},
    {"allow_hosts wildcard port kept", "allow_hosts: [\"*.example.com:443\"]\n",
     "allow_hosts: [\"api.example.com:443\"]\n", NULL, "allow_hosts", "api.example.com:443", NULL},
    {"allow_hosts wildcard does not cover its own name", "allow_hosts: [\"*.example.com\"]\n",
     "allow_hosts: [example.com]\n",
     ".kgate.yaml:1: allow_hosts: the entry is not in the user config", NULL, NULL, NULL},
    {"allow_hosts name widened to a wildcard", "allow_hosts: [api.example.com]\n",
     "allow_hosts: [\"*.api.example.com\"]\n",
     ".kgate.yaml:1: allow_hosts: the entry is not in the user config", NULL, NULL, NULL},
    {"allow_hosts wildcard widened", "allow_hosts: [\"*.api.example.com\"]\n",
     "allow_hosts: [\"*.example.com\"]\n",
     ".kgate.yaml:1: allow_hosts: the entry is not in the user config", NULL, NULL, NULL},
    {"allow_hosts a suffix that is not a label", "allow_hosts: [\"*.example.com\"]\n",
     "allow_hosts: [evilexample.com]\n",
     ".kgate.yaml:1: allow_hosts: the entry is not in the user config", NULL, NULL, NULL},
    {"allow_hosts another port", "allow_hosts: [\"a.com:443\"]\n", "allow_hosts: [\"a.com:80\"]\n",
     ".kgate.yaml:1: allow_hosts: the entry is not in the user config", NULL, NULL, NULL},
    {"allow_hosts a port dropped", "allow_hosts: [\"*.example.com:443\"]\n",
     "allow_hosts: [api.example.com]\n",
     ".kgate.yaml:1: allow_hosts: the entry is not in the user config", NULL, NULL, NULL},
    {"allow_hosts an address is itself only", "allow_hosts: [198.18.0.9]\n",
     "allow_hosts: [\"198.18.0.9:80\"]\n", NULL, "allow_hosts", "198.18.0.9:80", NULL},
    /* the project's list is the effective one only when it sets the key */
    {"allow_hosts kept when absent", "allow_hosts: [a.com]\n", "network: off\n", NULL,
     "allow_hosts", "a.com", NULL},
};

START_TEST(test_narrowing_table)
{
    const narrow_case *c = &cases[_i];
    char b1[PATH_MAX * 2], b2[PATH_MAX * 2];
    write_user(c->user);
    write_project(c->project);
    kg_error err = {0};
    kg_policy *p = kg_policy_load(home, proj, NULL, &err);
    if (c->err) {
        ck_assert_msg(p == NULL, "%s: loaded although it widens", c->what);
        const char *want = expand(c->err, b1, sizeof b1);
        ck_assert_msg(strstr(err.msg, want) != NULL, "%s: '%s' lacks '%s'", c->what, err.msg, want);
        /* Always the file, the key and the value, and never a partial policy. */
        ck_assert_msg(strstr(err.msg, ".kgate.yaml") != NULL, "%s: no file name", c->what);
        return;
    }
    ck_assert_msg(p != NULL, "%s: %s", c->what, err.msg);
    if (c->key) {
        const kg_strv *v = list_of(p, c->key);
        if (c->has)
            ck_assert_msg(kg_strv_contains(v, expand(c->has, b1, sizeof b1)), "%s: %s lacks %s",
                          c->what, c->key, b1);
        if (c->lacks)
            ck_assert_msg(!kg_strv_contains(v, expand(c->lacks, b2, sizeof b2)), "%s: %s has %s",
                          c->what, c->key, b2);
    }
    kg_policy_free(p);
}
END_TEST

/* max_processes: a project file may lower it, never raise it, and never
 * make it unlimited under a bound. */
START_TEST(test_narrowing_max_processes)
{
    static const struct {
        const char *user, *proj;
        int ok;
    } mp_cases[] = {
        {"max_processes: 30\n", "max_processes: 20\n", 1},
        {"max_processes: 30\n", "max_processes: 30\n", 1},
        {"max_processes: 30\n", "max_processes: 31\n", 0},
        {"max_processes: 30\n", "max_processes: unlimited\n", 0},
        {"max_processes: unlimited\n", "max_processes: 100000\n", 1},
        {"max_processes: unlimited\n", "max_processes: unlimited\n", 1},
        {"", "max_processes: 4096\n", 1}, /* the default */
        {"", "max_processes: 4097\n", 0},
    };
    for (size_t i = 0; i < sizeof mp_cases / sizeof *mp_cases; i++) {
        kg_error err = {0};
        kg_config *u = kg_config_parse("u", mp_cases[i].user, strlen(mp_cases[i].user), &err);
        kg_config *pr =
            kg_config_parse("proj.yaml", mp_cases[i].proj, strlen(mp_cases[i].proj), &err);
        ck_assert(u && pr);
        int rc = kg_policy_check_narrowing(u, pr, &err);
        ck_assert_msg((rc == 0) == mp_cases[i].ok, "case %zu: rc %d: %s", i, rc, err.msg);
        if (!mp_cases[i].ok) ck_assert_ptr_nonnull(strstr(err.msg, "max_processes"));
        kg_config_free(u);
        kg_config_free(pr);
    }
}
END_TEST

/* audit_sink: a project file may repeat the user's sink, never change it
 * (issue 31: where runs are recorded is not a repository's choice). */
START_TEST(test_narrowing_audit_sink)
{
    static const struct {
        const char *user, *proj;
        int ok;
    } sink_cases[] = {
        {"", "audit_sink: file\n", 1},
        {"", "audit_sink: syslog\n", 0},
        {"", "audit_sink: journald\n", 0},
        {"audit_sink: journald\n", "audit_sink: journald\n", 1},
        {"audit_sink: journald\n", "audit_sink: file\n", 0},
        {"audit_sink: syslog\n", "", 1},
    };
    for (size_t i = 0; i < sizeof sink_cases / sizeof *sink_cases; i++) {
        kg_error err = {0};
        kg_config *u = kg_config_parse("u", sink_cases[i].user, strlen(sink_cases[i].user), &err);
        kg_config *pr =
            kg_config_parse("proj.yaml", sink_cases[i].proj, strlen(sink_cases[i].proj), &err);
        ck_assert(u && pr);
        int rc = kg_policy_check_narrowing(u, pr, &err);
        ck_assert_msg((rc == 0) == sink_cases[i].ok, "case %zu: rc %d: %s", i, rc, err.msg);
        if (!sink_cases[i].ok) ck_assert_ptr_nonnull(strstr(err.msg, "audit_sink"));
        kg_config_free(u);
        kg_config_free(pr);
    }
}
END_TEST

/* The pure function on hand-built layers: every key, both directions. */
START_TEST(test_check_narrowing_pure)
{
    kg_error err = {0};
    for (int k = 0; k < KG_N_LIST_KEYS; k++) {
        kg_config *u = kg_config_parse("u", "", 0, &err);
        kg_config *pr = kg_config_parse("proj.yaml", "", 0, &err);
        u->has[k] = pr->has[k] = true;
        kg_strv_push(u->lists[k], "/Same");
        kg_strv_push(u->lists[k], "/dropped");
        kg_strv_push(pr->lists[k], "/Same");
        ck_assert_msg(kg_policy_check_narrowing(u, pr, &err) == 0, "%s: keep+drop refused: %s",
                      kg_list_key_name(k), err.msg);
        kg_strv_push(pr->lists[k], "/new");
        int rc = kg_policy_check_narrowing(u, pr, &err);
        bool widens = k == KG_KEY_ALLOW_HOSTS || k == KG_KEY_ALLOW_PATHS ||
                      k == KG_KEY_READ_PATHS || k == KG_KEY_PASS_ENV ||
                      k == KG_KEY_UNPROTECT_PATHS || k == KG_KEY_ALLOW_SOCKETS ||
                      k == KG_KEY_MACOS_ALLOW_MACH;
        if (widens) {
            ck_assert_msg(rc == -1, "%s: adding accepted", kg_list_key_name(k));
            char want[256];
            snprintf(want, sizeof want,
                     "proj.yaml: %s: the entry is not in the user config; a project file may "
                     "only drop entries of this key%s, never add one",
                     kg_list_key_name(k),
                     k == KG_KEY_ALLOW_HOSTS
                         ? " or narrow them (a name under a \"*.\" entry, a port)"
                         : "");
            ck_assert_str_eq(err.msg, want);
        } else {
            ck_assert_msg(rc == 0, "%s: adding refused: %s", kg_list_key_name(k), err.msg);
        }
        /* A user layer without the key has nothing to keep. */
        u->has[k] = false;
        rc = kg_policy_check_narrowing(u, pr, &err);
        ck_assert_int_eq(rc, widens ? -1 : 0);
        kg_config_free(u);
        kg_config_free(pr);
    }
    /* Host names compare without case; paths with. */
    kg_config *u = kg_config_parse("u", "", 0, &err);
    kg_config *pr = kg_config_parse("p", "", 0, &err);
    u->has[KG_KEY_ALLOW_HOSTS] = pr->has[KG_KEY_ALLOW_HOSTS] = true;
    kg_strv_push(u->lists[KG_KEY_ALLOW_HOSTS], "GitHub.com");
    kg_strv_push(pr->lists[KG_KEY_ALLOW_HOSTS], "github.COM");
    ck_assert_int_eq(kg_policy_check_narrowing(u, pr, &err), 0);
    u->has[KG_KEY_ALLOW_PATHS] = pr->has[KG_KEY_ALLOW_PATHS] = true;
    kg_strv_push(u->lists[KG_KEY_ALLOW_PATHS], "/A");
    kg_strv_push(pr->lists[KG_KEY_ALLOW_PATHS], "/a");
    ck_assert_int_eq(kg_policy_check_narrowing(u, pr, &err), -1);
    kg_config_free(u);
    kg_config_free(pr);

    /* Scalars, every ordered pair. */
    const kgate_network nets[] = {KGATE_NET_OFF, KGATE_NET_RESTRICTED, KGATE_NET_OPEN};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            u = kg_config_parse("u", "", 0, &err);
            pr = kg_config_parse("p", "", 0, &err);
            u->has_network = pr->has_network = true;
            u->network = nets[i];
            pr->network = nets[j];
            ck_assert_int_eq(kg_policy_check_narrowing(u, pr, &err), j <= i ? 0 : -1);
            kg_config_free(u);
            kg_config_free(pr);
        }
    const kgate_macos_profile profs[] = {KGATE_MACOS_PERMISSIVE, KGATE_MACOS_STRICT};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            u = kg_config_parse("u", "", 0, &err);
            pr = kg_config_parse("p", "", 0, &err);
            u->has_macos_profile = pr->has_macos_profile = true;
            u->macos_profile = profs[i];
            pr->macos_profile = profs[j];
            ck_assert_int_eq(kg_policy_check_narrowing(u, pr, &err), (i == 1 && j == 0) ? -1 : 0);
            kg_config_free(u);
            kg_config_free(pr);
        }
}
END_TEST

START_TEST(test_defaults_without_files)
{
    kg_error err = {0};
    kg_policy *p = kg_policy_load(home, proj, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(p->user_file_missing);
    ck_assert_ptr_null(p->project_file);
    char want[PATH_MAX * 2];
    snprintf(want, sizeof want, "%s/.kgate/config.yaml", home);
    ck_assert_str_eq(p->user_file, want);
    /* restricted with no hosts is off for the backends */
    ck_assert_int_eq(p->pub.configured_network, KGATE_NET_RESTRICTED);
    ck_assert_int_eq(p->pub.network, KGATE_NET_OFF);
    ck_assert_int_eq(p->pub.macos_profile, KGATE_MACOS_PERMISSIVE);
    ck_assert_str_eq(p->pub.home, home);
    ck_assert_str_eq(p->pub.project, proj);
    ck_assert_ptr_null(p->pub.tmpdir);
    ck_assert_uint_eq(p->pub.uid, getuid());
    ck_assert_uint_eq(p->pub.gid, getgid());
    ck_assert_uint_eq(p->pub.struct_size, sizeof(kgate_policy));
    ck_assert_uint_eq(p->pub.deny_read.n, 1);
    snprintf(want, sizeof want, "%s/.env", proj);
    ck_assert_str_eq(p->pub.deny_read.v[0], want);
    ck_assert_uint_eq(kg_strv_len(p->deny_exec), 2);
    ck_assert_str_eq(kg_strv_get(p->deny_exec, 0), "curl");
    /* the built-in protected paths, sorted */
    const char *prot[] = {
        ".claude",     ".codex",       ".cursor",        ".devcontainer", ".devcontainer.json",
        ".envrc",      ".gemini",      ".git/commondir", ".git/config",   ".git/config.worktree",
        ".git/hooks",  ".git/modules", ".git/worktrees", ".husky",        ".idea",
        ".kgate.yaml", ".mcp.json",    ".vscode"};
    ck_assert_uint_eq(p->pub.protect_paths.n, 18);
    for (size_t i = 0; i < 18; i++) {
        snprintf(want, sizeof want, "%s/%s", proj, prot[i]);
        ck_assert_str_eq(p->pub.protect_paths.v[i], want);
    }
    ck_assert_uint_eq(p->pub.allow_hosts.n, 0);
    ck_assert_uint_eq(p->pub.allow_paths.n, 0);
    ck_assert_uint_eq(p->pub.argv.n, 0);
    kg_policy_free(p);
    kg_policy_free(NULL);
}
END_TEST

START_TEST(test_user_file_replaces_defaults)
{
    write_user("network: restricted\nallow_hosts: [Example.org]\ndeny_exec: [nc]\n"
               "read_paths: [a, ~/b/]\n");
    kg_error err = {0};
    kg_policy *p = kg_policy_load(home, proj, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert(!p->user_file_missing);
    ck_assert_int_eq(p->pub.network, KGATE_NET_RESTRICTED);
    ck_assert_str_eq(p->pub.allow_hosts.v[0], "example.org");
    ck_assert_uint_eq(kg_strv_len(p->deny_exec), 1);
    /* relative read paths in the user file are home-relative */
    char a[PATH_MAX * 2], b[PATH_MAX * 2];
    snprintf(a, sizeof a, "%s/a", home);
    snprintf(b, sizeof b, "%s/b", home);
    ck_assert_uint_eq(p->pub.read_paths.n, 2);
    ck_assert_str_eq(p->pub.read_paths.v[0], a);
    ck_assert_str_eq(p->pub.read_paths.v[1], b);
    /* deny_read was not set: the default stays */
    ck_assert_uint_eq(p->pub.deny_read.n, 1);
    kg_policy_free(p);
}
END_TEST

/* A project file's messages name its line and the key, never an entry: a
 * widening entry on line 4 and a path that does not resolve on line 3. */
START_TEST(test_project_messages_name_lines)
{
    kg_error err = {0};
    char want[PATH_MAX * 2];
    write_user("network: restricted\nallow_hosts: [a.example]\nallow_paths: [~/a]\n");
    write_project("network: off\nallow_hosts:\n  - a.example\n  - gho-kgsecret.example\n");
    ck_assert_ptr_null(kg_policy_load(home, proj, NULL, &err));
    snprintf(want, sizeof want,
             "%s/.kgate.yaml:4: allow_hosts: the entry is not in the user "
             "config",
             proj);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "kgsecret") == NULL, "quotes the entry: %s", err.msg);

    write_project("network: off\nallow_paths:\n  - ~/gho-kgsecret-missing\n");
    ck_assert_ptr_null(kg_policy_load(home, proj, NULL, &err));
    snprintf(want, sizeof want,
             "%s/.kgate.yaml:3: allow_paths: the path of the entry cannot "
             "be used (",
             proj);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "kgsecret") == NULL, "quotes the entry: %s", err.msg);

    /* The same entry in the user's file is quoted: the user typed it. */
    write_project(NULL);
    write_user("allow_paths: [~/gho-kgsecret-missing]\n");
    ck_assert_ptr_null(kg_policy_load(home, proj, NULL, &err));
    ck_assert_msg(strstr(err.msg, "~/gho-kgsecret-missing: does not exist") != NULL, "%s", err.msg);
}
END_TEST

START_TEST(test_bad_files)
{
    kg_error err = {0};
    char want[PATH_MAX * 2];
    write_user("network: off\nnetwork: open\n");
    ck_assert_ptr_null(kg_policy_load(home, proj, NULL, &err));
    snprintf(want, sizeof want, "%s/.kgate/config.yaml:2:1: duplicate key 'network'", home);
    ck_assert_str_eq(err.msg, want);

    write_user(NULL);
    write_project("allow_hosts: [x..y]\n");
    ck_assert_ptr_null(kg_policy_load(home, proj, NULL, &err));
    snprintf(want, sizeof want,
             "%s/.kgate.yaml:1:15: allow_hosts: invalid host name: empty label in host name", proj);
    ck_assert_str_eq(err.msg, want);

    /* a path that does not exist, and one through a symlink */
    write_project(NULL);
    write_user("allow_paths: [~/nothere]\n");
    ck_assert_ptr_null(kg_policy_load(home, proj, NULL, &err));
    snprintf(want, sizeof want, "%s/.kgate/config.yaml: allow_paths: ~/nothere: does not exist",
             home);
    ck_assert_str_eq(err.msg, want);

    char link[PATH_MAX * 2];
    snprintf(link, sizeof link, "%s/link", home);
    ck_assert_int_eq(symlink("/usr", link), 0);
    write_user("read_paths: [~/link]\n");
    ck_assert_ptr_null(kg_policy_load(home, proj, NULL, &err));
    ck_assert_msg(strstr(err.msg, "read_paths: ~/link: resolves to /usr through a symlink"), "%s",
                  err.msg);

    /* kgate's own directory is never writable, not even when the user's
     * file asks for it */
    write_user("allow_paths: [~/.kgate]\n");
    ck_assert_ptr_null(kg_policy_load(home, proj, NULL, &err));
    ck_assert_msg(strstr(err.msg, "would make kgate's own"), "%s", err.msg);

    /* The project may not be kgate's own directory or lie in it... */
    write_user("network: off\n");
    char own[PATH_MAX * 2], sub[PATH_MAX * 2], store[PATH_MAX * 2], real_own[PATH_MAX * 2];
    snprintf(own, sizeof own, "%s/.kgate", home);
    snprintf(sub, sizeof sub, "%s/.kgate/cache", home);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    ck_assert_ptr_null(kg_policy_load(home, own, NULL, &err));
    ck_assert_msg(strstr(err.msg, "inside kgate's own directory"), "%s", err.msg);
    ck_assert_ptr_null(kg_policy_load(home, sub, NULL, &err));
    ck_assert_msg(strstr(err.msg, "inside kgate's own directory"), "%s", err.msg);
    /* ...nor hold it: ~/.kgate a symlink to a directory in a project */
    snprintf(store, sizeof store, "%s/store", proj);
    snprintf(real_own, sizeof real_own, "%s/store/kg", proj);
    ck_assert_int_eq(mkdir(store, 0700), 0);
    ck_assert_int_eq(rename(own, real_own), 0);
    ck_assert_int_eq(symlink(real_own, own), 0);
    ck_assert_ptr_null(kg_policy_load(home, proj, NULL, &err));
    ck_assert_msg(strstr(err.msg, "contains kgate's own directory"), "%s", err.msg);
    ck_assert_ptr_null(kg_policy_load(home, store, NULL, &err));
    ck_assert_msg(strstr(err.msg, "contains kgate's own directory"), "%s", err.msg);
    ck_assert_ptr_null(kg_policy_load(home, real_own, NULL, &err));
    ck_assert_msg(strstr(err.msg, "inside kgate's own directory"), "%s", err.msg);
    /* the control: a sibling of the store is an ordinary project */
    mkdirs("other");
    char other[PATH_MAX * 2];
    snprintf(other, sizeof other, "%s/other", home);
    kg_policy *ok = kg_policy_load(home, other, NULL, &err);
    ck_assert_msg(ok != NULL, "%s", err.msg);
    kg_policy_free(ok);
    ck_assert_int_eq(unlink(own), 0);
    ck_assert_int_eq(rename(real_own, own), 0);

    /* HOME and cwd that do not exist */
    write_user(NULL);
    ck_assert_ptr_null(kg_policy_load("/nonexistent-kgate-home", proj, NULL, &err));
    ck_assert_ptr_null(kg_policy_load(home, "/nonexistent-kgate-proj", NULL, &err));
    ck_assert_ptr_null(kg_policy_load("relative", proj, NULL, &err));
}
END_TEST

/* --publish: checked with the policy, handed to the backend as pub.publish,
 * the network mode left alone; a bad spec refuses the whole policy. */
START_TEST(test_publish_flags)
{
    kg_error err = {0};
    kg_flags f = {kg_strv_new(), kg_strv_new(), kg_strv_new()};
    kg_strv_push(f.publish, "8080:80");
    kg_strv_push(f.publish, "127.0.0.3:9090:90");
    write_user("network: restricted\nallow_hosts: [a.com]\n");
    kg_policy *p = kg_policy_load(home, proj, &f, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->pub.n_publish, 2);
    ck_assert_ptr_nonnull(p->pub.publish);
    ck_assert_str_eq(p->pub.publish[0].host_addr, "127.0.0.1");
    ck_assert_uint_eq(p->pub.publish[0].host_port, 8080);
    ck_assert_uint_eq(p->pub.publish[0].port, 80);
    ck_assert_str_eq(p->pub.publish[1].host_addr, "127.0.0.3");
    ck_assert_str_eq(kg_strv_get(p->published, 1), "127.0.0.3:9090:90");
    ck_assert(KGATE_HAS_FIELD(&p->pub, kgate_policy, n_publish));
    ck_assert_int_eq(p->pub.network, KGATE_NET_RESTRICTED);
    kg_policy_free(p);

    /* off stays off: a port is no reason to open a network */
    write_user("network: off\n");
    p = kg_policy_load(home, proj, &f, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(p->pub.network, KGATE_NET_OFF);
    kg_policy_free(p);

    kg_strv_push(f.publish, "198.18.0.1:80:80");
    ck_assert_ptr_null(kg_policy_load(home, proj, &f, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "--publish '198.18.0.1:80:80'"));

    /* none: nothing handed on */
    kg_flags g = {kg_strv_new(), kg_strv_new(), NULL};
    p = kg_policy_load(home, proj, &g, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->pub.n_publish, 0);
    ck_assert_ptr_null(p->pub.publish);
    kg_policy_free(p);
    kg_strv_free(f.allow_paths);
    kg_strv_free(f.allow_hosts);
    kg_strv_free(f.publish);
    kg_strv_free(g.allow_paths);
    kg_strv_free(g.allow_hosts);
}
END_TEST

START_TEST(test_oneshot_flags)
{
    kg_error err = {0};
    kg_flags f = {kg_strv_new(), kg_strv_new(), NULL};
    kg_strv_push(f.allow_paths, "../c");
    kg_strv_push(f.allow_hosts, "Example.COM");
    write_user("network: off\n");
    kg_policy *p = kg_policy_load(home, proj, &f, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    char c[PATH_MAX * 2];
    snprintf(c, sizeof c, "%s/c", home);
    ck_assert_uint_eq(p->pub.allow_paths.n, 1);
    ck_assert_str_eq(p->pub.allow_paths.v[0], c);
    ck_assert_str_eq(kg_strv_get(p->oneshot_paths, 0), c);
    ck_assert_str_eq(kg_strv_get(p->oneshot_hosts, 0), "example.com");
    ck_assert_str_eq(p->pub.allow_hosts.v[0], "example.com");
    /* off becomes a host list for this run; the files said off */
    ck_assert_int_eq(p->pub.network, KGATE_NET_RESTRICTED);
    ck_assert_int_eq(p->pub.configured_network, KGATE_NET_OFF);
    kg_policy_free(p);

    /* open stays open */
    write_user("network: open\n");
    p = kg_policy_load(home, proj, &f, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(p->pub.network, KGATE_NET_OPEN);
    kg_policy_free(p);

    /* a flag widens even what the project narrowed */
    write_user("network: restricted\nallow_hosts: [a.com]\n");
    write_project("network: off\n");
    p = kg_policy_load(home, proj, &f, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(p->pub.network, KGATE_NET_RESTRICTED);
    ck_assert_uint_eq(p->pub.allow_hosts.n, 2);
    kg_policy_free(p);

    kg_strv_push(f.allow_hosts, "bad host");
    ck_assert_ptr_null(kg_policy_load(home, proj, &f, &err));
    ck_assert_str_eq(err.msg, "--allow-net: invalid host name 'bad host': white space in entry");
    kg_strv_clear(f.allow_hosts);
    /* nor when a flag asks for a part of it */
    char own[PATH_MAX * 2];
    snprintf(own, sizeof own, "%s/.kgate", home);
    kg_strv_push(f.allow_paths, own);
    ck_assert_ptr_null(kg_policy_load(home, proj, &f, &err));
    ck_assert_msg(strstr(err.msg, "would make kgate's own"), "%s", err.msg);
    kg_strv_remove(f.allow_paths, own);
    kg_strv_push(f.allow_paths, "missing");
    ck_assert_ptr_null(kg_policy_load(home, proj, &f, &err));
    ck_assert_str_eq(err.msg, "--allow-path: missing: does not exist");
    kg_strv_free(f.allow_paths);
    kg_strv_free(f.allow_hosts);
}
END_TEST

START_TEST(test_builtin_protection_edges)
{
    kg_error err = {0};
    char p1[PATH_MAX * 2];
    /* A git worktree: .git is a file, so nothing below it is protected. */
    snprintf(p1, sizeof p1, "%s/.git", proj);
    kgt_write_text(p1, "gitdir: /elsewhere\n");
    kg_policy *p = kg_policy_load(home, proj, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    /* The 18 less the six in .git, and the .git file itself (read-only:
     * it names the git directory the host's git will use). */
    ck_assert_uint_eq(p->pub.protect_paths.n, 13);
    kg_policy_free(p);
    /* A symlinked .vscode cannot be protected: refused, unless opted out. */
    snprintf(p1, sizeof p1, "%s/.vscode", proj);
    ck_assert_int_eq(symlink(home, p1), 0);
    ck_assert_ptr_null(kg_policy_load(home, proj, NULL, &err));
    ck_assert_msg(strstr(err.msg, "built-in protected path .vscode cannot be protected"), "%s",
                  err.msg);
    write_user("unprotect_paths: [.vscode]\n");
    p = kg_policy_load(home, proj, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(p->pub.protect_paths.n, 12); /* the 13 above less .vscode */
    kg_policy_free(p);
}
END_TEST

START_TEST(test_tmpdir_and_network_modes)
{
    kg_error err = {0};
    setenv("TMPDIR", "/tmp/", 1);
    write_user("network: restricted\nallow_hosts: [a.com]\n");
    kg_policy *p = kg_policy_load(home, proj, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_ptr_null(p->pub.tmpdir);
    ck_assert_int_eq(p->pub.network, KGATE_NET_RESTRICTED);
    kg_policy_free(p);
    char t[PATH_MAX * 2];
    snprintf(t, sizeof t, "%s/c", home);
    setenv("TMPDIR", t, 1);
    /* the project drops every host: behaves as off */
    write_project("allow_hosts: []\n");
    p = kg_policy_load(home, proj, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_str_eq(p->pub.tmpdir, t);
    ck_assert_int_eq(p->pub.network, KGATE_NET_OFF);
    ck_assert_int_eq(p->pub.configured_network, KGATE_NET_RESTRICTED);
    snprintf(t, sizeof t, "%s/.kgate.yaml", proj);
    ck_assert_str_eq(p->project_file, t);
    kg_policy_free(p);
    setenv("TMPDIR", "/nonexistent-kgate", 1);
    p = kg_policy_load(home, proj, NULL, &err);
    ck_assert_ptr_null(p->pub.tmpdir);
    kg_policy_free(p);
    unsetenv("TMPDIR");
}
END_TEST

START_TEST(test_json_and_command)
{
    kg_error err = {0};
    write_user("network: open\nallow_paths: [~/a]\npass_env: [GH_TOKEN]\n");
    kg_policy *p = kg_policy_load(home, proj, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    const char *argv[] = {"make", "te\"st"};
    kg_policy_set_command(p, argv, 2, "/usr/bin/make");
    ck_assert_uint_eq(p->pub.argv.n, 2);
    ck_assert_str_eq(p->pub.command_path, "/usr/bin/make");
    UT_string *s;
    utstring_new(s);
    kg_policy_to_json(p, s);
    const char *j = utstring_body(s);
    char want[PATH_MAX * 2];
    const char *head = "{\"network\":\"open\",\"configured_network\":\"open\",";
    ck_assert_msg(strncmp(j, head, strlen(head)) == 0, "%s", j);
    snprintf(want, sizeof want, "\"allow_paths\":[\"%s/a\"]", home);
    ck_assert_msg(strstr(j, want), "%s", j);
    const char *keys[] = {"\"allow_hosts\":[]",
                          "\"read_paths\":[]",
                          "\"deny_exec\":[\"curl\",\"wget\"]",
                          "\"mask_prefixes\":[]",
                          "\"pass_env\":[\"GH_TOKEN\"]",
                          "\"deny_env\":[]",
                          "\"allow_sockets\":[]",
                          "\"macos_allow_mach\":[]",
                          "\"macos_profile\":\"permissive\"",
                          "\"tmpdir\":null",
                          "\"user_file_missing\":false",
                          "\"project_file\":null",
                          "\"oneshot_paths\":[]",
                          "\"oneshot_hosts\":[]",
                          "\"argv\":[\"make\",\"te\\\"st\"]",
                          "\"command_path\":\"/usr/bin/make\"",
                          "\"protect_paths\":[",
                          "\"deny_read\":[",
                          "\"uid\":",
                          "\"gid\":"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ck_assert_msg(strstr(j, keys[i]), "%s missing in %s", keys[i], j);
    ck_assert_int_eq(j[strlen(j) - 1], '}');
    utstring_free(s);
    kg_policy_free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("policy");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_narrowing_table, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, test_check_narrowing_pure);
    tcase_add_test(tc, test_narrowing_max_processes);
    tcase_add_test(tc, test_narrowing_audit_sink);
    tcase_add_test(tc, test_defaults_without_files);
    tcase_add_test(tc, test_user_file_replaces_defaults);
    tcase_add_test(tc, test_bad_files);
    tcase_add_test(tc, test_project_messages_name_lines);
    tcase_add_test(tc, test_oneshot_flags);
    tcase_add_test(tc, test_publish_flags);
    tcase_add_test(tc, test_builtin_protection_edges);
    tcase_add_test(tc, test_tmpdir_and_network_modes);
    tcase_add_test(tc, test_json_and_command);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
