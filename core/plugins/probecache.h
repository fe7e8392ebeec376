/* probecache.h: quick probe results kept from one `kgate run` to the next,
 * for as long as nothing they depend on has changed (docs/plugins.md,
 * "The probe cache").
 *
 * A cache only skips work: an entry that cannot be trusted (wrong owner or
 * mode, a bad parse, a key that does not match this process's situation
 * now) is ignored and the probe runs as without a cache. */
#ifndef KG_PROBECACHE_H
#define KG_PROBECACHE_H

#include "kgate/kgate-plugin.h"

typedef struct kg_probecache kg_probecache;

/* A cache in dir (the user's ~/.kgate/cache); never fails (out of memory
 * ends in kg_oom).  Nothing is read before the first get.  With KGATE_DEBUG
 * (kg_debug) each get, put and forget says what it did on stderr. */
kg_probecache *kg_probecache_new(const char *dir);
void kg_probecache_free(kg_probecache *c); /* accepts NULL */

/* 1 and *out filled (state NULL) when the entry of the plugin name, loaded
 * from the file path, is there, trusted and made in this same situation;
 * else 0 and *out untouched. */
int kg_probecache_get(kg_probecache *c, const char *name, const char *path, kgate_probe *out);
/* Records a QUICK probe that returned 0 and keeps no state.  Failing to
 * write is not an error: the next run probes. */
void kg_probecache_put(kg_probecache *c, const char *name, const char *path, const kgate_probe *in);
/* Drops the entry of name (a launch failed: the next run probes). */
void kg_probecache_forget(kg_probecache *c, const char *name);

/* The situation key (for tests): what every entry was made under.  NULL
 * when it cannot be known here (then nothing is cached). */
const char *kg_probecache_key(kg_probecache *c);

#endif
