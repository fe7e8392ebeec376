/* mask.c: the secret mask on the program's stdout and stderr.
 *
 * The rule (spec "Output"): a known prefix at a word boundary (the byte
 * before it is not a token character, or it starts the stream) followed by
 * at least 16 token characters [A-Za-z0-9_-] is written as the prefix and
 * "***"; the whole token run after the prefix is dropped.  When several
 * prefixes qualify at one position the longest wins (sk-ant- over sk-).
 *
 * Speed matters: every byte the program writes passes through here, and the
 * relay should run near pipe speed.  So the scan looks for candidates (a
 * byte that starts some prefix, right after a non-token byte) 32 bytes at
 * a time, and clean spans go to the sink straight from the caller's
 * buffer, never copied.  Where the CPU has AVX2 (x86-64 ELF), each block
 * is classified by table lookups on its bytes' two nibbles (vpshufb): one
 * pair of 16-entry tables gives "token character" and "may start a
 * prefix", another "may follow a prefix's first byte"; the non-token
 * bitmask, shifted by one lane and carried across blocks, gives the word
 * boundaries.  Elsewhere (arm64, macOS, old x86) GCC/clang vector
 * extensions compare with each first byte (SSE2 or NEON without
 * intrinsics).  Either pass then checks its hits with a two-byte table and
 * the prefixes themselves, so only a word that could still be a secret
 * stops it.
 *
 * Streaming: a candidate that cannot be decided before the end of a feed
 * (a partial prefix, or a prefix with fewer than 16 token characters so
 * far) is held back, at most longest-prefix + 16 bytes, and decided when
 * more arrives or at kg_mask_flush().  Once a run is being masked its bytes
 * are dropped as they come, so an endless token costs no memory.
 *
 * Terminal control sequences are transparent: grep --color and ls wrap
 * words in ESC[...m, and the mask must see the token a terminal shows, not
 * the bytes.  So an escape sequence (CSI: ESC [ params final; and ESC,
 * intermediates, final, which covers the two-byte escapes and the ESC ] and
 * ESC \ that open and close OSC strings) neither separates two token
 * characters nor counts as one, and it is always written out, also inside
 * a masked run.  The clean spans between escapes still take the vector
 * path; a candidate with an escape inside is decided by a scalar walk over
 * at most `window` bytes (longest prefix + 16 + ESC_ROOM), so a token
 * broken up by more escape bytes than that is not recognised. */
#include "mask.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* The AVX2 scan: x86-64 ELF with GCC or clang, chosen per mask by
 * __builtin_cpu_supports (which needs libgcc's or compiler-rt's
 * __cpu_model, absent from macOS's libSystem). */
#if defined(__x86_64__) && defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
#define MASK_AVX2 1
#include <immintrin.h>
#endif

const char *const kg_mask_builtin_prefixes[] = {
    "sk-ant-",     "sk-proj-", "sk-",   "ghp_",  "gho_",  "ghu_",  "ghs_",  "ghr_",
    "github_pat_", "glpat-",   "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "AKIA",
    "ASIA",        "AIza",     "hf_",   "npm_",  "pypi-", NULL,
};

/* How many token characters after a prefix make it a secret. */
#define MIN_TOKEN 16
/* Escape bytes a candidate may hold beside its prefix and 16 token
 * characters (grep puts 11 between a highlighted prefix and the rest). */
#define ESC_ROOM 128
#define ESC 0x1b
/* Distinct first bytes the portable vector scan compares against; with
 * more (only possible through many user prefixes) it falls back to a
 * table.  The AVX2 scan has no such limit. */
#define MAX_VEC_FIRST 16

/* VW bytes per step.  32 is one AVX2 register, two SSE2 or NEON ones: the
 * compiler splits what the target cannot do at once. */
#define VW 32
/* Every function that passes these is static: no ABI crosses a file. */
#if defined(__clang__)
#if __has_warning("-Wpsabi")
#pragma clang diagnostic ignored "-Wpsabi"
#endif
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
typedef unsigned char vec __attribute__((vector_size(VW)));

static inline vec splat(unsigned char c)
{
    vec v;
    memset(&v, c, sizeof v);
    return v;
}

/* On x86-64 the scan also gets an AVX2 build, chosen at load time;
 * everywhere else (arm64 included) the one portable build.  The choice
 * is an ELF ifunc: Mach-O has none (and macOS's libSystem no __cpu_model),
 * so an x86-64 Mac gets the portable build. */
#if defined(__x86_64__) && defined(__ELF__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(__SANITIZE_ADDRESS__)
#define VEC_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef VEC_CLONES
#define VEC_CLONES
#endif

typedef struct pfx {
    char *s;
    size_t len;
} pfx;

struct kg_mask {
    kg_mask_sink sink;
    void *ctx;

    /* Prefixes sorted by first byte, then longest first; bucket[c] is the
     * range of those starting with byte c. */
    pfx *pfx;
    size_t n_pfx;
    uint32_t bucket_lo[256], bucket_hi[256];
    size_t max_len; /* longest prefix */

    /* Bit (a << 8 | b) is set when some prefix starts with bytes a, b (or
     * is the one byte a). */
    uint64_t pair[65536 / 64];

    /* Byte classes by nibble: lut_lo[c & 15] & lut_hi[c >> 4] has a
     * C_TOK bit set when c is a token character, and a C_FIRST bit when
     * c may start a prefix (a superset when the first bytes need more
     * than three (high nibble x low nibbles) rectangles). */
    unsigned char lut_lo[16], lut_hi[16];
    /* The same for the second byte: a bit of sec_lo[c & 15] & sec_hi[c >> 4]
     * is set when c is some prefix's second byte or ESC (a superset too,
     * and every byte when a prefix is one byte long). */
    unsigned char sec_lo[16], sec_hi[16];
    bool avx2; /* find_avx2() scans */

    vec firstv[MAX_VEC_FIRST]; /* each first byte in every lane */
    vec escv; /* ESC in every lane */
    size_t n_first; /* > MAX_VEC_FIRST: scalar scan only */

    size_t window; /* raw bytes decide() looks at, escapes included */
    unsigned char *vis; /* decide()'s scratch: visible bytes ... */
    size_t *vis_at; /* ... and where each one is */

    size_t masked; /* secrets replaced so far (the events summary) */

    /* Stream state. */
    bool masking; /* inside a masked run: drop token bytes */
    bool prev_tok; /* the last visible byte consumed was a token byte */
    unsigned char esc; /* inside an escape sequence: E_* */
    char *hold; /* undecided candidate, carried to the next feed */
    size_t hold_len, hold_cap;
};

/* The escape sequence grammar the mask skips (ECMA-48, 7-bit). */
enum { E_GROUND, E_ESC, E_INT, E_CSI };

/* One byte c inside a sequence in state *st: 1 when c belongs to it and it
 * goes on, 0 when c ends it, -1 when it ended before c (c is visible, or
 * starts the next sequence). */
static inline int esc_step(unsigned char *st, unsigned char c)
{
    switch (*st) {
    case E_ESC:
        if (c == '[') {
            *st = E_CSI;
            return 1;
        }
        if (c >= 0x20 && c <= 0x2f) {
            *st = E_INT;
            return 1;
        }
        *st = E_GROUND;
        return (c >= 0x30 && c <= 0x7e) ? 0 : -1;
    case E_INT:
        if (c >= 0x20 && c <= 0x2f) return 1;
        *st = E_GROUND;
        return (c >= 0x30 && c <= 0x7e) ? 0 : -1;
    case E_CSI:
        if (c >= 0x20 && c <= 0x3f) return 1;
        *st = E_GROUND;
        return (c >= 0x40 && c <= 0x7e) ? 0 : -1;
    default: return -1;
    }
}

/* Byte classes: 1 token character, 2 first byte of some prefix. */
static const unsigned char tok_tab[256] = {
    ['-'] = 1, ['_'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1,
    ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1,
    ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
    ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1,
    ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['a'] = 1, ['b'] = 1,
    ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1,
    ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
    ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
};

static inline bool is_tok(unsigned char c) { return tok_tab[c] != 0; }

/* The nibble classes (struct kg_mask, lut_lo/lut_hi): five bits whose
 * (high nibble set) x (low nibble set) rectangles are exactly the token
 * characters, and three for the prefixes' first bytes. */
#define C_TOK 0x1f
#define C_FIRST 0xe0

/* ------------------------------------------------------------------------ */
/* Setup                                                                     */
/* ------------------------------------------------------------------------ */

static int pfx_cmp(const void *a, const void *b)
{
    const pfx *x = a, *y = b;
    unsigned char cx = (unsigned char)x->s[0], cy = (unsigned char)y->s[0];
    if (cx != cy) return cx < cy ? -1 : 1;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return strcmp(x->s, y->s);
}

static int add_prefix(kg_mask *m, const char *s)
{
    /* An empty prefix would mask every long word; config refuses it, and
     * here it simply means nothing. */
    if (!s || !*s) return 0;
    for (size_t i = 0; i < m->n_pfx; i++)
        if (strcmp(m->pfx[i].s, s) == 0) return 0;
    pfx *n = realloc(m->pfx, (m->n_pfx + 1) * sizeof *n);
    if (!n) return -1;
    m->pfx = n;
    char *copy = strdup(s);
    if (!copy) return -1;
    m->pfx[m->n_pfx++] = (pfx){copy, strlen(copy)};
    return 0;
}

/* Merges the two first-byte rectangles whose union covers the fewest
 * bytes that neither covered. */
static void merge_cheapest(uint16_t *gh, uint16_t *gl, size_t *ng)
{
    size_t best_a = 0, best_b = 1;
    int best = -1;
    for (size_t a = 0; a < *ng; a++)
        for (size_t b = a + 1; b < *ng; b++) {
            int cost = __builtin_popcount(gh[a] | gh[b]) * __builtin_popcount(gl[a] | gl[b]) -
                       __builtin_popcount(gh[a]) * __builtin_popcount(gl[a]) -
                       __builtin_popcount(gh[b]) * __builtin_popcount(gl[b]);
            if (best < 0 || cost < best) {
                best = cost;
                best_a = a;
                best_b = b;
            }
        }
    gh[best_a] |= gh[best_b];
    gl[best_a] |= gl[best_b];
    gh[best_b] = gh[*ng - 1];
    gl[best_b] = gl[*ng - 1];
    (*ng)--;
}

/* Covers the bytes c with in[c] set by at most max rectangles (high
 * nibble set gh[g] x low nibble set gl[g]): one per high nibble, exact,
 * merged when there are more than max.  Returns how many. */
static size_t cover(const bool in[256], uint16_t gh[16], uint16_t gl[16], size_t max)
{
    size_t ng = 0;
    for (unsigned h = 0; h < 16; h++) {
        uint16_t l = 0;
        for (unsigned x = 0; x < 16; x++)
            if (in[h << 4 | x]) l |= (uint16_t)(1u << x);
        if (l) {
            gh[ng] = (uint16_t)(1u << h);
            gl[ng++] = l;
        }
    }
    while (ng > max) merge_cheapest(gh, gl, &ng);
    return ng;
}

/* Sets bit (first << g) of lo[] and hi[] for each rectangle g. */
static void put_rects(unsigned char lo[16], unsigned char hi[16], const uint16_t *gh,
                      const uint16_t *gl, size_t ng, unsigned first)
{
    for (size_t g = 0; g < ng; g++)
        for (unsigned x = 0; x < 16; x++) {
            if (gh[g] >> x & 1) hi[x] |= (unsigned char)(first << g);
            if (gl[g] >> x & 1) lo[x] |= (unsigned char)(first << g);
        }
}

/* Fills the nibble class tables: the token rectangles and three for the
 * first bytes in lut_lo/lut_hi, eight for the second bytes in sec_lo and
 * sec_hi.  Where a cover is a superset, hit_ok() decides. */
static void build_lut(kg_mask *m)
{
    static const uint16_t tok_hi[] = {1u << 3, 1u << 4 | 1u << 6, 1u << 5 | 1u << 7, 1u << 5,
                                      1u << 2};
    /* 0-9, A-O a-o, P-Z p-z, _, - */
    static const uint16_t tok_lo[] = {0x03ff, 0xfffe, 0x07ff, 1u << 15, 1u << 13};
    put_rects(m->lut_lo, m->lut_hi, tok_hi, tok_lo, 5, 0x01);
    bool first[256] = {false}, second[256] = {false};
    bool any_second = false;
    second[ESC] = true;
    for (size_t i = 0; i < m->n_pfx; i++) {
        first[(unsigned char)m->pfx[i].s[0]] = true;
        if (m->pfx[i].len > 1)
            second[(unsigned char)m->pfx[i].s[1]] = true;
        else
            any_second = true;
    }
    uint16_t gh[16], gl[16];
    size_t ng = cover(first, gh, gl, 3);
    put_rects(m->lut_lo, m->lut_hi, gh, gl, ng, 0x20);
    if (any_second) {
        memset(m->sec_lo, 0xff, 16);
        memset(m->sec_hi, 0xff, 16);
        return;
    }
    ng = cover(second, gh, gl, 8);
    put_rects(m->sec_lo, m->sec_hi, gh, gl, ng, 0x01);
}

kg_mask *kg_mask_new(const kg_strv *extra, kg_mask_sink sink, void *ctx)
{
    /* Aligned for the vectors inside. */
    size_t size = (sizeof(kg_mask) + 63) / 64 * 64;
    kg_mask *m = aligned_alloc(64, size);
    if (!m) return NULL;
    memset(m, 0, size);
    m->sink = sink;
    m->ctx = ctx;
    for (size_t i = 0; kg_mask_builtin_prefixes[i]; i++)
        if (add_prefix(m, kg_mask_builtin_prefixes[i]) < 0) goto fail;
    for (size_t i = 0; i < kg_strv_len(extra); i++)
        if (add_prefix(m, kg_strv_get(extra, i)) < 0) goto fail;

    m->escv = splat(ESC);
    qsort(m->pfx, m->n_pfx, sizeof *m->pfx, pfx_cmp);
    for (size_t i = 0; i < m->n_pfx; i++) {
        unsigned char c = (unsigned char)m->pfx[i].s[0];
        if (m->bucket_hi[c] == 0) {
            m->bucket_lo[c] = (uint32_t)i;
            if (m->n_first < MAX_VEC_FIRST) m->firstv[m->n_first] = splat(c);
            m->n_first++;
        }
        m->bucket_hi[c] = (uint32_t)i + 1;
        if (m->pfx[i].len > m->max_len) m->max_len = m->pfx[i].len;
        /* A prefix of two or more bytes admits one pair; a one-byte prefix
         * admits every second byte.  (Setting the one bit directly rather
         * than testing all 256 keeps kg_mask_new, run twice per launch,
         * at a few microseconds.) */
        unsigned b0 = m->pfx[i].len > 1 ? (unsigned char)m->pfx[i].s[1] : 0;
        unsigned b1 = m->pfx[i].len > 1 ? b0 + 1 : 256;
        for (unsigned b = b0; b < b1; b++) {
            unsigned idx = (unsigned)c << 8 | b;
            m->pair[idx >> 6] |= (uint64_t)1 << (idx & 63);
        }
    }
    build_lut(m);
#ifdef MASK_AVX2
    m->avx2 = __builtin_cpu_supports("avx2");
#endif
    /* An undecided candidate is shorter than max_len + MIN_TOKEN; the hold
     * takes twice that so a feed can always make progress through it. */
    m->window = m->max_len + MIN_TOKEN + ESC_ROOM;
    m->hold_cap = 2 * m->window;
    m->hold = malloc(m->hold_cap);
    m->vis = malloc(m->max_len + MIN_TOKEN);
    m->vis_at = malloc((m->max_len + MIN_TOKEN) * sizeof *m->vis_at);
    if (!m->hold || !m->vis || !m->vis_at) goto fail;
    return m;
fail:
    kg_mask_free(m);
    return NULL;
}

void kg_mask_free(kg_mask *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->n_pfx; i++) free(m->pfx[i].s);
    free(m->pfx);
    free(m->hold);
    free(m->vis);
    free(m->vis_at);
    free(m);
}

/* ------------------------------------------------------------------------ */
/* Deciding one candidate                                                    */
/* ------------------------------------------------------------------------ */

enum { NO_MATCH = -1, PENDING = 0, MATCH = 1 };

/* s[0..n) starts at a word boundary with a byte that begins some prefix,
 * and holds visible bytes only.  Returns MATCH with *plen set, NO_MATCH, or
 * PENDING when more bytes could still change the answer (never when eof).
 * Prefixes are tried longest first, and a longer one still undecided makes
 * the answer wait, so that sk-ant-... is never written as sk-*** just
 * because its first feed ended early. */
static inline __attribute__((always_inline)) int
decide_plain(const kg_mask *m, const unsigned char *s, size_t n, bool eof, size_t *plen)
{
    unsigned char c = s[0];
    for (uint32_t k = m->bucket_lo[c]; k < m->bucket_hi[c]; k++) {
        const pfx *p = &m->pfx[k];
        if (n < p->len) {
            if (!eof && memcmp(s, p->s, n) == 0) return PENDING;
            continue;
        }
        if (memcmp(s, p->s, p->len) != 0) continue;
        size_t t = 0, end = n - p->len < MIN_TOKEN ? n - p->len : MIN_TOKEN;
        while (t < end && is_tok(s[p->len + t])) t++;
        if (t >= MIN_TOKEN) {
            *plen = p->len;
            return MATCH;
        }
        if (t == end && !eof) return PENDING; /* ran out of bytes */
    }
    return NO_MATCH;
}

/* decide() for raw bytes with an escape sequence where the rule looks:
 * judged on the visible bytes; *plen is the raw length up to the prefix's
 * last byte. */
static __attribute__((noinline)) int decide_esc(kg_mask *m, const unsigned char *s, size_t n,
                                                bool eof, size_t *plen)
{
    size_t need = m->max_len + MIN_TOKEN;
    /* The visible bytes, within the window: a sequence longer than the
     * room left makes the candidate fail rather than wait for ever. */
    size_t lim = n < m->window ? n : m->window, nv = 0, r = 0;
    unsigned char st = E_GROUND;
    for (; r < lim && nv < need; r++) {
        unsigned char c = s[r];
        if (st != E_GROUND && esc_step(&st, c) >= 0) continue;
        if (c == ESC) {
            st = E_ESC;
            continue;
        }
        m->vis[nv] = c;
        m->vis_at[nv++] = r;
    }
    bool more = !eof && n < m->window;
    size_t vlen = 0;
    int res = decide_plain(m, m->vis, nv, !more, &vlen);
    if (res == MATCH) *plen = m->vis_at[vlen - 1] + 1;
    return res;
}

/* The same for raw bytes, escape sequences included; *plen is then the raw
 * length up to the prefix's last byte.  Without an escape where the rule
 * looks, the bytes are decided as they are. */
static inline __attribute__((always_inline)) int decide(kg_mask *m, const unsigned char *s,
                                                        size_t n, bool eof, size_t *plen)
{
    /* Without an escape where the rule looks, the raw bytes are the
     * visible ones.  (A raw match is not enough when there is one: a
     * longer prefix may need the bytes after the escape.) */
    size_t need = m->max_len + MIN_TOKEN;
    if (!memchr(s, ESC, n < need ? n : need)) return decide_plain(m, s, n, eof, plen);
    return decide_esc(m, s, n, eof, plen);
}

/* ------------------------------------------------------------------------ */
/* Scanning                                                                  */
/* ------------------------------------------------------------------------ */

/* All-ones lanes where v is a token byte. */
static inline vec vec_tok(vec v)
{
    vec lower = (v | splat(0x20)) - splat('a');
    vec digit = v - splat('0');
    return (vec)((lower < splat(26)) | (digit < splat(10)) | (v == splat('_')) | (v == splat('-')));
}

static inline bool vec_any(vec v)
{
    uint64_t acc = 0;
    for (size_t k = 0; k < VW; k += 8) {
        uint64_t w;
        memcpy(&w, (const char *)&v + k, 8);
        acc |= w;
    }
    return acc != 0;
}

/* Index of the first all-ones lane of a vector known to have one. */
static inline size_t vec_first(vec v)
{
    for (size_t k = 0;; k += 8) {
        uint64_t w;
        memcpy(&w, (const char *)&v + k, 8);
        if (w) return k + (size_t)__builtin_ctzll(w) / 8;
    }
}

/* Whether the two bytes at p[i] can start some prefix.  A cheap filter in
 * front of decide(): most words that begin with 's' do not go on with 'k'. */
static inline bool pair_ok(const kg_mask *m, const unsigned char *p, size_t i, size_t n)
{
    /* An escape next: the second byte is after it (decide() will see). */
    if (i + 1 >= n || p[i + 1] == ESC) return true;
    unsigned idx = (unsigned)p[i] << 8 | p[i + 1];
    return (m->pair[idx >> 6] >> (idx & 63)) & 1;
}

/* False when decide() at p[j] would surely say NO_MATCH: every prefix
 * starting with p[j] differs from the bytes there before any ESC and
 * before the end of the bytes at hand.  (Also false when none starts with
 * p[j].)  Words that merely begin like a prefix ("skeleton", "github:")
 * are then passed over inside the vector pass, which would otherwise stop
 * at each, and scan() would come back to it with a fresh block. */
static inline bool can_match(const kg_mask *m, const unsigned char *p, size_t j, size_t n)
{
    unsigned char c = p[j];
    for (uint32_t k = m->bucket_lo[c]; k < m->bucket_hi[c]; k++) {
        const pfx *x = &m->pfx[k];
        size_t q = 1;
        while (q < x->len && j + q < n && p[j + q] != ESC && p[j + q] == (unsigned char)x->s[q])
            q++;
        if (q == x->len || j + q == n || p[j + q] == ESC) return true;
    }
    return false;
}

/* Whether p[j], flagged by a vector pass, is where find_candidate() stops:
 * an ESC, or a prefix's first byte (the flag may be a superset) with the
 * bytes after it not ruling a match out. */
static inline bool hit_ok(const kg_mask *m, const unsigned char *p, size_t j, size_t n)
{
    return p[j] == ESC || (pair_ok(m, p, j, n) && can_match(m, p, j, n));
}

/* The portable vector pass of find_candidate() from p[*at], which has a
 * visible byte before it: a hit's index, or n with *at where it stopped.
 * Compares with each first byte, so only for up to MAX_VEC_FIRST. */
static inline __attribute__((always_inline)) size_t
find_vec(const kg_mask *m, const unsigned char *p, size_t *at, size_t n)
{
    size_t i = *at;
    for (; i + VW <= n; i += VW) {
        vec v, pv;
        memcpy(&v, p + i, VW);
        memcpy(&pv, p + i - 1, VW);
        vec hit = (vec)(v == m->firstv[0]);
        for (size_t k = 1; k < m->n_first; k++) hit |= (vec)(v == m->firstv[k]);
        hit &= ~vec_tok(pv);
        hit |= (vec)(v == m->escv);
        if (!vec_any(hit)) continue;
        for (size_t half = 0; half < VW; half += 8) {
            uint64_t w;
            memcpy(&w, (const char *)&hit + half, 8);
            while (w) {
                size_t b = (size_t)__builtin_ctzll(w) / 8;
                if (hit_ok(m, p, i + half + b, n)) return i + half + b;
                w &= ~((uint64_t)0xff << (b * 8));
            }
        }
    }
    *at = i;
    return n;
}

#ifdef MASK_AVX2
/* find_vec() with the nibble classes, 32 bytes a step: two table lookups
 * (vpshufb) classify every byte at once, and the bitmask of non-token
 * bytes, shifted by one, says which bytes follow a non-token byte, so the
 * byte before each is never loaded or classified again. */
__attribute__((target("avx2"), noinline)) static size_t
find_avx2(const kg_mask *m, const unsigned char *p, size_t *at, size_t n)
{
    __m128i lo16 = _mm_loadu_si128((const __m128i *)m->lut_lo);
    __m128i hi16 = _mm_loadu_si128((const __m128i *)m->lut_hi);
    const __m256i lo = _mm256_broadcastsi128_si256(lo16), hi = _mm256_broadcastsi128_si256(hi16);
    const __m256i nib = _mm256_set1_epi8(0x0f), esc = _mm256_set1_epi8(ESC);
    const __m256i tokm = _mm256_set1_epi8(C_TOK), firstm = _mm256_set1_epi8((char)C_FIRST);
    const __m256i zero = _mm256_setzero_si256();
    const __m256i slo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)m->sec_lo));
    const __m256i shi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)m->sec_hi));
    size_t i = *at;
    /* Bit 0: the byte before p[i] is not a token byte. */
    uint32_t carry = !is_tok(p[i - 1]);
    for (; i + 32 <= n; i += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
        __m256i vl = _mm256_and_si256(v, nib), vh = _mm256_and_si256(_mm256_srli_epi16(v, 4), nib);
        __m256i cls = _mm256_and_si256(_mm256_shuffle_epi8(lo, vl), _mm256_shuffle_epi8(hi, vh));
        __m256i sec = _mm256_and_si256(_mm256_shuffle_epi8(slo, vl), _mm256_shuffle_epi8(shi, vh));
        /* Bit k: p[i + k + 1] may be a second byte (the last lane's
         * successor is in the next block: left to hit_ok()). */
        uint32_t next_ok =
            ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(sec, zero)) >> 1 | 1u << 31;
        uint32_t nontok =
            (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(cls, tokm), zero));
        uint32_t nonfirst =
            (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(cls, firstm), zero));
        uint32_t escs = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, esc));
        uint32_t hit = (~nonfirst & (nontok << 1 | carry) & next_ok) | escs;
        carry = nontok >> 31;
        for (; hit; hit &= hit - 1) {
            size_t j = i + (size_t)__builtin_ctz(hit);
            if (hit_ok(m, p, j, n)) return j;
        }
    }
    *at = i;
    return n;
}
#endif

/* Index of the first candidate (a prefix's first byte after a non-token
 * byte, and a second byte that fits) or ESC in p[from..n), or n.  Looking
 * for ESC in the same vector pass costs one compare per 32 bytes, where a
 * separate memchr() would read everything twice.  p[from-1] must be the
 * visible byte before p[from] unless fresh: then the stream state says what
 * came before. */
static inline __attribute__((always_inline)) size_t
find_candidate(const kg_mask *m, const unsigned char *p, size_t from, size_t n, bool fresh)
{
    size_t i = from;
    if (i < n && (p[i] == ESC || fresh)) {
        /* What came before p[from] is in the stream state (the start of a
         * feed, or an escape sequence just before). */
        if (p[i] == ESC) return i;
        if (!m->prev_tok && m->bucket_hi[p[i]] && pair_ok(m, p, i, n)) return i;
        i++;
    }
    size_t j = n;
#ifdef MASK_AVX2
    if (m->avx2)
        j = find_avx2(m, p, &i, n);
    else
#endif
        if (m->n_first <= MAX_VEC_FIRST)
        j = find_vec(m, p, &i, n);
    if (j != n) return j;
    for (; i < n; i++)
        if ((m->bucket_hi[p[i]] && !is_tok(p[i - 1]) && pair_ok(m, p, i, n)) || p[i] == ESC)
            return i;
    return n;
}

/* Index of the first non-token byte in p[i..n), or n. */
static inline __attribute__((always_inline)) size_t skip_token(const unsigned char *p, size_t i,
                                                               size_t n)
{
    for (; i + VW <= n; i += VW) {
        vec v;
        memcpy(&v, p + i, VW);
        vec non = ~vec_tok(v);
        if (vec_any(non)) return i + vec_first(non);
    }
    while (i < n && is_tok(p[i])) i++;
    return i;
}

static int emit(kg_mask *m, const unsigned char *p, size_t len)
{
    if (len == 0) return 0;
    return m->sink(m->ctx, (const char *)p, len) < 0 ? -1 : 0;
}

/* Masks and writes p[0..n).  Returns how many bytes were consumed (the rest,
 * an undecided candidate, is for the caller to hold), or -1 when the sink
 * failed.  With eof every byte is consumed.
 *
 * span is where the bytes not yet written start.  fresh: the visible byte
 * before p[i] is described by m->prev_tok, not by p[i-1]. */
VEC_CLONES
static ssize_t scan(kg_mask *m, const unsigned char *p, size_t n, bool eof)
{
    size_t i = 0, span = 0;
    bool fresh = true;
    while (i < n) {
        if (m->esc != E_GROUND) {
            size_t k = i;
            while (k < n) {
                int r = esc_step(&m->esc, p[k]);
                if (r < 0) break;
                k++;
                if (r == 0) break;
            }
            /* Written even inside a masked run: only token bytes go. */
            if (m->masking) {
                if (emit(m, p + i, k - i) < 0) return -1;
                span = k;
            }
            i = k;
            fresh = true;
            continue;
        }
        if (p[i] == ESC) {
            /* The boundary after the sequence is the one before it. */
            if (!fresh && !m->masking) m->prev_tok = is_tok(p[i - 1]);
            m->esc = E_ESC;
            if (m->masking) {
                if (emit(m, p + i, 1) < 0) return -1;
                span = i + 1;
            }
            i++;
            continue;
        }
        if (m->masking) {
            i = skip_token(p, i, n);
            if (i == n || p[i] == ESC) continue;
            m->masking = false;
            m->prev_tok = true;
            fresh = true;
            span = i;
        }
        size_t j = find_candidate(m, p, i, n, fresh);
        if (j != i) fresh = false;
        if (j == n || p[j] == ESC) {
            i = j;
            continue;
        }
        fresh = false;
        size_t plen = 0;
        int r = decide(m, p + j, n - j, eof, &plen);
        if (r == NO_MATCH) {
            i = j + 1;
            continue;
        }
        if (emit(m, p + span, j - span) < 0) return -1;
        if (r == PENDING) {
            /* The held bytes start at a boundary, outside any sequence. */
            m->prev_tok = false;
            return (ssize_t)j;
        }
        if (emit(m, p + j, plen) < 0 || emit(m, (const unsigned char *)"***", 3) < 0) return -1;
        m->masked++;
        m->masking = true;
        i = span = j + plen;
    }
    if (!m->masking && emit(m, p + span, n - span) < 0) return -1;
    if (n > 0 && !fresh && m->esc == E_GROUND) m->prev_tok = is_tok(p[n - 1]);
    return (ssize_t)n;
}

/* ------------------------------------------------------------------------ */
/* Feeding                                                                   */
/* ------------------------------------------------------------------------ */

static int hold_rest(kg_mask *m, const unsigned char *p, size_t n)
{
    /* scan() only leaves an undecided candidate, which is shorter than
     * the window, so this always fits. */
    if (n > m->hold_cap) return -1;
    memmove(m->hold, p, n);
    m->hold_len = n;
    return 0;
}

int kg_mask_feed(kg_mask *m, const char *buf, size_t len)
{
    const unsigned char *p = (const unsigned char *)buf;
    if (len == 0) return 0;
    if (m->hold_len > 0) {
        /* Decide the held candidate with as much of buf as the hold takes;
         * once scanning passes the old held bytes, continue in buf itself. */
        size_t old = m->hold_len;
        size_t take = m->hold_cap - old < len ? m->hold_cap - old : len;
        memcpy(m->hold + old, p, take);
        m->hold_len = old + take;
        ssize_t c = scan(m, (unsigned char *)m->hold, m->hold_len, false);
        if (c < 0) return -1;
        if ((size_t)c < old || take == len) {
            /* Every byte of buf is in the hold already. */
            return hold_rest(m, (unsigned char *)m->hold + c, m->hold_len - (size_t)c);
        }
        m->hold_len = 0;
        p += (size_t)c - old;
        len -= (size_t)c - old;
    }
    ssize_t c = scan(m, p, len, false);
    if (c < 0) return -1;
    return hold_rest(m, p + c, len - (size_t)c);
}

int kg_mask_flush(kg_mask *m)
{
    int r = 0;
    if (m->hold_len > 0 && scan(m, (unsigned char *)m->hold, m->hold_len, true) < 0) r = -1;
    /* A fresh stream may follow. */
    m->hold_len = 0;
    m->masking = false;
    m->prev_tok = false;
    m->esc = E_GROUND;
    return r;
}

void kg_mask_portable(kg_mask *m) { m->avx2 = false; }

size_t kg_mask_held(const kg_mask *m) { return m ? m->hold_len : 0; }

size_t kg_mask_count(const kg_mask *m) { return m ? m->masked : 0; }
