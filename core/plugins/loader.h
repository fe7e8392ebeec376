/* loader.h: finding and loading backend plugins. */
#ifndef KG_LOADER_H
#define KG_LOADER_H

#include "oom.h" /* uthash, utarray, utstring */

#include "error.h"
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
    kgate_probe_depth probe_depth; /* how hard the cached probe looked */
    UT_hash_handle hh;
} kg_plugin;

typedef struct kg_registry {
    kg_plugin *by_name; /* uthash, in load order */
    kg_strv *refusals; /* "FILE: reason" lines, also printed on stderr */
    /* The same refusals split, for JSON (a FILE may contain ": "). */
    kg_strv *refused_files;
    kg_strv *refused_reasons;
    kg_strv *searched; /* the directories looked in, in order */
    /* Input: the places a box started from here could write (plugtrust.h);
     * NULL when the caller has none to name. */
    kg_strv *untrusted;
    /* Output: the refusals ("FILE: reason") of plugin files or directories
     * that lie in one of those places: kgate run refuses to start a box
     * that could write code kgate loads. */
    kg_strv *exposed;
} kg_registry;

/* Searches KGATE_PLUGIN_PATH (colon-separated) then the installed plugin
 * directory, loads every file with the platform suffix, and refuses (one
 * "kgate: plugin FILE: reason" line each, on stderr when verbose) what is
 * not a library, lacks the entry symbol, has another ABI major, a too small
 * kgate_backend, or a name already loaded.  Never fails as a whole.
 * When verbose is 0 the lines are still recorded in refusals, and printed
 * only when KGATE_DEBUG is set. */
kg_registry *kg_registry_load(int verbose);
/* The same, also refusing what lies where a box with the extra writable
 * paths writable (the policy's allow_paths; may be NULL) could write. */
kg_registry *kg_registry_load_for(const kg_strv *writable, int verbose);
/* Loads from an explicit directory list instead of the environment. */
kg_registry *kg_registry_load_dirs(const kg_strv *dirs, int verbose);
/* The same, with the exposed places given (kg_plugtrust_exposed). */
kg_registry *kg_registry_load_dirs_in(const kg_strv *dirs, const kg_strv *untrusted, int verbose);
void kg_registry_free(kg_registry *r); /* dlcloses; accepts NULL */

kg_plugin *kg_registry_find(kg_registry *r, const char *name);

/* Hands the cached probe's state back to the backend (kgate_backend.release)
 * and forgets it: before probing again and before unloading. */
void kg_plugin_release_state(kg_plugin *p);

/* The directories kg_registry_load searches: the absolute, non-empty
 * entries of KGATE_PLUGIN_PATH, then the installed plugin directory. */
kg_strv *kg_plugin_search_path(void);

/* An empty registry (for tests and in-process backends). */
kg_registry *kg_registry_new(void);

/* Checks a backend descriptor (size, ABI major, name) and registers a
 * host copy of it under its name.  file is what messages name; handle
 * (may be NULL) is dlclose()d with the registry once this succeeds.
 * Returns NULL with err (the reason alone, no file) on refusal; the
 * caller still owns handle then. */
kg_plugin *kg_registry_add(kg_registry *r, const kgate_backend *be, const char *file, void *handle,
                           kg_error *err);

/* Records one refusal and prints it when asked to. */
void kg_registry_refuse(kg_registry *r, const char *file, const char *reason, int print);

/* Copies src into dst (dst_size bytes, the host's idea of the struct):
 * min(src->struct_size, dst_size) bytes, and zeroes the rest, so methods a
 * plugin of an older minor does not have read as NULL.  Returns the number
 * of bytes copied. */
size_t kg_backend_copy(void *dst, size_t dst_size, const kgate_backend *src);

/* The smallest kgate_backend of this major (its first release, 2.0). */
#define KG_BACKEND_MIN_SIZE \
    (offsetof(kgate_backend, release) + sizeof(((kgate_backend *)0)->release))

/* True when name is a valid backend name: 1 to 64 of [a-z0-9-]. */
int kg_backend_name_valid(const char *name);

#endif
