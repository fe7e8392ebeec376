/* sf-launch.c: the restricted-network construction, as measured on an
 * ordinary uid (../shared/notes/linux-namespaces-measured.md):
 *
 *   kgate (launch)                      helper H (fork)
 *   ------------------------------      ------------------------------------
 *                                       unshare(USER|NET|NS), map 0 -> uid
 *   <- "R" ------------------------------
 *   start slirp4netns --userns-path
 *     =/proc/H/ns/user H tap0, wait
 *     for its ready fd
 *   -- "G" ----------------------------->
 *                                       private mounts, resolv.conf bound
 *                                       over /etc/resolv.conf, wait for
 *                                       10.0.2.100 on tap0, resolve names
 *                                       here, iptables-restore
 *   <- "X" (or "E<message>") ------------
 *                                       stdio, bwrap's descriptors, the
 *                                       project, exec bwrap (nested user
 *                                       namespace, the seccomp filter)
 *   EOF on the control socket and on the
 *     spawn report pipe: exec done (a
 *     report names the step that failed)
 *
 * H is forked by the SDK's spawn helper (kgl_spawn_start, kgl-launch.c),
 * which runs the part above in child_prepare and does the rest as for
 * bubblewrap's launch child; the setup gate and bwrap's info are the
 * SDK's too, so both backends judge bwrap's setup the same way.
 *
 * The iptables rules belong to H's user namespace.  bwrap's --unshare-user
 * puts the program one namespace deeper, where capabilities do not reach
 * the network namespace, so the program cannot flush the filter.  bwrap
 * also loads the bubblewrap backend's seccomp filter (--seccomp FD, built
 * by the same code from the same rule table, kgate-linux.h) just before it
 * execs the program: no keyring, no mount API, no TIOCSTI here either.
 *
 * Both H and slirp4netns carry PR_SET_PDEATHSIG(SIGKILL) towards the kgate
 * process, and dnsmasq and the watcher towards H (each checking its parent
 * after the prctl), so a killed kgate leaves none of them behind, guard or
 * no guard. */
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
#include <net/if.h>
#include <sys/mount.h>
#include <sys/prctl.h>
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

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int r = write_all(fd, text, strlen(text));
    int e = errno;
    close(fd);
    errno = e;
    return r;
}

/* Reads from fd until EOF or until deadline_ms (absolute, now_ms clock).
 * Returns bytes read (NUL-terminated in buf), or -1 with errno ETIMEDOUT. */
static ssize_t read_until_eof(int fd, char *buf, size_t bufsz, long deadline_ms)
{
    size_t got = 0;
    for (;;) {
        long left = deadline_ms - now_ms();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, (int)(left > INT_MAX ? INT_MAX : left));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) continue;
        char tmp[256];
        ssize_t n = read(fd, tmp, sizeof tmp);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        size_t take = (size_t)n;
        if (got + take > bufsz - 1) take = bufsz - 1 - got;
        memcpy(buf + got, tmp, take);
        got += take;
    }
    buf[got] = '\0';
    return (ssize_t)got;
}

/* Reads exactly one byte with a bound; returns it, or -1 (EOF, error,
 * timeout). */
static int read_byte(int fd, int timeout_ms)
{
    long deadline = now_ms() + timeout_ms;
    for (;;) {
        long left = deadline - now_ms();
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

static void kill_and_reap(pid_t pid)
{
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
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

static int child_map_ids(const sf_child_ctx *c)
{
    char line[64];
    if (write_file("/proc/self/setgroups", "deny") < 0) return -1;
    snprintf(line, sizeof line, "0 %u 1", (unsigned)c->uid);
    if (write_file("/proc/self/uid_map", line) < 0) return -1;
    snprintf(line, sizeof line, "0 %u 1", (unsigned)c->gid);
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
    if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
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
    long deadline = now_ms() + SF_WAIT_TAP_MS;
    while (!tap_has_guest_addr()) {
        if (now_ms() > deadline)
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

/* nft -f - with the ruleset on stdin (no shell, one transaction: the
 * whole filter is in place or none of it).  Started while slirp4netns
 * starts, finished before the program may run. */
typedef struct sf_nft_run {
    pid_t pid;
    int out; /* its stdout+stderr */
    int werr;
} sf_nft_run;

static void child_nft_start(const sf_child_ctx *c, sf_nft_run *r)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
        child_fail(c, "pipe: %s", strerror(errno));
    r->pid = fork();
    if (r->pid < 0) child_fail(c, "fork: %s", strerror(errno));
    if (r->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(out[1], 2);
        signal(SIGPIPE, SIG_DFL);
        unblock_signals();
        char *const argv[] = {(char *)c->tools->nft, "-f", "-", NULL};
        char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
        execve(c->tools->nft, argv, envp);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    /* A large ruleset outgrows the pipe: nft reads it all before it
     * works, and a tool that died early gives EPIPE (SIGPIPE is ignored). */
    r->werr = write_all(in[1], c->ruleset, strlen(c->ruleset));
    close(in[1]);
    r->out = out[0];
}

static void child_nft_finish(const sf_child_ctx *c, sf_nft_run *r)
{
    char msg[256];
    ssize_t got = read_until_eof(r->out, msg, sizeof msg, now_ms() + SF_WAIT_SETUP_MS);
    close(r->out);
    int st = 0;
    while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR) {}
    if (r->werr < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (got < 0) msg[0] = '\0';
        msg[strcspn(msg, "\n")] = '\0';
        child_fail(c, "nft failed: %s", msg[0] ? msg : "no output");
    }
}

/* In a child of H: dies with H (bwrap, after the exec), keeps only the
 * descriptors listed (moved to 3, 4, ...), leaves the terminal's process
 * group.  Returns in the child only. */
static void child_detach(const int *keep, size_t n_keep, pid_t h)
{
    /* Dies with H (bwrap after its exec), which dies with kgate, so that
     * nothing of the stage outlives kgate even when the guard dies with it
     * (a whole-tree SIGKILL leaves no one to kill the group).  Kept across
     * dnsmasq's exec: not set-user-ID, and user=root changes no uid.  An H
     * that died before the prctl is caught by the check after it: the
     * parent is then whoever adopted us (init, or a subreaper, so not
     * necessarily pid 1). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != h) _exit(0);
    setpgid(0, 0);
    int moved[4];
    for (size_t i = 0; i < n_keep; i++) moved[i] = fcntl(keep[i], F_DUPFD, 20);
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) {
        dup2(nul, 0);
        dup2(nul, 1);
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

/* The resolver, and the watcher when the core takes events. */
typedef struct sf_dns_run {
    pid_t pid;
    int errfd; /* its stderr when nobody reads its log, else -1 */
    int watcher; /* the watcher's ready pipe, or -1 */
} sf_dns_run;

static void child_resolver_start(const sf_child_ctx *c, sf_dns_run *r)
{
    const pid_t h = getpid(); /* the children's parent-death check */
    int logp[2] = {-1, -1};
    if (c->events >= 0 && pipe2(logp, O_CLOEXEC) < 0) child_fail(c, "pipe: %s", strerror(errno));
    if (c->events >= 0) {
        /* The watcher says when it listens to NFLOG: a refusal before
         * that would go unreported. */
        int ready[2];
        if (pipe2(ready, O_CLOEXEC) < 0) child_fail(c, "pipe: %s", strerror(errno));
        pid_t w = fork();
        if (w < 0) child_fail(c, "fork: %s", strerror(errno));
        if (w == 0) {
            const int keep[] = {logp[0], c->events, ready[1]};
            child_detach(keep, 3, h);
            /* TERM from here on: it still reads what is queued. */
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != h) _exit(0);
            unblock_signals();
            sf_watch_run(3, 4, 5, c->filter);
        }
        close(logp[0]);
        close(ready[1]);
        r->watcher = ready[0];
    } else {
        r->watcher = -1;
    }
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
    long deadline = now_ms() + SF_WAIT_DNS_MS;
    while (!dns_listening()) {
        int st;
        if (waitpid(r->pid, &st, WNOHANG) == r->pid || now_ms() > deadline) {
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
    if (r->watcher >= 0) {
        /* EOF without the byte: it could not listen to NFLOG; the run goes
         * on without reporting refused connections (names still come). */
        read_byte(r->watcher, SF_WAIT_DNS_MS);
        close(r->watcher);
    }
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
 * before exec.  It relies on glibc's fork handlers for malloc and NSS:
 * resolving names needs both, and only H is inside the namespace.  A
 * failure here is an "E<message>" on the control socket. */
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
    if (child_map_ids(c) < 0) child_fail(c, "writing the uid/gid map: %s", strerror(errno));
    /* The filter and the resolver need only the namespace: they start
     * while the parent starts slirp4netns. */
    child_loopback_up(c);
    sf_nft_run nft;
    sf_dns_run dns;
    child_nft_start(c, &nft);
    child_resolver_start(c, &dns);
    if (send(c->ctl, "R", 1, MSG_NOSIGNAL) != 1) _exit(1);
    if (read_byte(c->ctl, SF_WAIT_SLIRP_MS + SF_WAIT_UNSHARE_MS) != 'G') _exit(1);

    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        child_fail(c, "making mounts private: %s", strerror(errno));
    child_place_resolv_conf(c);
    child_wait_tap(c);

    /* The program never runs without the whole filter and its resolver. */
    child_nft_finish(c, &nft);
    child_resolver_wait(c, &dns);
    /* The program must never hold these. */
    close(c->dns_conf);
    if (c->events >= 0) close(c->events);
    sigaction(SIGPIPE, &pipe_inherited, NULL);

    /* The network is ready; the rest is the spawn helper's, which reports
     * through its own pipe (an EOF here then means the exec, or that). */
    if (send(c->ctl, "X", 1, MSG_NOSIGNAL) != 1) _exit(1);
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
        write_all(fd, req, (size_t)n) == 0)
        got = read_until_eof(fd, ans, sizeof ans, now_ms() + SF_WAIT_SLIRP_MS);
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

static int launch_with(const kgate_host *host, const kgate_policy *policy, const kgate_plan *plan,
                       const kgate_launch *io, const sf_tools *tools, kgate_proc *proc,
                       const char *ruleset, int dns_conf, int events, const sf_filter *flt,
                       kgate_err *err)
{
    size_t argc = 0;
    const char *const *argv = host->plan_argv(plan, &argc);
    if (!argv || argc == 0) return kgate_err_set(err, EINVAL, "empty plan");
    if (!tools->slirp[0]) return kgate_err_set(err, ENOENT, "slirp4netns is not installed");
    if (!tools->nft[0]) return kgate_err_set(err, ENOENT, "nft is not installed");

    /* Everything H needs is computed here, before the fork. */
    char bwrap_path[PATH_MAX];
    if (strchr(argv[0], '/'))
        snprintf(bwrap_path, sizeof bwrap_path, "%s", argv[0]);
    else if (sf_find_tool(argv[0], bwrap_path, sizeof bwrap_path) < 0)
        return kgate_err_set(err, ENOENT, "%s not found", argv[0]);
    /* bwrap names the sandbox's pid 1 on --info-fd: its process group is
     * where the core's signals go, as with the bubblewrap backend.  The fd
     * is added here, not in the plan, so the plan stays printable.  >= 10
     * keeps it clear of the 0..2 H is about to fill. */
    int info[2] = {-1, -1}, info_w = -1;
    if (pipe2(info, O_CLOEXEC) < 0) return kgate_err_set(err, errno, "pipe: %s", strerror(errno));
    info_w = fcntl(info[1], F_DUPFD_CLOEXEC, 10);
    close(info[1]);
    int info_r = info[0];
    if (info_w < 0) {
        close(info_r);
        return kgate_err_set(err, errno, "fcntl: %s", strerror(errno));
    }
    /* Bind sources as descriptors, destinations checked before the
     * program starts: as the bubblewrap backend does (kgl-pin.c). */
    kgl_pins pins;
    if (kgl_pins_open(argv, argc, &pins, err) < 0) {
        close(info_r);
        close(info_w);
        return -1;
    }
    /* Fail closed, as the bubblewrap backend does: a sandbox without its
     * filter does not start.  >= 10 and close-on-exec, like info_w.  A
     * pipe written only once the mounts are checked: bwrap waits for it
     * after its last mount. */
    int filter_w = -1;
    int filter = kgl_seccomp_pipe(&filter_w, err);
    if (filter < 0) {
        close(info_r);
        close(info_w);
        kgl_pins_free(&pins);
        return -1;
    }
    char infonum[16], blocknum[16], filternum[16];
    snprintf(infonum, sizeof infonum, "%d", info_w);
    snprintf(filternum, sizeof filternum, "%d", filter);
    kgl_gate gate;
    if (kgl_gate_open(&gate) < 0) {
        /* It says when the mounts are done: without it they cannot be
         * checked, and nothing starts. */
        close(info_r);
        close(info_w);
        close(filter);
        close(filter_w);
        kgl_pins_free(&pins);
        return kgate_err_set(err, ENOTSUP,
                             "cannot tell when bwrap has made its mounts on this "
                             "kernel, so they cannot be checked; nothing was started");
    }
    snprintf(blocknum, sizeof blocknum, "%d", gate.theirs);
    /* plan_argv is not promised to be NULL-terminated. */
    const char **bargv = calloc(pins.argc + 7, sizeof *bargv);
    int *pass = calloc(pins.n_fds + 3, sizeof *pass);
    int sv[2] = {-1, -1};
    if (!bargv || !pass || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        int e = bargv && pass ? errno : ENOMEM;
        free(bargv);
        free(pass);
        close(info_r);
        close(info_w);
        close(filter);
        close(filter_w);
        kgl_pins_free(&pins);
        kgl_gate_close(&gate);
        return kgate_err_set(err, e, "cannot start the network helper: %s", strerror(e));
    }
    size_t k = 0;
    bargv[k++] = argv[0];
    bargv[k++] = "--info-fd";
    bargv[k++] = infonum;
    bargv[k++] = "--block-fd";
    bargv[k++] = blocknum;
    /* bwrap loads it after its own setup, just before it execs the
     * program (bwrap-launch.c passes it the same way). */
    bargv[k++] = "--seccomp";
    bargv[k++] = filternum;
    memcpy(bargv + k, pins.argv + 1, (pins.argc - 1) * sizeof *bargv);
    /* Cleared only right before the exec (kgl-launch.c): the
     * iptables-restore children H forks must not inherit any of these. */
    size_t n_pass = 0;
    pass[n_pass++] = info_w;
    pass[n_pass++] = gate.theirs;
    pass[n_pass++] = filter;
    for (size_t i = 0; i < pins.n_fds; i++) pass[n_pass++] = pins.fds[i];
    sf_child_ctx c = {
        .ctl = sv[1],
        .parents = {sv[0], info_r, gate.ours},
        .uid = getuid(),
        .gid = getgid(),
        .tools = tools,
        .ruleset = ruleset,
        .dns_conf = dns_conf,
        .events = events,
        .filter = flt,
    };
    kgl_guard guard;
    /* The guard holds our end of the gate too (kgl-guard.c). */
    if (kgl_guard_start(&guard, gate.ours, err) < 0) {
        free(bargv);
        free(pass);
        close(sv[0]);
        close(sv[1]);
        close(info_r);
        close(info_w);
        close(filter);
        close(filter_w);
        kgl_pins_free(&pins);
        kgl_gate_close(&gate);
        return -1;
    }
    const kgl_spawn spawn = {
        .path = bwrap_path,
        .argv = (char *const *)bargv,
        .envp = (char *const *)io->envp,
        .stdio = {io->stdin_fd, io->stdout_fd, io->stderr_fd},
        .pass = pass,
        .n_pass = n_pass,
        .dir = policy->project,
        .group = guard.pid,
        .pdeathsig = 1,
        .prepare = child_prepare,
        .ctx = &c,
        .prepare_name = "set up the network",
        .ignored = kgl_launch_ignored(io),
    };
    kgl_child hc;
    int started = kgl_spawn_start(&spawn, &hc, err);
    close(sv[1]);
    close(info_w);
    /* H has its copy; slirp4netns, forked next, must not get one. */
    close(filter);
    for (size_t i = 0; i < pins.n_fds; i++) {
        close(pins.fds[i]);
        pins.fds[i] = -1;
    }
    free(bargv);
    free(pass);
    if (started < 0) {
        close(sv[0]);
        close(info_r);
        close(filter_w);
        kgl_pins_free(&pins);
        kgl_gate_close(&gate);
        kgl_guard_stop(&guard);
        return -1;
    }
    /* gate.theirs stays open here until the gate is decided: while we
     * hold the peer, bwrap dying does not purge the record (which would
     * look like a read). */

    pid_t slirp = -1;
    int ready_rd = -1, slirp_log = -1;
    char msg[600];
    sf_api api = {.dir = ""};
    const kgate_publish *pub = NULL;
    size_t n_pub = 0;
    if (sf_publish_check(policy, &pub, &n_pub, err) < 0) goto fail;
    int c1 = read_byte(sv[0], SF_WAIT_UNSHARE_MS);
    if (c1 != 'R') {
        msg[0] = '\0';
        if (c1 == 'E') {
            read_until_eof(sv[0], msg, sizeof msg, now_ms() + 1000);
            kgate_err_set(err, 0, "network helper: %s", msg);
        } else {
            helper_gone(&spawn, &hc, "ended before its namespaces were ready", err);
        }
        goto fail;
    }
    if (n_pub > 0 && api_open(&api, err) < 0) goto fail;
    slirp = start_slirp(tools, hc.pid, flt->n_loop > 0, n_pub > 0 ? api.sock : NULL, &ready_rd,
                        &slirp_log, err);
    if (slirp < 0) goto fail;
    if (read_byte(ready_rd, SF_WAIT_SLIRP_MS) != '1') {
        kgate_err_set(err, 0, "slirp4netns did not become ready: %s",
                      slirp_messages(slirp_log, msg, sizeof msg));
        goto fail;
    }
    close(ready_rd);
    ready_rd = -1;
    /* slirp4netns listens on its API socket before it says ready. */
    if (n_pub > 0 && publish_all(&api, pub, n_pub, err) < 0) goto fail;
    if (send(sv[0], "G", 1, MSG_NOSIGNAL) != 1) {
        kgate_err_set(err, errno, "network helper ended early");
        goto fail;
    }
    ssize_t got = read_until_eof(sv[0], msg, sizeof msg, now_ms() + SF_WAIT_SETUP_MS);
    if (got < 0) {
        kgate_err_set(err, ETIMEDOUT, "network helper: setup did not finish");
        goto fail;
    }
    char *e = strchr(msg, 'E');
    if (e) {
        kgate_err_set(err, 0, "%s", e + 1);
        goto fail;
    }
    if (!strchr(msg, 'X')) {
        helper_gone(&spawn, &hc, "ended before starting the program", err);
        goto fail;
    }
    /* The control socket is closed on exec: H has exec'd bwrap, or one of
     * the spawn helper's steps failed and its report says which. */
    if (kgl_spawn_finish(&spawn, &hc, err) < 0) goto fail;
    /* bwrap writes its info once the namespaces exist and closes it; a
     * bwrap that failed before closes it empty (its message is above). */
    got = read_until_eof(info_r, msg, sizeof msg, now_ms() + SF_WAIT_SLIRP_MS);
    pid_t sandbox = got > 0 ? kgl_info_child_pid(msg) : 0;
    if (sandbox) kgl_guard_tell(&guard, sandbox);
    if (sandbox && kgl_gate_arm(&gate) < 0) {
        kgate_err_set(err, errno, "cannot open bwrap's setup gate: %s", strerror(errno));
        goto fail;
    }
    if (!sandbox) {
        kgate_err_set(err, 0, "bwrap could not create the sandbox; its message is above");
        goto fail;
    }
    int gated = kgl_gate_wait(&gate, hc.pid);
    if (gated == KGL_GATE_FAILED) {
        kgate_err_set(err, 0, "bwrap could not set up the sandbox; its message is above");
        goto fail;
    }
    /* bwrap is past its last mount, waiting for the filter: check what
     * the program would see before it exists (kgl-pin.c). */
    if (gated == KGL_GATE_UNKNOWN) {
        kgate_err_set(err, errno,
                      "cannot tell when bwrap has made its mounts (%s), so "
                      "they cannot be checked; nothing was started",
                      strerror(errno));
        kill(sandbox, SIGKILL);
        goto fail;
    }
    /* The filter and the resolver are loaded, the mounts checked, and the
     * program waits for its seccomp filter: the audit launch line goes
     * now, so a list that cannot be loaded leaves a refusal, not a launch
     * line (kgate_launch.commit). */
    if (kgl_pins_verify(&pins, sandbox, err) < 0 || kgate_launch_commit(io, err) < 0 ||
        kgl_seccomp_send(filter_w, err) < 0) {
        kill(sandbox, SIGKILL);
        goto fail;
    }
    close(filter_w);
    filter_w = -1;
    kgl_pins_free(&pins);
    kgl_gate_close(&gate);
    close(sv[0]);
    close(info_r);
    if (slirp_log >= 0) close(slirp_log);
    proc->pid = hc.pid;
    /* In pty mode the program leaves this group for the pty's session (the
     * shim); the core signals it through the pty then, and this group only
     * before the shim ran. */
    proc->signal_pid = -sandbox;
    proc->helpers[0] = slirp;
    proc->helpers[1] = guard.pid;
    proc->n_helpers = 2;
    return 0;

fail:
    close(sv[0]);
    close(info_r);
    kgl_gate_close(&gate);
    kgl_spawn_abandon(&hc);
    if (filter_w >= 0) close(filter_w);
    kgl_pins_free(&pins);
    if (slirp_log >= 0) close(slirp_log);
    if (ready_rd >= 0) close(ready_rd);
    kgl_guard_stop(&guard);
    kill_and_reap(slirp); /* and with it every port it listened on */
    api_close(&api);
    return -1;
}

int sf_launch_restricted(const kgate_host *host, const kgate_policy *policy, const kgate_plan *plan,
                         const kgate_launch *io, const sf_tools *tools, kgate_proc *proc,
                         kgate_err *err)
{
    if (!tools->slirp[0]) return kgate_err_set(err, ENOENT, "slirp4netns is not installed");
    if (!tools->nft[0]) return kgate_err_set(err, ENOENT, "nft is not installed");
    if (!tools->dnsmasq[0]) return kgate_err_set(err, ENOENT, "dnsmasq is not installed");
    int events = KGATE_HAS_FIELD(io, kgate_launch, events_fd) ? io->events_fd : -1;

    /* The whole filter as text, before anything is forked: a list that
     * cannot be built starts nothing. */
    sf_filter flt;
    /* The host's own addresses are read here, in the host's namespace,
     * once: one that appears later in the run is not in the filter
     * (docs/network.md). */
    if (sf_filter_for_policy(&policy->allow_hosts, &flt, err) < 0) return -1;
    char *ruleset = sf_nft_ruleset(&flt);
    char *dconf = ruleset ? sf_dnsmasq_conf(&flt, events >= 0) : NULL;
    int dns_conf = dconf ? memfd_create("kgate-dnsmasq.conf", MFD_CLOEXEC) : -1;
    if (dns_conf < 0 || write_all(dns_conf, dconf, strlen(dconf)) < 0) {
        int e = dconf ? errno : ENOMEM;
        free(ruleset);
        free(dconf);
        sf_filter_free(&flt);
        if (dns_conf >= 0) close(dns_conf);
        return kgate_err_set(err, e, "building the network filter failed: %s", strerror(e));
    }
    free(dconf);
    int r = launch_with(host, policy, plan, io, tools, proc, ruleset, dns_conf, events, &flt, err);
    free(ruleset);
    sf_filter_free(&flt);
    close(dns_conf);
    return r;
}
