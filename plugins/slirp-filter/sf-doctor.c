/* sf-doctor.c: the slirp-filter stage's doctor verdicts, from the
 * probe's facts. */
#include "sf-internal.h"

#include <stdio.h>

#include "kgate/kgate-tool.h"

/* Where the probe looked for a tool it did not find; a probe handed in
 * without the stage's state (the unit tests) looked in the fixed places. */
static const char *why_missing(const char *why)
{
    return why && why[0] ? why : "not found in " KGATE_TOOL_DIRS " (kgate does not search PATH)";
}

/* The doctor of the stage alone: the core shows the box's findings above
 * these (without the box's net.hosts-unsupported, which this stage answers). */
int sf_doctor(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
              kgate_report *rep)
{
    /* The core never composes a stage for off or open; a caller that
     * asks anyway learns that this is not a box. */
    if (policy->network != KGATE_NET_RESTRICTED)
        return host->report(rep, KGATE_BLOCKED, "slirp-filter.stage-only",
                            "a network stage: it only runs around a box, for network "
                            "restricted with hosts");

    int slirp = kgate_probe_fact(probe, SF_FACT_SLIRP, 0);
    int nft = kgate_probe_fact(probe, SF_FACT_NFT, 0);
    /* QUICK probes do not run nft; only a THOROUGH probe that tried and
     * failed records 0 here. */
    int nft_ok = kgate_probe_fact(probe, SF_FACT_NFT_OK, nft);
    int dnsmasq = kgate_probe_fact(probe, SF_FACT_DNSMASQ, 0);
    int userns = kgate_probe_fact(probe, SF_FACT_USERNS, 1);
    int tun = kgate_probe_fact(probe, SF_FACT_TUN, 1);
    int blocked = 0;
    const sf_tools *t = probe->state;

    if (!slirp) {
        host->report(
            rep, KGATE_BLOCKED, "tool.slirp4netns-missing",
            "network restricted needs slirp4netns, %s; Debian: apt-get install slirp4netns",
            why_missing(t ? t->slirp_why : NULL));
        blocked = 1;
    }
    if (!nft) {
        host->report(rep, KGATE_BLOCKED, "tool.nft-missing",
                     "network restricted needs nft, %s; Debian: apt-get install nftables",
                     why_missing(t ? t->nft_why : NULL));
        blocked = 1;
    } else if (!nft_ok) {
        host->report(rep, KGATE_BLOCKED, "net.nft-failed",
                     "network restricted needs nftables inside an unprivileged network "
                     "namespace, and it failed there");
        blocked = 1;
    }
    if (!dnsmasq) {
        host->report(rep, KGATE_BLOCKED, "tool.dnsmasq-missing",
                     "network restricted needs dnsmasq, %s; Debian: apt-get install dnsmasq-base",
                     why_missing(t ? t->dnsmasq_why : NULL));
        blocked = 1;
    }
    if (!userns) {
        host->report(rep, KGATE_BLOCKED, KGATE_FINDING_USERNS_UNAVAILABLE,
                     "network restricted needs unprivileged user and network namespaces, "
                     "and unshare(CLONE_NEWUSER|CLONE_NEWNET) failed");
        blocked = 1;
    }
    if (!tun) {
        host->report(rep, KGATE_BLOCKED, "net.tun-unavailable",
                     "network restricted needs /dev/net/tun readable and writable by "
                     "this user (udev normally makes it mode 0666)");
        blocked = 1;
    }
    if (blocked) return 0;

    host->report(rep, KGATE_READY, "net.restricted",
                 "network restricted to %zu host entr%s: slirp4netns in the sandbox's "
                 "own namespace, where " SF_FILTER_WORDS,
                 policy->allow_hosts.n, policy->allow_hosts.n == 1 ? "y" : "ies");
    host->report(rep, KGATE_READY, "slirp-filter.box",
                 "the box's plan runs in this network namespace, without one of its own, "
                 "with its seccomp filter (--seccomp FD at launch); the program is one "
                 "user namespace deeper and cannot change the filter");
    host->report(rep, KGATE_READY, "net.ipv6",
                 "IPv6: no route, nftables refuses all but loopback, and the resolver "
                 "answers no AAAA records, so programs use IPv4 at once");
    for (size_t i = 0; i < policy->allow_hosts.n; i++)
        host->report_detail(rep, "allow_host", policy->allow_hosts.v[i]);
    return 0;
}
