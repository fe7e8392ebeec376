/* plugin-check-elf.c: the ELF half of plugin-check.h.
 *
 * Read with pread() from the file (or from memory for the tests), never
 * mmap(), so a file that shrinks while it is read gives a short read, not a
 * SIGBUS of its own.  The layout is decoded by hand, not through <elf.h>,
 * so the same code builds and is tested on every system.
 *
 * What the dynamic loader touches before it can fail politely, and so what
 * is checked: the ELF header; the program header table; every segment's
 * bytes in the file; that the segments the loader reads in memory
 * (PT_DYNAMIC, notes, PT_TLS's image, PT_PHDR) lie in a loaded segment; and
 * that the dynamic section's tables (strings, symbols, hashes, relocations,
 * init and fini arrays, versions) lie in loaded, file-backed memory.  The
 * section header table, which the loader does not need, is checked too: it
 * is normally the last thing in the file, so a file cut anywhere loses it. */
#include "plugin-check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PHNUM 512
#define MAX_DYN 65536

typedef struct src {
    int fd; /* -1: mem */
    const unsigned char *mem;
    uint64_t size;
} src;

/* 0 when n bytes at off exist and were read. */
static int read_at(const src *s, uint64_t off, void *buf, size_t n)
{
    if (off > s->size || n > s->size - off) return -1;
    if (!s->mem) {
        size_t got = 0;
        while (got < n) {
            ssize_t r = pread(s->fd, (char *)buf + got, n - got, (off_t)(off + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return -1; /* shrunk under us, or an I/O error */
            got += (size_t)r;
        }
        return 0;
    }
    memcpy(buf, s->mem + off, n);
    return 0;
}

typedef struct elf {
    const src *s;
    bool is64, big;
    uint64_t phoff, shoff;
    unsigned phentsize, phnum, shentsize, shnum;
} elf;

static uint64_t get(const elf *e, const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v |= (uint64_t)p[e->big ? n - 1 - i : i] << (8 * i);
    return v;
}

typedef struct seg {
    uint32_t type;
    uint64_t off, vaddr, filesz, memsz;
} seg;

enum {
    PT_LOAD_ = 1,
    PT_DYNAMIC_ = 2,
    PT_NOTE_ = 4,
    PT_PHDR_ = 6,
    PT_TLS_ = 7,
    PT_GNU_PROPERTY_ = 0x6474e553
};

/* a + b, or false on overflow. */
static bool add_ok(uint64_t a, uint64_t b, uint64_t *r)
{
    *r = a + b;
    return *r >= a;
}

/* The loaded segment holding [addr, addr+n) in memory; file_backed asks for
 * bytes that come from the file (not the zero-filled tail). */
static const seg *in_load(const seg *sg, size_t nsg, uint64_t addr, uint64_t n, bool file_backed)
{
    uint64_t end;
    if (!add_ok(addr, n, &end)) return NULL;
    for (size_t i = 0; i < nsg; i++) {
        if (sg[i].type != PT_LOAD_) continue;
        uint64_t lim;
        if (!add_ok(sg[i].vaddr, file_backed ? sg[i].filesz : sg[i].memsz, &lim)) continue;
        if (addr >= sg[i].vaddr && end <= lim) return &sg[i];
    }
    return NULL;
}

#define FAIL(...) (snprintf(why, len, __VA_ARGS__), -1)

/* The dynamic section, read from the file at the segment's offset. */
static int check_dynamic(const elf *e, const seg *dyn, const seg *sg, size_t nsg, char *why,
                         size_t len)
{
    size_t esz = e->is64 ? 16 : 8;
    uint64_t n = dyn->filesz / esz;
    if (n > MAX_DYN) return FAIL("dynamic section of %llu entries", (unsigned long long)n);
    /* Pointer tags and the size tag that goes with each (0: none). */
    static const struct {
        int64_t tag, size_tag;
        const char *name;
    } tabs[] = {
        {5, 10, "string table"}, /* DT_STRTAB, DT_STRSZ */
        {6, 0, "symbol table"}, /* DT_SYMTAB */
        {4, 0, "hash table"}, /* DT_HASH */
        {0x6ffffef5, 0, "GNU hash table"},
        {7, 8, "relocations"}, /* DT_RELA, DT_RELASZ */
        {17, 18, "relocations"}, /* DT_REL, DT_RELSZ */
        {36, 35, "relative relocations"}, /* DT_RELR, DT_RELRSZ */
        {23, 2, "PLT relocations"}, /* DT_JMPREL, DT_PLTRELSZ */
        {25, 27, "init array"}, /* DT_INIT_ARRAY(SZ) */
        {26, 28, "fini array"}, /* DT_FINI_ARRAY(SZ) */
        {32, 33, "preinit array"}, /* DT_PREINIT_ARRAY(SZ) */
        {12, 0, "init function"}, /* DT_INIT */
        {13, 0, "fini function"}, /* DT_FINI */
        {0x6ffffff0, 0, "symbol versions"},
        {0x6ffffffc, 0, "version definitions"},
        {0x6ffffffe, 0, "version needs"},
    };
    enum { NT = sizeof tabs / sizeof tabs[0] };
    uint64_t val[NT] = {0}, size[NT] = {0};
    bool has[NT] = {false}, has_size[NT] = {false};
    uint64_t strsz = 0;
    bool has_strsz = false;
    uint64_t str_refs[64];
    size_t n_refs = 0;
    bool ended = false;
    for (uint64_t i = 0; i < n && !ended; i++) {
        unsigned char b[16];
        if (read_at(e->s, dyn->off + i * esz, b, esz) < 0) return FAIL("dynamic section cut short");
        int64_t tag = (int64_t)get(e, b, esz / 2);
        if (!e->is64) tag = (int32_t)tag;
        uint64_t v = get(e, b + esz / 2, esz / 2);
        if (tag == 0) ended = true; /* DT_NULL */
        if (tag == 10) strsz = v, has_strsz = true;
        /* DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH: offsets into strings. */
        if ((tag == 1 || tag == 14 || tag == 15 || tag == 29) && n_refs < 64)
            str_refs[n_refs++] = v;
        for (size_t t = 0; t < NT; t++) {
            if (tag == tabs[t].tag) val[t] = v, has[t] = true;
            if (tabs[t].size_tag && tag == tabs[t].size_tag) size[t] = v, has_size[t] = true;
        }
    }
    if (!ended) return FAIL("dynamic section without its end marker");
    for (size_t t = 0; t < NT; t++) {
        if (!has[t]) continue;
        /* A table without a size is checked for its first byte; the loader
         * finds its end from other entries, which are checked in turn. */
        uint64_t sz = has_size[t] ? size[t] : 1;
        if (!in_load(sg, nsg, val[t], sz, true))
            return FAIL("the %s (0x%llx, %llu bytes) is outside the file's loaded data",
                        tabs[t].name, (unsigned long long)val[t], (unsigned long long)sz);
    }
    if (n_refs && !has_strsz) return FAIL("names without a string table size");
    for (size_t i = 0; i < n_refs; i++)
        if (str_refs[i] >= strsz) return FAIL("a library name outside the string table");
    return 0;
}

static int check(const src *s, char *why, size_t len)
{
    unsigned char id[64];
    if (s->size < 16 || read_at(s, 0, id, 16) < 0 || memcmp(id, "\177ELF", 4) != 0)
        return FAIL("not an ELF file");
    elf e = {.s = s, .is64 = id[4] == 2, .big = id[5] == 2};
    if (id[4] != 1 && id[4] != 2) return FAIL("unknown ELF class %u", id[4]);
    if (id[5] != 1 && id[5] != 2) return FAIL("unknown ELF byte order %u", id[5]);
    if (e.is64 != (sizeof(void *) == 8))
        return FAIL("a %d-bit library, kgate is %d-bit", e.is64 ? 64 : 32, (int)sizeof(void *) * 8);
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__)
    if (e.big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
        return FAIL("a %s-endian library on a %s-endian machine", e.big ? "big" : "little",
                    e.big ? "little" : "big");
#endif
    if (id[6] != 1) return FAIL("unknown ELF version %u", id[6]);
    size_t ehsize = e.is64 ? 64 : 52;
    if (read_at(s, 0, id, ehsize) < 0)
        return FAIL("cut short: %llu bytes, not even an ELF header", (unsigned long long)s->size);
    if (get(&e, id + 16, 2) != 3)
        return FAIL("not a shared library (ELF type %llu)",
                    (unsigned long long)get(&e, id + 16, 2));
    const unsigned char *h = id + (e.is64 ? 32 : 28);
    size_t w = e.is64 ? 8 : 4;
    e.phoff = get(&e, h, w);
    e.shoff = get(&e, h + w, w);
    const unsigned char *h2 = id + (e.is64 ? 54 : 42);
    e.phentsize = (unsigned)get(&e, h2, 2);
    e.phnum = (unsigned)get(&e, h2 + 2, 2);
    e.shentsize = (unsigned)get(&e, h2 + 4, 2);
    e.shnum = (unsigned)get(&e, h2 + 6, 2);
    size_t phsz = e.is64 ? 56 : 32;
    if (e.phentsize != phsz) return FAIL("program headers of %u bytes", e.phentsize);
    if (e.phnum == 0 || e.phnum > MAX_PHNUM) return FAIL("%u program headers", e.phnum);
    uint64_t end;
    if (!add_ok(e.phoff, (uint64_t)e.phnum * phsz, &end) || end > s->size)
        return FAIL("cut short: %llu bytes, its program headers end at %llu",
                    (unsigned long long)s->size, (unsigned long long)end);
    if (e.shoff) {
        uint64_t n = e.shnum ? e.shnum : 1; /* 0: the count is in entry 0 */
        if (e.shentsize != (e.is64 ? 64 : 40))
            return FAIL("section headers of %u bytes", e.shentsize);
        if (!add_ok(e.shoff, n * e.shentsize, &end) || end > s->size)
            return FAIL("cut short: %llu bytes, its section headers end at %llu",
                        (unsigned long long)s->size, (unsigned long long)end);
    }

    seg sg[MAX_PHNUM];
    size_t nload = 0;
    const seg *dyn = NULL;
    for (unsigned i = 0; i < e.phnum; i++) {
        unsigned char p[56];
        if (read_at(s, e.phoff + (uint64_t)i * phsz, p, phsz) < 0)
            return FAIL("cannot read program header %u", i);
        seg *g = &sg[i];
        g->type = (uint32_t)get(&e, p, 4);
        if (e.is64) {
            g->off = get(&e, p + 8, 8);
            g->vaddr = get(&e, p + 16, 8);
            g->filesz = get(&e, p + 32, 8);
            g->memsz = get(&e, p + 40, 8);
        } else {
            g->off = get(&e, p + 4, 4);
            g->vaddr = get(&e, p + 8, 4);
            g->filesz = get(&e, p + 16, 4);
            g->memsz = get(&e, p + 20, 4);
        }
        if (g->type == 0) continue; /* PT_NULL */
        if (!add_ok(g->off, g->filesz, &end) || end > s->size)
            return FAIL("cut short: %llu bytes, segment %u ends at %llu",
                        (unsigned long long)s->size, i, (unsigned long long)end);
        if (g->type == PT_LOAD_) {
            if (g->filesz > g->memsz)
                return FAIL("segment %u has more bytes in the file than in memory", i);
            if (!add_ok(g->vaddr, g->memsz, &end))
                return FAIL("segment %u wraps around the address space", i);
            nload++;
        }
        if (g->type == PT_DYNAMIC_) {
            if (dyn) return FAIL("two dynamic sections");
            dyn = g;
        }
    }
    if (!nload) return FAIL("no loadable segment");
    for (unsigned i = 0; i < e.phnum; i++) {
        const seg *g = &sg[i];
        bool in_memory = g->type == PT_DYNAMIC_ || g->type == PT_NOTE_ || g->type == PT_PHDR_ ||
                         g->type == PT_TLS_ || g->type == PT_GNU_PROPERTY_;
        if (in_memory && g->filesz && !in_load(sg, e.phnum, g->vaddr, g->filesz, true))
            return FAIL("segment %u is read in memory but not loaded", i);
    }
    if (!dyn) return FAIL("no dynamic section: not a shared library");
    return check_dynamic(&e, dyn, sg, e.phnum, why, len);
}

int kg_elf_check_mem(const void *data, size_t size, char *why, size_t len)
{
    src s = {.fd = -1, .mem = data, .size = size};
    return check(&s, why, len);
}

#if !defined(__APPLE__) /* macOS: plugin-check-macos.c */
int kg_plugin_file_check(const char *path, char *why, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return FAIL("cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return FAIL("not a regular file");
    }
    src s = {.fd = fd, .size = (uint64_t)st.st_size};
    int r = check(&s, why, len);
    close(fd);
    return r;
}
#endif
