/* os-proc-linux.c: child reaping and the box's shared places on Linux
 * (see os.h). */
#include "os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

bool kg_os_subreaper(bool on) { return prctl(PR_SET_CHILD_SUBREAPER, on ? 1 : 0, 0, 0, 0) == 0; }

/* The parent and state of pid, from /proc/PID/stat ("pid (comm) S ppid
 * ..."; comm may hold spaces and parentheses: the last ')' ends it).
 * -1 when the process is gone.
 *
 * State Z is the thread group's leader only: a leader that called
 * pthread_exit (or SYS_exit) is a zombie while its other threads go on
 * running and writing, and its parent cannot reap it until they end.
 * num_threads (field 20) still counts the leader then, so a zombie with
 * more than one is alive and must be killed (the signal reaches every
 * thread of the group). */
static int read_stat(int procfd, const char *name, kg_procent *e)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "%s/stat", name);
    int fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n;
    do {
        n = read(fd, buf, sizeof buf - 1);
    } while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    char *end = strrchr(buf, ')');
    char state;
    long ppid, threads = 1;
    int got =
        end ? sscanf(end + 1,
                     " %c %ld %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %ld",
                     &state, &ppid, &threads)
            : 0;
    /* A stat without field 20 (none known) reads as one thread. */
    if (got < 2) return -1;
    e->ppid = (pid_t)ppid;
    e->zombie = (state == 'Z' || state == 'X') && threads <= 1;
    return 0;
}

/* /proc is this process's own PID namespace's procfs: its "self" is our
 * pid.  Another namespace's /proc (unshare -p without a new mount) would
 * list other processes under numbers that mean ours here. */
static bool proc_is_ours(void)
{
    char buf[32];
    ssize_t n = readlink("/proc/self", buf, sizeof buf - 1);
    if (n <= 0) return false;
    buf[n] = '\0';
    char *end;
    long pid = strtol(buf, &end, 10);
    return *end == '\0' && pid == (long)getpid();
}

typedef struct kids {
    pid_t self, *v;
    size_t n, cap;
    bool oom;
} kids;

static void add_kid(void *arg, const kg_procent *e)
{
    kids *k = arg;
    if (e->ppid != k->self || k->oom) return;
    if (k->n == k->cap) {
        pid_t *v = realloc(k->v, (k->cap = k->cap ? k->cap * 2 : 16) * sizeof *v);
        if (!v) {
            k->oom = true;
            return;
        }
        k->v = v;
    }
    k->v[k->n++] = e->pid;
}

/* Without CONFIG_PROC_CHILDREN: the whole list, filtered. */
static pid_t *children_by_scan(size_t *n)
{
    kids k = {.self = getpid()};
    if (kg_os_proc_scan(add_kid, &k) < 0 || k.oom) {
        free(k.v);
        return NULL;
    }
    *n = k.n;
    return k.v ? k.v : malloc(sizeof(pid_t));
}

pid_t *kg_os_children(size_t *n)
{
    char path[64];
    *n = 0;
    /* Only this PID namespace's /proc knows our children by our numbers. */
    if (!proc_is_ours()) {
        errno = ESRCH;
        return NULL;
    }
    snprintf(path, sizeof path, "/proc/self/task/%ld/children", (long)getpid());
    FILE *f = fopen(path, "re");
    if (!f && errno == ENOENT) return children_by_scan(n);
    if (!f) return NULL;
    size_t cap = 16;
    pid_t *v = malloc(cap * sizeof *v);
    long pid;
    while (v && fscanf(f, "%ld", &pid) == 1) {
        if (*n == cap) {
            pid_t *nv = realloc(v, (cap *= 2) * sizeof *v);
            if (!nv) {
                free(v);
                v = NULL;
                break;
            }
            v = nv;
        }
        v[(*n)++] = (pid_t)pid;
    }
    fclose(f);
    return v;
}

int kg_os_proc_scan(void (*each)(void *arg, const struct kg_procent *e), void *arg)
{
    if (!proc_is_ours()) {
        errno = ESRCH;
        return -1;
    }
    DIR *d = opendir("/proc");
    if (!d) return -1;
    int procfd = dirfd(d);
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || end == de->d_name || pid <= 0) continue;
        kg_procent e = {.pid = (pid_t)pid};
        /* Gone between the listing and the read: nothing to end. */
        if (read_stat(procfd, de->d_name, &e) == 0) each(arg, &e);
        errno = 0;
    }
    int e = errno;
    closedir(d);
    if (e) {
        errno = e;
        return -1;
    }
    return 0;
}

int kg_os_kill_child_of(pid_t pid, pid_t ppid)
{
    /* Our own child cannot be reaped by anyone else: its pid is its own. */
    if (ppid == getpid()) return kill(pid, SIGKILL) == 0 || errno == ESRCH ? 0 : -1;
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0 && errno == ESRCH) return 0;
    if (pfd < 0) /* before Linux 5.3: the pid as read, checked below */
        pfd = -1;
    char name[32];
    snprintf(name, sizeof name, "/proc/%ld", (long)pid);
    kg_procent e = {.pid = pid};
    int rc = 0;
    if (read_stat(AT_FDCWD, name, &e) < 0 || e.ppid != ppid) {
        /* Ended, or a different process under that number now. */
    } else if (pfd >= 0) {
        if (syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH) rc = -1;
    } else if (kill(pid, SIGKILL) < 0 && errno != ESRCH) {
        rc = -1;
    }
    if (pfd >= 0) close(pfd);
    return rc;
}

size_t kg_os_box_shared_dirs(const char **out, size_t max)
{
    /* bubblewrap gives every box an empty /tmp and $HOME of its own: no
     * host directory is writable by the box unless the policy says so. */
    (void)out;
    (void)max;
    return 0;
}
