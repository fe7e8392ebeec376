/* kgate-path.h: the one "is this path under that one" test, for the core
 * and every backend, so that a box and the core can never disagree about
 * what a policy path covers.  Header only (static inline): no library.
 *
 * Lexical: both paths are taken as written, already absolute and
 * normalised by their maker (the core resolves every policy path before a
 * plugin sees it).  "/a/b" is under "/a" and under itself, "/ab" is not
 * under "/a"; every absolute path is under "/".  A NULL on either side is
 * under nothing. */
#ifndef KGATE_PATH_H
#define KGATE_PATH_H

#include <string.h>

/* 1 when path is dir or lies below it, 0 otherwise. */
static inline int kgate_path_under(const char *path, const char *dir)
{
    size_t n = 0;
    if (!path || !dir) return 0;
    if (dir[0] == '/' && dir[1] == '\0') return path[0] == '/';
    n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

#endif
