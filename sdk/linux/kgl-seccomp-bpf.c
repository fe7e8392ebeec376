/* kgl-seccomp-bpf.c: the rule table (kgl-seccomp.c) compiled to a BPF
 * program with libseccomp.  Runs at build time, in kgl-seccomp-gen.c, whose
 * output the plugins embed; and in the test that checks the embedded
 * program is what the table compiles to now. */
#include "kgl-seccomp-rules.h"

#include <errno.h>
#include <seccomp.h>
#include <stdint.h>
#include <string.h>

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
            uint32_t mask = (uint32_t)~((((uint64_t)1) << bits) - 1);
            int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)r->err), nr, 1,
                                      SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, mask,
                                               (uint32_t)lo));
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
    /* A call this libseccomp does not know cannot be made by name on any
     * architecture it knows either; nothing to refuse. */
    if (nr == __NR_SCMP_ERROR) return 0;
    switch (r->kind) {
    case R_ALL:
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)r->err), nr, 0);
    case R_FLAG:
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)r->err), nr, 1,
                                SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, r->mask,
                                         r->value));
    case R_NOT_IN:
        return add_complement(ctx, nr, r);
    }
    return -EINVAL;
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
    step = "export the BPF program";
    if ((rc = seccomp_export_bpf(ctx, fd)) < 0) goto fail;
    seccomp_release(ctx);
    return 0;
fail:
    seccomp_release(ctx);
    return kgate_err_set(err, -rc, "seccomp filter: cannot %s%s: %s",
                         strchr(step, ' ') ? "" : "add the rule for ", step,
                         strerror(-rc));
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
