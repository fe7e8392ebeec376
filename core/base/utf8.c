/* utf8.c: see utf8.h. */
#include "utf8.h"

size_t kg_utf8_decode(const unsigned char *s, uint32_t *cp)
{
    size_t n;
    uint32_t c;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xE0) == 0xC0)
        n = 2, c = s[0] & 0x1F;
    else if ((s[0] & 0xF0) == 0xE0)
        n = 3, c = s[0] & 0x0F;
    else if ((s[0] & 0xF8) == 0xF0)
        n = 4, c = s[0] & 0x07;
    else
        return 0;
    /* A NUL ends the string: (0 & 0xC0) != 0x80 stops there. */
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10FFFF ||
        (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return n;
}
