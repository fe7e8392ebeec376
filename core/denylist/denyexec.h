/* denyexec.h: the exec deny list, decided before anything starts.
 * What it can and cannot see is in docs/deny-exec.md. */
#ifndef KG_DENYEXEC_H
#define KG_DENYEXEC_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "strv.h"

typedef struct kg_denyexec kg_denyexec;

/* deny is the deny_exec list as configured (names like "curl" or paths).
 * path_env is $PATH; cache_dir (may be NULL) holds the fingerprint cache
 * (~/.kgate/cache). */
kg_denyexec *kg_denyexec_new(const kg_strv *deny, const char *path_env, const char *cache_dir,
                             kg_error *err);
void kg_denyexec_free(kg_denyexec *d); /* accepts NULL */

/* Looks cmd up the way execvp would (a name with a slash is a path relative
 * to cwd).  Returns a malloc()ed resolved path, or NULL when not found. */
char *kg_exec_resolve(const char *cmd, const char *path_env, const char *cwd);

/* 0: allowed.  1: blocked, with reason (one line: which word of the command
 * line matched which entry, and how).  -1: error. */
int kg_denyexec_check(kg_denyexec *d, const char *const *argv, size_t argc, const char *cwd,
                      char *reason, size_t reason_len, kg_error *err);
/* After a check that returned 1: the deny_exec entry that matched, as
 * configured (NULL when the block was not one entry's, e.g. a script too
 * deep to read).  Valid until the next check or kg_denyexec_free. */
const char *kg_denyexec_matched(const kg_denyexec *d);

/* Drops the fingerprints held in memory (the file stays): the next check
 * reads the cache file again.  For benchmarks and tests. */
void kg_denyexec_forget_cache(kg_denyexec *d);

#endif
