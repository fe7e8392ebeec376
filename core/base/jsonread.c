#include "jsonread.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* ---- the tree ---- */

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) kg_oom();
    return p;
}

static void *xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q) kg_oom();
    return q;
}

static char *xmemdup(const char *s, size_t len)
{
    char *d = malloc(len + 1);
    if (!d) kg_oom();
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

kg_jv *kg_jv_new(kg_jv_type type)
{
    kg_jv *v = xcalloc(1, sizeof *v);
    v->type = type;
    return v;
}

kg_jv *kg_jv_new_str(const char *s)
{
    kg_jv *v = kg_jv_new(KG_JV_STRING);
    v->len = strlen(s);
    v->str = xmemdup(s, v->len);
    return v;
}

kg_jv *kg_jv_new_bool(bool b)
{
    kg_jv *v = kg_jv_new(KG_JV_BOOL);
    v->b = b;
    return v;
}

kg_jv *kg_jv_new_num(double d)
{
    kg_jv *v = kg_jv_new(KG_JV_NUMBER);
    char buf[64];
    if (!isfinite(d)) d = 0; /* JSON has no infinities */
    if (d == (double)(long long)d && fabs(d) < 1e15)
        snprintf(buf, sizeof buf, "%lld", (long long)d);
    else
        snprintf(buf, sizeof buf, "%.17g", d);
    v->num = d;
    v->len = strlen(buf);
    v->str = xmemdup(buf, v->len);
    return v;
}

void kg_jv_free(kg_jv *v)
{
    if (!v) return;
    for (size_t i = 0; v->type == KG_JV_ARRAY && i < v->n; i++) kg_jv_free(v->items[i]);
    for (size_t i = 0; v->type == KG_JV_OBJECT && i < v->n; i++) {
        free(v->members[i].key);
        kg_jv_free(v->members[i].val);
    }
    free(v->items);
    free(v->members);
    free(v->str);
    free(v);
}

kg_jv *kg_jv_copy(const kg_jv *v)
{
    kg_jv *c = kg_jv_new(v->type);
    c->b = v->b;
    c->num = v->num;
    c->len = v->len;
    if (v->str) c->str = xmemdup(v->str, v->len);
    if (v->type == KG_JV_ARRAY)
        for (size_t i = 0; i < v->n; i++) kg_jv_push(c, kg_jv_copy(v->items[i]));
    if (v->type == KG_JV_OBJECT)
        for (size_t i = 0; i < v->n; i++)
            kg_jv_set(c, v->members[i].key, kg_jv_copy(v->members[i].val));
    return c;
}

void kg_jv_push(kg_jv *arr, kg_jv *val)
{
    arr->items = xrealloc(arr->items, (arr->n + 1) * sizeof *arr->items);
    arr->items[arr->n++] = val;
}

void kg_jv_remove(kg_jv *arr, size_t i)
{
    if (arr->type != KG_JV_ARRAY || i >= arr->n) return;
    kg_jv_free(arr->items[i]);
    memmove(arr->items + i, arr->items + i + 1, (arr->n - i - 1) * sizeof *arr->items);
    arr->n--;
}

static kg_jv_member *member(const kg_jv *obj, const char *key)
{
    if (!obj || obj->type != KG_JV_OBJECT || !key) return NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < obj->n; i++)
        if (obj->members[i].keylen == kl && memcmp(obj->members[i].key, key, kl) == 0)
            return &obj->members[i];
    return NULL;
}

kg_jv *kg_jv_get(const kg_jv *obj, const char *key)
{
    kg_jv_member *m = member(obj, key);
    return m ? m->val : NULL;
}

const char *kg_jv_cstr(const kg_jv *v)
{
    if (!v || v->type != KG_JV_STRING) return NULL;
    if (memchr(v->str, '\0', v->len)) return NULL;
    return v->str;
}

const char *kg_jv_get_cstr(const kg_jv *obj, const char *key)
{
    return kg_jv_cstr(kg_jv_get(obj, key));
}

static void append_member(kg_jv *obj, char *key, size_t keylen, kg_jv *val)
{
    obj->members = xrealloc(obj->members, (obj->n + 1) * sizeof *obj->members);
    obj->members[obj->n++] = (kg_jv_member){key, keylen, val};
}

void kg_jv_set(kg_jv *obj, const char *key, kg_jv *val)
{
    kg_jv_member *m = member(obj, key);
    if (m) {
        kg_jv_free(m->val);
        m->val = val;
        return;
    }
    append_member(obj, xmemdup(key, strlen(key)), strlen(key), val);
}

bool kg_jv_del(kg_jv *obj, const char *key)
{
    kg_jv_member *m = member(obj, key);
    if (!m) return false;
    size_t i = (size_t)(m - obj->members);
    free(m->key);
    kg_jv_free(m->val);
    memmove(obj->members + i, obj->members + i + 1, (obj->n - i - 1) * sizeof *obj->members);
    obj->n--;
    return true;
}

bool kg_jv_equal(const kg_jv *a, const kg_jv *b)
{
    if (!a || !b || a->type != b->type) return false;
    switch (a->type) {
    case KG_JV_NULL: return true;
    case KG_JV_BOOL: return a->b == b->b;
    case KG_JV_NUMBER: return a->num == b->num;
    case KG_JV_STRING: return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    case KG_JV_ARRAY:
        if (a->n != b->n) return false;
        for (size_t i = 0; i < a->n; i++)
            if (!kg_jv_equal(a->items[i], b->items[i])) return false;
        return true;
    case KG_JV_OBJECT:
        if (a->n != b->n) return false;
        for (size_t i = 0; i < a->n; i++)
            if (!kg_jv_equal(a->members[i].val, kg_jv_get(b, a->members[i].key))) return false;
        return true;
    }
    return false;
}

/* ---- the reader ---- */

typedef struct rd {
    const unsigned char *start, *p, *end;
    kg_error *err;
    int depth;
} rd;

static int fail(rd *r, const char *what)
{
    return kg_err_set(r->err, EINVAL, "JSON at byte %zu: %s", (size_t)(r->p - r->start), what);
}

static void skip_ws(rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static bool take(rd *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0) return false;
    r->p += n;
    return true;
}

static int hex4(rd *r, uint32_t *v)
{
    *v = 0;
    if (r->end - r->p < 4) return fail(r, "a \\u escape cut short");
    for (int i = 0; i < 4; i++) {
        unsigned c = *r->p, d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return fail(r, "a \\u escape that is not four hex digits");
        r->p++;
        *v = *v << 4 | d;
    }
    return 0;
}

static void put_utf8(UT_string *o, uint32_t cp)
{
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xC0 | cp >> 6);
        b[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | cp >> 12);
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | cp >> 18);
        b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    utstring_bincpy(o, b, n);
}

/* \uXXXX after the backslash and u: a character, or a high surrogate and
 * the low one that must follow it.  A lone surrogate is no character. */
static int read_u_escape(rd *r, UT_string *o)
{
    uint32_t cp, lo;
    if (hex4(r, &cp) < 0) return -1;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return fail(r, "a lone low surrogate escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (!take(r, "\\u")) return fail(r, "a high surrogate escape without its low half");
        if (hex4(r, &lo) < 0) return -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail(r, "a high surrogate escape without its low half");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    put_utf8(o, cp);
    return 0;
}

static int read_escape(rd *r, UT_string *o)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (r->p >= r->end) return fail(r, "a backslash at the end");
    unsigned char c = *r->p++;
    if (c == 'u') return read_u_escape(r, o);
    const char *k = c ? strchr(from, c) : NULL;
    if (!k) {
        r->p--;
        return fail(r, "an unknown escape");
    }
    utstring_bincpy(o, &to[k - from], 1);
    return 0;
}

/* Length of the valid UTF-8 sequence at p, 0 if none.  kg_utf8_decode
 * reads a NUL-terminated string; the input here is not, so a sequence is
 * copied out first (at most 4 bytes). */
static size_t utf8_at(const rd *r)
{
    unsigned char b[5] = {0};
    size_t avail = (size_t)(r->end - r->p);
    memcpy(b, r->p, avail < 4 ? avail : 4);
    uint32_t cp;
    return kg_utf8_decode(b, &cp);
}

/* A string after its opening quote, decoded into a new buffer. */
static int read_string(rd *r, char **out, size_t *outlen)
{
    UT_string *o;
    utstring_new(o);
    for (;;) {
        if (r->p >= r->end) {
            utstring_free(o);
            return fail(r, "a string without its closing quote");
        }
        unsigned char c = *r->p;
        int rc = 0;
        if (c == '"') {
            r->p++;
            break;
        } else if (c == '\\') {
            r->p++;
            rc = read_escape(r, o);
        } else if (c < 0x20) {
            rc = fail(r, "a control byte not escaped in a string");
        } else {
            size_t n = utf8_at(r);
            if (n == 0) rc = fail(r, "bytes that are not UTF-8 in a string");
            utstring_bincpy(o, r->p, n);
            r->p += n;
        }
        if (rc < 0) {
            utstring_free(o);
            return -1;
        }
    }
    *outlen = utstring_len(o);
    *out = xmemdup(utstring_body(o), *outlen);
    utstring_free(o);
    return 0;
}

static bool is_digit(const rd *r) { return r->p < r->end && *r->p >= '0' && *r->p <= '9'; }

/* RFC 8259's number: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static kg_jv *read_number(rd *r)
{
    const unsigned char *s = r->p;
    if (r->p < r->end && *r->p == '-') r->p++;
    if (!is_digit(r)) return fail(r, "not a value"), NULL;
    if (*r->p == '0')
        r->p++;
    else
        while (is_digit(r)) r->p++;
    if (r->p < r->end && *r->p == '.') {
        r->p++;
        if (!is_digit(r)) return fail(r, "a number without digits after its point"), NULL;
        while (is_digit(r)) r->p++;
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-')) r->p++;
        if (!is_digit(r)) return fail(r, "a number without digits in its exponent"), NULL;
        while (is_digit(r)) r->p++;
    }
    kg_jv *v = kg_jv_new(KG_JV_NUMBER);
    v->len = (size_t)(r->p - s);
    v->str = xmemdup((const char *)s, v->len);
    v->num = strtod(v->str, NULL); /* the grammar above is strtod's too */
    return v;
}

static kg_jv *read_value(rd *r);

static kg_jv *read_array(rd *r)
{
    kg_jv *a = kg_jv_new(KG_JV_ARRAY);
    skip_ws(r);
    if (take(r, "]")) return a;
    for (;;) {
        kg_jv *item = read_value(r);
        if (!item) break;
        kg_jv_push(a, item);
        skip_ws(r);
        if (take(r, "]")) return a;
        if (!take(r, ",")) {
            fail(r, "neither , nor ] after an array's item");
            break;
        }
    }
    kg_jv_free(a);
    return NULL;
}

static int cmp_member(const void *x, const void *y)
{
    const kg_jv_member *a = *(kg_jv_member *const *)x, *b = *(kg_jv_member *const *)y;
    if (a->keylen != b->keylen) return a->keylen < b->keylen ? -1 : 1;
    return memcmp(a->key, b->key, a->keylen);
}

/* Two members of one name: which one counts differs between readers, so
 * neither does.  Sorted pointers, so a big object costs n log n. */
static int check_unique(rd *r, const kg_jv *obj)
{
    if (obj->n < 2) return 0;
    kg_jv_member **s = xcalloc(obj->n, sizeof *s);
    for (size_t i = 0; i < obj->n; i++) s[i] = &obj->members[i];
    qsort(s, obj->n, sizeof *s, cmp_member);
    int rc = 0;
    for (size_t i = 1; i < obj->n && rc == 0; i++)
        if (cmp_member(&s[i - 1], &s[i]) == 0) rc = fail(r, "a key named twice in one object");
    free(s);
    return rc;
}

static int read_member(rd *r, kg_jv *obj)
{
    char *key;
    size_t keylen;
    skip_ws(r);
    if (!take(r, "\"")) return fail(r, "an object's key that is not a string");
    if (read_string(r, &key, &keylen) < 0) return -1;
    if (memchr(key, '\0', keylen)) {
        free(key);
        return fail(r, "a NUL in an object's key");
    }
    skip_ws(r);
    if (!take(r, ":")) {
        free(key);
        return fail(r, "no : after an object's key");
    }
    kg_jv *val = read_value(r);
    if (!val) {
        free(key);
        return -1;
    }
    append_member(obj, key, keylen, val);
    return 0;
}

static kg_jv *read_object(rd *r)
{
    kg_jv *o = kg_jv_new(KG_JV_OBJECT);
    skip_ws(r);
    if (take(r, "}")) return o;
    for (;;) {
        if (read_member(r, o) < 0) break;
        skip_ws(r);
        if (take(r, "}")) {
            if (check_unique(r, o) < 0) break;
            return o;
        }
        if (!take(r, ",")) {
            fail(r, "neither , nor } after an object's member");
            break;
        }
    }
    kg_jv_free(o);
    return NULL;
}

static kg_jv *read_nested(rd *r, bool object)
{
    if (++r->depth > KG_JSON_MAX_DEPTH) return fail(r, "nested deeper than 64"), NULL;
    kg_jv *v = object ? read_object(r) : read_array(r);
    r->depth--;
    return v;
}

static kg_jv *read_value(rd *r)
{
    skip_ws(r);
    if (r->p >= r->end) return fail(r, "no value"), NULL;
    if (take(r, "{")) return read_nested(r, true);
    if (take(r, "[")) return read_nested(r, false);
    if (take(r, "\"")) {
        kg_jv *v = kg_jv_new(KG_JV_STRING);
        if (read_string(r, &v->str, &v->len) == 0) return v;
        kg_jv_free(v);
        return NULL;
    }
    if (take(r, "true")) return kg_jv_new_bool(true);
    if (take(r, "false")) return kg_jv_new_bool(false);
    if (take(r, "null")) return kg_jv_new(KG_JV_NULL);
    return read_number(r);
}

kg_jv *kg_json_parse(const char *buf, size_t len, kg_error *err)
{
    rd r = {(const unsigned char *)buf, (const unsigned char *)buf,
            (const unsigned char *)buf + len, err, 0};
    kg_jv *v = read_value(&r);
    if (!v) return NULL;
    skip_ws(&r);
    if (r.p != r.end) {
        kg_jv_free(v);
        fail(&r, "more after the value");
        return NULL;
    }
    return v;
}

/* ---- the writer ---- */

void kg_json_strn(UT_string *out, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str, *end = s + len;
    utstring_bincpy(out, "\"", 1);
    while (s < end) {
        unsigned char c = *s;
        size_t n = 1;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            utstring_bincpy(out, e, 2);
        } else if (c == '\n') {
            utstring_bincpy(out, "\\n", 2);
        } else if (c == '\t') {
            utstring_bincpy(out, "\\t", 2);
        } else if (c == '\r') {
            utstring_bincpy(out, "\\r", 2);
        } else if (c < 0x20 || c == 0x7f) {
            utstring_printf(out, "\\u%04x", c);
        } else {
            rd r = {s, s, end, NULL, 0};
            n = utf8_at(&r);
            if (n == 0) {
                /* Only a tree built by hand gets here (json.h says why). */
                utstring_printf(out, "\\udc%02x", c);
                n = 1;
            } else {
                utstring_bincpy(out, s, n);
            }
        }
        s += n;
    }
    utstring_bincpy(out, "\"", 1);
}

static void newline(UT_string *out, int indent, int level)
{
    if (indent <= 0) return;
    utstring_bincpy(out, "\n", 1);
    for (int i = 0; i < indent * level; i++) utstring_bincpy(out, " ", 1);
}

static void write_at(UT_string *out, const kg_jv *v, int indent, int level)
{
    switch (v->type) {
    case KG_JV_NULL: utstring_printf(out, "null"); return;
    case KG_JV_BOOL: utstring_printf(out, "%s", v->b ? "true" : "false"); return;
    case KG_JV_NUMBER: utstring_bincpy(out, v->str, v->len); return;
    case KG_JV_STRING: kg_json_strn(out, v->str, v->len); return;
    case KG_JV_ARRAY:
    case KG_JV_OBJECT: break;
    }
    bool obj = v->type == KG_JV_OBJECT;
    utstring_bincpy(out, obj ? "{" : "[", 1);
    for (size_t i = 0; i < v->n; i++) {
        if (i) utstring_bincpy(out, ",", 1);
        newline(out, indent, level + 1);
        if (obj) {
            kg_json_strn(out, v->members[i].key, v->members[i].keylen);
            utstring_printf(out, indent > 0 ? ": " : ":");
        }
        write_at(out, obj ? v->members[i].val : v->items[i], indent, level + 1);
    }
    if (v->n) newline(out, indent, level);
    utstring_bincpy(out, obj ? "}" : "]", 1);
}

void kg_json_write(UT_string *out, const kg_jv *v, int indent) { write_at(out, v, indent, 0); }
