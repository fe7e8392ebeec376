/* sf-internal.h: the slirp-filter network stage's internal pieces.
 *
 * The stage starts the box's plan (a bubblewrap argv, composed by the
 * core) from a second process: a helper that owns a user and network
 * namespace, lets slirp4netns attach a user-mode network to it, installs
 * an nftables filter and a filtering resolver (dnsmasq) there, and then
 * execs bwrap.  bwrap's own --unshare-user puts the program in a nested user
 * namespace, so the program holds no capability over the network namespace
 * and cannot undo the filter (see docs/network.md).
 *
 * The text builders are pure and unit-tested; sf-launch.c is the process
 * construction. */
#ifndef KG_SF_H
#define KG_SF_H

#include <stddef.h>
#include <sys/types.h>

#include "kgate/kgate-plugin.h"
#include "kgate/kgate-tool.h"

/* What slirp4netns presents inside the namespace (its defaults). */
#define SF_GUEST_ADDR "10.0.2.100"
#define SF_DNS_ADDR "10.0.2.3"
#define SF_TAP "tap0"
/* slirp4netns' largest MTU minus one: fewer, larger segments through the
 * user-mode stack. */
#define SF_MTU "65520"

/* 1 when name is an allow_hosts entry kgate_hostspec_parse accepts
 * (kgate-hostspec.h): [A-Za-z0-9.-] with a leading "*." and one ":port" at
 * most, so nothing that could read as a flag, a comment, a quote or a
 * second line in a rules file or a dnsmasq configuration. */
int sf_host_valid(const char *name);

/* Checks every host of the list; on the first bad one fills err. */
int sf_hosts_check(const kgate_strlist *hosts, kgate_err *err);

/* One allow_hosts entry: `name`, `*.name` (names under it at any depth,
 * not name itself), either with `:port` (that TCP port only), or a literal
 * IPv4 address (with or without a port).  kgate_hostspec_parse's reading
 * (kgate-hostspec.h), plus whether it is a literal address, which needs no
 * DNS and goes straight into the filter. */
typedef struct sf_entry {
    /* Lower case; a literal's canonical dotted quad.  Points into the
     * buffer given to sf_entry_parse, or sf_filter.names: a name inline
     * made an entry 272 bytes, and 10,000 of them 2.7 MB that each launch
     * touched page by page, twice. */
    const char *name;
    int wildcard; /* 1: *.name */
    unsigned port; /* 0: every TCP port */
    int is_addr; /* 1: a literal IPv4 address */
    int host_loopback; /* 1: localhost:port, the host's loopback */
} sf_entry;

/* The most a canonical name takes, with its NUL (kgate_hostspec's). */
#define SF_NAME_SIZE 254

/* 0 and *out filled (its name in buf), or -1 with *why (a static
 * sentence). */
int sf_entry_parse(const char *text, sf_entry *out, char buf[SF_NAME_SIZE], const char **why);

/* 1 when name (a DNS name, any case) is allowed by e.  Literals match
 * nothing. */
int sf_entry_matches(const sf_entry *e, const char *name);

/* An address put into the filter at launch, with the port it is allowed
 * on (0: every port): literal entries, and names /etc/hosts answers (the
 * program's resolver reads /etc/hosts before it asks DNS). */
typedef struct sf_fixed {
    unsigned addr; /* network byte order */
    unsigned port;
    int explicit; /* 1: a literal allow_hosts entry (it may name a never
                    * address, sf_never_v4); 0: from /etc/hosts */
} sf_fixed;

/* The host's own addresses, read at launch (getifaddrs in the host's
 * network namespace): slirp4netns connects from there, so an answer that
 * names one of them reaches the host's own services. */
typedef struct sf_self {
    unsigned *v4; /* network byte order */
    size_t n4;
    unsigned char (*v6)[16];
    size_t n6;
} sf_self;

/* The whole filter, computed by the parent before anything is forked. */
typedef struct sf_filter {
    sf_entry *e;
    size_t n;
    char *names; /* the entries' names, one after another */
    unsigned *ports; /* distinct ports of the entries, 0 included if used */
    size_t n_ports;
    sf_fixed *fixed;
    size_t n_fixed, cap_fixed;
    sf_self self; /* empty unless sf_filter_add_self_addrs ran */
    /* The ports of localhost:port entries (the host's loopback, which
     * slirp4netns reaches as SF_HOST_ADDR).  Kept apart from e: such an
     * entry is no name to look up, no /etc/hosts line to follow and no
     * port of an allow set. */
    unsigned *loop_ports;
    size_t n_loop;
} sf_filter;

/* slirp4netns's address for the host: its loopback when slirp4netns runs
 * without --disable-host-loopback. */
#define SF_HOST_ADDR "10.0.2.2"

/* Parses every entry (err names the first bad one, by position). */
int sf_filter_build(const kgate_strlist *hosts, sf_filter *f, kgate_err *err);
/* Adds the IPv4 addresses a hosts file (its text) gives to allowed names.
 * Returns 0, or -1 when out of memory. */
int sf_filter_add_hosts_text(sf_filter *f, const char *text);
/* Adds one fixed address (deduplicated; explicit wins); 0, or -1 when out
 * of memory. */
int sf_filter_add_fixed(sf_filter *f, unsigned addr, unsigned port, int explicit);
void sf_filter_free(sf_filter *f);

/* Addresses never reachable through a name (docs/network.md, "Answers
 * that name the host or a metadata service"): loopback, 0/8, slirp's own
 * 10.0.2.0/24, link-local 169.254/16, the metadata addresses that are not
 * link-local (100.100.100.200, 168.63.129.16), and the IPv6 equivalents
 * (::, ::1, fe80::/10, fd00:ec2::254, v4-mapped forms of the IPv4 ones),
 * plus the host's own addresses in f->self.  The nft ruleset checks them
 * before the allow sets; only a literal allow_hosts entry gets past. */
typedef struct sf_range {
    const char *text; /* as nft writes it */
    unsigned net; /* host byte order */
    unsigned bits;
} sf_range;
extern const sf_range sf_never_v4_ranges[];
extern const size_t sf_never_v4_n;
extern const char *const sf_never_v6_static[];
extern const size_t sf_never_v6_n;

/* 1 when addr (IPv4, network byte order) is never reachable through a
 * name: in a static range or one of f->self's. */
int sf_never_v4(const sf_filter *f, unsigned addr);
/* 1 when addr is a literal allow_hosts entry (on any port). */
int sf_explicit_v4(const sf_filter *f, unsigned addr);
/* Adds one host address (AF_INET or AF_INET6, raw bytes); addresses a
 * static range already covers, and repeats, are skipped.  0, or -1 when
 * out of memory. */
int sf_filter_add_self(sf_filter *f, int family, const void *addr);
/* Reads the host's own addresses (getifaddrs, in the caller's network
 * namespace) into f->self.  0, or -1 with err filled: the launch refuses
 * rather than run without them. */
int sf_filter_add_self_addrs(sf_filter *f, kgate_err *err);
/* Everything plan and launch build the same way: the entries,
 * /etc/hosts, and the host's own addresses. */
int sf_filter_for_policy(const kgate_strlist *hosts, sf_filter *f, kgate_err *err);

/* The plan's files that the launch runs as they are (sf_plan writes them,
 * sf_launch_restricted reads them back): what --dry-run shows of the
 * filter and the resolver is what runs, and a long list is not built
 * twice. */
#define SF_PLAN_NFT "nft -f input (the packet filter)"
#define SF_PLAN_DNSMASQ "dnsmasq configuration (the resolver)"

/* The names of the filter's pieces, shared by the builders and tests. */
#define SF_RESOLVER_ADDR "127.0.0.1"
#define SF_NFT_TABLE "kgate"
#define SF_NFLOG_GROUP 1
/* The connection mark the filter gives queries to the resolver; dnsmasq
 * --conntrack copies it (SO_MARK) onto its upstream sockets, and only
 * packets carrying it reach 10.0.2.3.  Setting SO_MARK needs CAP_NET_ADMIN
 * over the namespace, which the program does not have. */
#define SF_QUERY_MARK "0x4b47"
/* How long an answered address stays allowed: dnsmasq --nftset adds
 * elements without a timeout, so they get the set's default; a day
 * covers every run we expect, and dnsmasq caches for at most an hour
 * (--max-cache-ttl), so a cached answer is always in the set. */
#define SF_SET_TIMEOUT "1d"
#define SF_SET_SIZE 262144

/* The nft -f input: one inet table with the allow sets and the output
 * chain.  Returns malloc'd text or NULL. */
char *sf_nft_ruleset(const sf_filter *f);

/* Loading the ruleset (sf-nft.c).  The library's soname: its ABI. */
#define SF_NFTLIB_SONAME "libnftables.so.1"

/* The ruleset through libnftables (soname: SF_NFTLIB_SONAME; tests name
 * one that is not there): 0 loaded, -1 refused (msg: nft's first line),
 * 1 the library cannot be opened (msg: why). */
int sf_nft_load_library(const char *soname, const char *ruleset, char *msg, size_t cap);

/* A load in progress: the nft tool's process, or done by the library. */
typedef struct sf_nft_job {
    pid_t pid; /* the nft tool, or -1 */
    int out; /* its stdout and stderr */
    int werr; /* writing the ruleset to it failed */
    int failed; /* the load failed already; msg says why */
    char msg[256];
} sf_nft_job;

/* The tool's way: nft -f - with the ruleset on stdin (the caller ignores
 * SIGPIPE).  start returns -1 with errno; finish waits up to wait_ms for
 * its end and returns 0 when it loaded, else -1 with j->msg. */
int sf_nft_tool_start(const char *nft, const char *ruleset, sf_nft_job *j);
int sf_nft_tool_finish(sf_nft_job *j, int wait_ms);

/* The keeper's: the library when it opens (done on return), else the tool
 * (started); end says whether the ruleset is in place (-1: j->msg). */
void sf_nft_begin(const char *soname, const char *nft, const char *ruleset, sf_nft_job *j);
int sf_nft_end(sf_nft_job *j, int wait_ms);

/* The dnsmasq configuration (--conf-file): built from parsed entries only.
 * log_queries adds what the event watcher reads.  Returns malloc'd text or
 * NULL. */
char *sf_dnsmasq_conf(const sf_filter *f, int log_queries);

/* One sentence, the same in doctor and plan. */
#define SF_FILTER_WORDS                                                          \
    "a resolver inside the sandbox's network namespace (dnsmasq) answers only "  \
    "the listed names and refuses every other name itself, so its query never "  \
    "leaves the machine; each address it answers is added to an nftables allow " \
    "set before the program gets the answer, and every other connection is "     \
    "refused"

/* The resolv.conf bound over /etc/resolv.conf inside the namespace: the
 * resolver on the namespace's loopback. */
const char *sf_resolv_conf(void);

/* The slirp4netns argument vector.  pid 0 and ready_fd -1 produce the
 * placeholders shown by --dry-run.  Pointers in out->v point into out. */
typedef struct sf_slirp_argv {
    const char *v[16];
    size_t n;
    char ready[32];
    char userns[64];
    char pid[24];
    char api[160];
} sf_slirp_argv;

/* host_loopback: the filter has localhost:port entries, so slirp4netns
 * must forward SF_HOST_ADDR to the host's loopback (the nft ruleset then
 * lets exactly those ports through).  api_socket: where slirp4netns
 * listens for the add_hostfwd requests of --publish (NULL: no API socket,
 * so nothing can ever ask it to listen on the host). */
void sf_slirp_argv_build(sf_slirp_argv *out, const char *slirp_path, int ready_fd, pid_t pid,
                         int host_loopback, const char *api_socket);

/* The policy's ports to publish (none when the core is older than ABI 2.2),
 * checked again here, where the host side is bound: a loopback address
 * and ports 1..65535, or err and -1. */
int sf_publish_check(const kgate_policy *policy, const kgate_publish **v, size_t *n,
                     kgate_err *err);

/* The slirp4netns API request that publishes p (one JSON object, its
 * documented add_hostfwd with every address given: slirp4netns's default
 * host address is 0.0.0.0).  Returns the length, or -1 when it does not
 * fit. */
int sf_hostfwd_request(const kgate_publish *p, char *buf, size_t len);

/* Probe facts this backend records. */
#define SF_FACT_SLIRP "slirp4netns"
#define SF_FACT_NFT "nft" /* nft present */
#define SF_FACT_NFT_OK "nft_usable" /* ran in a throwaway netns */
#define SF_FACT_DNSMASQ "dnsmasq" /* dnsmasq present */
#define SF_FACT_USERNS "userns" /* unshare(USER|NET) worked */
#define SF_FACT_TUN "tun" /* /dev/net/tun usable by this uid */

/* Where probe found the tools (empty when missing): the probe's state,
 * allocated by probe and freed by the core through release. */
typedef struct sf_tools {
    char slirp[256];
    char nft[256];
    char dnsmasq[256];
    /* Where each missing tool was looked for (kgate_tool_find's words,
     * without the name), for doctor and for the line of a run that falls
     * back to a weaker box. */
    char slirp_why[512];
    char nft_why[512];
    char dnsmasq_why[512];
} sf_tools;

/* Looks a program up where no box can write (kgate_tool_find: never
 * PATH, which a project's node_modules/.bin is often on). */
int sf_find_tool(const char *name, char *out, size_t outsz);
/* The same, with why it was not found (or "") in why. */
int sf_find_tool_why(const char *name, char *out, size_t outsz, char *why, size_t whysz);

/* A whole small file (at most 4 MiB) as a malloc'd string, or NULL. */
char *sf_read_small_file(const char *path);

/* The vtable's probe (sf-probe.c) and plan (sf-plan.c). */
int sf_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe, kgate_err *err);
int sf_plan(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
            kgate_plan *plan, kgate_err *err);

/* The doctor table, pure (sf-doctor.c): the stage's own findings (tools,
 * namespaces, the tun device, the filter); the core adds the box's. */
int sf_doctor(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
              kgate_report *rep);

/* The event watcher (sf-watch.c): reads dnsmasq's log on log_fd and the
 * refused packets from NFLOG, writes records to events_fd.  f (the filter,
 * for sf_never_v4): an answer that names a never address is reported as it
 * is given.  The keeper runs it itself once the program may run:
 *   open: its tables and the NFLOG socket (*listening: bound; without it
 *     the run goes on, refused connections unreported); NULL: no memory.
 *   arm: SIGTERM ends the loop (after what is queued is read), SIGPIPE is
 *     ignored; call before SIGTERM can be delivered.
 *   loop: reads until SIGTERM (at once with stop_now), then exits. */
typedef struct sf_watch sf_watch;
sf_watch *sf_watch_open(int log_fd, int events_fd, const sf_filter *f, int *listening);
void sf_watch_arm(void);
_Noreturn void sf_watch_loop(sf_watch *w, int stop_now);

/* In a user namespace just made: 0 maps to uid and gid, setgroups is
 * denied (sf-launch.c, where H does this).  0, or -1 with errno. */
int sf_map_ids(uid_t uid, gid_t gid);

/* The restricted construction.  plan's argv is the bwrap argv to exec
 * inside the helper. */
int sf_launch_restricted(const kgate_host *host, const kgate_policy *policy, const kgate_plan *plan,
                         const kgate_launch *io, const sf_tools *tools, kgate_proc *proc,
                         kgate_err *err);

#endif
