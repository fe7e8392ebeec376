/* msg.h: every line kgate prints for a person (refusals, notes, doctor).
 *
 * Such a line often holds text the user or a program chose: a command
 * name, a path, a YAML value, a host name a program asked for.  Printed
 * raw, a newline in it forges a second "kgate:" line and an escape
 * sequence rewrites the terminal.  So every such line goes through
 * kg_msg_escape, the one function that decides what a message may
 * contain: printable ASCII and valid UTF-8 pass; everything a terminal or
 * a line-reading harness could act on is written as a visible escape. */
#ifndef KG_MSG_H
#define KG_MSG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include "oom.h" /* utstring, with kgate's out-of-memory hook */

/* Appends in to out, escaped:
 *   \  -> \\            (so that an escape in the output is always ours)
 *   newline, tab, CR -> \n \t \r; ESC -> \e; other bytes < 0x20 and 0x7f
 *     -> \xHH
 *   a byte that is not part of valid UTF-8 -> \xHH
 *   C1 controls (U+0080..U+009F), line and paragraph separators
 *     (U+2028, U+2029) and bidirectional controls (U+061C, U+200E,
 *     U+200F, U+202A..U+202E, U+2066..U+2069) -> \u{XXXX}
 * Everything else (printable ASCII, other valid UTF-8) is copied. */
void kg_msg_escape(UT_string *out, const char *in);

/* True when kg_msg_escape would change nothing but backslashes: no
 * control byte, no invalid UTF-8, nothing invisible. */
bool kg_msg_is_plain(const char *in);

/* A user's text quoted inside a refusal (a host name, a YAML value, a
 * --publish spec): its first 60 bytes of inlen (a NUL among them is a
 * byte like any other), each control byte as '?', and "..." when it was
 * longer, so that the quote stays one short line; out has room for
 * outlen (64 holds any).  What is left (UTF-8, backslashes) is the
 * message's escaping, at kg_say. */
#define KG_MSG_QUOTE_MAX 60
void kg_msg_quote(char *out, size_t outlen, const char *in, size_t inlen);

/* Makes s one line in place, by kg_msg_quote's rule: each control byte
 * (below 0x20, and 0x7f) becomes '?'.  For text that is kept before it is
 * shown (a refused plugin's file and reason, a deny-list reason, what a
 * plugin wrote into a probe), which also goes to the audit log and to
 * `doctor --json`; the rest (UTF-8, invisible characters) is escaped by
 * kg_msg_escape where it is printed.  Returns s. */
char *kg_msg_flatten(char *s);

/* Formats fmt, escapes the result and writes prefix (not escaped: a
 * constant of kgate's), the text and one newline with a single fwrite. */
void kg_msg_line(FILE *f, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void kg_msg_vline(FILE *f, const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Writes prefix and text, which kg_msg_escape has already made (a git
 * finding names the program's paths that way), and one newline: as it is
 * when kg_msg_is_plain finds nothing to escape in it but backslashes,
 * which the first escape wrote, so none is doubled; escaped once more
 * otherwise (text that was not in fact escaped stays harmless). */
void kg_msg_line_escaped(FILE *f, const char *prefix, const char *text);

/* The one debug switch: KGATE_DEBUG set, not empty and not "0" (kgate(1)).
 * Read here only, so that every debug line of the core follows the same
 * reading of it. */
bool kg_debug(void);

/* kg_msg_line(stderr, "kgate: ", ...): the one-line refusal or note. */
#define kg_say(...) kg_msg_line(stderr, "kgate: ", __VA_ARGS__)

#endif
