/* kgate-denycheck.c: the look every box takes at a deny_read entry before
 * it covers it (kgate-denycheck.h).  Portable (macOS too): POSIX calls
 * only, and every descriptor opened without following a link. */
#include "kgate/kgate-denycheck.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct denywalk {
    kgate_err *err;
    const char *top; /* the deny_read entry, for the message */
    size_t entries;
} denywalk;

/* A symlink inside a covered directory is harmless while it stays inside
 * (the cover hides its target too); one that leaves it would take the
 * user's writes through it to a place the program can read. */
static int link_stays_inside(int dir, const char *name)
{
    char t[4096];
    ssize_t n = readlinkat(dir, name, t, sizeof t - 1);
    if (n < 0) return 0;
    t[n] = '\0';
    if (t[0] == '/') return 0;
    for (char *c = t; *c;) {
        size_t len = strcspn(c, "/");
        if (len == 2 && c[0] == '.' && c[1] == '.') return 0;
        c += len;
        c += strspn(c, "/");
    }
    return 1;
}

static int walk_dir(denywalk *w, int fd, int depth, const char *rel)
{
    if (depth > KGATE_DENY_WALK_MAX_DEPTH)
        return kgate_err_set(w->err, EMLINK,
                             "deny_read %s is nested deeper than %d directories: "
                             "kgate cannot check it for hard links; nothing was "
                             "started",
                             w->top, KGATE_DENY_WALK_MAX_DEPTH);
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return kgate_err_set(w->err, errno,
                             "deny_read %s: cannot read %s to check it: %s; "
                             "nothing was started",
                             w->top, *rel ? rel : ".", strerror(errno));
    }
    int r = 0;
    struct dirent *e;
    while (r == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (++w->entries > KGATE_DENY_WALK_MAX_ENTRIES) {
            r = kgate_err_set(w->err, EMLINK,
                              "deny_read %s holds more than %d entries: kgate "
                              "cannot check it for hard links; nothing was "
                              "started",
                              w->top, KGATE_DENY_WALK_MAX_ENTRIES);
            break;
        }
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
        if (S_ISLNK(st.st_mode)) {
            if (!link_stays_inside(dirfd(d), e->d_name))
                r = kgate_err_set(w->err, EPERM,
                                  "deny_read %s: %s%s%s is a symbolic link that "
                                  "leads out of it, so what is written through "
                                  "it is not covered; remove it; nothing was "
                                  "started",
                                  w->top, rel, *rel ? "/" : "", e->d_name);
        } else if (S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) continue;
            char next[4096];
            snprintf(next, sizeof next, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
            r = walk_dir(w, sub, depth + 1, next);
        } else if (st.st_nlink > 1) {
            r = kgate_err_set(w->err, EPERM,
                              "deny_read %s: %s%s%s has %lu hard links, so its "
                              "content can be read under another name; nothing "
                              "was started",
                              w->top, rel, *rel ? "/" : "", e->d_name, (unsigned long)st.st_nlink);
        }
    }
    closedir(d);
    return r;
}

/* No symlink at the name (the core refuses one too, when it reads the
 * config; this is the same look, later), no second hard link to a file,
 * and inside a directory no file with a second link and no symlink that
 * leads out.  Missing: nothing to cover yet (the box notes it). */
int kgate_deny_read_check(const char *p, kgate_err *err)
{
    struct stat st;
    if (lstat(p, &st) < 0) return 0;
    if (S_ISLNK(st.st_mode))
        return kgate_err_set(err, EPERM,
                             "deny_read %s is a symbolic link, so kgate cannot "
                             "show what it would expose; nothing was started",
                             p);
    if (!S_ISDIR(st.st_mode)) {
        if (st.st_nlink > 1)
            return kgate_err_set(err, EPERM,
                                 "deny_read %s has %lu hard links, so its content "
                                 "can be read under another name (find them with "
                                 "find -samefile); nothing was started",
                                 p, (unsigned long)st.st_nlink);
        return 0;
    }
    int fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return kgate_err_set(err, errno,
                             "deny_read %s cannot be checked: %s; nothing was "
                             "started",
                             p, strerror(errno));
    denywalk w = {err, p, 0};
    return walk_dir(&w, fd, 0, "");
}
