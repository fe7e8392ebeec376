/* kgl-ipc-bpf.c: the SysV IPC filter of a box without an IPC namespace,
 * compiled with libseccomp.  Build time only (kgl-seccomp-gen.c embeds the
 * result) and the table test.
 *
 * Two parts, merged into one program: the native entry, where the calls
 * go to the supervisor (or are refused, for the fallback program, or left
 * to the filesystem supervisor's filter, for the rest program), and
 * the 32-bit entries of an x86-64 kernel, where they are always refused:
 * i386 reaches SysV IPC through ipc(), whose arguments partly live in
 * memory, and the supervisor would have to decode two more numberings for
 * programs no build of this box runs. */
#include "kgl-ipc.h"
#include "kgl-seccomp-rules.h"

#include <errno.h>
#include <seccomp.h>
#include <string.h>

/* The native part: each call of the lists that this architecture has.
 * With action ALLOW (the rest program) the native SysV calls are left to
 * the filter that notifies them (the filesystem supervisor's). */
static int add_native(scmp_filter_ctx ctx, uint32_t action)
{
    size_t n;
    const char *const *calls = kgl_ipc_calls(&n);
    for (size_t i = 0; action != SCMP_ACT_ALLOW && i < n; i++) {
        int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, calls[i]);
        if (nr < 0) continue; /* not a call of this architecture */
        int rc = seccomp_rule_add_exact(ctx, action, nr, 0);
        if (rc < 0) return rc;
    }
    const char *const *refused = kgl_ipc_refused_calls(&n);
    for (size_t i = 0; i < n; i++) {
        int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, refused[i]);
        if (nr < 0) continue;
        int rc = seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
        if (rc < 0) return rc;
    }
    return 0;
}

/* The 32-bit part: every call of the three lists, refused.  libseccomp turns a
 * call i386 multiplexes into its ipc() form as well. */
static int add_compat(scmp_filter_ctx ctx)
{
    size_t n, nc, nref;
    const char *const *calls = kgl_ipc_calls(&n);
    const char *const *compat = kgl_ipc_compat_calls(&nc);
    const char *const *refused = kgl_ipc_refused_calls(&nref);
    for (size_t i = 0; i < n + nc + nref; i++) {
        const char *name = i < n ? calls[i] : i < n + nc ? compat[i - n] : refused[i - n - nc];
        int nr = seccomp_syscall_resolve_name(name);
        if (nr == __NR_SCMP_ERROR) return -EINVAL;
        int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
        if (rc < 0) return rc;
    }
    return 0;
}

static int export_ipc(uint32_t action, int fd, kgate_err *err)
{
    const char *step = "make the native filter";
    scmp_filter_ctx nat = seccomp_init(SCMP_ACT_ALLOW), comp = NULL;
    int rc = nat ? add_native(nat, action) : -ENOMEM;
    if (rc == 0 && seccomp_arch_native() == SCMP_ARCH_X86_64) {
        step = "make the 32-bit filter";
        comp = seccomp_init(SCMP_ACT_ALLOW);
        if (!comp) rc = -ENOMEM;
        if (rc == 0) rc = seccomp_arch_add(comp, SCMP_ARCH_X86);
        if (rc == 0) rc = seccomp_arch_add(comp, SCMP_ARCH_X32);
        if (rc == 0) rc = seccomp_arch_remove(comp, SCMP_ARCH_NATIVE);
        if (rc == 0) rc = add_compat(comp);
        step = "merge the filters";
        /* merge frees comp when it succeeds, and only then */
        if (rc == 0) rc = seccomp_merge(nat, comp);
        if (rc < 0 && comp) seccomp_release(comp);
        comp = NULL;
    }
    if (rc == 0) {
        step = "export the BPF program";
        rc = seccomp_export_bpf(nat, fd);
    }
    if (nat) seccomp_release(nat);
    if (rc < 0)
        return kgate_err_set(err, -rc, "SysV IPC filter: cannot %s: %s", step, strerror(-rc));
    return 0;
}

int kgl_ipc_export(int fd, kgate_err *err) { return export_ipc(SCMP_ACT_NOTIFY, fd, err); }

int kgl_ipc_export_none(int fd, kgate_err *err)
{
    return export_ipc(SCMP_ACT_ERRNO(EPERM), fd, err);
}

int kgl_ipc_export_rest(int fd, kgate_err *err) { return export_ipc(SCMP_ACT_ALLOW, fd, err); }
