/* fpcache.c: content fingerprints of executable files, cached on disk so
 * that the deny list's copy check stays cheap from one run to the next.
 * The cache is only ever a shortcut: every answer it gives is for one exact
 * file state, and a file it cannot trust is rebuilt. */
#include "fpcache.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "oom.h" /* uthash, utarray, utstring */

#include "os.h"

/* macOS spells the timestamps of struct stat its own way (os.h). */
#define MTIM(st) (kg_os_stat_mtime(st))
#define CTIM(st) (kg_os_stat_ctime(st))

#define CACHE_MAX_ENTRIES 4096
#define CACHE_NAME "exec-fingerprints"
#define CACHE_MAGIC "kgate-exec-fingerprints 1\n"

typedef struct fp_entry {
    char *key;
    uint64_t hash;
    bool used;
    UT_hash_handle hh;
} fp_entry;

struct kg_fpcache {
    char *dir;
    fp_entry *map;
    bool loaded, dirty;
};

static char *strdup_or_die(const char *s)
{
    char *r = strdup(s);
    if (!r) kg_oom(); /* the core treats allocation failure as fatal */
    return r;
}

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

/* A 64-bit hash over 8-byte words in two lanes.  Not cryptographic: a
 * match is always confirmed by a byte compare, so it only has to be fast
 * and spread well. */
typedef struct {
    uint64_t a, b, n;
    unsigned char tail[8];
    size_t nt;
} hasher;

static void h_init(hasher *h)
{
    h->a = 0x243f6a8885a308d3ULL;
    h->b = 0x13198a2e03707344ULL;
    h->n = 0;
    h->nt = 0;
}

static inline void h_word(hasher *h, uint64_t w)
{
    if (h->n++ & 1)
        h->b = rotl64(h->b ^ (w * 0x87c37b91114253d5ULL), 31) * 0x4cf5ad432745937fULL;
    else
        h->a = rotl64(h->a ^ (w * 0x4cf5ad432745937fULL), 27) * 0x87c37b91114253d5ULL;
}

static void h_update(hasher *h, const unsigned char *p, size_t len)
{
    while (len && h->nt) {
        h->tail[h->nt++] = *p++;
        len--;
        if (h->nt == 8) {
            uint64_t w;
            memcpy(&w, h->tail, 8);
            h_word(h, w);
            h->nt = 0;
        }
    }
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h_word(h, w);
    }
    while (len--) h->tail[h->nt++] = *p++;
}

static uint64_t h_final(hasher *h, uint64_t total)
{
    uint64_t w = 0;
    memcpy(&w, h->tail, h->nt);
    h_word(h, w ^ ((uint64_t)h->nt << 56));
    return fmix64(h->a ^ rotl64(h->b, 17) ^ total);
}

static uint64_t hash_mem(const void *p, size_t len)
{
    hasher h;
    h_init(&h);
    h_update(&h, p, len);
    return h_final(&h, len);
}

/* Hashes what fd holds, from its start. */
static int hash_fd(int fd, uint64_t *out)
{
    hasher h;
    h_init(&h);
    unsigned char buf[65536];
    uint64_t total = 0;
    off_t at = 0;
    for (;;) {
        ssize_t r = pread(fd, buf, sizeof buf, at);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        h_update(&h, buf, (size_t)r);
        total += (uint64_t)r;
        at += r;
    }
    *out = h_final(&h, total);
    return 0;
}

/* The identity of one state of a file: a later file, or the same file
 * with other bytes, differs in at least one of these. */
static bool same_state(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mode == b->st_mode && MTIM(a).tv_sec == MTIM(b).tv_sec &&
           MTIM(a).tv_nsec == MTIM(b).tv_nsec && CTIM(a).tv_sec == CTIM(b).tv_sec &&
           CTIM(a).tv_nsec == CTIM(b).tv_nsec;
}

bool kg_fp_same_content(const char *a, const char *b)
{
    int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC);
    bool same = fa >= 0 && fb >= 0;
    static unsigned char ba[32768], bb[32768];
    while (same) {
        ssize_t ra = read(fa, ba, sizeof ba);
        if (ra < 0) {
            same = false;
            break;
        }
        size_t got = 0;
        while (got < (size_t)ra) {
            ssize_t rb = read(fb, bb + got, (size_t)ra - got);
            if (rb <= 0) {
                same = false;
                break;
            }
            got += (size_t)rb;
        }
        if (!same || memcmp(ba, bb, (size_t)ra) != 0) {
            same = false;
            break;
        }
        if (ra == 0) {
            same = read(fb, bb, 1) == 0;
            break;
        }
    }
    if (fa >= 0) close(fa);
    if (fb >= 0) close(fb);
    return same;
}

/* The cache lives in kgate's own directory (~/.kgate/cache), which no box
 * can write (policy.c refuses an allow_paths entry over it, and the home is
 * an empty tmpfs inside).  A directory that is a symbolic link, or that
 * someone else could write, is not that place: not read, not written. */
static bool dir_is_ours(const char *dir)
{
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           !(st.st_mode & 022);
}

static char *cache_file(const kg_fpcache *d)
{
    if (!d->dir || !dir_is_ours(d->dir)) return NULL;
    char *r = NULL;
    if (asprintf(&r, "%s/%s", d->dir, CACHE_NAME) < 0) kg_oom();
    return r;
}

static void cache_drop(kg_fpcache *d)
{
    fp_entry *e, *tmp;
    HASH_ITER(hh, d->map, e, tmp)
    {
        HASH_DEL(d->map, e);
        free(e->key);
        free(e);
    }
}

static void cache_put(kg_fpcache *d, const char *key, uint64_t hash, bool used)
{
    fp_entry *e;
    HASH_FIND_STR(d->map, key, e);
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e) kg_oom();
        e->key = strdup_or_die(key);
        HASH_ADD_KEYPTR(hh, d->map, e->key, strlen(e->key), e);
    }
    e->hash = hash;
    e->used = e->used || used;
}

/* Lines "HHHHHHHHHHHHHHHH key", then "end HHHHHHHHHHHHHHHH" over all the
 * bytes before it.  Anything else means the file is ignored and rebuilt.
 * A file someone else could have written is ignored too: a forged "not
 * equal" would let a copy through. */
static void cache_load(kg_fpcache *d)
{
    d->loaded = true;
    char *f = cache_file(d);
    if (!f) return;
    int fd = open(f, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    free(f);
    if (fd < 0) return;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 022) || st.st_size > 8 * 1024 * 1024)
        goto bad;
    buf = malloc((size_t)st.st_size + 1);
    if (!buf) kg_oom();
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r <= 0) goto bad;
        got += (size_t)r;
    }
    buf[got] = '\0';
    size_t ml = strlen(CACHE_MAGIC);
    if (got < ml || memcmp(buf, CACHE_MAGIC, ml) != 0) goto bad;
    char *end = NULL;
    for (char *p = buf + ml; *p;) {
        char *nl = strchr(p, '\n');
        if (!nl) goto bad;
        if (strncmp(p, "end ", 4) == 0) {
            end = p;
            break;
        }
        if (nl - p < 18 || p[16] != ' ') goto bad;
        p = nl + 1;
    }
    if (!end || end[4 + 16] != '\n' || end[4 + 17] != '\0') goto bad;
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, hash_mem(buf, (size_t)(end - buf)));
    if (memcmp(end + 4, hex, 16) != 0) goto bad;
    for (char *p = buf + ml; p < end;) {
        char *nl = strchr(p, '\n');
        *nl = '\0';
        char *ep;
        errno = 0;
        uint64_t h = strtoull(p, &ep, 16);
        if (errno || ep != p + 16) goto bad;
        cache_put(d, p + 17, h, false);
        p = nl + 1;
    }
    free(buf);
    close(fd);
    return;
bad:
    free(buf);
    close(fd);
    cache_drop(d);
    d->dirty = true; /* rewrite it whole */
}

void kg_fpcache_save(kg_fpcache *d)
{
    if (!d->dirty || !d->dir) return;
    d->dirty = false;
    /* The cache is an optimisation: failing to write it is not an error. */
    if (mkdir(d->dir, 0700) != 0 && errno != EEXIST) return;
    char *f = cache_file(d);
    if (!f) return;
    UT_string *s;
    utstring_new(s);
    utstring_bincpy(s, CACHE_MAGIC, strlen(CACHE_MAGIC));
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) { /* entries used now come first */
        fp_entry *e, *tmp;
        HASH_ITER(hh, d->map, e, tmp)
        {
            if (e->used != (pass == 0) || n >= CACHE_MAX_ENTRIES) continue;
            utstring_printf(s, "%016" PRIx64 " %s\n", e->hash, e->key);
            n++;
        }
    }
    utstring_printf(s, "end %016" PRIx64 "\n", hash_mem(utstring_body(s), utstring_len(s)));
    char *tmpl = malloc(strlen(f) + 8);
    if (!tmpl) kg_oom();
    sprintf(tmpl, "%s.XXXXXX", f);
    int fd = mkstemp(tmpl);
    if (fd >= 0) {
        bool ok = fchmod(fd, 0600) == 0;
        size_t off = 0, len = utstring_len(s);
        while (ok && off < len) {
            ssize_t w = write(fd, utstring_body(s) + off, len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0)
                ok = false;
            else
                off += (size_t)w;
        }
        if (close(fd) != 0) ok = false;
        if (!ok || rename(tmpl, f) != 0) unlink(tmpl);
    }
    free(tmpl);
    free(f);
    utstring_free(s);
}

/* One open file answers everything: its fstat() is the key and its bytes
 * are the hash, so what the cache remembers was true of one inode at one
 * state.  (A stat of the path and a hash of whatever the path held a
 * moment later could pair one file's identity with another file's bytes:
 * that is the poisoning this closes.)  The key names the exact state: a
 * change to the content changes ctime, which no one can set back, and a
 * later file at the same inode gets a ctime of its own. */
int kg_fpcache_get(kg_fpcache *d, const char *path, const struct stat *st, uint64_t *out)
{
    if (!d->loaded) cache_load(d);
    /* O_NONBLOCK: a FIFO swapped in would otherwise hang the open. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return -1;
    struct stat fst, after;
    int rc = -1;
    if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode)) goto out;
    char key[PATH_MAX + 200];
    snprintf(key, sizeof key, "%ju:%ju:%jd:%o:%jd.%09ld:%jd.%09ld:%s", (uintmax_t)fst.st_dev,
             (uintmax_t)fst.st_ino, (intmax_t)fst.st_size, (unsigned)fst.st_mode,
             (intmax_t)MTIM(&fst).tv_sec, MTIM(&fst).tv_nsec, (intmax_t)CTIM(&fst).tv_sec,
             CTIM(&fst).tv_nsec, path);
    fp_entry *e = NULL;
    if (!strchr(path, '\n')) HASH_FIND_STR(d->map, key, e);
    if (e) {
        e->used = true;
        *out = e->hash;
    } else {
        if (hash_fd(fd, out) != 0) goto out;
        /* Written to while it was read: the hash is of no one state. */
        if (fstat(fd, &after) != 0 || !same_state(&fst, &after)) goto out;
        if (!strchr(path, '\n')) {
            cache_put(d, key, *out, true);
            d->dirty = true;
        }
    }
    /* The caller judged the file it stat()ed; if the path now holds
     * another file (or other bytes), the answer is for neither. */
    rc = same_state(st, &fst) ? 0 : -2;
out:
    close(fd);
    return rc;
}

uint64_t kg_fp_hash_mem(const void *p, size_t len) { return hash_mem(p, len); }

kg_fpcache *kg_fpcache_new(const char *dir)
{
    kg_fpcache *d = calloc(1, sizeof *d);
    if (!d) kg_oom();
    d->dir = dir ? strdup_or_die(dir) : NULL;
    return d;
}

void kg_fpcache_forget(kg_fpcache *d)
{
    if (!d) return;
    cache_drop(d);
    d->loaded = false;
    d->dirty = false;
}

void kg_fpcache_free(kg_fpcache *d)
{
    if (!d) return;
    kg_fpcache_save(d);
    cache_drop(d);
    free(d->dir);
    free(d);
}
