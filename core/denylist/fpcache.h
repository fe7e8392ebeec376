/* fpcache.h: 64-bit content fingerprints of files, cached in a directory
 * (~/.kgate/cache/exec-fingerprints) between runs.  Used by the exec deny
 * list to tell a copy of a denied binary from another file of the same size.
 * A fingerprint is not proof: a match must be confirmed with
 * kg_fp_same_content(). */
#ifndef KG_FPCACHE_H
#define KG_FPCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

typedef struct kg_fpcache kg_fpcache;

/* dir may be NULL (nothing is read or written); it is created (0700, one
 * level) when the cache is first saved. */
kg_fpcache *kg_fpcache_new(const char *dir);
/* Saves the cache if it changed, then frees it.  Accepts NULL. */
void kg_fpcache_free(kg_fpcache *c);

/* The fingerprint of path, whose stat (st) the caller just took.  The
 * file is opened once: its fstat() is the cache key (path, device, inode,
 * size, mode, mtime and ctime in ns) and its bytes, read through the same
 * descriptor, the hash; any write changes ctime, so a cached value never
 * answers for other bytes or for a later file.  -1 when the file cannot be
 * read (or is written to while it is read), -2 when the path no longer
 * holds the file st describes (the hash is then of what it holds now, and
 * cached under that file's own key). */
int kg_fpcache_get(kg_fpcache *c, const char *path, const struct stat *st, uint64_t *hash);

/* Writes the cache file (atomically, 0600) when something was added.
 * Failing to write is not an error: the cache is only a shortcut. */
void kg_fpcache_save(kg_fpcache *c);
/* Forgets what is held in memory; the next lookup reads the file again. */
void kg_fpcache_forget(kg_fpcache *c);

/* True when both files can be read and hold the same bytes. */
bool kg_fp_same_content(const char *a, const char *b);
/* The fingerprint function over a buffer. */
uint64_t kg_fp_hash_mem(const void *p, size_t len);

#endif
