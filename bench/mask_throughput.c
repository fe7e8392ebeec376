/* mask_throughput.c: how fast the secret mask passes bytes, by kind of
 * data, against a plain memcpy of the same bytes.  Not a test: a number for
 * the closing note of the bubblewrap issue.
 *
 *   ninja -C build bench/mask_throughput && build/bench/mask_throughput [MiB [KIND [portable]]]
 *
 * KIND picks one kind of data ("all" for every one, the default);
 * "portable" times the portable scan where the CPU has a faster one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mask.h"

static char *dst;
static size_t dst_at;

static int sink(void *ctx, const char *buf, size_t len)
{
    (void)ctx;
    /* Touch the bytes the way a write(2) would read them. */
    memcpy(dst + dst_at, buf, len);
    dst_at += len;
    return 0;
}

static double now(void)
{
    struct timespec ts;
    /* CPU time, not wall time: the machines this runs on are shared, and
     * time spent waiting for a core is not the mask's. */
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill(char *buf, size_t n, const char *kind)
{
    unsigned seed = 7;
    static const char words[] = "the build of package skeleton passed with 3 warnings; see log at "
                                "/tmp/x/y.txt for details. sorting hashes: 4f2a9c in src/git.c "
                                "(github: org/repo) npm install done in 12.3s - snapshot ok\n";
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i++) {
        if (strcmp(kind, "zeros") == 0)
            buf[i] = 0;
        else if (strcmp(kind, "random") == 0)
            buf[i] = (char)rand_r(&seed);
        else if (strcmp(kind, "base64") == 0)
            buf[i] = (i % 77 == 76) ? '\n' : b64[rand_r(&seed) % 64];
        else
            buf[i] = words[i % (sizeof words - 1)];
    }
    if (strcmp(kind, "text+secrets") == 0)
        for (size_t i = 4096; i + 64 < n; i += 4096)
            memcpy(buf + i, " ghp_0123456789abcdefghij ", 26);
    /* grep --color output: a highlighted match on every line, and a
     * highlighted token now and then. */
    if (strcmp(kind, "coloured") == 0) {
        static const char hl[] = "\x1b[01;31m\x1b[Kpassed\x1b[m\x1b[K";
        for (size_t i = 40; i + 64 < n; i += 160) memcpy(buf + i, hl, sizeof hl - 1);
        for (size_t i = 4096 + 100; i + 64 < n; i += 4096)
            memcpy(buf + i, " \x1b[01;31m\x1b[Kghp_\x1b[m\x1b[K0123456789abcdefghij ", 40);
    }
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 256;
    const char *only = argc > 2 ? argv[2] : "all";
    int portable = argc > 3 && strcmp(argv[3], "portable") == 0;
    size_t n = mib << 20, chunk = 64 * 1024;
    char *src = malloc(n);
    dst = malloc(n + n / 4);
    if (!src || !dst) return 1;
    /* Fault the sink's pages in now, not in the first timing. */
    memset(dst, 1, n + n / 4);
    static const char *const kinds[] = {"zeros", "random",       "base64",
                                        "text",  "text+secrets", "coloured"};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        if (strcmp(only, "all") != 0 && strcmp(only, kinds[k]) != 0) continue;
        fill(src, n, kinds[k]);
        double t0 = now();
        memcpy(dst, src, n);
        double t1 = now();
        kg_mask *m = kg_mask_new(NULL, sink, NULL);
        if (!m) return 1;
        if (portable) kg_mask_portable(m);
        dst_at = 0;
        double t2 = now();
        for (size_t at = 0; at < n; at += chunk)
            kg_mask_feed(m, src + at, n - at < chunk ? n - at : chunk);
        kg_mask_flush(m);
        double t3 = now();
        kg_mask_free(m);
        printf("%-13s memcpy %7.0f MB/s   mask %7.0f MB/s\n", kinds[k], (double)n / 1e6 / (t1 - t0),
               (double)n / 1e6 / (t3 - t2));
    }
    free(src);
    free(dst);
    return 0;
}
