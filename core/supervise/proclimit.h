/* proclimit.h: the bound on the number of processes in the box
 * (max_processes, docs/config.md).
 *
 * What the kernel offers an unprivileged launcher is RLIMIT_NPROC, which
 * counts every process (thread) of the real uid, inside the box or not.
 * kgate counts the user's processes just before the launch and sets the
 * limit to that count plus max_processes, so the box can start at most
 * max_processes more while it runs; the user's other processes keep their
 * own limit and can still fork (a fork bomb inside no longer starves the
 * session).  Root is not bound by RLIMIT_NPROC, and kgate does not make
 * cgroups: as root no bound applies, and doctor says so. */
#ifndef KG_PROCLIMIT_H
#define KG_PROCLIMIT_H

#include <stdbool.h>

typedef struct kg_proclimit {
    bool bound; /* a limit applies to the box */
    long limit; /* the RLIMIT_NPROC kgate sets (or finds lower) */
    long current; /* the user's processes (threads) counted */
    char text[200]; /* what applies, for doctor and the debug log */
} kg_proclimit;

/* Says what max would mean now, without changing anything. */
void kg_proclimit_describe(long max, kg_proclimit *out);
/* Applies it to this process (and so to what it starts from now on): the
 * soft and hard RLIMIT_NPROC only ever go down.  Returns -1 with errno when
 * setrlimit fails. */
int kg_proclimit_apply(long max, kg_proclimit *out);

#endif
