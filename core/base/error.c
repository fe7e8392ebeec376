#include "error.h"

#include <stdio.h>
#include <string.h>

int kg_err_vset(kg_error *err, int code, const char *fmt, va_list ap)
{
    return kgate_err_vset(err, code, fmt, ap);
}

int kg_err_set(kg_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kg_err_vset(err, code, fmt, ap);
    va_end(ap);
    return -1;
}

int kg_err_wrap(kg_error *err, const char *fmt, ...)
{
    if (!err) return -1;
    char outer[sizeof err->msg], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(outer, sizeof outer, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    /* Truncating the inner message is fine: the outer context comes first. */
    int n = snprintf(err->msg, sizeof err->msg, "%s: ", outer);
    if (n > 0 && (size_t)n < sizeof err->msg) {
        size_t room = sizeof err->msg - (size_t)n - 1;
        size_t len = strnlen(old, room);
        memcpy(err->msg + n, old, len);
        err->msg[(size_t)n + len] = '\0';
    }
    return -1;
}
