/* test_json.c: the JSON strings of the audit log and of --json output
 * (core/base/json.c): every input, whatever its bytes, is one valid JSON string
 * on one line, and the bytes come back (surrogateescape). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "testutil.h"

static char *js(const char *s)
{
    UT_string *u;
    utstring_new(u);
    kg_json_str(u, s);
    char *r = strdup(utstring_body(u));
    utstring_free(u);
    return r;
}

START_TEST(escapes_quotes_controls_and_bad_bytes)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "\"plain\""},
        {"", "\"\""},
        {"say \"hi\" \\ back", "\"say \\\"hi\\\" \\\\ back\""},
        {"a\nb\tc\rd", "\"a\\nb\\tc\\rd\""},
        {"\x01\x1b[2J\x7f", "\"\\u0001\\u001b[2J\\u007f\""},
        {"caf\xc3\xa9 \xe2\x82\xac", "\"caf\xc3\xa9 \xe2\x82\xac\""}, /* UTF-8 kept */
        {"bad \xff\xc3", "\"bad \\udcff\\udcc3\""}, /* not UTF-8 */
        {"\xed\xa0\x80", "\"\\udced\\udca0\\udc80\""}, /* a surrogate */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = js(cases[i].in);
        ck_assert_msg(strcmp(got, cases[i].out) == 0, "case %zu: got %s", i, got);
        free(got);
    }
    char *null = js(NULL);
    ck_assert_str_eq(null, "\"\"");
    free(null);
}
END_TEST

/* Every single byte and every pair: one line, printable ASCII or UTF-8
 * only, starting and ending with a quote. */
START_TEST(every_byte_gives_one_line)
{
    char in[3] = {0};
    for (int a = 1; a < 256; a++)
        for (int b = 0; b < 256; b++) {
            in[0] = (char)a;
            in[1] = (char)b;
            char *got = js(in);
            size_t n = strlen(got);
            ck_assert_msg(n >= 2 && got[0] == '"' && got[n - 1] == '"', "%02x %02x", a, b);
            ck_assert_msg(!strchr(got, '\n') && !strchr(got, '\r'), "%02x %02x", a, b);
            for (size_t i = 0; i < n; i++)
                ck_assert_msg((unsigned char)got[i] >= 0x20 && got[i] != 0x7f,
                              "%02x %02x: control byte out", a, b);
            free(got);
        }
}
END_TEST

START_TEST(lists_are_arrays)
{
    const char *v[] = {"a", "b\"c", ""};
    UT_string *u;
    utstring_new(u);
    kg_json_strlist(u, v, 3);
    ck_assert_str_eq(utstring_body(u), "[\"a\",\"b\\\"c\",\"\"]");
    utstring_clear(u);
    kg_json_strlist(u, v, 0);
    ck_assert_str_eq(utstring_body(u), "[]");
    utstring_free(u);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("str");
    tcase_add_test(tc, escapes_quotes_controls_and_bad_bytes);
    tcase_add_test(tc, every_byte_gives_one_line);
    tcase_add_test(tc, lists_are_arrays);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
