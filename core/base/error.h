/* error.h: the core's error value.  A function that can fail returns -1 (or
 * NULL) and fills a kg_error; a caller that adds context wraps it as
 * "outer: inner".  Only main() turns an error into an exit status. */
#ifndef KG_ERROR_H
#define KG_ERROR_H

#include <stdarg.h>

typedef struct kg_error {
    int code; /* errno value when one applies, else 0 */
    char msg[1024];
} kg_error;

/* Sets err (if not NULL) and returns -1. */
int kg_err_set(kg_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int kg_err_vset(kg_error *err, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Prefixes the current message: "<fmt>: <old message>".  Returns -1. */
int kg_err_wrap(kg_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
