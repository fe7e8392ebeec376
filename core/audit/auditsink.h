/* auditsink.h: where audit records go besides the file (issue 31, part
 * 3): the systemd journal, with native fields, or the system's syslog, as
 * RFC 5424.  The key audit_sink (kgate.yaml(5)) picks one; file is the
 * default, and is the only sink that carries the hash chain (audit.c). */
#ifndef KG_AUDITSINK_H
#define KG_AUDITSINK_H

#include <stdbool.h>

#include "audit.h"

typedef enum kg_audit_sink {
    KG_SINK_FILE = 0,
    KG_SINK_JOURNALD,
    KG_SINK_SYSLOG,
} kg_audit_sink;

const char *kg_audit_sink_name(kg_audit_sink s);

/* Whether this kgate was built with libsystemd (the journald sink). */
bool kg_audit_sink_journald_built(void);

/* An open journal or syslog connection. */
typedef struct kg_sink kg_sink;

/* Opens sink (not KG_SINK_FILE): syslog connects its datagram socket to
 * /dev/log now, so that a syslog that is not there refuses before any
 * launch.  NULL with err. */
kg_sink *kg_sink_open(kg_audit_sink sink, kg_error *err);
/* Sends one record; -1 with err when the sink did not take it whole. */
int kg_sink_send(kg_sink *s, const kg_audit_event *ev, kg_error *err);
void kg_sink_close(kg_sink *s); /* accepts NULL */

#endif
