/* events.h: the refusal channel for the caller (`kgate run --events-fd N`,
 * or KGATE_EVENTS_FD=N): JSON Lines on a descriptor the caller opened, one
 * object per refusal while the run goes on and one summary at its end, so
 * that an agent's harness can tell its model *why* something failed
 * instead of letting it retry outside the box (issue 30; kgate(1), "EVENTS
 * CHANNEL"; docs/agent-harness.md).
 *
 * The shapes follow the agent channel of Anthropic's sandbox-runtime
 * (protocol 1: "hello", then "blocked" objects with resource, operation and
 * description), so a harness written for that runtime reads kgate's
 * blocked objects unchanged; kgate adds fields (code, rule, run, time,
 * command) and two types of its own ("refused": the run did not start;
 * "summary": the run is over).  A reader must ignore types and fields it
 * does not know: kinds are added without a new version.
 *
 * The channel only informs.  Nothing is read from it, nothing on it can
 * widen the policy, and a reader that stops reading costs the run nothing:
 * the descriptor is made non-blocking, an object that does not fit is
 * dropped and counted in the summary ("dropped").  Unlike the audit log, a
 * channel that fails during the run does not stop it: the audit log is the
 * record, this is a courtesy to the caller. */
#ifndef KG_EVENTS_H
#define KG_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "strv.h"

#define KG_EVENTS_VERSION 1

typedef struct kg_events kg_events;

/* Takes the descriptor text as given on the command line or in the
 * environment (decimal, above 2, open for writing).  NULL with err set
 * when it is not: the caller refuses the run, since the harness that asked
 * for the channel would otherwise wait for objects that never come. */
kg_events *kg_events_open(const char *fd_text, kg_error *err);
/* Closes the descriptor; accepts NULL. */
void kg_events_close(kg_events *e);

/* What every object of this run carries: the run id and the command.
 * Both are copied.  Writes the hello object. */
void kg_events_begin(kg_events *e, const char *run_id, const char *const *argv, size_t argc);
/* The backend that was chosen, for the summary (copied). */
void kg_events_set_backend(kg_events *e, const char *backend);

/* One refusal.  code: a stable identifier a harness can switch on
 * (kgate(1) lists them); resource_type: "network", "exec", "file"; name /
 * path / addr and port: what the resource is (NULL / 0 when not known);
 * operation: "resolve", "connect", "exec", "write"; rule_key and
 * rule_entry: the configuration key and entry that decided (entry NULL
 * when nothing matched, as for a name not in allow_hosts); description:
 * one sentence for a person or a model. */
typedef struct kg_event_block {
    const char *code;
    const char *resource_type;
    const char *host;
    const char *addr;
    unsigned port;
    const char *path;
    const char *operation;
    const char *rule_key;
    const char *rule_entry;
    const char *description;
} kg_event_block;
void kg_events_blocked(kg_events *e, const kg_event_block *b);

/* The run did not start: code ("exec_denied", "command_not_found",
 * "run_refused"), exit status, the reason as printed. */
void kg_events_refused(kg_events *e, const char *code, int status, const char *reason);

/* The last object: whether the program started, its exit status, how many
 * refusals were sent and how many secrets the mask replaced. */
void kg_events_summary(kg_events *e, bool started, int status, size_t masked);

/* Objects written and dropped so far (tests, and the summary). */
size_t kg_events_sent(const kg_events *e);
size_t kg_events_dropped(const kg_events *e);

#endif
