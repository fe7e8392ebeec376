/* os-fd-linux.c: descriptors and file metadata on Linux (see os.h). */
#include "os.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int kg_os_pipe(int p[2], bool nonblock)
{
    return pipe2(p, O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
}

void kg_os_pipe_grow(int fd, int size)
{
    /* Failing (a lower /proc/sys/fs/pipe-max-size) only costs speed. */
    int cur = fcntl(fd, F_GETPIPE_SZ);
    if (cur > 0 && cur < size) (void)fcntl(fd, F_SETPIPE_SZ, size);
}

int kg_os_open_dir_handle(const char *path) { return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC); }

int kg_os_openat_dir_handle(int dfd, const char *name)
{
    return openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int kg_os_rename_noreplace(int dfd, const char *from, const char *to)
{
    return renameat2(dfd, from, dfd, to, RENAME_NOREPLACE);
}

int kg_os_cloexec_range(int lowfd)
{
    /* glibc declares close_range from 2.34; older headers walk the list. */
#ifdef CLOSE_RANGE_CLOEXEC
    return close_range((unsigned)lowfd, ~0U, CLOSE_RANGE_CLOEXEC) == 0 ? 0 : -1;
#else
    (void)lowfd;
    return -1;
#endif
}

const char *kg_os_fd_dir(void) { return "/proc/self/fd"; }

struct timespec kg_os_stat_mtime(const struct stat *st) { return st->st_mtim; }

struct timespec kg_os_stat_ctime(const struct stat *st) { return st->st_ctim; }

/* /proc/self/uid_map gives "inside outside count" lines, outside being
 * the parent namespace's uids; the initial namespace's one line is
 * "0 0 4294967295".  A nested namespace is judged against its parent
 * only: when the parent itself left the real root out, a map holding the
 * parent's uid 0 is taken as mapping root, which only refuses more. */
int kg_os_owner_kind(uid_t uid)
{
    /* The kernel's default when /proc cannot say. */
    unsigned long overflow = 65534;
    FILE *f = fopen("/proc/sys/kernel/overflowuid", "re");
    if (f) {
        if (fscanf(f, "%lu", &overflow) != 1) overflow = 65534;
        fclose(f);
    }
    if ((unsigned long)uid != overflow) return KG_OWNER_PLAIN;

    f = fopen("/proc/self/uid_map", "re");
    if (!f) return KG_OWNER_UNKNOWN;
    unsigned long in, out, count;
    size_t lines = 0;
    bool initial = false, root_mapped = false, broken = false;
    char line[128];
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lu %lu %lu", &in, &out, &count) != 3) {
            broken = true;
            break;
        }
        lines++;
        if (in == 0 && out == 0 && count == 4294967295UL) initial = true;
        if (out == 0 && count > 0) root_mapped = true;
    }
    fclose(f);
    if (broken || lines == 0) return KG_OWNER_UNKNOWN;
    if (initial && lines == 1) return KG_OWNER_PLAIN;
    return root_mapped ? KG_OWNER_UNKNOWN : KG_OWNER_UNMAPPED;
}
