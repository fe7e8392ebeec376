/* supervise.h: starting the plan and staying with it until it ends:
 * output through the mask, signals forwarded, helpers reaped, the exit
 * status of the program returned unchanged (a signal death as 128+N). */
#ifndef KG_SUPERVISE_H
#define KG_SUPERVISE_H

#include <stdbool.h>

#include "error.h"
#include "host.h"
#include "kgate/kgate-plugin.h"
#include "strv.h"

typedef struct kg_supervise_opts {
    const kg_strv *mask_prefixes; /* user prefixes beside the built-ins */
    bool use_pty; /* give the program a pseudo-terminal of its own (stdin,
                     stdout, stderr and controlling terminal); fd 0 must be
                     the user's terminal.  No fallback to pipes: the plan
                     (policy->pty) was made for a pty. */
    long max_processes; /* the box's process bound (proclimit.h); 0: none */
    /* Where the backend's event records go (netevents.h), or NULL.  Only
     * a backend of ABI 2.1 or later gets kgate_launch.events_fd; its
     * records are read while the program runs and, after it ended and the
     * helpers were stopped, until EOF or EVENTS_DRAIN_MS.  finished
     * (kg_netlog_finish) before kg_supervise returns. */
    struct kg_netlog *net;
    /* The audit launch line, for a backend that sets commits (ABI 2.1):
     * handed on as kgate_launch.commit.  NULL: the caller wrote it before
     * the launch.  A launch that returns 0 without having called it is
     * killed and fails (the backend broke its promise). */
    int (*commit)(void *ctx, kgate_err *err);
    void *commit_ctx;
    /* Where the number of secrets the mask replaced goes (stdout and
     * stderr together), or NULL. */
    size_t *masked;
    /* Set to true (when not NULL) if kg_supervise could not show that
     * every process of the run has ended (proctree.h): it then returns -1
     * with err saying which are left, and the caller must not run its
     * end-of-run checks as if the run were over. */
    bool *outlived;
} kg_supervise_opts;

/* Calls be->launch with probe (the one the plan was made from) and
 * supervises: SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to the
 * program; kgate's handlers (never SIG_IGN, so exec resets them) are
 * removed again before returning.  After the program, every process of
 * the run still there (kgate is their subreaper) is killed, in rounds,
 * until none is left; then helpers get SIGTERM, then SIGKILL, and are
 * reaped.  Returns 0 with *exit_status set once the
 * program ended, or -1 with err when the backend could not start it (nothing
 * of it is left running then). */
int kg_supervise(const kgate_backend *be, const kg_host *host, const kgate_policy *policy,
                 const kgate_probe *probe, const kgate_plan *plan, const char *const *envp,
                 const kg_supervise_opts *opts, int *exit_status, kg_error *err);

#endif
