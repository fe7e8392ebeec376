/* sf-launch.c: the restricted-network construction, as measured on an
 * ordinary uid (../shared/notes/linux-namespaces-measured.md):
 *
 *   kgate (launch)              helper H (fork)         keeper N (H's child)
 *   -------------------------   ---------------------   ---------------------
 *                               unshare(USER|NET|NS),
 *                               map 0 -> uid, lo up,
 *                               tap0, private mounts,
 *                               resolv.conf bound over
 *                               /etc/resolv.conf
 *                               fork N --------------->
 *                               exec bwrap: it sets
 *                               up the box and waits
 *                               for its filter
 *   <- "R" ----------------------------------------------
 *                                                       dnsmasq, the filter
 *                                                       (libnftables, or
 *                                                       nft -f -)
 *   start slirp4netns --userns-path
 *     =/proc/H/ns/user H tap0, wait
 *     for its ready fd
 *   -- "G" --------------------------------------------->
 *   bwrap's info, the gate                              10.0.2.100 on tap0,
 *                                                       filter in, dnsmasq
 *                                                       listening
 *   <- "X" (or "E<message>"), EOF -----------------------
 *   the mounts checked, the launch                      stays as the
 *     line committed, the filter                        event watcher, so
 *     sent: the program runs                            dnsmasq lives as
 *                                                       long as bwrap
 *
 * H is the launch child of the SDK's bwrap start (kgl_bwrap_spawn,
 * kgl-bwrap.c), which runs the part above in child_prepare and does the
 * rest as for the bubblewrap box: bwrap's descriptors, its info, the
 * setup gate, the mounts checked and the filter sent are that one code, so
 * both backends start and judge bwrap the same way.
 *
 * The nftables rules belong to H's user namespace.  bwrap's --unshare-user
 * puts the program one namespace deeper, where capabilities do not reach
 * the network namespace, so the program cannot flush the filter.  bwrap
 * also loads the bubblewrap backend's seccomp filter (--seccomp FD, built
 * by the same code from the same rule table, kgate-linux.h) just before it
 * execs the program: no keyring, no mount API, no TIOCSTI here either.
 *
 * Both H and slirp4netns carry PR_SET_PDEATHSIG(SIGKILL) towards the kgate
 * process, N towards H (SIGTERM once it watches, so it reads what is
 * queued first), and dnsmasq towards N (each checking its parent after the
 * prctl), so a killed kgate leaves none of them behind, guard or no
 * guard. */
#include "sf-internal.h"

#include "kgate/kgate-linux.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Bounds, not timings: each only ends a wait that would otherwise hang. */
#define SF_WAIT_UNSHARE_MS 10000
#define SF_WAIT_SLIRP_MS 10000
#define SF_WAIT_SETUP_MS 60000 /* includes loading the filter */
#define SF_WAIT_DNS_MS 10000
#define SF_WAIT_TAP_MS 5000

/* ------------------------------------------------------------------------ */
/* Small helpers shared by both sides                                        */
/* ------------------------------------------------------------------------ */

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int r = kgl_write_all(fd, text, strlen(text));
    int e = errno;
    close(fd);
    errno = e;
    return r;
}

/* Reads exactly one byte with a bound; returns it, or -1 (EOF, error,
 * timeout). */
static int read_byte(int fd, int timeout_ms)
{
    long deadline = kgl_now_ms() + timeout_ms;
    for (;;) {
        long left = deadline - kgl_now_ms();
        if (left <= 0) return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        unsigned char c;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && errno == EINTR) continue;
        return n == 1 ? c : -1;
    }
}

static void unblock_signals(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* ------------------------------------------------------------------------ */
/* The helper H                                                              */
/* ------------------------------------------------------------------------ */

typedef struct sf_child_ctx {
    int ctl; /* H's end of the control socket */
    int parents[3]; /* the parent's descriptors H closes first */
    uid_t uid; /* real ids before unshare: what 0 maps to */
    gid_t gid;
    const sf_tools *tools;
    const char *ruleset; /* nft -f input */
    int dns_conf; /* memfd: dnsmasq's configuration */
    int events; /* the core's events pipe, or -1 */
    const sf_filter *filter; /* for the watcher: which answers to report */
} sf_child_ctx;

/* Sends "E<message>" and ends H.  One send: the parent reads to EOF. */
static _Noreturn void child_fail(const sf_child_ctx *c, const char *fmt, ...) KGATE_PRINTF(2, 3);
static _Noreturn void child_fail(const sf_child_ctx *c, const char *fmt, ...)
{
    char msg[512];
    msg[0] = 'E';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + 1, sizeof msg - 1, fmt, ap);
    va_end(ap);
    send(c->ctl, msg, strlen(msg), MSG_NOSIGNAL);
    _exit(1);
}

int sf_map_ids(uid_t uid, gid_t gid)
{
    char line[64];
    if (write_file("/proc/self/setgroups", "deny") < 0) return -1;
    snprintf(line, sizeof line, "0 %u 1", (unsigned)uid);
    if (write_file("/proc/self/uid_map", line) < 0) return -1;
    snprintf(line, sizeof line, "0 %u 1", (unsigned)gid);
    if (write_file("/proc/self/gid_map", line) < 0) return -1;
    return 0;
}

/* Binds the generated resolv.conf over /etc/resolv.conf in H's mount
 * namespace, which bwrap's recursive --ro-bind / / then carries into the
 * sandbox.  The file lives on a tmpfs mounted over /tmp only for as long as
 * it takes to bind it: nothing is written to the host's disk, and the
 * lazily detached tmpfs stays alive through the bind. */
static void child_place_resolv_conf(const sf_child_ctx *c)
{
    char target[PATH_MAX];
    struct stat lst;
    /* No resolv.conf, or a link to nothing (systemd-resolved not running):
     * glibc then asks 127.0.0.1, the sandbox's own empty loopback, so the
     * only answers are /etc/hosts'.  That fails closed; go on without. */
    if (lstat("/etc/resolv.conf", &lst) < 0 && errno == ENOENT) goto hide_nscd;
    /* mount(2) follows a symlink in the target, so a resolv.conf that is
     * a link into /run is covered where it points. */
    if (!realpath("/etc/resolv.conf", target)) {
        if (errno == ENOENT) goto hide_nscd;
        child_fail(c, "cannot place resolv.conf: /etc/resolv.conf: %s", strerror(errno));
    }
    if (mount("kgate-resolv", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "size=64k,mode=0755") < 0)
        child_fail(c, "cannot place resolv.conf: tmpfs: %s", strerror(errno));
    int fd = open("/tmp/resolv.conf", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    const char *text = sf_resolv_conf();
    if (fd < 0 || kgl_write_all(fd, text, strlen(text)) < 0)
        child_fail(c, "cannot place resolv.conf: write: %s", strerror(errno));
    close(fd);
    if (mount("/tmp/resolv.conf", target, NULL, MS_BIND, NULL) < 0)
        child_fail(c, "cannot place resolv.conf over %s: %s", target, strerror(errno));
    mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);
    if (umount2("/tmp", MNT_DETACH) < 0)
        child_fail(c, "cannot place resolv.conf: umount /tmp: %s", strerror(errno));

hide_nscd:;
    /* A host nscd would answer from the host's namespace.  Covering its
     * socket makes glibc fall back to its own lookup, here. */
    static const char *const nscd[] = {"/run/nscd/socket", "/var/run/nscd/socket"};
    for (size_t i = 0; i < sizeof nscd / sizeof nscd[0]; i++) {
        struct stat st;
        if (lstat(nscd[i], &st) == 0 && mount("/dev/null", nscd[i], NULL, MS_BIND, NULL) < 0)
            child_fail(c, "cannot hide %s: %s", nscd[i], strerror(errno));
    }
}

static int tap_has_guest_addr(void)
{
    struct ifaddrs *ifs = NULL, *i;
    int found = 0;
    struct in_addr want;
    inet_pton(AF_INET, SF_GUEST_ADDR, &want);
    if (getifaddrs(&ifs) < 0) return 0;
    for (i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        if (strcmp(i->ifa_name, SF_TAP) != 0) continue;
        const struct sockaddr_in *sin = (const struct sockaddr_in *)i->ifa_addr;
        found = sin->sin_addr.s_addr == want.s_addr;
    }
    freeifaddrs(ifs);
    return found;
}

static void child_wait_tap(const sf_child_ctx *c)
{
    long deadline = kgl_now_ms() + SF_WAIT_TAP_MS;
    while (!tap_has_guest_addr()) {
        if (kgl_now_ms() > deadline)
            child_fail(c, "slirp4netns did not configure %s with %s", SF_TAP, SF_GUEST_ADDR);
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Loopback up, for the resolver (slirp4netns --configure sets up only
 * tap0). */
static void child_loopback_up(const sf_child_ctx *c)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) child_fail(c, "loopback: %s", strerror(errno));
    if (!(ifr.ifr_flags & IFF_UP)) {
        ifr.ifr_flags |= IFF_UP;
        if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) child_fail(c, "loopback up: %s", strerror(errno));
    }
    close(fd);
}

/* tap0 made here, persistent, before slirp4netns attaches to it
 * (TUNSETIFF on an existing device).  slirp4netns's exit then only
 * detaches from it: a device made by its own open would be unregistered
 * by that last close, and the kernel waits there for an RCU barrier
 * (netdev_run_todo, measured 15-25 ms on a 2-vCPU VM), which every run
 * with a host list paid after its program had ended.  A persistent
 * device goes with its network namespace, which the kernel takes apart
 * in a worker of its own once the run's last process has left it. */
static void child_tap_persist(const sf_child_ctx *c)
{
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "tap0");
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) < 0 || ioctl(fd, TUNSETPERSIST, 1) < 0)
        child_fail(c, "tap0: %s", strerror(errno));
    close(fd);
}

/* In a child of h (N, a child of H; dnsmasq, a child of N): dies with h,
 * keeps only the descriptors listed (moved to 3, 4, ...) and /dev/null
 * for stdio, leaves the terminal's process group.  Returns in the child
 * only. */
static void child_detach(const int *keep, size_t n_keep, pid_t h)
{
    /* Dies with h, which dies with H (bwrap after its exec), which dies
     * with kgate, so that nothing of the stage outlives kgate even when
     * the guard dies with it (a whole-tree SIGKILL leaves no one to kill
     * the group).  Kept across dnsmasq's exec: not set-user-ID, and
     * user=root changes no uid.  A parent that died before the prctl is
     * caught by the check after it: the parent is then whoever adopted us
     * (init, or a subreaper, so not necessarily pid 1). */
    if (kgl_tie_to_parent(SIGKILL, h) < 0) _exit(0);
    setpgid(0, 0);
    int moved[4];
    for (size_t i = 0; i < n_keep; i++) moved[i] = fcntl(keep[i], F_DUPFD, 20);
    /* stderr too: a copy of kgate's would keep a reader of it waiting
     * until this process ends (dnsmasq puts its own log there after). */
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) {
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(nul, 2);
    }
    for (size_t i = 0; i < n_keep; i++) dup2(moved[i], 3 + (int)i);
    /* Everything else of H (bwrap's descriptors, the control socket, the
     * spawn report pipe): the parent waits for EOF on some of them. */
    close_range(3 + (unsigned)n_keep, ~0U, 0);
}

/* Readiness: dnsmasq's UDP socket on 127.0.0.1:53, as the kernel lists
 * it.  Its startup is a few milliseconds; a query before it would fail. */
static int dns_listening(void)
{
    char *t = sf_read_small_file("/proc/self/net/udp");
    int found = t && strstr(t, " 0100007F:0035 ") != NULL;
    free(t);
    return found;
}

/* The resolver; its log goes to the watcher when the core takes events. */
typedef struct sf_dns_run {
    pid_t pid;
    int errfd; /* its stderr when nobody reads its log, else -1 */
    int log_rd; /* its log, for the watcher, or -1 */
} sf_dns_run;

static void child_resolver_start(const sf_child_ctx *c, sf_dns_run *r)
{
    const pid_t h = getpid(); /* the children's parent-death check */
    int logp[2] = {-1, -1};
    if (c->events >= 0 && pipe2(logp, O_CLOEXEC) < 0) child_fail(c, "pipe: %s", strerror(errno));
    r->log_rd = logp[0];
    /* dnsmasq closes every inherited descriptor above 2 once it has read
     * its configuration (fd 3), so its log goes to stderr: the watcher's
     * pipe when there is one, otherwise an anonymous file read back only
     * to explain a failure. */
    /* dnsmasq writes its log with a blocking write() even with
     * --log-async (measured, 2.90: a reader that stops reading stalls
     * every answer); with its end non-blocking it queues 100 lines and
     * drops the rest instead, and the program's lookups never wait. */
    if (logp[1] >= 0) {
        int fl = fcntl(logp[1], F_GETFL);
        if (fl < 0 || fcntl(logp[1], F_SETFL, fl | O_NONBLOCK) < 0)
            child_fail(c, "fcntl: %s", strerror(errno));
    }
    int errfd = logp[1] >= 0 ? logp[1] : memfd_create("kgate-dnsmasq", MFD_CLOEXEC);
    if (errfd < 0) child_fail(c, "memfd: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) child_fail(c, "fork: %s", strerror(errno));
    if (pid == 0) {
        const int keep[] = {c->dns_conf, errfd};
        child_detach(keep, 2, h);
        dup2(4, 2);
        close(4);
        unblock_signals();
        char *argv[] = {(char *)c->tools->dnsmasq,
                        "--keep-in-foreground",
                        "--conf-file=/proc/self/fd/3",
                        "--pid-file=",
                        "--log-facility=-",
                        NULL};
        char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
        execve(argv[0], argv, envp);
        _exit(127);
    }
    r->pid = pid;
    if (logp[1] >= 0) {
        close(logp[1]);
        r->errfd = -1;
    } else {
        r->errfd = errfd;
    }
}

static void child_resolver_wait(const sf_child_ctx *c, sf_dns_run *r)
{
    long deadline = kgl_now_ms() + SF_WAIT_DNS_MS;
    while (!dns_listening()) {
        int st;
        if (waitpid(r->pid, &st, WNOHANG) == r->pid || kgl_now_ms() > deadline) {
            char msg[256];
            ssize_t n = r->errfd >= 0 ? pread(r->errfd, msg, sizeof msg - 1, 0) : -1;
            msg[n > 0 ? n : 0] = '\0';
            /* "dnsmasq: bad option at line 3 of ..." */
            msg[strcspn(msg, "\n")] = '\0';
            child_fail(c, "dnsmasq did not start: %s",
                       msg[0] ? msg : "see its messages in the audit log");
        }
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (r->errfd >= 0) close(r->errfd);
}

/* The watcher's tables and NFLOG socket, opened here in N before "X": a
 * refusal before it listens would go unreported.  One that cannot listen
 * leaves the run going on without reporting refused connections (names
 * still come). */
static sf_watch *child_watch_open(const sf_child_ctx *c, sf_dns_run *r)
{
    int listening = 0;
    sf_watch *w = sf_watch_open(r->log_rd, c->events, c->filter, &listening);
    if (!w) child_fail(c, "event watcher: out of memory");
    return w;
}

/* N becomes the watcher once the program may run: it was the process the
 * resolver dies with and did nothing else, and a process of its own cost
 * each run a fork and an exit of kgate's image (3.4 ms of wall time and
 * 5.9 ms of CPU on a 2-vCPU VM).  It now ends on SIGTERM, its parent
 * death signal from here on, and reads what is queued before it does. */
static _Noreturn void keeper_watch(sf_watch *w, pid_t h)
{
    sf_watch_arm(); /* before SIGTERM can be delivered: signals are blocked */
    int orphan = kgl_tie_to_parent(SIGTERM, h) < 0; /* H ended before the prctl */
    unblock_signals();
    sf_watch_loop(w, orphan);
}

/* N, the network keeper: a child of H in H's namespaces, which starts the
 * filter and the resolver, waits for slirp4netns ("G" from the parent),
 * and says "X" once the program may run.  It then stays as the parent the
 * resolver dies with, and as the event watcher when the core takes events:
 * its own parent death signal ties it to H, which is bwrap by then, so the
 * stage's processes end with the box.  Of H's descriptors it keeps only
 * the control socket, the resolver's configuration and the events pipe
 * (as 3, 4 and 5); it adds the resolver's log and the NFLOG socket. */
static _Noreturn void keeper_run(const sf_child_ctx *parent, pid_t h)
{
    const int keep[] = {parent->ctl, parent->dns_conf, parent->events};
    size_t n_keep = parent->events >= 0 ? 3 : 2;
    child_detach(keep, n_keep, h);
    sf_child_ctx mine = *parent;
    mine.ctl = 3;
    mine.dns_conf = 4;
    mine.events = n_keep == 3 ? 5 : -1;
    for (int fd = 3; fd < 3 + (int)n_keep; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
    const sf_child_ctx *c = &mine;

    /* The namespaces are ready: slirp4netns starts while the resolver
     * starts and the filter loads. */
    if (send(c->ctl, "R", 1, MSG_NOSIGNAL) != 1) _exit(1);
    sf_dns_run dns;
    sf_nft_job nft;
    child_resolver_start(c, &dns);
    sf_nft_begin(SF_NFTLIB_SONAME, c->tools->nft, c->ruleset, &nft);
    sf_watch *watch = c->events >= 0 ? child_watch_open(c, &dns) : NULL;
    /* A failure is told after "G", where the parent reads for it. */
    if (read_byte(c->ctl, SF_WAIT_SLIRP_MS + SF_WAIT_UNSHARE_MS) != 'G') _exit(1);
    child_wait_tap(c);
    /* The program never runs without the whole filter and its resolver. */
    if (sf_nft_end(&nft, SF_WAIT_SETUP_MS) < 0) child_fail(c, "nft failed: %s", nft.msg);
    child_resolver_wait(c, &dns);
    close(c->dns_conf);
    if (send(c->ctl, "X", 1, MSG_NOSIGNAL) != 1) _exit(1);
    close(c->ctl);
    if (watch) keeper_watch(watch, h);
    for (;;) pause();
}

/* H is started by kgl_spawn_start (kgl-launch.c), which has reset the
 * core's handlers, set the parent death signal (if kgate dies, so does H,
 * and after exec bwrap, whose --die-with-parent then ends the program) and
 * joined the guard's process group (kgl-guard.c), so the sandbox's pid 1
 * is born in it: out of the terminal's foreground group, so a Ctrl-C
 * reaches kgate, which forwards it to the program's group.  With a pty
 * too: the pty must not become the controlling terminal here, where
 * bwrap's outer process would share its session and die of a Ctrl-C typed
 * into it; the bubblewrap plan's shim takes it inside the sandbox
 * (docs/interactive.md).  This is the part only H does; after it the same
 * spawn helper sets up stdio, the descriptors bwrap is given and the
 * project directory, and execs bwrap, reporting a failing step as
 * bubblewrap's launch child does.
 *
 * H runs with every signal blocked (the parent forked it so) until just
 * before exec, and so does N, its child, throughout.  A failure in either
 * is an "E<message>" on the control socket. */
static int child_prepare(void *ctx)
{
    sf_child_ctx *c = ctx;
    for (int i = 0; i < 3; i++)
        if (c->parents[i] >= 0) close(c->parents[i]);
    /* A dead pipe reader must be an error message, not a signal death;
     * an ignored signal is discarded, so none is pending at exec.  What
     * the program gets back before exec is what it inherited. */
    struct sigaction pipe_inherited;
    sigaction(SIGPIPE, NULL, &pipe_inherited);
    signal(SIGPIPE, SIG_IGN);

    if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) < 0)
        child_fail(c, "unshare(user, net, mount): %s", strerror(errno));
    if (sf_map_ids(c->uid, c->gid) < 0)
        child_fail(c, "writing the uid/gid map: %s", strerror(errno));
    child_loopback_up(c);
    child_tap_persist(c);
    /* What bwrap's recursive bind of / must see: in place before its exec. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        child_fail(c, "making mounts private: %s", strerror(errno));
    child_place_resolv_conf(c);

    /* The rest of the network comes up in N while bwrap sets up the box:
     * the program waits for both (the parent sends bwrap the filter only
     * after N's "X"). */
    pid_t h = getpid();
    pid_t n = fork();
    if (n < 0) child_fail(c, "fork: %s", strerror(errno));
    if (n == 0) keeper_run(c, h);
    /* The program must never hold these. */
    close(c->ctl);
    close(c->dns_conf);
    if (c->events >= 0) close(c->events);
    sigaction(SIGPIPE, &pipe_inherited, NULL);
    /* The rest is the spawn helper's, which reports through its own pipe
     * (an EOF there then means the exec, or that). */
    return 0;
}

/* ------------------------------------------------------------------------ */
/* slirp4netns                                                               */
/* ------------------------------------------------------------------------ */

/* slirp4netns chats on stdout and stderr ("sent tapfd=..."); that is not
 * the program's output.  Its stderr goes to an anonymous file instead, read
 * back only to explain a failure. */
static pid_t start_slirp(const sf_tools *tools, pid_t helper, int host_loopback,
                         const char *api_socket, int *ready_rd, int *log_fd, kgate_err *err)
{
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) < 0) {
        kgate_err_set(err, errno, "pipe: %s", strerror(errno));
        return -1;
    }
    sf_slirp_argv sa;
    sf_slirp_argv_build(&sa, tools->slirp, ready[1], helper, host_loopback, api_socket);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    *log_fd = memfd_create("kgate-slirp4netns", MFD_CLOEXEC);
    char *const envp[] = {"PATH=/usr/bin:/bin", NULL};
    /* Its own process group: a ^C at the terminal is the core's to
     * forward, and slirp4netns must not die before the program. */
    const kgl_spawn spawn = {
        .path = sa.v[0],
        .argv = (char *const *)sa.v,
        .envp = envp,
        .stdio = {devnull, devnull, *log_fd >= 0 ? *log_fd : devnull},
        .pass = &ready[1],
        .n_pass = 1,
        .new_group = 1,
        .pdeathsig = 1,
    };
    pid_t pid = kgl_spawn_run(&spawn, err);
    if (devnull >= 0) close(devnull);
    close(ready[1]);
    if (pid < 0) {
        close(ready[0]);
        return -1;
    }
    *ready_rd = ready[0];
    return pid;
}

/* H ended, or was made to, without an "E<message>": its report says
 * which step failed, if one did (kgl-launch.c); otherwise say what. */
static void helper_gone(const kgl_spawn *spawn, kgl_child *hc, const char *what, kgate_err *err)
{
    if (hc->pid > 0) kill(hc->pid, SIGKILL);
    if (kgl_spawn_finish(spawn, hc, err) == 0) kgate_err_set(err, 0, "network helper: %s", what);
}

/* What slirp4netns wrote, as one line (its error, usually). */
static const char *slirp_messages(int fd, char *buf, size_t bufsz)
{
    ssize_t n = fd >= 0 ? pread(fd, buf, bufsz - 1, 0) : -1;
    if (n <= 0) return "it printed nothing";
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = '\0';
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ';';
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Published ports (--publish)                                               */
/* ------------------------------------------------------------------------ */

/* Where slirp4netns's API socket lives while the ports are added: a
 * directory of our own (0700, mkdtemp), removed as soon as they are, so
 * that nothing else can ever ask slirp4netns for a port, and nothing is
 * left in /tmp. */
typedef struct sf_api {
    char dir[64];
    char sock[96];
} sf_api;

static int api_open(sf_api *a, kgate_err *err)
{
    snprintf(a->dir, sizeof a->dir, "/tmp/kgate-slirp-XXXXXX");
    if (!mkdtemp(a->dir)) {
        a->dir[0] = '\0';
        return kgate_err_set(err, errno,
                             "--publish: cannot make a directory for "
                             "slirp4netns's API socket: %s",
                             strerror(errno));
    }
    snprintf(a->sock, sizeof a->sock, "%s/api.sock", a->dir);
    return 0;
}

static void api_close(sf_api *a)
{
    if (!a->dir[0]) return;
    unlink(a->sock);
    rmdir(a->dir);
    a->dir[0] = '\0';
}

/* One add_hostfwd: its answer is {"return": ...} or {"error": {"desc":
 * ...}} (slirp4netns(1)); anything but a return refuses the launch. */
static int api_hostfwd(const char *sock, const kgate_publish *p, kgate_err *err)
{
    char req[256], ans[512];
    int n = sf_hostfwd_request(p, req, sizeof req);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    ssize_t got = -1;
    if (n > 0 && fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        kgl_write_all(fd, req, (size_t)n) == 0)
        got = kgl_read_to_eof(fd, ans, sizeof ans, SF_WAIT_SLIRP_MS, KGL_READ_DRAIN);
    int e = errno;
    if (fd >= 0) close(fd);
    if (got <= 0)
        return kgate_err_set(err, e, "--publish %s:%u: slirp4netns did not answer: %s",
                             p->host_addr, (unsigned)p->host_port,
                             got == 0 ? "no reply" : strerror(e));
    if (!strstr(ans, "\"return\"") || strstr(ans, "\"error\"")) {
        for (char *c = ans; *c; c++)
            if ((unsigned char)*c < 0x20) *c = ' ';
        return kgate_err_set(err, 0, "--publish %s:%u: slirp4netns refused it: %s", p->host_addr,
                             (unsigned)p->host_port, ans);
    }
    return 0;
}

/* Every port, before the program can run: one that cannot be published
 * (a port the host already uses, one below 1024 for an ordinary user)
 * starts nothing. */
static int publish_all(sf_api *a, const kgate_publish *v, size_t n, kgate_err *err)
{
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) rc = api_hostfwd(a->sock, &v[i], err);
    api_close(a);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The parent side                                                           */
/* ------------------------------------------------------------------------ */

/* What the stage holds beside bwrap's start (kgl_bwrap): the control
 * socket to H, slirp4netns and its pipes, the API directory.  Released by
 * scope (sf_autonet), after the bwrap start is: H and the sandbox go
 * first, then slirp4netns and with it every port it listened on.  -1 (or
 * empty) where not open. */
typedef struct sf_net {
    int sv[2]; /* the control socket: ours, H's */
    pid_t slirp;
    int ready_rd; /* slirp4netns's ready pipe */
    int slirp_log;
    sf_api api;
} sf_net;
#define SF_NET_INIT                                                                       \
    {                                                                                     \
        .sv = {-1, -1}, .slirp = -1, .ready_rd = -1, .slirp_log = -1, .api = {.dir = "" } \
    }

static void sf_net_release(sf_net *n)
{
    for (int i = 0; i < 2; i++) kgl_closep(&n->sv[i]);
    kgl_closep(&n->slirp_log);
    kgl_closep(&n->ready_rd);
    kgl_kill_reap(n->slirp);
    n->slirp = -1;
    api_close(&n->api);
}
#define sf_autonet __attribute__((cleanup(sf_net_release)))

/* bwrap from the plan: its argv[0] when that is a trusted file, looked
 * up where no box can write when it is a bare name (kgate-tool.h), and
 * the tools the stage runs beside it. */
static int plan_to_start(const kgate_host *host, const kgate_plan *plan, const sf_tools *tools,
                         char *path, size_t pathsz, kgl_bwrap *b, kgate_err *err)
{
    b->argc = 0;
    b->pargv = host->plan_argv(plan, &b->argc);
    if (!b->pargv || b->argc == 0) return kgate_err_set(err, EINVAL, "empty plan");
    if (!tools->slirp[0]) return kgate_err_set(err, ENOENT, "slirp4netns is not installed");
    if (!tools->nft[0]) return kgate_err_set(err, ENOENT, "nft is not installed");
    /* Everything H needs is computed here, before the fork. */
    if (strchr(b->pargv[0], '/') ? kgate_tool_trusted(b->pargv[0], path, pathsz, err) < 0
                                 : kgate_tool_find(b->pargv[0], path, pathsz, err) < 0)
        return -1;
    b->path = path;
    return 0;
}

static int open_control(sf_net *n, kgate_err *err)
{
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, n->sv) < 0)
        return kgate_err_set(err, errno, "cannot start the network helper: %s", strerror(errno));
    return 0;
}

/* H in its namespaces, or why not: "R", or "E<message>", or its end. */
static int await_namespaces(sf_net *n, kgl_bwrap *b, kgate_err *err)
{
    char msg[600] = "";
    int c1 = read_byte(n->sv[0], SF_WAIT_UNSHARE_MS);
    if (c1 == 'R') return 0;
    if (c1 == 'E') {
        kgl_read_to_eof(n->sv[0], msg, sizeof msg, 1000, KGL_READ_DRAIN);
        return kgate_err_set(err, 0, "network helper: %s", msg);
    }
    helper_gone(&b->spawn, &b->child, "ended before its namespaces were ready", err);
    return -1;
}

/* slirp4netns on H's namespace, ready, with every published port. */
static int slirp_up(sf_net *n, const kgl_bwrap *b, const sf_tools *tools, const sf_filter *flt,
                    const kgate_publish *pub, size_t n_pub, kgate_err *err)
{
    char msg[600] = "";
    if (n_pub > 0 && api_open(&n->api, err) < 0) return -1;
    n->slirp = start_slirp(tools, b->child.pid, flt->n_loop > 0, n_pub > 0 ? n->api.sock : NULL,
                           &n->ready_rd, &n->slirp_log, err);
    if (n->slirp < 0) return -1;
    if (read_byte(n->ready_rd, SF_WAIT_SLIRP_MS) != '1')
        return kgate_err_set(err, 0, "slirp4netns did not become ready: %s",
                             slirp_messages(n->slirp_log, msg, sizeof msg));
    kgl_closep(&n->ready_rd);
    n->ready_rd = -1;
    /* slirp4netns listens on its API socket before it says ready. */
    if (n_pub > 0 && publish_all(&n->api, pub, n_pub, err) < 0) return -1;
    return 0;
}

/* N's filter and resolver in place ("X"), or why not.  N closes its end
 * after "X" and stays: the EOF ends the read. */
static int network_done(sf_net *n, kgate_err *err)
{
    char msg[600] = "";
    ssize_t got = kgl_read_to_eof(n->sv[0], msg, sizeof msg, SF_WAIT_SETUP_MS, KGL_READ_DRAIN);
    if (got < 0) return kgate_err_set(err, ETIMEDOUT, "network helper: setup did not finish");
    const char *e = strchr(msg, 'E');
    if (e) return kgate_err_set(err, 0, "%s", e + 1);
    if (!strchr(msg, 'X'))
        return kgate_err_set(err, 0, "network helper: ended before the network was ready");
    return 0;
}

/* While H is in its namespaces and N waits: slirp4netns and the ports,
 * then "G" to N, which then puts its filter and resolver in place while
 * bwrap sets up the box. */
static int network_go(sf_net *n, kgl_bwrap *b, const kgate_policy *policy, const sf_tools *tools,
                      const sf_filter *flt, kgate_err *err)
{
    const kgate_publish *pub = NULL;
    size_t n_pub = 0;
    if (sf_publish_check(policy, &pub, &n_pub, err) < 0 || await_namespaces(n, b, err) < 0 ||
        slirp_up(n, b, tools, flt, pub, n_pub, err) < 0)
        return -1;
    if (send(n->sv[0], "G", 1, MSG_NOSIGNAL) != 1) {
        /* N ended after "R" (it starts the resolver and the filter while
         * slirp4netns starts): its "E<message>" is waiting to be read. */
        int e = errno;
        if (network_done(n, err) < 0) return -1;
        return kgate_err_set(err, e, "network helper ended early");
    }
    return 0;
}

/* H (kgl_bwrap_spawn, with child_prepare) makes the namespaces between
 * its fork and its exec of bwrap and leaves N there; this side starts
 * slirp4netns; the rest is the SDK's bwrap start, as for the bubblewrap
 * box: bwrap's info, the setup gate, the mounts checked, the filter sent,
 * which waits for N's "X". */
static int launch_with(const kgate_host *host, const kgate_policy *policy, const kgate_plan *plan,
                       const kgate_launch *io, const sf_tools *tools, kgate_proc *proc,
                       const char *ruleset, int dns_conf, int events, const sf_filter *flt,
                       kgate_err *err)
{
    sf_net net sf_autonet = SF_NET_INIT;
    kgl_bwrap b kgl_autobwrap = KGL_BWRAP_INIT;
    char bwrap_path[PATH_MAX] = "";
    if (plan_to_start(host, plan, tools, bwrap_path, sizeof bwrap_path, &b, err) < 0 ||
        kgate_tool_outside_policy(bwrap_path, policy, err) < 0)
        return -1;
    b.io = io;
    b.dir = policy->project;
    /* bwrap's info comes once H has its namespaces and has exec'd. */
    b.info_wait_ms = SF_WAIT_SLIRP_MS;
    if (kgl_bwrap_open(&b, err) < 0 || open_control(&net, err) < 0) return -1;
    sf_child_ctx c = {
        .ctl = net.sv[1],
        .parents = {net.sv[0], b.info_r, b.gate.ours},
        .uid = getuid(),
        .gid = getgid(),
        .tools = tools,
        .ruleset = ruleset,
        .dns_conf = dns_conf,
        .events = events,
        .filter = flt,
    };
    b.prepare = child_prepare;
    b.ctx = &c;
    b.prepare_name = "set up the network";
    int started = kgl_bwrap_spawn(&b, err);
    /* H has its copy; slirp4netns, forked next, must not get one. */
    kgl_closep(&net.sv[1]);
    net.sv[1] = -1;
    if (started < 0 || network_go(&net, &b, policy, tools, flt, err) < 0) return -1;
    /* bwrap sets up the box while N finishes the network: the program
     * starts (let_run) only once both are done. */
    if (kgl_bwrap_exec_wait(&b, err) < 0 || kgl_bwrap_await(&b, err) < 0 ||
        network_done(&net, err) < 0)
        return -1;
    /* The filter and the resolver are loaded: let_run checks the mounts and
     * commits the audit's launch line before the program's filter goes, so
     * a list that cannot be loaded leaves a refusal, not a launch line. */
    proc->helpers[0] = net.slirp; /* before the guard, which let_run adds */
    proc->n_helpers = 1;
    if (kgl_bwrap_let_run(&b, proc, err) < 0) {
        /* The core would end what proc lists; slirp4netns is ended by
         * scope, with the rest. */
        proc->n_helpers = 0;
        return -1;
    }
    net.slirp = -1; /* the core's to end now */
    return 0;
}

#define sf_autofilter __attribute__((cleanup(sf_filter_free)))

/* The probe's finds, checked again at the launch that runs them: the
 * probe may be an earlier run's, and the policy is this one's. */
static int tools_fit(const sf_tools *tools, const kgate_policy *policy, kgate_err *err)
{
    const char *const all[] = {tools->slirp, tools->nft, tools->dnsmasq};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (kgate_tool_trusted(all[i], NULL, 0, err) < 0 ||
            kgate_tool_outside_policy(all[i], policy, err) < 0)
            return -1;
    return 0;
}

int sf_launch_restricted(const kgate_host *host, const kgate_policy *policy, const kgate_plan *plan,
                         const kgate_launch *io, const sf_tools *tools, kgate_proc *proc,
                         kgate_err *err)
{
    if (!tools->slirp[0]) return kgate_err_set(err, ENOENT, "slirp4netns is not installed");
    if (!tools->nft[0]) return kgate_err_set(err, ENOENT, "nft is not installed");
    if (!tools->dnsmasq[0]) return kgate_err_set(err, ENOENT, "dnsmasq is not installed");
    if (tools_fit(tools, policy, err) < 0) return -1;
    int events = KGATE_HAS_FIELD(io, kgate_launch, events_fd) ? io->events_fd : -1;

    /* The whole filter as text, before anything is forked: a list that
     * cannot be built starts nothing. */
    sf_filter flt sf_autofilter = {0};
    /* The host's own addresses are read here, in the host's namespace,
     * once: one that appears later in the run is not in the filter
     * (docs/network.md). */
    if (sf_filter_for_policy(&policy->allow_hosts, &flt, err) < 0) return -1;
    char *ruleset kgl_autofree = NULL, *dconf kgl_autofree = NULL;
    const char *nft_text = host->plan_file_content(plan, SF_PLAN_NFT);
    const char *dns_text = events >= 0 ? host->plan_file_content(plan, SF_PLAN_DNSMASQ) : NULL;
    if (!nft_text) nft_text = ruleset = sf_nft_ruleset(&flt);
    if (!dns_text) dns_text = dconf = sf_dnsmasq_conf(&flt, events >= 0);
    int dns_conf kgl_autoclose =
        nft_text && dns_text ? memfd_create("kgate-dnsmasq.conf", MFD_CLOEXEC) : -1;
    if (dns_conf < 0 || kgl_write_all(dns_conf, dns_text, strlen(dns_text)) < 0) {
        int e = nft_text && dns_text ? errno : ENOMEM;
        return kgate_err_set(err, e, "building the network filter failed: %s", strerror(e));
    }
    return launch_with(host, policy, plan, io, tools, proc, nft_text, dns_conf, events, &flt, err);
}
