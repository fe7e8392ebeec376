/* strv.h: growable lists of owned strings, on top of uthash's utarray.
 * A kg_strv can be handed to a plugin as a kgate_strlist without copying,
 * because utarray keeps the char pointers contiguous. */
#ifndef KG_STRV_H
#define KG_STRV_H

#include <stdbool.h>
#include <stddef.h>
#include "oom.h" /* uthash, utarray, utstring */

#include "kgate/kgate-plugin.h"

typedef UT_array kg_strv;

kg_strv *kg_strv_new(void);
void kg_strv_free(kg_strv *v); /* accepts NULL */
void kg_strv_push(kg_strv *v, const char *s); /* copies s */
size_t kg_strv_len(const kg_strv *v);
const char *kg_strv_get(const kg_strv *v, size_t i);
bool kg_strv_contains(const kg_strv *v, const char *s);
/* Removes every entry equal to s; returns how many were removed. */
size_t kg_strv_remove(kg_strv *v, const char *s);
void kg_strv_clear(kg_strv *v);
kg_strv *kg_strv_dup(const kg_strv *v);
/* A view of v for the SDK; valid until v changes. */
kgate_strlist kg_strv_list(const kg_strv *v);
/* A NULL-terminated copy of the pointers (strings still owned by v);
 * free() the array only. */
char **kg_strv_nullterm(const kg_strv *v);

#endif
