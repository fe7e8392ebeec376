/* kgl-gen.h: what the two build-time BPF generators share (kgl-gen.c):
 * kgl-seccomp-gen (the rule tables, kgl-seccomp.c and kgl-ipc-table.c)
 * and kgl-unotify-gen (the supervisor's notifying filter).  Each knows
 * how to compile its programs; writing them out as a C header is done
 * once, here.  Internal to sdk/linux, not installed. */
#ifndef KGL_GEN_H
#define KGL_GEN_H

#include <stddef.h>

/* Writes program `which` of a generator as BPF to fd (what
 * seccomp_export_bpf writes): 0, or -1 with a reason in msg. */
typedef int (*kgl_gen_export_fn)(int fd, int which, char *msg, size_t msglen);

/* One program of a header: its C name and what the export gets. */
typedef struct kgl_gen_prog {
    const char *name;
    int which;
} kgl_gen_prog;

/* The whole of a generator's main: "TOOL OUTPUT.h" writes banner and then
 * every program, in order, as a static const unsigned char array.  The
 * exit status: 0, 1 when a program or the file failed, 2 on usage. */
int kgl_gen_main(int argc, char **argv, const char *tool, const char *banner,
                 kgl_gen_export_fn export, const kgl_gen_prog *progs, size_t n);

#endif
