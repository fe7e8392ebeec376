/* error.h: the core's error value.  A function that can fail returns -1 (or
 * NULL) and fills a kg_error; a caller that adds context wraps it as
 * "outer: inner".  Only main() turns an error into an exit status.
 *
 * kg_error is the SDK's kgate_err, not a type of its own: a plugin's
 * error is passed up as it is, and a message longer than the ABI's 512
 * bytes is cut by the same rule (vsnprintf into msg) wherever it was
 * made (docs/README.md, "Errors"). */
#ifndef KG_ERROR_H
#define KG_ERROR_H

#include <stdarg.h>

#include "kgate/kgate-plugin.h"

typedef kgate_err kg_error;

/* Sets err (if not NULL) and returns -1. */
int kg_err_set(kg_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int kg_err_vset(kg_error *err, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Prefixes the current message: "<fmt>: <old message>".  Returns -1. */
int kg_err_wrap(kg_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
