/* test_termfilter.c: what a pty program may say to the user's terminal.
 * Each sequence that makes a terminal answer (or reaches its clipboard) is
 * dropped, each one terminal programs need passes byte for byte, and both
 * hold at every split of the stream. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <utstring.h>

#include "termfilter.h"
#include "testutil.h"

static int sink_str(void *ctx, const char *buf, size_t len)
{
    utstring_bincpy((UT_string *)ctx, buf, len);
    return 0;
}

/* Filters in[0..len) fed in pieces cut at cuts[], into a new string. */
static UT_string *filter_cuts(const char *in, size_t len, const size_t *cuts, size_t nc,
                              size_t *dropped)
{
    UT_string *out;
    utstring_new(out);
    kg_termfilter *f = kg_termfilter_new(sink_str, out);
    ck_assert_ptr_nonnull(f);
    size_t at = 0;
    for (size_t k = 0; k <= nc; k++) {
        size_t end = k < nc ? cuts[k] : len;
        ck_assert_int_eq(kg_termfilter_feed(f, in + at, end - at), 0);
        at = end;
    }
    ck_assert_int_eq(kg_termfilter_flush(f), 0);
    if (dropped) *dropped = kg_termfilter_dropped(f);
    kg_termfilter_free(f);
    return out;
}

static void ck_filter(const char *in, size_t len, const char *want, size_t want_len)
{
    UT_string *got = filter_cuts(in, len, NULL, 0, NULL);
    ck_assert_msg(utstring_len(got) == want_len && memcmp(utstring_body(got), want, want_len) == 0,
                  "in %zu bytes: got %zu bytes", len, utstring_len(got));
    utstring_free(got);
    /* Every split into two, and byte by byte, gives the same. */
    for (size_t a = 0; a <= len; a++) {
        got = filter_cuts(in, len, &a, 1, NULL);
        ck_assert_msg(utstring_len(got) == want_len &&
                          memcmp(utstring_body(got), want, want_len) == 0,
                      "cut at %zu", a);
        utstring_free(got);
    }
    size_t *cuts = malloc((len + 1) * sizeof *cuts);
    for (size_t i = 0; i + 1 < len; i++) cuts[i] = i + 1;
    got = filter_cuts(in, len, cuts, len ? len - 1 : 0, NULL);
    ck_assert(utstring_len(got) == want_len && memcmp(utstring_body(got), want, want_len) == 0);
    utstring_free(got);
    free(cuts);
}

#define S(x) x, sizeof(x) - 1

/* Sequences that make a terminal answer, or reach the clipboard. */
static const char *const answers[] = {
    "\x1b[c",
    "\x1b[0c",
    "\x1b[>c",
    "\x1b[>0c",
    "\x1b[=c", /* DA1, DA2, DA3 */
    "\x1bZ", /* DECID */
    "\x1b[5n",
    "\x1b[6n",
    "\x1b[?6n",
    "\x1b[?996n", /* DSR */
    "\x1bP$qm\x1b\\",
    "\x1bP$q\"p\x1b\\", /* DECRQSS */
    "\x1bP+q544e\x1b\\", /* XTGETTCAP */
    "\x1b[>q",
    "\x1b[>0q", /* XTVERSION */
    "\x1b[21t",
    "\x1b[18t",
    "\x1b[14t",
    "\x1b[13t",
    "\x1b[11t", /* window reports */
    "\x1b[3;0;0t",
    "\x1b[8;100;300t", /* move, resize */
    "\x1b]10;?\x07",
    "\x1b]11;?\x1b\\",
    "\x1b]4;1;?\x07",
    "\x1b]12;?\x07",
    "\x1b]52;c;aGVsbG8=\x07",
    "\x1b]52;c;?\x07",
    "\x1b]52;;\x1b\\", /* clipboard */
    "\x1b]50;?\x07",
    "\x1b]1337;ReportCellSize\x07",
    "\x1b[?2004$p",
    "\x1b[4$p", /* DECRQM */
    "\x1b[x",
    "\x1b[1x", /* DECREQTPARM */
    "\x1b[?u",
    "\x1b[?4m",
    "\x1b[?1;1S",
    "\x1b[#|",
    "\x1b[1;1;1;1;1*y",
    "\x1b_Gi=1,a=q;\x1b\\", /* APC: kitty graphics */
    "\x1bPtmux;\x1b\x1b[c\x1b\\", /* tmux passthrough */
    "\x1bP1;1|17/61\x1b\\", /* DECUDK */
    "\x05", /* ENQ */
    "\xc2\x9b"
    "c",
    "\xc2\x9b"
    "6n",
    "\xc2\x9d"
    "52;c;eA==\x07", /* UTF-8 C1 */
};

/* Sequences terminal programs need: passed byte for byte. */
static const char *const needed[] = {
    "\x1b[1;31m",
    "\x1b[0m",
    "\x1b[m",
    "\x1b[38;5;196m",
    "\x1b[38:2::255:0:0m",
    "\x1b[10;5H",
    "\x1b[2A",
    "\x1b[B",
    "\x1b[3C",
    "\x1b[D",
    "\x1b[G",
    "\x1b[5d",
    "\x1b[2J",
    "\x1b[K",
    "\x1b[1K",
    "\x1b[2L",
    "\x1b[P",
    "\x1b[X",
    "\x1b[5;20r",
    "\x1b[r",
    "\x1bM",
    "\x1b"
    "D",
    "\x1b"
    "E",
    "\x1b[?1049h",
    "\x1b[?1049l",
    "\x1b[?25l",
    "\x1b[?25h",
    "\x1b[?1h",
    "\x1b=",
    "\x1b[?2004h",
    "\x1b[?2004l",
    "\x1b[?1000h",
    "\x1b[?1006h",
    "\x1b[?1004h",
    "\x1b[2 q",
    "\x1b[>4;2m",
    "\x1b[>1u",
    "\x1b[<u",
    "\x1b[s",
    "\x1b[u",
    "\x1b"
    "7",
    "\x1b"
    "8",
    "\x1b(B",
    "\x1b(0",
    "\x1b)0",
    "\x1b#8",
    "\x1b"
    "c",
    "\x1b]0;kgate test\x07",
    "\x1b]2;title\x1b\\",
    "\x1b]1;icon\x07",
    "\x1b]8;;http://example.invalid/?a=b\x1b\\link\x1b]8;;\x1b\\",
    "\x1b]11;rgb:00/00/00\x07",
    "\x1b]4;1;#ff0000\x07",
    "\x1b]104\x07",
    "\x1b]7;file:///x\x07",
    "\x1b]133;A\x07",
    "\x1bPq#0;2;0;0;0#0!10~-\x1b\\",
    "\x1bP0;1;0q\"1;1;2;2#0~~\x1b\\", /* sixel */
    "plain text, \xc3\xa9t\xc3\xa9 \xc2\xa9 \xe2\x82\xac\r\n\t\x07\x08",
};

START_TEST(answers_are_dropped)
{
    for (size_t i = 0; i < sizeof answers / sizeof *answers; i++) {
        UT_string *in;
        utstring_new(in);
        utstring_printf(in, "a%sb", answers[i]);
        size_t dropped = 0;
        UT_string *got = filter_cuts(utstring_body(in), utstring_len(in), NULL, 0, &dropped);
        ck_assert_msg(strcmp(utstring_body(got), "ab") == 0, "answer %zu passed", i);
        ck_assert_msg(dropped >= 1, "answer %zu not counted", i);
        ck_filter(utstring_body(in), utstring_len(in), "ab", 2);
        utstring_free(got);
        utstring_free(in);
    }
}
END_TEST

START_TEST(needed_sequences_pass)
{
    for (size_t i = 0; i < sizeof needed / sizeof *needed; i++) {
        UT_string *in;
        utstring_new(in);
        utstring_printf(in, "a%sb", needed[i]);
        size_t dropped = 1;
        UT_string *got = filter_cuts(utstring_body(in), utstring_len(in), NULL, 0, &dropped);
        ck_assert_msg(strcmp(utstring_body(got), utstring_body(in)) == 0, "needed %zu changed", i);
        ck_assert_uint_eq(dropped, 0);
        ck_filter(utstring_body(in), utstring_len(in), utstring_body(in), utstring_len(in));
        utstring_free(got);
        utstring_free(in);
    }
}
END_TEST

/* All of them in one stream, at every split: the same verdicts. */
START_TEST(mixed_stream_every_split)
{
    UT_string *in, *want;
    utstring_new(in);
    utstring_new(want);
    for (size_t i = 0; i < sizeof answers / sizeof *answers; i++) {
        utstring_printf(in, "<%zu%s>", i, answers[i]);
        utstring_printf(want, "<%zu>", i);
        if (i < sizeof needed / sizeof *needed) {
            utstring_printf(in, "%s", needed[i]);
            utstring_printf(want, "%s", needed[i]);
        }
    }
    ck_filter(utstring_body(in), utstring_len(in), utstring_body(want), utstring_len(want));
    utstring_free(in);
    utstring_free(want);
}
END_TEST

START_TEST(odd_forms)
{
    /* C0 controls inside a CSI are executed by terminals: they pass, and
     * the query around them is still a query. */
    ck_filter(S("\x1b[6\nn"), S("\n"));
    /* CAN aborts; an ESC starts a new sequence; a lone ESC is nothing. */
    ck_filter(S("\x1b[6\x18n"), S("n"));
    ck_filter(S("\x1b[6\x1b[c."), S("."));
    ck_filter(S("\x1b"), S(""));
    /* A UTF-8 C1 CSI that only draws is written in its 7-bit form. */
    ck_filter(S("\xc2\x9b"
                "1m"),
              S("\x1b[1m"));
    /* An OSC ended by another sequence: a passed title is closed. */
    ck_filter(S("\x1b]0;t\x1b[1m"), S("\x1b]0;t\x1b\\\x1b[1m"));
    /* An unfinished query at the end is not written. */
    ck_filter(S("x\x1b[>"), S("x"));
    ck_filter(S("x\x1b]52;c;aaaa"), S("x"));
    /* A CSI longer than any program needs is dropped whole. */
    char big[600] = "\x1b[";
    memset(big + 2, '1', 500);
    big[502] = 'm';
    ck_filter(big, 503, S(""));
}
END_TEST

static size_t counted;
static int sink_count(void *ctx, const char *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    counted += len;
    return 0;
}

/* A long clipboard write is dropped as it streams; a long sixel passes as
 * it streams.  Nothing is held. */
START_TEST(long_strings_stream)
{
    static char chunk[65536];
    memset(chunk, 'A', sizeof chunk);
    kg_termfilter *f = kg_termfilter_new(sink_count, NULL);
    counted = 0;
    ck_assert_int_eq(kg_termfilter_feed(f, S("\x1b]52;c;")), 0);
    for (int i = 0; i < 64; i++) ck_assert_int_eq(kg_termfilter_feed(f, chunk, sizeof chunk), 0);
    ck_assert_int_eq(kg_termfilter_feed(f, S("\x07ok")), 0);
    ck_assert_uint_eq(counted, 2);
    counted = 0;
    ck_assert_int_eq(kg_termfilter_feed(f, S("\x1bPq")), 0);
    for (int i = 0; i < 64; i++) ck_assert_int_eq(kg_termfilter_feed(f, chunk, sizeof chunk), 0);
    ck_assert_int_eq(kg_termfilter_feed(f, S("\x1b\\")), 0);
    ck_assert_uint_eq(counted, 3 + 64 * sizeof chunk + 2);
    ck_assert_int_eq(kg_termfilter_flush(f), 0);
    kg_termfilter_free(f);
    kg_termfilter_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("termfilter");
    TCase *tc = tcase_create("sequences");
    tcase_add_test(tc, answers_are_dropped);
    tcase_add_test(tc, needed_sequences_pass);
    tcase_add_test(tc, mixed_stream_every_split);
    tcase_add_test(tc, odd_forms);
    tcase_add_test(tc, long_strings_stream);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
