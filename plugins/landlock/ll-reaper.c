/* ll-reaper.c: nothing of a Landlock run outlives kgate, however kgate
 * ends and whatever the machine's PID 1 does (issue 43.4).
 *
 * There is no PID namespace whose end takes the run along.  While kgate
 * lives it is the run's child subreaper and kills what is left after the
 * program (proctree.h).  Killed with SIGKILL, it can do nothing: the guard
 * (kgl-guard.c) kills the program's process group, but a process that
 * called setsid, or whose parent ended before it, is in no group the guard
 * knows, and went to kgate as an orphan; with kgate gone it goes on to the
 * machine's PID 1, alive, and nothing kills it.
 *
 * So the launch child, right after its setsid, forks: the parent stays
 * as the reaper, outside the box (no Landlock domain, no seccomp filter of
 * kgate's), and the child goes on to lock itself in and exec the program.
 * The reaper is the child subreaper of everything below it, so every
 * orphan of the run comes to it, never past it to kgate, and it reaps
 * them (none waits as a zombie for a PID 1 that may never reap).  When
 * its one child (the program, or the supervisor above it) ends, the
 * reaper ends the same way, so the core sees the program's status; what
 * it leaves goes to kgate, the subreaper above it, which ends the rest as
 * before.  When kgate dies instead (its parent-death signal, SIGTERM,
 * and its parent is no longer kgate), it SIGKILLs every child it has, in
 * rounds, reaping them, until it has none: a process killed hands its
 * own children to the reaper, and one with SIGKILL pending cannot fork,
 * so a fork loop converges as the core's rounds do.
 *
 * It is a fork of kgate's launch child that never execs: system calls
 * only.  Every signal stays blocked (the child was forked so); SIGCHLD
 * and SIGTERM are taken with sigwaitinfo.  The core signals the program's
 * group, which the reaper leads: a SIGTERM then comes while its parent is
 * still kgate, and is not kgate's death. */
#include "ll-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* SIGKILL to every child listed in cfd (/proc/thread-self/children):
 * each is ours and not yet reaped, so its pid cannot have been reused. */
static void kill_children(int cfd)
{
    char buf[4096];
    long pid = 0;
    int in = 0;
    ssize_t n;
    if (lseek(cfd, 0, SEEK_SET) < 0) return;
    while ((n = read(cfd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] >= '0' && buf[i] <= '9') {
                pid = pid * 10 + (buf[i] - '0');
                in = 1;
            } else if (in) {
                kill((pid_t)pid, SIGKILL);
                pid = 0;
                in = 0;
            }
        }
    }
    if (in) kill((pid_t)pid, SIGKILL);
}

/* kgate is gone: every process below the reaper is killed and reaped,
 * round after round, until it has no child left. */
static _Noreturn void kill_all(int cfd)
{
    const struct timespec tick = {0, 2 * 1000 * 1000};
    for (;;) {
        kill_children(cfd);
        pid_t w;
        while ((w = waitpid(-1, NULL, WNOHANG | __WALL)) > 0) {}
        if (w < 0 && errno == ECHILD) _exit(137);
        nanosleep(&tick, NULL);
    }
}

/* Reaps every child that has ended; 1 with *st once the main one has. */
static int reap(pid_t main_pid, int *st)
{
    int s = 0, done = 0;
    pid_t w;
    while ((w = waitpid(-1, &s, WNOHANG | __WALL)) > 0)
        if (w == main_pid) {
            *st = s;
            done = 1;
        }
    return done;
}

static _Noreturn void reaper_main(int cfd, pid_t kgate, pid_t main_pid)
{
    bool orphan = kgl_tie_to_parent(SIGTERM, kgate) < 0;
    /* Nothing of kgate's or the child's: a copy of the spawn report or of
     * the lock-in pipe held here would keep kgate waiting for its EOF. */
    for (int fd = 0; fd < cfd; fd++) close(fd);
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)cfd + 1, ~0U, 0U) < 0)
#endif
        for (int fd = cfd + 1; fd < 4096; fd++) close(fd);
    prctl(PR_SET_NAME, "kgate-reaper", 0, 0, 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    int st = 0;
    for (;;) {
        if (orphan || getppid() != kgate) kill_all(cfd);
        if (reap(main_pid, &st)) kgl_end_like(st);
        siginfo_t si;
        if (sigwaitinfo(&set, &si) < 0 && errno != EINTR) kill_all(cfd);
    }
}

int ll_reaper_fork(void)
{
    pid_t kgate = getppid();
    /* Fail closed: a reaper that cannot list its children could not kill
     * them.  (This thread's list: the reaper is this very task.) */
    int cfd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
    if (cfd < 0) return -1;
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
        close(cfd);
        return -1;
    }
    /* SIGCHLD at its default before the fork (kgate's caller may have
     * ignored it, and an ignored SIGCHLD reaps the child itself, status
     * and all, before the reaper could see it); the program's as it was. */
    struct sigaction dfl, was;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    if (sigaction(SIGCHLD, &dfl, &was) < 0) {
        close(cfd);
        return -1;
    }
    pid_t self = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(cfd);
        return -1;
    }
    if (pid > 0) reaper_main(cfd, kgate, pid);
    close(cfd);
    if (sigaction(SIGCHLD, &was, NULL) < 0) return -1;
    /* The subreaper flag is not inherited; the reaper's death (a program
     * that killed it) takes this process along. */
    return kgl_tie_to_parent(SIGKILL, self);
}

/* The TMPDIR cleaner, woken by the same death of kgate, must not remove
 * the tree while the reaper is still killing what could write into it:
 * kgate hands it a pidfd of the reaper (kgate's own child, not reaped
 * yet, so the pid is the reaper's), and the cleaner waits for its end. */
void ll_reaper_tell(int sock, pid_t reaper)
{
    int fd = (int)syscall(SYS_pidfd_open, reaper, 0);
    if (fd < 0) return;
    (void)kgl_send_fd(sock, fd, 'P');
    close(fd);
}

void ll_reaper_await(int sock, int ms)
{
    /* Nothing told: kgate died before the launch, nothing of the run
     * ever ran. */
    int fd = kgl_recv_fd(sock, MSG_DONTWAIT, NULL);
    if (fd < 0) return;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (poll(&p, 1, ms) < 0 && errno == EINTR) {}
    close(fd);
}
