/* fuzz-util.h: what the libFuzzer targets share.  A failed check prints
 * what was expected and aborts, which libFuzzer reports as a crash and
 * saves the input for. */
#ifndef KG_FUZZ_UTIL_H
#define KG_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FZ_CHECK(cond, ...)                                                                \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "fuzz check failed: %s (%s:%d): ", #cond, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A small deterministic generator, seeded from the input, for choices the
 * input does not spell out (chunk sizes). */
static inline uint32_t fz_rand(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*state >> 33);
}

#endif
