/* kgate-unotify.h: a seccomp user-notification supervisor for a box whose
 * rules can only grant (Landlock), from the SDK's Linux support library.
 *
 * A Landlock rule on a directory holds for everything below it, so a
 * directory that holds a protected or deny_read name is granted entry by
 * entry, and nothing can be made, removed or renamed directly in it.  The
 * supervisor gives those directories back: the calls that make, remove,
 * rename, link or open for writing (and, where a directory has no read
 * rights of its own, every open) stop in the kernel and wait for it; it
 * copies the path once, resolves it itself from the caller's working
 * directory or descriptor, checks the result against what was pinned at
 * launch (device and inode, or parent and name for what is absent), and
 * makes the call itself, handing a descriptor back with
 * SECCOMP_IOCTL_NOTIF_ADDFD.  It never lets the kernel re-read a path it
 * checked.  Where the directory is not one it manages, it answers
 * "continue": the program's own Landlock rules then decide, and they
 * allow nothing the supervisor would refuse.
 *
 * Use, in a launch child (kgl_spawn's prepare), in this order:
 * kgl_un_fork_supervisor after restricting itself with the supervisor's
 * ruleset (the program's plus write on the managed directories), then the
 * program's own ruleset and filters, then kgl_un_install last. */
#ifndef KGATE_UNOTIFY_H
#define KGATE_UNOTIFY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kgate/kgate-plugin.h"

typedef struct kgl_un_node {
    uint64_t dev, ino;
    int deny; /* a deny_read entry: never opened, even to read */
} kgl_un_node;

/* At most this many unnamed files in the pool (kgl_un_policy.pool). */
#define KGL_UN_POOL_MAX 128
#define KGL_UN_POOL_MAX_STR "128"

typedef struct kgl_un_name {
    uint64_t dev, ino; /* the directory that holds it */
    int deny;
    char leaf[256];
} kgl_un_name;

/* Names on the network (kgl-unotify-net.c, kgl-unotify-dns.c): what a
 * program may reach when its allow list names hosts.  Everything is
 * allocated in kgate's process before the fork; the supervisor only
 * fills the slots. */
typedef struct kgl_un_allow {
    uint32_t addr; /* IPv4, network byte order; 0: a free slot */
    uint16_t port; /* TCP port, 0: every port */
    uint8_t fixed; /* 1: from the list itself (a literal, localhost:port,
                     * /etc/hosts), never replaced */
    uint64_t until; /* CLOCK_MONOTONIC seconds; answers only */
} kgl_un_allow;

/* Allowed addresses one run remembers; past that the oldest answer
 * slot is reused (its address refused again, never another allowed). */
#define KGL_UN_NET_SLOTS 8192

typedef struct kgl_un_host {
    char name[254]; /* lower case, without "*." */
    int wildcard;
    unsigned port; /* 0: every TCP port */
} kgl_un_host;

typedef struct kgl_un_net {
    int on; /* 1: the network calls are notified and checked */
    /* 1: network open: Internet calls are made as asked, and only the
     * Unix sockets named by path are decided (kgl-unotify-unix.c). */
    int open;
    /* Host Unix sockets by path (issue 43): the allow_sockets sockets by
     * inode, and the directories below which a socket may be reached (the
     * places the box may make sockets in, and allow_sockets directories),
     * pinned at launch. */
    kgl_un_node *unix_socks;
    size_t n_unix_socks;
    kgl_un_node *unix_places;
    size_t n_unix_places;
    int events_fd; /* kgate_launch.events_fd, or -1 */
    uint16_t resolver_port; /* the filtering resolver on 127.0.0.1 */
    /* The read end of the resolver's log (its stderr), or -1: the only
     * place where an answer its rebind guard emptied is told apart from
     * a name that does not exist (issue 43.6). */
    int log_fd;
    kgl_un_host *hosts; /* the allow list's names */
    size_t n_hosts;
    kgl_un_allow *allow; /* KGL_UN_NET_SLOTS slots */
    size_t n_fixed; /* the first n_fixed are fixed */
} kgl_un_net;

typedef struct kgl_un_policy {
    kgl_un_node *holes; /* protected and deny_read entries, present */
    size_t n_holes;
    kgl_un_name *names; /* the same by directory and name, present or not */
    size_t n_names;
    kgl_un_node *managed; /* directories granted entry by entry */
    size_t n_managed;
    kgl_un_node *granted; /* their entries at launch, granted by Landlock */
    size_t n_granted;
    char **prefixes; /* absolute paths outside all of these: continue */
    size_t n_prefixes;
    kgl_un_node *roots; /* the same by inode: the places the program writes */
    size_t n_roots;
    int reads; /* every open is notified (a managed directory is unreadable) */
    /* Where a managed directory has no execute right of its own (a
     * deny_read entry in it), nothing made there during the run could be
     * executed: Landlock rules are fixed at launch and a new file only
     * inherits its directory's rights.  So kgate makes unnamed files
     * (O_TMPFILE) at launch, each with a rule of its own in the program's
     * ruleset (read, write, execute: a rule follows its inode wherever it
     * is linked); when the program executes a file it made there, the
     * supervisor copies it into one of them and puts it in its place
     * (kgl-unotify.c, exec_swap).  fd: O_PATH descriptors, node: their
     * inodes; bare: the managed directories without execute. */
    struct {
        int *fd;
        kgl_un_node *node;
        size_t n;
        kgl_un_node *bare;
        size_t n_bare;
    } pool;
    kgl_un_net net;
    /* SysV IPC: the filter notifies it too (one listener per process).
     * With on, the supervisor passes those calls to kgate's IPC
     * supervisor over fd (kgl_ipc.child_end, kgate-linux.h), which
     * decides them; without, it refuses them (EPERM). */
    struct {
        int on;
        int fd;
    } ipc;
} kgl_un_policy;

/* 1 when this kernel can run the supervisor; 0 with why filled (the
 * promise that is lost is the caller's to say). */
int kgl_un_available(char *why, size_t len);

/* Pins path (absolute) as a protected (deny 0) or deny_read (deny 1)
 * entry: its inode if present, its directory and name if that exists. */
int kgl_un_add_hole(kgl_un_policy *p, const char *path, int deny, kgate_err *err);
/* Pins dir as managed, and its present entries as granted. */
int kgl_un_add_managed(kgl_un_policy *p, const char *dir, kgate_err *err);
/* Marks dir (managed) as one without execute rights of its own; the
 * first such directory also gets the pool of unnamed files, up to n (fewer
 * when the open-file limit is low, none where the file system has no
 * O_TMPFILE).  0, or -1 with err. */
int kgl_un_add_pool(kgl_un_policy *p, const char *dir, size_t n, kgate_err *err);
/* A root (the project, an allow_path) below which managed directories lie. */
int kgl_un_add_prefix(kgl_un_policy *p, const char *path, kgate_err *err);
/* Pins path (absolute) for the Unix socket decision: with allowed (an
 * allow_sockets entry) a socket by its inode or a directory as a place;
 * without, a directory the box may make sockets in.  Absent entries and
 * other file types pin nothing.  0, or -1 with err. */
int kgl_un_add_unix(kgl_un_policy *p, const char *path, int allowed, kgate_err *err);
void kgl_un_policy_free(kgl_un_policy *p);

/* Names on the network.  kgl_un_net_init parses the allow list (literal
 * addresses and localhost:port become fixed slots) and reads the hosts
 * file text (may be NULL) for listed names, as the program's resolver
 * reads it before DNS; -1 with err. */
int kgl_un_net_init(kgl_un_policy *p, const char *const *hosts, size_t n, const char *hosts_file,
                    kgate_err *err);

/* The filtering resolver: dnsmasq on 127.0.0.1 at a free port, answering
 * listed names from upstream (an IPv4 address) and NXDOMAIN for every
 * other name.  Started from kgate's process, outside the box; *pid is the
 * helper the core ends after the run.  0, or -1 with err. */
typedef struct kgl_un_resolver {
    pid_t pid;
    uint16_t port;
    int log_fd; /* its log's read end (O_CLOEXEC), -1 when none */
} kgl_un_resolver;
int kgl_un_resolver_start(const kgl_un_policy *p, const char *upstream, kgl_un_resolver *r,
                          kgate_err *err);
/* The upstream the resolver forwards to: KGATE_LANDLOCK_DNS_UPSTREAM when
 * set (the tests' lab server), else the first IPv4 nameserver of
 * /etc/resolv.conf.  0 with out filled, or -1 with err. */
int kgl_un_upstream(char *out, size_t len, kgate_err *err);
/* The dnsmasq binary; 0 with out filled, -1 when none. */
int kgl_un_find_dnsmasq(char *out, size_t len);

/* Pure parsers of the network side, for the fuzz target: the first IPv4
 * nameserver of a resolv.conf text; the IPv4 addresses a hosts-file text
 * gives a name (calls add for each); the A records of a DNS answer and
 * its question (libresolv).  0 / count, or -1 when it cannot parse. */
int kgl_un_parse_resolv(const char *text, size_t len, char *out, size_t outsz);
int kgl_un_parse_hosts(const char *text, size_t len, const char *name,
                       void (*add)(void *ctx, uint32_t addr), void *ctx);
int kgl_un_parse_answer(const unsigned char *msg, size_t len, char *qname, size_t qsz, int *rcode,
                        void (*add)(void *ctx, uint32_t addr, uint32_t ttl), void *ctx);
/* 1 when name (any case, an optional final dot) is allowed by h. */
int kgl_un_host_matches(const kgl_un_host *h, const char *name);

/* In the launch child, once restricted to the supervisor's rights: forks
 * the supervisor (a grandchild, so the program never sees it as its
 * child) and returns the socket kgl_un_install sends the listener on, or
 * -1 with errno.  Async-signal-safe; the supervisor allocates nothing. */
int kgl_un_fork_supervisor(const kgl_un_policy *p);
/* In the launch child, after its last other restriction: installs the
 * notifying filter (reads: every open notifies; net: KGL_UN_NET_* which
 * network calls) and hands its listener to the supervisor over sock.  0,
 * or -1 with errno. */
enum { KGL_UN_NET_NONE, KGL_UN_NET_ALL, KGL_UN_NET_UNIX };
int kgl_un_install(int sock, int reads, int net);

/* What the filter sends to the supervisor, and what the supervisor
 * parses from the program; pure, for the fuzz target. */
typedef enum kgl_un_kind {
    KGL_UN_NONE,
    KGL_UN_OPEN,
    KGL_UN_MKDIR,
    KGL_UN_UNLINK,
    KGL_UN_RENAME,
    KGL_UN_LINK,
    KGL_UN_SYMLINK,
    KGL_UN_EXEC, /* execve, execveat: path[0] from dirfd[0], flags */
} kgl_un_kind;

typedef struct kgl_un_call {
    kgl_un_kind kind;
    int dirfd[2]; /* AT_FDCWD or a descriptor of the program's */
    uint64_t path[2]; /* addresses in the program; [0] the source */
    uint64_t flags; /* open flags, AT_REMOVEDIR, rename or link flags */
    uint32_t mode;
} kgl_un_call;

/* Decodes a notified call by its native number; -1 (EINVAL) for a call
 * or a flag it does not know: refused. */
int kgl_un_decode(int nr, const uint64_t args[6], kgl_un_call *c);
/* Splits path (len bytes, no NUL needed) into its directory and last
 * name; *slash is set when path ended in '/'.  0, or an errno. */
int kgl_un_split(const char *path, size_t len, char *dir, size_t dirsz, char *leaf, size_t leafsz,
                 int *slash);
/* The umask in a /proc/PID/status text; -1 when it has none. */
int kgl_un_parse_umask(const char *status, size_t len);

#endif
