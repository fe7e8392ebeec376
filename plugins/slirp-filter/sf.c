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
 * backend: it only reads the plan it is given. */
#include "sf-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Tries nft in a throwaway user+network namespace, the way launch will
 * use it: uid 0 mapped to us, nothing else.  Returns 1 when it worked, 0
 * when nft failed, -1 when the namespaces could not be made. */
static int try_nft(const char *nft)
{
    static const char rules[] =
        "table inet kgate {\n\tchain output {\n\t\ttype filter hook output priority filter;\n"
        "\t}\n}\n";
    int in[2];
    if (pipe2(in, O_CLOEXEC) < 0) return 0;
    uid_t uid = getuid();
    gid_t gid = getgid();
    pid_t pid = fork();
    if (pid < 0) {
        close(in[0]);
        close(in[1]);
        return 0;
    }
    if (pid == 0) {
        if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0) _exit(3);
        char line[64];
        int fd = open("/proc/self/setgroups", O_WRONLY);
        if (fd >= 0) {
            if (write(fd, "deny", 4) < 0) _exit(3);
            close(fd);
        }
        snprintf(line, sizeof line, "0 %u 1", (unsigned)uid);
        fd = open("/proc/self/uid_map", O_WRONLY);
        if (fd < 0 || write(fd, line, strlen(line)) < 0) _exit(3);
        close(fd);
        snprintf(line, sizeof line, "0 %u 1", (unsigned)gid);
        fd = open("/proc/self/gid_map", O_WRONLY);
        if (fd < 0 || write(fd, line, strlen(line)) < 0) _exit(3);
        close(fd);
        int nul = open("/dev/null", O_WRONLY);
        dup2(in[0], 0);
        if (nul >= 0) {
            dup2(nul, 1);
            dup2(nul, 2);
        }
        char *const argv[] = {(char *)nft, "-f", "-", NULL};
        char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
        execve(nft, argv, envp);
        _exit(4);
    }
    close(in[0]);
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    ssize_t w = write(in[1], rules, sizeof rules - 1);
    signal(SIGPIPE, old);
    close(in[1]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3) return -1;
    return w > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void read_slirp_version(const char *slirp, char *out, size_t outsz)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) return;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) dup2(nul, 2);
        char *const argv[] = {(char *)slirp, "--version", NULL};
        char *const envp[] = {NULL};
        execve(slirp, argv, envp);
        _exit(127);
    }
    close(p[1]);
    char buf[256] = "";
    ssize_t n = pid > 0 ? read(p[0], buf, sizeof buf - 1) : -1;
    close(p[0]);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    if (n <= 0) return;
    buf[n] = '\0';
    /* "slirp4netns version 1.2.0\n..." */
    char *v = strstr(buf, "version ");
    v = v ? v + 8 : buf;
    v[strcspn(v, "\n")] = '\0';
    /* Cut to fit on purpose: a copy, not snprintf, which gcc -Os flags
     * (-Wformat-truncation) whenever the source may be longer. */
    if (outsz == 0) return;
    size_t l = strlen(v) < outsz - 1 ? strlen(v) : outsz - 1;
    memcpy(out, v, l);
    out[l] = '\0';
}

static int sf_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe,
                    kgate_err *err)
{
    (void)host;
    /* The paths launch will exec: they live in the probe's state, which
     * the core keeps until the command ends (sf_release). */
    sf_tools *t = calloc(1, sizeof *t);
    if (!t) return kgate_err_set(err, ENOMEM, "out of memory");
    probe->state = t;
    int slirp = sf_find_tool("slirp4netns", t->slirp, sizeof t->slirp) == 0;
    int nft = sf_find_tool("nft", t->nft, sizeof t->nft) == 0;
    int dnsmasq = sf_find_tool("dnsmasq", t->dnsmasq, sizeof t->dnsmasq) == 0;
    kgate_probe_set_fact(probe, SF_FACT_SLIRP, slirp);
    kgate_probe_set_fact(probe, SF_FACT_NFT, nft);
    kgate_probe_set_fact(probe, SF_FACT_DNSMASQ, dnsmasq);
    /* slirp4netns opens the tun device as the user (in a namespace whose
     * root is the user, DAC still sees the real uid).  Debian's udev makes
     * it 0666; a machine without udev may leave it 0600. */
    kgate_probe_set_fact(probe, SF_FACT_TUN, access("/dev/net/tun", R_OK | W_OK) == 0);
    snprintf(probe->tool_path, sizeof probe->tool_path, "%s", t->slirp);
    if (depth == KGATE_PROBE_THOROUGH) {
        if (slirp) read_slirp_version(t->slirp, probe->version, sizeof probe->version);
        if (nft) {
            int r = try_nft(t->nft);
            kgate_probe_set_fact(probe, SF_FACT_USERNS, r >= 0);
            kgate_probe_set_fact(probe, SF_FACT_NFT_OK, r == 1);
        }
    }
    probe->available = slirp && nft && dnsmasq;
    if (!probe->available)
        snprintf(probe->reason, sizeof probe->reason, "missing:%s%s%s", slirp ? "" : " slirp4netns",
                 nft ? "" : " nft", dnsmasq ? "" : " dnsmasq");
    else
        snprintf(probe->reason, sizeof probe->reason,
                 "host allow lists with slirp4netns, dnsmasq and nftables, around a "
                 "bubblewrap box");
    return 0;
}

static int sf_doctor_cb(const kgate_host *host, const kgate_policy *policy,
                        const kgate_probe *probe, kgate_report *rep)
{
    return sf_doctor(host, policy, probe, rep);
}

/* plan already holds the box's argv; this stage adds its files and notes. */
static int sf_plan(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
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
    char *dns = sf_dnsmasq_conf(&f, 1);
    sf_filter_free(&f);
    int r = 0;
    if (!nft || !dns) r = kgate_err_set(err, ENOMEM, "building the filter failed");
    if (r == 0 &&
        (host->plan_file(plan, "slirp4netns argv (PID: the network helper)", line) < 0 ||
         host->plan_file(plan, "nft -f input (the packet filter)", nft) < 0 ||
         host->plan_file(plan, "dnsmasq configuration (the resolver)", dns) < 0 ||
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
