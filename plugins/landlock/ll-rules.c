/* ll-rules.c: the policy as Landlock path rules.
 *
 * Landlock only allows: a rule grants rights on a directory and everything
 * below it, and nothing can be taken back further down.  So what must stay
 * out of reach is never inside a granted directory:
 *
 *   - the system is "/" minus the places that are the user's or shared
 *     with other programs ($HOME, /home, /tmp, /var/tmp, /run/user, /dev),
 *     each also at its target where it is a link (/home -> var/home): each
 *     entry of "/" is granted read and execute, and a directory that holds
 *     one of those places is split, its other entries granted one by one.
 *     A split directory that leads to a hidden place gets no rights of its
 *     own (not even listing: listing "/home" would be listing rights on
 *     everything below it, $HOME's names included).
 *   - the project, read_paths and allow_paths are granted whole unless a
 *     deny_read or protected path lies inside; then each directory on the
 *     way to it is split the same way, and keeps only what it may have on
 *     everything below it (the rights the held-back path allows) plus
 *     listing.  Nothing can be made or removed directly in a split
 *     directory: doctor says so (fs.split).
 *   - /dev is a few nodes, the private temporary directory is granted
 *     read-write.
 *
 * The same function builds what --dry-run prints and what launch installs. */
#include "ll-internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

uint64_t ll_fs_handled(int abi)
{
    if (abi < 1) return 0;
    uint64_t m = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0 to 12 */
    if (abi >= 2) m |= LL_FS_REFER;
    if (abi >= 3) m |= LL_FS_TRUNCATE;
    if (abi >= 5) m |= LL_FS_IOCTL_DEV;
    return m;
}

uint64_t ll_net_handled(int abi) { return abi >= 4 ? LL_NET_BIND_TCP | LL_NET_CONNECT_TCP : 0; }

uint64_t ll_scoped(int abi) { return abi >= 6 ? LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL : 0; }

const char *ll_hosts_sentence(void)
{
    return "a host allow list in the Landlock box needs its supervisor "
           "(seccomp user notification with SECCOMP_ADDFD_FLAG_SEND, Linux "
           "5.14) to check every connect and send, and dnsmasq as the "
           "filtering resolver; run where both are present, or where user "
           "namespaces work (bubblewrap+slirp-filter), or use network: off "
           "or open";
}

int ll_net_hosts(const kgate_policy *pol)
{
    return pol->network == KGATE_NET_RESTRICTED && pol->allow_hosts.n > 0;
}

int ll_net_ready(const kgate_probe *pr, char *why, size_t len)
{
    char bin[256];
    const char *off = getenv(LL_ENV_NO_UNOTIFY);
    if (kgate_probe_fact(pr, LL_FACT_UNOTIFY, 0) != 1 || (off && *off && strcmp(off, "0")))
        snprintf(why, len, "the supervisor is not available here");
    else if (kgl_un_find_dnsmasq(bin, sizeof bin) < 0)
        snprintf(why, len, "dnsmasq is not installed");
    else
        return 1;
    return 0;
}

typedef enum { H_HIDE, H_DENY, H_PROTECT } hole_kind;
typedef struct hole {
    const char *path;
    hole_kind kind;
} hole;

typedef struct build {
    ll_rules *r;
    hole *holes;
    size_t n_holes;
    int system; /* the system walk: H_HIDE holes count */
    kgate_err *err;
} build;

static uint64_t hole_allows(hole_kind k) { return k == H_PROTECT ? LL_FS_READ : 0; }

static int add_rule(build *b, const char *path, uint64_t access, int dir, const char *why)
{
    ll_rules *r = b->r;
    access &= r->fs_handled;
    if (!dir) access &= LL_FS_FILE_RIGHTS;
    if (!access) return 0;
    if (r->n >= LL_MAX_RULES)
        return kgate_err_set(b->err, E2BIG,
                             "more than %d Landlock rules: %s holds too many "
                             "entries on the way to a deny_read or protected "
                             "path to be granted one by one",
                             LL_MAX_RULES, path);
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        ll_path *v = realloc(r->v, cap * sizeof *v);
        if (!v) return kgate_err_set(b->err, ENOMEM, "out of memory");
        r->v = v;
        r->cap = cap;
    }
    char *p = strdup(path);
    if (!p) return kgate_err_set(b->err, ENOMEM, "out of memory");
    r->v[r->n++] = (ll_path){p, access, dir, why};
    return 0;
}

static int add_split(build *b, const char *path)
{
    ll_rules *r = b->r;
    char **v = realloc(r->split, (r->n_split + 1) * sizeof *v);
    if (!v) return kgate_err_set(b->err, ENOMEM, "out of memory");
    r->split = v;
    if (!(v[r->n_split] = strdup(path))) return kgate_err_set(b->err, ENOMEM, "out of memory");
    r->n_split++;
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int grant(build *b, const char *path, uint64_t want, const char *why)
{
    /* A hole at or above path: hidden, or read-only. */
    for (size_t i = 0; i < b->n_holes; i++) {
        const hole *h = &b->holes[i];
        if (h->kind == H_HIDE && !b->system) continue;
        if (kgate_path_under(path, h->path)) {
            want &= hole_allows(h->kind);
            if (!want) return 0;
        }
    }
    struct stat st;
    /* Missing: nothing to grant (it cannot appear later inside a granted
     * directory with more rights than that directory has).  A symbolic
     * link: its target is granted where it lives, or not at all. */
    if (lstat(path, &st) < 0 || S_ISLNK(st.st_mode)) return 0;
    int dir = S_ISDIR(st.st_mode);
    uint64_t below = ~0ULL;
    int any = 0, hide = 0;
    for (size_t i = 0; dir && i < b->n_holes; i++) {
        const hole *h = &b->holes[i];
        if (h->kind == H_HIDE && !b->system) continue;
        if (strcmp(h->path, path) != 0 && kgate_path_under(h->path, path)) {
            any = 1;
            below &= hole_allows(h->kind);
            if (h->kind == H_HIDE) hide = 1;
        }
    }
    if (!any) return add_rule(b, path, want, dir, why);

    /* Split: what this directory may have on everything below it, then
     * each entry on its own.  Listing stays, except on the way to a
     * hidden place, whose names it would list. */
    uint64_t own = want & below;
    if (!hide) own |= want & LL_FS_READ_DIR;
    if (add_rule(b, path, own, 1, why) < 0 || add_split(b, path) < 0) return -1;
    /* In byte order, so the table is the same on every run. */
    struct dirent **ents = NULL;
    int ne = scandir(path, &ents, NULL, by_name);
    if (ne < 0) return 0; /* unreadable to us: nothing below is granted */
    int rc = 0;
    for (int i = 0; i < ne; i++) {
        const char *name = ents[i]->d_name;
        if (rc == 0 && strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
            char *child = NULL;
            if (asprintf(&child, "%s%s%s", path, strcmp(path, "/") ? "/" : "", name) < 0)
                rc = kgate_err_set(b->err, ENOMEM, "out of memory");
            else
                rc = grant(b, child, want, why);
            free(child);
        }
        free(ents[i]);
    }
    free(ents);
    return rc;
}

static int grant_list(build *b, const kgate_strlist *l, uint64_t want, const char *why)
{
    for (size_t i = 0; i < l->n; i++)
        if (grant(b, l->v[i], want, why) < 0) return -1;
    return 0;
}

/* The places of "/" that are the user's or shared with other programs;
 * /home holds the other users' homes (docs/one-view.md: bubblewrap covers
 * it with an empty tmpfs). */
static const char *const hidden[] = {"/tmp", "/var/tmp", "/run/user", "/dev", "/home"};

int ll_rules_visible(const kgate_policy *pol, const char *p)
{
    if (pol->project && kgate_path_under(p, pol->project)) return 1;
    const kgate_strlist *back[2] = {&pol->read_paths, &pol->allow_paths};
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; i < back[l]->n; i++)
            if (back[l]->v[i] && kgate_path_under(p, back[l]->v[i])) return 1;
    for (size_t i = 0; i < sizeof hidden / sizeof hidden[0]; i++)
        if (kgate_path_under(p, hidden[i])) return 0;
    return !(pol->home && pol->home[0] == '/' && strcmp(pol->home, "/") != 0 &&
             kgate_path_under(p, pol->home));
}

int ll_rules_build(const kgate_policy *pol, int abi, const char *tmp, ll_rules *r, kgate_err *err)
{
    memset(r, 0, sizeof *r);
    if (abi > LL_ABI_KNOWN) abi = LL_ABI_KNOWN;
    r->abi = abi;
    r->fs_handled = ll_fs_handled(abi);
    r->nonet = pol->network == KGATE_NET_OFF;
    r->net_handled = r->nonet ? ll_net_handled(abi) : 0;
    r->scoped = ll_scoped(abi);
    if (!pol->project || pol->project[0] != '/')
        return kgate_err_set(err, EINVAL, "no project directory");

    size_t nh = sizeof hidden / sizeof hidden[0];
    size_t max = 2 * nh + 1 + pol->deny_read.n + pol->protect_paths.n;
    hole *holes = calloc(max, sizeof *holes);
    char *targets[sizeof hidden / sizeof hidden[0]] = {NULL};
    if (!holes) return kgate_err_set(err, ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < nh; i++) holes[k++] = (hole){hidden[i], H_HIDE};
    /* A hidden place that is a link would otherwise be granted where it
     * leads, with the directory that holds its target. */
    for (size_t i = 0; i < nh; i++)
        if ((targets[i] = realpath(hidden[i], NULL)) && strcmp(targets[i], hidden[i]) != 0)
            holes[k++] = (hole){targets[i], H_HIDE};
    if (pol->home && pol->home[0] == '/' && strcmp(pol->home, "/") != 0)
        holes[k++] = (hole){pol->home, H_HIDE};
    for (size_t i = 0; i < pol->deny_read.n; i++) holes[k++] = (hole){pol->deny_read.v[i], H_DENY};
    for (size_t i = 0; i < pol->protect_paths.n; i++)
        holes[k++] = (hole){pol->protect_paths.v[i], H_PROTECT};
    build b = {r, holes, k, 1, err};

    static const struct {
        const char *path;
        uint64_t access;
    } dev[] = {
        {"/dev/null", LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE},
        {"/dev/zero", LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE},
        {"/dev/full", LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE},
        {"/dev/random", LL_FS_READ_FILE},
        {"/dev/urandom", LL_FS_READ_FILE},
        {"/dev/tty", LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE},
    };
    int rc = grant(&b, "/", LL_FS_READ, "system, read-only");
    b.system = 0;
    for (size_t i = 0; rc == 0 && i < sizeof dev / sizeof dev[0]; i++) {
        struct stat st;
        if (stat(dev[i].path, &st) == 0) rc = add_rule(&b, dev[i].path, dev[i].access, 0, "device");
    }
    if (rc == 0) rc = grant_list(&b, &pol->read_paths, LL_FS_READ, "read_paths");
    if (rc == 0) rc = grant(&b, pol->project, LL_FS_RW, "project");
    if (rc == 0) rc = grant_list(&b, &pol->allow_paths, LL_FS_RW, "allow_paths");
    /* The private temporary directory: at plan time a name to show. */
    if (rc == 0 && tmp && strcmp(tmp, LL_TMP_PLACEHOLDER) == 0)
        rc = add_rule(&b, tmp, LL_FS_RW, 1, "private TMPDIR (made at launch)");
    else if (rc == 0 && tmp)
        rc = grant(&b, tmp, LL_FS_RW, "private TMPDIR");
    free(holes);
    for (size_t i = 0; i < nh; i++) free(targets[i]);
    if (rc < 0) ll_rules_free(r);
    return rc;
}

void ll_rules_free(ll_rules *r)
{
    for (size_t i = 0; i < r->n; i++) free(r->v[i].path);
    for (size_t i = 0; i < r->n_split; i++) free(r->split[i]);
    free(r->v);
    free(r->split);
    memset(r, 0, sizeof *r);
}

void ll_access_str(uint64_t a, char out[10])
{
    static const struct {
        uint64_t bit;
        char c;
    } map[] = {
        {LL_FS_READ_FILE, 'r'},  {LL_FS_READ_DIR, 'l'}, {LL_FS_EXECUTE, 'x'},
        {LL_FS_WRITE_FILE, 'w'}, {LL_FS_MAKE_REG, 'c'}, {LL_FS_REMOVE_FILE, 'd'},
        {LL_FS_TRUNCATE, 't'},   {LL_FS_REFER, 'm'},    {LL_FS_IOCTL_DEV, 'i'},
    };
    for (size_t i = 0; i < 9; i++) out[i] = (a & map[i].bit) ? map[i].c : '-';
    out[9] = '\0';
}

char *ll_rules_table(const ll_rules *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    fprintf(f,
            "# Landlock ABI %d.  Rights: r read files, l list directories, "
            "x execute, w write files,\n"
            "# c create (files, directories, links, sockets, fifos), d delete, "
            "t truncate,\n"
            "# m move/link across directories, i device ioctls.  A right on a "
            "directory holds for\n"
            "# everything below it; what no rule grants is refused.\n",
            r->abi);
    fprintf(f, "%-9s  %-4s  %-32s  %s\n", "rights", "on", "why", "path");
    for (size_t i = 0; i < r->n; i++) {
        char a[10];
        ll_access_str(r->v[i].access, a);
        fprintf(f, "%-9s  %-4s  %-32s  %s\n", a, r->v[i].dir ? "dir" : "file", r->v[i].why,
                r->v[i].path);
    }
    for (size_t i = 0; i < r->n_split; i++)
        fprintf(f,
                "split: %s (granted entry by entry: nothing can be made or "
                "removed directly in it)\n",
                r->split[i]);
    if (r->net_handled)
        fprintf(f, "network: TCP bind and connect refused (no port allowed)\n");
    else if (r->nonet)
        fprintf(f,
                "network: Landlock ABI %d has no network rules: the "
                "seccomp filter (network off) refuses the sockets\n",
                r->abi);
    else
        fprintf(f, "network: open (no network rule)\n");
    if (r->scoped)
        fprintf(f, "scoped: signals and abstract Unix sockets stay inside "
                   "the box\n");
    else
        fprintf(f, "scoped: none (needs ABI 6)\n");
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

size_t ll_project_split_dirs(const kgate_policy *pol, char *buf, size_t len)
{
    /* Each directory from the project down to the parent of a held-back
     * path, once, in the order met. */
    size_t n = 0, used = 0;
    if (len) buf[0] = '\0';
    const kgate_strlist *lists[2] = {&pol->deny_read, &pol->protect_paths};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++) {
            const char *h = lists[l]->v[i];
            if (!pol->project || strcmp(h, pol->project) == 0 || !kgate_path_under(h, pol->project))
                continue;
            size_t plen = strlen(pol->project);
            for (size_t e = plen; h[e]; e++) {
                if (e != plen && h[e] != '/') continue;
                /* h[0..e) is a directory on the way */
                char dir[4096];
                if (e >= sizeof dir) break;
                memcpy(dir, h, e);
                dir[e] = '\0';
                char needle[4100];
                snprintf(needle, sizeof needle, ", %s, ", dir);
                char hay[8192];
                snprintf(hay, sizeof hay, ", %s, ", buf);
                if (n && strstr(hay, needle)) continue;
                int w = snprintf(buf + used, len - used, "%s%s", n ? ", " : "", dir);
                if (w > 0 && (size_t)w < len - used) used += (size_t)w;
                n++;
            }
        }
    return n;
}
