/* sb-host-macos.c: the seatbelt probe on macOS. */
#include "sb-host.h"

#include "kgate/kgate-tool.h"

#include <stdio.h>
#include <unistd.h>

/* libsystem_sandbox has no public header.  With no operation, the answer
 * is whether the process runs under a profile at all: 0 no, >0 yes, <0 the
 * call failed.  The filter type is 0 (none) and takes no further
 * arguments. */
int sandbox_check(pid_t pid, const char *operation, int type, ...);

void sb_host_probe(kgate_probe *probe)
{
    kgate_probe_set_fact(probe, "macos", 1);
    /* A fixed path, and trusted by the rule every tool run outside the
     * box follows (kgate-tool.h): root's, no one else may write it. */
    kgate_err why = {0};
    int present = kgate_tool_trusted(SB_TOOL, NULL, 0, &why) == 0;
    kgate_probe_set_fact(probe, "sandbox_exec", present);
    int r = sandbox_check(getpid(), NULL, 0);
    int sandboxed = r < 0 ? -1 : r > 0;
    kgate_probe_set_fact(probe, "sandboxed", sandboxed);
    switch (sb_host_decide(1, present, sandboxed)) {
    case SB_HOST_READY:
        probe->available = 1;
        /* Seatbelt is the only kernel box macOS offers to a plain process. */
        probe->score = 50;
        snprintf(probe->tool_path, sizeof probe->tool_path, "%s", SB_TOOL);
        snprintf(probe->reason, sizeof probe->reason, "Seatbelt profile through %s", SB_TOOL);
        break;
    case SB_HOST_NESTED:
        snprintf(probe->tool_path, sizeof probe->tool_path, "%s", SB_TOOL);
        snprintf(probe->reason, sizeof probe->reason, "%s", sb_nested_sentence());
        break;
    case SB_HOST_NO_TOOL:
    case SB_HOST_NOT_MACOS:
        snprintf(probe->reason, sizeof probe->reason, "%s not found or not executable", SB_TOOL);
        break;
    }
}
