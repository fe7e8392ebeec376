/* bwrap-internal.h: the pieces of the bubblewrap backend, shared between its
 * files and its tests (which link them statically; the plugin exports only
 * kgate_plugin_entry). */
#ifndef BWRAP_INTERNAL_H
#define BWRAP_INTERNAL_H

#include "kgate/kgate-plugin.h"

/* The seccomp filter, the mount pins and the guard (the SDK's Linux
 * support library). */
#include "kgate/kgate-linux.h"
#include "kgate/kgate-path.h" /* kgate_path_under: plan and sockets */
#include "kgate/kgate-tool.h" /* the tools run outside the box */

/* The one sentence that says why a host allow list is not this backend's
 * job.  plan() fails with it and doctor() reports it (BLOCKED, id
 * KGATE_FINDING_NET_HOSTS_UNSUPPORTED), so the two cannot tell different
 * stories.  Other backends know that finding by its id, never by this
 * sentence. */
const char *bwrap_hosts_sentence(void);

/* Facts probe() records (kgate_probe_fact names). */
#define BWRAP_FACT_LINUX "linux"
#define BWRAP_FACT_BWRAP "bwrap" /* an executable bwrap found */
#define BWRAP_FACT_USERNS "userns" /* no sysctl forbids userns */
#define BWRAP_FACT_USERNS_MAX0 "userns_max_zero" /* user.max_user_namespaces 0 */
#define BWRAP_FACT_USERNS_CLONE0 "userns_clone_off" /* Debian knob is 0 */
#define BWRAP_FACT_APPARMOR "apparmor_userns" /* AppArmor restricts userns */
#define BWRAP_FACT_TRIAL "userns_trial" /* 1 worked, 0 failed, -1 not tried */

/* Fills p from sysctl values as read (-1: the file does not exist), whether
 * the caller is root, and whether bwrap was found.  Split from probe() so the
 * tests can feed it any kernel. */
void bwrap_probe_from_sysctls(kgate_probe *p, int have_bwrap, int is_root, int max_userns,
                              int userns_clone, int apparmor_restrict, int trial);

/* The four methods (bwrap-probe.c, bwrap-doctor.c, bwrap-plan.c,
 * bwrap-launch.c). */
int bwrap_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe,
                kgate_err *err);
int bwrap_doctor(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                 kgate_report *rep);
int bwrap_plan(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
               kgate_plan *plan, kgate_err *err);
int bwrap_launch(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                 const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc, kgate_err *err);

/* --publish with network: off (bwrap-publish.c).  bwrap_publish_listen
 * makes the host's listeners, in fds (n_publish of them, -1 each when
 * not made), before anything starts; bwrap_publish_start forks the
 * forwarder, which takes them into the box's user and network namespaces
 * (those of sandbox, bwrap's pid 1) and relays each connection to
 * 127.0.0.1:PORT there.  Its pid once it is in, or -1 with err and
 * nothing left running.  The caller closes its copies either way. */
int bwrap_publish_listen(const kgate_policy *policy, int *fds, kgate_err *err);
pid_t bwrap_publish_start(const kgate_policy *policy, int *fds, pid_t sandbox, kgate_err *err);
void bwrap_publish_close(int *fds, size_t n);

/* pty mode (bwrap-pty.c, pty-shim.c): the plan runs the command through
 * this shim, which makes the pty the program's controlling terminal inside
 * the sandbox.  bwrap_pty_shim_find returns its absolute path (malloc'd), or
 * NULL with err when it is not installed.  The override is for tests. */
#define BWRAP_PTY_SHIM_NAME "kgate-pty-shim"
char *bwrap_pty_shim_find(kgate_err *err);
void bwrap_pty_shim_set_override(const char *path);

/* Host Unix sockets (bwrap-sockets.c).  The directories the socket stage
 * covers with an empty tmpfs (each only when it is a real directory the
 * program could search); 1 when path lies in one that is covered for uid. */
const char *const *bwrap_socket_dirs(size_t *n);
int bwrap_socket_hidden(const char *path, uid_t uid);
/* After the floor: the covers, the resolv.conf target given back (resolv_conf
 * is "/etc/resolv.conf"; the tests pass their own), an empty private
 * /run/user/UID.  -1 when memory ran out. */
int bwrap_plan_socket_cover(const kgate_host *h, const kgate_policy *pol, kgate_plan *plan,
                            const char *resolv_conf);
/* After everything given back and before the covers that take away:
 * each existing allow_sockets entry (a socket or a directory) bound
 * read-write; a missing one is a note.  -1 with err on a refusal. */
int bwrap_plan_allow_sockets(const kgate_host *h, const kgate_policy *pol, kgate_plan *plan,
                             kgate_err *err);

#endif
