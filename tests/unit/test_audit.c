/* test_audit.c: the JSON Lines audit log. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "testutil.h"

/* POSIX: declared by the application (macOS's unistd.h does not). */
extern char **environ;

static char tmpdir[64];

static void setup(void)
{
    strcpy(tmpdir, "/tmp/kg-audit-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Rotating buffers, so that two paths can be used in one call. */
static char *path_in(const char *name)
{
    static char p[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
    return p[k];
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    char *buf = NULL;
    size_t cap = 0, n = 0, r;
    do {
        if (cap - n < 65536) buf = realloc(buf, cap = cap * 2 + 65536);
        r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
    } while (r > 0);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* A line is whole when it is {"time":"...Z",...}\n with no raw control
 * byte inside. */
static void check_line(const char *line, size_t len)
{
    ck_assert_uint_gt(len, 20);
    ck_assert(strncmp(line, "{\"time\":\"", 9) == 0);
    ck_assert(line[len - 1] == '}');
    size_t bad = len;
    for (size_t i = 0; i < len && bad == len; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f) bad = i;
    ck_assert_msg(bad == len, "raw control byte at %zu of a line", bad);
}

START_TEST(format_keys_in_order)
{
    const char *argv[] = {"git", "status"};
    kg_strv *paths = kg_strv_new(), *empty = kg_strv_new();
    kg_strv_push(paths, "/tmp/x");
    kg_audit_event ev = {.kind = "launch", .argv = argv, .argc = 2,
                         .cwd = "/p", .backend = "bubblewrap",
                         .network = "off", .reason = "",
                         .allow_paths = paths, .allow_hosts = empty};
    UT_string *s;
    utstring_new(s);
    kg_audit_format(&ev, s);
    const char *l = utstring_body(s);
    /* 2026-11-29T13:51:13.123Z */
    ck_assert(strncmp(l, "{\"time\":\"", 9) == 0);
    ck_assert(l[13] == '-' && l[16] == '-' && l[19] == 'T' && l[22] == ':' &&
              l[25] == ':' && l[28] == '.' && l[32] == 'Z' && l[33] == '"');
    char pid[64];
    snprintf(pid, sizeof pid, ",\"pid\":%ld,", (long)getpid());
    const char *rest = l + 34;
    ck_assert_str_eq(strstr(rest, ",\"kind\""), rest);
    char want[512];
    snprintf(want, sizeof want,
             ",\"kind\":\"launch\",\"argv\":[\"git\",\"status\"],\"cwd\":\"/p\""
             "%s\"backend\":\"bubblewrap\",\"network\":\"off\","
             "\"allow_paths\":[\"/tmp/x\"]}\n",
             pid + 0);
    /* pid ends with a comma that is the separator before backend. */
    ck_assert_str_eq(rest, want);
    kg_strv_free(paths);
    kg_strv_free(empty);
    utstring_free(s);
}
END_TEST

START_TEST(hostile_argv_stays_one_line)
{
    const char *argv[] = {"sh", "-c", "echo \"hi\"\n\rrm -rf / \\ \x01\x1b[31m",
                          "\xff\xfe invalid \xc3\x28 utf8", "ok \xc3\xa9"};
    kg_strv *withheld = kg_strv_new();
    kg_strv_push(withheld, "GITHUB_TOKEN");
    kg_audit_event ev = {.kind = "block", .argv = argv, .argc = 5,
                         .cwd = "/dir\nwith newline", .reason = "curl \"denied\"",
                         .withheld_env = withheld};
    ck_assert_int_eq(kg_audit_write(path_in("a/audit.log"), &ev, NULL), 0);
    size_t len;
    char *buf = slurp(path_in("a/audit.log"), &len);
    ck_assert_uint_gt(len, 0);
    ck_assert(buf[len - 1] == '\n');
    ck_assert_ptr_eq(strchr(buf, '\n'), buf + len - 1);
    check_line(buf, len - 1);
    ck_assert_ptr_nonnull(strstr(buf, "\\\"hi\\\"\\n\\r"));
    ck_assert_ptr_nonnull(strstr(buf, "\\u00ff\\u00fe invalid \\u00c3( utf8"));
    ck_assert_ptr_nonnull(strstr(buf, "ok \xc3\xa9"));
    ck_assert_ptr_nonnull(strstr(buf, "\"withheld_env\":[\"GITHUB_TOKEN\"]"));
    free(buf);
    kg_strv_free(withheld);
}
END_TEST

START_TEST(creates_private_dir_and_file)
{
    const char *argv[] = {"true"};
    kg_audit_event ev = {.kind = "launch", .argv = argv, .argc = 1, .cwd = "/"};
    mode_t old = umask(0);
    ck_assert_int_eq(kg_audit_write(path_in(".kgate/audit.log"), &ev, NULL), 0);
    umask(old);
    struct stat st;
    ck_assert_int_eq(stat(path_in(".kgate"), &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0700);
    ck_assert_int_eq(stat(path_in(".kgate/audit.log"), &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0600);
    /* A second line appends. */
    ck_assert_int_eq(kg_audit_write(path_in(".kgate/audit.log"), &ev, NULL), 0);
    size_t len;
    char *buf = slurp(path_in(".kgate/audit.log"), &len);
    ck_assert_ptr_nonnull(strchr(buf, '\n'));
    ck_assert_ptr_eq(strchr(strchr(buf, '\n') + 1, '\n'), buf + len - 1);
    free(buf);
}
END_TEST

START_TEST(unwritable_logs_fail)
{
    const char *argv[] = {"true"};
    kg_audit_event ev = {.kind = "launch", .argv = argv, .argc = 1, .cwd = "/"};
    kg_error err = {0};

    /* A symlinked log is refused, and its target untouched. */
    ck_assert_int_eq(symlink(path_in("target"), path_in("link.log")), 0);
    ck_assert_int_eq(kg_audit_write(path_in("link.log"), &ev, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "symlink"));
    ck_assert_int_eq(access(path_in("target"), F_OK), -1);

    /* A directory, a FIFO (must not block), a missing parent's parent. */
    ck_assert_int_eq(mkdir(path_in("dir.log"), 0700), 0);
    ck_assert_int_eq(kg_audit_write(path_in("dir.log"), &ev, &err), -1);
    ck_assert_int_eq(mkfifo(path_in("fifo.log"), 0600), 0);
    ck_assert_int_eq(kg_audit_write(path_in("fifo.log"), &ev, &err), -1);
    ck_assert_int_eq(kg_audit_write(path_in("no/such/audit.log"), &ev, &err), -1);
    ck_assert_int_eq(kg_audit_write("", &ev, &err), -1);

    /* A write that fails (a full disk) is an error, not a silent loss. */
    int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(kg_audit_write_fd(fd, &ev, &err), -1);
    ck_assert_int_eq(err.code, ENOSPC);
    close(fd);

    /* A read-only descriptor (the unprivileged case of a 0400 log). */
    int ro = open(path_in("ro.log"), O_RDONLY | O_CREAT | O_CLOEXEC, 0400);
    ck_assert_int_ge(ro, 0);
    ck_assert_int_eq(kg_audit_write_fd(ro, &ev, &err), -1);
    close(ro);
}
END_TEST

#define WRITERS 50
#define LINES 20

START_TEST(concurrent_writers_whole_lines)
{
    const char *log = path_in(".kgate/audit.log");
    pid_t pids[WRITERS];
    /* Writers are this binary re-executed (posix_spawn): forking a
     * sanitizer-instrumented process fifty times costs half a minute. */
    for (int w = 0; w < WRITERS; w++) {
        char num[16];
        snprintf(num, sizeof num, "%d", w);
        char *const argv[] = {"test_audit", "--writer", (char *)log, num, NULL};
        ck_assert_int_eq(posix_spawn(&pids[w], "/proc/self/exe", NULL, NULL,
                                     argv, environ), 0);
    }
    for (int w = 0; w < WRITERS; w++) {
        int st;
        ck_assert_int_eq(waitpid(pids[w], &st, 0), pids[w]);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    size_t len;
    char *buf = slurp(log, &len);
    int count[WRITERS][LINES] = {{0}};
    size_t lines = 0;
    for (char *l = buf; l < buf + len;) {
        char *nl = memchr(l, '\n', (size_t)(buf + len - l));
        ck_assert_ptr_nonnull(nl);
        check_line(l, (size_t)(nl - l));
        *nl = '\0';
        char *r = strstr(l, "\"reason\":\"w");
        ck_assert_ptr_nonnull(r);
        int w, i;
        ck_assert_int_eq(sscanf(r, "\"reason\":\"w%d-l%d\"", &w, &i), 2);
        ck_assert(w >= 0 && w < WRITERS && i >= 0 && i < LINES);
        /* The line's argv is this writer's and nobody else's. */
        char c = (char)('a' + (w % 26));
        char *q = strstr(l, "\"argv\":[\"") + 9;
        while (*q == c || *q == '"' || *q == ',') q++;
        ck_assert_int_eq(*q, ']');
        count[w][i]++;
        lines++;
        l = nl + 1;
    }
    ck_assert_uint_eq(lines, WRITERS * LINES);
    for (int w = 0; w < WRITERS; w++)
        for (int i = 0; i < LINES; i++) ck_assert_int_eq(count[w][i], 1);
    free(buf);
}
END_TEST

/* One concurrent writer: LINES long lines tagged with its number. */
static int writer(const char *log, int w)
{
    static char args[40][200];
    const char *argv[40];
    for (int a = 0; a < 40; a++) {
        memset(args[a], 'a' + (w % 26), sizeof args[a] - 1);
        args[a][sizeof args[a] - 1] = '\0';
        argv[a] = args[a];
    }
    for (int i = 0; i < LINES; i++) {
        char reason[32];
        snprintf(reason, sizeof reason, "w%d-l%d", w, i);
        kg_audit_event ev = {.kind = "launch", .argv = argv, .argc = 40,
                             .cwd = "/project", .reason = reason};
        if (kg_audit_write(log, &ev, NULL) < 0) return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--writer") == 0)
        return writer(argv[2], atoi(argv[3]));
    Suite *s = suite_create("audit");
    TCase *tc = tcase_create("log");
    tcase_add_checked_fixture(tc, setup, teardown);
    /* Fifty sanitizer-instrumented processes on a loaded machine. */
    tcase_set_timeout(tc, 110);
    tcase_add_test(tc, format_keys_in_order);
    tcase_add_test(tc, hostile_argv_stays_one_line);
    tcase_add_test(tc, creates_private_dir_and_file);
    tcase_add_test(tc, unwritable_logs_fail);
    tcase_add_test(tc, concurrent_writers_whole_lines);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
