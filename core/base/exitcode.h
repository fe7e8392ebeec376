/* exitcode.h: the exit statuses of kgate itself (spec: "Exit codes of
 * kgate run"; docs/exit-codes.md).  In base, not with the commands, because
 * the two paths that end kgate from below the CLI (out of memory, a probe
 * that hangs) must say 125 too, and no file may include upward. */
#ifndef KG_EXITCODE_H
#define KG_EXITCODE_H

enum {
    KG_EXIT_OK = 0,
    KG_EXIT_FAIL = 1, /* doctor BLOCKED, init/network refused */
    KG_EXIT_USAGE = 2, /* every command: unknown option, wrong arguments */
    KG_EXIT_REFUSED = 125, /* refused or failed before the program ran */
    KG_EXIT_BLOCKED = 126, /* on the exec deny list */
    KG_EXIT_NOTFOUND = 127,
};

#endif
