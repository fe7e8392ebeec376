/* netevents.h: what a backend refused while the program ran (ABI 2.1,
 * kgate_launch.events_fd), from its records to the audit log and to one
 * summary line after the run.
 *
 * A record is "net <verdict> <name> <addr> <port>[ <reason>]\n"
 * (kgate-plugin.h).
 * Every record that parses becomes one audit line of kind "net" as it is
 * read; one that does not is counted, never logged raw (it came from a
 * process that parses the program's packets). */
#ifndef KG_NETEVENTS_H
#define KG_NETEVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "audit.h"
#include "oom.h"

/* One record, decoded: name holds the bytes the \DDD escapes stood for
 * ("" for "-"), addr the address in its canonical text ("" for "-"). */
typedef struct kg_net_event {
    char verdict[16];
    char name[256];
    char addr[48];
    unsigned port;
    /* Why it was refused: one of the words of kgate-plugin.h ("unlisted",
     * "private", "never", "unanswered"), or "" when the backend did not
     * say (a record of five fields, from an older backend). */
    char reason[16];
} kg_net_event;

/* Parses one record (line, without its newline).  0, or -1 when anything
 * in it is off: a wrong field count, an unknown first word, a verdict that
 * is not a lowercase word, a name with a byte outside [A-Za-z0-9.*_-] or a
 * bad or NUL escape, an address inet_pton does not take, a port that is
 * not 0..65535 without leading zeros, a sixth field that is not one of
 * the reasons kgate-plugin.h lists. */
int kg_net_event_parse(const char *line, size_t len, kg_net_event *out);

/* The records of one run. */
typedef struct kg_netlog kg_netlog;

/* log: where each record's line goes (kg_audit_open; NULL: nowhere);
 * base: the fields every line of this run carries (kind, argv, cwd,
 * backend), copied by pointer: it must outlive the netlog. */
kg_netlog *kg_netlog_new(kg_audit_log *log, const kg_audit_event *base);
void kg_netlog_free(kg_netlog *l); /* accepts NULL */
/* The caller's refusal channel (events.h; NULL: none): each distinct
 * refused name and connection becomes one blocked object there.  Not
 * owned. */
struct kg_events;
void kg_netlog_set_events(kg_netlog *l, struct kg_events *events);

/* Takes bytes as read from the pipe: splits records, keeps a partial one
 * for the next call.  A line longer than KGATE_EVENT_MAX is dropped (and
 * counted) whole. */
void kg_netlog_feed(kg_netlog *l, const char *buf, size_t n);
/* The pipe is at its end: a partial record left over is counted as bad,
 * and the counts of what was not logged go into one last audit line. */
void kg_netlog_finish(kg_netlog *l);

size_t kg_netlog_refused(const kg_netlog *l); /* records with verdict refused */
size_t kg_netlog_bad(const kg_netlog *l); /* records that did not parse */

/* The summary for stderr, without "kgate: " and newline, unescaped (the
 * caller prints it with kg_say, which escapes), or false when there is
 * nothing to say:
 *   refused 3 names: a, b, c; 2 connections: 198.18.0.9:80, [::1]:443 (api.example)
 * Distinct names and connections, the first KG_NET_SHOWN of each, then
 * "and N more". */
#define KG_NET_SHOWN 5
bool kg_netlog_summary(const kg_netlog *l, UT_string *out);

#endif
