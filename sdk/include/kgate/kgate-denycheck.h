/* kgate-denycheck.h: what every box must be able to show before it covers
 * a deny_read entry, from the SDK's portable library (libkgate-common.a).
 *
 * Every box hides a deny_read entry by its name (a mount over it, a
 * Landlock rule held back, a Seatbelt path rule); none can hide another
 * name of the same file.  So a box refuses to start when the entry is a
 * symbolic link, when it is a file with a second hard link (one an earlier
 * run made, say `touch .env; ln .env .cache-x`, shows whatever the user
 * writes into .env later), and, for a directory, when a file inside has a
 * second link or a symbolic link inside leads out of it.  docs/escapes.md,
 * "deny_read across runs". */
#ifndef KGATE_DENYCHECK_H
#define KGATE_DENYCHECK_H

#include "kgate/kgate-plugin.h"

/* Limits of the walk through a deny_read directory: past them the box
 * cannot show the directory is safe, and says so. */
enum { KGATE_DENY_WALK_MAX_ENTRIES = 20000, KGATE_DENY_WALK_MAX_DEPTH = 32 };

/* 0 when path (absolute) is missing or safe to cover; -1 with err (a
 * sentence that names the path and ends "nothing was started") when not,
 * or when it cannot be read to tell. */
int kgate_deny_read_check(const char *path, kgate_err *err);

#endif
