/* supervise.c: starting the plan and staying with it until it ends.
 *
 * Shape: the program's stdout and stderr are pipes that only kgate reads;
 * each goes through its own kg_mask to kgate's fd 1 and 2 (by splice(2),
 * without a copy, when fd 1 or 2 is a pipe: see struct stream).  Stdin is fd 0,
 * handed over untouched, unless it is a terminal: the program then gets a
 * pipe that kgate fills from the terminal (see relay_stdin), so that it never
 * holds a descriptor of the user's terminal (no tcsetattr, no writing to
 * the screen past the mask, no TIOCSTI).  One poll loop waits on both pipes and on a
 * self-pipe that the signal handlers write to, so a signal is never lost
 * between a check and a sleep, and nothing is ever blocked with
 * sigprocmask (a blocked mask would be inherited by the program across
 * fork and exec).
 *
 * Signal dispositions are chosen with exec in mind: the forwarded signals
 * and SIGPIPE get real handlers, never SIG_IGN, because a handler is reset
 * to the default by execve and SIG_IGN is not.  So the program starts with
 * the dispositions a shell would give it, and kgate itself survives a
 * closed stdout (write returns EPIPE instead of killing us).  A signal that
 * kgate's caller ignores (a shell ignores SIGINT and SIGQUIT for a
 * background job of a script; nohup ignores SIGHUP) stays ignored: kgate
 * neither catches nor forwards it, and the program inherits the SIG_IGN, as
 * it would have without kgate.
 *
 * A closed or broken output (EPIPE, EBADF, ...) stops the relay of that one
 * stream: its read end is closed, so the program's next write there fails
 * with EPIPE or SIGPIPE, exactly as if it wrote to the closed pipe itself.
 *
 * After the program's pid has exited, the pipes are drained until EOF, or
 * until nothing has come for DRAIN_GRACE_MS, and never longer than
 * DRAIN_CAP_MS in all: under bubblewrap the PID namespace dies with its
 * first process, so EOF comes at once; a backend without a PID namespace
 * may leave a background child holding the pipe, and kgate must not wait
 * for it forever.  The grace runs from the last data, not from the exit:
 * what the program wrote before it ended (up to a full pipe) is delivered
 * however slowly kgate is scheduled (a fixed second lost 155 KB of output
 * once on a machine at load 27). */
#include "supervise.h"
#include "sigstart.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "mask.h"
#include "msg.h"
#include "netevents.h"
#include "os.h"
#include "proclimit.h"
#include "proctree.h"
#include "pty.h"
#include "termfilter.h"

#define RELAY_BUF (256 * 1024)
#define PIPE_SIZE (1024 * 1024)
#define DRAIN_GRACE_MS 1000
#define DRAIN_CAP_MS 30000
#define HELPER_GRACE_MS 2000
/* After the program and the helpers ended: how long the records still in
 * the events pipe (or on their way from a helper that is exiting) may take. */
#define EVENTS_DRAIN_MS 200
/* From the first SIGINT, SIGTERM, SIGHUP or SIGQUIT forwarded to the
 * program until it is killed (docs/exit-codes.md). */
#define STOP_GRACE_MS 10000
/* How long what the backend's processes leave behind may take to end
 * (bwrap's pid 1 dies of its parent-death signal right after the outer
 * bwrap) before it is SIGKILLed. */
#define ORPHAN_GRACE_MS 2000
/* After that grace, how long the rounds of SIGKILL may take before kgate
 * gives up and fails closed (a fork loop ends in a few rounds; a process
 * the kernel holds in an uninterruptible sleep may never end). */
#define TREE_BOUND_MS 5000

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* The handlers' only state: where to write, and who we are (a child
 * forked by launch runs our handlers until it execs, and must not write
 * into our self-pipe). */
static volatile sig_atomic_t sig_wfd = -1;
static volatile pid_t sig_owner;

static void on_signal(int sig)
{
    int saved = errno;
    if (sig_wfd >= 0 && getpid() == sig_owner) {
        unsigned char b = (unsigned char)sig;
        (void)!write(sig_wfd, &b, 1);
    }
    errno = saved;
}

typedef struct sup sup;

typedef struct stream {
    sup *s;
    int rfd; /* -1 once closed */
    int out_fd; /* 1 or 2 */
    kg_mask *mask;
    /* Pty mode: before the mask, the sequences that would make the user's
     * terminal answer (or reach its clipboard) are dropped and UTF-8 C1
     * controls are rewritten as ESC forms; the mask then reads the very
     * bytes the terminal will be shown (a token split by C2 9B ... is
     * seen as the terminal draws it). */
    kg_termfilter *term;

    /* Zero-copy relay, when both ends are pipes (Linux): the bytes are
     * looked at through a tee'd copy in scratch, and the clean spans are
     * spliced from the program's pipe to ours without passing through
     * kgate's memory.  chunk is the tee'd copy being fed to the mask;
     * taken counts its bytes already consumed from rfd. */
    bool zero_copy;
    int scratch_r, scratch_w;
    const char *chunk;
    size_t chunk_len, taken;
} stream;

struct sup {
    int sig_r, sig_w;
    struct sigaction old[sizeof forwarded / sizeof *forwarded];
    struct sigaction old_chld, old_pipe, old_winch, old_ttin;
    bool installed;

    kgate_proc proc;
    bool exited; /* proc.pid has been reaped */
    int64_t kill_at; /* when the program is SIGKILLed, or -1 */
    bool killed; /* it was, after STOP_GRACE_MS */
    bool subreaper; /* orphans of the backend's processes come to us */
    pid_t *before; /* our children before the launch: never reaped here */
    size_t n_before;
    /* Why processes of the run may still be alive after it ended, or "":
     * the run then fails closed (kg_supervise_opts.outlived). */
    char outlived[320]; /* room for the longest sentence below and 96 bytes of pids */
    char helper_gone[160]; /* why the run was ended early, or "" */
    int status; /* its wait status */
    int wait_errno;

    stream out, err;

    /* The read end of the backend's events pipe (-1: none, or at EOF). */
    int ev_fd;
    kg_netlog *net;

    /* With a pseudo-terminal: the program's one output is the master, and
     * kgate's stdin is copied to it.  Input waits in inbuf until the master
     * takes it, never in a blocking write: a program that does not read its
     * input while kgate waits to write it would hang both. */
    kg_pty *pty;
    int in_fd; /* -1 once stdin is done */
    char inbuf[4096];
    size_t in_len, in_off;
    /* Without a pty, a terminal on fd 0 is relayed into this pipe (the
     * program's stdin) instead of being handed over; -1 otherwise. */
    int in_pipe;
    /* The user's terminal settings at the start, put back at the end
     * whatever happened in between. */
    int tty_fd;
    bool tty_saved;
    struct termios tty;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------------ */
/* Signals                                                                   */
/* ------------------------------------------------------------------------ */

static int install_signals(sup *s, kg_error *err)
{
    int p[2];
    if (kg_os_pipe(p, true) < 0) return kg_err_set(err, errno, "pipe: %s", strerror(errno));
    s->sig_r = p[0];
    s->sig_w = p[1];
    sig_owner = getpid();
    sig_wfd = p[1];

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: a write to a slow stdout must return EINTR so the
     * signal is forwarded now, not when the terminal catches up. */
    sa.sa_flags = 0;
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) {
        sigaction(forwarded[i], NULL, &s->old[i]);
        if (s->old[i].sa_handler != SIG_IGN) sigaction(forwarded[i], &sa, NULL);
    }
    sigaction(SIGPIPE, NULL, &s->old_pipe);
    if (s->old_pipe.sa_handler != SIG_IGN) sigaction(SIGPIPE, &sa, NULL);
    if (s->pty) sigaction(SIGWINCH, &sa, &s->old_winch);
    /* A read of the terminal from the background: EINTR through our
     * handler rather than kgate stopped (relay_stdin checks the foreground
     * first; this closes the race). */
    if (s->in_pipe >= 0) sigaction(SIGTTIN, &sa, &s->old_ttin);
    sa.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, &s->old_chld);
    s->installed = true;
    return 0;
}

static void restore_signals(sup *s)
{
    if (s->installed) {
        for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
            sigaction(forwarded[i], &s->old[i], NULL);
        sigaction(SIGPIPE, &s->old_pipe, NULL);
        sigaction(SIGCHLD, &s->old_chld, NULL);
        if (s->pty) sigaction(SIGWINCH, &s->old_winch, NULL);
        if (s->in_pipe >= 0) sigaction(SIGTTIN, &s->old_ttin, NULL);
        s->installed = false;
    }
    sig_wfd = -1;
    if (s->sig_r >= 0) close(s->sig_r);
    if (s->sig_w >= 0) close(s->sig_w);
    s->sig_r = s->sig_w = -1;
}

static void reap_main(sup *s)
{
    if (s->exited || s->proc.pid <= 0) return;
    int st;
    pid_t r;
    do {
        r = waitpid(s->proc.pid, &st, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == s->proc.pid) {
        s->exited = true;
        s->status = st;
    } else if (r < 0) {
        /* Not our child after all: nothing to wait for. */
        s->exited = true;
        s->wait_errno = errno;
    }
}

/* The grace period after a forwarded signal is over: SIGKILL the
 * backend's process (our child, so its pid cannot have been reused); with
 * bubblewrap, --die-with-parent then takes the sandbox's pid 1 and with it
 * the whole PID namespace. */
static void kill_when_due(sup *s)
{
    if (s->exited || s->kill_at < 0 || now_ms() < s->kill_at) return;
    s->kill_at = -1;
    s->killed = true;
    kill(s->proc.pid, SIGKILL);
}

/* Milliseconds poll may sleep before kill_when_due has work: -1 for no
 * limit. */
static int kill_timeout(const sup *s)
{
    if (s->exited || s->kill_at < 0) return -1;
    int64_t rest = s->kill_at - now_ms();
    return rest <= 0 ? 0 : rest > INT32_MAX ? INT32_MAX : (int)rest;
}

/* The program's status is its own business, its helpers' is ours: a
 * helper that ends while the program runs (slirp4netns killed: the
 * program has lost its network) ends the run as a forwarded SIGTERM would,
 * and kgate says which one went.  Its name is read while it is a zombie,
 * before it is reaped. */
static void watch_helpers(sup *s)
{
    size_t n = s->proc.n_helpers;
    if (n > KGATE_MAX_HELPERS) n = KGATE_MAX_HELPERS;
    for (size_t i = 0; i < n; i++) {
        pid_t pid = s->proc.helpers[i];
        if (pid <= 0) continue;
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid != pid)
            continue;
        char comm[64] = "?", path[64];
        snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            ssize_t r = read(fd, comm, sizeof comm - 1);
            comm[r > 0 ? r : 1] = '\0';
            comm[strcspn(comm, "\n")] = '\0';
            close(fd);
        }
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        s->proc.helpers[i] = 0;
        reap_main(s);
        if (s->exited || s->helper_gone[0]) continue;
        snprintf(s->helper_gone, sizeof s->helper_gone,
                 "the backend's helper %s (pid %ld) %s %d during the run: "
                 "the program was ended",
                 comm, (long)pid, WIFSIGNALED(st) ? "died of signal" : "exited with status",
                 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        pid_t t = s->proc.signal_pid ? s->proc.signal_pid : s->proc.pid;
        if (!s->pty || kg_pty_signal(s->pty, SIGTERM) < 0) kill(t, SIGTERM);
        if (s->pty) kg_pty_continue(s->pty);
        kill(t, SIGCONT);
        if (s->kill_at < 0) s->kill_at = now_ms() + STOP_GRACE_MS;
    }
}

/* Reads what the handlers wrote: forwards signals while the program is
 * alive, and reaps it when it has exited. */
static void handle_signals(sup *s)
{
    unsigned char b[64];
    ssize_t n;
    while ((n = read(s->sig_r, b, sizeof b)) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            if (b[i] == SIGCHLD) {
                watch_helpers(s);
                continue;
            }
            if (b[i] == SIGPIPE || b[i] == SIGTTIN) continue;
            if (b[i] == SIGWINCH) {
                /* The kernel tells the program's foreground group. */
                if (s->pty) kg_pty_sync_winsize(s->pty);
                continue;
            }
            reap_main(s); /* never signal a pid that may be reused */
            if (s->exited) continue;
            pid_t t = s->proc.signal_pid ? s->proc.signal_pid : s->proc.pid;
            /* With a pty, the program may have left the group the backend
             * named (a session of its own, see kg_pty_signal). */
            if (!s->pty || kg_pty_signal(s->pty, b[i]) < 0) kill(t, b[i]);
            /* A stopped program (kill -STOP $$) would keep the signal
             * pending forever: continue it, as a shell's kill does for a
             * stopped job.  And whatever it does with the signal, the run
             * ends within STOP_GRACE_MS. */
            if (s->pty) kg_pty_continue(s->pty);
            kill(t, SIGCONT);
            if (s->kill_at < 0) s->kill_at = now_ms() + STOP_GRACE_MS;
        }
    }
    reap_main(s);
    kill_when_due(s);
}

/* SIGTERM, a grace period, then SIGKILL, and every pid reaped. */
static void stop_pids(sup *s, pid_t *pids, size_t n)
{
    bool done[KGATE_MAX_HELPERS + 1] = {false};
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        if (pids[i] <= 0) {
            done[i] = true;
            continue;
        }
        kill(pids[i], SIGTERM);
        left++;
    }
    int64_t deadline = now_ms() + HELPER_GRACE_MS;
    while (left > 0) {
        for (size_t i = 0; i < n; i++) {
            if (done[i]) continue;
            pid_t r = waitpid(pids[i], NULL, WNOHANG);
            if (r == pids[i] || (r < 0 && errno == ECHILD)) {
                done[i] = true;
                left--;
            }
        }
        int64_t rest = deadline - now_ms();
        if (left == 0 || rest <= 0) break;
        /* Woken early by SIGCHLD through the self-pipe. */
        struct pollfd p = {.fd = s->sig_r, .events = POLLIN};
        if (s->sig_r < 0) p.fd = -1;
        poll(&p, 1, rest < 20 ? (int)rest : 20);
        if (s->sig_r >= 0) {
            unsigned char b[64];
            while (read(s->sig_r, b, sizeof b) > 0) {}
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (done[i]) continue;
        kill(pids[i], SIGKILL);
        while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR) {}
    }
}

static void stop_helpers(sup *s)
{
    size_t n = s->proc.n_helpers;
    if (n > KGATE_MAX_HELPERS) n = KGATE_MAX_HELPERS;
    stop_pids(s, s->proc.helpers, n);
    s->proc.n_helpers = 0;
}

/* The run's tree, for kg_proctree_end (proctree.h): the system's process
 * list, a kill that checks the parent, our own children reaped, and a
 * pause that SIGCHLD (through the self-pipe) cuts short. */
static int tree_scan(void *ctx, void (*each)(void *arg, const kg_procent *e), void *arg)
{
    (void)ctx;
    return kg_os_proc_scan(each, arg);
}

static void tree_kill(void *ctx, pid_t pid, pid_t ppid)
{
    (void)ctx;
    (void)kg_os_kill_child_of(pid, ppid);
}

static bool tree_reap(void *ctx, pid_t pid)
{
    (void)ctx;
    pid_t r;
    do {
        r = waitpid(pid, NULL, WNOHANG);
    } while (r < 0 && errno == EINTR);
    return r == pid || (r < 0 && errno == ECHILD);
}

static void tree_pause(void *ctx, int ms)
{
    sup *s = ctx;
    struct pollfd p = {.fd = s->sig_r, .events = POLLIN};
    poll(&p, s->sig_r >= 0 ? 1 : 0, ms);
    if (s->sig_r >= 0) {
        unsigned char b[64];
        while (read(s->sig_r, b, sizeof b) > 0) {}
    }
}

static int64_t tree_now(void *ctx)
{
    (void)ctx;
    return now_ms();
}

/* The usual case, without reading every process's stat: no child of ours
 * but the spared ones means no tree (every process of it has a first
 * ancestor among our children, and a child, zombie or not, stays listed
 * until we reap it).  Children that have exited (bwrap's pid 1, reparented
 * to us when the outer bwrap ended) are reaped and the list read again:
 * a process's children are reparented to us before it becomes a zombie,
 * so what it left is in the next read.  A child still alive after a few
 * short waits, or a list that keeps changing, is left to the rounds of
 * kg_proctree_end.  Returns true when no child but the spared ones is
 * there. */
static bool only_spared_children(sup *s, const pid_t *spare, size_t nspare)
{
    for (int pass = 0; pass < 4; pass++) {
        size_t nk = 0;
        pid_t *kids = kg_os_children(&nk);
        if (!kids) return false;
        size_t others = 0, reaped = 0;
        for (size_t i = 0; i < nk; i++) {
            bool spared = false;
            for (size_t j = 0; j < nspare && !spared; j++) spared = spare[j] == kids[i];
            if (spared) continue;
            others++;
            if (tree_reap(s, kids[i])) reaped++;
        }
        free(kids);
        if (others == 0) return true;
        /* Live ones are often on their way out (the slirp stage's
         * resolver and watcher die of their parent-death signal right
         * after bwrap): a short wait, cut short by SIGCHLD, usually spares
         * the full scan. */
        if (reaped < others) tree_pause(s, 5);
    }
    return false;
}

/* As subreaper, ends every process of the run that is still there: all
 * our descendants but the children we had before the launch (never
 * touched here) and, while they run, the backend's helpers and what is
 * below them.  They get ORPHAN_GRACE_MS to end by themselves (what the
 * backend's own processes leave ends so), then are SIGKILLed in rounds
 * until a round finds none (proctree.h), for at most TREE_BOUND_MS.
 * What cannot be shown gone is noted in s->outlived: the caller fails
 * closed. */
static void end_tree(sup *s, bool spare_helpers)
{
    if (!s->subreaper || s->outlived[0]) return;
    size_t n = s->n_before;
    size_t ns = 0;
    pid_t *all = malloc((n + KGATE_MAX_HELPERS + 1) * sizeof *all);
    if (!all) {
        snprintf(s->outlived, sizeof s->outlived, "out of memory while ending the run's processes");
        return;
    }
    for (size_t i = 0; i < n; i++) all[ns++] = s->before[i];
    size_t nh = s->proc.n_helpers > KGATE_MAX_HELPERS ? KGATE_MAX_HELPERS : s->proc.n_helpers;
    for (size_t i = 0; spare_helpers && i < nh; i++)
        if (s->proc.helpers[i] > 0) all[ns++] = s->proc.helpers[i];
    if (only_spared_children(s, all, ns)) {
        free(all);
        return;
    }
    const kg_proctree_ops ops = {.ctx = s,
                                 .scan = tree_scan,
                                 .kill = tree_kill,
                                 .reap = tree_reap,
                                 .pause = tree_pause,
                                 .now_ms = tree_now};
    kg_proctree_result res;
    if (kg_proctree_end(&ops, getpid(), all, ns, ORPHAN_GRACE_MS, TREE_BOUND_MS, &res) < 0) {
        if (res.scan_errno) {
            snprintf(s->outlived, sizeof s->outlived,
                     "cannot list the processes to end the run's (/proc: %s): "
                     "the end-of-run checks were made, but one may still write after them",
                     res.scan_errno == ESRCH ? "not this PID namespace's, or "
                                               "kgate itself is not in it"
                                             : strerror(res.scan_errno));
        } else {
            char pids[96] = "";
            size_t shown = res.left < KG_PROCTREE_SHOW ? res.left : KG_PROCTREE_SHOW;
            for (size_t i = 0, at = 0; i < shown && at < sizeof pids; i++) {
                int w = snprintf(pids + at, sizeof pids - at, "%s%ld", i ? " " : "",
                                 (long)res.shown[i]);
                if (w > 0) at += (size_t)w;
            }
            /* "killed" only when a kill was sent: a process the scan
             * took for ended and never signalled is not one. */
            snprintf(s->outlived, sizeof s->outlived,
                     "%zu process%s still there %d s after it ended, "
                     "%s (pid %s%s): the end-of-run checks were made, but it may still "
                     "write after them",
                     res.left, res.left == 1 ? " of the run is" : "es of the run are",
                     (ORPHAN_GRACE_MS + TREE_BOUND_MS) / 1000,
                     res.killed ? "though killed" : "never killed", pids,
                     res.left > shown ? " ..." : "");
        }
    }
    free(all);
}

/* ------------------------------------------------------------------------ */
/* Output relay                                                              */
/* ------------------------------------------------------------------------ */

/* The mask's sink: all of buf to the stream's output, or -1 when that
 * output is gone. */
static int write_all(void *ctx, const char *buf, size_t len)
{
    stream *st = ctx;
    while (len > 0) {
        ssize_t n = write(st->out_fd, buf, len);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            handle_signals(st->s);
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* Our stdout was handed to us non-blocking. */
            struct pollfd p = {.fd = st->out_fd, .events = POLLOUT};
            if (poll(&p, 1, -1) < 0 && errno == EINTR) handle_signals(st->s);
        } else {
            return -1;
        }
    }
    return 0;
}

/* Consumes n bytes of rfd that the mask held back or dropped.  They are in
 * the pipe (tee saw them), so the reads do not wait. */
static int zc_discard(stream *st, size_t n)
{
    char junk[4096];
    while (n > 0) {
        ssize_t r = read(st->rfd, junk, n < sizeof junk ? n : sizeof junk);
        if (r > 0)
            n -= (size_t)r;
        else if (!(r < 0 && errno == EINTR))
            return -1;
    }
    return 0;
}

/* Moves n bytes from the program's pipe to our output pipe. */
static int zc_splice(stream *st, size_t n)
{
    while (n > 0) {
        ssize_t r = kg_os_splice(st->rfd, st->out_fd, n);
        if (r > 0) {
            n -= (size_t)r;
        } else if (r < 0 && errno == EINTR) {
            handle_signals(st->s);
        } else if (r < 0 && errno == EAGAIN) {
            /* rfd is non-blocking, which makes the splice so: wait for
             * room in our output. */
            struct pollfd p = {.fd = st->out_fd, .events = POLLOUT};
            if (poll(&p, 1, -1) < 0 && errno == EINTR) handle_signals(st->s);
        } else {
            return -1;
        }
    }
    return 0;
}

/* The mask's sink.  A span that lies in the tee'd chunk is spliced from
 * the pipe (after consuming what came before it); anything else (held
 * bytes, a prefix, "***") is written. */
static int sink(void *ctx, const char *buf, size_t len)
{
    stream *st = ctx;
    uintptr_t b = (uintptr_t)buf, c = (uintptr_t)st->chunk;
    if (st->chunk && b >= c && b < c + st->chunk_len) {
        size_t off = (size_t)(b - c);
        if (zc_discard(st, off - st->taken) < 0 || zc_splice(st, len) < 0) return -1;
        st->taken = off + len;
        return 0;
    }
    return write_all(ctx, buf, len);
}

/* The terminal filter's sink, in pty mode: what the terminal may be shown
 * goes to the mask, whose sink writes it. */
static int term_sink(void *ctx, const char *buf, size_t len)
{
    stream *st = ctx;
    return kg_mask_feed(st->mask, buf, len);
}

/* The program's bytes into the stream's first stage. */
static int stream_feed(stream *st, const char *buf, size_t len)
{
    if (st->term) return kg_termfilter_feed(st->term, buf, len);
    return kg_mask_feed(st->mask, buf, len);
}

static void stream_close(stream *st)
{
    if (st->scratch_r >= 0) close(st->scratch_r);
    if (st->scratch_w >= 0) close(st->scratch_w);
    st->scratch_r = st->scratch_w = -1;
    st->zero_copy = false;
    if (st->rfd < 0) return;
    /* The filter first: what it still holds (a sequence left open is
     * dropped) reaches the mask before the mask lets go of its own. */
    if (st->term) kg_termfilter_flush(st->term);
    kg_mask_flush(st->mask);
    close(st->rfd);
    st->rfd = -1;
}

/* Zero copy needs our output to be a pipe and a scratch pipe to tee into;
 * without either the stream is relayed with read and write. */
static void zc_setup(stream *st)
{
    struct stat sb;
    int p[2];
    if (!kg_os_relay_zero_copy()) return;
    if (fstat(st->out_fd, &sb) < 0 || !S_ISFIFO(sb.st_mode)) return;
    if (kg_os_pipe(p, true) < 0) return;
    kg_os_pipe_grow(p[1], PIPE_SIZE);
    st->scratch_r = p[0];
    st->scratch_w = p[1];
    st->zero_copy = true;
}

/* One tee'd chunk through the mask: 1 while the stream stays open, 0 once
 * closed, -1 when tee cannot be used here (the caller falls back). */
static int stream_pump_zc(stream *st, char *buf)
{
    ssize_t n = kg_os_tee(st->rfd, st->scratch_w, RELAY_BUF);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 1;
    if (n < 0) return -1;
    if (n == 0) { /* no writer left and nothing in the pipe */
        stream_close(st);
        return 0;
    }
    size_t got = 0;
    while (got < (size_t)n) {
        ssize_t r = read(st->scratch_r, buf + got, (size_t)n - got);
        if (r > 0)
            got += (size_t)r;
        else if (!(r < 0 && errno == EINTR))
            break;
    }
    st->chunk = buf;
    st->chunk_len = got;
    st->taken = 0;
    int ok = got == (size_t)n && kg_mask_feed(st->mask, buf, got) == 0 &&
             zc_discard(st, got - st->taken) == 0;
    st->chunk = NULL;
    if (!ok) {
        stream_close(st);
        return 0;
    }
    return 1;
}

/* One read from the program: 1 while the stream stays open, 0 once closed. */
static int stream_pump(stream *st, char *buf)
{
    if (st->zero_copy) {
        int r = stream_pump_zc(st, buf);
        if (r >= 0) return r;
        /* tee refused (nothing consumed yet): plain reads from now on. */
        close(st->scratch_r);
        close(st->scratch_w);
        st->scratch_r = st->scratch_w = -1;
        st->zero_copy = false;
    }
    ssize_t n = read(st->rfd, buf, RELAY_BUF);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return 1;
    /* n < 0 with EIO: a pty master whose last slave was closed. */
    if (n <= 0 || stream_feed(st, buf, (size_t)n) < 0) {
        stream_close(st);
        return 0;
    }
    return 1;
}

static int make_pipe(int p[2], kg_error *err)
{
    if (kg_os_pipe(p, false) < 0) return kg_err_set(err, errno, "pipe: %s", strerror(errno));
    /* Fewer, larger reads: the relay's cost is per read, not per byte.
     * Failing (a lower pipe-max-size) only costs speed. */
    kg_os_pipe_grow(p[1], PIPE_SIZE);
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    return 0;
}

/* Where kgate's stdin goes: the pty master, or the program's stdin pipe. */
static int input_dst(const sup *s) { return s->pty ? kg_pty_master(s->pty) : s->in_pipe; }

/* No more input for the program: with a pipe, it sees EOF. */
static void input_done(sup *s)
{
    s->in_fd = -1;
    s->in_len = s->in_off = 0;
    if (s->in_pipe >= 0) {
        close(s->in_pipe);
        s->in_pipe = -1;
    }
}

/* Reading a terminal is only done in its foreground process group: a
 * kgate in the background (kgate run ... &) leaves the terminal to the
 * shell, as the program itself would have been stopped by reading it. */
static bool may_read_input(const sup *s)
{
    if (s->pty || s->in_fd < 0) return true;
    pid_t fg = tcgetpgrp(s->in_fd);
    return fg < 0 || fg == getpgrp();
}

/* Moves kgate's stdin to the pty master or the program's stdin pipe, as
 * much as it takes now. */
static void pump_input(sup *s, bool readable, bool writable)
{
    if (readable && s->in_len == 0) {
        ssize_t n = read(s->in_fd, s->inbuf, sizeof s->inbuf);
        if (n > 0) {
            s->in_len = (size_t)n;
            s->in_off = 0;
        } else if (n == 0 ||
                   (errno != EINTR && errno != EAGAIN && !(errno == EIO && !may_read_input(s)))) {
            /* End of input: the program keeps its pty, a pipe is closed. */
            if (s->pty)
                s->in_fd = -1;
            else
                input_done(s);
            return;
        }
    }
    if (writable && s->in_len > 0) {
        ssize_t n = write(input_dst(s), s->inbuf + s->in_off, s->in_len - s->in_off);
        if (n > 0) {
            if (s->pty) kg_pty_typed(s->pty, s->inbuf + s->in_off, (size_t)n);
            s->in_off += (size_t)n;
            if (s->in_off == s->in_len) s->in_len = s->in_off = 0;
        } else if (n < 0 && errno != EINTR && errno != EAGAIN) {
            /* EPIPE: the program closed its stdin or ended. */
            if (s->pty) {
                s->in_fd = -1;
                s->in_len = s->in_off = 0;
            } else {
                input_done(s);
            }
        }
    }
}

/* When kgate's own output is a pipe, let it hold as much as the program's
 * pipe does: with the default 64 KiB every large write of the relay waits
 * for the reader several times, and the relay, not the program, sets the
 * pace.  The pipe only gets bigger; failing only costs speed. */
static void grow_output_pipe(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) kg_os_pipe_grow(fd, PIPE_SIZE);
}

/* Reads what the events pipe holds now (non-blocking); closes it at EOF
 * or on an error.  Reads whole buffers: kg_netlog_feed joins records. */
static void events_pump(sup *s)
{
    char buf[4096];
    while (s->ev_fd >= 0) {
        ssize_t n = read(s->ev_fd, buf, sizeof buf);
        if (n > 0) {
            kg_netlog_feed(s->net, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        close(s->ev_fd);
        s->ev_fd = -1;
    }
}

/* After the program and the helpers: what is left, until EOF or the grace. */
static void events_drain(sup *s)
{
    int64_t end = now_ms() + EVENTS_DRAIN_MS;
    while (s->ev_fd >= 0) {
        events_pump(s);
        int64_t rest = end - now_ms();
        if (s->ev_fd < 0 || rest <= 0) break;
        struct pollfd p = {.fd = s->ev_fd, .events = POLLIN};
        poll(&p, 1, (int)rest);
    }
    if (s->ev_fd >= 0) close(s->ev_fd);
    s->ev_fd = -1;
}

static void relay(sup *s)
{
    char *buf = malloc(RELAY_BUF);
    int64_t deadline = -1, cap = -1;
    stream *streams[2] = {&s->out, &s->err};
    /* Signals (and the reap they may call for) are looked at when the
     * self-pipe has a byte or a poll timed out (a kill is due), not on
     * every chunk: two system calls fewer per chunk of output. */
    bool look = true;
    for (;;) {
        if (look) handle_signals(s);
        if (s->exited && deadline < 0) {
            deadline = now_ms() + DRAIN_GRACE_MS;
            cap = deadline - DRAIN_GRACE_MS + DRAIN_CAP_MS;
        }
        bool any_open = s->out.rfd >= 0 || s->err.rfd >= 0;
        if (s->exited && (!any_open || now_ms() >= deadline)) break;
        if (!buf) { /* no memory to relay with: wait for the end only */
            stream_close(&s->out);
            stream_close(&s->err);
            any_open = false;
        }

        struct pollfd p[5] = {{.fd = s->sig_r, .events = POLLIN}};
        nfds_t np = 1;
        stream *at[5] = {NULL};
        /* The events pipe: read while the program runs, so a backend that
         * writes non-blocking drops nothing to a full pipe. */
        nfds_t ev_at = 0;
        if (s->ev_fd >= 0) {
            ev_at = np;
            p[np++] = (struct pollfd){.fd = s->ev_fd, .events = POLLIN};
        }
        for (size_t i = 0; i < 2; i++) {
            if (streams[i]->rfd < 0) continue;
            p[np] = (struct pollfd){.fd = streams[i]->rfd, .events = POLLIN};
            at[np++] = streams[i];
        }
        nfds_t in_at = 0;
        bool input =
            s->in_fd >= 0 && !s->exited && ((s->pty && s->out.rfd >= 0) || s->in_pipe >= 0);
        int timeout = kill_timeout(s);
        if (input && s->in_len == 0 && !may_read_input(s)) {
            /* In the background: look again in a while. */
            input = false;
            if (timeout < 0 || timeout > 200) timeout = 200;
        }
        if (input) {
            /* Read stdin only when the last input went out; wait for the
             * master or pipe to take it otherwise (the master is polled
             * above for reading through out.rfd, a duplicate). */
            in_at = np;
            if (s->in_len == 0)
                p[np++] = (struct pollfd){.fd = s->in_fd, .events = POLLIN};
            else
                p[np++] = (struct pollfd){.fd = input_dst(s), .events = POLLOUT};
        }
        if (s->exited) {
            int64_t rest = deadline - now_ms();
            timeout = rest > 0 ? (int)rest : 0;
        }
        int r = poll(p, np, timeout);
        look = r <= 0 || p[0].revents != 0;
        if (r < 0) continue; /* EINTR: the self-pipe has it */
        for (nfds_t i = 1; i < np; i++) {
            if (!p[i].revents) continue;
            if (ev_at && i == ev_at) {
                events_pump(s);
            } else if (input && i == in_at) {
                pump_input(s, s->in_len == 0, s->in_len > 0);
            } else {
                stream_pump(at[i], buf);
                if (s->exited) {
                    int64_t next = now_ms() + DRAIN_GRACE_MS;
                    deadline = next < cap ? next : cap;
                }
            }
        }
    }
    stream_close(&s->out);
    stream_close(&s->err);
    free(buf);
}

/* ------------------------------------------------------------------------ */
/* The whole run                                                             */
/* ------------------------------------------------------------------------ */

/* kgate_launch.commit as the backend sees it: the caller's function,
 * counted, so a backend that never calls it (or twice) is caught. */
typedef struct commit_gate {
    int (*fn)(void *ctx, kgate_err *err);
    void *ctx;
    int calls;
} commit_gate;

static int commit_once(void *ctx, kgate_err *err)
{
    commit_gate *g = ctx;
    if (g->calls++ > 0) return kgate_err_set(err, 0, "commit called twice");
    return g->fn(g->ctx, err);
}

/* The pipes of one launch: the program's stdout (po), stderr (pe) and
 * stdin (pi, only for a terminal on fd 0 without a pty), and the events
 * pipe of a backend that reports (pev).  -1 where not open; each end is
 * closed as soon as its holder has it, and what is left at the end. */
typedef struct sup_fds {
    int po[2], pe[2], pev[2], pi[2];
} sup_fds;

static void sup_init(sup *s, const kg_supervise_opts *opts)
{
    *s = (sup){.sig_r = -1,
               .sig_w = -1,
               .in_fd = -1,
               .kill_at = -1,
               .in_pipe = -1,
               .tty_fd = -1,
               .ev_fd = -1,
               .out = {.rfd = -1, .out_fd = STDOUT_FILENO, .scratch_r = -1, .scratch_w = -1},
               .err = {.rfd = -1, .out_fd = STDERR_FILENO, .scratch_r = -1, .scratch_w = -1}};
    s->out.s = s->err.s = s;
    s->net = opts ? opts->net : NULL;
}

static int make_masks(sup *s, const kg_supervise_opts *opts, kg_error *err)
{
    const kg_strv *extra = opts ? opts->mask_prefixes : NULL;
    s->out.mask = kg_mask_new(extra, sink, &s->out);
    s->err.mask = kg_mask_new(extra, sink, &s->err);
    if (!s->out.mask || !s->err.mask) return kg_err_set(err, ENOMEM, "out of memory");
    return 0;
}

/* The program's terminal, if any, and the user's kept safe. */
static int open_terminal(sup *s, const kg_supervise_opts *opts, sup_fds *f, kg_error *err)
{
    /* A pseudo-terminal when asked for, opened like the user's terminal
     * (fd 0) before that one goes raw.  No falling back to pipes when it
     * cannot be had: the caller planned for a pty (the backend then starts
     * no new session), and the program must not get the real terminal. */
    if (opts && opts->use_pty) {
        s->pty = kg_pty_open(STDIN_FILENO, err);
        if (!s->pty) return -1;
        s->out.term = kg_termfilter_new(term_sink, &s->out);
        if (!s->out.term) return kg_err_set(err, ENOMEM, "out of memory");
    }
    /* Without a pty the program must not get the user's terminal: a
     * terminal on fd 0 becomes a pipe that kgate fills (fds 1 and 2 are
     * always pipes).  Whatever happens, the terminal's settings are put
     * back at the end. */
    for (int fd = 0; fd <= 2; fd++)
        if (s->tty_fd < 0 && isatty(fd) && tcgetattr(fd, &s->tty) == 0) {
            s->tty_fd = fd;
            s->tty_saved = true;
        }
    if (!s->pty && isatty(STDIN_FILENO)) {
        if (kg_os_pipe(f->pi, false) < 0)
            return kg_err_set(err, errno, "pipe: %s", strerror(errno));
        fcntl(f->pi[1], F_SETFL, fcntl(f->pi[1], F_GETFL) | O_NONBLOCK);
        s->in_pipe = f->pi[1];
    }
    return 0;
}

static int open_pipes(sup *s, const kgate_backend *be, sup_fds *f, kg_error *err)
{
    /* Handlers first: a Ctrl-C during launch is then forwarded, not lost. */
    if (install_signals(s, err) < 0) return -1;
    if (!s->pty && (make_pipe(f->po, err) < 0 || make_pipe(f->pe, err) < 0)) return -1;
    /* The events pipe, for a backend that knows the field (ABI 2.1): an
     * older one never reads it, and would never close our write end
     * either.  Both ends close-on-exec and non-blocking: the backend dups
     * the write end for the helpers it hands it to, the program gets
     * neither, and no writer ever waits for kgate. */
    if (s->net && be->abi_minor >= 1 && kg_os_pipe(f->pev, true) < 0)
        return kg_err_set(err, errno, "pipe: %s", strerror(errno));
    return 0;
}

/* What the backend's launch gets: descriptors, environment, the commit. */
static int prepare_io(sup *s, sup_fds *f, commit_gate *cg, const char *const *envp,
                      kgate_launch *io, kg_error *err)
{
    *io = (kgate_launch){.struct_size = sizeof *io,
                         .commit = cg->fn ? commit_once : NULL,
                         .commit_ctx = cg,
                         .stdin_fd = f->pi[0] >= 0 ? f->pi[0] : STDIN_FILENO,
                         .stdout_fd = f->po[1],
                         .stderr_fd = f->pe[1],
                         .envp = envp,
                         .events_fd = f->pev[1]};
    kg_sigstart_ignored(io->sig_ignored_at_start);
    if (!s->pty) return 0;
    int slave = kg_pty_slave(s->pty);
    io->stdin_fd = io->stdout_fd = io->stderr_fd = slave;
    io->pty = 1;
    f->po[0] = fcntl(kg_pty_master(s->pty), F_DUPFD_CLOEXEC, 3);
    if (f->po[0] < 0) return kg_err_set(err, errno, "dup: %s", strerror(errno));
    fcntl(f->po[0], F_SETFL, fcntl(f->po[0], F_GETFL) | O_NONBLOCK);
    return kg_pty_make_raw(s->pty, err);
}

/* The bound on the run's processes, and every orphan of the run ours. */
static int bound_and_adopt(sup *s, const kg_supervise_opts *opts, kg_error *err)
{
    /* The bound on the box's processes, on us and so on all we start now
     * (proclimit.h).  Fail closed: a bound that cannot be set launches
     * nothing. */
    kg_proclimit lim;
    if (opts && kg_proclimit_apply(opts->max_processes, &lim) < 0)
        return kg_err_set(err, errno,
                          "cannot bound the number of processes "
                          "(max_processes): %s",
                          strerror(errno));
    /* Every process of the run that loses its parent (a daemon's
     * double fork, bwrap's pid 1 after the outer bwrap) is reparented to
     * us, not to an init outside our tree that may never reap it or end
     * it, and ended before we return (end_tree).  Not on macOS (os.h).
     * Fail closed: a subreaper that cannot tell its earlier children from
     * the run's could not end the run's, so nothing starts. */
    s->subreaper = kg_os_subreaper(true);
    s->before = kg_os_children(&s->n_before);
    if (s->subreaper && !s->before)
        return kg_err_set(err, errno ? errno : EIO,
                          "cannot list kgate's own processes in /proc (%s), so the "
                          "run's could not be ended after it: nothing was started",
                          errno == ESRCH ? "not this PID namespace's" : strerror(errno));
    return 0;
}

static void kill_and_reap(pid_t pid)
{
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}

/* The backend's launch, and what its contract promises checked. */
static int launch_program(sup *s, const kgate_backend *be, const kg_host *host,
                          const kgate_policy *policy, const kgate_probe *probe,
                          const kgate_plan *plan, const kgate_launch *io, const commit_gate *cg,
                          sup_fds *f, const char *name, kg_error *err)
{
    s->proc = (kgate_proc){.struct_size = sizeof s->proc};
    /* The backend writes the core's error itself (kg_error is kgate_err);
     * it starts empty, so "launch failed" stands in for a silent one. */
    kg_error none = {0};
    if (!err) err = &none;
    *err = (kg_error){0};
    int launched = be->launch(&host->pub, policy, probe, plan, io, &s->proc, err);
    /* Only the program holds the read end of its stdin pipe now, and only
     * the backend's helpers the write end of the events pipe: EOF there
     * means they are all gone. */
    if (f->pi[0] >= 0) close(f->pi[0]);
    f->pi[0] = -1;
    if (f->pev[1] >= 0) close(f->pev[1]);
    f->pev[1] = -1;
    s->ev_fd = f->pev[0];
    f->pev[0] = -1;
    if (launched < 0) {
        if (!err->msg[0]) kg_err_set(err, err->code, "launch failed");
        kg_err_wrap(err, "backend %s", name);
        /* The contract says nothing is left; make it so anyway. */
        if (s->proc.pid > 0) kill_and_reap(s->proc.pid);
        stop_helpers(s);
        return -1;
    }
    if (s->proc.pid <= 0) {
        kg_err_set(err, 0, "backend %s: launch returned no pid", name);
        stop_helpers(s);
        return -1;
    }
    if (cg->fn && cg->calls != 1) {
        /* The program may be running with no launch line in the log. */
        kg_err_set(err, 0,
                   "backend %s: launched without writing the audit "
                   "launch line (commit called %d times); stopped",
                   name, cg->calls);
        kill_and_reap(s->proc.pid);
        stop_helpers(s);
        return -1;
    }
    return 0;
}

/* The program's output to the relay, from here to its end; then every
 * process of the run ended, and the helpers. */
static void relay_to_end(sup *s, sup_fds *f)
{
    /* Only the program holds the write ends now: EOF means it is done. */
    if (f->po[1] >= 0) close(f->po[1]);
    if (f->pe[1] >= 0) close(f->pe[1]);
    f->po[1] = f->pe[1] = -1;
    if (s->pty) {
        kg_pty_close_slave(s->pty);
        s->in_fd = STDIN_FILENO;
    } else if (s->in_pipe >= 0) {
        s->in_fd = STDIN_FILENO;
    }
    s->out.rfd = f->po[0];
    s->err.rfd = f->pe[0];
    f->po[0] = f->pe[0] = -1;

    grow_output_pipe(STDOUT_FILENO);
    grow_output_pipe(STDERR_FILENO);
    if (!s->pty) {
        zc_setup(&s->out);
        zc_setup(&s->err);
    }
    relay(s);
    while (!s->exited) { /* both pipes closed early: wait for the end */
        struct pollfd p[2] = {{.fd = s->sig_r, .events = POLLIN},
                              {.fd = s->ev_fd, .events = POLLIN}};
        poll(p, s->ev_fd >= 0 ? 2 : 1, kill_timeout(s));
        events_pump(s);
        handle_signals(s);
    }
    /* Every process of the run ended before the helpers are: the
     * backend's cleanup (the Landlock box's TMPDIR) then races nothing. */
    end_tree(s, true);
    stop_helpers(s);
    events_drain(s);
}

static int program_status(const sup *s, const char *name, int *exit_status, kg_error *err)
{
    if (s->wait_errno)
        return kg_err_set(err, s->wait_errno, "backend %s: cannot wait for pid %ld: %s", name,
                          (long)s->proc.pid, strerror(s->wait_errno));
    if (WIFSIGNALED(s->status))
        *exit_status = 128 + WTERMSIG(s->status);
    else
        *exit_status = WEXITSTATUS(s->status);
    return 0;
}

/* In every case the settings the terminal had when kgate started: nothing
 * the program did (it had no descriptor of it) or kgate did stays. */
static void restore_tty(const sup *s)
{
    if (!s->tty_saved) return;
    struct termios now;
    memset(&now, 0, sizeof now);
    if (tcgetattr(s->tty_fd, &now) == 0 &&
        (now.c_iflag != s->tty.c_iflag || now.c_oflag != s->tty.c_oflag ||
         now.c_cflag != s->tty.c_cflag || now.c_lflag != s->tty.c_lflag ||
         memcmp(now.c_cc, s->tty.c_cc, sizeof now.c_cc) != 0)) {
        /* From the background tcsetattr would stop kgate (SIGTTOU):
         * blocked for this one call; nothing is exec'd after it. */
        sigset_t ttou, old;
        sigemptyset(&ttou);
        sigaddset(&ttou, SIGTTOU);
        sigprocmask(SIG_BLOCK, &ttou, &old);
        tcsetattr(s->tty_fd, TCSANOW, &s->tty);
        sigprocmask(SIG_SETMASK, &old, NULL);
    }
}

/* Whatever step stopped: the run's processes, the descriptors, the
 * terminal and the signals put back; ret, or -1 for a run that outlived
 * its end. */
static int sup_finish(sup *s, sup_fds *f, const kg_supervise_opts *opts, int ret, kg_error *err)
{
    /* And what the helpers left, or a failed launch. */
    if (s->before) end_tree(s, false);
    if (s->subreaper) kg_os_subreaper(false);
    s->subreaper = false;
    free(s->before);
    for (int i = 0; i < 2; i++) {
        if (f->po[i] >= 0) close(f->po[i]);
        if (f->pe[i] >= 0) close(f->pe[i]);
        if (f->pev[i] >= 0) close(f->pev[i]);
    }
    if (f->pi[0] >= 0) close(f->pi[0]); /* a launch that never came */
    /* A failed launch may still have reported something. */
    events_drain(s);
    if (s->net) kg_netlog_finish(s->net);
    stream_close(&s->out);
    stream_close(&s->err);
    if (s->in_pipe >= 0) close(s->in_pipe);
    /* The terminal first: with the supervisor's handlers gone, a SIGINT
     * would end kgate before it was restored. */
    kg_pty_free(s->pty); /* the user's terminal back as it was */
    restore_tty(s);
    restore_signals(s);
    if (s->outlived[0]) {
        /* Fail closed: nothing says the run is over, so the run fails
         * even when the end-of-run checks it still gets find nothing
         * (cmd_run.c). */
        kg_err_set(err, EBUSY, "%s", s->outlived);
        if (opts && opts->outlived) *opts->outlived = true;
        ret = -1;
    }
    if (s->helper_gone[0]) kg_say("%s", s->helper_gone);
    if (s->killed)
        kg_say("the program did not end within %d s of the signal forwarded to it: killed",
               STOP_GRACE_MS / 1000);
    if (opts->masked) *opts->masked = kg_mask_count(s->out.mask) + kg_mask_count(s->err.mask);
    kg_mask_free(s->out.mask);
    kg_mask_free(s->err.mask);
    kg_termfilter_free(s->out.term);
    return ret;
}

int kg_supervise(const kgate_backend *be, const kg_host *host, const kgate_policy *policy,
                 const kgate_probe *probe, const kgate_plan *plan, const char *const *envp,
                 const kg_supervise_opts *opts, int *exit_status, kg_error *err)
{
    const char *name = be && be->name ? be->name : "?";
    if (!be || !be->launch) return kg_err_set(err, ENOSYS, "backend %s: cannot launch", name);
    sup s;
    sup_init(&s, opts);
    sup_fds f = {.po = {-1, -1}, .pe = {-1, -1}, .pev = {-1, -1}, .pi = {-1, -1}};
    commit_gate cg = {.fn = opts ? opts->commit : NULL, .ctx = opts ? opts->commit_ctx : NULL};
    kgate_launch io = {.struct_size = sizeof io};
    int ret = -1;
    if (make_masks(&s, opts, err) == 0 && open_terminal(&s, opts, &f, err) == 0 &&
        open_pipes(&s, be, &f, err) == 0 && prepare_io(&s, &f, &cg, envp, &io, err) == 0 &&
        bound_and_adopt(&s, opts, err) == 0 &&
        launch_program(&s, be, host, policy, probe, plan, &io, &cg, &f, name, err) == 0) {
        relay_to_end(&s, &f);
        ret = program_status(&s, name, exit_status, err);
    }
    return sup_finish(&s, &f, opts, ret, err);
}
