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
#define KGBW_SECCOMP_LABEL "seccomp filter"

/* The one sentence that says why a host allow list is not the bubblewrap
 * backend's job.  Its plan() fails with it and its doctor() reports it
 * (BLOCKED); slirp-filter's doctor drops exactly this finding when it
 * reuses bubblewrap's doctor for the filesystem box.  A macro so that both
 * modules compare against the same text without another exported symbol. */
#define KGBW_HOSTS_SENTENCE                                                    \
    "a host allow list needs the slirp-filter backend (slirp4netns and "       \
    "iptables)"

/* The guard (bwrap-guard.c): a child of kgate that SIGKILLs the sandbox
 * when kgate dies, at any moment of the launch.  start forks it (pid, a
 * process group of its own that the outer bwrap must join with
 * setpgid(0, pid) before its exec); tell hands it the sandbox's pid 1 from
 * bwrap's info; the backend then lists pid among its helpers, whose
 * SIGTERM at the end of the run makes the guard kill what is left and
 * exit.  stop ends it (and its group) on a launch that failed.  hold (or
 * -1) is a descriptor the guard keeps open for its life: kgate's end of
 * bwrap's setup gate. */
typedef struct kgbw_guard {
    pid_t pid;
    int wfd;
} kgbw_guard;
int kgbw_guard_start(kgbw_guard *g, int hold, kgate_err *err);
void kgbw_guard_tell(kgbw_guard *g, pid_t sandbox);
void kgbw_guard_stop(kgbw_guard *g);

#endif
