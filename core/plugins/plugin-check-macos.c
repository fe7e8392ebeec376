/* plugin-check-macos.c: the Mach-O half of plugin-check.h (see there).
 * The check itself builds everywhere (and is tested on Linux with Mach-O
 * files made by the test); kg_plugin_file_check is this one on macOS only.
 *
 * A thin 64-bit Mach-O file, or a universal ("fat") file of such slices:
 * the header, every load command inside the commands area, and every
 * segment's file bytes inside the file (or slice). */
#include "plugin-check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAIL(...) (snprintf(why, len, __VA_ARGS__), -1)

typedef struct src {
    int fd; /* -1: mem */
    const unsigned char *mem;
} src;

static int read_at(const src *sr, uint64_t size, uint64_t off, void *buf, size_t n)
{
    if (off > size || n > size - off) return -1;
    if (sr->fd < 0) {
        memcpy(buf, sr->mem + off, n);
        return 0;
    }
    int fd = sr->fd;
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const unsigned char *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }
static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

/* One thin image at [base, base+size) of the file. */
static int check_thin(const src *sr, uint64_t fsize, uint64_t base, uint64_t size, char *why,
                      size_t len)
{
    unsigned char h[32];
    if (size < 32 || read_at(sr, fsize, base, h, 32) < 0)
        return FAIL("cut short: no Mach-O header");
    if (le32(h) != 0xfeedfacf) return FAIL("not a 64-bit Mach-O file");
    uint32_t ncmds = le32(h + 16), sizeofcmds = le32(h + 20);
    if ((uint64_t)32 + sizeofcmds > size)
        return FAIL("cut short: its load commands end past the end of the file");
    uint64_t off = 32, cend = 32 + (uint64_t)sizeofcmds;
    for (uint32_t i = 0; i < ncmds; i++) {
        unsigned char lc[72];
        if (off + 8 > cend || read_at(sr, fsize, base + off, lc, 8) < 0)
            return FAIL("load command %u outside the commands area", i);
        uint32_t cmd = le32(lc), cmdsize = le32(lc + 4);
        if (cmdsize < 8 || off + cmdsize > cend)
            return FAIL("load command %u of %u bytes", i, cmdsize);
        if (cmd == 0x19) { /* LC_SEGMENT_64 */
            if (cmdsize < 72 || read_at(sr, fsize, base + off, lc, 72) < 0)
                return FAIL("segment command %u cut short", i);
            uint64_t fileoff = le64(lc + 40), filesize = le64(lc + 48);
            if (fileoff > size || filesize > size - fileoff)
                return FAIL("cut short: segment %u ends past the end of the file", i);
        }
        off += cmdsize;
    }
    return 0;
}

static int check_file(const src *sr, uint64_t fsize, char *why, size_t len)
{
    unsigned char m[8];
    if (read_at(sr, fsize, 0, m, 8) < 0) return FAIL("not a Mach-O file");
    if (be32(m) != 0xcafebabe) return check_thin(sr, fsize, 0, fsize, why, len);
    /* universal: a big-endian table of slices */
    uint32_t n = be32(m + 4);
    if (n == 0 || n > 16) return FAIL("universal file of %u slices", n);
    for (uint32_t i = 0; i < n; i++) {
        unsigned char a[20];
        if (read_at(sr, fsize, 8 + (uint64_t)i * 20, a, 20) < 0)
            return FAIL("cut short: slice table");
        uint64_t off = be32(a + 8), size = be32(a + 12);
        if (off > fsize || size > fsize - off)
            return FAIL("cut short: slice %u ends past the end of the file", i);
        if (check_thin(sr, fsize, off, size, why, len) < 0) return -1;
    }
    return 0;
}

int kg_macho_check_mem(const void *data, size_t size, char *why, size_t len)
{
    src s = {.fd = -1, .mem = data};
    return check_file(&s, size, why, len);
}

#if defined(__APPLE__)
int kg_plugin_file_check(const char *path, char *why, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return FAIL("cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return FAIL("not a regular file");
    }
    src s = {.fd = fd};
    int r = check_file(&s, (uint64_t)st.st_size, why, len);
    close(fd);
    return r;
}
#endif
