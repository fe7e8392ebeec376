#include "json.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "utf8.h"

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
            uint32_t cp;
            size_t n = kg_utf8_decode(s, &cp);
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

void kg_json_now(UT_string *out)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char buf[64];
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    utstring_printf(out, "\"%s.%03ldZ\"", buf, ts.tv_nsec / 1000000);
}
