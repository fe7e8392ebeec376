/* os-fd-macos.c: descriptors and file metadata on macOS (see os.h).
 *
 * What differs from Linux, and what it costs:
 * - no pipe2: pipe() then fcntl.  kgate has one thread, so no fork can
 *   happen in between and no descriptor leaks into a program.
 * - no F_SETPIPE_SZ: the kernel grows a pipe to 64 KiB by itself, so the
 *   relay makes more, smaller reads than on Linux (speed only).
 * - no O_PATH: the PATH directories the deny list looks names up in are
 *   opened for reading; one that may only be searched (mode 0711) cannot
 *   be opened, and its names are looked up by path instead, as the deny
 *   list does for every directory it cannot open.
 * - no close_range: the descriptors are walked in /dev/fd. */
#include "os.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static int set_flag(int fd, int get, int set, int flag)
{
    int f = fcntl(fd, get);
    return f < 0 ? -1 : fcntl(fd, set, f | flag);
}

int kg_os_pipe(int p[2], bool nonblock)
{
    if (pipe(p) < 0) return -1;
    for (int i = 0; i < 2; i++) {
        if (set_flag(p[i], F_GETFD, F_SETFD, FD_CLOEXEC) < 0 ||
            (nonblock && set_flag(p[i], F_GETFL, F_SETFL, O_NONBLOCK) < 0)) {
            int e = errno;
            close(p[0]);
            close(p[1]);
            errno = e;
            return -1;
        }
    }
    return 0;
}

void kg_os_pipe_grow(int fd, int size)
{
    (void)fd;
    (void)size;
}

int kg_os_open_dir_handle(const char *path)
{
    return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int kg_os_openat_dir_handle(int dfd, const char *name)
{
    return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int kg_os_rename_noreplace(int dfd, const char *from, const char *to)
{
    return renameatx_np(dfd, from, dfd, to, RENAME_EXCL);
}

int kg_os_cloexec_range(int lowfd)
{
    (void)lowfd;
    return -1;
}

const char *kg_os_fd_dir(void) { return "/dev/fd"; }

struct timespec kg_os_stat_mtime(const struct stat *st) { return st->st_mtimespec; }

struct timespec kg_os_stat_ctime(const struct stat *st) { return st->st_ctimespec; }

int kg_os_owner_kind(uid_t uid)
{
    /* macOS has no user namespaces: an owner is who stat() says. */
    (void)uid;
    return KG_OWNER_PLAIN;
}
