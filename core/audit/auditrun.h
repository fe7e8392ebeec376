/* auditrun.h: one id per `kgate run`, and an end record for every launch,
 * even when the kgate that launched was killed (issue 31, part 2). */
#ifndef KG_AUDITRUN_H
#define KG_AUDITRUN_H

#include <stddef.h>

#include "audit.h"

/* 32 lowercase hex digits of 16 random bytes, and the NUL. */
#define KG_RUN_ID_LEN 33

/* A fresh run id from the system's random source; -1 when it has none. */
int kg_run_id_new(char id[KG_RUN_ID_LEN]);

/* The marker of a launched run: ~/.kgate/runs/<id>, locked for as long as
 * its kgate lives.  It holds what a later kgate needs to write the run's
 * end record if this one is killed before it does. */
typedef struct kg_run_marker kg_run_marker;

/* Creates the marker for ev's run (ev->run, backend, cwd, argv) in
 * runs_dir (created 0700).  NULL with err on failure. */
kg_run_marker *kg_run_marker_new(const char *runs_dir, const kg_audit_event *ev, kg_error *err);
/* Removes it (the end record is written) and frees it; accepts NULL. */
void kg_run_marker_done(kg_run_marker *m);
/* Frees it but leaves the file, unlocked: the end record could not be
 * written, and a later kgate writes a recovered one. */
void kg_run_marker_keep(kg_run_marker *m);

/* Writes the end record (kind end, recovered) of every run in runs_dir
 * whose kgate is gone (its marker is no longer locked), then removes the
 * marker.  A marker still being made (a dot-name under a minute old) is
 * left to its maker.  Returns how many, or -1 with err when a record could not be
 * written (the caller must not launch: the log refuses records). */
int kg_run_recover(const char *runs_dir, kg_audit_log *log, kg_error *err);

#endif
