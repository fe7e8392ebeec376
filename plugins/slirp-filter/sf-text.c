/* sf-text.c: everything of the slirp-filter backend that is text or a
 * table: host validation, the entries, the nftables ruleset, the dnsmasq
 * configuration, resolv.conf, the slirp4netns argv, the published ports'
 * requests.  No processes. */
#include "sf-internal.h"

#include "kgate/kgate-hostspec.h"
#include "kgate/kgate-linux.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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
        sf_entry e;
        char name[SF_NAME_SIZE];
        const char *why = "invalid";
        if (sf_entry_parse(hosts->v[i], &e, name, &why) < 0)
            /* The entry is not printed as-is: it may hold a newline. */
            return kgate_err_set(
                err, EINVAL, "allow_hosts: entry %zu is not a valid host name (%s)", i + 1, why);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Entries                                                                   */
/* ------------------------------------------------------------------------ */

int sf_entry_parse(const char *text, sf_entry *out, char buf[SF_NAME_SIZE], const char **why)
{
    static const char *dummy;
    if (!why) why = &dummy;
    memset(out, 0, sizeof *out);
    kgate_hostspec h;
    if (!text || kgate_hostspec_parse(text, &h, why) < 0) {
        if (!text) *why = "no entry";
        return -1;
    }
    _Static_assert(sizeof h.name == SF_NAME_SIZE, "a name buffer holds any name");
    memcpy(buf, h.name, strnlen(h.name, SF_NAME_SIZE - 1) + 1);
    buf[SF_NAME_SIZE - 1] = '\0';
    out->name = buf;
    out->wildcard = h.wildcard;
    out->port = h.port;
    out->host_loopback = h.host_loopback;
    /* The parser lets an all-numeric name through only as a dotted quad. */
    struct in_addr a;
    out->is_addr = !h.wildcard && inet_pton(AF_INET, h.name, &a) == 1;
    return 0;
}

/* 1 when name is base or ends with "." base (case-insensitive). */
static int under_or_at(const char *name, const char *base, int strictly)
{
    size_t ln = strlen(name), lb = strlen(base);
    if (ln == lb) return !strictly && strcasecmp(name, base) == 0;
    return ln > lb && name[ln - lb - 1] == '.' && strcasecmp(name + ln - lb, base) == 0;
}

int sf_entry_matches(const sf_entry *e, const char *name)
{
    if (e->is_addr) return 0;
    if (!e->wildcard) return strcasecmp(name, e->name) == 0;
    return under_or_at(name, e->name, 1);
}

/* Room for every entry's name: a canonical name is never longer than
 * its entry (lower case, without "*." or ":port"; a literal's dotted quad
 * is what inet_pton read back), and sf_filter_build checks each. */
static size_t names_room(const kgate_strlist *hosts)
{
    size_t room = 1;
    for (size_t i = 0; hosts && i < hosts->n; i++)
        room += hosts->v[i] ? strnlen(hosts->v[i], SF_NAME_SIZE) + 1 : 0;
    return room;
}

int sf_filter_build(const kgate_strlist *hosts, sf_filter *f, kgate_err *err)
{
    memset(f, 0, sizeof *f);
    size_t n = hosts ? hosts->n : 0, room = names_room(hosts), used = 0;
    f->e = calloc(n ? n : 1, sizeof *f->e);
    f->names = malloc(room);
    f->ports = calloc(n ? n : 1, sizeof *f->ports);
    f->loop_ports = calloc(n ? n : 1, sizeof *f->loop_ports);
    if (!f->e || !f->names || !f->ports || !f->loop_ports) {
        sf_filter_free(f);
        return kgate_err_set(err, ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const char *why = NULL;
        char name[SF_NAME_SIZE];
        sf_entry *e = &f->e[f->n];
        if (sf_entry_parse(hosts->v[i], e, name, &why) < 0) {
            sf_filter_free(f);
            /* The entry is not printed as-is: it may hold a newline. */
            return kgate_err_set(
                err, EINVAL, "allow_hosts: entry %zu is not a valid host name (%s)", i + 1, why);
        }
        size_t len = strlen(name) + 1;
        if (len > room - used) { /* cannot be (names_room); refuse, never overrun */
            sf_filter_free(f);
            return kgate_err_set(err, EINVAL, "allow_hosts: entry %zu: its name does not fit",
                                 i + 1);
        }
        e->name = memcpy(f->names + used, name, len);
        used += len;
        if (e->host_loopback) {
            /* Not an entry of e (see sf_filter): its slot is reused. */
            int dup = 0;
            for (size_t k = 0; k < f->n_loop && !dup; k++) dup = f->loop_ports[k] == e->port;
            if (!dup) f->loop_ports[f->n_loop++] = e->port;
            memset(e, 0, sizeof *e);
            continue;
        }
        f->n++;
        int seen = 0;
        for (size_t k = 0; k < f->n_ports && !seen; k++) seen = f->ports[k] == e->port;
        if (!seen) f->ports[f->n_ports++] = e->port;
        if (e->is_addr) {
            struct in_addr a;
            inet_pton(AF_INET, e->name, &a);
            if (sf_filter_add_fixed(f, a.s_addr, e->port, 1) < 0) {
                sf_filter_free(f);
                return kgate_err_set(err, ENOMEM, "out of memory");
            }
        }
    }
    return 0;
}

int sf_filter_add_fixed(sf_filter *f, unsigned addr, unsigned port, int explicit)
{
    for (size_t i = 0; i < f->n_fixed; i++)
        if (f->fixed[i].addr == addr && f->fixed[i].port == port) {
            f->fixed[i].explicit |= explicit;
            return 0;
        }
    if (f->n_fixed == f->cap_fixed) {
        size_t cap = f->cap_fixed ? f->cap_fixed * 2 : 16;
        sf_fixed *more = realloc(f->fixed, cap * sizeof *more);
        if (!more) return -1;
        f->fixed = more;
        f->cap_fixed = cap;
    }
    f->fixed[f->n_fixed++] = (sf_fixed){addr, port, explicit};
    return 0;
}

int sf_filter_add_hosts_text(sf_filter *f, const char *text)
{
    /* Only names: a filter without one has nothing to look up. */
    int any_name = 0;
    for (size_t i = 0; i < f->n && !any_name; i++) any_name = !f->e[i].is_addr;
    if (!any_name || !text) return 0;
    while (*text) {
        size_t len = strcspn(text, "\n");
        char line[1024];
        if (len < sizeof line) {
            memcpy(line, text, len);
            line[len] = '\0';
            line[strcspn(line, "#")] = '\0';
            char *save = NULL;
            char *addr = strtok_r(line, " \t\r", &save);
            struct in_addr a;
            if (addr && inet_pton(AF_INET, addr, &a) == 1)
                for (char *nm = strtok_r(NULL, " \t\r", &save); nm;
                     nm = strtok_r(NULL, " \t\r", &save))
                    for (size_t i = 0; i < f->n; i++)
                        if (sf_entry_matches(&f->e[i], nm) &&
                            sf_filter_add_fixed(f, a.s_addr, f->e[i].port, 0) < 0)
                            return -1;
        }
        text += len;
        if (*text) text++;
    }
    return 0;
}

void sf_filter_free(sf_filter *f)
{
    free(f->e);
    free(f->names);
    free(f->ports);
    free(f->loop_ports);
    free(f->fixed);
    free(f->self.v4);
    free(f->self.v6);
    memset(f, 0, sizeof *f);
}

/* ------------------------------------------------------------------------ */
/* Addresses never reachable through a name                                  */
/* ------------------------------------------------------------------------ */

/* slirp4netns makes the sandbox's connections from the host's network
 * namespace, so an allowed name whose answer is one of these reaches a
 * service of the host or of its cloud, not a site: loopback and 0/8 (the
 * host's own), slirp's 10.0.2.0/24 (10.0.2.2 is the host), link-local
 * (169.254.169.254: AWS, GCP, Azure, OpenStack metadata), Alibaba's
 * 100.100.100.200 and Azure's 168.63.129.16 (outside every private
 * range, so dnsmasq's rebind guard lets them through). */
const sf_range sf_never_v4_ranges[] = {
    {"0.0.0.0/8", 0x00000000u, 8},        {"10.0.2.0/24", 0x0a000200u, 24},
    {"100.100.100.200", 0x646464c8u, 32}, {"127.0.0.0/8", 0x7f000000u, 8},
    {"168.63.129.16", 0xa83f8110u, 32},   {"169.254.0.0/16", 0xa9fe0000u, 16},
};
const size_t sf_never_v4_n = sizeof sf_never_v4_ranges / sizeof sf_never_v4_ranges[0];

/* The IPv6 forms: unspecified, loopback, link-local, AWS's IPv6 metadata
 * address, and the v4-mapped form of every IPv4 range above (a socket
 * that connects to ::ffff:a.b.c.d sends IPv4, but the rule must not depend
 * on that). */
const char *const sf_never_v6_static[] = {
    "::",
    "::1",
    "fe80::/10",
    "fd00:ec2::254",
    "::ffff:0.0.0.0/104",
    "::ffff:10.0.2.0/120",
    "::ffff:100.100.100.200",
    "::ffff:127.0.0.0/104",
    "::ffff:168.63.129.16",
    "::ffff:169.254.0.0/112",
};
const size_t sf_never_v6_n = sizeof sf_never_v6_static / sizeof sf_never_v6_static[0];

static int in_static_v4(unsigned addr)
{
    unsigned h = ntohl(addr);
    for (size_t i = 0; i < sf_never_v4_n; i++) {
        unsigned bits = sf_never_v4_ranges[i].bits;
        unsigned mask = bits ? ~0u << (32 - bits) : 0;
        if ((h & mask) == sf_never_v4_ranges[i].net) return 1;
    }
    return 0;
}

int sf_never_v4(const sf_filter *f, unsigned addr)
{
    if (in_static_v4(addr)) return 1;
    for (size_t i = 0; i < f->self.n4; i++)
        if (f->self.v4[i] == addr) return 1;
    return 0;
}

int sf_explicit_v4(const sf_filter *f, unsigned addr)
{
    for (size_t i = 0; i < f->n_fixed; i++)
        if (f->fixed[i].explicit && f->fixed[i].addr == addr) return 1;
    return 0;
}

/* Covered by sf_never_v6_static already: ::, ::1, fe80::/10,
 * fd00:ec2::254, and v4-mapped forms (written for every IPv4 address
 * anyway).  nft refuses an element twice in an interval set. */
static int in_static_v6(const unsigned char *a)
{
    static const unsigned char zero[16];
    static const unsigned char ec2[16] = {0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0,
                                          0,    0, 0,    0,    0, 0, 2, 0x54};
    if (memcmp(a, zero, 15) == 0 && (a[15] == 0 || a[15] == 1)) return 1;
    if (memcmp(a, ec2, 16) == 0) return 1;
    if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) return 1;
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(a, mapped, 12) == 0;
}

int sf_filter_add_self(sf_filter *f, int family, const void *addr)
{
    if (family == AF_INET) {
        unsigned a;
        memcpy(&a, addr, 4);
        if (sf_never_v4(f, a)) return 0;
        unsigned *more = realloc(f->self.v4, (f->self.n4 + 1) * sizeof *more);
        if (!more) return -1;
        f->self.v4 = more;
        f->self.v4[f->self.n4++] = a;
        return 0;
    }
    if (family != AF_INET6 || in_static_v6(addr)) return 0;
    for (size_t i = 0; i < f->self.n6; i++)
        if (memcmp(f->self.v6[i], addr, 16) == 0) return 0;
    unsigned char(*more)[16] = realloc(f->self.v6, (f->self.n6 + 1) * sizeof *more);
    if (!more) return -1;
    f->self.v6 = more;
    memcpy(f->self.v6[f->self.n6++], addr, 16);
    return 0;
}

int sf_filter_add_self_addrs(sf_filter *f, kgate_err *err)
{
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) < 0)
        return kgate_err_set(err, errno, "cannot read the host's own addresses: %s",
                             strerror(errno));
    int r = 0;
    for (struct ifaddrs *i = ifs; i && r == 0; i = i->ifa_next) {
        if (!i->ifa_addr) continue;
        if (i->ifa_addr->sa_family == AF_INET)
            r = sf_filter_add_self(f, AF_INET,
                                   &((const struct sockaddr_in *)i->ifa_addr)->sin_addr);
        else if (i->ifa_addr->sa_family == AF_INET6)
            r = sf_filter_add_self(f, AF_INET6,
                                   &((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr);
    }
    freeifaddrs(ifs);
    return r < 0 ? kgate_err_set(err, ENOMEM, "out of memory") : 0;
}

int sf_filter_for_policy(const kgate_strlist *hosts, sf_filter *f, kgate_err *err)
{
    if (sf_filter_build(hosts, f, err) < 0) return -1;
    /* The program's resolver asks /etc/hosts before DNS. */
    char *text = sf_read_small_file("/etc/hosts");
    int r = sf_filter_add_hosts_text(f, text);
    free(text);
    if (r < 0) {
        sf_filter_free(f);
        return kgate_err_set(err, ENOMEM, "out of memory");
    }
    if (sf_filter_add_self_addrs(f, err) < 0) {
        sf_filter_free(f);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The nftables ruleset                                                      */
/* ------------------------------------------------------------------------ */

static void set_name(char *out, size_t outsz, unsigned port)
{
    if (port == 0)
        snprintf(out, outsz, "any");
    else
        snprintf(out, outsz, "p%u", port);
}

static int has_name_entry(const sf_filter *f, unsigned port)
{
    for (size_t i = 0; i < f->n; i++)
        if (!f->e[i].is_addr && f->e[i].port == port) return 1;
    return 0;
}

/* "tcp dport 443 " or "meta l4proto tcp " for every port. */
static void port_match(FILE *o, unsigned port)
{
    if (port)
        fprintf(o, "tcp dport %u ", port);
    else
        fputs("meta l4proto tcp ", o);
}

/* The fixed addresses of one kind (explicit: literal entries; else
 * /etc/hosts'), one rule per port. */
static void fixed_rules(FILE *o, const sf_filter *f, int explicit)
{
    for (size_t p = 0; p < f->n_ports; p++) {
        int first = 1;
        for (size_t i = 0; i < f->n_fixed; i++) {
            if (f->fixed[i].port != f->ports[p] || !f->fixed[i].explicit != !explicit) continue;
            char a[INET_ADDRSTRLEN];
            struct in_addr in = {.s_addr = f->fixed[i].addr};
            inet_ntop(AF_INET, &in, a, sizeof a);
            fprintf(o, "%s%s", first ? "\t\tip daddr { " : ", ", a);
            first = 0;
        }
        if (first) continue;
        fputs(" } ", o);
        port_match(o, f->ports[p]);
        fputs("accept\n", o);
    }
}

/* The never sets (sf_never_v4): the static ranges and the host's own
 * addresses, IPv6 with the v4-mapped form of every IPv4 one. */
static void never_sets(FILE *o, const sf_filter *f)
{
    fputs("\tset never4 {\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\telements = { ", o);
    for (size_t i = 0; i < sf_never_v4_n; i++)
        fprintf(o, "%s%s", i ? ", " : "", sf_never_v4_ranges[i].text);
    char a[INET6_ADDRSTRLEN];
    for (size_t i = 0; i < f->self.n4; i++)
        fprintf(o, ", %s", inet_ntop(AF_INET, &f->self.v4[i], a, sizeof a));
    fputs(" }\n\t}\n", o);
    fputs("\tset never6 {\n\t\ttype ipv6_addr\n\t\tflags interval\n\t\telements = { ", o);
    for (size_t i = 0; i < sf_never_v6_n; i++)
        fprintf(o, "%s%s", i ? ", " : "", sf_never_v6_static[i]);
    for (size_t i = 0; i < f->self.n4; i++)
        fprintf(o, ", ::ffff:%s", inet_ntop(AF_INET, &f->self.v4[i], a, sizeof a));
    for (size_t i = 0; i < f->self.n6; i++)
        fprintf(o, ", %s", inet_ntop(AF_INET6, f->self.v6[i], a, sizeof a));
    fputs(" }\n\t}\n", o);
}

char *sf_nft_ruleset(const sf_filter *f)
{
    char *buf = NULL;
    size_t sz = 0;
    FILE *o = open_memstream(&buf, &sz);
    if (!o) return NULL;
    char sn[16];
    fputs("table inet " SF_NFT_TABLE " {\n", o);
    /* One set of answered addresses per port (names only: literals and
     * /etc/hosts addresses are fixed, below). */
    for (size_t p = 0; p < f->n_ports; p++) {
        if (!has_name_entry(f, f->ports[p])) continue;
        set_name(sn, sizeof sn, f->ports[p]);
        fprintf(o,
                "\tset %s {\n\t\ttype ipv4_addr\n\t\tflags timeout\n\t\ttimeout " SF_SET_TIMEOUT
                "\n\t\tsize %d\n\t}\n",
                sn, SF_SET_SIZE);
    }
    never_sets(o, f);
    fputs("\tchain output {\n"
          "\t\ttype filter hook output priority filter; policy drop;\n"
          /* Queries to the resolver carry the mark on their connection;
           * dnsmasq --conntrack puts it on its own upstream query. */
          "\t\tip daddr " SF_RESOLVER_ADDR " meta l4proto { tcp, udp } th dport 53 "
          "ct mark set " SF_QUERY_MARK " accept\n"
          /* Per packet, before any connection state: a socket of the
           * program that takes over a port dnsmasq used is not marked. */
          "\t\tip daddr " SF_DNS_ADDR " meta l4proto { tcp, udp } th dport 53 "
          "meta mark " SF_QUERY_MARK " accept\n"
          "\t\tmeta l4proto { tcp, udp } th dport { 53, 853 } jump refuse\n"
          "\t\toifname \"lo\" accept\n"
          "\t\tct state established,related accept\n"
          /* The kernel's own IPv6 chatter on tap0 (neighbour discovery,
           * MLD): nobody's connection, so not reported. */
          "\t\tip6 daddr ff02::/16 drop\n",
          o);
    /* A literal entry is the user naming that address: it may be one of
     * the never addresses, so it comes first. */
    fixed_rules(o, f, 1);
    /* localhost:port entries: the host's loopback through slirp4netns,
     * those TCP ports only (before the never sets, which hold 10.0.2.0/24). */
    for (size_t i = 0; i < f->n_loop; i++)
        fprintf(o, "\t\tip daddr " SF_HOST_ADDR " tcp dport %u accept\n", f->loop_ports[i]);
    /* Before every allow set and /etc/hosts' addresses: whatever the
     * resolver answers, no name reaches the host or a metadata service. */
    fputs("\t\tip daddr @never4 jump refuse\n"
          "\t\tip6 daddr @never6 jump refuse\n"
          "\t\tmeta nfproto ipv6 jump refuse\n",
          o);
    for (size_t p = 0; p < f->n_ports; p++) {
        if (!has_name_entry(f, f->ports[p])) continue;
        set_name(sn, sizeof sn, f->ports[p]);
        fprintf(o, "\t\tip daddr @%s ", sn);
        port_match(o, f->ports[p]);
        fputs("accept\n", o);
    }
    fixed_rules(o, f, 0);
    fputs("\t\tjump refuse\n"
          "\t}\n"
          /* Logged for the event watcher (NFLOG), then refused so that the
           * program fails at once instead of after a timeout. */
          "\tchain refuse {\n",
          o);
    fprintf(o, "\t\tlog group %d\n", SF_NFLOG_GROUP);
    fputs("\t\tmeta l4proto tcp reject with tcp reset\n"
          "\t\treject with icmpx admin-prohibited\n"
          "\t}\n"
          "}\n",
          o);
    if (fclose(o) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ------------------------------------------------------------------------ */
/* The dnsmasq configuration                                                 */
/* ------------------------------------------------------------------------ */

/* The name entries sorted by name, then exact before wildcard: equal
 * names are neighbours, and a base is found by binary search, so 10,000
 * entries cost n log n, not n squared. */
typedef struct sorted {
    const sf_entry **v;
    size_t n;
} sorted;

static int by_name(const void *a, const void *b)
{
    const sf_entry *x = *(const sf_entry *const *)a, *y = *(const sf_entry *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->wildcard - y->wildcard;
}

static int sorted_make(const sf_filter *f, sorted *out)
{
    out->n = 0;
    out->v = malloc((f->n ? f->n : 1) * sizeof *out->v);
    if (!out->v) return -1;
    for (size_t i = 0; i < f->n; i++)
        if (!f->e[i].is_addr) out->v[out->n++] = &f->e[i];
    qsort(out->v, out->n, sizeof *out->v, by_name);
    return 0;
}

/* The first entry named name (either kind), or out->n. */
static size_t sorted_find(const sorted *s, const char *name)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->v[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && strcmp(s->v[lo]->name, name) == 0 ? lo : s->n;
}

/* Marks in want[] (by index in f->ports) the ports of the entries named
 * name; wildcards_only: only its *.name entries. */
static void mark_ports(const sf_filter *f, const sorted *s, const char *name, int wildcards_only,
                       unsigned char *want)
{
    for (size_t i = sorted_find(s, name); i < s->n && strcmp(s->v[i]->name, name) == 0; i++) {
        if (wildcards_only && !s->v[i]->wildcard) continue;
        for (size_t p = 0; p < f->n_ports; p++)
            if (f->ports[p] == s->v[i]->port) want[p] = 1;
    }
}

static void conf_header(FILE *o, int log_queries)
{
    /* Every line below is built from parsed entries: names of
     * [a-z0-9.-], ports as numbers. */
    fputs("# kgate slirp-filter: the only resolver the sandbox can reach\n"
          "no-resolv\n"
          "no-hosts\n"
          "no-poll\n"
          "listen-address=" SF_RESOLVER_ADDR "\n"
          "bind-interfaces\n"
          /* Root of the helper's user namespace already: no change. */
          "user=root\n"
          "group=\n"
          "conntrack\n"
          /* No IPv6 route: clients use IPv4 at once. */
          "filter-AAAA\n"
          /* dnsmasq's rebind guard: an upstream answer in a private,
           * loopback, link-local or documentation range (IPv4 and IPv6,
           * v4-mapped included) becomes an empty answer and a log line the
           * watcher reports.  The never sets of the filter hold whatever
           * it lets through (docs/network.md). */
          "stop-dns-rebind\n"
          "max-cache-ttl=3600\n"
          /* Every name not matched more specifically below: NXDOMAIN,
           * answered here. */
          "address=/#/\n",
          o);
    if (log_queries) fputs("log-queries\nlog-async=100\n", o);
}

/* The names forwarded upstream, each (name, kind) once, in the order of
 * the sorted entries: kgl_dns_forward, as the Landlock box's resolver. */
static int conf_servers(FILE *o, const sorted *s)
{
    kgl_dns_name *v = malloc((s->n ? s->n : 1) * sizeof *v);
    if (!v) return -1;
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        const sf_entry *e = s->v[i];
        if (i > 0 && s->v[i - 1]->wildcard == e->wildcard &&
            strcmp(s->v[i - 1]->name, e->name) == 0)
            continue;
        v[k++] = (kgl_dns_name){.name = e->name, .wildcard = e->wildcard};
    }
    int r = kgl_dns_forward(o, v, k, SF_DNS_ADDR);
    free(v);
    return r;
}

/* The sets a name's answers go into: its own entries' ports and those of
 * the wildcards above it, as "4#inet#kgate#any,...".  -1: too long. */
static int name_sets(const sf_filter *f, const sorted *s, const char *name, unsigned char *want,
                     char *out, size_t outsz)
{
    memset(want, 0, f->n_ports);
    mark_ports(f, s, name, 0, want);
    for (const char *up = strchr(name, '.'); up; up = strchr(up + 1, '.'))
        mark_ports(f, s, up + 1, 1, want);
    size_t len = 0;
    out[0] = '\0';
    for (size_t p = 0; p < f->n_ports; p++) {
        if (!want[p]) continue;
        char sn[16];
        set_name(sn, sizeof sn, f->ports[p]);
        int k =
            snprintf(out + len, outsz - len, "%s4#inet#" SF_NFT_TABLE "#%s", len ? "," : "", sn);
        if (k < 0 || (size_t)k >= outsz - len) return -1;
        len += (size_t)k;
    }
    return 0;
}

/* The one port of every name entry, or -1 when they have two or more
 * (or there are none). */
static long sole_name_port(const sorted *s)
{
    if (s->n == 0) return -1;
    for (size_t i = 1; i < s->n; i++)
        if (s->v[i]->port != s->v[0]->port) return -1;
    return s->v[0]->port;
}

/* --nftset takes the most specific domain, and its patterns have no "*."
 * form (measured, 2.90): each distinct name once, with every set a name
 * at or under it may need.
 *
 * When every name entry has the same port, every name needs the same one
 * set, and one line for all names says it: dnsmasq adds to a set only the
 * addresses of answers it forwarded (forward.c: an answer it made itself,
 * NXDOMAIN from address=/#/ or local=, has none), and it forwards only
 * the names of the server= lines.  So "/#/" adds exactly what a line per
 * name would, and dnsmasq reads one line instead of one per name (a third
 * of its lines with 10,000 names; docs/network.md). */
static int conf_nftsets(FILE *o, const sf_filter *f, const sorted *s)
{
    long sole = sole_name_port(s);
    if (sole >= 0) {
        char sn[16];
        set_name(sn, sizeof sn, (unsigned)sole);
        return fprintf(o, "nftset=/#/4#inet#" SF_NFT_TABLE "#%s\n", sn) < 0 ? -1 : 0;
    }
    unsigned char *want = calloc(f->n_ports ? f->n_ports : 1, 1);
    if (!want) return -1;
    kgl_dns_line set = KGL_DNS_LINE(o, "nftset=");
    char sets[KGL_DNS_LINE_MAX];
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        const sf_entry *e = s->v[i];
        if (i > 0 && strcmp(s->v[i - 1]->name, e->name) == 0) continue;
        rc = name_sets(f, s, e->name, want, sets, sizeof sets);
        if (rc == 0) kgl_dns_line_add(&set, "", e->name, sets);
    }
    int e = kgl_dns_line_end(&set);
    free(want);
    return rc < 0 || e < 0 ? -1 : 0;
}

char *sf_dnsmasq_conf(const sf_filter *f, int log_queries)
{
    sorted s;
    if (sorted_make(f, &s) < 0) return NULL;
    char *buf = NULL;
    size_t sz = 0;
    FILE *o = open_memstream(&buf, &sz);
    if (!o) {
        free(s.v);
        return NULL;
    }
    conf_header(o, log_queries);
    int rc = conf_servers(o, &s) < 0 || conf_nftsets(o, f, &s) < 0 ? -1 : 0;
    free(s.v);
    if (fclose(o) != 0 || rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

const char *sf_resolv_conf(void)
{
    return "# kgate slirp-filter: the only resolver reachable in this sandbox\n"
           "nameserver " SF_RESOLVER_ADDR "\n"
           "options attempts:2 timeout:2\n";
}

void sf_slirp_argv_build(sf_slirp_argv *out, const char *slirp_path, int ready_fd, pid_t pid,
                         int host_loopback, const char *api_socket)
{
    memset(out, 0, sizeof *out);
    if (ready_fd >= 0)
        snprintf(out->ready, sizeof out->ready, "--ready-fd=%d", ready_fd);
    else
        snprintf(out->ready, sizeof out->ready, "--ready-fd=FD");
    if (pid > 0) {
        snprintf(out->userns, sizeof out->userns, "--userns-path=/proc/%ld/ns/user", (long)pid);
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
     * database and dev server.  Left out only for localhost:port entries,
     * and then the nft ruleset lets through exactly their ports. */
    if (!host_loopback) out->v[n++] = "--disable-host-loopback";
    /* slirp4netns parses every packet the sandbox sends: confine it too
     * (its own mount namespace with nothing in it, and a syscall filter).
     * Both work unprivileged with --userns-path (measured, 1.2.0). */
    out->v[n++] = "--enable-sandbox";
    out->v[n++] = "--enable-seccomp";
    if (api_socket) {
        snprintf(out->api, sizeof out->api, "--api-socket=%s", api_socket);
        out->v[n++] = out->api;
    }
    out->v[n++] = out->ready;
    out->v[n++] = "--netns-type=pid";
    out->v[n++] = out->userns;
    out->v[n++] = out->pid;
    out->v[n++] = SF_TAP;
    out->v[n] = NULL;
    out->n = n;
}

char *sf_read_small_file(const char *path)
{
    FILE *fp = fopen(path, "re");
    if (!fp) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n - 1, fp);
        n += got;
        if (got == 0) break;
        if (n + 1 == cap) {
            if (cap >= (4u << 20)) break;
            char *more = realloc(buf, cap *= 2);
            if (!more) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
        }
    }
    fclose(fp);
    if (buf) buf[n] = '\0';
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Published ports                                                           */
/* ------------------------------------------------------------------------ */

int sf_publish_check(const kgate_policy *policy, const kgate_publish **v, size_t *n, kgate_err *err)
{
    *v = NULL;
    *n = 0;
    if (!KGATE_HAS_FIELD(policy, kgate_policy, n_publish) || policy->n_publish == 0) return 0;
    for (size_t i = 0; i < policy->n_publish; i++) {
        const kgate_publish *p = &policy->publish[i];
        struct in_addr in;
        /* The core checked it; this is where it is bound, so it is
         * checked again: a port offered beyond the loopback is the one
         * thing this must never do. */
        if (memchr(p->host_addr, '\0', sizeof p->host_addr) == NULL ||
            inet_pton(AF_INET, p->host_addr, &in) != 1 || (ntohl(in.s_addr) >> 24) != 127)
            return kgate_err_set(err, EINVAL,
                                 "--publish: the host address is not a "
                                 "loopback address; nothing was started");
        if (p->host_port == 0 || p->port == 0)
            return kgate_err_set(err, EINVAL, "--publish: port 0; nothing was started");
    }
    *v = policy->publish;
    *n = policy->n_publish;
    return 0;
}

int sf_hostfwd_request(const kgate_publish *p, char *buf, size_t len)
{
    int n = snprintf(buf, len,
                     "{\"execute\": \"add_hostfwd\", \"arguments\": {\"proto\": \"tcp\", "
                     "\"host_addr\": \"%s\", \"host_port\": %u, \"guest_addr\": \"" SF_GUEST_ADDR
                     "\", \"guest_port\": %u}}",
                     p->host_addr, (unsigned)p->host_port, (unsigned)p->port);
    return n < 0 || (size_t)n >= len ? -1 : n;
}
