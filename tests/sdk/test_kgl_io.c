/* test_kgl_io.c: kgl_read_to_eof (sdk/linux/kgl-io.c), its two modes and
 * its bound, on pipes and a socket pair. */
#include "testutil.h"

#include "kgate/kgate-linux.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* FILL ends once buf is full: the writer's end is still open here, so a
 * read that waited for the EOF would run into the bound instead. */
START_TEST(fill_stops_when_full)
{
    int p[2] = {-1, -1};
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(kgl_write_all(p[1], "abcdefgh", 8), 0);
    char buf[5] = "";
    ck_assert_int_eq(kgl_read_to_eof(p[0], buf, sizeof buf, 5000, KGL_READ_FILL), 4);
    ck_assert_str_eq(buf, "abcd");
    close(p[0]);
    close(p[1]);
}
END_TEST

/* DRAIN reads a writer's 256 KiB (four pipe buffers) to its end, keeping
 * the first bytes: a writer left blocked on a full pipe never exits. */
START_TEST(drain_reads_to_the_end_and_keeps_the_start)
{
    int p[2] = {-1, -1};
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(p[0]);
        static char big[256 * 1024];
        memset(big, 'x', sizeof big);
        memcpy(big, "start", 5);
        _exit(kgl_write_all(p[1], big, sizeof big) == 0 ? 0 : 1);
    }
    close(p[1]);
    char buf[8] = "";
    ck_assert_int_eq(kgl_read_to_eof(p[0], buf, sizeof buf, 10000, KGL_READ_DRAIN), 7);
    ck_assert_str_eq(buf, "startxx");
    int st = kgl_reap(pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(p[0]);
}
END_TEST

/* The bound: -1 with ETIMEDOUT, and what came before it is in buf. */
START_TEST(timeout_keeps_what_came)
{
    for (int mode = KGL_READ_FILL; mode <= KGL_READ_DRAIN; mode++) {
        int p[2] = {-1, -1};
        ck_assert_int_eq(pipe(p), 0);
        ck_assert_int_eq(kgl_write_all(p[1], "ab", 2), 0);
        char buf[16] = "zzzzzzzzzzzzzzz";
        errno = 0;
        ck_assert_int_eq(kgl_read_to_eof(p[0], buf, sizeof buf, 50, mode), -1);
        ck_assert_int_eq(errno, ETIMEDOUT);
        ck_assert_str_eq(buf, "ab");
        close(p[0]);
        close(p[1]);
    }
}
END_TEST

/* A socket peer that closes with our "G" unread: its last bytes, then
 * ECONNRESET, which DRAIN takes as the end and FILL as an error. */
START_TEST(reset_after_the_message)
{
    for (int mode = KGL_READ_FILL; mode <= KGL_READ_DRAIN; mode++) {
        int sv[2] = {-1, -1};
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        ck_assert_int_eq(send(sv[0], "G", 1, MSG_NOSIGNAL), 1);
        ck_assert_int_eq(kgl_write_all(sv[1], "Eno luck", 8), 0);
        close(sv[1]);
        char buf[64] = "";
        ssize_t got = kgl_read_to_eof(sv[0], buf, sizeof buf, 5000, mode);
        if (mode == KGL_READ_DRAIN) {
            ck_assert_int_eq(got, 8);
            ck_assert_str_eq(buf, "Eno luck");
        } else {
            ck_assert_int_eq(got, -1);
            ck_assert_int_eq(errno, ECONNRESET);
        }
        close(sv[0]);
    }
}
END_TEST

/* No bound (0): the EOF ends it. */
START_TEST(no_bound_reads_to_eof)
{
    int p[2] = {-1, -1};
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(kgl_write_all(p[1], "info", 4), 0);
    close(p[1]);
    char buf[16] = "";
    ck_assert_int_eq(kgl_read_to_eof(p[0], buf, sizeof buf, 0, KGL_READ_FILL), 4);
    ck_assert_str_eq(buf, "info");
    close(p[0]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kgl_io");
    TCase *tc = tcase_create("read_to_eof");
    tcase_add_test(tc, fill_stops_when_full);
    tcase_add_test(tc, drain_reads_to_the_end_and_keeps_the_start);
    tcase_add_test(tc, timeout_keeps_what_came);
    tcase_add_test(tc, reset_after_the_message);
    tcase_add_test(tc, no_bound_reads_to_eof);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
