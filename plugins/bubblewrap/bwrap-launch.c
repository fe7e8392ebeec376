/* bwrap-launch.c: the plan started by the SDK's bwrap start
 * (sdk/linux/kgl-bwrap.c, shared with the slirp-filter stage), which adds
 * bwrap's descriptors, checks the mounts before the program starts, and
 * hands the core the sandbox's process group to signal (docs/bubblewrap.md). */
#include "bwrap-internal.h"

#include <errno.h>

int bwrap_launch(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                 const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc, kgate_err *err)
{
    /* The plan carries all launch needs; bubblewrap keeps no state. */
    (void)probe;
    kgl_bwrap b kgl_autobwrap = KGL_BWRAP_INIT;
    b.pargv = host->plan_argv(plan, &b.argc);
    if (b.argc < 2 || !b.pargv[0] || b.pargv[0][0] != '/')
        return kgate_err_set(err, EINVAL,
                             "the plan does not start with an "
                             "absolute bwrap path");
    if (!policy->project || policy->project[0] != '/')
        return kgate_err_set(err, EINVAL, "no project directory");
    b.path = b.pargv[0];
    b.io = io;
    b.dir = policy->project;
    proc->n_helpers = 0;
    if (kgl_bwrap_start(&b, proc, err) < 0) return -1;
    host->log(host, KGATE_LOG_DEBUG, "bwrap pid %ld, sandbox pid 1 is %ld", (long)proc->pid,
              (long)b.sandbox);
    return 0;
}
