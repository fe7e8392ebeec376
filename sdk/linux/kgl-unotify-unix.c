/* kgl-unotify-unix.c: the supervisor's decision on a Unix socket named by
 * path (issue 43, item 1).  Landlock controls connecting to one only from
 * ABI 9, so below it a known host path (/run/docker.sock, the system bus,
 * an X server's or an IDE's socket) would be reachable from the box; the
 * supervisor decides instead, in every network mode.
 *
 * The address is the supervisor's copy (kgl-unotify-net.c read it once).
 * The supervisor resolves it itself, from the caller's working directory
 * or root (/proc/PID/cwd, /proc/PID/root; /proc/self is the caller's): the
 * directory is opened, the socket file in it with O_PATH|O_NOFOLLOW, and a
 * symbolic link there (a /proc/PID/fd/N one too) is read and resolved
 * again from the directory that holds it, so every place it judges is one
 * it holds open.  It allows the socket when
 *   - its inode is an allow_sockets entry pinned at launch, or
 *   - it has one name (a second one could be a hard link to a host
 *     socket), and the directory it lies in is below a place pinned at
 *     launch: a directory the box may make sockets in (the project, the
 *     private TMPDIR, allow_paths) or an allow_sockets directory.  That is
 *     where the run's own servers put theirs; a host socket cannot be
 *     moved there from inside the box (the rename needs a write right
 *     where it lies).
 * Anything else is EACCES.  The connect or send is then made on the
 * program's socket with /proc/self/fd/N of the O_PATH descriptor as the
 * path: the kernel reaches the very inode judged and never re-reads the
 * caller's memory or path.  Unnamed and abstract addresses are left as
 * they are (Landlock scopes abstract sockets from ABI 6). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kgl-unotify-int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Links followed in the last name, as the kernel's own limit. */
#define UNIX_HOPS 40
/* Directories walked up from the socket's before giving up: refused. */
#define UNIX_DEPTH 4096

static int grow(void **v, size_t n, size_t size)
{
    void *nv = realloc(*v, (n + 1) * size);
    if (!nv) return -1;
    *v = nv;
    return 0;
}

int kgl_un_add_unix(kgl_un_policy *p, const char *path, int allowed, kgate_err *err)
{
    struct stat st;
    /* Followed: an entry that is a link names the socket it points to,
     * as bubblewrap's bind of it would. */
    if (!path || path[0] != '/' || stat(path, &st) < 0) return 0;
    kgl_un_node n = {st.st_dev, st.st_ino, 0};
    if (S_ISDIR(st.st_mode)) {
        if (grow((void **)&p->net.unix_places, p->net.n_unix_places, sizeof n) < 0)
            return kgate_err_set(err, ENOMEM, "out of memory");
        p->net.unix_places[p->net.n_unix_places++] = n;
    } else if (allowed && S_ISSOCK(st.st_mode)) {
        if (grow((void **)&p->net.unix_socks, p->net.n_unix_socks, sizeof n) < 0)
            return kgate_err_set(err, ENOMEM, "out of memory");
        p->net.unix_socks[p->net.n_unix_socks++] = n;
    }
    return 0;
}

static int in_nodes(const kgl_un_node *v, size_t n, const struct stat *st)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].dev == st->st_dev && v[i].ino == st->st_ino) return 1;
    return 0;
}

/* Whether the directory dir (held open) lies below a pinned place: its
 * ancestors by "..", compared by inode, up to the root. */
static int below_place(const kgl_un_net *n, int dir)
{
    int cur = openat(dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    int found = 0;
    for (int depth = 0; cur >= 0 && depth < UNIX_DEPTH; depth++) {
        struct stat st, up_st;
        if (fstat(cur, &st) < 0) break;
        if (in_nodes(n->unix_places, n->n_unix_places, &st)) {
            found = 1;
            break;
        }
        int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (up < 0 || fstat(up, &up_st) < 0 ||
            (up_st.st_dev == st.st_dev && up_st.st_ino == st.st_ino)) {
            if (up >= 0) close(up);
            break; /* the root: no place above */
        }
        close(cur);
        cur = up;
    }
    if (cur >= 0) close(cur);
    return found;
}

/* The directory path names from base (a descriptor held open), or from
 * the caller's root when it is absolute; -1 with errno. */
static int open_dir(const sv *s, int base, const char *dir)
{
    char pp[64];
    int root = -1;
    if (dir[0] == '/') {
        kgl_un_proc_path(pp, s->pid, "root", -1);
        root = open(pp, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0) return -1;
        while (dir[0] == '/') dir++;
        if (!dir[0]) dir = ".";
        base = root;
    }
    int d = openat(base, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int e = errno;
    if (root >= 0) close(root);
    errno = e;
    return d;
}

/* "/proc/self" and "/proc/thread-self" in what the program named mean the
 * calling thread, not the supervisor that resolves them: rewritten to
 * "/proc/TID" (a thread's directory holds its fd/ too).  0, or an errno. */
static int caller_proc(char *path, size_t size, pid_t tid)
{
    static const char *const selfs[] = {"/proc/self", "/proc/thread-self"};
    for (size_t i = 0; i < sizeof selfs / sizeof selfs[0]; i++) {
        size_t n = strlen(selfs[i]);
        if (strncmp(path, selfs[i], n) != 0 || (path[n] != '/' && path[n] != '\0')) continue;
        char pp[64];
        kgl_un_proc_path(pp, tid, "", -1); /* "/proc/TID/" */
        size_t m = strlen(pp) - 1, rest = strlen(path + n);
        if (m + rest + 1 > size) return ENAMETOOLONG;
        memmove(path + m, path + n, rest + 1);
        memcpy(path, pp, m);
        return 0;
    }
    return 0;
}

/* The file path names, its last name never followed: a link there is
 * read and resolved again from the directory that holds it.  The file in
 * *file and its directory in *dir (both O_PATH), or an errno. */
static int resolve(const sv *s, char *path, size_t size, int *dir, int *file)
{
    static char d[PATH_MAX + 2], leaf[NAME_MAX + 1];
    char pp[64];
    kgl_un_proc_path(pp, s->pid, "cwd", -1);
    int base = open(pp, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (base < 0) return errno;
    for (int hop = 0; hop <= UNIX_HOPS; hop++) {
        int slash = 0, e = caller_proc(path, size, s->pid);
        if (!e) e = kgl_un_split(path, strlen(path), d, sizeof d, leaf, sizeof leaf, &slash);
        if (!e && slash) e = ENOTDIR;
        int dd = e ? -1 : open_dir(s, base, d);
        if (!e && dd < 0) e = errno;
        close(base);
        if (e) return e;
        int f = openat(dd, leaf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (f < 0 || fstat(f, &st) < 0) {
            e = errno;
            if (f >= 0) close(f);
            close(dd);
            return e;
        }
        if (!S_ISLNK(st.st_mode)) {
            *dir = dd;
            *file = f;
            return 0;
        }
        ssize_t n = readlinkat(f, "", path, size - 1);
        e = errno;
        close(f);
        if (n <= 0) {
            close(dd);
            return n < 0 ? e : ENOENT;
        }
        path[n] = '\0';
        base = dd; /* a relative target starts where the link lies */
    }
    close(base);
    return ELOOP;
}

/* The decision on what was resolved: 0 (allowed) or EACCES. */
static int judge(const kgl_un_net *n, int dir, int file)
{
    struct stat st;
    if (fstat(file, &st) < 0) return EACCES;
    /* Not a socket: the kernel's own answer, nothing reached. */
    if (!S_ISSOCK(st.st_mode)) return ECONNREFUSED;
    if (in_nodes(n->unix_socks, n->n_unix_socks, &st)) return 0;
    if (st.st_nlink == 1 && below_place(n, dir)) return 0;
    return EACCES;
}

int kgl_un_unix_dest(const sv *s, void *addr, socklen_t *len, int *pin)
{
    static char path[PATH_MAX + 1];
    struct sockaddr_un *u = addr;
    size_t off = offsetof(struct sockaddr_un, sun_path);
    size_t plen = *len > off ? *len - off : 0;
    if (!plen || u->sun_path[0] == '\0') return 0; /* unnamed, abstract */
    if (plen > sizeof u->sun_path) plen = sizeof u->sun_path;
    memcpy(path, u->sun_path, plen);
    path[plen] = '\0';
    int dir = -1, file = -1;
    int e = resolve(s, path, sizeof path, &dir, &file);
    if (!e) e = judge(&s->p->net, dir, file);
    if (dir >= 0) close(dir);
    if (e) {
        if (file >= 0) close(file);
        return e;
    }
    int k = snprintf(u->sun_path, sizeof u->sun_path, "/proc/self/fd/%d", file);
    if (k < 0 || (size_t)k >= sizeof u->sun_path) {
        close(file);
        return ENAMETOOLONG;
    }
    *len = (socklen_t)(off + (size_t)k + 1);
    *pin = file;
    return 0;
}
