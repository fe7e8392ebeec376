/* sb-profile.h: the Seatbelt profile builder, inside the seatbelt plugin.
 *
 * Pure functions: a kgate_policy in, SBPL text and -D parameters out.  No
 * I/O, no platform checks, so the unit tests link this file directly and
 * read its output with an SBPL evaluator on any system.  Only the SDK
 * header and libc are used, as in the rest of the plugin.
 */
#ifndef SB_PROFILE_H
#define SB_PROFILE_H

#include <stddef.h>

#include "kgate/kgate-plugin.h"

/* How dynamic strings (paths from the policy) reach the profile. */
typedef enum sb_form {
    /* Every path is a `-D KG_PATH_n=value` parameter referenced as
     * (param "KG_PATH_n"): the profile text does not depend on any byte of
     * any path.  This is what launch installs. */
    SB_FORM_PARAMS = 0,
    /* Every path is pasted as an escaped SBPL string literal (sb_quote).
     * Used for display and for the golden test against the design note;
     * the tests check that both forms give the same answers. */
    SB_FORM_INLINE = 1,
} sb_form;

typedef struct sb_profile {
    char *text; /* the profile, NUL-terminated */
    char **params; /* "KG_PATH_n=value", in n order; each malloc'd */
    size_t n_params;
} sb_profile;

/* Builds the profile for policy.  Fails (-1, err filled) when the policy
 * asks for something Seatbelt cannot install: a per-host network allow list
 * (sb_restricted_hosts_sentence), a relative or empty path, a mach service
 * name outside [A-Za-z0-9._-].  Host Unix sockets are denied except the
 * allow_sockets entries (and, in network open, mDNSResponder's). */
int sb_build(const kgate_policy *policy, sb_form form, sb_profile *out, kgate_err *err);
/* Frees what sb_build put in p (not p itself); accepts NULL. */
void sb_profile_clear(sb_profile *p);

/* s as an SBPL string literal, quotes included: backslash and double quote
 * are escaped with a backslash, newline/tab/CR as \n \t \r, other control
 * bytes and DEL as \xHH.  malloc'd; NULL when memory runs out. */
char *sb_quote(const char *s);

/* The one sentence doctor and plan both use when network is restricted to
 * a host list, so they cannot tell two different stories. */
const char *sb_restricted_hosts_sentence(void);

/* The doctor finding id of a refusal err that sb_build filled: the host
 * list's (KGATE_FINDING_NET_HOSTS_UNSUPPORTED: sb_build fails with ENOTSUP
 * for that one cause only) or "seatbelt.profile-refused". */
const char *sb_refusal_id(const kgate_err *err);

/* 1 when name may be re-allowed as a mach service (non-empty, at most 200
 * bytes, only [A-Za-z0-9._-]), else 0. */
int sb_mach_name_ok(const char *name);

/* The doors an allow-default profile leaves open (issue 9), closed in both
 * base profiles.  door_for_mach() names the door a re-allowed service
 * reopens ("keychain", ...), or NULL when it is not one of them. */
const char *sb_door_for_mach(const char *name);

/* Name of the base profile: "permissive" or "strict". */
const char *sb_profile_name(kgate_macos_profile p);

#endif
