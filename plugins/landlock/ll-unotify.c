/* ll-unotify.c: what the SDK's supervisor (kgl-unotify.c) is given in a
 * Landlock box.
 *
 * Landlock can only grant, so a directory that holds a protected or
 * deny_read name is granted entry by entry (ll-rules.c) and nothing can be
 * created, removed or renamed directly in it: the project root and .git
 * with the default protected paths.  Those directories are handed to the
 * supervisor.  It runs with the program's rules plus read-write on them,
 * and refuses there what the split held back: the protected and deny_read
 * entries, pinned here by inode and by (directory, name). */
#include "ll-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int in_roots(const kgate_policy *pol, const char *path)
{
    if (pol->project && kgate_path_under(path, pol->project)) return 1;
    for (size_t i = 0; i < pol->allow_paths.n; i++)
        if (kgate_path_under(path, pol->allow_paths.v[i])) return 1;
    return 0;
}

/* The rights the split directory has of its own in r. */
static uint64_t own_rights(const ll_rules *r, const char *dir)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].dir && strcmp(r->v[i].path, dir) == 0) return r->v[i].access;
    return 0;
}

static int pin_all(const kgate_policy *pol, kgl_un_policy *un, kgate_err *err)
{
    for (size_t i = 0; i < pol->deny_read.n; i++)
        if (kgl_un_add_hole(un, pol->deny_read.v[i], 1, err) < 0) return -1;
    for (size_t i = 0; i < pol->protect_paths.n; i++)
        if (kgl_un_add_hole(un, pol->protect_paths.v[i], 0, err) < 0) return -1;
    if (pol->project && kgl_un_add_prefix(un, pol->project, err) < 0) return -1;
    for (size_t i = 0; i < pol->allow_paths.n; i++)
        if (kgl_un_add_prefix(un, pol->allow_paths.v[i], err) < 0) return -1;
    return 0;
}

size_t ll_un_managed_count(const kgate_policy *pol, const ll_rules *r)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n_split; i++)
        if (in_roots(pol, r->split[i])) k++;
    return k;
}

int ll_un_build(const kgate_policy *pol, const ll_rules *r, kgl_un_policy *un, ll_rules *sup,
                kgate_err *err)
{
    memset(un, 0, sizeof *un);
    memset(sup, 0, sizeof *sup);
    size_t k = ll_un_managed_count(pol, r);
    if (k == 0) return 0;
    *sup = *r;
    sup->v = calloc(r->n + k, sizeof *sup->v);
    if (!sup->v) return kgate_err_set(err, ENOMEM, "out of memory");
    memcpy(sup->v, r->v, r->n * sizeof *r->v);
    sup->n = r->n;
    for (size_t i = 0; i < r->n_split; i++) {
        const char *d = r->split[i];
        if (!in_roots(pol, d)) continue;
        if (kgl_un_add_managed(un, d, err) < 0) goto fail;
        /* Nothing made there during the run is readable under the
         * program's own rules when the directory lacks read rights
         * (a deny_read entry below it): every open goes to the
         * supervisor then. */
        if (!(own_rights(r, d) & LL_FS_READ_FILE)) un->reads = 1;
        /* Nor executable: the supervisor gives a program made there an
         * inode with a rule of its own (the pool) when it is executed. */
        if (!(own_rights(r, d) & LL_FS_EXECUTE) && kgl_un_add_pool(un, d, KGL_UN_POOL_MAX, err) < 0)
            goto fail;
        sup->v[sup->n++] =
            (ll_path){(char *)d, LL_FS_RW & r->fs_handled, 1, "supervisor: managed directory"};
    }
    if (pin_all(pol, un, err) < 0) goto fail;
    return 1;
fail:
    free(sup->v);
    memset(sup, 0, sizeof *sup);
    kgl_un_policy_free(un);
    return -1;
}

int ll_un_pin_unix(const kgate_policy *pol, const ll_rules *r, kgl_un_policy *un, kgate_err *err)
{
    /* A rule holds for everything below its directory: the supervisor
     * walks up from a socket's directory to these. */
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].dir && (r->v[i].access & LL_FS_MAKE_SOCK) &&
            kgl_un_add_unix(un, r->v[i].path, 0, err) < 0)
            return -1;
    /* The project and allow_paths whole: what the run makes in a split
     * directory there (through the supervisor) has no rule of its own,
     * and bubblewrap's box shows a socket a host process made there. */
    if (pol->project && kgl_un_add_unix(un, pol->project, 0, err) < 0) return -1;
    for (size_t i = 0; i < pol->allow_paths.n; i++)
        if (kgl_un_add_unix(un, pol->allow_paths.v[i], 0, err) < 0) return -1;
    for (size_t i = 0; i < pol->allow_sockets.n; i++)
        if (kgl_un_add_unix(un, pol->allow_sockets.v[i], 1, err) < 0) return -1;
    return 0;
}
