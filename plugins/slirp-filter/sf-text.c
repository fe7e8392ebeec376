/* sf-text.c: everything of the slirp-filter backend that is text or a
 * table: host validation, the iptables-restore inputs, resolv.conf, the
 * slirp4netns argv, tool lookup and the doctor verdicts.  No processes. */
#include "sf-internal.h"

#include "kgate/kgate-hostspec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One reading of an entry for the core and every backend: the SDK's
 * kgate_hostspec_parse (name, *.name, name:port, *.name:port, a.b.c.d).
 * Whatever it accepts is [A-Za-z0-9.-] plus a leading "*." and one
 * ":digits", so nothing can read as a flag, a comment, a quote or a second
 * line. */
int sf_host_valid(const char *name)
{
    kgate_hostspec h;
    const char *why;
    return kgate_hostspec_parse(name, &h, &why) == 0;
}

int sf_hosts_check(const kgate_strlist *hosts, kgate_err *err)
{
    for (size_t i = 0; hosts && i < hosts->n; i++) {
        kgate_hostspec h;
        const char *why = "invalid";
        if (kgate_hostspec_parse(hosts->v[i], &h, &why) < 0)
            /* The entry is not printed as-is: it may hold a newline. */
            return kgate_err_set(err, EINVAL, "allow_hosts: entry %zu is not a valid host name (%s)",
                                 i + 1, why);
    }
    return 0;
}

static const char rules_head[] =
    "*filter\n"
    ":INPUT ACCEPT [0:0]\n"
    ":FORWARD DROP [0:0]\n"
    ":OUTPUT DROP [0:0]\n"
    "-A OUTPUT -o lo -j ACCEPT\n";

char *sf_rules_v4(const char *const *addrs, size_t n_addrs,
                  const kgate_strlist *template_hosts)
{
    char *buf = NULL;
    size_t sz = 0;
    FILE *f = open_memstream(&buf, &sz);
    if (!f) return NULL;
    int bad = 0;
    fputs(rules_head, f);
    fputs("-A OUTPUT -d " SF_DNS_ADDR "/32 -p udp -m udp --dport 53 -j ACCEPT\n"
          "-A OUTPUT -d " SF_DNS_ADDR "/32 -p tcp -m tcp --dport 53 -j ACCEPT\n",
          f);
    if (addrs) {
        for (size_t i = 0; i < n_addrs; i++) {
            struct in_addr a;
            /* Only a dotted quad inet_pton accepts reaches the text, so a
             * resolver answer cannot smuggle a second rule in. */
            if (inet_pton(AF_INET, addrs[i], &a) != 1) {
                bad = 1;
                break;
            }
            char canon[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &a, canon, sizeof canon);
            fprintf(f, "-A OUTPUT -d %s/32 -j ACCEPT\n", canon);
        }
    } else if (template_hosts) {
        for (size_t i = 0; i < template_hosts->n; i++) {
            if (!sf_host_valid(template_hosts->v[i])) {
                bad = 1;
                break;
            }
            fprintf(f,
                    "# -A OUTPUT -d ADDR/32 -j ACCEPT  for each IPv4 address of "
                    "%s, resolved inside the namespace at launch\n",
                    template_hosts->v[i]);
        }
    }
    fputs("-A OUTPUT -p tcp -j REJECT --reject-with tcp-reset\n"
          "-A OUTPUT -j REJECT --reject-with icmp-port-unreachable\n"
          "COMMIT\n",
          f);
    if (fclose(f) != 0 || bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

char *sf_rules_v6(void)
{
    static const char tail[] =
        "-A OUTPUT -p tcp -j REJECT --reject-with tcp-reset\n"
        "-A OUTPUT -j REJECT --reject-with icmp6-port-unreachable\n"
        "COMMIT\n";
    size_t n = strlen(rules_head) + strlen(tail) + 1;
    char *s = malloc(n);
    if (!s) return NULL;
    snprintf(s, n, "%s%s", rules_head, tail);
    return s;
}

const char *sf_resolv_conf(void)
{
    return "# kgate slirp-filter: the only resolver reachable in this sandbox\n"
           "nameserver " SF_DNS_ADDR "\n"
           "options attempts:2 timeout:2\n";
}

void sf_slirp_argv_build(sf_slirp_argv *out, const char *slirp_path,
                         int ready_fd, pid_t pid)
{
    memset(out, 0, sizeof *out);
    if (ready_fd >= 0) snprintf(out->ready, sizeof out->ready, "--ready-fd=%d", ready_fd);
    else snprintf(out->ready, sizeof out->ready, "--ready-fd=FD");
    if (pid > 0) {
        snprintf(out->userns, sizeof out->userns, "--userns-path=/proc/%ld/ns/user",
                 (long)pid);
        snprintf(out->pid, sizeof out->pid, "%ld", (long)pid);
    } else {
        snprintf(out->userns, sizeof out->userns, "--userns-path=/proc/PID/ns/user");
        snprintf(out->pid, sizeof out->pid, "PID");
    }
    size_t n = 0;
    out->v[n++] = slirp_path && *slirp_path ? slirp_path : "slirp4netns";
    out->v[n++] = "--configure";
    out->v[n++] = "--mtu=" SF_MTU;
    /* Without this, 10.0.2.2 is the host's 127.0.0.1: every local
     * database and dev server. */
    out->v[n++] = "--disable-host-loopback";
    /* slirp4netns parses every packet the sandbox sends: confine it too
     * (its own mount namespace with nothing in it, and a syscall filter).
     * Both work unprivileged with --userns-path (measured, 1.2.0). */
    out->v[n++] = "--enable-sandbox";
    out->v[n++] = "--enable-seccomp";
    out->v[n++] = out->ready;
    out->v[n++] = "--netns-type=pid";
    out->v[n++] = out->userns;
    out->v[n++] = out->pid;
    out->v[n++] = SF_TAP;
    out->v[n] = NULL;
    out->n = n;
}

int sf_find_tool(const char *name, char *out, size_t outsz)
{
    static const char *const sbin[] = {"/usr/local/sbin", "/usr/sbin", "/sbin",
                                       "/usr/local/bin", "/usr/bin", "/bin"};
    const char *path = getenv("PATH");
    char *copy = path ? strdup(path) : NULL;
    char *save = NULL;
    int found = 0;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !found;
         d = strtok_r(NULL, ":", &save)) {
        /* A relative PATH entry would make the tool depend on the cwd. */
        if (d[0] != '/') continue;
        snprintf(out, outsz, "%s/%s", d, name);
        found = access(out, X_OK) == 0;
    }
    free(copy);
    for (size_t i = 0; !found && i < sizeof sbin / sizeof sbin[0]; i++) {
        snprintf(out, outsz, "%s/%s", sbin[i], name);
        found = access(out, X_OK) == 0;
    }
    if (!found && outsz) out[0] = '\0';
    return found ? 0 : -1;
}

/* The doctor of the stage alone: the core shows the box's findings above
 * these (without the box's net.hosts-unsupported, which this stage answers). */
int sf_doctor(const kgate_host *host, const kgate_policy *policy,
              const kgate_probe *probe, kgate_report *rep)
{
    /* The core never composes a stage for off or open; a caller that
     * asks anyway learns that this is not a box. */
    if (policy->network != KGATE_NET_RESTRICTED)
        return host->report(rep, KGATE_BLOCKED, "slirp-filter.stage-only",
                            "a network stage: it only runs around a box, for network "
                            "restricted with hosts");

    int slirp = kgate_probe_fact(probe, SF_FACT_SLIRP, 0);
    int ipt = kgate_probe_fact(probe, SF_FACT_IPT, 0);
    /* QUICK probes do not run iptables; only a THOROUGH probe that tried
     * and failed records 0 here. */
    int ipt_ok = kgate_probe_fact(probe, SF_FACT_IPT_OK, ipt);
    int userns = kgate_probe_fact(probe, SF_FACT_USERNS, 1);
    int ip6 = kgate_probe_fact(probe, SF_FACT_IP6T, 0);
    int tun = kgate_probe_fact(probe, SF_FACT_TUN, 1);
    int blocked = 0;

    if (!slirp) {
        host->report(rep, KGATE_BLOCKED, "tool.slirp4netns-missing",
                     "network restricted needs slirp4netns, which is not installed "
                     "(Debian: apt-get install slirp4netns)");
        blocked = 1;
    }
    if (!ipt) {
        host->report(rep, KGATE_BLOCKED, "tool.iptables-missing",
                     "network restricted needs iptables-restore, which is not installed "
                     "(Debian: apt-get install iptables)");
        blocked = 1;
    } else if (!ipt_ok) {
        host->report(rep, KGATE_BLOCKED, "net.iptables-failed",
                     "network restricted needs iptables inside an unprivileged network "
                     "namespace, and it failed there");
        blocked = 1;
    }
    if (!userns) {
        host->report(rep, KGATE_BLOCKED, "userns.unavailable",
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
                 "network restricted to %zu host%s: slirp4netns + iptables in the "
                 "sandbox's own namespace",
                 policy->allow_hosts.n, policy->allow_hosts.n == 1 ? "" : "s");
    host->report(rep, KGATE_READY, "slirp-filter.box",
                 "the box's plan runs in this network namespace, without one of its own, "
                 "with its seccomp filter (--seccomp FD at launch); the program is one "
                 "user namespace deeper and cannot change the filter");
    host->report(rep, KGATE_READY, "net.ipv6",
                 ip6 ? "IPv6: no route, and ip6tables drops all but loopback"
                     : "IPv6: no route (slirp4netns without --enable-ipv6); "
                       "ip6tables-restore not installed");
    for (size_t i = 0; i < policy->allow_hosts.n; i++)
        host->report_detail(rep, "allow_host", policy->allow_hosts.v[i]);
    return 0;
}
