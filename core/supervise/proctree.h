/* proctree.h: ending every process a run left behind, and knowing that
 * none is left (docs/output-and-audit.md, "Nothing outlives the run").
 *
 * kgate is the run's child subreaper (os.h): a process of the run whose
 * parent dies is reparented to kgate, never to an init outside its tree,
 * so "the run's processes" are exactly kgate's descendants, less the
 * children kgate had before the launch and the backend's helpers (and
 * what is below them).  Without a PID namespace (the Landlock box) nothing
 * else ends them: a daemon that called setsid, ignores SIGTERM, or forks
 * in a loop so that its pid keeps changing.
 *
 * kg_proctree_end lets the tree end by itself for a grace period, then
 * kills it in rounds: each round lists every process, SIGKILLs every
 * descendant found (a child of kgate the moment its entry is read, so a
 * fork loop, whose newest process is reparented to kgate at once, has no
 * time to fork again; the rest once the round knows the whole tree),
 * reaps kgate's own children, and starts again, until a round finds no
 * descendant at all, zombies included.  A fork loop converges: a process
 * with SIGKILL pending cannot fork (the kernel aborts the fork), so each
 * round's survivors are only what was forked between the list and the
 * kill.  It is bounded: after bound_ms it gives up and says who is left,
 * and the caller fails closed.
 *
 * The logic is here, without system calls (tests/unit/supervise/test_proctree.c
 * drives it with a made-up process table); os-proc-linux.c lists /proc. */
#ifndef KG_PROCTREE_H
#define KG_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "os.h" /* kg_procent: one process as the system lists it */

typedef struct kg_proctree_ops {
    void *ctx;
    /* Every process the system shows, one call of each per process, in
     * the order it is read.  -1 with errno when the list cannot be had. */
    int (*scan)(void *ctx, void (*each)(void *arg, const kg_procent *e), void *arg);
    /* SIGKILL pid, which the scan saw as a child of ppid; the caller
     * checks it still is before it signals (the pid of a process that is
     * not kgate's own child may be reaped and reused meanwhile). */
    void (*kill)(void *ctx, pid_t pid, pid_t ppid);
    /* Reaps pid, a child of kgate, if it has ended.  true once it is
     * gone (reaped now, or not a child any more). */
    bool (*reap)(void *ctx, pid_t pid);
    /* Sleeps up to ms, less when a child changes state. */
    void (*pause)(void *ctx, int ms);
    int64_t (*now_ms)(void *ctx);
} kg_proctree_ops;

#define KG_PROCTREE_SHOW 8

typedef struct kg_proctree_result {
    size_t rounds; /* scans made */
    size_t killed; /* SIGKILLs sent */
    size_t left; /* descendants the last scan found (0: none) */
    pid_t shown[KG_PROCTREE_SHOW]; /* the first of them */
    int scan_errno; /* the last scan failed with this, or 0 */
} kg_proctree_result;

/* The descendants of root in the table v (n entries, any order), except
 * those in the subtrees of the children of root listed in spare.  Writes
 * their indexes in v to out (room for n) and returns how many.  A table
 * whose ppids loop (a scan racing with pid reuse) counts the loop as not
 * below root.  -1 when out of memory. */
long kg_proctree_below(const kg_procent *v, size_t n, pid_t root, const pid_t *spare, size_t nspare,
                       size_t *out);

/* Ends every descendant of self (but the spare children's subtrees):
 * waits up to grace_ms for them to end by themselves, then kills in
 * rounds.  0 once a scan finds none; -1 when bound_ms after the grace
 * some are left, or the process list could not be read or does not list
 * self (scan_errno ESRCH: not this system's list), res says which. */
int kg_proctree_end(const kg_proctree_ops *ops, pid_t self, const pid_t *spare, size_t nspare,
                    int grace_ms, int bound_ms, kg_proctree_result *res);

#endif
