/* jsonread.h: reading JSON into a tree, and writing a tree back.
 *
 * kgate reads JSON from the agents it sits in front of (a hook's input on
 * stdin, an MCP request, a settings.json it edits).  The reader is strict
 * and fails closed (RFC 8259 and nothing more): raw bytes must be valid
 * UTF-8, an escape must name a character (a surrogate only as a pair),
 * control bytes must be escaped, an object may not name a key twice, a key
 * may not hold NUL, nesting deeper than KG_JSON_MAX_DEPTH and anything but
 * whitespace after the value are errors.  libyaml is not used for this:
 * 0.2.5 (Debian 12) refuses the surrogate-pair escapes JSON encoders write
 * for characters past U+FFFF, and keeps the last of two equal keys
 * (docs/agents.md, "Reading JSON").
 *
 * A string may hold NUL (\u0000) as a value: kg_jv_cstr() gives it to C
 * only when it holds none, so a command or a path with a NUL in it is
 * refused where it is used rather than cut short. */
#ifndef KG_JSONREAD_H
#define KG_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>
#include "oom.h" /* uthash, utarray, utstring */

#include "error.h"

#define KG_JSON_MAX_DEPTH 64

typedef enum kg_jv_type {
    KG_JV_NULL,
    KG_JV_BOOL,
    KG_JV_NUMBER,
    KG_JV_STRING,
    KG_JV_ARRAY,
    KG_JV_OBJECT,
} kg_jv_type;

typedef struct kg_jv kg_jv;

typedef struct kg_jv_member {
    char *key; /* NUL-terminated; never holds NUL */
    size_t keylen;
    kg_jv *val;
} kg_jv_member;

struct kg_jv {
    kg_jv_type type;
    bool b; /* KG_JV_BOOL */
    double num; /* KG_JV_NUMBER: strtod of str */
    char *str; /* KG_JV_STRING: the decoded bytes; KG_JV_NUMBER: the text as
                  * written.  Always NUL-terminated after len bytes. */
    size_t len;
    size_t n; /* items or members */
    kg_jv **items; /* KG_JV_ARRAY */
    kg_jv_member *members; /* KG_JV_OBJECT, in the order read */
};

/* Parses exactly buf[0..len) (buf need not be NUL-terminated).  NULL and err
 * set ("JSON at byte N: what") on any error. */
kg_jv *kg_json_parse(const char *buf, size_t len, kg_error *err);
void kg_jv_free(kg_jv *v);

/* The member named key of an object, or NULL (not an object, no such key). */
kg_jv *kg_jv_get(const kg_jv *obj, const char *key);
/* A string's bytes as a C string, or NULL when v is not a string or holds
 * a NUL. */
const char *kg_jv_cstr(const kg_jv *v);
/* The string member key of obj as a C string, or NULL (see kg_jv_cstr). */
const char *kg_jv_get_cstr(const kg_jv *obj, const char *key);

/* Building and editing trees (settings files). */
kg_jv *kg_jv_new(kg_jv_type type);
kg_jv *kg_jv_new_str(const char *s); /* a C string */
kg_jv *kg_jv_new_bool(bool b);
kg_jv *kg_jv_new_num(double d); /* written as %.17g, or an integer */
kg_jv *kg_jv_copy(const kg_jv *v);
/* Appends val to an array; the array owns it. */
void kg_jv_push(kg_jv *arr, kg_jv *val);
/* Removes and frees item i of an array. */
void kg_jv_remove(kg_jv *arr, size_t i);
/* Sets obj[key] = val (the object owns val): replaces an existing member in
 * its place, else appends. */
void kg_jv_set(kg_jv *obj, const char *key, kg_jv *val);
/* Removes and frees obj[key]; true when it was there. */
bool kg_jv_del(kg_jv *obj, const char *key);
/* Deep equality (numbers by their value, members in any order). */
bool kg_jv_equal(const kg_jv *a, const kg_jv *b);

/* Appends v as JSON.  indent 0: one line, no spaces; indent > 0: one member
 * or item per line, nested by that many spaces (as JSON.stringify(v, null,
 * indent)).  Numbers are written as they were read.  Strings are escaped as
 * in json.h; a byte that is not UTF-8 (only in a tree built by hand) is
 * written as \udcXX, which this reader refuses. */
void kg_json_write(UT_string *out, const kg_jv *v, int indent);
/* A JSON string literal of len bytes (may hold NUL). */
void kg_json_strn(UT_string *out, const char *s, size_t len);

#endif
