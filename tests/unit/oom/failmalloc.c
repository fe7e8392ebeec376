/* failmalloc.c: a test-only LD_PRELOAD library that makes memory run out.
 *
 * KG_FAILMALLOC_AFTER=N: the first N allocations succeed, every later one
 * fails with ENOMEM (memory that ran out stays out).  Without it, nothing
 * fails and KG_FAILMALLOC_COUNT=FILE receives the number of allocations
 * made, so a test knows how far to sweep.
 *
 * The library removes itself from the environment when it loads: the
 * helpers kgate starts (bwrap probes) and the program must not inherit a
 * malloc that fails.  glibc only (__libc_malloc and friends), which is
 * where the test runs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static long fail_after = -1; /* -1: never */
static long count;
static char count_file[512];

__attribute__((constructor)) static void fm_init(void)
{
    const char *a = getenv("KG_FAILMALLOC_AFTER");
    const char *c = getenv("KG_FAILMALLOC_COUNT");
    if (c) snprintf(count_file, sizeof count_file, "%s", c);
    long n = a ? strtol(a, NULL, 10) : -1;
    unsetenv("LD_PRELOAD");
    unsetenv("KG_FAILMALLOC_AFTER");
    unsetenv("KG_FAILMALLOC_COUNT");
    count = 0; /* the unsetenv calls above are not the program's */
    fail_after = n;
}

__attribute__((destructor)) static void fm_fini(void)
{
    if (!count_file[0]) return;
    int fd = open(count_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return;
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%ld\n", count);
    if (write(fd, buf, (size_t)len) < 0) { /* the test sees no count */
    }
    close(fd);
}

static int fail_now(void)
{
    count++;
    if (fail_after >= 0 && count > fail_after) {
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *malloc(size_t n) { return fail_now() ? NULL : __libc_malloc(n); }

void *calloc(size_t n, size_t size) { return fail_now() ? NULL : __libc_calloc(n, size); }

void *realloc(void *p, size_t n)
{
    /* realloc(p, 0) frees; that is not an allocation. */
    if (p && n == 0) return __libc_realloc(p, n);
    return fail_now() ? NULL : __libc_realloc(p, n);
}

void *reallocarray(void *p, size_t n, size_t size)
{
    if (size && n > (size_t)-1 / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n * size);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (fail_now()) return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    return fail_now() ? NULL : __libc_memalign(align, n);
}
