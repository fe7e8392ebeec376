/* sb-host.h: what the machine lets the seatbelt backend do.
 *
 * sb_host_probe() fills the probe from this system, one file per system
 * (sb-host-macos.c, sb-host-linux.c, chosen in meson).  sb_host_decide()
 * turns the probe's facts into one state; it is pure (sb-verdict.c), so
 * doctor's answers are tested on Linux from made-up facts.
 *
 * Facts: "macos" (1 on macOS), "sandbox_exec" (1: /usr/bin/sandbox-exec is
 * executable), "sandboxed" (1: kgate itself already runs under a Seatbelt
 * profile, 0: it does not, -1: sandbox_check failed, so not known). */
#ifndef SB_HOST_H
#define SB_HOST_H

#include "kgate/kgate-plugin.h"

#define SB_TOOL "/usr/bin/sandbox-exec"

void sb_host_probe(kgate_probe *probe);

typedef enum sb_host_state {
    SB_HOST_READY, /* sandbox-exec can apply a profile here */
    SB_HOST_NOT_MACOS, /* Seatbelt exists only on macOS */
    SB_HOST_NO_TOOL, /* macOS without an executable sandbox-exec */
    SB_HOST_NESTED, /* kgate already runs under a Seatbelt profile */
} sb_host_state;

/* Pure: the state for these facts (each 1, 0, or -1 for not known).
 * Only a known "sandboxed" of 1 is NESTED: when sandbox_check cannot tell,
 * sandbox-exec still refuses to start a nested box by itself, so nothing
 * runs unboxed either way. */
sb_host_state sb_host_decide(int macos, int sandbox_exec, int sandboxed);

/* The one sentence doctor, probe and run use for SB_HOST_NESTED. */
const char *sb_nested_sentence(void);

#endif
