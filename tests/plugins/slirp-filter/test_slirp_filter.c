/* Unit tests of the slirp-filter network stage: the texts it generates,
 * host name validation, its doctor table from made-up probe facts, and the
 * core's composition of it (select.h: kg_compose_plan, kg_compose_report)
 * with a fake bubblewrap backend and with the real one (its pieces, linked
 * statically into this test only).  No namespaces, no tools. */
#include <arpa/inet.h>
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bwrap-internal.h"
#include "host.h"
#include "select.h"
#include "sf-internal.h"
#include "testutil.h"

const kgate_backend *kgate_plugin_entry(void);

/* ------------------------------------------------------------------------ */
/* A fake bubblewrap backend                                                 */
/* ------------------------------------------------------------------------ */

/* 1: the fake's doctor also finds a machine blocker (as bubblewrap's
 * does when bwrap cannot make a user namespace). */
static int fake_machine_blocked;

static int fake_doctor(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                       kgate_report *rep)
{
    (void)probe;
    if (fake_machine_blocked)
        host->report(rep, KGATE_BLOCKED, "userns.unavailable",
                     "fake: bwrap could not create a user namespace");
    host->report(rep, KGATE_READY, "fs.home-hidden", "fake: home hidden, %zu hooks",
                 policy->protect_paths.n);
    host->report_detail(rep, "fake_detail", "yes");
    switch (policy->network) {
    case KGATE_NET_OFF: return host->report(rep, KGATE_READY, "net.off", "fake: network off");
    case KGATE_NET_OPEN: return host->report(rep, KGATE_DEGRADED, "net.open", "fake: network open");
    default:
        /* The finding slirp-filter drops is known by its id: in other
         * words it still goes, and the real sentence under another id
         * stays. */
        host->report(rep, KGATE_READY, "fake.same-words", "%s", bwrap_hosts_sentence());
        return host->report(rep, KGATE_BLOCKED, KGATE_FINDING_NET_HOSTS_UNSUPPORTED,
                            "fake: network: other words for the hosts finding");
    }
}

static int fake_plan(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                     kgate_plan *plan, kgate_err *err)
{
    (void)probe;
    if (policy->network == KGATE_NET_RESTRICTED)
        return kgate_err_set(err, 0, "fake: cannot do host lists");
    host->plan_arg(plan, "/usr/bin/bwrap");
    host->plan_arg(plan, "--ro-bind");
    host->plan_arg(plan, "/");
    host->plan_arg(plan, "/");
    host->plan_arg(plan, "--unshare-user");
    host->plan_argf(plan, "--uid=%u", (unsigned)policy->uid);
    if (policy->network == KGATE_NET_OFF) host->plan_arg(plan, "--unshare-net");
    host->plan_arg(plan, "--");
    host->plan_args(plan, &policy->argv);
    return 0;
}

static kgate_probe fake_bw_probe;

static const kgate_backend fake_bw = {
    KGATE_BACKEND_INIT,
    .name = "bubblewrap",
    .doctor = fake_doctor,
    .plan = fake_plan,
};

/* The real bubblewrap backend, from its static pieces. */
static const kgate_backend real_bw = {
    KGATE_BACKEND_INIT,     .name = "bubblewrap", .probe = bwrap_probe,
    .doctor = bwrap_doctor, .plan = bwrap_plan,   .launch = bwrap_launch,
};
static int use_real_bw;

static const kgate_backend *box(void) { return use_real_bw ? &real_bw : &fake_bw; }

static kg_host H;
static const char *const cmd[] = {"make", "test"};
static const char *const two_hosts[] = {"allowed.test", "api.example.com"};

static void setup(void)
{
    kg_host_init(&H);
    use_real_bw = 0;
    fake_machine_blocked = 0;
    kgate_probe_init(&fake_bw_probe);
    fake_bw_probe.available = 1;
    fake_bw_probe.score = 50;
}

static kgate_policy policy_for(kgate_network net, const char *const *hosts, size_t n)
{
    return (kgate_policy){
        .struct_size = sizeof(kgate_policy),
        .network = net,
        .configured_network = net,
        .allow_hosts = {hosts, n},
        .project = "/home/u/proj",
        .home = "/home/u",
        .uid = 1000,
        .gid = 1000,
        .argv = {cmd, 2},
        .command_path = "/usr/bin/make",
    };
}

static kgate_probe facts(int slirp, int nft, int nft_ok, int dnsmasq)
{
    kgate_probe p;
    kgate_probe_init(&p);
    kgate_probe_set_fact(&p, SF_FACT_SLIRP, slirp);
    kgate_probe_set_fact(&p, SF_FACT_NFT, nft);
    if (nft_ok >= 0) kgate_probe_set_fact(&p, SF_FACT_NFT_OK, nft_ok);
    kgate_probe_set_fact(&p, SF_FACT_DNSMASQ, dnsmasq);
    p.available = slirp && nft && dnsmasq;
    p.score = 40;
    snprintf(p.tool_path, sizeof p.tool_path, "/usr/bin/slirp4netns");
    return p;
}

static int report_has(const kgate_report *r, const char *needle)
{
    for (size_t i = 0; i < r->n_items; i++)
        if (strstr(r->items[i].text, needle)) return 1;
    return 0;
}

/* How many findings of r carry id. */
static size_t id_count(const kgate_report *r, const char *id)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_items; i++) n += strcmp(r->items[i].id, id) == 0;
    return n;
}

/* ------------------------------------------------------------------------ */
/* Host names                                                                */
/* ------------------------------------------------------------------------ */

START_TEST(hosts_valid)
{
    char label63[64], long253[254];
    memset(label63, 'a', 63);
    label63[63] = '\0';
    /* 4 x 63 + 1 = 253 characters: "a...a.a...a.a...a.a...a" minus two */
    memset(long253, 'b', 253);
    long253[253] = '\0';
    for (int i = 63; i < 253; i += 64) long253[i] = '.';
    ck_assert_uint_eq(strlen(long253), 253);
    const char *ok[] = {
        "example.com",           "a",     "a-b.c", "198.18.0.2",    "API.Example.COM",
        "xn--bcher-kva.example", label63, long253, "*.example.com", "api.example.com:443"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        ck_assert_msg(sf_host_valid(ok[i]), "should accept: %s", ok[i]);
}
END_TEST

START_TEST(hosts_hostile)
{
    char label64[65], long254[255];
    memset(label64, 'a', 64);
    label64[64] = '\0';
    memset(long254, 'b', 254);
    long254[254] = '\0';
    for (int i = 63; i < 254; i += 64) long254[i] = '.';
    const char *bad[] = {"",
                         "-rf",
                         "--flag",
                         "a b",
                         "a'b",
                         "a\"b",
                         "a\nb",
                         "a\n-A OUTPUT -j ACCEPT",
                         "a..b",
                         ".a",
                         "a.",
                         "a-.b",
                         "a.-b",
                         "a_b",
                         "a;b",
                         "$(id)",
                         "`id`",
                         "*",
                         "*.com",
                         "a/b",
                         "a\tb",
                         "a#b",
                         "\xc3\xa9.example",
                         label64,
                         long254};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!sf_host_valid(bad[i]), "should refuse entry %zu", i);
    ck_assert(!sf_host_valid(NULL));

    const char *const list[] = {"good.test", "-oops"};
    kgate_strlist l = {list, 2};
    kgate_err err = {0};
    ck_assert_int_eq(sf_hosts_check(&l, &err), -1);
    ck_assert_str_eq(
        err.msg, "allow_hosts: entry 2 is not a valid host name (label starts or ends with '-')");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Texts                                                                     */
/* ------------------------------------------------------------------------ */

START_TEST(entries_parse)
{
    sf_entry e;
    char nb[SF_NAME_SIZE];
    const char *why = NULL;
    ck_assert_int_eq(sf_entry_parse("API.Example.COM", &e, nb, &why), 0);
    ck_assert_str_eq(e.name, "api.example.com");
    ck_assert(!e.wildcard && !e.port && !e.is_addr);
    ck_assert_int_eq(sf_entry_parse("*.githubusercontent.com", &e, nb, &why), 0);
    ck_assert_str_eq(e.name, "githubusercontent.com");
    ck_assert(e.wildcard && !e.port);
    ck_assert_int_eq(sf_entry_parse("example.com:443", &e, nb, &why), 0);
    ck_assert(!e.wildcard && e.port == 443);
    ck_assert_int_eq(sf_entry_parse("*.a.example:65535", &e, nb, &why), 0);
    ck_assert(e.wildcard && e.port == 65535);
    ck_assert_int_eq(sf_entry_parse("198.18.0.9", &e, nb, &why), 0);
    ck_assert(e.is_addr && !e.port);
    ck_assert_str_eq(e.name, "198.18.0.9");
    ck_assert_int_eq(sf_entry_parse("198.18.0.9:22", &e, nb, &why), 0);
    ck_assert(e.is_addr && e.port == 22);

    /* The reasons are kgate_hostspec_parse's (tested with it). */
    const char *bad[] = {"*",
                         "*.",
                         "*.com",
                         "*example.com",
                         "a.*.example.com",
                         "**.example.com",
                         "x.test:0",
                         "x.test:65536",
                         "x.test:",
                         "x.test:8o",
                         "x.test:-1",
                         "x.test:80:80",
                         ":80",
                         "",
                         "-rf",
                         "a\nserver=/#/1.2.3.4",
                         "a/b",
                         "a b",
                         "::1",
                         "*.198.18.0.9",
                         "1.2.3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        ck_assert_msg(sf_entry_parse(bad[i], &e, nb, &why) == -1, "should refuse %zu", i);
        ck_assert_ptr_nonnull(why);
    }
    ck_assert_int_eq(sf_entry_parse(NULL, &e, nb, &why), -1);
}
END_TEST

START_TEST(entries_match)
{
    sf_entry exact, wild, lit;
    char nb_exact[SF_NAME_SIZE], nb_wild[SF_NAME_SIZE], nb_lit[SF_NAME_SIZE];
    ck_assert_int_eq(sf_entry_parse("example.com", &exact, nb_exact, NULL), 0);
    ck_assert_int_eq(sf_entry_parse("*.example.com", &wild, nb_wild, NULL), 0);
    ck_assert_int_eq(sf_entry_parse("198.18.0.9", &lit, nb_lit, NULL), 0);
    ck_assert(sf_entry_matches(&exact, "example.com"));
    ck_assert(sf_entry_matches(&exact, "EXAMPLE.com"));
    ck_assert(!sf_entry_matches(&exact, "www.example.com"));
    ck_assert(!sf_entry_matches(&wild, "example.com"));
    ck_assert(sf_entry_matches(&wild, "www.example.com"));
    ck_assert(sf_entry_matches(&wild, "a.b.c.example.com"));
    ck_assert(!sf_entry_matches(&wild, "notexample.com"));
    ck_assert(!sf_entry_matches(&wild, "example.com.evil"));
    ck_assert(!sf_entry_matches(&lit, "198.18.0.9"));
}
END_TEST

static sf_filter filter_of(const char *const *list, size_t n)
{
    kgate_strlist l = {list, n};
    sf_filter f;
    kgate_err err = {0};
    ck_assert_msg(sf_filter_build(&l, &f, &err) == 0, "%s", err.msg);
    return f;
}

START_TEST(filter_build_errors)
{
    const char *const list[] = {"ok.test", "*.ok.test:443", "a\nserver=/#/1.2.3.4"};
    kgate_strlist l = {list, 3};
    sf_filter f;
    kgate_err err = {0};
    ck_assert_int_eq(sf_filter_build(&l, &f, &err), -1);
    /* The position, never the entry: it may hold a newline. */
    ck_assert_int_eq(strncmp(err.msg, "allow_hosts: entry 3 is not a valid host name (", 47), 0);
    ck_assert_ptr_null(f.e);
}
END_TEST

/* inet_pton for the tests. */
static void add_self(sf_filter *f, int family, const char *text)
{
    unsigned char a[16];
    ck_assert_int_eq(inet_pton(family, text, a), 1);
    ck_assert_int_eq(sf_filter_add_self(f, family, a), 0);
}

START_TEST(nft_ruleset_exact)
{
    const char *const list[] = {"allowed.test", "*.cdn.test:443", "198.18.0.9",
                                "169.254.169.254:80"};
    sf_filter f = filter_of(list, 4);
    ck_assert_int_eq(sf_filter_add_hosts_text(&f, "# comment\n"
                                                  "198.18.0.2\tallowed.test alias\n"
                                                  "198.18.0.7 x.cdn.test # y.cdn.test\n"
                                                  "198.18.0.8 cdn.test\n"
                                                  "10.9.9.9 other.test\n"
                                                  "::1 allowed.test\n"
                                                  "198.18.0.2 ALLOWED.test\n"
                                                  "127.0.1.1 allowed.test\n"),
                     0);
    /* The host's own addresses: the ones a static range covers, and
     * repeats, are left out (nft refuses overlapping intervals). */
    add_self(&f, AF_INET, "192.0.2.2");
    add_self(&f, AF_INET, "127.0.0.1");
    add_self(&f, AF_INET, "10.0.2.15");
    add_self(&f, AF_INET, "192.0.2.2");
    add_self(&f, AF_INET6, "fd00::2");
    add_self(&f, AF_INET6, "fe80::1");
    add_self(&f, AF_INET6, "::1");
    add_self(&f, AF_INET6, "::ffff:198.18.0.1");
    add_self(&f, AF_INET6, "fd00:ec2::254");
    add_self(&f, AF_INET6, "fd00::2");
    char *r = sf_nft_ruleset(&f);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(
        r, "table inet kgate {\n"
           "\tset any {\n\t\ttype ipv4_addr\n\t\tflags timeout\n\t\ttimeout 1d\n"
           "\t\tsize 262144\n\t}\n"
           "\tset p443 {\n\t\ttype ipv4_addr\n\t\tflags timeout\n\t\ttimeout 1d\n"
           "\t\tsize 262144\n\t}\n"
           "\tset never4 {\n\t\ttype ipv4_addr\n\t\tflags interval\n"
           "\t\telements = { 0.0.0.0/8, 10.0.2.0/24, 100.100.100.200, 127.0.0.0/8, "
           "168.63.129.16, 169.254.0.0/16, 192.0.2.2 }\n\t}\n"
           "\tset never6 {\n\t\ttype ipv6_addr\n\t\tflags interval\n"
           "\t\telements = { ::, ::1, fe80::/10, fd00:ec2::254, ::ffff:0.0.0.0/104, "
           "::ffff:10.0.2.0/120, ::ffff:100.100.100.200, ::ffff:127.0.0.0/104, "
           "::ffff:168.63.129.16, ::ffff:169.254.0.0/112, ::ffff:192.0.2.2, fd00::2 }\n\t}\n"
           "\tchain output {\n"
           "\t\ttype filter hook output priority filter; policy drop;\n"
           "\t\tip daddr 127.0.0.1 meta l4proto { tcp, udp } th dport 53 ct mark set "
           "0x4b47 accept\n"
           "\t\tip daddr 10.0.2.3 meta l4proto { tcp, udp } th dport 53 meta mark 0x4b47 "
           "accept\n"
           "\t\tmeta l4proto { tcp, udp } th dport { 53, 853 } jump refuse\n"
           "\t\toifname \"lo\" accept\n"
           "\t\tct state established,related accept\n"
           "\t\tip6 daddr ff02::/16 drop\n"
           "\t\tip daddr { 198.18.0.9 } meta l4proto tcp accept\n"
           "\t\tip daddr { 169.254.169.254 } tcp dport 80 accept\n"
           "\t\tip daddr @never4 jump refuse\n"
           "\t\tip6 daddr @never6 jump refuse\n"
           "\t\tmeta nfproto ipv6 jump refuse\n"
           "\t\tip daddr @any meta l4proto tcp accept\n"
           "\t\tip daddr @p443 tcp dport 443 accept\n"
           "\t\tip daddr { 198.18.0.2, 127.0.1.1 } meta l4proto tcp accept\n"
           "\t\tip daddr { 198.18.0.7 } tcp dport 443 accept\n"
           "\t\tjump refuse\n"
           "\t}\n"
           "\tchain refuse {\n"
           "\t\tlog group 1\n"
           "\t\tmeta l4proto tcp reject with tcp reset\n"
           "\t\treject with icmpx admin-prohibited\n"
           "\t}\n"
           "}\n");
    free(r);
    sf_filter_free(&f);
}
END_TEST

/* Which addresses no name reaches: the static ranges at their edges, the
 * host's own once added; a literal entry is explicit, /etc/hosts' is not. */
START_TEST(never_addresses)
{
    const char *const list[] = {"a.test", "168.63.129.16:443"};
    sf_filter f = filter_of(list, 2);
    ck_assert_int_eq(sf_filter_add_hosts_text(&f, "100.100.100.200 a.test\n"), 0);
    static const struct {
        const char *a;
        int never;
    } cases[] = {
        {"0.0.0.0", 1},         {"0.255.255.255", 1},   {"1.0.0.0", 0},
        {"127.0.0.1", 1},       {"127.255.0.9", 1},     {"128.0.0.1", 0},
        {"10.0.2.2", 1},        {"10.0.2.255", 1},      {"10.0.3.1", 0},
        {"10.0.1.255", 0},      {"169.254.169.254", 1}, {"169.254.0.0", 1},
        {"169.253.255.255", 0}, {"169.255.0.0", 0},     {"100.100.100.200", 1},
        {"100.100.100.201", 0}, {"100.100.100.199", 0}, {"168.63.129.16", 1},
        {"168.63.129.17", 0},   {"198.18.0.1", 0},      {"198.18.0.2", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct in_addr a;
        ck_assert_int_eq(inet_pton(AF_INET, cases[i].a, &a), 1);
        ck_assert_msg(sf_never_v4(&f, a.s_addr) == cases[i].never, "%s", cases[i].a);
    }
    add_self(&f, AF_INET, "198.18.0.1");
    struct in_addr a;
    inet_pton(AF_INET, "198.18.0.1", &a);
    ck_assert_int_eq(sf_never_v4(&f, a.s_addr), 1);
    inet_pton(AF_INET, "198.18.0.2", &a);
    ck_assert_int_eq(sf_never_v4(&f, a.s_addr), 0);
    inet_pton(AF_INET, "168.63.129.16", &a);
    ck_assert_int_eq(sf_explicit_v4(&f, a.s_addr), 1);
    inet_pton(AF_INET, "100.100.100.200", &a);
    ck_assert_int_eq(sf_explicit_v4(&f, a.s_addr), 0);
    sf_filter_free(&f);
}
END_TEST

/* The host's own addresses as getifaddrs gives them: loopback is in a
 * static range already, so it never comes back as a host address. */
START_TEST(self_addrs_read)
{
    const char *const list[] = {"a.test"};
    sf_filter f = filter_of(list, 1);
    kgate_err err = {0};
    ck_assert_int_eq(sf_filter_add_self_addrs(&f, &err), 0);
    for (size_t i = 0; i < f.self.n4; i++) ck_assert_uint_ne(f.self.v4[i], htonl(0x7f000001u));
    char *r = sf_nft_ruleset(&f);
    ck_assert_ptr_nonnull(r);
    char a[INET6_ADDRSTRLEN];
    for (size_t i = 0; i < f.self.n4; i++) {
        inet_ntop(AF_INET, &f.self.v4[i], a, sizeof a);
        char want[64];
        snprintf(want, sizeof want, ", %s", a);
        ck_assert_ptr_nonnull(strstr(r, want));
    }
    free(r);
    sf_filter_free(&f);
}
END_TEST

/* Only literals: no allow set, no DNS path but the refused one; the never
 * sets are there all the same. */
START_TEST(nft_ruleset_literals_only)
{
    const char *const list[] = {"198.18.0.9:8080"};
    sf_filter f = filter_of(list, 1);
    /* A hosts file is not even read for a list without names. */
    ck_assert_int_eq(sf_filter_add_hosts_text(&f, "198.18.0.2 a.test\n"), 0);
    char *r = sf_nft_ruleset(&f);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_null(strstr(r, "\tset any "));
    ck_assert_ptr_null(strstr(r, "\tset p8080 "));
    ck_assert_ptr_nonnull(strstr(r, "\tset never4 {"));
    ck_assert_ptr_nonnull(strstr(r, "\t\tip daddr { 198.18.0.9 } tcp dport 8080 accept\n"
                                    "\t\tip daddr @never4 jump refuse\n"));
    ck_assert_ptr_null(strstr(r, "198.18.0.2"));
    free(r);
    sf_filter_free(&f);
}
END_TEST

/* localhost:port: the host's loopback through slirp4netns (10.0.2.2), that
 * TCP port only, before the never sets; no allow set, no name for the
 * resolver, no /etc/hosts line followed; slirp4netns forwards to the
 * host's loopback only then. */
START_TEST(nft_ruleset_host_loopback)
{
    const char *const list[] = {"localhost:5432", "api.test", "localhost:5432", "localhost:3000"};
    sf_filter f = filter_of(list, 4);
    ck_assert_uint_eq(f.n, 1);
    ck_assert_uint_eq(f.n_loop, 2);
    ck_assert_int_eq(sf_filter_add_hosts_text(&f, "127.0.0.1 localhost\n198.18.0.2 api.test\n"), 0);
    char *r = sf_nft_ruleset(&f);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(strstr(r, "\t\tip daddr 10.0.2.2 tcp dport 5432 accept\n"
                                    "\t\tip daddr 10.0.2.2 tcp dport 3000 accept\n"
                                    "\t\tip daddr @never4 jump refuse\n"));
    ck_assert_ptr_null(strstr(r, "{ 127.0.0.1 }")); /* /etc/hosts' localhost: not followed */
    ck_assert_ptr_null(strstr(r, "\tset p5432 "));
    char *d = sf_dnsmasq_conf(&f, 1);
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_null(strstr(d, "localhost"));
    free(d);
    free(r);
    sf_slirp_argv a;
    sf_slirp_argv_build(&a, "slirp4netns", 7, 1234, 1, NULL);
    for (size_t i = 0; i < a.n; i++) ck_assert_str_ne(a.v[i], "--disable-host-loopback");
    sf_filter_free(&f);
    /* Without such an entry, nothing reaches 10.0.2.2. */
    const char *const plain[] = {"api.test:5432"};
    f = filter_of(plain, 1);
    r = sf_nft_ruleset(&f);
    ck_assert_ptr_null(strstr(r, "10.0.2.2 tcp"));
    free(r);
    sf_filter_free(&f);
}
END_TEST

START_TEST(dnsmasq_conf_exact)
{
    const char *const list[] = {"exact.test",    "*.wild.test",    "wild.test:443",
                                "*.w2.test:443", "x.w2.test",      "198.18.0.9",
                                "exact.test",    "a.b.exact.test", "*.deep.a.test"};
    sf_filter f = filter_of(list, sizeof list / sizeof list[0]);
    char *r = sf_dnsmasq_conf(&f, 0);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r, "# kgate slirp-filter: the only resolver the sandbox can reach\n"
                        "no-resolv\n"
                        "no-hosts\n"
                        "no-poll\n"
                        "listen-address=127.0.0.1\n"
                        "bind-interfaces\n"
                        "user=root\n"
                        "group=\n"
                        "conntrack\n"
                        "filter-AAAA\n"
                        "stop-dns-rebind\n"
                        "max-cache-ttl=3600\n"
                        "address=/#/\n"
                        /* Names with the same target share a line. */
                        "server=/a.b.exact.test/*.deep.a.test/exact.test/*.w2.test/wild.test/"
                        "*.wild.test/x.w2.test/10.0.2.3\n"
                        "local=/*.a.b.exact.test/*.exact.test/\n"
                        "nftset=/a.b.exact.test/deep.a.test/exact.test/4#inet#kgate#any\n"
                        "nftset=/w2.test/4#inet#kgate#p443\n"
                        "nftset=/wild.test/x.w2.test/4#inet#kgate#any,4#inet#kgate#p443\n");
    free(r);
    r = sf_dnsmasq_conf(&f, 1);
    ck_assert_ptr_nonnull(strstr(r, "\naddress=/#/\nlog-queries\nlog-async=100\nserver="));
    free(r);
    sf_filter_free(&f);
}
END_TEST

/* dnsmasq's configuration for a list (without the query log). */
static char *conf_of(const char *const *list, size_t n)
{
    sf_filter f = filter_of(list, n);
    char *r = sf_dnsmasq_conf(&f, 0);
    sf_filter_free(&f);
    ck_assert_ptr_nonnull(r);
    return r;
}

/* Names that all need the same one set share one nftset line for every
 * name ("/#/": dnsmasq adds only answers it forwarded, and it forwards
 * only the server= names).  A literal's or a localhost entry's port is
 * not a name's and does not count; a second port among the names brings
 * back a line per name; no name, no line. */
START_TEST(dnsmasq_conf_one_set)
{
    const char *const plain[] = {"a.test", "*.w.test", "b.a.test", "198.18.0.9:22",
                                 "localhost:8080"};
    const char *const ported[] = {"a.test:443", "*.w.test:443"};
    const char *const mixed[] = {"a.test:443", "b.test"};
    const char *const literal[] = {"198.18.0.9"};
    char *r = conf_of(plain, sizeof plain / sizeof plain[0]);
    ck_assert_ptr_nonnull(strstr(r, "\nnftset=/#/4#inet#kgate#any\n"));
    ck_assert_ptr_null(strstr(r, "nftset=/a"));
    /* The names forwarded are the list's, as with a line per name. */
    ck_assert_ptr_nonnull(strstr(r, "\nserver=/a.test/b.a.test/*.w.test/10.0.2.3\n"));
    free(r);
    r = conf_of(ported, 2);
    ck_assert_ptr_nonnull(strstr(r, "\nnftset=/#/4#inet#kgate#p443\n"));
    free(r);
    r = conf_of(mixed, 2);
    ck_assert_ptr_null(strstr(r, "nftset=/#/"));
    ck_assert_ptr_nonnull(strstr(r, "\nnftset=/a.test/4#inet#kgate#p443\n"));
    ck_assert_ptr_nonnull(strstr(r, "\nnftset=/b.test/4#inet#kgate#any\n"));
    free(r);
    r = conf_of(literal, 1);
    ck_assert_ptr_null(strstr(r, "nftset="));
    free(r);
}
END_TEST

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dnsmasq reads a line of at most 1024 characters (measured, 2.90): every
 * line is shorter, and every name of the list is forwarded exactly once
 * (exact names as "/name/" and wildcards with their star, on server=
 * lines).  The forwarded names are sorted and each listed name searched
 * for: a strstr over the whole file per name was n squared, 35 s for
 * 10,000 names under valgrind, over check's timeout. */
static void assert_dnsmasq_lines(const char *conf, const char *const *list, size_t n)
{
    size_t servers = 0, lines = 0, got = 0;
    char **names = calloc(n + 1, sizeof *names);
    ck_assert_ptr_nonnull(names);
    for (const char *l = conf; *l;) {
        const char *nl = strchr(l, '\n');
        ck_assert_ptr_nonnull(nl);
        ck_assert_uint_le((size_t)(nl - l), 1000);
        if (strncmp(l, "server=", 7) == 0) {
            lines++;
            /* server=/a/b/.../ADDR: the names lie between the slashes. */
            const char *c = l + 7;
            ck_assert_int_eq(*c, '/');
            for (const char *next; (next = memchr(c + 1, '/', (size_t)(nl - c - 1))) != NULL;
                 c = next) {
                servers++;
                ck_assert_uint_lt(got, n + 1);
                names[got++] = strndup(c + 1, (size_t)(next - c - 1));
            }
            servers++; /* the '/' before the address */
        }
        l = nl + 1;
    }
    /* Each server= line has one '/' per name and one before its address. */
    ck_assert_uint_eq(servers - lines, n);
    ck_assert_uint_eq(got, n);
    ck_assert_uint_gt(lines, 1);
    qsort(names, got, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char want[64];
        const char *colon = strchr(list[i], ':');
        snprintf(want, sizeof want, "%.*s",
                 (int)(colon ? (size_t)(colon - list[i]) : strlen(list[i])), list[i]);
        const char *key = want;
        ck_assert_msg(bsearch(&key, names, got, sizeof *names, cmp_str) != NULL,
                      "/%s/ is not forwarded", want);
    }
    for (size_t i = 0; i < got; i++) free(names[i]);
    free(names);
}

/* 10,000 names build in well under a second (the measured figure is in
 * docs/performance.md; this only keeps the builders n log n). */
START_TEST(builders_scale)
{
    enum { N = 10000 };
    static char names[N][32];
    static const char *list[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], i % 3 ? "n%d.example.test" : "*.w%d.test:443", i);
        list[i] = names[i];
    }
    sf_filter f = filter_of(list, N);
    char *c = sf_dnsmasq_conf(&f, 1);
    char *r = sf_nft_ruleset(&f);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(strstr(c, "/n9998.example.test/"));
    ck_assert_ptr_nonnull(strstr(c, "/*.w9999.test/"));
    assert_dnsmasq_lines(c, list, N);
    free(c);
    free(r);
    sf_filter_free(&f);
}
END_TEST

START_TEST(resolv_conf_text)
{
    const char *t = sf_resolv_conf();
    ck_assert_ptr_nonnull(strstr(t, "\nnameserver 127.0.0.1\n"));
    /* Exactly one nameserver. */
    const char *p = strstr(t, "nameserver");
    ck_assert_ptr_null(strstr(p + 1, "nameserver"));
}
END_TEST

/* The event watcher, fed a made-up dnsmasq log: refused names become
 * records once each, with bytes outside the record alphabet escaped;
 * answers and forwarded names are not refusals.  (Its NFLOG half needs a
 * namespace: restricted_net.sh.) */
START_TEST(watcher_names)
{
    const char *const list[] = {"ok.test", "168.63.129.16"};
    sf_filter f = filter_of(list, 2);
    add_self(&f, AF_INET, "198.18.0.1");
    int logp[2], evp[2], ready[2];
    ck_assert_int_eq(pipe(logp), 0);
    ck_assert_int_eq(pipe(evp), 0);
    ck_assert_int_eq(pipe(ready), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(logp[1]);
        close(evp[0]);
        close(ready[0]);
        /* As the keeper runs it: armed, open, then the loop. */
        sf_watch_arm();
        int listening = 0;
        sf_watch *w = sf_watch_open(logp[0], evp[1], &f, &listening);
        if (!w) _exit(1);
        if (listening && write(ready[1], "1", 1) < 0) _exit(1);
        close(ready[1]);
        sf_watch_loop(w, 0);
    }
    close(logp[0]);
    close(evp[1]);
    close(ready[1]);
    char b;
    /* The byte comes only when NFLOG listens; EOF is the other answer. */
    ck_assert_int_ge(read(ready[0], &b, 1), 0);
    static const char log[] = "dnsmasq[7]: started, version 2.90 cachesize 150\n"
                              "dnsmasq[7]: query[A] evil.test from 127.0.0.1\n"
                              "dnsmasq[7]: config evil.test is NXDOMAIN\n"
                              "dnsmasq[7]: query[AAAA] evil.test from 127.0.0.1\n"
                              "dnsmasq[7]: config evil.test is NXDOMAIN\n"
                              "dnsmasq[7]: query[A] ok.test from 127.0.0.1\n"
                              "dnsmasq[7]: forwarded ok.test to 10.0.2.3\n"
                              "dnsmasq[7]: reply ok.test is <CNAME>\n"
                              "dnsmasq[7]: reply cdn.other is 198.18.0.7\n"
                              "dnsmasq[7]: config a\"b\\n.test is NXDOMAIN\n"
                              "dnsmasq[7]: config nodata.test is NODATA-IPv6\n"
                              "dnsmasq[7]: config second.test is NXDOMAIN\n"
                              /* Answers that name a never address: reported with the name
         * asked and the address, once; a literal entry's is not. */
                              "dnsmasq[7]: reply meta.test is 100.100.100.200\n"
                              "dnsmasq[7]: reply meta.test is 100.100.100.200\n"
                              "dnsmasq[7]: reply lit.test is 168.63.129.16\n"
                              "dnsmasq[7]: reply al.test is <CNAME>\n"
                              "dnsmasq[7]: nftset add 4 inet kgate any 198.18.0.1 al.test\n"
                              "dnsmasq[7]: reply self.test is 198.18.0.1\n"
                              /* The rebind guard's refusals: the name asked (a CNAME chain's
         * first), once. */
                              "dnsmasq[7]: query[A] lo.test from 127.0.0.1\n"
                              "dnsmasq[7]: forwarded lo.test to 10.0.2.3\n"
                              "dnsmasq[7]: possible DNS-rebind attack detected: lo.test\n"
                              "dnsmasq[7]: query[A] cn.test from 127.0.0.1\n"
                              "dnsmasq[7]: reply cn.test is <CNAME>\n"
                              "dnsmasq[7]: possible DNS-rebind attack detected: ll.test\n"
                              "dnsmasq[7]: query[A] lo.test from 127.0.0.1\n"
                              "dnsmasq[7]: possible DNS-rebind attack detected: lo.test\n";
    ck_assert_int_eq(write(logp[1], log, sizeof log - 1), (ssize_t)(sizeof log - 1));
    close(logp[1]);
    /* Give it the lines, then the parent death signal's stand-in. */
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    kill(pid, SIGTERM);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char out[1024];
    ssize_t n = read(evp[0], out, sizeof out - 1);
    ck_assert_int_gt(n, 0);
    out[n] = '\0';
    /* Each with its reason: a name off the list, an answer no name may
     * open, a listed name whose answer the rebind guard emptied. */
    ck_assert_str_eq(out, "net refused evil.test - 0 unlisted\n"
                          "net refused a\\034b\\092n.test - 0 unlisted\n"
                          "net refused second.test - 0 unlisted\n"
                          "net refused meta.test 100.100.100.200 0 never\n"
                          "net refused al.test 198.18.0.1 0 never\n"
                          "net refused lo.test - 0 private\n"
                          "net refused cn.test - 0 private\n");
    close(evp[0]);
    close(ready[0]);
    sf_filter_free(&f);
}
END_TEST

START_TEST(slirp_argv_exact)
{
    sf_slirp_argv a;
    sf_slirp_argv_build(&a, "/usr/bin/slirp4netns", 7, 1234, 0, NULL);
    const char *want[] = {"/usr/bin/slirp4netns",
                          "--configure",
                          "--mtu=65520",
                          "--disable-host-loopback",
                          "--enable-sandbox",
                          "--enable-seccomp",
                          "--ready-fd=7",
                          "--netns-type=pid",
                          "--userns-path=/proc/1234/ns/user",
                          "1234",
                          "tap0"};
    ck_assert_uint_eq(a.n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < a.n; i++) ck_assert_str_eq(a.v[i], want[i]);
    ck_assert_ptr_null(a.v[a.n]);

    sf_slirp_argv_build(&a, NULL, -1, 0, 0, NULL);
    ck_assert_str_eq(a.v[0], "slirp4netns");
    ck_assert_str_eq(a.v[6], "--ready-fd=FD");
    ck_assert_str_eq(a.v[8], "--userns-path=/proc/PID/ns/user");
    ck_assert_str_eq(a.v[9], "PID");
}
END_TEST

/* --publish: the API socket only when there is something to publish, and
 * requests that name every address (slirp4netns's own default host
 * address is 0.0.0.0: every address of the host). */
START_TEST(publish_texts)
{
    sf_slirp_argv a;
    sf_slirp_argv_build(&a, "slirp4netns", 7, 1234, 0, "/tmp/kgate-slirp-x/api.sock");
    int seen = 0;
    for (size_t i = 0; i < a.n; i++)
        seen += strcmp(a.v[i], "--api-socket=/tmp/kgate-slirp-x/api.sock") == 0;
    ck_assert_int_eq(seen, 1);
    ck_assert_str_eq(a.v[a.n - 1], "tap0");
    sf_slirp_argv_build(&a, "slirp4netns", 7, 1234, 0, NULL);
    for (size_t i = 0; i < a.n; i++) ck_assert(strncmp(a.v[i], "--api", 5) != 0);

    kgate_publish pb = {.host_addr = "127.0.0.1", .host_port = 8080, .port = 80};
    char req[256];
    ck_assert_int_gt(sf_hostfwd_request(&pb, req, sizeof req), 0);
    ck_assert_str_eq(req, "{\"execute\": \"add_hostfwd\", \"arguments\": {\"proto\": "
                          "\"tcp\", \"host_addr\": \"127.0.0.1\", \"host_port\": 8080, "
                          "\"guest_addr\": \"10.0.2.100\", \"guest_port\": 80}}");
    ck_assert_int_eq(sf_hostfwd_request(&pb, req, 20), -1);

    /* Checked again where it is bound: never another address. */
    kgate_policy pol = policy_for(KGATE_NET_RESTRICTED, two_hosts, 2);
    const kgate_publish *v = NULL;
    size_t n = 9;
    kgate_err err = {0};
    ck_assert_int_eq(sf_publish_check(&pol, &v, &n, &err), 0);
    ck_assert_uint_eq(n, 0);
    pol.publish = &pb;
    pol.n_publish = 1;
    ck_assert_int_eq(sf_publish_check(&pol, &v, &n, &err), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_ptr_eq(v, &pb);
    static const char *const bad[] = {"0.0.0.0", "198.18.0.1", "localhost", "", "::1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kgate_publish q = {.host_port = 8080, .port = 80};
        snprintf(q.host_addr, sizeof q.host_addr, "%s", bad[i]);
        pol.publish = &q;
        ck_assert_msg(sf_publish_check(&pol, &v, &n, &err) == -1, "%s", bad[i]);
        ck_assert_ptr_nonnull(strstr(err.msg, "loopback"));
    }
    kgate_publish z = {.host_addr = "127.0.0.1", .host_port = 0, .port = 80};
    pol.publish = &z;
    ck_assert_int_eq(sf_publish_check(&pol, &v, &n, &err), -1);
    /* A core older than 2.2 hands a smaller policy: nothing to publish. */
    pol.publish = &pb;
    pol.struct_size = offsetof(kgate_policy, publish);
    ck_assert_int_eq(sf_publish_check(&pol, &v, &n, &err), 0);
    ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(find_tool_ignores_relative_path)
{
    char out[256];
    /* A relative PATH entry would make the tool depend on the cwd. */
    setenv("PATH", ".:bin:/nonexistent", 1);
    ck_assert_int_eq(sf_find_tool("sh", out, sizeof out), 0);
    ck_assert_int_eq(out[0], '/');
    ck_assert_int_eq(sf_find_tool("kgate-no-such-tool", out, sizeof out), -1);
    ck_assert_str_eq(out, "");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Doctor                                                                    */
/* ------------------------------------------------------------------------ */

static kgate_verdict doctor(kgate_network net, kgate_probe p, kgate_report **out)
{
    const kgate_backend *be = kgate_plugin_entry();
    kgate_policy pol = policy_for(net, two_hosts, net == KGATE_NET_RESTRICTED ? 2 : 0);
    kgate_report *r = kg_report_new();
    be->doctor(&H.pub, &pol, &p, r);
    kgate_verdict v = r->verdict;
    if (out)
        *out = r;
    else
        kg_report_free(r);
    return v;
}

/* What the core shows for a host list: the box's doctor and this stage's,
 * composed. */
static kgate_verdict composed(kgate_network net, kgate_probe p, kgate_report **out)
{
    const kgate_backend *be = kgate_plugin_entry();
    kgate_policy pol = policy_for(net, two_hosts, net == KGATE_NET_RESTRICTED ? 2 : 0);
    kgate_report *b = kg_report_new(), *st = kg_report_new();
    box()->doctor(&H.pub, &pol, &fake_bw_probe, b);
    be->doctor(&H.pub, &pol, &p, st);
    kgate_report *r = kg_compose_report(&H, b, st);
    kg_report_free(b);
    kg_report_free(st);
    kgate_verdict v = r->verdict;
    if (out)
        *out = r;
    else
        kg_report_free(r);
    return v;
}

START_TEST(doctor_all_present)
{
    kgate_report *r;
    ck_assert_int_eq(doctor(KGATE_NET_RESTRICTED, facts(1, 1, 1, 1), &r), KGATE_READY);
    ck_assert(report_has(r, "network restricted to 2 host entries: slirp4netns in the "
                            "sandbox's own namespace, where " SF_FILTER_WORDS));
    kg_report_free(r);
    /* A QUICK probe records no usability fact: presence decides. */
    ck_assert_int_eq(doctor(KGATE_NET_RESTRICTED, facts(1, 1, -1, 1), NULL), KGATE_READY);
    /* Off and open never involve a stage: asked anyway, it says it is not
     * a box, whatever its tools. */
    kgate_network modes[] = {KGATE_NET_OFF, KGATE_NET_OPEN};
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(doctor(modes[i], facts(1, 1, 1, 1), &r), KGATE_BLOCKED);
        ck_assert_uint_eq(id_count(r, "slirp-filter.stage-only"), 1);
        ck_assert_uint_eq(r->n_items, 1);
        kg_report_free(r);
    }
}
END_TEST

/* A host list gets the box's findings from bubblewrap's doctor, without
 * the one that says bubblewrap alone cannot do host lists: the core
 * composes them; the stage's doctor alone has none of the box's. */
START_TEST(doctor_includes_filesystem_box)
{
    kgate_report *r;
    ck_assert_int_eq(doctor(KGATE_NET_RESTRICTED, facts(1, 1, 1, 1), &r), KGATE_READY);
    ck_assert(!report_has(r, "fake: "));
    kg_report_free(r);
    ck_assert_int_eq(composed(KGATE_NET_RESTRICTED, facts(1, 1, 1, 1), &r), KGATE_READY);
    ck_assert(report_has(r, "fake: home hidden, 0 hooks"));
    ck_assert(report_has(r, "with its seccomp filter (--seccomp FD at launch)"));
    /* Dropped by its id, whatever its words; the same words under another
     * id pass. */
    ck_assert_uint_eq(id_count(r, KGATE_FINDING_NET_HOSTS_UNSUPPORTED), 0);
    ck_assert(!report_has(r, "fake: network"));
    ck_assert_uint_eq(id_count(r, "fake.same-words"), 1);
    ck_assert(report_has(r, bwrap_hosts_sentence()));
    ck_assert_uint_eq(id_count(r, "fs.home-hidden"), 1);
    ck_assert(kg_strv_contains(r->detail_keys, "fake_detail"));
    kg_report_free(r);
    /* Every other blocker passes through: the verdict stays honest. */
    fake_machine_blocked = 1;
    ck_assert_int_eq(composed(KGATE_NET_RESTRICTED, facts(1, 1, 1, 1), &r), KGATE_BLOCKED);
    ck_assert(report_has(r, "fake: bwrap could not create a user namespace"));
    ck_assert_uint_eq(id_count(r, KGATE_FINDING_NET_HOSTS_UNSUPPORTED), 0);
    ck_assert_uint_eq(id_count(r, "userns.unavailable"), 1);
    kg_report_free(r);
}
END_TEST

START_TEST(doctor_missing_tools)
{
    kgate_report *r;
    ck_assert_int_eq(doctor(KGATE_NET_RESTRICTED, facts(0, 1, 1, 1), &r), KGATE_BLOCKED);
    ck_assert(report_has(r, "slirp4netns"));
    ck_assert(!report_has(r, "nft, not found"));
    kg_report_free(r);
    ck_assert_int_eq(doctor(KGATE_NET_RESTRICTED, facts(1, 0, -1, 1), &r), KGATE_BLOCKED);
    ck_assert(report_has(r, "nft, not found in"));
    kg_report_free(r);
    ck_assert_int_eq(doctor(KGATE_NET_RESTRICTED, facts(1, 1, 1, 0), &r), KGATE_BLOCKED);
    ck_assert(report_has(r, "dnsmasq, not found in"));
    kg_report_free(r);
    ck_assert_int_eq(doctor(KGATE_NET_RESTRICTED, facts(1, 1, 0, 1), &r), KGATE_BLOCKED);
    ck_assert(report_has(r, "failed there"));
    kg_report_free(r);
    ck_assert_int_eq(doctor(KGATE_NET_RESTRICTED, facts(0, 0, -1, 0), &r), KGATE_BLOCKED);
    ck_assert(report_has(r, "slirp4netns") && report_has(r, "nft, not found") &&
              report_has(r, "dnsmasq, not found"));
    kg_report_free(r);
    kgate_probe p = facts(1, 1, 1, 1);
    kgate_probe_set_fact(&p, SF_FACT_USERNS, 0);
    ck_assert_int_eq(doctor(KGATE_NET_RESTRICTED, p, NULL), KGATE_BLOCKED);
    p = facts(1, 1, 1, 1);
    kgate_probe_set_fact(&p, SF_FACT_TUN, 0);
    ck_assert_int_eq(doctor(KGATE_NET_RESTRICTED, p, &r), KGATE_BLOCKED);
    ck_assert(report_has(r, "/dev/net/tun"));
    kg_report_free(r);
    /* A stage that cannot run blocks the composition. */
    ck_assert_int_eq(composed(KGATE_NET_RESTRICTED, facts(0, 1, 1, 1), &r), KGATE_BLOCKED);
    ck_assert(report_has(r, "fake: home hidden"));
    kg_report_free(r);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Plan composition                                                          */
/* ------------------------------------------------------------------------ */

START_TEST(plan_restricted_composes_bubblewrap)
{
    const kgate_backend *be = kgate_plugin_entry();
    kgate_policy pol = policy_for(KGATE_NET_RESTRICTED, two_hosts, 2);
    kgate_probe p = facts(1, 1, 1, 1);
    kgate_plan *plan = kg_plan_new();
    kgate_err err = {0};
    const char *who = NULL;
    /* The fake box refuses a host list: the core asks it with the network
     * open, the stage with the real policy. */
    ck_assert_int_eq(kg_compose_plan(&H, &fake_bw, &fake_bw_probe, be, &p, &pol, plan, &who, &err),
                     0);
    size_t n;
    const char *const *argv = H.pub.plan_argv(plan, &n);
    const char *want[] = {"/usr/bin/bwrap", "--ro-bind", "/",    "/",   "--unshare-user",
                          "--uid=1000",     "--",        "make", "test"};
    ck_assert_uint_eq(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) ck_assert_str_eq(argv[i], want[i]);
    const char *s = H.pub.plan_file_content(plan, "slirp4netns argv (PID: the network helper)");
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "/usr/bin/slirp4netns --configure --mtu=65520 "
                        "--disable-host-loopback --enable-sandbox --enable-seccomp "
                        "--ready-fd=FD --netns-type=pid "
                        "--userns-path=/proc/PID/ns/user PID tap0");
    s = H.pub.plan_file_content(plan, "nft -f input (the packet filter)");
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(strstr(s, "policy drop;"));
    s = H.pub.plan_file_content(plan, "dnsmasq configuration (the resolver)");
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(strstr(s, "\nserver=/allowed.test/api.example.com/10.0.2.3\n"));
    s = H.pub.plan_file_content(plan, "resolv.conf (bound over /etc/resolv.conf)");
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(strstr(s, "nameserver 127.0.0.1"));
    /* The plan's words are the doctor's. */
    ck_assert(kg_strv_contains(plan->notes, SF_FILTER_WORDS));
    kg_plan_free(plan);
    /* The policy handed in was not changed by the composition. */
    ck_assert_int_eq(pol.network, KGATE_NET_RESTRICTED);
}
END_TEST

START_TEST(plan_off_refused)
{
    const kgate_backend *be = kgate_plugin_entry();
    kgate_policy pol = policy_for(KGATE_NET_OFF, NULL, 0);
    kgate_probe p = facts(1, 1, 1, 1);
    kgate_plan *plan = kg_plan_new();
    kgate_err err = {0};
    ck_assert_int_eq(be->plan(&H.pub, &pol, &p, plan, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "only for network restricted"));
    kg_plan_free(plan);
    kgate_proc proc = {.struct_size = sizeof proc};
    kgate_launch io = {.struct_size = sizeof io};
    ck_assert_int_eq(be->launch(&H.pub, &pol, &p, NULL, &io, &proc, &err), -1);
    ck_assert_int_eq(proc.pid, 0);
}
END_TEST

START_TEST(plan_errors)
{
    const kgate_backend *be = kgate_plugin_entry();
    kgate_probe p = facts(1, 1, 1, 1);
    kgate_err err = {0};
    const char *const evil[] = {"ok.test", "--help"};
    kgate_policy pol = policy_for(KGATE_NET_RESTRICTED, evil, 2);
    kgate_plan *plan = kg_plan_new();
    ck_assert_int_eq(be->plan(&H.pub, &pol, &p, plan, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a valid host name"));
    /* Refused before anything reached the plan. */
    ck_assert_uint_eq(kg_strv_len(plan->file_labels), 0);
    kg_plan_free(plan);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* With the real bubblewrap backend                                          */
/* ------------------------------------------------------------------------ */

static char real_root[64], real_home[96], real_proj[128];

static void real_setup(void)
{
    setup();
    use_real_bw = 1;
    bwrap_probe_from_sysctls(&fake_bw_probe, 1, 0, 15000, -1, -1, 1);
    snprintf(fake_bw_probe.tool_path, sizeof fake_bw_probe.tool_path, "/usr/bin/bwrap");
    snprintf(real_root, sizeof real_root, "/tmp/kgsf-test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(real_root));
    snprintf(real_home, sizeof real_home, "%s/home", real_root);
    snprintf(real_proj, sizeof real_proj, "%s/proj", real_home);
    ck_assert_int_eq(mkdir(real_home, 0755), 0);
    ck_assert_int_eq(mkdir(real_proj, 0755), 0);
}

static void real_teardown(void)
{
    rmdir(real_proj);
    rmdir(real_home);
    rmdir(real_root);
}

static kgate_policy real_policy(void)
{
    kgate_policy pol = policy_for(KGATE_NET_RESTRICTED, two_hosts, 2);
    pol.home = real_home;
    pol.project = real_proj;
    return pol;
}

START_TEST(real_doctor_restricted)
{
    const kgate_backend *be = kgate_plugin_entry();
    kgate_policy pol = real_policy();
    kgate_probe p = facts(1, 1, 1, 1);
    kgate_report *st = kg_report_new();
    kgate_report *bw = kg_report_new();
    be->doctor(&H.pub, &pol, &p, st);
    real_bw.doctor(&H.pub, &pol, &fake_bw_probe, bw);
    kgate_report *r = kg_compose_report(&H, bw, st);
    ck_assert_int_eq(r->verdict, KGATE_READY);
    ck_assert(report_has(r, "network restricted to 2 host entries"));
    ck_assert(report_has(r, "home hidden (tmpfs on "));
    ck_assert(report_has(r, "host Unix sockets: none reachable"));
    ck_assert(report_has(r, "abstract Unix sockets: unreachable (own network namespace)"));
    ck_assert(report_has(r, "planted hooks:"));
    ck_assert(report_has(r, "terminal: no controlling terminal"));
    ck_assert(report_has(r, "seccomp filter: "));
    ck_assert(report_has(r, "user namespaces work"));
    /* Nothing of bubblewrap's own network findings. */
    ck_assert(!report_has(r, bwrap_hosts_sentence()));
    ck_assert(!report_has(r, "network off"));
    ck_assert(!report_has(r, "network open"));
    for (size_t i = 0; i < r->n_items; i++) ck_assert_int_eq(r->items[i].verdict, KGATE_READY);

    /* Exactly one of bubblewrap's findings is dropped, and it is the hosts
     * one: each id of bubblewrap's own report for this policy appears as
     * often in the composition's, but that one, which bubblewrap does give. */
    ck_assert_uint_eq(id_count(bw, KGATE_FINDING_NET_HOSTS_UNSUPPORTED), 1);
    for (size_t i = 0; i < bw->n_items; i++) {
        const char *id = bw->items[i].id;
        if (strcmp(id, KGATE_FINDING_NET_HOSTS_UNSUPPORTED) != 0)
            ck_assert_msg(id_count(r, id) == id_count(bw, id), "%s not passed on", id);
    }
    ck_assert_uint_eq(id_count(r, KGATE_FINDING_NET_HOSTS_UNSUPPORTED), 0);
    /* ... and nothing else: slirp-filter's own three (the network, the
     * box, IPv6) besides. */
    ck_assert_uint_eq(r->n_items, bw->n_items - 1 + 3);
    ck_assert_uint_eq(id_count(r, "net.restricted") + id_count(r, "slirp-filter.box") +
                          id_count(r, "net.ipv6"),
                      3);
    kg_report_free(bw);
    kg_report_free(st);
    kg_report_free(r);

    /* bubblewrap's findings about the machine are the composition's too. */
    kgate_probe_init(&fake_bw_probe);
    bwrap_probe_from_sysctls(&fake_bw_probe, 1, 0, 15000, -1, 1, -1);
    ck_assert(fake_bw_probe.available);
    ck_assert_int_eq(composed(KGATE_NET_RESTRICTED, p, &r), KGATE_READY);
    ck_assert(report_has(r, "AppArmor restricts unprivileged user namespaces"));
    kg_report_free(r);
}
END_TEST

START_TEST(real_plan_carries_seccomp)
{
    const kgate_backend *be = kgate_plugin_entry();
    kgate_policy pol = real_policy();
    kgate_probe p = facts(1, 1, 1, 1);
    kgate_plan *plan = kg_plan_new();
    kgate_err err = {0};
    const char *who = NULL;
    ck_assert_msg(kg_compose_plan(&H, &real_bw, &fake_bw_probe, be, &p, &pol, plan, &who, &err) ==
                      0,
                  "%s: %s", who, err.msg);
    const char *text = H.pub.plan_file_content(plan, KGL_SECCOMP_LABEL);
    ck_assert_ptr_nonnull(text);
    char *want = kgl_seccomp_describe();
    ck_assert_ptr_nonnull(want);
    ck_assert_str_eq(text, want);
    free(want);
    size_t n;
    const char *const *argv = H.pub.plan_argv(plan, &n);
    int unshare_user = 0, unshare_net = 0, seccomp = 0;
    for (size_t i = 0; i < n; i++) {
        unshare_user |= strcmp(argv[i], "--unshare-user") == 0;
        unshare_net |= strcmp(argv[i], "--unshare-net") == 0;
        seccomp |= strcmp(argv[i], "--seccomp") == 0;
    }
    ck_assert(unshare_user);
    ck_assert(!unshare_net); /* the helper's namespace is the network box */
    ck_assert(!seccomp); /* a descriptor: launch adds it */
    ck_assert_ptr_nonnull(H.pub.plan_file_content(plan, "nft -f input (the packet filter)"));
    kg_plan_free(plan);
}
END_TEST

START_TEST(backend_identity)
{
    const kgate_backend *be = kgate_plugin_entry();
    ck_assert_str_eq(be->name, "slirp-filter");
    ck_assert_int_eq(be->abi_major, KGATE_ABI_MAJOR);
    ck_assert_uint_eq(be->struct_size, sizeof(kgate_backend));
    kgate_probe p;
    kgate_probe_init(&p);
    kgate_err err = {0};
    ck_assert_int_eq(be->probe(&H.pub, KGATE_PROBE_QUICK, &p, &err), 0);
    /* A network stage: never a box, so no score against one. */
    ck_assert_int_eq(be->kind, KGATE_KIND_NETWORK);
    ck_assert_str_eq(be->boxes[0], "bubblewrap");
    ck_assert_ptr_null(be->boxes[1]);
    /* It forwards --publish (ABI 2.2); the boxes do not. */
    ck_assert_int_eq(be->publishes, 1);
    ck_assert_uint_ge(be->abi_minor, 2);
    ck_assert_int_eq(p.score, 0);
    ck_assert_int_ge(kgate_probe_fact(&p, SF_FACT_SLIRP, -1), 0);
    /* The tool paths are the probe's state, not a global. */
    const sf_tools *t = p.state;
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->slirp[0] != '\0', kgate_probe_fact(&p, SF_FACT_SLIRP, -1));
    ck_assert_str_eq(t->slirp, p.tool_path);
    ck_assert(be->release != NULL);
    be->release(p.state);
}
END_TEST

/* Restricted launch runs the tools its probe found: the ones in the state
 * it is handed.  With no state it refuses (nothing is looked up again);
 * with a state that found no slirp4netns it says so, which shows the state
 * is what launch reads. */
START_TEST(launch_uses_probe_state)
{
    const kgate_backend *be = kgate_plugin_entry();
    kgate_policy pol = policy_for(KGATE_NET_RESTRICTED, two_hosts, 2);
    kgate_plan *plan = kg_plan_new();
    H.pub.plan_arg(plan, "/usr/bin/bwrap");
    kgate_proc proc = {.struct_size = sizeof proc};
    kgate_launch io = {.struct_size = sizeof io};
    kgate_err err = {0};
    kgate_probe p = facts(1, 1, 1, 1);
    ck_assert_ptr_null(p.state);
    ck_assert_int_eq(be->launch(&H.pub, &pol, &p, plan, &io, &proc, &err), -1);
    ck_assert_str_eq(err.msg, "launch was not given this backend's probe");
    ck_assert_int_eq(be->launch(&H.pub, &pol, NULL, plan, &io, &proc, &err), -1);
    ck_assert_str_eq(err.msg, "launch was not given this backend's probe");

    sf_tools none;
    memset(&none, 0, sizeof none);
    p.state = &none;
    ck_assert_int_eq(be->launch(&H.pub, &pol, &p, plan, &io, &proc, &err), -1);
    ck_assert_str_eq(err.msg, "slirp4netns is not installed");
    sf_tools no_nft = none;
    strcpy(no_nft.slirp, "/usr/bin/slirp4netns");
    p.state = &no_nft;
    ck_assert_int_eq(be->launch(&H.pub, &pol, &p, plan, &io, &proc, &err), -1);
    ck_assert_str_eq(err.msg, "nft is not installed");
    strcpy(no_nft.nft, "/usr/sbin/nft");
    ck_assert_int_eq(be->launch(&H.pub, &pol, &p, plan, &io, &proc, &err), -1);
    ck_assert_str_eq(err.msg, "dnsmasq is not installed");
    ck_assert_int_eq(proc.pid, 0);
    kg_plan_free(plan);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("slirp-filter");
    TCase *t = tcase_create("text");
    tcase_add_test(t, hosts_valid);
    tcase_add_test(t, hosts_hostile);
    tcase_add_test(t, entries_parse);
    tcase_add_test(t, nft_ruleset_host_loopback);
    tcase_add_test(t, entries_match);
    tcase_add_test(t, filter_build_errors);
    tcase_add_test(t, nft_ruleset_exact);
    tcase_add_test(t, never_addresses);
    tcase_add_test(t, self_addrs_read);
    tcase_add_test(t, nft_ruleset_literals_only);
    tcase_add_test(t, dnsmasq_conf_exact);
    tcase_add_test(t, dnsmasq_conf_one_set);
    tcase_add_test(t, builders_scale);
    tcase_add_test(t, resolv_conf_text);
    tcase_add_test(t, watcher_names);
    tcase_add_test(t, slirp_argv_exact);
    tcase_add_test(t, find_tool_ignores_relative_path);
    tcase_add_test(t, publish_texts);
    suite_add_tcase(s, t);
    TCase *b = tcase_create("backend");
    tcase_add_checked_fixture(b, setup, NULL);
    tcase_add_test(b, doctor_all_present);
    tcase_add_test(b, doctor_includes_filesystem_box);
    tcase_add_test(b, doctor_missing_tools);
    tcase_add_test(b, plan_restricted_composes_bubblewrap);
    tcase_add_test(b, plan_off_refused);
    tcase_add_test(b, plan_errors);
    tcase_add_test(b, backend_identity);
    tcase_add_test(b, launch_uses_probe_state);
    suite_add_tcase(s, b);
    TCase *rb = tcase_create("real-bubblewrap");
    tcase_add_checked_fixture(rb, real_setup, real_teardown);
    tcase_add_test(rb, real_doctor_restricted);
    tcase_add_test(rb, real_plan_carries_seccomp);
    suite_add_tcase(s, rb);
    return kgt_run_suite(s);
}
