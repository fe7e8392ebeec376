/* ll-internal.h: the pieces of the Landlock backend, shared between its
 * files and its tests (which link them statically; the plugin exports only
 * kgate_plugin_entry). */
#ifndef LL_INTERNAL_H
#define LL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kgate/kgate-plugin.h"
#include "kgate/kgate-linux.h"
#include "kgate/kgate-path.h"
#include "kgate/kgate-unotify.h"

/* Kernel ABI constants (include/uapi/linux/landlock.h), spelled out:
 * Debian 12's headers (linux-libc-dev 6.1) stop at ABI 2, and these values
 * are ABI that never changes. */
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13) /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0) /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1) /* ABI 6 */
#define LL_RULE_PATH_BENEATH 1
#define LL_CREATE_RULESET_VERSION (1U << 0)

/* Rights on a file (the rest only mean something on a directory). */
#define LL_FS_FILE_RIGHTS \
    (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_FS_READ (LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE)
/* Read-write: everything but making device nodes. */
#define LL_FS_RW                                                                             \
    (LL_FS_READ | LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_DIR | \
     LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO | LL_FS_MAKE_SYM | LL_FS_REFER |     \
     LL_FS_TRUNCATE)

/* The ABI this backend knows the most of; a newer kernel is used at it. */
#define LL_ABI_KNOWN 7
/* Above this many path rules the plan refuses (a huge project walked entry
 * by entry because of a protected path deep inside). */
#define LL_MAX_RULES 20000

/* Facts probe() records. */
#define LL_FACT_LINUX "linux"
#define LL_FACT_ABI "abi" /* Landlock ABI version, 0 when none */
#define LL_FACT_NNP "nnp" /* prctl(PR_SET_NO_NEW_PRIVS) known */
#define LL_FACT_SECCOMP "seccomp" /* seccomp filters can be loaded */
#define LL_FACT_USERNS "userns" /* 1 works, 0 refused, -1 not tried */
/* 1: seccomp user notification with continue, so SysV IPC is supervised
 * (the run's own objects); 0 or absent: every SysV IPC call refused. */
#define LL_FACT_IPC "ipc_notify"
/* 1: seccomp user notification (with ADDFD_FLAG_SEND, Linux 5.14) works,
 * so the supervisor gives the split directories back (ll-unotify.c). */
#define LL_FACT_UNOTIFY "unotify"
/* Set in the environment, the supervisor is not used (the tests' way to
 * show the box without it, and a way out if it misbehaves somewhere). */
#define LL_ENV_NO_UNOTIFY "KGATE_LANDLOCK_NO_SUPERVISOR"

/* Fills p from what was found (tests feed any kernel). */
void ll_probe_from_facts(kgate_probe *p, int abi, int nnp, int seccomp, int userns);

/* What each ABI handles. */
uint64_t ll_fs_handled(int abi);
uint64_t ll_net_handled(int abi);
uint64_t ll_scoped(int abi);

/* The rule set as data: what the plan prints and launch installs, built by
 * the same code (ll-rules.c).  Paths are granted whole where nothing
 * below them is held back; a directory that holds a hidden or read-only
 * path is granted entry by entry ("split"). */
typedef struct ll_path {
    char *path;
    uint64_t access;
    int dir;
    const char *why;
} ll_path;

typedef struct ll_rules {
    int abi; /* the ABI used: the kernel's, at most LL_ABI_KNOWN */
    uint64_t fs_handled, net_handled, scoped;
    ll_path *v;
    size_t n, cap;
    int nonet; /* the network-off seccomp filter is loaded too */
    char **split; /* directories granted entry by entry */
    size_t n_split;
} ll_rules;

/* The private temporary directory as the plan shows it; launch makes the
 * real one (mkdtemp) and builds with its name. */
#define LL_TMP_PLACEHOLDER "/tmp/kgate-landlock.XXXXXX"

/* Builds the rules for policy on a kernel of ABI abi, with tmp as the
 * private temporary directory.  Reads the directories it must split and
 * lstat()s what it grants; -1 with err. */
int ll_rules_build(const kgate_policy *pol, int abi, const char *tmp, ll_rules *r, kgate_err *err);
void ll_rules_free(ll_rules *r);
/* 1 when the rules let the program read p, or would were it not held
 * back (below the project, a read or allow path, or outside the hidden
 * places): where a second name of a deny_read file could be read. */
int ll_rules_visible(const kgate_policy *pol, const char *p);
/* The table --dry-run shows (malloc'd, NULL when memory runs out). */
char *ll_rules_table(const ll_rules *r);
/* "rlx------": one letter per right, for the table. */
void ll_access_str(uint64_t access, char out[10]);

/* The directories inside the project that hold a deny_read or protected
 * path, computed from the policy alone (doctor's view of the split). */
size_t ll_project_split_dirs(const kgate_policy *pol, char *buf, size_t len);

/* The supervisor's policy from the rules: the split directories inside
 * the project and allow_paths become managed, deny_read and protected
 * paths pinned; *sup gets the supervisor's rules (r's plus read-write on
 * each managed directory; its paths borrowed from r, free only sup->v).
 * 1 when there is something to manage, 0 when not, -1 with err. */
int ll_un_build(const kgate_policy *pol, const ll_rules *r, kgl_un_policy *un, ll_rules *sup,
                kgate_err *err);
/* How many split directories the supervisor would manage (the plan's
 * note). */
/* Host Unix sockets (issue 43): pins in un where the box may make sockets
 * (its directory rules with that right) and the allow_sockets entries,
 * for the supervisor's decision on a socket by path.  0, or -1 with err. */
int ll_un_pin_unix(const kgate_policy *pol, const ll_rules *r, kgl_un_policy *un, kgate_err *err);
size_t ll_un_managed_count(const kgate_policy *pol, const ll_rules *r);

/* The sentence for a host allow list (doctor's BLOCKED finding and plan's
 * error say the same). */
const char *ll_hosts_sentence(void);
/* 1 when the policy is network: restricted with hosts (names on the
 * network: the supervisor checks every connect and send). */
int ll_net_hosts(const kgate_policy *pol);
/* 1 when this host can enforce it (supervisor and dnsmasq); 0 with why. */
int ll_net_ready(const kgate_probe *pr, char *why, size_t len);

/* --publish: 0 when this box keeps the promise (its supervisor runs, and
 * each host port is the program's own), else -1 with the one line. */
int ll_publish_check(const kgate_policy *pol, const kgate_probe *pr, kgate_err *err);

int ll_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe, kgate_err *err);
int ll_doctor(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
              kgate_report *rep);
int ll_plan(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
            kgate_plan *plan, kgate_err *err);
/* Removes name in parent and everything below it, without following a
 * link and holding a fixed number of descriptors whatever the depth
 * (ll-rmtree.c).  0 when gone (or not there), -1 with errno. */
int ll_rmtree(int parent, const char *name);

/* The run's HOME (home, already made): the core's files copied in, and
 * the read_paths and allow_paths under the real home linked (ll-home.c). */
int ll_home_fill(const kgate_policy *pol, const char *home, kgate_err *err);

/* In the launch child after its setsid: forks, and stays (never returns)
 * as the run's reaper, the child subreaper that kills and reaps the whole
 * run if kgate dies (ll-reaper.c); 0 in the child, which goes on to the
 * program, or -1 with errno, nothing forked when it cannot list its
 * children. */
int ll_reaper_fork(void);
/* kgate hands the reaper's pidfd to the TMPDIR cleaner on sock; the
 * cleaner, once woken, waits up to ms for the reaper's end (which comes
 * after the last process of the run) before it removes the tree. */
void ll_reaper_tell(int sock, pid_t reaper);
void ll_reaper_await(int sock, int ms);

int ll_launch(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
              const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc, kgate_err *err);

#endif
