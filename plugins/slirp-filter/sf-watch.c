/* sf-watch.c: the event watcher of the restricted network.
 *
 * A small process the helper forks inside the network namespace when the
 * core takes events (kgate_launch.events_fd).  It reads two things and
 * writes one record per refusal (kgate-plugin.h: "net refused NAME ADDR
 * PORT"):
 *   - dnsmasq's query log, from a pipe: "config NAME is NXDOMAIN" is a name
 *     the resolver refused; "possible DNS-rebind attack detected: NAME" an
 *     answer it refused (its rebind guard: the line has no address);
 *     "reply NAME is ADDR" teaches it which name an address was answered
 *     for, and is itself reported when ADDR is one the filter never lets a
 *     name reach (sf_never_v4);
 *   - the packets the filter refused, from NFLOG group SF_NFLOG_GROUP over
 *     a plain nfnetlink socket (no libnetfilter_log: two messages to send,
 *     one to parse, and one less library in a process that runs beside the
 *     program).
 * Each refusal is reported once per run.  A record that does not fit in
 * the pipe is dropped: the program is never slowed for its report. */
#include "sf-internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Bounds of what one run remembers: beyond them it still refuses, it only
 * stops naming (addresses) or reporting (records). */
#define W_MAP_SLOTS 262144 /* power of two, > 2 x 100,000 addresses */
#define W_MAX_NAMES 65536
#define W_SEEN_SLOTS 16384 /* power of two, 2 x the records */
#define W_MAX_RECORDS 4096

typedef struct watch {
    int events;
    const sf_filter *filter; /* sf_never_v4's: which answers are refused */
    uint32_t *map_addr; /* 0: empty slot (0.0.0.0 is never answered) */
    uint32_t *map_name; /* index into names */
    char **names;
    size_t n_names;
    uint64_t *seen; /* hash set of refusals reported (never 0) */
    size_t n_records;
    char chain[300]; /* the name whose CNAME chain the log is in */
} watch;

static volatile sig_atomic_t stopping;

static void on_term(int sig)
{
    (void)sig;
    stopping = 1;
}

static size_t slot_of(uint32_t a) { return (size_t)((a * 2654435761u) & (W_MAP_SLOTS - 1)); }

static const char *map_get(const watch *w, uint32_t addr)
{
    if (!w->map_addr) return NULL;
    for (size_t i = slot_of(addr), k = 0; k < W_MAP_SLOTS; i = (i + 1) & (W_MAP_SLOTS - 1), k++) {
        if (w->map_addr[i] == 0) return NULL;
        if (w->map_addr[i] == addr) return w->names[w->map_name[i]];
    }
    return NULL;
}

static uint32_t intern(watch *w, const char *name)
{
    /* Answers come name by name: the last one is the likely match. */
    if (w->n_names && strcmp(w->names[w->n_names - 1], name) == 0)
        return (uint32_t)(w->n_names - 1);
    if (w->n_names == W_MAX_NAMES) return UINT32_MAX;
    char *copy = strdup(name);
    if (!copy) return UINT32_MAX;
    w->names[w->n_names] = copy;
    return (uint32_t)w->n_names++;
}

static void map_put(watch *w, uint32_t addr, const char *name)
{
    if (!w->map_addr || addr == 0) return;
    size_t i = slot_of(addr);
    for (size_t k = 0; k < W_MAP_SLOTS / 2; i = (i + 1) & (W_MAP_SLOTS - 1), k++) {
        if (w->map_addr[i] == 0 || w->map_addr[i] == addr) {
            uint32_t n = intern(w, name);
            if (n == UINT32_MAX) return;
            w->map_addr[i] = addr;
            w->map_name[i] = n;
            return;
        }
    }
}

/* 1 the first time key (not 0) is seen, and remembers it; 0 after, and
 * once the run's records are used up.  A hash set: a program that sends a
 * million refused packets costs the watcher a million lookups, not a
 * million scans. */
static int first_time(watch *w, uint64_t key)
{
    if (w->n_records >= W_MAX_RECORDS) return 0;
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 50) & (W_SEEN_SLOTS - 1);
    for (;; i = (i + 1) & (W_SEEN_SLOTS - 1)) {
        if (w->seen[i] == key) return 0;
        if (w->seen[i] == 0) break;
    }
    w->seen[i] = key;
    return 1;
}

/* A refused name's key: a hash of its text (a collision only loses a
 * report, never allows anything). */
static uint64_t name_key(const char *name)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h | 1ull << 63;
}

/* The name as the record format wants it: bytes outside [A-Za-z0-9.*_-]
 * as \DDD. */
static void escape_name(const char *in, char *out, size_t outsz)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 5 < outsz; p++) {
        unsigned c = *p;
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '*' || c == '_' || c == '-';
        if (plain)
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, outsz - o, "\\%03u", c);
    }
    out[o] = '\0';
    if (o == 0) snprintf(out, outsz, "-");
}

/* why: the record's reason word (kgate-plugin.h): "unlisted", "private",
 * "never" or "unanswered". */
static void record(watch *w, const char *name, const char *addr, unsigned port, const char *why)
{
    if (w->n_records >= W_MAX_RECORDS) return;
    char esc[4 * 254 + 8];
    escape_name(name ? name : "-", esc, sizeof esc);
    char line[KGATE_EVENT_MAX];
    int n = snprintf(line, sizeof line, "net refused %s %s %u %s\n", esc, addr, port, why);
    if (n <= 0 || (size_t)n >= sizeof line) return;
    /* One write, non-blocking: a full pipe drops the record. */
    if (write(w->events, line, (size_t)n) == n) w->n_records++;
}

/* One line of dnsmasq's log, "<date> dnsmasq[pid]: <message>". */
static void log_line(watch *w, char *line)
{
    char *m = strstr(line, "]: ");
    if (!m) return;
    m += 3;
    char name[300], what[300];
    if (sscanf(m, "config %299s is %299s", name, what) == 2) {
        w->chain[0] = '\0';
        if (strcmp(what, "NXDOMAIN") != 0) return;
        if (first_time(w, name_key(name))) record(w, name, "-", 0, "unlisted");
        return;
    }
    if (sscanf(m, "reply %299s is %299s", name, what) == 2) {
        if (strcmp(what, "<CNAME>") == 0) {
            if (!w->chain[0]) snprintf(w->chain, sizeof w->chain, "%s", name);
            return;
        }
        struct in_addr a;
        if (inet_pton(AF_INET, what, &a) != 1) return;
        const char *asked = w->chain[0] ? w->chain : name;
        map_put(w, a.s_addr, asked);
        /* The answer names the host or a metadata service: the filter
         * refuses it whatever the program does next; said now, with the
         * name and the address, in case the program never connects. */
        if (w->filter && sf_never_v4(w->filter, a.s_addr) && !sf_explicit_v4(w->filter, a.s_addr) &&
            first_time(w, (uint64_t)a.s_addr << 17 | 1ull << 62 | 1))
            record(w, asked, what, 0, "never");
        return;
    }
    /* dnsmasq logs each set insertion between the lines of one answer
     * ("nftset add 4 inet kgate any ADDR DOMAIN"): the chain goes on. */
    if (strncmp(m, "nftset add ", 11) == 0) return;
    static const char rebind[] = "possible DNS-rebind attack detected: ";
    if (strncmp(m, rebind, sizeof rebind - 1) == 0 &&
        sscanf(m + sizeof rebind - 1, "%299s", name) == 1) {
        /* The name in the line is the record's owner (a CNAME's target);
         * the program asked for the chain's first name. */
        const char *asked = w->chain[0] ? w->chain : name;
        if (first_time(w, name_key(asked) ^ 2)) record(w, asked, "-", 0, "private");
        w->chain[0] = '\0';
        return;
    }
    w->chain[0] = '\0';
}

static void read_log(watch *w, int fd, char *buf, size_t *len, size_t cap)
{
    ssize_t n = read(fd, buf + *len, cap - *len - 1);
    if (n <= 0) return;
    *len += (size_t)n;
    buf[*len] = '\0';
    char *start = buf;
    for (char *nl; (nl = strchr(start, '\n')); start = nl + 1) {
        *nl = '\0';
        log_line(w, start);
    }
    size_t rest = *len - (size_t)(start - buf);
    /* A line longer than the buffer is dropped whole. */
    if (rest == cap - 1) rest = 0;
    memmove(buf, start, rest);
    *len = rest;
}

/* A configuration message to nfnetlink_log: command (bind the group) or
 * copy mode. */
static int nflog_config(int fd, uint16_t attr, const void *payload, uint16_t plen)
{
    char buf[NLMSG_SPACE(sizeof(struct nfgenmsg) + NLA_HDRLEN + 16)];
    memset(buf, 0, sizeof buf);
    struct nlmsghdr *h = (struct nlmsghdr *)buf;
    h->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
    h->nlmsg_flags = NLM_F_REQUEST;
    struct nfgenmsg *g = NLMSG_DATA(h);
    g->nfgen_family = AF_UNSPEC;
    g->version = NFNETLINK_V0;
    g->res_id = htons(SF_NFLOG_GROUP);
    struct nlattr *a = (struct nlattr *)((char *)g + NLA_ALIGN(sizeof *g));
    a->nla_type = attr;
    a->nla_len = (uint16_t)(NLA_HDRLEN + plen);
    memcpy((char *)a + NLA_HDRLEN, payload, plen);
    h->nlmsg_len = NLMSG_LENGTH(NLA_ALIGN(sizeof *g) + NLA_ALIGN(a->nla_len));
    struct sockaddr_nl k = {.nl_family = AF_NETLINK};
    return sendto(fd, buf, h->nlmsg_len, 0, (struct sockaddr *)&k, sizeof k) < 0 ? -1 : 0;
}

static int nflog_open(void)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_NETFILTER);
    if (fd < 0) return -1;
    struct sockaddr_nl me = {.nl_family = AF_NETLINK};
    struct nfulnl_msg_config_cmd cmd = {.command = NFULNL_CFG_CMD_BIND};
    /* The headers are all that is needed: IPv4 20..60 bytes, then ports. */
    struct nfulnl_msg_config_mode mode = {.copy_range = htonl(128),
                                          .copy_mode = NFULNL_COPY_PACKET};
    /* Each packet on its own, at once (the kernel batches 100 or a
     * second by default, which a short run would end before). */
    uint32_t one = htonl(1);
    if (bind(fd, (struct sockaddr *)&me, sizeof me) < 0 ||
        nflog_config(fd, NFULA_CFG_CMD, &cmd, sizeof cmd) < 0 ||
        nflog_config(fd, NFULA_CFG_MODE, &mode, sizeof mode) < 0 ||
        nflog_config(fd, NFULA_CFG_QTHRESH, &one, sizeof one) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* One refused packet: its destination and port. */
static void packet(watch *w, const unsigned char *p, size_t n)
{
    char addr[INET6_ADDRSTRLEN];
    unsigned port = 0;
    const char *name = NULL, *why = "unanswered";
    if (n >= 20 && (p[0] >> 4) == 4) {
        size_t ihl = (size_t)(p[0] & 15) * 4;
        uint32_t da;
        memcpy(&da, p + 16, 4);
        if ((p[9] == 6 || p[9] == 17) && n >= ihl + 4)
            port = (unsigned)(p[ihl + 2] << 8 | p[ihl + 3]);
        inet_ntop(AF_INET, &da, addr, sizeof addr);
        name = map_get(w, da);
        if (w->filter && sf_never_v4(w->filter, da) && !sf_explicit_v4(w->filter, da))
            why = "never";
        if (!first_time(w, (uint64_t)da << 17 | (uint64_t)port << 1 | 1)) return;
    } else if (n >= 40 && (p[0] >> 4) == 6) {
        if ((p[6] == 6 || p[6] == 17) && n >= 44) port = (unsigned)(p[42] << 8 | p[43]);
        inet_ntop(AF_INET6, p + 24, addr, sizeof addr);
        uint64_t key = 0;
        for (int i = 0; i < 16; i++) key = key * 131 + p[24 + i];
        if (!first_time(w, key << 17 | (uint64_t)port << 1)) return;
    } else {
        return;
    }
    record(w, name, addr, port, why);
}

static void read_nflog(watch *w, int fd)
{
    static char buf[65536];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n <= 0) return;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
             h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type != ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET)) continue;
            size_t off = NLMSG_ALIGN(sizeof(struct nfgenmsg));
            size_t len = NLMSG_PAYLOAD(h, 0);
            const char *base = NLMSG_DATA(h);
            while (off + NLA_HDRLEN <= len) {
                const struct nlattr *a = (const struct nlattr *)(base + off);
                if (a->nla_len < NLA_HDRLEN || off + a->nla_len > len) break;
                if ((a->nla_type & NLA_TYPE_MASK) == NFULA_PAYLOAD)
                    packet(w, (const unsigned char *)a + NLA_HDRLEN, a->nla_len - NLA_HDRLEN);
                off += NLA_ALIGN(a->nla_len);
            }
        }
    }
}

struct sf_watch {
    watch w;
    int log_fd;
    int nl; /* the NFLOG socket, or -1 */
};

sf_watch *sf_watch_open(int log_fd, int events_fd, const sf_filter *f, int *listening)
{
    sf_watch *sw = calloc(1, sizeof *sw);
    if (!sw) return NULL;
    int fl = fcntl(events_fd, F_GETFL);
    if (fl >= 0) fcntl(events_fd, F_SETFL, fl | O_NONBLOCK);
    watch *w = &sw->w;
    w->events = events_fd;
    w->filter = f;
    /* Large, but calloc maps them untouched: only used slots cost. */
    w->map_addr = calloc(W_MAP_SLOTS, sizeof *w->map_addr);
    w->map_name = calloc(W_MAP_SLOTS, sizeof *w->map_name);
    w->names = calloc(W_MAX_NAMES, sizeof *w->names);
    w->seen = calloc(W_SEEN_SLOTS, sizeof *w->seen);
    if (!w->map_addr || !w->map_name || !w->names || !w->seen) {
        free(w->map_addr);
        free(w->map_name);
        free(w->names);
        free(w->seen);
        free(sw);
        return NULL;
    }
    sw->log_fd = log_fd;
    sw->nl = nflog_open();
    *listening = sw->nl >= 0;
    return sw;
}

void sf_watch_arm(void)
{
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

_Noreturn void sf_watch_loop(sf_watch *sw, int stop_now)
{
    watch *w = &sw->w;
    int log_fd = sw->log_fd, nl = sw->nl;
    if (stop_now) stopping = 1;
    static char logbuf[8192];
    size_t loglen = 0;
    struct pollfd p[2] = {{.fd = log_fd, .events = POLLIN}, {.fd = nl, .events = POLLIN}};
    /* Runs until SIGTERM (the parent death signal: the stage ends with the
     * box), after which what is already queued is still read. */
    while (!stopping) {
        int r = poll(p, 2, -1);
        if (r < 0 && errno != EINTR) break;
        if (p[0].revents & POLLIN)
            read_log(w, log_fd, logbuf, &loglen, sizeof logbuf);
        else if (p[0].revents & (POLLHUP | POLLERR))
            p[0].fd = -1;
        if (p[1].revents) read_nflog(w, nl);
    }
    int lfl = fcntl(log_fd, F_GETFL);
    if (lfl >= 0) fcntl(log_fd, F_SETFL, lfl | O_NONBLOCK);
    read_log(w, log_fd, logbuf, &loglen, sizeof logbuf);
    if (nl >= 0) read_nflog(w, nl);
    _exit(0);
}
