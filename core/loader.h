/* loader.h: finding and loading backend plugins. */
#ifndef KG_LOADER_H
#define KG_LOADER_H

#include <uthash.h>

#include "kgate/kgate-plugin.h"
#include "strv.h"

typedef struct kg_plugin {
    char *name; /* key */
    char *path;
    void *handle;
    /* A zeroed host-side copy of what the plugin declared, so a smaller
     * (older) kgate_backend reads as NULL methods. */
    kgate_backend be;
    uint32_t abi_minor;
    kgate_probe probe;
    int probed; /* 0: not yet; 1: probe() ran */
    int probe_failed;
    char probe_error[512];
    UT_hash_handle hh;
} kg_plugin;

typedef struct kg_registry {
    kg_plugin *by_name;  /* uthash, in load order */
    kg_strv *refusals;   /* "FILE: reason" lines, also printed on stderr */
} kg_registry;

/* Searches KGATE_PLUGIN_PATH (colon-separated) then the installed plugin
 * directory, loads every file with the platform suffix, and refuses (one
 * "kgate: plugin FILE: reason" line each, on stderr when verbose) what is
 * not a library, lacks the entry symbol, has another ABI major, a too small
 * kgate_backend, or a name already loaded.  Never fails as a whole. */
kg_registry *kg_registry_load(int verbose);
/* Loads from an explicit directory list instead of the environment. */
kg_registry *kg_registry_load_dirs(const kg_strv *dirs, int verbose);
void kg_registry_free(kg_registry *r); /* dlcloses; accepts NULL */

kg_plugin *kg_registry_find(kg_registry *r, const char *name);

#endif
