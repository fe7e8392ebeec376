/* sf-plan.c: the slirp-filter stage's plan: the box's plan is already
 * in it; this adds what --dry-run shows of the stage (the slirp4netns
 * argv, the nftables ruleset, the dnsmasq configuration, resolv.conf,
 * the published ports). */
#include "sf-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* plan already holds the box's argv; this stage adds its files and notes. */
int sf_plan(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
            kgate_plan *plan, kgate_err *err)
{
    if (policy->network != KGATE_NET_RESTRICTED)
        return kgate_err_set(err, EINVAL,
                             "a network stage: only for network restricted "
                             "with hosts");
    sf_filter f;
    /* What the launch builds too: the entries, /etc/hosts' addresses for
     * them, and the host's own addresses (as they are now). */
    if (sf_filter_for_policy(&policy->allow_hosts, &f, err) < 0) return -1;
    const char *slirp = probe && probe->tool_path[0] ? probe->tool_path : "slirp4netns";
    sf_slirp_argv sa;
    const kgate_publish *pub = NULL;
    size_t n_pub = 0;
    if (sf_publish_check(policy, &pub, &n_pub, err) < 0) {
        sf_filter_free(&f);
        return -1;
    }
    sf_slirp_argv_build(&sa, slirp, -1, 0, f.n_loop > 0,
                        n_pub > 0 ? "/tmp/kgate-slirp-XXXXXX/api.sock" : NULL);
    char line[1024];
    size_t off = 0;
    line[0] = '\0';
    for (size_t i = 0; i < sa.n && off < sizeof line; i++)
        off += (size_t)snprintf(line + off, sizeof line - off, "%s%s", i ? " " : "", sa.v[i]);
    char *nft = sf_nft_ruleset(&f);
    /* With the query log: the launch runs this text when the core takes
     * events (every core of ABI 2.1 and later). */
    char *dns = sf_dnsmasq_conf(&f, 1);
    sf_filter_free(&f);
    int r = 0;
    if (!nft || !dns) r = kgate_err_set(err, ENOMEM, "building the filter failed");
    if (r == 0 &&
        (host->plan_file(plan, "slirp4netns argv (PID: the network helper)", line) < 0 ||
         host->plan_file(plan, SF_PLAN_NFT, nft) < 0 ||
         host->plan_file(plan, SF_PLAN_DNSMASQ, dns) < 0 ||
         host->plan_file(plan, "resolv.conf (bound over /etc/resolv.conf)", sf_resolv_conf()) < 0))
        r = kgate_err_set(err, ENOMEM, "out of memory");
    free(nft);
    free(dns);
    if (r < 0) return r;
    host->plan_note(plan, "the bwrap argv above runs inside a helper that owns a user "
                          "and network namespace; the program is one user namespace "
                          "deeper and cannot change the filter");
    host->plan_note(plan, "%s", SF_FILTER_WORDS);
    /* The requests themselves, as launch sends them. */
    for (size_t i = 0; i < n_pub; i++) {
        char req[256];
        if (sf_hostfwd_request(&pub[i], req, sizeof req) < 0) continue;
        host->plan_note(plan,
                        "published before the program starts, until the run ends: "
                        "%s:%u on the host -> port %u in the box (slirp4netns API: %s)",
                        pub[i].host_addr, (unsigned)pub[i].host_port, (unsigned)pub[i].port, req);
    }
    return 0;
}
