/* test_netevents.c: the backend's event records (kgate_launch.events_fd):
 * what parses, what is refused, the audit lines and the summary. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netevents.h"
#include "testutil.h"

static int parse(const char *s, kg_net_event *e) { return kg_net_event_parse(s, strlen(s), e); }

START_TEST(records_that_parse)
{
    kg_net_event e;
    ck_assert_int_eq(parse("net refused evil.example - 0", &e), 0);
    ck_assert_str_eq(e.verdict, "refused");
    ck_assert_str_eq(e.name, "evil.example");
    ck_assert_str_eq(e.addr, "");
    ck_assert_uint_eq(e.port, 0);

    ck_assert_int_eq(parse("net refused - 198.18.0.9 443", &e), 0);
    ck_assert_str_eq(e.name, "");
    ck_assert_str_eq(e.addr, "198.18.0.9");
    ck_assert_uint_eq(e.port, 443);

    /* IPv6 in its canonical text; the name's escapes decoded. */
    ck_assert_int_eq(parse("net refused a\\032b\\010c.test 2001:DB8:0:0::1 65535", &e), 0);
    ck_assert_str_eq(e.name, "a b\nc.test");
    ck_assert_str_eq(e.addr, "2001:db8::1");
    ck_assert_uint_eq(e.port, 65535);

    ck_assert_int_eq(parse("net allowed *.x_y-z.example - 0", &e), 0);
    ck_assert_str_eq(e.verdict, "allowed");
    ck_assert_str_eq(e.name, "*.x_y-z.example");
    ck_assert_str_eq(e.reason, "");

    /* The sixth field: each reason kgate-plugin.h lists. */
    static const char *const why[] = {"unlisted", "private", "never", "unanswered", "listen"};
    for (size_t i = 0; i < 5; i++) {
        char r[80];
        snprintf(r, sizeof r, "net refused a.test 198.18.0.9 80 %s", why[i]);
        ck_assert_int_eq(parse(r, &e), 0);
        ck_assert_str_eq(e.reason, why[i]);
        ck_assert_uint_eq(e.port, 80);
    }
}
END_TEST

START_TEST(records_refused)
{
    static const char *const bad[] = {
        "",
        "net",
        "net refused",
        "net refused a.test - ",
        "net refused a.test -",
        "net refused a.test - 0 extra",
        "net  refused a.test - 0", /* two spaces */
        "net refused a.test - 0 ", /* trailing space */
        "dns refused a.test - 0", /* not a net record */
        "NET refused a.test - 0",
        "net Refused a.test - 0", /* verdict: a lowercase word */
        "net refused! a.test - 0",
        "net averyveryverylongverdict a.test - 0",
        "net refused a/b - 0", /* a byte outside the alphabet */
        "net refused a\tb - 0",
        "net refused a\x1b[2Jb - 0",
        "net refused caf\xc3\xa9 - 0",
        "net refused a\\ - 0", /* escapes: three digits, 1..255 */
        "net refused a\\12 - 0",
        "net refused a\\12x - 0",
        "net refused a\\256 - 0",
        "net refused a\\000b - 0",
        "net refused - - 0", /* neither a name nor an address */
        "net refused a.test 198.18.0 0", /* addresses inet_pton takes */
        "net refused a.test 198.18.0.9.1 0",
        "net refused a.test ::g 0",
        "net refused a.test 010.1.1.1 0",
        "net refused a.test 198.18.0.9 -1", /* ports: 0..65535, plain */
        "net refused a.test 198.18.0.9 65536",
        "net refused a.test 198.18.0.9 080",
        "net refused a.test 198.18.0.9 +80",
        "net refused a.test 198.18.0.9 8o",
        "net refused a.test 198.18.0.9 100000",
        "net refused a.test - 0 Unlisted", /* reasons: the listed words only */
        "net refused a.test - 0 unlisted ",
        "net refused a.test - 0 unlisted x",
        "net refused a.test - 0 unlist",
        "net refused a.test - 0 unlistedx",
        "net refused a.test - 0 private\x1b[2J",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        kg_net_event e;
        ck_assert_msg(parse(bad[i], &e) == -1, "accepted case %zu", i);
    }
    /* A name longer than 255 bytes does not fit. */
    char longname[600] = "net refused ";
    size_t n = strlen(longname);
    memset(longname + n, 'a', 256);
    strcpy(longname + n + 256, " - 0");
    kg_net_event e;
    ck_assert_int_eq(parse(longname, &e), -1);
    longname[n + 255] = ' ';
    strcpy(longname + n + 255, " - 0");
    ck_assert_int_eq(parse(longname, &e), 0);
}
END_TEST

/* A temporary file as the audit log, opened. */
static kg_audit_log *temp_log(char *path, size_t len)
{
    snprintf(path, len, "/tmp/kgtest-netevents.XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    kg_audit_log *log = kg_audit_open(path, NULL);
    ck_assert_ptr_nonnull(log);
    return log;
}

static void temp_log_remove(const char *path)
{
    char head[80];
    snprintf(head, sizeof head, "%s.head", path);
    unlink(path);
    unlink(head);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++) n++;
    return n;
}

START_TEST(netlog_audit_and_summary)
{
    char path[64];
    kg_audit_log *fd = temp_log(path, sizeof path);
    const char *argv[] = {"curl", "x"};
    kg_audit_event base = {
        .kind = "net", .argv = argv, .argc = 2, .cwd = "/p", .backend = "slirp-filter"};
    kg_netlog *l = kg_netlog_new(fd, &base);
    UT_string *s;
    utstring_new(s);
    ck_assert(!kg_netlog_summary(l, s)); /* nothing yet: nothing to say */

    /* Records split anywhere between reads, repeated ones counted once in
     * the summary, each one an audit line. */
    const char feed[] = "net refused evil.example - 0\nnet refused - 198.18.0.7 443\n"
                        "net refused evil.example - 0\nnet refu";
    kg_netlog_feed(l, feed, 10);
    kg_netlog_feed(l, feed + 10, sizeof feed - 1 - 10);
    kg_netlog_feed(l, "sed api.example 198.18.0.9 80\ngarbage\n", 38);
    for (int i = 0; i < 6; i++) {
        char r[64];
        snprintf(r, sizeof r, "net refused n%d.test - 0\n", i);
        kg_netlog_feed(l, r, strlen(r));
    }
    kg_netlog_feed(l, "net refused - 2001:db8::1 443\n", 30);
    kg_netlog_feed(l, "net refused partial.test", 24); /* no newline: bad */
    kg_netlog_finish(l);
    ck_assert_uint_eq(kg_netlog_refused(l), 11);
    ck_assert_uint_eq(kg_netlog_bad(l), 2);
    ck_assert(kg_netlog_summary(l, s));
    ck_assert_str_eq(utstring_body(s),
                     "refused 7 names: evil.example, n0.test, n1.test, n2.test, n3.test "
                     "and 2 more; 3 connections: 198.18.0.7:443, 198.18.0.9:80 "
                     "(api.example), [2001:db8::1]:443; 2 unreadable event records from "
                     "the backend ignored");
    kg_netlog_free(l);
    kg_audit_close(fd);

    const char *log = slurp(path);
    ck_assert_uint_eq(count(log, "\n"), 12); /* 11 records + the count line */
    ck_assert_uint_eq(count(log, "\"kind\":\"net\""), 12);
    ck_assert_ptr_nonnull(
        strstr(log, "\"backend\":\"slirp-filter\",\"verdict\":\"refused\",\"name\":\"api.example\","
                    "\"addr\":\"198.18.0.9\",\"port\":80,\"prev\":\""));
    ck_assert_ptr_nonnull(strstr(log, "\"verdict\":\"refused\",\"name\":\"evil.example\","
                                      "\"port\":0,\"prev\":\""));
    ck_assert_ptr_nonnull(strstr(log, "\"reason\":\"2 unreadable records from the backend "
                                      "ignored\",\"prev\":\""));
    /* Nothing of an unreadable record reaches the log. */
    ck_assert_ptr_null(strstr(log, "garbage"));
    ck_assert_ptr_null(strstr(log, "partial"));
    temp_log_remove(path);
    utstring_free(s);
}
END_TEST

/* The reason a record gives is the reason the audit line carries; a
 * record without one gets none (kgate does not guess). */
START_TEST(netlog_reasons_in_audit)
{
    char path[64];
    kg_audit_log *fd = temp_log(path, sizeof path);
    kg_audit_event base = {.kind = "net", .cwd = "/p"};
    kg_netlog *l = kg_netlog_new(fd, &base);
    const char feed[] = "net refused listed.test - 0 private\n"
                        "net refused other.test - 0 unlisted\n"
                        "net refused md.test 169.254.169.254 80 never\n"
                        "net refused - 198.18.0.7 443 unanswered\n"
                        "net refused old.test - 0\n";
    kg_netlog_feed(l, feed, sizeof feed - 1);
    kg_netlog_finish(l);
    ck_assert_uint_eq(kg_netlog_refused(l), 5);
    ck_assert_uint_eq(kg_netlog_bad(l), 0);
    kg_netlog_free(l);
    kg_audit_close(fd);
    const char *log = slurp(path);
    ck_assert_ptr_nonnull(strstr(log, "\"name\":\"listed.test\",\"port\":0,\"reason\":\"the name "
                                      "is in allow_hosts, but its answer was a private"));
    ck_assert_ptr_nonnull(strstr(log, "\"name\":\"other.test\",\"port\":0,\"reason\":\"the name "
                                      "is not in allow_hosts"));
    ck_assert_ptr_nonnull(strstr(log, "\"port\":80,\"reason\":\"the address is this host's"));
    ck_assert_ptr_nonnull(strstr(log, "\"port\":443,\"reason\":\"it is not an address and port"));
    ck_assert_ptr_nonnull(strstr(log, "\"name\":\"old.test\",\"port\":0,\"prev\":"));
    ck_assert_uint_eq(count(log, "\"reason\":"), 4);
    temp_log_remove(path);
}
END_TEST

START_TEST(netlog_hostile_input)
{
    char path[64];
    kg_audit_log *fd = temp_log(path, sizeof path);
    kg_audit_event base = {.kind = "net", .cwd = "/p"};
    kg_netlog *l = kg_netlog_new(fd, &base);
    /* An overlong line is dropped whole, even the part after a split, and
     * the record after it still counts. */
    char big[3000];
    memset(big, 'a', sizeof big);
    memcpy(big, "net refused ", 12);
    kg_netlog_feed(l, big, sizeof big);
    kg_netlog_feed(l, " - 0\nnet refused ok.test - 0\n", 29);
    /* A name with a newline and an escape sequence: one JSON line. */
    const char *r = "net refused x\\010kgate\\058\\032forged\\027\\0912J - 0\n";
    kg_netlog_feed(l, r, strlen(r));
    kg_netlog_finish(l);
    kg_netlog_finish(l); /* twice: once */
    ck_assert_uint_eq(kg_netlog_bad(l), 1);
    ck_assert_uint_eq(kg_netlog_refused(l), 2);
    UT_string *s;
    utstring_new(s);
    ck_assert(kg_netlog_summary(l, s));
    ck_assert_ptr_nonnull(strstr(utstring_body(s), "x\nkgate: forged\x1b[2J"));
    utstring_free(s);
    kg_netlog_free(l);
    kg_audit_close(fd);
    const char *log = slurp(path);
    ck_assert_uint_eq(count(log, "\n"), 3);
    ck_assert_ptr_nonnull(strstr(log, "\"name\":\"x\\nkgate: forged\\u001b[2J\""));
    temp_log_remove(path);

    /* No audit descriptor: still counted and summarized. */
    l = kg_netlog_new(NULL, &base);
    kg_netlog_feed(l, "net refused a.test - 0\n", 23);
    kg_netlog_finish(l);
    ck_assert_uint_eq(kg_netlog_refused(l), 1);
    kg_netlog_free(l);
    kg_netlog_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("netevents");
    TCase *tc = tcase_create("records");
    tcase_add_test(tc, records_that_parse);
    tcase_add_test(tc, netlog_reasons_in_audit);
    tcase_add_test(tc, records_refused);
    tcase_add_test(tc, netlog_audit_and_summary);
    tcase_add_test(tc, netlog_hostile_input);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
