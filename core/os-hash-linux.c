/* os-hash-linux.c: SHA-256 from OpenSSL's libcrypto (see os.h).
 *
 * The audit chain (audit.c) needs a hash whose output anyone can
 * recompute with standard tools (sha256sum, python's hashlib): a
 * well-known implementation, not one of kgate's own. */
#include "os.h"

#include <openssl/sha.h>

void kg_os_sha256(const void *data, size_t len, unsigned char out[32])
{
    /* The one-shot SHA256() is not deprecated in OpenSSL 3 (the
     * SHA256_Init family is), and needs no context allocation. */
    SHA256(data, len, out);
}
