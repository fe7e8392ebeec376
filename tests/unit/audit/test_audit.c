/* test_audit.c: the JSON Lines audit log. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <signal.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "auditread.h"
#include "auditrun.h"
#include "json.h"
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
    kg_audit_event ev = {.kind = "launch",
                         .argv = argv,
                         .argc = 2,
                         .cwd = "/p",
                         .backend = "bubblewrap",
                         .network = "off",
                         .reason = "",
                         .allow_paths = paths,
                         .allow_hosts = empty};
    UT_string *s;
    utstring_new(s);
    kg_audit_format(&ev, s);
    const char *l = utstring_body(s);
    /* 2026-11-29T13:51:13.123Z */
    ck_assert(strncmp(l, "{\"time\":\"", 9) == 0);
    ck_assert(l[13] == '-' && l[16] == '-' && l[19] == 'T' && l[22] == ':' && l[25] == ':' &&
              l[28] == '.' && l[32] == 'Z' && l[33] == '"');
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
    kg_audit_event ev = {.kind = "block",
                         .argv = argv,
                         .argc = 5,
                         .cwd = "/dir\nwith newline",
                         .reason = "curl \"denied\"",
                         .withheld_env = withheld};
    ck_assert_int_eq(kg_audit_write(path_in("a/audit.log"), &ev, NULL), 0);
    size_t len;
    char *buf = slurp(path_in("a/audit.log"), &len);
    ck_assert_uint_gt(len, 0);
    ck_assert(buf[len - 1] == '\n');
    ck_assert_ptr_eq(strchr(buf, '\n'), buf + len - 1);
    check_line(buf, len - 1);
    ck_assert_ptr_nonnull(strstr(buf, "\\\"hi\\\"\\n\\r"));
    /* Bytes that are not UTF-8 are lone surrogates U+DC00+byte, never the
     * character of the same number: caf\xe9 and café stay apart. */
    ck_assert_ptr_nonnull(strstr(buf, "\\udcff\\udcfe invalid \\udcc3( utf8"));
    ck_assert_ptr_null(strstr(buf, "\\u00ff"));
    ck_assert_ptr_nonnull(strstr(buf, "ok \xc3\xa9"));
    ck_assert_ptr_nonnull(strstr(buf, "\"withheld_env\":[\"GITHUB_TOKEN\"]"));
    free(buf);
    kg_strv_free(withheld);
}
END_TEST

/* The JSON string of s, for comparing escapes. */
static char *json_of(const char *s)
{
    UT_string *u;
    utstring_new(u);
    kg_json_str(u, s);
    char *r = strdup(utstring_body(u));
    utstring_free(u);
    return r;
}

START_TEST(invalid_utf8_is_told_from_characters)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"caf\xe9", "\"caf\\udce9\""},
        {"caf\xc3\xa9", "\"caf\xc3\xa9\""}, /* a real e-acute */
        {"\xed\xa0\x80", "\"\\udced\\udca0\\udc80\""}, /* an encoded surrogate */
        {"\xc0\xaf", "\"\\udcc0\\udcaf\""}, /* overlong '/' */
        {"\xf4\x90\x80\x80", "\"\\udcf4\\udc90\\udc80\\udc80\""}, /* past U+10FFFF */
        {"x\xe2\x82", "\"x\\udce2\\udc82\""}, /* cut short */
        {"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""}, /* U+1F600 stays itself */
        {"\\udce9", "\"\\\\udce9\""}, /* the text is not the escape */
        {"\x1b[2J\x7f", "\"\\u001b[2J\\u007f\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = json_of(cases[i].in);
        ck_assert_msg(strcmp(got, cases[i].out) == 0, "case %zu: %s", i, got);
        free(got);
    }
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

/* kg_audit_verify over the files, expecting status want; returns the
 * report. */
static char *verifyn(const char *const *files, size_t n, int want)
{
    UT_string *out;
    utstring_new(out);
    kg_error err = {0};
    size_t records;
    int r = kg_audit_verify(files, n, &records, out, &err);
    ck_assert_msg(r == want, "verify gave %d: %s%s", r, utstring_body(out), err.msg);
    char *msg = strdup(r < 0 ? err.msg : utstring_body(out));
    utstring_free(out);
    return msg;
}

static char *verify1(const char *file, int want)
{
    const char *files[] = {file};
    return verifyn(files, 1, want);
}

static void write_records(const char *log, int n)
{
    const char *argv[] = {"make", "-j2"};
    for (int i = 0; i < n; i++) {
        char reason[16];
        snprintf(reason, sizeof reason, "r%d", i + 1);
        kg_audit_event ev = {
            .kind = "launch", .argv = argv, .argc = 2, .cwd = "/p", .reason = reason};
        kg_error err = {0};
        ck_assert_msg(kg_audit_write(log, &ev, &err) == 0, "%s", err.msg);
    }
}

static void spit(const char *path, const char *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* The log's records as separate strings (newlines kept), at most 16. */
static size_t split_records(char *buf, size_t len, char *rec[16])
{
    size_t n = 0;
    for (char *l = buf; l < buf + len && n < 16;) {
        char *nl = memchr(l, '\n', (size_t)(buf + len - l));
        ck_assert_ptr_nonnull(nl);
        rec[n] = strndup(l, (size_t)(nl - l + 1));
        n++;
        l = nl + 1;
    }
    return n;
}

/* Writes the records in the order given by idx (-1 ends it). */
static void rewrite(const char *log, char *rec[16], const int *idx)
{
    UT_string *u;
    utstring_new(u);
    for (; *idx >= 0; idx++) utstring_bincpy(u, rec[*idx], strlen(rec[*idx]));
    spit(log, utstring_body(u), utstring_len(u));
    utstring_free(u);
}

/* Each way of tampering with a log of six records, each caught, and the
 * record named. */
START_TEST(chain_catches_tampering)
{
    const char *log = path_in("t/audit.log");
    write_records(log, 6);
    char *msg = verify1(log, 0);
    ck_assert_str_eq(msg, "intact, 6 records");
    free(msg);
    size_t len;
    char *orig = slurp(log, &len);
    char *rec[16];
    ck_assert_uint_eq(split_records(orig, len, rec), 6);
    static const struct {
        int order[8];
        const char *says;
    } cases[] = {
        {{0, 1, 3, 4, 5, -1}, "record 3 does not follow the record before it"}, /* removed */
        {{0, 1, 3, 2, 4, 5, -1}, "record 3 does not follow"}, /* swapped */
        {{0, 1, 2, 3, -1}, "record 4 is not the last one written"}, /* cut */
        {{1, 2, 3, 4, 5, -1}, "record 1 follows a record that is not there"}, /* first */
        {{-1}, "no record, but"}, /* emptied */
        {{0, 1, 2, 3, 4, 5, 5, -1}, "record 7 does not follow"}, /* replayed */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rewrite(log, rec, cases[i].order);
        msg = verify1(log, 1);
        ck_assert_msg(strstr(msg, cases[i].says), "case %zu: %s", i, msg);
        free(msg);
    }
    /* A forged record (one byte of its argv changed): the next one does
     * not follow it; the last one changed: the head names another. */
    for (int which = 2; which <= 5; which += 3) {
        rewrite(log, rec, (const int[]){0, 1, 2, 3, 4, 5, -1});
        char *forged = strdup(rec[which]);
        *strstr(forged, "make") = 'f';
        char *keep = rec[which];
        rec[which] = forged;
        rewrite(log, rec, (const int[]){0, 1, 2, 3, 4, 5, -1});
        rec[which] = keep;
        msg = verify1(log, 1);
        ck_assert_msg(strstr(msg, which == 2 ? "record 4 does not follow"
                                             : "record 6 is not the last one written"),
                      "forged %d: %s", which, msg);
        free(msg);
        free(forged);
    }
    /* Cut inside the last record; a record without a chain inserted. */
    spit(log, orig, len - 10);
    msg = verify1(log, 1);
    ck_assert_ptr_nonnull(strstr(msg, "record 6 is incomplete"));
    free(msg);
    UT_string *u;
    utstring_new(u);
    utstring_bincpy(u, orig, (size_t)(strstr(orig, rec[3]) - orig));
    utstring_printf(u, "{\"time\":\"2026-01-01T00:00:00.000Z\",\"kind\":\"launch\"}\n%s%s", rec[3],
                    rec[4]);
    utstring_bincpy(u, rec[5], strlen(rec[5]));
    spit(log, utstring_body(u), utstring_len(u));
    utstring_free(u);
    msg = verify1(log, 1);
    ck_assert_ptr_nonnull(strstr(msg, "record 4 carries no chain"));
    free(msg);
    /* The untouched log again: intact (the checks above can pass). */
    spit(log, orig, len);
    msg = verify1(log, 0);
    ck_assert_str_eq(msg, "intact, 6 records");
    free(msg);
    for (int i = 0; i < 6; i++) free(rec[i]);
    free(orig);
}
END_TEST

/* logrotate moves the log away: the first record of the new file names
 * the last of the old one, with the head or, without it, from LOG.1. */
START_TEST(chain_across_rotation)
{
    const char *log = path_in("r/audit.log"), *old = path_in("r/audit.log.1");
    write_records(log, 3);
    ck_assert_int_eq(rename(log, old), 0);
    /* Rotated, nothing written since: the head names LOG.1's last. */
    spit(log, "", 0);
    char *msg = verify1(log, 0);
    ck_assert_str_eq(msg, "intact, 0 records");
    free(msg);
    /* A log opened before the rotation writes to the new file. */
    kg_audit_log *open_before = kg_audit_open(old, NULL);
    ck_assert_ptr_nonnull(open_before);
    kg_audit_close(open_before);
    write_records(log, 2);
    size_t len;
    char *buf = slurp(old, &len);
    char last[KG_AUDIT_HASH_HEX];
    kg_audit_hash(strrchr(buf, '{'), strlen(strrchr(buf, '{')), last);
    free(buf);
    buf = slurp(log, &len);
    ck_assert_ptr_nonnull(strstr(buf, last));
    free(buf);
    msg = verify1(log, 0);
    ck_assert_ptr_nonnull(strstr(msg, "intact, 2 records; the first follows the last "
                                      "record of "));
    free(msg);
    const char *both[] = {old, log};
    msg = verifyn(both, 2, 0);
    ck_assert_str_eq(msg, "intact, 5 records");
    free(msg);
    const char *swapped[] = {log, old};
    msg = verifyn(swapped, 2, 1);
    free(msg);
    /* Without the head (deleted): LOG.1's last record is found all the
     * same when the log is empty. */
    ck_assert_int_eq(unlink(old), 0);
    ck_assert_int_eq(rename(log, old), 0);
    ck_assert_int_eq(unlink(path_in("r/audit.log.head")), 0);
    write_records(log, 1);
    msg = verify1(log, 0);
    ck_assert_ptr_nonnull(strstr(msg, "intact, 1 record; the first follows the last "
                                      "record of "));
    free(msg);
    /* ...while the file before LOG.1 is gone: its first record follows
     * nothing there. */
    const char *again[] = {old, log};
    msg = verifyn(again, 2, 1);
    ck_assert_ptr_nonnull(strstr(msg, "record 1 follows a record that is not there"));
    free(msg);
}
END_TEST

/* A log kgate wrote before the chain: its records are counted, not
 * vouched for, and the first chained record follows the last of them. */
START_TEST(chain_after_unchained_records)
{
    const char *log = path_in("u/audit.log");
    ck_assert_int_eq(mkdir(path_in("u"), 0700), 0);
    const char *legacy = "{\"time\":\"x\",\"kind\":\"launch\"}\n"
                         "{\"time\":\"y\",\"kind\":\"launch\"}\n";
    spit(log, legacy, strlen(legacy));
    write_records(log, 2);
    char *msg = verify1(log, 0);
    ck_assert_str_eq(msg, "intact, 4 records (the first 2 written before the chain: "
                          "not covered)");
    free(msg);
}
END_TEST

/* What audit.c writes, auditread.c reads back: every field, and the exact
 * bytes of a hostile command line. */
START_TEST(records_read_back)
{
    const char *argv[] = {"sh", "-c", "a\nb\t\"q\" \\ \x1b[2J", "caf\xe9 caf\xc3\xa9"};
    kg_audit_event ev = {.kind = "end",
                         .argv = argv,
                         .argc = 4,
                         .cwd = "/p q",
                         .run = "00112233445566778899aabbccddeeff",
                         .backend = "bubblewrap",
                         .verdict = "refused",
                         .name = "x.test",
                         .addr = "198.18.0.9",
                         .port = 443,
                         .reason = "why",
                         .has_exit = true,
                         .exit_status = 137,
                         .duration_ms = 1234,
                         .recovered = true,
                         .prev = "00"};
    UT_string *u;
    utstring_new(u);
    kg_audit_format(&ev, u);
    kg_audit_rec rec;
    ck_assert_int_eq(kg_audit_rec_parse(utstring_body(u), utstring_len(u) - 1, &rec), 0);
    ck_assert_str_eq(rec.kind, "end");
    ck_assert_str_eq(rec.run, ev.run);
    ck_assert_str_eq(rec.cwd, "/p q");
    ck_assert_uint_eq(kg_strv_len(rec.argv), 4);
    for (size_t i = 0; i < 4; i++) ck_assert_str_eq(kg_strv_get(rec.argv, i), argv[i]);
    ck_assert_str_eq(rec.name, "x.test");
    ck_assert_str_eq(rec.addr, "198.18.0.9");
    ck_assert_int_eq(rec.port, 443);
    ck_assert(rec.has_exit && rec.exit_status == 137 && rec.duration_ms == 1234);
    ck_assert(rec.recovered);
    ck_assert_int_eq(rec.pid, getpid());
    kg_audit_rec_clear(&rec);
    /* Not kgate's shape: refused, never half read. */
    static const char *const bad[] = {
        "",
        "{",
        "{}",
        "{\"time\":\"t\"}",
        "{\"time\":\"t\",\"kind\":\"x\"} ",
        "{\"time\":\"t\",\"kind\":\"x\",\"o\":{}}",
        "{\"time\":\"t\",\"kind\":\"a\\u0000b\"}",
        "{\"time\":\"t\",\"kind\":\"a\nb\"}",
        "{\"time\":\"t\",\"kind\":\"x\",\"argv\":[1]}",
        "{\"time\":\"t\",\"kind\":\"x\"",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(kg_audit_rec_parse(bad[i], strlen(bad[i]), &rec) == -1, "bad %zu", i);
        kg_audit_rec_clear(&rec);
    }
    /* A key a later kgate may add is skipped. */
    const char *later = "{\"time\":\"t\",\"kind\":\"x\",\"new\":[\"a\"],\"n\":-3,"
                        "\"b\":false,\"z\":null}";
    ck_assert_int_eq(kg_audit_rec_parse(later, strlen(later), &rec), 0);
    kg_audit_rec_clear(&rec);
    utstring_free(u);
}
END_TEST

/* A run whose kgate is killed gets a recovered end record from the next
 * kgate; a run whose kgate lives does not. */
START_TEST(killed_runs_get_their_end)
{
    const char *log = path_in("k/audit.log"), *runs = path_in("k/runs");
    ck_assert_int_eq(mkdir(path_in("k"), 0700), 0);
    const char *argv[] = {"sleep", "kgkill-1"};
    char id_dead[KG_RUN_ID_LEN], id_live[KG_RUN_ID_LEN];
    ck_assert_int_eq(kg_run_id_new(id_dead), 0);
    ck_assert_int_eq(kg_run_id_new(id_live), 0);
    ck_assert_str_ne(id_dead, id_live);
    ck_assert_uint_eq(strlen(id_dead), 32);
    /* The dead one: a child makes its marker and is SIGKILLed. */
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        kg_audit_event ev = {.kind = "launch",
                             .argv = argv,
                             .argc = 2,
                             .cwd = "/p",
                             .run = id_dead,
                             .backend = "bubblewrap"};
        kg_run_marker *m = kg_run_marker_new(runs, &ev, NULL);
        char c = m ? 'y' : 'n';
        if (write(p[1], &c, 1) != 1) _exit(1);
        pause();
        _exit(0);
    }
    char c = 0;
    ck_assert_int_eq(read(p[0], &c, 1), 1);
    ck_assert_int_eq(c, 'y');
    kg_audit_event live = {.kind = "launch", .argv = argv, .argc = 1, .cwd = "/p", .run = id_live};
    kg_run_marker *mine = kg_run_marker_new(runs, &live, NULL);
    ck_assert_ptr_nonnull(mine);
    kg_audit_log *l = kg_audit_open(log, NULL);
    ck_assert_ptr_nonnull(l);
    /* Control: while the child lives, nothing is recovered. */
    ck_assert_int_eq(kg_run_recover(runs, l, NULL), 0);
    kill(child, SIGKILL);
    ck_assert_int_eq(waitpid(child, NULL, 0), child);
    ck_assert_int_eq(kg_run_recover(runs, l, NULL), 1);
    ck_assert_int_eq(kg_run_recover(runs, l, NULL), 0); /* once */
    kg_audit_close(l);
    size_t len;
    char *buf = slurp(log, &len);
    ck_assert_ptr_eq(strchr(buf, '\n'), buf + len - 1); /* one record */
    kg_audit_rec rec;
    ck_assert_int_eq(kg_audit_rec_parse(buf, len - 1, &rec), 0);
    ck_assert_str_eq(rec.kind, "end");
    ck_assert_str_eq(rec.run, id_dead);
    ck_assert(rec.recovered && !rec.has_exit);
    ck_assert_str_eq(rec.backend, "bubblewrap");
    ck_assert_str_eq(rec.cwd, "/p");
    ck_assert_uint_eq(kg_strv_len(rec.argv), 2);
    ck_assert_str_eq(kg_strv_get(rec.argv, 1), "kgkill-1");
    kg_audit_rec_clear(&rec);
    free(buf);
    /* The live one's marker is still there; done removes it. */
    char mp[300];
    snprintf(mp, sizeof mp, "%s/%s", runs, id_live);
    ck_assert_int_eq(access(mp, F_OK), 0);
    kg_run_marker_done(mine);
    ck_assert_int_eq(access(mp, F_OK), -1);
    close(p[0]);
    close(p[1]);
}
END_TEST

/* A marker being made is a dot-name its kgate has not locked yet: a
 * recovering kgate leaves it while it is young, and removes it (with no
 * record: no launch was logged) once it is old. */
START_TEST(young_dot_names_are_left_to_their_maker)
{
    const char *log = path_in("d/audit.log"), *runs = path_in("d/runs");
    ck_assert_int_eq(mkdir(path_in("d"), 0700), 0);
    ck_assert_int_eq(mkdir(runs, 0700), 0);
    char id[KG_RUN_ID_LEN], dot[300];
    ck_assert_int_eq(kg_run_id_new(id), 0);
    snprintf(dot, sizeof dot, "%s/.%s", runs, id);
    int fd = open(dot, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    kg_audit_log *l = kg_audit_open(log, NULL);
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(kg_run_recover(runs, l, NULL), 0);
    ck_assert_int_eq(access(dot, F_OK), 0);
    /* Not even locked: its maker's flock would fail. */
    ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
    ck_assert_int_eq(flock(fd, LOCK_UN), 0);
    close(fd);
    /* Two minutes old: its kgate died before its launch record. */
    struct timespec old[2] = {{.tv_sec = time(NULL) - 120}, {.tv_sec = time(NULL) - 120}};
    ck_assert_int_eq(utimensat(AT_FDCWD, dot, old, 0), 0);
    ck_assert_int_eq(kg_run_recover(runs, l, NULL), 0);
    ck_assert_int_eq(access(dot, F_OK), -1);
    kg_audit_close(l);
    size_t len;
    char *buf = slurp(log, &len);
    ck_assert_uint_eq(len, 0);
    free(buf);
}
END_TEST

#define MARKERS 8
#define MARKER_ROUNDS 150

/* Concurrent kgates, each making its marker, recovering the others' dead
 * ones and removing its own, as `kgate run` does: no marker is taken from
 * under its maker.  With young dot-names taken for dead, a maker failed
 * in each of three runs. */
START_TEST(concurrent_markers_all_made)
{
    pid_t pids[MARKERS];
    ck_assert_int_eq(mkdir(path_in("c"), 0700), 0);
    for (int w = 0; w < MARKERS; w++) {
        char *const argv[] = {"test_audit", "--markers", tmpdir, NULL};
        ck_assert_int_eq(posix_spawn(&pids[w], "/proc/self/exe", NULL, NULL, argv, environ), 0);
    }
    for (int w = 0; w < MARKERS; w++) {
        int st;
        ck_assert_int_eq(waitpid(pids[w], &st, 0), pids[w]);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "marker maker %d failed", w);
    }
    size_t len;
    char *buf = slurp(path_in("c/audit.log"), &len);
    ck_assert_uint_eq(len, 0); /* nobody died: nothing recovered */
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
    ck_assert_int_eq(kg_audit_write_line(fd, "{}\n", 3, &err), -1);
    ck_assert_int_eq(err.code, ENOSPC);
    close(fd);

    /* A read-only descriptor (the unprivileged case of a 0400 log). */
    int ro = open(path_in("ro.log"), O_RDONLY | O_CREAT | O_CLOEXEC, 0400);
    ck_assert_int_ge(ro, 0);
    ck_assert_int_eq(kg_audit_write_line(ro, "{}\n", 3, &err), -1);
    close(ro);

    /* The head is held to the same rules: a symlink there is refused, and
     * nothing is written to the log either. */
    ck_assert_int_eq(symlink(path_in("target"), path_in("h.log.head")), 0);
    ck_assert_int_eq(kg_audit_write(path_in("h.log"), &ev, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "symlink"));
    ck_assert_int_eq(access(path_in("target"), F_OK), -1);
    struct stat st;
    ck_assert(stat(path_in("h.log"), &st) != 0 || st.st_size == 0);
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
        ck_assert_int_eq(posix_spawn(&pids[w], "/proc/self/exe", NULL, NULL, argv, environ), 0);
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
    /* And one chain through all of them: no two writers named the same
     * predecessor. */
    char *msg = verify1(log, 0);
    ck_assert_str_eq(msg, "intact, 1000 records");
    free(msg);
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
        kg_audit_event ev = {
            .kind = "launch", .argv = argv, .argc = 40, .cwd = "/project", .reason = reason};
        kg_error err = {0};
        if (kg_audit_write(log, &ev, &err) < 0) {
            fprintf(stderr, "writer %d: %s\n", w, err.msg);
            return 1;
        }
    }
    return 0;
}

/* One concurrent kgate of concurrent_markers_all_made. */
static int marker_maker(const char *dir)
{
    char log[256], runs[256];
    snprintf(log, sizeof log, "%s/c/audit.log", dir);
    snprintf(runs, sizeof runs, "%s/c/runs", dir);
    const char *argv[] = {"true"};
    for (int i = 0; i < MARKER_ROUNDS; i++) {
        char id[KG_RUN_ID_LEN];
        kg_error err = {0};
        if (kg_run_id_new(id) < 0) return 1;
        kg_audit_event ev = {.kind = "launch", .argv = argv, .argc = 1, .cwd = "/", .run = id};
        kg_audit_log *l = kg_audit_open(log, &err);
        kg_run_marker *m = l ? kg_run_marker_new(runs, &ev, &err) : NULL;
        if (!m || kg_run_recover(runs, l, &err) < 0) {
            fprintf(stderr, "round %d: %s\n", i, err.msg);
            return 1;
        }
        kg_run_marker_done(m);
        kg_audit_close(l);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--writer") == 0) return writer(argv[2], atoi(argv[3]));
    if (argc == 3 && strcmp(argv[1], "--markers") == 0) return marker_maker(argv[2]);
    Suite *s = suite_create("audit");
    TCase *tc = tcase_create("log");
    tcase_add_checked_fixture(tc, setup, teardown);
    /* Fifty sanitizer-instrumented processes taking the chain's lock 1000
     * times on a loaded machine: under 1 s in a plain build, over 110 s
     * once under AddressSanitizer at a load of about 8 on two CPUs.  A
     * bound, not a speed target. */
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, format_keys_in_order);
    tcase_add_test(tc, hostile_argv_stays_one_line);
    tcase_add_test(tc, invalid_utf8_is_told_from_characters);
    tcase_add_test(tc, creates_private_dir_and_file);
    tcase_add_test(tc, unwritable_logs_fail);
    tcase_add_test(tc, concurrent_writers_whole_lines);
    tcase_add_test(tc, chain_catches_tampering);
    tcase_add_test(tc, chain_across_rotation);
    tcase_add_test(tc, chain_after_unchained_records);
    tcase_add_test(tc, records_read_back);
    tcase_add_test(tc, killed_runs_get_their_end);
    tcase_add_test(tc, young_dot_names_are_left_to_their_maker);
    tcase_add_test(tc, concurrent_markers_all_made);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
