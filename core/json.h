/* json.h: the little JSON the core writes (audit lines, doctor --json,
 * plugins --json).  Output only; kgate never parses JSON. */
#ifndef KG_JSON_H
#define KG_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include "oom.h" /* uthash, utarray, utstring */

#include "strv.h"

/* Appends s as a JSON string literal (quotes included).  Bytes that are not
 * valid UTF-8 are written as \u00XX of the byte, so every line stays valid
 * JSON whatever a command line contains. */
void kg_json_str(UT_string *out, const char *s);
/* Appends an array of strings. */
void kg_json_strv(UT_string *out, const kg_strv *v);
void kg_json_strlist(UT_string *out, const char *const *v, size_t n);

#endif
