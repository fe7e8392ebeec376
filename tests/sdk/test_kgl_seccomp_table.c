/* test_kgl_seccomp_table.c: the seccomp filter held against the kernel's
 * system call table, as libseccomp knows it (docs/escapes.md, section 5).
 *
 * - every call libseccomp knows, on every architecture the filter covers,
 *   is either refused by a rule of kgl-seccomp.c or left open, with its
 *   reason, in kgl-seccomp-allowed.txt: a newer libseccomp with new calls
 *   fails here until someone decides on them;
 * - every rule is enforced on every architecture that has its call: by
 *   name where libseccomp knows it, by number (kgl_seccomp_numbers)
 *   where it does not;
 * - the twins of refused calls are refused with them;
 * - the compiled program, run by a small classic BPF interpreter on
 *   made-up calls, refuses io_uring, AF_ALG and the twins through the
 *   native, i386 and x32 entries, and allows their ordinary neighbours:
 *   this machine may have no i386 entry to try them on for real. */
#include "testutil.h"

#include "kgate/kgate-linux.h"
#include "kgl-ipc.h"
#include "kgl-unotify-program.h"
#include "kgl-seccomp-rules.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

/* ---- the allowed list -------------------------------------------------- */

typedef struct allowed {
    char **names;
    size_t n;
} allowed;

/* Reads KGL_ALLOWED_LIST; fails the test on a name outside a group, a
 * group without a reason, or a name listed twice. */
static allowed read_allowed(void)
{
    FILE *f = fopen(KGL_ALLOWED_LIST, "r");
    ck_assert_msg(f, "%s: %s", KGL_ALLOWED_LIST, strerror(errno));
    allowed a = {NULL, 0};
    char line[512];
    int in_group = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        if (line[0] == '@') {
            ck_assert_msg(strlen(line) > 4, "a group without a reason: %s", line);
            in_group = 1;
            continue;
        }
        for (char *save = NULL, *w = strtok_r(line, " \t\n", &save); w;
             w = strtok_r(NULL, " \t\n", &save)) {
            ck_assert_msg(in_group, "%s is listed before any reason", w);
            for (size_t i = 0; i < a.n; i++)
                ck_assert_msg(strcmp(a.names[i], w) != 0, "%s is listed twice", w);
            a.names = realloc(a.names, (a.n + 1) * sizeof *a.names);
            ck_assert(a.names);
            a.names[a.n] = strdup(w);
            ck_assert(a.names[a.n++]);
        }
    }
    fclose(f);
    ck_assert_uint_gt(a.n, 100);
    return a;
}

static void free_allowed(allowed *a)
{
    for (size_t i = 0; i < a->n; i++) free(a->names[i]);
    free(a->names);
}

static int is_allowed(const allowed *a, const char *name)
{
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->names[i], name) == 0) return 1;
    return 0;
}

static int is_refused(const char *name)
{
    size_t n;
    const sc_rule *r = kgl_seccomp_rules(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].call, name) == 0) return 1;
    return 0;
}

/* The architectures the filter covers (kgl-seccomp-bpf.c). */
static size_t filter_arches(uint32_t arches[3])
{
    arches[0] = seccomp_arch_native();
    if (arches[0] != SCMP_ARCH_X86_64) return 1;
    arches[1] = SCMP_ARCH_X86;
    arches[2] = SCMP_ARCH_X32;
    return 3;
}

START_TEST(every_known_call_is_classified)
{
    allowed a = read_allowed();
    uint32_t arches[3];
    size_t narch = filter_arches(arches), known = 0;
    char missing[4096] = "";
    for (size_t k = 0; k < narch; k++) {
        int base = arches[k] == SCMP_ARCH_X32 ? (int)K_X32_SYSCALL_BIT : 0;
        /* Numbers run to about 470 today; 1024 leaves room to grow. */
        for (int nr = 0; nr < 1024; nr++) {
            char *name = seccomp_syscall_resolve_num_arch(arches[k], base + nr);
            if (!name) continue;
            known++;
            if (!is_refused(name) && !is_allowed(&a, name) && !strstr(missing, name) &&
                strlen(missing) + strlen(name) + 2 < sizeof missing) {
                strcat(missing, " ");
                strcat(missing, name);
            }
            free(name);
        }
    }
    ck_assert_uint_gt(known, 300);
    ck_assert_msg(missing[0] == 0,
                  "system calls neither refused (sdk/linux/kgl-seccomp.c) nor "
                  "left open with a reason (sdk/linux/kgl-seccomp-allowed.txt):%s",
                  missing);
    /* One decision per call. */
    for (size_t i = 0; i < a.n; i++)
        ck_assert_msg(!is_refused(a.names[i]), "%s is both refused and listed as allowed",
                      a.names[i]);
    free_allowed(&a);
}
END_TEST

static int has_number(const char *call, uint32_t arch)
{
    size_t n;
    const sc_number *num = kgl_seccomp_numbers(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(num[i].call, call) == 0 && num[i].arch == arch) return 1;
    return 0;
}

static void check_rules_reach_every_arch(const sc_rule *r, size_t n)
{
    uint32_t arches[3];
    size_t narch = filter_arches(arches);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < narch; k++) {
            int nr = seccomp_syscall_resolve_name_arch(arches[k], r[i].call);
            /* nr >= 0: known there; below -1: libseccomp knows the call
             * and that this architecture has none (vm86 on x86-64).
             * -1: unknown, so the kernel may have it: by number. */
            ck_assert_msg(nr != __NR_SCMP_ERROR || has_number(r[i].call, arches[k]),
                          "%s: libseccomp does not know it on arch 0x%x and "
                          "kgl_seccomp_numbers() has no number for it",
                          r[i].call, arches[k]);
        }
}

START_TEST(every_rule_reaches_every_arch)
{
    size_t n;
    const sc_rule *r = kgl_seccomp_rules(&n);
    check_rules_reach_every_arch(r, n);
    r = kgl_seccomp_nonet_rules(&n);
    check_rules_reach_every_arch(r, n);
    r = kgl_seccomp_nonet_lo_rules(&n);
    check_rules_reach_every_arch(r, n);
}
END_TEST

/* A call and the calls that do the same work under another name. */
static const char *const twins[][4] = {
    {"clock_settime", "clock_settime64", "settimeofday", "stime"},
    {"clock_adjtime", "clock_adjtime64", "adjtimex", NULL},
    {"open_tree", "open_tree_attr", NULL, NULL},
    {"quotactl", "quotactl_fd", NULL, NULL},
    {"umount2", "umount", NULL, NULL},
    {"init_module", "finit_module", NULL, NULL},
    {"kexec_load", "kexec_file_load", NULL, NULL},
    {"vm86", "vm86old", NULL, NULL},
    {"io_uring_setup", "io_uring_enter", "io_uring_register", NULL},
    {"keyctl", "add_key", "request_key", NULL},
};

START_TEST(twins_are_refused_together)
{
    for (size_t i = 0; i < sizeof twins / sizeof twins[0]; i++)
        for (size_t k = 1; k < 4 && twins[i][k]; k++)
            ck_assert_msg(is_refused(twins[i][0]) == is_refused(twins[i][k]),
                          "%s and %s do the same work: refuse both or neither", twins[i][0],
                          twins[i][k]);
}
END_TEST

/* ---- the program, run --------------------------------------------------- */

typedef struct program {
    struct sock_filter *ins;
    size_t n;
} program;

static program compile(int (*export)(int, kgate_err *))
{
    kgate_err err = {0};
    int fd = memfd_create("table", MFD_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_msg(export(fd, &err) == 0, "%s", err.msg);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    program p = {malloc((size_t)st.st_size), (size_t)st.st_size / sizeof(struct sock_filter)};
    ck_assert(p.ins);
    ck_assert_int_eq(pread(fd, p.ins, (size_t)st.st_size, 0), st.st_size);
    close(fd);
    return p;
}

/* Classic BPF as the kernel runs a seccomp filter: the subset libseccomp
 * and the by-number prefix emit.  Fails the test on anything else, on a
 * jump out of the program, or on running off its end. */
static uint32_t run(const program *p, const struct seccomp_data *d)
{
    uint32_t A = 0, X = 0, M[BPF_MEMWORDS] = {0};
    const unsigned char *data = (const unsigned char *)d;
    for (size_t pc = 0; pc < p->n; pc++) {
        const struct sock_filter *f = &p->ins[pc];
        uint32_t src = BPF_SRC(f->code) == BPF_X ? X : f->k;
        switch (f->code) {
        case BPF_LD | BPF_W | BPF_ABS:
            ck_assert_uint_le(f->k + 4, sizeof *d);
            memcpy(&A, data + f->k, 4);
            continue;
        case BPF_LD | BPF_IMM: A = f->k; continue;
        case BPF_LDX | BPF_IMM: X = f->k; continue;
        case BPF_LD | BPF_MEM: A = M[f->k % BPF_MEMWORDS]; continue;
        case BPF_LDX | BPF_MEM: X = M[f->k % BPF_MEMWORDS]; continue;
        case BPF_ST: M[f->k % BPF_MEMWORDS] = A; continue;
        case BPF_STX: M[f->k % BPF_MEMWORDS] = X; continue;
        case BPF_MISC | BPF_TAX: X = A; continue;
        case BPF_MISC | BPF_TXA: A = X; continue;
        case BPF_ALU | BPF_AND | BPF_K:
        case BPF_ALU | BPF_AND | BPF_X: A &= src; continue;
        case BPF_ALU | BPF_OR | BPF_K:
        case BPF_ALU | BPF_OR | BPF_X: A |= src; continue;
        case BPF_RET | BPF_K: return f->k;
        case BPF_RET | BPF_A: return A;
        case BPF_JMP | BPF_JA: pc += f->k; continue;
        default: break;
        }
        int taken;
        switch (f->code & ~BPF_X) {
        case BPF_JMP | BPF_JEQ: taken = A == src; break;
        case BPF_JMP | BPF_JGT: taken = A > src; break;
        case BPF_JMP | BPF_JGE: taken = A >= src; break;
        case BPF_JMP | BPF_JSET: taken = (A & src) != 0; break;
        default: ck_abort_msg("instruction 0x%04x at %zu", f->code, pc);
        }
        pc += taken ? f->jt : f->jf;
    }
    ck_abort_msg("the program ran off its end");
    return 0;
}

#define AUDIT_X86_64 K_ARCH_X86_64
#define AUDIT_I386 K_ARCH_X86
#define X32 K_X32_SYSCALL_BIT
#define ERR(e) (SECCOMP_RET_ERRNO | (e))
#define OK SECCOMP_RET_ALLOW

typedef struct call {
    const char *what;
    uint32_t arch;
    int nr;
    uint64_t a0;
    uint32_t want;
} call;

static const call x86_calls[] = {
    {"io_uring_setup", AUDIT_X86_64, 425, 0, ERR(ENOSYS)},
    {"io_uring_enter", AUDIT_X86_64, 426, 0, ERR(ENOSYS)},
    {"io_uring_register", AUDIT_X86_64, 427, 0, ERR(ENOSYS)},
    {"socket(AF_ALG)", AUDIT_X86_64, 41, K_AF_ALG, ERR(EAFNOSUPPORT)},
    {"socket(AF_INET)", AUDIT_X86_64, 41, 2, OK},
    {"quotactl_fd", AUDIT_X86_64, 443, 0, ERR(EPERM)},
    {"open_tree_attr (by number)", AUDIT_X86_64, 467, 0, ERR(EPERM)},
    {"open_tree", AUDIT_X86_64, 428, 0, ERR(EPERM)},
    {"setns", AUDIT_X86_64, 308, 0, ERR(EPERM)},
    {"getpid", AUDIT_X86_64, 39, 0, OK},
    {"x32 io_uring_setup", AUDIT_X86_64, X32 | 425, 0, ERR(ENOSYS)},
    {"x32 socket(AF_ALG)", AUDIT_X86_64, X32 | 41, K_AF_ALG, ERR(EAFNOSUPPORT)},
    {"x32 quotactl_fd", AUDIT_X86_64, X32 | 443, 0, ERR(EPERM)},
    {"x32 open_tree_attr (by number)", AUDIT_X86_64, X32 | 467, 0, ERR(EPERM)},
    {"x32 getpid", AUDIT_X86_64, X32 | 39, 0, OK},
    {"i386 io_uring_setup", AUDIT_I386, 425, 0, ERR(ENOSYS)},
    {"i386 io_uring_enter", AUDIT_I386, 426, 0, ERR(ENOSYS)},
    {"i386 io_uring_register", AUDIT_I386, 427, 0, ERR(ENOSYS)},
    {"i386 socket(AF_ALG)", AUDIT_I386, 359, K_AF_ALG, ERR(EAFNOSUPPORT)},
    {"i386 socket(AF_UNIX)", AUDIT_I386, 359, 1, OK},
    /* socketcall(SYS_SOCKET, args): the arguments are in memory; every
     * socket made this way is refused (docs/escapes.md). */
    {"i386 socketcall(SYS_SOCKET)", AUDIT_I386, 102, 1, ERR(EAFNOSUPPORT)},
    {"i386 socketcall(SYS_CONNECT)", AUDIT_I386, 102, 3, OK},
    {"i386 clock_settime", AUDIT_I386, 264, 0, ERR(EPERM)},
    {"i386 clock_settime64", AUDIT_I386, 404, 0, ERR(EPERM)},
    {"i386 clock_adjtime64", AUDIT_I386, 405, 0, ERR(EPERM)},
    {"i386 clock_gettime64", AUDIT_I386, 403, 0, OK},
    {"i386 stime", AUDIT_I386, 25, 0, ERR(EPERM)},
    {"i386 umount", AUDIT_I386, 22, 0, ERR(EPERM)},
    {"i386 quotactl_fd", AUDIT_I386, 443, 0, ERR(EPERM)},
    {"i386 open_tree_attr (by number)", AUDIT_I386, 467, 0, ERR(EPERM)},
    {"i386 setns", AUDIT_I386, 346, 0, ERR(EPERM)},
    {"i386 getpid", AUDIT_I386, 20, 0, OK},
};

static void expect(const program *p, const call *c)
{
    struct seccomp_data d = {.nr = c->nr, .arch = c->arch};
    d.args[0] = c->a0;
    uint32_t got = run(p, &d);
    ck_assert_msg(got == c->want, "%s: the program returns 0x%08x, want 0x%08x", c->what, got,
                  c->want);
}

START_TEST(the_program_refuses_through_every_entry)
{
    if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
        fprintf(stderr, "# the i386/x32 cases are for x86-64 builds\n");
        return;
    }
    program p = compile(kgl_seccomp_export);
    for (size_t i = 0; i < sizeof x86_calls / sizeof x86_calls[0]; i++) expect(&p, &x86_calls[i]);
    /* An architecture the filter does not cover is killed. */
    struct seccomp_data d = {.nr = 0, .arch = K_ARCH_AARCH64};
    uint32_t got = run(&p, &d);
    ck_assert(got == SECCOMP_RET_KILL_THREAD || got == SECCOMP_RET_KILL_PROCESS);
    free(p.ins);

    /* Network off without a namespace: AF_UNIX only, AF_ALG refused too. */
    p = compile(kgl_seccomp_export_nonet);
    const call nonet[] = {
        {"nonet socket(AF_ALG)", AUDIT_X86_64, 41, K_AF_ALG, ERR(EAFNOSUPPORT)},
        {"nonet socket(AF_INET)", AUDIT_X86_64, 41, 2, ERR(EAFNOSUPPORT)},
        {"nonet socket(AF_UNIX)", AUDIT_X86_64, 41, 1, OK},
        {"nonet i386 socket(AF_INET)", AUDIT_I386, 359, 2, ERR(EAFNOSUPPORT)},
    };
    for (size_t i = 0; i < sizeof nonet / sizeof nonet[0]; i++) expect(&p, &nonet[i]);
    free(p.ins);

    /* With the network supervisor (issue 41): IPv4 too, netlink and IPv6
     * still refused (the supervisor makes every bind and connect). */
    p = compile(kgl_seccomp_export_nonet_lo);
    const call nonet_lo[] = {
        {"nonet_lo socket(AF_INET)", AUDIT_X86_64, 41, 2, OK},
        {"nonet_lo socket(AF_UNIX)", AUDIT_X86_64, 41, 1, OK},
        {"nonet_lo socket(AF_INET6)", AUDIT_X86_64, 41, 10, ERR(EAFNOSUPPORT)},
        {"nonet_lo socket(AF_NETLINK)", AUDIT_X86_64, 41, 16, ERR(EAFNOSUPPORT)},
        {"nonet_lo socket(AF_ALG)", AUDIT_X86_64, 41, K_AF_ALG, ERR(EAFNOSUPPORT)},
        {"nonet_lo socketpair(AF_INET)", AUDIT_X86_64, 53, 2, ERR(EAFNOSUPPORT)},
    };
    for (size_t i = 0; i < sizeof nonet_lo / sizeof nonet_lo[0]; i++) expect(&p, &nonet_lo[i]);
    free(p.ins);
}
END_TEST

/* The SysV IPC filter of the box without an IPC namespace (kgl-ipc-bpf.c):
 * the native calls go to the supervisor, every 32-bit entry (i386's ipc()
 * multiplexer and direct calls, x32) is refused, other calls pass; the
 * fallback program refuses the native calls too. */
#define NOTIFY SECCOMP_RET_USER_NOTIF
static const call ipc_calls_x86[] = {
    {"shmget", AUDIT_X86_64, 29, 0, NOTIFY},
    {"shmat", AUDIT_X86_64, 30, 0, NOTIFY},
    {"shmctl", AUDIT_X86_64, 31, 0, NOTIFY},
    {"shmdt", AUDIT_X86_64, 67, 0, NOTIFY},
    {"semget", AUDIT_X86_64, 64, 0, NOTIFY},
    {"semop", AUDIT_X86_64, 65, 0, NOTIFY},
    {"semctl", AUDIT_X86_64, 66, 0, NOTIFY},
    {"msgget", AUDIT_X86_64, 68, 0, NOTIFY},
    {"msgsnd", AUDIT_X86_64, 69, 0, NOTIFY},
    {"msgrcv", AUDIT_X86_64, 70, 0, NOTIFY},
    {"msgctl", AUDIT_X86_64, 71, 0, NOTIFY},
    {"semtimedop", AUDIT_X86_64, 220, 0, NOTIFY},
    {"getpid", AUDIT_X86_64, 39, 0, OK},
    {"mq_open", AUDIT_X86_64, 240, 0, ERR(EPERM)},
    {"mq_unlink", AUDIT_X86_64, 241, 0, ERR(EPERM)},
    {"mq_timedsend", AUDIT_X86_64, 242, 0, OK},
    {"x32 mq_open", AUDIT_X86_64, X32 | 240, 0, ERR(EPERM)},
    {"x32 shmget", AUDIT_X86_64, X32 | 29, 0, ERR(EPERM)},
    {"x32 msgrcv", AUDIT_X86_64, X32 | 70, 0, ERR(EPERM)},
    {"x32 semtimedop", AUDIT_X86_64, X32 | 220, 0, ERR(EPERM)},
    {"x32 getpid", AUDIT_X86_64, X32 | 39, 0, OK},
    {"i386 ipc(SHMGET)", AUDIT_I386, 117, 23, ERR(EPERM)},
    {"i386 ipc(MSGRCV)", AUDIT_I386, 117, 12, ERR(EPERM)},
    {"i386 ipc(SEMTIMEDOP)", AUDIT_I386, 117, 4, ERR(EPERM)},
    {"i386 shmget", AUDIT_I386, 395, 0, ERR(EPERM)},
    {"i386 shmat", AUDIT_I386, 397, 0, ERR(EPERM)},
    {"i386 msgctl", AUDIT_I386, 402, 0, ERR(EPERM)},
    {"i386 semtimedop_time64", AUDIT_I386, 420, 0, ERR(EPERM)},
    {"i386 getpid", AUDIT_I386, 20, 0, OK},
    {"i386 mq_open", AUDIT_I386, 277, 0, ERR(EPERM)},
};

START_TEST(the_ipc_programs_notify_or_refuse)
{
    if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
        fprintf(stderr, "# the i386/x32 cases are for x86-64 builds\n");
        return;
    }
    program p = compile(kgl_ipc_export);
    for (size_t i = 0; i < sizeof ipc_calls_x86 / sizeof ipc_calls_x86[0]; i++)
        expect(&p, &ipc_calls_x86[i]);
    free(p.ins);
    p = compile(kgl_ipc_export_none);
    for (size_t i = 0; i < sizeof ipc_calls_x86 / sizeof ipc_calls_x86[0]; i++) {
        call c = ipc_calls_x86[i];
        if (c.want == NOTIFY) c.want = ERR(EPERM);
        expect(&p, &c);
    }
    free(p.ins);
    /* The rest program (with the filesystem supervisor, whose filter
     * notifies the native calls): the native calls pass it, the rest is
     * refused as by the others. */
    p = compile(kgl_ipc_export_rest);
    for (size_t i = 0; i < sizeof ipc_calls_x86 / sizeof ipc_calls_x86[0]; i++) {
        call c = ipc_calls_x86[i];
        if (c.want == NOTIFY) c.want = OK;
        expect(&p, &c);
    }
    free(p.ins);
}
END_TEST

/* The filesystem supervisor's six programs (kgl-unotify-gen.c, as
 * embedded) notify every native SysV IPC call: the process's one listener
 * is theirs, and the supervisor passes the calls on (kgl-ipc.c). */
START_TEST(the_unotify_programs_notify_sysv_ipc)
{
    if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
        fprintf(stderr, "# the cases are for x86-64 builds\n");
        return;
    }
    const struct {
        const unsigned char *b;
        size_t len;
    } progs[] = {
        {kgl_unotify_writes_program, sizeof kgl_unotify_writes_program},
        {kgl_unotify_reads_program, sizeof kgl_unotify_reads_program},
        {kgl_unotify_writes_net_program, sizeof kgl_unotify_writes_net_program},
        {kgl_unotify_reads_net_program, sizeof kgl_unotify_reads_net_program},
        {kgl_unotify_writes_unix_program, sizeof kgl_unotify_writes_unix_program},
        {kgl_unotify_reads_unix_program, sizeof kgl_unotify_reads_unix_program},
    };
    for (size_t k = 0; k < sizeof progs / sizeof progs[0]; k++) {
        program p = {malloc(progs[k].len), progs[k].len / sizeof(struct sock_filter)};
        ck_assert(p.ins);
        memcpy(p.ins, progs[k].b, progs[k].len);
        for (size_t i = 0; i < sizeof ipc_calls_x86 / sizeof ipc_calls_x86[0]; i++)
            if (ipc_calls_x86[i].want == NOTIFY) expect(&p, &ipc_calls_x86[i]);
        free(p.ins);
    }
}
END_TEST

/* Network open's programs (issue 43): the calls that can name a Unix path
 * stop for the supervisor (sendto only with an address), no socket family
 * is refused (the Internet is open), and the 32-bit network calls are
 * refused: no native-only program would see them name a path. */
START_TEST(the_unix_programs_stop_only_what_names_a_path)
{
    if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
        fprintf(stderr, "# the cases are for x86-64 builds\n");
        return;
    }
    const struct {
        const unsigned char *b;
        size_t len;
    } progs[] = {
        {kgl_unotify_writes_unix_program, sizeof kgl_unotify_writes_unix_program},
        {kgl_unotify_reads_unix_program, sizeof kgl_unotify_reads_unix_program},
    };
    const struct {
        const char *what;
        uint32_t arch;
        int nr;
        uint64_t a0, a4;
        uint32_t want;
    } cases[] = {
        {"connect", AUDIT_X86_64, 42, 3, 0, NOTIFY},
        {"sendmsg", AUDIT_X86_64, 46, 3, 0, NOTIFY},
        {"sendmmsg", AUDIT_X86_64, 307, 3, 0, NOTIFY},
        {"sendto with an address", AUDIT_X86_64, 44, 3, 0x1000, NOTIFY},
        {"sendto to the peer", AUDIT_X86_64, 44, 3, 0, OK},
        {"socket(AF_INET6)", AUDIT_X86_64, 41, 10, 0, OK},
        {"socket(AF_INET)", AUDIT_X86_64, 41, 2, 0, OK},
        {"bind", AUDIT_X86_64, 49, 3, 0, OK},
        {"recvfrom with a place", AUDIT_X86_64, 45, 3, 0x1000, OK},
        {"i386 connect", AUDIT_I386, 362, 3, 0, ERR(EACCES)},
        {"i386 sendmsg", AUDIT_I386, 370, 3, 0, ERR(EACCES)},
        {"i386 socketcall", AUDIT_I386, 102, 3, 0, ERR(EAFNOSUPPORT)},
    };
    for (size_t k = 0; k < sizeof progs / sizeof progs[0]; k++) {
        program p = {malloc(progs[k].len), progs[k].len / sizeof(struct sock_filter)};
        ck_assert(p.ins);
        memcpy(p.ins, progs[k].b, progs[k].len);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            struct seccomp_data d = {.nr = cases[i].nr, .arch = cases[i].arch};
            d.args[0] = cases[i].a0;
            d.args[4] = cases[i].a4;
            uint32_t got = run(&p, &d);
            ck_assert_msg(got == cases[i].want, "program %zu: %s returns 0x%08x, want 0x%08x", k,
                          cases[i].what, got, cases[i].want);
        }
        free(p.ins);
    }
}
END_TEST

/* The allowed list's SysV IPC calls (left open by the first table: the
 * bubblewrap box has an IPC namespace) are each covered by the IPC filter
 * of the box that has none, and the filter covers nothing else (POSIX
 * queues' mq_open and mq_unlink, refused there, are left open here too). */
static int in_list(const char *const *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], name) == 0) return 1;
    return 0;
}

START_TEST(the_ipc_filter_covers_the_allowed_sysv_calls)
{
    allowed a = read_allowed();
    size_t n, nc, nr;
    const char *const *calls = kgl_ipc_calls(&n);
    const char *const *compat = kgl_ipc_compat_calls(&nc);
    const char *const *refused = kgl_ipc_refused_calls(&nr);
    for (size_t i = 0; i < a.n; i++) {
        const char *w = a.names[i];
        if (strncmp(w, "shm", 3) && strncmp(w, "msg", 3) && strncmp(w, "sem", 3) &&
            strcmp(w, "ipc"))
            continue;
        ck_assert_msg(in_list(calls, n, w) || in_list(compat, nc, w),
                      "%s is SysV IPC left open by the first table, but the IPC "
                      "filter (sdk/linux/kgl-ipc-table.c) does not cover it",
                      w);
    }
    for (size_t i = 0; i < n + nc + nr; i++) {
        const char *w = i < n ? calls[i] : i < n + nc ? compat[i - n] : refused[i - n - nc];
        ck_assert_msg(is_allowed(&a, w) && !is_refused(w),
                      "%s: the IPC filter covers a call the first table does "
                      "not leave open with a reason",
                      w);
    }
    free_allowed(&a);
}
END_TEST

/* doctor's group list names every group of the table. */
START_TEST(doctor_names_every_group)
{
    size_t n;
    const sc_rule *r = kgl_seccomp_rules(&n);
    const char *groups = kgl_seccomp_groups();
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(strstr(groups, r[i].group), "doctor's list lacks %s", r[i].group);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kgl_seccomp_table");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, every_known_call_is_classified);
    tcase_add_test(tc, every_rule_reaches_every_arch);
    tcase_add_test(tc, twins_are_refused_together);
    tcase_add_test(tc, the_program_refuses_through_every_entry);
    tcase_add_test(tc, doctor_names_every_group);
    tcase_add_test(tc, the_ipc_programs_notify_or_refuse);
    tcase_add_test(tc, the_unotify_programs_notify_sysv_ipc);
    tcase_add_test(tc, the_unix_programs_stop_only_what_names_a_path);
    tcase_add_test(tc, the_ipc_filter_covers_the_allowed_sysv_calls);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
