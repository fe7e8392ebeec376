/* bwrap-share.h: what the bubblewrap backend shares with the slirp-filter
 * backend, which runs bubblewrap's plan from its own network helper.
 *
 * Both modules link the same static library (kgbw-seccomp, built from
 * bwrap-seccomp.c and the BPF program compiled from it at build time, with
 * hidden visibility), so a restricted run gets the
 * very filter an off or open run gets: one rule table, one source file,
 * and neither module exports anything but kgate_plugin_entry. */
#ifndef KGBW_SHARE_H
#define KGBW_SHARE_H

#include <stddef.h>
#include <sys/types.h>

#include "kgate/kgate-plugin.h"

/* The seccomp filter (bwrap-seccomp.c).  One rule table, two outputs: the
 * text --dry-run shows (pure; malloc'd, NULL when memory runs out) and the
 * BPF program launch passes to bwrap (a memfd >= 10, close-on-exec, at
 * offset 0; -1 with err when the memfd cannot be made: launch then fails
 * closed).  The program itself was compiled from the table at build time
 * (seccomp-gen.c). */
size_t kgbw_seccomp_rule_count(void);
const char *kgbw_seccomp_groups(void);
char *kgbw_seccomp_describe(void);
int kgbw_seccomp_fd(kgate_err *err);
/* The same program through a pipe, for a launch that wants bwrap to wait:
 * bwrap reads it after its last mount and before it starts the program, so
 * until the write end is written and closed the sandbox is set up and
 * empty (bwrap-pin.c).  Returns the read end (>= 10, close-on-exec) and
 * *write_end; -1 with err. */
int kgbw_seccomp_pipe(int *write_end, kgate_err *err);
int kgbw_seccomp_send(int write_end, kgate_err *err);
#define KGBW_SECCOMP_LABEL "seccomp filter"

/* Mount sources as descriptors, destinations checked (bwrap-pin.c): both
 * backends that exec bwrap do this at launch. */
typedef enum {
    KGBW_CHECK_NONE,   /* a mount of the floor: not checked, but it hides */
    KGBW_CHECK_OBJECT, /* the object opened for a --bind-fd/--ro-bind-fd */
    KGBW_CHECK_DEVNULL, /* the deny_read cover of a file */
    KGBW_CHECK_TMPFS,   /* an empty tmpfs */
} kgbw_check_kind;

typedef struct kgbw_check {
    const char *dest; /* as in the plan's argv */
    kgbw_check_kind kind;
    int ro;     /* must be read-only */
    int hidden; /* a later mount covers it: nothing to check */
    dev_t dev;
    ino_t ino;
} kgbw_check;

typedef struct kgbw_pins {
    const char **argv; /* the plan's argv, binds as descriptors; NULL-ended */
    size_t argc;
    int *fds; /* close-on-exec here; the launch child clears the flag */
    size_t n_fds;
    char **num; /* the descriptor numbers as text, owned */
    size_t n_num;
    kgbw_check *checks;
    size_t n_checks;
} kgbw_pins;

/* Opens every bind source of pargv (except / and /dev/null) without
 * following any symlink, and fills p with the argv that passes them as
 * descriptors and the checks to make once bwrap has mounted.  -1 with err
 * (p then holds nothing) when a source cannot be opened that way. */
int kgbw_pins_open(const char *const *pargv, size_t argc, kgbw_pins *p,
                   kgate_err *err);
/* Checks inside the sandbox whose setup process is sandbox (bwrap's
 * child-pid, after its chroot).  -1 with err naming the first mount that
 * is not what was planned. */
int kgbw_pins_verify(const kgbw_pins *p, pid_t sandbox, kgate_err *err);
void kgbw_pins_free(kgbw_pins *p);

/* The one sentence that says why a host allow list is not the bubblewrap
 * backend's job.  Its plan() fails with it and its doctor() reports it
 * (BLOCKED); slirp-filter's doctor drops exactly this finding when it
 * reuses bubblewrap's doctor for the filesystem box.  A macro so that both
 * modules compare against the same text without another exported symbol. */
#define KGBW_HOSTS_SENTENCE                                                    \
    "a host allow list needs the slirp-filter backend (slirp4netns and "       \
    "iptables)"

#endif
