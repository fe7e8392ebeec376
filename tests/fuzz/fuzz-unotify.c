/* fuzz-unotify: what the Landlock box's supervisor parses from the program
 * (sdk/linux/kgl-unotify-parse.c): a path copied from its memory, split
 * into directory and last name; a notified call's number and arguments;
 * the umask line of its /proc/PID/status.
 *
 * The spec, checked here apart from the code: the last name is never
 * empty, has no '/', is at most 255 bytes, and the directory followed by
 * it (and the slashes that were stripped) is the path again; a call is
 * decoded only when its number is one the filter notifies, and then every
 * path it names is an argument it was given; a umask is 0..0777.
 *
 * Input: byte 0 picks the parser, the rest is its input. */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "fuzz-util.h"
#include "kgate/kgate-unotify.h"

static void check_split(const uint8_t *d, size_t n)
{
    char dir[4096], leaf[256];
    int slash = -1;
    int e = kgl_un_split((const char *)d, n, dir, sizeof dir, leaf, sizeof leaf, &slash);
    if (e) return;
    size_t len = strnlen((const char *)d, n), ll = strlen(leaf), dl = strlen(dir);
    FZ_CHECK(ll > 0 && ll <= 255, "leaf length %zu", ll);
    FZ_CHECK(!strchr(leaf, '/') || !strcmp(dir, "/"), "slash in leaf %s", leaf);
    if (!strcmp(dir, "/") && !strcmp(leaf, ".")) return; /* the root itself */
    /* dir + leaf + stripped slashes == path: dir is "." when the path
     * had no '/' before its last name, else the path up to it (ending in
     * '/'). */
    size_t at = 0;
    if (strcmp(dir, ".") != 0) {
        at = dl;
        FZ_CHECK(dl <= len && memcmp(d, dir, dl) == 0 && dir[dl - 1] == '/',
                 "directory %s is not the path's start", dir);
    }
    FZ_CHECK(at + ll <= len, "split longer than the path");
    FZ_CHECK(memcmp(d + at, leaf, ll) == 0, "leaf not where it was");
    for (size_t i = at + ll; i < len; i++) FZ_CHECK(d[i] == '/', "lost bytes after the leaf");
    FZ_CHECK(slash == (at + ll < len), "slash flag %d", slash);
}

static void check_decode(const uint8_t *d, size_t n)
{
    uint64_t a[6] = {0};
    int nr = 0;
    if (n < 2) return;
    nr = d[0] | (d[1] << 8);
    memcpy(a, d + 2, n - 2 < sizeof a ? n - 2 : sizeof a);
    kgl_un_call c;
    if (kgl_un_decode(nr, a, &c) < 0) return;
    FZ_CHECK(c.kind != KGL_UN_NONE, "decoded to nothing");
    for (int i = 0; i < 2; i++) {
        if (!c.path[i]) continue;
        int given = 0;
        for (int k = 0; k < 6; k++) given |= a[k] == c.path[i];
        FZ_CHECK(given, "path %d not an argument", i);
    }
    FZ_CHECK(c.kind != KGL_UN_UNLINK || (c.flags & ~(uint64_t)AT_REMOVEDIR) == 0,
             "unlink flags %llx", (unsigned long long)c.flags);
}

static void check_umask(const uint8_t *d, size_t n)
{
    int m = kgl_un_parse_umask((const char *)d, n);
    FZ_CHECK(m >= -1 && m <= 07777, "umask %d", m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    switch (data[0] % 3) {
    case 0: check_split(data + 1, size - 1); break;
    case 1: check_decode(data + 1, size - 1); break;
    default: check_umask(data + 1, size - 1); break;
    }
    return 0;
}
