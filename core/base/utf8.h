/* utf8.h: the one UTF-8 decoder of the core, shared by the audit log's
 * JSON (json.c: which bytes are characters, which are escaped as bytes)
 * and the messages for a person (msg.c: which characters are shown). */
#ifndef KG_UTF8_H
#define KG_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length (1..4) and code point of the valid UTF-8 sequence at s, or 0
 * when s does not start one: overlong forms, surrogates, values past
 * U+10FFFF and cut-short sequences are not UTF-8.  s is NUL-terminated. */
size_t kg_utf8_decode(const unsigned char *s, uint32_t *cp);

#endif
