#include "json.h"

#include <stdint.h>
#include <string.h>

/* Length of a valid UTF-8 sequence at s (1..4), or 0 if it is not one. */
static size_t utf8_seq_len(const unsigned char *s)
{
    if (s[0] < 0x80) return 1;
    size_t n;
    uint32_t cp;
    if ((s[0] & 0xE0) == 0xC0) n = 2, cp = s[0] & 0x1F;
    else if ((s[0] & 0xF0) == 0xE0) n = 3, cp = s[0] & 0x0F;
    else if ((s[0] & 0xF8) == 0xF0) n = 4, cp = s[0] & 0x07;
    else return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are not UTF-8. */
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
        (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

void kg_json_str(UT_string *out, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    utstring_bincpy(out, "\"", 1);
    while (*s) {
        unsigned char c = *s;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            utstring_bincpy(out, e, 2);
            s++;
        } else if (c == '\n') {
            utstring_bincpy(out, "\\n", 2);
            s++;
        } else if (c == '\t') {
            utstring_bincpy(out, "\\t", 2);
            s++;
        } else if (c == '\r') {
            utstring_bincpy(out, "\\r", 2);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            utstring_printf(out, "\\u%04x", c);
            s++;
        } else {
            size_t n = utf8_seq_len(s);
            if (n == 0) {
                /* A byte that is not UTF-8 (always 0x80..0xff here) is
                 * written as the lone surrogate U+DC00+byte, Python's
                 * "surrogateescape": valid UTF-8 never encodes a
                 * surrogate, so the escape cannot be confused with a
                 * character, and a reader gets the exact bytes back. */
                utstring_printf(out, "\\udc%02x", c);
                s++;
            } else {
                utstring_bincpy(out, s, n);
                s += n;
            }
        }
    }
    utstring_bincpy(out, "\"", 1);
}

void kg_json_strlist(UT_string *out, const char *const *v, size_t n)
{
    utstring_bincpy(out, "[", 1);
    for (size_t i = 0; i < n; i++) {
        if (i) utstring_bincpy(out, ",", 1);
        kg_json_str(out, v[i]);
    }
    utstring_bincpy(out, "]", 1);
}

void kg_json_strv(UT_string *out, const kg_strv *v)
{
    kgate_strlist l = kg_strv_list(v);
    kg_json_strlist(out, l.v, l.n);
}
