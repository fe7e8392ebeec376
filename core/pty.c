#include "pty.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

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

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};

static void fatal_handler(int sig)
{
    if (restore_armed) tcsetattr(restore_fd, TCSAFLUSH, &restore_tio);
    /* SA_RESETHAND put the default back: die the way we would have. */
    raise(sig);
}

void kg_pty_emergency_restore(void)
{
    if (restore_armed) tcsetattr(restore_fd, TCSAFLUSH, &restore_tio);
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

int kg_pty_master(const kg_pty *p)
{
    return p->master;
}

int kg_pty_slave(const kg_pty *p)
{
    return p->slave;
}

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
        return kg_err_set(err, errno, "cannot read the terminal's settings: %s",
                          strerror(errno));
    restore_fd = p->term_fd;
    restore_tio = p->saved;
    restore_armed = 1;
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        struct sigaction sa = {.sa_handler = fatal_handler, .sa_flags = SA_RESETHAND};
        sigemptyset(&sa.sa_mask);
        sigaction(fatal_signals[i], &sa, NULL);
    }
    struct termios raw = p->saved;
    cfmakeraw(&raw);
    /* TCSADRAIN, not TCSAFLUSH: what the user typed ahead while kgate was
     * starting is meant for the program and reaches it. */
    if (tcsetattr(p->term_fd, TCSADRAIN, &raw) < 0) {
        restore_armed = 0;
        return kg_err_set(err, errno, "cannot put the terminal in raw mode: %s",
                          strerror(errno));
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
