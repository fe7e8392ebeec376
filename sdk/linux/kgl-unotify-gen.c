/* kgl-unotify-gen.c: build-time tool.  Compiles the notifying filter of
 * the supervisor (kgl-unotify.c) with libseccomp and writes it as a C
 * header, as kgl-seccomp-gen.c does for the rule tables.
 *
 * Two programs: "writes" notifies the calls that make, remove, rename or
 * link a name and the opens whose flags (an integer the filter can read)
 * ask to write, create or truncate; read-only opens never stop and stay as
 * cheap as without kgate.  "reads" also notifies every open, for a box in
 * which a managed directory has no read rights of its own (a deny_read
 * entry in it), so that what the supervisor made there can be read back.
 *
 * Native architecture only.  A 32-bit call (i386, x32 on x86-64) is not
 * notified and meets the program's own Landlock rules alone: today's box,
 * which refuses what the supervisor would refuse and more.  openat2 hides
 * its flags in memory: ENOSYS, so that its users fall back to openat.
 * chroot is refused so that the program's "/" stays the supervisor's.
 *
 * The "_net" variants add the names-on-the-network calls (kgate-unotify.h,
 * kgl-unotify-net.c): connect, bind, listen, sendmsg and sendmmsg always
 * notify (their address is memory; listen's is the socket's, which the
 * supervisor reads on its copy), sendto only with an address (a NULL address goes to
 * the peer connect set, which the supervisor chose), recvfrom only with a
 * place for the sender's address (the supervisor writes the resolver's
 * there for its relayed answers).  Sockets of any family but Unix, IPv4
 * and netlink are refused, IPv6 too (the filtering resolver answers no
 * AAAA); TCP fast open, which carries an address past connect, is refused.
 * A 32-bit call cannot be notified by this native-only program, so on
 * x86-64 the i386 and x32 network calls are refused outright.
 *
 * Every program also notifies the native SysV IPC calls (kgl-ipc-table.c):
 * a task's filter chain holds one listener, this one, so the supervisor
 * passes them on to kgate's IPC supervisor (kgl-ipc.c); the launch child
 * then loads the IPC "rest" program, which refuses POSIX queues and the
 * 32-bit entries. */
#include "kgl-gen.h"
#include "kgl-ipc.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* O_TMPFILE's own bit (glibc's KGL_O_TMPFILE_BIT also has O_DIRECTORY's). */
#define KGL_O_TMPFILE_BIT 020000000

static const char *const always[] = {
    "creat",    "mkdir",     "mkdirat", "unlink", "unlinkat", "rmdir",     "rename",
    "renameat", "renameat2", "link",    "linkat", "symlink",  "symlinkat",
};

/* The open flags that make an open one the supervisor must perform. */
static const unsigned write_bits[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, KGL_O_TMPFILE_BIT};

static int add_open(scmp_filter_ctx ctx, const char *name, unsigned arg, int reads)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return 0; /* not on this architecture */
    if (reads) return seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
    for (size_t i = 0; i < sizeof write_bits / sizeof write_bits[0]; i++) {
        int rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 1,
                                  SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, write_bits[i], write_bits[i]));
        if (rc < 0) return rc;
    }
    return 0;
}

static int build(scmp_filter_ctx ctx, int reads)
{
    int rc;
    /* Another architecture's calls meet Landlock alone (see above). */
    if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW)) < 0) return rc;
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++) {
        int nr = seccomp_syscall_resolve_name(always[i]);
        if (nr == __NR_SCMP_ERROR) continue;
        if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0)) < 0) return rc;
    }
    if ((rc = add_open(ctx, "open", 1, reads)) < 0 || (rc = add_open(ctx, "openat", 2, reads)) < 0)
        return rc;
    /* With a managed directory that has no execute right of its own,
     * exec too: the supervisor gives a program made there an inode with
     * a rule of its own before the kernel runs it (kgl-unotify.c). */
    static const char *const execs[] = {"execve", "execveat"};
    for (size_t i = 0; reads && i < sizeof execs / sizeof execs[0]; i++) {
        int nr = seccomp_syscall_resolve_name(execs[i]);
        if (nr == __NR_SCMP_ERROR) continue;
        if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0)) < 0) return rc;
    }
    size_t n;
    const char *const *ipc = kgl_ipc_calls(&n);
    for (size_t i = 0; i < n; i++) {
        int nr = seccomp_syscall_resolve_name(ipc[i]);
        if (nr == __NR_SCMP_ERROR) continue; /* not on this architecture */
        if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0)) < 0) return rc;
    }
    int nr = seccomp_syscall_resolve_name("openat2");
    if (nr == __NR_SCMP_ERROR) nr = 437; /* the same on every architecture */
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0)) < 0) return rc;
    return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(chroot), 0);
}

#define K_MSG_FASTOPEN 0x20000000
#define K_TCP_FASTOPEN_CONNECT 30

/* libseccomp takes one comparison per argument in a rule: "not one of"
 * is every other value, one rule each, and one for all above them.  The
 * kernel reads the family as an int. */
static int refuse_families(scmp_filter_ctx ctx, int inet)
{
    int rc = 0;
    for (unsigned af = 0; af <= AF_MAX && rc == 0; af++) {
        if (af == AF_UNIX || (inet && (af == AF_INET || af == AF_NETLINK))) continue;
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                              SCMP_CMP64(0, SCMP_CMP_EQ, (uint32_t)af, 0));
    }
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                              SCMP_CMP64(0, SCMP_CMP_GT, (uint32_t)AF_MAX, 0));
    return rc;
}

static int add_net_native(scmp_filter_ctx ctx)
{
    int rc;
    /* socket: only these families; anything else (AF_INET6 too)
     * EAFNOSUPPORT, which clients take as "use IPv4". */
    if ((rc = refuse_families(ctx, 1)) < 0) return rc;
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0)) < 0 ||
        (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(bind), 0)) < 0 ||
        (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(listen), 0)) < 0 ||
        (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendmsg), 0)) < 0 ||
        (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendmmsg), 0)) < 0)
        return rc;
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EOPNOTSUPP), SCMP_SYS(sendto), 1,
                               SCMP_A3(SCMP_CMP_MASKED_EQ, K_MSG_FASTOPEN, K_MSG_FASTOPEN))) < 0 ||
        (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendto), 2,
                               SCMP_A3(SCMP_CMP_MASKED_EQ, K_MSG_FASTOPEN, 0),
                               SCMP_A4(SCMP_CMP_NE, 0, 0))) < 0 ||
        (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(recvfrom), 1,
                               SCMP_A4(SCMP_CMP_NE, 0, 0))) < 0)
        return rc;
    return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOPROTOOPT), SCMP_SYS(setsockopt), 2,
                            SCMP_A1(SCMP_CMP_EQ, IPPROTO_TCP, 0),
                            SCMP_A2(SCMP_CMP_EQ, K_TCP_FASTOPEN_CONNECT, 0));
}

/* Network open (bit 2): only the calls that can name a Unix socket by path
 * stop (kgl-unotify-unix.c decides that path); no family is refused and
 * the supervisor makes every other address as asked.  sendto without an
 * address goes to the peer connect chose. */
static int add_unix_native(scmp_filter_ctx ctx)
{
    int rc;
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0)) < 0 ||
        (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendmsg), 0)) < 0 ||
        (rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendmmsg), 0)) < 0)
        return rc;
    return seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendto), 1, SCMP_A4(SCMP_CMP_NE, 0, 0));
}

/* The 32-bit calls of an x86-64 process: no supervisor sees them, so
 * every call that sends to an address is refused and only Unix sockets
 * are made. */
static int add_net_compat(scmp_filter_ctx *ctx)
{
#if defined(__x86_64__)
    scmp_filter_ctx o = seccomp_init(SCMP_ACT_ALLOW);
    int rc = o ? 0 : -ENOMEM;
    if (rc == 0) rc = seccomp_attr_set(o, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
    if (rc == 0) rc = seccomp_arch_remove(o, SCMP_ARCH_NATIVE);
    if (rc == 0) rc = seccomp_arch_add(o, SCMP_ARCH_X86);
    if (rc == 0) rc = seccomp_arch_add(o, SCMP_ARCH_X32);
    static const char *const calls[] = {"connect", "sendto",     "sendmsg", "sendmmsg",
                                        "bind",    "socketcall", "listen"};
    for (size_t i = 0; rc == 0 && i < sizeof calls / sizeof calls[0]; i++) {
        int nr = seccomp_syscall_resolve_name(calls[i]);
        /* socketcall also makes sockets: the family refusal's errno, as
         * the network-off filter answers it (this filter comes last and
         * its answer wins). */
        int e = strcmp(calls[i], "socketcall") == 0 ? EAFNOSUPPORT : EACCES;
        if (nr != __NR_SCMP_ERROR) rc = seccomp_rule_add(o, SCMP_ACT_ERRNO(e), nr, 0);
    }
    if (rc == 0) rc = refuse_families(o, 0);
    if (rc == 0)
        rc = seccomp_merge(*ctx, o);
    else if (o)
        seccomp_release(o);
    return rc;
#else
    (void)ctx;
    return 0;
#endif
}

/* Program which as BPF to fd: bit 0 reads (else writes), bit 1 the
 * network calls too, bit 2 only those that can name a Unix path. */
static int export(int fd, int which, char *msg, size_t msglen)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    int rc = ctx ? build(ctx, which & 1) : -ENOMEM;
    if (rc == 0 && (which & 2)) rc = add_net_native(ctx);
    if (rc == 0 && (which & 4)) rc = add_unix_native(ctx);
    /* Network open too: a 32-bit connect could name any path unseen. */
    if (rc == 0 && (which & 6)) rc = add_net_compat(&ctx);
    if (rc == 0) rc = seccomp_export_bpf(ctx, fd);
    if (ctx) seccomp_release(ctx);
    if (rc == 0) return 0;
    snprintf(msg, msglen, "%s", strerror(-rc));
    return -1;
}

int main(int argc, char **argv)
{
    static const kgl_gen_prog progs[] = {
        {"kgl_unotify_writes_program", 0},      {"kgl_unotify_reads_program", 1},
        {"kgl_unotify_writes_net_program", 2},  {"kgl_unotify_reads_net_program", 3},
        {"kgl_unotify_writes_unix_program", 4}, {"kgl_unotify_reads_unix_program", 5},
    };
    return kgl_gen_main(argc, argv, "unotify-gen",
                        "/* Generated by kgl-unotify-gen. Do not edit. */\n", export, progs,
                        sizeof progs / sizeof progs[0]);
}
