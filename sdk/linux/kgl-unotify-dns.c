/* kgl-unotify-dns.c: the launch-time half of names on the network (the
 * supervisor's half is kgl-unotify-net.c): the allow list as the
 * supervisor reads it, and the filtering resolver.
 *
 * The resolver is dnsmasq, configured as the slirp-filter stage's is
 * (docs/network.md): every name NXDOMAIN, answered locally, except the
 * listed names, which go upstream; no AAAA; upstream answers in private,
 * loopback and link-local ranges emptied (its rebind guard).  It listens
 * on 127.0.0.1 at a port free when it starts, and runs from kgate's
 * process, outside the program's Landlock domain and seccomp filters.
 * The program never reaches it directly: the supervisor relays what the
 * program sends to any address's port 53 (kgl-unotify-net.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kgate/kgate-unotify.h"
#include "kgate/kgate-hostspec.h"
#include "kgate/kgate-linux.h"
#include "kgate/kgate-tool.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <resolv.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KGL_ENV_UPSTREAM "KGATE_LANDLOCK_DNS_UPSTREAM"

static void add_fixed(kgl_un_net *n, uint32_t addr, unsigned port)
{
    for (size_t i = 0; i < n->n_fixed; i++)
        if (n->allow[i].addr == addr && n->allow[i].port == port) return;
    /* The slots past n_fixed are the answers': a full list keeps them. */
    if (n->n_fixed >= KGL_UN_NET_SLOTS / 2) return;
    n->allow[n->n_fixed++] = (kgl_un_allow){addr, (uint16_t)port, 1, 0};
}

typedef struct hosts_ctx {
    kgl_un_net *n;
    unsigned port;
} hosts_ctx;

static void add_from_hosts(void *ctx, uint32_t addr)
{
    hosts_ctx *h = ctx;
    /* The hosts file naming loopback for a listed name reaches nothing
     * of the host's: only localhost:port entries do. */
    if ((ntohl(addr) >> 24) == 127 || (ntohl(addr) >> 24) == 0) return;
    add_fixed(h->n, addr, h->port);
}

int kgl_un_net_init(kgl_un_policy *p, const char *const *hosts, size_t n, const char *hosts_file,
                    kgate_err *err)
{
    kgl_un_net *net = &p->net;
    net->events_fd = -1;
    net->log_fd = -1;
    net->hosts = calloc(n ? n : 1, sizeof *net->hosts);
    net->allow = calloc(KGL_UN_NET_SLOTS, sizeof *net->allow);
    if (!net->hosts || !net->allow) return kgate_err_set(err, ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        kgate_hostspec h;
        const char *why = "invalid";
        struct in_addr a;
        if (kgate_hostspec_parse(hosts[i], &h, &why) < 0)
            return kgate_err_set(
                err, EINVAL, "allow_hosts: entry %zu is not a valid host name (%s)", i + 1, why);
        if (h.host_loopback) {
            add_fixed(net, htonl(INADDR_LOOPBACK), h.port);
        } else if (!h.wildcard && inet_pton(AF_INET, h.name, &a) == 1) {
            add_fixed(net, a.s_addr, h.port);
        } else {
            kgl_un_host *k = &net->hosts[net->n_hosts++];
            memcpy(k->name, h.name, sizeof k->name);
            k->wildcard = h.wildcard;
            k->port = h.port;
            hosts_ctx hc = {net, h.port};
            if (hosts_file && !h.wildcard)
                kgl_un_parse_hosts(hosts_file, strlen(hosts_file), h.name, add_from_hosts, &hc);
        }
    }
    net->on = 1;
    return 0;
}

int kgl_un_upstream(char *out, size_t len, kgate_err *err)
{
    const char *env = getenv(KGL_ENV_UPSTREAM);
    struct in_addr a;
    if (env && *env) {
        if (inet_pton(AF_INET, env, &a) != 1 || strlen(env) >= len)
            return kgate_err_set(err, EINVAL, "%s is not an IPv4 address", KGL_ENV_UPSTREAM);
        memcpy(out, env, strlen(env) + 1);
        return 0;
    }
    char buf[8192];
    int fd = open("/etc/resolv.conf", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
    if (fd >= 0) close(fd);
    if (got < 0 || kgl_un_parse_resolv(buf, (size_t)got, out, len) < 0)
        return kgate_err_set(err, ENOENT,
                             "no IPv4 nameserver in /etc/resolv.conf for the filtering "
                             "resolver to ask (set %s)",
                             KGL_ENV_UPSTREAM);
    return 0;
}

int kgl_un_find_dnsmasq(char *out, size_t len)
{
    /* It runs outside the box: only where no box can write (kgate-tool.h). */
    kgate_err why = {0};
    return kgate_tool_find("dnsmasq", out, len, &why);
}

/* 1 when ID is mapped in this process's user namespace (MAP is
 * /proc/self/uid_map or gid_map); 0 when it is not or the map cannot be
 * read. */
static int id_mapped(const char *map, unsigned long id)
{
    FILE *f = fopen(map, "re");
    if (!f) return 0;
    unsigned long in = 0, out = 0, count = 0;
    int found = 0;
    while (!found && fscanf(f, "%lu %lu %lu", &in, &out, &count) == 3)
        found = id >= in && id - in < count;
    fclose(f);
    return found;
}

/* The user dnsmasq changes to when started as root.  Root inside a user
 * namespace that maps only itself (root running an agent's `bwrap
 * --unshare-user --disable-userns`) cannot become nobody: dnsmasq would
 * die at its setuid.  There it stays the root kgate already is, which
 * gives it nothing kgate lacks. */
static const char *resolver_user(void)
{
    if (geteuid() != 0) return "nobody"; /* dnsmasq changes only from root */
    return id_mapped("/proc/self/uid_map", 65534) && id_mapped("/proc/self/gid_map", 65534)
               ? "nobody"
               : "root";
}

/* The configuration; every line is built from parsed names ([a-z0-9.-])
 * and numbers.  The names forwarded: kgl_dns_forward, as the slirp
 * stage's. */
static int write_conf(FILE *o, const kgl_un_net *n, const char *up, unsigned port)
{
    fprintf(o,
            "# kgate landlock: the only resolver the program reaches\n"
            "no-resolv\nno-hosts\nno-poll\n"
            "listen-address=127.0.0.1\nbind-interfaces\nport=%u\n"
            "user=%s\ngroup=\npid-file=\nlog-facility=-\n"
            "filter-AAAA\nstop-dns-rebind\nmax-cache-ttl=3600\n"
            "address=/#/\n",
            port, resolver_user());
    kgl_dns_name *v = malloc((n->n_hosts ? n->n_hosts : 1) * sizeof *v);
    if (!v) return -1;
    for (size_t i = 0; i < n->n_hosts; i++)
        v[i] = (kgl_dns_name){.name = n->hosts[i].name, .wildcard = n->hosts[i].wildcard};
    int r = kgl_dns_forward(o, v, n->n_hosts, up);
    free(v);
    return r < 0 || fflush(o) != 0 ? -1 : 0;
}

/* A free port on 127.0.0.1 for UDP and TCP, at this moment. */
static int free_port(void)
{
    for (int tries = 0; tries < 20; tries++) {
        int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        int t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof a;
        int port = -1;
        if (u >= 0 && t >= 0 && bind(u, (struct sockaddr *)&a, sizeof a) == 0 &&
            getsockname(u, (struct sockaddr *)&a, &al) == 0 &&
            bind(t, (struct sockaddr *)&a, sizeof a) == 0)
            port = ntohs(a.sin_port);
        if (u >= 0) close(u);
        if (t >= 0) close(t);
        if (port > 0) return port;
    }
    return -1;
}

/* Asks the resolver for a name no list holds until it answers (2 s):
 * it is up, and it is the resolver (an answer to our query id). */
static int await_ready(unsigned port, pid_t pid)
{
    unsigned char q[512], a[512];
    int ql =
        res_mkquery(ns_o_query, "kgate-ready.invalid", ns_c_in, ns_t_a, NULL, 0, NULL, q, sizeof q);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in d = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = -1;
    if (ql < 0 || s < 0 || connect(s, (struct sockaddr *)&d, sizeof d) < 0) goto out;
    /* 3 s, a query every 50 ms, or 2 ms after a refusal (ICMP, before it
     * binds), which ends a poll early: the time is counted, not the tries.
     * dnsmasq binds 10-40 ms after its exec; a longer pause after the
     * first refusal was a pause of the whole launch (it was 50 ms). */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (t = t0; ok < 0 && t.tv_sec - t0.tv_sec < 3; clock_gettime(CLOCK_MONOTONIC, &t)) {
        if (waitpid(pid, NULL, WNOHANG) == pid) break; /* it ended: no resolver */
        (void)!send(s, q, (size_t)ql, 0);
        struct pollfd pf = {s, POLLIN, 0};
        int r = poll(&pf, 1, 50);
        ssize_t n = r == 1 ? recv(s, a, sizeof a, 0) : -1;
        if (n >= 2 && a[0] == q[0] && a[1] == q[1])
            ok = 0;
        else if (r == 1)
            nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
out:
    if (s >= 0) close(s);
    return ok;
}

/* conf is descriptor 3; the log's write end, when there is one, is 4
 * and becomes dnsmasq's stderr (log-facility=-). */
static _Noreturn void exec_dnsmasq(const char *bin, int conf, int log)
{
    char arg[] = "--conf-file=/proc/self/fd/3";
    char *const argv[] = {(char *)bin, "--keep-in-foreground", arg, NULL};
    char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(log >= 0 ? log : null, 2);
    }
    /* Nothing of kgate's but its configuration, as descriptor 3. */
    if (conf == 3 ? fcntl(3, F_SETFD, 0) < 0 : dup2(conf, 3) != 3) _exit(127);
    syscall(SYS_close_range, 4U, ~0U, 0U);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(bin, argv, envp);
    _exit(127);
}

/* dnsmasq behind a shim: dnsmasq started as root changes to nobody, and a
 * change of credentials clears the parent-death signal, so it would
 * outlive a kgate killed with SIGKILL.  The shim keeps its own (SIGTERM
 * when kgate dies, or the core's SIGTERM after the run), ends dnsmasq,
 * and ends with it.  Forked from a process that may have threads: only
 * async-signal-safe calls. */
static pid_t spawn_dnsmasq(const char *bin, int conf, int log)
{
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, &old);
    pid_t kgate = getpid();
    pid_t pid = fork();
    if (pid != 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        return pid;
    }
    /* kgate gone before the prctl: no signal will come, and a dnsmasq
     * started now would outlive the run. */
    if (kgl_tie_to_parent(SIGTERM, kgate) < 0) _exit(0);
    /* The shim holds nothing of kgate's but the configuration: a copy of
     * the program's output pipes, or of kgate's own stdout, would keep
     * their readers from seeing the end of the run until the shim ends. */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) _exit(127);
    if (conf != 3 && dup2(conf, 3) != 3) _exit(127);
    if (log >= 0 && log != 4 && dup2(log, 4) != 4) _exit(127);
    syscall(SYS_close_range, log >= 0 ? 5U : 4U, ~0U, 0U);
    pid_t d = fork();
    if (d == 0) exec_dnsmasq(bin, 3, log >= 0 ? 4 : -1);
    /* The shim writes no log: only dnsmasq holds the write end. */
    if (log >= 0) close(4);
    int sig = 0;
    while (d > 0 && sigwait(&set, &sig) == 0) {
        if (sig == SIGTERM) kill(d, SIGTERM);
        if (waitpid(d, NULL, sig == SIGTERM ? 0 : WNOHANG) == d) break;
    }
    _exit(0);
}

int kgl_un_resolver_start(const kgl_un_policy *p, const char *upstream, kgl_un_resolver *r,
                          kgate_err *err)
{
    char bin[256];
    r->pid = -1;
    r->log_fd = -1;
    kgate_err why = {0};
    if (kgate_tool_find("dnsmasq", bin, sizeof bin, &why) < 0)
        return kgate_err_set(err, why.code, "%s (the filtering resolver of network: restricted)",
                             why.msg);
    int port = free_port();
    int mfd = memfd_create("kgate-dnsmasq.conf", MFD_CLOEXEC);
    FILE *o = mfd >= 0 ? fdopen(dup(mfd), "w") : NULL;
    if (port < 0 || !o || write_conf(o, &p->net, upstream, (unsigned)port) < 0) {
        if (o) fclose(o);
        if (mfd >= 0) close(mfd);
        return kgate_err_set(err, EIO, "cannot prepare the filtering resolver");
    }
    fclose(o);
    /* Its log (the rebind guard's line) goes to the supervisor; without
     * a pipe the resolver still filters, only that record is lost. */
    int logp[2] = {-1, -1};
    if (pipe2(logp, O_CLOEXEC) < 0) logp[0] = logp[1] = -1;
    pid_t pid = spawn_dnsmasq(bin, mfd, logp[1]);
    close(mfd);
    if (logp[1] >= 0) close(logp[1]);
    if (pid < 0) {
        if (logp[0] >= 0) close(logp[0]);
        return kgate_err_set(err, errno, "cannot start dnsmasq: %s", strerror(errno));
    }
    if (await_ready((unsigned)port, pid) < 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        if (logp[0] >= 0) close(logp[0]);
        return kgate_err_set(err, EIO, "dnsmasq did not answer on 127.0.0.1:%d", port);
    }
    r->log_fd = logp[0];
    r->pid = pid;
    r->port = (uint16_t)port;
    return 0;
}
