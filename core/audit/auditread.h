/* auditread.h: reading kgate's own audit records back (kgate audit runs,
 * show, refusals).  Not a general JSON parser: a flat object whose values
 * are strings, numbers, true/false/null or arrays of strings, which is all
 * kgate writes (audit.c). */
#ifndef KG_AUDITREAD_H
#define KG_AUDITREAD_H

#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

typedef struct kg_audit_rec {
    char *time, *kind, *run, *cwd, *backend, *network, *verdict, *name, *addr, *reason;
    kg_strv *argv;
    long long pid, port, exit_status, duration_ms;
    bool has_exit, recovered;
} kg_audit_rec;

/* Parses one record (without its newline).  0, or -1 when it is not a
 * flat JSON object of that shape.  Strings are decoded to their bytes
 * (\udcXX back to the byte XX).  Free with kg_audit_rec_clear. */
int kg_audit_rec_parse(const char *line, size_t len, kg_audit_rec *rec);
void kg_audit_rec_clear(kg_audit_rec *rec);

#endif
