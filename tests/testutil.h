/* testutil.h: what the check-based tests share.  Header-only: each test is
 * its own executable. */
#ifndef KG_TESTUTIL_H
#define KG_TESTUTIL_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* Runs s (fork mode unless CK_FORK=no) and returns main()'s status. */
static inline int kgt_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed != 0;
}

/* Creates or truncates path with exactly len bytes of data and exactly
 * mode (the umask does not apply); any failure fails the test. */
static inline void kgt_write_file(const char *path, const void *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
    ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
    ck_assert_int_eq(fchmod(fd, mode), 0);
    close(fd);
}

/* A text file, mode 0644. */
static inline void kgt_write_text(const char *path, const char *text)
{
    kgt_write_file(path, text, strlen(text), 0644);
}

#endif
