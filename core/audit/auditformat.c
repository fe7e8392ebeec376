/* auditformat.c: one audit record as one JSON line, for the log file
 * (audit.c) and the journald and syslog sinks (auditsink.c). */
#include "audit.h"

#include <unistd.h>

#include "json.h"

static void opt_str(UT_string *out, const char *key, const char *value)
{
    if (!value || !*value) return;
    utstring_printf(out, ",\"%s\":", key);
    kg_json_str(out, value);
}

static void opt_strv(UT_string *out, const char *key, const kg_strv *v)
{
    if (kg_strv_len(v) == 0) return;
    utstring_printf(out, ",\"%s\":", key);
    kg_json_strv(out, v);
}

void kg_audit_format(const kg_audit_event *ev, UT_string *out)
{
    utstring_bincpy(out, "{\"time\":", 8);
    kg_json_now(out);
    utstring_bincpy(out, ",\"kind\":", 8);
    kg_json_str(out, ev->kind);
    utstring_bincpy(out, ",\"argv\":", 8);
    kg_json_strlist(out, ev->argv, ev->argv ? ev->argc : 0);
    utstring_bincpy(out, ",\"cwd\":", 7);
    kg_json_str(out, ev->cwd);
    utstring_printf(out, ",\"pid\":%ld", (long)getpid());
    opt_str(out, "run", ev->run);
    opt_str(out, "backend", ev->backend);
    opt_str(out, "network", ev->network);
    if (ev->verdict) {
        opt_str(out, "verdict", ev->verdict);
        opt_str(out, "name", ev->name);
        opt_str(out, "addr", ev->addr);
        utstring_printf(out, ",\"port\":%u", ev->port);
    }
    opt_str(out, "reason", ev->reason);
    opt_strv(out, "allow_paths", ev->allow_paths);
    opt_strv(out, "allow_hosts", ev->allow_hosts);
    opt_strv(out, "withheld_env", ev->withheld_env);
    opt_strv(out, "publish", ev->publish);
    if (ev->has_exit)
        utstring_printf(out, ",\"exit\":%d,\"duration_ms\":%lld", ev->exit_status, ev->duration_ms);
    if (ev->recovered) utstring_bincpy(out, ",\"recovered\":true", 17);
    /* Last, at a fixed place: verify finds it without parsing the line. */
    opt_str(out, "prev", ev->prev);
    utstring_bincpy(out, "}\n", 2);
}
