/* test_mask.c: the secret mask, against the spec rule and against a plain
 * whole-buffer reference implementation at every split of the stream. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "oom.h" /* utstring, with the core's out-of-memory hook */

#include "mask-reference.h"
#include "mask.h"
#include "testutil.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static int sink_str(void *ctx, const char *buf, size_t len)
{
    utstring_bincpy((UT_string *)ctx, buf, len);
    return 0;
}

/* Masks chunks given by cut points (ascending, within len). */
static void mask_cuts(const kg_strv *extra, const char *in, size_t len, const size_t *cuts,
                      size_t n_cuts, UT_string *out)
{
    kg_mask *m = kg_mask_new(extra, sink_str, out);
    ck_assert_ptr_nonnull(m);
    size_t at = 0;
    for (size_t k = 0; k <= n_cuts; k++) {
        size_t end = k < n_cuts ? cuts[k] : len;
        ck_assert_int_eq(kg_mask_feed(m, in + at, end - at), 0);
        at = end;
    }
    ck_assert_int_eq(kg_mask_flush(m), 0);
    kg_mask_free(m);
}

static char *mask_once(const kg_strv *extra, const char *in, size_t len, size_t *out_len)
{
    UT_string *out;
    utstring_new(out);
    mask_cuts(extra, in, len, NULL, 0, out);
    *out_len = utstring_len(out);
    char *r = malloc(*out_len + 1);
    memcpy(r, utstring_body(out), *out_len);
    r[*out_len] = '\0';
    utstring_free(out);
    return r;
}

static char *mask_s(const char *in)
{
    size_t n;
    return mask_once(NULL, in, strlen(in), &n);
}

#define ck_mask(in, want)             \
    do {                              \
        char *got_ = mask_s(in);      \
        ck_assert_str_eq(got_, want); \
        free(got_);                   \
    } while (0)

static int tokc(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

/* The rule written as plainly as possible, on the whole input at once. */
static void reference(const char *const *pfx, size_t n_pfx, const char *s, size_t n, UT_string *out)
{
    size_t i = 0;
    while (i < n) {
        size_t best = 0;
        if (i == 0 || !tokc((unsigned char)s[i - 1])) {
            for (size_t k = 0; k < n_pfx; k++) {
                size_t pl = strlen(pfx[k]);
                if (pl <= best || n - i < pl || memcmp(s + i, pfx[k], pl) != 0) continue;
                size_t t = 0;
                while (i + pl + t < n && tokc((unsigned char)s[i + pl + t])) t++;
                if (t >= 16) best = pl;
            }
        }
        if (best) {
            utstring_bincpy(out, s + i, best);
            utstring_bincpy(out, "***", 3);
            i += best;
            while (i < n && tokc((unsigned char)s[i])) i++;
        } else {
            utstring_bincpy(out, s + i, 1);
            i++;
        }
    }
}

static size_t builtin_count(void)
{
    size_t n = 0;
    while (kg_mask_builtin_prefixes[n]) n++;
    return n;
}

static void check_against_reference(const char *s, size_t n)
{
    UT_string *want, *got;
    utstring_new(want);
    utstring_new(got);
    reference((const char *const *)kg_mask_builtin_prefixes, builtin_count(), s, n, want);
    mask_cuts(NULL, s, n, NULL, 0, got);
    ck_assert_uint_eq(utstring_len(got), utstring_len(want));
    ck_assert(memcmp(utstring_body(got), utstring_body(want), utstring_len(want)) == 0);
    utstring_free(want);
    utstring_free(got);
}

/* ------------------------------------------------------------------------ */
/* The rule                                                                  */
/* ------------------------------------------------------------------------ */

START_TEST(every_builtin_prefix)
{
    for (size_t k = 0; kg_mask_builtin_prefixes[k]; k++) {
        const char *p = kg_mask_builtin_prefixes[k];
        char in[256], want[256];
        snprintf(in, sizeof in, "key: %sAbCdEfGh0123456789_-xyz end", p);
        snprintf(want, sizeof want, "key: %s*** end", p);
        ck_mask(in, want);
    }
}
END_TEST

START_TEST(required_prefixes_present)
{
    static const char *const required[] = {
        "sk-ant-", "sk-proj-", "sk-",   "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
        "glpat-",  "xoxb-",    "xoxp-", "AKIA", "ASIA", "AIza", "hf_",  "npm_", "pypi-"};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
        int found = 0;
        for (size_t k = 0; kg_mask_builtin_prefixes[k]; k++)
            found |= strcmp(kg_mask_builtin_prefixes[k], required[i]) == 0;
        ck_assert_msg(found, "missing built-in prefix %s", required[i]);
    }
}
END_TEST

START_TEST(token_length_threshold)
{
    ck_mask("ghp_123456789012345", "ghp_123456789012345"); /* 15 */
    ck_mask("ghp_1234567890123456", "ghp_***"); /* 16 */
    ck_mask("ghp_1234567890123456789012345678901234567890 ok", "ghp_*** ok");
    ck_mask("ghp_123456789012345 ok", "ghp_123456789012345 ok");
    /* A non-token byte ends the run before 16. */
    ck_mask("ghp_12345678.90123456789", "ghp_12345678.90123456789");
}
END_TEST

START_TEST(word_boundaries)
{
    const char *t = "0123456789abcdefXYZ";
    char in[128], want[128];
    /* Boundaries: start, space, punctuation, NUL-free control bytes. */
    ck_mask("sk-0123456789abcdefXYZ", "sk-***");
    ck_mask("(sk-0123456789abcdefXYZ)", "(sk-***)");
    ck_mask("a=sk-0123456789abcdefXYZ;", "a=sk-***;");
    ck_mask("\"sk-0123456789abcdefXYZ\"", "\"sk-***\"");
    ck_mask("x\nsk-0123456789abcdefXYZ\n", "x\nsk-***\n");
    ck_mask("x/sk-0123456789abcdefXYZ", "x/sk-***");
    /* No boundary: a token byte before the prefix. */
    snprintf(in, sizeof in, "desk-%s", t);
    ck_mask(in, in);
    snprintf(in, sizeof in, "_sk-%s", t);
    ck_mask(in, in);
    snprintf(in, sizeof in, "-sk-%s", t);
    ck_mask(in, in);
    snprintf(in, sizeof in, "9AKIA%s", t);
    ck_mask(in, in);
    /* Two secrets in a row, each at its own boundary. */
    snprintf(in, sizeof in, "sk-%s sk-%s", t, t);
    snprintf(want, sizeof want, "sk-*** sk-***");
    ck_mask(in, want);
    /* Bytes >= 0x80 are not token bytes: a boundary. */
    ck_mask("\xc3\xa9sk-0123456789abcdefXYZ", "\xc3\xa9sk-***");
}
END_TEST

START_TEST(longest_prefix_wins)
{
    ck_mask("sk-ant-api03-abcdefghijklmnop", "sk-ant-***");
    ck_mask("sk-proj-abcdefghijklmnopqrst", "sk-proj-***");
    /* sk-ant- with 12 token bytes: not a sk-ant- secret, but sk- sees 16. */
    ck_mask("sk-ant-abcdefghijkl", "sk-***");
    /* sk-ant- with 11: sk- sees 15, nothing. */
    ck_mask("sk-ant-abcdefghijk", "sk-ant-abcdefghijk");
    ck_mask("github_pat_11ABCDEFG0123456789abcdef", "github_pat_***");
}
END_TEST

START_TEST(no_false_positives)
{
    static const char *const prose[] = {
        "The task-force met on a risk-free desk-top-manager-overview-of-things.",
        "skill sky skeleton sk- sk-short ghp_short AKIA_short",
        "int sk_buff_len = npm_install_count; /* hf_hub */",
        "see https://github.com/org/repo/pull/123 and glpat- docs",
        "ASIAN countries, AIzawa, Akiak, pypi- mirror, xoxb- too short",
        "path/to/sk-module and ./ghp_dir",
        "the quick brown fox jumps over the lazy dog 0123456789",
        "ask-me-anything-about-everything-you-want", /* 'a' before sk- */
    };
    for (size_t i = 0; i < sizeof prose / sizeof *prose; i++) ck_mask(prose[i], prose[i]);
}
END_TEST

START_TEST(gemini_style_vectors)
{
    /* Secret shapes other redactors test with, where our rule covers them. */
    ck_mask("token=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "token=ghp_***");
    ck_mask("GOOGLE_API_KEY=AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "GOOGLE_API_KEY=AIza***");
    ck_mask("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "aws_access_key_id = AKIA***");
    ck_mask("ASIAY34FZKBOKMUTVV7A", "ASIA***");
    ck_mask("SLACK=xoxb-1234567890-0987654321-AbCdEfGhIjKl", "SLACK=xoxb-***");
    ck_mask("xoxp-1234567890-0987654321-AbCdEfGhIjKl", "xoxp-***");
    ck_mask("HF=hf_AbCdEfGhIjKlMnOpQrStUvWxYz", "HF=hf_***");
    ck_mask("//registry.npmjs.org/:_authToken=npm_AbCdEfGhIjKlMnOpQrSt",
            "//registry.npmjs.org/:_authToken=npm_***");
    ck_mask("password = pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4", "password = pypi-***");
    ck_mask("glpat-AbCdEfGhIjKlMnOpQrSt", "glpat-***");
}
END_TEST

START_TEST(user_prefixes)
{
    kg_strv *extra = kg_strv_new();
    kg_strv_push(extra, "acme_");
    kg_strv_push(extra, "acme_live_");
    kg_strv_push(extra, ""); /* ignored, not "mask every word" */
    size_t n;
    const char *in = "a acme_0123456789abcdef b acme_live_0123456789abcdef "
                     "c acme_short d aaaaaaaaaaaaaaaaaaaaaaaa";
    char *got = mask_once(extra, in, strlen(in), &n);
    ck_assert_str_eq(got, "a acme_*** b acme_live_*** c acme_short d "
                          "aaaaaaaaaaaaaaaaaaaaaaaa");
    free(got);
    /* Built-ins still apply beside user prefixes. */
    got = mask_once(extra, "ghp_0123456789abcdef", 20, &n);
    ck_assert_str_eq(got, "ghp_***");
    free(got);
    kg_strv_free(extra);
}
END_TEST

START_TEST(binary_with_nuls)
{
    static const char in[] = "\0\x01\xff sk-0123456789abcdefgh\0ghp_\0\0"
                             "AKIA0123456789ABCDEF\xfe";
    static const char want[] = "\0\x01\xff sk-***\0ghp_\0\0AKIA***\xfe";
    size_t n;
    char *got = mask_once(NULL, in, sizeof in - 1, &n);
    ck_assert_uint_eq(n, sizeof want - 1);
    ck_assert(memcmp(got, want, n) == 0);
    free(got);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Streaming                                                                 */
/* ------------------------------------------------------------------------ */

static const char *const split_inputs[] = {
    "pre sk-ant-api03-0123456789abcdefghij post",
    "sk-0123456789abcdef",
    "x sk-ant-abcdefghijkl y", /* falls back to sk- */
    "x sk-ant-abcdefghijk y", /* nothing */
    "github_pat_11AAAAAAA0123456789_abcdefghij\nghp_short ghp_0123456789abcdefXX",
    "desk-0123456789abcdefghij (AKIAIOSFODNN7EXAMPLE) ASIAN",
    "sk-sk-sk-0123456789abcdefghij sk-",
    "aaaa ghp_0123456789abcde", /* 15 then end of stream */
    "ghp_0123456789abcdef", /* 16 exactly at end of stream */
};

START_TEST(every_split_two_and_three_feeds)
{
    for (size_t s = 0; s < sizeof split_inputs / sizeof *split_inputs; s++) {
        const char *in = split_inputs[s];
        size_t len = strlen(in);
        UT_string *want;
        utstring_new(want);
        reference((const char *const *)kg_mask_builtin_prefixes, builtin_count(), in, len, want);
        for (size_t a = 0; a <= len; a++) {
            for (size_t b = a; b <= len; b++) {
                size_t cuts[2] = {a, b};
                UT_string *got;
                utstring_new(got);
                mask_cuts(NULL, in, len, cuts, 2, got);
                ck_assert_msg(
                    utstring_len(got) == utstring_len(want) &&
                        memcmp(utstring_body(got), utstring_body(want), utstring_len(want)) == 0,
                    "input %zu cut at %zu,%zu: got '%s' want '%s'", s, a, b, utstring_body(got),
                    utstring_body(want));
                utstring_free(got);
            }
        }
        utstring_free(want);
    }
}
END_TEST

START_TEST(byte_at_a_time)
{
    const char *in = "a sk-proj-0123456789abcdefghij b ghp_0123456789abcdef";
    size_t len = strlen(in);
    size_t cuts[128];
    for (size_t i = 0; i + 1 < len; i++) cuts[i] = i + 1;
    UT_string *got;
    utstring_new(got);
    mask_cuts(NULL, in, len, cuts, len - 1, got);
    ck_assert_str_eq(utstring_body(got), "a sk-proj-*** b ghp_***");
    utstring_free(got);
}
END_TEST

START_TEST(random_streams_match_reference)
{
    static const char *const atoms[] = {
        "sk-",  "sk-ant-",         "ghp_", "AKIA", "a", "Z", "0", "_", "-", " ", "\n", ".", "\0",
        "\xff", "aaaaaaaaaaaaaaa", "x"};
    unsigned seed = 12345;
    for (int round = 0; round < 400; round++) {
        UT_string *in, *want, *got;
        utstring_new(in);
        utstring_new(want);
        utstring_new(got);
        int atoms_n = 1 + (int)(rand_r(&seed) % 120);
        for (int k = 0; k < atoms_n; k++) {
            const char *a = atoms[rand_r(&seed) % (sizeof atoms / sizeof *atoms)];
            utstring_bincpy(in, a, a[0] ? strlen(a) : 1);
        }
        size_t len = utstring_len(in);
        reference((const char *const *)kg_mask_builtin_prefixes, builtin_count(), utstring_body(in),
                  len, want);
        size_t cuts[64], nc = 0, at = 0;
        while (nc < 64) {
            at += (size_t)(rand_r(&seed) % 40);
            if (at >= len) break;
            cuts[nc++] = at;
        }
        mask_cuts(NULL, utstring_body(in), len, cuts, nc, got);
        ck_assert_uint_eq(utstring_len(got), utstring_len(want));
        ck_assert(memcmp(utstring_body(got), utstring_body(want), utstring_len(want)) == 0);
        utstring_free(in);
        utstring_free(want);
        utstring_free(got);
    }
}
END_TEST

START_TEST(long_inputs_use_the_vector_path)
{
    /* Secrets at every alignment inside long clean runs. */
    for (size_t pad = 0; pad < 40; pad++) {
        char buf[512];
        size_t n = 0;
        for (size_t i = 0; i < pad; i++) buf[n++] = (i % 7 == 3) ? ' ' : 'q';
        n += (size_t)snprintf(buf + n, sizeof buf - n,
                              " ghp_0123456789abcdefgh tail sk-1234567890123456 "
                              "and-more-text-that-is-not-secret/ AIza0123456789abcdef!");
        check_against_reference(buf, n);
        char *got = mask_s(buf);
        ck_assert_ptr_nonnull(strstr(got, "ghp_*** tail sk-*** "));
        ck_assert_ptr_nonnull(strstr(got, "AIza***!"));
        free(got);
    }
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

START_TEST(endless_token_bounded_memory)
{
    kg_mask *m = kg_mask_new(NULL, sink_count, NULL);
    ck_assert_ptr_nonnull(m);
    static char chunk[65536];
    memset(chunk, 'a', sizeof chunk);
    counted = 0;
    ck_assert_int_eq(kg_mask_feed(m, "start sk-", 9), 0);
    for (int i = 0; i < 160; i++) { /* 10 MiB of one token */
        ck_assert_int_eq(kg_mask_feed(m, chunk, sizeof chunk), 0);
        ck_assert_uint_lt(kg_mask_held(m), 64);
    }
    ck_assert_int_eq(kg_mask_feed(m, " end", 4), 0);
    ck_assert_int_eq(kg_mask_flush(m), 0);
    ck_assert_uint_eq(counted, strlen("start sk-*** end"));
    /* An endless token that never qualifies a prefix passes through at
     * once: nothing is held. */
    counted = 0;
    for (int i = 0; i < 16; i++) {
        ck_assert_int_eq(kg_mask_feed(m, chunk, sizeof chunk), 0);
        ck_assert_uint_eq(kg_mask_held(m), 0);
    }
    ck_assert_uint_eq(counted, 16 * sizeof chunk);
    kg_mask_free(m);
}
END_TEST

static int sink_fail(void *ctx, const char *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    (void)len;
    return -1;
}

START_TEST(sink_failure_reported)
{
    kg_mask *m = kg_mask_new(NULL, sink_fail, NULL);
    ck_assert_int_eq(kg_mask_feed(m, "hello", 5), -1);
    ck_assert_int_eq(kg_mask_feed(m, "sk-", 3), 0); /* held, nothing written */
    ck_assert_int_eq(kg_mask_flush(m), -1);
    kg_mask_free(m);
    kg_mask_free(NULL);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Terminal control sequences are transparent                               */
/* ------------------------------------------------------------------------ */

/* The rule on what a terminal shows (escape sequences transparent): the
 * shared reference, with the built-in prefixes. */
static void reference_esc(const char *s, size_t n, UT_string *out)
{
    size_t np = builtin_count(), maxlen = 0;
    for (size_t k = 0; k < np; k++)
        if (strlen(kg_mask_builtin_prefixes[k]) > maxlen)
            maxlen = strlen(kg_mask_builtin_prefixes[k]);
    mask_reference((const char *const *)kg_mask_builtin_prefixes, np, maxlen,
                   (const unsigned char *)s, n, out);
}

static void check_esc_cuts(const char *in, size_t len, const size_t *cuts, size_t nc)
{
    UT_string *want, *got;
    utstring_new(want);
    utstring_new(got);
    reference_esc(in, len, want);
    mask_cuts(NULL, in, len, cuts, nc, got);
    ck_assert_msg(utstring_len(got) == utstring_len(want) &&
                      memcmp(utstring_body(got), utstring_body(want), utstring_len(want)) == 0,
                  "got '%s' want '%s'", utstring_body(got), utstring_body(want));
    utstring_free(want);
    utstring_free(got);
}

/* What grep --color=always writes (GREP_COLORS defaults): the match in
 * ESC[01;31m ESC[K ... ESC[m ESC[K. */
#define RED "\x1b[01;31m\x1b[K"
#define OFF "\x1b[m\x1b[K"

START_TEST(grep_colours)
{
    /* grep --color=always GITHUB_TOKEN= : the K before the token used to
     * count as a token character, so the prefix was not at a boundary. */
    ck_mask(RED "GITHUB_TOKEN=" OFF "ghp_0123456789abcdefghij\n",
            RED "GITHUB_TOKEN=" OFF "ghp_***\n");
    /* grep --color=always ghp_ : the highlighted prefix is followed by
     * ESC[m, not by the token. */
    ck_mask("GITHUB_TOKEN=" RED "ghp_" OFF "0123456789abcdefghij\n",
            "GITHUB_TOKEN=" RED "ghp_***" OFF "\n");
    /* A match inside the token: the highlight is kept, the bytes go. */
    ck_mask("t=ghp_0123" RED "456789" OFF "abcdefghij\n", "t=ghp_***" RED OFF "\n");
    /* The whole token highlighted, and grep -n's coloured line numbers. */
    ck_mask("\x1b[32m\x1b[K12\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K" RED
            "sk-ant-api03-0123456789abcdefgh" OFF " x",
            "\x1b[32m\x1b[K12\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K" RED "sk-ant-***" OFF " x");
}
END_TEST

START_TEST(ls_colours)
{
    /* ls --color=always: ESC[0m ESC[01;34m name ESC[0m */
    ck_mask("\x1b[0m\x1b[01;34mghp_0123456789abcdefghij\x1b[0m  plain\n",
            "\x1b[0m\x1b[01;34mghp_***\x1b[0m  plain\n");
    ck_mask("\x1b[01;32mAKIAIOSFODNN7EXAMPLE\x1b[0m\n", "\x1b[01;32mAKIA***\x1b[0m\n");
}
END_TEST

START_TEST(sequence_inside_a_token)
{
    /* In the prefix, between prefix and token, in the token: the token is
     * what a terminal shows, and every sequence stays. */
    ck_mask("gh\x1b[1mp_0123456789abcdefghij", "gh\x1b[1mp_***");
    ck_mask("ghp_0123456789\x1b[7m\x1b(Babcdefghij end", "ghp_***\x1b[7m\x1b(B end");
    ck_mask("sk-\x1b(B0123456789abcdefghij", "sk-***\x1b(B");
    /* A sequence does not separate words: x ESC[1m ghp_ is the word
     * xghp_..., not a token at a boundary. */
    ck_mask("x\x1b[1mghp_0123456789abcdefghij", "x\x1b[1mghp_0123456789abcdefghij");
    /* Nor do the sequence's own letters count: ESC[1m then 16 characters
     * after a prefix are 16, not 17 with the m. */
    ck_mask("ghp_\x1b[1m0123456789abcde", "ghp_\x1b[1m0123456789abcde");
    ck_mask("ghp_\x1b[1m0123456789abcdef", "ghp_***\x1b[1m");
    /* A lone ESC, or ESC before a byte no sequence takes, ends there. */
    ck_mask("\x1b\nghp_0123456789abcdefghij", "\x1b\nghp_***");
    /* OSC text is visible text: a token in a window title is masked. */
    ck_mask("\x1b]0;ghp_0123456789abcdefghij\x07", "\x1b]0;ghp_***\x07");
}
END_TEST

static const char *const esc_split_inputs[] = {
    RED "GITHUB_TOKEN=" OFF "ghp_0123456789abcdefghij\n",
    "GITHUB_TOKEN=" RED "ghp_" OFF "0123456789abcdefghij\n",
    "a \x1b[38;5;196msk-ant-\x1b[0mapi03-0123456789abcdefghij \x1b[1mb",
    "ghp_0123456789abcd\x1b[1mef gh\x1b[mp_0123456789abcdefgh",
    "\x1b\x1b[1m\x1b(0ghp_0123456789abcdefghij\x1b",
};

START_TEST(sequences_split_across_reads)
{
    for (size_t s = 0; s < sizeof esc_split_inputs / sizeof *esc_split_inputs; s++) {
        const char *in = esc_split_inputs[s];
        size_t len = strlen(in);
        for (size_t a = 0; a <= len; a++)
            for (size_t b = a; b <= len; b++) {
                size_t cuts[2] = {a, b};
                check_esc_cuts(in, len, cuts, 2);
            }
        size_t cuts[256];
        for (size_t i = 0; i + 1 < len; i++) cuts[i] = i + 1;
        check_esc_cuts(in, len, cuts, len - 1);
    }
}
END_TEST

START_TEST(random_streams_with_sequences)
{
    static const char *const atoms[] = {
        "sk-",   "sk-ant-", "ghp_",   "AKIA",        "a",
        "Z",     "0",       "_",      "-",           " ",
        "\n",    "m",       "K",      "[",           "\x1b",
        "\x1b[", "\x1b[m",  "\x1b[K", "\x1b[01;31m", "\x1b]0;",
        "\x07",  "\x1b\\",  "\x1b(B", "\x1b[?1049h", "aaaaaaaaaaaaaaa",
        "\xff"};
    unsigned seed = 4242;
    for (int round = 0; round < 600; round++) {
        UT_string *in;
        utstring_new(in);
        int atoms_n = 1 + (int)(rand_r(&seed) % 80);
        for (int k = 0; k < atoms_n; k++) {
            const char *a = atoms[rand_r(&seed) % (sizeof atoms / sizeof *atoms)];
            utstring_bincpy(in, a, strlen(a));
        }
        size_t len = utstring_len(in), cuts[64], nc = 0, at = 0;
        while (nc < 64) {
            at += (size_t)(rand_r(&seed) % 30);
            if (at >= len) break;
            cuts[nc++] = at;
        }
        check_esc_cuts(utstring_body(in), len, cuts, nc);
        utstring_free(in);
    }
}
END_TEST

/* A long clean stretch with one coloured token: the vector path on both
 * sides of the sequences, at every alignment. */
START_TEST(sequences_in_long_inputs)
{
    for (size_t pad = 0; pad < 70; pad++) {
        char buf[1024];
        size_t n = 0;
        for (size_t i = 0; i < pad; i++) buf[n++] = (i % 5 == 2) ? ' ' : 'q';
        n += (size_t)snprintf(buf + n, sizeof buf - n,
                              " x=" RED "ghp_" OFF "0123456789abcdefgh tail " RED "AIza" OFF
                              "0123456789abcdef!" RED "zz" OFF
                              " and a long clean run of words after it all");
        check_esc_cuts(buf, n, NULL, 0);
        char *got = mask_s(buf);
        ck_assert_ptr_nonnull(strstr(got, " x=" RED "ghp_***" OFF " tail " RED "AIza***" OFF "!"));
        free(got);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The vector scans against the reference                                   */
/* ------------------------------------------------------------------------ */

/* User prefixes whose first bytes span ten high nibbles (more than the
 * scan's three first-byte classes hold exactly), bytes >= 0x80, a
 * one-byte prefix and some that start with non-token bytes. */
static const char *const many_first[] = {
    "acme_", "Q",   "zz-", "\xc3\xa9t_", "\xff", "$key=", "~tk-", "1pw-",  "9z",       "@me_",
    "=x",    "kk_", "bb-", "cc_",        "dd_",  "ee_",   "ff_",  "ii_",   "\x80\x81", "jj-",
    "yy_",   "mm-", "rr_", "tt_",        "uu_",  "vv_",   "ww_",  "\x1f-", "\x7fx",    NULL};

/* The rule over prefixes builtin + extra, through mask_reference(). */
static void reference_with(const kg_strv *extra, const unsigned char *s, size_t n, UT_string *out)
{
    const char *all[64];
    size_t np = 0, maxlen = 0;
    for (size_t k = 0; kg_mask_builtin_prefixes[k]; k++) all[np++] = kg_mask_builtin_prefixes[k];
    for (size_t k = 0; k < kg_strv_len(extra); k++) all[np++] = kg_strv_get(extra, k);
    for (size_t k = 0; k < np; k++)
        if (strlen(all[k]) > maxlen) maxlen = strlen(all[k]);
    mask_reference(all, np, maxlen, s, n, out);
}

/* Masks in[0..len) cut at random points (or whole when seed is NULL), with
 * the fast scan or the portable one. */
static void mask_random_cuts(const kg_strv *extra, bool portable, const unsigned char *in,
                             size_t len, unsigned *seed, UT_string *out)
{
    kg_mask *m = kg_mask_new(extra, sink_str, out);
    ck_assert_ptr_nonnull(m);
    if (portable) kg_mask_portable(m);
    /* Whole (always without a seed), cut anywhere, in small pieces or in
     * large ones. */
    size_t step = seed ? (size_t[]){0, len + 1, 7, 40, 300}[rand_r(seed) % 5] : 0;
    for (size_t at = 0; at < len;) {
        size_t k = step ? 1 + (size_t)rand_r(seed) % step : len;
        if (k > len - at) k = len - at;
        ck_assert_int_eq(kg_mask_feed(m, (const char *)in + at, k), 0);
        at += k;
    }
    ck_assert_int_eq(kg_mask_flush(m), 0);
    kg_mask_free(m);
}

/* One piece of an adversarial stream: a prefix or a fragment of one, a
 * token run near the threshold, an escape sequence, word breaks, or
 * random bytes. */
static void add_piece(const char *const *pfx, size_t np, unsigned *seed, UT_string *in)
{
    static const char *const esc[] = {
        "\x1b[m", "\x1b[01;31m\x1b[K", "\x1b]0;", "\x1b\\", "\x1b(B", "\x1b[",
        "\x1b",   "\x1b[?1049h"};
    static const char tokc[] = "abcXYZ019_-";
    unsigned r = (unsigned)rand_r(seed);
    const char *p = pfx[r / 16 % np];
    switch (r % 8) {
    case 0: utstring_bincpy(in, p, strlen(p)); break;
    case 1: utstring_bincpy(in, p, 1 + r / 1024 % strlen(p)); break;
    case 2: {
        size_t t = 14 + r / 1024 % 5;
        for (size_t k = 0; k < t; k++) utstring_bincpy(in, &tokc[(r >> (k % 8)) % 11], 1);
        break;
    }
    case 3: utstring_bincpy(in, esc[r / 16 % 8], strlen(esc[r / 16 % 8])); break;
    case 4: utstring_bincpy(in, (r & 256) ? " " : "\n", 1); break;
    default: {
        unsigned char b = (unsigned char)(r >> 8);
        utstring_bincpy(in, &b, 1);
    }
    }
}

static void differential_rounds(const kg_strv *extra, unsigned seed, int rounds)
{
    const char *pfx[64];
    size_t np = 0;
    for (size_t k = 0; kg_mask_builtin_prefixes[k]; k++) pfx[np++] = kg_mask_builtin_prefixes[k];
    for (size_t k = 0; k < kg_strv_len(extra); k++) pfx[np++] = kg_strv_get(extra, k);
    for (int round = 0; round < rounds; round++) {
        UT_string *in, *want;
        utstring_new(in);
        utstring_new(want);
        /* A clean run first, of random length, so candidates fall at every
         * alignment of the 32-byte blocks. */
        for (unsigned k = (unsigned)rand_r(&seed) % 80; k > 0; k--) utstring_bincpy(in, "w", 1);
        int pieces = 1 + rand_r(&seed) % 120;
        for (int k = 0; k < pieces; k++) add_piece(pfx, np, &seed, in);
        const unsigned char *s = (const unsigned char *)utstring_body(in);
        size_t len = utstring_len(in);
        reference_with(extra, s, len, want);
        for (int portable = 0; portable < 2; portable++) {
            UT_string *got;
            utstring_new(got);
            mask_random_cuts(extra, portable, s, len, &seed, got);
            ck_assert_msg(utstring_len(got) == utstring_len(want) &&
                              memcmp(utstring_body(got), utstring_body(want), utstring_len(want)) ==
                                  0,
                          "round %d portable %d: %zu bytes in, %zu out, want %zu", round, portable,
                          len, utstring_len(got), utstring_len(want));
            utstring_free(got);
        }
        utstring_free(in);
        utstring_free(want);
    }
}

START_TEST(scans_match_reference_builtin) { differential_rounds(NULL, 2801, 3000); }
END_TEST

START_TEST(scans_match_reference_many_first_bytes)
{
    kg_strv *extra = kg_strv_new();
    for (size_t k = 0; many_first[k]; k++) kg_strv_push(extra, many_first[k]);
    differential_rounds(extra, 2802, 3000);
    kg_strv_free(extra);
}
END_TEST

/* A few user prefixes: four high nibbles, one more than the exact
 * classes hold, and a byte >= 0x80. */
START_TEST(scans_match_reference_few_first_bytes)
{
    kg_strv *extra = kg_strv_new();
    kg_strv_push(extra, "acme_");
    kg_strv_push(extra, "\xc3\xa9t_");
    kg_strv_push(extra, "1pw-");
    differential_rounds(extra, 2803, 3000);
    kg_strv_free(extra);
}
END_TEST

/* Every byte value before and as a candidate, in long runs: the token
 * class of each byte and the first-byte class, byte by byte. */
START_TEST(scans_every_byte_value)
{
    for (int portable = 0; portable < 2; portable++)
        for (unsigned b = 0; b < 256; b++) {
            unsigned char buf[200];
            size_t n = 0;
            for (size_t k = 0; k < 37; k++) buf[n++] = (unsigned char)(k % 3 ? b : ' ');
            static const char tail[] = "ghp_0123456789abcdefghij sk-0123456789abcdefgh";
            buf[n++] = (unsigned char)b;
            memcpy(buf + n, tail, sizeof tail - 1);
            n += sizeof tail - 1;
            for (size_t k = 0; k < 40; k++) buf[n++] = (unsigned char)b;
            UT_string *want, *got;
            utstring_new(want);
            utstring_new(got);
            reference_with(NULL, buf, n, want);
            mask_random_cuts(NULL, portable, buf, n, NULL, got);
            ck_assert_msg(utstring_len(got) == utstring_len(want) &&
                              memcmp(utstring_body(got), utstring_body(want), utstring_len(want)) ==
                                  0,
                          "byte 0x%02x portable %d", b, portable);
            utstring_free(want);
            utstring_free(got);
        }
}
END_TEST

/* An escape sequence right after a prefix's first byte (or second), at
 * every alignment of the blocks: the byte after the first is then ESC,
 * not a prefix's second byte. */
START_TEST(scans_escape_inside_prefix)
{
    static const char *const forms[] = {
        " g\x1b[mhp_0123456789abcdefgh x", " s\x1b[Kk-0123456789abcdefgh x",
        " gh\x1b[01;31mp_0123456789abcdefgh x", " A\x1b(BKIA0123456789abcdefgh x"};
    for (int portable = 0; portable < 2; portable++)
        for (size_t f = 0; f < sizeof forms / sizeof *forms; f++)
            for (size_t pad = 0; pad < 70; pad++) {
                unsigned char buf[200];
                size_t n = 0;
                for (size_t k = 0; k < pad; k++) buf[n++] = 'q';
                memcpy(buf + n, forms[f], strlen(forms[f]));
                n += strlen(forms[f]);
                for (size_t k = 0; k < 40; k++) buf[n++] = ' ';
                UT_string *want, *got;
                utstring_new(want);
                utstring_new(got);
                reference_with(NULL, buf, n, want);
                mask_random_cuts(NULL, portable, buf, n, NULL, got);
                ck_assert_ptr_nonnull(strstr(utstring_body(got), "***"));
                ck_assert_msg(
                    utstring_len(got) == utstring_len(want) &&
                        memcmp(utstring_body(got), utstring_body(want), utstring_len(want)) == 0,
                    "form %zu pad %zu portable %d", f, pad, portable);
                utstring_free(want);
                utstring_free(got);
            }
}
END_TEST

static Suite *mask_suite(void)
{
    Suite *s = suite_create("mask");
    TCase *tc = tcase_create("rule");
    tcase_add_test(tc, every_builtin_prefix);
    tcase_add_test(tc, required_prefixes_present);
    tcase_add_test(tc, token_length_threshold);
    tcase_add_test(tc, word_boundaries);
    tcase_add_test(tc, longest_prefix_wins);
    tcase_add_test(tc, no_false_positives);
    tcase_add_test(tc, gemini_style_vectors);
    tcase_add_test(tc, user_prefixes);
    tcase_add_test(tc, binary_with_nuls);
    suite_add_tcase(s, tc);
    tc = tcase_create("stream");
    tcase_add_test(tc, every_split_two_and_three_feeds);
    tcase_add_test(tc, byte_at_a_time);
    tcase_add_test(tc, random_streams_match_reference);
    tcase_add_test(tc, long_inputs_use_the_vector_path);
    tcase_add_test(tc, endless_token_bounded_memory);
    tcase_add_test(tc, sink_failure_reported);
    suite_add_tcase(s, tc);
    tc = tcase_create("escapes");
    tcase_add_test(tc, grep_colours);
    tcase_add_test(tc, ls_colours);
    tcase_add_test(tc, sequence_inside_a_token);
    tcase_add_test(tc, sequences_split_across_reads);
    tcase_add_test(tc, random_streams_with_sequences);
    tcase_add_test(tc, sequences_in_long_inputs);
    suite_add_tcase(s, tc);
    tc = tcase_create("scans");
    /* 3,000 rounds through two scans and the reference: 12-22 s each under
     * valgrind on a loaded 2-vCPU machine (scripts/test), past check's
     * default of 30 s with little to spare. */
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, scans_match_reference_builtin);
    tcase_add_test(tc, scans_match_reference_many_first_bytes);
    tcase_add_test(tc, scans_match_reference_few_first_bytes);
    tcase_add_test(tc, scans_every_byte_value);
    tcase_add_test(tc, scans_escape_inside_prefix);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return kgt_run_suite(mask_suite()); }
