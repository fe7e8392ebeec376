/* The Seatbelt profile builder, read back by the SBPL evaluator: the design
 * note's profile rule for rule, a table of questions over generated
 * policies and both base profiles, and hostile paths. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb-host.h"
#include "sb-profile.h"
#include "gitguard.h"
#include "protected.h"
#include "sbpl-eval.h"
#include "testutil.h"

#define SL(...)                                          \
    ((kgate_strlist){(const char *const[]){__VA_ARGS__}, \
                     sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)})

static kgate_policy base_policy(const char *home, const char *project)
{
    return (kgate_policy){
        .struct_size = sizeof(kgate_policy),
        .network = KGATE_NET_OFF,
        .configured_network = KGATE_NET_OFF,
        .project = project,
        .home = home,
        .macos_profile = KGATE_MACOS_PERMISSIVE,
    };
}

/* Builds pol in form and reads it back; fails the test on any error. */
static sbe_profile *build_parse(const kgate_policy *pol, sb_form form, sb_profile *prof)
{
    kgate_err err = {0};
    ck_assert_msg(sb_build(pol, form, prof, &err) == 0, "build: %s", err.msg);
    char perr[256] = "";
    sbe_profile *p =
        sbe_parse(prof->text, (const char *const *)prof->params, prof->n_params, perr, sizeof perr);
    ck_assert_msg(p != NULL, "parse: %s\n%s", perr, prof->text);
    return p;
}

/* The rules of text without comments and blank lines. */
static size_t rule_lines(const char *text, char lines[][512], size_t max)
{
    size_t n = 0;
    const char *p = text;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len && p[0] != ';') {
            ck_assert_uint_lt(n, max);
            ck_assert_uint_lt(len, 512);
            memcpy(lines[n], p, len);
            lines[n][len] = '\0';
            n++;
        }
        p += len + (e ? 1 : 0);
    }
    return n;
}

/* ------------------------------------------------------------------------ */

static const char *const seed_rules[] = {
    "(version 1)",
    "(allow default)",
    "(deny file-write*)",
    "(deny file-read* (subpath \"/Users/you\"))",
    "(allow file-write* (subpath \"/private/tmp\"))",
    "(deny file-write* (subpath \"/Users/you\"))",
    "(allow file-read* (subpath \"/Users/you/proj\"))",
    "(allow file-write* (subpath \"/Users/you/proj\"))",
    "(deny network-outbound)",
    "(allow network-outbound (remote ip \"localhost:*\"))",
};

/* What kgate adds to the design note's profile, each for a stated reason
 * (docs/seatbelt.md): device writes after the blanket write deny, and the
 * closed doors of issue 9 at the end. */
static const char *const dev_rule =
    "(allow file-write* (literal \"/dev/null\") (literal \"/dev/zero\") "
    "(literal \"/dev/tty\") (subpath \"/dev/fd\"))";
static const char *const pty_rule =
    "(allow file-write* (literal \"/dev/ptmx\") (require-all "
    "(regex #\"^/dev/ttys[0-9]+$\") (extension \"com.apple.sandbox.pty\")))";
static const char *const unix_rule = "(deny network-outbound (remote unix-socket))";
static const char *const door_rules[] = {
    "(deny appleevent-send)",
    "(deny mach-lookup (global-name \"com.apple.coreservices.launchservicesd\") "
    "(global-name-prefix \"com.apple.lsd.\") "
    "(global-name \"com.apple.coreservices.appleevents\") "
    "(global-name \"com.apple.pasteboard.1\") "
    "(global-name \"com.apple.coreservices.uauseractivitypasteboardclient.xpc\") "
    "(global-name \"com.apple.SecurityServer\") "
    "(global-name \"com.apple.securityd\") "
    "(global-name \"com.apple.securityd.xpc\"))",
};

START_TEST(golden_seed_profile)
{
    kgate_policy pol = base_policy("/Users/you", "/Users/you/proj");
    sb_profile prof;
    kgate_err err = {0};
    ck_assert_int_eq(sb_build(&pol, SB_FORM_INLINE, &prof, &err), 0);

    static char got[64][512];
    size_t n = rule_lines(prof.text, got, 64);
    size_t n_seed = sizeof seed_rules / sizeof seed_rules[0];
    size_t n_door = sizeof door_rules / sizeof door_rules[0];
    ck_assert_uint_eq(n, n_seed + 3 + n_door);

    /* Exactly the additions at their places... */
    ck_assert_str_eq(got[3], dev_rule);
    ck_assert_str_eq(got[4], pty_rule);
    ck_assert_str_eq(got[n_seed + 2], unix_rule);
    for (size_t i = 0; i < n_door; i++) ck_assert_str_eq(got[n_seed + 3 + i], door_rules[i]);
    /* ...and without them, the seed rule for rule, in its order. */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 3 || i == 4 || i >= n_seed + 2) continue;
        ck_assert_str_eq(got[i], seed_rules[k]);
        k++;
    }
    ck_assert_uint_eq(k, n_seed);
    sb_profile_clear(&prof);
}
END_TEST

/* The parameter form is the same profile once the parameters are put in. */
START_TEST(params_equal_inline)
{
    kgate_policy pol = base_policy("/Users/you", "/Users/you/proj");
    pol.tmpdir = "/private/var/folders/x1/abc/T";
    pol.read_paths = SL("/Users/you/.gitconfig");
    pol.allow_paths = SL("/Users/you/.cache/go-build");
    pol.deny_read = SL("/Users/you/proj/.env", "/Users/you/proj/secrets");
    pol.protect_paths = SL("/Users/you/proj/.git/hooks");
    pol.macos_allow_mach = SL("com.apple.fonts");
    for (int strict = 0; strict < 2; strict++) {
        pol.macos_profile = strict ? KGATE_MACOS_STRICT : KGATE_MACOS_PERMISSIVE;
        sb_profile a, b;
        sbe_profile *pa = build_parse(&pol, SB_FORM_PARAMS, &a);
        sbe_profile *pb = build_parse(&pol, SB_FORM_INLINE, &b);
        ck_assert_uint_gt(a.n_params, 0);
        ck_assert_uint_eq(b.n_params, 0);
        /* No path is pasted into the text that is installed. */
        ck_assert_ptr_null(strstr(a.text, "/Users/you"));
        char *da = sbe_dump(pa), *db = sbe_dump(pb);
        ck_assert_str_eq(da, db);
        free(da);
        free(db);
        /* The same path is one parameter, however often it is used. */
        size_t homes = 0;
        for (size_t i = 0; i < a.n_params; i++)
            homes += strcmp(strchr(a.params[i], '=') + 1, "/Users/you") == 0;
        ck_assert_uint_eq(homes, 1);
        sbe_free(pa);
        sbe_free(pb);
        sb_profile_clear(&a);
        sb_profile_clear(&b);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The question table                                                        */

typedef struct layout {
    const char *home, *project, *tmpdir;
} layout;

static const layout layouts[] = {
    {"/Users/you", "/Users/you/proj", NULL},
    {"/Users/you", "/Users/you/src/deep/proj", "/private/var/folders/x1/abc/T"},
    {"/home/u", "/home/u/work", NULL},
    /* a project outside home */
    {"/Users/me", "/private/var/build/p", "/private/var/folders/zz/q/T"},
    /* home inside the temp trees that are opened for writing: the second
     * home write deny is what keeps it closed (design note 001) */
    {"/private/tmp/kg-home", "/private/tmp/kg-home/proj", "/private/tmp/kg-home/T"},
};
#define N_LAYOUTS (sizeof layouts / sizeof layouts[0])

static char *cat(const char *a, const char *b)
{
    char *s;
    ck_assert_int_ge(asprintf(&s, "%s%s", a, b), 0);
    return s;
}

static void ask(const sbe_profile *p, const char *what, const char *op, sbe_kind kind,
                const char *value, int want)
{
    int got = sbe_allows(p, op, kind, value);
    /* Operations without an argument (process-fork, appleevent-send) are
     * asked with value NULL, which printf's %s must never see. */
    ck_assert_msg(got == want, "%s: %s %s: want %s, got %s", what, op,
                  value ? value : "(no argument)", want ? "allow" : "deny", got ? "allow" : "deny");
}

static void question_table(const layout *l, int strict, kgate_network net, sb_form form,
                           int regrant_keychain)
{
    char *h_secret = cat(l->home, "/.ssh/id_ed25519");
    char *h_new = cat(l->home, "/planted");
    char *h_gitcfg = cat(l->home, "/.gitconfig");
    char *h_cache = cat(l->home, "/.cache/tool");
    char *h_cache_f = cat(l->home, "/.cache/tool/obj/a.o");
    char *h_cache_other = cat(l->home, "/.cache/other");
    char *p_src = cat(l->project, "/src/main.c");
    char *p_env = cat(l->project, "/.env");
    char *p_env_local = cat(l->project, "/.env.local");
    char *p_secrets = cat(l->project, "/secrets");
    char *p_secret_f = cat(l->project, "/secrets/key.pem");
    char *p_hooks = cat(l->project, "/.git/hooks");
    char *p_hook_f = cat(l->project, "/.git/hooks/pre-commit");
    char *p_obj = cat(l->project, "/.git/objects/ab");
    char *p_kgate = cat(l->project, "/.kgate.yaml");

    kgate_policy pol = base_policy(l->home, l->project);
    pol.tmpdir = l->tmpdir;
    pol.network = net;
    pol.macos_profile = strict ? KGATE_MACOS_STRICT : KGATE_MACOS_PERMISSIVE;
    pol.read_paths = SL(h_gitcfg);
    pol.allow_paths = SL(h_cache);
    pol.deny_read = SL(p_env, p_secrets);
    pol.protect_paths = SL(p_hooks, p_kgate);
    /* A compound literal in an if's body would die with it. */
    pol.macos_allow_mach = regrant_keychain ? SL("com.apple.SecurityServer") : (kgate_strlist){0};

    sb_profile prof;
    sbe_profile *p = build_parse(&pol, form, &prof);

    /* home */
    ask(p, "secret in $HOME", "file-read-data", SBE_PATH, h_secret, 0);
    ask(p, "secret in $HOME", "file-read-metadata", SBE_PATH, h_secret, 0);
    ask(p, "$HOME itself", "file-read-data", SBE_PATH, l->home, 0);
    ask(p, "write to $HOME", "file-write-create", SBE_PATH, h_new, 0);
    ask(p, "write to $HOME", "file-write-data", SBE_PATH, h_secret, 0);
    /* temp */
    ask(p, "/private/tmp", "file-write-create", SBE_PATH, "/private/tmp/x", 1);
    ask(p, "/private/tmp", "file-read-data", SBE_PATH, "/private/tmp/x", 1);
    if (l->tmpdir) {
        /* A $TMPDIR inside $HOME stays closed: home wins (documented). */
        size_t hl = strlen(l->home);
        int in_home = strncmp(l->tmpdir, l->home, hl) == 0 && l->tmpdir[hl] == '/';
        char *t = cat(l->tmpdir, "/cc1.o");
        ask(p, "$TMPDIR", "file-write-data", SBE_PATH, t, !in_home);
        ask(p, "$TMPDIR", "file-read-data", SBE_PATH, t, !in_home);
        free(t);
    }
    /* project */
    ask(p, "project", "file-read-data", SBE_PATH, p_src, 1);
    ask(p, "project", "file-write-data", SBE_PATH, p_src, 1);
    ask(p, "project", "file-write-create", SBE_PATH, p_obj, 1);
    ask(p, "project root", "file-read-data", SBE_PATH, l->project, 1);
    /* deny_read */
    ask(p, "deny_read file", "file-read-data", SBE_PATH, p_env, 0);
    ask(p, "deny_read file", "file-read-metadata", SBE_PATH, p_env, 0);
    ask(p, "deny_read file", "file-write-data", SBE_PATH, p_env, 0);
    ask(p, "deny_read is a path, not a prefix", "file-read-data", SBE_PATH, p_env_local, 1);
    ask(p, "deny_read directory", "file-read-data", SBE_PATH, p_secret_f, 0);
    /* protect_paths */
    ask(p, "protected hook", "file-write-data", SBE_PATH, p_hook_f, 0);
    ask(p, "protected hook", "file-write-create", SBE_PATH, p_hook_f, 0);
    ask(p, "protected hook stays readable", "file-read-data", SBE_PATH, p_hook_f, 1);
    ask(p, "protected policy file", "file-write-data", SBE_PATH, p_kgate, 0);
    /* read_paths, allow_paths */
    ask(p, "read_paths", "file-read-data", SBE_PATH, h_gitcfg, 1);
    ask(p, "read_paths is read-only", "file-write-data", SBE_PATH, h_gitcfg, 0);
    ask(p, "allow_paths", "file-read-data", SBE_PATH, h_cache_f, 1);
    ask(p, "allow_paths", "file-write-create", SBE_PATH, h_cache_f, 1);
    ask(p, "beside allow_paths", "file-read-data", SBE_PATH, h_cache_other, 0);
    /* the system */
    ask(p, "system", "file-read-data", SBE_PATH, "/usr/lib/libSystem.B.dylib", 1);
    ask(p, "system", "file-read-data", SBE_PATH, "/private/etc/hosts", 1);
    ask(p, "system write", "file-write-data", SBE_PATH, "/usr/local/bin/x", 0);
    ask(p, "system write", "file-write-data", SBE_PATH, "/private/etc/passwd", 0);
    ask(p, "bit bucket", "file-write-data", SBE_PATH, "/dev/null", 1);
    ask(p, "a disk", "file-write-data", SBE_PATH, "/dev/disk0", 0);
    ask(p, "a new pty", "file-write-data", SBE_PATH, "/dev/ptmx", 1);
    ask(p, "another terminal window", "file-write-data", SBE_PATH, "/dev/ttys003", 0);
    /* network */
    int open = net == KGATE_NET_OPEN;
    ask(p, "loopback v4", "network-outbound", SBE_ADDR, "127.0.0.1:9", 1);
    ask(p, "loopback v6", "network-outbound", SBE_ADDR, "[::1]:9", 1);
    ask(p, "public v4", "network-outbound", SBE_ADDR, "142.250.134.139:443", open);
    ask(p, "public v6", "network-outbound", SBE_ADDR, "[2001:4860:4860::8888]:443", open);
    ask(p, "the machine's own address", "network-outbound", SBE_ADDR, "192.168.1.20:443", open);
    /* doors */
    ask(p, "Apple Events", "appleevent-send", SBE_NONE, NULL, 0);
    ask(p, "LaunchServices", "mach-lookup", SBE_MACH, "com.apple.coreservices.launchservicesd", 0);
    ask(p, "LaunchServices mapdb", "mach-lookup", SBE_MACH, "com.apple.lsd.mapdb", 0);
    ask(p, "LaunchServices open", "mach-lookup", SBE_MACH, "com.apple.lsd.open", 0);
    ask(p, "Apple Events daemon", "mach-lookup", SBE_MACH, "com.apple.coreservices.appleevents", 0);
    ask(p, "pasteboard", "mach-lookup", SBE_MACH, "com.apple.pasteboard.1", 0);
    ask(p, "keychain", "mach-lookup", SBE_MACH, "com.apple.SecurityServer", regrant_keychain);
    ask(p, "keychain xpc", "mach-lookup", SBE_MACH, "com.apple.securityd.xpc", 0);
    /* the base profiles differ here */
    ask(p, "a service on no list", "mach-lookup", SBE_MACH, "com.apple.windowserver.active",
        !strict);
    ask(p, "user lookup", "mach-lookup", SBE_MACH, "com.apple.system.opendirectoryd.libinfo", 1);
    ask(p, "outside the lists", "file-read-data", SBE_PATH, "/private/var/root/.profile", !strict);
    ask(p, "fork", "process-fork", SBE_NONE, NULL, 1);
    ask(p, "signal own children", "signal", SBE_TARGET, "same-sandbox", 1);
    ask(p, "signal others", "signal", SBE_TARGET, "other", !strict);
    ask(p, "cpu count", "sysctl-read", SBE_SYSCTL, "hw.ncpu", 1);
    ask(p, "loading a kernel extension", "system-kext-load", SBE_NONE, NULL, !strict);

    sbe_free(p);
    sb_profile_clear(&prof);
    free(h_secret), free(h_new), free(h_gitcfg), free(h_cache), free(h_cache_f);
    free(h_cache_other), free(p_src), free(p_env), free(p_env_local);
    free(p_secrets), free(p_secret_f), free(p_hooks), free(p_hook_f);
    free(p_obj), free(p_kgate);
}

START_TEST(questions)
{
    /* _i runs over layouts x profile x network x form x keychain grant. */
    size_t i = (size_t)_i;
    const layout *l = &layouts[i % N_LAYOUTS];
    i /= N_LAYOUTS;
    int strict = (int)(i % 2);
    kgate_network net = ((i / 2) % 2) ? KGATE_NET_OPEN : KGATE_NET_OFF;
    sb_form form = ((i / 4) % 2) ? SB_FORM_INLINE : SB_FORM_PARAMS;
    int regrant = (int)(i / 8) % 2;
    question_table(l, strict, net, form, regrant);
}
END_TEST

/* Restricted with no hosts is off; with hosts it is refused, with the one
 * sentence doctor also uses. */
START_TEST(restricted)
{
    kgate_policy pol = base_policy("/Users/you", "/Users/you/proj");
    pol.network = KGATE_NET_RESTRICTED;
    pol.configured_network = KGATE_NET_RESTRICTED;
    sb_profile prof;
    sbe_profile *p = build_parse(&pol, SB_FORM_PARAMS, &prof);
    ask(p, "restricted, no hosts", "network-outbound", SBE_ADDR, "1.1.1.1:53", 0);
    ask(p, "restricted, no hosts", "network-outbound", SBE_ADDR, "127.0.0.1:53", 1);
    sbe_free(p);
    sb_profile_clear(&prof);

    pol.allow_hosts = SL("api.github.com");
    kgate_err err = {0};
    ck_assert_int_eq(sb_build(&pol, SB_FORM_PARAMS, &prof, &err), -1);
    ck_assert_str_eq(err.msg, sb_restricted_hosts_sentence());
    ck_assert_ptr_nonnull(strstr(err.msg, "* or localhost"));
    ck_assert_ptr_null(prof.text);
    /* Doctor knows this refusal by its id: the host-list finding it
     * already gave.  Any other refusal has the profile's own id. */
    ck_assert_str_eq(sb_refusal_id(&err), KGATE_FINDING_NET_HOSTS_UNSUPPORTED);
    pol.network = KGATE_NET_OFF;
    pol.macos_allow_mach = SL("bad name");
    err = (kgate_err){0};
    ck_assert_int_eq(sb_build(&pol, SB_FORM_PARAMS, &prof, &err), -1);
    ck_assert_str_eq(sb_refusal_id(&err), "seatbelt.profile-refused");
}
END_TEST

/* Host Unix sockets (issue 6): none, except allow_sockets, exactly; in
 * network open also the resolver's.  Over both bases, both networks and
 * both forms. */
START_TEST(unix_sockets)
{
    int strict = _i & 1, open = (_i >> 1) & 1;
    sb_form form = (_i >> 2) & 1 ? SB_FORM_INLINE : SB_FORM_PARAMS;
    kgate_policy pol = base_policy("/Users/you", "/Users/you/proj");
    pol.macos_profile = strict ? KGATE_MACOS_STRICT : KGATE_MACOS_PERMISSIVE;
    pol.network = open ? KGATE_NET_OPEN : KGATE_NET_OFF;
    pol.allow_sockets =
        SL("/Users/you/.ssh/agent.sock", "/private/tmp/com.apple.launchd.x/Listeners");
    sb_profile prof;
    sbe_profile *p = build_parse(&pol, form, &prof);
    const char *what = open ? "open" : "off";
    ask(p, what, "network-outbound", SBE_UNIX, "/private/var/run/docker.sock", 0);
    ask(p, what, "network-outbound", SBE_UNIX, "/Users/you/.docker/run/docker.sock", 0);
    ask(p, what, "network-outbound", SBE_UNIX, "/private/tmp/.X11-unix/X0", 0);
    ask(p, what, "network-outbound", SBE_UNIX, "/Users/you/.ssh/agent.sock", 1);
    ask(p, what, "network-outbound", SBE_UNIX, "/private/tmp/com.apple.launchd.x/Listeners", 1);
    /* path-literal: exactly that path, nothing below or beside it */
    ask(p, what, "network-outbound", SBE_UNIX, "/Users/you/.ssh/agent.sock2", 0);
    ask(p, what, "network-outbound", SBE_UNIX, "/Users/you/.ssh/agent.sock/x", 0);
    ask(p, what, "network-outbound", SBE_UNIX, "/private/var/run/mDNSResponder", open);
    /* the IP rules are what they were */
    ask(p, what, "network-outbound", SBE_ADDR, "127.0.0.1:9", 1);
    ask(p, what, "network-outbound", SBE_ADDR, "1.1.1.1:443", open);
    /* a socket of its own in the project: binding is not outbound */
    ask(p, what, "network-bind", SBE_UNIX, "/Users/you/proj/dev.sock", !strict || open);
    sbe_free(p);
    if (form == SB_FORM_PARAMS) /* no socket path pasted into the text */
        ck_assert_ptr_null(strstr(prof.text, "agent.sock"));
    sb_profile_clear(&prof);

    pol.allow_sockets = SL("/Users/you/./agent.sock");
    kgate_err err = {0};
    ck_assert_int_eq(sb_build(&pol, form, &prof, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "allow_sockets"));
}
END_TEST

/* Never (local ip ...): it let a public address through on a real Mac. */
START_TEST(never_local_ip)
{
    for (int i = 0; i < 4; i++) {
        kgate_policy pol = base_policy("/Users/you", "/Users/you/proj");
        pol.network = (i & 1) ? KGATE_NET_OPEN : KGATE_NET_OFF;
        pol.macos_profile = (i & 2) ? KGATE_MACOS_STRICT : KGATE_MACOS_PERMISSIVE;
        sb_profile prof;
        kgate_err err = {0};
        ck_assert_int_eq(sb_build(&pol, SB_FORM_PARAMS, &prof, &err), 0);
        ck_assert_ptr_null(strstr(prof.text, "local ip"));
        ck_assert_ptr_null(strstr(prof.text, "(local"));
        sb_profile_clear(&prof);
    }
}
END_TEST

START_TEST(refuses_bad_input)
{
    kgate_policy pol = base_policy("/Users/you", "relative/proj");
    sb_profile prof;
    kgate_err err = {0};
    ck_assert_int_eq(sb_build(&pol, SB_FORM_PARAMS, &prof, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "project"));

    pol = base_policy("/Users/you", "/Users/you/p");
    pol.deny_read = SL("/ok", "");
    ck_assert_int_eq(sb_build(&pol, SB_FORM_PARAMS, &prof, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "deny_read"));

    /* Paths the kernel would never spell this way: a rule on them would
     * match nothing, and a deny would fail open. */
    static const char *const uncanonical[] = {
        "/Users/you/p/./.env", "/Users/you/p//.env", "/Users/you/p/../q/.env",
        "/Users/you/p/.env/",  "/Users/you/p/..",    "//x",
    };
    for (size_t i = 0; i < sizeof uncanonical / sizeof uncanonical[0]; i++) {
        pol = base_policy("/Users/you", "/Users/you/p");
        pol.deny_read = (kgate_strlist){&uncanonical[i], 1};
        ck_assert_msg(sb_build(&pol, SB_FORM_PARAMS, &prof, &err) == -1, "accepted %s",
                      uncanonical[i]);
        ck_assert_ptr_nonnull(strstr(err.msg, "not a resolved path"));
    }
    /* Names that merely start with dots are fine. */
    pol = base_policy("/Users/you", "/Users/you/p");
    pol.deny_read = SL("/Users/you/p/.env", "/Users/you/p/..x", "/Users/you/p/...");
    ck_assert_int_eq(sb_build(&pol, SB_FORM_PARAMS, &prof, &err), 0);
    sb_profile_clear(&prof);

    /* A project that is $HOME, or above it, is no box at all. */
    static const char *const wide[] = {"/Users/you", "/Users", "/"};
    for (size_t i = 0; i < 3; i++) {
        pol = base_policy("/Users/you", wide[i]);
        ck_assert_int_eq(sb_build(&pol, SB_FORM_PARAMS, &prof, &err), -1);
        ck_assert_ptr_nonnull(strstr(err.msg, "covers $HOME"));
    }
    pol = base_policy("/Users/you", "/Users/young/p");
    ck_assert_int_eq(sb_build(&pol, SB_FORM_PARAMS, &prof, &err), 0);
    sb_profile_clear(&prof);

    static const char *const bad[] = {
        "com.apple.x\") (allow default",
        "a b",
        "",
        "x)",
        "a\nb",
        "com.apple.\"",
        "sem;colon",
        "caf\xc3\xa9",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pol = base_policy("/Users/you", "/Users/you/p");
        pol.macos_allow_mach = (kgate_strlist){&bad[i], 1};
        ck_assert_int_eq(sb_mach_name_ok(bad[i]), 0);
        ck_assert_int_eq(sb_build(&pol, SB_FORM_PARAMS, &prof, &err), -1);
        ck_assert_ptr_nonnull(strstr(err.msg, "macos_allow_mach"));
    }
    char longname[260];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ck_assert_int_eq(sb_mach_name_ok(longname), 0);
    ck_assert_int_eq(sb_mach_name_ok("com.apple.fonts"), 1);
    ck_assert_int_eq(sb_mach_name_ok("org.example.my_agent-2"), 1);
}
END_TEST

START_TEST(doors_named)
{
    ck_assert_str_eq(sb_door_for_mach("com.apple.SecurityServer"), "keychain");
    ck_assert_str_eq(sb_door_for_mach("com.apple.securityd.xpc"), "keychain");
    ck_assert_str_eq(sb_door_for_mach("com.apple.pasteboard.1"), "pasteboard");
    ck_assert_str_eq(sb_door_for_mach("com.apple.lsd.mapdb"), "LaunchServices");
    ck_assert_str_eq(sb_door_for_mach("com.apple.coreservices.launchservicesd"), "LaunchServices");
    ck_assert_str_eq(sb_door_for_mach("com.apple.coreservices.appleevents"), "Apple Events");
    ck_assert_ptr_null(sb_door_for_mach("com.apple.fonts"));
    ck_assert_ptr_null(sb_door_for_mach("com.apple.lsd"));
    ck_assert_ptr_null(sb_door_for_mach(NULL));
    ck_assert_str_eq(sb_profile_name(KGATE_MACOS_STRICT), "strict");
    ck_assert_str_eq(sb_profile_name(KGATE_MACOS_PERMISSIVE), "permissive");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Escaping                                                                  */

START_TEST(quote_table)
{
    static const struct {
        const char *in, *out;
    } t[] = {
        {"", "\"\""},
        {"/Users/you", "\"/Users/you\""},
        {"a\"b", "\"a\\\"b\""},
        {"a\\b", "\"a\\\\b\""},
        {"a\nb", "\"a\\nb\""},
        {"a\tb\r", "\"a\\tb\\r\""},
        {"\x01\x1f\x7f", "\"\\x01\\x1f\\x7f\""},
        {"(x) ;y #\"z", "\"(x) ;y #\\\"z\""},
        {"caf\xc3\xa9", "\"caf\xc3\xa9\""},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char *q = sb_quote(t[i].in);
        ck_assert_str_eq(q, t[i].out);
        free(q);
    }
}
END_TEST

/* Every byte survives the round trip through a string literal. */
START_TEST(quote_roundtrip)
{
    char all[256];
    for (int i = 1; i < 256; i++) all[i - 1] = (char)i;
    all[255] = '\0';
    char *q = sb_quote(all);
    char *text;
    ck_assert_int_ge(asprintf(&text, "(version 1)\n(allow file-read* (literal %s))\n", q), 0);
    char perr[128] = "";
    sbe_profile *p = sbe_parse(text, NULL, 0, perr, sizeof perr);
    ck_assert_msg(p != NULL, "%s", perr);
    ck_assert_uint_eq(sbe_rule_count(p), 1);
    ck_assert_int_eq(sbe_allows(p, "file-read-data", SBE_PATH, all), 1);
    ck_assert_int_eq(sbe_allows(p, "file-read-data", SBE_PATH, "/x"), 0);
    sbe_free(p);
    free(text);
    free(q);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Hostile paths never change the rules                                      */

static char *replace_all(const char *s, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to), n = 0;
    for (const char *p = strstr(s, from); p; p = strstr(p + fl, from)) n++;
    char *out = malloc(strlen(s) + n * tl + 1), *o = out;
    for (const char *p = s;;) {
        const char *m = strstr(p, from);
        if (!m) {
            strcpy(o, p);
            break;
        }
        memcpy(o, p, (size_t)(m - p));
        o += m - p;
        memcpy(o, to, tl);
        o += tl;
        p = m + fl;
    }
    return out;
}

static const char *hostile[] = {
    "we\"ird",
    "back\\slash\\",
    "new\nline",
    "paren)) (allow default) ((",
    "\") (allow file-write* (subpath \"/x",
    "semi; (deny default)",
    "key=value=more",
    "tab\tcr\r\x01\x7f",
    "#\"regex\"",
    "caf\xc3\xa9 \xff\xfe",
    "(param \"KG_PATH_0\")",
    NULL, /* very long, filled in below */
};

/* docs/escapes.md, "Host git": an existing .git cannot be renamed or
 * replaced, what is below it stays writable, and a missing commondir
 * (a protected path the core adds) cannot be created. */
START_TEST(dot_git_literal)
{
    char dir[] = "/tmp/kgsb-git.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char *proj = cat(dir, "/proj"), *git = cat(dir, "/proj/.git");
    char *lock = cat(dir, "/proj/.git/index.lock"), *cd = cat(dir, "/proj/.git/commondir");
    ck_assert_int_eq(mkdir(proj, 0755), 0);
    kgate_policy pol = base_policy("/Users/you", proj);
    pol.protect_paths = SL(cd);
    sb_profile prof;
    sbe_profile *p = build_parse(&pol, SB_FORM_PARAMS, &prof);
    ask(p, "no .git: git init works", "file-write-create", SBE_PATH, git, 1);
    sbe_free(p);
    sb_profile_clear(&prof);

    ck_assert_int_eq(mkdir(git, 0755), 0);
    p = build_parse(&pol, SB_FORM_PARAMS, &prof);
    ask(p, ".git cannot be renamed or removed", "file-write-unlink", SBE_PATH, git, 0);
    ask(p, ".git cannot be replaced", "file-write-create", SBE_PATH, git, 0);
    ask(p, "below .git stays writable", "file-write-create", SBE_PATH, lock, 1);
    ask(p, "a commondir cannot be created", "file-write-create", SBE_PATH, cd, 0);
    sbe_free(p);
    sb_profile_clear(&prof);
    rmdir(git);
    rmdir(proj);
    rmdir(dir);
    free(proj);
    free(git);
    free(lock);
    free(cd);
}
END_TEST

/* Issue 40: after git init --separate-git-dir, the git directory the
 * .git file names gets what .git gets.  The protected paths are the core's
 * (kg_gitguard_pins, on a repository the real git made): its config,
 * hooks, commondir, config.worktree, modules and worktrees cannot be
 * written or created, the directory itself cannot be renamed away or
 * replaced (a literal on each directory above a protected path), the .git
 * file cannot be rewritten, and git's own work there stays writable. */
START_TEST(separate_git_dir_pinned)
{
    char dir[] = "/tmp/kgsb-sep.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "mkdir %s/proj && GIT_CONFIG_NOSYSTEM=1 HOME=%s git -C %s/proj init -q "
             "--separate-git-dir=.realgit >/dev/null 2>&1",
             dir, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    char *proj = cat(dir, "/proj"), *gd = cat(dir, "/proj/.realgit");
    kg_strv *pins = kg_strv_new();
    kg_gitguard_pins(proj, pins);
    kgate_policy pol = base_policy("/Users/you", proj);
    pol.protect_paths = kg_strv_list(pins);
    sb_profile prof;
    sbe_profile *p = build_parse(&pol, SB_FORM_PARAMS, &prof);
    static const char *const denied[] = {
        "config",          "hooks/pre-commit",   "commondir",
        "config.worktree", "modules/sub/config", "worktrees/w/commondir"};
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
        char *x = cat(gd, "/");
        char *y = cat(x, denied[i]);
        ask(p, denied[i], "file-write-create", SBE_PATH, y, 0);
        ask(p, denied[i], "file-write-data", SBE_PATH, y, 0);
        free(x);
        free(y);
    }
    ask(p, "the git directory cannot be renamed away", "file-write-unlink", SBE_PATH, gd, 0);
    ask(p, "nor made again", "file-write-create", SBE_PATH, gd, 0);
    char *dotgit = cat(dir, "/proj/.git"), *lock = cat(dir, "/proj/.realgit/index.lock");
    char *obj = cat(dir, "/proj/.realgit/objects/ab");
    ask(p, "the .git file cannot be rewritten", "file-write-data", SBE_PATH, dotgit, 0);
    ask(p, "git's index.lock stays writable", "file-write-create", SBE_PATH, lock, 1);
    ask(p, "objects stay writable", "file-write-create", SBE_PATH, obj, 1);
    sbe_free(p);
    sb_profile_clear(&prof);
    kg_strv_free(pins);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    free(proj);
    free(gd);
    free(dotgit);
    free(lock);
    free(obj);
}
END_TEST

/* Every built-in protected path (core/protect/protected.c), as the core adds it:
 * whether or not it exists (Seatbelt matches a path by name), it cannot
 * be created, made a directory, written, renamed away or replaced by a
 * link, in either base profile; what is beside it stays writable. */
START_TEST(protected_table)
{
    size_t n;
    const kg_protected_entry *t = kg_protected_table(&n);
    const char *proj = "/Users/you/proj";
    char **paths = calloc(n, sizeof *paths);
    ck_assert_ptr_nonnull(paths);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_ge(asprintf(&paths[i], "%s/%s", proj, t[i].name), 0);
    kgate_policy pol = base_policy("/Users/you", proj);
    pol.protect_paths = (kgate_strlist){(const char *const *)paths, n};
    pol.macos_profile = _i ? KGATE_MACOS_STRICT : KGATE_MACOS_PERMISSIVE;
    sb_profile prof;
    sbe_profile *p = build_parse(&pol, SB_FORM_PARAMS, &prof);
    for (size_t i = 0; i < n; i++) {
        char *below = NULL, *beside = NULL;
        ck_assert_int_ge(asprintf(&below, "%s/settings.json", paths[i]), 0);
        ck_assert_int_ge(asprintf(&beside, "%s.kgt-beside", paths[i]), 0);
        ask(p, t[i].name, "file-write-create", SBE_PATH, paths[i], 0); /* create, mkdir, link */
        ask(p, t[i].name, "file-write-data", SBE_PATH, paths[i], 0); /* write */
        ask(p, t[i].name, "file-write-unlink", SBE_PATH, paths[i], 0); /* rename away, rm */
        ask(p, t[i].name, "file-write-create", SBE_PATH, below, 0); /* a file in it */
        ask(p, t[i].name, "file-write-data", SBE_PATH, below, 0);
        ask(p, t[i].name, "file-read-data", SBE_PATH, paths[i], 1); /* still read */
        ask(p, "beside it", "file-write-create", SBE_PATH, beside, 1);
        free(below);
        free(beside);
    }
    sbe_free(p);
    sb_profile_clear(&prof);
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
}
END_TEST

START_TEST(hostile_paths)
{
    static char longname[6000];
    memset(longname, 'L', sizeof longname - 1);
    memcpy(longname + 100, "\")(\"\\", 5);
    hostile[11] = longname;
    const char *bad = hostile[_i];

    /* The same shape with a benign token where the hostile name goes. */
    const char *token = "KGTOKENX";
    char *paths[2][7];
    for (int v = 0; v < 2; v++) {
        const char *name = v ? bad : token;
        ck_assert_int_ge(asprintf(&paths[v][0], "/Users/%s", name), 0);
        ck_assert_int_ge(asprintf(&paths[v][1], "/Users/%s/proj %s", name, name), 0);
        ck_assert_int_ge(asprintf(&paths[v][2], "/private/var/folders/%s/T", name), 0);
        ck_assert_int_ge(asprintf(&paths[v][3], "/Users/%s/proj %s/.env%s", name, name, name), 0);
        ck_assert_int_ge(asprintf(&paths[v][4], "/Users/%s/.cfg-%s", name, name), 0);
        ck_assert_int_ge(asprintf(&paths[v][5], "/opt/%s", name), 0);
        ck_assert_int_ge(asprintf(&paths[v][6], "/Users/%s/proj %s/.git/%s", name, name, name), 0);
    }
    char *dumps[2][2];
    char *texts[2];
    for (int v = 0; v < 2; v++) {
        kgate_policy pol = base_policy(paths[v][0], paths[v][1]);
        pol.tmpdir = paths[v][2];
        pol.deny_read = SL(paths[v][3]);
        pol.read_paths = SL(paths[v][4]);
        pol.allow_paths = SL(paths[v][5]);
        pol.protect_paths = SL(paths[v][6]);
        pol.macos_profile = (_i % 2) ? KGATE_MACOS_STRICT : KGATE_MACOS_PERMISSIVE;
        for (int f = 0; f < 2; f++) {
            sb_profile prof;
            sbe_profile *p = build_parse(&pol, f ? SB_FORM_INLINE : SB_FORM_PARAMS, &prof);
            dumps[v][f] = sbe_dump(p);
            if (f == 0) texts[v] = strdup(prof.text);
            /* The hostile profile still says what it should. */
            ask(p, "home", "file-read-data", SBE_PATH, paths[v][0], 0);
            ask(p, "project", "file-write-data", SBE_PATH, paths[v][1], 1);
            ask(p, "deny_read", "file-read-data", SBE_PATH, paths[v][3], 0);
            ask(p, "protect", "file-write-data", SBE_PATH, paths[v][6], 0);
            ask(p, "public", "network-outbound", SBE_ADDR, "8.8.8.8:53", 0);
            ask(p, "pasteboard", "mach-lookup", SBE_MACH, "com.apple.pasteboard.1", 0);
            sbe_free(p);
            sb_profile_clear(&prof);
        }
    }
    /* The installed text does not depend on the path at all. */
    ck_assert_str_eq(texts[0], texts[1]);
    /* Rule for rule, the hostile profile is the benign one with the name
     * substituted: no rule added, lost or changed in kind. */
    char *etok = sbe_escape(token), *ebad = sbe_escape(bad);
    char *want = replace_all(dumps[0][0], etok, ebad);
    ck_assert_str_eq(dumps[0][0], dumps[0][1]);
    ck_assert_str_eq(dumps[1][0], want);
    ck_assert_str_eq(dumps[1][1], want);
    free(want), free(etok), free(ebad);
    for (int v = 0; v < 2; v++) {
        free(texts[v]);
        for (int f = 0; f < 2; f++) free(dumps[v][f]);
        for (int k = 0; k < 7; k++) free(paths[v][k]);
    }
}
END_TEST

/* The evaluator itself refuses what it does not know, so a new rule kind
 * cannot pass the table unread. */
START_TEST(evaluator_is_strict)
{
    static const char *const bad[] = {
        "(allow default)",
        "(version 1)\n(allow file-read* (subpath \"/a\")",
        "(version 1)\n(allow file-read* (vnode-type REGULAR-FILE))",
        "(version 1)\n(allow network-outbound (local ip \"localhost:*\"))",
        "(version 1)\n(allow file-read* (subpath (param \"NOPE\")))",
        "(version 1)\n(allow file-read* (subpath \"a\nb\"))",
        "(version 1)\n(import \"system.sb\")",
        "(version 1)\n(deny network-outbound (remote unix-socket (subpath \"/a\")))",
        "(version 1)\n(deny network-outbound (remote unix-socket (path-literal \"\")))",
    };
    char perr[128];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sbe_profile *p = sbe_parse(bad[i], NULL, 0, perr, sizeof perr);
        ck_assert_msg(p == NULL, "accepted: %s", bad[i]);
    }
    const char *lastwins = "(version 1)(allow default)(deny file-read* (subpath \"/h\"))"
                           "(allow file-read* (subpath \"/h/p\"))";
    sbe_profile *p = sbe_parse(lastwins, NULL, 0, perr, sizeof perr);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(sbe_allows(p, "file-read-data", SBE_PATH, "/h/x"), 0);
    ck_assert_int_eq(sbe_allows(p, "file-read-data", SBE_PATH, "/h/p/x"), 1);
    ck_assert_int_eq(sbe_allows(p, "file-read-data", SBE_PATH, "/hx"), 1);
    ck_assert_int_eq(sbe_allows(p, "file-write-data", SBE_PATH, "/h/x"), 1);
    sbe_free(p);
}
END_TEST

/* What the machine allows, from the probe's facts alone (1, 0, -1 for not
 * known): every combination, so each rule is seen deciding. */
START_TEST(host_decide_table)
{
    for (int m = -1; m <= 1; m++)
        for (int t = -1; t <= 1; t++)
            for (int n = -1; n <= 1; n++) {
                sb_host_state want = m != 1   ? SB_HOST_NOT_MACOS
                                     : t != 1 ? SB_HOST_NO_TOOL
                                     : n == 1 ? SB_HOST_NESTED
                                              : SB_HOST_READY;
                ck_assert_msg(sb_host_decide(m, t, n) == want,
                              "macos %d sandbox_exec %d sandboxed %d", m, t, n);
            }
    /* The sentence names the cause and what to do, on one line. */
    ck_assert_ptr_nonnull(strstr(sb_nested_sentence(), "Seatbelt sandbox"));
    ck_assert_ptr_nonnull(strstr(sb_nested_sentence(), "another profile"));
    ck_assert_ptr_null(strchr(sb_nested_sentence(), '\n'));
}
END_TEST

static Suite *profile_suite(void)
{
    Suite *s = suite_create("seatbelt-profile");
    TCase *tc = tcase_create("builder");
    tcase_add_test(tc, golden_seed_profile);
    tcase_add_test(tc, params_equal_inline);
    tcase_add_loop_test(tc, questions, 0, (int)N_LAYOUTS * 16);
    tcase_add_test(tc, restricted);
    tcase_add_test(tc, never_local_ip);
    tcase_add_loop_test(tc, unix_sockets, 0, 8);
    tcase_add_test(tc, refuses_bad_input);
    tcase_add_test(tc, doors_named);
    tcase_add_test(tc, quote_table);
    tcase_add_test(tc, quote_roundtrip);
    tcase_add_loop_test(tc, hostile_paths, 0, (int)(sizeof hostile / sizeof hostile[0]));
    tcase_add_test(tc, evaluator_is_strict);
    tcase_add_test(tc, dot_git_literal);
    tcase_add_test(tc, separate_git_dir_pinned);
    tcase_add_loop_test(tc, protected_table, 0, 2);
    tcase_add_test(tc, host_decide_table);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return kgt_run_suite(profile_suite()); }
