/* The bubblewrap plan builder and doctor table, without running bwrap.
 * Paths are real (the builder stats deny_read and read_paths), made in a
 * temporary tree per test. */
#include <check.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bwrap-internal.h"
#include "kgl-seccomp-rules.h"
#include "host.h"
#include "testutil.h"

static char root[64];
static char home[128], proj[160], gitconfig[160], secretdir[160], envfile[192], privdir[192],
    hooks[192], missing[192], outside[128], ssh[192];

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/kgbw-plan.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    /* home lies under /tmp here, as in the integration tests: bwrap makes
     * its mount point inside the fresh /tmp. */
    snprintf(home, sizeof home, "%s/home", root);
    snprintf(proj, sizeof proj, "%s/proj", home);
    snprintf(gitconfig, sizeof gitconfig, "%s/.gitconfig", home);
    snprintf(secretdir, sizeof secretdir, "%s/.secrets", home);
    snprintf(ssh, sizeof ssh, "%s/.ssh", home);
    snprintf(envfile, sizeof envfile, "%s/.env", proj);
    snprintf(privdir, sizeof privdir, "%s/private", proj);
    snprintf(hooks, sizeof hooks, "%s/.git/hooks", proj);
    snprintf(missing, sizeof missing, "%s/not-there", proj);
    snprintf(outside, sizeof outside, "%s/outside", root);
    ck_assert_int_eq(mkdir(home, 0755), 0);
    ck_assert_int_eq(mkdir(proj, 0755), 0);
    ck_assert_int_eq(mkdir(secretdir, 0755), 0);
    ck_assert_int_eq(mkdir(ssh, 0755), 0);
    ck_assert_int_eq(mkdir(privdir, 0755), 0);
    char git[192];
    snprintf(git, sizeof git, "%s/.git", proj);
    ck_assert_int_eq(mkdir(git, 0755), 0);
    ck_assert_int_eq(mkdir(hooks, 0755), 0);
    ck_assert_int_eq(mkdir(outside, 0755), 0);
    kgt_write_text(gitconfig, "[user]\n");
    kgt_write_text(envfile, "TOKEN=1\n");
}

static void teardown(void)
{
    char *argv[] = {"rm", "-rf", root, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        execv("/bin/rm", argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
}

typedef struct fixture {
    kg_host host;
    kgate_probe probe;
    kgate_policy pol;
    kgate_plan *plan;
    kgate_err err;
    const char *args[4];
} fixture;

static void fixture_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    kg_host_init(&f->host);
    kgate_probe_init(&f->probe);
    snprintf(f->probe.tool_path, sizeof f->probe.tool_path, "/usr/bin/bwrap");
    f->pol.struct_size = sizeof f->pol;
    f->pol.network = KGATE_NET_OFF;
    f->pol.configured_network = KGATE_NET_OFF;
    f->pol.project = proj;
    f->pol.home = home;
    f->pol.uid = 1000;
    f->pol.gid = 1001;
    f->args[0] = "make";
    f->args[1] = "test";
    f->pol.argv = (kgate_strlist){f->args, 2};
    f->pol.command_path = "/usr/bin/make";
    f->plan = kg_plan_new();
}

static int run_plan(fixture *f)
{
    return bwrap_plan(&f->host.pub, &f->pol, &f->probe, f->plan, &f->err);
}

static const char *const *argv_of(fixture *f, size_t *n)
{
    return f->host.pub.plan_argv(f->plan, n);
}

/* Index of the first occurrence of the token sequence a [b [c]], or -1. */
static long find3(fixture *f, const char *a, const char *b, const char *c)
{
    size_t n;
    const char *const *v = argv_of(f, &n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i], a) != 0) continue;
        if (b && (i + 1 >= n || strcmp(v[i + 1], b) != 0)) continue;
        if (c && (i + 2 >= n || strcmp(v[i + 2], c) != 0)) continue;
        return (long)i;
    }
    return -1;
}

START_TEST(golden_minimal)
{
    fixture f;
    fixture_init(&f);
    ck_assert_int_eq(run_plan(&f), 0);
    const char *head[] = {
        "/usr/bin/bwrap",
        "--die-with-parent",
        "--new-session",
        "--unshare-user",
        "--uid",
        "1000",
        "--gid",
        "1001",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    };
    char dotgit[192];
    snprintf(dotgit, sizeof dotgit, "%s/.git", proj);
    const char *tail[] = {
        "--tmpfs",
        home,
        "--bind",
        proj,
        proj,
        /* .git bound onto itself: it cannot be renamed or replaced */
        "--bind",
        dotgit,
        dotgit,
        "--chdir",
        proj,
        "--",
        "/usr/bin/make",
        "test",
    };
    /* Between them, the socket covers of this machine: each socket
     * directory that exists here, the resolv.conf target when it is a link
     * into /run, and the private runtime directory. */
    const char *want[64];
    size_t w = 0;
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++) want[w++] = head[i];
    /* /var/tmp private as /tmp, where this machine has one */
    struct stat vst;
    if (stat("/var/tmp", &vst) == 0 && S_ISDIR(vst.st_mode)) {
        want[w++] = "--tmpfs";
        want[w++] = "/var/tmp";
    }
    /* the other users' homes: searched, not listed */
    if (stat("/home", &vst) == 0 && S_ISDIR(vst.st_mode)) {
        want[w++] = "--perms";
        want[w++] = "0111";
        want[w++] = "--tmpfs";
        want[w++] = "/home";
    }
    size_t nd;
    const char *const *dirs = bwrap_socket_dirs(&nd);
    ck_assert_str_eq(dirs[0], "/run");
    for (size_t i = 0; i < nd; i++) {
        struct stat st;
        if (lstat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            want[w++] = "--tmpfs";
            want[w++] = dirs[i];
        }
    }
    struct stat rst;
    int resolv_link = lstat("/etc/resolv.conf", &rst) == 0 && S_ISLNK(rst.st_mode);
    want[w++] = "--perms";
    want[w++] = "0700";
    want[w++] = "--dir";
    want[w++] = "/run/user/1000";
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++) want[w++] = tail[i];
    size_t n;
    const char *const *v = argv_of(&f, &n);
    if (resolv_link) { /* one --ro-bind T T more, before --perms 0700 */
        ck_assert_uint_eq(n, w + 3);
        long rb = find3(&f, "--perms", "0700", NULL) - 3;
        ck_assert_str_eq(v[rb], "--ro-bind");
        for (size_t i = 0, k = 0; i < n; i++) {
            if (i >= (size_t)rb && i < (size_t)rb + 3) continue;
            ck_assert_str_eq(v[i], want[k++]);
        }
    } else {
        ck_assert_uint_eq(n, w);
        for (size_t i = 0; i < n; i++) ck_assert_str_eq(v[i], want[i]);
    }
    /* the filter's description rides along for --dry-run */
    const char *text = f.host.pub.plan_file_content(f.plan, KGL_SECCOMP_LABEL);
    ck_assert_ptr_nonnull(text);
    kg_plan_free(f.plan);
}
END_TEST

/* The flags that only a golden argv guarded (issue 19), asserted one by
 * one in every shape of plan: network off, open, restricted without hosts,
 * and pty mode.  --disable-userns needs the user namespace bwrap makes
 * (--unshare-user) and refuses to start without it; --cap-drop ALL is what
 * leaves a caller that is root with no capabilities inside; --new-session
 * keeps the program off the caller's terminal.  tests/integration/layers.sh
 * shows each of them holding alone at run time. */
START_TEST(namespace_flags_in_every_plan)
{
    for (int variant = 0; variant < 4; variant++) {
        fixture f;
        fixture_init(&f);
        if (variant == 1) f.pol.network = KGATE_NET_OPEN;
        if (variant == 2) f.pol.network = KGATE_NET_RESTRICTED; /* no hosts */
        if (variant == 3) {
            bwrap_pty_shim_set_override("/bin/true");
            f.pol.pty = 1;
        }
        ck_assert_int_eq(run_plan(&f), 0);
        bwrap_pty_shim_set_override(NULL);
        long user = find3(&f, "--unshare-user", NULL, NULL);
        long nouserns = find3(&f, "--disable-userns", NULL, NULL);
        long capdrop = find3(&f, "--cap-drop", "ALL", NULL);
        long session = find3(&f, "--new-session", NULL, NULL);
        long floor = find3(&f, "--ro-bind", "/", "/");
        long end = find3(&f, "--", NULL, NULL);
        ck_assert_msg(user > 0, "variant %d: no --unshare-user", variant);
        ck_assert_msg(nouserns > user,
                      "variant %d: --disable-userns missing or before "
                      "--unshare-user",
                      variant);
        ck_assert_msg(capdrop > 0, "variant %d: no --cap-drop ALL", variant);
        ck_assert_msg(session > 0, "variant %d: no --new-session", variant);
        /* options, not part of the command: before the first mount and
         * before the "--" that ends bwrap's own arguments */
        ck_assert_int_lt(nouserns, floor);
        ck_assert_int_lt(capdrop, floor);
        ck_assert_int_lt(session, floor);
        ck_assert_int_lt(floor, end);
        /* nothing gives a capability back */
        ck_assert_int_lt(find3(&f, "--cap-add", NULL, NULL), 0);
        kg_plan_free(f.plan);
    }
}
END_TEST

START_TEST(order_of_covers)
{
    fixture f;
    fixture_init(&f);
    const char *reads[] = {gitconfig, outside};
    const char *denies[] = {envfile, privdir, missing, secretdir};
    const char *prot[] = {hooks};
    f.pol.read_paths = (kgate_strlist){reads, 2};
    f.pol.deny_read = (kgate_strlist){denies, 4};
    f.pol.protect_paths = (kgate_strlist){prot, 1};
    ck_assert_int_eq(run_plan(&f), 0);

    long tmp_home = find3(&f, "--tmpfs", home, NULL);
    long git = find3(&f, "--ro-bind", gitconfig, gitconfig);
    long out = find3(&f, "--ro-bind", outside, outside);
    long project = find3(&f, "--bind", proj, proj);
    long hook = find3(&f, "--ro-bind", hooks, hooks);
    long env = find3(&f, "--dev-bind", "/dev/null", envfile);
    long priv = find3(&f, "--tmpfs", privdir, NULL);
    long privro = find3(&f, "--remount-ro", privdir, NULL);
    ck_assert_int_ge(tmp_home, 0);
    ck_assert_int_gt(git, tmp_home); /* ~/.gitconfig after the tmpfs */
    ck_assert_int_gt(out, tmp_home);
    ck_assert_int_gt(project, tmp_home); /* the project after the tmpfs */
    ck_assert_int_gt(hook, project); /* protected after the project */
    ck_assert_int_gt(env, project); /* deny_read covers the project */
    ck_assert_int_gt(priv, project);
    ck_assert_int_eq(privro, priv + 2); /* an empty, read-only directory */
    /* ... of mode 0: listing it fails, as in the Landlock box */
    ck_assert_int_eq(find3(&f, "--perms", "0000", NULL), priv - 2);
    ck_assert_int_gt(env, hook);
    /* Missing: nothing to hide; in the hidden home: already hidden. */
    ck_assert_int_lt(find3(&f, missing, NULL, NULL), 0);
    ck_assert_int_lt(find3(&f, secretdir, NULL, NULL), 0);
    ck_assert_int_lt(find3(&f, "--chdir", proj, NULL), find3(&f, "--", NULL, NULL));
    kg_plan_free(f.plan);
}
END_TEST

/* ABI 2.3: the core's home files are bound read-only into the tmpfs home
 * before the givebacks (a read_paths ~/.gitconfig still wins), and a
 * deny_read file is covered by the core's empty file, read-only, not by
 * /dev/null, where a write vanished (issue 41). */
START_TEST(home_files_and_empty_cover)
{
    fixture f;
    fixture_init(&f);
    char src[256], empty[256], boxgc[256], exl[256];
    snprintf(src, sizeof src, "%s/box-gitconfig", outside);
    snprintf(empty, sizeof empty, "%s/empty", outside);
    snprintf(boxgc, sizeof boxgc, "%s/.gitconfig", home);
    snprintf(exl, sizeof exl, "%s/.config/git/kgate-excludes", home);
    kgt_write_text(src, "[user]\n");
    kgt_write_text(empty, "");
    const kgate_home_file files[] = {{".gitconfig", src},
                                     {".config/git/kgate-excludes", src},
                                     {"../escape", src},
                                     {"/abs", src}};
    const char *denies[] = {envfile};
    const char *reads[] = {gitconfig};
    f.pol.home_files = files;
    f.pol.n_home_files = 4;
    f.pol.empty_file = empty;
    f.pol.deny_read = (kgate_strlist){denies, 1};
    f.pol.read_paths = (kgate_strlist){reads, 1};
    ck_assert_int_eq(run_plan(&f), 0);
    long tmp_home = find3(&f, "--tmpfs", home, NULL);
    long mine = find3(&f, "--ro-bind", src, boxgc);
    long theirs = find3(&f, "--ro-bind", gitconfig, gitconfig);
    ck_assert_int_gt(mine, tmp_home);
    ck_assert_int_gt(theirs, mine); /* the user's file given back wins */
    ck_assert_int_gt(find3(&f, "--ro-bind", src, exl), tmp_home);
    /* names that leave HOME are not bound */
    size_t n;
    const char *const *v = argv_of(&f, &n);
    for (size_t i = 0; i < n; i++) ck_assert(!strstr(v[i], "escape") && strcmp(v[i], "/abs"));
    ck_assert_int_gt(find3(&f, "--ro-bind", empty, envfile), find3(&f, "--bind", proj, proj));
    ck_assert_int_lt(find3(&f, "--dev-bind", "/dev/null", envfile), 0);
    kg_plan_free(f.plan);

    /* a 2.2 core (a smaller policy): /dev/null as before, no home files */
    fixture_init(&f);
    f.pol.struct_size = offsetof(kgate_policy, home_files);
    f.pol.deny_read = (kgate_strlist){denies, 1};
    ck_assert_int_eq(run_plan(&f), 0);
    ck_assert_int_ge(find3(&f, "--dev-bind", "/dev/null", envfile), 0);
    kg_plan_free(f.plan);
}
END_TEST

/* deny_read across runs (issue 12 §3): each directory between the project
 * and an existing nested deny_read entry is bound onto itself, in path
 * order after the project and before the cover, so no run can rename it;
 * a deny_read file with a second hard link, and a deny_read directory with
 * one inside or a symlink that leads out, are refused with the path. */
START_TEST(deny_read_parents_pinned)
{
    fixture f;
    char a[200], b[220], file[240], other[240];
    snprintf(a, sizeof a, "%s/config", proj);
    snprintf(b, sizeof b, "%s/config/prod", proj);
    snprintf(file, sizeof file, "%s/config/prod/secrets.env", proj);
    ck_assert_int_eq(mkdir(a, 0755), 0);
    ck_assert_int_eq(mkdir(b, 0755), 0);
    kgt_write_text(file, "S=1\n");
    fixture_init(&f);
    const char *denies[] = {file, envfile};
    f.pol.deny_read = (kgate_strlist){denies, 2};
    ck_assert_int_eq(run_plan(&f), 0);
    long project = find3(&f, "--bind", proj, proj);
    long pa = find3(&f, "--bind", a, a);
    long pb = find3(&f, "--bind", b, b);
    long cover = find3(&f, "--dev-bind", "/dev/null", file);
    ck_assert_int_gt(pa, project);
    ck_assert_int_gt(pb, pa);
    ck_assert_int_gt(cover, pb);
    /* .env sits in the project itself: no pin but the project */
    ck_assert_int_ge(find3(&f, "--dev-bind", "/dev/null", envfile), 0);
    kg_plan_free(f.plan);

    /* A second link: refused, naming the file. */
    snprintf(other, sizeof other, "%s/.cache-x", proj);
    ck_assert_int_eq(link(envfile, other), 0);
    fixture_init(&f);
    f.pol.deny_read = (kgate_strlist){denies, 2};
    ck_assert_int_eq(run_plan(&f), -1);
    ck_assert_msg(strstr(f.err.msg, envfile) && strstr(f.err.msg, "2 hard links"), "%s", f.err.msg);
    kg_plan_free(f.plan);
    ck_assert_int_eq(unlink(other), 0);

    /* A directory: a file inside with two links, then a symlink out. */
    char inner[240], in2[240];
    snprintf(inner, sizeof inner, "%s/key", privdir);
    snprintf(in2, sizeof in2, "%s/key2", privdir);
    kgt_write_text(inner, "K\n");
    ck_assert_int_eq(link(inner, in2), 0);
    const char *dirdeny[] = {privdir};
    fixture_init(&f);
    f.pol.deny_read = (kgate_strlist){dirdeny, 1};
    ck_assert_int_eq(run_plan(&f), -1);
    ck_assert_msg(strstr(f.err.msg, privdir) && strstr(f.err.msg, "hard links"), "%s", f.err.msg);
    kg_plan_free(f.plan);
    ck_assert_int_eq(unlink(in2), 0);
    ck_assert_int_eq(symlink("key", in2), 0); /* stays inside: fine */
    fixture_init(&f);
    f.pol.deny_read = (kgate_strlist){dirdeny, 1};
    ck_assert_msg(run_plan(&f) == 0, "%s", f.err.msg);
    kg_plan_free(f.plan);
    char out[240];
    snprintf(out, sizeof out, "%s/out", privdir);
    ck_assert_int_eq(symlink("../.env", out), 0);
    fixture_init(&f);
    f.pol.deny_read = (kgate_strlist){dirdeny, 1};
    ck_assert_int_eq(run_plan(&f), -1);
    ck_assert_msg(strstr(f.err.msg, "out is a symbolic link"), "%s", f.err.msg);
    kg_plan_free(f.plan);
}
END_TEST

/* Launch's rewrite of a plan (kgl-pin.c): every bind but / becomes a
 * descriptor of the object at that path, /dev/null covers stay paths, each
 * destination gets its check, a mount that a later one covers is not
 * checked, and a plan option launch does not know fails it. */
START_TEST(pins_rewrite_the_plan)
{
    fixture f;
    fixture_init(&f);
    const char *denies[] = {envfile, privdir};
    const char *prot[] = {hooks};
    f.pol.deny_read = (kgate_strlist){denies, 2};
    f.pol.protect_paths = (kgate_strlist){prot, 1};
    ck_assert_int_eq(run_plan(&f), 0);
    size_t argc = 0;
    const char *const *argv = f.host.pub.plan_argv(f.plan, &argc);
    kgl_pins p;
    kgate_err err = {0};
    ck_assert_msg(kgl_pins_open(argv, argc, &p, &err) == 0, "%s", err.msg);
    int binds = 0, fdbinds = 0, slash = 0, devnull = 0;
    for (size_t i = 0; i < p.argc; i++) {
        if (!strcmp(p.argv[i], "--bind") || !strcmp(p.argv[i], "--ro-bind")) {
            binds++;
            slash += !strcmp(p.argv[i + 1], "/");
        }
        if (!strcmp(p.argv[i], "--bind-fd") || !strcmp(p.argv[i], "--ro-bind-fd")) fdbinds++;
        if (!strcmp(p.argv[i], "--dev-bind")) devnull += !strcmp(p.argv[i + 1], "/dev/null");
    }
    ck_assert_int_eq(binds, 1); /* only --ro-bind / / */
    ck_assert_int_eq(slash, 1);
    ck_assert_int_ge(fdbinds, 2); /* the project and the hooks */
    ck_assert_int_eq(devnull, 1);
    ck_assert_uint_eq(p.n_fds, (size_t)fdbinds);
    ck_assert_str_eq(p.argv[p.argc - 1], argv[argc - 1]);
    int proj_checked = 0, env_checked = 0, priv_ro = 0;
    struct stat st;
    ck_assert_int_eq(stat(proj, &st), 0);
    for (size_t c = 0; c < p.n_checks; c++) {
        const kgl_check *k = &p.checks[c];
        if (!strcmp(k->dest, proj) && k->kind == KGL_CHECK_OBJECT) {
            proj_checked = !k->hidden && k->dev == st.st_dev && k->ino == st.st_ino;
        }
        if (!strcmp(k->dest, envfile)) env_checked = k->kind == KGL_CHECK_DEVNULL;
        if (!strcmp(k->dest, privdir)) priv_ro = k->kind == KGL_CHECK_TMPFS && k->ro;
        if (!strcmp(k->dest, "/")) ck_assert_int_eq(k->hidden, 0);
    }
    ck_assert(proj_checked && env_checked && priv_ro);
    kgl_pins_free(&p);
    kg_plan_free(f.plan);

    /* Hidden: a bind under a later tmpfs could not be checked where it
     * should be, so it is left out of the argv (kgl-pin.c); a cover
     * under a later mount stays, unchecked. */
    const char *hid[] = {"/usr/bin/bwrap", "--bind",  proj, envfile, "--dev-bind", "/dev/null",
                         envfile,          "--tmpfs", proj, "--",    "/bin/true"};
    ck_assert_int_eq(kgl_pins_open(hid, 11, &p, &err), 0);
    ck_assert_uint_eq(p.n_fds, 0);
    ck_assert_uint_eq(p.argc, 8);
    ck_assert_str_eq(p.argv[1], "--dev-bind");
    ck_assert_str_eq(p.argv[4], "--tmpfs");
    ck_assert_uint_eq(p.n_checks, 2);
    ck_assert_int_eq(p.checks[0].hidden, 1);
    ck_assert_int_eq(p.checks[1].hidden, 0);
    kgl_pins_free(&p);

    const char *unknown[] = {"/usr/bin/bwrap", "--bind-try", proj, proj, "--", "/bin/true"};
    ck_assert_int_eq(kgl_pins_open(unknown, 6, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "--bind-try"), "%s", err.msg);
    const char *symlinked[] = {"/usr/bin/bwrap", "--ro-bind", "/proc/self/root/etc",
                               "/etc",           "--",        "/bin/true"};
    ck_assert_int_eq(kgl_pins_open(symlinked, 6, &p, &err), -1);
    ck_assert_msg(strstr(err.msg, "symbolic link"), "%s", err.msg);
}
END_TEST

/* The checks made once bwrap has mounted, run against this process's own
 * root (no bwrap needed): what each kind accepts and what it refuses.
 * The refusals are the ones a renamed name produced (kgl-pin.c): the
 * object reached inside another mount instead of mounted there, and a host
 * tmpfs instead of a new one. */
static const char *verify_one(kgl_check c)
{
    static kgate_err err;
    kgl_pins p = {0};
    p.checks = &c;
    p.n_checks = 1;
    memset(&err, 0, sizeof err);
    return kgl_pins_verify(&p, getpid(), &err) == 0 ? NULL : err.msg;
}

START_TEST(verify_wants_each_mount_at_its_place)
{
    struct stat st;
    char dir[] = "/tmp/kgbw-verify.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(stat(dir, &st), 0);
    /* The right object, but no mount there. */
    const char *why = verify_one((kgl_check){dir, KGL_CHECK_OBJECT, 0, 0, st.st_dev, st.st_ino});
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "no mount is there"), "%s", why);
    /* A mount of the right object: /proc is one everywhere. */
    ck_assert_int_eq(stat("/proc", &st), 0);
    why = verify_one((kgl_check){"/proc", KGL_CHECK_OBJECT, 0, 0, st.st_dev, st.st_ino});
    ck_assert_msg(why == NULL, "%s", why);
    why = verify_one((kgl_check){"/proc", KGL_CHECK_OBJECT, 0, 0, st.st_dev, st.st_ino + 1});
    ck_assert_msg(why && strstr(why, "another object"), "%s", why);
    /* A tmpfs the host has mounted is not a new one. */
    struct statfs fs;
    if (statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
        why = verify_one((kgl_check){"/dev/shm", KGL_CHECK_TMPFS, 0, 0, 0, 0});
        ck_assert_msg(why && strstr(why, "host directory"), "%s", why);
    } else {
        fprintf(stderr, "# /dev/shm is not a tmpfs here: host tmpfs case not run\n");
    }
    /* A symlink on the way. */
    why = verify_one((kgl_check){"/proc/self/root", KGL_CHECK_OBJECT, 0, 0, 0, 0});
    ck_assert_msg(why && strstr(why, "symbolic link"), "%s", why);
    rmdir(dir);
}
END_TEST

START_TEST(nested_paths_most_specific_last)
{
    fixture f;
    fixture_init(&f);
    char vendor[200];
    snprintf(vendor, sizeof vendor, "%s/vendor", proj);
    ck_assert_int_eq(mkdir(vendor, 0755), 0);
    const char *allows[] = {outside, gitconfig};
    const char *reads2[] = {vendor, gitconfig};
    f.pol.read_paths = (kgate_strlist){reads2, 2};
    f.pol.allow_paths = (kgate_strlist){allows, 2};
    ck_assert_int_eq(run_plan(&f), 0);
    /* read-only inside the writable project stays read-only */
    ck_assert_int_gt(find3(&f, "--ro-bind", vendor, vendor), find3(&f, "--bind", proj, proj));
    /* the same path read-only and read-write: read-only, mounted once */
    ck_assert_int_ge(find3(&f, "--ro-bind", gitconfig, gitconfig), 0);
    ck_assert_int_lt(find3(&f, "--bind", gitconfig, gitconfig), 0);
    ck_assert_int_ge(find3(&f, "--bind", outside, outside), 0);
    kg_plan_free(f.plan);
}
END_TEST

START_TEST(network_modes)
{
    fixture f;
    fixture_init(&f);
    f.pol.network = KGATE_NET_OPEN;
    ck_assert_int_eq(run_plan(&f), 0);
    ck_assert_int_lt(find3(&f, "--unshare-net", NULL, NULL), 0);
    kg_plan_free(f.plan);

    fixture_init(&f);
    const char *hosts[] = {"example.org"};
    f.pol.network = KGATE_NET_RESTRICTED;
    f.pol.allow_hosts = (kgate_strlist){hosts, 1};
    ck_assert_int_eq(run_plan(&f), -1);
    ck_assert_str_eq(f.err.msg, bwrap_hosts_sentence());
    kg_plan_free(f.plan);
}
END_TEST

START_TEST(refusals)
{
    fixture f;
    const char *rel[] = {"relative/path"};
    const char *up[] = {root};

    fixture_init(&f);
    f.pol.read_paths = (kgate_strlist){rel, 1};
    ck_assert_int_eq(run_plan(&f), -1);
    ck_assert_ptr_nonnull(strstr(f.err.msg, "not an absolute path"));
    kg_plan_free(f.plan);

    fixture_init(&f); /* an ancestor of home would show home again */
    f.pol.allow_paths = (kgate_strlist){up, 1};
    ck_assert_int_eq(run_plan(&f), -1);
    ck_assert_ptr_nonnull(strstr(f.err.msg, "home directory"));
    kg_plan_free(f.plan);

    fixture_init(&f);
    f.pol.project = home;
    ck_assert_int_eq(run_plan(&f), -1);
    ck_assert_ptr_nonnull(strstr(f.err.msg, "covers the home"));
    kg_plan_free(f.plan);

    fixture_init(&f);
    f.pol.home = "/";
    ck_assert_int_eq(run_plan(&f), -1);
    kg_plan_free(f.plan);

    fixture_init(&f); /* a command only the real home holds */
    char tool[200];
    snprintf(tool, sizeof tool, "%s/.local/bin/tool", home);
    f.pol.command_path = tool;
    ck_assert_int_eq(run_plan(&f), -1);
    ck_assert_ptr_nonnull(strstr(f.err.msg, "read_paths"));
    kg_plan_free(f.plan);

    fixture_init(&f);
    f.probe.tool_path[0] = '\0';
    ck_assert_int_eq(run_plan(&f), -1);
    kg_plan_free(f.plan);
}
END_TEST

START_TEST(tmpdir_and_pty)
{
    fixture f;
    fixture_init(&f);
    f.pol.tmpdir = "/tmp/user-1000";
    bwrap_pty_shim_set_override("/bin/true"); /* visible inside: no bind */
    f.pol.pty = 1;
    ck_assert_int_eq(run_plan(&f), 0);
    bwrap_pty_shim_set_override(NULL);
    ck_assert_int_ge(find3(&f, "--setenv", "TMPDIR", "/tmp"), 0);
    /* A new session in pty mode too, and the shim right before the
     * command; nothing else changes. */
    ck_assert_int_ge(find3(&f, "--new-session", NULL, NULL), 0);
    ck_assert_int_ge(find3(&f, "--", "/bin/true", "/usr/bin/make"), 0);
    ck_assert_int_lt(find3(&f, "--ro-bind", "/bin/true", NULL), 0);
    kg_plan_free(f.plan);

    fixture_init(&f); /* a TMPDIR inside the project is writable: kept */
    f.pol.tmpdir = privdir;
    ck_assert_int_eq(run_plan(&f), 0);
    ck_assert_int_lt(find3(&f, "--setenv", "TMPDIR", NULL), 0);
    kg_plan_free(f.plan);
}
END_TEST

/* The shim lives where the sandbox hides things (here under /tmp, as when
 * the tests copy the plugins there): bound in read-only at its own path,
 * after every other mount. */
START_TEST(pty_shim_bound_when_hidden)
{
    char shim[192];
    snprintf(shim, sizeof shim, "%s/kgate-pty-shim", root);
    kgt_write_text(shim, "#!/bin/sh\n");
    ck_assert_int_eq(chmod(shim, 0755), 0);

    fixture f;
    fixture_init(&f);
    const char *deny[] = {envfile};
    f.pol.deny_read = (kgate_strlist){deny, 1};
    f.pol.pty = 1;
    bwrap_pty_shim_set_override(shim);
    ck_assert_int_eq(run_plan(&f), 0);
    long bind = find3(&f, "--ro-bind", shim, shim);
    ck_assert_int_ge(bind, 0);
    ck_assert_int_gt(bind, find3(&f, "--ro-bind", "/dev/null", envfile));
    ck_assert_int_lt(bind, find3(&f, "--chdir", proj, NULL));
    ck_assert_int_ge(find3(&f, "--", shim, "/usr/bin/make"), 0);
    kg_plan_free(f.plan);

    fixture_init(&f); /* without a pty: no shim at all */
    ck_assert_int_eq(run_plan(&f), 0);
    ck_assert_int_lt(find3(&f, shim, NULL, NULL), 0);
    ck_assert_int_ge(find3(&f, "--", "/usr/bin/make", "test"), 0);
    kg_plan_free(f.plan);

    /* Not executable, or not there: the plan fails and says so. */
    ck_assert_int_eq(chmod(shim, 0644), 0);
    fixture_init(&f);
    f.pol.pty = 1;
    ck_assert_int_eq(run_plan(&f), -1);
    ck_assert_ptr_nonnull(strstr(f.err.msg, "kgate-pty-shim"));
    kg_plan_free(f.plan);
    bwrap_pty_shim_set_override(NULL);
}
END_TEST

START_TEST(missing_read_path_is_a_note)
{
    fixture f;
    fixture_init(&f);
    const char *reads[] = {missing};
    f.pol.read_paths = (kgate_strlist){reads, 1};
    ck_assert_int_eq(run_plan(&f), 0);
    ck_assert_int_lt(find3(&f, missing, NULL, NULL), 0);
    ck_assert_uint_eq(kg_strv_len(f.plan->notes), 1);
    kg_plan_free(f.plan);
}
END_TEST

START_TEST(missing_home_is_not_mounted)
{
    fixture f;
    fixture_init(&f);
    char nohome[160], elsewhere[192];
    snprintf(nohome, sizeof nohome, "%s/no-such-home", root);
    snprintf(elsewhere, sizeof elsewhere, "%s/outside", root);
    f.pol.home = nohome;
    f.pol.project = elsewhere;
    ck_assert_int_eq(run_plan(&f), 0);
    ck_assert_int_lt(find3(&f, "--tmpfs", nohome, NULL), 0);
    ck_assert_int_ge(find3(&f, "--bind", elsewhere, elsewhere), 0);
    ck_assert_uint_eq(kg_strv_len(f.plan->notes), 1);
    kg_plan_free(f.plan);
}
END_TEST

/* ---- escapes (issue 6) ------------------------------------------------ */

START_TEST(socket_cover_and_resolv_link)
{
    fixture f;
    fixture_init(&f);
    /* A resolv.conf that is a plain file, or a link to a place nothing
     * covers, needs nothing given back. */
    char plain[200], link[200], dangling[200];
    snprintf(plain, sizeof plain, "%s/resolv.plain", root);
    snprintf(link, sizeof link, "%s/resolv.link", root);
    snprintf(dangling, sizeof dangling, "%s/resolv.dangling", root);
    kgt_write_text(plain, "nameserver 198.18.0.1\n");
    ck_assert_int_eq(symlink(plain, link), 0);
    ck_assert_int_eq(symlink("/run/kgbw-no-such-dir/resolv.conf", dangling), 0);
    ck_assert_int_eq(bwrap_plan_socket_cover(&f.host.pub, &f.pol, f.plan, plain), 0);
    ck_assert_int_eq(bwrap_plan_socket_cover(&f.host.pub, &f.pol, f.plan, link), 0);
    ck_assert_int_lt(find3(&f, "--ro-bind", plain, NULL), 0);
    ck_assert_int_ge(find3(&f, "--tmpfs", "/run", NULL), 0);
    ck_assert_int_ge(find3(&f, "--dir", "/run/user/1000", NULL), 0);
    ck_assert_uint_eq(kg_strv_len(f.plan->notes), 0);
    ck_assert_int_eq(bwrap_plan_socket_cover(&f.host.pub, &f.pol, f.plan, dangling), 0);
    ck_assert_uint_eq(kg_strv_len(f.plan->notes), 1);
    kg_plan_free(f.plan);

    ck_assert(bwrap_socket_hidden("/run/docker.sock", 1000));
    ck_assert(bwrap_socket_hidden("/var/run/docker.sock", 1000) ||
              !bwrap_socket_hidden("/var/run", 1000)); /* a link: via /run */
    ck_assert(!bwrap_socket_hidden("/usr/bin/make", 1000));
    ck_assert(!bwrap_socket_hidden("/running", 1000));

    /* A link into /run (systemd-resolved's shape) gets its target back,
     * after the /run tmpfs.  Needs a directory in /run: root only. */
    char rundir[64] = "/run/kgbw-plan.XXXXXX";
    if (mkdtemp(rundir)) {
        char target[128], rlink[200];
        snprintf(target, sizeof target, "%s/stub-resolv.conf", rundir);
        snprintf(rlink, sizeof rlink, "%s/resolv.run", root);
        kgt_write_text(target, "nameserver 127.0.0.53\n");
        ck_assert_int_eq(symlink(target, rlink), 0);
        fixture_init(&f);
        ck_assert_int_eq(bwrap_plan_socket_cover(&f.host.pub, &f.pol, f.plan, rlink), 0);
        long rb = find3(&f, "--ro-bind", target, target);
        ck_assert_int_gt(rb, find3(&f, "--tmpfs", "/run", NULL));
        kg_plan_free(f.plan);
        unlink(target);
        rmdir(rundir);
    } else {
        fprintf(stderr, "not root: the resolv.conf link into /run is tested by "
                        "tests/integration/escapes.sh\n");
    }
}
END_TEST

START_TEST(allow_sockets_bound_back)
{
    fixture f;
    fixture_init(&f);
    char sock[256], notsock[256], gone[256];
    snprintf(sock, sizeof sock, "%s/agent.sock", ssh);
    snprintf(notsock, sizeof notsock, "%s/config", ssh);
    snprintf(gone, sizeof gone, "%s/gone.sock", ssh);
    kgt_write_text(notsock, "Host *\n");
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    ck_assert_uint_lt(strlen(sock), sizeof sa.sun_path);
    memcpy(sa.sun_path, sock, strlen(sock) + 1);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    const char *socks[] = {gone, notsock, sock};
    const char *denies[] = {envfile};
    f.pol.allow_sockets = (kgate_strlist){socks, 3};
    f.pol.deny_read = (kgate_strlist){denies, 1};
    ck_assert_int_eq(run_plan(&f), 0);
    long b = find3(&f, "--bind", sock, sock);
    ck_assert_int_gt(b, find3(&f, "--tmpfs", home, NULL)); /* after the home */
    ck_assert_int_gt(b, find3(&f, "--tmpfs", "/run", NULL));
    ck_assert_int_lt(b, find3(&f, "--dev-bind", "/dev/null", envfile));
    ck_assert_int_lt(find3(&f, notsock, NULL, NULL), 0);
    ck_assert_int_lt(find3(&f, gone, NULL, NULL), 0);
    ck_assert_uint_ge(kg_strv_len(f.plan->notes), 2);
    kg_plan_free(f.plan);
    close(fd);

    /* deny_read beats allow_sockets, even in the hidden home (the socket
     * file stays after its listener closed) */
    fixture_init(&f);
    const char *one[] = {sock};
    f.pol.allow_sockets = (kgate_strlist){one, 1};
    f.pol.deny_read = (kgate_strlist){one, 1};
    ck_assert_int_eq(run_plan(&f), 0);
    ck_assert_int_gt(find3(&f, "--dev-bind", "/dev/null", sock), find3(&f, "--bind", sock, sock));
    kg_plan_free(f.plan);

    fixture_init(&f); /* a directory over the home would show it again */
    const char *up[] = {root};
    f.pol.allow_sockets = (kgate_strlist){up, 1};
    ck_assert_int_eq(run_plan(&f), -1);
    ck_assert_ptr_nonnull(strstr(f.err.msg, "allow_sockets"));
    kg_plan_free(f.plan);
}
END_TEST

START_TEST(missing_hooks_become_empty_and_read_only)
{
    fixture f;
    fixture_init(&f);
    char cfg[200];
    snprintf(cfg, sizeof cfg, "%s/.git/config", proj);
    kgt_write_text(cfg, "[core]\n");
    ck_assert_int_eq(rmdir(hooks), 0);
    const char *prot[] = {cfg, hooks, missing};
    f.pol.protect_paths = (kgate_strlist){prot, 3};
    ck_assert_int_eq(run_plan(&f), 0);
    long t = find3(&f, "--tmpfs", hooks, NULL);
    ck_assert_int_gt(t, find3(&f, "--bind", proj, proj));
    ck_assert_int_eq(find3(&f, "--remount-ro", hooks, NULL), t + 2);
    ck_assert_int_ge(find3(&f, "--ro-bind", cfg, cfg), 0);
    ck_assert_int_lt(find3(&f, missing, NULL, NULL), 0); /* other missing: nothing */
    kg_plan_free(f.plan);

    /* .git as a file (a worktree): no hooks directory to stand in for */
    char git[200];
    snprintf(git, sizeof git, "%s/.git", proj);
    char *rm[] = {"/bin/rm", "-rf", git, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        execv(rm[0], rm);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    kgt_write_text(git, "gitdir: /elsewhere\n");
    fixture_init(&f);
    const char *prot2[] = {hooks};
    f.pol.protect_paths = (kgate_strlist){prot2, 1};
    ck_assert_int_eq(run_plan(&f), 0);
    ck_assert_int_lt(find3(&f, hooks, NULL, NULL), 0);
    kg_plan_free(f.plan);
}
END_TEST

/* docs/escapes.md, "Host git": .git cannot be renamed or replaced, a .git
 * file is read-only, and with worktreeConfig a missing config.worktree
 * reads as empty. */
START_TEST(dot_git_pinned)
{
    fixture f;
    char git[200], cfg[220], wtc[220];
    snprintf(git, sizeof git, "%s/.git", proj);
    snprintf(cfg, sizeof cfg, "%s/config", git);
    snprintf(wtc, sizeof wtc, "%s/config.worktree", git);
    const char *prot[] = {cfg};

    kgt_write_text(cfg, "[core]\n");
    fixture_init(&f);
    f.pol.protect_paths = (kgate_strlist){prot, 1};
    ck_assert_int_eq(run_plan(&f), 0);
    long self = find3(&f, "--bind", git, git);
    ck_assert_int_gt(self, find3(&f, "--bind", proj, proj));
    ck_assert_int_gt(find3(&f, "--ro-bind", cfg, cfg), self); /* after: still read-only */
    ck_assert_int_lt(find3(&f, "--dev-bind", "/dev/null", wtc), 0);
    kg_plan_free(f.plan);

    kgt_write_text(cfg, "[core]\n\trepositoryformatversion = 1\n[extensions]\n"
                        "\tworktreeConfig = true\n");
    fixture_init(&f);
    ck_assert_int_eq(run_plan(&f), 0);
    ck_assert_int_gt(find3(&f, "--dev-bind", "/dev/null", wtc), find3(&f, "--bind", git, git));
    kg_plan_free(f.plan);

    /* there already: the protected path binds it read-only, no stand-in */
    kgt_write_text(wtc, "");
    fixture_init(&f);
    ck_assert_int_eq(run_plan(&f), 0);
    ck_assert_int_lt(find3(&f, "--dev-bind", "/dev/null", wtc), 0);
    kg_plan_free(f.plan);

    char *rm[] = {"/bin/rm", "-rf", git, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        execv(rm[0], rm);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    kgt_write_text(git, "gitdir: /elsewhere\n");
    fixture_init(&f);
    ck_assert_int_eq(run_plan(&f), 0);
    ck_assert_int_gt(find3(&f, "--ro-bind", git, git), find3(&f, "--bind", proj, proj));
    ck_assert_int_lt(find3(&f, "--bind", git, git), 0);
    kg_plan_free(f.plan);
}
END_TEST

/* Issue 40: a read-only mount pins a name, not the directories above it.
 * Each directory between the project and a protected path in it (a git
 * directory a .git file names, at any depth) is bound onto itself before
 * the read-only mounts, once, so it cannot be renamed away and rebuilt;
 * the project itself, .git (stage_git's) and a missing one get none. */
START_TEST(protected_parents_pinned)
{
    fixture f;
    char gd[200], deep[220], cfg[220], hk[220], dcfg[240], gone[240];
    snprintf(gd, sizeof gd, "%s/.realgit", proj);
    snprintf(cfg, sizeof cfg, "%s/config", gd);
    snprintf(hk, sizeof hk, "%s/hooks", gd);
    snprintf(deep, sizeof deep, "%s/a", privdir);
    snprintf(dcfg, sizeof dcfg, "%s/b/config", deep);
    snprintf(gone, sizeof gone, "%s/nothere/config", proj);
    ck_assert_int_eq(mkdir(gd, 0755), 0);
    ck_assert_int_eq(mkdir(hk, 0755), 0);
    ck_assert_int_eq(mkdir(deep, 0755), 0);
    char b[230];
    snprintf(b, sizeof b, "%s/b", deep);
    ck_assert_int_eq(mkdir(b, 0755), 0);
    kgt_write_text(cfg, "[core]\n");
    kgt_write_text(dcfg, "[core]\n");
    const char *prot[] = {cfg, hk, dcfg, gone, envfile, hooks};
    fixture_init(&f);
    f.pol.protect_paths = (kgate_strlist){prot, 6};
    ck_assert_int_eq(run_plan(&f), 0);
    long self = find3(&f, "--bind", gd, gd);
    ck_assert_int_gt(self, find3(&f, "--bind", proj, proj));
    ck_assert_int_gt(find3(&f, "--ro-bind", cfg, cfg), self);
    ck_assert_int_gt(find3(&f, "--ro-bind", hk, hk), self);
    /* every level, shallowest first */
    long p1 = find3(&f, "--bind", privdir, privdir), p2 = find3(&f, "--bind", deep, deep),
         p3 = find3(&f, "--bind", b, b);
    ck_assert_int_gt(p1, 0);
    ck_assert_int_gt(p2, p1);
    ck_assert_int_gt(p3, p2);
    ck_assert_int_gt(find3(&f, "--ro-bind", dcfg, dcfg), p3);
    /* once each; never the project again, .git once (stage_git) */
    size_t n;
    const char *const *v = argv_of(&f, &n);
    size_t binds = 0, projs = 0, gits = 0;
    char git[200];
    snprintf(git, sizeof git, "%s/.git", proj);
    for (size_t i = 0; i + 2 < n; i++) {
        if (strcmp(v[i], "--bind") != 0 || strcmp(v[i + 1], v[i + 2]) != 0) continue;
        binds += strcmp(v[i + 1], gd) == 0;
        projs += strcmp(v[i + 1], proj) == 0;
        gits += strcmp(v[i + 1], git) == 0;
    }
    ck_assert_uint_eq(binds, 1);
    ck_assert_uint_eq(projs, 1);
    ck_assert_uint_eq(gits, 1);
    char nothere[200];
    snprintf(nothere, sizeof nothere, "%s/nothere", proj);
    ck_assert_int_lt(find3(&f, "--bind", nothere, nothere), 0);
    kg_plan_free(f.plan);
}
END_TEST

START_TEST(seccomp_one_table_two_outputs)
{
    char *text = kgl_seccomp_describe();
    ck_assert_ptr_nonnull(text);
    size_t lines = 0;
    for (const char *p = text; *p; p++)
        if (*p == '\n' && p[1] && p[1] != '#') lines++;
    /* one line per rule after the comment header */
    ck_assert_uint_eq(lines, kgl_seccomp_rule_count());
    const char *calls[] = {"keyctl always: EPERM",
                           "clone3 always: ENOSYS",
                           "ioctl when request is TIOCSTI: EPERM",
                           "ioctl when request is TIOCLINUX: EPERM",
                           "unshare when flags include CLONE_NEWUSER",
                           "personality when",
                           "socket when domain is AF_VSOCK",
                           "socket when domain is AF_ALG: EAFNOSUPPORT",
                           "io_uring_setup always: ENOSYS",
                           "io_uring_enter always: ENOSYS",
                           "open_tree_attr always: EPERM",
                           "clock_settime64 always: EPERM",
                           "socketcall(SYS_SOCKET) carries its arguments in memory"};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        ck_assert_msg(strstr(text, calls[i]), "missing: %s", calls[i]);
    ck_assert_ptr_null(strstr(text, "ptrace")); /* allowed: gdb, strace */
    free(text);

    kgate_err err = {0};
    int fd = kgl_seccomp_fd(&err);
    ck_assert_msg(fd >= 10, "seccomp: %s", err.msg);
    ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    ck_assert_int_gt(st.st_size, 0);
    ck_assert_int_eq(st.st_size % 8, 0); /* whole sock_filter instructions */
    ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 0);

    /* The embedded program is what libseccomp compiles the table to now:
     * a stale one would enforce rules the dry run no longer shows. */
    int fresh = memfd_create("fresh", MFD_CLOEXEC);
    ck_assert_int_ge(fresh, 0);
    ck_assert_msg(kgl_seccomp_export(fresh, &err) == 0, "%s", err.msg);
    struct stat fst;
    ck_assert_int_eq(fstat(fresh, &fst), 0);
    ck_assert_int_eq(fst.st_size, st.st_size);
    size_t len = (size_t)st.st_size;
    unsigned char *a = malloc(len), *b = malloc(len);
    ck_assert(a && b);
    ck_assert_int_eq(pread(fd, a, len, 0), (ssize_t)len);
    ck_assert_int_eq(pread(fresh, b, len, 0), (ssize_t)len);
    ck_assert_msg(memcmp(a, b, len) == 0, "embedded seccomp program is stale");
    free(a);
    free(b);
    close(fresh);
    close(fd);
}
END_TEST

/* ---- doctor ---------------------------------------------------------- */

typedef struct machine {
    int bwrap, root, max_userns, clone, apparmor, trial;
} machine;

static kgate_report *doctor(const machine *m, kgate_network net, size_t nhosts)
{
    fixture f;
    fixture_init(&f);
    kg_plan_free(f.plan);
    bwrap_probe_from_sysctls(&f.probe, m->bwrap, m->root, m->max_userns, m->clone, m->apparmor,
                             m->trial);
    static const char *hosts[] = {"example.org"};
    f.pol.network = net;
    f.pol.allow_hosts = (kgate_strlist){hosts, nhosts};
    kgate_report *rep = kg_report_new();
    ck_assert_int_eq(bwrap_doctor(&f.host.pub, &f.pol, &f.probe, rep), 0);
    return rep;
}

static int has_item(const kgate_report *r, kgate_verdict v, const char *needle)
{
    for (size_t i = 0; i < r->n_items; i++)
        if (r->items[i].verdict == v && strstr(r->items[i].text, needle)) return 1;
    return 0;
}

START_TEST(doctor_table)
{
    const machine fine = {1, 0, 1000, -1, -1, 1};
    const machine nobwrap = {0, 0, 1000, -1, -1, -1};
    const machine max0 = {1, 0, 0, -1, -1, -1};
    const machine clone0 = {1, 0, 1000, 0, -1, -1};
    const machine clone0_root = {1, 1, 1000, 0, -1, 1};
    const machine apparmor = {1, 0, 1000, -1, 1, 0};
    const machine apparmor_quick = {1, 0, 1000, -1, 1, -1};
    kgate_report *r;

    r = doctor(&fine, KGATE_NET_OFF, 0);
    ck_assert_int_eq(r->verdict, KGATE_READY);
    ck_assert(has_item(r, KGATE_READY, "network off (--unshare-net)"));
    ck_assert(has_item(r, KGATE_READY, "home hidden"));
    kg_report_free(r);

    r = doctor(&fine, KGATE_NET_OFF, 0);
    ck_assert(has_item(r, KGATE_READY, "host Unix sockets: none reachable"));
    ck_assert(has_item(r, KGATE_READY, "abstract Unix sockets: unreachable"));
    ck_assert(has_item(r, KGATE_READY, "planted hooks:"));
    ck_assert(has_item(r, KGATE_READY, "terminal: no controlling terminal"));
    ck_assert(has_item(r, KGATE_READY, "seccomp filter:"));
    kg_report_free(r);

    r = doctor(&fine, KGATE_NET_OPEN, 0);
    ck_assert_int_eq(r->verdict, KGATE_DEGRADED);
    ck_assert(has_item(r, KGATE_DEGRADED, "the network box is not"));
    ck_assert(has_item(r, KGATE_DEGRADED, "abstract sockets"));
    kg_report_free(r);

    r = doctor(&fine, KGATE_NET_RESTRICTED, 1);
    ck_assert_int_eq(r->verdict, KGATE_BLOCKED);
    ck_assert(has_item(r, KGATE_BLOCKED, bwrap_hosts_sentence()));
    /* Known to other backends by its id, not its words. */
    size_t hosts = 0;
    for (size_t i = 0; i < r->n_items; i++)
        hosts += strcmp(r->items[i].id, KGATE_FINDING_NET_HOSTS_UNSUPPORTED) == 0 &&
                 strcmp(r->items[i].text, bwrap_hosts_sentence()) == 0;
    ck_assert_uint_eq(hosts, 1);
    kg_report_free(r);

    r = doctor(&fine, KGATE_NET_RESTRICTED, 0); /* as off */
    ck_assert_int_eq(r->verdict, KGATE_READY);
    kg_report_free(r);

    r = doctor(&nobwrap, KGATE_NET_OFF, 0);
    ck_assert_int_eq(r->verdict, KGATE_BLOCKED);
    ck_assert(has_item(r, KGATE_BLOCKED, "apt-get install bubblewrap"));
    kg_report_free(r);

    r = doctor(&max0, KGATE_NET_OFF, 0);
    ck_assert_int_eq(r->verdict, KGATE_BLOCKED);
    ck_assert(has_item(r, KGATE_BLOCKED, "user.max_user_namespaces"));
    kg_report_free(r);

    r = doctor(&clone0, KGATE_NET_OPEN, 0);
    ck_assert_int_eq(r->verdict, KGATE_BLOCKED);
    ck_assert(has_item(r, KGATE_BLOCKED, "kernel.unprivileged_userns_clone"));
    kg_report_free(r);

    r = doctor(&clone0_root, KGATE_NET_OFF, 0); /* root ignores the knob */
    ck_assert_int_eq(r->verdict, KGATE_READY);
    kg_report_free(r);

    r = doctor(&apparmor, KGATE_NET_OFF, 0);
    ck_assert_int_eq(r->verdict, KGATE_BLOCKED);
    ck_assert(has_item(r, KGATE_BLOCKED, "AppArmor"));
    kg_report_free(r);

    r = doctor(&apparmor_quick, KGATE_NET_OFF, 0);
    ck_assert_int_eq(r->verdict, KGATE_READY);
    ck_assert(has_item(r, KGATE_READY, "not tried"));
    kg_report_free(r);
}
END_TEST

START_TEST(probe_availability)
{
    kgate_probe p;
    kgate_probe_init(&p);
    bwrap_probe_from_sysctls(&p, 1, 0, 1000, -1, -1, -1);
    ck_assert_int_eq(p.available, 1);
    ck_assert_int_eq(p.score, 50);
    ck_assert_int_eq(kgate_probe_fact(&p, BWRAP_FACT_TRIAL, 9), -1);
    kgate_probe_init(&p);
    bwrap_probe_from_sysctls(&p, 1, 0, 1000, -1, 1, 0);
    ck_assert_int_eq(p.available, 0);
    ck_assert_ptr_nonnull(strstr(p.reason, "AppArmor"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bwrap_plan");
    TCase *tc = tcase_create("plan");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, golden_minimal);
    tcase_add_test(tc, namespace_flags_in_every_plan);
    tcase_add_test(tc, order_of_covers);
    tcase_add_test(tc, home_files_and_empty_cover);
    tcase_add_test(tc, nested_paths_most_specific_last);
    tcase_add_test(tc, verify_wants_each_mount_at_its_place);
    tcase_add_test(tc, network_modes);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, tmpdir_and_pty);
    tcase_add_test(tc, pty_shim_bound_when_hidden);
    tcase_add_test(tc, deny_read_parents_pinned);
    tcase_add_test(tc, pins_rewrite_the_plan);
    tcase_add_test(tc, missing_read_path_is_a_note);
    tcase_add_test(tc, missing_home_is_not_mounted);
    tcase_add_test(tc, socket_cover_and_resolv_link);
    tcase_add_test(tc, allow_sockets_bound_back);
    tcase_add_test(tc, missing_hooks_become_empty_and_read_only);
    tcase_add_test(tc, dot_git_pinned);
    tcase_add_test(tc, protected_parents_pinned);
    tcase_add_test(tc, seccomp_one_table_two_outputs);
    suite_add_tcase(s, tc);
    TCase *td = tcase_create("doctor");
    tcase_add_checked_fixture(td, setup, teardown);
    tcase_add_test(td, doctor_table);
    tcase_add_test(td, probe_availability);
    suite_add_tcase(s, td);
    return kgt_run_suite(s);
}
