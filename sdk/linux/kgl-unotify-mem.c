/* kgl-unotify-mem.c: what both halves of the supervisor (kgl-unotify.c,
 * the filesystem calls; kgl-unotify-net.c, the network calls) need to read
 * a waiting call's memory: the /proc paths of the caller, the one copy of
 * its arguments, its umask, and the check that the notification still
 * waits, so that what was read is that call's.  Its own file so that neither half calls
 * the other for it (tests/unit/cycles.py). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kgl-unotify-int.h"

/* "/proc/<pid>/<tail>[<n>]" into out (64 bytes are enough). */
void kgl_un_proc_path(char *out, pid_t pid, const char *tail, int n)
{
    char num[2][16];
    long v[2] = {pid, n};
    for (int k = 0; k < 2; k++) {
        char tmp[16];
        int i = 0;
        unsigned long x = v[k] < 0 ? 0 : (unsigned long)v[k];
        do tmp[i++] = (char)('0' + x % 10);
        while ((x /= 10) && i < 15);
        for (int j = 0; j < i; j++) num[k][j] = tmp[i - 1 - j];
        num[k][i] = '\0';
    }
    size_t o = 0;
    const char *parts[5] = {"/proc/", num[0], "/", tail, n >= 0 ? num[1] : ""};
    for (int k = 0; k < 5; k++)
        for (const char *s = parts[k]; *s && o < 63; s++) out[o++] = *s;
    out[o] = '\0';
}

int kgl_un_valid(const sv *s)
{
    uint64_t id = s->id;
    return ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

int kgl_un_read_mem(const sv *s, uint64_t addr, void *buf, size_t len)
{
    if (!addr && len) return EFAULT;
    struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
    ssize_t n = process_vm_readv(s->pid, &l, 1, &r, 1, 0);
    if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
        char mp[64];
        kgl_un_proc_path(mp, s->pid, "mem", -1);
        int fd = open(mp, O_RDONLY | O_CLOEXEC);
        n = fd >= 0 ? pread(fd, buf, len, (off_t)addr) : -1;
        if (fd >= 0) close(fd);
    }
    if (n < 0 || (size_t)n != len) return EFAULT;
    /* What was read belongs to the call still waiting. */
    return kgl_un_valid(s) ? 0 : ESRCH;
}

int kgl_un_caller_umask(const sv *s)
{
    char pp[64], buf[2048];
    kgl_un_proc_path(pp, s->pid, "status", -1);
    int fd = open(pp, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    return n > 0 ? kgl_un_parse_umask(buf, (size_t)n) : -1;
}
