/* fuzz-jsonread: the strict JSON reader (core/base/jsonread.c), which reads
 * what agents send to kgate's hooks and MCP server.
 *
 * What must hold: any input is read or refused with one line naming a byte
 * (no crash, leak or UB, whatever the depth or size); what is read, written
 * back compact and pretty, reads back equal, and writing that again gives the
 * same bytes; a string that kg_jv_cstr hands to C holds no NUL. */
#include <stdbool.h>
#include <string.h>
#include "oom.h" /* utstring, with the core's out-of-memory hook */

#include "fuzz-util.h"
#include "jsonread.h"

static void check_strings(const kg_jv *v)
{
    if (v->type == KG_JV_STRING) {
        const char *c = kg_jv_cstr(v);
        FZ_CHECK(!c || strlen(c) == v->len, "kg_jv_cstr handed out a string with a NUL");
        FZ_CHECK(c || memchr(v->str, '\0', v->len), "kg_jv_cstr refused a string without NUL");
    }
    for (size_t i = 0; v->type == KG_JV_ARRAY && i < v->n; i++) check_strings(v->items[i]);
    for (size_t i = 0; v->type == KG_JV_OBJECT && i < v->n; i++) {
        FZ_CHECK(strlen(v->members[i].key) == v->members[i].keylen, "a key with a NUL");
        check_strings(v->members[i].val);
    }
}

static void round_trip(const kg_jv *v, int indent)
{
    UT_string *a, *b;
    utstring_new(a);
    utstring_new(b);
    kg_json_write(a, v, indent);
    kg_error err = {0};
    kg_jv *again = kg_json_parse(utstring_body(a), utstring_len(a), &err);
    FZ_CHECK(again, "what was written does not read back: %s", err.msg);
    FZ_CHECK(kg_jv_equal(v, again), "what was written reads back different");
    kg_json_write(b, again, indent);
    FZ_CHECK(utstring_len(a) == utstring_len(b) &&
                 memcmp(utstring_body(a), utstring_body(b), utstring_len(a)) == 0,
             "writing twice differs");
    if (indent == 0)
        FZ_CHECK(!memchr(utstring_body(a), '\n', utstring_len(a)), "compact form has a newline");
    kg_jv_free(again);
    utstring_free(a);
    utstring_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kg_error err = {0};
    kg_jv *v = kg_json_parse((const char *)data, size, &err);
    if (!v) {
        FZ_CHECK(strncmp(err.msg, "JSON at byte ", 13) == 0, "refusal without its byte: %s",
                 err.msg);
        FZ_CHECK(!strchr(err.msg, '\n'), "refusal on two lines");
        return 0;
    }
    check_strings(v);
    round_trip(v, 0);
    round_trip(v, 2);
    kg_jv_free(v);
    return 0;
}
