/* kgl-unotify-int.h: what the supervisor's files (kgl-unotify.c, the
 * filesystem calls; kgl-unotify-net.c, the network calls) share.  Not
 * installed. */
#ifndef KGL_UNOTIFY_INT_H
#define KGL_UNOTIFY_INT_H

#include <linux/seccomp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "kgate/kgate-unotify.h"

typedef struct sv {
    const kgl_un_policy *p;
    int listener;
    pid_t pid; /* the calling thread */
    uint64_t id; /* its notification */
    int ipc; /* kgate's IPC supervisor's socket, or -1: SysV IPC refused */
} sv;

/* R_NONE: answered already (by a worker), nothing to send. */
enum { R_VAL, R_ERR, R_FD, R_CONT, R_NONE };
typedef struct result {
    int kind, val, fd, cloexec;
} result;

/* 1 while the notification s->id still waits (what was read is its). */
int kgl_un_valid(const sv *s);
/* "/proc/<pid>/<tail>[<n>]" into out (64 bytes). */
void kgl_un_proc_path(char *out, pid_t pid, const char *tail, int n);
/* Copies len bytes at addr from the program; 0 or an errno. */
int kgl_un_read_mem(const sv *s, uint64_t addr, void *buf, size_t len);
/* The calling thread's umask, from /proc/<tid>/status; -1 when unreadable
 * (what it makes then gets the supervisor's). */
int kgl_un_caller_umask(const sv *s);

/* A Unix address with a path (kgl-unotify-unix.c), the supervisor's copy
 * of *len bytes at addr: 0 with the path rewritten to /proc/self/fd/N of
 * the socket it allowed (*pin, N, the caller's to close after the call),
 * or 0 with nothing changed (unnamed, abstract), or an errno. */
int kgl_un_unix_dest(const sv *s, void *addr, socklen_t *len, int *pin);

/* The network side (kgl-unotify-net.c). */
int kgl_un_net_call(int nr);
result kgl_un_net_handle(const sv *s, const struct seccomp_notif *n);
/* After the supervisor closed kgate's descriptors: its relay socket. */
void kgl_un_net_start(const kgl_un_policy *p);
/* Its descriptors to poll, into pf (at most max); how many. */
int kgl_un_net_fds(struct pollfd *pf, int max);
/* What those polls found. */
void kgl_un_net_ready(const struct pollfd *pf, int n);
/* Reaps ended workers; the program's status when q is among them. */
void kgl_un_net_reap(pid_t q, int *status, int *done);

#endif
