/* plugtrust.h: which paths kgate may dlopen a plugin from.
 *
 * The rule (docs/plugins.md, "Where a plugin may live"): a plugin file and
 * the directory it is found in, after resolving symbolic links,
 *   - exist (a named directory that is missing could be created later),
 *   - lie outside every place a box kgate starts from here could write
 *     (the working directory as project, each allow_paths entry, and on
 *     macOS the temporary directories Seatbelt leaves writable),
 *   - and every directory from / down to them is owned by root or by the
 *     user running kgate and is writable by nobody else, except that a
 *     directory with the sticky bit (/tmp) may be writable by all.
 *     Inside a user namespace that does not map the real root, the
 *     overflow uid counts as root (kg_plugtrust_owner_ok).
 * All of it is decided from the path and stat() alone, before dlopen. */
#ifndef KG_PLUGTRUST_H
#define KG_PLUGTRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "strv.h"

enum {
    KG_TRUST_OK = 0,
    KG_TRUST_REFUSED = 1, /* why says why */
    KG_TRUST_EXPOSED = 2, /* refused: a box started from here could write it */
    KG_TRUST_MISSING = 3, /* refused: does not exist (and is not exposed) */
};

/* The places a box started from the current directory could write, each
 * resolved: the working directory (unless it covers $HOME: run refuses
 * there), every entry of writable (the policy's allow_paths, may be NULL),
 * and the platform's writable temporary directories.  The caller frees. */
kg_strv *kg_plugtrust_exposed(const kg_strv *writable);

/* Judges path (a plugin directory, or a plugin file) against the rule
 * above.  exposed may be NULL (nothing is exposed).  Returns one of the
 * KG_TRUST_* values; why is filled for every refusal. */
int kg_plugtrust_check(const char *path, const kg_strv *exposed, char *why, size_t len);

/* Whether a file or directory owned by uid may hold or lead to code kgate
 * loads, as far as its owner goes (the caller checks the mode): root, the
 * user running kgate, or, inside a user namespace that does not map the
 * real root, the overflow uid (see plugtrust.c). */
bool kg_plugtrust_owner_ok(uid_t uid);

#endif
