/* test_kgl_unotify_net: the Landlock box's network parsers
 * (sdk/linux/kgl-unotify-netparse.c): the allow-list match, resolv.conf,
 * a hosts file, and a DNS answer read with libresolv. */
#include <arpa/inet.h>
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/kgate-unotify.h"

static uint32_t got[8];
static uint32_t ttls[8];
static size_t n_got;

static void add_host(void *ctx, uint32_t addr)
{
    (void)ctx;
    if (n_got < 8) got[n_got++] = addr;
}

static void add_answer(void *ctx, uint32_t addr, uint32_t ttl)
{
    (void)ctx;
    if (n_got < 8) {
        ttls[n_got] = ttl;
        got[n_got++] = addr;
    }
}

START_TEST(host_match)
{
    kgl_un_host exact = {"allowed.test", 0, 0}, wild = {"wild.test", 1, 443};
    ck_assert(kgl_un_host_matches(&exact, "allowed.test"));
    ck_assert(kgl_un_host_matches(&exact, "ALLOWED.test."));
    ck_assert(!kgl_un_host_matches(&exact, "x.allowed.test"));
    ck_assert(!kgl_un_host_matches(&exact, "allowed.test.evil"));
    ck_assert(kgl_un_host_matches(&wild, "a.b.wild.test"));
    ck_assert(!kgl_un_host_matches(&wild, "wild.test"));
    ck_assert(!kgl_un_host_matches(&wild, "xwild.test"));
    ck_assert(!kgl_un_host_matches(&wild, "wild.test.evil.test"));
}
END_TEST

START_TEST(resolv_and_hosts)
{
    char out[64];
    const char *r = "# x\nsearch lab\nnameserver ::1\nnameserver 198.18.0.10 # lab\n";
    ck_assert_int_eq(kgl_un_parse_resolv(r, strlen(r), out, sizeof out), 0);
    ck_assert_str_eq(out, "198.18.0.10");
    ck_assert_int_eq(kgl_un_parse_resolv("nameserver\n", 11, out, sizeof out), -1);
    const char *h = "127.0.0.1 localhost\n198.18.0.4 other allowed.test.\n# 1.2.3.4 allowed.test\n"
                    "::1 allowed.test\n198.18.0.5\tALLOWED.TEST\n";
    n_got = 0;
    ck_assert_int_eq(kgl_un_parse_hosts(h, strlen(h), "allowed.test", add_host, NULL), 2);
    ck_assert_uint_eq(got[0], inet_addr("198.18.0.4"));
    ck_assert_uint_eq(got[1], inet_addr("198.18.0.5"));
}
END_TEST

/* allowed.test CNAME edge.cdn.test, edge.cdn.test A 198.18.0.4 (TTL 30). */
static size_t answer(unsigned char *m)
{
    static const unsigned char msg[] = {
        0x12, 0x34, 0x81, 0x80, 0,   1,   0,   2,   0,   0,   0,   0,  7,    'a', 'l',
        'l',  'o',  'w',  'e',  'd', 4,   't', 'e', 's', 't', 0,   0,  1,    0,   1,
        0xc0, 0x0c, 0,    5,    0,   1,   0,   0,   0,   60,  0,   15, 4,    'e', 'd',
        'g',  'e',  3,    'c',  'd', 'n', 4,   't', 'e', 's', 't', 0,  0xc0, 42,  0,
        1,    0,    1,    0,    0,   0,   30,  0,   4,   198, 18,  0,  4};
    memcpy(m, msg, sizeof msg);
    return sizeof msg;
}

START_TEST(dns_answer)
{
    unsigned char m[128];
    char q[256];
    int rcode = -1;
    size_t n = answer(m);
    n_got = 0;
    ck_assert_int_eq(kgl_un_parse_answer(m, n, q, sizeof q, &rcode, add_answer, NULL), 1);
    ck_assert_str_eq(q, "allowed.test");
    ck_assert_int_eq(rcode, 0);
    ck_assert_uint_eq(got[0], inet_addr("198.18.0.4"));
    ck_assert_uint_eq(ttls[0], 30);
    /* Cut short: nothing added. */
    n_got = 0;
    ck_assert_int_eq(kgl_un_parse_answer(m, 20, q, sizeof q, &rcode, add_answer, NULL), -1);
    ck_assert_uint_eq(n_got, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kgl_unotify_net");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, host_match);
    tcase_add_test(tc, resolv_and_hosts);
    tcase_add_test(tc, dns_answer);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
