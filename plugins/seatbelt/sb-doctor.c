/* sb-doctor.c: the seatbelt backend's doctor, from the policy and the
 * probe alone. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kgate/kgate-plugin.h"
#include "sb-host.h"
#include "sb-profile.h"
#include "sb-watch.h"
#include "sb-internal.h"

/* Pure: only policy and probe. */
int sb_doctor(const kgate_host *host, const kgate_policy *pol, const kgate_probe *probe,
              kgate_report *rep)
{
    const char *base = sb_profile_name(pol->macos_profile);
    host->report_detail(rep, "profile", base);

    sb_host_state hs = sb_host_decide(kgate_probe_fact(probe, "macos", 0),
                                      kgate_probe_fact(probe, "sandbox_exec", 0),
                                      kgate_probe_fact(probe, "sandboxed", -1));
    if (hs == SB_HOST_NOT_MACOS)
        host->report(rep, KGATE_BLOCKED, "host.not-macos", "%s",
                     probe->reason[0] ? probe->reason : "sandbox-exec is macOS-only");
    else if (hs == SB_HOST_NESTED)
        host->report(rep, KGATE_BLOCKED, "host.nested-sandbox", "%s", sb_nested_sentence());
    else if (hs == SB_HOST_NO_TOOL || !probe->available)
        host->report(rep, KGATE_BLOCKED, KGATE_FINDING_TOOL_MISSING, "sandbox-exec missing: %s",
                     probe->reason[0] ? probe->reason : SB_TOOL " not found");
    else
        host->report(rep, KGATE_READY, KGATE_FINDING_FS_HOME_HIDDEN,
                     "filesystem: Seatbelt profile (%s base): $HOME hidden, "
                     "project read-write, writes elsewhere denied",
                     base);
    if (hs == SB_HOST_READY && kgate_probe_fact(probe, "sandboxed", -1) < 0)
        host->report(rep, KGATE_READY, "host.nested-unknown",
                     "nested sandbox: not known (sandbox_check failed); "
                     "sandbox-exec refuses by itself inside another profile");

    /* restricted with no hosts arrives as off; checked again here so a
     * made-up policy in a test cannot read better than plan would.  net_id
     * is kept: plan's own refusal of the same thing, below, has that id and
     * is not reported twice. */
    const char *net_id = KGATE_FINDING_NET_OFF;
    if (pol->network == KGATE_NET_RESTRICTED && pol->allow_hosts.n > 0) {
        net_id = KGATE_FINDING_NET_HOSTS_UNSUPPORTED;
        host->report(rep, KGATE_BLOCKED, net_id, "%s", sb_restricted_hosts_sentence());
    } else if (pol->network == KGATE_NET_OPEN) {
        net_id = KGATE_FINDING_NET_OPEN;
        host->report(rep, KGATE_DEGRADED, net_id,
                     "network open: no network rules, the filesystem box "
                     "still holds");
    } else {
        host->report(rep, KGATE_READY, net_id, "network off: outbound denied except localhost");
    }

    host->report(rep, KGATE_READY, "seatbelt.doors-closed",
                 "closed doors: Apple Events, LaunchServices, pasteboard, "
                 "keychain");
    for (size_t i = 0; i < pol->macos_allow_mach.n; i++) {
        const char *name = pol->macos_allow_mach.v[i];
        const char *door = sb_door_for_mach(name);
        if (!sb_mach_name_ok(name)) continue; /* the builder refuses it below */
        if (door)
            host->report(rep, KGATE_DEGRADED, "seatbelt.door-open",
                         "macos_allow_mach re-allows %s: the %s door is open", name, door);
        else
            host->report(rep, KGATE_READY, "seatbelt.mach-allowed", "macos_allow_mach re-allows %s",
                         name);
    }
    /* Whatever plan would refuse, doctor calls BLOCKED with the same
     * words and id: the builder is pure, so run it. */
    sb_profile prof;
    kgate_err e = {0};
    if (sb_build(pol, SB_FORM_PARAMS, &prof, &e) < 0) {
        const char *id = sb_refusal_id(&e);
        if (strcmp(id, net_id) != 0) host->report(rep, KGATE_BLOCKED, id, "%s", e.msg);
    } else {
        sb_profile_clear(&prof);
    }
    host->report(rep, KGATE_READY, KGATE_FINDING_SOCKETS_UNIX,
                 "host Unix sockets: none reachable (network-outbound to "
                 "unix-socket denied)%s, %zu allow_sockets entr%s",
                 pol->network == KGATE_NET_OPEN ? " except mDNSResponder's" : "",
                 pol->allow_sockets.n, pol->allow_sockets.n == 1 ? "y" : "ies");
    return 0;
}
