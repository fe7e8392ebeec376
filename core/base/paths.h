/* paths.h: turning what a user wrote into the path the kernel checks. */
#ifndef KG_PATHS_H
#define KG_PATHS_H

#include <stdbool.h>

#include "error.h"

/* Expands a leading "~" or "~/" to home, makes a relative path absolute
 * against base, and resolves it with realpath().  When the final component
 * does not exist and may_be_missing is true, its parent is resolved and the
 * name appended.  Refuses (returns NULL with err) a path whose resolved
 * location differs from its lexically normalised spelling because of a
 * symlink: kgate never silently rewrites a path into another place.
 * Returns a malloc()ed absolute path without a trailing slash. */
char *kg_path_resolve(const char *path, const char *base, const char *home, bool may_be_missing,
                      kg_error *err);

/* The first half of kg_path_resolve: "~" expanded, made absolute against
 * base, "." and ".." and repeated slashes folded, without looking at the
 * file system.  For matching entries that only remove something
 * (unprotect_paths) against paths that were resolved already. */
char *kg_path_lexical(const char *path, const char *base, const char *home, kg_error *err);

/* True when dir is home itself or one of its ancestors ("/", "/home").
 * Both must be resolved already.  Such a working directory would put the
 * whole home directory in scope. */
bool kg_path_covers_home(const char *dir, const char *home);

/* True when path, or one of its ancestors by name, is the directory dir
 * by identity (device and inode): path lies in dir even when it reaches it
 * through a bind mount or another spelling.  path must be absolute; false
 * when dir does not exist. */
bool kg_path_inside_by_id(const char *path, const char *dir);

/* True when path is dir or lies below it (both resolved). */
bool kg_path_is_within(const char *path, const char *dir);

#endif
