/* oom.c: kg_oom(), see oom.h. */
#include "oom.h"

#include <unistd.h>

#include "exitcode.h"

/* Set by a layer above (the pty's saved terminal modes), which base
 * cannot name. */
static void (*before_exit)(void);

void kg_oom_set_before_exit(void (*fn)(void)) { before_exit = fn; }

void kg_oom(void)
{
    static const char line[] = "kgate: out of memory\n";
    if (before_exit) before_exit();
    /* write(2), not stdio: stdio may want the memory that just ran out.
     * Nothing to do if stderr is gone too. */
    ssize_t n = write(STDERR_FILENO, line, sizeof line - 1);
    (void)n;
    /* _exit, not exit: no atexit handler or stdio flush runs that could
     * allocate again; half a plan on stdout is worse than none.  The
     * sandbox dies with kgate (bwrap --die-with-parent). */
    _exit(KG_EXIT_REFUSED);
}
