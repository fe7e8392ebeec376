/* pty.h: a pseudo-terminal of the program's own, for interactive use.
 *
 * The program never gets the user's terminal: it gets the slave side of a
 * new pty as its stdin, stdout, stderr and controlling terminal, so
 * TIOCSTI and friends reach only that pty.  kgate keeps the master side,
 * puts the real terminal in raw mode, and relays both ways (output through
 * the secret mask).  The real terminal is restored on every exit path kgate
 * can see: normal exit, a signal death of the program, and any signal that
 * ends kgate itself but SIGKILL. */
#ifndef KG_PTY_H
#define KG_PTY_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

typedef struct kg_pty kg_pty;

/* Opens a pty whose window size and modes copy those of term_fd (the
 * user's terminal).  Returns NULL with err on failure. */
kg_pty *kg_pty_open(int term_fd, kg_error *err);
/* Closes both sides, restores the terminal if it was made raw; accepts NULL. */
void kg_pty_free(kg_pty *p);

int kg_pty_master(const kg_pty *p);
int kg_pty_slave(const kg_pty *p);
/* The parent's copy of the slave must be closed once the program has it,
 * or the master never sees EOF/EIO when the program exits. */
void kg_pty_close_slave(kg_pty *p);

/* Puts the user's terminal in raw mode, remembering its settings; installs
 * handlers that restore them if kgate dies of a fatal signal. */
int kg_pty_make_raw(kg_pty *p, kg_error *err);
/* Restores the user's terminal; safe to call more than once. */
void kg_pty_restore(kg_pty *p);
/* For a path that is about to _exit (out of memory): puts back the
 * terminal's saved modes if a pty made it raw.  Allocates nothing. */
void kg_pty_emergency_restore(void);
/* Copies the user's terminal's window size to the pty (on SIGWINCH). */
void kg_pty_sync_winsize(kg_pty *p);
/* Sends sig to the program through its terminal, the way a terminal would:
 * SIGINT and SIGQUIT to the pty's foreground process group (as if the key
 * had been typed), anything else to the process group of the session's
 * leader (the program kgate started).  Returns 0 when sent, -1 when no
 * session holds the pty as its controlling terminal (yet): the caller then
 * signals the pids it knows. */
int kg_pty_signal(kg_pty *p, int sig);
/* SIGCONT to the pty's foreground group and to the session's group. */
void kg_pty_continue(kg_pty *p);
/* Called with the bytes just written to the master: when they hold the
 * pty's interrupt or quit character (and ISIG is on) and the foreground
 * group is stopped, continues it, so the signal the key raised is not
 * left pending in a program that stopped itself. */
void kg_pty_typed(kg_pty *p, const char *buf, size_t len);

#endif
