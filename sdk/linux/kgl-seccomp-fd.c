/* kgl-seccomp-fd.c: hands bwrap the seccomp program compiled at build
 * time (kgl-seccomp-gen.c) in a memfd, for --seccomp FD, or loads it in
 * the calling process for a box without bwrap. */
#include "kgate/kgate-linux.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kgl-seccomp-program.h"

static int write_program(int fd)
{
    const unsigned char *p = kgl_seccomp_program;
    size_t left = sizeof kgl_seccomp_program;
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? errno : EIO;
        p += n;
        left -= (size_t)n;
    }
    return 0;
}

int kgl_seccomp_pipe(int *write_end, kgate_err *err)
{
    int fds[2];
    *write_end = -1;
    if (pipe2(fds, O_CLOEXEC) < 0)
        return kgate_err_set(err, errno, "seccomp filter: cannot create a pipe: %s",
                             strerror(errno));
    /* The program is 2.5 KiB: it fits in the pipe without a reader. */
    int r = fcntl(fds[0], F_DUPFD_CLOEXEC, 10);
    int saved = errno;
    close(fds[0]);
    if (r < 0) {
        close(fds[1]);
        return kgate_err_set(err, saved, "seccomp filter: cannot move the pipe: %s",
                             strerror(saved));
    }
    *write_end = fds[1];
    return r;
}

int kgl_seccomp_send(int write_end, kgate_err *err)
{
    int e = write_program(write_end);
    return e ? kgate_err_set(err, e, "seccomp filter: cannot write the program: %s", strerror(e))
             : 0;
}

int kgl_seccomp_fd(kgate_err *err)
{
    int mfd = memfd_create("kgate-seccomp", MFD_CLOEXEC);
    if (mfd < 0)
        return kgate_err_set(err, errno, "seccomp filter: cannot create a memfd: %s",
                             strerror(errno));
    /* >= 10, clear of the stdio numbers the launch child fills. */
    int fd = fcntl(mfd, F_DUPFD_CLOEXEC, 10);
    int saved = errno;
    close(mfd);
    if (fd < 0)
        return kgate_err_set(err, saved, "seccomp filter: cannot move the memfd: %s",
                             strerror(saved));
    if ((saved = write_program(fd)) != 0) {
        close(fd);
        return kgate_err_set(err, saved, "seccomp filter: cannot write the program: %s",
                             strerror(saved));
    }
    if (lseek(fd, 0, SEEK_SET) != 0) {
        saved = errno;
        close(fd);
        return kgate_err_set(err, saved, "seccomp filter: cannot rewind: %s", strerror(saved));
    }
    return fd;
}

/* For a box that loads the filter itself in its launch child (Landlock
 * has no bwrap to hand it to): one system call, async-signal-safe, so it
 * can run in kgl_spawn's prepare.  The kernel wants no_new_privs set
 * first (or CAP_SYS_ADMIN). */
static int apply(const unsigned char *prog, size_t len)
{
    struct sock_fprog fp = {
        .len = (unsigned short)(len / sizeof(struct sock_filter)),
        .filter = (struct sock_filter *)(uintptr_t)prog,
    };
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) == 0 ? 0 : -1;
}

int kgl_seccomp_apply(void) { return apply(kgl_seccomp_program, sizeof kgl_seccomp_program); }

int kgl_seccomp_nonet_apply(void)
{
    return apply(kgl_seccomp_nonet_program, sizeof kgl_seccomp_nonet_program);
}

int kgl_seccomp_nonet_lo_apply(void)
{
    return apply(kgl_seccomp_nonet_lo_program, sizeof kgl_seccomp_nonet_lo_program);
}
