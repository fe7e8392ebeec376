/* ll-doctor.c: what a Landlock box enforces on this kernel, and what it
 * does not.  Pure: the policy and the probe's facts only, so the tests can
 * hand it any ABI.  The table is docs/landlock.md. */
#include "ll-internal.h"

#include <stdio.h>

static int report_machine(const kgate_host *h, const kgate_probe *pr, kgate_report *rep)
{
    if (!kgate_probe_fact(pr, LL_FACT_LINUX, 0)) {
        h->report(rep, KGATE_BLOCKED, KGATE_FINDING_HOST_NOT_LINUX, "Landlock needs Linux");
        return 1;
    }
    int abi = kgate_probe_fact(pr, LL_FACT_ABI, 0), blocked = 0;
    if (abi < 1) {
        h->report(rep, KGATE_BLOCKED, "landlock.unavailable",
                  "Landlock is not enabled in this kernel (Linux 5.13 or "
                  "later with landlock in its lsm= list; cat "
                  "/sys/kernel/security/lsm)");
        blocked = 1;
    }
    if (!kgate_probe_fact(pr, LL_FACT_NNP, 0)) {
        h->report(rep, KGATE_BLOCKED, "landlock.no-nnp",
                  "no_new_privs is not available: a Landlock ruleset cannot "
                  "be applied without it");
        blocked = 1;
    }
    if (!kgate_probe_fact(pr, LL_FACT_SECCOMP, 0)) {
        h->report(rep, KGATE_BLOCKED, "seccomp.unavailable",
                  "seccomp filters cannot be loaded: the box needs its "
                  "seccomp filter");
        blocked = 1;
    }
    if (blocked) return 1;
    h->report(rep, KGATE_READY, "landlock.abi", "Landlock ABI %d%s, no_new_privs, seccomp filter",
              abi, abi > LL_ABI_KNOWN ? " (used as ABI 7, the newest kgate knows)" : "");
    int userns = kgate_probe_fact(pr, LL_FACT_USERNS, -1);
    if (userns == 1)
        h->report(rep, KGATE_READY, "box.userns-works",
                  "user namespaces work here: bubblewrap's box is the "
                  "stronger one and is picked before Landlock where it can "
                  "enforce the policy; where only a missing tool stops it "
                  "(bwrap, or slirp4netns, dnsmasq or nft for a host list) "
                  "kgate says so when it picks Landlock");
    else if (userns == 0)
        h->report(rep, KGATE_READY, "box.no-userns",
                  "user namespaces are refused here (a container's seccomp "
                  "profile, bwrap --disable-userns, a sysctl or AppArmor): "
                  "Landlock needs none");
    return 0;
}

static void report_fs(const kgate_host *h, const kgate_policy *pol, int abi, int unotify,
                      kgate_report *rep)
{
    h->report(rep, KGATE_READY, KGATE_FINDING_FS_HOME_HIDDEN,
              "home hidden (%s: no rule grants it), system outside it read "
              "and execute only, project writable (%s), %zu read path%s, %zu "
              "extra writable path%s; /tmp, /var/tmp, /run/user and /dev are "
              "not granted (a private TMPDIR instead; /dev/null, zero, full, "
              "random, urandom, tty)",
              pol->home ? pol->home : "$HOME",
              pol->project ? pol->project : "the working directory", pol->read_paths.n,
              pol->read_paths.n == 1 ? "" : "s", pol->allow_paths.n,
              pol->allow_paths.n == 1 ? "" : "s");
    char dirs[1024];
    size_t n = ll_project_split_dirs(pol, dirs, sizeof dirs);
    size_t nprot = pol->protect_paths.n, ndeny = pol->deny_read.n;
    h->report(rep, KGATE_READY, KGATE_FINDING_FS_PROTECT_PATHS,
              "%zu protected path%s read-only and %zu deny_read entr%s "
              "unreadable: the directories that hold them are granted entry "
              "by entry",
              nprot, nprot == 1 ? "" : "s", ndeny, ndeny == 1 ? "y" : "ies");
    if (n && unotify == 1)
        h->report(rep, KGATE_READY, "fs.split",
                  "%s: granted entry by entry, and given back by the "
                  "supervisor (seccomp user notification): it creates, "
                  "removes and renames there itself and refuses only the "
                  "protected and deny_read names%s",
                  dirs,
                  pol->deny_read.n ? "; with a deny_read entry inside, "
                                     "every open and exec passes through it: "
                                     "Landlock grants no execute there, so a "
                                     "program made there is given, when it is "
                                     "executed, an inode made at launch with "
                                     "a rule of its own (up to " KGL_UN_POOL_MAX_STR " per run)"
                                   : "");
    else if (n)
        h->report(rep, KGATE_DEGRADED, "fs.split",
                  "nothing can be created, removed or renamed directly in %s "
                  "(Landlock cannot grant a directory and hold back something "
                  "inside it; their existing files stay writable, their "
                  "other subdirectories fully so): git cannot commit here, "
                  "it writes .git/index.lock%s",
                  dirs,
                  unotify == 0 ? " (the supervisor that gives them back "
                                 "needs seccomp user notification with "
                                 "SECCOMP_ADDFD_FLAG_SEND, Linux 5.14, and "
                                 "openat2; not available here or turned off "
                                 "with " LL_ENV_NO_UNOTIFY ")"
                               : "");
    h->report(rep, KGATE_READY, "fs.listing",
              "the directories on the way to $HOME (/ among them) cannot be "
              "listed: listing rights would hold for $HOME's names too");
    if (abi >= 1 && abi < 3)
        h->report(rep, KGATE_DEGRADED, "fs.truncate-unchecked",
                  "Landlock ABI %d cannot refuse truncate(2): a file the "
                  "program may only read but may write by its mode can be "
                  "emptied (ABI 3, Linux 6.2)",
                  abi);
    if (abi >= 1 && abi < 2)
        h->report(rep, KGATE_READY, "fs.refer",
                  "ABI 1: renaming or linking a file into another directory "
                  "is always refused (ABI 2 allows it inside the project)");
    if (abi >= 1 && abi < 5)
        h->report(rep, KGATE_READY, "fs.ioctl-dev",
                  "device ioctls are not checked by Landlock ABI %d (ABI 5); "
                  "the devices granted are null, zero, full, random, "
                  "urandom and tty, and TIOCSTI/TIOCLINUX are refused by "
                  "seccomp",
                  abi);
}

static void report_network(const kgate_host *h, const kgate_policy *pol, const kgate_probe *pr,
                           int abi, kgate_report *rep)
{
    char why[128];
    switch (pol->network) {
    case KGATE_NET_OFF:
        h->report(rep, KGATE_READY, KGATE_FINDING_NET_OFF,
                  "network off: seccomp refuses every socket but AF_UNIX "
                  "(TCP, UDP, raw, netlink, ...) and io_uring%s%s",
                  abi >= 4 ? "; Landlock refuses TCP bind and connect too"
                           : "; Landlock ABI below 4 has no TCP rules (seccomp "
                             "alone)",
                  pol->configured_network == KGATE_NET_RESTRICTED
                      ? " (restricted with an empty host list)"
                      : "");
        break;
    case KGATE_NET_OPEN:
        h->report(rep, KGATE_DEGRADED, KGATE_FINDING_NET_OPEN,
                  "network open: the filesystem box is installed, the network "
                  "box is not");
        break;
    case KGATE_NET_RESTRICTED:
        if (pol->allow_hosts.n > 0 && !ll_net_ready(pr, why, sizeof why))
            h->report(rep, KGATE_BLOCKED, KGATE_FINDING_NET_HOSTS_UNSUPPORTED, "%s (%s)",
                      ll_hosts_sentence(), why);
        else if (pol->allow_hosts.n > 0)
            h->report(rep, KGATE_READY, "net.hosts",
                      "network restricted by name: the supervisor checks and "
                      "makes every connect and send (TCP to answered addresses "
                      "of listed names and listed ports, UDP only to port 53 "
                      "through dnsmasq, which answers unlisted names NXDOMAIN "
                      "without asking anyone); not covered: 32-bit network "
                      "calls (refused), IPv6 (refused)");
        else
            h->report(rep, KGATE_READY, KGATE_FINDING_NET_OFF, "network off");
        break;
    default:
        h->report(rep, KGATE_BLOCKED, KGATE_FINDING_NET_MODE_UNKNOWN, "unknown network mode %d",
                  (int)pol->network);
        break;
    }
}

/* SysV IPC: bubblewrap's IPC namespace keeps the user's objects out of
 * reach; here the supervisor (kgl-ipc.c) does, or the filter refuses the
 * calls.  Either way nothing outside is reachable: READY, with what is
 * lost said.  Where the filesystem supervisor runs, its filter holds the
 * process's one seccomp listener and passes the calls on to the same IPC
 * supervisor (ll-launch.c): the same objects, the same refusals. */
static void report_ipc(const kgate_host *h, const kgate_probe *pr, kgate_report *rep)
{
    if (kgate_probe_fact(pr, LL_FACT_IPC, 0) == 1)
        h->report(rep, KGATE_READY, "ipc.sysv",
                  "SysV IPC: only the run's own objects (no IPC namespace: "
                  "kgate's supervisor makes them through seccomp user "
                  "notification, passed on by the filesystem supervisor "
                  "where that runs, refuses every other id and key and "
                  "*_STAT and *_INFO, and removes them at the end; 32-bit "
                  "callers and POSIX queues refused; /proc/sysvipc still "
                  "lists every object's key, id and owner, not its contents)");
    else
        h->report(rep, KGATE_READY, "ipc.sysv",
                  "SysV IPC: none in the Landlock box; no IPC namespace "
                  "(every shmget, msgget, semget and call on an id is "
                  "refused, and POSIX queues; seccomp user notification "
                  "with continue, Linux 5.5, would give the run objects of "
                  "its own)");
}

/* Host Unix sockets by path: the supervisor decides them where it runs
 * (kgl-unotify-unix.c); Landlock alone only from ABI 9. */
static void report_unix(const kgate_host *h, const kgate_policy *pol, int abi, int unotify,
                        kgate_report *rep)
{
    if (unotify == 1)
        h->report(rep, KGATE_READY, KGATE_FINDING_SOCKETS_UNIX,
                  "host Unix sockets by path: refused unless allow_sockets names "
                  "them (%zu entr%s); the supervisor resolves each connect and "
                  "send to a path itself and makes it on the socket it judged, "
                  "in every network mode; the run's own sockets (below the "
                  "project, its TMPDIR, allow_paths) connect",
                  pol->allow_sockets.n, pol->allow_sockets.n == 1 ? "y" : "ies");
    else
        h->report(rep, KGATE_DEGRADED, KGATE_FINDING_SOCKETS_UNIX,
                  "host Unix sockets reachable by path are not refused: "
                  "Landlock controls connecting to them only from ABI 9 (kgate "
                  "uses ABI %d) and the supervisor that decides them needs "
                  "seccomp user notification (Linux 5.14; not available here "
                  "or turned off with " LL_ENV_NO_UNOTIFY "); a known path "
                  "(/run/dbus/system_bus_socket, a docker.sock) can be "
                  "connected to",
                  abi);
}

static void report_process(const kgate_host *h, const kgate_policy *pol, int abi, kgate_report *rep)
{
    if (abi >= 6)
        h->report(rep, KGATE_READY, "scope.signal",
                  "signals: refused to every process outside the box "
                  "(Landlock scope, ABI 6)");
    else
        h->report(rep, KGATE_DEGRADED, "scope.signal",
                  "signals: Landlock ABI %d cannot refuse them: the program "
                  "can signal the user's other processes (ABI 6, Linux 6.12)",
                  abi);
    if (abi >= 6)
        h->report(rep, KGATE_READY, KGATE_FINDING_SOCKETS_ABSTRACT,
                  "abstract Unix sockets: those made outside the box are "
                  "unreachable (Landlock scope, ABI 6)");
    else
        h->report(rep, KGATE_DEGRADED, KGATE_FINDING_SOCKETS_ABSTRACT,
                  "abstract Unix sockets: Landlock ABI %d cannot scope them: "
                  "the host's (X11, some D-Bus buses) are reachable (ABI 6)",
                  abi);
    h->report(rep, KGATE_DEGRADED, "proc.visible",
              "no PID namespace: the program sees every process in /proc "
              "(pids, command lines, owners); the memory, environment and "
              "descriptors of processes outside the box are refused "
              "(Landlock's ptrace rule)");
    h->report(rep, KGATE_READY, "caps.dropped",
              "no capabilities (bounding set emptied, no_new_privs): root "
              "inside keeps uid 0 for files only");
    int pty = KGATE_HAS_FIELD(pol, kgate_policy, pty) && pol->pty;
    h->report(rep, KGATE_READY, KGATE_FINDING_TTY_ISOLATED,
              "terminal: %s; ioctl TIOCSTI and TIOCLINUX refused by seccomp",
              pty ? "a pseudo-terminal of its own" : "none (a session of its own)");
    h->report(rep, KGATE_READY, KGATE_FINDING_SECCOMP_FILTER,
              "seccomp filter: %zu rules (%s), refused with an errno, not a "
              "kill",
              kgl_seccomp_rule_count(), kgl_seccomp_groups());
}

int ll_doctor(const kgate_host *h, const kgate_policy *pol, const kgate_probe *pr,
              kgate_report *rep)
{
    if (report_machine(h, pr, rep)) return 0;
    int abi = kgate_probe_fact(pr, LL_FACT_ABI, 0);
    if (abi > LL_ABI_KNOWN) abi = LL_ABI_KNOWN;
    report_fs(h, pol, abi, kgate_probe_fact(pr, LL_FACT_UNOTIFY, -1), rep);
    report_network(h, pol, pr, abi, rep);
    report_unix(h, pol, abi, kgate_probe_fact(pr, LL_FACT_UNOTIFY, -1), rep);
    report_process(h, pol, abi, rep);
    report_ipc(h, pr, rep);
    char v[16];
    snprintf(v, sizeof v, "%d", kgate_probe_fact(pr, LL_FACT_ABI, 0));
    h->report_detail(rep, "landlock_abi", v);
    return 0;
}
