/* mask-reference.h: the mask's rule written the slow, obvious way over a
 * whole stream, for the unit test (tests/unit/output/test_mask.c) and the fuzz
 * target (tests/fuzz/fuzz-mask.c) to compare kg_mask with.
 *
 * Escape sequences (ESC [ params final; ESC intermediates final) are
 * transparent: taken out, the rule applied to the visible bytes (at a word
 * boundary, the longest prefix followed by at least 16 token characters
 * becomes the prefix and "***", and the rest of the token run is dropped),
 * and put back where they were, with "***" right after the prefix's last
 * byte.  A candidate is judged within the mask's window of raw bytes
 * (longest prefix + 16 + MASK_REF_ESC_ROOM, as mask.c), escapes included.
 * Include after utstring (oom.h). */
#ifndef KG_MASK_REFERENCE_H
#define KG_MASK_REFERENCE_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MASK_REF_MIN_TOKEN 16
#define MASK_REF_ESC_ROOM 128

static inline bool mask_ref_tok(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

static inline void mask_reference(const char *const *pfx, size_t npfx, size_t maxlen,
                                  const unsigned char *s, size_t n, UT_string *out)
{
    unsigned char *drop = calloc(n + 1, 1), *star = calloc(n + 1, 1);
    size_t *pos = calloc(n + 1, sizeof *pos), nv = 0;
    if (!drop || !star || !pos) abort(); /* a test's own memory */
    for (size_t i = 0; i < n;) {
        if (s[i] != 0x1b) {
            pos[nv++] = i++;
            continue;
        }
        size_t k = i + 1;
        if (k < n && s[k] == '[') {
            k++;
            while (k < n && s[k] >= 0x20 && s[k] <= 0x3f) k++;
            if (k < n && s[k] >= 0x40 && s[k] <= 0x7e) k++;
        } else {
            while (k < n && s[k] >= 0x20 && s[k] <= 0x2f) k++;
            if (k < n && s[k] >= 0x30 && s[k] <= 0x7e) k++;
        }
        i = k;
    }
    for (size_t a = 0; a < nv;) {
        size_t best = 0, lim = pos[a] + maxlen + MASK_REF_MIN_TOKEN + MASK_REF_ESC_ROOM;
        if (a == 0 || !mask_ref_tok(s[pos[a - 1]])) {
            for (size_t k = 0; k < npfx; k++) {
                size_t pl = strlen(pfx[k]), q = 0;
                if (pl <= best) continue;
                while (q < pl && a + q < nv && pos[a + q] < lim &&
                       s[pos[a + q]] == (unsigned char)pfx[k][q])
                    q++;
                if (q < pl) continue;
                size_t t = 0;
                while (t < MASK_REF_MIN_TOKEN && a + pl + t < nv && pos[a + pl + t] < lim &&
                       mask_ref_tok(s[pos[a + pl + t]]))
                    t++;
                if (t >= MASK_REF_MIN_TOKEN) best = pl;
            }
        }
        if (!best) {
            a++;
            continue;
        }
        star[pos[a + best - 1]] = 1;
        a += best;
        while (a < nv && mask_ref_tok(s[pos[a]])) drop[pos[a++]] = 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!drop[i]) utstring_bincpy(out, s + i, 1);
        if (star[i]) utstring_bincpy(out, "***", 3);
    }
    free(drop);
    free(star);
    free(pos);
}

#endif
