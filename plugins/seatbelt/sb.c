/* sb.c: the macOS backend.  probe, doctor, plan and launch around the
 * profile builder in sb-profile.c: the vtable here, the parts in
 * sb-probe.c, sb-doctor.c, sb-plan.c and sb-launch.c.
 *
 * It builds and probes everywhere; only on macOS with sandbox-exec present
 * does probe say available, so on Linux the core never calls launch and
 * `kgate run --dry-run --backend seatbelt` still shows the profile.
 */
#include "sb-internal.h"

static const kgate_backend sb_backend = {
    KGATE_BACKEND_INIT,
    .name = "seatbelt",
    .description = "macOS Seatbelt profile for sandbox-exec",
    .probe = sb_probe,
    .doctor = sb_doctor,
    .plan = sb_plan,
    .launch = sb_launch,
    /* Only to refuse it with its own reason (sb-profile.c). */
    .publishes = 1,
};

KGATE_PLUGIN_DEFINE(sb_backend)
