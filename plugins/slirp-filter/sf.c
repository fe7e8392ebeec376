/* sf.c: the slirp-filter network stage's vtable.
 *
 * A network stage (kgate-plugin.h, KGATE_KIND_NETWORK): the core composes
 * it with a box for `network: restricted` with hosts, and only then.  The
 * core asks the box (bubblewrap) for its plan with the network open, so
 * without --unshare-net; this stage adds what --dry-run shows of its own
 * (the slirp4netns argv, the nftables ruleset, the dnsmasq configuration,
 * resolv.conf) and at launch starts the box's argv inside a network
 * namespace that slirp4netns connects and dnsmasq and nftables filter
 * (sf-launch.c).  It calls no other
 * backend: it only reads the plan it is given.  Its parts: sf-probe.c,
 * sf-doctor.c, sf-plan.c, sf-launch.c; the texts and tables they share
 * are in sf-text.c, the event watcher in sf-watch.c. */
#include "sf-internal.h"

#include <errno.h>
#include <stdlib.h>

static int sf_doctor_cb(const kgate_host *host, const kgate_policy *policy,
                        const kgate_probe *probe, kgate_report *rep)
{
    return sf_doctor(host, policy, probe, rep);
}

static int sf_launch(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                     const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc,
                     kgate_err *err)
{
    if (policy->network != KGATE_NET_RESTRICTED)
        return kgate_err_set(err, EINVAL,
                             "a network stage: only for network restricted "
                             "with hosts");
    /* The tools are the ones probe found and plan showed; without that
     * probe there is nothing we could say we checked. */
    const sf_tools *tools = probe ? probe->state : NULL;
    if (!tools) return kgate_err_set(err, EINVAL, "launch was not given this backend's probe");
    return sf_launch_restricted(host, policy, plan, io, tools, proc, err);
}

static void sf_release(void *state) { free(state); }

/* sf_launch_restricted starts a bwrap argv (its --info-fd, --block-fd and
 * --seccomp): the one box whose plan this stage knows. */
static const char *const sf_boxes[] = {"bubblewrap", NULL};

static const kgate_backend sf_backend = {
    KGATE_BACKEND_INIT,
    .name = "slirp-filter",
    .description = "network stage: slirp4netns, a filtering resolver and an nftables "
                   "allow list",
    .probe = sf_probe,
    .doctor = sf_doctor_cb,
    .plan = sf_plan,
    .launch = sf_launch,
    .release = sf_release,
    .kind = KGATE_KIND_NETWORK,
    .boxes = sf_boxes,
    .commits = 1,
    .publishes = 1,
};

KGATE_PLUGIN_DEFINE(sf_backend)
