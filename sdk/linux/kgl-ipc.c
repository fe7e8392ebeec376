/* kgl-ipc.c: SysV IPC for a box without an IPC namespace of its own.
 *
 * bubblewrap's box has an IPC namespace (--unshare-ipc): the program sees
 * only the shared memory, message queues and semaphore sets it made, and
 * they vanish with it.  The Landlock box has none, and Landlock has no IPC
 * scope, so without this the program could open the user's other
 * processes' objects by key, or simply by id (ids are small and guessable),
 * and read or change them.
 *
 * Seccomp user notification gives back what the namespace gave.  A filter
 * in the launch child hands every native SysV IPC call to a supervisor, a
 * small fork of kgate with no capabilities, same uid and same IPC
 * namespace as the program:
 * - shmget, msgget, semget are performed by the supervisor itself, with
 *   IPC_PRIVATE or with a key whose object it creates (IPC_CREAT |
 *   IPC_EXCL); a key of an object that exists and is not the run's
 *   answers ENOENT (EACCES when the program asked to create it), as if
 *   the object were in another namespace.  The new id is recorded.
 * - calls that name an id continue in the kernel only for a recorded id
 *   (EINVAL otherwise, what a namespace without that id says).  Only
 *   integer arguments are looked at: a pointer the kernel reads again
 *   after the check would be a race the program wins, an integer is not.
 * - IPC_RMID is performed by the supervisor, which then forgets the id;
 *   the commands that read objects by index or count them (*_STAT,
 *   *_STAT_ANY, *_INFO, IPC_INFO) are refused.
 * - at the end of the run (SIGTERM from the core, or kgate's death) every
 *   object of the run is removed, as the end of a namespace would.
 *
 * The decision (kgl_ipc_answer) is apart from the loop: a filter chain
 * holds one listener only, so a box that supervises more calls runs one
 * loop and hands the IPC ones here (kgl-ipc.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kgate/kgate-linux.h"
#include "kgl-ipc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kgl-seccomp-program.h"

/* The commands, spelled out where glibc's headers may lack them (they are
 * kernel ABI). */
#define K_IPC_64 0x0100
#define K_SHM_LOCK 11
#define K_SHM_UNLOCK 12
#define K_GETPID 11
#define K_SETALL 17

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#define NATIVE_ARCH 0u /* unknown: every call is refused */
#endif

/* ---- the decision --------------------------------------------------- */

enum { K_GET, K_ON_ID, K_CTL, K_ADDR };

typedef struct ipc_call {
    long nr;
    int type, kind;
    int cmd_arg; /* K_CTL: which argument is the command */
} ipc_call;

static const ipc_call ipc_calls[] = {
    {SYS_shmget, KGL_IPC_SHM, K_GET, 0},       {SYS_msgget, KGL_IPC_MSG, K_GET, 0},
    {SYS_semget, KGL_IPC_SEM, K_GET, 0},       {SYS_shmat, KGL_IPC_SHM, K_ON_ID, 0},
    {SYS_msgsnd, KGL_IPC_MSG, K_ON_ID, 0},     {SYS_msgrcv, KGL_IPC_MSG, K_ON_ID, 0},
    {SYS_semop, KGL_IPC_SEM, K_ON_ID, 0},
#ifdef SYS_semtimedop
    {SYS_semtimedop, KGL_IPC_SEM, K_ON_ID, 0},
#endif
    {SYS_shmctl, KGL_IPC_SHM, K_CTL, 1},       {SYS_msgctl, KGL_IPC_MSG, K_CTL, 1},
    {SYS_semctl, KGL_IPC_SEM, K_CTL, 2},       {SYS_shmdt, KGL_IPC_SHM, K_ADDR, 0},
};

static kgl_ipc_obj *find_id(kgl_ipc_set *s, int type, int id)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].type == type && s->v[i].id == id) return &s->v[i];
    return NULL;
}

static kgl_ipc_obj *find_key(kgl_ipc_set *s, int type, int key)
{
    for (size_t i = 0; key != IPC_PRIVATE && i < s->n; i++)
        if (s->v[i].type == type && s->v[i].key == key) return &s->v[i];
    return NULL;
}

static void drop(kgl_ipc_set *s, kgl_ipc_obj *o) { *o = s->v[--s->n]; }

/* The kernel's own call, made here: integers only. */
static int get_here(int type, int key, const uint64_t *a, int flg)
{
    switch (type) {
    case KGL_IPC_SHM: return shmget(key, (size_t)a[1], flg);
    case KGL_IPC_MSG: return msgget(key, flg);
    default: return semget(key, (int)a[1], flg);
    }
}

static int rmid_here(int type, int id)
{
    switch (type) {
    case KGL_IPC_SHM: return shmctl(id, IPC_RMID, NULL);
    case KGL_IPC_MSG: return msgctl(id, IPC_RMID, NULL);
    default: return semctl(id, 0, IPC_RMID);
    }
}

/* shmget, msgget, semget: the value to answer, or -errno. */
static int64_t answer_get(kgl_ipc_set *s, int type, const uint64_t *a)
{
    int key = (int)a[0]; /* key_t: the kernel truncates it the same way */
    int flg = (int)(type == KGL_IPC_MSG ? a[1] : a[2]);
    kgl_ipc_obj *o = find_key(s, type, key);
    if (o) {
        /* Ours: the kernel checks size and IPC_EXCL as usual.  Another id
         * under our key means ours went and someone else's came: not
         * ours to hand out. */
        int r = get_here(type, key, a, flg);
        if (r < 0 && errno != ENOENT) return -errno;
        if (r >= 0) return r == o->id ? r : -EACCES;
        drop(s, o);
    }
    if (key != IPC_PRIVATE && !(flg & IPC_CREAT))
        return -ENOENT; /* no object of the run under that key */
    if (s->n == KGL_IPC_MAX) return -ENOSPC;
    int r = get_here(type, key, a, key == IPC_PRIVATE ? flg : flg | IPC_EXCL);
    if (r < 0)
        /* EEXIST without IPC_EXCL asked: the key belongs to an object
         * outside the run, which the program may not have. */
        return errno == EEXIST && !(flg & IPC_EXCL) ? -EACCES : -errno;
    s->v[s->n++] = (kgl_ipc_obj){type, r, key};
    return r;
}

/* What a *ctl command does: on an id of the set, removal, or refused. */
enum { C_ON_ID, C_RMID };
static int ctl_kind(int type, int cmd)
{
    cmd &= ~K_IPC_64;
    if (cmd == IPC_RMID) return C_RMID;
    if (cmd == IPC_STAT || cmd == IPC_SET) return C_ON_ID;
    if (type == KGL_IPC_SHM && (cmd == K_SHM_LOCK || cmd == K_SHM_UNLOCK)) return C_ON_ID;
    if (type == KGL_IPC_SEM && cmd >= K_GETPID && cmd <= K_SETALL) return C_ON_ID;
    /* IPC_INFO, *_INFO, *_STAT, *_STAT_ANY read the namespace's table by
     * index or count what is in it: other objects than the run's. */
    if (cmd == IPC_INFO || (cmd >= 11 && cmd <= 20)) return -EPERM;
    return -EINVAL;
}

static void set_resp(struct seccomp_notif_resp *resp, int64_t v)
{
    if (v == INT64_MIN) { /* continue */
        resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        return;
    }
    if (v < 0)
        resp->error = (int32_t)v;
    else
        resp->val = v;
}

static const ipc_call *find_call(long nr)
{
    for (size_t i = 0; i < sizeof ipc_calls / sizeof ipc_calls[0]; i++)
        if (ipc_calls[i].nr == nr) return &ipc_calls[i];
    return NULL;
}

int kgl_ipc_is_call(long nr) { return find_call(nr) != NULL; }

int kgl_ipc_answer(kgl_ipc_set *s, const struct seccomp_notif *req, struct seccomp_notif_resp *resp)
{
    const ipc_call *c = find_call(req->data.nr);
    if (!c || NATIVE_ARCH == 0 || req->data.arch != NATIVE_ARCH) return -1;
    memset(resp, 0, sizeof *resp);
    resp->id = req->id;
    uint64_t a[6];
    for (size_t i = 0; i < 6; i++) a[i] = req->data.args[i];
    int id = (int)a[0];
    int64_t v = INT64_MIN;
    if (c->kind == K_GET) {
        v = answer_get(s, c->type, a);
    } else if (c->kind == K_ON_ID) {
        if (!find_id(s, c->type, id)) v = -EINVAL;
    } else if (c->kind == K_CTL) {
        int k = ctl_kind(c->type, (int)a[c->cmd_arg]);
        kgl_ipc_obj *o = k < 0 ? NULL : find_id(s, c->type, id);
        if (k < 0)
            v = k;
        else if (!o)
            v = -EINVAL;
        else if (k == C_RMID) {
            v = rmid_here(c->type, id) == 0 ? 0 : -errno;
            if (v == 0) drop(s, o);
        }
    } /* K_ADDR (shmdt): an address of the program's own, continued */
    set_resp(resp, v);
    return 0;
}

void kgl_ipc_remove_all(kgl_ipc_set *s)
{
    for (size_t i = 0; i < s->n; i++) (void)rmid_here(s->v[i].type, s->v[i].id);
    s->n = 0;
}

/* ---- what the kernel offers -------------------------------------------- */

/* SECCOMP_USER_NOTIF_FLAG_CONTINUE came in Linux 5.5, two releases after
 * the notification itself (5.0, which GET_ACTION_AVAIL answers for). */
static int kernel_at_least(int major, int minor)
{
    struct utsname u;
    int ma = 0, mi = 0;
    if (uname(&u) < 0) return 0;
    const char *p = u.release;
    while (*p >= '0' && *p <= '9') ma = ma * 10 + (*p++ - '0');
    if (*p++ != '.') return 0;
    while (*p >= '0' && *p <= '9') mi = mi * 10 + (*p++ - '0');
    return ma > major || (ma == major && mi >= minor);
}

int kgl_ipc_notify_available(void)
{
    uint32_t action = SECCOMP_RET_USER_NOTIF;
    if (NATIVE_ARCH == 0 || !kernel_at_least(5, 5)) return 0;
    return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/* ---- in the launch child ---------------------------------------------- */

static int load(const unsigned char *prog, size_t len, unsigned flags)
{
    struct sock_fprog fp = {
        .len = (unsigned short)(len / sizeof(struct sock_filter)),
        .filter = (struct sock_filter *)(uintptr_t)prog,
    };
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fp);
}

/* System calls only (kgl_spawn's prepare).  The listener goes to the
 * supervisor and is closed here: a program that held it could answer its
 * own calls.  EBUSY means a filter up the chain (the environment's)
 * already has a listener and the kernel allows one: refuse instead. */
int kgl_ipc_apply(int child_end, int notify)
{
    int rc = -1;
    if (notify == KGL_IPC_ROUTED) {
        /* The filesystem supervisor's filter notifies the native calls
         * and its supervisor holds child_end: only the refusals here. */
        rc = load(kgl_ipc_rest_program, sizeof kgl_ipc_rest_program, 0);
        if (child_end >= 0) close(child_end);
        return rc < 0 ? -1 : 0;
    }
    if (notify) {
        int lfd = load(kgl_ipc_program, sizeof kgl_ipc_program, SECCOMP_FILTER_FLAG_NEW_LISTENER);
        if (lfd >= 0) {
            rc = kgl_send_fd(child_end, lfd, 'L');
            int e = errno;
            close(lfd);
            close(child_end);
            errno = e;
            return rc;
        }
        if (errno != EBUSY) return -1;
    }
    rc = load(kgl_ipc_none_program, sizeof kgl_ipc_none_program, 0);
    if (child_end >= 0) close(child_end);
    return rc < 0 ? -1 : 0;
}

/* ---- the filesystem supervisor's side (kgl-unotify.c) ------------------ */

/* The listener with a byte saying who receives from it: 'L' the IPC
 * supervisor, 'R' the filesystem supervisor, which routes the IPC calls
 * to it. */
int kgl_ipc_route_listener(int sock, int listener) { return kgl_send_fd(sock, listener, 'R'); }

int kgl_ipc_route(int sock, const struct seccomp_notif *req)
{
    ssize_t n;
    while ((n = send(sock, req, sizeof *req, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
    return n == (ssize_t)sizeof *req ? 0 : -1;
}

/* ---- the supervisor ----------------------------------------------------- */

/* The listener from the launch child, or -1 once it closed the socket
 * without one (the refusing filter) or SIGTERM came first (*term);
 * *routed when the filesystem supervisor sent it and receives from it. */
static int receive_listener(int sock, int sfd, int *term, int *routed)
{
    struct pollfd p[2] = {{.fd = sock, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    while (poll(p, 2, -1) < 0)
        if (errno != EINTR) return -1;
    if (p[1].revents) {
        *term = 1;
        return -1;
    }
    char b = 0;
    int fd = kgl_recv_fd(sock, 0, &b);
    *routed = b == 'R';
    return fd;
}

/* One notification decided and answered.  A call that is not SysV IPC
 * (neither filter sends one) is refused.  Where the kernel does not know
 * CONTINUE, the call is refused rather than left hanging. */
static void answer(int lfd, kgl_ipc_set *set, const struct seccomp_notif *req)
{
    struct seccomp_notif_resp resp;
    if (kgl_ipc_answer(set, req, &resp) < 0) {
        memset(&resp, 0, sizeof resp);
        resp.id = req->id;
        resp.error = -EPERM;
    }
    if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno == EINVAL && resp.flags) {
        memset(&resp, 0, sizeof resp);
        resp.id = req->id;
        resp.error = -EPERM;
        (void)ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
}

/* One notification from fd: the listener itself, or (routed) the
 * filesystem supervisor's socket, which sends each IPC request it
 * received, as the kernel gave it.  -1 once that socket has ended. */
static int serve_one(int fd, int lfd, int routed, kgl_ipc_set *set)
{
    /* The kernel wants a zeroed buffer; its struct may be larger than
     * this header's in a later kernel, never smaller. */
    union {
        struct seccomp_notif n;
        unsigned char room[512];
    } req;
    memset(&req, 0, sizeof req);
    if (routed) {
        ssize_t n = recv(fd, &req, sizeof req, 0);
        if (n <= 0) return n < 0 && errno == EINTR ? 0 : -1;
        if (n != (ssize_t)sizeof req.n) return 0;
    } else if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
        return 0;
    }
    answer(lfd, set, &req.n);
    return 0;
}

/* Nothing of the user's power: no capabilities (root's CAP_IPC_OWNER
 * would open objects the program could not), no new privileges. */
static void drop_privileges(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    (void)syscall(SYS_capset, &h, d);
    (void)prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/* The supervisor's life: a fork of kgate that never execs, every signal
 * blocked (a Ctrl-C to kgate's process group must not end it), SIGTERM
 * read from a signalfd.  It serves until SIGTERM (the core's, at the end
 * of the run, or the parent-death signal), then removes the run's objects.
 * When the program is gone (the listener hangs up) it waits for SIGTERM
 * all the same: a helper that ends early ends the run. */
__attribute__((noreturn)) static void supervisor_main(int sock, pid_t kgate)
{
    static kgl_ipc_set set; /* 48 KiB: in this process's own pages */
    if (kgl_tie_to_parent(SIGTERM, kgate) < 0) _exit(0);
    /* Nothing of kgate's: a copy of the output pipe held here would keep
     * the relay waiting for an end of file. */
    int s2 = fcntl(sock, F_DUPFD_CLOEXEC, 3);
    if (s2 < 0 || dup2(s2, 3) < 0) _exit(1);
    for (int fd = 0; fd < 3; fd++) close(fd);
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 4U, ~0U, 0U) < 0)
#endif
        for (int fd = 4; fd < 4096; fd++) close(fd);
    sock = 3;
    drop_privileges();
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    int sfd = signalfd(-1, &term, SFD_CLOEXEC), stop = sfd < 0, routed = 0;
    int lfd = stop ? -1 : receive_listener(sock, sfd, &stop, &routed);
    if (!routed || lfd < 0) close(sock);
    int from = routed && lfd >= 0 ? sock : lfd; /* where requests come */
    while (!stop) {
        struct pollfd p[2] = {{.fd = sfd, .events = POLLIN}, {.fd = from, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (p[0].revents) break;
        if ((p[1].revents & POLLIN) && serve_one(from, lfd, routed, &set) == 0) continue;
        if (p[1].revents) {
            /* Every task of the filter is gone, or (routed) the
             * filesystem supervisor: its end closes the listener. */
            if (routed) close(from);
            close(lfd);
            from = lfd = -1;
        }
    }
    if (lfd >= 0) close(lfd);
    if (routed && from >= 0) close(from);
    kgl_ipc_remove_all(&set);
    _exit(0);
}

int kgl_ipc_start(kgl_ipc *s, kgate_err *err)
{
    int sv[2];
    s->pid = -1;
    s->child_end = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return kgate_err_set(err, errno, "cannot start the SysV IPC supervisor: %s",
                             strerror(errno));
    pid_t self = getpid();
    pid_t pid = kgl_fork_blocked();
    int e = errno;
    if (pid == 0) {
        close(sv[1]);
        supervisor_main(sv[0], self);
    }
    close(sv[0]);
    if (pid < 0) {
        close(sv[1]);
        return kgate_err_set(err, e, "cannot start the SysV IPC supervisor: %s", strerror(e));
    }
    /* >= 10: clear of the stdio numbers the launch child fills. */
    s->child_end = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    e = errno;
    close(sv[1]);
    s->pid = pid;
    if (s->child_end < 0) {
        kgl_ipc_stop(s);
        return kgate_err_set(err, e, "cannot start the SysV IPC supervisor: %s", strerror(e));
    }
    return 0;
}

void kgl_ipc_release(kgl_ipc *s)
{
    if (s->child_end >= 0) close(s->child_end);
    s->child_end = -1;
}

void kgl_ipc_stop(kgl_ipc *s)
{
    kgl_ipc_release(s);
    if (s->pid <= 0) return;
    kill(s->pid, SIGTERM);
    while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR) {}
    s->pid = -1;
}
