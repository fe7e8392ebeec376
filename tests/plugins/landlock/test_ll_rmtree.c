/* test_ll_rmtree.c: removing the private TMPDIR (plugins/landlock/
 * ll-rmtree.c, issue 25 section 5) whatever the program left in it: a tree
 * deeper than the open-file limit, links to a directory and a file
 * outside (both survive, the directory's mode unchanged), directories of
 * mode 0 and 0500, a file of mode 0.  Run as an unprivileged uid when the
 * suite runs as root (root's DAC override would hide the mode-0 case).
 * The tree is 300 deep under an open-file limit of 32: the old walk, one
 * descriptor per level, stopped at about 28 and left it all. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ll-internal.h"
#include "testutil.h"

#define DEPTH 300

static int mk_file(int dir, const char *name, mode_t mode)
{
    int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    int ok = write(fd, "x\n", 2) == 2;
    close(fd);
    return ok && fchmodat(dir, name, mode, 0) == 0 ? 0 : -1;
}

/* The program's tree in base/tmp; base/outside is what the links name. */
static int build(const char *base)
{
    char tmp[512], out[512];
    snprintf(tmp, sizeof tmp, "%s/tmp", base);
    snprintf(out, sizeof out, "%s/outside", base);
    if (mkdir(tmp, 0700) < 0 || mkdir(out, 0755) < 0) return 1;
    int o = open(out, O_RDONLY | O_DIRECTORY);
    if (o < 0 || mk_file(o, "file", 0644) < 0) return 2;
    close(o);
    int d = open(tmp, O_RDONLY | O_DIRECTORY);
    if (d < 0) return 3;
    char target[600];
    snprintf(target, sizeof target, "%s/file", out);
    if (symlinkat(out, d, "link-dir") < 0 || symlinkat(target, d, "link-file") < 0) return 4;
    for (int i = 0; i < DEPTH; i++) {
        if (mkdirat(d, "d", 0700) < 0) return 5;
        int n = openat(d, "d", O_RDONLY | O_DIRECTORY);
        if (n < 0) return 6;
        close(d);
        d = n;
        if (i % 50 == 0 && mk_file(d, "f", 0) < 0) return 7;
    }
    if (symlinkat(out, d, "deep-link") < 0) return 8;
    /* Mode 0 with a file inside, and 0500 (readable, not writable). */
    if (mkdirat(d, "zero", 0700) < 0 || mkdirat(d, "ro", 0700) < 0) return 9;
    int z = openat(d, "zero", O_RDONLY | O_DIRECTORY), r = openat(d, "ro", O_RDONLY | O_DIRECTORY);
    if (z < 0 || r < 0 || mk_file(z, "f", 0644) < 0 || mk_file(r, "f", 0644) < 0) return 10;
    if (mkdirat(z, "inner", 0700) < 0) return 11;
    if (fchmod(z, 0) < 0 || fchmod(r, 0500) < 0) return 12;
    close(z);
    close(r);
    close(d);
    /* The top itself without rights, as a program may leave it. */
    return chmod(tmp, 0) < 0 ? 13 : 0;
}

/* In a child: build (as 65534 when root), lower the limit, remove. */
static int remove_in_child(const char *base)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0)) _exit(90);
        int b = build(base);
        if (b) _exit(b);
        struct rlimit rl = {32, 32};
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0) _exit(91);
        int parent = open(base, O_RDONLY | O_DIRECTORY);
        if (parent < 0) _exit(92);
        _exit(ll_rmtree(parent, "tmp") == 0 ? 0 : 93);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

START_TEST(a_deep_tree_with_links_and_mode_0_goes_and_nothing_outside)
{
    char base[] = "/tmp/kgate-test-rmtree.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(base));
    ck_assert_int_eq(chmod(base, 0777), 0);
    ck_assert_int_eq(remove_in_child(base), 0);
    char path[600];
    struct stat st;
    snprintf(path, sizeof path, "%s/tmp", base);
    ck_assert_int_eq(lstat(path, &st), -1);
    snprintf(path, sizeof path, "%s/outside/file", base);
    ck_assert_int_eq(lstat(path, &st), 0);
    snprintf(path, sizeof path, "%s/outside", base);
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0755);
    int b = open(base, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(b, 0);
    ck_assert_int_eq(ll_rmtree(b, "outside"), 0);
    close(b);
    ck_assert_int_eq(rmdir(base), 0);
}
END_TEST

START_TEST(a_link_or_a_file_at_the_top_is_removed_not_followed)
{
    char base[] = "/tmp/kgate-test-rmtree.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(base));
    int b = open(base, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(b, 0);
    ck_assert_int_eq(mkdirat(b, "target", 0755), 0);
    ck_assert_int_eq(symlinkat("target", b, "link"), 0);
    ck_assert_int_eq(ll_rmtree(b, "link"), 0);
    struct stat st;
    ck_assert_int_eq(fstatat(b, "target", &st, 0), 0);
    ck_assert_int_eq(fstatat(b, "link", &st, AT_SYMLINK_NOFOLLOW), -1);
    ck_assert_int_eq(ll_rmtree(b, "gone-already"), 0);
    ck_assert_int_eq(ll_rmtree(b, "target"), 0);
    close(b);
    ck_assert_int_eq(rmdir(base), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ll_rmtree");
    TCase *tc = tcase_create("rmtree");
    tcase_add_test(tc, a_deep_tree_with_links_and_mode_0_goes_and_nothing_outside);
    tcase_add_test(tc, a_link_or_a_file_at_the_top_is_removed_not_followed);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
