/* oom.h: the core's one answer to running out of memory, and the only way
 * the core includes uthash's headers.
 *
 * uthash, utarray and utstring call a hook when an allocation fails; their
 * default is exit(-1), status 255, which is no code of kgate's and prints
 * nothing.  This header points all three hooks at kg_oom() before it
 * includes them, so a failed list push ends the same way as a failed
 * strdup the core checks by hand: one "kgate: out of memory" line and exit
 * 125.  Including a uthash header directly would silently bring the
 * default back: tests/unit/oom.sh fails when a core file does.
 *
 * Plugins do not use this: a plugin never exits.  They return an error
 * and let the core decide (see docs/plugins.md). */
#ifndef KG_OOM_H
#define KG_OOM_H

#if defined(UTHASH_H) || defined(UTARRAY_H) || defined(UTSTRING_H)
#error "a uthash header was included before oom.h: its out-of-memory hook would be exit(-1)"
#endif

/* Writes "kgate: out of memory" on stderr (without allocating), puts the
 * terminal back if kgate made it raw, and exits 125.  The only exit of the
 * core outside main(): an allocation failure deep in a list push has no
 * caller that could do better, and unwinding every caller would add a
 * branch to each push that no test could reach. */
_Noreturn void kg_oom(void);
/* fn runs in kg_oom before it exits; it must allocate nothing.  The pty
 * sets it to put the user's terminal back (pty.c), so base need not know
 * about terminals. */
void kg_oom_set_before_exit(void (*fn)(void));

#define uthash_fatal(msg) kg_oom()
#define utarray_oom() kg_oom()
#define utstring_oom() kg_oom()

#include <utarray.h>
#include <uthash.h>
#include <utstring.h>

#endif
