/* mcprun.c: one child kgate of `kgate mcp`, from fork to exit status.
 *
 * The child gets /dev/null as stdin and three pipes (stdout, stderr, the
 * refusal channel on descriptor 3) and nothing else of the server's: not
 * its stdin and stdout, which are the MCP channel, so nothing the boxed
 * program prints can be read by the client as a message.  The server reads
 * the pipes until the child has exited and they are at end of file,
 * keeping the first `limit` bytes of each and counting the rest (a program
 * that prints forever still ends, and the server's memory stays bounded).
 *
 * Killing: SIGTERM to the child kgate, which forwards it to the program
 * and, after its own grace period, ends the whole run and its box
 * (docs/output-and-audit.md, "Signals and exit status"); SIGKILL only if
 * kgate itself has not ended KILL_AFTER_MS later, when bubblewrap's
 * --die-with-parent and the Landlock box's parent-death signal take the
 * box with it.  The child's parent-death signal is SIGTERM too, so a
 * server that is killed does not leave a run behind. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "cleanup.h"
#include "mcprun.h"
#include "os.h"

/* Longer than kgate run's grace (10 s) and its end-of-run rounds (5 s). */
#define KILL_AFTER_MS 20000L
/* How often a child whose pipes stay open is looked at (a descendant
 * holding a copy of a pipe must not keep the server waiting forever). */
#define TICK_MS 1000L

void kg_mcp_out_init(kg_mcp_out *o)
{
    memset(o, 0, sizeof *o);
    utstring_new(o->out.buf);
    utstring_new(o->err.buf);
    utstring_new(o->events.buf);
    o->status = -1;
}

void kg_mcp_out_free(kg_mcp_out *o)
{
    if (o->out.buf) utstring_free(o->out.buf);
    if (o->err.buf) utstring_free(o->err.buf);
    if (o->events.buf) utstring_free(o->events.buf);
    o->out.buf = o->err.buf = o->events.buf = NULL;
}

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* In the child, between fork and exec: only async-signal-safe calls.  A
 * failure is one line on the stderr pipe and status 125, what kgate
 * itself answers for a launch that did not happen. */
static _Noreturn void child_exec(const kg_mcp_job *j, pid_t server, int out, int err, int ev)
{
    static const char msg[] = "kgate: mcp: cannot start kgate run\n";
#ifdef __linux__
    /* A server killed outright (its client's SIGKILL) still ends the run:
     * kgate takes this SIGTERM as it takes one sent by the server. */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != server) _exit(125);
#else
    (void)server;
#endif
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(125);
    if (j->events && dup2(ev, 3) < 0) _exit(125);
    if (fchdir(j->dirfd) < 0) {
        (void)!write(2, msg, sizeof msg - 1);
        _exit(125);
    }
    /* Nothing but 0..3 crosses the exec (the server's descriptors are
     * close-on-exec already; this catches what a library opened). */
    (void)kg_os_cloexec_range(j->events ? 4 : 3);
    /* The server ignores SIGPIPE; the run must start with what kgate
     * itself would have been started with. */
    signal(SIGPIPE, SIG_DFL);
    execv(j->exe, j->argv);
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
}

/* Appends what fd has now to s, up to the bound; returns 0 at end of
 * file or on an error (the stream is over), 1 when it may have more. */
static int drain(int fd, kg_mcp_stream *s, size_t limit)
{
    char b[65536];
    for (;;) {
        ssize_t n = read(fd, b, sizeof b);
        if (n == 0) return 0;
        if (n < 0) return errno == EAGAIN || errno == EINTR ? 1 : 0;
        size_t have = utstring_len(s->buf), keep = 0;
        if (have < limit) keep = (size_t)n < limit - have ? (size_t)n : limit - have;
        if (keep) utstring_bincpy(s->buf, b, keep);
        s->cut += (size_t)n - keep;
    }
}

/* The server's own input while a run goes on: kept for later, or its end
 * noted.  Returns 0 at end of file. */
static int take_input(int fd, UT_string *into)
{
    char b[65536];
    for (;;) {
        ssize_t n = read(fd, b, sizeof b);
        if (n == 0) return 0;
        if (n < 0) return errno == EINTR ? 1 : (errno == EAGAIN ? 1 : 0);
        utstring_bincpy(into, b, (size_t)n);
        /* One read per wake-up: a client writing fast must not starve
         * the run's pipes. */
        return 1;
    }
}

typedef struct run_state {
    pid_t pid;
    int fd[3]; /* stdout, stderr, events read ends; -1 once closed */
    int in; /* the server's input, -1 once closed or not watched */
    long deadline; /* 0: none */
    long kill_at; /* 0: not asked to end yet */
    bool reaped;
    int wstatus;
} run_state;

static void ask_to_end(run_state *st)
{
    if (st->kill_at) return;
    kill(st->pid, SIGTERM);
    st->kill_at = now_ms() + KILL_AFTER_MS;
}

static int poll_timeout(const run_state *st)
{
    long t = TICK_MS, now = now_ms();
    if (st->deadline && !st->kill_at) t = st->deadline - now < t ? st->deadline - now : t;
    if (st->kill_at) t = st->kill_at - now < t ? st->kill_at - now : t;
    return t < 0 ? 0 : (int)t;
}

/* One wake-up: read what is there, end the run when its time is up or
 * the client left.  Returns false when the loop is over. */
static bool step(const kg_mcp_job *j, kg_mcp_out *o, run_state *st)
{
    kg_mcp_stream *ss[3] = {&o->out, &o->err, &o->events};
    struct pollfd p[4];
    for (int i = 0; i < 3; i++) p[i] = (struct pollfd){.fd = st->fd[i], .events = POLLIN};
    p[3] = (struct pollfd){.fd = st->in, .events = POLLIN};
    int r = poll(p, 4, poll_timeout(st));
    if (r < 0 && errno != EINTR) return false;
    for (int i = 0; r > 0 && i < 3; i++) {
        if (st->fd[i] < 0 || !p[i].revents) continue;
        if (!drain(st->fd[i], ss[i], j->limit)) {
            close(st->fd[i]);
            st->fd[i] = -1;
        }
    }
    if (r > 0 && st->in >= 0 && p[3].revents && !take_input(st->in, j->input)) {
        st->in = -1;
        o->input_eof = true;
        ask_to_end(st);
    }
    /* A client that sends faster than runs end is not read further until
     * this one has: its messages wait in the kernel's pipe. */
    if (st->in >= 0 && utstring_len(j->input) >= j->input_cap) st->in = -1;
    long now = now_ms();
    if (st->deadline && !st->kill_at && now >= st->deadline) {
        o->timed_out = true;
        ask_to_end(st);
    }
    if (st->kill_at && now >= st->kill_at) kill(st->pid, SIGKILL);
    if (!st->reaped && waitpid(st->pid, &st->wstatus, WNOHANG) == st->pid) st->reaped = true;
    /* Exited, with a pipe still open: what is there is read, a descendant
     * that kept a copy is not waited for. */
    if (st->reaped) {
        for (int i = 0; i < 3; i++)
            if (st->fd[i] >= 0) drain(st->fd[i], ss[i], j->limit);
        return false;
    }
    return true;
}

static int make_pipes(int p[3][2], bool events)
{
    for (int i = 0; i < 3; i++) p[i][0] = p[i][1] = -1;
    for (int i = 0; i < (events ? 3 : 2); i++) {
        if (kg_os_pipe(p[i], false) < 0) return -1;
        /* Only the server's end waits for nothing. */
        fcntl(p[i][0], F_SETFL, fcntl(p[i][0], F_GETFL) | O_NONBLOCK);
    }
    return 0;
}

static void close_pipes(int p[3][2])
{
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++)
            if (p[i][k] >= 0) close(p[i][k]);
}

int kg_mcp_run(const kg_mcp_job *j, kg_mcp_out *o)
{
    int p[3][2];
    if (make_pipes(p, j->events) < 0) {
        snprintf(o->why, sizeof o->why, "cannot make a pipe: %s", strerror(errno));
        close_pipes(p);
        return -1;
    }
    pid_t server = getpid(), pid = fork();
    if (pid < 0) {
        snprintf(o->why, sizeof o->why, "cannot fork: %s", strerror(errno));
        close_pipes(p);
        return -1;
    }
    if (pid == 0) child_exec(j, server, p[0][1], p[1][1], p[2][1]);
    o->started = true;
    run_state st = {.pid = pid, .in = j->input_fd};
    for (int i = 0; i < 3; i++) {
        close(p[i][1]);
        st.fd[i] = p[i][0];
    }
    if (j->timeout_ms > 0) st.deadline = now_ms() + j->timeout_ms;
    while (st.fd[0] >= 0 || st.fd[1] >= 0 || st.fd[2] >= 0 || !st.reaped)
        if (!step(j, o, &st)) break;
    for (int i = 0; i < 3; i++)
        if (st.fd[i] >= 0) close(st.fd[i]);
    while (!st.reaped && waitpid(pid, &st.wstatus, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(st.wstatus))
        o->status = WEXITSTATUS(st.wstatus);
    else if (WIFSIGNALED(st.wstatus))
        o->status = 128 + WTERMSIG(st.wstatus);
    return 0;
}
