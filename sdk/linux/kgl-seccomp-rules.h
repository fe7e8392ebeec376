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
#define K_PER_LINUX 0x0u
#define K_PER_LINUX32 0x8u
#define K_PER_QUERY 0xffffffffu

typedef enum rule_kind {
    R_ALL,     /* every call */
    R_FLAG,    /* (arg & mask) == value */
    R_NOT_IN,  /* the low 32 bits of arg are none of vals[] */
} rule_kind;

typedef struct sc_rule {
    const char *group; /* what doctor names */
    const char *call;
    int err;
    rule_kind kind;
    unsigned arg;
    uint32_t mask, value; /* R_FLAG */
    uint32_t vals[3];     /* R_NOT_IN */
    size_t n_vals;
    const char *when; /* R_FLAG / R_NOT_IN, in words */
    const char *why;
} sc_rule;

/* The table, in order. */
const sc_rule *kgl_seccomp_rules(size_t *n);

/* Compiles the table with libseccomp and writes the BPF program to fd.
 * Build time only (kgl-seccomp-gen.c) and the test that checks the embedded
 * program is current: the plugins embed the result. */
int kgl_seccomp_export(int fd, kgate_err *err);

/* The second table: network off without a network namespace (a box that
 * has none, such as Landlock's).  Same shape, its own program. */
const sc_rule *kgl_seccomp_nonet_rules(size_t *n);
int kgl_seccomp_export_nonet(int fd, kgate_err *err);

#endif
