/* fuzz-json: the audit line, read back.
 *
 * The spec: strings in argv are the exact bytes, and bytes that are not
 * valid UTF-8 are recorded so that a reader can tell them from the
 * characters they resemble.  So a strict JSON reader (RFC 8259, plus one
 * convention for raw bytes) must get back exactly the argv and cwd that
 * went in, and the line must be one line of valid JSON.
 *
 * The convention: a byte 0x80..0xFF that is not part of valid UTF-8 is
 * written as the lone low surrogate \udcXX (XX the byte), as Python's
 * "surrogateescape" reads and writes them.  A lone surrogate is no
 * character, so it cannot be confused with one; a character is written as
 * itself or as \uXXXX of its code point (a surrogate pair above U+FFFF).
 *
 * Input: NUL-separated strings: cwd, then the arguments. */
#include <stdbool.h>
#include <string.h>
#include "oom.h" /* utstring, with the core's out-of-memory hook */

#include "audit.h"
#include "fuzz-util.h"

typedef struct rd {
    const unsigned char *p, *end;
} rd;

/* Length of a valid UTF-8 sequence at p (bounded by end), 0 if none.
 * Written apart from json.c on purpose. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else
        return 0;
    if ((size_t)(end - p) < n) return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return n;
}

static void put_utf8(UT_string *o, unsigned cp)
{
    unsigned char b[4];
    size_t n;
    if (cp < 0x80)
        b[0] = (unsigned char)cp, n = 1;
    else if (cp < 0x800)
        b[0] = (unsigned char)(0xC0 | cp >> 6), b[1] = (unsigned char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        b[0] = (unsigned char)(0xE0 | cp >> 12), b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)),
        b[2] = (unsigned char)(0x80 | (cp & 0x3F)), n = 3;
    else
        b[0] = (unsigned char)(0xF0 | cp >> 18), b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F)),
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)),
        b[3] = (unsigned char)(0x80 | (cp & 0x3F)), n = 4;
    utstring_bincpy(o, b, n);
}

static int hex4(rd *r, unsigned *v)
{
    *v = 0;
    if (r->end - r->p < 4) return -1;
    for (int i = 0; i < 4; i++) {
        unsigned c = *r->p++, d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        *v = *v << 4 | d;
    }
    return 0;
}

/* A string after its opening quote, decoded into o (NULL: skipped). */
static int rd_string(rd *r, UT_string *o)
{
    UT_string *tmp = NULL;
    if (!o) {
        utstring_new(tmp);
        o = tmp;
    }
    int rc = -1;
    while (r->p < r->end) {
        unsigned c = *r->p;
        if (c == '"') {
            r->p++;
            rc = 0;
            break;
        }
        FZ_CHECK(c >= 0x20, "raw control byte 0x%02x in a JSON string", c);
        if (c != '\\') {
            size_t n = utf8_len(r->p, r->end);
            FZ_CHECK(n > 0, "raw byte 0x%02x that is not UTF-8 in a JSON string", c);
            utstring_bincpy(o, r->p, n);
            r->p += n;
            continue;
        }
        r->p++;
        FZ_CHECK(r->p < r->end, "backslash at the end");
        c = *r->p++;
        const char *simple = "\"\\/bfnrt", *as = "\"\\/\b\f\n\r\t";
        const char *k = strchr(simple, (int)c);
        if (k && c) {
            utstring_bincpy(o, as + (k - simple), 1);
            continue;
        }
        FZ_CHECK(c == 'u', "unknown escape \\%c", c);
        unsigned u;
        FZ_CHECK(hex4(r, &u) == 0, "bad \\u escape");
        if (u >= 0xD800 && u <= 0xDBFF) {
            unsigned lo;
            FZ_CHECK(r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u',
                     "high surrogate %04x alone", u);
            r->p += 2;
            FZ_CHECK(hex4(r, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF,
                     "high surrogate %04x without its low half", u);
            put_utf8(o, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
        } else if (u >= 0xDC00 && u <= 0xDFFF) {
            FZ_CHECK(u >= 0xDC80 && u <= 0xDCFF, "lone surrogate %04x is no byte", u);
            unsigned char b = (unsigned char)(u & 0xFF);
            utstring_bincpy(o, &b, 1);
        } else {
            put_utf8(o, u);
        }
    }
    if (tmp) utstring_free(tmp);
    FZ_CHECK(rc == 0, "unterminated string");
    return rc;
}

static void ws(rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t')) r->p++;
}

static bool lit(rd *r, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, s, n) != 0) return false;
    r->p += n;
    return true;
}

typedef struct found {
    UT_string *cwd;
    UT_string *argv[512];
    size_t argc;
    bool has_argv, has_cwd;
} found;

/* One value; depth-bounded like every reader should be. */
static void rd_value(rd *r, int depth, found *f, const char *key)
{
    FZ_CHECK(depth < 8, "nesting deeper than an audit line has");
    ws(r);
    FZ_CHECK(r->p < r->end, "value expected");
    unsigned c = *r->p;
    if (c == '"') {
        r->p++;
        UT_string *o = NULL;
        if (depth == 1 && key && !strcmp(key, "cwd")) {
            utstring_new(f->cwd);
            f->has_cwd = true;
            o = f->cwd;
        }
        rd_string(r, o);
    } else if (c == '[') {
        r->p++;
        bool is_argv = depth == 1 && key && !strcmp(key, "argv");
        if (is_argv) f->has_argv = true;
        ws(r);
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            return;
        }
        for (;;) {
            ws(r);
            if (is_argv) {
                FZ_CHECK(r->p < r->end && *r->p == '"', "argv holds a non-string");
                r->p++;
                FZ_CHECK(f->argc < 512, "too many arguments");
                utstring_new(f->argv[f->argc]);
                rd_string(r, f->argv[f->argc++]);
            } else {
                rd_value(r, depth + 1, f, NULL);
            }
            ws(r);
            FZ_CHECK(r->p < r->end, "unterminated array");
            if (*r->p == ']') {
                r->p++;
                return;
            }
            FZ_CHECK(*r->p == ',', "',' expected in an array");
            r->p++;
        }
    } else if (c == '{') {
        r->p++;
        char keys[32][32];
        size_t nkeys = 0;
        ws(r);
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            return;
        }
        for (;;) {
            ws(r);
            FZ_CHECK(r->p < r->end && *r->p == '"', "key expected");
            r->p++;
            UT_string *k;
            utstring_new(k);
            rd_string(r, k);
            FZ_CHECK(nkeys < 32 && utstring_len(k) < 32, "odd key");
            for (size_t i = 0; i < nkeys; i++)
                FZ_CHECK(strcmp(keys[i], utstring_body(k)) != 0, "duplicate key %s", keys[i]);
            strcpy(keys[nkeys++], utstring_body(k));
            ws(r);
            FZ_CHECK(r->p < r->end && *r->p == ':', "':' expected");
            r->p++;
            rd_value(r, depth + 1, f, utstring_body(k));
            utstring_free(k);
            ws(r);
            FZ_CHECK(r->p < r->end, "unterminated object");
            if (*r->p == '}') {
                r->p++;
                return;
            }
            FZ_CHECK(*r->p == ',', "',' expected in an object");
            r->p++;
        }
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        if (*r->p == '-') r->p++;
        FZ_CHECK(r->p < r->end && *r->p >= '0' && *r->p <= '9', "bad number");
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') r->p++;
    } else {
        FZ_CHECK(lit(r, "true") || lit(r, "false") || lit(r, "null"), "bad value at %c", c);
    }
}

static void same(UT_string *got, const char *want, const char *what)
{
    size_t n = strlen(want);
    FZ_CHECK(utstring_len(got) == n && memcmp(utstring_body(got), want, n) == 0,
             "%s read back as %zu bytes, %zu went in", what, utstring_len(got), n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384) return 0;
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    const char *cwd = buf;
    const char *argv[512];
    size_t argc = 0;
    for (char *p = buf + strlen(buf); p < buf + size && argc < 512;) {
        p++;
        argv[argc++] = p;
        p += strlen(p);
    }
    kg_audit_event ev = {
        .kind = "launch", .argv = argv, .argc = argc, .cwd = cwd, .reason = argc ? argv[0] : NULL};
    UT_string *line;
    utstring_new(line);
    kg_audit_format(&ev, line);
    const unsigned char *s = (const unsigned char *)utstring_body(line);
    size_t n = utstring_len(line);
    FZ_CHECK(n >= 2 && s[n - 1] == '\n' && memchr(s, '\n', n - 1) == NULL, "not exactly one line");
    rd r = {s, s + n - 1};
    found f = {0};
    FZ_CHECK(*r.p == '{', "not an object");
    rd_value(&r, 0, &f, NULL);
    ws(&r);
    FZ_CHECK(r.p == r.end, "bytes after the object");
    FZ_CHECK(f.has_argv && f.has_cwd, "argv or cwd missing");
    same(f.cwd, cwd, "cwd");
    FZ_CHECK(f.argc == argc, "%zu arguments read back, %zu went in", f.argc, argc);
    for (size_t i = 0; i < argc; i++) same(f.argv[i], argv[i], "an argument");
    utstring_free(f.cwd);
    for (size_t i = 0; i < f.argc; i++) utstring_free(f.argv[i]);
    utstring_free(line);
    free(buf);
    return 0;
}
