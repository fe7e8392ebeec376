/* msg.c: escaping what kgate prints for a person; see msg.h. */
#include "msg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* Code points a terminal acts on or that reorder or break the line. */
static int invisible(uint32_t c)
{
    return (c >= 0x80 && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F || c == 0x2028 ||
           c == 0x2029 || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

void kg_msg_escape(UT_string *out, const char *in)
{
    const unsigned char *s = (const unsigned char *)(in ? in : "");
    while (*s) {
        unsigned char c = *s;
        if (c == '\\') {
            utstring_bincpy(out, "\\\\", 2);
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
        } else if (c == 0x1b) {
            utstring_bincpy(out, "\\e", 2);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            utstring_printf(out, "\\x%02x", c);
            s++;
        } else if (c < 0x80) {
            utstring_bincpy(out, s, 1);
            s++;
        } else {
            uint32_t cp;
            size_t n = kg_utf8_decode(s, &cp);
            if (n == 0) {
                utstring_printf(out, "\\x%02x", c);
                s++;
            } else if (invisible(cp)) {
                utstring_printf(out, "\\u{%04x}", (unsigned)cp);
                s += n;
            } else {
                utstring_bincpy(out, s, n);
                s += n;
            }
        }
    }
}

bool kg_msg_is_plain(const char *in)
{
    const unsigned char *s = (const unsigned char *)(in ? in : "");
    while (*s) {
        if (*s < 0x20 || *s == 0x7f) return false;
        if (*s < 0x80) {
            s++;
            continue;
        }
        uint32_t cp;
        size_t n = kg_utf8_decode(s, &cp);
        if (n == 0 || invisible(cp)) return false;
        s += n;
    }
    return true;
}

void kg_msg_vline(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0) text = NULL;
    UT_string *line;
    utstring_new(line);
    if (prefix) utstring_bincpy(line, prefix, strlen(prefix));
    kg_msg_escape(line, text ? text : "(out of memory formatting a message)");
    utstring_bincpy(line, "\n", 1);
    /* One write: a harness reading stderr line by line never sees half. */
    fwrite(utstring_body(line), 1, utstring_len(line), f);
    fflush(f);
    utstring_free(line);
    free(text);
}

void kg_msg_line(FILE *f, const char *prefix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kg_msg_vline(f, prefix, fmt, ap);
    va_end(ap);
}

void kg_msg_line_escaped(FILE *f, const char *prefix, const char *text)
{
    if (!text || !kg_msg_is_plain(text)) {
        kg_msg_line(f, prefix, "%s", text ? text : "");
        return;
    }
    UT_string *line;
    utstring_new(line);
    if (prefix) utstring_bincpy(line, prefix, strlen(prefix));
    utstring_bincpy(line, text, strlen(text));
    utstring_bincpy(line, "\n", 1);
    /* One write, as kg_msg_vline's. */
    fwrite(utstring_body(line), 1, utstring_len(line), f);
    fflush(f);
    utstring_free(line);
}

bool kg_debug(void)
{
    const char *d = getenv("KGATE_DEBUG");
    return d && *d && strcmp(d, "0") != 0;
}

/* The one rule for text kept as one line (kg_msg_quote, kg_msg_flatten). */
static char flat(unsigned char c) { return (c < 0x20 || c == 0x7f) ? '?' : (char)c; }

char *kg_msg_flatten(char *s)
{
    for (char *p = s; p && *p; p++) *p = flat((unsigned char)*p);
    return s;
}

void kg_msg_quote(char *out, size_t outlen, const char *in, size_t inlen)
{
    size_t o = 0;
    if (outlen == 0) return;
    for (size_t i = 0; i < inlen; i++) {
        if (i == KG_MSG_QUOTE_MAX) {
            if (o + 3 < outlen) {
                memcpy(out + o, "...", 3);
                o += 3;
            }
            break;
        }
        if (o + 1 >= outlen) break;
        out[o++] = flat((unsigned char)in[i]);
    }
    out[o] = '\0';
}
