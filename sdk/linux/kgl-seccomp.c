/* kgl-seccomp.c: the system calls a build tool never needs, refused
 * inside the sandbox.
 *
 * Mounts decide what the program can see; they cannot stop it from asking
 * the kernel for things that are not files: the user's keyring, a new user
 * namespace, a kernel module, the terminal's input queue.  Most of these
 * already fail for a process without capabilities.  The filter is the
 * second lock, and the only one for the calls an unprivileged process may
 * make (keyctl, personality, TIOCSTI on a terminal it still holds,
 * AF_VSOCK to the hypervisor, userfaultfd and bpf where sysctls allow them).
 *
 * One table is the source of two outputs: the BPF program launch hands to
 * bwrap (--seccomp FD), and the text the plan shows in --dry-run.  They
 * cannot drift apart.  The BPF program is compiled from the table at build
 * time (kgl-seccomp-gen.c, kgl-seccomp-bpf.c) and embedded: compiling it with
 * libseccomp at every launch cost about a millisecond of CPU, a fifth of
 * what kgate adds to a bwrap launch (docs/performance.md).
 *
 * Every refusal is an errno (EPERM; ENOSYS for clone3 and io_uring, so
 * that their users fall back; EAFNOSUPPORT for a socket family), never a
 * kill: a tool that probes for a feature gets "not permitted" and carries
 * on without it.
 *
 * A call's twin (the same work under another name or number: the i386
 * time64 calls, an fd-based or attribute-taking variant, an old name)
 * is refused with it.  tests/sdk/test_kgl_seccomp_table.c holds the table
 * against every call libseccomp knows, with kgl-seccomp-allowed.txt the
 * record of the calls left open and why. */
#include "kgate/kgate-linux.h"
#include "kgl-seccomp-rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALL(g, c, why)                                 \
    {                                                  \
        g, c, EPERM, R_ALL, 0, 0, 0, {0}, 0, NULL, why \
    }
#define FLAG(g, c, e, a, m, v, when, why)           \
    {                                               \
        g, c, e, R_FLAG, a, m, v, {0}, 0, when, why \
    }

static const char W_KEYRING[] =
    "the kernel keyring is shared by all of the user's sessions: a session "
    "keyring can hold credentials (kerberos, ecryptfs, fscrypt) that the "
    "mounts do not hide";
static const char W_MOUNT[] =
    "no capabilities anyway (defence in depth): a program must not rearrange "
    "the mounts that are the policy";
static const char W_MODULE[] = "loading or removing kernel code";
static const char W_KERNEL[] =
    "kernel attack surface no build needs (and most of it wants privileges)";
static const char W_CLOCK[] = "the system clock is the host's";
static const char W_URING[] =
    "io_uring does in the kernel what system calls do, out of the filter's "
    "sight: IORING_OP_SOCKET makes the sockets the socket rules refuse; "
    "ENOSYS makes liburing and libuv users fall back to plain calls";

static const sc_rule rules[] = {
    ALL("keyring", "keyctl", W_KEYRING),
    ALL("keyring", "add_key", W_KEYRING),
    ALL("keyring", "request_key", W_KEYRING),
    FLAG("user namespaces", "unshare", EPERM, 0, K_CLONE_NEWUSER, K_CLONE_NEWUSER,
         "flags include CLONE_NEWUSER",
         "inside a new user namespace the program is root again and could "
         "remount what the policy covers (bwrap's --disable-userns too)"),
    FLAG("user namespaces", "clone", EPERM, 0, K_CLONE_NEWUSER, K_CLONE_NEWUSER,
         "flags include CLONE_NEWUSER", "as unshare; the flags of clone are its first argument"),
    ALL("user namespaces", "setns",
        "a user namespace the user owns (another of their processes made "
        "it) gives capabilities in it to whoever enters, as a new one would"),
    {"user namespaces",
     "clone3",
     ENOSYS,
     R_ALL,
     0,
     0,
     0,
     {0},
     0,
     NULL,
     "its flags live in memory, where a filter cannot read them; ENOSYS "
     "makes glibc (2.34+) and others fall back to clone, which is filtered"},
    ALL("mount API", "mount", W_MOUNT),
    ALL("mount API", "umount2", W_MOUNT),
    ALL("mount API", "pivot_root", W_MOUNT),
    ALL("mount API", "move_mount", W_MOUNT),
    ALL("mount API", "open_tree", W_MOUNT),
    ALL("mount API", "fsopen", W_MOUNT),
    ALL("mount API", "fsconfig", W_MOUNT),
    ALL("mount API", "fsmount", W_MOUNT),
    ALL("mount API", "fspick", W_MOUNT),
    ALL("mount API", "mount_setattr", W_MOUNT),
    ALL("mount API", "open_tree_attr", W_MOUNT),
    ALL("mount API", "umount", W_MOUNT),
    ALL("kernel modules", "init_module", W_MODULE),
    ALL("kernel modules", "finit_module", W_MODULE),
    ALL("kernel modules", "delete_module", W_MODULE),
    ALL("kernel modules", "kexec_load", W_MODULE),
    ALL("kernel modules", "kexec_file_load", W_MODULE),
    ALL("kernel interfaces", "bpf",
        "BPF programs and maps: a large attack surface, and a way to watch "
        "the host where unprivileged BPF is allowed"),
    ALL("kernel interfaces", "perf_event_open",
        "performance counters observe other processes and the kernel; a "
        "frequent source of kernel bugs (perf inside the sandbox will not "
        "work)"),
    ALL("kernel interfaces", "userfaultfd", "used to stretch race windows in kernel exploits"),
    ALL("kernel interfaces", "lookup_dcookie", W_KERNEL),
    ALL("kernel interfaces", "acct", W_KERNEL),
    ALL("kernel interfaces", "swapon", W_KERNEL),
    ALL("kernel interfaces", "swapoff", W_KERNEL),
    ALL("kernel interfaces", "reboot", W_KERNEL),
    ALL("kernel interfaces", "syslog",
        "the kernel log can hold addresses and other users' activity"),
    ALL("kernel interfaces", "quotactl", W_KERNEL),
    ALL("kernel interfaces", "quotactl_fd", W_KERNEL),
    {"io_uring", "io_uring_setup", ENOSYS, R_ALL, 0, 0, 0, {0}, 0, NULL, W_URING},
    {"io_uring", "io_uring_enter", ENOSYS, R_ALL, 0, 0, 0, {0}, 0, NULL, W_URING},
    {"io_uring", "io_uring_register", ENOSYS, R_ALL, 0, 0, 0, {0}, 0, NULL, W_URING},
    ALL("clock", "settimeofday", W_CLOCK),
    ALL("clock", "stime", W_CLOCK),
    ALL("clock", "clock_settime", W_CLOCK),
    ALL("clock", "clock_settime64", W_CLOCK),
    ALL("clock", "clock_adjtime", W_CLOCK),
    ALL("clock", "clock_adjtime64", W_CLOCK),
    ALL("clock", "adjtimex",
        "the system clock is the host's (reading it is refused too: ntptime "
        "inside will fail)"),
    ALL("legacy", "vm86", "32-bit virtual 8086 mode: legacy attack surface"),
    ALL("legacy", "vm86old", "32-bit virtual 8086 mode: legacy attack surface"),
    ALL("legacy", "uselib", "an a.out-era loader call nothing uses"),
    {"personality",
     "personality",
     EPERM,
     R_NOT_IN,
     0,
     0,
     0,
     {K_PER_LINUX, K_PER_LINUX32, K_PER_QUERY},
     3,
     "persona is not 0 (PER_LINUX), 0x8 (PER_LINUX32) or 0xffffffff (query)",
     "flags like ADDR_NO_RANDOMIZE or READ_IMPLIES_EXEC weaken the program's "
     "own defences for an exploit (gdb warns that it cannot disable ASLR and "
     "goes on)"},
    {"process limits",
     "prlimit64",
     EPERM,
     R_NOT_IN,
     0,
     0,
     0,
     {0},
     1,
     "pid is not 0 (the caller itself)",
     "another process's limits: where no PID namespace hides kgate (the "
     "Landlock box), a program of the same uid could lower kgate's open-file "
     "limit and blind its end-of-run kill (setrlimit and ulimit use pid 0 "
     "and work)"},
    FLAG("terminal", "ioctl", EPERM, 1, 0xffffffffu, K_TIOCSTI, "request is TIOCSTI",
         "pushes bytes into a terminal's input as if typed: with a terminal "
         "of the user's, a command that runs after kgate exits"),
    FLAG("terminal", "ioctl", EPERM, 1, 0xffffffffu, K_TIOCLINUX, "request is TIOCLINUX",
         "on a virtual console it can paste the selection (the same "
         "injection) and read the screen"),
    FLAG("terminal", "ioctl", EPERM, 1, 0xffffffffu, K_TIOCSETD, "request is TIOCSETD",
         "a new line discipline can autoload rarely used kernel code (n_hdlc, "
         "the source of several local root bugs); only slattach and pppd set "
         "one"),
    FLAG("vsock", "socket", EAFNOSUPPORT, 0, 0xffffffffu, K_AF_VSOCK, "domain is AF_VSOCK",
         "virtio sockets reach the hypervisor and other VMs, beside the "
         "network namespace"),
    FLAG("AF_ALG", "socket", EAFNOSUPPORT, 0, 0xffffffffu, K_AF_ALG, "domain is AF_ALG",
         "the kernel's crypto API as sockets: kernel code no build tool "
         "uses, and the way in of several local root bugs (Copy Fail)"),
};

/* open_tree_attr (Linux 6.15) is newer than libseccomp 2.5.4 (Debian 12):
 * its number, the same on these architectures (calls from 424 on share
 * one number everywhere). */
static const sc_number numbers[] = {
    {"open_tree_attr", K_ARCH_X86_64, 467},
    {"open_tree_attr", K_ARCH_X86, 467},
    {"open_tree_attr", K_ARCH_X32, 467 | K_X32_SYSCALL_BIT},
    {"open_tree_attr", K_ARCH_AARCH64, 467},
};

const sc_number *kgl_seccomp_numbers(size_t *n)
{
    *n = sizeof numbers / sizeof numbers[0];
    return numbers;
}

size_t kgl_seccomp_rule_count(void) { return sizeof rules / sizeof rules[0]; }

const char *kgl_seccomp_groups(void)
{
    return "keyring, user namespaces, mount API, kernel modules, kernel "
           "interfaces, io_uring, clock, legacy, personality, process limits, terminal "
           "(TIOCSTI, TIOCLINUX, TIOCSETD), vsock, AF_ALG";
}

char *kgl_seccomp_describe(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    fprintf(f, "# Loaded by bwrap (--seccomp FD, added at launch) just before the "
               "program starts.\n"
               "# Default: allow.  Architectures: the native one, plus i386 and "
               "x32 on x86-64 (so\n"
               "# 32-bit calls are filtered too); any other architecture is "
               "killed.\n"
               "# On i386, socketcall(SYS_SOCKET) carries its arguments in "
               "memory: every socket\n"
               "# made through it is refused (EAFNOSUPPORT).\n");
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const sc_rule *r = &rules[i];
        const char *e = r->err == ENOSYS         ? "ENOSYS"
                        : r->err == EAFNOSUPPORT ? "EAFNOSUPPORT"
                                                 : "EPERM";
        fprintf(f, "%s %s%s: %s  [%s] %s\n", r->call, r->when ? "when " : "",
                r->when ? r->when : "always", e, r->group, r->why);
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

const sc_rule *kgl_seccomp_rules(size_t *n)
{
    *n = sizeof rules / sizeof rules[0];
    return rules;
}

/* Network off for a box without a network namespace of its own (Landlock):
 * there is no private loopback to give the program, so every socket that
 * could reach the host's network is refused where it is made.  AF_UNIX
 * stays (pipes between the program's own processes, and what the
 * filesystem rules let it reach); TCP is refused by Landlock's network
 * rules as well where the kernel has them (ABI 4), a second lock for a
 * TCP socket obtained some other way. */
static const char W_NONET[] =
    "network off without a network namespace: the only network is the "
    "host's, so an Internet, netlink, packet or any other non-Unix socket "
    "would reach it";
static const sc_rule nonet_rules[] = {
    {"network off",
     "socket",
     EAFNOSUPPORT,
     R_NOT_IN,
     0,
     0,
     0,
     {K_AF_UNIX},
     1,
     "domain is not AF_UNIX",
     W_NONET},
    {"network off",
     "socketpair",
     EAFNOSUPPORT,
     R_NOT_IN,
     0,
     0,
     0,
     {K_AF_UNIX},
     1,
     "domain is not AF_UNIX",
     W_NONET},
    /* io_uring, which makes and connects sockets out of this filter's
     * sight, is refused by the first table in every box (ENOSYS). */
};

/* Network off with the supervisor (kgl-unotify-net.c) in the chain: IPv4
 * sockets too, for the program's own servers on loopback.  The
 * supervisor makes every bind, listen, connect and send of them, and
 * allows only loopback servers of the run and connects to them; netlink
 * (the host's interfaces and routes) and every other family stay
 * refused here. */
static const char W_NONET_LO[] =
    "network off without a network namespace: only Unix sockets, and IPv4 "
    "sockets whose every bind, listen, connect and send the supervisor "
    "makes (loopback servers of the run only)";
static const sc_rule nonet_lo_rules[] = {
    {"network off",
     "socket",
     EAFNOSUPPORT,
     R_NOT_IN,
     0,
     0,
     0,
     {K_AF_UNIX, K_AF_INET},
     2,
     "domain is not AF_UNIX or AF_INET",
     W_NONET_LO},
    {"network off",
     "socketpair",
     EAFNOSUPPORT,
     R_NOT_IN,
     0,
     0,
     0,
     {K_AF_UNIX},
     1,
     "domain is not AF_UNIX",
     W_NONET_LO},
};

const sc_rule *kgl_seccomp_nonet_lo_rules(size_t *n)
{
    *n = sizeof nonet_lo_rules / sizeof nonet_lo_rules[0];
    return nonet_lo_rules;
}

size_t kgl_seccomp_nonet_rule_count(void) { return sizeof nonet_rules / sizeof nonet_rules[0]; }

const sc_rule *kgl_seccomp_nonet_rules(size_t *n)
{
    *n = sizeof nonet_rules / sizeof nonet_rules[0];
    return nonet_rules;
}

char *kgl_seccomp_nonet_describe(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    fprintf(f, "# Network off without a network namespace: a second filter, "
               "loaded after the first.\n");
    for (size_t i = 0; i < sizeof nonet_rules / sizeof nonet_rules[0]; i++) {
        const sc_rule *r = &nonet_rules[i];
        fprintf(f, "%s %s%s: %s  [%s] %s\n", r->call, r->when ? "when " : "",
                r->when ? r->when : "always", r->err == EAFNOSUPPORT ? "EAFNOSUPPORT" : "EPERM",
                r->group, r->why);
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
