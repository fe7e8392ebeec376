/* config.h: one YAML file (the user's config.yaml or a project's
 * .kgate.yaml) read into one layer.  A key that is absent stays absent
 * (has_* false), so the merge can tell "not said" from "said empty". */
#ifndef KG_CONFIG_H
#define KG_CONFIG_H

#include <stdbool.h>

#include "error.h"
#include "kgate/kgate-plugin.h"
#include "strv.h"

/* Every list key of the spec and the issues, in one table so the parser,
 * the merge and the narrowing rules cannot disagree about the set of keys. */
typedef enum kg_list_key {
    KG_KEY_ALLOW_HOSTS,
    KG_KEY_ALLOW_PATHS,
    KG_KEY_READ_PATHS,
    KG_KEY_DENY_READ,
    KG_KEY_DENY_EXEC,
    KG_KEY_MASK_PREFIXES,
    KG_KEY_PASS_ENV,
    KG_KEY_DENY_ENV,
    KG_KEY_PROTECT_PATHS, /* read-only inside writable roots: may add */
    KG_KEY_UNPROTECT_PATHS, /* opt a built-in protected path out: widens */
    KG_KEY_ALLOW_SOCKETS, /* host Unix sockets reachable: widens */
    KG_KEY_MACOS_ALLOW_MACH, /* mach services re-allowed on macOS: widens */
    KG_N_LIST_KEYS
} kg_list_key;

typedef struct kg_config {
    char *file; /* the path it was read from */

    bool has_network;
    kgate_network network;
    bool has_macos_profile;
    kgate_macos_profile macos_profile;
    /* The bound on the box's processes (docs/config.md): a count, or 0 for
     * "unlimited".  A project file may only lower it. */
    bool has_max_processes;
    long max_processes;
    /* Where audit records go (auditsink.h: 0 file, 1 journald, 2 syslog).
     * A project file may not change it (policy.c). */
    bool has_audit_sink;
    int audit_sink;

    bool has[KG_N_LIST_KEYS];
    kg_strv *lists[KG_N_LIST_KEYS]; /* never NULL; entries as written */
    /* The line (1-based) each entry of lists[k] was read from, lines[k][i]
     * for entry i while i < nlines[k]; 0 or absent for a hand-built entry.
     * A message about a project entry names this line, never the entry. */
    unsigned *lines[KG_N_LIST_KEYS];
    size_t nlines[KG_N_LIST_KEYS];
    /* A file the user did not type (the project's .kgate.yaml): no message
     * about it quotes its keys or values (docs/config.md, "Messages"). */
    bool quiet;
} kg_config;

/* The YAML key for a list key ("allow_hosts"). */
const char *kg_list_key_name(kg_list_key k);

/* The spec's defaults (what `kgate init` writes). */
kg_config *kg_config_defaults(void);

/* Reads file.  Unknown keys, wrong types, invalid host names, duplicate
 * keys, YAML syntax errors, anchors/aliases and files over 1 MiB are errors
 * that name "file:line:column".  Returns NULL with err on any error. */
kg_config *kg_config_load(const char *file, kg_error *err);
/* Parses a buffer; name is used in messages. */
kg_config *kg_config_parse(const char *name, const char *buf, size_t len, kg_error *err);

/* A project's .kgate.yaml, which came with the repository or was written by
 * a run: opened without following a link (O_NOFOLLOW) and without blocking,
 * then refused unless the opened file is a regular file owned by the real
 * uid with one link; read from that same descriptor.  The layer is quiet:
 * its messages name a key kgate knows and a line, never its text. */
kg_config *kg_config_load_project(const char *file, kg_error *err);
kg_config *kg_config_parse_project(const char *name, const char *buf, size_t len, kg_error *err);

/* The line entry i of list k was read from, 0 when not known. */
unsigned kg_config_entry_line(const kg_config *c, kg_list_key k, size_t i);
void kg_config_free(kg_config *c); /* accepts NULL */

/* Writes c as YAML (every key, the spec's comments) to file with mode 0600,
 * atomically (temp file + rename). */
int kg_config_write(const kg_config *c, const char *file, kg_error *err);

/* An allow_hosts entry (name, *.name, name:port, *.name:port, a.b.c.d),
 * read by the SDK's kgate_hostspec_parse, so the core and the backends
 * agree on it.  Fills norm (KG_HOST_ENTRY_MAX bytes) with its normal form:
 * lowercase, written back from the parsed parts.  false with a short
 * reason in *why (which may be NULL). */
#define KG_HOST_ENTRY_MAX 272 /* "*." + 253 + a port buffer */
bool kg_host_entry_norm(const char *entry, char norm[KG_HOST_ENTRY_MAX], const char **why);
/* Whether entry is a valid allow_hosts entry (kg_host_entry_norm). */
bool kg_host_name_valid(const char *entry);

const char *kg_network_name(kgate_network n);

/* The default of max_processes, and the largest count accepted. */
#define KG_DEFAULT_MAX_PROCESSES 4096L
#define KG_MAX_MAX_PROCESSES 4194304L

/* Overlays layer on base: every key layer sets replaces base's value (lists
 * are replaced, not joined).  How a user file sits on the defaults. */
void kg_config_apply(kg_config *base, const kg_config *layer);

#endif
