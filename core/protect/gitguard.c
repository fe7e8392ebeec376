/* gitguard.c: what a run leaves for the host's git (gitguard.h).
 *
 * Facts this relies on, measured with git 2.39:
 *   - a main git directory with a "commondir" file takes its config,
 *     hooks, objects and refs from the directory it names; an empty or
 *     unreadable commondir makes every git command die, so no placeholder
 *     can stand in for a missing one;
 *   - "git status" and "git diff" run "git status" inside every gitlink of
 *     the index whose directory has a .git, with that repository's config
 *     (core.fsmonitor runs), whether or not .gitmodules names it;
 *   - "git rebase --continue" runs the todo list's exec lines.
 * Files are read with plain reads and never executed or parsed by git:
 * running git here would be running what is being checked. */
#include "gitguard.h"
#include "os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "msg.h"
#include "paths.h"
#include "protected.h"
#include "kgate/kgate-tool.h"

extern char **environ;

/* Enough of a stat to tell "the same file, untouched" from anything else.
 * ctime cannot be set by the program, so a rewrite always shows. */
typedef struct ident {
    int exists;
    dev_t dev;
    ino_t ino;
    mode_t mode;
    off_t size;
    struct timespec mtim, ctim;
} ident;

static ident ident_of(const char *p)
{
    struct stat st;
    ident i = {0};
    if (lstat(p, &st) == 0) {
        i.exists = 1;
        i.dev = st.st_dev;
        i.ino = st.st_ino;
        i.mode = st.st_mode;
        i.size = st.st_size;
        i.mtim = kg_os_stat_mtime(&st);
        i.ctim = kg_os_stat_ctime(&st);
    }
    return i;
}

/* Same object; with content, also untouched. */
static int ident_same(const ident *a, const ident *b, int content)
{
    if (!a->exists || !b->exists) return a->exists == b->exists;
    if (a->dev != b->dev || a->ino != b->ino || a->mode != b->mode) return 0;
    if (!content) return 1;
    return a->size == b->size && a->mtim.tv_sec == b->mtim.tv_sec &&
           a->mtim.tv_nsec == b->mtim.tv_nsec && a->ctim.tv_sec == b->ctim.tv_sec &&
           a->ctim.tv_nsec == b->ctim.tv_nsec;
}

enum { TODO_REBASE, TODO_SEQUENCER, N_TODO };
static const char *const todo_names[N_TODO] = {"rebase-merge/git-rebase-todo", "sequencer/todo"};

struct kg_gitguard {
    char *project;
    char *dotgit; /* project/.git */
    ident git; /* what project/.git was */
    ident index, worktree_cfg, todo[N_TODO];
    int had_modules;
    int cfd; /* the commondir placeholder, shared-locked; or -1 */
    ident cid; /* its identity */
    kg_strv *top; /* the project index's gitlinks at the start, or NULL */
    kg_strv *links; /* gitlinks at the start, at every depth, relative */
    ident *link_ids; /* their .git then */
    char *rmods; /* .git/modules resolved, when it was there (read-only) */
    size_t budget; /* gitlinks the check may still follow */
    struct gd_snap *gds; /* git directories a .git file leads to (issue 40) */
    size_t n_gds;
    kg_strv *gd_all; /* the same, wherever they lie, resolved */
};

/* One git directory that a .git file leads to (kg_gitguard_gitdirs), as
 * it was at the launch: the directory itself, and what in it makes git
 * run something or read configuration elsewhere. */
typedef struct gd_snap {
    char *dir; /* below project, spelled from it: quarantine needs that */
    ident self, common, cfg, wtc, hooks, todo[N_TODO];
} gd_snap;

static char *join(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *r = malloc(na + nb + 2);
    if (!r) return NULL;
    memcpy(r, a, na);
    r[na] = '/';
    memcpy(r + na + 1, b, nb + 1);
    return r;
}

/* The whole of a regular file, NUL-terminated; NULL when it is missing,
 * not a regular file, larger than max, or unreadable. */
static unsigned char *slurp(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return NULL;
    struct stat st;
    unsigned char *buf = NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uintmax_t)st.st_size > max) goto out;
    size_t n = (size_t)st.st_size, got = 0;
    buf = malloc(n + 1);
    if (!buf) goto out;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (got != n) {
        free(buf);
        buf = NULL;
        goto out;
    }
    buf[n] = '\0';
    *len = n;
out:
    close(fd);
    return buf;
}

static int within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* ---- the index --------------------------------------------------------- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The index is read through a window, not whole: an index can be tens of
 * megabytes, and faulting in a buffer that size costs more than the rest
 * of a launch (measured: 37 ms for 17 MB here).  Not mmap: a box running
 * beside could truncate the file under it (SIGBUS). */
typedef struct rd {
    int fd;
    unsigned char *buf;
    size_t cap, hi; /* window size, bytes in it */
    uint64_t base, end; /* file offset of buf[0]; where the entries and
                           extensions end (before the trailing hash) */
} rd;

/* At least need bytes at off (and *avail, the bytes there in the window),
 * refilling the window when they are not in it; NULL past the end. */
static const unsigned char *rd_get(rd *r, uint64_t off, size_t need, size_t *avail)
{
    if (off > r->end || need > r->cap || need > r->end - off) return NULL;
    if (!(off >= r->base && off + need <= r->base + r->hi)) {
        size_t want = r->end - off < r->cap ? (size_t)(r->end - off) : r->cap, got = 0;
        while (got < want) {
            ssize_t n = pread(r->fd, r->buf + got, want - got, (off_t)(off + got));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += (size_t)n;
        }
        r->base = off;
        r->hi = got;
        if (got < need) return NULL;
    }
    if (avail) *avail = (size_t)(r->base + r->hi - off);
    return r->buf + (off - r->base);
}

/* The NUL-terminated name at off: its length, or -1. */
static long rd_name(rd *r, uint64_t off)
{
    size_t av;
    const unsigned char *q = rd_get(r, off, 1, &av);
    const unsigned char *nul = q ? memchr(q, '\0', av) : NULL;
    if (!nul && q && av < r->end - off) {
        r->hi = 0; /* a window that starts at the name */
        q = rd_get(r, off, 1, &av);
        nul = q ? memchr(q, '\0', av) : NULL;
    }
    return nul ? (long)(nul - q) : -1;
}

/* One index file: gitlink paths into out; the shared index it links to
 * (split index) as hex into shared, or "" when none.  Names are only
 * copied for gitlinks, and for version 4, whose names build on the
 * previous one, into one growing buffer: an index can hold millions. */
static int parse_index(rd *r, size_t hl, kg_strv *out, char *shared, size_t shared_sz)
{
    shared[0] = '\0';
    const unsigned char *h = rd_get(r, 0, 12, NULL);
    if (!h || memcmp(h, "DIRC", 4) != 0) return -1;
    uint32_t ver = be32(h + 4), cnt = be32(h + 8);
    if (ver < 2 || ver > 4) return -1;
    uint64_t off = 12;
    size_t fixed = 40 + hl + 2;
    char *name = NULL; /* version 4: the current name */
    size_t namelen = 0, cap = 0;
    int rc = -1;
    for (uint32_t i = 0; i < cnt; i++) {
        const unsigned char *e = rd_get(r, off, fixed + 2, NULL);
        if (!e) goto out;
        uint32_t mode = be32(e + 24);
        unsigned flags = (unsigned)e[40 + hl] << 8 | e[41 + hl];
        uint64_t p = off + fixed;
        if (flags & 0x4000) {
            if (ver < 3) goto out;
            p += 2;
        }
        int link = (mode & 0170000) == 0160000;
        if (ver == 4) {
            /* the previous name, cut by a varint, plus a suffix */
            const unsigned char *v = rd_get(r, p++, 1, NULL);
            if (!v) goto out;
            unsigned c = *v;
            size_t strip = c & 127;
            while (c & 128) {
                if (strip > SIZE_MAX >> 8 || !(v = rd_get(r, p++, 1, NULL))) goto out;
                c = *v;
                strip = ((strip + 1) << 7) | (c & 127);
            }
            long suf = rd_name(r, p);
            if (suf < 0 || strip > namelen) goto out;
            size_t keep = namelen - strip;
            if (keep + (size_t)suf + 1 > cap) {
                size_t ncap = (keep + (size_t)suf + 1) * 2;
                char *nn = realloc(name, ncap);
                if (!nn) goto out;
                name = nn;
                cap = ncap;
            }
            memcpy(name + keep, rd_get(r, p, 1, NULL), (size_t)suf);
            namelen = keep + (size_t)suf;
            name[namelen] = '\0';
            off = p + (uint64_t)suf + 1;
            if (link) kg_strv_push(out, name);
        } else {
            long len = rd_name(r, p);
            if (len < 0) goto out;
            if (link) {
                char *one = strndup((const char *)rd_get(r, p, 1, NULL), (size_t)len);
                if (!one) goto out;
                kg_strv_push(out, one);
                free(one);
            }
            off += (p - off + (uint64_t)len + 8) & ~(uint64_t)7;
        }
    }
    while (off + 8 <= r->end) {
        const unsigned char *x = rd_get(r, off, 8, NULL);
        if (!x) goto out;
        uint32_t sz = be32(x + 4);
        int is_link = memcmp(x, "link", 4) == 0;
        if (sz > r->end - off - 8) goto out;
        if (is_link && sz >= hl && 2 * hl < shared_sz) {
            const unsigned char *l = rd_get(r, off + 8, hl, NULL);
            if (!l) goto out;
            int zero = 1;
            for (size_t k = 0; k < hl; k++) {
                snprintf(shared + 2 * k, 3, "%02x", l[k]);
                if (l[k]) zero = 0;
            }
            if (zero) shared[0] = '\0';
        }
        off += 8 + (uint64_t)sz;
    }
    rc = off == r->end ? 0 : -1;
out:
    free(name);
    return rc;
}

/* Opens and parses one index file (see parse_index). */
static int parse_index_file(const char *path, size_t hl, kg_strv *out, char *shared,
                            size_t shared_sz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    struct stat st;
    rd r = {.fd = fd, .cap = 1 << 20};
    int rc = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size >= 12 + hl &&
        (r.buf = malloc(r.cap))) {
        r.end = (uint64_t)st.st_size - hl;
        rc = parse_index(&r, hl, out, shared, shared_sz);
    }
    free(r.buf);
    close(fd);
    return rc;
}

static size_t hash_len(const char *gitdir)
{
    char *cfg = join(gitdir, "config");
    size_t n = 0, hl = 20;
    unsigned char *b = cfg ? slurp(cfg, 1 << 20, &n) : NULL;
    /* extensions.objectFormat = sha256; a crude look is enough: a wrong
     * guess fails to parse, and an index that does not parse is moved
     * aside when it changed (fail closed). */
    if (b && strcasestr((char *)b, "objectformat") && strcasestr((char *)b, "sha256")) hl = 32;
    free(b);
    free(cfg);
    return hl;
}

/* The last index read, by identity: the policy's pins and the snapshot
 * before the launch read the same file, once.  (A split index's shared
 * file is named by its hash, and the index changes when the link does.) */
static struct {
    char *path;
    ident id;
    kg_strv *links;
} last;

int kg_gitguard_index_gitlinks(const char *gitdir, kg_strv *out)
{
    char *path = join(gitdir, "index");
    if (!path) return -1;
    ident id = ident_of(path);
    if (!id.exists) {
        free(path);
        return 0; /* no index yet: no gitlinks */
    }
    if (last.path && strcmp(last.path, path) == 0 && ident_same(&last.id, &id, 1)) {
        for (size_t i = 0; i < kg_strv_len(last.links); i++)
            kg_strv_push(out, kg_strv_get(last.links, i));
        free(path);
        return 0;
    }
    size_t hl = hash_len(gitdir);
    char shared[80];
    kg_strv *links = kg_strv_new();
    int rc = parse_index_file(path, hl, links, shared, sizeof shared);
    if (rc == 0 && shared[0]) {
        char name[100];
        snprintf(name, sizeof name, "sharedindex.%s", shared);
        char *sp = join(gitdir, name);
        char dummy[80];
        rc = sp ? parse_index_file(sp, hl, links, dummy, sizeof dummy) : -1;
        free(sp);
    }
    if (rc == 0) {
        for (size_t i = 0; i < kg_strv_len(links); i++) kg_strv_push(out, kg_strv_get(links, i));
        free(last.path);
        kg_strv_free(last.links);
        last.path = path;
        last.id = id;
        last.links = links;
        return 0;
    }
    free(path);
    kg_strv_free(links);
    return rc;
}

/* ---- git directories ----------------------------------------------------- */

/* What a .git names, read as git reads it.  git 2.39 (setup.c,
 * read_gitfile_gently; unchanged through 2.47) stat()s .git, so a
 * symbolic link there is followed; a directory is the git directory
 * itself; a regular file of at most 1 MiB is read whole, must begin with
 * "gitdir: ", loses every trailing LF and CR (only trailing ones: a CR or
 * LF inside is part of the name), and the name ends at its first NUL; a
 * relative name is taken from the directory that holds the .git.
 * Measured here: a 1 MiB file is used and one byte more is not, and names
 * with an inner CR, LF or trailing blank are used as written. */
#define GITFILE_MAX (1 << 20)
typedef enum { GF_NONE, GF_DIR, GF_FILE, GF_BAD } gf_kind;

/* GF_DIR or GF_FILE with *target (absolute when dir is) to free; GF_NONE
 * when nothing is there; GF_BAD when something is there that git would
 * not read as above (unreadable, too large, not "gitdir: ", a dangling
 * link): the callers treat that as unsafe, never as absent. */
static gf_kind gitfile_read(const char *dir, const char *dotgit, char **target)
{
    struct stat st;
    *target = NULL;
    if (stat(dotgit, &st) < 0) return lstat(dotgit, &st) == 0 ? GF_BAD : GF_NONE;
    if (S_ISDIR(st.st_mode)) return (*target = strdup(dotgit)) ? GF_DIR : GF_BAD;
    size_t n = 0;
    unsigned char *b = slurp(dotgit, GITFILE_MAX, &n);
    gf_kind k = GF_BAD;
    if (b && n >= 8 && memcmp(b, "gitdir: ", 8) == 0) {
        while (n > 8 && (b[n - 1] == '\n' || b[n - 1] == '\r')) n--;
        b[n] = '\0';
        const char *s = (const char *)b + 8;
        if (n > 8 && (*target = s[0] == '/' ? strdup(s) : join(dir, s))) k = GF_FILE;
    }
    free(b);
    return k;
}

/* The git directory a .git file names, or NULL (see gitfile_read). */
static char *gitfile_target(const char *dir, const char *dotgit)
{
    char *t = NULL;
    if (gitfile_read(dir, dotgit, &t) == GF_FILE) return t;
    free(t);
    return NULL;
}

/* Keys that name nothing to run, in the form "section.key" or, for a
 * section with a subsection, "section.*.key".  What git init, clone,
 * commit, branch and remote write; anything else is not inert. */
static const char *const inert_keys[] = {
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "extensions.objectformat",
    "extensions.worktreeconfig",
    "user.name",
    "user.email",
    "branch.*.remote",
    "branch.*.merge",
    "branch.*.rebase",
    "remote.*.url",
    "remote.*.fetch",
    "submodule.*.url",
    "submodule.*.active",
};

static int key_inert(const char *section, int has_sub, const char *key)
{
    char want[200];
    snprintf(want, sizeof want, "%s.%s%s", section, has_sub ? "*." : "", key);
    for (size_t i = 0; i < sizeof inert_keys / sizeof inert_keys[0]; i++)
        if (strcasecmp(want, inert_keys[i]) == 0) return 1;
    return 0;
}

static int is_name(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

/* Strict: one construct per line, no continuation lines, no includes.
 * Anything this reader is unsure of counts as not inert. */
int kg_gitguard_config_inert(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0 && errno == ENOENT) return 1;
    size_t n = 0;
    unsigned char *b = slurp(path, 1 << 20, &n);
    if (!b || memchr(b, '\0', n)) {
        free(b);
        return 0;
    }
    char section[100] = "";
    int has_sub = 0, ok = 1;
    for (char *line = (char *)b, *next; ok && line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        size_t len = strlen(line);
        while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
            line[--len] = '\0';
        while (*line == ' ' || *line == '\t') line++;
        if (!*line || *line == '#' || *line == ';') continue;
        if (len && line[strlen(line) - 1] == '\\') {
            ok = 0;
        } else if (*line == '[') {
            char *p = line + 1;
            size_t k = 0;
            while (is_name(*p) || *p == '.') {
                if (k + 1 >= sizeof section) break;
                section[k++] = *p++;
            }
            section[k] = '\0';
            has_sub = strchr(section, '.') != NULL;
            if (has_sub) *strchr(section, '.') = '\0';
            if (*p == ' ') {
                p++;
                if (*p++ != '"') {
                    ok = 0;
                    break;
                }
                while (*p && *p != '"' && *p != '\\') p++;
                if (*p++ != '"') {
                    ok = 0;
                    break;
                }
                has_sub = 1;
            }
            if (!k || *p++ != ']') {
                ok = 0;
                break;
            }
            while (*p == ' ' || *p == '\t') p++;
            if (*p && *p != '#' && *p != ';') ok = 0;
        } else {
            char key[100];
            size_t k = 0;
            while (is_name(line[k]) && k + 1 < sizeof key) {
                key[k] = line[k];
                k++;
            }
            key[k] = '\0';
            char c = line[k];
            if (!k || !section[0] || (c && c != ' ' && c != '\t' && c != '='))
                ok = 0;
            else
                ok = key_inert(section, has_sub, key);
        }
    }
    free(b);
    return ok;
}

/* The hooks directory at p holds a hook: a name that is not a *.sample
 * (what git init puts there). */
static int has_hooks(const char *p)
{
    DIR *d = opendir(p);
    int found = 0;
    if (!d) return 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            !(n > 7 && strcmp(e->d_name + n - 7, ".sample") == 0))
            found = 1;
    }
    closedir(d);
    return found;
}

/* Why a git directory the program may have written would run something
 * on the host, or NULL.  gitdir need not exist. */
static const char *gitdir_danger(const char *gitdir)
{
    static const char *const files[] = {"config", "config.worktree"};
    struct stat st;
    if (lstat(gitdir, &st) < 0 || !S_ISDIR(st.st_mode)) return NULL;
    char *p = join(gitdir, "commondir");
    int common = p && lstat(p, &st) == 0;
    free(p);
    if (common) return "its commondir sends git to another configuration";
    for (size_t i = 0; i < 2; i++) {
        p = join(gitdir, files[i]);
        int inert = p && kg_gitguard_config_inert(p);
        free(p);
        if (!inert) return "its config sets keys that can run commands";
    }
    p = join(gitdir, "hooks");
    int hooks = p && has_hooks(p);
    free(p);
    return hooks ? "it has hooks" : NULL;
}

/* ---- findings -------------------------------------------------------------- */

/* The directory that holds path, opened one component at a time from the
 * project without following a symlink, and path's last component: a
 * program still running in another box could swap a directory on the way
 * for a symlink between a check and a rename by name, and have kgate move
 * something of the user's outside the project.  -1 when path is not below
 * the project or a component is not a plain directory. */
static int open_parent(const char *project, const char *path, const char **leaf)
{
    size_t n = strlen(project);
    if (strncmp(path, project, n) != 0 || path[n] != '/') return -1;
    char *rest = strdup(path + n + 1);
    if (!rest) return -1;
    int fd = kg_os_open_dir_handle(project);
    char *save = NULL, *comp = strtok_r(rest, "/", &save), *next;
    for (; fd >= 0 && comp && (next = strtok_r(NULL, "/", &save)); comp = next) {
        int sub = strcmp(comp, ".") && strcmp(comp, "..") ? kg_os_openat_dir_handle(fd, comp) : -1;
        close(fd);
        fd = sub;
    }
    if (fd >= 0 && (!comp || !strcmp(comp, ".") || !strcmp(comp, ".."))) {
        close(fd);
        fd = -1;
    }
    if (fd >= 0) *leaf = path + strlen(path) - strlen(comp);
    free(rest);
    return fd;
}

/* A name for leaf that nobody can have made in advance: 64 bits read
 * from the kernel's random source after the run has ended. */
static char *random_name(const char *leaf)
{
    unsigned char r[8];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, r, sizeof r) : -1;
    if (fd >= 0) close(fd);
    char *to = NULL;
    if (n != (ssize_t)sizeof r ||
        asprintf(&to, "%s.kgate-quarantine.%02x%02x%02x%02x%02x%02x%02x%02x", leaf, r[0], r[1],
                 r[2], r[3], r[4], r[5], r[6], r[7]) < 0)
        return NULL;
    return to;
}

/* The program may have left the directory without write permission for
 * its owner (who kgate runs as): gives it back, so that a rename there
 * cannot be refused by a mode the program chose.  0 when done. */
static int dir_writable_again(int dfd)
{
    struct stat st;
    if (fstat(dfd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) return -1;
    mode_t mode = (st.st_mode & 07777) | S_IRWXU;
    if (fchmod(dfd, mode) == 0) return 0;
    char proc[64]; /* Linux opens dfd with O_PATH, which fchmod refuses */
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", dfd);
    return errno == EBADF ? chmod(proc, mode) : -1;
}

/* Renames path, below the project, to a name beside it that git never
 * reads: NAME.kgate-quarantine, or when that is taken (the program can
 * make it in advance) NAME.kgate-quarantine.<random>, never replacing
 * anything.  The new name in *to (to free); -1 with errno when it
 * cannot be moved. */
static int move_aside(const kg_gitguard *g, const char *path, char **to)
{
    const char *leaf = NULL;
    int dfd = open_parent(g->project, path, &leaf);
    if (dfd < 0) return -1;
    int rc = -1, fixed = 0;
    for (int i = 0; i < 10 && rc < 0; i++) {
        free(*to);
        *to = NULL;
        if (i == 0 && asprintf(to, "%s.kgate-quarantine", leaf) < 0) *to = NULL;
        if (i > 0) *to = random_name(leaf);
        if (!*to) break;
        rc = kg_os_rename_noreplace(dfd, leaf, *to);
        if (rc < 0 && (errno == EACCES || errno == EPERM) && !fixed++ &&
            dir_writable_again(dfd) == 0)
            i--; /* the same name again, now that it may succeed */
        else if (rc < 0 && errno != EEXIST)
            break;
    }
    int e = errno;
    close(dfd);
    if (rc < 0) {
        free(*to);
        *to = NULL;
    }
    errno = e;
    return rc;
}

/* name in the directory that holds path. */
static char *beside(const char *path, const char *name)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path)) : NULL;
    char *r = dir ? join(dir, name) : NULL;
    free(dir);
    return r;
}

/* One finding: "PATH was planted by the run (WHY): WHAT".  The paths are
 * the program's choice: escaped by msg.c's one rule (kg_msg_escape), so
 * one finding stays one line, in the audit log too, and names the path
 * exactly. */
static void finding(kg_strv *findings, const char *path, const char *why, const char *what,
                    const char *a, const char *b)
{
    UT_string *out;
    utstring_new(out);
    kg_msg_escape(out, path);
    utstring_printf(out, " was planted by the run (%s): %s", why, what);
    if (a) kg_msg_escape(out, a);
    if (b) {
        utstring_printf(out, ", which records it, to ");
        kg_msg_escape(out, b);
        utstring_printf(out, ": host git does not enter it until that index is moved back");
    }
    kg_strv_push(findings, utstring_body(out));
    utstring_free(out);
}

/* Moves path aside (move_aside) and says so in one line of findings.
 * A check that cannot neutralize what it found must not only report it:
 * when path cannot be moved, index (the index that records path as a
 * gitlink, or NULL) is moved aside instead, so host git no longer enters
 * it.  Returns 1 (one finding). */
static int quarantine(const kg_gitguard *g, kg_strv *findings, const char *path, const char *why,
                      const char *index)
{
    char *to = NULL, *ito = NULL, *dest = NULL;
    struct stat st;
    if (move_aside(g, path, &to) == 0) {
        dest = beside(path, to);
        finding(findings, path, why, "moved aside to ", dest ? dest : to, NULL);
    } else if (index && move_aside(g, index, &ito) == 0) {
        dest = beside(index, ito);
        finding(findings, path, why, "kgate could not move it aside, so it moved the index ", index,
                dest ? dest : ito);
    } else if (index && lstat(index, &st) < 0 && errno == ENOENT) {
        finding(findings, path, why,
                "kgate could not move it aside; the index that records it is already moved aside",
                NULL, NULL);
    } else {
        finding(findings, path, why,
                "could not move it aside; do not run git there before removing it", NULL, NULL);
    }
    free(to);
    free(ito);
    free(dest);
    return 1;
}

static int todo_has_exec(const char *path)
{
    size_t n = 0;
    unsigned char *b = slurp(path, (size_t)64 << 20, &n);
    if (!b) {
        struct stat st;
        return lstat(path, &st) == 0; /* there but unreadable: fail closed */
    }
    int found = 0;
    for (char *line = (char *)b; line && !found; line = strchr(line, '\n')) {
        if (*line == '\n') line++;
        while (*line == ' ' || *line == '\t') line++;
        size_t w = strcspn(line, " \t\r\n");
        found = (w == 1 && line[0] == 'x') || (w == 4 && strncmp(line, "exec", 4) == 0);
    }
    free(b);
    return found;
}

/* ---- the public functions ---------------------------------------------------- */

/* ---- the commondir placeholder ---------------------------------------- */

/* A missing .git/commondir cannot be kept from being created by a mount
 * without a file to mount on, and an empty or unreadable one makes every
 * git command die.  One that holds "." names the git directory itself:
 * git 2.39 then works as before (status, commit, stash, gc, worktree add,
 * clone from it: measured).  So for the length of a run, .git/commondir
 * is such a file, bound read-only inside; the host's git, run meanwhile,
 * reads the git directory it always read.  Runs in the same repository
 * share one: each holds a shared flock on it, and the last one to end
 * removes it.  git ignores core.worktree and core.bare in a repository
 * with a commondir, so a config that sets them gets no placeholder (the
 * check after the run still applies). */
static const char placeholder[] = ".\n";

static int is_placeholder(int fd)
{
    char b[sizeof placeholder + 1];
    ssize_t n = pread(fd, b, sizeof b, 0);
    return n == (ssize_t)strlen(placeholder) && memcmp(b, placeholder, (size_t)n) == 0;
}

/* The repository's config sets core.worktree or core.bare = true (crude:
 * any such line in any section; a false positive only costs the
 * placeholder). */
static int config_sets_worktree(const char *dotgit)
{
    char *p = join(dotgit, "config");
    size_t n = 0;
    unsigned char *b = p ? slurp(p, 1 << 20, &n) : NULL;
    free(p);
    if (!b) return 0;
    int hit = 0;
    for (char *line = (char *)b, *next; line && !hit; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        while (*line == ' ' || *line == '\t') line++;
        if (strncasecmp(line, "worktree", 8) == 0 && strchr(" \t=", line[8] ? line[8] : 'x'))
            hit = 1;
        if (strncasecmp(line, "bare", 4) == 0 && strchr(" \t=", line[4] ? line[4] : 'x') &&
            strcasestr(line, "true"))
            hit = 1;
    }
    free(b);
    return hit;
}

/* Opens (making it when missing) and shared-locks the placeholder at cd.
 * 0 with *fd set; 0 with *fd = -1 when there is none to hold (the path is
 * taken by something else: the caller refuses that); -1 on an error. */
static int placeholder_hold(const char *dotgit, const char *cd, int *fd)
{
    *fd = -1;
    for (int tries = 0; tries < 20; tries++) {
        int f = open(cd, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (f < 0 && errno == ENOENT) {
            /* made whole beside it, then linked: git never sees it empty */
            char *tmp = NULL;
            if (asprintf(&tmp, "%s/commondir.kgate-%ld", dotgit, (long)getpid()) < 0) return -1;
            int t = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            int ok = t >= 0 &&
                     write(t, placeholder, strlen(placeholder)) == (ssize_t)strlen(placeholder);
            if (t >= 0) close(t);
            int linked = ok && link(tmp, cd) == 0;
            int e = errno;
            unlink(tmp);
            free(tmp);
            if (!ok || (!linked && e != EEXIST)) return -1;
            continue;
        }
        if (f < 0) return errno == ELOOP ? 0 : -1;
        struct stat a, b;
        if (flock(f, LOCK_SH) < 0 || fstat(f, &a) < 0) {
            close(f);
            return -1;
        }
        /* the last run may have removed it between our open and our lock */
        if (lstat(cd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
            close(f);
            continue;
        }
        if (!S_ISREG(a.st_mode) || !is_placeholder(f)) {
            close(f);
            return 0;
        }
        *fd = f;
        return 0;
    }
    return -1;
}

/* The last run to end removes it. */
static void placeholder_release(kg_gitguard *g)
{
    if (g->cfd < 0) return;
    char *cd = join(g->dotgit, "commondir");
    if (cd && flock(g->cfd, LOCK_EX | LOCK_NB) == 0) {
        ident now = ident_of(cd);
        if (ident_same(&g->cid, &now, 0) && is_placeholder(g->cfd)) {
            const char *leaf = NULL;
            int dfd = open_parent(g->project, cd, &leaf);
            if (dfd >= 0) {
                unlinkat(dfd, leaf, 0);
                close(dfd);
            }
        }
    }
    free(cd);
    close(g->cfd);
    g->cfd = -1;
}

/* The git directory of the project: .git itself, or what its gitfile
 * names (gitfile_read); NULL when there is none. */
static char *project_gitdir(const char *project, const char *dotgit)
{
    char *t = NULL;
    gf_kind k = gitfile_read(project, dotgit, &t);
    if (k == GF_DIR || k == GF_FILE) return t;
    free(t);
    return NULL;
}

/* ---- the git directories a .git file names (issue 40) ------------------- */

/* The directory a git directory's commondir names, as git 2.39 reads it
 * (setup.c, get_common_dir_noenv): the whole file, every trailing LF and
 * CR dropped, a relative name taken from the git directory; resolved.
 * 0 with *out NULL when there is no commondir; -1 when there is one that
 * cannot be read that way or names nothing that exists. */
static int commondir_of(const char *gitdir, char **out)
{
    *out = NULL;
    char *p = join(gitdir, "commondir");
    struct stat st;
    if (!p || lstat(p, &st) < 0) {
        int missing = p && errno == ENOENT;
        free(p);
        return missing ? 0 : -1;
    }
    size_t n = 0;
    unsigned char *b = slurp(p, GITFILE_MAX, &n);
    free(p);
    if (!b || memchr(b, '\0', n)) {
        free(b);
        return -1;
    }
    while (n && (b[n - 1] == '\n' || b[n - 1] == '\r')) n--;
    b[n] = '\0';
    char *t = n == 0 ? NULL : b[0] == '/' ? strdup((char *)b) : join(gitdir, (char *)b);
    free(b);
    *out = t ? realpath(t, NULL) : NULL;
    free(t);
    return *out ? 0 : -1;
}

/* Adds dir to out when it lies in the project (rproj) and is not the
 * project's .git directory, which the built-in table covers by name.
 * Outside the project nothing is writable from the box. */
static void push_gitdir(kg_strv *out, const char *dir, const char *rproj)
{
    char *top = join(rproj, ".git");
    if (top && within(dir, rproj) && strcmp(dir, rproj) != 0 && strcmp(dir, top) != 0 &&
        !kg_strv_contains(out, dir))
        kg_strv_push(out, dir);
    free(top);
}

/* The git directory the project's .git file (or a symbolic link at .git)
 * leads to, and the one its commondir names, resolved, wherever they lie,
 * into all; 0 with none for no .git or a .git directory; -1 when what is
 * there cannot be read as git reads it. */
static int gitdirs_resolve(const char *project, kg_strv *all)
{
    char *dotgit = join(project, ".git");
    char *t = NULL, *rt = NULL, *common = NULL;
    struct stat st;
    int rc = -1;
    gf_kind k = dotgit ? gitfile_read(project, dotgit, &t) : GF_BAD;
    if (k == GF_NONE || (k == GF_DIR && lstat(dotgit, &st) == 0 && S_ISDIR(st.st_mode))) {
        rc = 0; /* none, or the .git directory itself */
        goto out;
    }
    if (k == GF_BAD || !(rt = realpath(t, NULL)) || stat(rt, &st) < 0 || !S_ISDIR(st.st_mode))
        goto out;
    /* a linked worktree's git directory takes config and hooks from the
     * main one its commondir names */
    if (commondir_of(rt, &common) < 0) goto out;
    kg_strv_push(all, rt);
    if (common) kg_strv_push(all, common);
    rc = 0;
out:
    free(common);
    free(rt);
    free(t);
    free(dotgit);
    return rc;
}

int kg_gitguard_gitdirs(const char *project, kg_strv *out)
{
    char *rproj = realpath(project, NULL);
    kg_strv *all = kg_strv_new();
    int rc = rproj ? gitdirs_resolve(project, all) : -1;
    /* the project itself as the git directory ("gitdir: ."): its config
     * would lie among the program's files; nothing sane does this */
    for (size_t i = 0; rc == 0 && i < kg_strv_len(all); i++)
        if (strcmp(kg_strv_get(all, i), rproj) == 0) rc = -1;
    for (size_t i = 0; rc == 0 && i < kg_strv_len(all); i++)
        push_gitdir(out, kg_strv_get(all, i), rproj);
    kg_strv_free(all);
    free(rproj);
    return rc;
}

/* The built-in table's names below .git (hooks, config, config.worktree,
 * modules, worktrees, commondir), in the git directory dir: that one gets
 * what .git gets. */
static void push_gitdir_entries(kg_strv *out, const char *dir)
{
    size_t n;
    const kg_protected_entry *t = kg_protected_table(&n);
    for (size_t i = 0; i < n; i++) {
        if (strncmp(t[i].name, ".git/", 5) != 0) continue;
        char *p = join(dir, t[i].name + 5);
        if (p) kg_strv_push(out, p);
        free(p);
    }
}

/* ---- gitlinks, at every depth ---------------------------------------------- */

/* git status enters every gitlink of the index whose directory has a
 * .git, and the git status it runs there enters that repository's own
 * gitlinks, and so on (measured: a new nested repository with an inert
 * config whose index records a repository with core.fsmonitor runs it).
 * So the gitlinks are followed to this depth; deeper ones that the run
 * made are moved aside unread. */
#define LINK_DEPTH 8
#define GITLINKS_MAX 10000 /* gitlinks followed in all; more are moved aside */

/* rel/name, or name when rel is "" (the project itself). */
static char *rel_join(const char *rel, const char *name)
{
    return rel[0] ? join(rel, name) : strdup(name);
}

/* The gitlinks of the index in gd, whose work tree is rel below the
 * project, and theirs in turn: each pushed to out, relative to the
 * project, before those below it. */
static void collect_links(const char *project, const char *rel, const char *gd, int depth,
                          kg_strv *out)
{
    kg_strv *links = kg_strv_new();
    if (depth < LINK_DEPTH && kg_gitguard_index_gitlinks(gd, links) == 0) {
        for (size_t i = 0; i < kg_strv_len(links) && kg_strv_len(out) < GITLINKS_MAX; i++) {
            char *r = rel_join(rel, kg_strv_get(links, i));
            char *wt = r ? join(project, r) : NULL;
            char *dg = wt ? join(wt, ".git") : NULL;
            char *t = NULL, *rt = NULL;
            if (dg && gitfile_read(wt, dg, &t) != GF_BAD && t) rt = realpath(t, NULL);
            if (r) kg_strv_push(out, r);
            if (rt) collect_links(project, r, rt, depth + 1, out);
            free(rt);
            free(t);
            free(dg);
            free(wt);
            free(r);
        }
    }
    kg_strv_free(links);
}

static int hooks_dir_make(const char *project, kg_error *err);

/* ---- git directories a .git file leads to, checked as .git is ------------ */

static ident ident_in(const char *dir, const char *name)
{
    char *p = join(dir, name);
    ident i = p ? ident_of(p) : (ident){0};
    free(p);
    return i;
}

static void gd_take(gd_snap *s)
{
    s->self = ident_of(s->dir);
    s->common = ident_in(s->dir, "commondir");
    s->cfg = ident_in(s->dir, "config");
    s->wtc = ident_in(s->dir, "config.worktree");
    s->hooks = ident_in(s->dir, "hooks");
    for (int i = 0; i < N_TODO; i++) s->todo[i] = ident_in(s->dir, todo_names[i]);
}

/* The git directories the project's .git file leads to, as they are at
 * the launch; -1 with err (the launch is refused) when that .git cannot
 * be read as git reads it: kgate could not tell what to protect. */
static int gitdirs_take(kg_gitguard *g, kg_error *err)
{
    kg_strv *dirs = kg_strv_new();
    char *rproj = realpath(g->project, NULL);
    int rc = 0;
    g->gd_all = kg_strv_new();
    if (!rproj || gitdirs_resolve(g->project, g->gd_all) < 0 ||
        kg_gitguard_gitdirs(g->project, dirs) < 0) {
        rc = kg_err_set(err, EPERM,
                        "%s cannot be read as git reads it (a .git file of at most 1 MiB "
                        "that begins \"gitdir: \" and names a git directory, whose commondir "
                        "names one too): kgate cannot tell which git directory to keep "
                        "read-only",
                        g->dotgit);
        goto out;
    }
    size_t n = kg_strv_len(dirs);
    if (!(g->gds = calloc(n ? n : 1, sizeof *g->gds))) kg_oom();
    for (size_t i = 0; i < n; i++) {
        /* below the project by kg_gitguard_gitdirs, spelled from it */
        gd_snap *s = &g->gds[g->n_gds++];
        if (!(s->dir = join(g->project, kg_strv_get(dirs, i) + strlen(rproj) + 1))) kg_oom();
        gd_take(s);
    }
out:
    free(rproj);
    kg_strv_free(dirs);
    return rc;
}

/* Moves aside the entry name of s->dir when it changed since the launch
 * (identity; with content, also its bytes) and bad says it is unsafe. */
static int gd_entry(kg_gitguard *g, kg_strv *out, const gd_snap *s, const char *name,
                    const ident *then, int content, int (*bad)(const char *), const char *why)
{
    char *p = join(s->dir, name);
    int found = 0;
    ident now = p ? ident_of(p) : (ident){0};
    if (p && now.exists && !ident_same(then, &now, content) && bad(p))
        found = quarantine(g, out, p, why, NULL);
    free(p);
    return found;
}

static int always(const char *p) { return (void)p, 1; }
static int config_bad(const char *p) { return !kg_gitguard_config_inert(p); }

/* 1 when the .git file resolves now as at the launch up to entry n of
 * gd_all (0: the git directory it names; 1: with its commondir's). */
static int gitdirs_same(const kg_gitguard *g, size_t n)
{
    kg_strv *all = kg_strv_new();
    int same = g->gd_all && gitdirs_resolve(g->project, all) == 0;
    for (size_t i = 0; same && i < n; i++)
        same =
            (i < kg_strv_len(all)) == (i < kg_strv_len(g->gd_all)) &&
            (i >= kg_strv_len(all) || strcmp(kg_strv_get(all, i), kg_strv_get(g->gd_all, i)) == 0);
    kg_strv_free(all);
    return same;
}

/* What the run planted in the git directories a .git file leads to: the
 * same findings as in a .git directory, the directory replaced, and the
 * same .git file now leading elsewhere (a symbolic link on the way, or
 * the one in the commondir's name, pointed at another directory). */
static int gitdirs_check(kg_gitguard *g, kg_strv *out)
{
    int found = 0;
    if (!gitdirs_same(g, 1))
        return quarantine(g, out, g->dotgit,
                          "the .git file leads to another git directory than at the launch", NULL);
    for (size_t i = 0; i < g->n_gds; i++) {
        const gd_snap *s = &g->gds[i];
        ident now = ident_of(s->dir);
        if (!ident_same(&s->self, &now, 0)) {
            if (now.exists)
                found += quarantine(g, out, s->dir,
                                    "the git directory the project's .git file names was replaced",
                                    NULL);
            continue;
        }
        found += gd_entry(g, out, s, "commondir", &s->common, 1, always,
                          "git would take its configuration from the directory it names");
        found += gd_entry(g, out, s, "config", &s->cfg, 1, config_bad,
                          "it sets keys that can run commands");
        found += gd_entry(g, out, s, "config.worktree", &s->wtc, 1, config_bad,
                          "it sets keys that can run commands");
        found += gd_entry(g, out, s, "hooks", &s->hooks, 1, has_hooks, "it has hooks");
        for (int t = 0; t < N_TODO; t++)
            found += gd_entry(g, out, s, todo_names[t], &s->todo[t], 1, todo_has_exec,
                              "exec lines run at git rebase --continue");
    }
    /* a commondir the run left as it was, whose name leads elsewhere now */
    char *cd = kg_strv_len(g->gd_all) ? join(kg_strv_get(g->gd_all, 0), "commondir") : NULL;
    struct stat st;
    if (cd && lstat(cd, &st) == 0 && !gitdirs_same(g, 2))
        found += quarantine(
            g, out, cd, "its commondir leads to another git directory than at the launch", NULL);
    free(cd);
    return found;
}

kg_gitguard *kg_gitguard_begin(const char *project, int place, kg_error *err)
{
    kg_gitguard *g = calloc(1, sizeof *g);
    if (g) g->cfd = -1;
    if (!g || !(g->project = strdup(project)) || !(g->dotgit = join(project, ".git")) ||
        !(g->links = kg_strv_new())) {
        kg_gitguard_free(g);
        kg_err_set(err, ENOMEM, "out of memory");
        return NULL;
    }
    if ((place && hooks_dir_make(project, err) < 0) || gitdirs_take(g, err) < 0) {
        kg_gitguard_free(g);
        return NULL;
    }
    g->git = ident_of(g->dotgit);
    char *gd = project_gitdir(project, g->dotgit);
    if (S_ISDIR(g->git.mode) && g->git.exists) {
        char *cd = join(g->dotgit, "commondir");
        struct stat st;
        if (cd && place && !config_sets_worktree(g->dotgit) &&
            placeholder_hold(g->dotgit, cd, &g->cfd) == 0 && g->cfd >= 0)
            g->cid = ident_of(cd);
        int planted = cd && lstat(cd, &st) == 0 && g->cfd < 0;
        if (planted && !place) {
            /* a dry run: only another run's placeholder is fine */
            int f = open(cd, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
            planted = !(f >= 0 && is_placeholder(f));
            if (f >= 0) close(f);
        }
        if (planted) {
            kg_err_set(err, EPERM,
                       "%s exists: git would take its configuration and hooks from the "
                       "directory it names, which an earlier sandboxed run may have "
                       "written (a main .git never has one); move it aside after checking it",
                       cd);
            free(cd);
            free(gd);
            kg_gitguard_free(g);
            return NULL;
        }
        free(cd);
        char *p = join(g->dotgit, "config.worktree");
        if (p) g->worktree_cfg = ident_of(p);
        free(p);
        for (int i = 0; i < N_TODO; i++) {
            p = join(g->dotgit, todo_names[i]);
            if (p) g->todo[i] = ident_of(p);
            free(p);
        }
        p = join(g->dotgit, "modules");
        g->had_modules = p && lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
        free(p);
    }
    if (gd) {
        char *ix = join(gd, "index");
        if (ix) g->index = ident_of(ix);
        free(ix);
        kg_strv *top = kg_strv_new();
        if (kg_gitguard_index_gitlinks(gd, top) == 0)
            g->top = top;
        else
            kg_strv_free(top);
        collect_links(project, "", gd, 0, g->links);
        size_t n = kg_strv_len(g->links);
        g->link_ids = calloc(n ? n : 1, sizeof *g->link_ids);
        for (size_t i = 0; g->link_ids && i < n; i++) {
            char *wt = join(project, kg_strv_get(g->links, i));
            char *dg = wt ? join(wt, ".git") : NULL;
            if (dg) g->link_ids[i] = ident_of(dg);
            free(dg);
            free(wt);
        }
        if (!g->link_ids) kg_strv_clear(g->links);
    }
    free(gd);
    return g;
}

/* A git directory the run could not have written: one in the
 * .git/modules that existed at the launch (read-only through the run). */
static int trusted(const kg_gitguard *g, const char *rgd)
{
    return g->rmods && within(rgd, g->rmods) && strcmp(rgd, g->rmods) != 0;
}

/* The .git at rel is the one that was there at the launch (pinned
 * read-only through the run), untouched. */
static int pinned(const kg_gitguard *g, const char *rel, const ident *now)
{
    for (size_t i = 0; g->link_ids && i < kg_strv_len(g->links); i++)
        if (strcmp(kg_strv_get(g->links, i), rel) == 0 &&
            ident_same(&g->link_ids[i], now, !S_ISDIR(now->mode)))
            return 1;
    return 0;
}

static int check_tree(kg_gitguard *g, kg_strv *out, const char *rel, const char *gd,
                      const kg_strv *known, int depth);

/* Why the git directory rt (resolved; NULL when it cannot be) that the
 * .git at rel names (k) must not stay, or NULL: anything kgate cannot
 * read the way git does is unsafe, never absent. */
static const char *link_danger(kg_gitguard *g, gf_kind k, const char *rt, int depth)
{
    if (k == GF_BAD)
        return "its .git is not a directory or a .git file that kgate can read as git does";
    if (!rt) return "its .git names a git directory that kgate cannot resolve";
    if (depth >= LINK_DEPTH || g->budget == 0)
        return "it is nested deeper, or among more gitlinks, than kgate checks";
    return trusted(g, rt) ? NULL : gitdir_danger(rt);
}

/* The gitlink at rel, recorded in the index at index, after the run: a
 * .git that was there at the launch (and read-only through the run), a
 * git directory in the .git/modules that existed then, or a git
 * directory that runs nothing; and so on for the gitlinks its own index
 * records.  Else it is moved aside (quarantine). */
static int check_link(kg_gitguard *g, kg_strv *out, const char *rel, const char *index, int depth)
{
    char *wt = join(g->project, rel);
    char *dg = wt ? join(wt, ".git") : NULL;
    int found = 0;
    ident now = dg ? ident_of(dg) : (ident){0};
    if (!now.exists) goto out; /* git does not enter it */
    if (g->budget) g->budget--;
    int pin = pinned(g, rel, &now);
    char *t = NULL;
    gf_kind k = gitfile_read(wt, dg, &t);
    char *rt = t ? realpath(t, NULL) : NULL;
    const char *why = pin ? NULL : link_danger(g, k, rt, depth);
    if (!why && rt && depth < LINK_DEPTH) {
        int sub = check_tree(g, out, rel, rt, NULL, depth + 1);
        if (sub >= 0)
            found += sub;
        else if (!pin && !trusted(g, rt))
            why = "kgate cannot read its index to check the gitlinks it records";
    }
    if (why) found += quarantine(g, out, dg, why, index);
    free(t);
    free(rt);
out:
    free(dg);
    free(wt);
    return found;
}

/* Every gitlink of the index in gd (known: the list already read, or
 * NULL), whose work tree is rel below the project ("" for the project
 * itself): the number of findings, or -1 when the index cannot be read. */
static int check_tree(kg_gitguard *g, kg_strv *out, const char *rel, const char *gd,
                      const kg_strv *known, int depth)
{
    kg_strv *links = kg_strv_new();
    char *ix = join(gd, "index");
    int found = 0;
    if (!known && kg_gitguard_index_gitlinks(gd, links) < 0) {
        found = -1;
        goto out;
    }
    if (!known) known = links;
    for (size_t i = 0; i < kg_strv_len(known); i++) {
        char *r = rel_join(rel, kg_strv_get(known, i));
        if (r) found += check_link(g, out, r, ix, depth);
        free(r);
    }
out:
    free(ix);
    kg_strv_free(links);
    return found;
}

int kg_gitguard_end(kg_gitguard *g, kg_strv *out)
{
    if (!g) return 0;
    int found = 0;
    ident now = ident_of(g->dotgit);
    char *p;
    if (!g->git.exists) {
        /* a repository the run made: ordinary unless it runs something */
        const char *why = NULL;
        if (now.exists && S_ISDIR(now.mode))
            why = gitdir_danger(g->dotgit);
        else if (now.exists)
            why = "a .git file sends git to a git directory the run chose";
        if (why) {
            quarantine(g, out, g->dotgit, why, NULL);
            found++;
        }
    } else if (!ident_same(&g->git, &now, !S_ISDIR(g->git.mode))) {
        if (now.exists) {
            quarantine(g, out, g->dotgit, "the .git the run started with was replaced", NULL);
            found++;
        }
    } else if (S_ISDIR(now.mode)) {
        if ((p = join(g->dotgit, "commondir"))) {
            ident c = ident_of(p);
            if (c.exists && !(g->cfd >= 0 && ident_same(&g->cid, &c, 1))) {
                quarantine(g, out, p,
                           "git would take its configuration from the directory it names", NULL);
                found++;
            }
            free(p);
        }
        if ((p = join(g->dotgit, "config.worktree"))) {
            ident w = ident_of(p);
            if (!ident_same(&g->worktree_cfg, &w, 1) && !kg_gitguard_config_inert(p)) {
                quarantine(g, out, p, "it sets keys that can run commands", NULL);
                found++;
            }
            free(p);
        }
        for (int i = 0; i < N_TODO; i++) {
            if (!(p = join(g->dotgit, todo_names[i]))) continue;
            ident t = ident_of(p);
            if (t.exists && !ident_same(&g->todo[i], &t, 1) && todo_has_exec(p)) {
                quarantine(g, out, p, "exec lines run at git rebase --continue", NULL);
                found++;
            }
            free(p);
        }
    }

    /* the git directories the .git file, unchanged, leads to */
    if (g->git.exists && ident_same(&g->git, &now, !S_ISDIR(g->git.mode)))
        found += gitdirs_check(g, out);

    /* gitlinks: git status runs git inside each populated one, and so on */
    char *gd = project_gitdir(g->project, g->dotgit);
    char *mods = g->had_modules ? join(g->dotgit, "modules") : NULL;
    free(g->rmods);
    g->rmods = mods ? realpath(mods, NULL) : NULL;
    free(mods);
    g->budget = GITLINKS_MAX;
    if (gd) {
        char *ix = join(gd, "index");
        ident in = ix ? ident_of(ix) : (ident){0};
        int changed = !ident_same(&g->index, &in, 1);
        /* An index the run did not touch records the gitlinks read at the
         * start: no need to read a large one twice. */
        int r = check_tree(g, out, "", gd, changed ? NULL : g->top, 0);
        if (r >= 0) {
            found += r;
        } else if (changed && ix) {
            found += quarantine(g, out, ix, "kgate cannot read its gitlinks to check them", NULL);
        }
        free(ix);
        free(gd);
    }
    placeholder_release(g);
    return found;
}

void kg_gitguard_free(kg_gitguard *g)
{
    if (!g) return;
    placeholder_release(g);
    free(g->project);
    free(g->dotgit);
    kg_strv_free(g->top);
    kg_strv_free(g->links);
    free(g->link_ids);
    free(g->rmods);
    for (size_t i = 0; i < g->n_gds; i++) free(g->gds[i].dir);
    free(g->gds);
    kg_strv_free(g->gd_all);
    free(g);
}

/* The project's .git file, and every git directory it leads to
 * (kg_gitguard_gitdirs) gets what the built-in table gives .git.  A .git
 * that cannot be read here pins nothing more: kg_gitguard_begin refuses
 * the launch. */
static void pin_gitdirs(const char *project, const char *rproj, const char *dotgit, kg_strv *out)
{
    struct stat st;
    char *top = rproj ? join(rproj, ".git") : NULL;
    if (top && dotgit && lstat(dotgit, &st) == 0 && S_ISREG(st.st_mode)) kg_strv_push(out, top);
    free(top);
    kg_strv *dirs = kg_strv_new();
    if (kg_gitguard_gitdirs(project, dirs) == 0)
        for (size_t i = 0; i < kg_strv_len(dirs); i++)
            push_gitdir_entries(out, kg_strv_get(dirs, i));
    kg_strv_free(dirs);
}

void kg_gitguard_pins(const char *project, kg_strv *out)
{
    char *dotgit = join(project, ".git");
    char *gd = dotgit ? project_gitdir(project, dotgit) : NULL;
    char *rproj = realpath(project, NULL);
    kg_strv *links = kg_strv_new();
    if (gd && rproj) {
        /* at every depth: git status enters each level (collect_links) */
        collect_links(project, "", gd, 0, links);
        for (size_t i = 0; i < kg_strv_len(links); i++) {
            char *wt = join(project, kg_strv_get(links, i));
            char *dg = wt ? join(wt, ".git") : NULL;
            char *rdg = dg ? realpath(dg, NULL) : NULL;
            /* under the project only: nothing else is writable anyway, and
             * a symlink on the way must not pin something elsewhere */
            if (rdg && within(rdg, rproj)) {
                kg_strv_push(out, rdg);
                struct stat st;
                char *t =
                    lstat(rdg, &st) == 0 && S_ISREG(st.st_mode) ? gitfile_target(wt, dg) : NULL;
                char *rt = t ? realpath(t, NULL) : NULL;
                if (rt && within(rt, rproj)) kg_strv_push(out, rt);
                free(t);
                free(rt);
            }
            free(rdg);
            free(dg);
            free(wt);
        }
    }
    kg_strv_free(links);
    pin_gitdirs(project, rproj, dotgit, out);
    free(rproj);
    free(gd);
    free(dotgit);
}

/* ---- core.hooksPath -------------------------------------------------------- */

/* What "git rev-parse --git-path hooks" prints in dir: the hooks
 * directory host git uses there, with core.hooksPath applied as git
 * applies it (from every config file git reads, "~" expanded, a relative
 * one taken from the top of the work tree: measured, git prints
 * "../../.husky" in a/b).  This is the one place this file runs git: it
 * reads configuration and runs nothing that configuration names (no hook,
 * no fsmonitor), before the program starts, on configuration the program
 * could never write (.git/config is protected, and what an earlier run
 * planted elsewhere was moved aside).  NULL when git cannot be run. */
static char *git_hooks_path(const char *dir)
{
    /* Host git, from where no box can write: never PATH, which the
     * project's node_modules/.bin is often on (kgate-tool.h). */
    char git[PATH_MAX];
    kgate_err why = {0};
    if (kgate_tool_find("git", git, sizeof git, &why) < 0) {
        if (kg_debug()) kg_say("git check: %s", why.msg);
        return NULL;
    }
    int p[2];
    if (kg_os_pipe(p, false) < 0) return NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {git, "-C", (char *)dir, "rev-parse", "--git-path", "hooks", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, git, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    char buf[PATH_MAX + 2];
    size_t n = 0;
    while (rc == 0 && n < sizeof buf) {
        ssize_t r = read(p[0], buf + n, sizeof buf - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(p[0]);
    int st = 0;
    while (rc == 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (rc != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || n == 0 || n == sizeof buf ||
        buf[n - 1] != '\n' || memchr(buf, '\0', n) || memchr(buf, '\n', n - 1))
        return NULL;
    buf[n - 1] = '\0';
    return buf[0] == '/' ? strdup(buf) : join(dir, buf);
}

/* path with "." and ".." folded and its longest existing part resolved
 * (realpath), or NULL. */
static char *resolve_missing(const char *path)
{
    char *lex = kg_path_lexical(path, "/", NULL, &(kg_error){0});
    if (!lex) return NULL;
    char *r = realpath(lex, NULL);
    char *slash = r ? NULL : strrchr(lex, '/');
    if (slash && slash != lex) {
        *slash = '\0';
        char *parent = resolve_missing(lex);
        r = parent ? join(parent, slash + 1) : NULL;
        free(parent);
    }
    free(lex);
    return r;
}

/* The last answer, by project: the policy asks, then kg_gitguard_begin
 * takes it, a few milliseconds apart; git costs about that to start. */
static struct {
    char *project, *dir;
} hooks_last;

/* The answer the policy got, once, or a fresh one. */
static char *hooks_dir_taken(const char *project)
{
    char *dir = NULL;
    if (hooks_last.project && strcmp(hooks_last.project, project) == 0)
        dir = hooks_last.dir ? strdup(hooks_last.dir) : NULL;
    else
        dir = kg_gitguard_hooks_dir(project);
    free(hooks_last.project);
    free(hooks_last.dir);
    hooks_last.project = hooks_last.dir = NULL;
    return dir;
}

/* Whether git could find a repository from dir: a .git in it or above it,
 * or GIT_DIR set.  Saves starting git for a project outside any. */
static int maybe_in_repository(const char *dir)
{
    if (getenv("GIT_DIR")) return 1;
    char *p = realpath(dir, NULL);
    int found = 0;
    while (p && !found) {
        char *g = join(p, ".git");
        struct stat st;
        found = g && lstat(g, &st) == 0;
        free(g);
        char *slash = strrchr(p, '/');
        if (!slash || slash == p) break;
        *slash = '\0';
    }
    if (p && !found) { /* the root itself */
        struct stat st;
        found = lstat("/.git", &st) == 0;
    }
    free(p);
    return found;
}

char *kg_gitguard_hooks_dir(const char *project)
{
    char *raw = maybe_in_repository(project) ? git_hooks_path(project) : NULL;
    char *dir = raw ? resolve_missing(raw) : NULL;
    char *rproj = realpath(project, NULL);
    char *deflt = rproj ? join(rproj, ".git/hooks") : NULL;
    /* only in the project (nothing else is writable), and not the
     * .git/hooks that is protected already */
    if (dir && !(rproj && deflt && within(dir, rproj) && strcmp(dir, rproj) != 0 &&
                 strcmp(dir, deflt) != 0)) {
        free(dir);
        dir = NULL;
    }
    free(hooks_last.project);
    free(hooks_last.dir);
    hooks_last.project = strdup(project);
    hooks_last.dir = dir ? strdup(dir) : NULL;
    free(raw);
    free(rproj);
    free(deflt);
    return dir;
}

/* The hooks directory that core.hooksPath names, made when missing (as a
 * missing .git/hooks becomes an empty directory): a mount needs something
 * to mount on, and a directory the program could create, it could fill.
 * Each component is made below the last without following a link. */
static int hooks_dir_make(const char *project, kg_error *err)
{
    char *dir = hooks_dir_taken(project);
    char *rproj = realpath(project, NULL);
    struct stat st;
    int rc = 0;
    if (dir && rproj && lstat(dir, &st) < 0) {
        char *rest = strdup(dir + strlen(rproj) + 1), *save = NULL;
        int fd = rest ? kg_os_open_dir_handle(rproj) : -1;
        for (char *c = rest ? strtok_r(rest, "/", &save) : NULL; fd >= 0 && c;
             c = strtok_r(NULL, "/", &save)) {
            if (mkdirat(fd, c, 0777) < 0 && errno != EEXIST) {
                close(fd);
                fd = -1;
                break;
            }
            int sub = kg_os_openat_dir_handle(fd, c);
            close(fd);
            fd = sub;
        }
        if (fd < 0) {
            rc = kg_err_set(err, errno ? errno : EPERM,
                            "core.hooksPath names %s, which kgate cannot make to keep "
                            "read-only during the run: %s",
                            dir, strerror(errno));
        } else {
            close(fd);
        }
        free(rest);
    }
    free(dir);
    free(rproj);
    return rc;
}
