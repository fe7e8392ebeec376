/* paths.c: from what a user wrote in a config file or on the command line
 * to the path the kernel will check.
 *
 * The rule that matters: kgate never rewrites a path into another place.
 * A backend pastes these paths into a bwrap argv or an SBPL profile, and a
 * rule written for one spelling does not match another (macOS /tmp is
 * /private/tmp; a symlink in a project can point anywhere).  So every path
 * is normalised lexically, resolved with realpath(), and refused when the
 * two differ: the message names both, and the user writes the real one. */
#include "paths.h"

#include <kgate/kgate-path.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "oom.h" /* uthash, utarray, utstring */

/* Appends component comp (len bytes) to the normalised absolute path in
 * out, handling "." and "..".  ".." at the root stays at the root, as the
 * kernel does. */
static void push_component(UT_string *out, const char *comp, size_t len)
{
    if (len == 0 || (len == 1 && comp[0] == '.')) return;
    if (len == 2 && comp[0] == '.' && comp[1] == '.') {
        char *s = utstring_body(out);
        char *slash = strrchr(s, '/');
        if (slash && slash != s) {
            size_t keep = (size_t)(slash - s);
            s[keep] = '\0';
            out->i = keep;
        } else {
            /* Parent of "/x" or of "/": the root, kept as the empty string
             * until the end so that the next component adds its slash. */
            utstring_clear(out);
        }
        return;
    }
    utstring_bincpy(out, "/", 1);
    utstring_bincpy(out, comp, len);
}

static void push_components(UT_string *out, const char *p)
{
    while (*p) {
        while (*p == '/') p++;
        const char *end = p + strcspn(p, "/");
        push_component(out, p, (size_t)(end - p));
        p = end;
    }
}

/* The absolute spelling of path before any folding: "~" expanded, joined
 * to base when relative.  NULL with err. */
static char *absolute_path(const char *path, const char *base, const char *home, kg_error *err)
{
    char *s = NULL;
    int n;
    if (!path || !*path) {
        kg_err_set(err, EINVAL, "empty path");
        return NULL;
    }
    if (path[0] == '~' && (path[1] == '\0' || path[1] == '/')) {
        if (!home || home[0] != '/') {
            kg_err_set(err, EINVAL, "%s: cannot expand '~': HOME is not an absolute path", path);
            return NULL;
        }
        n = asprintf(&s, "%s/%s", home, path + 1);
    } else if (path[0] == '~') {
        kg_err_set(err, EINVAL, "%s: '~user' is not supported; write the path out", path);
        return NULL;
    } else if (path[0] == '/') {
        n = asprintf(&s, "%s", path);
    } else {
        if (!base || base[0] != '/') {
            kg_err_set(err, EINVAL, "%s: relative path without a base directory", path);
            return NULL;
        }
        n = asprintf(&s, "%s/%s", base, path);
    }
    if (n < 0) {
        kg_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    return s;
}

static char *take_body(UT_string *out, kg_error *err)
{
    if (utstring_len(out) == 0) utstring_bincpy(out, "/", 1);
    char *s = strdup(utstring_body(out));
    utstring_free(out);
    if (!s) kg_err_set(err, ENOMEM, "out of memory");
    return s;
}

char *kg_path_lexical(const char *path, const char *base, const char *home, kg_error *err)
{
    char *abs = absolute_path(path, base, home, err);
    if (!abs) return NULL;
    UT_string *out;
    utstring_new(out);
    push_components(out, abs);
    free(abs);
    return take_body(out, err);
}

/* The refusal: what was written, and where the kernel would really go
 * (the link's target followed by the rest of what was written). */
static void refuse_link(const char *written, const char *link, const char *rest, kg_error *err)
{
    char *target = realpath(link, NULL);
    if (!target) {
        kg_err_set(err, ELOOP, "%s: %s is a dangling symlink; kgate does not follow it", written,
                   link);
        return;
    }
    UT_string *where;
    utstring_new(where);
    if (strcmp(target, "/") != 0) utstring_printf(where, "%s", target);
    push_components(where, rest);
    if (utstring_len(where) == 0) utstring_bincpy(where, "/", 1);
    kg_err_set(err, ELOOP,
               "%s: resolves to %s through a symlink; kgate does not rewrite paths, "
               "write %s instead",
               written, utstring_body(where), utstring_body(where));
    utstring_free(where);
    free(target);
}

/* Walks the written path one component at a time, as the kernel would,
 * with lstat(): any symlink on the way is refused (so "link/.." cannot
 * mean one thing lexically and another to the kernel).  Once a component
 * is missing, the rest is folded lexically: nothing below it exists to be
 * a symlink. */
char *kg_path_resolve(const char *path, const char *base, const char *home, bool may_be_missing,
                      kg_error *err)
{
    char *abs = absolute_path(path, base, home, err);
    if (!abs) return NULL;
    UT_string *cur;
    utstring_new(cur);
    bool missing = false;
    const char *p = abs;
    while (*p) {
        while (*p == '/') p++;
        if (!*p) break;
        const char *end = p + strcspn(p, "/");
        size_t len = (size_t)(end - p);
        bool dotdot = len == 2 && p[0] == '.' && p[1] == '.';
        if (missing && dotdot) {
            /* The kernel fails here (ENOENT); folding it lexically could
             * land on an existing path that was never checked. */
            kg_err_set(err, ENOENT, "%s: '..' below %s, which does not exist", path,
                       utstring_body(cur));
            goto fail;
        }
        if (missing || dotdot || (len == 1 && p[0] == '.')) {
            /* The current path has no symlink in it, so its lexical parent
             * is its real parent. */
            push_component(cur, p, len);
            p = end;
            continue;
        }
        push_component(cur, p, len);
        if (utstring_len(cur) >= PATH_MAX) {
            kg_err_set(err, ENAMETOOLONG, "%s: path too long", path);
            goto fail;
        }
        struct stat st;
        if (lstat(utstring_body(cur), &st) < 0) {
            if (errno != ENOENT) {
                int e = errno;
                kg_err_set(err, e, "%s: %s: %s", path, utstring_body(cur), strerror(e));
                goto fail;
            }
            missing = true;
        } else if (S_ISLNK(st.st_mode)) {
            refuse_link(path, utstring_body(cur), end, err);
            goto fail;
        } else if (!S_ISDIR(st.st_mode) && strspn(end, "/") != strlen(end)) {
            kg_err_set(err, ENOTDIR, "%s: %s is not a directory", path, utstring_body(cur));
            goto fail;
        }
        p = end;
    }
    if (utstring_len(cur) >= PATH_MAX) {
        kg_err_set(err, ENAMETOOLONG, "%s: path too long", path);
        goto fail;
    }
    if (missing && !may_be_missing) {
        kg_err_set(err, ENOENT, "%s: does not exist", path);
        goto fail;
    }
    free(abs);
    return take_body(cur, err);

fail:
    free(abs);
    utstring_free(cur);
    return NULL;
}

bool kg_path_is_within(const char *path, const char *dir) { return kgate_path_under(path, dir); }

bool kg_path_inside_by_id(const char *path, const char *dir)
{
    struct stat d, c;
    if (!path || path[0] != '/' || !dir || stat(dir, &d) < 0) return false;
    char *cur = strdup(path);
    if (!cur) return false;
    bool inside = false;
    for (;;) {
        if (stat(cur, &c) == 0 && c.st_dev == d.st_dev && c.st_ino == d.st_ino) {
            inside = true;
            break;
        }
        char *slash = strrchr(cur, '/');
        if (!slash || slash == cur) {
            if (strcmp(cur, "/") == 0) break;
            strcpy(cur, "/"); /* the last step: the root itself */
            continue;
        }
        *slash = '\0';
    }
    free(cur);
    return inside;
}

bool kg_path_covers_home(const char *dir, const char *home)
{
    /* By name, and by identity: a bind mount of the home (or of one of its
     * ancestors) elsewhere is the home under another name. */
    return kg_path_is_within(home, dir) || kg_path_inside_by_id(home, dir);
}
