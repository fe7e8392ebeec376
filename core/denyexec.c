/* denyexec.c: the exec deny list.  A command line is walked the way the
 * programs in it would walk it (wrappers, shells, short scripts), and every
 * word that would be executed is compared with the deny list by name, by
 * file identity and by content.  What this cannot see is written down in
 * docs/deny-exec.md; the kernel box, not this check, is the boundary. */
#include "denyexec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uthash.h>
#include <utstring.h>

#define SCRIPT_MAX (64 * 1024)
#define MAX_DEPTH 40
#define MAX_SCRIPTS 64
#define CACHE_MAX_ENTRIES 4096
#define CACHE_NAME "exec-fingerprints"
#define CACHE_MAGIC "kgate-exec-fingerprints 1\n"

/* ---- what a command word can be ---------------------------------------- */

typedef enum {
    K_NONE, K_SHELL, K_ENV, K_XARGS, K_COMMAND, K_FIND, K_BUSYBOX, K_EVAL,
    K_SOURCE, K_TRAP, K_ALIAS, K_WATCH, K_FLOCK, K_CD, K_CSTRING, K_LOADER,
    K_WRAP, /* the simple kind: options, then npos operands, then the command */
} kind;

/* How a wrapper's own arguments look.  shorts: option letters that take a
 * value; longs: " name name " of long options that take one. */
typedef struct tool_spec {
    const char *name;
    kind k;
    bool file;       /* also recognised by file (renamed copies); each one
                      * costs a PATH lookup when the list is built */
    const char *shorts, *longs;
    unsigned npos;   /* operands before the command (timeout's DURATION) */
    bool digits;     /* -N is an option (nice -5) */
    bool assigns;    /* NAME=value words before the command (sudo) */
} tool_spec;

static const tool_spec tools[] = {
    {"sh", K_SHELL, true, 0, 0, 0, 0, 0},   {"bash", K_SHELL, true, 0, 0, 0, 0, 0},
    {"dash", K_SHELL, true, 0, 0, 0, 0, 0}, {"zsh", K_SHELL, true, 0, 0, 0, 0, 0},
    {"ksh", K_SHELL, true, 0, 0, 0, 0, 0},  {"mksh", K_SHELL, true, 0, 0, 0, 0, 0},
    {"ash", K_SHELL, false, 0, 0, 0, 0, 0}, {"rbash", K_SHELL, false, 0, 0, 0, 0, 0},
    {"ksh93", K_SHELL, false, 0, 0, 0, 0, 0}, {"posh", K_SHELL, false, 0, 0, 0, 0, 0},
    {"yash", K_SHELL, false, 0, 0, 0, 0, 0},
    {"env", K_ENV, true, 0, 0, 0, 0, 0},
    {"xargs", K_XARGS, true, "adEILnPs",
     " arg-file delimiter max-args max-procs max-chars process-slot-var ", 0, 0, 0},
    {"command", K_COMMAND, false, 0, 0, 0, 0, 0},
    {"find", K_FIND, true, 0, 0, 0, 0, 0},
    {"eval", K_EVAL, false, 0, 0, 0, 0, 0},
    {"source", K_SOURCE, false, 0, 0, 0, 0, 0}, {".", K_SOURCE, false, 0, 0, 0, 0, 0},
    {"trap", K_TRAP, false, 0, 0, 0, 0, 0},
    {"alias", K_ALIAS, false, 0, 0, 0, 0, 0},
    {"watch", K_WATCH, true, "nq", " interval equexit ", 0, 0, 0},
    {"flock", K_FLOCK, true, "wE", " timeout wait conflict-exit-code ", 0, 0, 0},
    {"cd", K_CD, false, 0, 0, 0, 0, 0},     {"pushd", K_CD, false, 0, 0, 0, 0, 0},
    /* -c STRING runs a shell on STRING */
    {"su", K_CSTRING, false, "cgGsw", " command group supp-group shell whitelist-environment ", 0, 0, 0},
    {"runuser", K_CSTRING, false, "cgGsuw", " command group supp-group shell user whitelist-environment ", 0, 0, 0},
    {"script", K_CSTRING, false, "cEIOBTmo", " command echo log-in log-out log-io log-timing logging-format output-limit ", 0, 0, 0},
    {"nice", K_WRAP, true, "n", " adjustment ", 0, true, false},
    {"nohup", K_WRAP, true, "", "", 0, 0, 0},
    {"timeout", K_WRAP, true, "sk", " signal kill-after ", 1, 0, 0},
    {"exec", K_WRAP, false, "a", "", 0, 0, 0},
    {"builtin", K_WRAP, false, "", "", 0, 0, 0},
    {"stdbuf", K_WRAP, true, "ioe", " input output error ", 0, 0, 0},
    {"setsid", K_WRAP, true, "", "", 0, 0, 0},
    {"time", K_WRAP, true, "fo", " format output ", 0, 0, 0},
    {"sudo", K_WRAP, true, "CDghpRrTtUu",
     " user group close-from chdir host prompt role type other-user chroot command-timeout ", 0, 0, true},
    {"doas", K_WRAP, false, "uC", "", 0, 0, 0},
    {"ionice", K_WRAP, false, "cnpPu", " class classdata pid pgid uid ", 0, 0, 0},
    {"taskset", K_WRAP, false, "", "", 1, 0, 0},
    {"chrt", K_WRAP, false, "TPD", " sched-runtime sched-period sched-deadline ", 1, 0, 0},
    {"setpriv", K_WRAP, false, "",
     " reuid regid ruid rgid euid egid groups inh-caps ambient-caps bounding-set securebits pdeathsig selinux-label apparmor-profile landlock-access landlock-rule ", 0, 0, 0},
    {"unshare", K_WRAP, false, "RwSGl",
     " setgroups map-user map-group map-users map-groups propagation root wd setuid setgid load-interp ", 0, 0, 0},
    {"nsenter", K_WRAP, false, "tSGE", " target setuid setgid env ", 0, 0, 0},
    {"chroot", K_WRAP, false, "", " userspec groups ", 1, 0, 0},
    {"strace", K_WRAP, false, "abeEIoOpPsSuUX",
     " output attach signal trace status quiet silent decode-fds env user string-limit columns ", 0, 0, 0},
    {"ltrace", K_WRAP, false, "aAeElLnoOpsuDwx", " output ", 0, 0, 0},
    {"valgrind", K_WRAP, false, "", "", 0, 0, 0},
    {"systemd-run", K_WRAP, false, "pEuMHdS",
     " property setenv unit description slice uid gid nice working-directory machine host on-active on-boot on-startup on-unit-active on-unit-inactive on-calendar timer-property path-property socket-property ", 0, 0, 0},
    {"unbuffer", K_WRAP, false, "", "", 0, 0, 0},
    {"rlwrap", K_WRAP, false, "abcfFhHlOpPqsStw", "", 0, 0, 0},
    {"faketime", K_WRAP, false, "mp", "", 1, 0, 0},
    {"fakeroot", K_WRAP, false, "lsi", " lib faked ", 0, 0, 0},
    {"torsocks", K_WRAP, false, "uapP", " user pass address port ", 0, 0, 0},
    {"proxychains", K_WRAP, false, "f", "", 0, 0, 0},
    {"proxychains4", K_WRAP, false, "f", "", 0, 0, 0},
    {"catchsegv", K_WRAP, false, "", "", 0, 0, 0},
    {"numactl", K_WRAP, false, "CNmPpilw",
     " cpunodebind physcpubind membind preferred interleave localalloc ", 0, 0, 0},
    {"cgexec", K_WRAP, false, "g", "", 0, 0, 0},
    {"ld.so", K_LOADER, false, 0, 0, 0, 0, 0},
};
#define NTOOLS (sizeof tools / sizeof tools[0])

/* A file on the deny list, or a known wrapper/shell found on PATH. */
typedef struct target {
    char *entry;     /* as configured (deny) or the tool's name */
    char *name;      /* name to match a word's basename against, or NULL */
    char *path;      /* realpath of the file, NULL when there is none */
    bool multicall;  /* busybox and the like: the name picks the program */
    bool ok;         /* st is valid for this check */
    struct stat st;
    kind k;
} target;

typedef struct fp_entry {
    char *key;
    uint64_t hash;
    bool used;
    UT_hash_handle hh;
} fp_entry;

struct kg_denyexec {
    target *deny;
    size_t ndeny;
    target tool[NTOOLS];
    size_t ntool;
    char *path_env;
    char *cache_dir;
    fp_entry *cache;
    bool cache_loaded, cache_dirty;
};

/* ---- small helpers ----------------------------------------------------- */

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static bool is_multicall_name(const char *b)
{
    return strncmp(b, "busybox", 7) == 0 || strcmp(b, "toybox") == 0;
}

/* The dynamic loader runs the program named after its options:
 * /lib64/ld-linux-x86-64.so.2 /usr/bin/curl. */
static bool is_loader_name(const char *b)
{
    return strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "ld-musl-", 8) == 0 ||
           strncmp(b, "ld.so", 5) == 0 || strncmp(b, "ld64.so", 7) == 0;
}

static char *xstrdup(const char *s)
{
    char *r = strdup(s);
    if (!r) abort(); /* the core treats allocation failure as fatal */
    return r;
}

static char *join_path(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *r = malloc(a + b + 2);
    if (!r) abort();
    memcpy(r, dir, a);
    size_t o = a;
    if (a == 0 || dir[a - 1] != '/') r[o++] = '/';
    memcpy(r + o, name, b + 1);
    return r;
}

/* Regular and executable by us: what execve would accept. */
static char *try_exec_file(const char *p, struct stat *st)
{
    struct stat s;
    if (stat(p, &s) != 0 || !S_ISREG(s.st_mode)) return NULL;
    if (access(p, X_OK) != 0) return NULL;
    char *r = realpath(p, NULL);
    if (r && st) *st = s;
    return r;
}

static char *resolve(const char *cmd, const char *path_env, const char *cwd,
                     struct stat *st)
{
    if (!cmd || !*cmd) return NULL;
    if (strchr(cmd, '/')) {
        if (cmd[0] == '/' || !cwd) return try_exec_file(cmd, st);
        char *j = join_path(cwd, cmd);
        char *r = try_exec_file(j, st);
        free(j);
        return r;
    }
    /* execvp's default when PATH is unset. */
    const char *p = path_env ? path_env : "/bin:/usr/bin";
    for (;;) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char *dir = strndup(p, len);
        if (!dir) abort();
        char *cand;
        if (len == 0) /* an empty entry is the working directory */
            cand = join_path(cwd ? cwd : ".", cmd);
        else if (dir[0] != '/' && cwd) {
            char *d2 = join_path(cwd, dir);
            cand = join_path(d2, cmd);
            free(d2);
        } else
            cand = join_path(dir, cmd);
        free(dir);
        char *r = try_exec_file(cand, st);
        free(cand);
        if (r) return r;
        if (!e) return NULL;
        p = e + 1;
    }
}

char *kg_exec_resolve(const char *cmd, const char *path_env, const char *cwd)
{
    return resolve(cmd, path_env, cwd, NULL);
}

/* ---- fingerprints ------------------------------------------------------ */

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
typedef struct { uint64_t a, b, n; unsigned char tail[8]; size_t nt; } hasher;

static void h_init(hasher *h) { h->a = 0x243f6a8885a308d3ULL; h->b = 0x13198a2e03707344ULL; h->n = 0; h->nt = 0; }

static inline void h_word(hasher *h, uint64_t w)
{
    if (h->n++ & 1) h->b = rotl64(h->b ^ (w * 0x87c37b91114253d5ULL), 31) * 0x4cf5ad432745937fULL;
    else h->a = rotl64(h->a ^ (w * 0x4cf5ad432745937fULL), 27) * 0x87c37b91114253d5ULL;
}

static void h_update(hasher *h, const unsigned char *p, size_t len)
{
    while (len && h->nt) {
        h->tail[h->nt++] = *p++;
        len--;
        if (h->nt == 8) { uint64_t w; memcpy(&w, h->tail, 8); h_word(h, w); h->nt = 0; }
    }
    for (; len >= 8; p += 8, len -= 8) { uint64_t w; memcpy(&w, p, 8); h_word(h, w); }
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

static int hash_file(const char *path, uint64_t *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    hasher h;
    h_init(&h);
    unsigned char buf[65536];
    uint64_t total = 0;
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) { close(fd); return -1; }
        if (r == 0) break;
        h_update(&h, buf, (size_t)r);
        total += (uint64_t)r;
    }
    close(fd);
    *out = h_final(&h, total);
    return 0;
}

static bool same_content(const char *a, const char *b)
{
    int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC);
    bool same = fa >= 0 && fb >= 0;
    static unsigned char ba[32768], bb[32768];
    while (same) {
        ssize_t ra = read(fa, ba, sizeof ba);
        if (ra < 0) { same = false; break; }
        size_t got = 0;
        while (got < (size_t)ra) {
            ssize_t rb = read(fb, bb + got, (size_t)ra - got);
            if (rb <= 0) { same = false; break; }
            got += (size_t)rb;
        }
        if (!same || memcmp(ba, bb, (size_t)ra) != 0) { same = false; break; }
        if (ra == 0) { same = read(fb, bb, 1) == 0; break; }
    }
    if (fa >= 0) close(fa);
    if (fb >= 0) close(fb);
    return same;
}

static char *cache_file(const kg_denyexec *d)
{
    return d->cache_dir ? join_path(d->cache_dir, CACHE_NAME) : NULL;
}

static void cache_drop(kg_denyexec *d)
{
    fp_entry *e, *tmp;
    HASH_ITER(hh, d->cache, e, tmp) {
        HASH_DEL(d->cache, e);
        free(e->key);
        free(e);
    }
}

static void cache_put(kg_denyexec *d, const char *key, uint64_t hash, bool used)
{
    fp_entry *e;
    HASH_FIND_STR(d->cache, key, e);
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e) abort();
        e->key = xstrdup(key);
        HASH_ADD_KEYPTR(hh, d->cache, e->key, strlen(e->key), e);
    }
    e->hash = hash;
    e->used = e->used || used;
}

/* Lines "HHHHHHHHHHHHHHHH key", then "end HHHHHHHHHHHHHHHH" over all the
 * bytes before it.  Anything else means the file is ignored and rebuilt.
 * A file someone else could have written is ignored too: a forged "not
 * equal" would let a copy through. */
static void cache_load(kg_denyexec *d)
{
    d->cache_loaded = true;
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
    if (!buf) abort();
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
        if (strncmp(p, "end ", 4) == 0) { end = p; break; }
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
    d->cache_dirty = true; /* rewrite it whole */
}

static void cache_save(kg_denyexec *d)
{
    if (!d->cache_dirty || !d->cache_dir) return;
    d->cache_dirty = false;
    /* The cache is an optimisation: failing to write it is not an error. */
    if (mkdir(d->cache_dir, 0700) != 0 && errno != EEXIST) return;
    UT_string *s;
    utstring_new(s);
    utstring_bincpy(s, CACHE_MAGIC, strlen(CACHE_MAGIC));
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) { /* entries used now come first */
        fp_entry *e, *tmp;
        HASH_ITER(hh, d->cache, e, tmp) {
            if (e->used != (pass == 0) || n >= CACHE_MAX_ENTRIES) continue;
            utstring_printf(s, "%016" PRIx64 " %s\n", e->hash, e->key);
            n++;
        }
    }
    utstring_printf(s, "end %016" PRIx64 "\n",
                    hash_mem(utstring_body(s), utstring_len(s)));
    char *f = cache_file(d);
    char *tmpl = malloc(strlen(f) + 8);
    if (!tmpl) abort();
    sprintf(tmpl, "%s.XXXXXX", f);
    int fd = mkstemp(tmpl);
    if (fd >= 0) {
        bool ok = fchmod(fd, 0600) == 0;
        size_t off = 0, len = utstring_len(s);
        while (ok && off < len) {
            ssize_t w = write(fd, utstring_body(s) + off, len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) ok = false;
            else off += (size_t)w;
        }
        if (close(fd) != 0) ok = false;
        if (!ok || rename(tmpl, f) != 0) unlink(tmpl);
    }
    free(tmpl);
    free(f);
    utstring_free(s);
}

/* The key names the exact file state: a change to the content changes
 * ctime (which no one can set back), so a cached hash never outlives the
 * bytes it was computed from. */
static int fingerprint(kg_denyexec *d, const char *path, const struct stat *st,
                       uint64_t *out)
{
    if (!d->cache_loaded) cache_load(d);
    if (strchr(path, '\n')) return hash_file(path, out);
    char key[PATH_MAX + 160];
    snprintf(key, sizeof key, "%ju:%ju:%jd:%jd.%09ld:%jd.%09ld:%s",
             (uintmax_t)st->st_dev, (uintmax_t)st->st_ino, (intmax_t)st->st_size,
             (intmax_t)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
             (intmax_t)st->st_ctim.tv_sec, st->st_ctim.tv_nsec, path);
    fp_entry *e;
    HASH_FIND_STR(d->cache, key, e);
    if (e) {
        e->used = true;
        *out = e->hash;
        return 0;
    }
    if (hash_file(path, out) != 0) return -1;
    cache_put(d, key, *out, true);
    d->cache_dirty = true;
    return 0;
}

/* 0: different, 1: same file, 2: a copy (same bytes). */
static int compare_file(kg_denyexec *d, const char *path, const struct stat *st,
                        const target *t)
{
    if (!t->ok || t->multicall) return 0;
    if (st->st_dev == t->st.st_dev && st->st_ino == t->st.st_ino) return 1;
    if (st->st_size != t->st.st_size) return 0;
    uint64_t a, b;
    if (fingerprint(d, path, st, &a) != 0 || fingerprint(d, t->path, &t->st, &b) != 0)
        return 0;
    if (a != b) return 0;
    return same_content(path, t->path) ? 2 : 0;
}

/* ---- construction ------------------------------------------------------ */

static void target_init(target *t, const char *entry, const char *path_env,
                        const char *cwd)
{
    t->entry = xstrdup(entry);
    t->name = strchr(entry, '/') ? NULL : xstrdup(entry);
    t->path = resolve(entry, path_env, cwd, &t->st);
    t->ok = t->path != NULL;
    t->multicall = t->path && is_multicall_name(base_name(t->path));
}

kg_denyexec *kg_denyexec_new(const kg_strv *deny, const char *path_env,
                             const char *cache_dir, kg_error *err)
{
    kg_denyexec *d = calloc(1, sizeof *d);
    if (!d) abort();
    d->path_env = path_env ? xstrdup(path_env) : NULL;
    d->cache_dir = cache_dir ? xstrdup(cache_dir) : NULL;
    size_t n = kg_strv_len(deny);
    d->deny = calloc(n ? n : 1, sizeof *d->deny);
    if (!d->deny) abort();
    const char *home = getenv("HOME");
    for (size_t i = 0; i < n; i++) {
        const char *e = kg_strv_get(deny, i);
        if (!*e) {
            kg_denyexec_free(d);
            kg_err_set(err, EINVAL, "deny_exec: an entry is empty");
            return NULL;
        }
        if (e[0] == '~' && (e[1] == '/' || !e[1]) && home) {
            char *x = join_path(home, e[1] ? e + 2 : "");
            target_init(&d->deny[d->ndeny], x, d->path_env, NULL);
            free(x);
        } else
            target_init(&d->deny[d->ndeny], e, d->path_env, NULL);
        d->ndeny++;
    }
    for (size_t i = 0; i < NTOOLS; i++) {
        if (!tools[i].file) continue;
        target *t = &d->tool[d->ntool];
        target_init(t, tools[i].name, d->path_env, NULL);
        t->k = tools[i].k;
        if (t->path) d->ntool++;
        else { free(t->entry); free(t->name); memset(t, 0, sizeof *t); }
    }
    return d;
}

static void target_free(target *t)
{
    free(t->entry);
    free(t->name);
    free(t->path);
}

void kg_denyexec_free(kg_denyexec *d)
{
    if (!d) return;
    cache_save(d);
    for (size_t i = 0; i < d->ndeny; i++) target_free(&d->deny[i]);
    for (size_t i = 0; i < d->ntool; i++) target_free(&d->tool[i]);
    free(d->deny);
    cache_drop(d);
    free(d->path_env);
    free(d->cache_dir);
    free(d);
}

void kg_denyexec_forget_cache(kg_denyexec *d)
{
    if (!d) return;
    cache_drop(d);
    d->cache_loaded = false;
    d->cache_dirty = false;
}

/* ---- one check --------------------------------------------------------- */

typedef struct scope {
    const char *path; /* PATH for the words at this level */
    const char *cwd;
} scope;

/* A plain command word (no wrapper, no shell) allowed once in this check
 * is allowed again with the same PATH and directory: a long script repeats
 * grep and sed hundreds of times. */
typedef struct memo {
    char *key;
    UT_hash_handle hh;
} memo;

typedef struct chk {
    kg_denyexec *d;
    char *reason;
    size_t reason_len;
    int depth;
    int nscripts;
    bool stdin_args; /* the next shell string gets its $1.. from xargs */
    UT_array *seen;
    struct memo *memo; /* plain commands already found allowed */ /* dev/ino pairs of scripts already read */
} chk;

enum { F_XARGS = 1 };

static int check_argv(chk *c, char **w, size_t n, scope sc, const char *where,
                      int flags);
static int check_string(chk *c, const char *s, size_t len, scope sc,
                        const char *where, char **pos, size_t npos);

/* One line, whatever bytes the command contained. */
static void clean_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

static int block(chk *c, const char *entry, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int block(chk *c, const char *entry, const char *where, const char *fmt, ...)
{
    char how[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(how, sizeof how, fmt, ap);
    va_end(ap);
    if (c->reason && c->reason_len) {
        if (entry)
            snprintf(c->reason, c->reason_len, "%s is on the deny list (%s%s%s)",
                     entry, how, *where ? " " : "", where);
        else
            snprintf(c->reason, c->reason_len, "%s%s%s", how, *where ? " " : "", where);
        clean_line(c->reason);
    }
    return 1;
}

typedef struct word_info {
    char *path; /* resolved, NULL when not found */
    struct stat st;
    kind k;
    const tool_spec *t;
} word_info;

static const tool_spec *tool_by_name(const char *b)
{
    for (size_t i = 0; i < NTOOLS; i++)
        if (strcmp(b, tools[i].name) == 0) return &tools[i];
    return NULL;
}

static kind kind_by_name(const char *b)
{
    const tool_spec *t = tool_by_name(b);
    if (t) return t->k;
    if (is_multicall_name(b)) return K_BUSYBOX;
    if (is_loader_name(b)) return K_LOADER;
    return K_NONE;
}

/* The command word itself: its name, then the file it resolves to. */
static int check_word(chk *c, const char *word, scope sc, const char *where,
                      word_info *wi)
{
    kg_denyexec *d = c->d;
    memset(wi, 0, sizeof *wi);
    const char *b = base_name(word);
    for (size_t i = 0; i < d->ndeny; i++) {
        const target *t = &d->deny[i];
        if ((t->name && strcmp(b, t->name) == 0) || strcmp(word, t->entry) == 0)
            return block(c, t->entry, where, "matched \"%s\"", word);
    }
    wi->k = kind_by_name(b);
    wi->t = tool_by_name(b);
    char *home_word = NULL;
    if (word[0] == '~' && word[1] == '/' && getenv("HOME"))
        word = home_word = join_path(getenv("HOME"), word + 2);
    wi->path = resolve(word, sc.path, sc.cwd, &wi->st);
    int r = 0;
    if (!wi->path) goto out;
    for (size_t i = 0; i < d->ndeny; i++) {
        const target *t = &d->deny[i];
        if (t->path && strcmp(wi->path, t->path) == 0 && !t->multicall) {
            r = block(c, t->entry, where, "matched \"%s\"", word);
            goto out;
        }
        int m = compare_file(d, wi->path, &wi->st, t);
        if (m == 1) {
            r = block(c, t->entry, where, "%s is the same file as %s", word, t->path);
            goto out;
        }
        if (m == 2) {
            r = block(c, t->entry, where, "%s is a copy of %s", word, t->path);
            goto out;
        }
    }
    /* A renamed wrapper or shell is still that wrapper or shell. */
    for (size_t i = 0; wi->k == K_NONE && i < d->ntool; i++)
        if (compare_file(d, wi->path, &wi->st, &d->tool[i])) {
            wi->k = d->tool[i].k;
            wi->t = tool_by_name(d->tool[i].entry);
        }
    if (wi->k == K_NONE && is_loader_name(base_name(wi->path))) wi->k = K_LOADER;
out:
    free(home_word);
    return r;
}

static bool seen_file(chk *c, const struct stat *st)
{
    for (size_t i = 0; i < utarray_len(c->seen); i++) {
        const uint64_t *p = (const uint64_t *)utarray_eltptr(c->seen, (unsigned)i);
        if (p[0] == (uint64_t)st->st_dev && p[1] == (uint64_t)st->st_ino) return true;
    }
    return false;
}

static void mark_seen(chk *c, const struct stat *st)
{
    uint64_t p[2] = {(uint64_t)st->st_dev, (uint64_t)st->st_ino};
    utarray_push_back(c->seen, &p);
}

/* Reads at most max bytes of path; *len gets the count. */
static char *read_head(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    char *buf = malloc(max + 1);
    if (!buf) abort();
    size_t got = 0;
    while (got < max) {
        ssize_t r = read(fd, buf + got, max - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *len = got;
    return buf;
}

/* A file a shell will read as commands (sh FILE, . FILE, a #!/bin/sh
 * script).  Larger files are not read: see docs/deny-exec.md. */
static int check_shell_file(chk *c, const char *path, const struct stat *st,
                            scope sc, const char *shown, char **pos, size_t npos)
{
    if (seen_file(c, st)) return 0;
    mark_seen(c, st);
    if (st->st_size > SCRIPT_MAX) return 0;
    if (++c->nscripts > MAX_SCRIPTS)
        return block(c, NULL, "", "too many nested scripts to check (at %s)", shown);
    size_t len;
    char *buf = read_head(path, SCRIPT_MAX, &len);
    if (!buf) return 0; /* unreadable: the shell cannot read it either */
    char where[PATH_MAX + 32];
    snprintf(where, sizeof where, "in script %s", shown);
    int r = check_string(c, buf, len, sc, where, pos, npos);
    free(buf);
    return r;
}

/* A file executed directly.  The kernel runs "#!" lines; execvp hands a
 * file with neither "#!" nor a binary format to /bin/sh. */
static int check_exec_file(chk *c, const word_info *wi, char **w, size_t n,
                           scope sc, const char *where)
{
    size_t len;
    char *head = read_head(wi->path, 512, &len);
    if (!head) return 0;
    int r = 0;
    if (len >= 4 && memcmp(head, "\177ELF", 4) == 0) goto out;
    if (len >= 2 && head[0] == '#' && head[1] == '!') {
        char *nl = memchr(head, '\n', len);
        if (nl) *nl = '\0';
        char *p = head + 2;
        while (*p == ' ' || *p == '\t') p++;
        char *interp = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        char *arg = NULL;
        if (*p) {
            *p++ = '\0';
            while (*p == ' ' || *p == '\t') p++;
            char *e = p + strlen(p);
            while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) *--e = '\0';
            if (*p) arg = p;
        }
        if (!*interp) goto out;
        /* The argv the kernel builds: interpreter, its one argument, the
         * script, then the original arguments. */
        char **v = calloc(n + 3, sizeof *v);
        if (!v) abort();
        size_t k = 0;
        v[k++] = interp;
        if (arg) v[k++] = arg;
        v[k++] = wi->path; /* the kernel passes the path it opened */
        for (size_t i = 1; i < n; i++) v[k++] = w[i];
        char wh[PATH_MAX + 64];
        snprintf(wh, sizeof wh, "in the #! line of %s%s%s", w[0], *where ? " " : "", where);
        r = check_argv(c, v, k, sc, wh, 0);
        free(v);
        goto out;
    }
    if (memchr(head, '\0', len)) goto out; /* some other binary */
    r = check_shell_file(c, wi->path, &wi->st, sc, w[0], w + 1, n - 1);
out:
    free(head);
    return r;
}

/* ---- the shell-word lexer and the command walker ----------------------- *
 * Not a shell: enough of the POSIX/bash grammar to know which words stand
 * in command position.  Expansions are not performed; a word whose text
 * depends on one is "dynamic" and is looked up in the assignments the
 * string itself makes. */

typedef enum { ST_CMD, ST_ARGS, ST_SKIP, ST_FOR, ST_CASE_WORD, ST_CASE_IN,
               ST_CASE_PAT, ST_DBRACKET, ST_FUNCNAME } wstate;

typedef struct walker {
    chk *c;
    scope sc;
    char *path_own, *cwd_own;
    const char *where;
    char **pos;
    size_t npos;
    bool stdin_args;
    kg_strv *words;
    UT_array *dyn; /* int per word: depends on an expansion */
    kg_strv *vars; /* "NAME=value" as assigned in the string */
    wstate st;
    bool redir_target;
    bool funcdef;   /* NAME ( seen: a function definition */
    bool fn_parens; /* after "function NAME": optional () */
    int case_depth;
    int result; /* 0, 1 blocked, -1 error */
} walker;

typedef struct heredoc { char *delim; bool quoted, strip; } heredoc;

typedef struct lexer {
    walker *w;
    const char *s;
    size_t n, i;
    bool failed;
    heredoc hd[16];
    int nhd;
} lexer;

static bool is_name_start(char ch) { return ch == '_' || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z'); }
static bool is_name_char(char ch) { return is_name_start(ch) || (ch >= '0' && ch <= '9'); }

/* NAME= or NAME+= or NAME[..]= at the start of an unquoted word. */
static size_t assignment_len(const char *s)
{
    if (!is_name_start(*s)) return 0;
    size_t i = 1;
    while (is_name_char(s[i])) i++;
    if (s[i] == '[') {
        while (s[i] && s[i] != ']') i++;
        if (s[i]) i++;
    }
    if (s[i] == '+') i++;
    return s[i] == '=' ? i + 1 : 0;
}

static const char *var_value(walker *w, const char *name, size_t nl, size_t *from)
{
    for (size_t i = *from; i < kg_strv_len(w->vars); i++) {
        const char *v = kg_strv_get(w->vars, i);
        if (strncmp(v, name, nl) == 0 && v[nl] == '=') {
            *from = i + 1;
            return v + nl + 1;
        }
    }
    return NULL;
}

static char *subst_path(const char *value, const char *old)
{
    UT_string *s;
    utstring_new(s);
    for (const char *p = value; *p;) {
        if (strncmp(p, "$PATH", 5) == 0 && !is_name_char(p[5])) { utstring_printf(s, "%s", old ? old : ""); p += 5; }
        else if (strncmp(p, "${PATH}", 7) == 0) { utstring_printf(s, "%s", old ? old : ""); p += 7; }
        else utstring_bincpy(s, p++, 1);
    }
    char *r = xstrdup(utstring_body(s));
    utstring_free(s);
    return r;
}

static void walker_assign(walker *w, const char *word)
{
    kg_strv_push(w->vars, word);
    if (strncmp(word, "PATH=", 5) == 0) {
        char *np = subst_path(word + 5, w->sc.path);
        free(w->path_own);
        w->path_own = np;
        w->sc.path = np;
    }
}

static void walker_cd(walker *w, const char *dir)
{
    char *j = dir[0] == '/' ? xstrdup(dir) : join_path(w->sc.cwd ? w->sc.cwd : ".", dir);
    char *r = realpath(j, NULL);
    free(j);
    if (!r) return;
    free(w->cwd_own);
    w->cwd_own = r;
    w->sc.cwd = r;
}

static const char *var_last(walker *w, const char *name, size_t nl)
{
    const char *last = NULL, *v;
    size_t from = 0;
    while ((v = var_value(w, name, nl, &from))) last = v;
    return last;
}

/* The word with $NAME, ${NAME} and ${NAME:-WORD} (and -, :=, =) replaced
 * by the last value the string assigned, or by the default word, or by
 * nothing (keep_unknown: left as written).  A guess at what the shell will
 * run, checked beside the word. */
static char *expand_simple(walker *w, const char *lit, bool keep_unknown)
{
    UT_string *s;
    utstring_new(s);
    for (const char *p = lit; *p;) {
        if (*p != '$') { utstring_bincpy(s, p++, 1); continue; }
        const char *q = p + 1;
        bool brace = *q == '{';
        if (brace) q++;
        if (*q == '@' || *q == '*' || (*q >= '1' && *q <= '9')) {
            const char *e = q + 1;
            if (brace && *e != '}') { utstring_bincpy(s, p++, 1); continue; }
            if (*q >= '1' && *q <= '9') {
                size_t k = (size_t)(*q - '0');
                if (k < w->npos) utstring_printf(s, "%s", w->pos[k]);
            } else
                for (size_t k = 1; k < w->npos; k++) utstring_printf(s, "%s%s", k > 1 ? " " : "", w->pos[k]);
            p = brace ? e + 1 : e;
            continue;
        }
        size_t nl = 0;
        while (is_name_char(q[nl])) nl++;
        if (!nl || !is_name_start(*q)) { utstring_bincpy(s, p++, 1); continue; }
        const char *val = var_last(w, q, nl);
        const char *e = q + nl;
        if (!brace) {
            if (val) utstring_printf(s, "%s", val);
            else if (keep_unknown) utstring_bincpy(s, p, (size_t)(e - p));
            p = e;
            continue;
        }
        const char *close = strchr(e, '}');
        if (!close) { utstring_bincpy(s, p++, 1); continue; }
        const char *def = NULL;
        if (*e == ':' && (e[1] == '-' || e[1] == '=')) def = e + 2;
        else if (*e == '-' || *e == '=') def = e + 1;
        if (val && *val) utstring_printf(s, "%s", val);
        else if (def) utstring_bincpy(s, def, (size_t)(close - def));
        else if (keep_unknown && !val) utstring_bincpy(s, p, (size_t)(close + 1 - p));
        p = close + 1;
    }
    char *r = xstrdup(utstring_body(s));
    utstring_free(s);
    return r;
}

/* Checks words (split like an unquoted expansion) followed by rest. */
static void check_split(walker *w, const char *value, char **rest, size_t nrest)
{
    kg_strv *nv = kg_strv_new();
    char *copy = xstrdup(value), *sv = NULL;
    for (char *t = strtok_r(copy, " \t\n", &sv); t; t = strtok_r(NULL, " \t\n", &sv))
        kg_strv_push(nv, t);
    free(copy);
    for (size_t i = 0; i < nrest; i++) kg_strv_push(nv, rest[i]);
    char **nvv = kg_strv_nullterm(nv);
    if (kg_strv_len(nv) && w->result == 0)
        w->result = check_argv(w->c, nvv, kg_strv_len(nv), w->sc, w->where, 0);
    free(nvv);
    kg_strv_free(nv);
}

/* Runs the collected simple command through check_argv. */
static void walker_flush(walker *w)
{
    size_t n = kg_strv_len(w->words);
    if (n == 0 || w->result != 0) { kg_strv_clear(w->words); utarray_clear(w->dyn); return; }
    char **v = kg_strv_nullterm(w->words);
    if (!v) abort();
    size_t skip = 0;
    /* Leading assignments apply to this command only, except PATH, whose
     * effect on the lookup matters here and which a later bare assignment
     * would make permanent anyway. */
    while (skip < n && assignment_len(v[skip])) {
        walker_assign(w, v[skip]);
        skip++;
    }
    if (skip < n) {
        const char *cw = v[skip];
        int dyn = *(int *)utarray_eltptr(w->dyn, (unsigned)skip);
        const char *b = base_name(cw);
        if (kind_by_name(b) == K_CD && n - skip == 2 && !*(int *)utarray_eltptr(w->dyn, (unsigned)skip + 1))
            walker_cd(w, v[skip + 1]);
        if ((strcmp(cw, "export") == 0 || strcmp(cw, "local") == 0 ||
             strcmp(cw, "readonly") == 0 || strcmp(cw, "declare") == 0 ||
             strcmp(cw, "typeset") == 0)) {
            for (size_t i = skip + 1; i < n; i++)
                if (assignment_len(v[i])) walker_assign(w, v[i]);
        }
        if (dyn && cw[0] == '$') {
            /* $NAME, ${NAME}, $1, "$@": what the string assigned, or the
             * positional parameters it was given. */
            const char *p = cw + 1;
            bool brace = *p == '{';
            if (brace) p++;
            size_t nl = 0;
            if (*p == '@' || *p == '*' || (*p >= '0' && *p <= '9')) nl = 1;
            else while (is_name_char(p[nl])) nl++;
            const char *rest = p + nl;
            if (brace && *rest == '}') rest++;
            if (nl && !*rest) {
                bool positional = *p == '@' || *p == '*' || (*p >= '0' && *p <= '9');
                if (positional && w->stdin_args && !(*p == '0')) {
                    w->result = block(w->c, NULL, w->where, "xargs would supply the command as %s", cw);
                    goto done;
                }
                if (*p == '@' || *p == '*') {
                    kg_strv *nv = kg_strv_new();
                    for (size_t i = 1; i < w->npos; i++) kg_strv_push(nv, w->pos[i]);
                    for (size_t i = skip + 1; i < n; i++) kg_strv_push(nv, v[i]);
                    char **nvv = kg_strv_nullterm(nv);
                    if (kg_strv_len(nv)) w->result = check_argv(w->c, nvv, kg_strv_len(nv), w->sc, w->where, 0);
                    free(nvv);
                    kg_strv_free(nv);
                } else if (*p >= '0' && *p <= '9') {
                    size_t k = (size_t)(*p - '0');
                    if (k < w->npos) {
                        char *save = v[skip];
                        v[skip] = w->pos[k];
                        w->result = check_argv(w->c, v + skip, n - skip, w->sc, w->where, 0);
                        v[skip] = save;
                    }
                } else {
                    /* Every value the string gives the variable. */
                    size_t from = 0;
                    const char *val;
                    while (w->result == 0 && (val = var_value(w, p, nl, &from)))
                        check_split(w, val, v + skip + 1, n - skip - 1);
                }
                goto done;
            }
        }
        /* The command word with unknown variables taken as empty:
         * ${PREFIX}curl is curl. */
        if (dyn && strchr(cw, '$')) {
            char *x = expand_simple(w, cw, false);
            if (strcmp(x, cw) != 0) check_split(w, x, v + skip + 1, n - skip - 1);
            free(x);
            if (w->result) goto done;
        }
        /* The whole command with every expansion guessed, so that a
         * variable behind a wrapper (exec $c, env "$@") is seen too. */
        bool any = false;
        for (size_t i = skip; i < n; i++)
            if (*(int *)utarray_eltptr(w->dyn, (unsigned)i) && strchr(v[i], '$')) any = true;
        if (any) {
            /* Only the expanded words are split; a quoted literal stays one
             * word, and a variable the string does not set stays as written,
             * so a wrapper's operands keep their places. */
            kg_strv *ev = kg_strv_new();
            for (size_t i = skip; i < n; i++) {
                if (!*(int *)utarray_eltptr(w->dyn, (unsigned)i)) { kg_strv_push(ev, v[i]); continue; }
                char *x = expand_simple(w, v[i], true), *sv = NULL;
                if (strcmp(x, v[i]) == 0) kg_strv_push(ev, v[i]);
                else
                    for (char *t = strtok_r(x, " \t\n", &sv); t; t = strtok_r(NULL, " \t\n", &sv))
                        kg_strv_push(ev, t);
                free(x);
            }
            char **evv = kg_strv_nullterm(ev);
            if (kg_strv_len(ev)) w->result = check_argv(w->c, evv, kg_strv_len(ev), w->sc, w->where, 0);
            free(evv);
            kg_strv_free(ev);
            if (w->result) goto done;
        }
        w->result = check_argv(w->c, v + skip, n - skip, w->sc, w->where, 0);
    }
done:
    free(v);
    kg_strv_clear(w->words);
    utarray_clear(w->dyn);
}

static bool kw_is(const char *word, int dyn, const char *kw) { return !dyn && strcmp(word, kw) == 0; }

static void walker_word(walker *w, const char *word, bool dyn, bool quoted)
{
    if (w->result) return;
    if (w->redir_target) { w->redir_target = false; return; }
    w->fn_parens = false;
    int d = dyn || quoted; /* a quoted or expanded word is never a keyword */
    switch (w->st) {
    case ST_SKIP: return;
    case ST_FOR:
        if (kw_is(word, d, "do")) w->st = ST_CMD;
        return;
    case ST_CASE_WORD: w->st = ST_CASE_IN; return;
    case ST_CASE_IN: if (kw_is(word, d, "in")) w->st = ST_CASE_PAT; return;
    case ST_CASE_PAT:
        if (kw_is(word, d, "esac")) { w->case_depth--; w->st = ST_SKIP; }
        return;
    case ST_DBRACKET:
        if (kw_is(word, d, "]]")) w->st = ST_SKIP;
        return;
    case ST_FUNCNAME: w->st = ST_CMD; w->fn_parens = true; return;
    case ST_CMD:
        if (kg_strv_len(w->words) == 0) {
            static const char *const next_cmd[] = {"if", "then", "else", "elif", "while",
                "until", "do", "!", "{", "coproc", NULL};
            for (int i = 0; next_cmd[i]; i++)
                if (kw_is(word, d, next_cmd[i])) return;
            static const char *const ends[] = {"fi", "done", "}", NULL};
            for (int i = 0; ends[i]; i++)
                if (kw_is(word, d, ends[i])) { w->st = ST_SKIP; return; }
            if (kw_is(word, d, "esac") && w->case_depth > 0) { w->case_depth--; w->st = ST_SKIP; return; }
            if (kw_is(word, d, "for") || kw_is(word, d, "select")) { w->st = ST_FOR; return; }
            if (kw_is(word, d, "case")) { w->case_depth++; w->st = ST_CASE_WORD; return; }
            if (kw_is(word, d, "[[")) { w->st = ST_DBRACKET; return; }
            if (kw_is(word, d, "function")) { w->st = ST_FUNCNAME; return; }
        }
        /* Leading assignments keep the command position open. */
        if (!assignment_len(word)) w->st = ST_ARGS;
        break;
    case ST_ARGS: break;
    }
    kg_strv_push(w->words, word);
    int di = dyn;
    utarray_push_back(w->dyn, &di);
}

typedef enum { OP_SEQ, OP_PIPE, OP_CASE_END, OP_OPEN, OP_CLOSE, OP_REDIR } opkind;

static void walker_op(walker *w, opkind op)
{
    if (w->result) return;
    switch (op) {
    case OP_REDIR: w->redir_target = true; return;
    case OP_SEQ:
    case OP_PIPE:
        /* Inside [[ ]], a for header, or between case and its patterns,
         * separators are not command boundaries. */
        if (w->st == ST_DBRACKET || w->st == ST_FOR || w->st == ST_CASE_PAT ||
            w->st == ST_CASE_WORD || w->st == ST_CASE_IN || w->st == ST_FUNCNAME)
            return;
        walker_flush(w);
        w->st = ST_CMD;
        return;
    case OP_CASE_END:
        walker_flush(w);
        w->st = w->case_depth > 0 ? ST_CASE_PAT : ST_CMD;
        return;
    case OP_OPEN:
        if (w->st == ST_DBRACKET || w->st == ST_CASE_PAT || w->fn_parens) return;
        if (kg_strv_len(w->words) == 1 && w->st == ST_ARGS) { w->funcdef = true; return; }
        walker_flush(w);
        w->st = ST_CMD;
        return;
    case OP_CLOSE:
        if (w->st == ST_DBRACKET) return;
        if (w->st == ST_CASE_PAT) { w->st = ST_CMD; return; }
        if (w->funcdef || w->fn_parens) {
            w->funcdef = w->fn_parens = false;
            kg_strv_clear(w->words);
            utarray_clear(w->dyn);
            w->st = ST_CMD;
            return;
        }
        walker_flush(w);
        w->st = ST_SKIP;
        return;
    }
}

static int lex_list(lexer *lx, bool stop_at_paren);

/* Runs a nested command list ($( ), backticks, <( )) in its own walker. */
static int nested_string(lexer *lx, const char *s, size_t len)
{
    walker *w = lx->w;
    int r = check_string(w->c, s, len, w->sc, w->where, w->pos, w->npos);
    if (r && !w->result) w->result = r;
    return r;
}

/* $( ... ) starting after "$(" (or "<(" ">("): lexes it in a fresh walker
 * in place, so that quotes and nesting inside are understood. */
static void nested_paren(lexer *lx)
{
    walker *outer = lx->w;
    walker inner = *outer;
    inner.path_own = inner.cwd_own = NULL;
    inner.words = kg_strv_new();
    utarray_new(inner.dyn, &ut_int_icd);
    inner.vars = kg_strv_dup(outer->vars);
    inner.st = ST_CMD;
    inner.redir_target = inner.funcdef = inner.fn_parens = false;
    inner.case_depth = 0;
    inner.result = 0;
    lx->w = &inner;
    lex_list(lx, true);
    walker_flush(&inner);
    lx->w = outer;
    if (inner.result && !outer->result) outer->result = inner.result;
    kg_strv_free(inner.words);
    utarray_free(inner.dyn);
    kg_strv_free(inner.vars);
    free(inner.path_own);
    free(inner.cwd_own);
}

/* Skips a balanced region opened by open (already consumed). */
static bool skip_balanced(lexer *lx, char open, char close)
{
    int depth = 1;
    while (lx->i < lx->n) {
        char ch = lx->s[lx->i++];
        if (ch == '\\') { lx->i++; continue; }
        if (ch == '\'') { while (lx->i < lx->n && lx->s[lx->i] != '\'') lx->i++; if (lx->i >= lx->n) return false; lx->i++; continue; }
        if (ch == '"') { while (lx->i < lx->n && lx->s[lx->i] != '"') { if (lx->s[lx->i] == '\\') lx->i++; lx->i++; } if (lx->i >= lx->n) return false; lx->i++; continue; }
        if (ch == '$' && lx->i + 1 < lx->n && lx->s[lx->i] == '(' && lx->s[lx->i + 1] != '(') {
            lx->i++; /* a command substitution, also inside $(( )) */
            nested_paren(lx);
            if (lx->failed) return false;
            continue;
        }
        if (ch == open) depth++;
        else if (ch == close && --depth == 0) return true;
    }
    return false;
}

/* `...`: the body with its backslash escapes undone, lexed as a string. */
static bool backtick(lexer *lx, UT_string *lit)
{
    UT_string *body;
    utstring_new(body);
    while (lx->i < lx->n && lx->s[lx->i] != '`') {
        char ch = lx->s[lx->i++];
        if (ch == '\\' && lx->i < lx->n && strchr("$`\\", lx->s[lx->i])) ch = lx->s[lx->i++];
        utstring_bincpy(body, &ch, 1);
    }
    bool ok = lx->i < lx->n;
    if (ok) {
        lx->i++;
        nested_string(lx, utstring_body(body), utstring_len(body));
        utstring_printf(lit, "$(..)");
    }
    utstring_free(body);
    return ok;
}

/* $... inside or outside double quotes: appended to lit as written. */
static bool dollar(lexer *lx, UT_string *lit)
{
    const char *s = lx->s;
    lx->i++; /* the '$' */
    if (lx->i < lx->n && s[lx->i] == '(') {
        lx->i++;
        if (lx->i < lx->n && s[lx->i] == '(') { /* $(( arithmetic )) */
            lx->i++;
            if (!skip_balanced(lx, '(', ')')) return false;
            if (lx->i < lx->n && s[lx->i] == ')') lx->i++;
        } else {
            nested_paren(lx);
            if (lx->failed) return false;
        }
        utstring_printf(lit, "$(..)");
        return true;
    }
    if (lx->i < lx->n && s[lx->i] == '{') {
        size_t st = lx->i;
        lx->i++;
        if (!skip_balanced(lx, '{', '}')) return false;
        utstring_printf(lit, "$");
        utstring_bincpy(lit, s + st, lx->i - st);
        return true;
    }
    utstring_printf(lit, "$");
    if (lx->i < lx->n && (is_name_start(s[lx->i]))) {
        while (lx->i < lx->n && is_name_char(s[lx->i])) utstring_bincpy(lit, s + lx->i++, 1);
    } else if (lx->i < lx->n && strchr("@*#?$!-0123456789", s[lx->i]))
        utstring_bincpy(lit, s + lx->i++, 1);
    return true;
}

static bool dquote(lexer *lx, UT_string *lit, bool *dyn)
{
    const char *s = lx->s;
    while (lx->i < lx->n && s[lx->i] != '"') {
        char ch = s[lx->i];
        if (ch == '\\' && lx->i + 1 < lx->n) {
            char nx = s[lx->i + 1];
            if (nx == '\n') { lx->i += 2; continue; }
            if (strchr("$`\"\\", nx)) { utstring_bincpy(lit, &nx, 1); lx->i += 2; continue; }
            utstring_bincpy(lit, &ch, 1);
            lx->i++;
            continue;
        }
        if (ch == '$') { *dyn = true; if (!dollar(lx, lit)) return false; continue; }
        if (ch == '`') { *dyn = true; lx->i++; if (!backtick(lx, lit)) return false; continue; }
        utstring_bincpy(lit, &ch, 1);
        lx->i++;
    }
    if (lx->i >= lx->n) return false;
    lx->i++;
    return true;
}

/* Reads one word at lx->i.  Returns false on a parse failure. */
static bool read_word(lexer *lx, UT_string *lit, bool *dyn, bool *quoted)
{
    const char *s = lx->s;
    *dyn = *quoted = false;
    while (lx->i < lx->n) {
        char ch = s[lx->i];
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || strchr(";&|<>()", ch)) {
            /* NAME=( array ) belongs to the word. */
            if (ch == '(' && !*quoted && utstring_len(lit) &&
                assignment_len(utstring_body(lit)) == utstring_len(lit)) {
                lx->i++;
                if (!skip_balanced(lx, '(', ')')) return false;
                utstring_printf(lit, "(..)");
                continue;
            }
            break;
        }
        if (ch == '\\') {
            if (lx->i + 1 >= lx->n) { lx->i++; break; }
            if (s[lx->i + 1] != '\n') { utstring_bincpy(lit, s + lx->i + 1, 1); *quoted = true; }
            lx->i += 2;
            continue;
        }
        if (ch == '\'') {
            const char *e = memchr(s + lx->i + 1, '\'', lx->n - lx->i - 1);
            if (!e) return false;
            utstring_bincpy(lit, s + lx->i + 1, (size_t)(e - s) - lx->i - 1);
            lx->i = (size_t)(e - s) + 1;
            *quoted = true;
            continue;
        }
        if (ch == '"') { lx->i++; *quoted = true; if (!dquote(lx, lit, dyn)) return false; continue; }
        if (ch == '$' && lx->i + 1 < lx->n && s[lx->i + 1] == '\'') { /* $'...' */
            lx->i += 2;
            *quoted = true;
            while (lx->i < lx->n && s[lx->i] != '\'') {
                if (s[lx->i] == '\\' && lx->i + 1 < lx->n) {
                    char e = s[lx->i + 1];
                    char out = e == 'n' ? '\n' : e == 't' ? '\t' : e;
                    utstring_bincpy(lit, &out, 1);
                    lx->i += 2;
                    continue;
                }
                utstring_bincpy(lit, s + lx->i++, 1);
            }
            if (lx->i >= lx->n) return false;
            lx->i++;
            continue;
        }
        if (ch == '$' && lx->i + 1 < lx->n && s[lx->i + 1] == '"') { lx->i++; continue; }
        if (ch == '$') { *dyn = true; if (!dollar(lx, lit)) return false; continue; }
        if (ch == '`') { *dyn = true; lx->i++; if (!backtick(lx, lit)) return false; continue; }
        utstring_bincpy(lit, &ch, 1);
        lx->i++;
    }
    return true;
}

/* After a newline: the bodies of pending here-documents.  An unquoted
 * delimiter means $( ) and backticks inside run. */
static void heredoc_bodies(lexer *lx)
{
    for (int h = 0; h < lx->nhd; h++) {
        heredoc *hd = &lx->hd[h];
        size_t body_start = lx->i, body_end = lx->n;
        while (lx->i < lx->n) {
            size_t ls = lx->i;
            const char *nl = memchr(lx->s + ls, '\n', lx->n - ls);
            size_t le = nl ? (size_t)(nl - lx->s) : lx->n;
            size_t p = ls;
            if (hd->strip) while (p < le && lx->s[p] == '\t') p++;
            lx->i = nl ? le + 1 : lx->n;
            if (le - p == strlen(hd->delim) && memcmp(lx->s + p, hd->delim, le - p) == 0) {
                body_end = ls;
                break;
            }
        }
        if (!hd->quoted) {
            size_t save_i = lx->i, save_n = lx->n;
            for (size_t i = body_start; i < body_end && !lx->failed; i++) {
                if (lx->s[i] == '\\') { i++; continue; }
                if (lx->s[i] == '$' && i + 1 < body_end && lx->s[i + 1] == '(') {
                    UT_string *tmp;
                    utstring_new(tmp);
                    lx->i = i;
                    lx->n = body_end;
                    if (!dollar(lx, tmp)) lx->failed = true;
                    i = lx->i - 1;
                    utstring_free(tmp);
                } else if (lx->s[i] == '`') {
                    UT_string *tmp;
                    utstring_new(tmp);
                    lx->i = i + 1;
                    lx->n = body_end;
                    if (!backtick(lx, tmp)) lx->failed = true;
                    i = lx->i - 1;
                    utstring_free(tmp);
                }
            }
            lx->i = save_i;
            lx->n = save_n;
        }
        free(hd->delim);
    }
    lx->nhd = 0;
}

static int lex_list(lexer *lx, bool stop_at_paren)
{
    const char *s = lx->s;
    int depth = 0;
    UT_string *lit;
    utstring_new(lit);
    while (lx->i < lx->n && !lx->failed && !lx->w->result) {
        char ch = s[lx->i];
        if (ch == ' ' || ch == '\t' || ch == '\r') { lx->i++; continue; }
        if (ch == '\\' && lx->i + 1 < lx->n && s[lx->i + 1] == '\n') { lx->i += 2; continue; }
        if (ch == '#') {
            while (lx->i < lx->n && s[lx->i] != '\n') lx->i++;
            continue;
        }
        if (ch == '\n') { lx->i++; walker_op(lx->w, OP_SEQ); heredoc_bodies(lx); continue; }
        const char *p = s + lx->i;
        size_t left = lx->n - lx->i;
        if (left >= 2 && (p[0] == '<' || p[0] == '>') && p[1] == '(') { /* <( ) */
            lx->i += 2;
            nested_paren(lx);
            walker_word(lx->w, "<(..)", true, false);
            continue;
        }
        if (ch == ';') {
            if (left >= 2 && (p[1] == ';' || p[1] == '&')) {
                lx->i += (left >= 3 && p[1] == ';' && p[2] == '&') ? 3 : 2;
                walker_op(lx->w, OP_CASE_END);
            } else { lx->i++; walker_op(lx->w, OP_SEQ); }
            continue;
        }
        if (ch == '&') {
            if (left >= 2 && p[1] == '>') { lx->i += (left >= 3 && p[2] == '>') ? 3 : 2; walker_op(lx->w, OP_REDIR); continue; }
            lx->i += (left >= 2 && p[1] == '&') ? 2 : 1;
            walker_op(lx->w, OP_SEQ);
            continue;
        }
        if (ch == '|') {
            lx->i += (left >= 2 && (p[1] == '|' || p[1] == '&')) ? 2 : 1;
            walker_op(lx->w, OP_PIPE);
            continue;
        }
        if (ch == '(') {
            bool in_for = lx->w->st == ST_FOR; /* for (( ; ; )) */
            if (left >= 2 && p[1] == '(' &&
                ((lx->w->st == ST_CMD && kg_strv_len(lx->w->words) == 0) || in_for)) {
                lx->i += 2; /* (( arithmetic )) */
                if (!skip_balanced(lx, '(', ')')) { lx->failed = true; break; }
                if (lx->i < lx->n && s[lx->i] == ')') lx->i++;
                if (!in_for) lx->w->st = ST_SKIP;
                continue;
            }
            lx->i++;
            if (lx->w->st != ST_CASE_PAT) depth++;
            walker_op(lx->w, OP_OPEN);
            continue;
        }
        if (ch == ')') {
            lx->i++;
            if (lx->w->st == ST_CASE_PAT) { walker_op(lx->w, OP_CLOSE); continue; }
            if (depth == 0 && stop_at_paren) { utstring_free(lit); return 0; }
            if (depth > 0) depth--;
            walker_op(lx->w, OP_CLOSE);
            continue;
        }
        if (ch == '<' || ch == '>') {
            bool here = left >= 2 && p[0] == '<' && p[1] == '<' && !(left >= 3 && p[2] == '<');
            bool strip = here && left >= 3 && p[2] == '-';
            size_t k = 1;
            if (left >= 2 && strchr("<>&|", p[1])) k = 2;
            if (left >= 3 && p[0] == '<' && p[1] == '<' && (p[2] == '<' || p[2] == '-')) k = 3;
            lx->i += k;
            if (here) {
                while (lx->i < lx->n && (s[lx->i] == ' ' || s[lx->i] == '\t')) lx->i++;
                utstring_clear(lit);
                bool dyn, quoted;
                if (!read_word(lx, lit, &dyn, &quoted)) { lx->failed = true; break; }
                if (lx->nhd < 16) {
                    heredoc *hd = &lx->hd[lx->nhd++];
                    hd->delim = xstrdup(utstring_body(lit));
                    hd->quoted = quoted;
                    hd->strip = strip;
                }
                continue;
            }
            walker_op(lx->w, OP_REDIR);
            continue;
        }
        utstring_clear(lit);
        bool dyn, quoted;
        if (!read_word(lx, lit, &dyn, &quoted)) { lx->failed = true; break; }
        /* "2>" and "{fd}>": the number belongs to the redirection. */
        if (lx->i < lx->n && (s[lx->i] == '<' || s[lx->i] == '>') && !quoted && !dyn) {
            const char *b = utstring_body(lit);
            size_t l = utstring_len(lit), j = 0;
            while (j < l && b[j] >= '0' && b[j] <= '9') j++;
            if (j == l || (b[0] == '{' && b[l - 1] == '}')) continue;
        }
        walker_word(lx->w, utstring_body(lit), dyn, quoted);
    }
    utstring_free(lit);
    if (stop_at_paren && !lx->w->result) lx->failed = true; /* no closing ) */
    return 0;
}

/* When the string cannot be parsed, every word in it is treated as a
 * possible command name: fail towards blocking, not towards running. */
static int check_all_words(chk *c, const char *s, size_t len, scope sc, const char *where)
{
    char *buf = strndup(s, len);
    if (!buf) abort();
    int r = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, " \t\r\n;&|<>()`$\"'{}\\", &save); t && !r;
         t = strtok_r(NULL, " \t\r\n;&|<>()`$\"'{}\\", &save)) {
        word_info wi;
        char wh[PATH_MAX + 64];
        snprintf(wh, sizeof wh, "%s, which could not be parsed", where);
        r = check_word(c, t, sc, wh, &wi);
        free(wi.path);
    }
    free(buf);
    return r;
}

static int check_string(chk *c, const char *s, size_t len, scope sc,
                        const char *where, char **pos, size_t npos)
{
    if (++c->depth > MAX_DEPTH) {
        c->depth--;
        return block(c, NULL, where, "commands nested too deeply to check");
    }
    walker w = {.c = c, .sc = sc, .where = where, .pos = pos, .npos = npos,
                .stdin_args = c->stdin_args, .st = ST_CMD};
    c->stdin_args = false;
    w.words = kg_strv_new();
    utarray_new(w.dyn, &ut_int_icd);
    w.vars = kg_strv_new();
    lexer lx = {.w = &w, .s = s, .n = len};
    lex_list(&lx, false);
    if (!lx.failed) walker_flush(&w);
    for (int h = 0; h < lx.nhd; h++) free(lx.hd[h].delim);
    int r = w.result;
    if (r == 0 && lx.failed) r = check_all_words(c, s, len, sc, where);
    kg_strv_free(w.words);
    utarray_free(w.dyn);
    kg_strv_free(w.vars);
    free(w.path_own);
    free(w.cwd_own);
    c->depth--;
    return r;
}

/* ---- wrappers, shells and the rest of the argv walk --------------------- */

/* Skips options the way getopt with a leading '+' does (stop at the first
 * operand).  short_arg: letters that take a value; long_arg: long options
 * that take one (also abbreviated, as GNU getopt allows).  Getting
 * this wrong in the direction of "no value" only costs a false positive. */
/* True when the long option a (without "--", len l) abbreviates a name in
 * the space-separated list. */
static bool long_takes(const char *list, const char *a, size_t l)
{
    if (!list || l == 0) return false;
    for (const char *p = list; (p = strchr(p, ' ')) != NULL;) {
        p++;
        if (!*p) break;
        const char *e = strchr(p, ' ');
        size_t nl = e ? (size_t)(e - p) : strlen(p);
        if (l <= nl && strncmp(p, a, l) == 0) return true;
        p += nl;
    }
    return false;
}

static size_t skip_opts(char **w, size_t n, size_t i, const char *short_arg,
                        const char *long_arg, bool digits_are_opts)
{
    while (i < n) {
        const char *a = w[i];
        if (strcmp(a, "--") == 0) return i + 1;
        if (a[0] != '-' || a[1] == '\0') return i;
        i++;
        if (a[1] == '-') {
            if (!strchr(a, '=') && long_takes(long_arg, a + 2, strlen(a + 2))) i++;
            continue;
        }
        if (digits_are_opts && a[1] >= '0' && a[1] <= '9') continue;
        for (const char *p = a + 1; *p; p++)
            if (short_arg && strchr(short_arg, *p)) {
                if (!p[1]) i++;
                break;
            }
    }
    return i;
}

static bool has_short(char **w, size_t from, size_t to, char letter)
{
    for (size_t i = from; i < to; i++)
        if (w[i][0] == '-' && w[i][1] != '-' && strchr(w[i] + 1, letter)) return true;
    return false;
}

/* The command a wrapper runs starts at w[i]. */
static int inner(chk *c, char **w, size_t n, size_t i, scope sc, const char *tool,
                 const char *where, int flags)
{
    if (i >= n) {
        if (flags & F_XARGS)
            return block(c, NULL, where, "xargs would run %s with a command read from stdin", tool);
        return 0;
    }
    char wh[PATH_MAX + 64];
    if (*where) snprintf(wh, sizeof wh, "run by %s %s", tool, where);
    else snprintf(wh, sizeof wh, "run by %s", tool);
    return check_argv(c, w + i, n - i, sc, wh, flags);
}

static char *join_words(char **w, size_t n)
{
    UT_string *s;
    utstring_new(s);
    for (size_t i = 0; i < n; i++) utstring_printf(s, "%s%s", i ? " " : "", w[i]);
    char *r = xstrdup(utstring_body(s));
    utstring_free(s);
    return r;
}

static int shell_string(chk *c, const char *str, scope sc, const char *what,
                        const char *where, char **pos, size_t npos)
{
    char wh[PATH_MAX + 64];
    if (*where) snprintf(wh, sizeof wh, "in the %s string %s", what, where);
    else snprintf(wh, sizeof wh, "in the %s string", what);
    return check_string(c, str, strlen(str), sc, wh, pos, npos);
}

/* sh [options] [-c string [name [arg...]] | file [arg...]] */
static int check_shell(chk *c, char **w, size_t n, scope sc, const char *where, int flags)
{
    bool cmode = false;
    size_t i = 1;
    while (i < n) {
        const char *a = w[i];
        if (strcmp(a, "--") == 0 || strcmp(a, "-") == 0) { i++; break; }
        if (a[0] == '-' && a[1] == '-') {
            i += (strcmp(a, "--rcfile") == 0 || strcmp(a, "--init-file") == 0) ? 2 : 1;
            continue;
        }
        if ((a[0] != '-' && a[0] != '+') || !a[1]) break;
        i++;
        for (const char *p = a + 1; *p; p++) {
            if (*p == 'c' && a[0] == '-') cmode = true;
            if (*p == 'o' || *p == 'O') i++; /* -o option-name */
        }
    }
    const char *sh = base_name(w[0]);
    if (cmode) {
        if (i >= n)
            return (flags & F_XARGS) ? block(c, NULL, where, "xargs would pass %s -c a string read from stdin", sh) : 0;
        char what[64];
        snprintf(what, sizeof what, "%s -c", sh);
        c->stdin_args = (flags & F_XARGS) != 0;
        return shell_string(c, w[i], sc, what, where, w + i + 1, n - i - 1);
    }
    if (i >= n)
        return (flags & F_XARGS) ? block(c, NULL, where, "xargs would run %s on a file named on stdin", sh) : 0;
    /* sh FILE: the file is read as commands whatever its first line says;
     * bash looks a name without a slash up in PATH when it is not here. */
    struct stat st;
    char *j = w[i][0] == '/' ? xstrdup(w[i]) : join_path(sc.cwd ? sc.cwd : ".", w[i]);
    int r = 0;
    if (stat(j, &st) == 0 && S_ISREG(st.st_mode))
        r = check_shell_file(c, j, &st, sc, w[i], w + i, n - i);
    else if (!strchr(w[i], '/')) {
        char *p = resolve(w[i], sc.path, sc.cwd, &st);
        if (p) r = check_shell_file(c, p, &st, sc, w[i], w + i, n - i);
        free(p);
    }
    free(j);
    return r;
}

static int check_find(chk *c, char **w, size_t n, scope sc, const char *where)
{
    for (size_t i = 1; i < n; i++) {
        const char *a = w[i];
        if (strcmp(a, "-exec") && strcmp(a, "-execdir") && strcmp(a, "-ok") && strcmp(a, "-okdir"))
            continue;
        size_t j = i + 1, k = j;
        while (k < n && strcmp(w[k], ";") != 0 &&
               !(strcmp(w[k], "+") == 0 && k > j && strcmp(w[k - 1], "{}") == 0))
            k++;
        char tool[32];
        snprintf(tool, sizeof tool, "find %s", a);
        int r = k > j ? inner(c, w, k, j, sc, tool, where, 0) : 0;
        if (r) return r;
        i = k;
    }
    return 0;
}

static int check_argv(chk *c, char **w, size_t n, scope sc, const char *where, int flags)
{
    if (n == 0) return 0;
    if (++c->depth > MAX_DEPTH) {
        c->depth--;
        return block(c, NULL, where, "commands nested too deeply to check");
    }
    char *key = NULL;
    if (asprintf(&key, "%s\x01%s\x01%s", sc.path ? sc.path : "", sc.cwd ? sc.cwd : "", w[0]) < 0)
        abort();
    memo *m;
    HASH_FIND_STR(c->memo, key, m);
    if (m) {
        free(key);
        c->depth--;
        return 0;
    }
    word_info wi;
    int r = check_word(c, w[0], sc, where, &wi);
    if (r) goto out;
    size_t i;
    const char *tool = base_name(w[0]);
    /* Whatever its name says, a script is also read (fakeroot, for one,
     * is a shell script that runs its arguments). */
    if (wi.path) r = check_exec_file(c, &wi, w, n, sc, where);
    if (r) goto out;
    switch (wi.k) {
    case K_NONE: break;
    case K_SHELL: r = check_shell(c, w, n, sc, where, flags); break;
    case K_ENV: {
        scope in = sc;
        char *cwd_own = NULL, *path_own = NULL;
        /* Walked by hand: -C and -S change what runs, not just how. */
        for (i = 1; i < n && !r;) {
            const char *a = w[i];
            if (strcmp(a, "--") == 0) { i++; break; }
            if (a[0] != '-' || !a[1]) break;
            const char *val = NULL;
            char opt = 0;
            if (a[1] == '-') {
                /* GNU accepts any unambiguous prefix of a long option. */
                const char *eq = strchr(a, '=');
                size_t l = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
                if (l >= 2 && strncmp("chdir", a + 2, l) == 0) opt = 'C';
                else if (l >= 2 && strncmp("split-string", a + 2, l) == 0) opt = 'S';
                else if (l >= 2 && strncmp("unset", a + 2, l) == 0) opt = 'u';
                if (opt) val = eq ? eq + 1 : (i + 1 < n ? w[++i] : NULL);
            } else {
                for (const char *p = a + 1; *p; p++) {
                    if (*p == 'u' || *p == 'C' || *p == 'S' || *p == 'P') {
                        opt = *p;
                        val = p[1] ? p + 1 : (i + 1 < n ? w[++i] : NULL);
                        break;
                    }
                }
            }
            i++;
            if (!val) continue;
            if (opt == 'C') {
                free(cwd_own);
                cwd_own = val[0] == '/' ? xstrdup(val) : join_path(in.cwd ? in.cwd : ".", val);
                in.cwd = cwd_own;
            } else if (opt == 'P') {
                free(path_own);
                path_own = xstrdup(val);
                in.path = path_own;
            } else if (opt == 'S') {
                r = shell_string(c, val, in, "env -S", where, NULL, 0);
            }
        }
        for (; i < n && !r && strchr(w[i], '='); i++) {
            if (strncmp(w[i], "PATH=", 5) == 0) {
                free(path_own);
                path_own = xstrdup(w[i] + 5);
                in.path = path_own;
            }
        }
        if (!r) r = inner(c, w, n, i, in, tool, where, flags);
        free(cwd_own);
        free(path_own);
        break;
    }
    case K_WRAP: {
        const tool_spec *t = wi.t;
        i = skip_opts(w, n, 1, t->shorts, t->longs, t->digits) + t->npos;
        while (t->assigns && i < n && strchr(w[i], '=')) i++;
        r = inner(c, w, n, i, sc, tool, where, flags);
        break;
    }
    case K_XARGS:
        i = skip_opts(w, n, 1, wi.t->shorts, wi.t->longs, false);
        r = i < n ? inner(c, w, n, i, sc, tool, where, flags | F_XARGS) : 0; /* echo */
        break;
    case K_COMMAND:
        i = skip_opts(w, n, 1, NULL, NULL, false);
        /* command -v / -V only look the name up. */
        if (!has_short(w, 1, i, 'v') && !has_short(w, 1, i, 'V'))
            r = inner(c, w, n, i, sc, tool, where, flags);
        break;
    case K_CSTRING: {
        /* su and runuser take -c anywhere (GNU getopt permutes). */
        char what[64];
        snprintf(what, sizeof what, "%s -c", tool);
        for (i = 1; i < n && !r; i++) {
            const char *val = NULL;
            if (strcmp(w[i], "--") == 0) break;
            if (strcmp(w[i], "-c") == 0 || strcmp(w[i], "--command") == 0) val = i + 1 < n ? w[++i] : NULL;
            else if (strncmp(w[i], "--command=", 10) == 0) val = w[i] + 10;
            else if (w[i][0] == '-' && w[i][1] != '-' && strchr(w[i], 'c')) {
                const char *cp = strchr(w[i], 'c');
                val = cp[1] ? cp + 1 : (i + 1 < n ? w[++i] : NULL);
            }
            if (val) r = shell_string(c, val, sc, what, where, NULL, 0);
        }
        /* runuser -u USER COMMAND... */
        if (!r && strcmp(wi.t ? wi.t->name : "", "runuser") == 0 && has_short(w, 1, n, 'u')) {
            i = skip_opts(w, n, 1, wi.t->shorts, wi.t->longs, false);
            r = inner(c, w, n, i, sc, tool, where, flags);
        }
        break;
    }
    case K_LOADER: {
        i = skip_opts(w, n, 1, NULL,
                      " library-path preload argv0 audit inhibit-rpath glibc-hwcaps-prepend glibc-hwcaps-mask ",
                      false);
        r = inner(c, w, n, i, sc, tool, where, flags);
        break;
    }
    case K_FLOCK: {
        const tool_spec *t = wi.t ? wi.t : tool_by_name("flock");
        i = skip_opts(w, n, 1, t->shorts, t->longs, false) + 1; /* after the lock file */
        if (i < n && (strcmp(w[i], "-c") == 0 || strcmp(w[i], "--command") == 0))
            r = i + 1 < n ? shell_string(c, w[i + 1], sc, "flock -c", where, NULL, 0) : 0;
        else
            r = inner(c, w, n, skip_opts(w, n, i, t->shorts, t->longs, false), sc, tool, where, flags);
        break;
    }
    case K_WATCH: {
        const tool_spec *t = wi.t ? wi.t : tool_by_name("watch");
        i = skip_opts(w, n, 1, t->shorts, t->longs, false);
        if (has_short(w, 1, i, 'x')) r = inner(c, w, n, i, sc, tool, where, flags);
        else if (i < n) {
            char *s = join_words(w + i, n - i); /* watch runs sh -c */
            r = shell_string(c, s, sc, "watch", where, NULL, 0);
            free(s);
        }
        break;
    }
    case K_FIND: r = check_find(c, w, n, sc, where); break;
    case K_BUSYBOX:
        /* busybox APPLET args: the applet is chosen by name. */
        if (n > 1 && w[1][0] != '-') r = inner(c, w, n, 1, sc, tool, where, flags);
        break;
    case K_EVAL:
        if (n > 1) {
            char *s = join_words(w + 1, n - 1);
            r = shell_string(c, s, sc, "eval", where, NULL, 0);
            free(s);
        }
        break;
    case K_TRAP:
        if (n > 2 && strcmp(w[1], "-") != 0 && w[1][0] != '-')
            r = shell_string(c, w[1], sc, "trap", where, NULL, 0);
        break;
    case K_ALIAS:
        for (i = 1; i < n && !r; i++) {
            const char *eq = strchr(w[i], '=');
            if (eq) r = shell_string(c, eq + 1, sc, "alias", where, NULL, 0);
        }
        break;
    case K_SOURCE:
        if (n > 1) {
            struct stat st;
            char *p = NULL;
            if (!strchr(w[1], '/')) {
                p = resolve(w[1], sc.path, sc.cwd, &st);
                if (!p) { /* sourcing does not need the execute bit */
                    char *j = join_path(sc.cwd ? sc.cwd : ".", w[1]);
                    if (stat(j, &st) == 0 && S_ISREG(st.st_mode)) p = j;
                    else free(j);
                }
            } else {
                char *j = w[1][0] == '/' ? xstrdup(w[1]) : join_path(sc.cwd ? sc.cwd : ".", w[1]);
                if (stat(j, &st) == 0 && S_ISREG(st.st_mode)) p = j;
                else free(j);
            }
            if (p) r = check_shell_file(c, p, &st, sc, w[1], w + 1, n - 1);
            free(p);
        }
        break;
    case K_CD: break;
    }
    if (r == 0 && wi.k == K_NONE) {
        m = calloc(1, sizeof *m);
        if (!m) abort();
        m->key = key;
        key = NULL;
        HASH_ADD_KEYPTR(hh, c->memo, m->key, strlen(m->key), m);
    }
out:
    free(key);
    free(wi.path);
    c->depth--;
    return r;
}

int kg_denyexec_check(kg_denyexec *d, const char *const *argv, size_t argc,
                      const char *cwd, char *reason, size_t reason_len,
                      kg_error *err)
{
    if (reason && reason_len) reason[0] = '\0';
    if (!d || (!argv && argc)) return kg_err_set(err, EINVAL, "deny list: no command");
    /* Each deny entry is looked at once per check: a file replaced since
     * the list was built is compared as it is now. */
    for (size_t i = 0; i < d->ndeny; i++) {
        target *t = &d->deny[i];
        t->ok = t->path && stat(t->path, &t->st) == 0 && S_ISREG(t->st.st_mode);
    }
    chk c = {.d = d, .reason = reason, .reason_len = reason_len};
    static const UT_icd pair_icd = {2 * sizeof(uint64_t), NULL, NULL, NULL};
    utarray_new(c.seen, &pair_icd);
    char **v = calloc(argc + 1, sizeof *v);
    if (!v) abort();
    for (size_t i = 0; i < argc; i++) v[i] = (char *)argv[i];
    scope sc = {.path = d->path_env, .cwd = cwd};
    int r = check_argv(&c, v, argc, sc, "", 0);
    free(v);
    utarray_free(c.seen);
    memo *m, *tmp;
    HASH_ITER(hh, c.memo, m, tmp) {
        HASH_DEL(c.memo, m);
        free(m->key);
        free(m);
    }
    cache_save(d);
    return r;
}
