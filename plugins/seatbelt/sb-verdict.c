/* sb-verdict.c: from the probe's facts to what the machine allows (see
 * sb-host.h).  Pure, so it is tested anywhere. */
#include "sb-host.h"

sb_host_state sb_host_decide(int macos, int sandbox_exec, int sandboxed)
{
    if (macos != 1) return SB_HOST_NOT_MACOS;
    if (sandbox_exec != 1) return SB_HOST_NO_TOOL;
    if (sandboxed == 1) return SB_HOST_NESTED;
    return SB_HOST_READY;
}

const char *sb_nested_sentence(void)
{
    /* What the user sees instead of sandbox-exec's own
     * "sandbox_apply: Operation not permitted". */
    return "kgate already runs inside a Seatbelt sandbox (for example an agent's "
           "own, or sandbox-exec), and macOS lets no sandboxed process apply "
           "another profile: run kgate outside that sandbox";
}
