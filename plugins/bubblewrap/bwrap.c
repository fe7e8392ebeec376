/* bwrap.c: the bubblewrap backend's descriptor.  The work is in
 * bwrap-probe.c, bwrap-doctor.c, bwrap-plan.c and bwrap-launch.c. */
#include "bwrap-internal.h"

static const kgate_backend backend = {
    KGATE_BACKEND_INIT,
    .name = "bubblewrap",
    .description = "Linux: a bubblewrap mount namespace (read-only system, "
                   "hidden home, writable project)",
    .probe = bwrap_probe,
    .doctor = bwrap_doctor,
    .plan = bwrap_plan,
    .launch = bwrap_launch,
    .commits = 1,
    /* network: off only (bwrap-publish.c); a host list is the stage's. */
    .publishes = 1,
};

KGATE_PLUGIN_DEFINE(backend)
