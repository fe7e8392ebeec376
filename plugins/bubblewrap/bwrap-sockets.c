/* bwrap-sockets.c: no host Unix socket is reachable unless the policy names
 * it (allow_sockets).
 *
 * A socket file on the read-only root is still connectable: connect()
 * needs write permission on the socket, and a read-only mount refuses
 * writes only to files, directories and links.  So /run (the Docker
 * socket, the system D-Bus, the user's session bus, agents under
 * /run/user/UID) and the other places daemons keep sockets are covered
 * with empty tmpfs, and the few things there that ordinary tools need are
 * given back: the target of a resolv.conf symlink, and an empty private
 * $XDG_RUNTIME_DIR.  /tmp and $HOME are already replaced by the plan.
 *
 * Abstract sockets (names beginning with NUL, the X server's, some D-Bus
 * buses) have no file: the network namespace is what separates them, so
 * they are unreachable in network off and reachable in network open
 * (doctor says so).
 *
 * Like the rest of the plan these functions only stat() and readlink();
 * they hold no descriptors. */
#include "bwrap-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Where sockets live on the read-only root, beside /tmp and $HOME.  /run
 * first: everything below follows it.  /var/run is a link to /run on
 * current distributions (then it needs nothing); on an older system it is
 * a directory of its own.  The /var/lib and /var/spool entries are daemons
 * that keep their socket next to their data: LXD and Incus (a socket that
 * is root on the host), MySQL/MariaDB on Red Hat-like systems, Postfix's
 * public queue sockets (sending mail). */
static const char *const socket_dirs[] = {
    "/run",
    "/var/run",
    "/var/lib/incus",
    "/var/lib/lxd",
    "/var/lib/mysql",
    "/var/snap/lxd/common/lxd",
    "/var/spool/postfix",
};

const char *const *bwrap_socket_dirs(size_t *n)
{
    *n = sizeof socket_dirs / sizeof socket_dirs[0];
    return socket_dirs;
}

/* Covered when it is a real directory (a link is covered through its
 * target) that anyone may search, or that is the program's own.  A
 * directory the program could not search holds no socket it could reach,
 * and bwrap, which runs as the same user, could not mount there either. */
static int coverable(const char *dir, uid_t uid)
{
    struct stat st;
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) return 0;
    return (st.st_mode & S_IXOTH) || st.st_uid == uid;
}

int bwrap_socket_hidden(const char *path, uid_t uid)
{
    for (size_t i = 0; i < sizeof socket_dirs / sizeof socket_dirs[0]; i++)
        if (kgate_path_under(path, socket_dirs[i]) && coverable(socket_dirs[i], uid)) return 1;
    return 0;
}

static int add(const kgate_host *h, kgate_plan *plan, const char *a, const char *b, const char *c)
{
    if (h->plan_arg(plan, a) < 0 || (b && h->plan_arg(plan, b) < 0) ||
        (c && h->plan_arg(plan, c) < 0))
        return -1;
    return 0;
}

int bwrap_plan_socket_cover(const kgate_host *h, const kgate_policy *pol, kgate_plan *plan,
                            const char *resolv_conf)
{
    for (size_t i = 0; i < sizeof socket_dirs / sizeof socket_dirs[0]; i++)
        if (coverable(socket_dirs[i], pol->uid) &&
            add(h, plan, "--tmpfs", socket_dirs[i], NULL) < 0)
            return -1;
    if (!coverable("/run", pol->uid)) return 0;

    /* systemd-resolved and resolvconf make /etc/resolv.conf a link into
     * /run: give the file it names back, read-only, or DNS stops working
     * in network open.  Only the file: its directory also holds resolved's
     * varlink socket (nss-resolve then falls back to plain DNS). */
    struct stat st;
    if (resolv_conf && lstat(resolv_conf, &st) == 0 && S_ISLNK(st.st_mode)) {
        char *target = realpath(resolv_conf, NULL);
        if (!target) {
            if (h->plan_note(plan, "%s is a dangling link: DNS will not work", resolv_conf) < 0)
                return -1;
        } else if (bwrap_socket_hidden(target, pol->uid)) {
            int r = stat(target, &st) == 0 && S_ISREG(st.st_mode)
                        ? add(h, plan, "--ro-bind", target, target)
                        : h->plan_note(plan,
                                       "%s leads to %s, which is not a regular "
                                       "file: not given back",
                                       resolv_conf, target);
            free(target);
            if (r < 0) return -1;
        } else {
            free(target);
        }
    }

    /* $XDG_RUNTIME_DIR (passed through by the environment filter) names
     * /run/user/UID: an empty private one keeps the tools that put their
     * own sockets and locks there working, inside the sandbox only. */
    char dir[64];
    snprintf(dir, sizeof dir, "/run/user/%lu", (unsigned long)pol->uid);
    return add(h, plan, "--perms", "0700", NULL) < 0 || add(h, plan, "--dir", dir, NULL) < 0 ? -1
                                                                                             : 0;
}

int bwrap_plan_allow_sockets(const kgate_host *h, const kgate_policy *pol, kgate_plan *plan,
                             kgate_err *err)
{
    const kgate_strlist *l = &pol->allow_sockets;
    for (size_t i = 0; i < l->n; i++) {
        const char *p = l->v[i];
        if (!p || p[0] != '/')
            return kgate_err_set(err, EINVAL,
                                 "allow_sockets entry \"%s\" is not an "
                                 "absolute path",
                                 p ? p : "(null)");
        if (kgate_path_under(pol->home, p))
            return kgate_err_set(err, EPERM,
                                 "allow_sockets entry %s would show the whole "
                                 "home directory %s again",
                                 p, pol->home);
        struct stat st;
        if (stat(p, &st) < 0) {
            /* An agent that is not running now has no socket; the policy
             * layer allows that.  bwrap would fail on a missing source. */
            if (h->plan_note(plan,
                             "allow_sockets entry %s does not exist: not "
                             "mounted",
                             p) < 0)
                return kgate_err_set(err, ENOMEM, "out of memory");
            continue;
        }
        if (!S_ISSOCK(st.st_mode) && !S_ISDIR(st.st_mode)) {
            if (h->plan_note(plan,
                             "allow_sockets entry %s is not a socket or a "
                             "directory: not mounted (use read_paths or "
                             "allow_paths for files)",
                             p) < 0)
                return kgate_err_set(err, ENOMEM, "out of memory");
            continue;
        }
        /* Read-write: connect() needs write permission on the socket, and
         * a directory of sockets is where a client creates its own. */
        if (add(h, plan, "--bind", p, p) < 0) return kgate_err_set(err, ENOMEM, "out of memory");
    }
    return 0;
}
