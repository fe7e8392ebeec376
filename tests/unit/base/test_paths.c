/* test_paths.c: path resolution and the symlink refusal (core/base/paths.c). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paths.h"
#include "testutil.h"

static char root[PATH_MAX]; /* a resolved temporary directory */

static void setup(void)
{
    char t[] = "/tmp/kgtest-paths.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(t));
    ck_assert_ptr_nonnull(realpath(t, root));
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/home", root);
    ck_assert_int_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/home/proj", root);
    ck_assert_int_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/home/proj/file", root);
    int fd = open(p, O_CREAT | O_WRONLY, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    snprintf(p, sizeof p, "%s/other", root);
    ck_assert_int_eq(mkdir(p, 0700), 0);
    char t2[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/other", root);
    snprintf(t2, sizeof t2, "%s/home/proj/link", root);
    ck_assert_int_eq(symlink(p, t2), 0);
    snprintf(t2, sizeof t2, "%s/home/proj/dangling", root);
    ck_assert_int_eq(symlink("/nonexistent/kgate/target", t2), 0);
}

static void teardown(void)
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
}

static char *at(const char *rel)
{
    static char buf[4][PATH_MAX + 64];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s%s", root, rel);
    return buf[i];
}

/* Resolves and compares with want (NULL: must fail). */
static void expect(const char *path, const char *base, bool missing_ok, const char *want)
{
    kg_error err = {0};
    char *r = kg_path_resolve(path, base, at("/home"), missing_ok, &err);
    if (want) {
        ck_assert_msg(r != NULL, "%s: %s", path, err.msg);
        ck_assert_str_eq(r, want);
    } else {
        ck_assert_msg(r == NULL, "%s resolved to %s", path, r ? r : "");
    }
    free(r);
}

static void expect_err(const char *path, const char *base, bool missing_ok, const char *msg)
{
    kg_error err = {0};
    char *r = kg_path_resolve(path, base, at("/home"), missing_ok, &err);
    ck_assert_msg(r == NULL, "%s resolved to %s", path, r ? r : "");
    ck_assert_str_eq(err.msg, msg);
}

START_TEST(test_plain)
{
    expect(at("/home/proj"), NULL, false, at("/home/proj"));
    expect(at("/home/proj/"), NULL, false, at("/home/proj"));
    expect(at("//home///proj/./"), NULL, false, at("/home/proj"));
    expect(at("/home/proj/../proj/file"), NULL, false, at("/home/proj/file"));
    expect("/", NULL, false, "/");
    expect("/..", NULL, false, "/");
    expect("/../..//tmp/..", NULL, false, "/");
}
END_TEST

START_TEST(test_relative_and_tilde)
{
    expect("file", at("/home/proj"), false, at("/home/proj/file"));
    expect("./proj/file", at("/home"), false, at("/home/proj/file"));
    expect("..", at("/home/proj"), false, at("/home"));
    expect("~", NULL, false, at("/home"));
    expect("~/", NULL, false, at("/home"));
    expect("~/proj/file", at("/other"), false, at("/home/proj/file"));
    kg_error err = {0};
    ck_assert_ptr_null(kg_path_resolve("~root/x", NULL, at("/home"), true, &err));
    ck_assert_str_eq(err.msg, "~root/x: '~user' is not supported; write the path out");
    ck_assert_ptr_null(kg_path_resolve("~/x", NULL, NULL, true, &err));
    ck_assert_str_eq(err.msg, "~/x: cannot expand '~': HOME is not an absolute path");
    ck_assert_ptr_null(kg_path_resolve("x", NULL, at("/home"), true, &err));
    ck_assert_str_eq(err.msg, "x: relative path without a base directory");
    ck_assert_ptr_null(kg_path_resolve("", "/", "/", true, &err));
    ck_assert_str_eq(err.msg, "empty path");
    /* Longer than PATH_MAX once joined, although missing is allowed. */
    char *longp = malloc(PATH_MAX + 10);
    ck_assert_ptr_nonnull(longp);
    memset(longp, 'x', PATH_MAX + 8);
    for (size_t i = 100; i < PATH_MAX + 8; i += 100) longp[i] = '/';
    longp[PATH_MAX + 8] = '\0';
    ck_assert_ptr_null(kg_path_resolve(longp, at("/home"), "/", true, &err));
    ck_assert_int_eq(err.code, ENAMETOOLONG);
    free(longp);
    /* A "~" that is not a prefix is a file name like any other. */
    expect("a~b", at("/home"), true, at("/home/a~b"));
}
END_TEST

START_TEST(test_symlink_refused)
{
    char msg[PATH_MAX * 3];
    snprintf(msg, sizeof msg,
             "%s: resolves to %s through a symlink; kgate does not rewrite paths, "
             "write %s instead",
             at("/home/proj/link"), at("/other"), at("/other"));
    expect_err(at("/home/proj/link"), NULL, false, msg);
    /* Through a symlinked directory, and with a relative spelling. */
    snprintf(msg, sizeof msg,
             "link/x: resolves to %s through a symlink; kgate does not rewrite paths, "
             "write %s instead",
             at("/other/x"), at("/other/x"));
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/other/x", root);
    int fd = open(p, O_CREAT | O_WRONLY, 0600);
    close(fd);
    expect_err("link/x", at("/home/proj"), false, msg);
    /* A missing name below a symlinked directory: the same refusal. */
    snprintf(msg, sizeof msg,
             "link/missing/y: resolves to %s through a symlink; kgate does not rewrite "
             "paths, write %s instead",
             at("/other/missing/y"), at("/other/missing/y"));
    expect_err("link/missing/y", at("/home/proj"), true, msg);
    /* ".." after a symlink: lexically it stays in proj, the kernel would
     * not; either way it is not what was written. */
    expect("link/..", at("/home/proj"), false, NULL);
}
END_TEST

START_TEST(test_dangling_and_missing)
{
    kg_error err = {0};
    char want[PATH_MAX * 2];
    snprintf(want, sizeof want, "%s: %s is a dangling symlink; kgate does not follow it",
             at("/home/proj/dangling"), at("/home/proj/dangling"));
    expect_err(at("/home/proj/dangling"), NULL, true, want);
    snprintf(want, sizeof want, "dangling/x: %s is a dangling symlink; kgate does not follow it",
             at("/home/proj/dangling"));
    expect_err("dangling/x", at("/home/proj"), true, want);

    /* Missing: refused unless may_be_missing; then the lexical path. */
    expect_err("nothere", at("/home/proj"), false, "nothere: does not exist");
    expect("nothere", at("/home/proj"), true, at("/home/proj/nothere"));
    expect("a/b/c/.env", at("/home/proj"), true, at("/home/proj/a/b/c/.env"));
    expect("a/./b//.env", at("/home/proj"), true, at("/home/proj/a/b/.env"));
    /* ".." below a missing name: the kernel fails there, and folding it
     * could land on a path nobody checked ("missing/../link"). */
    char m2[PATH_MAX * 2];
    snprintf(m2, sizeof m2, "missing/../link: '..' below %s, which does not exist",
             at("/home/proj/missing"));
    expect_err("missing/../link", at("/home/proj"), true, m2);
    /* Below a regular file nothing can exist. */
    char *r = kg_path_resolve("file/x", at("/home/proj"), at("/home"), true, &err);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(err.code, ENOTDIR);
    char msg[PATH_MAX * 2];
    snprintf(msg, sizeof msg, "file/x: %s is not a directory", at("/home/proj/file"));
    ck_assert_str_eq(err.msg, msg);
    /* An existing file reached through "file/.." is not a directory walk
     * the kernel would allow: realpath says ENOTDIR. */
    expect("file/..", at("/home/proj"), false, NULL);
}
END_TEST

START_TEST(test_unreadable_parent)
{
    if (geteuid() == 0) return; /* root reads everything; nothing to show */
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/locked", root);
    ck_assert_int_eq(mkdir(p, 0), 0);
    kg_error err = {0};
    snprintf(p, sizeof p, "%s/locked/x", root);
    ck_assert_ptr_null(kg_path_resolve(p, NULL, "/", true, &err));
    ck_assert_int_eq(err.code, EACCES);
    snprintf(p, sizeof p, "%s/locked", root);
    chmod(p, 0700);
}
END_TEST

START_TEST(test_lexical)
{
    kg_error err = {0};
    char *r = kg_path_lexical("link/../.vscode/", "/p/q", "/h", &err);
    ck_assert_str_eq(r, "/p/q/.vscode");
    free(r);
    r = kg_path_lexical("~/.x", "/p", "/h", &err);
    ck_assert_str_eq(r, "/h/.x");
    free(r);
    ck_assert_ptr_null(kg_path_lexical("", "/p", "/h", &err));
}
END_TEST

START_TEST(test_within)
{
    static const struct {
        const char *path, *dir;
        bool within;
    } cases[] = {
        {"/home/u", "/home/u", true},     {"/home/u/x", "/home/u", true},
        {"/home/user", "/home/u", false}, {"/home", "/home/u", false},
        {"/anything", "/", true},         {"/", "/", true},
        {"/home/u", "/home/u/x", false},  {"relative", "/", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(kg_path_is_within(cases[i].path, cases[i].dir) == cases[i].within, "%s in %s",
                      cases[i].path, cases[i].dir);
    ck_assert(kg_path_covers_home("/", "/home/u"));
    ck_assert(kg_path_covers_home("/home", "/home/u"));
    ck_assert(kg_path_covers_home("/home/u", "/home/u"));
    ck_assert(!kg_path_covers_home("/home/u/proj", "/home/u"));
    ck_assert(!kg_path_covers_home("/home/user", "/home/u"));
    ck_assert(!kg_path_covers_home("/srv", "/home/u"));
    /* By identity: a path that reaches the directory under another name
     * (a symlinked parent here; a bind mount in the integration test). */
    char d[PATH_MAX + 16], alias[PATH_MAX + 16], inside[PATH_MAX + 32];
    snprintf(d, sizeof d, "%s/id-dir", root);
    snprintf(alias, sizeof alias, "%s/id-alias", root);
    snprintf(inside, sizeof inside, "%s/id-alias/sub", root);
    ck_assert_int_eq(mkdir(d, 0755), 0);
    ck_assert_int_eq(symlink(d, alias), 0);
    char sub[PATH_MAX + 32];
    snprintf(sub, sizeof sub, "%s/sub", d);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    ck_assert(kg_path_inside_by_id(inside, d));
    ck_assert(kg_path_inside_by_id(d, d));
    ck_assert(kg_path_inside_by_id(sub, "/"));
    ck_assert(!kg_path_inside_by_id(d, sub));
    ck_assert(!kg_path_inside_by_id(d, "/nonexistent-kg"));
    ck_assert(!kg_path_inside_by_id("relative", d));
    ck_assert(kg_path_covers_home(d, inside)); /* home spelled through the alias */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("paths");
    TCase *tc = tcase_create("paths");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_plain);
    tcase_add_test(tc, test_relative_and_tilde);
    tcase_add_test(tc, test_symlink_refused);
    tcase_add_test(tc, test_dangling_and_missing);
    tcase_add_test(tc, test_unreadable_parent);
    tcase_add_test(tc, test_lexical);
    tcase_add_test(tc, test_within);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
