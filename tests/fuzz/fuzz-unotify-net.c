/* fuzz-unotify-net: what the network side of the Landlock box's supervisor
 * reads (sdk/linux/kgl-unotify-netparse.c): a resolv.conf text, a hosts
 * file text, and the filtering resolver's DNS answers (libresolv).
 *
 * The spec, checked here apart from the code: a nameserver found is a
 * dotted quad that occurs in the text; a hosts-file match is counted once
 * per line at most; an answer's question name is NUL-terminated within its
 * buffer, and every address reported comes with the answer having parsed
 * (no address from a message that does not).
 *
 * Input: byte 0 picks the parser, the rest is its input. */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-util.h"
#include "kgate/kgate-unotify.h"

static size_t n_added;

static void on_host(void *ctx, uint32_t addr)
{
    (void)ctx;
    (void)addr;
    n_added++;
}

static void on_answer(void *ctx, uint32_t addr, uint32_t ttl)
{
    (void)ctx;
    (void)addr;
    (void)ttl;
    n_added++;
}

static void check_resolv(const uint8_t *d, size_t n)
{
    char out[64];
    if (kgl_un_parse_resolv((const char *)d, n, out, sizeof out) < 0) return;
    struct in_addr a;
    FZ_CHECK(inet_pton(AF_INET, out, &a) == 1, "not an address: %s", out);
    FZ_CHECK(memmem(d, n, out, strlen(out)) != NULL, "not in the text: %s", out);
}

static void check_hosts(const uint8_t *d, size_t n)
{
    size_t lines = 1;
    for (size_t i = 0; i < n; i++) lines += d[i] == '\n';
    n_added = 0;
    int k = kgl_un_parse_hosts((const char *)d, n, "allowed.test", on_host, NULL);
    FZ_CHECK(k >= 0 && (size_t)k == n_added && n_added <= lines, "%d matches, %zu lines", k, lines);
}

static void check_answer(const uint8_t *d, size_t n)
{
    char q[1025];
    int rcode = -1;
    n_added = 0;
    memset(q, 'x', sizeof q);
    int k = kgl_un_parse_answer(d, n, q, sizeof q, &rcode, on_answer, NULL);
    if (k < 0) {
        FZ_CHECK(n_added == 0, "%zu addresses from a message that does not parse", n_added);
        return;
    }
    FZ_CHECK(memchr(q, '\0', sizeof q) != NULL, "question name not terminated");
    FZ_CHECK((size_t)k == n_added, "%d reported, %zu added", k, n_added);
    FZ_CHECK(rcode >= 0 && rcode <= 15, "rcode %d", rcode);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    switch (data[0] % 3) {
    case 0: check_resolv(data + 1, size - 1); break;
    case 1: check_hosts(data + 1, size - 1); break;
    default: check_answer(data + 1, size - 1); break;
    }
    return 0;
}
