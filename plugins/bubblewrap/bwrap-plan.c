/* bwrap-plan.c: policy + probe -> the bwrap argument vector.
 *
 * bwrap applies its mount options in the order given and a later mount
 * covers an earlier one, so the order below IS the policy: the floor first
 * (read-only /), then what hides (tmpfs over $HOME and /tmp), then what gives
 * back (read_paths, allow_paths, the project; a nested path after its
 * parent), then what takes away again inside what was given back
 * (protect_paths, deny_read).  docs/bubblewrap.md walks through it flag by
 * flag.
 *
 * The builder is a function of the policy, the probe and the types of the
 * files the policy names (stat: is a deny_read entry a file or a directory,
 * does a read path exist).  It holds no file descriptors, so the argv can be
 * printed by --dry-run, pasted into a shell, and exec'd by another backend
 * (slirp-filter runs it from inside its own user and network namespace,
 * which is why the uid and gid are always explicit).  Descriptors bwrap
 * needs at run time are added by launch (the SDK's kgl-bwrap.c). */
#include "bwrap-internal.h"
#include "kgate/kgate-denycheck.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *bwrap_hosts_sentence(void)
{
    return "a host allow list needs the slirp-filter backend (slirp4netns, dnsmasq "
           "and nftables)";
}

/* One path the policy gives back. */
typedef struct giveback {
    const char *path;
    int writable;
    int project;
    char *pin; /* a parent of a deny_read entry, bound onto itself (owned) */
} giveback;

typedef struct planner {
    const kgate_host *host;
    const kgate_policy *pol;
    kgate_plan *plan;
    kgate_err *err;
    giveback *gb; /* sorted by path, deduplicated */
    size_t n_gb;
    char *shim; /* pty mode: the shim run before the command, else NULL */
    int failed; /* an append ran out of memory */
} planner;

static void arg(planner *pl, const char *a)
{
    if (pl->host->plan_arg(pl->plan, a) < 0) pl->failed = 1;
}

static void arg2(planner *pl, const char *a, const char *b)
{
    arg(pl, a);
    arg(pl, b);
}

static void arg3(planner *pl, const char *a, const char *b, const char *c)
{
    arg(pl, a);
    arg(pl, b);
    arg(pl, c);
}

static int bad_path(const char *p) { return !p || p[0] != '/'; }

static int check_list(planner *pl, const char *key, const kgate_strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (bad_path(l->v[i]))
            return kgate_err_set(pl->err, EINVAL, "%s entry \"%s\" is not an absolute path", key,
                                 l->v[i] ? l->v[i] : "(null)");
    return 0;
}

/* The temporary directories every program shares: each becomes a private
 * empty tmpfs.  /var/tmp as /tmp: a file another program left there is
 * not the box's to read, and the Landlock box grants neither
 * (docs/one-view.md). */
static const char *const private_tmp[] = {"/tmp", "/var/tmp"};

/* The other users' homes: /home becomes an empty tmpfs that can be
 * searched, not listed (mode 0111), as the Landlock box, which grants
 * nothing below it, refuses the listing; what is given back below it (the
 * project, read_paths) gets its mount point there. */
#define HOMES "/home"

static int in_private_tmp(const char *p)
{
    for (size_t i = 0; i < sizeof private_tmp / sizeof private_tmp[0]; i++)
        if (kgate_path_under(p, private_tmp[i])) return 1;
    return 0;
}

/* The program can see p: it lies under something given back, or outside
 * the trees the sandbox replaces by empty tmpfs ($HOME, /home, /tmp,
 * /var/tmp, and the socket directories of bwrap-sockets.c). */
static int visible(const planner *pl, const char *p)
{
    for (size_t i = 0; i < pl->n_gb; i++)
        if (kgate_path_under(p, pl->gb[i].path)) return 1;
    /* allow_sockets bring things back too, and deny_read must still win */
    for (size_t i = 0; i < pl->pol->allow_sockets.n; i++)
        if (pl->pol->allow_sockets.v[i] && kgate_path_under(p, pl->pol->allow_sockets.v[i]))
            return 1;
    return !kgate_path_under(p, pl->pol->home) && !kgate_path_under(p, HOMES) &&
           !in_private_tmp(p) && !bwrap_socket_hidden(p, pl->pol->uid);
}

/* p lies under a path the program may write. */
static int writable(const planner *pl, const char *p)
{
    for (size_t i = 0; i < pl->n_gb; i++)
        if (pl->gb[i].writable && kgate_path_under(p, pl->gb[i].path)) return 1;
    return 0;
}

static int gb_cmp(const void *a, const void *b)
{
    return strcmp(((const giveback *)a)->path, ((const giveback *)b)->path);
}

/* read_paths, allow_paths and the project in one list sorted by path, so a
 * parent is mounted before anything nested in it and the more specific
 * entry wins.  The same path in two lists is mounted once: the project is
 * always writable; otherwise read-only beats read-write (fail closed). */
static int collect_givebacks(planner *pl)
{
    const kgate_policy *pol = pl->pol;
    size_t max = pol->read_paths.n + pol->allow_paths.n + 1, n = 0;
    giveback *gb = calloc(max, sizeof *gb);
    if (!gb) return kgate_err_set(pl->err, ENOMEM, "out of memory");
    pl->gb = gb;

    const kgate_strlist *lists[2] = {&pol->read_paths, &pol->allow_paths};
    const char *keys[2] = {"read_paths", "allow_paths"};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < lists[k]->n; i++) {
            const char *p = lists[k]->v[i];
            /* A bind of $HOME or of one of its ancestors would show the
             * real home again, on top of the tmpfs that hides it. */
            if (kgate_path_under(pol->home, p))
                return kgate_err_set(pl->err, EPERM,
                                     "%s entry %s would show the whole home "
                                     "directory %s again",
                                     keys[k], p, pol->home);
            struct stat st;
            if (stat(p, &st) < 0) {
                /* bwrap fails on a missing source; nothing there means
                 * nothing to show, so leave it out and say so. */
                if (pl->host->plan_note(pl->plan,
                                        "%s entry %s does not exist: not "
                                        "mounted",
                                        keys[k], p) < 0)
                    pl->failed = 1;
                continue;
            }
            gb[n++] = (giveback){p, k == 1, 0, NULL};
        }
    }
    gb[n++] = (giveback){pol->project, 1, 1, NULL};
    qsort(gb, n, sizeof *gb, gb_cmp);

    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (out && strcmp(gb[out - 1].path, gb[i].path) == 0) {
            giveback *prev = &gb[out - 1];
            if (gb[i].project || prev->project) {
                prev->project = 1;
                prev->writable = 1;
            } else {
                prev->writable = prev->writable && gb[i].writable;
            }
            continue;
        }
        gb[out++] = gb[i];
    }
    pl->n_gb = out;
    return 0;
}

/* The giveback that decides p: the longest one that contains it. */
static const giveback *innermost(const planner *pl, const char *p)
{
    const giveback *best = NULL;
    for (size_t i = 0; i < pl->n_gb; i++)
        if (kgate_path_under(p, pl->gb[i].path) &&
            (!best || strlen(pl->gb[i].path) > strlen(best->path)))
            best = &pl->gb[i];
    return best;
}

static int check_deny(planner *pl)
{
    const kgate_strlist *l = &pl->pol->deny_read;
    for (size_t i = 0; i < l->n; i++)
        if (visible(pl, l->v[i]) && kgate_deny_read_check(l->v[i], pl->err) < 0) return -1;
    return 0;
}

/* Each directory between the innermost giveback and an existing deny_read
 * entry becomes a mount point of its own (bound onto itself, with the
 * giveback's writability).  A mount point cannot be renamed or removed
 * from inside (EBUSY), so a program cannot move the entry out from under
 * the name the next run covers: renaming config/ to config.moved/ would
 * otherwise leave config.moved/secrets.env uncovered in every later run.
 * The entry itself is a mount point already (its cover). */
static int add_pins(planner *pl)
{
    const kgate_strlist *l = &pl->pol->deny_read;
    for (size_t i = 0; i < l->n; i++) {
        const char *p = l->v[i];
        struct stat st;
        const giveback *g = innermost(pl, p);
        if (!g || !g->writable || lstat(p, &st) < 0) continue;
        size_t base = strlen(g->path);
        for (const char *c = p + base + 1; (c = strchr(c, '/')); c++) {
            char *dir = strndup(p, (size_t)(c - p));
            if (!dir) return kgate_err_set(pl->err, ENOMEM, "out of memory");
            int known = 0;
            for (size_t k = 0; k < pl->n_gb && !known; k++)
                known = strcmp(pl->gb[k].path, dir) == 0;
            if (known) {
                free(dir);
                continue;
            }
            giveback *gb = realloc(pl->gb, (pl->n_gb + 1) * sizeof *gb);
            if (!gb) {
                free(dir);
                return kgate_err_set(pl->err, ENOMEM, "out of memory");
            }
            pl->gb = gb;
            const giveback *owner = innermost(pl, dir);
            pl->gb[pl->n_gb++] = (giveback){dir, owner->writable, 0, dir};
        }
    }
    qsort(pl->gb, pl->n_gb, sizeof *pl->gb, gb_cmp);
    return 0;
}

static int check_policy(planner *pl, const kgate_probe *probe)
{
    const kgate_policy *pol = pl->pol;
    if (!probe || probe->tool_path[0] != '/')
        return kgate_err_set(pl->err, ENOENT, "bwrap was not found (install bubblewrap)");
    /* Again at every plan: the probe may be an earlier run's (the probe
     * cache), and whether the box may write there is this policy's. */
    if (kgate_tool_trusted(probe->tool_path, NULL, 0, pl->err) < 0 ||
        kgate_tool_outside_policy(probe->tool_path, pol, pl->err) < 0)
        return -1;
    if (bad_path(pol->home) || strcmp(pol->home, "/") == 0)
        return kgate_err_set(pl->err, EINVAL, "home directory \"%s\" cannot be hidden",
                             pol->home ? pol->home : "(null)");
    if (bad_path(pol->project))
        return kgate_err_set(pl->err, EINVAL, "project \"%s\" is not an absolute path",
                             pol->project ? pol->project : "(null)");
    /* The core refuses this before any backend runs; a plan that would
     * bind the whole home writable must not exist even if it did not. */
    if (kgate_path_under(pol->home, pol->project))
        return kgate_err_set(pl->err, EPERM, "the project %s covers the home directory %s",
                             pol->project, pol->home);
    if (bad_path(pol->command_path))
        return kgate_err_set(pl->err, EINVAL, "command path \"%s\" is not absolute",
                             pol->command_path ? pol->command_path : "(null)");
    if (pol->tmpdir && bad_path(pol->tmpdir))
        return kgate_err_set(pl->err, EINVAL, "TMPDIR \"%s\" is not absolute", pol->tmpdir);
    if (check_list(pl, "read_paths", &pol->read_paths) < 0 ||
        check_list(pl, "allow_paths", &pol->allow_paths) < 0 ||
        check_list(pl, "deny_read", &pol->deny_read) < 0 ||
        check_list(pl, "protect_paths", &pol->protect_paths) < 0)
        return -1;
    if (pol->network == KGATE_NET_RESTRICTED && pol->allow_hosts.n > 0)
        return kgate_err_set(pl->err, ENOTSUP, "%s", bwrap_hosts_sentence());
    return 0;
}

/* Who the program is and what it shares with the host.  --cap-drop ALL
 * matters when the caller is (or looks like) root: bwrap then keeps every
 * capability inside the namespace unless told otherwise.  --disable-userns
 * stops the program from making a user namespace of its own, where it would
 * be root again and could remount what we covered. */
static void stage_namespaces(planner *pl, const kgate_probe *probe)
{
    const kgate_policy *pol = pl->pol;
    char uid[32], gid[32];
    snprintf(uid, sizeof uid, "%lu", (unsigned long)pol->uid);
    snprintf(gid, sizeof gid, "%lu", (unsigned long)pol->gid);

    arg(pl, probe->tool_path);
    arg(pl, "--die-with-parent");
    /* A new session has no controlling terminal: no TIOCSTI into the
     * user's.  Also in pty mode, where it keeps the program out of the
     * session of bwrap's outer process: a Ctrl-C typed into the pty must
     * not kill that one (stage_pty). */
    arg(pl, "--new-session");
    arg(pl, "--unshare-user");
    arg2(pl, "--uid", uid);
    arg2(pl, "--gid", gid);
    arg(pl, "--disable-userns");
    arg2(pl, "--cap-drop", "ALL");
    arg(pl, "--unshare-pid");
    arg(pl, "--unshare-ipc");
    arg(pl, "--unshare-uts");
    /* KGATE_NET_RESTRICTED with hosts was refused in check_policy; without
     * hosts it arrives as OFF. */
    if (pol->network != KGATE_NET_OPEN) arg(pl, "--unshare-net");
}

/* The floor: the system read-only, private /dev, /proc, /tmp and
 * /var/tmp, no other user's home.  A /var/tmp or /home that is a link is
 * covered at its target (bwrap follows it); one that is missing needs
 * nothing, and bwrap could not make its mount point in the read-only root
 * anyway. */
static void stage_base(planner *pl)
{
    struct stat hs;
    arg3(pl, "--ro-bind", "/", "/");
    arg2(pl, "--dev", "/dev");
    arg2(pl, "--proc", "/proc");
    for (size_t i = 0; i < sizeof private_tmp / sizeof private_tmp[0]; i++) {
        struct stat st;
        if (i == 0 || (stat(private_tmp[i], &st) == 0 && S_ISDIR(st.st_mode)))
            arg2(pl, "--tmpfs", private_tmp[i]);
    }
    if (stat(HOMES, &hs) == 0 && S_ISDIR(hs.st_mode)) {
        arg2(pl, "--perms", "0111");
        arg2(pl, "--tmpfs", HOMES);
    }
    /* Host sockets: after the floor, before $HOME, so that what is given
     * back later (read_paths, allow_sockets) lands on top of the covers. */
    if (bwrap_plan_socket_cover(pl->host, pl->pol, pl->plan, "/etc/resolv.conf") < 0)
        pl->failed = 1;
}

/* The files the core made for the box's HOME (the .gitconfig with the
 * user's identity, its excludes), read-only: bwrap makes their mount
 * points in the tmpfs.  Before the givebacks, so that a read_paths entry
 * that gives the real ~/.gitconfig back wins. */
static void stage_home_files(planner *pl)
{
    const kgate_policy *pol = pl->pol;
    if (!KGATE_HAS_FIELD(pol, kgate_policy, n_home_files)) return;
    for (size_t i = 0; i < pol->n_home_files; i++) {
        const kgate_home_file *f = &pol->home_files[i];
        if (!f->name || !f->source || f->name[0] == '/' || strstr(f->name, "..")) continue;
        if (pl->host->plan_argf(pl->plan, "--ro-bind") < 0 ||
            pl->host->plan_arg(pl->plan, f->source) < 0 ||
            pl->host->plan_argf(pl->plan, "%s/%s", pol->home, f->name) < 0)
            pl->failed = 1;
    }
}

/* The home directory is an empty tmpfs; bwrap creates the mount points of
 * whatever is given back inside it. */
static void stage_home(planner *pl)
{
    struct stat st;
    /* No home, nothing to hide; and bwrap could not make the mount point
     * in the read-only root anyway. */
    if (stat(pl->pol->home, &st) < 0) {
        if (pl->host->plan_note(pl->plan, "home %s does not exist: nothing to hide",
                                pl->pol->home) < 0)
            pl->failed = 1;
        return;
    }
    arg2(pl, "--tmpfs", pl->pol->home);
    stage_home_files(pl);
}

static void stage_giveback(planner *pl)
{
    for (size_t i = 0; i < pl->n_gb; i++)
        arg3(pl, pl->gb[i].writable ? "--bind" : "--ro-bind", pl->gb[i].path, pl->gb[i].path);
}

/* p is the project's .git/hooks, missing in a .git that is a directory.
 * git runs hooks from there, so a program that could create it could plant
 * a pre-commit that runs at the user's next commit. */
static int missing_hooks(const planner *pl, const char *p)
{
    char want[4096], git[4096];
    struct stat st;
    int n = snprintf(want, sizeof want, "%s/.git/hooks", pl->pol->project);
    snprintf(git, sizeof git, "%s/.git", pl->pol->project);
    return n > 0 && (size_t)n < sizeof want && strcmp(p, want) == 0 && lstat(git, &st) == 0 &&
           S_ISDIR(st.st_mode);
}

/* An empty directory that cannot be written.  bwrap creates the mount
 * point, so an empty .git/hooks appears in the real project: the directory
 * git init would have made anyway. */
static void stage_empty_hooks(planner *pl, const char *p)
{
    arg2(pl, "--tmpfs", p);
    arg2(pl, "--remount-ro", p);
}

/* git reads config.worktree only with extensions.worktreeConfig on; a
 * crude look at .git/config is enough, since a false positive costs only
 * an empty file. */
static int worktree_config_on(const char *git)
{
    char cfg[4096], buf[65536];
    if (snprintf(cfg, sizeof cfg, "%s/config", git) >= (int)sizeof cfg) return 1;
    FILE *f = fopen(cfg, "re");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    int more = !feof(f);
    fclose(f);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++) buf[i] = (char)(buf[i] ? buf[i] : ' ');
    return more || strcasestr(buf, "worktreeconfig") != NULL;
}

/* The project's .git itself (docs/escapes.md, "Host git").  A directory is
 * bound onto itself: a mount point cannot be renamed, removed or replaced
 * (EBUSY, measured), so the program cannot put a git directory of its
 * choosing at .git, while everything below stays as writable as the rest
 * of the project and the protected paths below it are bound read-only
 * after this.  A .git file (a linked worktree's, a submodule's) names the
 * git directory: read-only.  With extensions.worktreeConfig, a missing
 * config.worktree would be read at the next host git command: it becomes
 * an empty file (the mount point) that reads as empty config, as a missing
 * .git/hooks becomes an empty directory. */
static void stage_git(planner *pl)
{
    char git[4096], wtc[4096];
    struct stat st;
    if (snprintf(git, sizeof git, "%s/.git", pl->pol->project) >= (int)sizeof git ||
        snprintf(wtc, sizeof wtc, "%s/config.worktree", git) >= (int)sizeof wtc ||
        !writable(pl, git) || lstat(git, &st) < 0)
        return;
    if (S_ISREG(st.st_mode)) {
        arg3(pl, "--ro-bind", git, git);
    } else if (S_ISDIR(st.st_mode)) {
        arg3(pl, "--bind", git, git);
        if (lstat(wtc, &st) < 0 && errno == ENOENT && worktree_config_on(git))
            arg3(pl, "--dev-bind", "/dev/null", wtc);
    }
}

/* p is the root of something given back writable (a mount point already). */
static int giveback_root(const planner *pl, const char *p)
{
    for (size_t i = 0; i < pl->n_gb; i++)
        if (strcmp(pl->gb[i].path, p) == 0) return 1;
    return 0;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Pushes every directory between p and the writable mount it lies in
 * onto v (to free); 0, or -1 when out of memory. */
static int push_ancestors(const planner *pl, const char *p, char ***v, size_t *n)
{
    char *a = strdup(p), *slash;
    int rc = a ? 0 : -1;
    while (rc == 0 && (slash = strrchr(a, '/')) && slash != a) {
        *slash = '\0';
        if (giveback_root(pl, a) || !writable(pl, a)) break;
        char **nv = realloc(*v, (*n + 1) * sizeof *nv);
        if (nv) *v = nv;
        if (!nv || !(nv[*n] = strdup(a)))
            rc = -1;
        else
            (*n)++;
    }
    free(a);
    return rc;
}

/* A read-only mount pins a name, not the directories above it: renamed
 * away (mv .realgit old), one takes the mount with it, and a directory
 * made in its place can hold a config of the program's choosing where the
 * protected path was (measured; issue 40).  So every directory between a
 * writable mount and a protected path in it is bound onto itself first,
 * shallowest first: a mount point cannot be renamed or removed (EBUSY),
 * and what is below it stays as writable as before.  The project's .git
 * is stage_git's. */
static void stage_protect_parents(planner *pl)
{
    const kgate_strlist *l = &pl->pol->protect_paths;
    char **v = NULL, git[4096];
    size_t n = 0;
    snprintf(git, sizeof git, "%s/.git", pl->pol->project);
    for (size_t i = 0; i < l->n && !pl->failed; i++)
        if (writable(pl, l->v[i]) && push_ancestors(pl, l->v[i], &v, &n) < 0) pl->failed = 1;
    if (n) qsort(v, n, sizeof *v, str_cmp);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (!pl->failed && (i == 0 || strcmp(v[i], v[i - 1]) != 0) && strcmp(v[i], git) != 0 &&
            lstat(v[i], &st) == 0 && S_ISDIR(st.st_mode))
            arg3(pl, "--bind", v[i], v[i]);
    }
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* Read-only again inside a writable root.  Only where it matters: a
 * protected path under the hidden home but outside anything given back
 * would otherwise be bound in from the real home and become readable, and
 * a missing one would make bwrap create an empty mount point in the real
 * project (which only a missing .git/hooks is worth: see above). */
static void stage_protect(planner *pl)
{
    const kgate_strlist *l = &pl->pol->protect_paths;
    stage_git(pl);
    stage_protect_parents(pl);
    for (size_t i = 0; i < l->n; i++) {
        struct stat st;
        if (!writable(pl, l->v[i])) continue;
        if (stat(l->v[i], &st) == 0)
            arg3(pl, "--ro-bind", l->v[i], l->v[i]);
        else if (missing_hooks(pl, l->v[i]))
            stage_empty_hooks(pl, l->v[i]);
    }
}

/* Last, so that it covers everything given back.  A deny_read path exists
 * and cannot be opened: a file is covered by the core's held file (mode
 * 0, bound read-only), a directory by a read-only tmpfs of mode 0, so
 * open, listing and a write fail with EACCES (EROFS for a write that
 * truncates, and for chmod) while stat still works: what the Landlock box
 * does (docs/one-view.md).  Not an empty file: a read that succeeds tells
 * a tool the file is empty, so git add records the secret as empty and
 * tar archives it so; an error says it is held back.  The program has no
 * capabilities (--cap-drop ALL), so root inside is refused as well.  A
 * mount point cannot be renamed or removed (EBUSY).  A core older than
 * ABI 2.3 makes no such file: /dev/null then, which reads empty. */
static const char *held_file(const kgate_policy *pol)
{
    return KGATE_HAS_FIELD(pol, kgate_policy, empty_file) ? pol->empty_file : NULL;
}

static void stage_deny(planner *pl)
{
    const kgate_strlist *l = &pl->pol->deny_read;
    for (size_t i = 0; i < l->n; i++) {
        const char *p = l->v[i];
        struct stat st;
        if (!visible(pl, p)) continue; /* inside the tmpfs: already gone */
        if (stat(p, &st) < 0) {
            if (pl->host->plan_note(pl->plan,
                                    "deny_read %s does not exist: nothing to "
                                    "hide",
                                    p) < 0)
                pl->failed = 1;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            arg2(pl, "--perms", "0000");
            arg2(pl, "--tmpfs", p);
            arg2(pl, "--remount-ro", p);
        } else if (held_file(pl->pol)) {
            arg3(pl, "--ro-bind", held_file(pl->pol), p);
        } else {
            arg3(pl, "--dev-bind", "/dev/null", p);
        }
    }
}

/* pty mode: the program's pty becomes its controlling terminal inside the
 * sandbox, through the shim (pty-shim.c) that stage_process puts before
 * the command.  Not earlier, in launch: the terminal's session would then
 * hold bwrap's outer process too, and a Ctrl-C would kill it (and through
 * --die-with-parent the program, before its handler runs).  The shim is
 * bound in, read-only at its own path, when it lies where the sandbox
 * hides things; last, so that no later mount covers it. */
static void stage_pty(planner *pl)
{
    if (pl->shim && !visible(pl, pl->shim)) arg3(pl, "--ro-bind", pl->shim, pl->shim);
}

static int stage_process(planner *pl)
{
    const kgate_policy *pol = pl->pol;
    if (!visible(pl, pol->command_path))
        return kgate_err_set(pl->err, ENOENT,
                             "%s is not visible inside the sandbox (it lies in "
                             "the hidden home, /home, /tmp or /var/tmp); add "
                             "its directory to read_paths",
                             pol->command_path);
    arg2(pl, "--chdir", pol->project);
    /* A TMPDIR under the replaced /tmp, the hidden home, or a read-only
     * path would leave the program without a usable temp directory: point
     * it at the private /tmp.  One inside a writable path stays. */
    if (pol->tmpdir && !writable(pl, pol->tmpdir)) arg3(pl, "--setenv", "TMPDIR", "/tmp");
    /* Slot (issue 6, seccomp): the filter is a descriptor, so launch adds
     * --seccomp FD beside --info-fd; the plan stays descriptor-free. */
    arg(pl, "--");
    if (pl->shim) arg(pl, pl->shim);
    arg(pl, pol->command_path);
    for (size_t i = 1; i < pol->argv.n; i++) arg(pl, pol->argv.v[i]);
    return 0;
}

/* The filter itself is a descriptor that launch makes; the plan carries
 * its description, from the same table, for --dry-run. */
static void stage_seccomp(planner *pl)
{
    char *text = kgl_seccomp_describe();
    int r = text ? pl->host->plan_file(pl->plan, KGL_SECCOMP_LABEL, text) : -1;
    free(text);
    if (r < 0) pl->failed = 1;
}

/* --publish with network: off is launch's (bwrap-publish.c); the dry run
 * says so.  The slirp-filter stage plans with network: open and notes
 * its own forwards. */
static int publish_notes(planner *pl)
{
    const kgate_policy *pol = pl->pol;
    size_t n = KGATE_HAS_FIELD(pol, kgate_policy, n_publish) ? pol->n_publish : 0;
    for (size_t i = 0; i < n && pol->network == KGATE_NET_OFF; i++)
        if (pl->host->plan_note(pl->plan,
                                "--publish %s:%u:%u: kgate's forwarder listens on the host's "
                                "%s:%u and connects to 127.0.0.1:%u inside the box's "
                                "network namespace, which gets no route",
                                pol->publish[i].host_addr, (unsigned)pol->publish[i].host_port,
                                (unsigned)pol->publish[i].port, pol->publish[i].host_addr,
                                (unsigned)pol->publish[i].host_port,
                                (unsigned)pol->publish[i].port) < 0) {
            kgate_err_set(pl->err, ENOMEM, "out of memory");
            return -1;
        }
    return 0;
}

int bwrap_plan(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
               kgate_plan *plan, kgate_err *err)
{
    planner pl = {.host = host, .pol = policy, .plan = plan, .err = err};
    int r = -1;
    if (check_policy(&pl, probe) < 0) goto out;
    if (collect_givebacks(&pl) < 0) goto out;
    if (check_deny(&pl) < 0 || add_pins(&pl) < 0) goto out;
    if (KGATE_HAS_FIELD(policy, kgate_policy, pty) && policy->pty &&
        !(pl.shim = bwrap_pty_shim_find(err)))
        goto out;
    stage_namespaces(&pl, probe);
    stage_base(&pl);
    stage_home(&pl);
    stage_giveback(&pl);
    if (bwrap_plan_allow_sockets(host, policy, plan, err) < 0) goto out;
    stage_protect(&pl);
    stage_deny(&pl);
    stage_pty(&pl);
    if (stage_process(&pl) < 0) goto out;
    stage_seccomp(&pl);
    if (publish_notes(&pl) < 0) goto out;
    if (pl.failed) {
        kgate_err_set(err, ENOMEM, "out of memory while building the plan");
        goto out;
    }
    r = 0;
out:
    for (size_t i = 0; i < pl.n_gb; i++) free(pl.gb[i].pin);
    free(pl.gb);
    free(pl.shim);
    return r;
}
