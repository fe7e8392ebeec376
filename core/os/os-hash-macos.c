/* os-hash-macos.c: SHA-256 from CommonCrypto, part of libSystem (see
 * os.h): nothing to link beyond what every macOS program links. */
#include "os.h"

#include <CommonCrypto/CommonDigest.h>

void kg_os_sha256(const void *data, size_t len, unsigned char out[32])
{
    /* CC_LONG is 32 bits: feed larger inputs in pieces (an audit record
     * is far smaller, but the function must not lie for any length). */
    CC_SHA256_CTX ctx;
    const unsigned char *p = data;
    CC_SHA256_Init(&ctx);
    while (len > 0) {
        CC_LONG n = len > 0x40000000u ? 0x40000000u : (CC_LONG)len;
        CC_SHA256_Update(&ctx, p, n);
        p += n;
        len -= n;
    }
    CC_SHA256_Final(out, &ctx);
}
