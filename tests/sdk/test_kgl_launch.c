/* test_kgl_launch.c: the SDK support library's launch pieces
 * (sdk/linux/kgl-launch.c): the spawn helper's one failure protocol, the
 * setup gate, and bwrap's info. */
#include "testutil.h"

#include "kgate/kgate-linux.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *const no_env[] = {"PATH=/usr/bin:/bin", NULL};

static int status_of(pid_t pid)
{
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    return st;
}

/* A spawn of /bin/sh -c script, with stdout into *out (a pipe's read
 * end) when out is not NULL. */
static kgl_spawn sh(char **argv, const char *script)
{
    argv[0] = (char *)"/bin/sh";
    argv[1] = (char *)"-c";
    argv[2] = (char *)script;
    argv[3] = NULL;
    kgl_spawn s = {
        .path = "/bin/sh",
        .argv = argv,
        .envp = no_env,
        .stdio = {-1, -1, -1},
    };
    return s;
}

static void read_all(int fd, char *buf, size_t n)
{
    size_t got = 0;
    ssize_t r;
    while (got < n - 1 && (r = read(fd, buf + got, n - 1 - got)) > 0) got += (size_t)r;
    buf[got] = '\0';
}

/* ---- the spawn helper ---------------------------------------------------- */

START_TEST(exec_returns_the_pid_and_the_status_is_the_programs)
{
    /* 125 and 127 are the statuses a child that fails reports by; from a
     * program that ran they must come back as its own, with no error. */
    static const int codes[] = {0, 7, 125, 127};
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
        char script[32], *argv[4];
        snprintf(script, sizeof script, "exit %d", codes[i]);
        kgl_spawn s = sh(argv, script);
        kgate_err err = {0};
        pid_t pid = kgl_spawn_run(&s, &err);
        ck_assert_msg(pid > 0, "%s", err.msg);
        ck_assert_str_eq(err.msg, "");
        int st = status_of(pid);
        ck_assert(WIFEXITED(st));
        ck_assert_int_eq(WEXITSTATUS(st), codes[i]);
    }
}
END_TEST

START_TEST(stdio_dir_and_passed_fds_reach_the_program)
{
    int out[2], extra[2];
    ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(extra, O_CLOEXEC), 0);
    char script[128], *argv[4];
    snprintf(script, sizeof script, "pwd; { echo passed >&%d; } 2>/dev/null", extra[1]);
    for (int passed = 0; passed < 2; passed++) {
        kgl_spawn s = sh(argv, script);
        s.stdio[1] = out[1];
        s.dir = "/usr";
        /* The control: not passed, the close-on-exec descriptor is gone
         * in the program and the shell's echo fails. */
        s.pass = &extra[1];
        s.n_pass = passed ? 1 : 0;
        kgate_err err = {0};
        pid_t pid = kgl_spawn_run(&s, &err);
        ck_assert_msg(pid > 0, "%s", err.msg);
        int st = status_of(pid);
        ck_assert(WIFEXITED(st));
        ck_assert_int_eq(WEXITSTATUS(st) == 0, passed);
    }
    close(out[1]);
    close(extra[1]);
    char buf[256];
    read_all(out[0], buf, sizeof buf);
    ck_assert_str_eq(buf, "/usr\n/usr\n");
    read_all(extra[0], buf, sizeof buf);
    ck_assert_str_eq(buf, "passed\n");
    close(out[0]);
    close(extra[0]);
}
END_TEST

/* Without a prepare the child shares kgate's memory until its exec
 * (kgl-launch.c, spawn_shared), never its descriptors, directory or
 * signal dispositions: what the child changes of those before its exec
 * must not reach kgate.  A child that shared them (CLONE_FILES, CLONE_FS,
 * CLONE_SIGHAND) fails here. */
static void on_usr2(int sig) { (void)sig; }

START_TEST(the_child_changes_nothing_of_kgate)
{
    struct sigaction sa, now;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    ck_assert_int_eq(sigaction(SIGUSR2, &sa, NULL), 0);
    char before[PATH_MAX], after[PATH_MAX];
    ck_assert_ptr_nonnull(getcwd(before, sizeof before));
    int out[2], extra[2];
    ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(extra, O_CLOEXEC), 0);
    struct stat fd1_before, fd1_after;
    ck_assert_int_eq(fstat(1, &fd1_before), 0);
    char *argv[4];
    kgl_spawn s = sh(argv, "exit 0");
    s.stdio[1] = out[1];
    s.dir = "/usr";
    s.pass = &extra[1];
    s.n_pass = 1;
    s.new_group = 1;
    kgate_err err = {0};
    pid_t pid = kgl_spawn_run(&s, &err);
    ck_assert_msg(pid > 0, "%s", err.msg);
    ck_assert_int_eq(status_of(pid), 0);
    ck_assert_ptr_nonnull(getcwd(after, sizeof after));
    ck_assert_str_eq(after, before);
    ck_assert_int_eq(sigaction(SIGUSR2, NULL, &now), 0);
    ck_assert(now.sa_handler == on_usr2);
    ck_assert_int_eq(fstat(1, &fd1_after), 0);
    ck_assert(fd1_after.st_dev == fd1_before.st_dev && fd1_after.st_ino == fd1_before.st_ino);
    ck_assert_int_eq(fcntl(extra[1], F_GETFD), FD_CLOEXEC);
    ck_assert_int_eq(getpgrp(), getpgid(0));
    ck_assert_int_ne(getpgrp(), pid);
    sigset_t mask;
    ck_assert_int_eq(sigprocmask(SIG_SETMASK, NULL, &mask), 0);
    ck_assert(!sigismember(&mask, SIGTERM));
    signal(SIGUSR2, SIG_DFL);
    close(out[0]);
    close(out[1]);
    close(extra[0]);
    close(extra[1]);
}
END_TEST

/* Each failing step comes back as an error that names it, with its errno,
 * and the child leaves no zombie (finish reaped it). */
static void expect_step(kgl_spawn *s, int code, const char *phrase)
{
    kgate_err err = {0};
    ck_assert_int_eq(kgl_spawn_run(s, &err), -1);
    ck_assert_msg(strstr(err.msg, phrase), "%s", err.msg);
    ck_assert_msg(strstr(err.msg, strerror(code)), "%s", err.msg);
    ck_assert_int_eq(err.code, code);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD);
}

START_TEST(exec_failure_is_an_error)
{
    char *argv[4];
    kgl_spawn s = sh(argv, "exit 0");
    s.path = "/nonexistent/kgl-program";
    expect_step(&s, ENOENT, "could not execute /nonexistent/kgl-program");
}
END_TEST

START_TEST(chdir_failure_is_an_error)
{
    char *argv[4];
    kgl_spawn s = sh(argv, "exit 0");
    s.dir = "/nonexistent/kgl-project";
    expect_step(&s, ENOENT, "could not enter the project /nonexistent/kgl-project");
}
END_TEST

START_TEST(fd_failure_is_an_error)
{
    char *argv[4];
    kgl_spawn s = sh(argv, "exit 0");
    static const int bad = 1000; /* not open */
    s.pass = &bad;
    s.n_pass = 1;
    expect_step(&s, EBADF, "could not pass descriptors to /bin/sh");
}
END_TEST

START_TEST(stdio_failure_is_an_error)
{
    char *argv[4];
    kgl_spawn s = sh(argv, "exit 0");
    /* Refused before the fork: a stdio descriptor that is not open. */
    s.stdio[1] = 1000;
    kgate_err err = {0};
    ck_assert_int_eq(kgl_spawn_run(&s, &err), -1);
    ck_assert_msg(strstr(err.msg, "cannot start /bin/sh"), "%s", err.msg);
    ck_assert_int_eq(err.code, EBADF);
}
END_TEST

START_TEST(group_failure_is_an_error)
{
    char *argv[4];
    kgl_spawn s = sh(argv, "exit 0");
    /* A group in another session: setpgid refuses to join it. */
    int ready[2];
    ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
    pid_t other = fork();
    ck_assert_int_ge(other, 0);
    if (other == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (setsid() < 0 || write(ready[1], "s", 1) != 1) _exit(1);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char c;
    ck_assert_int_eq(read(ready[0], &c, 1), 1);
    close(ready[0]);
    s.group = other;
    kgate_err err = {0};
    pid_t r = kgl_spawn_run(&s, &err);
    kill(other, SIGKILL);
    status_of(other);
    if (r > 0) status_of(r);
    ck_assert_int_eq(r, -1);
    ck_assert_msg(strstr(err.msg, "could not join the guard's process group for /bin/sh"), "%s",
                  err.msg);
    ck_assert_int_eq(err.code, EPERM);
}
END_TEST

static int prepare_fails(void *ctx)
{
    errno = *(int *)ctx;
    return -1;
}

static int prepare_marks(void *ctx)
{
    /* Runs in the child: what it writes shows it ran there, first. */
    return write(*(int *)ctx, "p", 1) == 1 ? 0 : -1;
}

START_TEST(prepare_failure_is_an_error)
{
    char *argv[4];
    kgl_spawn s = sh(argv, "exit 0");
    int code = EACCES;
    s.prepare = prepare_fails;
    s.ctx = &code;
    s.prepare_name = "set up the network";
    expect_step(&s, EACCES, "could not set up the network for /bin/sh");
    /* The control: a prepare that works lets the program run. */
    int p[2];
    ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
    s.prepare = prepare_marks;
    s.ctx = &p[1];
    kgate_err err = {0};
    pid_t pid = kgl_spawn_run(&s, &err);
    ck_assert_msg(pid > 0, "%s", err.msg);
    ck_assert_int_eq(WEXITSTATUS(status_of(pid)), 0);
    close(p[1]);
    char buf[8];
    read_all(p[0], buf, sizeof buf);
    ck_assert_str_eq(buf, "p");
    close(p[0]);
}
END_TEST

static void on_usr1(int sig) { (void)sig; }

START_TEST(the_program_starts_with_no_mask_and_default_handlers)
{
    /* The core's handler and its mask must not reach the program: with
     * SIGUSR1 handled and blocked here, the program still dies of it. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
    sigset_t usr1, old;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, &old);
    char *argv[4];
    kgl_spawn s = sh(argv, "kill -USR1 $$; exit 0");
    kgate_err err = {0};
    pid_t pid = kgl_spawn_run(&s, &err);
    ck_assert_msg(pid > 0, "%s", err.msg);
    int st = status_of(pid);
    sigprocmask(SIG_SETMASK, &old, NULL);
    ck_assert(WIFSIGNALED(st));
    ck_assert_int_eq(WTERMSIG(st), SIGUSR1);
}
END_TEST

/* ---- bwrap's info ---------------------------------------------------------- */

START_TEST(info_child_pid)
{
    ck_assert_int_eq(kgl_info_child_pid("{\n    \"child-pid\": 4242\n}\n"), 4242);
    ck_assert_int_eq(kgl_info_child_pid("{\"child-pid\":17,\"cgroup-namespace\":1}"), 17);
    ck_assert_int_eq(kgl_info_child_pid(""), 0);
    ck_assert_int_eq(kgl_info_child_pid(NULL), 0);
    ck_assert_int_eq(kgl_info_child_pid("{\"child-pid\": }"), 0);
    ck_assert_int_eq(kgl_info_child_pid("{\"child-pid\": 1}"), 0);
    ck_assert_int_eq(kgl_info_child_pid("{\"pid\": 99}"), 0);
}
END_TEST

/* ---- the setup gate -------------------------------------------------------- */

/* A peer that stands in for bwrap: waits ms, writes a marker to mark
 * (when >= 0), then reads the record (when read_it) and waits for hold to
 * reach EOF before it exits. */
static pid_t peer(const kgl_gate *g, int ms, int mark, int read_it, int hold, int hold_w)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid > 0) return pid;
    if (hold_w >= 0) close(hold_w);
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    if (mark >= 0 && write(mark, "m", 1) != 1) _exit(2);
    if (read_it) {
        char rec[4096];
        if (recv(g->theirs, rec, sizeof rec, 0) <= 0) _exit(3);
    }
    char c;
    if (hold >= 0)
        while (read(hold, &c, 1) > 0) {}
    _exit(0);
}

static int readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 1;
}

START_TEST(gate_done_only_after_the_record_is_read)
{
    kgl_gate g;
    ck_assert_int_eq(kgl_gate_open(&g), 0);
    ck_assert_int_ge(g.theirs, 10);
    ck_assert_int_eq(kgl_gate_arm(&g), 0);
    int mark[2], hold[2];
    ck_assert_int_eq(pipe2(mark, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(hold, O_CLOEXEC), 0);
    pid_t pid = peer(&g, 200, mark[1], 1, hold[0], hold[1]);
    close(hold[0]);
    ck_assert_int_eq(kgl_gate_wait(&g, pid), KGL_GATE_DONE);
    /* The peer marks just before it reads: done came after the mark. */
    ck_assert(readable(mark[0]));
    close(hold[1]);
    ck_assert_int_eq(WEXITSTATUS(status_of(pid)), 0);
    /* A peer that read and exited, with kgate still holding its end, is
     * done too (a short program). */
    kgl_gate_close(&g);
    ck_assert_int_eq(kgl_gate_open(&g), 0);
    ck_assert_int_eq(kgl_gate_arm(&g), 0);
    pid = peer(&g, 0, -1, 1, -1, -1);
    ck_assert_int_eq(WEXITSTATUS(status_of(pid)), 0);
    ck_assert_int_eq(kgl_gate_wait(&g, getpid()), KGL_GATE_DONE);
    kgl_gate_close(&g);
    close(mark[0]);
    close(mark[1]);
}
END_TEST

START_TEST(gate_failed_when_the_peer_exits_first)
{
    kgl_gate g;
    ck_assert_int_eq(kgl_gate_open(&g), 0);
    ck_assert_int_eq(kgl_gate_arm(&g), 0);
    pid_t pid = peer(&g, 100, -1, 0, -1, -1);
    ck_assert_int_eq(kgl_gate_wait(&g, pid), KGL_GATE_FAILED);
    ck_assert_int_eq(WEXITSTATUS(status_of(pid)), 0);
    kgl_gate_close(&g);
}
END_TEST

START_TEST(gate_failed_when_the_peer_is_gone_unread)
{
    /* The peer exits unread and nobody holds its end any more: the kernel
     * purges the record, which makes our end writable as a read would,
     * but hung up.  That is not a read. */
    kgl_gate g;
    ck_assert_int_eq(kgl_gate_open(&g), 0);
    ck_assert_int_eq(kgl_gate_arm(&g), 0);
    pid_t pid = peer(&g, 0, -1, 0, -1, -1);
    close(g.theirs);
    g.theirs = -1;
    ck_assert_int_eq(WEXITSTATUS(status_of(pid)), 0);
    struct pollfd p = {.fd = g.ours, .events = POLLOUT};
    ck_assert_int_eq(poll(&p, 1, 0), 1);
    ck_assert(p.revents & POLLOUT); /* what `& POLLOUT` took for a read */
    ck_assert_int_eq(kgl_gate_wait(&g, getpid()), KGL_GATE_FAILED);
    kgl_gate_close(&g);
}
END_TEST

/* kgl_tie_to_parent, as its attacker: a parent A forks B, which ties
 * itself to A.  Tied while A lives, B dies with A; with A gone before
 * the tie, B is told so (no signal would ever come).  This process is the
 * subreaper that adopts B either way. */
static void tie_child(int parent_first, pid_t a, int a_gone, int word)
{
    char c;
    if (parent_first) { /* A has ended (EOF), and B has been adopted */
        if (read(a_gone, &c, 1) != 0) _exit(3);
        while (getppid() == a) usleep(1000);
    }
    int r = kgl_tie_to_parent(SIGKILL, a);
    char said = r == 0 ? 't' : errno == ESRCH ? 'o' : '?';
    if (write(word, &said, 1) != 1) _exit(4);
    if (r < 0) _exit(0);
    pause(); /* until the parent-death signal */
    _exit(5);
}

START_TEST(tie_to_parent_dies_with_the_parent_or_says_it_cannot)
{
    ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    for (int parent_first = 0; parent_first < 2; parent_first++) {
        int word[2], gone[2];
        ck_assert_int_eq(pipe(word), 0);
        ck_assert_int_eq(pipe(gone), 0);
        pid_t a = fork();
        ck_assert_int_ge(a, 0);
        if (a == 0) {
            /* Taken here: B's getppid() may already be this subreaper. */
            pid_t me = getpid();
            pid_t b = fork();
            if (b < 0) _exit(2);
            if (b == 0) {
                close(gone[1]);
                close(word[0]);
                tie_child(parent_first, me, gone[0], word[1]);
            }
            /* Tied first: A ends only once B has said it is tied. */
            char c;
            if (!parent_first && read(word[0], &c, 1) != 1) _exit(6);
            if (!parent_first && write(word[1], &c, 1) != 1) _exit(7);
            _exit(0); /* closes A's end of gone: B reads its EOF */
        }
        close(gone[0]);
        close(gone[1]);
        close(word[1]);
        ck_assert_int_eq(WEXITSTATUS(status_of(a)), 0);
        char said = 0;
        ck_assert_int_eq(read(word[0], &said, 1), 1);
        close(word[0]);
        int st = 0;
        ck_assert_int_gt(wait(&st), 0); /* B, adopted by this subreaper */
        if (parent_first) {
            ck_assert_int_eq(said, 'o');
            ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        } else {
            ck_assert_int_eq(said, 't');
            ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
                          "the tied child outlived its parent (status %#x)", st);
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kgl_launch");
    TCase *tc = tcase_create("spawn");
    tcase_add_test(tc, exec_returns_the_pid_and_the_status_is_the_programs);
    tcase_add_test(tc, stdio_dir_and_passed_fds_reach_the_program);
    tcase_add_test(tc, exec_failure_is_an_error);
    tcase_add_test(tc, chdir_failure_is_an_error);
    tcase_add_test(tc, fd_failure_is_an_error);
    tcase_add_test(tc, stdio_failure_is_an_error);
    tcase_add_test(tc, group_failure_is_an_error);
    tcase_add_test(tc, prepare_failure_is_an_error);
    tcase_add_test(tc, the_program_starts_with_no_mask_and_default_handlers);
    tcase_add_test(tc, the_child_changes_nothing_of_kgate);
    tcase_add_test(tc, tie_to_parent_dies_with_the_parent_or_says_it_cannot);
    suite_add_tcase(s, tc);
    tc = tcase_create("info");
    tcase_add_test(tc, info_child_pid);
    suite_add_tcase(s, tc);
    tc = tcase_create("gate");
    tcase_add_test(tc, gate_done_only_after_the_record_is_read);
    tcase_add_test(tc, gate_failed_when_the_peer_exits_first);
    tcase_add_test(tc, gate_failed_when_the_peer_is_gone_unread);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
