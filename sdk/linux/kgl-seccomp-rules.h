/* kgl-seccomp-rules.h: the seccomp rule table's shape, shared by the
 * text the plan shows (kgl-seccomp.c) and the BPF compiler that runs at
 * build time (kgl-seccomp-bpf.c, kgl-seccomp-gen.c).  Internal to the
 * SDK's Linux support library (sdk/linux), not installed. */
#ifndef KGL_SECCOMP_RULES_H
#define KGL_SECCOMP_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "kgate/kgate-plugin.h"

/* Kernel constants, spelled out so the table does not depend on which
 * headers this libc ships (they are ABI and never change). */
#define K_TIOCSTI 0x5412u
#define K_TIOCLINUX 0x541Cu
#define K_TIOCSETD 0x5423u
#define K_CLONE_NEWUSER 0x10000000u
#define K_AF_VSOCK 40u
#define K_AF_UNIX 1u
#define K_AF_INET 2u
#define K_AF_ALG 38u
#define K_PER_LINUX 0x0u
#define K_PER_LINUX32 0x8u
#define K_PER_QUERY 0xffffffffu

typedef enum rule_kind {
    R_ALL, /* every call */
    R_FLAG, /* (arg & mask) == value */
    R_NOT_IN, /* the low 32 bits of arg are none of vals[] */
} rule_kind;

typedef struct sc_rule {
    const char *group; /* what doctor names */
    const char *call;
    int err;
    rule_kind kind;
    unsigned arg;
    uint32_t mask, value; /* R_FLAG */
    uint32_t vals[3]; /* R_NOT_IN */
    size_t n_vals;
    const char *when; /* R_FLAG / R_NOT_IN, in words */
    const char *why;
} sc_rule;

/* The table, in order. */
const sc_rule *kgl_seccomp_rules(size_t *n);

/* libseccomp's architecture tokens (its SCMP_ARCH_*, which are the
 * kernel's AUDIT_ARCH values but for x32), spelled out for the same
 * reason as the constants above. */
#define K_ARCH_X86_64 0xC000003Eu
#define K_ARCH_X86 0x40000003u
#define K_ARCH_X32 0x4000003Eu
#define K_ARCH_AARCH64 0xC00000B7u
#define K_X32_SYSCALL_BIT 0x40000000u

/* A call of the tables that the libseccomp this is built with may not
 * know by name yet, by its number on one architecture.  Where libseccomp
 * does not resolve the name, kgl-seccomp-bpf.c refuses the number in a
 * short prefix of the program, with the errno of the call's rule (R_ALL
 * rules only).  Without this a call newer than libseccomp would be left
 * open while the text shows it refused. */
typedef struct sc_number {
    const char *call;
    uint32_t arch; /* K_ARCH_* */
    uint32_t nr; /* as the kernel sees it (x32: with K_X32_SYSCALL_BIT) */
} sc_number;

const sc_number *kgl_seccomp_numbers(size_t *n);

/* Compiles the table with libseccomp and writes the BPF program to fd.
 * Build time only (kgl-seccomp-gen.c) and the test that checks the embedded
 * program is current: the plugins embed the result. */
int kgl_seccomp_export(int fd, kgate_err *err);

/* The second table: network off without a network namespace (a box that
 * has none, such as Landlock's).  Same shape, its own program. */
const sc_rule *kgl_seccomp_nonet_rules(size_t *n);
int kgl_seccomp_export_nonet(int fd, kgate_err *err);
const sc_rule *kgl_seccomp_nonet_lo_rules(size_t *n);
int kgl_seccomp_export_nonet_lo(int fd, kgate_err *err);

#endif
