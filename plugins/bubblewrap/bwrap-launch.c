/* bwrap-launch.c: the plan started by the SDK's bwrap start
 * (sdk/linux/kgl-bwrap.c), which the slirp-filter stage shares. */
#include "bwrap-internal.h"

int bwrap_launch(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                 const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc, kgate_err *err)
{
    /* The plan carries all launch needs; bubblewrap keeps no state. */
    (void)probe;
    return kgl_bwrap_launch(host, policy, plan, io, proc, err);
}
