/* audit.h: the JSON Lines audit log, $HOME/.kgate/audit.log. */
#ifndef KG_AUDIT_H
#define KG_AUDIT_H

#include <stddef.h>

#include "error.h"
#include "oom.h" /* uthash, utarray, utstring */

#include "strv.h"

typedef struct kg_audit_event {
    const char *kind; /* "launch", "block", "refuse", "git", "net" */
    const char *const *argv;
    size_t argc;
    const char *cwd;
    /* Optional (NULL or empty: not written). */
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
    const kg_strv *allow_paths;  /* one-shot --allow-path */
    const kg_strv *allow_hosts;  /* one-shot --allow-net */
    const kg_strv *withheld_env; /* names only */
} kg_audit_event;

/* Formats one line (with time and pid) into out, newline included. */
void kg_audit_format(const kg_audit_event *ev, UT_string *out);

/* Appends one line to log_path with a single write(2) on an O_APPEND
 * descriptor, creating the file 0600 (and its directory 0700) if needed.
 * Fails when the write is short or fails: the caller must not launch. */
int kg_audit_write(const char *log_path, const kg_audit_event *ev,
                   kg_error *err);

/* The two halves of kg_audit_write, for a caller that wants to open the log
 * before it knows what to write: kg_audit_open returns a descriptor
 * (O_APPEND, O_CLOEXEC, never through a symlink, a regular file only) or -1;
 * kg_audit_write_fd writes one line with one write(2). */
int kg_audit_open(const char *log_path, kg_error *err);
int kg_audit_write_fd(int fd, const kg_audit_event *ev, kg_error *err);

#endif
