/* kgl-unotify-parse.c: what the supervisor (kgl-unotify.c) reads from the
 * program, parsed without touching anything: the notified call's
 * arguments, a path copied from its memory, its umask.  Pure, so that
 * tests/fuzz/fuzz-unotify.c can feed it anything; whatever it cannot
 * parse is refused by the caller. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kgate/kgate-unotify.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
#define RENAME_WHITEOUT (1 << 2)
#endif

/* A descriptor argument: the kernel reads the low 32 bits as an int. */
static int fd_arg(uint64_t a) { return (int)(int32_t)(uint32_t)a; }

static void set(kgl_un_call *c, kgl_un_kind k, uint64_t d0, uint64_t p0, uint64_t d1, uint64_t p1)
{
    c->kind = k;
    c->dirfd[0] = fd_arg(d0);
    c->path[0] = p0;
    c->dirfd[1] = fd_arg(d1);
    c->path[1] = p1;
}

/* The calls that exist only on older architectures (x86-64 has them,
 * arm64 does not): the same work as their *at twin from AT_FDCWD. */
static int decode_legacy(int nr, const uint64_t *a, kgl_un_call *c)
{
    const uint64_t cwd = (uint64_t)(uint32_t)AT_FDCWD;
    switch (nr) {
#ifdef SYS_open
    case SYS_open:
        set(c, KGL_UN_OPEN, cwd, a[0], cwd, 0);
        c->flags = (uint32_t)a[1];
        c->mode = (uint32_t)a[2];
        return 0;
    case SYS_creat:
        set(c, KGL_UN_OPEN, cwd, a[0], cwd, 0);
        c->flags = O_CREAT | O_WRONLY | O_TRUNC;
        c->mode = (uint32_t)a[1];
        return 0;
    case SYS_mkdir:
        set(c, KGL_UN_MKDIR, cwd, a[0], cwd, 0);
        c->mode = (uint32_t)a[1];
        return 0;
    case SYS_unlink: set(c, KGL_UN_UNLINK, cwd, a[0], cwd, 0); return 0;
    case SYS_rmdir:
        set(c, KGL_UN_UNLINK, cwd, a[0], cwd, 0);
        c->flags = AT_REMOVEDIR;
        return 0;
    case SYS_rename: set(c, KGL_UN_RENAME, cwd, a[0], cwd, a[1]); return 0;
    case SYS_link: set(c, KGL_UN_LINK, cwd, a[0], cwd, a[1]); return 0;
    case SYS_symlink: set(c, KGL_UN_SYMLINK, cwd, a[0], cwd, a[1]); return 0;
#endif
    default:
        (void)a;
        (void)cwd;
        c->kind = KGL_UN_NONE;
        return -1;
    }
}

int kgl_un_decode(int nr, const uint64_t a[6], kgl_un_call *c)
{
    memset(c, 0, sizeof *c);
    switch (nr) {
    case SYS_openat:
        set(c, KGL_UN_OPEN, a[0], a[1], a[0], 0);
        c->flags = (uint32_t)a[2];
        c->mode = (uint32_t)a[3];
        return 0;
    case SYS_mkdirat:
        set(c, KGL_UN_MKDIR, a[0], a[1], a[0], 0);
        c->mode = (uint32_t)a[2];
        return 0;
    case SYS_unlinkat:
        set(c, KGL_UN_UNLINK, a[0], a[1], a[0], 0);
        c->flags = (uint32_t)a[2];
        /* Only AT_REMOVEDIR means anything here (the kernel says EINVAL
         * to the rest, and so do we). */
        return (c->flags & ~(uint64_t)AT_REMOVEDIR) ? -1 : 0;
    case SYS_renameat: set(c, KGL_UN_RENAME, a[0], a[1], a[2], a[3]); return 0;
    case SYS_renameat2:
        set(c, KGL_UN_RENAME, a[0], a[1], a[2], a[3]);
        c->flags = (uint32_t)a[4];
        /* A whiteout is a device node (overlayfs, CAP_MKNOD): refused. */
        return (c->flags & ~(uint64_t)(RENAME_NOREPLACE | RENAME_EXCHANGE)) ||
                       (c->flags == (RENAME_NOREPLACE | RENAME_EXCHANGE))
                   ? -1
                   : 0;
    case SYS_linkat:
        set(c, KGL_UN_LINK, a[0], a[1], a[2], a[3]);
        c->flags = (uint32_t)a[4];
        return (c->flags & ~(uint64_t)(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)) ? -1 : 0;
    case SYS_execve: set(c, KGL_UN_EXEC, (uint64_t)(uint32_t)AT_FDCWD, a[0], 0, 0); return 0;
    case SYS_execveat:
        /* Its flags are the kernel's to judge: the supervisor only ever
         * answers continue to an exec. */
        set(c, KGL_UN_EXEC, a[0], a[1], 0, 0);
        c->flags = (uint32_t)a[4];
        return 0;
    case SYS_symlinkat:
        /* symlinkat(target, newdirfd, linkpath): the target is text,
         * never resolved here. */
        set(c, KGL_UN_SYMLINK, (uint64_t)(uint32_t)AT_FDCWD, a[0], a[1], a[2]);
        return 0;
    default: return decode_legacy(nr, a, c);
    }
}

int kgl_un_split(const char *path, size_t len, char *dir, size_t dirsz, char *leaf, size_t leafsz,
                 int *slash)
{
    *slash = 0;
    if (len == 0) return ENOENT;
    if (memchr(path, '\0', len)) len = strlen(path);
    if (len == 0) return ENOENT;
    size_t end = len;
    while (end > 1 && path[end - 1] == '/') end--;
    *slash = end < len;
    if (end == 1 && path[0] == '/') {
        /* "/" itself: its own directory, named "." in it. */
        if (dirsz < 2 || leafsz < 2) return ENAMETOOLONG;
        memcpy(dir, "/", 2);
        memcpy(leaf, ".", 2);
        return 0;
    }
    size_t start = end;
    while (start > 0 && path[start - 1] != '/') start--;
    size_t n = end - start;
    if (n >= leafsz || n > 255) return ENAMETOOLONG;
    memcpy(leaf, path + start, n);
    leaf[n] = '\0';
    /* The directory keeps its trailing slashes ("a//b" -> "a//"): the
     * kernel reads them as one. */
    size_t dn = start;
    if (dn == 0) {
        if (dirsz < 2) return ENAMETOOLONG;
        memcpy(dir, ".", 2);
        return 0;
    }
    if (dn >= dirsz) return ENAMETOOLONG;
    memcpy(dir, path, dn);
    dir[dn] = '\0';
    return 0;
}

int kgl_un_parse_umask(const char *s, size_t len)
{
    static const char key[] = "\nUmask:";
    size_t k = sizeof key - 1;
    for (size_t i = 0; i + k <= len; i++) {
        if ((i == 0 ? strncmp(s, key + 1, k - 1) : memcmp(s + i, key, k)) != 0) continue;
        size_t j = i + (i == 0 ? k - 1 : k);
        while (j < len && (s[j] == ' ' || s[j] == '\t')) j++;
        int v = 0, digits = 0;
        while (j < len && s[j] >= '0' && s[j] <= '7' && digits < 4) {
            v = v * 8 + (s[j++] - '0');
            digits++;
        }
        return digits ? v : -1;
    }
    return -1;
}
