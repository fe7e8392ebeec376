/* The seatbelt plugin's watcher (plugins/seatbelt/sb-watch.h): no orphans
 * when kgate is killed, and nothing left in the program's group when the
 * core stops the watcher.  Linux only: the tests watch processes through
 * pidfds and collect orphans as a subreaper, and the watcher waits with
 * its Linux counterpart (a pidfd) where macOS uses kqueue; the sessions,
 * the group kill and the start handshake are the same code. */
#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host.h"
#include "kgate/kgate-plugin.h"
#include "testutil.h"

#ifndef SB_PLUGIN_PATH
#error "SB_PLUGIN_PATH must name the built plugin"
#endif

static void *handle;
static const kgate_backend *be;
static kg_host host;

static void load(void)
{
    handle = dlopen(SB_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(handle != NULL, "dlopen: %s", dlerror());
    void *sym = dlsym(handle, KGATE_PLUGIN_ENTRY_SYMBOL);
    ck_assert_msg(sym != NULL, "no %s", KGATE_PLUGIN_ENTRY_SYMBOL);
    kgate_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    be = entry();
    ck_assert_ptr_nonnull(be);
    kg_host_init(&host);
}

static void unload(void)
{
    if (handle) dlclose(handle);
    handle = NULL;
    be = NULL;
}

static const char *const sh_argv[] = {"sh"};

static kgate_policy policy(kgate_network net)
{
    return (kgate_policy){
        .struct_size = sizeof(kgate_policy),
        .network = net,
        .configured_network = net,
        .project = "/",
        .home = "/Users/you",
        .argv = {sh_argv, 1},
        .command_path = "/bin/sh",
    };
}

static int pidfd_of(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

/* 1 when the process behind pidfd ended within ms. */
static int ended_within(int pidfd, int ms)
{
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    return poll(&p, 1, ms) == 1;
}

/* No orphans: kgate (a stand-in process that calls launch) is SIGKILLed
 * while the program and a background child of it run; the watcher launch
 * started kills both.  Control: the same with the watcher killed first,
 * and both survive.  The Linux watcher waits on a pidfd where the macOS
 * one uses kqueue; the rest (sessions, group kill, handshake) is shared. */
static void orphans_case(int kill_watcher_first, int *program_ended, int *child_ended)
{
    /* Orphans come to this process, so they can be reaped and counted. */
    ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    int info[2];
    ck_assert_int_eq(pipe(info), 0);
    pid_t k = fork();
    ck_assert_int_ge(k, 0);
    if (k == 0) { /* kgate */
        close(info[0]);
        kgate_policy pol = policy(KGATE_NET_OFF);
        kgate_probe p;
        kgate_probe_init(&p);
        pol.project = "/";
        kgate_plan *plan = kg_plan_new();
        host.pub.plan_arg(plan, "/bin/sh");
        host.pub.plan_arg(plan, "-c");
        /* The background child's pid, then the program's, then wait. */
        host.pub.plan_arg(plan, "sleep 300 & echo $! $$; exec sleep 300");
        const char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        int nul = open("/dev/null", O_RDWR);
        kgate_launch io = {.struct_size = sizeof io,
                           .stdin_fd = nul,
                           .stdout_fd = info[1],
                           .stderr_fd = nul,
                           .envp = envp};
        kgate_proc proc = {.struct_size = sizeof proc};
        kgate_err err = {0};
        if (be->launch(&host.pub, &pol, &p, plan, &io, &proc, &err) < 0) _exit(3);
        if (proc.n_helpers != 1 || proc.signal_pid != -proc.pid) _exit(4);
        if (kill_watcher_first) {
            kill(proc.helpers[0], SIGKILL);
            waitpid(proc.helpers[0], NULL, 0);
        }
        /* Done: only now may the test kill this stand-in, or the control
         * could kill it before the watcher was gone. */
        if (write(info[1], "ready\n", 6) != 6) _exit(5);
        close(info[1]);
        pause();
        _exit(0);
    }
    close(info[1]);
    /* The program's two pids and the stand-in's "ready", in either order. */
    char buf[256] = "";
    size_t got = 0;
    char *ready = NULL;
    long child = 0, program = 0;
    for (;;) {
        ssize_t n = read(info[0], buf + got, sizeof buf - 1 - got);
        ck_assert_int_gt(n, 0);
        got += (size_t)n;
        buf[got] = '\0';
        ready = strstr(buf, "ready\n");
        if (!ready) continue;
        char rest[256];
        snprintf(rest, sizeof rest, "%.*s%s", (int)(ready - buf), buf, ready + 6);
        if (sscanf(rest, "%ld %ld", &child, &program) == 2) break;
    }
    close(info[0]);
    int pc = pidfd_of((pid_t)child), pp = pidfd_of((pid_t)program);
    ck_assert_int_ge(pc, 0);
    ck_assert_int_ge(pp, 0);
    /* Both run before kgate dies: the check below can fail. */
    ck_assert(!ended_within(pp, 0) && !ended_within(pc, 0));
    kill(k, SIGKILL);
    waitpid(k, NULL, 0);
    /* Ends at once with the watcher; the control waits out the limit. */
    int ms = kill_watcher_first ? 300 : 3000;
    *program_ended = ended_within(pp, ms);
    *child_ended = ended_within(pc, ms);
    kill((pid_t)child, SIGKILL);
    kill((pid_t)program, SIGKILL);
    close(pc);
    close(pp);
    while (waitpid(-1, NULL, 0) > 0) {}
}

START_TEST(launch_no_orphans)
{
    int prog, child;
    orphans_case(0, &prog, &child);
    ck_assert_msg(prog, "the program outlived a killed kgate");
    ck_assert_msg(child, "the program's background child outlived a killed kgate");
    orphans_case(1, &prog, &child);
    ck_assert_msg(!prog && !child, "control: without the watcher they should survive");
}
END_TEST

/* The core stops the watcher with SIGTERM once the program has ended: it
 * then kills what the program left in its group, as a PID namespace's end
 * does under bubblewrap. */
START_TEST(launch_watcher_stop_kills_group)
{
    kgate_policy pol = policy(KGATE_NET_OFF);
    kgate_probe p;
    kgate_probe_init(&p);
    pol.project = "/";
    kgate_plan *plan = kg_plan_new();
    host.pub.plan_arg(plan, "/bin/sh");
    host.pub.plan_arg(plan, "-c");
    host.pub.plan_arg(plan, "sleep 300 & echo $!");
    int out[2];
    ck_assert_int_eq(pipe(out), 0);
    const char *envp[] = {"PATH=/usr/bin:/bin", NULL};
    int nul = open("/dev/null", O_RDWR);
    kgate_launch io = {.struct_size = sizeof io,
                       .stdin_fd = nul,
                       .stdout_fd = out[1],
                       .stderr_fd = nul,
                       .envp = envp};
    kgate_proc proc = {.struct_size = sizeof proc};
    kgate_err err = {0};
    ck_assert_int_eq(be->launch(&host.pub, &pol, &p, plan, &io, &proc, &err), 0);
    close(out[1]);
    close(nul);
    char buf[32] = "";
    ck_assert_int_gt(read(out[0], buf, sizeof buf - 1), 0);
    close(out[0]);
    pid_t bg = (pid_t)atol(buf);
    int pfd = pidfd_of(bg);
    ck_assert_int_ge(pfd, 0);
    int status;
    ck_assert_int_eq(waitpid(proc.pid, &status, 0), proc.pid);
    ck_assert(!ended_within(pfd, 200)); /* the program is gone, its child not */
    ck_assert_int_eq(kill(proc.helpers[0], SIGTERM), 0);
    ck_assert_int_eq(waitpid(proc.helpers[0], &status, 0), proc.helpers[0]);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_msg(ended_within(pfd, 3000), "the background child survived the stop");
    kill(bg, SIGKILL);
    close(pfd);
    kg_plan_free(plan);
}
END_TEST

static Suite *watch_suite(void)
{
    Suite *s = suite_create("seatbelt-watch");
    TCase *tc = tcase_create("watch");
    tcase_add_checked_fixture(tc, load, unload);
    tcase_add_test(tc, launch_no_orphans);
    tcase_add_test(tc, launch_watcher_stop_kills_group);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return kgt_run_suite(watch_suite()); }
