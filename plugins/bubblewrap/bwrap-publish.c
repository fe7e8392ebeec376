/* bwrap-publish.c: --publish with network: off (issue 43, 5).  The box
 * has a network namespace of its own with only a loopback, and nothing
 * routes into it; the forwarder is a fork of kgate that listens on the
 * host's loopback (the sockets are made before it enters anything, so they
 * stay the host's), then enters the box's user and network namespaces and,
 * for each connection it accepts, connects a socket made there to
 * 127.0.0.1:PORT and relays both ways.  No route or interface is added to
 * the box: the program still reaches nothing but its own loopback, and
 * the host reaches nothing of the box but the published ports.
 *
 * Why not slirp4netns with the nft filter dropping everything but the
 * published ports: that gives the box a tap device and a default route,
 * and the filter becomes the only thing between the program and the
 * network; here there is no route to filter (docs/bubblewrap.md).
 *
 * The forwarder never execs: it is forked from a process that may have
 * threads (the core's output relay), so it uses system calls and its own
 * static memory only. */
#include "bwrap-internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Connections relayed at once; more wait in the listen backlog. */
#define PUB_MAX_CONN 64
#define PUB_BUF 16384

typedef struct pub_conn {
    int fd[2]; /* 0: the host's client, 1: the box's server */
    char buf[2][PUB_BUF]; /* buf[d]: read from fd[d], for fd[1 - d] */
    size_t len[2], off[2];
    int eof[2];
    int connecting;
} pub_conn;

static pub_conn conns[PUB_MAX_CONN];

int bwrap_publish_listen(const kgate_policy *policy, int *fds, kgate_err *err)
{
    size_t n = policy->n_publish;
    for (size_t i = 0; i < n; i++) fds[i] = -1;
    if (policy->network != KGATE_NET_OFF)
        return kgate_err_set(err, EINVAL,
                             "--publish: bubblewrap forwards ports itself only with "
                             "network: off (a host list publishes through slirp-filter)");
    for (size_t i = 0; i < n; i++) {
        const kgate_publish *p = &policy->publish[i];
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(p->host_port)};
        int one = 1;
        if (inet_pton(AF_INET, p->host_addr, &a.sin_addr) != 1)
            return kgate_err_set(err, EINVAL, "--publish: %s is not an address", p->host_addr);
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        /* SO_REUSEADDR passes a port in TIME_WAIT, never one that listens. */
        if (fds[i] < 0 || setsockopt(fds[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
            bind(fds[i], (struct sockaddr *)&a, sizeof a) < 0 || listen(fds[i], 64) < 0) {
            int e = errno;
            return kgate_err_set(err, e,
                                 "--publish: cannot listen on the host's %s:%u (%s); "
                                 "nothing was started",
                                 p->host_addr, (unsigned)p->host_port, strerror(e));
        }
    }
    return 0;
}

void bwrap_publish_close(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++) kgl_closep(&fds[i]);
}

/* ------------------------------------------------------------------ */
/* The forwarder's process                                            */
/* ------------------------------------------------------------------ */

/* Only the listeners, the namespaces and the status pipe; 0, 1 and 2 on
 * /dev/null.  A copy of kgate's output pipe held here would keep the
 * core's relay waiting for an end of file. */
static void close_between(int lo, int hi)
{
    if (lo > hi) return;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lo, (unsigned)hi, 0U) == 0) return;
#endif
    for (int fd = lo; fd <= hi && fd < 65536; fd++) close(fd);
}

static int keep_only(int **keep, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (*keep[i] < 3 && (*keep[i] = fcntl(*keep[i], F_DUPFD_CLOEXEC, 3)) < 0) return -1;
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0) return -1;
    for (int fd = 0; fd < 3; fd++)
        if (devnull != fd && dup2(devnull, fd) < 0) return -1;
    if (devnull > 2) close(devnull);
    /* The gaps between the kept numbers, in order. */
    int from = 3;
    for (;;) {
        int next = -1;
        for (size_t i = 0; i < n; i++)
            if (*keep[i] >= from && (next < 0 || *keep[i] < next)) next = *keep[i];
        if (next < 0) break;
        close_between(from, next - 1);
        from = next + 1;
    }
    close_between(from, ~0U >> 1);
    return 0;
}

/* Into the box's network namespace, with nothing to take back out: the
 * listeners were made before.  Root may enter it directly; another uid
 * enters its owner first (userns, which that uid made, so it holds every
 * capability there). */
static int enter_box(int userns, int netns)
{
    if (setns(netns, CLONE_NEWNET) < 0 &&
        (errno != EPERM || userns < 0 || setns(userns, CLONE_NEWUSER) < 0 ||
         setns(netns, CLONE_NEWNET) < 0))
        return -1;
    if (userns >= 0) close(userns);
    close(netns);
    return 0;
}

static void conn_close(pub_conn *c)
{
    for (int d = 0; d < 2; d++)
        if (c->fd[d] >= 0) close(c->fd[d]);
    c->fd[0] = c->fd[1] = -1;
}

/* A client of the host's: a socket made in the box's namespace to
 * 127.0.0.1:port.  A client the table has no room for is not accepted
 * (the backlog holds it). */
static void accept_one(int lfd, uint16_t port)
{
    pub_conn *c = NULL;
    for (size_t i = 0; i < PUB_MAX_CONN && !c; i++)
        if (conns[i].fd[0] < 0) c = &conns[i];
    if (!c) return;
    int a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (a < 0) return;
    int b = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int r = b < 0 ? -1 : connect(b, (struct sockaddr *)&to, sizeof to);
    if (r < 0 && (b < 0 || errno != EINPROGRESS)) {
        /* Nothing listens in the box: the client sees its connection end. */
        close(a);
        if (b >= 0) close(b);
        return;
    }
    c->fd[0] = a;
    c->fd[1] = b;
    c->len[0] = c->len[1] = c->off[0] = c->off[1] = 0;
    c->eof[0] = c->eof[1] = 0;
    c->connecting = r < 0;
}

/* One side readable: what it sent goes to the buffer for the other side;
 * its end of stream becomes the other side's. */
static int conn_read(pub_conn *c, int d)
{
    ssize_t n = read(c->fd[d], c->buf[d], PUB_BUF);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
    if (n == 0) {
        c->eof[d] = 1;
        shutdown(c->fd[1 - d], SHUT_WR);
        return 0;
    }
    c->len[d] = (size_t)n;
    c->off[d] = 0;
    return 0;
}

static int conn_write(pub_conn *c, int d)
{
    int from = 1 - d;
    ssize_t n =
        send(c->fd[d], c->buf[from] + c->off[from], c->len[from] - c->off[from], MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
    c->off[from] += (size_t)n;
    if (c->off[from] == c->len[from]) c->len[from] = c->off[from] = 0;
    return 0;
}

static int conn_connected(pub_conn *c)
{
    int e = 0;
    socklen_t l = sizeof e;
    if (getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &e, &l) < 0 || e) return -1;
    c->connecting = 0;
    return 0;
}

/* What each side waits for: a side is read only when its buffer is
 * empty, and the client only once the box's side is connected. */
static short conn_events(const pub_conn *c, int d)
{
    if (c->connecting) return d == 1 ? POLLOUT : 0;
    short ev = 0;
    if (!c->eof[d] && c->len[d] == 0) ev |= POLLIN;
    if (c->len[1 - d] > 0) ev |= POLLOUT;
    return ev;
}

static void conn_step(pub_conn *c, int d, short rev)
{
    int bad = 0;
    if (c->connecting) {
        if (d == 1 && rev) bad = conn_connected(c);
    } else {
        if ((rev & POLLOUT) && c->len[1 - d] > 0) bad = conn_write(c, d);
        if (!bad && (rev & (POLLIN | POLLHUP | POLLERR)) && !c->eof[d] && c->len[d] == 0)
            bad = conn_read(c, d);
    }
    if (bad || (c->eof[0] && c->eof[1] && !c->len[0] && !c->len[1])) conn_close(c);
}

/* A poll loop.  A descriptor waiting for nothing is left out (a hung-up
 * socket would wake it at once, over and over), and so are the listeners
 * while every slot is taken. */
static _Noreturn void relay(const int *lfds, const uint16_t *ports, size_t n)
{
    static struct pollfd p[2 * PUB_MAX_CONN + 64];
    static int who[2 * PUB_MAX_CONN + 64]; /* conn index * 2 + side, or -1 - listener */
    for (;;) {
        size_t k = 0, used = 0;
        for (int i = 0; i < PUB_MAX_CONN; i++)
            for (int d = 0; d < 2 && conns[i].fd[0] >= 0; d++) {
                short ev = conn_events(&conns[i], d);
                used += d == 0;
                p[k] = (struct pollfd){.fd = ev ? conns[i].fd[d] : -1, .events = ev};
                who[k++] = i * 2 + d;
            }
        for (size_t i = 0; i < n && i < 64 && used < PUB_MAX_CONN; i++) {
            p[k] = (struct pollfd){.fd = lfds[i], .events = POLLIN};
            who[k++] = -1 - (int)i;
        }
        if (poll(p, k, -1) < 0) {
            if (errno == EINTR) continue;
            _exit(1);
        }
        for (size_t j = 0; j < k; j++) {
            if (!p[j].revents) continue;
            if (who[j] < 0) {
                size_t i = (size_t)(-1 - who[j]);
                accept_one(lfds[i], ports[i]);
            } else if (conns[who[j] / 2].fd[0] >= 0) {
                conn_step(&conns[who[j] / 2], who[j] % 2, p[j].revents);
            }
        }
    }
}

/* The forwarder's first word on its status pipe: 0 once it is in the
 * box's namespace, else the errno of the step that failed. */
static _Noreturn void forwarder_main(int *fds, const uint16_t *ports, size_t n, int userns,
                                     int netns, int status, pid_t kgate)
{
    /* Ends with kgate; the core ends it (SIGTERM) with the run.  Nothing
     * of kgate's handlers, and a Ctrl-C to kgate's group is kgate's to
     * forward, not this one's to die of before the program. */
    if (kgl_tie_to_parent(SIGKILL, kgate) < 0) _exit(0);
    kgl_child_signals();
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int *keep[64 + 3] = {&netns, &status, &userns};
    size_t nk = userns >= 0 ? 3 : 2;
    for (size_t i = 0; i < n; i++) keep[nk + i] = &fds[i];
    int e = 0;
    if (keep_only(keep, n + nk) < 0 || enter_box(userns, netns) < 0) e = errno ? errno : EIO;
    /* Not to be read or traced by the program's uid, which owns the
     * namespace it is in now. */
    if (!e &&
        (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0))
        e = errno;
    if (write(status, &e, sizeof e) != (ssize_t)sizeof e || e) _exit(1);
    close(status);
    for (size_t i = 0; i < PUB_MAX_CONN; i++) conns[i].fd[0] = conns[i].fd[1] = -1;
    relay(fds, ports, n);
}

/* The box's network namespace, opened while its pid 1 waits at bwrap's
 * block fd (the program has not run, the pid is bwrap's), and the user
 * namespace that owns it: not pid 1's own, which --disable-userns nests
 * one deeper (bwrap 0.8.0). */
static int open_netns(pid_t sandbox, int *userns, kgate_err *err)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/ns/net", (long)sandbox);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        kgate_err_set(err, errno, "--publish: cannot open the box's network namespace: %s",
                      strerror(errno));
        return -1;
    }
    /* EPERM: its owner is kgate's own (root's run), nothing to enter. */
    *userns = ioctl(fd, NS_GET_USERNS);
    if (*userns >= 0) (void)fcntl(*userns, F_SETFD, FD_CLOEXEC);
    return fd;
}

/* Its word: in the box's namespace, or why not (then it is reaped). */
static pid_t forwarder_ready(pid_t pid, int status, kgate_err *err)
{
    int e = EIO;
    char word[sizeof e + 1]; /* the read keeps a byte for a NUL */
    ssize_t got = kgl_read_to_eof(status, word, sizeof word, 10000, KGL_READ_FILL);
    if (got == (ssize_t)sizeof e) memcpy(&e, word, sizeof e);
    if (got == (ssize_t)sizeof e && e == 0) return pid;
    kill(pid, SIGKILL);
    kgl_reap(pid);
    kgate_err_set(err, e,
                  "--publish: the forwarder could not enter the box's network "
                  "namespace (%s); nothing was started",
                  strerror(got == (ssize_t)sizeof e ? e : EIO));
    return -1;
}

pid_t bwrap_publish_start(const kgate_policy *policy, int *fds, pid_t sandbox, kgate_err *err)
{
    size_t n = policy->n_publish;
    uint16_t ports[64];
    if (n > 64) return kgate_err_set(err, EINVAL, "--publish: more than 64 ports"), -1;
    for (size_t i = 0; i < n; i++) ports[i] = policy->publish[i].port;
    int pipefd[2] = {-1, -1};
    int userns = -1;
    int netns = open_netns(sandbox, &userns, err);
    if (netns >= 0 && pipe2(pipefd, O_CLOEXEC) < 0) {
        kgate_err_set(err, errno, "--publish: %s", strerror(errno));
        kgl_closep(&netns);
    }
    pid_t pid = -1;
    int e = 0;
    if (netns >= 0) {
        pid_t kgate = getpid();
        pid = fork();
        if (pid == 0) forwarder_main(fds, ports, n, userns, netns, pipefd[1], kgate);
        e = errno;
    }
    kgl_closep(&userns);
    kgl_closep(&netns);
    kgl_closep(&pipefd[1]);
    if (pid < 0 && e)
        kgate_err_set(err, e, "--publish: cannot start the forwarder: %s", strerror(e));
    if (pid > 0) pid = forwarder_ready(pid, pipefd[0], err);
    kgl_closep(&pipefd[0]);
    return pid;
}
