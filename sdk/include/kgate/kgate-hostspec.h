/* kgate-hostspec.h: the one reading of an allow_hosts entry, shared by the
 * core (config files, --allow-net, `kgate network restricted`) and every
 * backend that enforces a host list, so the two can never disagree about
 * what an entry means.  It is in libkgate-common.a (pkg-config
 * kgate-plugin); the symbol is hidden, so a plugin does not export it.
 *
 * Entries, case-insensitive, stored lowercase:
 *
 *   name             exactly that DNS name, every port
 *   *.name           every name under name at any depth, not name itself
 *   name:port        that name, only that TCP port (1..65535)
 *   *.name:port      names under name, only that TCP port
 *   a.b.c.d[:port]   a literal IPv4 address (dotted quad, no leading
 *                    zeros); name holds it as written, wildcard is 0
 *   localhost:port   that TCP port of the host's own loopback (a database
 *                    or dev server of the user's); host_loopback is 1.
 *                    The port is required: the host's every local service
 *                    at once is not a host entry.  "localhost" because
 *                    RFC 6761 reserves it for the machine itself, so the
 *                    entry cannot be mistaken for a remote name.
 *
 * name follows RFC 1123 (labels of letters, digits and inner hyphens, 1..63
 * characters, 253 in all, no trailing dot); a name of digits and dots only
 * must be a valid IPv4 address (a resolver may read "1.2.3" as one).
 * Refused: "*" alone, a wildcard over a single label ("*.com" is a whole
 * top-level domain) or over an address, "*" anywhere but a leading "*.",
 * IPv6 addresses, ports that are empty, 0, above 65535, signed or with a
 * leading zero, control characters and anything else.
 *
 * A caller that needs to tell an address entry from a name may test name
 * with inet_pton(AF_INET, ...): the parser only lets an all-numeric name
 * through when it is a valid dotted quad. */
#ifndef KGATE_HOSTSPEC_H
#define KGATE_HOSTSPEC_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kgate_hostspec {
    char name[254]; /* lowercase, without the leading "*." */
    int wildcard; /* 1 for "*.name": names under name at any depth, not name itself */
    unsigned port; /* 0: every port; else only that TCP port (1..65535) */
    int host_loopback; /* 1 for "localhost:port": the host's loopback, that port */
} kgate_hostspec;

/* 0 and *out filled, or -1 with a short reason (static string) in *why. */
int kgate_hostspec_parse(const char *entry, kgate_hostspec *out, const char **why);

#ifdef __cplusplus
}
#endif

#endif
