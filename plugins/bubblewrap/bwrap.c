/* bwrap.c: the bubblewrap backend's descriptor.  The work is in
 * bwrap-probe.c, bwrap-doctor.c, bwrap-plan.c and bwrap-launch.c. */
#include "bwrap-internal.h"

static const kgate_backend backend = {
    KGATE_BACKEND_INIT,
    .name = "bubblewrap",
    .description = "Linux: a bubblewrap mount namespace (read-only system, "
                   "hidden home, writable project)",
    .probe = kgbw_probe,
    .doctor = kgbw_doctor,
    .plan = kgbw_plan,
    .launch = kgbw_launch,
};

KGATE_PLUGIN_DEFINE(backend)
