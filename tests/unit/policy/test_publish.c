/* test_publish.c: `kgate run --publish [ADDR:]HOSTPORT:PORT` (publish.c):
 * what it accepts and stores, that the host side is always a loopback
 * address, and a reason for everything it refuses. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publish.h"
#include "testutil.h"

START_TEST(accepts)
{
    static const struct {
        const char *in, *addr;
        unsigned host_port, port;
    } cases[] = {
        {"8080:80", "127.0.0.1", 8080, 80},
        {"127.0.0.1:8080:80", "127.0.0.1", 8080, 80},
        {"127.0.0.2:1:65535", "127.0.0.2", 1, 65535},
        {"127.255.255.254:65535:1", "127.255.255.254", 65535, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kgate_publish p;
        kg_error err = {0};
        ck_assert_msg(kg_publish_parse(cases[i].in, &p, &err) == 0, "%s: %s", cases[i].in, err.msg);
        ck_assert_str_eq(p.host_addr, cases[i].addr);
        ck_assert_uint_eq(p.host_port, cases[i].host_port);
        ck_assert_uint_eq(p.port, cases[i].port);
    }
}
END_TEST

START_TEST(refuses_with_a_reason)
{
    static const struct {
        const char *in, *words;
    } cases[] = {
        {"", "expected [ADDR:]HOSTPORT:PORT"},
        {"8080", "expected [ADDR:]HOSTPORT:PORT"},
        {"garbage", "expected [ADDR:]HOSTPORT:PORT"},
        {"1:2:3:4", "expected [ADDR:]HOSTPORT:PORT"},
        {"::1:8080:80", "expected [ADDR:]HOSTPORT:PORT"},
        {"[::1]:8080:80", "expected"},
        {"0:80", "host port must be a number from 1 to 65535"},
        {"65536:80", "host port must be a number from 1 to 65535"},
        {"100000:80", "host port must be a number from 1 to 65535"},
        {"8080:0", "inside the box must be a number from 1 to 65535"},
        {"8080:65536", "inside the box must be a number from 1 to 65535"},
        {"-1:80", "host port"},
        {"+80:80", "host port"},
        {" 80:80", "host port"},
        {"80:80 ", "inside the box"},
        {"0x50:80", "host port"},
        {"08080:80", "host port"},
        {"8080:080", "inside the box"},
        {":80", "host port"},
        {"80:", "inside the box"},
        {"localhost:8080:80", "not a name"},
        {"LOCALHOST:8080:80", "not a name"},
        {"example.com:8080:80", "not a name"},
        {"127.1:8080:80", "not a dotted IPv4 address"},
        {"127.0.0.256:8080:80", "not a dotted IPv4 address"},
        {":8080:80", "the address is empty"},
        {"0.0.0.0:8080:80", "only on the host's loopback"},
        {"198.18.0.1:8080:80", "only on the host's loopback"},
        {"10.0.2.2:8080:80", "only on the host's loopback"},
        {"128.0.0.1:8080:80", "only on the host's loopback"},
        {"126.255.255.255:8080:80", "only on the host's loopback"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kgate_publish p;
        kg_error err = {0};
        ck_assert_msg(kg_publish_parse(cases[i].in, &p, &err) == -1, "accepted '%s'", cases[i].in);
        ck_assert_msg(strstr(err.msg, cases[i].words) != NULL, "'%s': %s", cases[i].in, err.msg);
        ck_assert_msg(strncmp(err.msg, "--publish", 9) == 0, "%s", err.msg);
    }
}
END_TEST

/* A control byte in a spec is not echoed into the one-line refusal. */
START_TEST(quotes_safely)
{
    kgate_publish p;
    kg_error err = {0};
    ck_assert_int_eq(kg_publish_parse("80\n:80", &p, &err), -1);
    ck_assert_ptr_null(strchr(err.msg, '\n'));
    ck_assert_ptr_nonnull(strstr(err.msg, "80?:80"));
}
END_TEST

START_TEST(list_canonical_and_duplicates)
{
    kg_strv *in = kg_strv_new(), *canon = kg_strv_new();
    kg_strv_push(in, "8080:80");
    kg_strv_push(in, "127.0.0.2:8080:80"); /* another address: allowed */
    kg_strv_push(in, "8081:80"); /* the same box port twice: allowed */
    kgate_publish *v = NULL;
    size_t n = 0;
    kg_error err = {0};
    ck_assert_msg(kg_publish_list(in, &v, &n, canon, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(kg_strv_get(canon, 0), "127.0.0.1:8080:80");
    ck_assert_str_eq(kg_strv_get(canon, 1), "127.0.0.2:8080:80");
    ck_assert_str_eq(kg_strv_get(canon, 2), "127.0.0.1:8081:80");
    free(v);

    /* The same host address and port twice, however written. */
    kg_strv_push(in, "127.0.0.1:8080:81");
    kg_strv *canon2 = kg_strv_new();
    ck_assert_int_eq(kg_publish_list(in, &v, &n, canon2, &err), -1);
    ck_assert_ptr_null(v);
    ck_assert_uint_eq(n, 0);
    ck_assert_uint_eq(kg_strv_len(canon2), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "127.0.0.1:8080 is given twice"));

    /* None: nothing allocated. */
    kg_strv *none = kg_strv_new();
    ck_assert_int_eq(kg_publish_list(none, &v, &n, canon2, &err), 0);
    ck_assert_ptr_null(v);
    ck_assert_uint_eq(n, 0);
    kg_strv_free(in);
    kg_strv_free(canon);
    kg_strv_free(canon2);
    kg_strv_free(none);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("publish");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, accepts);
    tcase_add_test(tc, refuses_with_a_reason);
    tcase_add_test(tc, quotes_safely);
    tcase_add_test(tc, list_canonical_and_duplicates);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
