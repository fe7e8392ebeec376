/* test_jsonread.c: the strict JSON reader and the tree writer
 * (core/base/jsonread.c).  What agents send is read; everything RFC 8259
 * does not allow, and everything two readers could read differently, is
 * refused. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"
#include "testutil.h"

static kg_jv *parse(const char *s)
{
    kg_error err = {0};
    kg_jv *v = kg_json_parse(s, strlen(s), &err);
    ck_assert_msg(v != NULL, "%s: %s", s, err.msg);
    return v;
}

static char *write_back(const kg_jv *v, int indent)
{
    UT_string *u;
    utstring_new(u);
    kg_json_write(u, v, indent);
    char *r = strdup(utstring_body(u));
    utstring_free(u);
    return r;
}

START_TEST(reads_what_agents_send)
{
    kg_jv *v = parse("{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"x\"},\"e\":-0.5e+2}");
    ck_assert_int_eq(v->type, KG_JV_OBJECT);
    ck_assert_uint_eq(v->n, 4);
    ck_assert_str_eq(v->members[0].key, "a"); /* in the order read */
    ck_assert_int_eq(kg_jv_get(v, "a")->type, KG_JV_NUMBER);
    ck_assert_str_eq(kg_jv_get(v, "a")->str, "1");
    ck_assert(kg_jv_get(v, "e")->num == -50.0);
    ck_assert_str_eq(kg_jv_get(v, "e")->str, "-0.5e+2");
    kg_jv *b = kg_jv_get(v, "b");
    ck_assert_int_eq(b->type, KG_JV_ARRAY);
    ck_assert(b->items[0]->b && !b->items[1]->b && b->items[2]->type == KG_JV_NULL);
    ck_assert_str_eq(kg_jv_get_cstr(kg_jv_get(v, "c"), "d"), "x");
    ck_assert_ptr_null(kg_jv_get(v, "zz"));
    ck_assert_ptr_null(kg_jv_get(b, "a")); /* not an object */
    ck_assert_ptr_null(kg_jv_get_cstr(v, "a")); /* not a string */
    kg_jv_free(v);
    v = parse(" \t\r\n\"top\" \n");
    ck_assert_str_eq(kg_jv_cstr(v), "top");
    kg_jv_free(v);
}
END_TEST

START_TEST(escapes_decode_to_their_bytes)
{
    kg_jv *v = parse("[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\u00e9\\u20AC\", \"\\ud83d\\ude00\", "
                     "\"caf\xc3\xa9\", \"x\\u0000y\"]");
    ck_assert_str_eq(v->items[0]->str, "\"\\/\b\f\n\r\t");
    ck_assert_str_eq(v->items[1]->str, "\xc3\xa9\xe2\x82\xac");
    ck_assert_str_eq(v->items[2]->str, "\xf0\x9f\x98\x80"); /* a surrogate pair */
    ck_assert_str_eq(v->items[3]->str, "caf\xc3\xa9");
    /* A NUL in a value is read, and never handed to C as a string. */
    ck_assert_uint_eq(v->items[4]->len, 3);
    ck_assert(memcmp(v->items[4]->str, "x\0y", 3) == 0);
    ck_assert_ptr_null(kg_jv_cstr(v->items[4]));
    kg_jv_free(v);
}
END_TEST

/* Each refused with one message that names its byte. */
START_TEST(refuses_what_is_not_strict_json)
{
    static const char *bad[] = {
        "",
        "   ",
        "{\"a\":1}x", /* trailing garbage */
        "{\"a\":1} {}", /* two values */
        "{\"a\":1,\"a\":2}", /* a key twice */
        "{\"a\":1,\"b\":2,\"a\":3}",
        "{\"a\\u0000\":1}", /* NUL in a key */
        "\"\\ud83d\"", /* lone high surrogate */
        "\"\\ude00\"", /* lone low surrogate */
        "\"\\ud83d\\u0041\"", /* high then not low */
        "\"\\u12\"",
        "\"\\x41\"",
        "\"a\nb\"", /* raw control byte */
        "\"\xff\"", /* not UTF-8 */
        "\"\xc0\xaf\"", /* overlong */
        "\"\xed\xa0\x80\"", /* a surrogate in UTF-8 */
        "\"\xc3\"", /* cut short */
        "\"abc",
        "{\"a\" 1}",
        "{\"a\":1,}",
        "[1,]",
        "[1 2]",
        "{a:1}",
        "{'a':1}",
        "01",
        "1.",
        ".5",
        "1e",
        "+1",
        "-",
        "NaN",
        "Infinity",
        "tru",
        "nul",
        "\xef\xbb\xbf{}", /* a byte order mark */
        "/* c */ {}",
        "[1]\0",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        kg_error err = {0};
        size_t len = strlen(bad[i]) + (i == sizeof bad / sizeof *bad - 1);
        kg_jv *v = kg_json_parse(bad[i], len, &err);
        ck_assert_msg(v == NULL, "case %zu accepted: %s", i, bad[i]);
        ck_assert_msg(strncmp(err.msg, "JSON at byte ", 13) == 0 && !strchr(err.msg, '\n'),
                      "case %zu: %s", i, err.msg);
    }
}
END_TEST

static char *nested(int depth)
{
    char *s = malloc((size_t)depth * 2 + 1);
    for (int i = 0; i < depth; i++) s[i] = '[', s[depth * 2 - 1 - i] = ']';
    s[depth * 2] = '\0';
    return s;
}

START_TEST(depth_is_bounded)
{
    char *ok = nested(KG_JSON_MAX_DEPTH), *deep = nested(KG_JSON_MAX_DEPTH + 1);
    kg_error err = {0};
    kg_jv *v = kg_json_parse(ok, strlen(ok), &err);
    ck_assert_ptr_nonnull(v);
    kg_jv_free(v);
    ck_assert_ptr_null(kg_json_parse(deep, strlen(deep), &err));
    ck_assert_msg(strstr(err.msg, "deeper than 64"), "%s", err.msg);
    free(ok);
    free(deep);
    /* Far deeper: refused without exhausting the stack. */
    char *very = nested(1000000);
    ck_assert_ptr_null(kg_json_parse(very, strlen(very), &err));
    free(very);
}
END_TEST

/* A 1 MiB command, and an object of many keys (its duplicate check is not
 * quadratic: this would take minutes if it were). */
START_TEST(big_inputs)
{
    size_t n = 1 << 20;
    char *s = malloc(n + 64);
    strcpy(s, "{\"command\":\"");
    size_t at = strlen(s);
    memset(s + at, 'a', n);
    strcpy(s + at + n, "\"}");
    kg_jv *v = parse(s);
    ck_assert_uint_eq(kg_jv_get(v, "command")->len, n);
    kg_jv_free(v);
    free(s);

    UT_string *u;
    utstring_new(u);
    utstring_printf(u, "{");
    for (int i = 0; i < 100000; i++) utstring_printf(u, "%s\"k%d\":%d", i ? "," : "", i, i);
    utstring_printf(u, "}");
    v = parse(utstring_body(u));
    ck_assert_uint_eq(v->n, 100000);
    kg_jv_free(v);
    utstring_printf(u, ",");
    utstring_body(u)[utstring_len(u) - 2] = ',';
    utstring_body(u)[utstring_len(u) - 1] = '\0';
    utstring_len(u)--;
    utstring_printf(u, "\"k5\":0}");
    kg_error err = {0};
    ck_assert_ptr_null(kg_json_parse(utstring_body(u), utstring_len(u), &err));
    ck_assert_msg(strstr(err.msg, "twice"), "%s", err.msg);
    utstring_free(u);
}
END_TEST

START_TEST(writes_back_what_it_read)
{
    const char *in =
        "{\"a\":1.50,\"b\":[],\"c\":{},\"d\":[\"x\\ny\",null,true],\"\\u00e9\":\"\\u0000\"}";
    kg_jv *v = parse(in);
    char *compact = write_back(v, 0);
    ck_assert_str_eq(compact, "{\"a\":1.50,\"b\":[],\"c\":{},\"d\":[\"x\\ny\",null,true],"
                              "\"\xc3\xa9\":\"\\u0000\"}");
    char *pretty = write_back(v, 2);
    ck_assert_str_eq(pretty, "{\n  \"a\": 1.50,\n  \"b\": [],\n  \"c\": {},\n  \"d\": [\n"
                             "    \"x\\ny\",\n    null,\n    true\n  ],\n"
                             "  \"\xc3\xa9\": \"\\u0000\"\n}");
    kg_jv *again = parse(pretty);
    ck_assert(kg_jv_equal(v, again));
    kg_jv_free(again);
    free(compact);
    free(pretty);
    kg_jv_free(v);
}
END_TEST

START_TEST(edits_keep_everything_else)
{
    kg_jv *v = parse("{\"x\":1,\"hooks\":{\"A\":[1]},\"z\":2}");
    kg_jv *arr = kg_jv_get(kg_jv_get(v, "hooks"), "A");
    kg_jv_push(arr, kg_jv_new_str("two"));
    kg_jv_set(v, "x", kg_jv_new_bool(false)); /* replaced in its place */
    kg_jv_set(v, "new", kg_jv_new_num(3));
    kg_jv_set(v, "f", kg_jv_new_num(0.25));
    char *s = write_back(v, 0);
    ck_assert_str_eq(s, "{\"x\":false,\"hooks\":{\"A\":[1,\"two\"]},\"z\":2,\"new\":3,\"f\":0.25}");
    free(s);
    kg_jv_remove(arr, 0);
    ck_assert(kg_jv_del(v, "z"));
    ck_assert(!kg_jv_del(v, "z"));
    kg_jv *c = kg_jv_copy(v);
    ck_assert(kg_jv_equal(c, v));
    kg_jv_set(c, "x", kg_jv_new_bool(true));
    ck_assert(!kg_jv_equal(c, v));
    kg_jv_free(c);
    s = write_back(v, 0);
    ck_assert_str_eq(s, "{\"x\":false,\"hooks\":{\"A\":[\"two\"]},\"new\":3,\"f\":0.25}");
    free(s);
    kg_jv_free(v);
}
END_TEST

/* A tree built by hand with a byte that is not UTF-8 is written as \udcXX
 * (json.h), which the reader refuses: no such byte is passed on unseen. */
START_TEST(written_bad_bytes_are_refused_back)
{
    kg_jv *v = kg_jv_new_str("a\xff");
    char *s = write_back(v, 0);
    ck_assert_str_eq(s, "\"a\\udcff\"");
    kg_error err = {0};
    ck_assert_ptr_null(kg_json_parse(s, strlen(s), &err));
    free(s);
    kg_jv_free(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("jsonread");
    TCase *tc = tcase_create("read");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, reads_what_agents_send);
    tcase_add_test(tc, escapes_decode_to_their_bytes);
    tcase_add_test(tc, refuses_what_is_not_strict_json);
    tcase_add_test(tc, depth_is_bounded);
    tcase_add_test(tc, big_inputs);
    tcase_add_test(tc, writes_back_what_it_read);
    tcase_add_test(tc, edits_keep_everything_else);
    tcase_add_test(tc, written_bad_bytes_are_refused_back);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
