/* sf_launch.c: the restricted-network construction, as measured on an
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
 *                                       exec bwrap (nested user namespace,
 *                                       bubblewrap's seccomp filter)
 *   EOF on the control socket: exec done
 *
 * The iptables rules belong to H's user namespace.  bwrap's --unshare-user
 * puts the program one namespace deeper, where capabilities do not reach
 * the network namespace, so the program cannot flush the filter.  bwrap
 * also loads the bubblewrap backend's seccomp filter (--seccomp FD, built
 * by the same code from the same rule table, kgate-linux.h) just before it
 * execs the program: no keyring, no mount API, no TIOCSTI here either.
 *
 * Both H and slirp4netns carry PR_SET_PDEATHSIG(SIGKILL) towards the kgate
 * process, so a killed kgate leaves neither behind. */
#include "sf.h"

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
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Bounds, not timings: each only ends a wait that would otherwise hang. */
#define SF_WAIT_UNSHARE_MS 10000
#define SF_WAIT_SLIRP_MS 10000
#define SF_WAIT_SETUP_MS 60000 /* includes resolving every name */
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

/* Default dispositions for the handlers the core installed; the mask (all
 * blocked, from the fork) is left as it is.  An ignored signal stays
 * ignored, as execve would leave it: the core ignores nothing itself, so it
 * is one kgate's caller ignored, and the program inherits it. */
static void reset_signals(void)
{
    struct sigaction dfl, cur;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        if (sigaction(s, NULL, &cur) == 0 && cur.sa_handler != SIG_IGN)
            sigaction(s, &dfl, NULL);
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
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
}

/* ------------------------------------------------------------------------ */
/* The helper H                                                              */
/* ------------------------------------------------------------------------ */

typedef struct sf_child_ctx {
    int ctl;          /* H's end of the control socket */
    pid_t kgate_pid;  /* for the parent-death check */
    uid_t uid;        /* real ids before unshare: what 0 maps to */
    gid_t gid;
    const kgate_policy *policy;
    const char *const *bwrap_argv;
    const char *bwrap_path;
    const kgate_launch *io;
    const sf_tools *tools;
    const char *rules_v6; /* NULL: ip6tables-restore not installed */
    int info_w;           /* bwrap's --info-fd, already in bwrap_argv */
    int block_w;          /* bwrap's --block-fd, or -1 */
    int seccomp;          /* bwrap's --seccomp: the read end of the filter's pipe */
    const int *pins;      /* bind sources as descriptors (kgl-pin.c) */
    size_t n_pins;
    int pty;              /* io->pty, when the core is new enough to say */
    pid_t group;          /* the guard's process group (kgl-guard.c) */
} sf_child_ctx;

/* Sends "E<message>" and ends H.  One send: the parent reads to EOF. */
static _Noreturn void child_fail(const sf_child_ctx *c, const char *fmt, ...)
    KGATE_PRINTF(2, 3);
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
        if (lstat(nscd[i], &st) == 0 &&
            mount("/dev/null", nscd[i], NULL, MS_BIND, NULL) < 0)
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
            child_fail(c, "slirp4netns did not configure %s with %s", SF_TAP,
                       SF_GUEST_ADDR);
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Every IPv4 address of every allowed name, resolved by the system
 * resolver in this namespace (so /etc/hosts applies, and DNS goes to
 * slirp's 10.0.2.3).  Deduplicated; the order follows the list. */
static char **child_resolve(const sf_child_ctx *c, size_t *n_out)
{
    size_t n = 0, cap = 8;
    char **addrs = malloc(cap * sizeof *addrs);
    if (!addrs) child_fail(c, "out of memory");
    const kgate_strlist *hosts = &c->policy->allow_hosts;
    for (size_t h = 0; h < hosts->n; h++) {
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
        struct addrinfo *res = NULL;
        int r = getaddrinfo(hosts->v[h], NULL, &hints, &res);
        if (r != 0 || !res)
            child_fail(c, "allow_hosts: %s resolves to no IPv4 address (%s)",
                       hosts->v[h], r ? gai_strerror(r) : "empty answer");
        for (struct addrinfo *a = res; a; a = a->ai_next) {
            char buf[INET_ADDRSTRLEN];
            const struct sockaddr_in *sin = (const struct sockaddr_in *)a->ai_addr;
            if (!inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf)) continue;
            int dup = 0;
            for (size_t k = 0; k < n && !dup; k++) dup = strcmp(addrs[k], buf) == 0;
            if (dup) continue;
            if (n == cap) {
                char **more = realloc(addrs, (cap *= 2) * sizeof *addrs);
                if (!more) child_fail(c, "out of memory");
                addrs = more;
            }
            if (!(addrs[n++] = strdup(buf))) child_fail(c, "out of memory");
        }
        freeaddrinfo(res);
    }
    *n_out = n;
    return addrs;
}

/* One iptables-restore run: started with its rules on stdin (no shell),
 * finished separately, so IPv4 and IPv6 load side by side (each costs a
 * netfilter commit of about 10 ms here). */
typedef struct sf_restore {
    const char *tool;
    pid_t pid;
    int out; /* its stdout+stderr */
    int werr;
} sf_restore;

static void child_restore_start(const sf_child_ctx *c, sf_restore *r,
                                const char *tool, const char *rules)
{
    int in[2], out[2];
    r->tool = tool;
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
        char *const argv[] = {(char *)tool, NULL};
        char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
        execve(tool, argv, envp);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    /* The rules fit in a pipe buffer many times over; a tool that died
     * early gives EPIPE (SIGPIPE is ignored), reported at finish. */
    r->werr = write_all(in[1], rules, strlen(rules));
    close(in[1]);
    r->out = out[0];
}

/* Waits for it; on failure ends H with the tool's first line of output. */
static void child_restore_finish(const sf_child_ctx *c, sf_restore *r)
{
    char msg[256];
    ssize_t got = read_until_eof(r->out, msg, sizeof msg, now_ms() + SF_WAIT_SETUP_MS);
    close(r->out);
    int st = 0;
    while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (r->werr < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (got < 0) msg[0] = '\0';
        msg[strcspn(msg, "\n")] = '\0';
        child_fail(c, "%s failed: %s", r->tool, msg[0] ? msg : "no output");
    }
}

/* H runs with every signal blocked (the parent forked it so) until just
 * before exec.  It relies on glibc's fork handlers for malloc and NSS:
 * resolving names needs both, and only H is inside the namespace. */
static _Noreturn void child_main(sf_child_ctx *c)
{
    /* The kgate process is the parent; if it dies, so does H (and, after
     * exec, bwrap, whose --die-with-parent then ends the program). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != c->kgate_pid) _exit(1);
    reset_signals();
    /* A dead pipe reader must be an error message, not a signal death;
     * an ignored signal is discarded, so none is pending at exec.  What
     * the program gets back before exec is what it inherited. */
    struct sigaction pipe_inherited;
    sigaction(SIGPIPE, NULL, &pipe_inherited);
    signal(SIGPIPE, SIG_IGN);
    /* As the bubblewrap backend does: out of the terminal's foreground
     * group, so a Ctrl-C reaches kgate, which forwards it to the program's
     * group.  With a pty too: the pty must not become the controlling
     * terminal here, where bwrap's outer process would share its session
     * and die of a Ctrl-C typed into it; the bubblewrap plan's shim takes
     * it inside the sandbox (docs/interactive.md).  The group is the
     * guard's, so the sandbox's pid 1 is born in it (kgl-guard.c). */
    if (setpgid(0, c->group) < 0)
        child_fail(c, "joining the guard's process group: %s", strerror(errno));

    if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) < 0)
        child_fail(c, "unshare(user, net, mount): %s", strerror(errno));
    if (child_map_ids(c) < 0)
        child_fail(c, "writing the uid/gid map: %s", strerror(errno));
    if (send(c->ctl, "R", 1, MSG_NOSIGNAL) != 1) _exit(1);
    if (read_byte(c->ctl, SF_WAIT_SLIRP_MS + SF_WAIT_UNSHARE_MS) != 'G') _exit(1);

    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        child_fail(c, "making mounts private: %s", strerror(errno));
    child_place_resolv_conf(c);
    child_wait_tap(c);

    size_t n = 0;
    char **addrs = child_resolve(c, &n);
    char *v4 = sf_rules_v4((const char *const *)addrs, n, NULL);
    if (!v4) child_fail(c, "building the IPv4 rules failed");
    sf_restore r4, r6;
    child_restore_start(c, &r4, c->tools->ipt, v4);
    if (c->rules_v6) child_restore_start(c, &r6, c->tools->ip6t, c->rules_v6);
    child_restore_finish(c, &r4);
    if (c->rules_v6) child_restore_finish(c, &r6);

    /* The program's stdio.  Dup high first: an io fd may already be 0..2. */
    int fds[3] = {c->io->stdin_fd, c->io->stdout_fd, c->io->stderr_fd};
    for (int i = 0; i < 3; i++) {
        fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
        if (fds[i] < 0) child_fail(c, "dup: %s", strerror(errno));
    }
    for (int i = 0; i < 3; i++)
        if (dup2(fds[i], i) < 0) child_fail(c, "dup2: %s", strerror(errno));
    if (chdir(c->policy->project) < 0)
        child_fail(c, "chdir %s: %s", c->policy->project, strerror(errno));
    /* Only now, right before the exec: the iptables-restore children
     * forked above must not inherit any of these. */
    if (fcntl(c->info_w, F_SETFD, 0) < 0 ||
        (c->block_w >= 0 && fcntl(c->block_w, F_SETFD, 0) < 0) ||
        fcntl(c->seccomp, F_SETFD, 0) < 0)
        child_fail(c, "passing descriptors to bwrap: %s", strerror(errno));
    for (size_t i = 0; i < c->n_pins; i++)
        if (fcntl(c->pins[i], F_SETFD, 0) < 0)
            child_fail(c, "passing descriptors to bwrap: %s", strerror(errno));
    sigaction(SIGPIPE, &pipe_inherited, NULL);
    unblock_signals();

    if (send(c->ctl, "X", 1, MSG_NOSIGNAL) != 1) _exit(1);
    execve(c->bwrap_path, (char *const *)c->bwrap_argv, (char *const *)c->io->envp);
    child_fail(c, "exec %s: %s", c->bwrap_path, strerror(errno));
}

/* ------------------------------------------------------------------------ */
/* slirp4netns                                                               */
/* ------------------------------------------------------------------------ */

/* slirp4netns chats on stdout and stderr ("sent tapfd=..."); that is not
 * the program's output.  Its stderr goes to an anonymous file instead, read
 * back only to explain a failure. */
static pid_t start_slirp(const sf_tools *tools, pid_t helper, int *ready_rd,
                         int *log_fd, kgate_err *err)
{
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) < 0) {
        kgate_err_set(err, errno, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t kgate_pid = getpid();
    sf_slirp_argv sa;
    sf_slirp_argv_build(&sa, tools->slirp, ready[1], helper);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    *log_fd = memfd_create("kgate-slirp4netns", MFD_CLOEXEC);
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        kgate_err_set(err, fork_errno, "fork: %s", strerror(fork_errno));
        close(ready[0]);
        close(ready[1]);
        if (devnull >= 0) close(devnull);
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != kgate_pid) _exit(1);
        reset_signals();
        unblock_signals();
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 1);
            dup2(*log_fd >= 0 ? *log_fd : devnull, 2);
        }
        int flags = fcntl(ready[1], F_GETFD);
        fcntl(ready[1], F_SETFD, flags & ~FD_CLOEXEC);
        /* Its own process group: a ^C at the terminal is the core's to
         * forward, and slirp4netns must not die before the program. */
        setpgid(0, 0);
        char *const envp[] = {"PATH=/usr/bin:/bin", NULL};
        execve(sa.v[0], (char *const *)sa.v, envp);
        _exit(127);
    }
    if (devnull >= 0) close(devnull);
    close(ready[1]);
    *ready_rd = ready[0];
    return pid;
}

/* The number after "child-pid" in bwrap's info JSON, or 0. */
static pid_t parse_child_pid(const char *json)
{
    const char *k = strstr(json, "\"child-pid\"");
    if (!k || !(k = strchr(k, ':'))) return 0;
    char *end;
    long v = strtol(k + 1, &end, 10);
    return end != k + 1 && v > 1 ? (pid_t)v : 0;
}

/* A gate that says when bwrap finished its mounts, so that a bwrap setup
 * failure is a launch error (125) and not the program's exit status 1.
 * bwrap reads --block-fd after its last mount, just before it execs the
 * program.  Our end of a SOCK_SEQPACKET pair gets one record larger than a
 * quarter of its (minimal) send buffer, which keeps it unwritable until the
 * record is read: writable again means bwrap got that far.  Returns our
 * end, with bwrap's in *theirs (>= 10), or -1 where the kernel does not
 * behave so (launch then goes on without the gate). */
static int gate_open(int *theirs, size_t *reclen)
{
    int sv[2], tiny = 1, sndbuf = 0;
    socklen_t len = sizeof sndbuf;
    *theirs = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return -1;
    char rec[2048];
    memset(rec, 0, sizeof rec);
    size_t n = sizeof rec;
    if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &tiny, sizeof tiny) < 0 ||
        getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) < 0)
        goto no;
    if ((size_t)sndbuf < n + 64) n = sndbuf > 128 ? (size_t)sndbuf - 64 : 64;
    struct pollfd p = {.fd = sv[0], .events = POLLOUT};
    if (send(sv[0], rec, n, MSG_DONTWAIT) != (ssize_t)n || poll(&p, 1, 0) != 0) goto no;
    /* Taken back: it goes in only once the guard knows the sandbox's pid 1
     * (gate_arm; kgl-guard.c). */
    if (recv(sv[1], rec, sizeof rec, MSG_DONTWAIT) != (ssize_t)n) goto no;
    *reclen = n;
    *theirs = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    close(sv[1]);
    if (*theirs >= 0) return sv[0];
    close(sv[0]);
    return -1;
no:
    close(sv[0]);
    close(sv[1]);
    return -1;
}

/* Queues the record bwrap's pid 1 waits for. */
static int gate_arm(int ours, size_t reclen)
{
    char rec[2048];
    memset(rec, 0, sizeof rec);
    return send(ours, rec, reclen, MSG_DONTWAIT) == (ssize_t)reclen ? 0 : -1;
}

static void gate_close(int *ours, int *theirs)
{
    if (*ours >= 0) close(*ours);
    if (*theirs >= 0) close(*theirs);
    *ours = *theirs = -1;
}

/* 1: bwrap read the record (setup done); 0: pid ended first; -1: cannot
 * tell. */
static int gate_wait(int ours, pid_t pid)
{
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) {
        /* No pidfd (a kernel before 5.3, or valgrind): the same question,
         * asked every 10 ms.  WNOWAIT leaves bwrap for the caller to reap. */
        for (;;) {
            struct pollfd g = {.fd = ours, .events = POLLOUT};
            if (poll(&g, 1, 10) == 1 && (g.revents & POLLOUT)) return 1;
            siginfo_t si;
            memset(&si, 0, sizeof si);
            if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                si.si_pid == pid) {
                /* It read the record before it could exit, if it did. */
                struct pollfd again = {.fd = ours, .events = POLLOUT};
                return poll(&again, 1, 0) == 1 && (again.revents & POLLOUT) ? 1 : 0;
            }
        }
    }
    struct pollfd p[2] = {{.fd = ours, .events = POLLOUT}, {.fd = pidfd, .events = POLLIN}};
    while (poll(p, 2, -1) < 0 && errno == EINTR) {
    }
    close(pidfd);
    /* bwrap reads before anything can exit, so a program that already
     * ended still shows as a read record. */
    struct pollfd again = {.fd = ours, .events = POLLOUT};
    return poll(&again, 1, 0) == 1 && (again.revents & POLLOUT) ? 1 : 0;
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
/* The parent side                                                           */
/* ------------------------------------------------------------------------ */

int sf_launch_restricted(const kgate_host *host, const kgate_policy *policy,
                         const kgate_plan *plan, const kgate_launch *io,
                         const sf_tools *tools, kgate_proc *proc,
                         kgate_err *err)
{
    size_t argc = 0;
    const char *const *argv = host->plan_argv(plan, &argc);
    if (!argv || argc == 0) return kgate_err_set(err, EINVAL, "empty plan");
    if (sf_hosts_check(&policy->allow_hosts, err) < 0) return -1;
    if (!tools->slirp[0]) return kgate_err_set(err, ENOENT, "slirp4netns is not installed");
    if (!tools->ipt[0]) return kgate_err_set(err, ENOENT, "iptables-restore is not installed");

    /* Everything H needs is computed here, before the fork. */
    char bwrap_path[PATH_MAX];
    if (strchr(argv[0], '/')) snprintf(bwrap_path, sizeof bwrap_path, "%s", argv[0]);
    else if (sf_find_tool(argv[0], bwrap_path, sizeof bwrap_path) < 0)
        return kgate_err_set(err, ENOENT, "%s not found", argv[0]);
    /* bwrap names the sandbox's pid 1 on --info-fd: its process group is
     * where the core's signals go, as with the bubblewrap backend.  The fd
     * is added here, not in the plan, so the plan stays printable.  >= 10
     * keeps it clear of the 0..2 H is about to fill. */
    int info[2] = {-1, -1}, info_w = -1;
    if (pipe2(info, O_CLOEXEC) < 0)
        return kgate_err_set(err, errno, "pipe: %s", strerror(errno));
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
    int block_w = -1;
    size_t reclen = 0;
    int gate = gate_open(&block_w, &reclen);
    if (gate < 0) {
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
    snprintf(blocknum, sizeof blocknum, "%d", block_w);
    /* plan_argv is not promised to be NULL-terminated. */
    const char **bargv = calloc(pins.argc + 7, sizeof *bargv);
    char *v6 = tools->ip6t[0] ? sf_rules_v6() : NULL;
    int sv[2] = {-1, -1};
    if (!bargv || (tools->ip6t[0] && !v6) ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        int e = bargv && (!tools->ip6t[0] || v6) ? errno : ENOMEM;
        free(bargv);
        free(v6);
        close(info_r);
        close(info_w);
        close(filter);
        close(filter_w);
        kgl_pins_free(&pins);
        gate_close(&gate, &block_w);
        return kgate_err_set(err, e, "cannot start the network helper: %s", strerror(e));
    }
    size_t k = 0;
    bargv[k++] = argv[0];
    bargv[k++] = "--info-fd";
    bargv[k++] = infonum;
    if (gate >= 0) {
        bargv[k++] = "--block-fd";
        bargv[k++] = blocknum;
    }
    /* bwrap loads it after its own setup, just before it execs the
     * program (bwrap-launch.c passes it the same way). */
    bargv[k++] = "--seccomp";
    bargv[k++] = filternum;
    memcpy(bargv + k, pins.argv + 1, (pins.argc - 1) * sizeof *bargv);
    sf_child_ctx c = {
        .ctl = sv[1],
        .kgate_pid = getpid(),
        .uid = getuid(),
        .gid = getgid(),
        .policy = policy,
        .bwrap_argv = bargv,
        .bwrap_path = bwrap_path,
        .io = io,
        .tools = tools,
        .rules_v6 = v6,
        .info_w = info_w,
        .block_w = block_w,
        .seccomp = filter,
        .pins = pins.fds,
        .n_pins = pins.n_fds,
        .pty = KGATE_HAS_FIELD(io, kgate_launch, pty) && io->pty,
    };
    kgl_guard guard;
    /* The guard holds our end of the gate too (kgl-guard.c). */
    if (kgl_guard_start(&guard, gate, err) < 0) {
        free(bargv);
        free(v6);
        close(sv[0]);
        close(sv[1]);
        close(info_r);
        close(info_w);
        close(filter);
        close(filter_w);
        kgl_pins_free(&pins);
        gate_close(&gate, &block_w);
        return -1;
    }
    c.group = guard.pid;
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t h = fork();
    int fork_errno = errno;
    if (h == 0) {
        close(sv[0]);
        close(info_r);
        if (gate >= 0) close(gate);
        child_main(&c);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(sv[1]);
    close(info_w);
    /* H has its copy; slirp4netns, forked next, must not get one. */
    close(filter);
    for (size_t i = 0; i < pins.n_fds; i++) {
        close(pins.fds[i]);
        pins.fds[i] = -1;
    }
    free(bargv);
    free(v6);
    if (h < 0) {
        close(sv[0]);
        close(info_r);
        close(filter_w);
        kgl_pins_free(&pins);
        gate_close(&gate, &block_w);
        kgl_guard_stop(&guard);
        return kgate_err_set(err, fork_errno, "fork: %s", strerror(fork_errno));
    }
    /* block_w stays open here until the gate is decided: while we hold
     * the peer, bwrap dying does not purge the record (which would look
     * like a read). */

    pid_t slirp = -1;
    int ready_rd = -1, slirp_log = -1;
    char msg[600];
    int c1 = read_byte(sv[0], SF_WAIT_UNSHARE_MS);
    if (c1 != 'R') {
        msg[0] = '\0';
        if (c1 == 'E') read_until_eof(sv[0], msg, sizeof msg, now_ms() + 1000);
        kgate_err_set(err, 0, "network helper: %s",
                      msg[0] ? msg : "ended before its namespaces were ready");
        goto fail;
    }
    slirp = start_slirp(tools, h, &ready_rd, &slirp_log, err);
    if (slirp < 0) goto fail;
    if (read_byte(ready_rd, SF_WAIT_SLIRP_MS) != '1') {
        kgate_err_set(err, 0, "slirp4netns did not become ready: %s",
                      slirp_messages(slirp_log, msg, sizeof msg));
        goto fail;
    }
    close(ready_rd);
    ready_rd = -1;
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
        kgate_err_set(err, 0, "network helper ended before starting the program");
        goto fail;
    }
    /* bwrap writes its info once the namespaces exist and closes it; a
     * bwrap that failed before closes it empty (its message is above). */
    got = read_until_eof(info_r, msg, sizeof msg, now_ms() + SF_WAIT_SLIRP_MS);
    pid_t sandbox = got > 0 ? parse_child_pid(msg) : 0;
    if (sandbox) kgl_guard_tell(&guard, sandbox);
    if (sandbox && gate >= 0 && gate_arm(gate, reclen) < 0) {
        kgate_err_set(err, errno, "cannot open bwrap's setup gate: %s", strerror(errno));
        goto fail;
    }
    if (!sandbox) {
        kgate_err_set(err, 0, "bwrap could not create the sandbox; its message is above");
        goto fail;
    }
    int gated = gate_wait(gate, h);
    if (gated == 0) {
        kgate_err_set(err, 0, "bwrap could not set up the sandbox; its message is above");
        goto fail;
    }
    /* bwrap is past its last mount, waiting for the filter: check what
     * the program would see before it exists (kgl-pin.c). */
    if (gated < 0) {
        kgate_err_set(err, ENOTSUP,
                      "cannot tell when bwrap has made its mounts, so they "
                      "cannot be checked; nothing was started");
        kill(sandbox, SIGKILL);
        goto fail;
    }
    if (kgl_pins_verify(&pins, sandbox, err) < 0 ||
        kgl_seccomp_send(filter_w, err) < 0) {
        kill(sandbox, SIGKILL);
        goto fail;
    }
    close(filter_w);
    filter_w = -1;
    kgl_pins_free(&pins);
    gate_close(&gate, &block_w);
    close(sv[0]);
    close(info_r);
    if (slirp_log >= 0) close(slirp_log);
    proc->pid = h;
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
    gate_close(&gate, &block_w);
    kill_and_reap(h);
    if (filter_w >= 0) close(filter_w);
    kgl_pins_free(&pins);
    if (slirp_log >= 0) close(slirp_log);
    if (ready_rd >= 0) close(ready_rd);
    kgl_guard_stop(&guard);
    kill_and_reap(slirp);
    return -1;
}
