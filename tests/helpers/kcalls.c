/* kcalls: makes the raw system calls the seccomp filter refuses for the
 * kernel surface of docs/escapes.md (io_uring, AF_ALG, the twins of
 * refused calls), through every entry a 64-bit x86 process has: its own
 * table, i386 through int 0x80, and x32 where the kernel has it.
 *
 * Each call is made with arguments the kernel itself turns down with an
 * errno other than the filter's (a bad descriptor, an invalid clock or
 * socket type), so nothing on the host changes even as root, and the
 * answer tells whose refusal it was.
 *
 * Usage: kgate-test-kcalls outside|inside
 * Prints kg-ran first, then one line per call: NAME RESULT (filter: WANT).
 *   outside  exit 0 when every result differs from the filter's errno
 *            (the control: without the filter the call is not refused so)
 *   inside   exit 0 when every result is the filter's errno, after a last
 *            line "kcalls: N calls, each refused as the filter says"
 * Entries this machine lacks (i386 emulation off, x32 off) are named on a
 * "# no ..." line and left out of both. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define AF_ALG_ 38
#define AF_VSOCK_ 40
#define BAD_TYPE 999 /* socket(): EINVAL before the family is looked up */
#define CLOCK_MONO 1 /* clock_settime: EINVAL, it cannot be set */
#define BAD_CLOCK 100 /* clock_adjtime: EINVAL, no such clock */

typedef struct probe {
    const char *name;
    long ret;
    int err;
    int want; /* the filter's errno */
    int outside_ok; /* the control must succeed (not only differ) */
} probe;

static probe probes[64];
static size_t nprobes;

static void record(const char *name, long ret, int err, int want, int outside_ok)
{
    if (nprobes < sizeof probes / sizeof probes[0])
        probes[nprobes++] = (probe){name, ret, err, want, outside_ok};
}

static void native(const char *name, int want, long nr, long a, long b, long c, long d, long e)
{
    errno = 0;
    long r = syscall(nr, a, b, c, d, e);
    int err = r < 0 ? errno : 0;
    if (r >= 0 && (nr == SYS_socket || nr == SYS_io_uring_setup)) close((int)r);
    record(name, r, err, want, 0);
}

#if defined(__x86_64__)
/* A 32-bit call from this 64-bit process: the i386 table, with its
 * numbers; pointers must be below 4 GiB (MAP_32BIT memory). */
static long int80(long nr, long a, long b, long c, long d, long e)
{
    long ret;
    __asm__ volatile("int $0x80"
                     : "=a"(ret)
                     : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
                     : "memory", "r8", "r9", "r10", "r11");
    return (long)(int)ret;
}

static void call32(const char *name, int want, int outside_ok, long nr, long a, long b, long c,
                   long d, long e)
{
    long r = int80(nr, a, b, c, d, e);
    if (r >= 0 && outside_ok) close((int)r);
    record(name, r, r < 0 ? (int)-r : 0, want, outside_ok);
}

/* Whether an entry works here, tried in a child: int 0x80 kills the
 * process where i386 emulation is off, and an outer seccomp filter that
 * does not list an architecture (a container's, the nouserns stand-in's)
 * kills a call made through it.  Returns 0 or the errno of the call, or
 * -1 when the child died. */
static int try_entry(int x32)
{
    pid_t pid = fork();
    if (pid == 0) {
        long r = x32 ? syscall(0x40000000L | SYS_getpid) : int80(20 /* getpid */, 0, 0, 0, 0, 0);
        _exit(r > 0 ? 0 : x32 ? errno & 0x7f : (int)-r & 0x7f);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static int have_i386(void) { return try_entry(0) == 0; }

static void i386_calls(void)
{
    if (!have_i386()) {
        printf("# no i386 entry (int 0x80) on this kernel\n");
        return;
    }
    uint32_t *low =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (low == MAP_FAILED) {
        printf("# no memory below 4 GiB: %s\n", strerror(errno));
        return;
    }
    memset(low, 0, 4096);
    long p = (long)(uintptr_t)low;
    uint32_t *alg = low, *unix_ = low + 4; /* socketcall's argument blocks */
    alg[0] = AF_ALG_, alg[1] = BAD_TYPE, alg[2] = 0;
    unix_[0] = 1 /* AF_UNIX */, unix_[1] = 1 /* SOCK_STREAM */, unix_[2] = 0;
    char *path = (char *)(low + 16);
    strcpy(path, "/kgate-no-such-dir");
    long zeros = p + 1024; /* a zeroed timex / timespec */

    call32("i386:io_uring_setup", ENOSYS, 0, 425, 1, 0, 0, 0, 0);
    call32("i386:io_uring_enter", ENOSYS, 0, 426, -1, 0, 0, 0, 0);
    call32("i386:io_uring_register", ENOSYS, 0, 427, -1, 0, 0, 0, 0);
    call32("i386:socket(AF_ALG)", EAFNOSUPPORT, 0, 359, AF_ALG_, BAD_TYPE, 0, 0, 0);
    call32("i386:socketcall(socket, AF_ALG)", EAFNOSUPPORT, 0, 102, 1, (long)(uintptr_t)alg, 0, 0,
           0);
    /* Documented (docs/escapes.md): every socket made through socketcall
     * is refused, AF_UNIX too. */
    call32("i386:socketcall(socket, AF_UNIX)", EAFNOSUPPORT, 1, 102, 1, (long)(uintptr_t)unix_, 0,
           0, 0);
    call32("i386:clock_settime", EPERM, 0, 264, CLOCK_MONO, zeros, 0, 0, 0);
    call32("i386:clock_settime64", EPERM, 0, 404, CLOCK_MONO, zeros, 0, 0, 0);
    call32("i386:clock_adjtime64", EPERM, 0, 405, BAD_CLOCK, zeros, 0, 0, 0);
    call32("i386:stime", EPERM, 0, 25, 0, 0, 0, 0, 0);
    call32("i386:umount", EPERM, 0, 22, (long)(uintptr_t)path, 0, 0, 0, 0);
    call32("i386:quotactl_fd", EPERM, 0, 443, -1, 0, 0, 0, 0);
    call32("i386:open_tree_attr", EPERM, 0, 467, -1, 0, 0xffffffffL, 0, 0);
}

/* x32: the 64-bit table's entry with bit 30 set in the number; most
 * distribution kernels leave it off (ENOSYS for every call). */
static void x32_calls(void)
{
    const long bit = 0x40000000L;
    int e = try_entry(1);
    if (e != 0) {
        printf("# no x32 entry here (%s)\n", e < 0 ? "killed" : strerrorname_np(e));
        return;
    }
    native("x32:io_uring_setup", ENOSYS, bit | 425, 1, 0, 0, 0, 0);
    native("x32:socket(AF_ALG)", EAFNOSUPPORT, bit | SYS_socket, AF_ALG_, BAD_TYPE, 0, 0, 0);
    native("x32:quotactl_fd", EPERM, bit | 443, -1, 0, 0, 0, 0);
    native("x32:open_tree_attr", EPERM, bit | 467, -1, 0, 0xffffffffL, 0, 0);
}
#endif

static void native_calls(void)
{
    native("io_uring_setup", ENOSYS, 425, 1, 0, 0, 0, 0);
    native("io_uring_enter", ENOSYS, 426, -1, 0, 0, 0, 0);
    native("io_uring_register", ENOSYS, 427, -1, 0, 0, 0, 0);
    native("socket(AF_ALG)", EAFNOSUPPORT, SYS_socket, AF_ALG_, BAD_TYPE, 0, 0, 0);
    native("socket(AF_VSOCK)", EAFNOSUPPORT, SYS_socket, AF_VSOCK_, BAD_TYPE, 0, 0, 0);
    native("quotactl_fd", EPERM, 443, -1, 0, 0, 0, 0);
    native("open_tree_attr", EPERM, 467, -1, 0, 0xffffffffL, 0, 0);
    native("clock_settime", EPERM, SYS_clock_settime, CLOCK_MONO, 0, 0, 0, 0);
    native("setns", EPERM, SYS_setns, -1, 0, 0, 0, 0);
}

static const char *result(const probe *p) { return p->ret >= 0 ? "ok" : strerrorname_np(p->err); }

int main(int argc, char **argv)
{
    int inside = argc == 2 && strcmp(argv[1], "inside") == 0;
    if (argc != 2 || (!inside && strcmp(argv[1], "outside") != 0)) {
        fprintf(stderr, "usage: %s outside|inside\n", argv[0]);
        return 2;
    }
    printf("kg-ran\n");
    fflush(stdout);
    native_calls();
#if defined(__x86_64__)
    i386_calls();
    x32_calls();
#endif
    size_t bad = 0;
    for (size_t i = 0; i < nprobes; i++) {
        const probe *p = &probes[i];
        int refused = p->ret < 0 && p->err == p->want;
        int good = inside ? refused : p->outside_ok ? p->ret >= 0 : !refused;
        bad += !good;
        printf("%s %s (filter: %s)%s\n", p->name, result(p), strerrorname_np(p->want),
               good ? "" : "  <- wrong");
    }
    if (bad == 0 && inside) printf("kcalls: %zu calls, each refused as the filter says\n", nprobes);
    if (bad == 0 && !inside)
        printf("kcalls: %zu calls, none refused so without the filter\n", nprobes);
    return bad == 0 ? 0 : 1;
}
