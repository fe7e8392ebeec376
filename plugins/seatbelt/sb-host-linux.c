/* sb-host-linux.c: the seatbelt probe anywhere but macOS.  The backend
 * still plans there (kgate run --dry-run shows the profile), and never
 * launches, since probe says unavailable. */
#include "sb-host.h"

#include <stdio.h>

void sb_host_probe(kgate_probe *probe)
{
    kgate_probe_set_fact(probe, "macos", 0);
    kgate_probe_set_fact(probe, "sandbox_exec", 0);
    kgate_probe_set_fact(probe, "sandboxed", 0);
    snprintf(probe->reason, sizeof probe->reason, "sandbox-exec is macOS-only (this is Linux)");
}
