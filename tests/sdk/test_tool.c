/* test_tool.c: where the programs run outside the box are found
 * (sdk/common/kgate-tool.c): never on PATH, only a file that root or the
 * user alone can change, never under a place the policy lets the box
 * write. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kgate/kgate-tool.h"
#include "testutil.h"

static char tmp[] = "/tmp/kgt-tool.XXXXXX";

/* A tool of PATH's first directory, in a directory of the test's own. */
START_TEST(path_is_never_read)
{
    char dir[256], file[PATH_MAX], out[PATH_MAX];
    kgate_err err = {0};
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    snprintf(dir, sizeof dir, "%s/bin", tmp);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(file, sizeof file, "%s/sh", dir);
    kgt_write_file(file, "#!/bin/sh\n", 10, 0755);
    snprintf(file, sizeof file, "%s/kgt-only-on-path", dir);
    kgt_write_file(file, "#!/bin/sh\n", 10, 0755);
    setenv("PATH", dir, 1);
    /* sh is found, and it is the system's. */
    ck_assert_int_eq(kgate_tool_find("sh", out, sizeof out, &err), 0);
    ck_assert_msg(strncmp(out, tmp, strlen(tmp)) != 0, "%s", out);
    ck_assert_msg(out[0] == '/' && strstr(out, "/bin/"), "%s", out);
    /* A name that only PATH has is not found, and the reason says so. */
    ck_assert_int_eq(kgate_tool_find("kgt-only-on-path", out, sizeof out, &err), -1);
    ck_assert_int_eq(err.code, ENOENT);
    ck_assert_msg(strstr(err.msg, "does not search PATH"), "%s", err.msg);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(kgate_tool_find("../bin/sh", out, sizeof out, &err), -1);
    ck_assert_int_eq(err.code, EINVAL);
    unlink(file);
    snprintf(file, sizeof file, "%s/sh", dir);
    unlink(file);
    rmdir(dir);
    rmdir(tmp);
}
END_TEST

/* /tmp is writable by everyone: nothing under it is a tool, also through
 * a link from a trusted place (the resolved file is what is checked). */
START_TEST(writable_by_others_is_refused)
{
    char file[PATH_MAX];
    kgate_err err = {0};
    snprintf(tmp, sizeof tmp, "/tmp/kgt-tool.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    snprintf(file, sizeof file, "%s/bwrap", tmp);
    kgt_write_file(file, "#!/bin/sh\n", 10, 0755);
    ck_assert_int_eq(kgate_tool_trusted(file, NULL, 0, &err), -1);
    ck_assert_msg(strstr(err.msg, "/tmp is writable by others"), "%s", err.msg);
    ck_assert_int_eq(kgate_tool_trusted("bin/sh", NULL, 0, &err), -1);
    ck_assert_int_eq(kgate_tool_trusted("/nonexistent/kgt", NULL, 0, &err), -1);
    /* The system's sh is trusted, and its resolved path given. */
    char real[PATH_MAX];
    ck_assert_int_eq(kgate_tool_trusted("/bin/sh", real, sizeof real, &err), 0);
    ck_assert_msg(real[0] == '/' && !strstr(real, "/tmp"), "%s", real);
    unlink(file);
    rmdir(tmp);
}
END_TEST

/* Below a directory that root or the user owns (the build directory, where
 * meson runs the test): trusted until the file or its directory becomes
 * writable by a group or by others. */
START_TEST(group_and_other_write_bits)
{
    char cwd[1024], dir[1100], file[PATH_MAX];
    kgate_err err = {0};
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(dir, sizeof dir, "%s/kgt-tool-%ld", cwd, (long)getpid());
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    ck_assert_int_eq(chmod(dir, 0755), 0);
    snprintf(file, sizeof file, "%s/nft", dir);
    kgt_write_file(file, "#!/bin/sh\n", 10, 0755);
    ck_assert_int_eq(chmod(file, 0755), 0);
    if (kgate_tool_trusted(file, NULL, 0, &err) == 0) {
        ck_assert_int_eq(chmod(file, 0775), 0);
        ck_assert_int_eq(kgate_tool_trusted(file, NULL, 0, &err), -1);
        ck_assert_msg(strstr(err.msg, "writable by its group (mode 0775)"), "%s", err.msg);
        ck_assert_int_eq(chmod(file, 0755), 0);
        ck_assert_int_eq(chmod(dir, 0757), 0);
        ck_assert_int_eq(kgate_tool_trusted(file, NULL, 0, &err), -1);
        ck_assert_msg(strstr(err.msg, "writable by others (mode 0757)"), "%s", err.msg);
    } else {
        /* The build directory itself is somewhere others may write. */
        fprintf(stderr, "# not under a trusted directory: %s\n", err.msg);
    }
    unlink(file);
    rmdir(dir);
}
END_TEST

/* Rule 3: under the project, an allow_paths entry or TMPDIR is refused,
 * for a file and for the lookup directories. */
START_TEST(under_a_writable_root_is_refused)
{
    static const char *const allow_usr[] = {"/var/tmp", "/usr"};
    kgate_policy pol = {.struct_size = sizeof pol, .project = "/home/u/proj", .tmpdir = NULL};
    kgate_err err = {0};
    ck_assert_int_eq(kgate_tool_outside_policy("/usr/bin/bwrap", &pol, &err), 0);
    ck_assert_int_eq(kgate_tool_dirs_outside_policy(&pol, &err), 0);
    ck_assert_int_eq(kgate_tool_outside_policy("/home/u/proj/node_modules/.bin/bwrap", &pol, &err),
                     -1);
    ck_assert_msg(strstr(err.msg, "lies under /home/u/proj"), "%s", err.msg);
    ck_assert_int_eq(kgate_tool_outside_policy("/home/u/projx/bwrap", &pol, &err), 0);
    pol.tmpdir = "/home/u/t";
    ck_assert_int_eq(kgate_tool_outside_policy("/home/u/t/git", &pol, &err), -1);
    pol.allow_paths = (kgate_strlist){allow_usr, 2};
    ck_assert_int_eq(kgate_tool_outside_policy("/usr/bin/bwrap", &pol, &err), -1);
    ck_assert_int_eq(kgate_tool_dirs_outside_policy(&pol, &err), -1);
    ck_assert_msg(strstr(err.msg, "which the box may write"), "%s", err.msg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tool");
    TCase *tc = tcase_create("find");
    tcase_add_test(tc, path_is_never_read);
    tcase_add_test(tc, writable_by_others_is_refused);
    tcase_add_test(tc, group_and_other_write_bits);
    tcase_add_test(tc, under_a_writable_root_is_refused);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
