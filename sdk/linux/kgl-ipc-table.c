/* kgl-ipc-table.c: the SysV IPC calls a box without an IPC namespace
 * (Landlock's) hands to its supervisor, and the text --dry-run shows for
 * that filter.  Linked into the build-time compiler (kgl-seccomp-gen.c,
 * kgl-ipc-bpf.c) and into the library, so the program and its text come
 * from one list. */
#include "kgate/kgate-linux.h"
#include "kgl-ipc.h"

#include <stdio.h>
#include <stdlib.h>

/* Every SysV IPC call of the native entry.  shmdt is among them although
 * it takes only an address: it is answered by continuing, and listing it
 * keeps the list the whole family (the allowed list's group). */
static const char *const calls[] = {
    "shmget", "shmat",  "shmdt",  "shmctl", "msgget",     "msgsnd",
    "msgrcv", "msgctl", "semget", "semop",  "semtimedop", "semctl",
};

/* Only 32-bit entries have these: i386's multiplexer (its arguments
 * partly in memory, where a filter cannot look) and the time64 twin. */
static const char *const compat_calls[] = {"ipc", "semtimedop_time64"};

/* POSIX message queues live in the IPC namespace too, opened by a name
 * the kernel resolves in its own mqueue mount, out of Landlock's sight:
 * refused outright (the calls on a queue need a descriptor from
 * mq_open).  Build tools do not use them. */
static const char *const refused_calls[] = {"mq_open", "mq_unlink"};

const char *const *kgl_ipc_refused_calls(size_t *n)
{
    *n = sizeof refused_calls / sizeof refused_calls[0];
    return refused_calls;
}

const char *const *kgl_ipc_calls(size_t *n)
{
    *n = sizeof calls / sizeof calls[0];
    return calls;
}

const char *const *kgl_ipc_compat_calls(size_t *n)
{
    *n = sizeof compat_calls / sizeof compat_calls[0];
    return compat_calls;
}

static void list(FILE *f, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) fprintf(f, "%s%s", i ? " " : "", v[i]);
}

char *kgl_ipc_describe(int notify)
{
    char *text = NULL;
    size_t len = 0, n, nc;
    const char *const *v = kgl_ipc_calls(&n);
    const char *const *c = kgl_ipc_compat_calls(&nc);
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    if (notify == KGL_IPC_ROUTED)
        fprintf(f, "# SysV IPC without an IPC namespace: notified by the "
                   "filesystem supervisor's filter (a process has one\n"
                   "# seccomp listener), which passes the calls on; a third "
                   "filter, loaded after the others, refuses the rest.\n");
    else
        fprintf(f, "# SysV IPC without an IPC namespace: a third filter, loaded "
                   "after the others.\n");
    list(f, v, n);
    if (notify)
        fprintf(f, ": handed to kgate's IPC supervisor (seccomp user "
                   "notification).\n"
                   "  *get: made by the supervisor for the run (IPC_PRIVATE, "
                   "or a key no object outside has;\n"
                   "  a key of an object outside: ENOENT, or EACCES with "
                   "IPC_CREAT); its id is recorded\n"
                   "  calls on an id: continued for the run's ids only "
                   "(EINVAL otherwise); IPC_RMID made by the\n"
                   "  supervisor; *_STAT and *_INFO, which read other "
                   "objects by index: EPERM\n"
                   "  at the end of the run every object of the run is "
                   "removed (IPC_RMID)\n");
    else
        fprintf(f, ": EPERM (this kernel has no seccomp user notification "
                   "with continue, Linux 5.5)\n");
    size_t nr;
    const char *const *r = kgl_ipc_refused_calls(&nr);
    list(f, r, nr);
    fprintf(f, ": EPERM (POSIX message queues: named in the IPC namespace, "
               "which the box shares)\n");
    fprintf(f, "32-bit entries (i386, x32): ");
    list(f, v, n);
    fprintf(f, " ");
    list(f, r, nr);
    fprintf(f, " ");
    list(f, c, nc);
    fprintf(f, ": EPERM\n");
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
