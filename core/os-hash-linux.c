/* os-hash-linux.c: SHA-256 from OpenSSL's libcrypto (see os.h).
 *
 * The audit chain (audit.c) needs a hash whose output anyone can
 * recompute with standard tools (sha256sum, python's hashlib): a
 * well-known implementation, not one of kgate's own.
 *
 * The SHA256_Init family, not SHA256() or EVP: in OpenSSL 3 both of those
 * fetch the algorithm from the provider store, and the first fetch of a
 * process loads the configuration and the default provider, 3 to 30 ms
 * measured on the build machine, on every `kgate run`.  The low-level
 * functions hash directly (first call about 0.05 ms).  They are deprecated
 * in OpenSSL 3, not removed; the deprecation warning is silenced here
 * only. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "os.h"

#include <openssl/sha.h>

void kg_os_sha256(const void *data, size_t len, unsigned char out[32])
{
    SHA256_CTX ctx;
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, data, len);
    SHA256_Final(out, &ctx);
}
