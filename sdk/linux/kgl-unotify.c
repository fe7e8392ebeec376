/* kgl-unotify.c: the supervisor that lets a Landlock box make, remove and
 * rename names in the directories Landlock had to grant entry by entry
 * (kgate-unotify.h says what it promises).
 *
 * Who is who.  The launch child P restricts itself to the supervisor's
 * rights (the program's ruleset plus write on the managed directories),
 * then forks Q.  Q restricts itself further to the program's ruleset, so
 * its Landlock domain is nested in P's, installs the notifying filter
 * last, sends the listener to P and goes on to exec the program.  P stays
 * and is the supervisor: an ancestor of every process of the program, in
 * the domain above theirs, so Landlock's ptrace rule and Yama's
 * ptrace_scope 1 both let it read their memory and their working
 * directories; and it can never do more than its own rules allow, which
 * outside the managed directories are the program's.  When Q ends, P ends
 * the same way (its exit status, or its signal), so the core, which
 * started P, sees the program's status.  P was forked from a process that
 * may have threads: from the fork on it calls no allocator and no stdio.
 *
 * What it does with a call.  It copies each path once from the program's
 * memory (process_vm_readv, /proc/PID/mem when that is refused), checks
 * that the notification is still pending, resolves the parent directory
 * itself from /proc/PID/cwd or /proc/PID/fd/N with openat2 and
 * RESOLVE_NO_MAGICLINKS, and walks up from it: below a protected or
 * deny_read entry it refuses; below an entry Landlock granted at launch, or
 * outside every managed directory, it answers CONTINUE (the kernel then
 * makes the call under the program's own rules, which refuse everything
 * the supervisor would refuse; so the race of a second thread rewriting
 * the path after the look cannot win more than the program already has);
 * in a managed directory it checks the final name against the pinned
 * names and inodes and makes the call itself on the descriptor it
 * resolved, returning a new descriptor with SECCOMP_IOCTL_NOTIF_ADDFD.
 * Anything it cannot read is answered CONTINUE for the same reason;
 * anything it cannot decide is refused. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kgate/kgate-unotify.h"
#include "kgate/kgate-linux.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kgl-ipc.h"
#include "kgl-unotify-int.h"
#include "kgl-unotify-program.h"

/* O_TMPFILE's own bit (glibc's KGL_O_TMPFILE_BIT also has O_DIRECTORY's). */
#define KGL_O_TMPFILE_BIT 020000000
#define PATH_BUF 4096

/* ---- the policy, pinned at launch (kgate's process) -------------------- */

static int grow(void **v, size_t n, size_t size)
{
    void *nv = realloc(*v, (n + 1) * size);
    if (!nv) return -1;
    *v = nv;
    return 0;
}

int kgl_un_add_hole(kgl_un_policy *p, const char *path, int deny, kgate_err *err)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (grow((void **)&p->holes, p->n_holes, sizeof *p->holes) < 0)
            return kgate_err_set(err, ENOMEM, "out of memory");
        p->holes[p->n_holes++] = (kgl_un_node){st.st_dev, st.st_ino, deny};
    }
    const char *slash = strrchr(path, '/');
    if (!slash || strlen(slash + 1) >= sizeof p->names[0].leaf || !slash[1]) return 0;
    char dir[PATH_BUF];
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= sizeof dir) return 0;
    memcpy(dir, path, n);
    dir[n] = '\0';
    /* A parent that is not there yet (no .git): nothing to pin; what the
     * program makes there is its own, as under bubblewrap. */
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) return 0;
    if (grow((void **)&p->names, p->n_names, sizeof *p->names) < 0)
        return kgate_err_set(err, ENOMEM, "out of memory");
    kgl_un_name *nm = &p->names[p->n_names++];
    memset(nm, 0, sizeof *nm);
    nm->dev = st.st_dev;
    nm->ino = st.st_ino;
    nm->deny = deny;
    memcpy(nm->leaf, slash + 1, strlen(slash + 1) + 1);
    return 0;
}

int kgl_un_add_managed(kgl_un_policy *p, const char *dir, kgate_err *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return e == ENOENT ? 0
                           : kgate_err_set(err, e, "cannot pin %s for the supervisor: %s", dir,
                                           strerror(e));
    }
    if (grow((void **)&p->managed, p->n_managed, sizeof *p->managed) < 0) {
        close(fd);
        return kgate_err_set(err, ENOMEM, "out of memory");
    }
    p->managed[p->n_managed++] = (kgl_un_node){st.st_dev, st.st_ino, 0};
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return kgate_err_set(err, errno, "cannot list %s: %s", dir, strerror(errno));
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
        if (grow((void **)&p->granted, p->n_granted, sizeof *p->granted) < 0) {
            closedir(d);
            return kgate_err_set(err, ENOMEM, "out of memory");
        }
        p->granted[p->n_granted++] = (kgl_un_node){st.st_dev, st.st_ino, 0};
    }
    closedir(d);
    return 0;
}

/* How many unnamed files the pool may hold: half the open-file limit,
 * less room for what kgate itself opens, at most KGL_UN_POOL_MAX. */
static size_t pool_room(size_t want)
{
    struct rlimit rl;
    size_t room = 0;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 2 > 32)
        room = (size_t)(rl.rlim_cur / 2 - 32);
    else if (rl.rlim_cur == RLIM_INFINITY)
        room = want;
    if (room > KGL_UN_POOL_MAX) room = KGL_UN_POOL_MAX;
    return want < room ? want : room;
}

/* One unnamed file in dir, held by an O_PATH descriptor only: no process
 * keeps it open for writing (the kernel refuses to execute a file open
 * for writing, ETXTBSY).  -1 where the file system has no O_TMPFILE. */
static int pool_file(int dir)
{
    int w = openat(dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (w < 0) return -1;
    char pp[64];
    kgl_un_proc_path(pp, getpid(), "fd/", w);
    int o = open(pp, O_PATH | O_CLOEXEC);
    close(w);
    return o;
}

int kgl_un_add_pool(kgl_un_policy *p, const char *dir, size_t n, kgate_err *err)
{
    int d = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (d < 0 || fstat(d, &st) < 0) {
        if (d >= 0) close(d);
        return 0; /* gone: nothing made there can be executed, as before */
    }
    if (grow((void **)&p->pool.bare, p->pool.n_bare, sizeof *p->pool.bare) < 0) {
        close(d);
        return kgate_err_set(err, ENOMEM, "out of memory");
    }
    p->pool.bare[p->pool.n_bare++] = (kgl_un_node){st.st_dev, st.st_ino, 0};
    n = p->pool.fd ? 0 : pool_room(n);
    if (n) {
        p->pool.fd = calloc(n, sizeof *p->pool.fd);
        p->pool.node = calloc(n, sizeof *p->pool.node);
        if (!p->pool.fd || !p->pool.node) {
            close(d);
            return kgate_err_set(err, ENOMEM, "out of memory");
        }
    }
    while (p->pool.n < n) {
        int fd = pool_file(d);
        if (fd < 0 || fstat(fd, &st) < 0) {
            if (fd >= 0) close(fd);
            break; /* fewer, or none: executing what is made there fails */
        }
        p->pool.node[p->pool.n] = (kgl_un_node){st.st_dev, st.st_ino, 0};
        p->pool.fd[p->pool.n++] = fd;
    }
    close(d);
    return 0;
}

int kgl_un_add_prefix(kgl_un_policy *p, const char *path, kgate_err *err)
{
    struct stat st;
    /* By inode too: where a linked file really lies is judged by its
     * ancestors' inodes (link_place). */
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (grow((void **)&p->roots, p->n_roots, sizeof *p->roots) < 0)
            return kgate_err_set(err, ENOMEM, "out of memory");
        p->roots[p->n_roots++] = (kgl_un_node){st.st_dev, st.st_ino, 0};
    }
    char *c = strdup(path);
    if (!c || grow((void **)&p->prefixes, p->n_prefixes, sizeof *p->prefixes) < 0) {
        free(c);
        return kgate_err_set(err, ENOMEM, "out of memory");
    }
    p->prefixes[p->n_prefixes++] = c;
    return 0;
}

void kgl_un_policy_free(kgl_un_policy *p)
{
    for (size_t i = 0; i < p->n_prefixes; i++) free(p->prefixes[i]);
    free(p->prefixes);
    free(p->holes);
    free(p->names);
    free(p->managed);
    free(p->granted);
    free(p->roots);
    for (size_t i = 0; i < p->pool.n; i++) close(p->pool.fd[i]);
    free(p->pool.fd);
    free(p->pool.node);
    free(p->pool.bare);
    free(p->net.hosts);
    free(p->net.allow);
    free(p->net.unix_socks);
    free(p->net.unix_places);
    if (p->net.on && p->net.log_fd >= 0) close(p->net.log_fd);
    memset(p, 0, sizeof *p);
}

/* ---- can this kernel do it ------------------------------------------ */

int kgl_un_available(char *why, size_t len)
{
    uint32_t act = SECCOMP_RET_USER_NOTIF;
    struct seccomp_notif_sizes sz;
    struct utsname u;
    int major = 0, minor = 0;
    if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act) < 0) {
        snprintf(why, len,
                 "seccomp user notification is not available "
                 "(Linux 5.0 or later): %s",
                 strerror(errno));
        return 0;
    }
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0 || sz.seccomp_notif > 512 ||
        sz.seccomp_notif_resp > 512) {
        snprintf(why, len, "seccomp notification sizes unknown");
        return 0;
    }
    /* SECCOMP_ADDFD_FLAG_SEND (5.14) cannot be asked for without a
     * notification: the version says it. */
    if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2 || major < 5 ||
        (major == 5 && minor < 14)) {
        snprintf(why, len, "Linux %s is older than 5.14 (SECCOMP_ADDFD_FLAG_SEND)", u.release);
        return 0;
    }
    if (syscall(SYS_openat2, -1, "", NULL, 0) < 0 && errno == ENOSYS) {
        snprintf(why, len, "openat2 is refused or missing here");
        return 0;
    }
    return 1;
}

/* ---- small helpers without allocation (the supervisor's side) ------- */

static int same(const struct stat *st, const kgl_un_node *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].dev == (uint64_t)st->st_dev && v[i].ino == (uint64_t)st->st_ino) return (int)i + 1;
    return 0;
}

/* ---- the supervisor ---------------------------------------------------- */

static result res_err(int e) { return (result){R_ERR, e, -1, 0}; }
static const result CONT = {R_CONT, 0, -1, 0};

/* Copies a NUL-terminated string from the program, once.  0, or an
 * errno (the caller then lets the kernel decide). */
static int copy_string(const sv *s, uint64_t addr, char *buf, size_t size)
{
    if (!addr) return EFAULT;
    size_t got = 0;
    int memfd = -1;
    while (got < size) {
        uint64_t at = addr + got;
        size_t chunk = 4096 - (size_t)(at & 4095);
        if (chunk > size - got) chunk = size - got;
        struct iovec l = {buf + got, chunk}, r = {(void *)(uintptr_t)at, chunk};
        ssize_t n = process_vm_readv(s->pid, &l, 1, &r, 1, 0);
        if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
            /* Refused by a container's seccomp profile: the same through
             * /proc (a ptrace read check too). */
            if (memfd < 0) {
                char mp[64];
                kgl_un_proc_path(mp, s->pid, "mem", -1);
                memfd = open(mp, O_RDONLY | O_CLOEXEC);
            }
            n = memfd >= 0 ? pread(memfd, buf + got, chunk, (off_t)at) : -1;
        }
        if (n <= 0) break;
        if (memchr(buf + got, '\0', (size_t)n)) {
            if (memfd >= 0) close(memfd);
            /* The thread may have died and its id been reused: what was
             * read must belong to the call still waiting. */
            return kgl_un_valid(s) ? 0 : ESRCH;
        }
        got += (size_t)n;
    }
    if (memfd >= 0) close(memfd);
    return got >= size ? ENAMETOOLONG : EFAULT;
}

/* The directory a relative path starts from: the caller's working
 * directory or descriptor, as the kernel would use it; "/" for an
 * absolute one (chroot is refused by the filter, so the program's root is
 * the supervisor's). */
static int open_base(const sv *s, int dirfd, const char *path)
{
    if (path[0] == '/') return open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    char pp[64];
    if (dirfd == AT_FDCWD)
        kgl_un_proc_path(pp, s->pid, "cwd", -1);
    else if (dirfd < 0)
        return errno = EBADF, -1;
    else
        kgl_un_proc_path(pp, s->pid, "fd/", dirfd);
    int fd = open(pp, O_PATH | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) errno = EBADF;
    return fd;
}

typedef struct where {
    int dfd; /* the parent directory, resolved by us */
    struct stat dst; /* its inode */
    char leaf[256 + 2]; /* the last name, with a '/' when it had one */
    char name[256]; /* the last name alone */
    int slash;
} where;

/* Splits path and resolves its parent from base, without magic links. */
static int resolve(int base, const char *path, where *w)
{
    char dir[PATH_BUF];
    int e = kgl_un_split(path, strlen(path), dir, sizeof dir, w->name, sizeof w->name, &w->slash);
    if (e) return e;
    size_t n = strlen(w->name);
    memcpy(w->leaf, w->name, n);
    if (w->slash) w->leaf[n++] = '/';
    w->leaf[n] = '\0';
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_NO_MAGICLINKS};
    w->dfd = (int)syscall(SYS_openat2, base, dir, &how, sizeof how);
    if (w->dfd < 0) return errno;
    if (fstat(w->dfd, &w->dst) < 0) {
        e = errno;
        close(w->dfd);
        w->dfd = -1;
        return e;
    }
    return 0;
}

/* Walks from the directory dfd (dst, its stat) up through its ancestors
 * by inode (".." opened on the descriptor, never a path), asking at(s, st)
 * of each: a verdict, or -1 to go on.  top is the verdict at "/"; lost the
 * verdict when ".." cannot be opened or the tree is over 4096 deep (the
 * caller's refusal: too deep to tell). */
static int walk_up(const sv *s, int dfd, const struct stat *dst,
                   int (*at)(const kgl_un_policy *, const struct stat *), int top, int lost)
{
    struct stat st = *dst, up;
    int cur = -1, verdict = lost;
    for (int depth = 0; depth < 4096; depth++) {
        int v = at(s->p, &st);
        if (v >= 0) {
            verdict = v;
            break;
        }
        int next = openat(cur >= 0 ? cur : dfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (next < 0 || fstat(next, &up) < 0) {
            if (next >= 0) close(next);
            break;
        }
        if (cur >= 0) close(cur);
        cur = next;
        if (up.st_dev == st.st_dev && up.st_ino == st.st_ino) {
            verdict = top; /* "/" */
            break;
        }
        st = up;
    }
    if (cur >= 0) close(cur);
    return verdict;
}

enum { C_KERNEL, C_MANAGED, C_HOLE };

static int class_at(const kgl_un_policy *p, const struct stat *st)
{
    if (same(st, p->holes, p->n_holes)) return C_HOLE;
    if (same(st, p->managed, p->n_managed)) return C_MANAGED;
    if (same(st, p->granted, p->n_granted)) return C_KERNEL;
    return -1;
}

/* Where a directory lies: in or below a protected or deny_read entry, in a
 * managed directory (or something made in one during the run), or where
 * Landlock's own grant decides (an entry granted at launch, or outside). */
static int classify(const sv *s, int dfd, const struct stat *dst)
{
    return walk_up(s, dfd, dst, class_at, C_KERNEL, C_HOLE);
}

/* The pinned name (directory, name) or inode at the final name: 0 none,
 * 1 protected, 2 deny_read, 3 a managed directory. */
static int pinned_at(const sv *s, const where *w, struct stat *st, int *exists)
{
    const kgl_un_policy *p = s->p;
    for (size_t i = 0; i < p->n_names; i++)
        if (p->names[i].dev == (uint64_t)w->dst.st_dev &&
            p->names[i].ino == (uint64_t)w->dst.st_ino && strcmp(p->names[i].leaf, w->name) == 0)
            return p->names[i].deny ? 2 : 1;
    *exists = fstatat(w->dfd, w->name, st, AT_SYMLINK_NOFOLLOW) == 0;
    if (!*exists) return 0;
    int h = same(st, p->holes, p->n_holes);
    if (h) return p->holes[h - 1].deny ? 2 : 1;
    return same(st, p->managed, p->n_managed) ? 3 : 0;
}

static int dots(const char *name) { return !strcmp(name, ".") || !strcmp(name, ".."); }

/* "/proc/self" and "/proc/thread-self" name the caller, not the
 * supervisor that resolves the path: spelled with the caller's id. */
static int callers_proc(const sv *s, char *path)
{
    static const char *const selves[] = {"/proc/self/", "/proc/thread-self/"};
    for (size_t i = 0; i < sizeof selves / sizeof selves[0]; i++) {
        size_t n = strlen(selves[i]);
        if (strncmp(path, selves[i], n) != 0) continue;
        char pre[64];
        kgl_un_proc_path(pre, s->pid, "", -1);
        size_t m = strlen(pre), rest = strlen(path + n);
        if (m + rest >= PATH_BUF) return ENAMETOOLONG;
        memmove(path + m, path + n, rest + 1);
        memcpy(path, pre, m);
        break;
    }
    return 0;
}

/* The answer when the parent cannot be resolved.  A parent that is not
 * there (or not a directory) is the answer itself, decided on what exists
 * now: continuing would let the kernel look again, and if another thread
 * has made that parent in between (a parallel mkdir -p, npm's installs),
 * the kernel finds it in a managed directory and refuses under Landlock
 * (EACCES) what the supervisor would have made.  Anything else (a magic
 * link, a name too long) is the kernel's to say, under the program's
 * rules. */
static result unresolved(int e) { return e == ENOENT || e == ENOTDIR ? res_err(e) : CONT; }

/* A path argument copied and its parent resolved; fills w and *cls, or
 * answers CONTINUE (outside every managed root, or unreadable: the
 * kernel decides under the program's rules) or an error. */
static int locate(const sv *s, int dirfd, uint64_t addr, char *path, where *w, int *cls,
                  result *out, int shortcut)
{
    w->dfd = -1;
    if (copy_string(s, addr, path, PATH_BUF) != 0 || callers_proc(s, path) != 0)
        return *out = CONT, -1;
    /* Two-name calls resolve both names wherever they are: a move from
     * TMPDIR into the project root must reach the supervisor. */
    if (path[0] == '/' && shortcut) {
        int inside = 0;
        for (size_t i = 0; !inside && i < s->p->n_prefixes; i++) {
            size_t n = strlen(s->p->prefixes[i]);
            inside = !strncmp(path, s->p->prefixes[i], n) && (path[n] == '/' || path[n] == '\0');
        }
        if (!inside) return *out = CONT, -1;
    }
    int base = open_base(s, dirfd, path);
    if (base < 0) return *out = CONT, -1;
    int e = resolve(base, path, w);
    close(base);
    if (e) return *out = unresolved(e), -1;
    *cls = classify(s, w->dfd, &w->dst);
    return 0;
}

static result made(void) { return (result){R_VAL, 0, -1, 0}; }

/* ---- open, creat ------------------------------------------------------ */

static int is_reading(uint64_t f)
{
    return (f & O_ACCMODE) == O_RDONLY && !(f & (O_CREAT | O_TRUNC | KGL_O_TMPFILE_BIT));
}

/* A FIFO would block the supervisor (and every other call waiting for
 * it) until its other end opens: opened without blocking, retried while
 * the caller still waits, for at most 5 s. */
static int open_fifo(const sv *s, int dfd, const char *leaf, int flags)
{
    for (int i = 0; i < 500; i++) {
        int fd = openat(dfd, leaf, flags | O_NONBLOCK);
        if (fd >= 0 || errno != ENXIO || !kgl_un_valid(s)) return fd;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    errno = ENXIO;
    return -1;
}

/* The mode a new file or directory gets: the caller's umask applied (the
 * supervisor's own is 0). */
static int new_mode(const sv *s, uint32_t mode, int *out)
{
    int um = kgl_un_caller_umask(s);
    if (um < 0) return -1;
    *out = (int)(mode & 07777 & ~(uint32_t)um);
    return 0;
}

/* Opens the final name of w as the caller asked, once checked; a
 * symbolic link there sets *follow and leaves its target in path. */
static result open_checked(const sv *s, const kgl_un_call *c, const where *w, const struct stat *st,
                           int exists)
{
    int flags = (int)c->flags, mode = 0;
    if ((flags & (O_CREAT | KGL_O_TMPFILE_BIT)) && new_mode(s, c->mode, &mode) < 0)
        return res_err(EACCES);
    if (exists && (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) return res_err(EEXIST);
    /* O_TRUNC after the check, on the descriptor: truncating first would
     * empty a protected file swapped in between look and open. */
    int of = (flags & ~(O_TRUNC | O_CLOEXEC)) | O_NOFOLLOW | O_CLOEXEC;
    int fifo = exists && S_ISFIFO(st->st_mode);
    int fd = fifo ? open_fifo(s, w->dfd, w->leaf, of) : openat(w->dfd, w->leaf, of, mode);
    if (fd < 0) return res_err(errno);
    struct stat fst;
    int e = fstat(fd, &fst) < 0 ? errno : 0;
    if (!e && same(&fst, s->p->holes, s->p->n_holes)) e = EACCES;
    /* O_RDONLY|O_TRUNC truncates on Linux; the supervisor cannot on a
     * read-only descriptor, and refuses rather than skip it. */
    if (!e && (flags & O_TRUNC) && S_ISREG(fst.st_mode))
        e = (flags & O_ACCMODE) == O_RDONLY ? EACCES : ftruncate(fd, 0) < 0 ? errno : 0;
    if (!e && fifo && !(flags & O_NONBLOCK))
        e = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0 ? errno : 0;
    if (e) {
        close(fd);
        return res_err(e);
    }
    return (result){R_FD, 0, fd, (flags & O_CLOEXEC) != 0};
}

static result open_in(const sv *s, const kgl_un_call *c, const where *w, int cls, char *path,
                      int *follow)
{
    int flags = (int)c->flags, reading = is_reading(c->flags);
    if (cls == C_KERNEL) return CONT;
    /* Below a protected entry reading is Landlock's to allow, below a
     * deny_read one to refuse; writing is refused in both. */
    if (cls == C_HOLE) return reading ? CONT : res_err(EACCES);
    if (dots(w->name) && !((flags & KGL_O_TMPFILE_BIT) && !strcmp(w->name, "."))) return CONT;
    struct stat st;
    int exists = 0, pin = pinned_at(s, w, &st, &exists);
    if (pin == 2 || (pin && !reading)) return res_err(EACCES);
    if (pin) return CONT; /* reading a protected entry: granted read by Landlock */
    if (exists && S_ISLNK(st.st_mode)) {
        if (flags & O_NOFOLLOW) return res_err(ELOOP);
        if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) return res_err(EEXIST);
        ssize_t n = readlinkat(w->dfd, w->name, path, PATH_BUF - 1);
        if (n <= 0) return res_err(n < 0 ? errno : ENOENT);
        path[n] = '\0';
        *follow = 1;
        return CONT;
    }
    /* Entries present at launch are readable under their own rule. */
    if (reading && exists && same(&st, s->p->granted, s->p->n_granted)) return CONT;
    if (!exists && !(flags & (O_CREAT | KGL_O_TMPFILE_BIT))) return res_err(ENOENT);
    result r = open_checked(s, c, w, &st, exists);
    if (r.kind == R_ERR && r.val == ELOOP && !(flags & O_NOFOLLOW)) {
        /* A link put there since the look: look again. */
        memcpy(path, w->name, strlen(w->name) + 1);
        *follow = 1;
        return CONT;
    }
    return r;
}

static result do_open(const sv *s, const kgl_un_call *c)
{
    char path[PATH_BUF];
    where w;
    int cls;
    result r;
    /* O_PATH ignores every other flag and reads nothing (Landlock does not
     * even look); and ADDFD cannot pass such a descriptor (EBADF). */
    if (c->flags & O_PATH) return CONT;
    if (locate(s, c->dirfd[0], c->path[0], path, &w, &cls, &r, 1) < 0) return r;
    for (int hops = 0;; hops++) {
        int follow = 0;
        r = open_in(s, c, &w, cls, path, &follow);
        if (!follow) break;
        if (hops >= 40) {
            r = res_err(ELOOP);
            break;
        }
        /* A relative target starts from the link's directory. */
        int base = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
                                  : fcntl(w.dfd, F_DUPFD_CLOEXEC, 0);
        close(w.dfd);
        w.dfd = -1;
        int e = base < 0 ? errno : resolve(base, path, &w);
        if (base >= 0) close(base);
        if (e) {
            /* The kernel resolves the link itself, under the program's
             * rules (it re-reads the program's path: nothing was
             * checked that it could change). */
            r = CONT;
            break;
        }
        cls = classify(s, w.dfd, &w.dst);
    }
    if (w.dfd >= 0) close(w.dfd);
    return r;
}

/* ---- mkdir, unlink, rmdir, symlink ----------------------------------- */

static result make_in(const sv *s, const kgl_un_call *c, const where *w, int cls,
                      const char *target)
{
    if (cls == C_KERNEL || dots(w->name)) return CONT;
    if (cls == C_HOLE) return res_err(EACCES);
    struct stat st;
    int exists = 0;
    if (pinned_at(s, w, &st, &exists)) return res_err(exists ? EEXIST : EACCES);
    if (c->kind == KGL_UN_SYMLINK)
        return symlinkat(target, w->dfd, w->leaf) < 0 ? res_err(errno) : made();
    int mode = 0;
    if (new_mode(s, c->mode, &mode) < 0) return res_err(EACCES);
    return mkdirat(w->dfd, w->leaf, (mode_t)mode) < 0 ? res_err(errno) : made();
}

static result remove_in(const sv *s, const kgl_un_call *c, const where *w, int cls)
{
    if (cls == C_KERNEL || dots(w->name)) return CONT;
    if (cls == C_HOLE) return res_err(EACCES);
    struct stat st;
    int exists = 0;
    if (pinned_at(s, w, &st, &exists)) return res_err(EACCES);
    return unlinkat(w->dfd, w->leaf, (int)(c->flags & AT_REMOVEDIR)) < 0 ? res_err(errno) : made();
}

static result do_one_name(const sv *s, const kgl_un_call *c)
{
    char path[PATH_BUF], target[PATH_BUF];
    where w;
    int cls, k = c->kind == KGL_UN_SYMLINK;
    result r;
    /* symlink's target is text, copied once and never resolved here. */
    if (k && copy_string(s, c->path[0], target, sizeof target) != 0) return CONT;
    if (locate(s, c->dirfd[1], c->path[k], path, &w, &cls, &r, 1) < 0) return r;
    r = c->kind == KGL_UN_UNLINK ? remove_in(s, c, &w, cls) : make_in(s, c, &w, cls, target);
    close(w.dfd);
    return r;
}

/* ---- rename, link ---------------------------------------------------- */

static result rename_in(const sv *s, const kgl_un_call *c, const where *w, const int *cls)
{
    if (cls[0] == C_HOLE || cls[1] == C_HOLE) return res_err(EACCES);
    if (cls[0] == C_KERNEL && cls[1] == C_KERNEL) return CONT;
    if (dots(w[0].name) || dots(w[1].name)) return CONT;
    struct stat st;
    int exists = 0;
    /* Neither name may be protected, deny_read or a managed directory:
     * not moved away, not replaced, not exchanged. */
    if (pinned_at(s, &w[0], &st, &exists) || pinned_at(s, &w[1], &st, &exists))
        return res_err(EACCES);
    return syscall(SYS_renameat2, w[0].dfd, w[0].leaf, w[1].dfd, w[1].leaf, (unsigned)c->flags) < 0
               ? res_err(errno)
               : made();
}

/* Where the inode to link really lies, found from the object the
 * supervisor holds and never from the path the program gave (a
 * /proc/PID/fd/N magic link, a symbolic link followed, AT_EMPTY_PATH
 * name none of it): the name the kernel keeps for the descriptor
 * (/proc/self/fd), its directory opened anew and taken only when that
 * name there is still this inode, then that directory's ancestors by
 * inode.  Below a protected or deny_read entry: refused; below a
 * managed directory or a writable root: writable; else outside, where
 * Landlock's own link rule (REFER) must decide. */
enum { P_WRITABLE, P_OUTSIDE, P_REFUSED };

static int place_at(const kgl_un_policy *p, const struct stat *st)
{
    if (same(st, p->holes, p->n_holes)) return P_REFUSED;
    if (same(st, p->managed, p->n_managed) || same(st, p->roots, p->n_roots)) return P_WRITABLE;
    return -1;
}

static int place_of_dir(const sv *s, int dfd, const struct stat *dst)
{
    return walk_up(s, dfd, dst, place_at, P_OUTSIDE, P_REFUSED);
}

static int link_place(const sv *s, int sfd, const struct stat *st)
{
    char pp[64], real[PATH_BUF];
    if (same(st, s->p->holes, s->p->n_holes)) return P_REFUSED;
    kgl_un_proc_path(pp, getpid(), "fd/", sfd);
    ssize_t n = readlink(pp, real, sizeof real - 1);
    if (n <= 0 || (size_t)n >= sizeof real - 1 || real[0] != '/') return P_REFUSED;
    real[n] = '\0';
    /* A file without a name (O_TMPFILE, the only one linkat takes) lies
     * in the directory it was made in; the kernel says " (deleted)". */
    static const char del[] = " (deleted)";
    size_t dl = sizeof del - 1;
    if (st->st_nlink == 0 && (size_t)n > dl && !strcmp(real + n - dl, del)) real[n - dl] = '\0';
    int base = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    where w;
    int e = base < 0 ? errno : resolve(base, real, &w);
    if (base >= 0) close(base);
    if (e) return P_REFUSED;
    struct stat here;
    int exists = 0, place = P_REFUSED;
    if (st->st_nlink == 0 ||
        (fstatat(w.dfd, w.name, &here, AT_SYMLINK_NOFOLLOW) == 0 && here.st_dev == st->st_dev &&
         here.st_ino == st->st_ino && !pinned_at(s, &w, &here, &exists)))
        place = place_of_dir(s, w.dfd, &w.dst);
    close(w.dfd);
    return place;
}

/* The inode to link, held: linked by descriptor, so what was checked is
 * what gets the new name. */
static int link_source(const sv *s, const kgl_un_call *c, const char *path, const where *w,
                       int *cls)
{
    if ((c->flags & AT_EMPTY_PATH) && !path[0]) {
        *cls = C_KERNEL;
        return open_base(s, c->dirfd[0], "x");
    }
    int nofollow = (c->flags & AT_SYMLINK_FOLLOW) ? 0 : O_NOFOLLOW;
    return openat(w->dfd, w->name, O_PATH | O_CLOEXEC | nofollow);
}

static result link_in(const sv *s, const where *w, const int *cls, int sfd, int by_name)
{
    struct stat st;
    int exists = 0;
    if (cls[0] == C_HOLE || cls[1] == C_HOLE) return res_err(EACCES);
    /* A deny_read or protected file, or one below such a directory, gets
     * no second name, anywhere: judged by the inode's real place. */
    if (fstat(sfd, &st) < 0) return res_err(errno);
    int place = link_place(s, sfd, &st);
    if (place == P_REFUSED) return res_err(EACCES);
    if (by_name && pinned_at(s, &w[0], &st, &exists)) return res_err(EACCES);
    if (cls[0] == C_KERNEL && cls[1] == C_KERNEL) return CONT;
    if (dots(w[1].name)) return CONT;
    /* The supervisor links with write on the whole managed tree: a new
     * name there must give nothing the old one lacked, as Landlock's
     * REFER rule would say for the program. */
    if (place != P_WRITABLE) return res_err(EXDEV);
    if (pinned_at(s, &w[1], &st, &exists)) return res_err(exists ? EEXIST : EACCES);
    char pp[64];
    kgl_un_proc_path(pp, getpid(), "fd/", sfd);
    return linkat(AT_FDCWD, pp, w[1].dfd, w[1].leaf, AT_SYMLINK_FOLLOW) < 0 ? res_err(errno)
                                                                            : made();
}

static result do_two_names(const sv *s, const kgl_un_call *c)
{
    char path[2][PATH_BUF];
    where w[2] = {{.dfd = -1}, {.dfd = -1}};
    int cls[2] = {C_KERNEL, C_KERNEL}, sfd = -1;
    result r;
    int empty = c->kind == KGL_UN_LINK && (c->flags & AT_EMPTY_PATH) &&
                copy_string(s, c->path[0], path[0], PATH_BUF) == 0 && !path[0][0];
    if (!empty && locate(s, c->dirfd[0], c->path[0], path[0], &w[0], &cls[0], &r, 0) < 0) return r;
    if (locate(s, c->dirfd[1], c->path[1], path[1], &w[1], &cls[1], &r, 0) == 0) {
        if (c->kind == KGL_UN_RENAME) {
            r = rename_in(s, c, w, cls);
        } else if ((sfd = link_source(s, c, empty ? "" : path[0], &w[0], &cls[0])) < 0) {
            r = CONT; /* the kernel's answer (ENOENT, ...), under Landlock */
        } else {
            r = link_in(s, w, cls, sfd, !empty);
            close(sfd);
        }
    }
    for (int i = 0; i < 2; i++)
        if (w[i].dfd >= 0) close(w[i].dfd);
    return r;
}

/* ---- exec: a program made in a directory without execute ------------ */

/* The supervisor's own count of pool files used (it is a process of its
 * own, after the fork: nothing shares it). */
static size_t pool_used;

static int bare_at(const kgl_un_policy *p, const struct stat *st)
{
    if (same(st, p->managed, p->n_managed)) return same(st, p->pool.bare, p->pool.n_bare) != 0;
    if (same(st, p->holes, p->n_holes) || same(st, p->granted, p->n_granted)) return 0;
    return -1;
}

/* 1 when the managed directory dfd lies in (or below) has no execute
 * right of its own. */
static int bare_above(const sv *s, int dfd, const struct stat *dst)
{
    return walk_up(s, dfd, dst, bare_at, 0, 0);
}

/* Copies src into dst, both regular files. */
static int copy_all(int src, int dst)
{
    for (;;) {
        ssize_t n = copy_file_range(src, NULL, dst, NULL, 1 << 30, 0);
        if (n == 0) return 0;
        if (n > 0) continue;
        if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return -1;
        break;
    }
    char buf[16384];
    for (;;) {
        ssize_t n = read(src, buf, sizeof buf);
        if (n <= 0) return (int)n;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(dst, buf + off, (size_t)(n - off));
            if (w <= 0) return -1;
            off += w;
        }
    }
}

/* The program's file at w, opened and checked: a regular, executable
 * file, the inode that was looked at, not a deny_read or protected one,
 * not already a pool file.  -1 when it is none of the supervisor's
 * business (the kernel decides). */
static int exec_source(const sv *s, const where *w, const struct stat *st, struct stat *fst)
{
    if (!S_ISREG(st->st_mode) || !(st->st_mode & 0111) || same(st, s->p->pool.node, s->p->pool.n) ||
        same(st, s->p->holes, s->p->n_holes))
        return -1;
    int src = openat(w->dfd, w->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (src < 0) return -1;
    if (fstat(src, fst) < 0 || !S_ISREG(fst->st_mode) || fst->st_dev != st->st_dev ||
        fst->st_ino != st->st_ino || same(fst, s->p->holes, s->p->n_holes)) {
        close(src);
        return -1;
    }
    return src;
}

/* Gives the program's file at w an inode that Landlock lets it execute:
 * its content, mode and times copied into the next pool file, which then
 * takes its place (exchanged, and the old inode checked to be the one
 * copied before it is removed).  The kernel is then continued: it looks
 * at the path again under the program's own rules, which let it execute
 * a pool file and nothing the supervisor would refuse (a deny_read file
 * has no right at all), so a path changed in between gains nothing. */
static void exec_swap(const sv *s, const where *w, const struct stat *st)
{
    struct stat fst, old;
    if (pool_used >= s->p->pool.n) return; /* used up: EACCES, as before */
    int src = exec_source(s, w, st, &fst);
    if (src < 0) return;
    char pp[64], tmp[64];
    kgl_un_proc_path(pp, getpid(), "fd/", s->p->pool.fd[pool_used]);
    snprintf(tmp, sizeof tmp, ".kgate-exec.%d.%zu", (int)getpid(), pool_used);
    int dst = open(pp, O_WRONLY | O_CLOEXEC);
    if (dst < 0) {
        close(src);
        return;
    }
    pool_used++; /* written to: never handed out again */
    const struct timespec times[2] = {fst.st_atim, fst.st_mtim};
    int ok = copy_all(src, dst) == 0 && fchmod(dst, fst.st_mode & 0777) == 0 &&
             futimens(dst, times) == 0;
    /* Closed before it is linked: a writer would make the exec ETXTBSY. */
    close(dst);
    close(src);
    if (!ok || linkat(AT_FDCWD, pp, w->dfd, tmp, AT_SYMLINK_FOLLOW) < 0) return;
    if (syscall(SYS_renameat2, w->dfd, tmp, w->dfd, w->name, RENAME_EXCHANGE) == 0 &&
        (fstatat(w->dfd, tmp, &old, AT_SYMLINK_NOFOLLOW) < 0 || old.st_dev != fst.st_dev ||
         old.st_ino != fst.st_ino))
        /* Not the inode copied (changed from outside the box): back. */
        (void)syscall(SYS_renameat2, w->dfd, tmp, w->dfd, w->name, RENAME_EXCHANGE);
    unlinkat(w->dfd, tmp, 0);
}

/* A symbolic link at w's final name, followed once: w re-resolved at its
 * target.  0, or -1 when it cannot be (the kernel decides). */
static int exec_follow(const sv *s, where *w, char *path, int *cls)
{
    ssize_t n = readlinkat(w->dfd, w->name, path, PATH_BUF - 1);
    if (n <= 0) return -1;
    path[n] = '\0';
    int base = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
                              : fcntl(w->dfd, F_DUPFD_CLOEXEC, 0);
    close(w->dfd);
    w->dfd = -1;
    int e = base < 0 ? errno : resolve(base, path, w);
    if (base >= 0) close(base);
    if (e) return -1;
    *cls = classify(s, w->dfd, &w->dst);
    return 0;
}

/* execve, execveat: always continued (an exec cannot be made on the
 * program's behalf); before that, a program the program made in a
 * managed directory without execute gets a pool inode (exec_swap). */
static result do_exec(const sv *s, const kgl_un_call *c)
{
    char path[PATH_BUF];
    where w;
    int cls;
    result r;
    if ((c->flags & AT_EMPTY_PATH) || pool_used >= s->p->pool.n) return CONT;
    if (locate(s, c->dirfd[0], c->path[0], path, &w, &cls, &r, 1) < 0) return CONT;
    for (int hops = 0; hops < 40 && cls == C_MANAGED && !w.slash && !dots(w.name); hops++) {
        struct stat st;
        int exists = 0;
        if (pinned_at(s, &w, &st, &exists) || !exists) break;
        if (!S_ISLNK(st.st_mode)) {
            if (bare_above(s, w.dfd, &w.dst)) exec_swap(s, &w, &st);
            break;
        }
        if ((c->flags & AT_SYMLINK_NOFOLLOW) || exec_follow(s, &w, path, &cls) < 0) break;
    }
    if (w.dfd >= 0) close(w.dfd);
    return CONT;
}

/* SysV IPC: decided by kgate's IPC supervisor, which answers on its copy
 * of the listener (kgl-ipc.c); refused when it cannot be reached. */
static result route_ipc(const sv *s, const struct seccomp_notif *n)
{
    if (s->ipc >= 0 && kgl_ipc_route(s->ipc, n) == 0) return (result){R_NONE, 0, -1, 0};
    return res_err(EPERM);
}

static result handle(const sv *s, const struct seccomp_notif *n)
{
    if (kgl_un_net_call(n->data.nr)) return kgl_un_net_handle(s, n);
    if (kgl_ipc_is_call(n->data.nr)) return route_ipc(s, n);
    kgl_un_call c;
    uint64_t args[6];
    for (int i = 0; i < 6; i++) args[i] = n->data.args[i];
    if (kgl_un_decode(n->data.nr, args, &c) < 0) return res_err(EINVAL);
    switch (c.kind) {
    case KGL_UN_OPEN: return do_open(s, &c);
    case KGL_UN_MKDIR:
    case KGL_UN_UNLINK:
    case KGL_UN_SYMLINK: return do_one_name(s, &c);
    case KGL_UN_RENAME:
    case KGL_UN_LINK: return do_two_names(s, &c);
    case KGL_UN_EXEC: return do_exec(s, &c);
    default: return res_err(EINVAL);
    }
}

/* ---- the loop, and the supervisor's life ----------------------------- */

static void respond(const sv *s, result r, size_t resp_size)
{
    if (r.kind == R_NONE) return;
    if (r.kind == R_FD) {
        struct seccomp_notif_addfd a = {.id = s->id,
                                        .flags = SECCOMP_ADDFD_FLAG_SEND,
                                        .srcfd = (uint32_t)r.fd,
                                        .newfd = 0,
                                        .newfd_flags = r.cloexec ? O_CLOEXEC : 0};
        int rc = ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
        int e = errno;
        close(r.fd);
        if (rc >= 0 || e == ENOENT) return; /* answered, or the caller is gone */
        r = res_err(e);
    }
    union {
        struct seccomp_notif_resp r;
        char b[512];
    } resp;
    memset(&resp, 0, resp_size);
    resp.r.id = s->id;
    if (r.kind == R_CONT)
        resp.r.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    else if (r.kind == R_ERR)
        resp.r.error = -r.val;
    else
        resp.r.val = r.val;
    (void)ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/* Answers notifications until the program (pidfd) ends; the network
 * side's relay and workers are served by the same loop. */
static void serve(const kgl_un_policy *p, int listener, int pidfd, int ipc)
{
    struct pollfd pf[2 + 80];
    struct seccomp_notif_sizes sz;
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0 || sz.seccomp_notif > 512 ||
        sz.seccomp_notif_resp > 512)
        return;
    union {
        struct seccomp_notif n;
        char b[512];
    } req;
    sv s = {p, listener, 0, 0, ipc};
    for (;;) {
        pf[0] = (struct pollfd){listener, POLLIN, 0};
        pf[1] = (struct pollfd){pidfd, POLLIN, 0};
        int nn = p->net.on ? kgl_un_net_fds(pf + 2, 80) : 0;
        if (poll(pf, (nfds_t)(2 + nn), p->net.on ? 1000 : -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (pf[1].revents) return;
        if (nn) kgl_un_net_ready(pf + 2, nn);
        if (!(pf[0].revents & POLLIN)) {
            if (pf[0].revents & (POLLHUP | POLLERR | POLLNVAL)) return;
            continue;
        }
        memset(&req, 0, sz.seccomp_notif);
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
            if (errno == EINTR || errno == ENOENT) continue;
            return;
        }
        s.pid = (pid_t)req.n.pid;
        s.id = req.n.id;
        respond(&s, handle(&s, &req.n), sz.seccomp_notif_resp);
    }
}

/* Closes every descriptor but the n of keep (-1: none): the supervisor
 * must hold none of kgate's (the output pipe would never see its end) but
 * the events pipe, where the network side writes its refusals, and the
 * socket to kgate's IPC supervisor. */
static void close_all_but(int *k, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (k[j] < k[i]) {
                int t = k[i];
                k[i] = k[j];
                k[j] = t;
            }
    unsigned from = 0;
    for (int i = 0; i < n; i++) {
        if (k[i] < 0 || (unsigned)k[i] < from) continue;
        if ((unsigned)k[i] > from) syscall(SYS_close_range, from, (unsigned)k[i] - 1, 0U);
        from = (unsigned)k[i] + 1;
    }
    syscall(SYS_close_range, from, ~0U, 0U);
}

/* With the network calls notified, the child cannot sendmsg its listener
 * (its own filter would stop that call, with no one to answer it yet):
 * it writes the number, the supervisor takes the descriptor from it with
 * pidfd_getfd and says so, and only then does the child close it. */
static int net_listener(int sock, int pidfd, int net)
{
    if (!net) return kgl_recv_fd(sock, 0, NULL);
    int num = -1;
    ssize_t n;
    while ((n = read(sock, &num, sizeof num)) < 0 && errno == EINTR) {}
    int l = n == (ssize_t)sizeof num ? (int)syscall(SYS_pidfd_getfd, pidfd, num, 0) : -1;
    if (l >= 0) fcntl(l, F_SETFD, FD_CLOEXEC);
    char ack = l >= 0 ? 'K' : 'E';
    (void)!write(sock, &ack, 1);
    return l;
}

static _Noreturn void supervise(const kgl_un_policy *p, int sock, pid_t q)
{
    int pidfd = (int)syscall(SYS_pidfd_open, q, 0);
    int st = 0;
    if (pidfd >= 0) {
        int keep[5 + KGL_UN_POOL_MAX] = {sock, pidfd, p->net.on ? p->net.events_fd : -1,
                                         p->ipc.on ? p->ipc.fd : -1,
                                         p->net.on ? p->net.log_fd : -1};
        for (size_t i = 0; i < p->pool.n && i < KGL_UN_POOL_MAX; i++) keep[5 + i] = p->pool.fd[i];
        close_all_but(keep, 5 + (int)(p->pool.n < KGL_UN_POOL_MAX ? p->pool.n : KGL_UN_POOL_MAX));
        umask(0);
        if (p->net.on) kgl_un_net_start(p);
        int listener = net_listener(sock, pidfd, p->net.on);
        close(sock);
        if (listener >= 0) {
            /* kgate's IPC supervisor answers on a copy of the listener. */
            int ipc =
                p->ipc.on && kgl_ipc_route_listener(p->ipc.fd, listener) == 0 ? p->ipc.fd : -1;
            serve(p, listener, pidfd, ipc);
            /* From here a notified call of what is left returns ENOSYS. */
            close(listener);
        }
    } else {
        /* Without a supervisor the program must not run: its calls would
         * wait for ever. */
        kill(q, SIGKILL);
    }
    int done = 0;
    if (p->net.on) kgl_un_net_reap(q, &st, &done);
    while (!done && waitpid(q, &st, 0) < 0)
        if (errno != EINTR) _exit(125);
    kgl_end_like(st);
}

int kgl_un_fork_supervisor(const kgl_un_policy *p)
{
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) return -1;
    pid_t self = getpid();
    pid_t q = fork();
    if (q < 0) {
        close(sp[0]);
        close(sp[1]);
        return -1;
    }
    if (q > 0) {
        close(sp[1]);
        supervise(p, sp[0], q);
    }
    close(sp[0]);
    /* The supervisor's end is the program's: a supervisor that dies takes
     * it along. */
    if (kgl_tie_to_parent(SIGKILL, self) < 0) {
        int e = errno;
        close(sp[1]);
        errno = e;
        return -1;
    }
    return sp[1];
}

int kgl_un_install(int sock, int reads, int net)
{
    const unsigned char *prog = reads ? kgl_unotify_reads_program : kgl_unotify_writes_program;
    size_t len = reads ? sizeof kgl_unotify_reads_program : sizeof kgl_unotify_writes_program;
    if (net == KGL_UN_NET_ALL) {
        prog = reads ? kgl_unotify_reads_net_program : kgl_unotify_writes_net_program;
        len = reads ? sizeof kgl_unotify_reads_net_program : sizeof kgl_unotify_writes_net_program;
    } else if (net == KGL_UN_NET_UNIX) {
        prog = reads ? kgl_unotify_reads_unix_program : kgl_unotify_writes_unix_program;
        len =
            reads ? sizeof kgl_unotify_reads_unix_program : sizeof kgl_unotify_writes_unix_program;
    }
    struct sock_fprog fp = {
        .len = (unsigned short)(len / sizeof(struct sock_filter)),
        .filter = (struct sock_filter *)(uintptr_t)prog,
    };
    int l =
        (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
    if (l < 0) return -1;
    if (net) {
        /* See net_listener: read and write are never notified. */
        char ack = 0;
        ssize_t w, r = -1;
        while ((w = write(sock, &l, sizeof l)) < 0 && errno == EINTR) {}
        if (w == (ssize_t)sizeof l)
            while ((r = read(sock, &ack, 1)) < 0 && errno == EINTR) {}
        close(l);
        close(sock);
        if (r == 1 && ack == 'K') return 0;
        errno = EPROTO;
        return -1;
    }
    int rc = kgl_send_fd(sock, l, 'L');
    int e = errno;
    close(l);
    close(sock);
    errno = e;
    return rc;
}
