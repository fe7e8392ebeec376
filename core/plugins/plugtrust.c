/* plugtrust.c: deciding, from a path alone, whether kgate may dlopen()
 * what lies there.  See plugtrust.h for the rule.
 *
 * Why from the path alone: dlopen() runs a library's constructors before
 * the loader can look at anything the library says about itself, so every
 * check that protects the user must be done on the file system first.
 * Why "a box started from here": a program inside a box that can write a
 * plugin directory would have its code run by the user's next kgate
 * command, outside every box.  kgate run refuses to start a box that could
 * (cmd_run.c), and every command refuses to load from such a place. */
#include "plugtrust.h"

#include "os.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"

static bool within(const char *path, const char *root)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/') n--;
    if (n == 1 && root[0] == '/') return true;
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* realpath() of the longest prefix that exists, with the rest appended: a
 * missing directory is judged where it would be created.  NULL when the
 * rest holds "." or ".." (no honest answer without the directories) or on
 * any error other than a missing component. */
static char *resolve_partial(const char *path, bool *missing)
{
    *missing = false;
    char *r = realpath(path, NULL);
    if (r) return r;
    if (errno != ENOENT && errno != ENOTDIR) return NULL;
    *missing = true;
    char *head = strdup(path);
    if (!head) return NULL;
    char *res = NULL;
    for (;;) {
        char *slash = strrchr(head, '/');
        if (!slash) break;
        const char *rest = path + (slash - head);
        if (slash == head) {
            res = strdup(path);
            break;
        }
        *slash = '\0';
        char *base = realpath(head, NULL);
        if (base) {
            if (asprintf(&res, "%s%s", strcmp(base, "/") == 0 ? "" : base, rest) < 0) res = NULL;
            free(base);
            break;
        }
        if (errno != ENOENT && errno != ENOTDIR) break;
    }
    free(head);
    if (res && (strstr(res, "/./") || strstr(res, "/../") ||
                (strlen(res) >= 2 && strcmp(res + strlen(res) - 2, "/.") == 0) ||
                (strlen(res) >= 3 && strcmp(res + strlen(res) - 3, "/..") == 0))) {
        free(res);
        res = NULL;
    }
    return res;
}

static void push_resolved(kg_strv *out, const char *p)
{
    bool missing;
    char *r = resolve_partial(p, &missing);
    if (r && !kg_strv_contains(out, r)) kg_strv_push(out, r);
    free(r);
}

kg_strv *kg_plugtrust_exposed(const kg_strv *writable)
{
    kg_strv *out = kg_strv_new();
    if (!out) return NULL;
    char *cwd = getcwd(NULL, 0);
    const char *home = getenv("HOME");
    /* kgate run refuses a working directory that covers $HOME (and one
     * with no $HOME at all), so no box can be started with it writable. */
    if (cwd && home && home[0] == '/' && !kg_path_covers_home(cwd, home)) push_resolved(out, cwd);
    free(cwd);
    for (size_t i = 0; i < kg_strv_len(writable); i++) push_resolved(out, kg_strv_get(writable, i));
    /* Host places every box can write on this system (os.h). */
    const char *shared[4];
    size_t ns = kg_os_box_shared_dirs(shared, sizeof shared / sizeof shared[0]);
    for (size_t i = 0; i < ns; i++) push_resolved(out, shared[i]);
    return out;
}

/* Inside a user namespace every owner the namespace cannot name shows as
 * the overflow uid, and when its map leaves out the real root, root's
 * files (/, /usr, the installed plugins) are among them: without this
 * kgate would refuse all its own plugins in another sandbox (bwrap
 * --unshare-user, a rootless container).  Accepting the overflow uid
 * there is safe as far as this process goes: the owner is then the real
 * root or a uid outside the map, and this process can be neither, so it
 * cannot have been the one that wrote the file, and the mode check still
 * refuses anything its group or others may write.  What it cannot tell
 * apart is root from another unmapped user of the host, who could write
 * a plugin directory they own that you name in KGATE_PLUGIN_PATH.
 * Outside a user namespace the overflow uid is an ordinary uid (refused
 * unless it is ours); inside one that maps root, an overflow-owned file
 * is refused even when we run as that uid, since there it may be
 * anyone's. */
bool kg_plugtrust_owner_ok(uid_t uid)
{
    if (uid == 0) return true;
    switch (kg_os_owner_kind(uid)) {
    case KG_OWNER_UNMAPPED: return true;
    case KG_OWNER_PLAIN: return uid == geteuid();
    default: return false; /* maybe ours, maybe anyone's */
    }
}

/* Every directory from / down to the last component of resolved (itself
 * included when whole), owned by root or by us and writable by nobody
 * else; a sticky directory on the way may be writable by all, since then
 * nobody else can rename or remove what we own inside it. */
static int check_one(const char *p, bool last, char *why, size_t len)
{
    struct stat st;
    if (lstat(p, &st) != 0) {
        snprintf(why, len, "%s: %s", p, strerror(errno));
        return KG_TRUST_REFUSED;
    }
    if (!kg_plugtrust_owner_ok(st.st_uid)) {
        snprintf(why, len, "%s is owned by uid %u, neither root nor the user running kgate", p,
                 (unsigned)st.st_uid);
        return KG_TRUST_REFUSED;
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
        !(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && !last)) {
        snprintf(why, len, "%s is writable by %s (mode %04o)", p,
                 (st.st_mode & S_IWOTH) ? "others" : "its group", (unsigned)(st.st_mode & 07777));
        return KG_TRUST_REFUSED;
    }
    return KG_TRUST_OK;
}

static int check_chain(const char *resolved, bool whole, char *why, size_t len)
{
    char *p = strdup(resolved);
    if (!p) {
        snprintf(why, len, "out of memory");
        return KG_TRUST_REFUSED;
    }
    size_t n = strlen(p);
    /* The last directory to look at ends at stop ("/" when it is root). */
    size_t stop = n;
    if (!whole) {
        stop = (size_t)(strrchr(p, '/') - p);
        if (stop == 0) stop = 1;
    }
    int rc = check_one("/", stop <= 1, why, len);
    for (size_t i = 1; i <= stop && i <= n && rc == KG_TRUST_OK; i++) {
        if (i != n && p[i] != '/') continue;
        char saved = p[i];
        p[i] = '\0';
        rc = check_one(p, i == stop, why, len);
        p[i] = saved;
    }
    free(p);
    return rc;
}

int kg_plugtrust_check(const char *path, const kg_strv *exposed, char *why, size_t len)
{
    bool missing;
    char *r = resolve_partial(path, &missing);
    if (!r) {
        snprintf(why, len, "cannot resolve the path: %s",
                 errno ? strerror(errno) : "'.' or '..' in a missing part");
        return KG_TRUST_REFUSED;
    }
    int rc = KG_TRUST_OK;
    for (size_t i = 0; i < kg_strv_len(exposed); i++) {
        const char *root = kg_strv_get(exposed, i);
        if (within(r, root)) {
            if (strcmp(r, path) == 0)
                snprintf(why, len, "lies inside %s, which a program kgate runs here could write",
                         root);
            else
                snprintf(why, len,
                         "resolves to %s, inside %s, which a program kgate runs "
                         "here could write",
                         r, root);
            rc = KG_TRUST_EXPOSED;
            break;
        }
    }
    if (rc == KG_TRUST_OK && missing) {
        /* Skipping it would let whoever can create it decide later. */
        snprintf(why, len, "does not exist");
        rc = KG_TRUST_MISSING;
    }
    if (rc == KG_TRUST_OK) {
        struct stat st;
        bool is_dir = stat(r, &st) == 0 && S_ISDIR(st.st_mode);
        rc = check_chain(r, is_dir, why, len);
    }
    free(r);
    return rc;
}
