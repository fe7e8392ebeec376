/* kgl-ipc.h: the SysV IPC supervisor's pieces, internal to the SDK's Linux
 * support library (sdk/linux) and its tests; not installed.  The public
 * face is in kgate-linux.h (kgl_ipc_*).
 *
 * The decision is kept apart from the loop that feeds it on purpose: a
 * task's filter chain can hold only one seccomp listener (the kernel
 * refuses a second with EBUSY), so a box that also supervises other calls
 * (the filesystem supervisor, kgl-unotify*) must run one loop over one
 * listener and hand the IPC calls to kgl_ipc_answer. */
#ifndef KGL_IPC_H
#define KGL_IPC_H

#include <linux/seccomp.h>
#include <stddef.h>

#include "kgate/kgate-plugin.h"

/* Objects one run may own.  The supervisor is a fork of kgate and keeps
 * the set in a fixed array (no malloc after a fork of a process that may
 * have threads); the kernel's own defaults are 4096 segments (SHMMNI) and
 * 32000 queues and sets, more than a build makes. */
#define KGL_IPC_MAX 4096

enum { KGL_IPC_SHM = 1, KGL_IPC_MSG, KGL_IPC_SEM };

typedef struct kgl_ipc_obj {
    int type; /* KGL_IPC_*, 0 for a free slot */
    int id;
    int key; /* IPC_PRIVATE (0) when made without a key */
} kgl_ipc_obj;

typedef struct kgl_ipc_set {
    kgl_ipc_obj v[KGL_IPC_MAX];
    size_t n;
} kgl_ipc_set;

/* Decides one notification.  Returns 0 and fills resp (id, val, error,
 * flags) when req is a SysV IPC call, -1 (resp untouched) when it is not
 * one this supervisor knows (the caller answers it).  A *get call is
 * performed here, on the caller's behalf, and its id recorded; an
 * IPC_RMID on an object of the set is performed here and the object
 * dropped; any other call on an object of the set continues in the
 * kernel (SECCOMP_USER_NOTIF_FLAG_CONTINUE: only integer arguments were
 * looked at); everything else gets an errno. */
int kgl_ipc_answer(kgl_ipc_set *set, const struct seccomp_notif *req,
                   struct seccomp_notif_resp *resp);

/* Removes every object of the set (IPC_RMID), as the end of an IPC
 * namespace would; the set is empty after. */
void kgl_ipc_remove_all(kgl_ipc_set *set);

/* The BPF programs, compiled at build time by kgl-seccomp-gen with
 * libseccomp (kgl-ipc-bpf.c): notify hands the native SysV IPC calls to
 * the listener; none refuses them (EPERM); rest leaves them alone, for a
 * box whose filesystem supervisor's filter notifies them
 * (kgl-unotify-gen.c).  All three refuse mq_open and mq_unlink, and the
 * 32-bit entry points (i386's ipc() multiplexer and direct calls, x32)
 * with EPERM. */
int kgl_ipc_export(int fd, kgate_err *err);
int kgl_ipc_export_none(int fd, kgate_err *err);
int kgl_ipc_export_rest(int fd, kgate_err *err);

/* Routing (the filesystem supervisor's side, kgl-unotify.c): 1 when nr is
 * a native SysV IPC call kgl_ipc_answer decides.  route_listener hands a
 * copy of the one listener to kgate's IPC supervisor over sock (its
 * child_end), which from then on answers the notifications route sends
 * it (the request as received, integers only) on that copy; it never
 * receives from the listener itself.  0, or -1 with errno: the caller
 * then refuses the IPC calls itself. */
int kgl_ipc_is_call(long nr);
int kgl_ipc_route_listener(int sock, int listener);
int kgl_ipc_route(int sock, const struct seccomp_notif *req);

/* The calls the programs cover, for the text --dry-run shows and for the
 * table test: the native calls, then the ones only a 32-bit entry has. */
const char *const *kgl_ipc_calls(size_t *n);
const char *const *kgl_ipc_compat_calls(size_t *n);
/* Refused (EPERM) in every entry by both programs: POSIX queues. */
const char *const *kgl_ipc_refused_calls(size_t *n);

#endif
