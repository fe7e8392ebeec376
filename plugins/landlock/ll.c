/* ll.c: the Landlock backend's descriptor.  A box without namespaces, for
 * the places where bubblewrap cannot make one (containers, CI, another
 * agent's sandbox): docs/landlock.md.  The work is in ll-probe.c,
 * ll-doctor.c, ll-rules.c, ll-plan.c and ll-launch.c. */
#include "ll-internal.h"

static const kgate_backend backend = {
    KGATE_BACKEND_INIT,
    .name = "landlock",
    .description = "Linux: Landlock rules and seccomp, no namespaces (for "
                   "containers where user namespaces are refused)",
    .probe = ll_probe,
    .doctor = ll_doctor,
    .plan = ll_plan,
    .launch = ll_launch,
    .kind = KGATE_KIND_BOX,
    .commits = 1,
    /* Its own way: the program's loopback listeners are the host's
     * (ll_publish_check). */
    .publishes = 1,
};

KGATE_PLUGIN_DEFINE(backend)
