/* sbpl-eval.h: a small SBPL reader and evaluator for the tests.
 *
 * It knows exactly the subset the seatbelt plugin emits and refuses
 * anything else, so a new kind of rule cannot slip past the tests unread.
 * Semantics follow Seatbelt as the design note measured it: every rule is
 * checked and the last matching one decides; (allow default) and
 * (deny default) are rules that match every operation.
 */
#ifndef SBPL_EVAL_H
#define SBPL_EVAL_H

#include <stddef.h>

typedef enum sbe_kind {
    SBE_NONE = 0, /* an operation without an argument (appleevent-send) */
    SBE_PATH, /* file-*: an absolute path */
    SBE_ADDR, /* network-*: "127.0.0.1:9", "[::1]:9" */
    SBE_MACH, /* mach-lookup: a service name */
    SBE_SYSCTL, /* sysctl-*: a sysctl name */
    SBE_TARGET, /* signal, process-info*: "same-sandbox" or "other" */
    SBE_UNIX, /* network-outbound to a Unix socket: its path */
} sbe_kind;

typedef struct sbe_profile sbe_profile;

/* Parses text; params are "NAME=VALUE" strings as passed to -D (split at the
 * first '=').  NULL with a message in err on any syntax or vocabulary error. */
sbe_profile *sbe_parse(const char *text, const char *const *params, size_t n_params, char *err,
                       size_t errlen);
void sbe_free(sbe_profile *p);

/* 1 when the profile allows op on value, else 0. */
int sbe_allows(const sbe_profile *p, const char *op, sbe_kind kind, const char *value);

/* The rules in order, one line each ("deny file-read* subpath=<v>"), with
 * parameters substituted and every byte outside printable ASCII written as
 * \xHH: a canonical form to compare two profiles' structure.  malloc'd. */
char *sbe_dump(const sbe_profile *p);
/* s escaped as sbe_dump escapes values.  malloc'd. */
char *sbe_escape(const char *s);
size_t sbe_rule_count(const sbe_profile *p);

#endif
