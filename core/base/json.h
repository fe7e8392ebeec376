/* json.h: the little JSON the core writes (audit lines, doctor --json,
 * plugins --json).  Output only; kgate never parses JSON. */
#ifndef KG_JSON_H
#define KG_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include "oom.h" /* uthash, utarray, utstring */

#include "strv.h"

/* Appends s as a JSON string literal (quotes included).  Control bytes are
 * escaped (\n, \t, \r, \u00XX).  A byte that is not part of valid UTF-8
 * (0x80..0xff) is written as \udcXX, the lone low surrogate U+DC00+byte
 * (Python's "surrogateescape"), which no valid UTF-8 text can produce: so
 * every line stays one valid JSON line whatever a command line contains,
 * and the exact bytes can be recovered
 * (json.loads(line)[...].encode("utf-8", "surrogateescape")). */
void kg_json_str(UT_string *out, const char *s);
/* Appends an array of strings. */
void kg_json_strv(UT_string *out, const kg_strv *v);
void kg_json_strlist(UT_string *out, const char *const *v, size_t n);
/* Appends the time now, UTC, to the millisecond, as a JSON string
 * ("2026-12-05T19:28:32.522Z"): the audit log's and the events channel's. */
void kg_json_now(UT_string *out);

#endif
