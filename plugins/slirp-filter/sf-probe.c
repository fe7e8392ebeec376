/* sf-probe.c: what the slirp-filter stage finds on the host: its three
 * tools, whether nft works in an unprivileged network namespace, whether
 * the tun device is open to the user, slirp4netns's version. */
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

int sf_find_tool(const char *name, char *out, size_t outsz)
{
    kgate_err why = {0};
    return kgate_tool_find(name, out, outsz, &why);
}

int sf_find_tool_why(const char *name, char *out, size_t outsz, char *why, size_t whysz)
{
    kgate_err e = {0};
    int rc = kgate_tool_find(name, out, outsz, &e);
    /* kgate_tool_find says "NAME: ..."; the doctor's sentence names it. */
    const char *m = e.msg;
    size_t n = strlen(name);
    if (strncmp(m, name, n) == 0 && m[n] == ':' && m[n + 1] == ' ') m += n + 2;
    snprintf(why, whysz, "%s", rc == 0 ? "" : m);
    return rc;
}

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

int sf_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe, kgate_err *err)
{
    (void)host;
    /* The paths launch will exec: they live in the probe's state, which
     * the core keeps until the command ends (sf_release). */
    sf_tools *t = calloc(1, sizeof *t);
    if (!t) return kgate_err_set(err, ENOMEM, "out of memory");
    probe->state = t;
    int slirp = sf_find_tool_why("slirp4netns", t->slirp, sizeof t->slirp, t->slirp_why,
                                 sizeof t->slirp_why) == 0;
    int nft = sf_find_tool_why("nft", t->nft, sizeof t->nft, t->nft_why, sizeof t->nft_why) == 0;
    int dnsmasq = sf_find_tool_why("dnsmasq", t->dnsmasq, sizeof t->dnsmasq, t->dnsmasq_why,
                                   sizeof t->dnsmasq_why) == 0;
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
