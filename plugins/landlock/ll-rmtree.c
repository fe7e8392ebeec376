/* ll-rmtree.c: removing the private TMPDIR whatever the program left in
 * it, with a fixed number of descriptors and without following a link.
 *
 * The program chooses the tree: it can be deeper than the open-file limit
 * (a walk holding one descriptor per level, as the cleaner did, stops
 * there with EMFILE and leaves the directory behind), hold links to
 * places outside, and directories of mode 0 or without write permission.
 * So the walk holds two descriptors whatever the depth (the directory it
 * is in, and a DIR stream on a copy of it): it goes down with
 * openat(O_NOFOLLOW | O_DIRECTORY), and up with openat(fd, ".."), checking
 * that ".." is the directory it came from (its device and inode, kept on a
 * stack in memory with the name to remove).  Entries are removed with
 * unlinkat, which never follows a link; a directory without the rights
 * to be read or emptied gets them with fchmod on its own descriptor (an
 * O_PATH one through /proc/self/fd when it cannot even be opened), never
 * chmod by name.  It never leaves the file system of the top directory.
 *
 * The core ends every process of the run before it stops the cleaner
 * (proctree.h), so nothing moves the tree while it is walked; the checks
 * are there for the day that does not hold (a kgate killed outright). */
#include "ll-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct level {
    dev_t dev;
    ino_t ino;
    char *name; /* of the directory below, in this one */
} level;

typedef struct walk {
    level *v;
    size_t n, cap;
    dev_t fs; /* the top directory's file system */
} walk;

/* Opens dir/name as a directory that is exactly what st describes (not
 * a link, not replaced since), with read, write and search rights for us:
 * a directory that lacks them gets them through its own descriptor. */
static int open_dir(int dir, const char *name, const struct stat *st)
{
    int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES) {
        /* Mode 0 (or no read): O_PATH needs no right on the directory
         * itself; the /proc/self/fd name of that descriptor is the
         * directory it holds, not a path anyone can swap. */
        int p = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (p < 0) return -1;
        struct stat ps;
        char via[64];
        snprintf(via, sizeof via, "/proc/self/fd/%d", p);
        int ok = fstat(p, &ps) == 0 && ps.st_dev == st->st_dev && ps.st_ino == st->st_ino &&
                 chmod(via, 0700) == 0;
        close(p);
        if (!ok) return -1;
        fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) return -1;
    struct stat fs;
    if (fstat(fd, &fs) < 0 || fs.st_dev != st->st_dev || fs.st_ino != st->st_ino) {
        close(fd);
        errno = ESTALE;
        return -1;
    }
    if ((fs.st_mode & 0700) != 0700 && fchmod(fd, 0700) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int push(walk *w, const struct stat *here, const char *name)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        level *v = realloc(w->v, cap * sizeof *v);
        if (!v) return -1;
        w->v = v;
        w->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) return -1;
    w->v[w->n++] = (level){here->st_dev, here->st_ino, copy};
    return 0;
}

/* Empties the directory *fd holds, except its subdirectories that are
 * not empty: the first of those is returned in *down (its stat in *dst),
 * to be entered.  0 when done (emptied, or a subdirectory found), -1 on
 * an error. */
static int sweep(walk *w, int fd, char **down, struct stat *dst)
{
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
    if (!d) {
        if (copy >= 0) close(copy);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    *down = NULL;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno == ENOENT) continue;
            rc = -1;
            break;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (unlinkat(fd, e->d_name, 0) < 0 && errno != ENOENT) {
                rc = -1;
                break;
            }
            continue;
        }
        if (unlinkat(fd, e->d_name, AT_REMOVEDIR) == 0 || errno == ENOENT) continue;
        if (errno != ENOTEMPTY && errno != EEXIST) {
            rc = -1;
            break;
        }
        if (st.st_dev != w->fs) { /* a mount: never ours to empty */
            errno = EXDEV;
            rc = -1;
            break;
        }
        *down = strdup(e->d_name);
        *dst = st;
        if (!*down) rc = -1;
        break;
    }
    closedir(d);
    return rc;
}

/* From the directory fd (whose stat is here) one level up, where the
 * stack says it came from; removes it there.  The new fd, or -1. */
static int go_up(walk *w, int fd)
{
    level top = w->v[--w->n];
    int up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(fd);
    struct stat st;
    if (up >= 0 && (fstat(up, &st) < 0 || st.st_dev != top.dev || st.st_ino != top.ino)) {
        /* Moved while we were below: not the directory we came from. */
        close(up);
        up = -1;
        errno = ESTALE;
    }
    if (up >= 0 && unlinkat(up, top.name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
        close(up);
        up = -1;
    }
    free(top.name);
    return up;
}

int ll_rmtree(int parent, const char *name)
{
    struct stat st;
    if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode)) return unlinkat(parent, name, 0);
    walk w = {.fs = st.st_dev};
    int fd = open_dir(parent, name, &st);
    int rc = fd < 0 ? -1 : 0;
    while (fd >= 0) {
        char *down = NULL;
        struct stat dst;
        if (sweep(&w, fd, &down, &dst) < 0) {
            rc = -1;
            break;
        }
        if (down) {
            struct stat here;
            int sub =
                fstat(fd, &here) == 0 && push(&w, &here, down) == 0 ? open_dir(fd, down, &dst) : -1;
            free(down);
            if (sub < 0) {
                rc = -1;
                break;
            }
            close(fd);
            fd = sub;
            continue;
        }
        if (w.n == 0) break; /* the top is empty */
        fd = go_up(&w, fd);
        if (fd < 0) rc = -1;
    }
    if (fd >= 0) close(fd);
    for (size_t i = 0; i < w.n; i++) free(w.v[i].name);
    free(w.v);
    if (rc < 0) return -1;
    return unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -1 : 0;
}
