/* sf-internal.h: the slirp-filter network stage's internal pieces.
 *
 * The stage starts the box's plan (a bubblewrap argv, composed by the
 * core) from a second process: a helper that owns a user and network
 * namespace, lets slirp4netns attach a user-mode network to it, installs
 * an iptables allow list there, and then execs bwrap.  bwrap's own --unshare-user puts the program in a nested user
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

/* What slirp4netns presents inside the namespace (its defaults). */
#define SF_GUEST_ADDR "10.0.2.100"
#define SF_DNS_ADDR "10.0.2.3"
#define SF_TAP "tap0"
/* slirp4netns' largest MTU minus one: fewer, larger segments through the
 * user-mode stack. */
#define SF_MTU "65520"

/* 1 when name is a host name we are willing to put on a command line or in
 * a rules file: [A-Za-z0-9.-], labels of 1..63 characters that neither start
 * nor end with '-', at most 253 characters, no empty label (so no leading,
 * trailing or doubled dot).  Everything that could read as a flag, a
 * comment, a quote or a second line is refused by that alphabet. */
int sf_host_valid(const char *name);

/* Checks every host of the list; on the first bad one fills err. */
int sf_hosts_check(const kgate_strlist *hosts, kgate_err *err);

/* The iptables-restore input for IPv4.  addrs are dotted quads (already
 * validated by inet_pton in the caller, checked again here).  With
 * template_hosts non-NULL and addrs NULL, the per-address lines are replaced
 * by comments naming the hosts, for --dry-run.  Returns malloc'd text or
 * NULL (bad address or no memory). */
char *sf_rules_v4(const char *const *addrs, size_t n_addrs,
                  const kgate_strlist *template_hosts);

/* The ip6tables-restore input: IPv6 out is dropped except loopback.
 * Returns malloc'd text or NULL. */
char *sf_rules_v6(void);

/* The resolv.conf bound over /etc/resolv.conf inside the namespace. */
const char *sf_resolv_conf(void);

/* The slirp4netns argument vector.  pid 0 and ready_fd -1 produce the
 * placeholders shown by --dry-run.  Pointers in out->v point into out. */
typedef struct sf_slirp_argv {
    const char *v[16];
    size_t n;
    char ready[32];
    char userns[64];
    char pid[24];
} sf_slirp_argv;

void sf_slirp_argv_build(sf_slirp_argv *out, const char *slirp_path,
                         int ready_fd, pid_t pid);

/* Probe facts this backend records. */
#define SF_FACT_SLIRP "slirp4netns"
#define SF_FACT_IPT "iptables"         /* iptables-restore present */
#define SF_FACT_IPT_OK "iptables_usable" /* ran in a throwaway netns */
#define SF_FACT_IP6T "ip6tables"       /* ip6tables-restore present */
#define SF_FACT_USERNS "userns"        /* unshare(USER|NET) worked */
#define SF_FACT_TUN "tun"              /* /dev/net/tun usable by this uid */

/* Where probe found the tools (empty when missing): the probe's state,
 * allocated by probe and freed by the core through release. */
typedef struct sf_tools {
    char slirp[256];
    char ipt[256];
    char ip6t[256];
} sf_tools;

/* Looks a program up in PATH and then the usual sbin directories (an
 * ordinary user's PATH often lacks /usr/sbin, where iptables lives). */
int sf_find_tool(const char *name, char *out, size_t outsz);

/* The doctor table, pure: the stage's own findings (tools, namespaces,
 * the tun device, the filter); the core adds the box's. */
int sf_doctor(const kgate_host *host, const kgate_policy *policy,
              const kgate_probe *probe, kgate_report *rep);

/* The restricted construction.  plan's argv is the bwrap argv to exec
 * inside the helper. */
int sf_launch_restricted(const kgate_host *host, const kgate_policy *policy,
                         const kgate_plan *plan, const kgate_launch *io,
                         const sf_tools *tools, kgate_proc *proc,
                         kgate_err *err);

#endif
