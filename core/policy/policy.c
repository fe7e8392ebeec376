/* policy.c: the effective policy, in three layers.
 *
 *   1. the user's ~/.kgate/config.yaml over the spec's defaults (a key the
 *      file sets replaces the default; a missing file is the defaults);
 *   2. the project's .kgate.yaml, which may only narrow (checked on resolved
 *      values, then merged: "may drop" keys take the project's list when it
 *      sets the key, "may add" keys are the union);
 *   3. the one-shot --allow-path / --allow-net flags, which widen for one run.
 *
 * Fails closed: anything unreadable, unresolvable or widening is an error,
 * and no partial policy is returned. */
#include "policy.h"
#include "cleanup.h"
#include "msg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitguard.h"
#include "kgate/kgate-hostspec.h"
#include "json.h"
#include "paths.h"
#include "protected.h"
#include "publish.h"

typedef enum narrow_rule {
    MAY_DROP, /* widens the box: the project keeps or drops entries */
    MAY_ADD, /* narrows the box: the project adds entries */
} narrow_rule;

static const narrow_rule rules[KG_N_LIST_KEYS] = {
    [KG_KEY_ALLOW_HOSTS] = MAY_DROP,   [KG_KEY_ALLOW_PATHS] = MAY_DROP,
    [KG_KEY_READ_PATHS] = MAY_DROP,    [KG_KEY_DENY_READ] = MAY_ADD,
    [KG_KEY_DENY_EXEC] = MAY_ADD,      [KG_KEY_MASK_PREFIXES] = MAY_ADD,
    [KG_KEY_PASS_ENV] = MAY_DROP,      [KG_KEY_DENY_ENV] = MAY_ADD,
    [KG_KEY_PROTECT_PATHS] = MAY_ADD,  [KG_KEY_UNPROTECT_PATHS] = MAY_DROP,
    [KG_KEY_ALLOW_SOCKETS] = MAY_DROP, [KG_KEY_MACOS_ALLOW_MACH] = MAY_DROP,
};

/* ------------------------------------------------------------------------ */
/* Narrowing                                                                */
/* ------------------------------------------------------------------------ */

static bool list_has(const kg_strv *v, const char *s, bool nocase)
{
    for (size_t i = 0; i < kg_strv_len(v); i++) {
        const char *e = kg_strv_get(v, i);
        if (nocase ? strcasecmp(e, s) == 0 : strcmp(e, s) == 0) return true;
    }
    return false;
}

/* Whether name is strictly under parent ("a.b.example" under "example"). */
static bool name_under(const char *name, const char *parent)
{
    size_t n = strlen(name), p = strlen(parent);
    return n > p + 1 && name[n - p - 1] == '.' && strcmp(name + n - p, parent) == 0;
}

/* Whether host entry u allows everything entry v allows: v's names are
 * among u's (u itself, or for "*.d" every name under d, which "*.d" and
 * "*.x.d" and "x.d" all stay within) and v's ports among u's (u has none,
 * or v has the same one).  Both are entries a config file accepted. */
static bool host_covers(const char *u, const char *v)
{
    kgate_hostspec hu, hv;
    /* Not entries (a hand-built layer): only the very same text is kept. */
    if (kgate_hostspec_parse(u, &hu, NULL) < 0 || kgate_hostspec_parse(v, &hv, NULL) < 0)
        return strcasecmp(u, v) == 0;
    if (hu.port && hv.port != hu.port) return false;
    if (!hu.wildcard) return !hv.wildcard && strcmp(hu.name, hv.name) == 0;
    return (hv.wildcard && strcmp(hu.name, hv.name) == 0) || name_under(hv.name, hu.name);
}

static bool hosts_cover(const kg_strv *user, const char *v)
{
    for (size_t i = 0; i < kg_strv_len(user); i++)
        if (host_covers(kg_strv_get(user, i), v)) return true;
    return false;
}

static const char *profile_word(kgate_macos_profile p)
{
    return p == KGATE_MACOS_STRICT ? "strict" : "permissive";
}

/* A project entry the user layer does not allow.  The entry itself is
 * not quoted: the project file is not text the user typed (docs/config.md,
 * "Messages"); its line and key are named instead. */
static int widening_error(const kg_config *project, const char *pf, kg_list_key k, size_t i,
                          kg_error *err)
{
    char at[32] = "";
    unsigned line = kg_config_entry_line(project, k, i);
    if (line) snprintf(at, sizeof at, ":%u", line);
    return kg_err_set(
        err, EPERM,
        "%s%s: %s: the entry is not in the user config; a project file may "
        "only drop entries of this key%s, never add one",
        pf, at, kg_list_key_name(k),
        k == KG_KEY_ALLOW_HOSTS ? " or narrow them (a name under a \"*.\" entry, a port)" : "");
}

int kg_policy_check_narrowing(const kg_config *user, const kg_config *project, kg_error *err)
{
    const char *pf = project->file && *project->file ? project->file : ".kgate.yaml";
    /* What the user layer says, with the spec's defaults for keys it does
     * not set (every "may drop" default is the empty list). */
    kgate_network unet = user->has_network ? user->network : KGATE_NET_RESTRICTED;
    kgate_macos_profile uprof =
        user->has_macos_profile ? user->macos_profile : KGATE_MACOS_PERMISSIVE;

    /* The enum values are ordered off < restricted < open. */
    if (project->has_network && project->network > unet)
        return kg_err_set(err, EPERM,
                          "%s: network: '%s' is wider than the user config's '%s'; "
                          "a project file may only narrow",
                          pf, kg_network_name(project->network), kg_network_name(unet));
    /* Where the runs are recorded is the user's (or their fleet's) choice,
     * never a repository's: a project file may repeat the user's sink, not
     * change it (docs/output-and-audit.md "Sinks"). */
    static const char *const sinks[] = {"file", "journald", "syslog"};
    int usink = user->has_audit_sink ? user->audit_sink : 0;
    if (project->has_audit_sink && project->audit_sink != usink)
        return kg_err_set(err, EPERM,
                          "%s: audit_sink: '%s' is not the user config's '%s'; a project "
                          "file may not change where runs are recorded",
                          pf, sinks[project->audit_sink], sinks[usink]);
    /* 0 is unlimited: any count lowers it. */
    long umax = user->has_max_processes ? user->max_processes : KG_DEFAULT_MAX_PROCESSES;
    if (project->has_max_processes &&
        (project->max_processes == 0 ? umax != 0 : umax != 0 && project->max_processes > umax)) {
        char pv[32];
        if (project->max_processes)
            snprintf(pv, sizeof pv, "%ld", project->max_processes);
        else
            snprintf(pv, sizeof pv, "unlimited");
        return kg_err_set(err, EPERM,
                          "%s: max_processes: '%s' is wider than the user config's "
                          "'%ld'; a project file may only narrow",
                          pf, pv, umax);
    }
    if (project->has_macos_profile && uprof == KGATE_MACOS_STRICT &&
        project->macos_profile != KGATE_MACOS_STRICT)
        return kg_err_set(err, EPERM,
                          "%s: macos_profile: '%s' is wider than the user config's '%s'; "
                          "a project file may only narrow",
                          pf, profile_word(project->macos_profile), profile_word(uprof));

    for (int k = 0; k < KG_N_LIST_KEYS; k++) {
        if (rules[k] != MAY_DROP || !project->has[k]) continue;
        const kg_strv *allowed = user->has[k] ? user->lists[k] : NULL;
        for (size_t i = 0; i < kg_strv_len(project->lists[k]); i++) {
            const char *v = kg_strv_get(project->lists[k], i);
            bool covered =
                k == KG_KEY_ALLOW_HOSTS ? hosts_cover(allowed, v) : list_has(allowed, v, false);
            if (!covered) return widening_error(project, pf, (kg_list_key)k, i, err);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Resolving a layer                                                        */
/* ------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, without duplicates: every list is a set, and a stable order keeps
 * --dry-run output and golden tests stable. */
static void sort_unique(kg_strv *v)
{
    if (kg_strv_len(v) < 2) return; /* qsort of an empty utarray gets NULL */
    utarray_sort(v, cmp_str);
    for (size_t i = kg_strv_len(v); i-- > 1;)
        if (strcmp(kg_strv_get(v, i), kg_strv_get(v, i - 1)) == 0) utarray_erase(v, (unsigned)i, 1);
}

static void lower_all(kg_strv *v)
{
    for (size_t i = 0; i < kg_strv_len(v); i++) {
        char *s = *(char **)utarray_eltptr(v, (unsigned)i);
        for (; *s; s++)
            if (*s >= 'A' && *s <= 'Z') *s = (char)(*s - 'A' + 'a');
    }
}

/* A path entry that cannot be resolved.  The resolver's message quotes the
 * path; for a quiet layer (the project file) only its reason is kept. */
static int resolve_error(const kg_config *c, kg_list_key k, size_t i, kg_error *err)
{
    if (!c->quiet) return kg_err_wrap(err, "%s: %s", c->file, kg_list_key_name(k));
    char at[32] = "";
    unsigned line = kg_config_entry_line(c, k, i);
    if (line) snprintf(at, sizeof at, ":%u", line);
    int code = err ? err->code : EINVAL;
    return kg_err_set(err, code ? code : EINVAL,
                      "%s%s: %s: the path of the entry cannot be used (%s)", c->file, at,
                      kg_list_key_name(k), strerror(code ? code : EINVAL));
}

/* Rewrites the path keys of c in place to resolved paths.  own_base is
 * where relative allow/read/socket paths of this file start (home for the
 * user file, the project for the project file); deny_read, protect_paths
 * and unprotect_paths are project-relative in both. */
static int resolve_layer(kg_config *c, const char *own_base, const char *project, const char *home,
                         kg_error *err)
{
    static const struct {
        kg_list_key k;
        bool own_base;
        bool may_be_missing;
        bool lexical_only;
    } how[] = {
        {KG_KEY_ALLOW_PATHS, true, false, false},   {KG_KEY_READ_PATHS, true, false, false},
        {KG_KEY_ALLOW_SOCKETS, true, true, false},  {KG_KEY_DENY_READ, false, true, false},
        {KG_KEY_PROTECT_PATHS, false, true, false}, {KG_KEY_UNPROTECT_PATHS, false, true, true},
    };
    for (size_t h = 0; h < sizeof how / sizeof how[0]; h++) {
        kg_list_key k = how[h].k;
        if (!c->has[k]) continue;
        kg_strv *out = kg_strv_new();
        for (size_t i = 0; i < kg_strv_len(c->lists[k]); i++) {
            const char *w = kg_strv_get(c->lists[k], i);
            const char *base = how[h].own_base ? own_base : project;
            char *r = how[h].lexical_only
                          ? kg_path_lexical(w, base, home, err)
                          : kg_path_resolve(w, base, home, how[h].may_be_missing, err);
            if (!r) {
                kg_strv_free(out);
                return resolve_error(c, k, i, err);
            }
            kg_strv_push(out, r);
            free(r);
        }
        /* Not sorted here: entry i keeps its line for the narrowing check's
         * message; merge_key sorts what is merged. */
        kg_strv_free(c->lists[k]);
        c->lists[k] = out;
    }
    if (c->has[KG_KEY_ALLOW_HOSTS]) lower_all(c->lists[KG_KEY_ALLOW_HOSTS]);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */
/* ------------------------------------------------------------------------ */

static void union_into(kg_strv *dst, const kg_config *c, kg_list_key k)
{
    if (!c || !c->has[k]) return;
    for (size_t i = 0; i < kg_strv_len(c->lists[k]); i++)
        kg_strv_push(dst, kg_strv_get(c->lists[k], i));
}

/* The effective list of key k into dst. */
static void merge_key(kg_strv *dst, const kg_config *user, const kg_config *proj, kg_list_key k)
{
    if (rules[k] == MAY_ADD) {
        union_into(dst, user, k);
        union_into(dst, proj, k);
    } else {
        union_into(dst, proj && proj->has[k] ? proj : user, k);
    }
    sort_unique(dst);
}

static void refresh_pub(kg_policy *p)
{
    kgate_policy *q = &p->pub;
    q->struct_size = sizeof *q;
    q->allow_hosts = kg_strv_list(p->allow_hosts);
    q->project = p->project;
    q->home = p->home;
    q->tmpdir = p->tmpdir;
    q->allow_paths = kg_strv_list(p->allow_paths);
    q->read_paths = kg_strv_list(p->read_paths);
    q->deny_read = kg_strv_list(p->deny_read);
    q->protect_paths = kg_strv_list(p->protect_paths);
    q->allow_sockets = kg_strv_list(p->allow_sockets);
    q->macos_allow_mach = kg_strv_list(p->macos_allow_mach);
    q->argv = kg_strv_list(p->argv);
    q->command_path = p->command_path;
    q->publish = p->publish;
    q->n_publish = p->n_publish;
}

static char *resolved_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    if (!t || !*t) return NULL;
    /* $TMPDIR comes from the environment, not from a config file, and on
     * macOS it is always below a symlink (/var -> /private/var): resolve it
     * without the refusal rule. */
    char *r = realpath(t, NULL);
    if (!r) return NULL;
    char *tmp = realpath("/tmp", NULL);
    bool same = tmp && strcmp(tmp, r) == 0;
    free(tmp);
    if (same) {
        free(r);
        return NULL;
    }
    return r;
}

/* Built-in protected paths (protected.c: written into every project,
 * whether or not they exist yet), minus what unprotect_paths opts out. */
static int add_builtin_protected(kg_policy *p, const kg_strv *unprotect, kg_error *err)
{
    size_t n;
    const kg_protected_entry *table = kg_protected_table(&n);
    for (size_t i = 0; i < n; i++) {
        const char *name = table[i].name;
        char *lex = kg_path_lexical(name, p->project, p->home, err);
        if (!lex) return -1;
        bool skip = kg_strv_contains(unprotect, lex);
        free(lex);
        if (skip) continue;
        kg_error e = {0};
        char *r = kg_path_resolve(name, p->project, p->home, true, &e);
        if (!r) {
            /* In a git worktree .git is a file: nothing can live below it. */
            if (e.code == ENOTDIR) continue;
            *err = e;
            return kg_err_wrap(err,
                               "built-in protected path %s cannot be protected "
                               "(list it in unprotect_paths to leave it writable)",
                               name);
        }
        kg_strv_push(p->protect_paths, r);
        free(r);
    }
    /* Every submodule's and nested repository's .git too: host git status
     * runs git inside them, with their config. */
    kg_gitguard_pins(p->project, p->protect_paths);
    /* And the hooks directory core.hooksPath names, as .git/hooks. */
    char *hooks = kg_gitguard_hooks_dir(p->project);
    if (hooks && !kg_strv_contains(unprotect, hooks)) kg_strv_push(p->protect_paths, hooks);
    free(hooks);
    return 0;
}

static int apply_flags(kg_policy *p, const kg_flags *flags, kgate_network *net, kg_error *err)
{
    if (!flags) return 0;
    for (size_t i = 0; i < kg_strv_len(flags->allow_paths); i++) {
        const char *w = kg_strv_get(flags->allow_paths, i);
        char *r = kg_path_resolve(w, p->project, p->home, false, err);
        if (!r) return kg_err_wrap(err, "--allow-path");
        kg_strv_push(p->allow_paths, r);
        kg_strv_push(p->oneshot_paths, r);
        free(r);
    }
    for (size_t i = 0; i < kg_strv_len(flags->allow_hosts); i++) {
        const char *w = kg_strv_get(flags->allow_hosts, i);
        char h[KG_HOST_ENTRY_MAX];
        const char *why = "invalid";
        if (!kg_host_entry_norm(w, h, &why)) {
            char shown[80];
            kg_msg_quote(shown, sizeof shown, w, strlen(w));
            return kg_err_set(err, EINVAL, "--allow-net: invalid host name '%s': %s", shown, why);
        }
        kg_strv_push(p->allow_hosts, h);
        kg_strv_push(p->oneshot_hosts, h);
    }
    /* A host typed for this run must be reachable: off becomes a host
     * list; open already reaches it. */
    if (kg_strv_len(flags->allow_hosts) > 0 && *net == KGATE_NET_OFF) *net = KGATE_NET_RESTRICTED;
    /* Ports to publish are checked here, with the rest of the policy: a
     * bad one refuses the run before anything is probed or started.  The
     * network mode is left alone (select.c says which boxes can publish). */
    if (flags->publish &&
        kg_publish_list(flags->publish, &p->publish, &p->n_publish, p->published, err) < 0)
        return -1;
    sort_unique(p->allow_paths);
    sort_unique(p->allow_hosts);
    sort_unique(p->oneshot_paths);
    sort_unique(p->oneshot_hosts);
    return 0;
}

/* kgate's own directory is never writable from inside, whoever asks (the
 * user file or --allow-path; a project file cannot add paths at all): a
 * program that could rewrite config.yaml would widen every later run, and
 * one that could write audit.log could forge it.  Checked here, where the
 * policy is built, so that doctor and run give the same answer.  (An
 * ancestor of ~/.kgate is the home or above, which the backends refuse.) */
static int refuse_own_dir(const kg_policy *p, kg_error *err)
{
    char *own = NULL;
    if (asprintf(&own, "%s/.kgate", p->home) < 0) return kg_err_set(err, ENOMEM, "out of memory");
    char *real = realpath(own, NULL);
    const char *dir = real ? real : own;
    int rc = 0;
    /* The project is writable inside: it may not be ~/.kgate, lie in it,
     * or hold it (~/.kgate may be a symlink into a project, or reached
     * through a bind mount: compared by name and by identity).  A project
     * that covers the whole home holds it too, but gets the home's own
     * refusal from run and doctor. */
    if (!kg_path_covers_home(p->project, p->home)) {
        if (kg_path_is_within(p->project, dir) || kg_path_inside_by_id(p->project, dir))
            rc = kg_err_set(err, EPERM,
                            "refusing to run in %s: it is inside kgate's own directory %s "
                            "(config, audit log, cache), which the program could then "
                            "rewrite; cd into a project",
                            p->project, dir);
        else if (kg_path_is_within(dir, p->project) ||
                 (real && kg_path_inside_by_id(dir, p->project)))
            rc = kg_err_set(err, EPERM,
                            "refusing to run in %s: it contains kgate's own directory %s "
                            "(config, audit log, cache), which the program could then "
                            "rewrite; move %s out of the project",
                            p->project, dir, own);
    }
    for (size_t i = 0; i < kg_strv_len(p->allow_paths) && rc == 0; i++) {
        const char *w = kg_strv_get(p->allow_paths, i);
        if (kg_path_is_within(w, dir) || kg_path_is_within(dir, w))
            rc = kg_err_set(err, EPERM,
                            "allow_paths entry %s would make kgate's own %s (config, "
                            "audit log, cache) writable inside the sandbox",
                            w, dir);
    }
    free(real);
    free(own);
    return rc;
}

static kg_policy *policy_new(void)
{
    kg_policy *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    kg_strv **lists[] = {&p->allow_hosts,   &p->allow_paths,   &p->read_paths,       &p->deny_read,
                         &p->protect_paths, &p->allow_sockets, &p->macos_allow_mach, &p->argv,
                         &p->deny_exec,     &p->mask_prefixes, &p->pass_env,         &p->deny_env,
                         &p->oneshot_paths, &p->oneshot_hosts, &p->published};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) *lists[i] = kg_strv_new();
    return p;
}

void kg_policy_free(kg_policy *p)
{
    if (!p) return;
    kg_strv *lists[] = {p->allow_hosts,   p->allow_paths,   p->read_paths,       p->deny_read,
                        p->protect_paths, p->allow_sockets, p->macos_allow_mach, p->argv,
                        p->deny_exec,     p->mask_prefixes, p->pass_env,         p->deny_env,
                        p->oneshot_paths, p->oneshot_hosts, p->published};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) kg_strv_free(lists[i]);
    free(p->user_file);
    free(p->project_file);
    free(p->project);
    free(p->home);
    free(p->tmpdir);
    free(p->command_path);
    free(p->publish);
    free(p);
}

/* Where the policy is about: HOME and the project resolved, the
 * temporary directory, the two config files' names. */
static int policy_paths(kg_policy *p, const char *home, const char *cwd, kg_error *err)
{
    if (!home || home[0] != '/')
        return kg_err_set(err, EINVAL, "HOME is not set to an absolute path");
    /* HOME and the working directory are where the user already is; a
     * symlink in them is not something a config file wrote, so they are
     * resolved, not refused. */
    p->home = realpath(home, NULL);
    if (!p->home) return kg_err_set(err, errno, "HOME (%s): %s", home, strerror(errno));
    p->project = realpath(cwd, NULL);
    if (!p->project)
        return kg_err_set(err, errno, "working directory %s: %s", cwd, strerror(errno));
    p->tmpdir = resolved_tmpdir();
    if (asprintf(&p->user_file, "%s/.kgate/config.yaml", p->home) < 0 ||
        asprintf(&p->project_file, "%s/.kgate.yaml", p->project) < 0)
        return kg_err_set(err, ENOMEM, "out of memory");
    return 0;
}

/* The two layers merged: the project's value where it sets one, lists
 * joined (the project only narrows: kg_policy_check_narrowing), and the
 * built-in protected paths added.  *net gets the network mode. */
static int merge_layers(kg_policy *p, const kg_config *user, const kg_config *proj,
                        kgate_network *net, kg_error *err)
{
    *net = proj && proj->has_network ? proj->network : user->network;
    p->pub.configured_network = *net;
    p->pub.macos_profile =
        proj && proj->has_macos_profile ? proj->macos_profile : user->macos_profile;
    p->audit_sink = user->has_audit_sink ? user->audit_sink : 0;
    p->max_processes = proj && proj->has_max_processes ? proj->max_processes
                       : user->has_max_processes       ? user->max_processes
                                                       : KG_DEFAULT_MAX_PROCESSES;
    merge_key(p->allow_hosts, user, proj, KG_KEY_ALLOW_HOSTS);
    merge_key(p->allow_paths, user, proj, KG_KEY_ALLOW_PATHS);
    merge_key(p->read_paths, user, proj, KG_KEY_READ_PATHS);
    merge_key(p->deny_read, user, proj, KG_KEY_DENY_READ);
    merge_key(p->deny_exec, user, proj, KG_KEY_DENY_EXEC);
    merge_key(p->mask_prefixes, user, proj, KG_KEY_MASK_PREFIXES);
    merge_key(p->pass_env, user, proj, KG_KEY_PASS_ENV);
    merge_key(p->deny_env, user, proj, KG_KEY_DENY_ENV);
    merge_key(p->protect_paths, user, proj, KG_KEY_PROTECT_PATHS);
    merge_key(p->allow_sockets, user, proj, KG_KEY_ALLOW_SOCKETS);
    merge_key(p->macos_allow_mach, user, proj, KG_KEY_MACOS_ALLOW_MACH);
    kg_autostrv kg_strv *unprotect = kg_strv_new();
    merge_key(unprotect, user, proj, KG_KEY_UNPROTECT_PATHS);
    if (add_builtin_protected(p, unprotect, err) < 0) return -1;
    sort_unique(p->protect_paths);
    return 0;
}

kg_policy *kg_policy_load(const char *home, const char *cwd, const kg_flags *flags, kg_error *err)
{
    kg_config *user = NULL, *ufile = NULL, *proj = NULL;
    kg_policy *p = policy_new();
    if (!p) {
        kg_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    if (policy_paths(p, home, cwd, err) < 0) goto fail;

    user = kg_config_defaults();
    struct stat st;
    if (lstat(p->user_file, &st) < 0 && errno == ENOENT) {
        p->user_file_missing = true;
    } else {
        ufile = kg_config_load(p->user_file, err);
        if (!ufile) goto fail;
        kg_config_apply(user, ufile);
    }
    free(user->file);
    user->file = strdup(p->user_file);

    if (lstat(p->project_file, &st) < 0 && errno == ENOENT) {
        free(p->project_file);
        p->project_file = NULL;
    } else {
        proj = kg_config_load_project(p->project_file, err);
        if (!proj) goto fail;
    }

    if (resolve_layer(user, p->home, p->project, p->home, err) < 0) goto fail;
    if (proj && resolve_layer(proj, p->project, p->project, p->home, err) < 0) goto fail;
    if (proj && kg_policy_check_narrowing(user, proj, err) < 0) goto fail;

    kgate_network net = KGATE_NET_OFF;
    if (merge_layers(p, user, proj, &net, err) < 0) goto fail;
    if (apply_flags(p, flags, &net, err) < 0) goto fail;
    if (refuse_own_dir(p, err) < 0) goto fail;
    p->pub.network =
        net == KGATE_NET_RESTRICTED && kg_strv_len(p->allow_hosts) == 0 ? KGATE_NET_OFF : net;
    p->pub.uid = getuid();
    p->pub.gid = getgid();
    refresh_pub(p);

    kg_config_free(user);
    kg_config_free(ufile);
    kg_config_free(proj);
    return p;

fail:
    kg_config_free(user);
    kg_config_free(ufile);
    kg_config_free(proj);
    kg_policy_free(p);
    return NULL;
}

void kg_policy_set_command(kg_policy *p, const char *const *argv, size_t argc,
                           const char *command_path)
{
    kg_strv_clear(p->argv);
    for (size_t i = 0; i < argc; i++) kg_strv_push(p->argv, argv[i]);
    free(p->command_path);
    p->command_path = command_path ? strdup(command_path) : NULL;
    refresh_pub(p);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                     */
/* ------------------------------------------------------------------------ */

static void json_key(UT_string *out, bool *first, const char *key)
{
    if (!*first) utstring_bincpy(out, ",", 1);
    *first = false;
    kg_json_str(out, key);
    utstring_bincpy(out, ":", 1);
}

static void json_str_or_null(UT_string *out, const char *s)
{
    if (s)
        kg_json_str(out, s);
    else
        utstring_printf(out, "null");
}

const char *const kg_policy_list_keys[] = {
    "allow_hosts",   "allow_paths",   "read_paths",       "deny_read",
    "deny_exec",     "mask_prefixes", "pass_env",         "deny_env",
    "protect_paths", "allow_sockets", "macos_allow_mach", NULL,
};

const kg_strv *kg_policy_list(const kg_policy *p, const char *key)
{
    /* Same order as kg_policy_list_keys. */
    const kg_strv *const v[] = {
        p->allow_hosts,   p->allow_paths,   p->read_paths,       p->deny_read,
        p->deny_exec,     p->mask_prefixes, p->pass_env,         p->deny_env,
        p->protect_paths, p->allow_sockets, p->macos_allow_mach,
    };
    for (size_t i = 0; kg_policy_list_keys[i]; i++)
        if (strcmp(kg_policy_list_keys[i], key) == 0) return v[i];
    return NULL;
}

void kg_policy_to_json(const kg_policy *p, UT_string *out)
{
    bool first = true;
    utstring_bincpy(out, "{", 1);
    json_key(out, &first, "network");
    kg_json_str(out, kg_network_name(p->pub.network));
    json_key(out, &first, "configured_network");
    kg_json_str(out, kg_network_name(p->pub.configured_network));
    for (size_t i = 0; kg_policy_list_keys[i]; i++) {
        json_key(out, &first, kg_policy_list_keys[i]);
        kg_json_strv(out, kg_policy_list(p, kg_policy_list_keys[i]));
    }
    json_key(out, &first, "macos_profile");
    kg_json_str(out, profile_word(p->pub.macos_profile));
    json_key(out, &first, "project");
    json_str_or_null(out, p->project);
    json_key(out, &first, "home");
    json_str_or_null(out, p->home);
    json_key(out, &first, "tmpdir");
    json_str_or_null(out, p->tmpdir);
    json_key(out, &first, "uid");
    utstring_printf(out, "%lu", (unsigned long)p->pub.uid);
    json_key(out, &first, "gid");
    utstring_printf(out, "%lu", (unsigned long)p->pub.gid);
    json_key(out, &first, "user_file");
    json_str_or_null(out, p->user_file);
    json_key(out, &first, "user_file_missing");
    utstring_printf(out, "%s", p->user_file_missing ? "true" : "false");
    json_key(out, &first, "project_file");
    json_str_or_null(out, p->project_file);
    json_key(out, &first, "oneshot_paths");
    kg_json_strv(out, p->oneshot_paths);
    json_key(out, &first, "oneshot_hosts");
    kg_json_strv(out, p->oneshot_hosts);
    if (kg_strv_len(p->argv) > 0) {
        json_key(out, &first, "argv");
        kg_json_strv(out, p->argv);
        json_key(out, &first, "command_path");
        json_str_or_null(out, p->command_path);
    }
    utstring_bincpy(out, "}", 1);
}
