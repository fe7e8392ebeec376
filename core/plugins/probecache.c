/* probecache.c: the QUICK probe of a box plugin, kept per user and per
 * boot (probecache.h).
 *
 * Why: a quick probe forks once to try unshare(CLONE_NEWUSER) (bubblewrap
 * and Landlock each, about a millisecond each in a VM) and reads sysctls
 * and tool paths, on every `kgate run`, to learn what cannot change
 * within a boot unless one of a known set of inputs changes.
 *
 * The key.  An entry is used only when all of these are what they were
 * when it was written (docs/plugins.md says why the set is complete):
 *   - the boot (boot_id) and kgate's own binary;
 *   - the user: uid, euid, gid, egid;
 *   - the process's situation: its user, mount, pid and network
 *     namespaces, no_new_privs, its seccomp mode and number of filters,
 *     its capability sets and its LSM label (a container, an outer bwrap
 *     --disable-userns, a seccomp profile or an AppArmor profile each
 *     change one of them);
 *   - the sysctls that govern user namespaces;
 *   - PATH, and each absolute PATH directory's and each tool directory's
 *     identity and times (a tool installed or removed changes them);
 *   - per plugin: the plugin file's identity (device, inode, size, mtime,
 *     ctime) and the identity of the tool its probe named.
 *
 * Where: ~/.kgate/cache, which no box can write or see (fpcache.c says
 * why); the directory must be the user's and 0700-like, each file the
 * user's, mode 0600, a regular file opened without following a link, of
 * exactly the expected size.  An entry only ever stands for a probe that
 * was made: it never adds a backend, and a launch that fails drops it. */
#include "probecache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msg.h"
#include "oom.h"
#include "os.h"
#include "kgate/kgate-tool.h"

#define PC_MAGIC "kgate-probes\n\0\0"
#define PC_VERSION 1u
#define PC_KEY_MAX 16384

/* A file's identity and times: any write, chmod, chown, rename over or
 * replacement changes one of them. */
typedef struct pc_fid {
    uint64_t dev, ino, size, mode;
    int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
} pc_fid;

/* One plugin's probe, as stored (fixed layout; strings NUL-terminated). */
typedef struct pc_entry {
    pc_fid plugin, tool;
    int32_t available, score;
    char version[64];
    char tool_path[256];
    char reason[256];
    uint32_t n_facts;
    struct {
        char name[32];
        int32_t value;
    } facts[KGATE_PROBE_MAX_FACTS];
} pc_entry;

typedef struct pc_header {
    char magic[16];
    uint32_t version;
    uint32_t key_len;
} pc_header;

struct kg_probecache {
    char *dir;
    int key_done; /* the key was computed (or found unknowable) */
    char *key; /* NULL: unknowable here, nothing cached */
    size_t key_len;
};

/* KGATE_DEBUG only (kg_debug, the one switch): the tests read hits and
 * misses from it.  The name is a plugin's: kg_say escapes it. */
static void say(const char *name, const char *what)
{
    if (kg_debug()) kg_say("probe cache: %s: %s", name, what);
}

static int fid_of(const char *path, int follow, pc_fid *out)
{
    struct stat st;
    if ((follow ? stat(path, &st) : lstat(path, &st)) != 0) return -1;
    struct timespec m = kg_os_stat_mtime(&st), ch = kg_os_stat_ctime(&st);
    *out = (pc_fid){(uint64_t)st.st_dev,
                    (uint64_t)st.st_ino,
                    (uint64_t)st.st_size,
                    (uint64_t)st.st_mode,
                    m.tv_sec,
                    m.tv_nsec,
                    ch.tv_sec,
                    ch.tv_nsec};
    return 0;
}

/* ---- the situation key ------------------------------------------------- */

/* Appends up to max bytes of a small file, or "-" when it cannot be read:
 * a sysctl this kernel lacks is a value too. */
static void add_file(UT_string *k, const char *label, const char *path, size_t max)
{
    char buf[4096];
    if (max > sizeof buf - 1) max = sizeof buf - 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? read(fd, buf, max) : -1;
    if (fd >= 0) close(fd);
    utstring_printf(k, "%s=", label);
    if (n < 0)
        utstring_printf(k, "-");
    else
        utstring_bincpy(k, buf, (size_t)n);
    utstring_printf(k, "\n");
}

static void add_fid(UT_string *k, const char *label, const char *path, int follow)
{
    pc_fid f;
    if (fid_of(path, follow, &f) != 0) {
        utstring_printf(k, "%s=-\n", label);
        return;
    }
    utstring_printf(k, "%s=%llu:%llu:%llu:%llo:%lld.%lld:%lld.%lld\n", label,
                    (unsigned long long)f.dev, (unsigned long long)f.ino,
                    (unsigned long long)f.size, (unsigned long long)f.mode, (long long)f.mtime_s,
                    (long long)f.mtime_ns, (long long)f.ctime_s, (long long)f.ctime_ns);
}

/* A namespace is its nsfs inode; the times /proc shows are the moment of
 * the look, not the namespace's. */
static void add_ns(UT_string *k, const char *label, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        utstring_printf(k, "%s=-\n", label);
    else
        utstring_printf(k, "%s=%llu:%llu\n", label, (unsigned long long)st.st_dev,
                        (unsigned long long)st.st_ino);
}

/* The lines of /proc/self/status that say what this process may do:
 * 1 when all were found. */
static int add_status(UT_string *k)
{
    static const char *const want[] = {
        "NoNewPrivs:", "Seccomp:", "Seccomp_filters:", "CapPrm:", "CapEff:", "CapBnd:"};
    FILE *f = fopen("/proc/self/status", "re");
    if (!f) return 0;
    char line[256];
    size_t found = 0;
    while (fgets(line, sizeof line, f))
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            if (strncmp(line, want[i], strlen(want[i])) == 0) {
                utstring_printf(k, "%s", line);
                found++;
            }
    fclose(f);
    /* Seccomp_filters is missing on kernels before 5.9: not required. */
    return found >= 5;
}

/* Every absolute PATH directory (the deny list and the command's lookup
 * read it), and every directory tools are looked up in: a tool added or
 * removed there changes the directory's times. */
static void add_path_dirs(UT_string *k)
{
    const char *path = getenv("PATH");
    utstring_printf(k, "PATH=%s\n", path ? path : "(unset)");
    for (const char *s = path ? path : ""; *s;) {
        size_t n = strcspn(s, ":");
        if (n > 0 && s[0] == '/' && n < 4096) {
            char dir[4096];
            memcpy(dir, s, n);
            dir[n] = '\0';
            add_fid(k, dir, dir, 1);
        }
        s += n;
        if (*s == ':') s++;
    }
    /* Where the backends look their tools up (kgate-tool.h). */
    static const char dirs[] = KGATE_TOOL_DIRS;
    for (const char *s = dirs; *s;) {
        size_t n = strcspn(s, ":");
        char dir[64];
        snprintf(dir, sizeof dir, "%.*s", (int)n, s);
        add_fid(k, dir, dir, 1);
        s += n + (s[n] == ':');
    }
}

/* The sysctls that say whether user namespaces may be made (the ones
 * bwrap-probe.c reads, and the user namespace count the trial needs). */
static void add_sysctls(UT_string *k, const char *root)
{
    static const char *const names[] = {"user/max_user_namespaces",
                                        "kernel/unprivileged_userns_clone",
                                        "kernel/apparmor_restrict_unprivileged_userns"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", root, names[i]);
        add_file(k, path, path, 32);
    }
}

static char *make_key(size_t *len)
{
    UT_string *k;
    utstring_new(k);
    utstring_printf(k, "kgate probe cache %u\n", PC_VERSION);
    char boot[64];
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, boot, sizeof boot - 1) : -1;
    if (fd >= 0) close(fd);
    int ok = n >= 36; /* without a boot id, no key: nothing is cached */
    if (ok) utstring_printf(k, "boot=%.*s", (int)n, boot);
    add_fid(k, "exe", "/proc/self/exe", 1);
    utstring_printf(k, "ids=%ld:%ld:%ld:%ld\n", (long)getuid(), (long)geteuid(), (long)getgid(),
                    (long)getegid());
    add_ns(k, "ns.user", "/proc/self/ns/user");
    add_ns(k, "ns.mnt", "/proc/self/ns/mnt");
    add_ns(k, "ns.pid", "/proc/self/ns/pid");
    add_ns(k, "ns.net", "/proc/self/ns/net");
    ok = add_status(k) && ok;
    add_file(k, "lsm", "/proc/self/attr/current", 256);
    add_sysctls(k, "/proc/sys");
    /* Tests cannot change a sysctl where /proc/sys is read-only: they
     * name a directory of stand-ins, read in addition to the real ones,
     * never instead, so the override can only add misses. */
    const char *fake = getenv("KGATE_TEST_PROBECACHE_SYSCTLS");
    if (fake && fake[0] == '/') add_sysctls(k, fake);
    add_path_dirs(k);
    char *r = NULL;
    if (ok && utstring_len(k) <= PC_KEY_MAX) {
        *len = utstring_len(k);
        r = malloc(*len);
        if (!r) kg_oom();
        memcpy(r, utstring_body(k), *len);
    }
    utstring_free(k);
    return r;
}

const char *kg_probecache_key(kg_probecache *c)
{
    if (!c->key_done) {
        c->key = make_key(&c->key_len);
        c->key_done = 1;
    }
    return c->key;
}

/* ---- the files ----------------------------------------------------------- */

/* The cache directory: the user's, a directory (not a link to one) that no
 * one else can write or read.  Anything else is not used at all. */
static int dir_ok(const char *dir)
{
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           (st.st_mode & 077) == 0;
}

static char *file_of(const kg_probecache *c, const char *name)
{
    char *f = NULL;
    if (asprintf(&f, "%s/probe.%s", c->dir, name) < 0) kg_oom();
    return f;
}

/* Reads the whole file, at most max bytes, into buf: its length, or -1
 * with why.  Only the user's own private regular file is read. */
static ssize_t read_bounded(const char *file, char *buf, size_t max, const char **why)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        *why = errno == ENOENT ? "miss (no entry)" : "ignored (cannot open it)";
        return -1;
    }
    struct stat st;
    size_t got = 0;
    ssize_t r = -1;
    *why = "ignored (not a 0600 file of the user's)";
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        (st.st_mode & 07777) == 0600) {
        *why = "ignored (not a cache entry)";
        if ((uint64_t)st.st_size <= max) {
            while (got < (size_t)st.st_size && (r = read(fd, buf + got, max - got)) > 0)
                got += (size_t)r;
            r = got == (size_t)st.st_size ? (ssize_t)got : -1;
        }
    }
    close(fd);
    return r;
}

static int terminated(const char *s, size_t n) { return memchr(s, '\0', n) != NULL; }

/* The entry's own fields are sane: strings end, counts and flags are in
 * range.  Says nothing about whether it is current. */
static int entry_sane(const pc_entry *e)
{
    if (e->available != 0 && e->available != 1) return 0;
    if (e->n_facts > KGATE_PROBE_MAX_FACTS) return 0;
    if (!terminated(e->version, sizeof e->version) ||
        !terminated(e->tool_path, sizeof e->tool_path) || !terminated(e->reason, sizeof e->reason))
        return 0;
    for (uint32_t i = 0; i < e->n_facts; i++)
        if (!terminated(e->facts[i].name, sizeof e->facts[i].name)) return 0;
    return 1;
}

/* The entry is for this plugin file and its tool as they are now. */
static const char *entry_current(const pc_entry *e, const char *path)
{
    pc_fid now;
    if (fid_of(path, 1, &now) != 0 || memcmp(&now, &e->plugin, sizeof now) != 0)
        return "miss (the plugin file changed)";
    pc_fid none = {0};
    if (e->tool_path[0] == '\0')
        return memcmp(&e->tool, &none, sizeof none) ? "ignored (not a cache entry)" : NULL;
    if (fid_of(e->tool_path, 1, &now) != 0 || memcmp(&now, &e->tool, sizeof now) != 0)
        return "miss (the tool changed)";
    return NULL;
}

static void entry_to_probe(const pc_entry *e, kgate_probe *out)
{
    kgate_probe_init(out);
    out->available = e->available;
    out->score = e->score;
    memcpy(out->version, e->version, sizeof out->version);
    memcpy(out->tool_path, e->tool_path, sizeof out->tool_path);
    memcpy(out->reason, e->reason, sizeof out->reason);
    for (uint32_t i = 0; i < e->n_facts; i++)
        kgate_probe_set_fact(out, e->facts[i].name, e->facts[i].value);
}

/* Checks the bytes of an entry file in order: its form, then its key,
 * then its plugin and tool.  NULL when e may be used. */
static const char *entry_check(const kg_probecache *c, const char *buf, size_t len,
                               const char *path, pc_entry *e)
{
    pc_header h;
    if (len < sizeof h) return "ignored (not a cache entry)";
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, PC_MAGIC, sizeof h.magic) != 0 || h.version != PC_VERSION ||
        h.key_len > PC_KEY_MAX || len != sizeof h + h.key_len + sizeof *e)
        return "ignored (not a cache entry)";
    memcpy(e, buf + sizeof h + h.key_len, sizeof *e);
    if (!entry_sane(e)) return "ignored (not a cache entry)";
    if (h.key_len != c->key_len || memcmp(buf + sizeof h, c->key, c->key_len) != 0)
        return "miss (made in another situation)";
    return entry_current(e, path);
}

int kg_probecache_get(kg_probecache *c, const char *name, const char *path, kgate_probe *out)
{
    if (!c || !dir_ok(c->dir) || !kg_probecache_key(c)) return 0;
    /* The bound: the largest entry this version writes. */
    size_t max = sizeof(pc_header) + PC_KEY_MAX + sizeof(pc_entry);
    char *buf = malloc(max);
    if (!buf) kg_oom();
    char *file = file_of(c, name);
    const char *why = NULL;
    pc_entry e;
    ssize_t n = read_bounded(file, buf, max, &why);
    if (n >= 0 && (why = entry_check(c, buf, (size_t)n, path, &e)) == NULL) entry_to_probe(&e, out);
    say(name, why ? why : "hit");
    free(file);
    free(buf);
    return why == NULL;
}

static int entry_from_probe(const kgate_probe *in, const char *path, pc_entry *e)
{
    memset(e, 0, sizeof *e);
    if (fid_of(path, 1, &e->plugin) != 0) return -1;
    /* A tool that cannot be looked at now cannot be checked later. */
    if (in->tool_path[0] && fid_of(in->tool_path, 1, &e->tool) != 0) return -1;
    e->available = in->available ? 1 : 0;
    e->score = in->score;
    snprintf(e->version, sizeof e->version, "%s", in->version);
    snprintf(e->tool_path, sizeof e->tool_path, "%s", in->tool_path);
    snprintf(e->reason, sizeof e->reason, "%s", in->reason);
    size_t n = in->n_facts > KGATE_PROBE_MAX_FACTS ? KGATE_PROBE_MAX_FACTS : in->n_facts;
    e->n_facts = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        snprintf(e->facts[i].name, sizeof e->facts[i].name, "%s", in->facts[i].name);
        e->facts[i].value = in->facts[i].value;
    }
    return 0;
}

/* Written whole under a name of its own, then renamed over the entry: a
 * reader sees the old entry or the new one, never half of one. */
static void write_entry(kg_probecache *c, const char *name, const pc_entry *e)
{
    pc_header h = {.version = PC_VERSION, .key_len = (uint32_t)c->key_len};
    memcpy(h.magic, PC_MAGIC, sizeof h.magic);
    char *file = file_of(c, name), *tmp = NULL;
    if (asprintf(&tmp, "%s.%ld.tmp", file, (long)getpid()) < 0) kg_oom();
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int ok = fd >= 0 && fchmod(fd, 0600) == 0 && write(fd, &h, sizeof h) == (ssize_t)sizeof h &&
             write(fd, c->key, c->key_len) == (ssize_t)c->key_len &&
             write(fd, e, sizeof *e) == (ssize_t)sizeof *e;
    if (fd >= 0 && close(fd) != 0) ok = 0;
    if (fd >= 0 && (!ok || rename(tmp, file) != 0)) unlink(tmp);
    say(name, ok ? "written" : "not written");
    free(tmp);
    free(file);
}

void kg_probecache_put(kg_probecache *c, const char *name, const char *path, const kgate_probe *in)
{
    if (!c || in->state || !kg_probecache_key(c)) return;
    /* The cache's directory, 0700, inside kgate's own (~/.kgate), which
     * is not made here: before the first launch made it (the audit log
     * does), nothing is kept, as the fingerprint cache does. */
    (void)mkdir(c->dir, 0700);
    pc_entry e;
    if (!dir_ok(c->dir) || entry_from_probe(in, path, &e) != 0) {
        say(name, "not written (the directory is not the user's 0700 one)");
        return;
    }
    write_entry(c, name, &e);
}

void kg_probecache_forget(kg_probecache *c, const char *name)
{
    if (!c || !dir_ok(c->dir)) return;
    char *file = file_of(c, name);
    if (unlink(file) == 0) say(name, "dropped");
    free(file);
}

kg_probecache *kg_probecache_new(const char *dir)
{
    kg_probecache *c = calloc(1, sizeof *c);
    if (!c) kg_oom();
    c->dir = strdup(dir);
    if (!c->dir) kg_oom();
    return c;
}

void kg_probecache_free(kg_probecache *c)
{
    if (!c) return;
    free(c->dir);
    free(c->key);
    free(c);
}
