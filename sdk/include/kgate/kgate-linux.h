/* kgate-linux.h: the SDK's Linux support library, libkgate-linux.a, for
 * every Linux backend (in this tree or out of it) that launches bwrap.
 *
 * What each such backend needs and must not write again: the seccomp
 * filter (one rule table; its BPF program compiled at build time and
 * embedded), bind sources passed as descriptors and every mount checked
 * inside the sandbox before the program starts, and the guard that kills
 * the sandbox when kgate dies.  Link it with pkg-config:
 *     CFLAGS += $(pkg-config --cflags kgate-linux)
 *     LDLIBS += $(pkg-config --libs kgate-linux)
 * The library is static, PIC and built with hidden visibility: its symbols
 * (prefix kgl_) land in the plugin and are not exported from it, so a
 * module still exports kgate_plugin_entry alone.
 *
 * Plugins never include or link each other; what two backends share lives
 * here (tests/unit/plugin_isolation.py checks the tree). */
#ifndef KGATE_LINUX_H
#define KGATE_LINUX_H

#include <stddef.h>
#include <sys/types.h>

#include "kgate/kgate-plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The seccomp filter (sdk/linux/kgl-seccomp.c).  One rule table, two
 * outputs: the text --dry-run shows (pure; malloc'd, NULL when memory runs
 * out) and the BPF program launch passes to bwrap (a memfd >= 10,
 * close-on-exec, at offset 0; -1 with err when the memfd cannot be
 * made: launch then fails closed).  The program itself was compiled
 * from the table at build time (sdk/linux/kgl-seccomp-gen.c). */
size_t kgl_seccomp_rule_count(void);
const char *kgl_seccomp_groups(void);
char *kgl_seccomp_describe(void);
int kgl_seccomp_fd(kgate_err *err);
/* The same program through a pipe, for a launch that wants bwrap to wait:
 * bwrap reads it after its last mount and before it starts the program, so
 * until the write end is written and closed the sandbox is set up and
 * empty (kgl-pin.c).  Returns the read end (>= 10, close-on-exec) and
 * *write_end; -1 with err. */
int kgl_seccomp_pipe(int *write_end, kgate_err *err);
int kgl_seccomp_send(int write_end, kgate_err *err);
#define KGL_SECCOMP_LABEL "seccomp filter"

/* Mount sources as descriptors, destinations checked (kgl-pin.c): every
 * backend that execs bwrap does this at launch. */
typedef enum {
    KGL_CHECK_NONE,   /* a mount of the floor: not checked, but it hides */
    KGL_CHECK_OBJECT, /* the object opened for a --bind-fd/--ro-bind-fd */
    KGL_CHECK_DEVNULL, /* the deny_read cover of a file */
    KGL_CHECK_TMPFS,   /* an empty tmpfs */
} kgl_check_kind;

typedef struct kgl_check {
    const char *dest; /* as in the plan's argv */
    kgl_check_kind kind;
    int ro;     /* must be read-only */
    int hidden; /* a later mount covers it: nothing to check */
    dev_t dev;
    ino_t ino;
} kgl_check;

typedef struct kgl_pins {
    const char **argv; /* the plan's argv, binds as descriptors; NULL-ended */
    size_t argc;
    int *fds; /* close-on-exec here; the launch child clears the flag */
    size_t n_fds;
    char **num; /* the descriptor numbers as text, owned */
    size_t n_num;
    kgl_check *checks;
    size_t n_checks;
} kgl_pins;

/* Opens every bind source of pargv (except / and /dev/null) without
 * following any symlink, and fills p with the argv that passes them as
 * descriptors and the checks to make once bwrap has mounted.  -1 with err
 * (p then holds nothing) when a source cannot be opened that way. */
int kgl_pins_open(const char *const *pargv, size_t argc, kgl_pins *p,
                   kgate_err *err);
/* Checks inside the sandbox whose setup process is sandbox (bwrap's
 * child-pid, after its chroot).  -1 with err naming the first mount that
 * is not what was planned. */
int kgl_pins_verify(const kgl_pins *p, pid_t sandbox, kgate_err *err);
void kgl_pins_free(kgl_pins *p);

/* The guard (kgl-guard.c): a child of kgate that SIGKILLs the sandbox
 * when kgate dies, at any moment of the launch.  start forks it (pid, a
 * process group of its own that the outer bwrap must join with
 * setpgid(0, pid) before its exec); tell hands it the sandbox's pid 1 from
 * bwrap's info; the backend then lists pid among its helpers, whose
 * SIGTERM at the end of the run makes the guard kill what is left and
 * exit.  stop ends it (and its group) on a launch that failed.  hold (or
 * -1) is a descriptor the guard keeps open for its life: kgate's end of
 * bwrap's setup gate. */
typedef struct kgl_guard {
    pid_t pid;
    int wfd;
} kgl_guard;
int kgl_guard_start(kgl_guard *g, int hold, kgate_err *err);
void kgl_guard_tell(kgl_guard *g, pid_t sandbox);
void kgl_guard_stop(kgl_guard *g);

#ifdef __cplusplus
}
#endif

#endif
