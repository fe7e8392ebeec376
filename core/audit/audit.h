/* audit.h: the JSON Lines audit log, $HOME/.kgate/audit.log, hash-chained. */
#ifndef KG_AUDIT_H
#define KG_AUDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "oom.h" /* uthash, utarray, utstring */

#include "strv.h"

/* A SHA-256 in lowercase hex, with its NUL. */
#define KG_AUDIT_HASH_HEX 65

typedef struct kg_audit_event {
    const char *kind; /* "launch", "block", "refuse", "git", "net", "end" */
    const char *const *argv;
    size_t argc;
    const char *cwd;
    /* Optional (NULL or empty: not written). */
    const char *run; /* the run id every record of one `kgate run` carries */
    const char *backend;
    const char *network;
    /* kind "net" (netevents.h): what the backend refused while the
     * program ran.  verdict set: port is written too; name and addr only
     * when not NULL. */
    const char *verdict;
    const char *name;
    const char *addr;
    unsigned port;
    const char *reason;
    const kg_strv *allow_paths; /* one-shot --allow-path */
    const kg_strv *allow_hosts; /* one-shot --allow-net */
    const kg_strv *withheld_env; /* names only */
    const kg_strv *publish; /* --publish, "127.0.0.1:8080:80" each */
    /* kind "end": has_exit writes exit and duration_ms; recovered marks an
     * end written by a later kgate for a run whose kgate was killed. */
    bool has_exit;
    int exit_status;
    long long duration_ms;
    bool recovered;
    /* The hash of the record before this one (set by kg_audit_append; the
     * field is written last, when not NULL). */
    const char *prev;
} kg_audit_event;

/* Formats one line (with time and pid) into out, newline included. */
void kg_audit_format(const kg_audit_event *ev, UT_string *out);

/* An open audit log: the file and its head (LOG.head, the hash of the last
 * record written), see audit.c for the chain. */
typedef struct kg_audit_log kg_audit_log;

/* Opens (creating 0600, its directory 0700) the log and its head; never
 * through a symlink, regular files only.  NULL with err on failure. */
kg_audit_log *kg_audit_open(const char *log_path, kg_error *err);
/* Appends one record, chained to the one before it, with one write(2).
 * Fails when anything of it fails: the caller must not launch. */
int kg_audit_append(kg_audit_log *log, const kg_audit_event *ev, kg_error *err);
void kg_audit_close(kg_audit_log *log); /* accepts NULL */
/* The same with sink (auditsink.h kg_audit_sink): for journald and syslog
 * records go there instead of the file, unchained. */
kg_audit_log *kg_audit_open_sink(const char *log_path, int sink, kg_error *err);
int kg_audit_write_sink(const char *log_path, int sink, const kg_audit_event *ev, kg_error *err);

/* kg_audit_open, kg_audit_append, kg_audit_close. */
int kg_audit_write(const char *log_path, const kg_audit_event *ev, kg_error *err);

/* One whole line with one write(2): a failed or short write is an error
 * (a second write could land after another kgate's line). */
int kg_audit_write_line(int fd, const char *line, size_t len, kg_error *err);

/* The hash a record's successor names: SHA-256 of its exact bytes, the
 * newline included. */
void kg_audit_hash(const char *line, size_t len, char hex[KG_AUDIT_HASH_HEX]);

/* The hash of the last record in fd (a log file), read from its end, not
 * the whole file: 1 with hex set, 0 when the file is empty, -1 on error. */
int kg_audit_tail_hash(int fd, char hex[KG_AUDIT_HASH_HEX], kg_error *err);

/* Checks the chain through files[0..n), taken as one log in that order
 * (rotated files first).  Returns 0 when intact, 1 when a record does not
 * follow (out says which and why, one line without newline), -1 when a
 * file cannot be read (err).  *records counts the records read. */
int kg_audit_verify(const char *const *files, size_t n, size_t *records, UT_string *out,
                    kg_error *err);

#endif
