/* kgate-linux.h: the SDK's Linux support library, libkgate-linux.a, for
 * every Linux backend (in this tree or out of it) that launches bwrap.
 *
 * What each such backend needs and must not write again: the seccomp
 * filter (one rule table; its BPF program compiled at build time and
 * embedded), bind sources passed as descriptors and every mount checked
 * inside the sandbox before the program starts, the guard that kills the
 * sandbox when kgate dies, the setup gate, bwrap's info, and one way to
 * spawn a child that reports its failures (kgl-launch.c).  Link it with
 * pkg-config:
 *     CFLAGS += $(pkg-config --cflags kgate-linux)
 *     LDLIBS += $(pkg-config --libs kgate-linux)
 * The library is static, PIC and built with hidden visibility: its symbols
 * (prefix kgl_) land in the plugin and are not exported from it, so a
 * module still exports kgate_plugin_entry alone.
 *
 * Plugins never include or link each other; what two backends share lives
 * here (tests/unit/plugin_isolation.py checks the tree). */
#ifndef KGATE_LINUX_H
#define KGATE_LINUX_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "kgate/kgate-plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The seccomp filter (sdk/linux/kgl-seccomp.c).  One rule table, two
 * outputs: the text --dry-run shows (pure; malloc'd, NULL when memory runs
 * out) and the BPF program launch passes to bwrap (a memfd >= 10,
 * close-on-exec, at offset 0; -1 with err when the memfd cannot be
 * made: launch then fails closed).  The program itself was compiled
 * from the table at build time (sdk/linux/kgl-seccomp-gen.c). */
size_t kgl_seccomp_rule_count(void);
const char *kgl_seccomp_groups(void);
char *kgl_seccomp_describe(void);
int kgl_seccomp_fd(kgate_err *err);
/* The same program through a pipe, for a launch that wants bwrap to wait:
 * bwrap reads it after its last mount and before it starts the program, so
 * until the write end is written and closed the sandbox is set up and
 * empty (kgl-pin.c).  Returns the read end (>= 10, close-on-exec) and
 * *write_end; -1 with err. */
int kgl_seccomp_pipe(int *write_end, kgate_err *err);
int kgl_seccomp_send(int write_end, kgate_err *err);
#define KGL_SECCOMP_LABEL "seccomp filter"
/* For a box that loads the filter in its own launch child (no bwrap):
 * installs the program in the calling process, 0 or -1 with errno.  One
 * system call, so it may run in kgl_spawn's prepare; no_new_privs must be
 * set first.  The nonet variant is a second, small program for `network:
 * off` in a box without a network namespace (Landlock): every socket but
 * AF_UNIX refused with EAFNOSUPPORT, and io_uring refused.  Its text for
 * --dry-run: kgl_seccomp_nonet_describe (malloc'd). */
int kgl_seccomp_apply(void);
int kgl_seccomp_nonet_apply(void);
/* The same for a box whose network supervisor (kgate-unotify.h) makes
 * every bind, listen, connect and send: IPv4 sockets are made too, so
 * that the program's own servers on loopback work. */
int kgl_seccomp_nonet_lo_apply(void);
size_t kgl_seccomp_nonet_rule_count(void);
char *kgl_seccomp_nonet_describe(void);
#define KGL_SECCOMP_NONET_LABEL "seccomp filter (network off)"

/* SysV IPC for a box without an IPC namespace (kgl-ipc.c): the program
 * reaches only the shared memory, queues and semaphore sets of its own
 * run, as in bubblewrap's IPC namespace, or none.
 * notify_available: 1 when this kernel has seccomp user notification with
 * continue (Linux 5.5), so a supervisor can give the run objects of its
 * own; 0: the box refuses every SysV IPC call instead (EPERM).
 * start forks the supervisor (a helper: list its pid, whose SIGTERM at the
 * end of the run removes the run's objects) and gives child_end (>= 10,
 * close-on-exec) for the launch child, which calls apply in its prepare
 * after no_new_privs (system calls only): it loads the filter and hands
 * the listener to the supervisor, or with notify 0 loads the refusing
 * filter.  release closes kgate's copy of child_end once the child is
 * started; stop ends a supervisor whose launch failed.  describe is the
 * filter's text for --dry-run (malloc'd).
 * With the filesystem supervisor (kgate-unotify.h), whose filter must be
 * the process's one listener: give it child_end (kgl_un_policy.ipc) and
 * call apply (and describe) with KGL_IPC_ROUTED after kgl_un_install; the supervisor
 * passes the SysV IPC calls on, and apply loads only the refusals (POSIX
 * queues, 32-bit entries). */
#define KGL_IPC_ROUTED 2
typedef struct kgl_ipc {
    pid_t pid;
    int child_end;
} kgl_ipc;
int kgl_ipc_notify_available(void);
int kgl_ipc_start(kgl_ipc *s, kgate_err *err);
int kgl_ipc_apply(int child_end, int notify);
void kgl_ipc_release(kgl_ipc *s);
void kgl_ipc_stop(kgl_ipc *s);
char *kgl_ipc_describe(int notify);
#define KGL_IPC_LABEL "seccomp filter (SysV IPC)"

/* Whether this process may create a user namespace: a forked child tries
 * unshare(CLONE_NEWUSER) and exits (no exec, about a millisecond).  1 yes,
 * 0 no (a container's seccomp profile, bwrap --disable-userns, a sysctl,
 * AppArmor), -1 when the child could not be started.  What bwrap needs
 * first; a box without namespaces (Landlock) scores itself by it. */
int kgl_userns_trial(void);

/* fork(2) with every signal blocked across it (kgl-fork.c), so that no
 * handler of the caller's runs in the child: the child gets 0 and keeps
 * every signal blocked until it sets its own mask (or execs, or exits);
 * the parent gets the pid, or -1 with fork's errno, and its mask as it
 * was.  The guard, the IPC supervisor, the launch and the user-namespace
 * trial all fork this way. */
pid_t kgl_fork_blocked(void);

/* The same, for a child that only makes system calls on what is its own
 * (its descriptors, directory and signal dispositions) and then execs:
 * fn(arg) runs sharing the caller's memory, on a stack of its own, as
 * glibc's posix_spawn does, so nothing of the caller is copied (a fork
 * copies its page tables, which the exec then tears down).  The caller
 * waits until the child execs or _exits; fn must do one of the two and
 * never return, and the child's errno is the caller's.  The child's pid,
 * or -1 with errno.  The launch child without a prepare starts this way
 * (kgl-launch.c). */
pid_t kgl_vfork_blocked(int (*fn)(void *), void *arg);

/* In a child just started: it gets sig when its parent ends
 * (PR_SET_PDEATHSIG; the parent's pid before the fork is parent).  0
 * while parent is still its parent; -1 with errno ESRCH when parent ended
 * before the prctl, whose signal then never comes, or -1 with prctl's
 * errno.  Each caller decides what a child that is already an orphan does
 * (end, clean up at once, report the launch failed).  Async-signal-safe:
 * two system calls. */
int kgl_tie_to_parent(int sig, pid_t parent);

/* Ends the calling process the way a child of its ended (status as
 * waitpid gave it): a signal death as that same signal, with core dumps
 * off (the program dumped, if it did), an exit as that code, anything
 * else 125.  For a process that stands between the core and the program
 * (the filesystem supervisor, the Landlock box's reaper), so that the core
 * reads the program's status from the process it started.  Never returns. */
__attribute__((noreturn)) void kgl_end_like(int status);

/* Mount sources as descriptors, destinations checked (kgl-pin.c): every
 * backend that execs bwrap does this at launch. */
typedef enum {
    KGL_CHECK_NONE, /* a mount of the floor: not checked, but it hides */
    KGL_CHECK_OBJECT, /* the object opened for a --bind-fd/--ro-bind-fd */
    KGL_CHECK_DEVNULL, /* the deny_read cover of a file */
    KGL_CHECK_TMPFS, /* an empty tmpfs */
} kgl_check_kind;

typedef struct kgl_check {
    const char *dest; /* as in the plan's argv */
    kgl_check_kind kind;
    int ro; /* must be read-only */
    int hidden; /* a later mount covers it: nothing to check */
    dev_t dev;
    ino_t ino;
} kgl_check;

typedef struct kgl_pins {
    const char **argv; /* the plan's argv, binds as descriptors; NULL-ended */
    size_t argc;
    int *fds; /* close-on-exec here; the launch child clears the flag */
    size_t n_fds;
    char **num; /* the descriptor numbers as text, owned */
    size_t n_num;
    kgl_check *checks;
    size_t n_checks;
} kgl_pins;

/* Opens every bind source of pargv (except / and /dev/null) without
 * following any symlink, and fills p with the argv that passes them as
 * descriptors and the checks to make once bwrap has mounted.  -1 with err
 * (p then holds nothing) when a source cannot be opened that way. */
int kgl_pins_open(const char *const *pargv, size_t argc, kgl_pins *p, kgate_err *err);
/* Checks inside the sandbox whose setup process is sandbox (bwrap's
 * child-pid, after its chroot).  -1 with err naming the first mount that
 * is not what was planned. */
int kgl_pins_verify(const kgl_pins *p, pid_t sandbox, kgate_err *err);
void kgl_pins_free(kgl_pins *p);

/* The guard (kgl-guard.c): a child of kgate that SIGKILLs the sandbox
 * when kgate dies, at any moment of the launch.  start forks it (pid, a
 * process group of its own that the outer bwrap must join with
 * setpgid(0, pid) before its exec); tell hands it the sandbox's pid 1 from
 * bwrap's info; the backend then lists pid among its helpers, whose
 * SIGTERM at the end of the run makes the guard kill what is left and
 * exit.  When it acts and the sandbox is still alive, it kills the
 * sandbox's process group as well (a box without a PID namespace runs its
 * program as a session leader).  stop ends it (and its group) on a launch
 * that failed.  hold (or
 * -1) is a descriptor the guard keeps open for its life: kgate's end of
 * bwrap's setup gate. */
typedef struct kgl_guard {
    pid_t pid;
    int wfd;
} kgl_guard;
int kgl_guard_start(kgl_guard *g, int hold, kgate_err *err);
void kgl_guard_tell(kgl_guard *g, pid_t sandbox);
void kgl_guard_stop(kgl_guard *g);

/* The setup gate (kgl-launch.c): says when bwrap has made its last mount.
 * bwrap reads --block-fd after its final pivot_root, just before the
 * program; theirs is that fd (>= 10, close-on-exec: the launch child
 * passes it), ours is kgate's end.  open: 0, or -1 where this kernel's
 * sockets do not behave as the gate needs (launch then refuses: without
 * the gate the mounts cannot be checked).  arm queues the record bwrap's
 * pid 1 waits for (after kgl_guard_tell).  wait answers DONE only once
 * bwrap consumed the record, FAILED when pid (the outer bwrap, or the
 * process that execs it) ended first, UNKNOWN when it cannot tell (poll
 * failed; errno says why).  Keep theirs open until wait returns: while
 * kgate holds the peer, a bwrap that dies does not purge the record, which
 * would look like a read.  The guard holds ours too (kgl_guard_start). */
typedef struct kgl_gate {
    int ours;
    int theirs;
    size_t reclen;
} kgl_gate;
enum { KGL_GATE_UNKNOWN = -1, KGL_GATE_FAILED = 0, KGL_GATE_DONE = 1 };
int kgl_gate_open(kgl_gate *g);
int kgl_gate_arm(kgl_gate *g);
int kgl_gate_wait(const kgl_gate *g, pid_t pid);
void kgl_gate_close(kgl_gate *g);

/* The number after "child-pid" in bwrap's --info-fd JSON (the sandbox's
 * pid 1), or 0 when there is none: bwrap failed before its namespaces. */
pid_t kgl_info_child_pid(const char *json);

/* The spawn helper (kgl-launch.c), one failure protocol for every launch
 * child: a step before the exec that fails is reported (step, errno)
 * through a close-on-exec pipe and the child _exits; the parent turns the
 * report into err ("could not <step> <path>: <why>"), so the core refuses
 * with one `kgate:` line and exit 125.  No report means the exec
 * happened: the status is then the program's own.
 *
 * The child, with every signal blocked from the fork: handlers reset to
 * the default (ignored ones stay ignored), then in this order the parent
 * death signal, the process group, prepare, stdio, the passed fds, the
 * directory, the signal mask emptied, execve. */
enum {
    KGL_STEP_PARENT = 1, /* kgate died before the child could watch it */
    KGL_STEP_GROUP, /* setpgid */
    KGL_STEP_PREPARE, /* the caller's prepare returned -1 */
    KGL_STEP_STDIO, /* dup2 onto 0, 1, 2 */
    KGL_STEP_FD, /* clearing close-on-exec on pass[] */
    KGL_STEP_CHDIR, /* dir */
    KGL_STEP_EXEC, /* execve */
};
typedef struct kgl_spawn {
    const char *path; /* absolute; execve's, no PATH search */
    char *const *argv; /* NULL-terminated */
    char *const *envp;
    int stdio[3]; /* become 0, 1, 2 (-1: left as they are) */
    const int *pass; /* close-on-exec cleared just before the exec */
    size_t n_pass;
    const char *dir; /* chdir here (NULL: stay) */
    pid_t group; /* > 0: setpgid(0, group), e.g. the guard's */
    int new_group; /* instead: a process group of its own */
    int pdeathsig; /* SIGKILL when kgate dies, checked right away */
    /* Run in the child after the group, before stdio: may do anything the
     * child is allowed to (async-signal-safe unless the caller knows
     * better).  -1 with errno: reported as prepare_name ("prepare"). */
    int (*prepare)(void *ctx);
    void *ctx;
    const char *prepare_name;
    /* The dispositions the child execs with: exactly these signals
     * ignored, every other at its default (kgate_launch's
     * sig_ignored_at_start; kgl_launch_ignored gives it).  NULL: what is
     * ignored in kgate now stays ignored, the rest is reset. */
    const unsigned long long *ignored;
} kgl_spawn;
typedef struct kgl_child {
    pid_t pid; /* -1 once reaped by finish */
    int report; /* the pipe's read end, -1 once read */
} kgl_child;
/* start forks (0, or -1 with err); finish reads the report to EOF: 0 when
 * the exec happened, -1 with err (the child reaped) when a step failed.
 * Between the two the caller may talk to prepare.  abandon kills and reaps
 * a child that finish will not be called for.  kgl_spawn_run does start and
 * finish at once: the pid, or -1 with err. */
int kgl_spawn_start(const kgl_spawn *s, kgl_child *c, kgate_err *err);
int kgl_spawn_finish(const kgl_spawn *s, kgl_child *c, kgate_err *err);
void kgl_spawn_abandon(kgl_child *c);
pid_t kgl_spawn_run(const kgl_spawn *s, kgate_err *err);
/* The phrase for a step ("enter the project"), and the signal reset the
 * child does first, for a child a backend forks itself. */
const char *kgl_step_name(int step);
void kgl_child_signals(void);
/* kgl_child_signals with the set kgate started with (see kgl_spawn's
 * ignored); NULL is kgl_child_signals.  Async-signal-safe. */
void kgl_child_signals_from(const unsigned long long *ignored);
/* io's sig_ignored_at_start, or NULL from a core that does not fill it. */
const unsigned long long *kgl_launch_ignored(const kgate_launch *io);

/* One start of bwrap (kgl-bwrap.c), for every backend that execs it: the
 * bubblewrap box, and the slirp-filter stage from its network helper.
 * From a plan's argv to the program let go:
 *   open      bwrap's info pipe (--info-fd), the bind sources as
 *             descriptors (kgl_pins_open), the seccomp filter as a pipe
 *             bwrap waits on (--seccomp), the setup gate (--block-fd), and
 *             bwrap's argv with those in front of the plan's options;
 *   spawn     the guard, then the launch child in the guard's group
 *             (kgl_spawn_start, with the caller's prepare if any);
 *   exec_wait the child's report: the exec happened (kgl_spawn_finish);
 *   await     bwrap's info (the sandbox's pid 1, told to the guard), the
 *             gate armed and waited for: bwrap is past its last mount;
 *   let_run   the mounts checked (kgl_pins_verify), the audit's launch
 *             line committed (kgate_launch_commit), the filter sent: the
 *             program starts.  proc gets pid and signal_pid, and the guard
 *             is appended to its helpers (after any the caller put there);
 *             on failure proc is left as it was (the core ends every
 *             helper it lists, so list none that release will end).
 * start runs the five in order.  Each returns 0, or -1 with err; after a
 * failure release kills what was started (the sandbox's pid 1, the
 * launch child, the guard) and closes the rest, so a caller calls release
 * once whatever happened (kgl_autobwrap does it at the end of the scope).
 * After let_run, release only closes kgate's copies: the processes are
 * the core's.  A caller fills the inputs and leaves the state as
 * KGL_BWRAP_INIT set it. */
typedef struct kgl_bwrap {
    /* Inputs. */
    const char *path; /* bwrap, absolute: what is exec'd */
    const char *const *pargv; /* the plan's argv; pargv[0] stays argv[0] */
    size_t argc;
    const kgate_launch *io; /* envp, stdio, commit */
    const char *dir; /* the project: bwrap starts there */
    int (*prepare)(void *ctx); /* kgl_spawn's, or NULL */
    void *ctx;
    const char *prepare_name;
    long info_wait_ms; /* a bound on bwrap's info (0: until bwrap closes it) */
    /* State: -1 (or 0, empty) where not open. */
    int info_r, info_w;
    int filter, filter_w;
    kgl_gate gate;
    kgl_pins pins;
    kgl_guard guard;
    char infonum[16], blocknum[16], filternum[16];
    char **argv;
    int *pass;
    size_t n_pass;
    kgl_spawn spawn;
    kgl_child child; /* the launch child: bwrap once exec'd */
    pid_t sandbox; /* bwrap's pid 1, 0 until its info names it */
} kgl_bwrap;
/* Every descriptor -1, every pid -1 or 0: nothing to release. */
#define KGL_BWRAP_UNSET_GATE                  \
    {                                         \
        .ours = -1, .theirs = -1, .reclen = 0 \
    }
#define KGL_BWRAP_UNSET_GUARD \
    {                         \
        .pid = -1, .wfd = -1  \
    }
#define KGL_BWRAP_UNSET_CHILD   \
    {                           \
        .pid = -1, .report = -1 \
    }
#define KGL_BWRAP_INIT                                                                          \
    {                                                                                           \
        .info_r = -1, .info_w = -1, .filter = -1, .filter_w = -1, .gate = KGL_BWRAP_UNSET_GATE, \
        .guard = KGL_BWRAP_UNSET_GUARD, .child = KGL_BWRAP_UNSET_CHILD, .sandbox = 0            \
    }
int kgl_bwrap_open(kgl_bwrap *b, kgate_err *err);
int kgl_bwrap_spawn(kgl_bwrap *b, kgate_err *err);
int kgl_bwrap_exec_wait(kgl_bwrap *b, kgate_err *err);
int kgl_bwrap_await(kgl_bwrap *b, kgate_err *err);
int kgl_bwrap_let_run(kgl_bwrap *b, kgate_proc *proc, kgate_err *err);
int kgl_bwrap_start(kgl_bwrap *b, kgate_proc *proc, kgate_err *err);
void kgl_bwrap_release(kgl_bwrap *b);

/* Small helpers (kgl-io.c), async-signal-safe but kgl_now_ms.
 * kgl_reap waits for pid through EINTR and returns its wait status (-1 on
 * an error); kgl_kill_reap SIGKILLs pid (when > 0) and reaps it;
 * kgl_now_ms is CLOCK_MONOTONIC in milliseconds; kgl_write_all writes all
 * n bytes through EINTR and short writes (0, or -1 with errno). */
int kgl_reap(pid_t pid);
/* One descriptor over a Unix socket, with one byte that says what it is
 * (SCM_RIGHTS), through EINTR; what each helper hands another (the
 * listeners to the supervisors, the reaper's pidfd to the cleaner).
 * kgl_send_fd: 0, or -1 with errno.  kgl_recv_fd: recvmsg with flags
 * (MSG_CMSG_CLOEXEC always added); the descriptor, its byte in *byte
 * when byte is not NULL, or -1 when no byte or no single descriptor came. */
int kgl_send_fd(int sock, int fd, char byte);
int kgl_recv_fd(int sock, int flags, char *byte);
void kgl_kill_reap(pid_t pid);
long kgl_now_ms(void);
int kgl_write_all(int fd, const void *buf, size_t n);

/* kgl_read_to_eof reads fd into buf until EOF, or until wait_ms have
 * passed (0: no bound): the bytes kept, or -1 on a timeout (errno
 * ETIMEDOUT) or an error.  buf (n >= 1) stays NUL-terminated as it fills,
 * so what came before a timeout can still be read.  The mode says what
 * more than buf holds means:
 *   KGL_READ_FILL   a full buf ends the read there, without waiting for the
 *                   EOF (a report of known size); a read error is -1.
 *   KGL_READ_DRAIN  the rest is read and dropped up to the EOF, so the
 *                   writer never blocks on a full pipe and the EOF is
 *                   seen (a peer's message, whose end says the peer is
 *                   done); a read error ends the read as the EOF does,
 *                   keeping what came: a socket peer that closed with
 *                   bytes of ours unread reads as ECONNRESET after its
 *                   last bytes. */
enum { KGL_READ_FILL = 0, KGL_READ_DRAIN = 1 };
ssize_t kgl_read_to_eof(int fd, char *buf, size_t n, long wait_ms, int mode);

/* dnsmasq configuration lines that share one directive and target
 * ("server=/a/b/c/10.0.2.3"): dnsmasq's start costs per line more than per
 * name (measured, 2.90, 9,000 names: server= 27 ms of CPU one a line, 19 ms
 * in 160 lines), and it reads a line into 1025 bytes (1024 characters
 * pass, 1025 are an error), so a line ends before KGL_DNS_LINE_MAX.
 * kgl_dns_line_add puts "/<pfx><name>" on the open line, or first ends it
 * when its tail (what follows the last '/') differs or the name would not
 * fit.  Lines are written to out when they end, so that two builders can
 * run side by side.  kgl_dns_line_end ends the open line: 0, or -1 when a
 * name and its tail alone were too long for a line (that name is not
 * written: the configuration must not be used). */
#define KGL_DNS_LINE_MAX 1000
typedef struct kgl_dns_line {
    FILE *out;
    const char *key; /* "server=", "local=", "nftset=" */
    char line[KGL_DNS_LINE_MAX];
    char tail[KGL_DNS_LINE_MAX];
    size_t len; /* of line; 0: none is open */
    int too_long;
} kgl_dns_line;
#define KGL_DNS_LINE(o, k)     \
    {                          \
        .out = (o), .key = (k) \
    }
void kgl_dns_line_add(kgl_dns_line *l, const char *pfx, const char *name, const char *tail);
int kgl_dns_line_end(kgl_dns_line *l);

/* The names a resolver forwards to upstream, in the order given:
 * "server=/NAME/UPSTREAM" (NAME with a leading star-dot for a wildcard),
 * and for an exact NAME a "local=" line refusing the names under it
 * unless a wildcard at or above NAME covers them: dnsmasq's /NAME/ takes
 * those too (measured, 2.90).  The
 * one statement of that rule for both resolvers; lines are shared
 * (kgl_dns_line).  0, or -1 when memory ran out or a name did not fit a
 * line (the configuration must not be used). */
typedef struct kgl_dns_name {
    const char *name;
    int wildcard;
} kgl_dns_name;
int kgl_dns_forward(FILE *out, const kgl_dns_name *v, size_t n, const char *upstream);

/* Release by scope (GCC's and clang's cleanup attribute), for launch code
 * with several ways out: a local so marked is released whenever it goes
 * out of scope, so each way out need not repeat the unwinding.  Each
 * release takes the unset value (NULL, -1, KGL_BWRAP_INIT), which every
 * such local starts as.  kgl_steal_fd hands a descriptor on, leaving -1.
 * kgl_closep is also the plain "close if open, then -1" of any code. */
static inline void kgl_freep(void *p) { free(*(void **)p); }
static inline void kgl_closep(int *fd)
{
    /* errno kept: a close on the way out must not change the reason. */
    if (*fd < 0) return;
    int e = errno;
    close(*fd);
    *fd = -1;
    errno = e;
}
static inline int kgl_steal_fd(int *fd)
{
    int v = *fd;
    *fd = -1;
    return v;
}
#define kgl_autofree __attribute__((cleanup(kgl_freep)))
#define kgl_autoclose __attribute__((cleanup(kgl_closep)))
#define kgl_autobwrap __attribute__((cleanup(kgl_bwrap_release)))

#ifdef __cplusplus
}
#endif

#endif
