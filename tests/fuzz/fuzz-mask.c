/* fuzz-mask: the output mask, fed in random chunks, against a reference.
 *
 * The reference (tests/mask-reference.h) is the spec's rule written the slow, obvious way over
 * the whole stream at once: at a word boundary, the longest known prefix
 * followed by at least 16 token characters becomes the prefix and "***",
 * and the whole token run after it is dropped, with terminal escape
 * sequences transparent (tests/mask-reference.h).  kg_mask sees the same bytes
 * split at places chosen from the input, so every way a token can straddle
 * two reads is tried; both must write exactly the same bytes, and the mask
 * must never hold back more than its window (longest prefix + 16 + 128).
 *
 * Input: byte 0 (bits 0-1: number of extra prefixes, bit 2: a sink that
 * fails part way), then each extra prefix as a length byte and its bytes,
 * then 8 bytes of chunking seed, then the stream. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "oom.h" /* utstring, with the core's out-of-memory hook */

#include "fuzz-util.h"
#include "../mask-reference.h"
#include "mask.h"

#define MIN_TOKEN MASK_REF_MIN_TOKEN

typedef struct sink {
    UT_string *out;
    size_t fail_at; /* 0: never */
    int failed; /* once failed, fails for good (a closed pipe) */
} sink;

static int to_buf(void *ctx, const char *buf, size_t len)
{
    sink *k = ctx;
    FZ_CHECK(len > 0, "the sink was called with nothing");
    if (k->failed || (k->fail_at && utstring_len(k->out) + len >= k->fail_at)) {
        k->failed = 1;
        return -1;
    }
    utstring_bincpy(k->out, buf, len);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    size_t pos = 1;
    unsigned nextra = data[0] & 3;
    bool failing = data[0] & 4;
    kg_strv *extra = kg_strv_new();
    for (unsigned e = 0; e < nextra && pos < size; e++) {
        size_t l = 1 + data[pos++] % 12;
        char p[16];
        size_t k = 0;
        /* What config.c lets through: printable, no white space. */
        for (; k < l && pos < size; k++, pos++) {
            unsigned char c = data[pos];
            p[k] = (char)((c <= 0x20 || c == 0x7f) ? 'a' + c % 26 : c);
        }
        p[k] = '\0';
        if (k) kg_strv_push(extra, p);
    }
    uint64_t seed = 0;
    for (int b = 0; b < 8 && pos < size; b++) seed = seed << 8 | data[pos++];
    const unsigned char *s = data + pos;
    size_t n = size - pos;

    size_t npfx = 0, maxlen = 0;
    const char *pfx[64];
    for (size_t i = 0; kg_mask_builtin_prefixes[i]; i++) pfx[npfx++] = kg_mask_builtin_prefixes[i];
    for (size_t i = 0; i < kg_strv_len(extra); i++) pfx[npfx++] = kg_strv_get(extra, i);
    for (size_t i = 0; i < npfx; i++)
        if (strlen(pfx[i]) > maxlen) maxlen = strlen(pfx[i]);

    UT_string *want;
    utstring_new(want);
    mask_reference(pfx, npfx, maxlen, s, n, want);

    /* Once in one piece, once in chunks of 1 to 2^k bytes. */
    for (int pass = 0; pass < 2; pass++) {
        sink k = {.fail_at = failing ? 1 + seed % (n + 1) : 0};
        utstring_new(k.out);
        kg_mask *m = kg_mask_new(extra, to_buf, &k);
        FZ_CHECK(m != NULL, "kg_mask_new failed");
        size_t at = 0;
        int rc = 0;
        uint64_t st = seed;
        unsigned span = 1u << (fz_rand(&st) % 8);
        while (at < n && rc == 0) {
            size_t c = pass == 0 ? n : 1 + fz_rand(&st) % span;
            if (c > n - at) c = n - at;
            rc = kg_mask_feed(m, (const char *)s + at, c);
            at += c;
            /* (After a failed write the stream is closed: no bound then.) */
            FZ_CHECK(rc != 0 || kg_mask_held(m) < maxlen + MIN_TOKEN + MASK_REF_ESC_ROOM,
                     "held %zu bytes, longest prefix %zu", kg_mask_held(m), maxlen);
        }
        /* Flushed even after a failed feed: the relay does that too. */
        int rf = kg_mask_flush(m);
        if (rc == 0) rc = rf;
        FZ_CHECK(kg_mask_held(m) == 0, "bytes held after flush");
        /* Whatever reached the sink is the start of the right answer. */
        FZ_CHECK(utstring_len(k.out) <= utstring_len(want) &&
                     memcmp(utstring_body(k.out), utstring_body(want), utstring_len(k.out)) == 0,
                 "pass %d: output is not a prefix of the reference", pass);
        if (!failing) {
            FZ_CHECK(rc == 0, "feed failed with a sink that never fails");
            FZ_CHECK(utstring_len(k.out) == utstring_len(want) &&
                         memcmp(utstring_body(k.out), utstring_body(want), utstring_len(want)) == 0,
                     "pass %d: mask wrote %zu bytes, reference %zu:\n[%.*s]\n[%.*s]", pass,
                     utstring_len(k.out), utstring_len(want), (int)utstring_len(k.out),
                     utstring_body(k.out), (int)utstring_len(want), utstring_body(want));
        }
        kg_mask_free(m);
        utstring_free(k.out);
    }
    utstring_free(want);
    kg_strv_free(extra);
    return 0;
}
