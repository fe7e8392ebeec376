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

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <utstring.h>

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
        const char *end = strchrnul(p, '/');
        push_component(out, p, (size_t)(end - p));
        p = end;
    }
}

/* The absolute, lexically normalised spelling of path (no symlink looked
 * at), or NULL with err. */
static char *lexical_path(const char *path, const char *base, const char *home,
                          kg_error *err)
{
    UT_string *out;
    utstring_new(out);
    if (path[0] == '~' && (path[1] == '\0' || path[1] == '/')) {
        if (!home || home[0] != '/') {
            utstring_free(out);
            kg_err_set(err, EINVAL, "%s: cannot expand '~': HOME is not an absolute path",
                       path);
            return NULL;
        }
        push_components(out, home);
        push_components(out, path + 1);
    } else if (path[0] == '~') {
        utstring_free(out);
        kg_err_set(err, EINVAL,
                   "%s: '~user' is not supported; write the path out", path);
        return NULL;
    } else if (path[0] == '/') {
        push_components(out, path);
    } else {
        if (!base || base[0] != '/') {
            utstring_free(out);
            kg_err_set(err, EINVAL, "%s: relative path without a base directory", path);
            return NULL;
        }
        push_components(out, base);
        push_components(out, path);
    }
    if (utstring_len(out) == 0) utstring_bincpy(out, "/", 1);
    char *s = strdup(utstring_body(out));
    utstring_free(out);
    if (!s) kg_err_set(err, ENOMEM, "out of memory");
    return s;
}

char *kg_path_lexical(const char *path, const char *base, const char *home,
                      kg_error *err)
{
    if (!path || !*path) {
        kg_err_set(err, EINVAL, "empty path");
        return NULL;
    }
    return lexical_path(path, base, home, err);
}

static int refuse_symlink(const char *written, const char *lexical,
                          const char *resolved, kg_error *err)
{
    (void)lexical;
    return kg_err_set(err, ELOOP,
                      "%s: resolves to %s through a symlink; kgate does not "
                      "rewrite paths, write %s instead",
                      written, resolved, resolved);
}

char *kg_path_resolve(const char *path, const char *base, const char *home,
                      bool may_be_missing, kg_error *err)
{
    if (!path || !*path) {
        kg_err_set(err, EINVAL, "empty path");
        return NULL;
    }
    char *lex = lexical_path(path, base, home, err);
    if (!lex) return NULL;
    if (strlen(lex) >= PATH_MAX) {
        kg_err_set(err, ENAMETOOLONG, "%s: path too long", path);
        free(lex);
        return NULL;
    }

    char *real = realpath(lex, NULL);
    if (real) {
        if (strcmp(real, lex) != 0) {
            refuse_symlink(path, lex, real, err);
            free(real);
            free(lex);
            return NULL;
        }
        free(real);
        return lex;
    }
    int e = errno;
    if (e != ENOENT) {
        kg_err_set(err, e, "%s: %s", path, strerror(e));
        free(lex);
        return NULL;
    }

    /* Something on the way does not exist.  Find the longest prefix that
     * lstat() sees; it must resolve to itself, be a directory, and not be
     * the whole path (that would be a dangling symlink, which points
     * somewhere else by definition). */
    char *pfx = strdup(lex);
    if (!pfx) {
        kg_err_set(err, ENOMEM, "out of memory");
        free(lex);
        return NULL;
    }
    struct stat st;
    while (lstat(pfx, &st) != 0) {
        if (errno != ENOENT) {
            e = errno;
            kg_err_set(err, e, "%s: %s", path, strerror(e));
            goto fail;
        }
        char *slash = strrchr(pfx, '/');
        if (slash == pfx) slash[1] = '\0';
        else *slash = '\0';
    }
    if (strcmp(pfx, lex) == 0) {
        kg_err_set(err, ELOOP, "%s: is a dangling symlink; kgate does not follow it",
                   path);
        goto fail;
    }
    char *rp = realpath(pfx, NULL);
    if (!rp) {
        e = errno;
        if (e == ENOENT)
            kg_err_set(err, ELOOP, "%s: %s is a dangling symlink; kgate does not follow it",
                       path, pfx);
        else
            kg_err_set(err, e, "%s: %s: %s", path, pfx, strerror(e));
        goto fail;
    }
    if (strcmp(rp, pfx) != 0) {
        const char *rest = lex + strlen(pfx) - (strcmp(pfx, "/") == 0);
        char *shown = NULL;
        if (asprintf(&shown, "%s%s", strcmp(rp, "/") == 0 ? "" : rp, rest) < 0)
            shown = NULL;
        refuse_symlink(path, lex, shown ? shown : rp, err);
        free(shown);
        free(rp);
        goto fail;
    }
    free(rp);
    if (!S_ISDIR(st.st_mode)) {
        kg_err_set(err, ENOTDIR, "%s: %s is not a directory", path, pfx);
        goto fail;
    }
    free(pfx);
    if (!may_be_missing) {
        kg_err_set(err, ENOENT, "%s: does not exist", path);
        free(lex);
        return NULL;
    }
    return lex;

fail:
    free(pfx);
    free(lex);
    return NULL;
}

bool kg_path_is_within(const char *path, const char *dir)
{
    if (!path || !dir) return false;
    if (strcmp(dir, "/") == 0) return path[0] == '/';
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool kg_path_covers_home(const char *dir, const char *home)
{
    return kg_path_is_within(home, dir);
}
