/* The seatbelt plugin as the core sees it: loaded with dlopen through its
 * one exported symbol, doctor's verdict table from made-up probe facts,
 * the plan's argument vector, and launch's stdio and working directory. */
#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host.h"
#include "kgate/kgate-plugin.h"
#include "loader.h"
#include "select.h"
#include "sbpl-eval.h"
#include "testutil.h"

#ifndef SB_PLUGIN_PATH
#error "SB_PLUGIN_PATH must name the built plugin"
#endif

#define SL(...)                                          \
    ((kgate_strlist){(const char *const[]){__VA_ARGS__}, \
                     sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)})

static void *handle;
static const kgate_backend *be;
static kg_host host;

static void load(void)
{
    handle = dlopen(SB_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(handle != NULL, "dlopen: %s", dlerror());
    void *sym = dlsym(handle, KGATE_PLUGIN_ENTRY_SYMBOL);
    ck_assert_msg(sym != NULL, "no %s", KGATE_PLUGIN_ENTRY_SYMBOL);
    /* ISO C has no object-to-function pointer cast; POSIX guarantees the
     * representation, so copy the bits. */
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

static const char *const make_argv[] = {"make", "-j2", "test"};

static kgate_policy policy(kgate_network net)
{
    return (kgate_policy){
        .struct_size = sizeof(kgate_policy),
        .network = net,
        .configured_network = net,
        .project = "/Users/you/proj",
        .home = "/Users/you",
        .argv = {make_argv, 3},
        .command_path = "/usr/bin/make",
    };
}

static kgate_probe mac_probe(int sandbox_exec)
{
    kgate_probe p;
    kgate_probe_init(&p);
    kgate_probe_set_fact(&p, "macos", 1);
    kgate_probe_set_fact(&p, "sandbox_exec", sandbox_exec);
    kgate_probe_set_fact(&p, "sandboxed", 0);
    p.available = sandbox_exec;
    if (sandbox_exec)
        snprintf(p.tool_path, sizeof p.tool_path, "/usr/bin/sandbox-exec");
    else
        snprintf(p.reason, sizeof p.reason, "/usr/bin/sandbox-exec not found");
    return p;
}

static int report_has(const kgate_report *r, kgate_verdict v, const char *needle)
{
    for (size_t i = 0; i < r->n_items; i++)
        if (r->items[i].verdict == v && strstr(r->items[i].text, needle)) return 1;
    return 0;
}

static const char *detail(const kgate_report *r, const char *key)
{
    for (size_t i = 0; i < kg_strv_len(r->detail_keys); i++)
        if (strcmp(kg_strv_get(r->detail_keys, i), key) == 0)
            return kg_strv_get(r->detail_values, i);
    return NULL;
}

START_TEST(entry_and_abi)
{
    ck_assert_uint_eq(be->abi_major, KGATE_ABI_MAJOR);
    ck_assert_uint_eq(be->struct_size, sizeof(kgate_backend));
    ck_assert_str_eq(be->name, "seatbelt");
    ck_assert(be->probe != NULL);
    ck_assert(be->doctor != NULL);
    ck_assert(be->plan != NULL);
    ck_assert(be->launch != NULL);
    /* Only the entry symbol is exported: the builder stays hidden. */
    ck_assert_ptr_null(dlsym(handle, "sb_build"));
    ck_assert_ptr_null(dlsym(handle, "sb_quote"));
}
END_TEST

START_TEST(probe_here)
{
    kgate_probe p;
    kgate_probe_init(&p);
    kgate_err err = {0};
    ck_assert_int_eq(be->probe(&host.pub, KGATE_PROBE_THOROUGH, &p, &err), 0);
#ifdef __APPLE__
    ck_assert_int_eq(kgate_probe_fact(&p, "macos", -1), 1);
#else
    ck_assert_int_eq(p.available, 0);
    ck_assert_int_eq(kgate_probe_fact(&p, "macos", -1), 0);
    ck_assert_int_eq(kgate_probe_fact(&p, "sandbox_exec", -1), 0);
    ck_assert_int_eq(kgate_probe_fact(&p, "sandboxed", -1), 0);
#ifdef __linux__
    ck_assert_str_eq(p.reason, "sandbox-exec is macOS-only (this is Linux)");
#endif
    /* ...and doctor turns that into BLOCKED with the reason. */
    kgate_policy pol = policy(KGATE_NET_OFF);
    kgate_report *r = kg_report_new();
    ck_assert_int_eq(be->doctor(&host.pub, &pol, &p, r), 0);
    ck_assert_int_eq(r->verdict, KGATE_BLOCKED);
    ck_assert(report_has(r, KGATE_BLOCKED, "macOS-only"));
    kg_report_free(r);
#endif
}
END_TEST

/* The verdict table of design note 000, from made-up findings. */
START_TEST(doctor_table)
{
    static const struct {
        int macos, sandbox_exec;
        kgate_network net;
        int hosts;
        kgate_verdict want;
        const char *line;
    } t[] = {
        {1, 1, KGATE_NET_OFF, 0, KGATE_READY, "network off: outbound denied except localhost"},
        {1, 1, KGATE_NET_OPEN, 0, KGATE_DEGRADED, "network open"},
        {1, 1, KGATE_NET_RESTRICTED, 1, KGATE_BLOCKED, "sandbox-exec only accepts * or localhost"},
        {1, 1, KGATE_NET_RESTRICTED, 0, KGATE_READY, "network off"},
        {1, 0, KGATE_NET_OFF, 0, KGATE_BLOCKED, "sandbox-exec missing"},
        {0, 0, KGATE_NET_OFF, 0, KGATE_BLOCKED, "macOS-only (this is Linux)"},
        {0, 0, KGATE_NET_OPEN, 0, KGATE_BLOCKED, "macOS-only"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        kgate_probe p = mac_probe(t[i].sandbox_exec);
        if (!t[i].macos) {
            kgate_probe_init(&p);
            kgate_probe_set_fact(&p, "macos", 0);
            kgate_probe_set_fact(&p, "sandbox_exec", 0);
            snprintf(p.reason, sizeof p.reason, "sandbox-exec is macOS-only (this is Linux)");
        }
        kgate_policy pol = policy(t[i].net);
        /* A compound literal in the if's body would die with it. */
        pol.allow_hosts = t[i].hosts ? SL("api.github.com") : (kgate_strlist){0};
        kgate_report *r = kg_report_new();
        ck_assert_int_eq(be->doctor(&host.pub, &pol, &p, r), 0);
        ck_assert_msg(r->verdict == t[i].want, "row %zu: verdict %s", i,
                      kg_verdict_name(r->verdict));
        ck_assert_msg(report_has(r, t[i].want, t[i].line), "row %zu: no '%s'", i, t[i].line);
        ck_assert_str_eq(detail(r, "profile"), "permissive");
        if (t[i].macos && t[i].sandbox_exec && !t[i].hosts)
            ck_assert(report_has(r, KGATE_READY,
                                 t[i].net == KGATE_NET_OPEN
                                     ? "host Unix sockets: none reachable (network-outbound "
                                       "to unix-socket denied) except mDNSResponder's"
                                     : "host Unix sockets: none reachable"));
        kg_report_free(r);
    }
}
END_TEST

/* Doctor and plan tell the same story about a host list. */
START_TEST(restricted_same_sentence)
{
    kgate_probe p = mac_probe(1);
    kgate_policy pol = policy(KGATE_NET_RESTRICTED);
    pol.allow_hosts = SL("api.github.com", "pypi.org");
    kgate_report *r = kg_report_new();
    be->doctor(&host.pub, &pol, &p, r);
    kgate_plan *plan = kg_plan_new();
    kgate_err err = {0};
    ck_assert_int_eq(be->plan(&host.pub, &pol, &p, plan, &err), -1);
    int found = 0;
    for (size_t i = 0; i < r->n_items; i++)
        if (r->items[i].verdict == KGATE_BLOCKED && strcmp(r->items[i].text, err.msg) == 0)
            found = 1;
    ck_assert_msg(found, "plan said: %s", err.msg);
    size_t times = 0, ids = 0;
    for (size_t i = 0; i < r->n_items; i++) {
        times += strstr(r->items[i].text, "* or localhost") != NULL;
        ids += strcmp(r->items[i].id, KGATE_FINDING_NET_HOSTS_UNSUPPORTED) == 0;
    }
    ck_assert_uint_eq(times, 1);
    /* ... under its id, once (plan's refusal maps to that id and is not
     * reported again: test_seatbelt_profile.c). */
    ck_assert_uint_eq(ids, 1);
    ck_assert_uint_eq(kg_strv_len(plan->argv), 0);
    kg_plan_free(plan);
    kg_report_free(r);
}
END_TEST

START_TEST(doctor_doors)
{
    kgate_probe p = mac_probe(1);
    kgate_policy pol = policy(KGATE_NET_OFF);
    pol.macos_profile = KGATE_MACOS_STRICT;
    pol.macos_allow_mach = SL("com.apple.fonts");
    kgate_report *r = kg_report_new();
    be->doctor(&host.pub, &pol, &p, r);
    ck_assert_int_eq(r->verdict, KGATE_READY);
    ck_assert_str_eq(detail(r, "profile"), "strict");
    ck_assert(report_has(r, KGATE_READY, "com.apple.fonts"));
    kg_report_free(r);

    pol.macos_allow_mach =
        SL("com.apple.fonts", "com.apple.SecurityServer", "com.apple.pasteboard.1");
    r = kg_report_new();
    be->doctor(&host.pub, &pol, &p, r);
    ck_assert_int_eq(r->verdict, KGATE_DEGRADED);
    ck_assert(report_has(r, KGATE_DEGRADED, "com.apple.SecurityServer"));
    ck_assert(report_has(r, KGATE_DEGRADED, "keychain"));
    ck_assert(report_has(r, KGATE_DEGRADED, "pasteboard"));
    kg_report_free(r);

    pol.macos_allow_mach = SL("bad name");
    r = kg_report_new();
    be->doctor(&host.pub, &pol, &p, r);
    ck_assert_int_eq(r->verdict, KGATE_BLOCKED);
    ck_assert(report_has(r, KGATE_BLOCKED, "macos_allow_mach"));
    /* plan's refusal, under the id of a refused profile. */
    size_t refused = 0;
    for (size_t i = 0; i < r->n_items; i++)
        refused += strcmp(r->items[i].id, "seatbelt.profile-refused") == 0;
    ck_assert_uint_eq(refused, 1);
    kg_report_free(r);

    /* Anything plan refuses, doctor blocks with the same words. */
    static const char *const bad_path[] = {"/Users/you/proj/./.env"};
    pol = policy(KGATE_NET_OFF);
    pol.deny_read = (kgate_strlist){bad_path, 1};
    r = kg_report_new();
    be->doctor(&host.pub, &pol, &p, r);
    kgate_plan *plan = kg_plan_new();
    kgate_err err = {0};
    ck_assert_int_eq(be->plan(&host.pub, &pol, &p, plan, &err), -1);
    ck_assert_int_eq(r->verdict, KGATE_BLOCKED);
    ck_assert(report_has(r, KGATE_BLOCKED, err.msg));
    kg_plan_free(plan);
    kg_report_free(r);
}
END_TEST

START_TEST(plan_argv)
{
    kgate_probe p = mac_probe(1);
    kgate_policy pol = policy(KGATE_NET_OFF);
    pol.deny_read = SL("/Users/you/proj/.env");
    kgate_plan *plan = kg_plan_new();
    kgate_err err = {0};
    ck_assert_int_eq(be->plan(&host.pub, &pol, &p, plan, &err), 0);
    size_t argc = 0;
    const char *const *argv = host.pub.plan_argv(plan, &argc);
    /* sandbox-exec -D K=V ... -p PROFILE /usr/bin/make -j2 test */
    ck_assert_uint_ge(argc, 7);
    ck_assert_str_eq(argv[0], "/usr/bin/sandbox-exec");
    size_t i = 1;
    const char *params[16];
    size_t n_params = 0;
    while (i < argc && strcmp(argv[i], "-D") == 0) {
        ck_assert_uint_lt(i + 1, argc);
        ck_assert_ptr_nonnull(strchr(argv[i + 1], '='));
        ck_assert_uint_lt(n_params, 16);
        params[n_params++] = argv[i + 1];
        i += 2;
    }
    ck_assert_uint_eq(n_params, 3); /* home, project, .env */
    ck_assert_str_eq(argv[i], "-p");
    const char *profile = argv[i + 1];
    ck_assert_str_eq(argv[i + 2], "/usr/bin/make");
    ck_assert_str_eq(argv[i + 3], "-j2");
    ck_assert_str_eq(argv[i + 4], "test");
    ck_assert_uint_eq(argc, i + 5);

    /* The profile in the argv is the one shown in --dry-run, and it reads
     * back with its parameters. */
    ck_assert_str_eq(host.pub.plan_file_content(plan, "seatbelt profile"), profile);
    char perr[128] = "";
    sbe_profile *sp = sbe_parse(profile, params, n_params, perr, sizeof perr);
    ck_assert_msg(sp != NULL, "%s", perr);
    ck_assert_int_eq(sbe_allows(sp, "file-read-data", SBE_PATH, "/Users/you/proj/.env"), 0);
    ck_assert_int_eq(sbe_allows(sp, "file-write-data", SBE_PATH, "/Users/you/proj/x"), 1);
    sbe_free(sp);

    /* Linux has no probe tool_path: the plan still names the real tool. */
    kgate_probe linux_probe;
    kgate_probe_init(&linux_probe);
    kgate_plan *plan2 = kg_plan_new();
    ck_assert_int_eq(be->plan(&host.pub, &pol, &linux_probe, plan2, &err), 0);
    ck_assert_str_eq(host.pub.plan_argv(plan2, NULL)[0], "/usr/bin/sandbox-exec");
    ck_assert_ptr_nonnull(host.pub.plan_file_content(
        plan2, "seatbelt profile, parameters inlined (for reading only)"));
    kg_plan_free(plan2);
    kg_plan_free(plan);
}
END_TEST

START_TEST(plan_refuses)
{
    kgate_probe p = mac_probe(1);
    kgate_policy pol = policy(KGATE_NET_OFF);
    pol.command_path = "make";
    kgate_plan *plan = kg_plan_new();
    kgate_err err = {0};
    ck_assert_int_eq(be->plan(&host.pub, &pol, &p, plan, &err), -1);
    ck_assert_str_ne(err.msg, "");
    kg_plan_free(plan);

    pol = policy(KGATE_NET_OFF);
    pol.macos_allow_mach = SL("x\") (allow default");
    plan = kg_plan_new();
    ck_assert_int_eq(be->plan(&host.pub, &pol, &p, plan, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "macos_allow_mach"));
    kg_plan_free(plan);

    /* A deny_read file with a second name (issue 40, defect 2): a path
     * rule cannot hide the other name, so the plan refuses, naming it. */
    char dir[] = "/tmp/kgsb.XXXXXX", env[64], other[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(env, sizeof env, "%s/.env", dir);
    snprintf(other, sizeof other, "%s/.x", dir);
    kgt_write_text(env, "S=1\n");
    ck_assert_int_eq(link(env, other), 0);
    pol = policy(KGATE_NET_OFF);
    pol.project = dir;
    pol.deny_read = SL(env);
    plan = kg_plan_new();
    ck_assert_int_eq(be->plan(&host.pub, &pol, &p, plan, &err), -1);
    ck_assert_msg(strstr(err.msg, env) && strstr(err.msg, "has 2 hard links"), "%s", err.msg);
    kg_plan_free(plan);
    ck_assert_int_eq(unlink(other), 0);
    plan = kg_plan_new();
    ck_assert_msg(be->plan(&host.pub, &pol, &p, plan, &err) == 0, "%s", err.msg);
    kg_plan_free(plan);
    ck_assert_int_eq(unlink(env), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* What the core's stop_helpers does with the watcher. */
static void stop_watcher(const kgate_proc *proc)
{
    for (size_t i = 0; i < proc->n_helpers; i++) {
        kill(proc->helpers[i], SIGTERM);
        int st;
        ck_assert_int_eq(waitpid(proc->helpers[i], &st, 0), proc->helpers[i]);
    }
}

/* launch wires stdio and the working directory and execs the plan's argv;
 * a plan of /bin/sh stands in for sandbox-exec, which Linux lacks. */
START_TEST(launch_stdio_cwd)
{
    char tmpl[] = "/tmp/kgate-sb-XXXXXX", dir[4096];
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    /* As the core hands it over: resolved (on macOS /tmp is /private/tmp). */
    ck_assert_ptr_nonnull(realpath(tmpl, dir));
    kgate_policy pol = policy(KGATE_NET_OFF);
    kgate_probe p = mac_probe(1);
    pol.project = dir;
    kgate_plan *plan = kg_plan_new();
    host.pub.plan_arg(plan, "/bin/sh");
    host.pub.plan_arg(plan, "-c");
    host.pub.plan_arg(plan, "pwd; echo \"$KGV\" >&2; read x; echo \"in:$x\"");
    int out[2], errp[2], in[2];
    ck_assert_int_eq(pipe(out), 0);
    ck_assert_int_eq(pipe(errp), 0);
    ck_assert_int_eq(pipe(in), 0);
    const char *envp[] = {"KGV=from-envp", NULL};
    kgate_launch io = {.struct_size = sizeof io,
                       .stdin_fd = in[0],
                       .stdout_fd = out[1],
                       .stderr_fd = errp[1],
                       .envp = envp};
    kgate_proc proc = {.struct_size = sizeof proc};
    kgate_err err = {0};
    ck_assert_int_eq(be->launch(&host.pub, &pol, &p, plan, &io, &proc, &err), 0);
    close(in[0]), close(out[1]), close(errp[1]);
    ck_assert_int_eq(write(in[1], "abc\n", 4), 4);
    close(in[1]);
    int status;
    ck_assert_int_eq(waitpid(proc.pid, &status, 0), proc.pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* A session of its own, and the watcher as the one helper. */
    ck_assert_int_eq(proc.signal_pid, -proc.pid);
    ck_assert_int_eq(proc.n_helpers, 1);
    stop_watcher(&proc);
    char buf[512] = "", ebuf[128] = "";
    ssize_t n = read(out[0], buf, sizeof buf - 1);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    char *want;
    ck_assert_int_ge(asprintf(&want, "%s\nin:abc\n", dir), 0);
    ck_assert_str_eq(buf, want);
    free(want);
    n = read(errp[0], ebuf, sizeof ebuf - 1);
    ck_assert_int_gt(n, 0);
    ebuf[n] = '\0';
    ck_assert_str_eq(ebuf, "from-envp\n");
    close(out[0]), close(errp[0]);
    kg_plan_free(plan);

    /* A tool that cannot be executed: launch fails with one message (the
     * core exits 125), not a child's 127 that reads as "command not
     * found" from the program. */
    int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
    ck_assert_int_ge(nul, 0);
    io.stdin_fd = io.stdout_fd = io.stderr_fd = nul;
    plan = kg_plan_new();
    host.pub.plan_arg(plan, "/nonexistent/sandbox-exec");
    memset(&proc, 0, sizeof proc);
    proc.struct_size = sizeof proc;
    ck_assert_int_eq(be->launch(&host.pub, &pol, &p, plan, &io, &proc, &err), -1);
    ck_assert_msg(strstr(err.msg, "could not execute /nonexistent/sandbox-exec"), "%s", err.msg);
    ck_assert_int_eq(err.code, ENOENT);
    ck_assert_int_eq(proc.n_helpers, 0); /* the watcher was stopped */
    ck_assert_int_eq(waitpid(-1, &status, WNOHANG), -1); /* and reaped */
    kg_plan_free(plan);

    /* A project that cannot be entered: the same.  The control is the run
     * above, which entered dir. */
    plan = kg_plan_new();
    host.pub.plan_arg(plan, "/bin/true");
    pol.project = "/nonexistent/project";
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(be->launch(&host.pub, &pol, &p, plan, &io, &proc, &err), -1);
    ck_assert_msg(strstr(err.msg, "could not enter the project /nonexistent/project"), "%s",
                  err.msg);
    ck_assert_int_eq(waitpid(-1, &status, WNOHANG), -1);
    kg_plan_free(plan);
    close(nul);
    rmdir(dir);
}
END_TEST

/* With pty set, the slave becomes the program's controlling terminal:
 * opening /dev/tty only works for a process that has one. */
START_TEST(launch_pty)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    ck_assert_int_ge(m, 0);
    ck_assert_int_eq(grantpt(m), 0);
    ck_assert_int_eq(unlockpt(m), 0);
    int sl = open(ptsname(m), O_RDWR | O_NOCTTY);
    ck_assert_int_ge(sl, 0);
    kgate_policy pol = policy(KGATE_NET_OFF);
    kgate_probe p = mac_probe(1);
    pol.project = "/";
    pol.pty = 1;
    kgate_plan *plan = kg_plan_new();
    host.pub.plan_arg(plan, "/bin/sh");
    host.pub.plan_arg(plan, "-c");
    host.pub.plan_arg(plan, "echo ctty-ok > /dev/tty");
    const char *envp[] = {NULL};
    kgate_launch io = {.struct_size = sizeof io,
                       .stdin_fd = sl,
                       .stdout_fd = sl,
                       .stderr_fd = sl,
                       .envp = envp,
                       .pty = 1};
    kgate_proc proc = {.struct_size = sizeof proc};
    kgate_err err = {0};
    ck_assert_int_eq(be->launch(&host.pub, &pol, &p, plan, &io, &proc, &err), 0);
    close(sl);
    int status;
    ck_assert_int_eq(waitpid(proc.pid, &status, 0), proc.pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    stop_watcher(&proc);
    char buf[256] = "";
    ssize_t n = read(m, buf, sizeof buf - 1);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    ck_assert_ptr_nonnull(strstr(buf, "ctty-ok"));
    close(m);
    kg_plan_free(plan);
}
END_TEST

/* A probe as sb-host-macos.c fills it inside another Seatbelt profile. */
static kgate_probe nested_probe(int sandboxed)
{
    kgate_probe p = mac_probe(1);
    kgate_probe_set_fact(&p, "sandboxed", sandboxed);
    if (sandboxed == 1) {
        p.available = 0;
        snprintf(p.reason, sizeof p.reason, "inside another profile");
    }
    return p;
}

/* Doctor's answer inside another agent's Seatbelt sandbox: BLOCKED, with
 * the sentence that names the cause, whatever the policy.  The same facts
 * with sandboxed 0 (the control) are READY, and a sandbox_check that
 * failed (-1) is not taken for nesting. */
START_TEST(doctor_nested)
{
    static const kgate_network nets[] = {KGATE_NET_OFF, KGATE_NET_OPEN};
    for (size_t i = 0; i < 2; i++) {
        kgate_policy pol = policy(nets[i]);
        kgate_probe p = nested_probe(1);
        kgate_report *r = kg_report_new();
        ck_assert_int_eq(be->doctor(&host.pub, &pol, &p, r), 0);
        ck_assert_int_eq(r->verdict, KGATE_BLOCKED);
        ck_assert(report_has(r, KGATE_BLOCKED, "kgate already runs inside a Seatbelt sandbox"));
        ck_assert(report_has(r, KGATE_BLOCKED, "lets no sandboxed process apply another profile"));
        /* Not mistaken for a missing sandbox-exec. */
        ck_assert(!report_has(r, KGATE_BLOCKED, "sandbox-exec missing"));
        kg_report_free(r);

        p = nested_probe(0);
        r = kg_report_new();
        ck_assert_int_eq(be->doctor(&host.pub, &pol, &p, r), 0);
        ck_assert_int_ne(r->verdict, KGATE_BLOCKED);
        ck_assert(!report_has(r, KGATE_BLOCKED, "Seatbelt sandbox"));
        kg_report_free(r);

        p = nested_probe(-1);
        r = kg_report_new();
        ck_assert_int_eq(be->doctor(&host.pub, &pol, &p, r), 0);
        ck_assert_int_ne(r->verdict, KGATE_BLOCKED);
        ck_assert(report_has(r, KGATE_READY, "nested sandbox: not known"));
        kg_report_free(r);
    }
}
END_TEST

/* What `kgate run` does with it: the selection it runs refuses the
 * backend with one line that carries the sentence (run prints it after
 * "kgate: " and exits 125), and the control with sandboxed 0 is chosen. */
START_TEST(run_refuses_nested)
{
    for (int sandboxed = 1; sandboxed >= 0; sandboxed--) {
        kg_registry *reg = kg_registry_new();
        kg_error err = {0};
        kg_plugin *p = kg_registry_add(reg, be, SB_PLUGIN_PATH, NULL, &err);
        ck_assert_msg(p != NULL, "%s", err.msg);
        /* The probe's facts as given, not this machine's. */
        p->probe = nested_probe(sandboxed);
        p->probed = 1;
        p->probe_depth = KGATE_PROBE_THOROUGH;
        kg_host h;
        kg_host_init(&h);
        kgate_policy pol = policy(KGATE_NET_OFF);
        kg_plugin *chosen = NULL;
        kgate_report *rep = NULL;
        int rc =
            kg_select_candidate(reg, &h, &pol, "seatbelt", KGATE_PROBE_QUICK, &chosen, &rep, &err);
        if (sandboxed) {
            ck_assert_int_eq(rc, -1);
            ck_assert_ptr_nonnull(strstr(err.msg, "backend seatbelt cannot enforce "
                                                  "this policy: kgate already runs "
                                                  "inside a Seatbelt sandbox"));
            ck_assert_ptr_null(strchr(err.msg, '\n'));
        } else {
            ck_assert_msg(rc == 0, "control refused: %s", err.msg);
            ck_assert_ptr_eq(chosen, p);
        }
        kg_report_free(rep);
        kg_registry_free(reg);
    }
}
END_TEST

static Suite *plugin_suite(void)
{
    Suite *s = suite_create("seatbelt-plugin");
    TCase *tc = tcase_create("plugin");
    tcase_add_checked_fixture(tc, load, unload);
    tcase_add_test(tc, entry_and_abi);
    tcase_add_test(tc, probe_here);
    tcase_add_test(tc, doctor_table);
    tcase_add_test(tc, restricted_same_sentence);
    tcase_add_test(tc, doctor_doors);
    tcase_add_test(tc, plan_argv);
    tcase_add_test(tc, plan_refuses);
    tcase_add_test(tc, launch_stdio_cwd);
    tcase_add_test(tc, launch_pty);
    tcase_add_test(tc, doctor_nested);
    tcase_add_test(tc, run_refuses_nested);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return kgt_run_suite(plugin_suite()); }
