/* publish.h: reading `kgate run --publish [ADDR:]HOSTPORT:PORT`. */
#ifndef KG_PUBLISH_H
#define KG_PUBLISH_H

#include <stddef.h>

#include "error.h"
#include "kgate/kgate-plugin.h"
#include "strv.h"

/* The address a spec without one gets: the host's loopback. */
#define KG_PUBLISH_DEFAULT_ADDR "127.0.0.1"

/* Reads one spec into *out.  ADDR, when given, is a numeric IPv4 loopback
 * address (127.0.0.0/8): a name, an IPv6 address or any other address is
 * refused, so a port is never offered beyond this machine.  Both ports are
 * decimal, 1..65535.  Returns 0, or -1 with err saying what is wrong (the
 * spec quoted, control bytes shown as '?'). */
int kg_publish_parse(const char *spec, kgate_publish *out, kg_error *err);

/* Reads every spec of specs into a new array (*out, caller frees; NULL
 * when there are none) and appends each canonical form
 * ("127.0.0.1:8080:80") to canon, for the audit line.  Two specs with the
 * same address and host port are refused: only one can listen there.
 * Returns 0, or -1 with err (nothing allocated). */
int kg_publish_list(const kg_strv *specs, kgate_publish **out, size_t *n, kg_strv *canon,
                    kg_error *err);

#endif
