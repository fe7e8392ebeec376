/* kgl-unotify-net.c: the supervisor's network calls, for network:
 * restricted with an allow list of hosts in a box without a network
 * namespace (kgate-unotify.h; the launch half is kgl-unotify-dns.c).
 *
 * The filter notifies connect, bind, listen, sendmsg and sendmmsg, sendto with an
 * address and recvfrom with a place for one.  The supervisor never lets
 * the kernel re-read what it checked: it copies the address (and the data
 * and control of a send) once, takes the program's socket with
 * pidfd_getfd (the same open file description, so the program's
 * O_NONBLOCK and timeouts hold), checks the socket's own family, type and
 * protocol, and makes the call itself with its copies:
 *   - TCP connect: to an address the filtering resolver answered for a
 *     listed name, on a listed port, or a literal entry, or to a loopback
 *     port a socket this run bound listens on; port 53 goes to the
 *     supervisor's TCP relay (which records unlisted names and learns
 *     answers as the UDP relay does), 853 (DNS over TLS) is refused;
 *     anything else is ECONNREFUSED and an event record.  A blocking connect is
 *     made by a worker (a fork of the supervisor holding the copies) so
 *     that the loop keeps answering the program's other calls;
 *   - UDP: only to port 53, and there to the relay, a socket of the
 *     supervisor's, which forwards to the filtering resolver, adds the A
 *     records of its answer to the allowed set, and only then passes the
 *     answer on.  A program's resolver checks that an answer comes from
 *     the server it asked: recvfrom on a relayed socket is answered by
 *     the supervisor with that server's address;
 *   - Unix sockets: a path is decided by kgl-unotify-unix.c (host
 *     sockets only when allow_sockets names them), unnamed and abstract
 *     addresses made as asked; netlink made as asked (the check that
 *     matters is that the socket really is one, on the descriptor it
 *     took);
 *   - network open (N.n->open): only connect and the sends are notified,
 *     and only a Unix path is decided; every other call is made as asked
 *     with the copies;
 *   - a TCP send's address is ignored by the kernel (fast open is refused
 *     by the filter), so it sends what it copied to the connected peer;
 *   - bind and listen: the box shares the host's network namespace, so a
 *     server address (a port asked for) is allowed only on loopback, and
 *     listen only on a loopback socket (one never bound is bound to
 *     127.0.0.1 first): nothing connects in.
 * The allowed set, the relay's queries and the workers live in fixed
 * tables: the supervisor allocates nothing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kgl-unotify-int.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#define NET_BUF (256 * 1024)
#define NET_CTL 4096
#define NET_IOV 1024
#define N_PEND 64
#define N_MAP 256
#define N_WORKERS 64
#define N_MMSG 64
#define MAX_RECORDS 4096
#define N_BOUND 1024
/* DNS over TCP connections relayed at once: the oldest gives way. */
#define N_TCPDNS 8
#define DNS_TCP_MAX (2 + 65535)
/* How long an answered address stays allowed at least: programs keep
 * answers past their TTL (the slirp-filter stage keeps them as long). */
#define ANSWER_KEEP 3600

typedef struct op {
    int connect;
    struct sockaddr_storage to;
    socklen_t tolen; /* 0: no address */
    size_t len; /* bytes in data */
    socklen_t ctllen;
    int flags;
} op;

static struct net {
    const kgl_un_net *n;
    kgl_un_allow *allow;
    size_t next_slot;
    int relay;
    struct sockaddr_in relay_addr, resolver;
    struct {
        int fd;
        struct sockaddr_in client;
        time_t t;
    } pend[N_PEND];
    struct {
        dev_t dev;
        ino_t ino;
        struct sockaddr_in ns;
    } map[N_MAP];
    size_t next_map;
    pid_t workers[N_WORKERS];
    size_t n_records;
    /* The Internet sockets this run bound (the supervisor made every
     * bind): a loopback listener of the run is known by its inode. */
    struct {
        ino_t ino;
    } bound[N_BOUND];
    size_t next_bound;
    /* DNS over TCP: the supervisor's listener the program's connects to
     * port 53 are pointed at, and each connection's two ends. */
    int tcp_relay;
    struct sockaddr_in tcp_relay_addr;
    struct {
        int c, u; /* the program's end, accepted; the resolver's */
        size_t cn, un; /* bytes of the message being read from each */
        time_t t;
    } tc[N_TCPDNS];
    /* The resolver's log: a line being read, and the name of the last
     * rebind line that no entry lists (a CNAME's target: the answer the
     * program gets is for the name it asked, which is listed). */
    char log[1024];
    size_t log_len;
    int log_ended; /* dnsmasq is gone: the pipe only says so, forever */
    char rebound[NS_MAXDNAME];
    /* Names already recorded as private answers: each is said once. */
    uint32_t said_private[64];
    size_t n_said_private;
} N = {.relay = -1, .tcp_relay = -1};

static unsigned char tc_query[N_TCPDNS][DNS_TCP_MAX];
static unsigned char tc_answer[N_TCPDNS][DNS_TCP_MAX];

static unsigned char data[NET_BUF];
static unsigned char ctl[NET_CTL];
static int ctl_fds[NET_CTL / sizeof(int)];
static size_t n_ctl_fds;

static time_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

static result err(int e) { return (result){R_ERR, e, -1, 0}; }

static result val(long v) { return (result){R_VAL, (int)v, -1, 0}; }

static const result CONT = {R_CONT, 0, -1, 0};

int kgl_un_net_call(int nr)
{
    return nr == SYS_connect || nr == SYS_sendto || nr == SYS_sendmsg || nr == SYS_sendmmsg ||
           nr == SYS_recvfrom || nr == SYS_bind || nr == SYS_listen;
}

/* ---- records ----------------------------------------------------------- */

/* why: the record's reason word (kgate-plugin.h), so that the user reads
 * what happened: "unlisted", "never", "unanswered", "listen". */
static void record(const char *name, uint32_t addr, unsigned port, const char *why)
{
    if (N.n->events_fd < 0 || N.n_records >= MAX_RECORDS) return;
    char esc[4 * 254 + 8], a[INET_ADDRSTRLEN] = "-", line[KGATE_EVENT_MAX];
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)(name ? name : "");
         *p && o + 5 < sizeof esc; p++) {
        unsigned c = *p;
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '*' || c == '_' || c == '-';
        if (plain)
            esc[o++] = (char)c;
        else
            o += (size_t)snprintf(esc + o, sizeof esc - o, "\\%03u", c);
    }
    esc[o] = '\0';
    if (!o) memcpy(esc, "-", 2);
    /* A refused bind on every address (0.0.0.0) has a port. */
    if (addr || port) inet_ntop(AF_INET, &addr, a, sizeof a);
    int n = snprintf(line, sizeof line, "net refused %s %s %u %s\n", esc, a, port, why);
    /* One write, never waiting: a full pipe drops the record. */
    if (n > 0 && (size_t)n < sizeof line && write(N.n->events_fd, line, (size_t)n) == n)
        N.n_records++;
}

/* ---- the allowed set --------------------------------------------------- */

/* Addresses no answer may open (docs/network.md): this host's loopback,
 * 0/8, link-local (metadata services), multicast and broadcast, and the
 * metadata addresses that are not link-local. */
static int never(uint32_t a)
{
    uint32_t h = ntohl(a);
    return (h >> 24) == 0 || (h >> 24) == 127 || (h >> 16) == 0xa9fe || h >= 0xe0000000 ||
           h == 0x646464c8 || h == 0xa83f8110;
}

static int allowed(uint32_t addr, unsigned port)
{
    time_t t = now();
    for (size_t i = 0; i < KGL_UN_NET_SLOTS; i++) {
        const kgl_un_allow *s = &N.allow[i];
        if (s->addr == addr && (s->port == 0 || s->port == port) &&
            (s->fixed || (time_t)s->until >= t))
            return 1;
    }
    return 0;
}

static void learn_port(uint32_t addr, unsigned port, uint64_t until)
{
    size_t first = N.n->n_fixed, free_at = KGL_UN_NET_SLOTS;
    for (size_t i = first; i < KGL_UN_NET_SLOTS; i++) {
        kgl_un_allow *s = &N.allow[i];
        if (s->addr == addr && s->port == port) {
            if (s->until < until) s->until = until;
            return;
        }
        if (!s->addr && free_at == KGL_UN_NET_SLOTS) free_at = i;
    }
    if (free_at == KGL_UN_NET_SLOTS) {
        /* Full: the oldest-placed answer gives way (refused again). */
        free_at = first + N.next_slot++ % (KGL_UN_NET_SLOTS - first);
    }
    N.allow[free_at] = (kgl_un_allow){addr, (uint16_t)port, 0, until};
}

typedef struct learn_ctx {
    const char *qname;
    int n; /* A records in the answer */
} learn_ctx;

static void learn(void *ctx, uint32_t addr, uint32_t ttl)
{
    learn_ctx *c = ctx;
    c->n++;
    if (never(addr)) return;
    uint64_t until = (uint64_t)now() + (ttl > ANSWER_KEEP ? ttl : ANSWER_KEEP);
    /* The ports of every entry the asked name matches. */
    for (size_t i = 0; i < N.n->n_hosts; i++)
        if (kgl_un_host_matches(&N.n->hosts[i], c->qname))
            learn_port(addr, N.n->hosts[i].port, until);
}

static int listed(const char *name)
{
    for (size_t i = 0; i < N.n->n_hosts; i++)
        if (kgl_un_host_matches(&N.n->hosts[i], name)) return 1;
    return 0;
}

/* ---- the resolver's rebind guard ----------------------------------------
 * dnsmasq (stop-dns-rebind) empties an upstream answer in a private,
 * loopback or link-local range and logs "possible DNS-rebind attack
 * detected: NAME" before it sends the emptied answer.  The program sees
 * only an answer with no address, as for a name that does not exist: the
 * log line is the one place that says what happened, so the supervisor
 * reads it (the resolver's stderr, a pipe only dnsmasq writes) and records
 * the listed name as "private" (issue 43.6). */

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)(*s | 0x20)) * 16777619u;
    return h;
}

static void record_private(const char *name)
{
    uint32_t h = name_hash(name);
    for (size_t i = 0; i < N.n_said_private; i++)
        if (N.said_private[i] == h) return;
    if (N.n_said_private < sizeof N.said_private / sizeof *N.said_private)
        N.said_private[N.n_said_private++] = h;
    record(name, 0, 0, "private");
}

static void log_line(const char *m)
{
    static const char rebind[] = "possible DNS-rebind attack detected: ";
    const char *at = strstr(m, rebind);
    if (!at) return;
    char name[NS_MAXDNAME];
    size_t n = strcspn(at + sizeof rebind - 1, " \t\r");
    if (n == 0 || n >= sizeof name) return;
    memcpy(name, at + sizeof rebind - 1, n);
    name[n] = '\0';
    if (listed(name))
        record_private(name);
    else
        memcpy(N.rebound, name, n + 1);
}

/* Reads what the resolver logged so far, never waiting. */
static void read_log(void)
{
    if (N.n->log_fd < 0 || N.log_ended) return;
    for (;;) {
        ssize_t r = read(N.n->log_fd, N.log + N.log_len, sizeof N.log - 1 - N.log_len);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) N.log_ended = 1;
        if (r <= 0) return;
        N.log_len += (size_t)r;
        N.log[N.log_len] = '\0';
        char *start = N.log;
        for (char *nl; (nl = strchr(start, '\n')); start = nl + 1) {
            *nl = '\0';
            log_line(start);
        }
        size_t rest = N.log_len - (size_t)(start - N.log);
        /* A line longer than the buffer is dropped whole. */
        if (rest == sizeof N.log - 1) rest = 0;
        memmove(N.log, start, rest);
        N.log_len = rest;
    }
}

/* An answer for qname is about to be passed on with n addresses.  The
 * log is read first: dnsmasq logs before it answers, so a rebind line of
 * this answer is already in the pipe, and the record is written before the
 * program can act on the empty answer.  A rebind line for a name no entry
 * lists belongs to this answer when qname is listed and it holds no
 * address: the program asked for qname, and the record names it. */
static void check_answer(const char *qname, int n)
{
    read_log();
    if (N.rebound[0] && n == 0 && listed(qname)) record_private(qname);
    N.rebound[0] = '\0';
}

/* ---- the relay --------------------------------------------------------- */

void kgl_un_net_start(const kgl_un_policy *p)
{
    N.n = &p->net;
    N.allow = p->net.allow; /* the supervisor's own copy since the fork */
    for (size_t i = 0; i < N_PEND; i++) N.pend[i].fd = -1;
    if (N.n->events_fd >= 0) {
        int fl = fcntl(N.n->events_fd, F_GETFL);
        if (fl >= 0) fcntl(N.n->events_fd, F_SETFL, fl | O_NONBLOCK);
    }
    if (N.n->log_fd >= 0) {
        int fl = fcntl(N.n->log_fd, F_GETFL);
        if (fl >= 0) fcntl(N.n->log_fd, F_SETFL, fl | O_NONBLOCK);
    }
    N.resolver = (struct sockaddr_in){.sin_family = AF_INET,
                                      .sin_port = htons(p->net.resolver_port),
                                      .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    N.relay_addr =
        (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (size_t i = 0; i < N_TCPDNS; i++) N.tc[i].c = N.tc[i].u = -1;
    /* Network off: no resolver, so no relay for anyone to reach. */
    if (!p->net.resolver_port) return;
    socklen_t al = sizeof N.relay_addr;
    N.relay = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (N.relay >= 0 && (bind(N.relay, (struct sockaddr *)&N.relay_addr, sizeof N.relay_addr) < 0 ||
                         getsockname(N.relay, (struct sockaddr *)&N.relay_addr, &al) < 0)) {
        close(N.relay);
        N.relay = -1;
    }
    /* Without a relay every DNS query is refused (EACCES): closed. */
    N.tcp_relay_addr = N.relay_addr;
    N.tcp_relay_addr.sin_port = 0;
    al = sizeof N.tcp_relay_addr;
    N.tcp_relay = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (N.tcp_relay >= 0 &&
        (bind(N.tcp_relay, (struct sockaddr *)&N.tcp_relay_addr, sizeof N.tcp_relay_addr) < 0 ||
         listen(N.tcp_relay, N_TCPDNS) < 0 ||
         getsockname(N.tcp_relay, (struct sockaddr *)&N.tcp_relay_addr, &al) < 0)) {
        close(N.tcp_relay);
        N.tcp_relay = -1;
    }
    /* Without it every DNS connection over TCP is refused: closed. */
}

int kgl_un_net_fds(struct pollfd *pf, int max)
{
    int k = 0;
    if (N.relay >= 0 && k < max) pf[k++] = (struct pollfd){N.relay, POLLIN, 0};
    if (N.n->log_fd >= 0 && !N.log_ended && k < max)
        pf[k++] = (struct pollfd){N.n->log_fd, POLLIN, 0};
    if (N.tcp_relay >= 0 && k < max) pf[k++] = (struct pollfd){N.tcp_relay, POLLIN, 0};
    for (size_t i = 0; i < N_TCPDNS && k + 1 < max; i++)
        if (N.tc[i].c >= 0) {
            pf[k++] = (struct pollfd){N.tc[i].c, POLLIN, 0};
            pf[k++] = (struct pollfd){N.tc[i].u, POLLIN, 0};
        }
    for (size_t i = 0; i < N_PEND && k < max; i++)
        if (N.pend[i].fd >= 0) pf[k++] = (struct pollfd){N.pend[i].fd, POLLIN, 0};
    return k;
}

static void relay_query(void)
{
    unsigned char q[4096];
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    ssize_t n = recvfrom(N.relay, q, sizeof q, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
    if (n <= 0 || fl != sizeof from) return;
    char qname[NS_MAXDNAME];
    int rcode = 0;
    if (kgl_un_parse_answer(q, (size_t)n, qname, sizeof qname, &rcode, NULL, NULL) < 0) return;
    /* The resolver answers it NXDOMAIN; the record says who asked. */
    if (!listed(qname)) record(qname, 0, 0, "unlisted");
    size_t slot = 0;
    time_t oldest = 0;
    for (size_t i = 0; i < N_PEND; i++) {
        if (N.pend[i].fd < 0) {
            slot = i;
            break;
        }
        if (!oldest || N.pend[i].t < oldest) {
            oldest = N.pend[i].t;
            slot = i;
        }
    }
    if (N.pend[slot].fd >= 0) close(N.pend[slot].fd);
    int u = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    N.pend[slot].fd = -1;
    if (u < 0) return;
    if (connect(u, (struct sockaddr *)&N.resolver, sizeof N.resolver) < 0 ||
        send(u, q, (size_t)n, 0) != n) {
        close(u);
        return;
    }
    N.pend[slot].fd = u;
    N.pend[slot].client = from;
    N.pend[slot].t = now();
}

static void relay_answer(size_t i)
{
    unsigned char a[65536];
    ssize_t n = recv(N.pend[i].fd, a, sizeof a, MSG_DONTWAIT);
    if (n < 0 && errno == EAGAIN) return;
    close(N.pend[i].fd);
    N.pend[i].fd = -1;
    if (n <= 0) return;
    char qname[NS_MAXDNAME];
    int rcode = 0;
    learn_ctx c = {qname, 0};
    /* The addresses are allowed before the program can read them. */
    if (kgl_un_parse_answer(a, (size_t)n, qname, sizeof qname, &rcode, learn, &c) < 0) return;
    check_answer(qname, c.n);
    (void)sendto(N.relay, a, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&N.pend[i].client,
                 sizeof N.pend[i].client);
}

/* ---- DNS over TCP -------------------------------------------------------
 * The same as the UDP relay, on a stream: each message (a two-byte length
 * and a DNS message) the program sends is read whole, its name recorded
 * when no entry lists it, and passed to the filtering resolver; each
 * answer is read whole, its A records allowed, and only then passed on.
 * The program's connect to any address's port 53 is made to this
 * listener (inet_dest), so a lookup over TCP is a record as one over UDP
 * is (issue 40, defect 7). */

static void tc_close(size_t i)
{
    if (N.tc[i].c >= 0) close(N.tc[i].c);
    if (N.tc[i].u >= 0) close(N.tc[i].u);
    N.tc[i].c = N.tc[i].u = -1;
    N.tc[i].cn = N.tc[i].un = 0;
}

/* Both ends block for at most a second on a send: a program that does not
 * read its answers holds up only its own supervisor, briefly. */
static void tc_timeouts(int fd)
{
    struct timeval tv = {1, 0};
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

static void tc_accept(void)
{
    int c = accept4(N.tcp_relay, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) return;
    size_t slot = 0;
    time_t oldest = 0;
    for (size_t i = 0; i < N_TCPDNS; i++) {
        if (N.tc[i].c < 0) {
            slot = i;
            break;
        }
        if (!oldest || N.tc[i].t < oldest) {
            oldest = N.tc[i].t;
            slot = i;
        }
    }
    tc_close(slot);
    int u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (u >= 0) tc_timeouts(u);
    /* The resolver is this host's loopback: the connect is at once. */
    if (u < 0 || connect(u, (struct sockaddr *)&N.resolver, sizeof N.resolver) < 0) {
        if (u >= 0) close(u);
        close(c);
        return;
    }
    tc_timeouts(c);
    N.tc[slot].c = c;
    N.tc[slot].u = u;
    N.tc[slot].t = now();
}

static int send_all(int fd, const unsigned char *b, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, b, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        b += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Reads more of the message on fd into buf (have bytes so far); 1 when
 * it is whole, 0 when more is to come, -1 when the connection ended. */
static int read_message(int fd, unsigned char *buf, size_t *have)
{
    size_t want = *have < 2 ? 2 : 2 + ((size_t)buf[0] << 8 | buf[1]);
    ssize_t n = recv(fd, buf + *have, want - *have, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    if (n <= 0) return -1;
    *have += (size_t)n;
    if (*have == 2) want = 2 + ((size_t)buf[0] << 8 | buf[1]);
    return *have == want && want > 2;
}

static void tc_query_ready(size_t i)
{
    int r = read_message(N.tc[i].c, tc_query[i], &N.tc[i].cn);
    if (r < 0) tc_close(i);
    if (r <= 0) return;
    size_t len = N.tc[i].cn;
    N.tc[i].cn = 0;
    N.tc[i].t = now();
    char qname[NS_MAXDNAME];
    int rcode = 0;
    /* What is not a query it can read is not passed on. */
    if (kgl_un_parse_answer(tc_query[i] + 2, len - 2, qname, sizeof qname, &rcode, NULL, NULL) <
        0) {
        tc_close(i);
        return;
    }
    if (!listed(qname)) record(qname, 0, 0, "unlisted");
    if (send_all(N.tc[i].u, tc_query[i], len) < 0) tc_close(i);
}

static void tc_answer_ready(size_t i)
{
    int r = read_message(N.tc[i].u, tc_answer[i], &N.tc[i].un);
    if (r < 0) tc_close(i);
    if (r <= 0) return;
    size_t len = N.tc[i].un;
    N.tc[i].un = 0;
    char qname[NS_MAXDNAME];
    int rcode = 0;
    learn_ctx c = {qname, 0};
    /* The addresses are allowed before the program can read them. */
    if (kgl_un_parse_answer(tc_answer[i] + 2, len - 2, qname, sizeof qname, &rcode, learn, &c) <
        0) {
        tc_close(i);
        return;
    }
    check_answer(qname, c.n);
    if (send_all(N.tc[i].c, tc_answer[i], len) < 0) tc_close(i);
}

static void tc_ready(int fd)
{
    if (fd == N.tcp_relay) {
        tc_accept();
        return;
    }
    for (size_t i = 0; i < N_TCPDNS; i++) {
        if (N.tc[i].c >= 0 && fd == N.tc[i].c) tc_query_ready(i);
        if (N.tc[i].u >= 0 && fd == N.tc[i].u) tc_answer_ready(i);
    }
}

void kgl_un_net_ready(const struct pollfd *pf, int n)
{
    for (int k = 0; k < n; k++) {
        if (!pf[k].revents) continue;
        if (pf[k].fd == N.relay) {
            relay_query();
            continue;
        }
        if (pf[k].fd == N.n->log_fd) {
            read_log();
            continue;
        }
        tc_ready(pf[k].fd);
        for (size_t i = 0; i < N_PEND; i++)
            if (N.pend[i].fd == pf[k].fd) relay_answer(i);
    }
    time_t t = now();
    for (size_t i = 0; i < N_TCPDNS; i++)
        if (N.tc[i].c >= 0 && t - N.tc[i].t > 30) tc_close(i);
    for (size_t i = 0; i < N_PEND; i++)
        if (N.pend[i].fd >= 0 && t - N.pend[i].t > 10) {
            close(N.pend[i].fd);
            N.pend[i].fd = -1;
        }
    for (size_t i = 0; i < N_WORKERS; i++)
        if (N.workers[i] > 0 && waitpid(N.workers[i], NULL, WNOHANG) == N.workers[i])
            N.workers[i] = 0;
}

void kgl_un_net_reap(pid_t q, int *status, int *done)
{
    (void)q;
    (void)status;
    *done = 0;
    /* A worker still waiting serves a program that is gone. */
    for (size_t i = 0; i < N_WORKERS; i++)
        if (N.workers[i] > 0) {
            kill(N.workers[i], SIGKILL);
            while (waitpid(N.workers[i], NULL, 0) < 0 && errno == EINTR) {}
            N.workers[i] = 0;
        }
}

/* ---- the program's side ------------------------------------------------ */

static int write_mem(const sv *s, uint64_t addr, const void *buf, size_t len)
{
    struct iovec l = {(void *)(uintptr_t)buf, len}, r = {(void *)(uintptr_t)addr, len};
    ssize_t n = process_vm_writev(s->pid, &l, 1, &r, 1, 0);
    if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
        char mp[64];
        kgl_un_proc_path(mp, s->pid, "mem", -1);
        int fd = open(mp, O_WRONLY | O_CLOEXEC);
        n = fd >= 0 ? pwrite(fd, buf, len, (off_t)addr) : -1;
        if (fd >= 0) close(fd);
    }
    return n == (ssize_t)len ? 0 : EFAULT;
}

/* The thread group of thread tid, from /proc/<tid>/status; -1. */
static pid_t tgid_of(pid_t tid)
{
    char pp[64], buf[1024];
    kgl_un_proc_path(pp, tid, "status", -1);
    int fd = open(pp, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    const char *t = strstr(buf, "\nTgid:");
    long v = -1;
    return t && sscanf(t + 7, "%ld", &v) == 1 ? (pid_t)v : -1;
}

/* The program's descriptor fd, as the notified thread sees it (a thread
 * pidfd from Linux 6.9; before, its thread group's, whose table threads
 * share). */
static int take_fd(const sv *s, int fd)
{
    int pfd = (int)syscall(SYS_pidfd_open, s->pid, PIDFD_THREAD);
    if (pfd < 0) pfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
    if (pfd < 0) {
        pid_t g = tgid_of(s->pid);
        if (g > 0) pfd = (int)syscall(SYS_pidfd_open, g, 0);
    }
    if (pfd < 0) return -1;
    int d = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
    int e = errno;
    close(pfd);
    if (d >= 0 && !kgl_un_valid(s)) {
        close(d);
        e = ESRCH;
        d = -1;
    }
    errno = e;
    return d;
}

typedef struct sock {
    int fd, domain, type, proto;
} sock;

static int sock_info(sock *k)
{
    socklen_t l = sizeof(int);
    if (getsockopt(k->fd, SOL_SOCKET, SO_DOMAIN, &k->domain, &l) < 0) return errno;
    l = sizeof(int);
    if (getsockopt(k->fd, SOL_SOCKET, SO_TYPE, &k->type, &l) < 0) return errno;
    l = sizeof(int);
    if (getsockopt(k->fd, SOL_SOCKET, SO_PROTOCOL, &k->proto, &l) < 0) return errno;
    return 0;
}

static long run_op(int d, const op *o, int extra)
{
    if (o->connect) return connect(d, (const struct sockaddr *)&o->to, o->tolen);
    struct iovec io = {data, o->len};
    struct msghdr m = {.msg_name = o->tolen ? (void *)&o->to : NULL,
                       .msg_namelen = o->tolen,
                       .msg_iov = &io,
                       .msg_iovlen = 1,
                       .msg_control = o->ctllen ? ctl : NULL,
                       .msg_controllen = o->ctllen};
    /* MSG_NOSIGNAL: a broken pipe must not end the supervisor. */
    return sendmsg(d, &m, o->flags | extra | MSG_NOSIGNAL);
}

static void worker_answer(const sv *s, long r, int e)
{
    struct seccomp_notif_resp resp;
    memset(&resp, 0, sizeof resp);
    resp.id = s->id;
    if (r < 0)
        resp.error = -e;
    else
        resp.val = r;
    (void)ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/* Makes the call with the copies and closes d.  A send is tried without
 * waiting first; a send that would wait on a blocking socket, and a
 * connect that may wait (TCP, blocking), go to a worker, so that the
 * loop keeps answering the program's other calls. */
static result perform(const sv *s, int d, const op *o, int connect_waits)
{
    int fl = fcntl(d, F_GETFL);
    int nonblock = fl < 0 || (fl & O_NONBLOCK) || (!o->connect && (o->flags & MSG_DONTWAIT));
    if (!o->connect || nonblock || !connect_waits) {
        long r = run_op(d, o, o->connect ? 0 : MSG_DONTWAIT);
        int e = errno;
        if (r >= 0 || nonblock || o->connect || (e != EAGAIN && e != EWOULDBLOCK)) {
            close(d);
            return r < 0 ? err(e) : val(r);
        }
    }
    size_t w = 0;
    while (w < N_WORKERS && N.workers[w] > 0) w++;
    pid_t pid = w < N_WORKERS ? fork() : -1;
    if (pid == 0) {
        long r = run_op(d, o, 0);
        worker_answer(s, r, errno);
        _exit(0);
    }
    close(d);
    if (pid < 0) return err(EAGAIN);
    N.workers[w] = pid;
    return (result){R_NONE, 0, -1, 0};
}

static void map_put(int d, const struct sockaddr_in *ns)
{
    struct stat st;
    if (fstat(d, &st) < 0) return;
    for (size_t i = 0; i < N_MAP; i++)
        if (N.map[i].ino == st.st_ino && N.map[i].dev == st.st_dev) {
            N.map[i].ns = *ns;
            return;
        }
    size_t i = N.next_map++ % N_MAP;
    N.map[i].dev = st.st_dev;
    N.map[i].ino = st.st_ino;
    N.map[i].ns = *ns;
}

static const struct sockaddr_in *map_get(int d)
{
    struct stat st;
    if (fstat(d, &st) < 0) return NULL;
    for (size_t i = 0; i < N_MAP; i++)
        if (N.map[i].ino == st.st_ino && N.map[i].dev == st.st_dev && N.map[i].ino)
            return &N.map[i].ns;
    return NULL;
}

/* ---- the run's own servers --------------------------------------------- */

static int loopback(uint32_t a) { return (ntohl(a) >> 24) == 127; }

static void bound_put(int d)
{
    struct stat st;
    if (fstat(d, &st) < 0) return;
    for (size_t i = 0; i < N_BOUND; i++)
        if (N.bound[i].ino == st.st_ino) return;
    /* Full: the oldest gives way (its port is refused again, never
     * another allowed). */
    N.bound[N.next_bound++ % N_BOUND].ino = st.st_ino;
}

static int bound_has(unsigned long ino)
{
    for (size_t i = 0; i < N_BOUND; i++)
        if (N.bound[i].ino && (unsigned long)N.bound[i].ino == ino) return 1;
    return 0;
}

/* One line of /proc/net/tcp: "sl: 0100007F:1F90 00000000:0000 0A ... uid
 * timeout inode ...".  1 when it is a listener on addr:port whose socket
 * this run bound, -1 when it is a listener there (or on every address)
 * that is not the run's, 0 otherwise. */
static int listener_line(const char *line, uint32_t addr, unsigned port)
{
    unsigned la, lp, ra, rp, st;
    unsigned long ino;
    if (sscanf(line, " %*u: %x:%x %x:%x %x %*x:%*x %*x:%*x %*x %*u %*u %lu", &la, &lp, &ra, &rp,
               &st, &ino) != 6)
        return 0;
    /* The kernel prints the address as the host-order read of its four
     * bytes in network order: the same bytes as addr. */
    if (st != 0x0A || lp != port || ((uint32_t)la != addr && la != 0)) return 0;
    return (uint32_t)la == addr && bound_has(ino) ? 1 : -1;
}

/* Whether a process of this run listens on addr:port (loopback): the
 * listener the kernel shows there now is a socket this run's bind made,
 * and no other listens there (SO_REUSEPORT shares a port between
 * sockets of one uid: the kernel could hand the connection to the
 * host's).
 * The box shares the host's network namespace, so a host service on
 * loopback is refused unless listed, and so is another box's server
 * (its inode is its own supervisor's).  What remains is a race: the
 * run's listener closed and a host service bound the port between this
 * read and the connect (docs/landlock.md). */
static int run_listens(uint32_t addr, unsigned port)
{
    int fd = open("/proc/self/net/tcp", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[8192];
    size_t have = 0;
    int ours = 0, theirs = 0;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
        if (n < 0) theirs = 1; /* not read whole: not shown to be only ours */
        if (n <= 0) break;
        have += (size_t)n;
        buf[have] = '\0';
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            int k = listener_line(line, addr, port);
            ours |= k > 0;
            theirs |= k < 0;
            line = nl + 1;
        }
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == sizeof buf - 1) have = 0; /* no line is that long */
    }
    close(fd);
    return ours && !theirs;
}

/* Where an Internet socket's call goes, decided on the copies: 0 with
 * o->to rewritten where it must be, or an errno (recorded). */
static int inet_dest(const sock *k, op *o)
{
    const struct sockaddr_in *in = (const struct sockaddr_in *)&o->to;
    int tcp = k->type == SOCK_STREAM && k->proto == IPPROTO_TCP;
    int udp = k->type == SOCK_DGRAM && k->proto == IPPROTO_UDP;
    if (tcp && !o->connect) {
        o->tolen = 0; /* the kernel ignores it: the connected peer */
        return 0;
    }
    if (!o->tolen) return udp || tcp ? 0 : EACCES; /* the connected peer */
    if (o->to.ss_family == AF_UNSPEC && o->connect) return udp || tcp ? 0 : EACCES;
    if (o->to.ss_family != AF_INET) return EAFNOSUPPORT;
    if (o->tolen < sizeof *in) return EINVAL;
    unsigned port = ntohs(in->sin_port);
    uint32_t a = in->sin_addr.s_addr;
    /* Network off (no resolver): no name is looked up, nothing leaves. */
    int dns = N.n->resolver_port != 0;
    if (udp && port == 53 && dns) {
        if (N.relay < 0) return EACCES;
        map_put(k->fd, in);
        memcpy(&o->to, &N.relay_addr, sizeof N.relay_addr);
        return 0;
    }
    if (tcp && port == 53 && dns) {
        if (N.tcp_relay < 0) return ECONNREFUSED;
        memcpy(&o->to, &N.tcp_relay_addr, sizeof N.tcp_relay_addr);
        return 0;
    }
    if (tcp && port != 853 && port != 53 && allowed(a, port)) return 0;
    if (tcp && loopback(a) && run_listens(a, port)) return 0;
    record(NULL, a, port, never(a) ? "never" : "unanswered");
    return tcp ? ECONNREFUSED : EACCES;
}

/* Where the call goes, decided on the copies.  Network open: only a Unix
 * path is decided, every other address is made as asked (on the copy,
 * never CONTINUE: the descriptor could be a Unix socket by then). */
static result route(const sv *s, sock *k, op *o)
{
    int pin = -1, e = 0;
    switch (k->domain) {
    case AF_UNIX: e = o->tolen ? kgl_un_unix_dest(s, &o->to, &o->tolen, &pin) : 0; break;
    case AF_NETLINK: break;
    case AF_INET: e = N.n->open ? 0 : inet_dest(k, o); break;
    default: e = N.n->open ? 0 : EAFNOSUPPORT; break;
    }
    /* A Unix connect waits only for a full backlog: made here. */
    int waits = (k->domain == AF_INET || k->domain == AF_INET6) && k->type == SOCK_STREAM;
    result r = e ? err(e) : perform(s, k->fd, o, waits);
    if (e) close(k->fd);
    if (pin >= 0) close(pin);
    return r;
}

static int open_sock(const sv *s, uint64_t fd, sock *k)
{
    k->fd = take_fd(s, (int)(int32_t)(uint32_t)fd);
    if (k->fd < 0) return errno == ESRCH ? ESRCH : EBADF;
    int e = sock_info(k);
    if (e) {
        close(k->fd);
        k->fd = -1;
        return e == ENOTSOCK ? ENOTSOCK : e;
    }
    return 0;
}

static int read_addr(const sv *s, uint64_t addr, uint64_t len, op *o)
{
    if (!addr || !len) {
        o->tolen = 0;
        return 0;
    }
    if (len > sizeof o->to || len < sizeof(sa_family_t)) return EINVAL;
    o->tolen = (socklen_t)len;
    return kgl_un_read_mem(s, addr, &o->to, (size_t)len);
}

/* bind on an Internet socket: a server's address (a port asked for) only
 * on loopback; port 0 (a client's, the kernel picks the port as a send
 * would) on any.  The Landlock box cannot publish (--publish is refused),
 * so nothing outside may connect in. */
static int inet_bind(const op *o)
{
    const struct sockaddr_in *in = (const struct sockaddr_in *)&o->to;
    if (o->to.ss_family != AF_INET) return EAFNOSUPPORT;
    if (o->tolen < sizeof *in) return EINVAL;
    if (in->sin_port == 0 || loopback(in->sin_addr.s_addr)) return 0;
    record(NULL, in->sin_addr.s_addr, ntohs(in->sin_port), "listen");
    return EACCES;
}

/* bind on a Unix socket to a path: made in the directory the program
 * names, opened once (the supervisor's rights are the program's outside
 * the managed directories, where the program could make nothing: there
 * it is refused, as the program's Landlock rules would). */
static int unix_bind(const sv *s, op *o, int *dirfd)
{
    struct sockaddr_un *u = (struct sockaddr_un *)&o->to;
    size_t off = offsetof(struct sockaddr_un, sun_path);
    size_t plen = o->tolen > off ? o->tolen - off : 0;
    if (!plen || u->sun_path[0] == '\0') return 0; /* abstract, or autobind */
    char path[sizeof u->sun_path + 1], dir[sizeof path + 2], leaf[sizeof path], pp[64];
    memcpy(path, u->sun_path, plen);
    path[plen] = '\0';
    int slash = 0, e = kgl_un_split(path, strlen(path), dir, sizeof dir, leaf, sizeof leaf, &slash);
    if (e) return e;
    if (slash) return EINVAL;
    int base = AT_FDCWD;
    if (dir[0] != '/') {
        kgl_un_proc_path(pp, s->pid, "cwd", -1);
        base = open(pp, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (base < 0) return errno;
    }
    *dirfd = openat(base, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    e = errno;
    if (base >= 0) close(base);
    if (*dirfd < 0) return e;
    struct stat st;
    if (fstat(*dirfd, &st) < 0) return errno;
    for (size_t i = 0; i < s->p->n_managed; i++)
        if (s->p->managed[i].dev == st.st_dev && s->p->managed[i].ino == st.st_ino) return EACCES;
    int n = snprintf(u->sun_path, sizeof u->sun_path, "/proc/self/fd/%d/%s", *dirfd, leaf);
    if (n < 0 || (size_t)n >= sizeof u->sun_path) return ENAMETOOLONG;
    o->tolen = (socklen_t)(off + (size_t)n + 1);
    return 0;
}

/* bind, decided and made on the copies (the kernel never re-reads the
 * address, nor which socket the descriptor is). */
static result do_bind(const sv *s, const uint64_t *a)
{
    op o;
    sock k;
    memset(&o, 0, sizeof o);
    int e = open_sock(s, a[0], &k);
    if (e) return err(e);
    int dirfd = -1;
    e = read_addr(s, a[1], a[2], &o);
    if (!e && !o.tolen) e = EINVAL;
    if (!e) {
        switch (k.domain) {
        case AF_INET: e = inet_bind(&o); break;
        case AF_UNIX: e = unix_bind(s, &o, &dirfd); break;
        case AF_NETLINK: break;
        default: e = EAFNOSUPPORT; break;
        }
    }
    /* A Unix socket's file takes the caller's umask: the program's. */
    int mask = dirfd >= 0 ? kgl_un_caller_umask(s) : -1;
    mode_t old = mask >= 0 ? umask((mode_t)mask) : 0;
    if (!e && bind(k.fd, (const struct sockaddr *)&o.to, o.tolen) < 0) e = errno;
    if (mask >= 0) umask(old);
    if (!e && k.domain == AF_INET) bound_put(k.fd);
    close(k.fd);
    if (dirfd >= 0) close(dirfd);
    return e ? err(e) : val(0);
}

/* listen, made on the supervisor's copy of the socket: an Internet one
 * only on a loopback address this run bound; one never bound (which the
 * kernel would bind to every address) is bound to 127.0.0.1 first. */
static result do_listen(const sv *s, const uint64_t *a)
{
    sock k;
    int e = open_sock(s, a[0], &k);
    if (e) return err(e);
    if (k.domain == AF_INET) {
        struct sockaddr_in at;
        socklen_t l = sizeof at;
        if (getsockname(k.fd, (struct sockaddr *)&at, &l) < 0) {
            e = errno;
        } else if (at.sin_port == 0) {
            at = (struct sockaddr_in){.sin_family = AF_INET,
                                      .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
            if (bind(k.fd, (struct sockaddr *)&at, sizeof at) < 0)
                e = errno;
            else
                bound_put(k.fd);
        } else if (!loopback(at.sin_addr.s_addr)) {
            record(NULL, at.sin_addr.s_addr, ntohs(at.sin_port), "listen");
            e = EACCES;
        }
    } else if (k.domain != AF_UNIX && k.domain != AF_NETLINK) {
        e = EOPNOTSUPP;
    }
    if (!e && listen(k.fd, (int)a[1]) < 0) e = errno;
    close(k.fd);
    return e ? err(e) : val(0);
}

static result do_connect(const sv *s, const uint64_t *a)
{
    op o;
    sock k;
    memset(&o, 0, sizeof o);
    o.connect = 1;
    int e = open_sock(s, a[0], &k);
    if (e) return err(e);
    if ((e = read_addr(s, a[1], a[2], &o)) != 0 || !o.tolen) {
        close(k.fd);
        return err(e ? e : EINVAL);
    }
    return route(s, &k, &o);
}

/* The data of a send, gathered from the program's iovecs once.  A
 * stream takes what fits (a short send); a datagram must fit whole. */
static int gather(const sv *s, const struct iovec *iov, size_t n, int stream, op *o)
{
    o->len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = iov[i].iov_len;
        if (l > NET_BUF - o->len) {
            if (!stream) return EMSGSIZE;
            l = NET_BUF - o->len;
        }
        if (l && kgl_un_read_mem(s, (uint64_t)(uintptr_t)iov[i].iov_base, data + o->len, l))
            return EFAULT;
        o->len += l;
        if (o->len == NET_BUF) break;
    }
    return 0;
}

static void close_ctl_fds(void)
{
    for (size_t i = 0; i < n_ctl_fds; i++) close(ctl_fds[i]);
    n_ctl_fds = 0;
}

/* The control data, copied; descriptors passed with SCM_RIGHTS become
 * the same files, taken from the program. */
static int read_control(const sv *s, const struct msghdr *m, op *o)
{
    o->ctllen = 0;
    if (!m->msg_control || !m->msg_controllen) return 0;
    if (m->msg_controllen > NET_CTL) return ENOBUFS;
    int e = kgl_un_read_mem(s, (uint64_t)(uintptr_t)m->msg_control, ctl, m->msg_controllen);
    if (e) return e;
    o->ctllen = (socklen_t)m->msg_controllen;
    struct msghdr h = {.msg_control = ctl, .msg_controllen = o->ctllen};
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        if (c->cmsg_len < CMSG_LEN(0)) return EINVAL;
        size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        unsigned char *p = CMSG_DATA(c);
        for (size_t i = 0; i < nfd; i++) {
            int fd;
            memcpy(&fd, p + i * sizeof fd, sizeof fd);
            int mine = take_fd(s, fd);
            if (mine < 0 || n_ctl_fds >= sizeof ctl_fds / sizeof ctl_fds[0]) {
                if (mine >= 0) close(mine);
                return EBADF;
            }
            ctl_fds[n_ctl_fds++] = mine;
            memcpy(p + i * sizeof fd, &mine, sizeof mine);
        }
    }
    return 0;
}

/* One struct msghdr of the program's, sent on k. */
static result send_msg(const sv *s, sock *k, const struct msghdr *m, int flags)
{
    static struct iovec iov[NET_IOV];
    op o;
    memset(&o, 0, sizeof o);
    o.flags = flags;
    int e = 0;
    if (m->msg_iovlen > NET_IOV) e = EMSGSIZE;
    if (!e && m->msg_iovlen)
        e = kgl_un_read_mem(s, (uint64_t)(uintptr_t)m->msg_iov, iov, m->msg_iovlen * sizeof *iov);
    if (!e) e = gather(s, iov, m->msg_iovlen, k->type == SOCK_STREAM, &o);
    if (!e) e = read_addr(s, (uint64_t)(uintptr_t)m->msg_name, m->msg_namelen, &o);
    if (!e) e = read_control(s, m, &o);
    result r = e ? err(e) : route(s, k, &o);
    if (e) close(k->fd);
    close_ctl_fds();
    return r;
}

static result do_sendto(const sv *s, const uint64_t *a)
{
    sock k;
    op o;
    memset(&o, 0, sizeof o);
    o.flags = (int)a[3];
    int e = open_sock(s, a[0], &k);
    if (e) return err(e);
    struct iovec one = {(void *)(uintptr_t)a[1], (size_t)a[2]};
    e = gather(s, &one, 1, k.type == SOCK_STREAM, &o);
    if (!e) e = read_addr(s, a[4], a[5], &o);
    if (e) {
        close(k.fd);
        return err(e);
    }
    return route(s, &k, &o);
}

static result do_sendmsg(const sv *s, const uint64_t *a)
{
    struct msghdr m;
    sock k;
    int e = kgl_un_read_mem(s, a[1], &m, sizeof m);
    if (e) return err(e);
    if ((e = open_sock(s, a[0], &k)) != 0) return err(e);
    return send_msg(s, &k, &m, (int)a[2]);
}

static result do_sendmmsg(const sv *s, const uint64_t *a)
{
    unsigned n = (unsigned)a[2] > N_MMSG ? N_MMSG : (unsigned)a[2];
    unsigned sent = 0;
    result r = val(0);
    for (unsigned i = 0; i < n; i++) {
        struct mmsghdr mm;
        sock k;
        uint64_t at = a[1] + (uint64_t)i * sizeof mm;
        int e = kgl_un_read_mem(s, at, &mm, sizeof mm);
        if (!e) e = open_sock(s, a[0], &k);
        if (e) {
            r = err(e);
            break;
        }
        /* Each after the first never waits: what was sent is counted. */
        r = send_msg(s, &k, &mm.msg_hdr, (int)a[3] | (i ? MSG_DONTWAIT : 0));
        if (r.kind != R_VAL) break;
        unsigned len = (unsigned)r.val;
        if (write_mem(s, at + offsetof(struct mmsghdr, msg_len), &len, sizeof len)) break;
        sent++;
    }
    if (sent) return val(sent);
    return r.kind == R_VAL ? val(0) : r;
}

/* An answer relayed to a socket the program asked a resolver on: the
 * sender's address it sees is the resolver it asked. */
static result do_recvfrom(const sv *s, const uint64_t *a)
{
    int d = take_fd(s, (int)(int32_t)(uint32_t)a[0]);
    if (d < 0) return CONT;
    const struct sockaddr_in *ns = map_get(d);
    socklen_t alen = 0;
    if (!ns || a[5] == 0 || kgl_un_read_mem(s, a[5], &alen, sizeof alen)) {
        close(d);
        return CONT;
    }
    struct sockaddr_in from;
    socklen_t fl = sizeof from;
    size_t want = a[2] > NET_BUF ? NET_BUF : (size_t)a[2];
    int flags = (int)a[3];
    ssize_t n = recvfrom(d, data, want, flags | MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
    int e = errno, fst = fcntl(d, F_GETFL);
    close(d);
    if (n < 0) {
        /* Nothing yet on a blocking socket: the kernel waits (and the
         * sender's address is then the relay's). */
        if (e == EAGAIN && fst >= 0 && !(fst & O_NONBLOCK) && !(flags & MSG_DONTWAIT)) return CONT;
        return err(e);
    }
    if (fl == sizeof from && from.sin_addr.s_addr == N.relay_addr.sin_addr.s_addr &&
        from.sin_port == N.relay_addr.sin_port)
        from = *ns;
    size_t copy = (size_t)n < want ? (size_t)n : want;
    socklen_t out = alen < fl ? alen : fl;
    if ((copy && write_mem(s, a[1], data, copy)) || (out && write_mem(s, a[4], &from, out)) ||
        write_mem(s, a[5], &fl, sizeof fl))
        return err(EFAULT);
    return val(n);
}

result kgl_un_net_handle(const sv *s, const struct seccomp_notif *n)
{
    uint64_t a[6];
    for (int i = 0; i < 6; i++) a[i] = n->data.args[i];
    switch (n->data.nr) {
    case SYS_connect: return do_connect(s, a);
    case SYS_sendto: return do_sendto(s, a);
    case SYS_sendmsg: return do_sendmsg(s, a);
    case SYS_sendmmsg: return do_sendmmsg(s, a);
    case SYS_recvfrom: return do_recvfrom(s, a);
    case SYS_bind: return do_bind(s, a);
    case SYS_listen: return do_listen(s, a);
    default: return err(EINVAL);
    }
}
