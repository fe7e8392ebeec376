/* kgl-io.c: the small descriptor, process and clock helpers that the
 * SDK's launch pieces and the Linux plugins all need, written once.  Each
 * is async-signal-safe but kgl_now_ms (clock_gettime is, on Linux), so a
 * forked child may use them before its exec. */
#include "kgate/kgate-linux.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int kgl_reap(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return st;
}

void kgl_kill_reap(pid_t pid)
{
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    kgl_reap(pid);
}

long kgl_now_ms(void)
{
    struct timespec ts = {0, 0};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int kgl_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

ssize_t kgl_read_to_eof(int fd, char *buf, size_t n, long wait_ms, int mode)
{
    const long deadline = wait_ms > 0 ? kgl_now_ms() + wait_ms : 0;
    size_t got = 0;
    buf[0] = '\0';
    for (;;) {
        int full = got >= n - 1;
        if (full && mode == KGL_READ_FILL) break;
        long left = deadline ? deadline - kgl_now_ms() : -1;
        if (deadline && left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
        int r = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) continue;
        /* Past a full buf (DRAIN) bytes are read only to reach the EOF. */
        char sink[256];
        ssize_t k = full ? read(fd, sink, sizeof sink) : read(fd, buf + got, n - 1 - got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && mode == KGL_READ_FILL) return -1;
        if (k <= 0) break;
        if (full) continue;
        got += (size_t)k;
        buf[got] = '\0';
    }
    return (ssize_t)got;
}

int kgl_send_fd(int sock, int fd, char byte)
{
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ssize_t n;
    while ((n = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
    return n == 1 ? 0 : -1;
}

int kgl_recv_fd(int sock, int flags, char *byte)
{
    char b = 0;
    struct iovec iov = {.iov_base = &b, .iov_len = 1};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } u;
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    ssize_t n;
    while ((n = recvmsg(sock, &m, flags | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
    struct cmsghdr *c = n == 1 ? CMSG_FIRSTHDR(&m) : NULL;
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
        c->cmsg_len != CMSG_LEN(sizeof(int)))
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    if (byte) *byte = b;
    return fd;
}
