/* mask.h: the secret mask on the program's stdout and stderr.  A known
 * prefix at a word boundary followed by at least 16 token characters
 * ([A-Za-z0-9_-]) is written as the prefix followed by "***".  A token split
 * across two feeds is still masked: the mask holds back the bytes that could
 * still become one. */
#ifndef KG_MASK_H
#define KG_MASK_H

#include <stddef.h>

#include "strv.h"

typedef struct kg_mask kg_mask;

/* Called with masked output, in order. */
typedef int (*kg_mask_sink)(void *ctx, const char *buf, size_t len);

/* extra: user prefixes beside the built-in ones (may be NULL). */
kg_mask *kg_mask_new(const kg_strv *extra, kg_mask_sink sink, void *ctx);
void kg_mask_free(kg_mask *m); /* accepts NULL */

/* Feeds len bytes; returns 0, or -1 when the sink failed. */
int kg_mask_feed(kg_mask *m, const char *buf, size_t len);
/* End of stream: writes whatever was held back. */
int kg_mask_flush(kg_mask *m);

/* Bytes held back right now, waiting for the next feed (for tests: it
 * stays below the longest prefix + 16 whatever is fed). */
size_t kg_mask_held(const kg_mask *m);

/* Secrets replaced so far (accepts NULL: 0). */
size_t kg_mask_count(const kg_mask *m);

/* Makes m scan with the portable vector code even where the CPU has a
 * faster one (AVX2): for the tests and the benchmark, which compare the
 * two.  Output is the same either way. */
void kg_mask_portable(kg_mask *m);

/* The built-in prefixes, NULL-terminated. */
extern const char *const kg_mask_builtin_prefixes[];

#endif
