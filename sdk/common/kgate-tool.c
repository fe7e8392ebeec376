/* kgate-tool.c: finding a program kgate starts outside the box
 * (kgate-tool.h has the rule and why). */
#include "kgate/kgate-tool.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kgate/kgate-path.h"

/* Why one file or directory of a resolved path is not trusted, or 0. */
static int unfit(const char *path, const struct stat *st, kgate_err *err)
{
    uid_t me = geteuid();
    if (st->st_uid != 0 && st->st_uid != me)
        return kgate_err_set(err, EPERM, "%s is owned by uid %lu, neither root nor you (uid %lu)",
                             path, (unsigned long)st->st_uid, (unsigned long)me);
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return kgate_err_set(err, EPERM, "%s is writable by %s (mode %04o)", path,
                             (st->st_mode & S_IWOTH) ? "others" : "its group",
                             (unsigned)(st->st_mode & 07777));
    return 0;
}

/* "/", every directory down to real's parent, then real itself.  real
 * is realpath's, so no component is a link; one that is now was changed
 * since, and is refused. */
static int chain_fit(const char *real, kgate_err *err)
{
    char part[PATH_MAX];
    size_t len = strlen(real);
    for (size_t i = 0; i <= len && len < sizeof part; i++) {
        if (i < len && real[i] != '/') continue;
        size_t n = i == 0 ? 1 : i;
        memcpy(part, real, n);
        part[n] = '\0';
        struct stat st;
        if (lstat(part, &st) < 0) return kgate_err_set(err, errno, "%s: %s", part, strerror(errno));
        if (S_ISLNK(st.st_mode))
            return kgate_err_set(err, ELOOP, "%s became a symbolic link while it was checked",
                                 part);
        if (unfit(part, &st, err) < 0) return -1;
    }
    return 0;
}

int kgate_tool_trusted(const char *path, char *real, size_t realsz, kgate_err *err)
{
    char buf[PATH_MAX];
    if (!path || path[0] != '/') return kgate_err_set(err, EINVAL, "%s is not absolute", path);
    if (!realpath(path, buf)) return kgate_err_set(err, errno, "%s: %s", path, strerror(errno));
    struct stat st;
    if (stat(buf, &st) < 0) return kgate_err_set(err, errno, "%s: %s", buf, strerror(errno));
    if (!S_ISREG(st.st_mode) || access(buf, X_OK) != 0)
        return kgate_err_set(err, EACCES, "%s is not an executable file", buf);
    if (chain_fit(buf, err) < 0) return -1;
    if (real) {
        if (strlen(buf) >= realsz)
            return kgate_err_set(err, ENAMETOOLONG, "%s: path too long", buf);
        memcpy(real, buf, strlen(buf) + 1);
    }
    return 0;
}

int kgate_tool_find(const char *name, char *out, size_t outsz, kgate_err *err)
{
    static const char dirs[] = KGATE_TOOL_DIRS;
    char first[PATH_MAX] = "";
    kgate_err first_why = {0};
    if (outsz) out[0] = '\0';
    if (!name || !*name || strchr(name, '/'))
        return kgate_err_set(err, EINVAL, "%s: a tool is named without a directory",
                             name ? name : "(null)");
    for (const char *d = dirs; *d;) {
        size_t n = strcspn(d, ":");
        char cand[PATH_MAX];
        int w = snprintf(cand, sizeof cand, "%.*s/%s", (int)n, d, name);
        d += n + (d[n] == ':');
        struct stat st;
        if (w < 0 || (size_t)w >= sizeof cand || stat(cand, &st) < 0) continue;
        kgate_err why = {0};
        if (kgate_tool_trusted(cand, out, outsz, &why) == 0) return 0;
        /* The first refusal is what the user is told about: the others
         * are usually the same link seen again (/bin is /usr/bin). */
        if (!first[0]) {
            memcpy(first, cand, (size_t)w + 1);
            first_why = why;
        }
    }
    if (outsz) out[0] = '\0';
    if (first[0])
        return kgate_err_set(err, EPERM,
                             "%s: no trusted copy in %s (%s: %s); kgate runs no tool from a "
                             "place a box or another user could write",
                             name, dirs, first, first_why.msg);
    return kgate_err_set(err, ENOENT, "%s: not found in %s (kgate does not search PATH)", name,
                         dirs);
}

static int under_any(const char *tool, const kgate_strlist *l, const char **which)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (kgate_path_under(tool, l->v[i])) {
            *which = l->v[i];
            return 1;
        }
    return 0;
}

int kgate_tool_outside_policy(const char *tool, const kgate_policy *policy, kgate_err *err)
{
    const char *which = NULL;
    if (kgate_path_under(tool, policy->project))
        which = policy->project;
    else if (policy->tmpdir && kgate_path_under(tool, policy->tmpdir))
        which = policy->tmpdir;
    else
        under_any(tool, &policy->allow_paths, &which);
    if (!which) return 0;
    return kgate_err_set(err, EPERM,
                         "%s lies under %s, which the box may write: kgate runs no tool "
                         "from a place a box can write",
                         tool, which);
}

int kgate_tool_dirs_outside_policy(const kgate_policy *policy, kgate_err *err)
{
    static const char dirs[] = KGATE_TOOL_DIRS;
    for (const char *d = dirs; *d;) {
        size_t n = strcspn(d, ":");
        char dir[PATH_MAX], real[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", (int)n, d);
        d += n + (d[n] == ':');
        /* A directory that does not exist holds no tool, and a box that
         * could make it could only do so under a root refused below. */
        if (!realpath(dir, real)) continue;
        if (kgate_tool_outside_policy(real, policy, err) < 0) return -1;
    }
    return 0;
}
