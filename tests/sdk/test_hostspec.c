/* test_hostspec.c: the one parser of allow_hosts entries (sdk/common),
 * shared by the core and the backends: what it accepts, what it stores,
 * and a reason for everything it refuses. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgate/kgate-hostspec.h"
#include "testutil.h"

START_TEST(accepts_and_normalizes)
{
    static const struct {
        const char *in, *name;
        int wildcard;
        unsigned port;
    } cases[] = {
        {"github.com", "github.com", 0, 0},
        {"API.Example.COM", "api.example.com", 0, 0},
        {"a", "a", 0, 0},
        {"localhost:5432", "localhost", 0, 5432},
        {"LocalHost:3000", "localhost", 0, 3000},
        {"localhost.example:80", "localhost.example", 0, 80},
        {"notlocalhost:80", "notlocalhost", 0, 80},
        {"3com.net", "3com.net", 0, 0},
        {"xn--bcher-kva.ch", "xn--bcher-kva.ch", 0, 0},
        {"*.githubusercontent.com", "githubusercontent.com", 1, 0},
        {"*.Example.org", "example.org", 1, 0},
        {"*.a.b.c.example", "a.b.c.example", 1, 0},
        {"example.com:443", "example.com", 0, 443},
        {"*.example.com:8080", "example.com", 1, 8080},
        {"h:1", "h", 0, 1},
        {"h:65535", "h", 0, 65535},
        {"198.18.0.9", "198.18.0.9", 0, 0},
        {"198.18.0.9:80", "198.18.0.9", 0, 80},
        {"0.0.0.0", "0.0.0.0", 0, 0},
        {"255.255.255.255", "255.255.255.255", 0, 0},
        {"1.2.3.4x", "1.2.3.4x", 0, 0}, /* a name: its last label has a letter */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kgate_hostspec h;
        memset(&h, 0x55, sizeof h);
        const char *why = NULL;
        ck_assert_msg(kgate_hostspec_parse(cases[i].in, &h, &why) == 0, "%s: %s", cases[i].in,
                      why ? why : "?");
        ck_assert_str_eq(h.name, cases[i].name);
        ck_assert_int_eq(h.wildcard, cases[i].wildcard);
        ck_assert_uint_eq(h.port, cases[i].port);
        /* Only the one spelling is the host's loopback. */
        ck_assert_int_eq(h.host_loopback, strcmp(h.name, "localhost") == 0);
    }
}
END_TEST

START_TEST(refuses_with_a_reason)
{
    char label64[80], long254[300], long253w[300];
    memset(label64, 'a', 64);
    label64[64] = '\0';
    memset(long254, 'b', 254);
    long254[254] = '\0';
    for (int i = 63; i < 254; i += 64) long254[i] = '.';
    /* "*." + 253 characters: the name part fits, and is accepted */
    memcpy(long253w, "*.", 2);
    memset(long253w + 2, 'c', 253);
    long253w[255] = '\0';
    for (int i = 2 + 63; i < 255; i += 64) long253w[i] = '.';
    const struct {
        const char *in, *why; /* why: a word the reason must contain */
    } cases[] = {
        {"", "empty"},
        {"localhost", "needs a port"},
        {"LOCALHOST", "needs a port"},
        {"*.localhost:80", "under localhost"},
        {"db.localhost:5432", "under localhost"},
        {"*", "every host"},
        {"*:443", "every host"},
        {"*.com", "top-level"},
        {"*.COM:443", "top-level"},
        {"*.", "empty host"},
        {"*.1.2.3.4", "address"},
        {"**.example.com", "'*'"},
        {"*example.com", "'*'"},
        {"a.*.example.com", "'*'"},
        {"*.*.example.com", "'*'"},
        {"example.*", "'*'"},
        {"ex*ample.com", "'*'"},
        {"host:", "empty port"},
        {"host:0", "port 0"},
        {"host:00", "leading zero"},
        {"host:080", "leading zero"},
        {"host:65536", "above 65535"},
        {"host:99999", "above 65535"},
        {"host:1000000", "above 65535"},
        {"host:+80", "sign"},
        {"host:-80", "sign"},
        {"host:8o", "not a number"},
        {"host:80 ", "white space"},
        {":80", "no host"},
        {"::1", "IPv6"},
        {"[::1]:80", "IPv6"},
        {"fe80::1", "IPv6"},
        {"a..b", "empty label"},
        {".a", "empty label"},
        {"a.", "ends with"},
        {"-a.com", "'-'"},
        {"a-.com", "'-'"},
        {"a_b.com", "letters"},
        {"a b", "white space"},
        {"a/b", "letters"},
        {"a\nb", "control"},
        {"a\n-A OUTPUT -j ACCEPT", "control"},
        {"a\x7f", "control"},
        {"caf\xc3\xa9.example", "non-ASCII"},
        {"1.2.3", "IPv4"},
        {"256.1.1.1", "IPv4"},
        {"01.2.3.4", "IPv4"},
        {"1.2.3.4.5", "IPv4"},
        {"123", "IPv4"},
        {"$(id)", "letters"},
        {"http://x.com", "URL"},
        {"https://x.com:443/", "URL"},
        {"-rf", "'-'"},
        {label64, "63"},
        {long254, "253"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kgate_hostspec h;
        const char *why = NULL;
        ck_assert_msg(kgate_hostspec_parse(cases[i].in, &h, &why) == -1, "accepted case %zu", i);
        ck_assert_msg(why && strstr(why, cases[i].why), "case %zu: reason '%s' lacks '%s'", i,
                      why ? why : "(null)", cases[i].why);
        /* One line, nothing of the input pasted into it. */
        ck_assert(!strchr(why, '\n'));
    }
    kgate_hostspec h;
    const char *why = NULL;
    ck_assert_int_eq(kgate_hostspec_parse(NULL, &h, &why), -1);
    ck_assert_ptr_nonnull(why);
    ck_assert_int_eq(kgate_hostspec_parse("a", NULL, &why), -1);
    ck_assert_int_eq(kgate_hostspec_parse("*", &h, NULL), -1); /* why may be NULL */
    ck_assert_int_eq(kgate_hostspec_parse(long253w, &h, &why), 0);
    ck_assert_uint_eq(strlen(h.name), 253);
    ck_assert_int_eq(h.wildcard, 1);
}
END_TEST

/* Every entry of one or two bytes from a small alphabet: no crash, and
 * whatever is accepted is stored as a lowercase name the parser accepts
 * again with the same meaning (the normal form is a fixed point). */
START_TEST(small_inputs_round_trip)
{
    static const char alpha[] = "aZ9-.*:0+ \x01";
    size_t n = sizeof alpha - 1;
    char in[8], again[300];
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b <= n; b++)
            for (size_t c = 0; c <= n; c++)
                for (size_t d = 0; d <= n; d++) {
                    size_t k = 0;
                    in[k++] = alpha[a];
                    if (b < n) in[k++] = alpha[b];
                    if (c < n) in[k++] = alpha[c];
                    if (d < n) in[k++] = alpha[d];
                    in[k] = '\0';
                    kgate_hostspec h, h2;
                    const char *why = NULL;
                    if (kgate_hostspec_parse(in, &h, &why) != 0) {
                        ck_assert_ptr_nonnull(why);
                        continue;
                    }
                    ck_assert_msg(!strchr(h.name, '*') && !strchr(h.name, ':'), "%s", in);
                    for (const char *p = h.name; *p; p++) ck_assert(!(*p >= 'A' && *p <= 'Z'));
                    if (h.port)
                        snprintf(again, sizeof again, "%s%s:%u", h.wildcard ? "*." : "", h.name,
                                 h.port);
                    else
                        snprintf(again, sizeof again, "%s%s", h.wildcard ? "*." : "", h.name);
                    ck_assert_int_eq(kgate_hostspec_parse(again, &h2, &why), 0);
                    ck_assert(memcmp(&h, &h2, sizeof h) == 0);
                }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hostspec");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, accepts_and_normalizes);
    tcase_add_test(tc, refuses_with_a_reason);
    tcase_add_test(tc, small_inputs_round_trip);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
