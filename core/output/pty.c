#include "pty.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "oom.h"

struct kg_pty {
    int master;
    int slave;
    int term_fd;
    bool raw;
    struct termios saved;
};

/* The terminal to restore from a fatal-signal handler.  One pty per kgate
 * process, so one slot is enough. */
static volatile sig_atomic_t restore_armed;
static int restore_fd = -1;
static struct termios restore_tio;

/* Faults: caught whatever handler was there (a sanitizer's), unless
 * ignored. */
static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
/* Every other signal whose default ends the process, caught while its
 * disposition is the default.  SIGINT, SIGTERM, SIGHUP, SIGQUIT and
 * SIGPIPE have the supervisor's handlers by then (supervise.c), which
 * restore the terminal the ordinary way.  Real-time signals are added in
 * kg_pty_make_raw. */
static const int ending_signals[] = {
    SIGUSR1,   SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO,   SIGXCPU,
    SIGXFSZ,   SIGSYS,  SIGHUP,  SIGINT,    SIGQUIT, SIGTERM, SIGPIPE,
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
#ifdef SIGPWR
    SIGPWR,
#endif
#ifdef SIGEMT
    SIGEMT,
#endif
#ifdef SIGLOST
    SIGLOST,
#endif
};

/* What was there before, put back when the terminal is restored. */
static struct sigaction saved_action[NSIG];
static bool caught[NSIG];

static void fatal_handler(int sig)
{
    if (restore_armed) tcsetattr(restore_fd, TCSAFLUSH, &restore_tio);
    /* SA_RESETHAND put the default back: die the way we would have (the
     * signal is blocked while we run, and delivered when we return). */
    raise(sig);
}

void kg_pty_emergency_restore(void)
{
    if (restore_armed) tcsetattr(restore_fd, TCSAFLUSH, &restore_tio);
}

static void catch_signal(int sig, bool unless_handled)
{
    struct sigaction cur;
    if (sig <= 0 || sig >= NSIG || caught[sig]) return;
    if (sigaction(sig, NULL, &cur) < 0 || cur.sa_handler == SIG_IGN) return;
    if (unless_handled && (cur.sa_flags & SA_SIGINFO || cur.sa_handler != SIG_DFL)) return;
    struct sigaction sa = {.sa_handler = fatal_handler, .sa_flags = SA_RESETHAND};
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &saved_action[sig]) == 0) caught[sig] = true;
}

static void catch_ending_signals(void)
{
    for (size_t i = 0; i < sizeof fault_signals / sizeof fault_signals[0]; i++)
        catch_signal(fault_signals[i], false);
    for (size_t i = 0; i < sizeof ending_signals / sizeof ending_signals[0]; i++)
        catch_signal(ending_signals[i], true);
#if defined(SIGRTMIN) && defined(SIGRTMAX)
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) catch_signal(sig, true);
#endif
}

static void release_ending_signals(void)
{
    for (int sig = 1; sig < NSIG; sig++) {
        if (!caught[sig]) continue;
        sigaction(sig, &saved_action[sig], NULL);
        caught[sig] = false;
    }
}

kg_pty *kg_pty_open(int term_fd, kg_error *err)
{
    kg_pty *p = calloc(1, sizeof *p);
    if (!p) {
        kg_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    p->master = p->slave = -1;
    p->term_fd = term_fd;
    p->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (p->master < 0 || grantpt(p->master) < 0 || unlockpt(p->master) < 0) {
        kg_err_set(err, errno, "cannot open a pseudo-terminal: %s", strerror(errno));
        goto fail;
    }
    char name[128];
    if (ptsname_r(p->master, name, sizeof name) != 0) {
        kg_err_set(err, errno, "ptsname: %s", strerror(errno));
        goto fail;
    }
    p->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (p->slave < 0) {
        kg_err_set(err, errno, "cannot open %s: %s", name, strerror(errno));
        goto fail;
    }
    /* The program's terminal starts out like the user's: same modes (so
     * erase keys and the like match) and the same size. */
    struct termios tio;
    if (tcgetattr(term_fd, &tio) == 0) tcsetattr(p->slave, TCSANOW, &tio);
    kg_pty_sync_winsize(p);
    return p;
fail:
    kg_pty_free(p);
    return NULL;
}

int kg_pty_master(const kg_pty *p) { return p->master; }

int kg_pty_slave(const kg_pty *p) { return p->slave; }

void kg_pty_close_slave(kg_pty *p)
{
    if (p && p->slave >= 0) {
        close(p->slave);
        p->slave = -1;
    }
}

int kg_pty_make_raw(kg_pty *p, kg_error *err)
{
    if (tcgetattr(p->term_fd, &p->saved) < 0)
        return kg_err_set(err, errno, "cannot read the terminal's settings: %s", strerror(errno));
    restore_fd = p->term_fd;
    restore_tio = p->saved;
    restore_armed = 1;
    kg_oom_set_before_exit(kg_pty_emergency_restore);
    catch_ending_signals();
    struct termios raw = p->saved;
    cfmakeraw(&raw);
    /* TCSADRAIN, not TCSAFLUSH: what the user typed ahead while kgate was
     * starting is meant for the program and reaches it. */
    if (tcsetattr(p->term_fd, TCSADRAIN, &raw) < 0) {
        restore_armed = 0;
        release_ending_signals();
        return kg_err_set(err, errno, "cannot put the terminal in raw mode: %s", strerror(errno));
    }
    p->raw = true;
    return 0;
}

void kg_pty_restore(kg_pty *p)
{
    if (!p || !p->raw) return;
    /* TCSAFLUSH: input still waiting was typed for the program (or pushed
     * by someone); the user's shell must not run it outside the box. */
    tcsetattr(p->term_fd, TCSAFLUSH, &p->saved);
    p->raw = false;
    restore_armed = 0;
    release_ending_signals();
}

/* The pty's foreground group and the session's group (the program
 * kgate started), continued: a program stopped there would otherwise keep
 * a signal kgate forwarded pending forever. */
void kg_pty_continue(kg_pty *p)
{
    pid_t pg = 0;
    if (ioctl(p->master, TIOCGPGRP, &pg) == 0 && pg > 0) kill(-pg, SIGCONT);
#ifdef TIOCGSID
    pid_t sid = 0;
    if (ioctl(p->master, TIOCGSID, &sid) == 0 && sid > 0 && sid != pg) kill(-sid, SIGCONT);
#endif
}

/* 'T' for a stopped process (its state in /proc), else 0. */
static char proc_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' ? paren[2] : 0;
}

void kg_pty_typed(kg_pty *p, const char *buf, size_t len)
{
    struct termios tio;
    if (len == 0 || tcgetattr(p->master, &tio) < 0 || !(tio.c_lflag & ISIG)) return;
    bool intr = false;
    for (size_t i = 0; i < len && !intr; i++) {
        cc_t c = (cc_t)buf[i];
        intr = c != _POSIX_VDISABLE && (c == tio.c_cc[VINTR] || c == tio.c_cc[VQUIT]);
    }
    pid_t pg = 0;
    if (!intr || ioctl(p->master, TIOCGPGRP, &pg) < 0 || pg <= 0) return;
    char st = proc_state(pg);
    if (st == 'T' || st == 't') kill(-pg, SIGCONT);
}

void kg_pty_sync_winsize(kg_pty *p)
{
    struct winsize ws;
    if (ioctl(p->term_fd, TIOCGWINSZ, &ws) == 0) ioctl(p->master, TIOCSWINSZ, &ws);
}

int kg_pty_signal(kg_pty *p, int sig)
{
    /* Both ioctls read the slave's state through the master, and give pids
     * as seen from kgate's pid namespace. */
    pid_t pg = 0;
    if (sig == SIGINT || sig == SIGQUIT) {
        if (ioctl(p->master, TIOCGPGRP, &pg) < 0 || pg <= 0) return -1;
#ifdef TIOCSIG
        /* The kernel signals the group it holds, not a number that could
         * have been reused since TIOCGPGRP. */
        if (ioctl(p->master, TIOCSIG, sig) == 0) return 0;
#endif
        return kill(-pg, sig);
    }
#ifdef TIOCGSID
    /* A session leader cannot change its group: pgid == sid. */
    if (ioctl(p->master, TIOCGSID, &pg) < 0 || pg <= 0) return -1;
    return kill(-pg, sig);
#else
    return -1;
#endif
}

void kg_pty_free(kg_pty *p)
{
    if (!p) return;
    kg_pty_restore(p);
    if (p->master >= 0) close(p->master);
    if (p->slave >= 0) close(p->slave);
    free(p);
}
