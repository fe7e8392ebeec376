/* The bubblewrap backend against the real bwrap: probe THOROUGH, plan,
 * launch, read the output, wait.  Each test runs twice: as the user running
 * the suite and, when that is root, as uid 65534 (check forks every test,
 * so a test may drop its privileges for good).  Nothing is timed; a sandbox
 * that outlives its launcher makes the orphan test hang until the check
 * timeout, which fails it. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bwrap-internal.h"
#include "host.h"
#include "testutil.h"

#define TEST_UID 65534
#define TEST_GID 65534

/* Under /var/tmp, not /tmp: the sandbox replaces /tmp, which would hide a
 * home there even without the tmpfs on $HOME that this should test. */
static char root[64], home[96], proj[128], secret[128], gitconfig[128], envfile[160], privdir[160],
    privfile[192], hooks[160], hookfile[192];

static char *slurp_file(const char *p, char *buf, size_t n)
{
    buf[0] = '\0';
    int fd = open(p, O_RDONLY);
    if (fd < 0) return buf;
    ssize_t r = read(fd, buf, n - 1);
    close(fd);
    buf[r > 0 ? r : 0] = '\0';
    return buf;
}

static void run_cmd(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
}

/* A fake home with a secret, a project with a .env, a private directory
 * and hooks, owned by whoever the test runs as.  Returns 0 when the test
 * should go on, 1 when this variant cannot run here. */
static int prepare(int as_user)
{
    snprintf(root, sizeof root, "/var/tmp/kgbw-run.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    ck_assert_int_eq(chmod(root, 0755), 0);
    snprintf(home, sizeof home, "%s/home", root);
    snprintf(proj, sizeof proj, "%s/proj", home);
    snprintf(secret, sizeof secret, "%s/secret.txt", home);
    snprintf(gitconfig, sizeof gitconfig, "%s/.gitconfig", home);
    snprintf(envfile, sizeof envfile, "%s/.env", proj);
    snprintf(privdir, sizeof privdir, "%s/private", proj);
    snprintf(privfile, sizeof privfile, "%s/key", privdir);
    snprintf(hooks, sizeof hooks, "%s/hooks", proj);
    snprintf(hookfile, sizeof hookfile, "%s/pre-commit", hooks);
    ck_assert_int_eq(mkdir(home, 0755), 0);
    ck_assert_int_eq(mkdir(proj, 0755), 0);
    ck_assert_int_eq(mkdir(privdir, 0755), 0);
    ck_assert_int_eq(mkdir(hooks, 0755), 0);
    kgt_write_text(secret, "SECRET-IN-HOME\n");
    kgt_write_text(gitconfig, "GITCONFIG-READABLE\n");
    kgt_write_text(envfile, "ENV-SECRET\n");
    kgt_write_text(privfile, "PRIVATE-KEY\n");
    kgt_write_text(hookfile, "ORIGINAL-HOOK\n");
    if (as_user && getuid() == 0) {
        const char *ckfork = getenv("CK_FORK");
        if (ckfork && strcmp(ckfork, "no") == 0) {
            fprintf(stderr, "CK_FORK=no: the unprivileged variant is not run\n");
            return 1;
        }
        char *chown_argv[] = {"/bin/chown", "-R", "65534:65534", root, NULL};
        run_cmd(chown_argv);
        ck_assert_int_eq(setgroups(0, NULL), 0);
        ck_assert_int_eq(setresgid(TEST_GID, TEST_GID, TEST_GID), 0);
        ck_assert_int_eq(setresuid(TEST_UID, TEST_UID, TEST_UID), 0);
    }
    return 0;
}

static void cleanup(void)
{
    /* As 65534 the tree may not be removable by us; the rm runs as who we
     * are now, and what stays in /var/tmp is only test data. */
    char *argv[] = {"/bin/rm", "-rf", root, NULL};
    run_cmd(argv);
}

typedef struct sandbox {
    kg_host host;
    kgate_probe probe;
    kgate_policy pol;
    kgate_plan *plan;
    kgate_proc proc;
    kgate_err err;
    const char *argv[4];
    const char *reads[1], *denies[2], *prot[1];
    char env_home[160];
    const char *envp[3];
    int out_r;
} sandbox;

/* Probes thoroughly and fills a policy that runs /bin/sh -c script. */
static int sandbox_init(sandbox *s, const char *script)
{
    memset(s, 0, sizeof *s);
    s->out_r = -1;
    kg_host_init(&s->host);
    kgate_probe_init(&s->probe);
    ck_assert_int_eq(bwrap_probe(&s->host.pub, KGATE_PROBE_THOROUGH, &s->probe, &s->err), 0);
    if (!s->probe.available) {
        const char *must = getenv("KGATE_MUST_WORK");
        ck_assert_msg(!(must && *must), "bwrap unusable: %s", s->probe.reason);
        fprintf(stderr, "skipped: %s\n", s->probe.reason);
        return -1;
    }
    s->pol.struct_size = sizeof s->pol;
    s->pol.network = KGATE_NET_OFF;
    s->pol.project = proj;
    s->pol.home = home;
    s->pol.uid = getuid();
    s->pol.gid = getgid();
    s->reads[0] = gitconfig;
    s->denies[0] = envfile;
    s->denies[1] = privdir;
    s->prot[0] = hooks;
    s->pol.read_paths = (kgate_strlist){s->reads, 1};
    s->pol.deny_read = (kgate_strlist){s->denies, 2};
    s->pol.protect_paths = (kgate_strlist){s->prot, 1};
    s->argv[0] = "sh";
    s->argv[1] = "-c";
    s->argv[2] = script;
    s->pol.argv = (kgate_strlist){s->argv, 3};
    s->pol.command_path = "/bin/sh";
    snprintf(s->env_home, sizeof s->env_home, "HOME=%s", home);
    s->envp[0] = "PATH=/usr/bin:/bin";
    s->envp[1] = s->env_home;
    s->envp[2] = NULL;
    s->plan = kg_plan_new();
    ck_assert_msg(bwrap_plan(&s->host.pub, &s->pol, &s->probe, s->plan, &s->err) == 0, "plan: %s",
                  s->err.msg);
    return 0;
}

/* Launches with stdin /dev/null and stdout+stderr into one pipe. */
static int sandbox_launch(sandbox *s)
{
    int p[2];
    ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(devnull, 0);
    kgate_launch io = {.struct_size = sizeof io,
                       .stdin_fd = devnull,
                       .stdout_fd = p[1],
                       .stderr_fd = p[1],
                       .envp = s->envp};
    s->proc.struct_size = sizeof s->proc;
    int r = bwrap_launch(&s->host.pub, &s->pol, &s->probe, s->plan, &io, &s->proc, &s->err);
    close(p[1]);
    close(devnull);
    s->out_r = p[0];
    return r;
}

/* Reads until needle shows up (or EOF when needle is NULL). */
static void read_until(int fd, char *buf, size_t n, const char *needle)
{
    size_t got = strlen(buf);
    while (got + 1 < n && !(needle && strstr(buf, needle))) {
        ssize_t r = read(fd, buf + got, n - 1 - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
        buf[got] = '\0';
    }
}

static int wait_status(pid_t pid)
{
    int st = -1;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return st;
}

START_TEST(filesystem_box)
{
    if (prepare(_i)) return;
    char script[2048];
    snprintf(script, sizeof script,
             "cat %s 2>/dev/null && echo LEAK-HOME-SECRET\n"
             "echo overwritten > %s && echo HOME-WRITE-IN-TMPFS\n"
             "cat %s\n"
             "echo written > %s/new-file || echo PROJECT-NOT-WRITABLE\n"
             "echo \"env:[$(cat %s)]\"\n"
             "test -r %s && cat %s >/dev/null && echo DENY-READ-OPENS\n"
             "echo \"priv:[$(ls -A %s)]\"\n"
             "echo x > %s 2>/dev/null && echo HOOK-WRITABLE\n"
             "touch /etc/kgbw-probe 2>/dev/null && echo ETC-WRITABLE\n"
             "echo \"pwd:$(pwd)\"\n",
             secret, secret, gitconfig, proj, envfile, envfile, envfile, privdir, hookfile);
    sandbox s;
    if (sandbox_init(&s, script) < 0) goto out;
    ck_assert_msg(sandbox_launch(&s) == 0, "launch: %s", s.err.msg);
    char out[8192] = "";
    read_until(s.out_r, out, sizeof out, NULL);
    int st = wait_status(s.proc.pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, out);
    ck_assert_msg(!strstr(out, "LEAK-HOME-SECRET"), "%s", out);
    ck_assert_msg(strstr(out, "HOME-WRITE-IN-TMPFS"), "%s", out);
    ck_assert_msg(strstr(out, "GITCONFIG-READABLE"), "%s", out);
    ck_assert_msg(!strstr(out, "PROJECT-NOT-WRITABLE"), "%s", out);
    ck_assert_msg(strstr(out, "env:[]"), "%s", out);
    /* Hidden means empty, not unopenable: tools read such files. */
    ck_assert_msg(strstr(out, "DENY-READ-OPENS"), "%s", out);
    ck_assert_msg(strstr(out, "priv:[]"), "%s", out);
    ck_assert_msg(!strstr(out, "HOOK-WRITABLE"), "%s", out);
    ck_assert_msg(!strstr(out, "ETC-WRITABLE"), "%s", out);
    char want[192];
    snprintf(want, sizeof want, "pwd:%s\n", proj);
    ck_assert_msg(strstr(out, want), "%s", out);
    char buf[256], path[192];
    ck_assert_str_eq(slurp_file(secret, buf, sizeof buf), "SECRET-IN-HOME\n");
    ck_assert_str_eq(slurp_file(hookfile, buf, sizeof buf), "ORIGINAL-HOOK\n");
    snprintf(path, sizeof path, "%s/new-file", proj);
    ck_assert_str_eq(slurp_file(path, buf, sizeof buf), "written\n");
    close(s.out_r);
    kg_plan_free(s.plan);
out:
    cleanup();
}
END_TEST

START_TEST(quick_exit_status_comes_back)
{
    if (prepare(_i)) return;
    sandbox s;
    if (sandbox_init(&s, "exit 7") < 0) goto out;
    ck_assert_msg(sandbox_launch(&s) == 0, "launch: %s", s.err.msg);
    char out[512] = "";
    read_until(s.out_r, out, sizeof out, NULL);
    int st = wait_status(s.proc.pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 7, "status %d: %s", st, out);
    close(s.out_r);
    kg_plan_free(s.plan);
out:
    cleanup();
}
END_TEST

/* Launch adds the seccomp filter (docs/escapes.md): the program runs in
 * filter mode, no host socket directory is visible, and the filter's own
 * descriptor is not left open in the program. */
START_TEST(escapes_closed_at_launch)
{
    if (prepare(_i)) return;
    sandbox s;
    if (sandbox_init(&s, "grep '^Seccomp:' /proc/self/status; ls -A /run; "
                         "ls -l /proc/self/fd | grep -c memfd:kgate") < 0)
        goto out;
    ck_assert_msg(sandbox_launch(&s) == 0, "launch: %s", s.err.msg);
    char out[1024] = "";
    read_until(s.out_r, out, sizeof out, NULL);
    int st = wait_status(s.proc.pid);
    /* grep -c prints 0 and exits 1 when no descriptor is left */
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d: %s", st, out);
    ck_assert_msg(strstr(out, "Seccomp:\t2\n"), "no filter: %s", out);
    ck_assert_msg(strstr(out, "\nuser\n0\n"), "unexpected /run or fd: %s", out);
    close(s.out_r);
    kg_plan_free(s.plan);
out:
    cleanup();
}
END_TEST

/* The core's stdout and stderr descriptors may already be 2 and 1
 * (crossed), or 0: the child must not clobber one with another. */
START_TEST(crossed_stdio_descriptors)
{
    if (prepare(_i)) return;
    sandbox s;
    if (sandbox_init(&s, "echo to-stdout; echo to-stderr >&2") < 0) goto out;
    int a[2], b[2];
    ck_assert_int_eq(pipe(a), 0);
    ck_assert_int_eq(pipe(b), 0);
    int save1 = dup(1), save2 = dup(2);
    ck_assert_int_eq(dup2(a[1], 2), 2); /* stdout's pipe sits at fd 2 */
    ck_assert_int_eq(dup2(b[1], 1), 1); /* stderr's pipe sits at fd 1 */
    close(a[1]);
    close(b[1]);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    kgate_launch io = {.struct_size = sizeof io,
                       .stdin_fd = devnull,
                       .stdout_fd = 2,
                       .stderr_fd = 1,
                       .envp = s.envp};
    s.proc.struct_size = sizeof s.proc;
    int r = bwrap_launch(&s.host.pub, &s.pol, &s.probe, s.plan, &io, &s.proc, &s.err);
    dup2(save1, 1);
    dup2(save2, 2);
    close(save1);
    close(save2);
    close(devnull);
    ck_assert_msg(r == 0, "launch: %s", s.err.msg);
    char out[256] = "", errout[256] = "";
    read_until(a[0], out, sizeof out, NULL);
    read_until(b[0], errout, sizeof errout, NULL);
    wait_status(s.proc.pid);
    ck_assert_str_eq(out, "to-stdout\n");
    ck_assert_str_eq(errout, "to-stderr\n");
    close(a[0]);
    close(b[0]);
    kg_plan_free(s.plan);
out:
    cleanup();
}
END_TEST

START_TEST(signal_reaches_program)
{
    if (prepare(_i)) return;
    sandbox s;
    if (sandbox_init(&s, "trap 'echo got-term; exit 3' TERM; echo ready; "
                         "sleep 30 & wait") < 0)
        goto out;
    ck_assert_msg(sandbox_launch(&s) == 0, "launch: %s", s.err.msg);
    ck_assert_int_lt(s.proc.signal_pid, 0);
    char out[4096] = "";
    read_until(s.out_r, out, sizeof out, "ready\n");
    ck_assert_int_eq(kill(s.proc.signal_pid, SIGTERM), 0);
    read_until(s.out_r, out, sizeof out, NULL);
    int st = wait_status(s.proc.pid);
    ck_assert_msg(strstr(out, "got-term"), "%s", out);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %d", st);
    close(s.out_r);
    kg_plan_free(s.plan);
out:
    cleanup();
}
END_TEST

static int pidfd_open_(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

/* Every descendant of pid, through /proc/P/task/P/children. */
static size_t descendants(pid_t pid, pid_t *out, size_t max, size_t n)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    slurp_file(path, buf, sizeof buf);
    char *save = NULL;
    for (char *t = strtok_r(buf, " \n", &save); t && n < max; t = strtok_r(NULL, " \n", &save)) {
        out[n++] = (pid_t)atoi(t);
        n = descendants(out[n - 1], out, max, n);
    }
    return n;
}

START_TEST(no_orphans_when_launcher_killed)
{
    if (prepare(_i)) return;
    sandbox s;
    if (sandbox_init(&s, "sleep 1000 & sleep 1001 & echo ready; wait") < 0) goto out;
    int report[2];
    ck_assert_int_eq(pipe(report), 0);
    pid_t launcher = fork();
    ck_assert_int_ge(launcher, 0);
    if (launcher == 0) {
        /* The stand-in for kgate: launch, wait for the program, then sit
         * until it is SIGKILLed. */
        close(report[0]);
        if (sandbox_launch(&s) < 0) _exit(2);
        char out[256] = "";
        read_until(s.out_r, out, sizeof out, "ready\n");
        pid_t init = -s.proc.signal_pid;
        if (write(report[1], &init, sizeof init) != sizeof init) _exit(3);
        for (;;) pause();
    }
    close(report[1]);
    pid_t init = 0;
    ck_assert_int_eq(read(report[0], &init, sizeof init), (ssize_t)sizeof init);
    close(report[0]);
    pid_t all[32];
    size_t n = descendants(launcher, all, 32, 0);
    ck_assert_uint_ge(n, 5); /* outer bwrap, pid 1, sh, two sleeps */
    int fds[32];
    for (size_t i = 0; i < n; i++) ck_assert_int_ge(fds[i] = pidfd_open_(all[i]), 0);
    ck_assert_int_eq(kill(launcher, SIGKILL), 0);
    wait_status(launcher);
    for (size_t i = 0; i < n; i++) {
        struct pollfd p = {.fd = fds[i], .events = POLLIN};
        while (poll(&p, 1, -1) < 0 && errno == EINTR) {}
        ck_assert(p.revents & POLLIN);
        close(fds[i]);
    }
    kg_plan_free(s.plan);
out:
    cleanup();
}
END_TEST

/* bwrap follows a symlink above a destination (its own check after
 * --bind-fd looks only at the last component), so launch checks each
 * destination inside the sandbox before the program starts
 * (kgl-pin.c).  proj/link -> private: the bind lands on private/sub,
 * the check walks proj/link/sub without following links, and nothing
 * runs.  The control: the same plan through proj/private/sub runs, and
 * the program holds none of the bind descriptors. */
START_TEST(symlinked_destination_fails_closed)
{
    sandbox s;
    if (prepare(_i)) return;
    char sub[256], link[256], marker[256], dest[256], src[256];
    snprintf(sub, sizeof sub, "%s/sub", privdir);
    snprintf(link, sizeof link, "%s/link", proj);
    snprintf(dest, sizeof dest, "%s/link/sub", proj);
    snprintf(src, sizeof src, "%s/hooks", proj);
    snprintf(marker, sizeof marker, "%s/ran", proj);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    ck_assert_int_eq(symlink("private", link), 0);
    for (int round = 0; round < 2; round++) {
        if (sandbox_init(&s, "echo fds; ls /proc/self/fd; touch ran") < 0) goto out;
        kg_plan_free(s.plan);
        s.plan = kg_plan_new();
        const kgate_host *h = &s.host.pub;
        const char *args[] = {s.probe.tool_path,
                              "--unshare-user",
                              "--ro-bind",
                              "/",
                              "/",
                              "--bind",
                              proj,
                              proj,
                              "--ro-bind",
                              src,
                              round ? sub : dest,
                              "--chdir",
                              proj,
                              "--",
                              "/bin/sh",
                              "-c",
                              "ls -l /proc/self/fd; touch ran"};
        for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) h->plan_arg(s.plan, args[i]);
        int r = sandbox_launch(&s);
        char out[512] = "";
        if (round == 0) {
            ck_assert_int_eq(r, -1);
            ck_assert_msg(strstr(s.err.msg, "not the one kgate checked") &&
                              strstr(s.err.msg, "symbolic link"),
                          "%s", s.err.msg);
            ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
            ck_assert_int_eq(access(marker, F_OK), -1);
        } else {
            ck_assert_msg(r == 0, "control: %s", s.err.msg);
            read_until(s.out_r, out, sizeof out, NULL);
            ck_assert_int_eq(wait_status(s.proc.pid), 0);
            ck_assert_int_eq(access(marker, F_OK), 0);
            /* no descriptor of a bind source reached the program */
            ck_assert_msg(strstr(out, "/dev/null") && !strstr(out, src) && !strstr(out, proj),
                          "fds: %s", out);
        }
        close(s.out_r);
        kg_plan_free(s.plan);
    }
out:
    cleanup();
}
END_TEST

START_TEST(bwrap_failure_is_a_launch_error)
{
    if (prepare(_i)) return;
    sandbox s;
    if (sandbox_init(&s, "true") < 0) goto out;
    kg_plan_free(s.plan);
    s.plan = kg_plan_new();
    const kgate_host *h = &s.host.pub;
    h->plan_arg(s.plan, s.probe.tool_path);
    h->plan_arg(s.plan, "--uid");
    h->plan_arg(s.plan, "not-a-number");
    h->plan_arg(s.plan, "--");
    h->plan_arg(s.plan, "/bin/true");
    ck_assert_int_eq(sandbox_launch(&s), -1);
    ck_assert_msg(strstr(s.err.msg, "could not create the sandbox"), "%s", s.err.msg);
    /* Nothing of it is left to wait for. */
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    close(s.out_r);
    kg_plan_free(s.plan);

    /* A bind source that vanished between plan and launch: launch opens
     * it itself (kgl-pin.c), so bwrap never starts. */
    s.plan = kg_plan_new();
    h->plan_arg(s.plan, s.probe.tool_path);
    h->plan_arg(s.plan, "--unshare-user");
    h->plan_arg(s.plan, "--ro-bind");
    h->plan_arg(s.plan, "/");
    h->plan_arg(s.plan, "/");
    h->plan_arg(s.plan, "--ro-bind");
    h->plan_arg(s.plan, "/nonexistent/kgbw-source");
    h->plan_arg(s.plan, "/mnt");
    h->plan_arg(s.plan, "--");
    h->plan_arg(s.plan, "/bin/true");
    ck_assert_int_eq(sandbox_launch(&s), -1);
    ck_assert_msg(strstr(s.err.msg, "/nonexistent/kgbw-source changed"), "%s", s.err.msg);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    close(s.out_r);
    kg_plan_free(s.plan);

    /* A mount that fails after the namespaces exist (no mount point can be
     * made in the read-only root) is still a launch error, not exit 1. */
    s.plan = kg_plan_new();
    h->plan_arg(s.plan, s.probe.tool_path);
    h->plan_arg(s.plan, "--unshare-user");
    h->plan_arg(s.plan, "--ro-bind");
    h->plan_arg(s.plan, "/");
    h->plan_arg(s.plan, "/");
    h->plan_arg(s.plan, "--tmpfs");
    h->plan_arg(s.plan, "/nonexistent/kgbw-source");
    h->plan_arg(s.plan, "--");
    h->plan_arg(s.plan, "/bin/true");
    ck_assert_int_eq(sandbox_launch(&s), -1);
    ck_assert_msg(strstr(s.err.msg, "could not set up the sandbox"), "%s", s.err.msg);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    char out[512] = "";
    read_until(s.out_r, out, sizeof out, NULL);
    ck_assert_msg(strstr(out, "kgbw-source"), "bwrap's own message: %s", out);
    close(s.out_r);
    kg_plan_free(s.plan);

    /* An unreachable project is refused before bwrap runs. */
    sandbox_init(&s, "true");
    s.pol.project = "/nonexistent/kgbw";
    ck_assert_int_eq(sandbox_launch(&s), -1);
    ck_assert_msg(strstr(s.err.msg, "enter the project"), "%s", s.err.msg);
    close(s.out_r);
    kg_plan_free(s.plan);
out:
    cleanup();
}
END_TEST

int main(void)
{
    Suite *su = suite_create("bwrap_launch");
    TCase *tc = tcase_create("launch");
    /* 0: as whoever runs the suite; 1: as uid 65534 when that is root. */
    int variants = getuid() == 0 ? 2 : 1;
    tcase_add_loop_test(tc, filesystem_box, 0, variants);
    tcase_add_loop_test(tc, quick_exit_status_comes_back, 0, variants);
    tcase_add_loop_test(tc, crossed_stdio_descriptors, 0, variants);
    tcase_add_loop_test(tc, signal_reaches_program, 0, variants);
    tcase_add_loop_test(tc, no_orphans_when_launcher_killed, 0, variants);
    tcase_add_loop_test(tc, bwrap_failure_is_a_launch_error, 0, variants);
    tcase_add_loop_test(tc, escapes_closed_at_launch, 0, variants);
    tcase_add_loop_test(tc, symlinked_destination_fails_closed, 0, variants);
    suite_add_tcase(su, tc);
    return kgt_run_suite(su);
}
