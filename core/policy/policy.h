/* policy.h: the effective policy.  User file, then the project file (which
 * may only narrow), then the one-shot flags (which widen for one run). */
#ifndef KG_POLICY_H
#define KG_POLICY_H

#include "oom.h" /* uthash, utarray, utstring */

#include "config.h"
#include "error.h"
#include "kgate/kgate-plugin.h"
#include "strv.h"

typedef struct kg_flags {
    kg_strv *allow_paths; /* --allow-path, as typed */
    kg_strv *allow_hosts; /* --allow-net, as typed */
    kg_strv *publish; /* --publish, as typed (NULL: none) */
} kg_flags;

typedef struct kg_policy {
    /* Handed to plugins as is.  Its lists point into the kg_strv below. */
    kgate_policy pub;

    char *user_file; /* ~/.kgate/config.yaml (may not exist) */
    char *project_file; /* ./.kgate.yaml, or NULL when there is none */
    bool user_file_missing; /* defaults were used */

    /* Owned storage behind pub, resolved. */
    kg_strv *allow_hosts, *allow_paths, *read_paths, *deny_read, *protect_paths, *allow_sockets,
        *macos_allow_mach, *argv;
    char *project, *home, *tmpdir, *command_path;

    /* Core-only keys (plugins never see them). */
    kg_strv *deny_exec; /* as written: names or paths */
    kg_strv *mask_prefixes; /* user-added prefixes (built-ins live in mask.c) */
    kg_strv *pass_env;
    kg_strv *deny_env;
    long max_processes; /* 0: unlimited (kg_proclimit.h) */
    int audit_sink; /* kg_audit_sink (auditsink.h); the user's, always */

    /* What the one-shot flags added, resolved, for the audit line. */
    kg_strv *oneshot_paths, *oneshot_hosts;
    /* --publish, checked (publish.h): behind pub.publish, and each in its
     * canonical form for the audit line. */
    kgate_publish *publish;
    size_t n_publish;
    kg_strv *published;
} kg_policy;

/* Builds the effective policy for a command run in cwd.  home is $HOME.
 * flags may be NULL.  A missing user file means the spec's defaults; a
 * broken one, or a project file that widens anything, is an error naming
 * the file (and line:column, or the key and value).  Paths are resolved
 * (paths.h); relative deny_read/protect_paths entries are project-relative.
 * Does not check whether cwd covers home: the caller decides that. */
kg_policy *kg_policy_load(const char *home, const char *cwd, const kg_flags *flags, kg_error *err);
void kg_policy_free(kg_policy *p); /* accepts NULL */

/* Sets the command (argv as typed, and the resolved executable) in pub. */
void kg_policy_set_command(kg_policy *p, const char *const *argv, size_t argc,
                           const char *command_path);

/* The narrowing rule as a pure function, for the merge and its tests:
 * returns 0 when project may follow user for this key, or -1 with err
 * naming the key and the offending value. */
int kg_policy_check_narrowing(const kg_config *user, const kg_config *project, kg_error *err);

/* The effective list of a key by its YAML name ("deny_read"), or NULL for
 * a name that is not a list the policy keeps.  kg_policy_list_keys names
 * them all, NULL-terminated. */
extern const char *const kg_policy_list_keys[];
const kg_strv *kg_policy_list(const kg_policy *p, const char *key);

/* The merged policy as a JSON object (for doctor --json). */
void kg_policy_to_json(const kg_policy *p, UT_string *out);

#endif
