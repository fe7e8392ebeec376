/* kgl-launch.c: the parts of a bwrap launch every Linux backend shares.
 *
 * The setup gate.  bwrap's info (--info-fd) is written before the mounts
 * are made, so it cannot say whether they worked.  --block-fd is read
 * after the last mount and the final pivot_root (measured with strace,
 * bwrap 0.8.0), just before the program is started.  The gate makes that
 * read visible: the block fd is a SOCK_SEQPACKET socket with a tiny send
 * buffer, and one record queued on it keeps our end unwritable until bwrap
 * consumes it.  Our end turning writable means setup is done; bwrap
 * exiting first means it failed (its message is on the program's stderr).
 *
 * The spawn helper.  One failure protocol for the launch child: every
 * step before the exec that fails (joining a process group, stdio, the
 * descriptors bwrap is given, the directory, the exec itself) writes its
 * step and errno to a close-on-exec pipe and _exits; the parent reads that
 * pipe to EOF, and a report becomes a kgate_err, so the core refuses the
 * launch with one `kgate:` line and exit 125.  EOF with no report means the
 * exec happened: from then on the status is the program's own. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kgate/kgate-linux.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* The setup gate                                                            */
/* ------------------------------------------------------------------------ */

#define GATE_REC_MAX 2048

int kgl_gate_open(kgl_gate *g)
{
    int sv[2], tiny = 1, sndbuf = 0;
    socklen_t len = sizeof sndbuf;
    char rec[GATE_REC_MAX];
    g->ours = g->theirs = -1;
    g->reclen = 0;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return -1;
    memset(rec, 'k', sizeof rec);
    /* The kernel raises this to its minimum (a few KiB); a 2 KiB record
     * then holds more than a quarter of it, which is when a unix socket
     * stops being writable. */
    size_t n = sizeof rec;
    if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &tiny, sizeof tiny) < 0 ||
        getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) < 0)
        goto no;
    if ((size_t)sndbuf < n + 64) n = sndbuf > 128 ? (size_t)sndbuf - 64 : 64;
    struct pollfd p = {.fd = sv[0], .events = POLLOUT};
    if (send(sv[0], rec, n, MSG_DONTWAIT) != (ssize_t)n) goto no;
    if (poll(&p, 1, 0) != 0) goto no; /* writable already: no gate */
    /* Taken back: the record goes in only once the guard knows the
     * sandbox's pid 1 (kgl_gate_arm), so bwrap's pid 1 waits at the block
     * fd, still in the guard's process group, until then. */
    if (recv(sv[1], rec, sizeof rec, MSG_DONTWAIT) != (ssize_t)n) goto no;
    /* >= 10: clear of the 0, 1, 2 the launch child is about to fill. */
    int theirs = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    close(sv[1]);
    if (theirs < 0) {
        close(sv[0]);
        return -1;
    }
    g->ours = sv[0];
    g->theirs = theirs;
    g->reclen = n;
    return 0;
no:
    close(sv[0]);
    close(sv[1]);
    return -1;
}

int kgl_gate_arm(kgl_gate *g)
{
    char rec[GATE_REC_MAX];
    memset(rec, 'k', sizeof rec);
    return send(g->ours, rec, g->reclen, MSG_DONTWAIT) == (ssize_t)g->reclen ? 0 : -1;
}

/* The record was read: our end is writable, and only writable.  A peer
 * that is gone (POLLHUP) had its queue purged unread, which also makes our
 * end writable: that is a failure, not a read, so POLLOUT must come alone
 * (the two copies this replaced disagreed here; `& POLLOUT` would have
 * called a vanished bwrap done).  Callers keep theirs open until the gate
 * is decided, so a bwrap that exits does not hang the socket up. */
static int gate_read(int ours)
{
    struct pollfd p = {.fd = ours, .events = POLLOUT};
    return poll(&p, 1, 0) == 1 && p.revents == POLLOUT;
}

int kgl_gate_wait(const kgl_gate *g, pid_t pid)
{
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) {
        /* No pidfd (a kernel before 5.3, or valgrind): the same question,
         * asked every 10 ms.  WNOWAIT leaves pid for the caller to reap. */
        for (;;) {
            struct pollfd p = {.fd = g->ours, .events = POLLOUT};
            int r = poll(&p, 1, 10);
            if (r < 0 && errno != EINTR) return KGL_GATE_UNKNOWN;
            if (r == 1) return gate_read(g->ours) ? KGL_GATE_DONE : KGL_GATE_FAILED;
            siginfo_t si;
            memset(&si, 0, sizeof si);
            if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
                if (errno == EINTR) continue;
                return KGL_GATE_UNKNOWN;
            }
            /* It read the record before it could exit, if it did. */
            if (si.si_pid == pid) return gate_read(g->ours) ? KGL_GATE_DONE : KGL_GATE_FAILED;
        }
    }
    struct pollfd p[2] = {{.fd = g->ours, .events = POLLOUT}, {.fd = pidfd, .events = POLLIN}};
    /* A poll that fails says nothing about bwrap: "cannot tell", and the
     * caller kills the sandbox rather than guess. */
    while (poll(p, 2, -1) < 0)
        if (errno != EINTR) {
            int e = errno;
            close(pidfd);
            errno = e;
            return KGL_GATE_UNKNOWN;
        }
    close(pidfd);
    /* The read happens before any exit, so a program that already ended
     * still shows as a consumed record. */
    return gate_read(g->ours) ? KGL_GATE_DONE : KGL_GATE_FAILED;
}

void kgl_gate_close(kgl_gate *g)
{
    if (g->ours >= 0) close(g->ours);
    if (g->theirs >= 0) close(g->theirs);
    g->ours = g->theirs = -1;
}

pid_t kgl_info_child_pid(const char *json)
{
    const char *k = json ? strstr(json, "\"child-pid\"") : NULL;
    if (!k || !(k = strchr(k, ':'))) return 0;
    char *end;
    long v = strtol(k + 1, &end, 10);
    return end != k + 1 && v > 1 ? (pid_t)v : 0;
}

/* ------------------------------------------------------------------------ */
/* The spawn helper                                                          */
/* ------------------------------------------------------------------------ */

const char *kgl_step_name(int step)
{
    switch (step) {
    case KGL_STEP_PARENT: return "stay a child of kgate for";
    case KGL_STEP_GROUP: return "join the guard's process group for";
    case KGL_STEP_PREPARE: return "prepare";
    case KGL_STEP_STDIO: return "set up stdio for";
    case KGL_STEP_FD: return "pass descriptors to";
    case KGL_STEP_CHDIR: return "enter the project";
    case KGL_STEP_EXEC: return "execute";
    default: return "start";
    }
}

const unsigned long long *kgl_launch_ignored(const kgate_launch *io)
{
    if (!io || !KGATE_HAS_FIELD(io, kgate_launch, sig_ignored_at_start)) return NULL;
    return io->sig_ignored_at_start;
}

/* The set kgate started with, not the one it has now: the core catches
 * SIGCHLD, SIGWINCH, SIGTTIN and others with handlers whatever the caller
 * gave it, and a signal ignored at the start must come back ignored (a
 * handler is reset to the default by execve, SIG_IGN is not). */
void kgl_child_signals_from(const unsigned long long *ignored)
{
    if (!ignored) {
        kgl_child_signals();
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    for (int s = 1; s < NSIG && s <= 128; s++) {
        int ign = (int)((ignored[(s - 1) / 64] >> ((s - 1) % 64)) & 1ULL);
        sa.sa_handler = ign ? SIG_IGN : SIG_DFL;
        sigaction(s, &sa, NULL); /* SIGKILL, SIGSTOP: EINVAL, nothing to do */
    }
}

void kgl_child_signals(void)
{
    struct sigaction dfl, cur;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    /* Handlers the core installed must not run in the child (every signal
     * is blocked until the exec, which resets them anyway).  An ignored
     * signal stays ignored, as execve leaves it: the core ignores nothing
     * itself, so that is one kgate's caller ignored, and the program
     * would have inherited it without kgate. */
    for (int s = 1; s < NSIG; s++)
        if (sigaction(s, NULL, &cur) == 0 && cur.sa_handler != SIG_IGN) sigaction(s, &dfl, NULL);
}

/* Only async-signal-safe calls from the fork to execve: the core may have
 * threads (the output relay) and the heap may be in any state. */
static _Noreturn void child(const kgl_spawn *s, const int hi[3], int report_w, pid_t parent)
{
    int report[2] = {0, 0};
    kgl_child_signals_from(s->ignored);
    if (s->pdeathsig) {
        /* Kept across execve (bwrap is not set-user-ID).  A parent that
         * died before this line is caught by the check after it. */
        if (kgl_tie_to_parent(SIGKILL, parent) < 0) {
            report[0] = KGL_STEP_PARENT;
            goto fail;
        }
    }
    if ((s->group > 0 || s->new_group) && setpgid(0, s->new_group ? 0 : s->group) < 0) {
        report[0] = KGL_STEP_GROUP;
        goto fail;
    }
    if (s->prepare && s->prepare(s->ctx) < 0) {
        report[0] = KGL_STEP_PREPARE;
        goto fail;
    }
    /* hi[] are >= 10, so these never overwrite one another. */
    for (int i = 0; i < 3; i++)
        if (hi[i] >= 0 && dup2(hi[i], i) < 0) {
            report[0] = KGL_STEP_STDIO;
            goto fail;
        }
    /* Only now, right before the exec: whatever prepare forked must not
     * inherit these. */
    for (size_t i = 0; i < s->n_pass; i++)
        if (s->pass[i] >= 0 && fcntl(s->pass[i], F_SETFD, 0) < 0) {
            report[0] = KGL_STEP_FD;
            goto fail;
        }
    if (s->dir && chdir(s->dir) < 0) {
        report[0] = KGL_STEP_CHDIR;
        goto fail;
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(s->path, s->argv, s->envp);
    report[0] = KGL_STEP_EXEC;
fail:
    report[1] = errno;
    /* A parent that gave up reads nothing; the status is then all it has,
     * and it is not the program's (that never ran). */
    if (write(report_w, report, sizeof report) < 0) _exit(125);
    _exit(125);
}

/* The child's arguments when it shares kgate's memory (kgl_vfork_blocked). */
typedef struct shared_child {
    const kgl_spawn *s;
    const int *hi;
    int report_w, report_r;
    pid_t parent;
} shared_child;

static int shared_child_main(void *arg)
{
    const shared_child *a = arg;
    close(a->report_r);
    child(a->s, a->hi, a->report_w, a->parent);
}

/* Without a prepare, the child makes only system calls on what is its
 * own until it execs, so it shares kgate's memory instead of copying it
 * (kgl_vfork_blocked): about 5 ms of a 41 ms launch on a 2-vCPU VM
 * (docs/performance.md).  Address-sanitized builds fork instead: the
 * sanitizer's bookkeeping of the child's stack frames would be written
 * into kgate's. */
#if defined(__SANITIZE_ADDRESS__)
#define KGL_SPAWN_SHARED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KGL_SPAWN_SHARED 0
#endif
#endif
#ifndef KGL_SPAWN_SHARED
#define KGL_SPAWN_SHARED 1
#endif

int kgl_spawn_start(const kgl_spawn *s, kgl_child *c, kgate_err *err)
{
    int hi[3] = {-1, -1, -1}, rep[2] = {-1, -1};
    c->pid = -1;
    c->report = -1;
    if (!s->path || s->path[0] != '/' || !s->argv)
        return kgate_err_set(err, EINVAL, "spawn: no absolute path to execute");
    /* Numbers >= 10 stay clear of the 0, 1, 2 the child is about to fill,
     * even when the core runs with one of those closed. */
    for (int i = 0; i < 3; i++)
        if (s->stdio[i] >= 0 && (hi[i] = fcntl(s->stdio[i], F_DUPFD_CLOEXEC, 10)) < 0)
            goto sys_fail;
    if (pipe2(rep, O_CLOEXEC) < 0) goto sys_fail;

    pid_t self = getpid();
    pid_t pid = -1;
    if (KGL_SPAWN_SHARED && !s->prepare) {
        shared_child a = {.s = s, .hi = hi, .report_w = rep[1], .report_r = rep[0], .parent = self};
        pid = kgl_vfork_blocked(shared_child_main, &a);
    } else {
        pid = kgl_fork_blocked();
        if (pid == 0) {
            close(rep[0]);
            child(s, hi, rep[1], self);
        }
    }
    int fork_errno = errno;
    kgl_closep(&rep[1]);
    for (int i = 0; i < 3; i++) kgl_closep(&hi[i]);
    if (pid < 0) {
        kgl_closep(&rep[0]);
        errno = fork_errno;
        goto sys_fail;
    }
    c->pid = pid;
    c->report = rep[0];
    return 0;

sys_fail:;
    int e = errno;
    for (int i = 0; i < 3; i++) kgl_closep(&hi[i]);
    kgl_closep(&rep[0]);
    kgl_closep(&rep[1]);
    return kgate_err_set(err, e, "cannot start %s: %s", s->path ? s->path : "?", strerror(e));
}

int kgl_spawn_finish(const kgl_spawn *s, kgl_child *c, kgate_err *err)
{
    int report[2];
    size_t got = 0;
    while (got < sizeof report) {
        ssize_t r = read(c->report, (char *)report + got, sizeof report - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    kgl_closep(&c->report);
    if (got == 0) return 0; /* EOF: the exec happened */
    kgl_reap(c->pid);
    c->pid = -1;
    if (got != sizeof report)
        return kgate_err_set(err, EIO, "could not start %s: its report was cut short", s->path);
    const char *what = report[0] == KGL_STEP_CHDIR ? s->dir : s->path;
    if (report[0] == KGL_STEP_PREPARE && s->prepare_name) {
        return kgate_err_set(err, report[1], "could not %s for %s: %s", s->prepare_name, s->path,
                             strerror(report[1]));
    }
    return kgate_err_set(err, report[1], "could not %s %s: %s", kgl_step_name(report[0]),
                         what ? what : "?", strerror(report[1]));
}

void kgl_spawn_abandon(kgl_child *c)
{
    kgl_closep(&c->report);
    if (c->pid > 0) {
        kill(c->pid, SIGKILL);
        kgl_reap(c->pid);
    }
    c->pid = -1;
}

pid_t kgl_spawn_run(const kgl_spawn *s, kgate_err *err)
{
    kgl_child c;
    if (kgl_spawn_start(s, &c, err) < 0) return -1;
    if (kgl_spawn_finish(s, &c, err) < 0) return -1;
    return c.pid;
}
