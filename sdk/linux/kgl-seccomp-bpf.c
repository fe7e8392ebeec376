/* kgl-seccomp-bpf.c: the rule table (kgl-seccomp.c) compiled to a BPF
 * program with libseccomp.  Runs at build time, in kgl-seccomp-gen.c, whose
 * output the plugins embed; and in the test that checks the embedded
 * program is what the table compiles to now. */
#include "kgl-seccomp-rules.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The complement of vals[] in [0, 2^32) as prefix blocks (mask, value):
 * one comparison per rule is all libseccomp takes on one argument, and a
 * prefix block is exactly one masked-equal comparison.  Calls add(); stops
 * at its first failure. */
static int add_complement(scmp_filter_ctx ctx, int nr, const sc_rule *r)
{
    uint32_t sorted[3];
    size_t n = r->n_vals;
    memcpy(sorted, r->vals, n * sizeof *sorted);
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && sorted[k - 1] > sorted[k]; k--) {
            uint32_t t = sorted[k];
            sorted[k] = sorted[k - 1];
            sorted[k - 1] = t;
        }
    uint64_t lo = 0;
    for (size_t i = 0; i <= n; i++) {
        uint64_t hi = i < n ? (uint64_t)sorted[i] : (uint64_t)1 << 32;
        /* [lo, hi) is denied */
        while (lo < hi) {
            unsigned bits = 0;
            while (bits < 32 && (lo & (((uint64_t)1 << (bits + 1)) - 1)) == 0 &&
                   lo + ((uint64_t)1 << (bits + 1)) <= hi)
                bits++;
            uint32_t mask = (uint32_t) ~((((uint64_t)1) << bits) - 1);
            int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)r->err), nr, 1,
                                      SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, mask, (uint32_t)lo));
            if (rc < 0) return rc;
            lo += (uint64_t)1 << bits;
        }
        if (i < n) lo = (uint64_t)sorted[i] + 1;
    }
    return 0;
}

static int add_rule(scmp_filter_ctx ctx, const sc_rule *r)
{
    int nr = seccomp_syscall_resolve_name(r->call);
    /* A call this libseccomp does not know by name is refused by number
     * (the prefix below); the table test holds every rule to one or the
     * other on every architecture. */
    if (nr == __NR_SCMP_ERROR) return 0;
    switch (r->kind) {
    case R_ALL: return seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)r->err), nr, 0);
    case R_FLAG:
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)r->err), nr, 1,
                                SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, r->mask, r->value));
    case R_NOT_IN: return add_complement(ctx, nr, r);
    }
    return -EINVAL;
}

/* ---- the prefix: calls refused by number ------------------------------ */

#define MAX_NUMBERS 12 /* entries one program refuses */
#define MAX_PREFIX (5 * MAX_NUMBERS + 1) /* jump offsets stay below 255 */

typedef struct prefix {
    struct sock_filter ins[MAX_PREFIX];
    size_t n;
} prefix;

static int put(prefix *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
    if (p->n == MAX_PREFIX) return -E2BIG;
    p->ins[p->n++] = (struct sock_filter){code, jt, jf, k};
    return 0;
}

/* The kernel's arch value for a libseccomp token: x32 calls arrive as
 * x86-64 ones with the x32 bit in the number. */
static uint32_t audit_arch(uint32_t token)
{
    return token == SCMP_ARCH_X32 ? SCMP_ARCH_X86_64 : token;
}

/* The entries of kgl_seccomp_numbers() this program needs: a call of
 * these rules, on an architecture of the filter, that libseccomp does not
 * resolve there.  Their errno is the rule's.  Fails (never drops one) on
 * a rule that is not R_ALL or more entries than the prefix holds. */
static int needed_numbers(scmp_filter_ctx ctx, const sc_rule *rules, size_t n,
                          const sc_number **out, int *errs, size_t *k)
{
    size_t nn;
    const sc_number *num = kgl_seccomp_numbers(&nn);
    *k = 0;
    for (size_t i = 0; i < nn; i++) {
        if (seccomp_arch_exist(ctx, num[i].arch) != 0) continue;
        if (seccomp_syscall_resolve_name_arch(num[i].arch, num[i].call) != __NR_SCMP_ERROR)
            continue;
        for (size_t r = 0; r < n; r++) {
            if (strcmp(rules[r].call, num[i].call) != 0) continue;
            if (rules[r].kind != R_ALL) return -EINVAL;
            if (*k == MAX_NUMBERS) return -E2BIG;
            out[*k] = &num[i];
            errs[(*k)++] = rules[r].err;
            break;
        }
    }
    return 0;
}

/* Classic BPF only jumps forward, so the prefix is: for each entry, a
 * check of the arch and the number that jumps to its own return; a jump
 * over the returns; the returns; then libseccomp's program, which loads
 * what it needs itself.  Prepending moves none of its relative jumps. */
static int build_prefix(prefix *p, const sc_number **e, const int *errs, size_t k)
{
    int rc = 0;
    for (size_t i = 0; i < k && rc == 0; i++) {
        /* 4 instructions each, then the ja: entry i's return is at
         * 4k + 1 + i; its jeq on the number is at 4i + 3. */
        size_t ret_at = 4 * k + 1 + i, jeq_at = 4 * i + 3;
        if ((rc = put(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, arch))) <
                0 ||
            (rc = put(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 2, audit_arch(e[i]->arch))) < 0 ||
            (rc = put(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, nr))) < 0 ||
            (rc = put(p, BPF_JMP | BPF_JEQ | BPF_K, (uint8_t)(ret_at - jeq_at - 1), 0, e[i]->nr)) <
                0)
            return rc;
    }
    if (k == 0) return 0;
    if ((rc = put(p, BPF_JMP | BPF_JA, 0, 0, (uint32_t)k)) < 0) return rc;
    for (size_t i = 0; i < k; i++)
        if ((rc = put(p, BPF_RET | BPF_K, 0, 0,
                      SECCOMP_RET_ERRNO | ((uint32_t)errs[i] & SECCOMP_RET_DATA))) < 0)
            return rc;
    return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
    const unsigned char *b = buf;
    while (len > 0) {
        ssize_t w = write(fd, b, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? -errno : -EIO;
        b += w;
        len -= (size_t)w;
    }
    return 0;
}

/* libseccomp's program, behind the prefix, to fd. */
static int write_program(scmp_filter_ctx ctx, const prefix *p, int fd)
{
    int mfd = memfd_create("kgl-seccomp-export", MFD_CLOEXEC);
    if (mfd < 0) return -errno;
    int rc = seccomp_export_bpf(ctx, mfd);
    struct stat st;
    unsigned char *buf = NULL;
    if (rc == 0 && fstat(mfd, &st) < 0) rc = -errno;
    if (rc == 0 && !(buf = malloc((size_t)st.st_size + 1))) rc = -ENOMEM;
    if (rc == 0 && pread(mfd, buf, (size_t)st.st_size, 0) != (ssize_t)st.st_size) rc = -EIO;
    if (rc == 0) rc = write_all(fd, p->ins, p->n * sizeof p->ins[0]);
    if (rc == 0) rc = write_all(fd, buf, (size_t)st.st_size);
    free(buf);
    close(mfd);
    return rc;
}

static int export_table(const sc_rule *rules, size_t n, int fd, kgate_err *err)
{
    const char *step = "init";
    int rc = 0;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) return kgate_err_set(err, ENOMEM, "seccomp filter: out of memory");
    /* A 32-bit call from a 64-bit process enters the kernel through
     * another table with other numbers: filter those tables too.  Other
     * architectures the CPU cannot run are killed (the default). */
    if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
        step = "add the i386 architecture";
        if ((rc = seccomp_arch_add(ctx, SCMP_ARCH_X86)) < 0) goto fail;
        step = "add the x32 architecture";
        if ((rc = seccomp_arch_add(ctx, SCMP_ARCH_X32)) < 0) goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        step = rules[i].call;
        if ((rc = add_rule(ctx, &rules[i])) < 0) goto fail;
    }
    const sc_number *by_number[MAX_NUMBERS];
    int errs[MAX_NUMBERS];
    size_t k = 0;
    prefix p = {.n = 0};
    step = "refuse calls by number";
    if ((rc = needed_numbers(ctx, rules, n, by_number, errs, &k)) < 0 ||
        (rc = build_prefix(&p, by_number, errs, k)) < 0)
        goto fail;
    step = "export the BPF program";
    if ((rc = write_program(ctx, &p, fd)) < 0) goto fail;
    seccomp_release(ctx);
    return 0;
fail:
    seccomp_release(ctx);
    return kgate_err_set(err, -rc, "seccomp filter: cannot %s%s: %s",
                         strchr(step, ' ') ? "" : "add the rule for ", step, strerror(-rc));
}

int kgl_seccomp_export(int fd, kgate_err *err)
{
    size_t n;
    const sc_rule *rules = kgl_seccomp_rules(&n);
    return export_table(rules, n, fd, err);
}

int kgl_seccomp_export_nonet(int fd, kgate_err *err)
{
    size_t n;
    const sc_rule *rules = kgl_seccomp_nonet_rules(&n);
    return export_table(rules, n, fd, err);
}

int kgl_seccomp_export_nonet_lo(int fd, kgate_err *err)
{
    size_t n;
    const sc_rule *rules = kgl_seccomp_nonet_lo_rules(&n);
    return export_table(rules, n, fd, err);
}
