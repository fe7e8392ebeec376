/* sf_text.c: everything of the slirp-filter backend that is text or a
 * table: host validation, the iptables-restore inputs, resolv.conf, the
 * slirp4netns argv, tool lookup and the doctor verdicts.  No processes. */
#include "sf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sf_host_valid(const char *name)
{
    if (!name) return 0;
    size_t len = strlen(name);
    if (len == 0 || len > 253) return 0;
    size_t label = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = name[i];
        if (c == '.' || c == '\0') {
            /* An empty label covers ".x", "x.", "x..y"; a label edge
             * hyphen covers "-flag" and "x.-y". */
            if (label == 0 || label > 63) return 0;
            if (name[i - 1] == '-') return 0;
            label = 0;
            continue;
        }
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '-';
        if (!ok) return 0;
        if (label == 0 && c == '-') return 0;
        label++;
    }
    return 1;
}

int sf_hosts_check(const kgate_strlist *hosts, kgate_err *err)
{
    for (size_t i = 0; hosts && i < hosts->n; i++) {
        if (!sf_host_valid(hosts->v[i]))
            /* The name is not printed as-is: it may hold a newline. */
            return kgate_err_set(err, EINVAL,
                                 "allow_hosts: entry %zu is not a valid host name",
                                 i + 1);
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

/* The filesystem box of a restricted run is exactly bubblewrap's (its plan,
 * its seccomp filter), so its findings are bubblewrap's doctor's, asked
 * with the real policy.  Of those, one is not true here: the BLOCKED
 * finding KGATE_FINDING_NET_HOSTS_UNSUPPORTED (kgate-plugin.h), which says
 * that bubblewrap alone cannot do a host list.  bubblewrap's doctor is
 * therefore handed a copy of the host table whose report passes every
 * finding on to the real report except that one, known by its id (never
 * by its sentence, which bubblewrap may reword).
 *
 * report() is not given the host, so rep is the wrapper (kgate_report is
 * opaque to plugins: bubblewrap only hands it back to these functions).
 * The functions that are given a host (log, backend, backend_probe) are
 * wrapped too: the core's versions read what lies behind its own table,
 * which this copy does not have. */
typedef struct sf_fs_host {
    kgate_host pub; /* first: a kgate_host * to it is a sf_fs_host * */
    const kgate_host *real;
    kgate_report *rep;
} sf_fs_host;

int sf_drops_finding(const char *id)
{
    return id && strcmp(id, KGATE_FINDING_NET_HOSTS_UNSUPPORTED) == 0;
}

static int fs_report(kgate_report *rep, kgate_verdict verdict, const char *id,
                     const char *fmt, ...) KGATE_PRINTF(4, 5);
static int fs_report(kgate_report *rep, kgate_verdict verdict, const char *id,
                     const char *fmt, ...)
{
    const sf_fs_host *f = (const sf_fs_host *)(void *)rep;
    if (sf_drops_finding(id)) return 0;
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return f->real->report(f->rep, KGATE_BLOCKED, "slirp-filter.out-of-memory",
                               "out of memory reading the bubblewrap backend's findings");
    /* The id goes on as given: the core checks it, and refuses the report
     * when it is not valid. */
    int r = f->real->report(f->rep, verdict, id, "%s", text);
    free(text);
    return r;
}

static int fs_detail(kgate_report *rep, const char *key, const char *value)
{
    const sf_fs_host *f = (const sf_fs_host *)(void *)rep;
    return f->real->report_detail(f->rep, key, value);
}

static void fs_log(const kgate_host *host, kgate_log_level level, const char *fmt, ...)
    KGATE_PRINTF(3, 4);
static void fs_log(const kgate_host *host, kgate_log_level level, const char *fmt, ...)
{
    const sf_fs_host *f = (const sf_fs_host *)(const void *)host;
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n >= 0 && f->real->log) f->real->log(f->real, level, "%s", text);
    free(text);
}

static const kgate_backend *fs_backend(const kgate_host *host, const char *name)
{
    const sf_fs_host *f = (const sf_fs_host *)(const void *)host;
    return f->real->backend ? f->real->backend(f->real, name) : NULL;
}

static const kgate_probe *fs_backend_probe(const kgate_host *host, const char *name)
{
    const sf_fs_host *f = (const sf_fs_host *)(const void *)host;
    return f->real->backend_probe ? f->real->backend_probe(f->real, name) : NULL;
}

static int report_filesystem_box(const kgate_host *host, const kgate_policy *policy,
                                 const kgate_backend *bw, const kgate_probe *bwprobe,
                                 kgate_report *rep)
{
    sf_fs_host f;
    memset(&f, 0, sizeof f);
    /* A newer core's table may be longer: keep what this build knows and
     * say so in struct_size. */
    size_t n = host->struct_size < sizeof f.pub ? host->struct_size : sizeof f.pub;
    memcpy(&f.pub, host, n);
    f.pub.struct_size = n;
    f.pub.log = fs_log;
    f.pub.report = fs_report;
    f.pub.report_detail = fs_detail;
    f.pub.backend = fs_backend;
    f.pub.backend_probe = fs_backend_probe;
    f.real = host;
    f.rep = rep;
    return bw->doctor(&f.pub, policy, bwprobe, (kgate_report *)(void *)&f);
}

int sf_doctor(const kgate_host *host, const kgate_policy *policy,
              const kgate_probe *probe, const kgate_backend *bw,
              const kgate_probe *bwprobe, kgate_report *rep)
{
    if (!bw || !bw->doctor || !bw->plan || !bw->launch)
        return host->report(rep, KGATE_BLOCKED, "slirp-filter.box-missing",
                            "needs the bubblewrap backend, which is not loaded");
    if (!bwprobe || !bwprobe->available)
        return host->report(rep, KGATE_BLOCKED, "slirp-filter.box-unavailable",
                            "needs the bubblewrap backend, which is unavailable: %s",
                            bwprobe && bwprobe->reason[0] ? bwprobe->reason
                                                          : "not probed");

    /* Off and open are bubblewrap's own modes: no slirp at all. */
    if (policy->network != KGATE_NET_RESTRICTED)
        return bw->doctor(host, policy, bwprobe, rep);

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
                 "filesystem box: the bubblewrap backend's plan, without --unshare-net, "
                 "and its seccomp filter (--seccomp FD at launch)");
    if (report_filesystem_box(host, policy, bw, bwprobe, rep) < 0) return -1;
    host->report(rep, KGATE_READY, "net.ipv6",
                 ip6 ? "IPv6: no route, and ip6tables drops all but loopback"
                     : "IPv6: no route (slirp4netns without --enable-ipv6); "
                       "ip6tables-restore not installed");
    for (size_t i = 0; i < policy->allow_hosts.n; i++)
        host->report_detail(rep, "allow_host", policy->allow_hosts.v[i]);
    return 0;
}
