/* test_msg.c: the one escaping function every printed message goes
 * through (issue 12, section 6): a refusal is one line and forges nothing. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "msg.h"
#include "testutil.h"

static char *esc(const char *s)
{
    UT_string *u;
    utstring_new(u);
    kg_msg_escape(u, s);
    char *r = strdup(utstring_body(u));
    utstring_free(u);
    return r;
}

START_TEST(escapes_what_a_terminal_acts_on)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain /path/to x", "plain /path/to x"},
        {"nosuch\nkgate: forged \033[2J", "nosuch\\nkgate: forged \\e[2J"},
        {"a\tb\rc", "a\\tb\\rc"},
        {"back\\slash", "back\\\\slash"}, /* our escapes stay ours */
        {"\\n", "\\\\n"}, /* text that looks escaped */
        {"\x01\x07\x08\x7f", "\\x01\\x07\\x08\\x7f"},
        {"caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93"}, /* printable UTF-8 */
        {"bad\xff\xfe", "bad\\xff\\xfe"},
        {"\xc2\x9b"
         "31m",
         "\\u{009b}31m"}, /* C1 CSI */
        {"\xc2\x85", "\\u{0085}"}, /* NEL */
        {"a\xe2\x80\xa8"
         "b",
         "a\\u{2028}b"}, /* line separator */
        {"x\xe2\x80\xae"
         "gpj.exe",
         "x\\u{202e}gpj.exe"}, /* right-to-left override */
        {"\xe2\x81\xa6", "\\u{2066}"},
        {"\xed\xa0\x80", "\\xed\\xa0\\x80"}, /* an encoded surrogate */
        {"\xe2\x82", "\\xe2\\x82"}, /* cut short */
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = esc(cases[i].in);
        ck_assert_msg(strcmp(got, cases[i].out) == 0, "case %zu: got %s", i, got);
        free(got);
    }
    char *n = esc(NULL);
    ck_assert_str_eq(n, "");
    free(n);
}
END_TEST

/* Whatever the bytes, the line is one line of printable text. */
START_TEST(every_byte_gives_one_printable_line)
{
    char all[256];
    for (int i = 1; i < 256; i++) all[i - 1] = (char)i;
    all[255] = '\0';
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    kg_msg_line(f, "kgate: ", "refused %s and %s", all, "x\n");
    fclose(f);
    ck_assert_uint_gt(len, 0);
    ck_assert_ptr_eq(strchr(buf, '\n'), buf + len - 1);
    ck_assert_int_eq(strncmp(buf, "kgate: refused ", 15), 0);
    for (size_t i = 0; i + 1 < len; i++)
        ck_assert_msg((unsigned char)buf[i] >= 0x20 && (unsigned char)buf[i] != 0x7f &&
                          (unsigned char)buf[i] < 0x80,
                      "byte %zu is 0x%02x", i, (unsigned char)buf[i]);
    ck_assert_ptr_nonnull(strstr(buf, " and x\\n\n"));
    free(buf);
}
END_TEST

/* --dry-run prints the plan through kg_shell_quote: a word with a control
 * byte is written as bash's $'...', exact and without the raw byte. */
/* The quote of a user's text in a refusal (a host name, a YAML value, a
 * --publish spec): the four copies it replaced each did this. */
START_TEST(a_quote_is_one_short_line)
{
    char out[64];
    kg_msg_quote(out, sizeof out, "db.internal", 11);
    ck_assert_str_eq(out, "db.internal");
    /* Control bytes, a NUL among them, become '?'; UTF-8 is left to
     * kg_msg_escape. */
    kg_msg_quote(out, sizeof out, "a\nb\0c\x1b[2J\x7f\xc3\xa9", 12);
    ck_assert_str_eq(out, "a?b?c?[2J?\xc3\xa9");
    /* Longer than 60 bytes: 60 of them and "...". */
    char long_in[200];
    memset(long_in, 'x', sizeof long_in);
    kg_msg_quote(out, sizeof out, long_in, sizeof long_in);
    ck_assert_uint_eq(strlen(out), KG_MSG_QUOTE_MAX + 3);
    ck_assert_str_eq(out + KG_MSG_QUOTE_MAX, "...");
    kg_msg_quote(out, sizeof out, long_in, KG_MSG_QUOTE_MAX);
    ck_assert_uint_eq(strlen(out), KG_MSG_QUOTE_MAX);
    /* A small buffer is never overrun, and stays terminated. */
    char small[8];
    memset(small, 'Z', sizeof small);
    kg_msg_quote(small, sizeof small, long_in, sizeof long_in);
    ck_assert_uint_lt(strlen(small), sizeof small);
}
END_TEST

/* Text kept before it is shown (a refused plugin, a deny-list reason, a
 * probe's fields) is made one line in place by the quote's rule. */
START_TEST(a_flattened_text_is_one_line)
{
    char s[] = "a\nkgate: forged\r\x1b[2J\x7f\x01\tb caf\xc3\xa9 \xe2\x80\xae back\\slash";
    ck_assert_ptr_eq(kg_msg_flatten(s), s);
    ck_assert_str_eq(s, "a?kgate: forged??[2J???b caf\xc3\xa9 \xe2\x80\xae back\\slash");
    /* Every byte the quote masks, the flattening masks, and no other. */
    for (int c = 1; c < 256; c++) {
        char one[2] = {(char)c, '\0'}, q[8];
        kg_msg_quote(q, sizeof q, one, 1);
        kg_msg_flatten(one);
        ck_assert_msg(strcmp(one, q) == 0, "byte 0x%02x: %s against %s", c, one, q);
        ck_assert_int_eq(one[0] == '?', c < 0x20 || c == 0x7f || c == '?');
    }
    char empty[] = "";
    ck_assert_str_eq(kg_msg_flatten(empty), "");
    ck_assert_ptr_null(kg_msg_flatten(NULL));
}
END_TEST

static char *line_of(const char *text, int escaped)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    if (escaped)
        kg_msg_line_escaped(f, "kgate: git: ", text);
    else
        kg_msg_line(f, "kgate: git: ", "%s", text);
    fclose(f);
    return buf;
}

/* A finding the git check escaped is printed once: its backslashes are
 * not doubled.  Text with a raw control byte is still escaped. */
START_TEST(escaped_text_is_not_escaped_twice)
{
    char *once = line_of("a\\nb\\e[2J/.git was planted", 1);
    ck_assert_str_eq(once, "kgate: git: a\\nb\\e[2J/.git was planted\n");
    char *twice = line_of("a\\nb/.git", 0);
    ck_assert_str_eq(twice, "kgate: git: a\\\\nb/.git\n");
    char *raw = line_of("a\nb\x1b[2J\xe2\x80\xae", 1);
    ck_assert_str_eq(raw, "kgate: git: a\\nb\\e[2J\\u{202e}\n");
    free(once);
    free(twice);
    free(raw);
}
END_TEST

START_TEST(dry_run_words_stay_printable)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain/path", "plain/path"},
        {"two words", "'two words'"},
        {"it's", "'it'\\''s'"},
        {"caf\xc3\xa9", "'caf\xc3\xa9'"},
        {"a\033[2Jb\nc", "$'a\\x1b[2Jb\\x0ac'"},
        {"q'\\\x01", "$'q\\'\\\\\\x01'"},
        {"bad\xff", "$'bad\\xff'"},
        {"\xe2\x80\xae", "$'\\xe2\\x80\\xae'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        UT_string *u;
        utstring_new(u);
        kg_shell_quote(u, cases[i].in);
        ck_assert_msg(strcmp(utstring_body(u), cases[i].out) == 0, "case %zu: %s", i,
                      utstring_body(u));
        utstring_free(u);
    }
    ck_assert(kg_msg_is_plain("caf\xc3\xa9 back\\slash"));
    ck_assert(!kg_msg_is_plain("a\tb"));
    ck_assert(!kg_msg_is_plain("\xc2\x9b"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("msg");
    TCase *tc = tcase_create("escape");
    tcase_add_test(tc, escapes_what_a_terminal_acts_on);
    tcase_add_test(tc, every_byte_gives_one_printable_line);
    tcase_add_test(tc, dry_run_words_stay_printable);
    tcase_add_test(tc, a_quote_is_one_short_line);
    tcase_add_test(tc, a_flattened_text_is_one_line);
    tcase_add_test(tc, escaped_text_is_not_escaped_twice);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
