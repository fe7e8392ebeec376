/* os-hash-linux.c: SHA-256 from libmd (see os.h).
 *
 * The audit chain (audit.c) needs a hash whose output anyone can
 * recompute with standard tools (sha256sum, python's hashlib): a
 * well-known implementation, not one of kgate's own.  libmd is the BSDs'
 * message-digest library as Debian ships it (libmd0, 47 KB; libbsd
 * depends on it, so most systems have it already).
 *
 * Not OpenSSL's libcrypto: every `kgate run` would map and relocate its
 * 4.5 MB at exec time, measured here as `kgate --version` going from 3.5
 * to 9.8 ms together with libsystemd (see auditsink.c for that one), a
 * cost paid on every command an agent runs (docs/performance.md).  libmd
 * costs no measurable time at start-up. */
#include "os.h"

#include <sha2.h>

void kg_os_sha256(const void *data, size_t len, unsigned char out[32])
{
    SHA2_CTX ctx;
    SHA256Init(&ctx);
    SHA256Update(&ctx, data, len);
    SHA256Final(out, &ctx);
}
