/* sb-watch.h: no orphans on macOS.
 *
 * Under bubblewrap, the program and everything it starts die with kgate
 * (--die-with-parent and a PID namespace).  macOS has neither, so launch
 * starts a watcher: a small process, forked from kgate, that waits for
 * kgate to end and then SIGKILLs the program's process group (the program
 * leads a session of its own, and its children stay in its group unless
 * they leave it).  It also does so when the core stops it with SIGTERM
 * after the program ended, so background children left in the group do
 * not outlive the run, as under bubblewrap.
 *
 * Not covered (documented in docs/seatbelt.md): a descendant that moves to
 * another process group or session (setsid, setpgid, a daemon) is not in
 * the group that is killed.
 *
 * The shared part is sb-watch.c; waiting for kgate to end is per system:
 * kqueue's EVFILT_PROC on macOS (sb-watch-macos.c), a pidfd on Linux
 * (sb-watch-linux.c), where only the tests use it. */
#ifndef SB_WATCH_H
#define SB_WATCH_H

#include <sys/types.h>

/* Forks the watcher for the process group led by program (and program
 * itself), and returns once it watches kgate: its pid, or -1 with errno
 * when no watch could be set up (the caller must not start the program
 * then). */
pid_t sb_watch_start(pid_t program);

/* ---- per system (sb-watch-<os>.c), called in the watcher only ---------- */

typedef struct sb_watch {
    int fd[2];
} sb_watch;

/* Starts watching parent for its end, and SIGTERM for the core's stop.
 * 0: armed; 1: parent has already ended; -1: failed, with errno. */
int sb_watch_arm(sb_watch *w, pid_t parent);

/* Blocks until parent has ended or SIGTERM arrived. */
void sb_watch_wait(sb_watch *w);

/* Closes every descriptor except keep. */
void sb_watch_close_fds(int keep);

#endif
