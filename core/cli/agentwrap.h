/* agentwrap.h: the one form in which an agent's shell command is run
 * through kgate, and the one shell quoting it takes.
 *
 * An agent hands its shell a string.  The hooks (cmd_hook.c) replace it by
 *
 *     '<kgate>' run --no-pty -- /bin/sh -c -- '<the string>'
 *
 * so the agent's shell sees one word where the string was: the string is
 * parsed by a shell only inside the box.  kg_sh_quote is the only quoting
 * (single quotes, each ' written '\''), and kg_agent_unwrap decides whether
 * a string already is that form by parsing it exactly, then writing it
 * again and comparing: a look-alike is wrapped again (or, for Codex,
 * refused), never trusted. */
#ifndef KG_AGENTWRAP_H
#define KG_AGENTWRAP_H

#include <stdbool.h>
#include <stddef.h>
#include "oom.h" /* utstring */

#include "error.h"

/* Appends s in single quotes, each ' as '\'' (POSIX sh: nothing inside
 * single quotes is special).  Always quoted, even when it need not be, so
 * there is exactly one quoted form of each string. */
void kg_sh_quote(UT_string *out, const char *s);

/* Appends the wrapped form of cmd for the kgate binary at kgate. */
void kg_agent_wrap(UT_string *out, const char *kgate, const char *cmd);
/* The prefix of the wrapped form, up to the quoted command. */
void kg_agent_prefix(UT_string *out, const char *kgate);

/* When cmd is exactly kg_agent_wrap(kgate, X) for some X, returns a copy of
 * X (free it); else NULL. */
char *kg_agent_unwrap(const char *kgate, const char *cmd);

/* The absolute path of the running kgate (/proc/self/exe), into buf.  -1
 * and err when it cannot be told (a deleted binary, no /proc). */
int kg_agent_self(char *buf, size_t size, kg_error *err);

#endif
