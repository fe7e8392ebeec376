#include "strv.h"

#include <stdlib.h>
#include <string.h>

/* utarray's own ut_str_icd copies with an unchecked strdup: out of
 * memory, a list would hold a NULL that every reader takes for a string. */
static void str_copy(void *dst, const void *src)
{
    const char *s = *(const char *const *)src;
    char *d = s ? strdup(s) : NULL;
    if (s && !d) kg_oom();
    *(char **)dst = d;
}

static void str_free(void *elt) { free(*(char **)elt); }

static const UT_icd str_icd = {sizeof(char *), NULL, str_copy, str_free};

kg_strv *kg_strv_new(void)
{
    kg_strv *v;
    utarray_new(v, &str_icd);
    return v;
}

void kg_strv_free(kg_strv *v)
{
    if (v) utarray_free(v);
}

void kg_strv_push(kg_strv *v, const char *s) { utarray_push_back(v, &s); }

size_t kg_strv_len(const kg_strv *v) { return v ? utarray_len((UT_array *)v) : 0; }

const char *kg_strv_get(const kg_strv *v, size_t i)
{
    char **p = (char **)utarray_eltptr((UT_array *)v, (unsigned)i);
    return p ? *p : NULL;
}

bool kg_strv_contains(const kg_strv *v, const char *s)
{
    for (size_t i = 0; i < kg_strv_len(v); i++)
        if (strcmp(kg_strv_get(v, i), s) == 0) return true;
    return false;
}

size_t kg_strv_remove(kg_strv *v, const char *s)
{
    size_t removed = 0;
    for (size_t i = kg_strv_len(v); i-- > 0;) {
        if (strcmp(kg_strv_get(v, i), s) == 0) {
            utarray_erase(v, (unsigned)i, 1);
            removed++;
        }
    }
    return removed;
}

void kg_strv_clear(kg_strv *v)
{
    if (v) utarray_clear(v);
}

kg_strv *kg_strv_dup(const kg_strv *v)
{
    kg_strv *d = kg_strv_new();
    for (size_t i = 0; i < kg_strv_len(v); i++) kg_strv_push(d, kg_strv_get(v, i));
    return d;
}

kgate_strlist kg_strv_list(const kg_strv *v)
{
    kgate_strlist l = {NULL, 0};
    if (v && utarray_len((UT_array *)v) > 0) {
        l.v = (const char *const *)utarray_front((UT_array *)v);
        l.n = utarray_len((UT_array *)v);
    }
    return l;
}

char **kg_strv_nullterm(const kg_strv *v)
{
    size_t n = kg_strv_len(v);
    char **a = calloc(n + 1, sizeof *a);
    if (!a) return NULL;
    for (size_t i = 0; i < n; i++) a[i] = (char *)kg_strv_get(v, i);
    return a;
}
