/* kgl-pin.c: the mounts bwrap makes are the objects kgate checked.
 *
 * The plan names every mount by path (so --dry-run prints an argv a person
 * can read and paste), and bwrap resolves those paths again, later, in
 * another process.  Anything between the two that a sandboxed program can
 * write (the project, an allow_paths entry) can be renamed in between by a
 * program in a sandbox that is already running: swap .vscode for a symlink
 * to "..", and a "--ro-bind P/.vscode P/.vscode" binds the real home.  Two
 * halves close that, both here:
 *
 * Sources.  Launch opens every bind source itself, one component at a
 * time without following any symlink (the core accepts none in a path the
 * policy names, so one there now was put there since), and hands bwrap the
 * descriptor: "--bind P D" becomes "--bind-fd N D", "--ro-bind" becomes
 * "--ro-bind-fd".  That alone is not race-free: bwrap (0.8 with Debian's
 * backport, and 0.10 upstream) turns the descriptor back into a path
 * (realpath of /proc/self/fd/N) while it parses its options, mounts that
 * path later, and then compares the descriptor with the destination's last
 * component, once.  A name swapped for a symlink between those steps and
 * back makes it mount whatever the symlink led to; measured with a project
 * on a tmpfs /tmp: the real home, bound read-only over the sandbox's
 * home, passed bwrap's comparison and a check that only asked for "a
 * tmpfs mount" there.  So launch's own check below is what makes it
 * safe: after every mount, each destination must be a mount whose root is
 * the planned object (a bind), a filesystem the host does not have
 * mounted (a tmpfs), or /dev/null; every mount bwrap made is then where
 * it was planned, and none went where a renamed name led.  A bind that a
 * later mount covers cannot be checked, and is left out of the argv.
 * bwrap closes each descriptor once it has mounted it
 * (measured, 0.8.0: the program's /proc/self/fd holds none of them).
 * /dev/null (the deny_read cover, a --dev-bind: bwrap has no --dev-bind-fd)
 * and / stay paths: nothing in a sandbox can write them.
 *
 * Destinations.  bwrap follows a symlink at or above a destination
 * (measured: a --dev-bind onto a link lands on the link's target; its own
 * check after --bind-fd looks at the last component only, once).  No
 * option makes it refuse, so launch checks the result instead, while the
 * sandbox is set up and the program not yet started: bwrap reads the
 * seccomp program after its last mount and its chroot, and launch hands it
 * that program through a pipe it has not written yet (kgl-bwrap.c).
 * Meanwhile kgl_pins_verify walks each destination inside the sandbox's
 * root (from /proc/PID/root, one component at a time, no symlink) and wants
 * there a mount of the object it opened (same device and inode;
 * read-only when the bind was), of the /dev/null cover, or of a new tmpfs
 * (read-only after --remount-ro).  Any difference and launch kills the sandbox before the
 * program ran: a rename that raced the launch makes it fail, never leak.
 * After the check a rename changes nothing inside this sandbox: a mount
 * follows the directory entry it sits on. */
#include "kgate/kgate-linux.h"
#include "kgate/kgate-path.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Opens the absolute, normalised path (no "." or "..": the core's paths
 * are) below dir one component at a time, each with O_NOFOLLOW, and fails
 * with ELOOP on a symlink anywhere, the last component included: what
 * openat2's RESOLVE_NO_SYMLINKS (with RESOLVE_IN_ROOT when dir is a
 * sandbox's root) does, without needing Linux 5.6 or a valgrind that
 * knows the call.  Mount points are crossed.  The result is an O_PATH
 * descriptor, close-on-exec. */
static int open_nofollow(int dir, const char *path)
{
    int cur =
        dir >= 0 ? fcntl(dir, F_DUPFD_CLOEXEC, 0) : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cur < 0) return -1;
    const char *p = path;
    for (;;) {
        p += strspn(p, "/");
        if (!*p) break;
        size_t len = strcspn(p, "/");
        char name[256];
        if (len >= sizeof name) {
            close(cur);
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        if (strcmp(name, "..") == 0) { /* never in a core path: refuse */
            close(cur);
            errno = EINVAL;
            return -1;
        }
        int next = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(cur);
        if (next < 0) {
            errno = e;
            return -1;
        }
        struct stat st;
        if (fstat(next, &st) < 0 || S_ISLNK(st.st_mode)) {
            close(next);
            errno = ELOOP;
            return -1;
        }
        cur = next;
        p += len;
    }
    return cur;
}

void kgl_pins_free(kgl_pins *p)
{
    for (size_t i = 0; i < p->n_fds; i++)
        if (p->fds[i] >= 0) close(p->fds[i]);
    for (size_t i = 0; i < p->n_num; i++) free(p->num[i]);
    free(p->fds);
    free(p->num);
    free(p->checks);
    free(p->argv);
    memset(p, 0, sizeof *p);
}

/* The options a plan may hold, with the number of arguments each takes
 * and whether it makes a mount (its destination is its last argument).
 * Anything else fails the launch: an option read with the wrong arity
 * would make its argument look like an option, and a mount option not
 * listed would go unchecked. */
static int mount_arity(const char *a, int *makes_mount)
{
    static const struct {
        const char *name;
        int n;
        int mount;
    } ops[] = {
        {"--bind", 2, 1},
        {"--ro-bind", 2, 1},
        {"--dev-bind", 2, 1},
        {"--tmpfs", 1, 1},
        {"--dev", 1, 1},
        {"--proc", 1, 1},
        {"--remount-ro", 1, 0},
        {"--dir", 1, 0},
        {"--perms", 1, 0},
        {"--setenv", 2, 0},
        {"--unsetenv", 1, 0},
        {"--uid", 1, 0},
        {"--gid", 1, 0},
        {"--chdir", 1, 0},
        {"--cap-drop", 1, 0},
        {"--cap-add", 1, 0},
        {"--hostname", 1, 0},
        {"--die-with-parent", 0, 0},
        {"--new-session", 0, 0},
        {"--unshare-user", 0, 0},
        {"--unshare-pid", 0, 0},
        {"--unshare-ipc", 0, 0},
        {"--unshare-uts", 0, 0},
        {"--unshare-net", 0, 0},
        {"--unshare-cgroup", 0, 0},
        {"--disable-userns", 0, 0},
        {"--clearenv", 0, 0},
        {"--as-pid-1", 0, 0},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(a, ops[i].name) == 0) {
            *makes_mount = ops[i].mount;
            return ops[i].n;
        }
    *makes_mount = 0;
    return -1;
}

static int add_fd(kgl_pins *p, int fd, char **num_out)
{
    int *f = realloc(p->fds, (p->n_fds + 1) * sizeof *f);
    if (!f) return -1;
    p->fds = f;
    p->fds[p->n_fds++] = fd;
    char **nv = realloc(p->num, (p->n_num + 1) * sizeof *nv);
    if (!nv) return -1;
    p->num = nv;
    if (asprintf(&p->num[p->n_num], "%d", fd) < 0) return -1;
    *num_out = p->num[p->n_num++];
    return 0;
}

static int add_check(kgl_pins *p, kgl_check c)
{
    kgl_check *v = realloc(p->checks, (p->n_checks + 1) * sizeof *v);
    if (!v) return -1;
    p->checks = v;
    p->checks[p->n_checks++] = c;
    return 0;
}

/* 1 when a mount option after position i (the options before "--")
 * mounts on dest or above it: then the mount at i cannot be seen, and so
 * cannot be checked. */
static int covered_later(const char *const *pargv, size_t argc, size_t i, const char *dest)
{
    int mounts;
    int n = mount_arity(pargv[i], &mounts);
    for (i += (size_t)n + 1; i < argc && strcmp(pargv[i], "--") != 0; i += (size_t)n + 1) {
        n = mount_arity(pargv[i], &mounts);
        if (n < 0 || i + (size_t)n >= argc) return 0; /* refused below */
        if (mounts && kgate_path_under(dest, pargv[i + (size_t)n])) return 1;
    }
    return 0;
}

int kgl_pins_open(const char *const *pargv, size_t argc, kgl_pins *p, kgate_err *err)
{
    memset(p, 0, sizeof *p);
    p->argv = calloc(argc + 1, sizeof *p->argv);
    if (!p->argv) goto nomem;
    size_t i = 0;
    if (argc) p->argv[p->argc++] = pargv[i++];
    while (i < argc) {
        const char *a = pargv[i];
        if (strcmp(a, "--") == 0) break;
        int mounts;
        int n = mount_arity(a, &mounts);
        if (n < 0 || i + (size_t)n >= argc) {
            kgate_err_set(err, EINVAL,
                          "the plan holds %s%s, which launch cannot check; "
                          "nothing was started",
                          a, n < 0 ? "" : " without its arguments");
            goto fail;
        }
        const char *dest = n ? pargv[i + (size_t)n] : NULL;
        int is_bind = strcmp(a, "--bind") == 0 || strcmp(a, "--ro-bind") == 0;
        if (is_bind && strcmp(pargv[i + 1], "/") != 0) {
            const char *src = pargv[i + 1];
            /* A bind that a later mount covers changes nothing the program
             * sees, and its mount cannot be checked where it should be:
             * bwrap may have put it anywhere a renamed name led (see the
             * head of this file).  It is left out. */
            if (covered_later(pargv, argc, i, dest)) {
                i += 3;
                continue;
            }
            int ro = a[2] == 'r';
            int fd = open_nofollow(-1, src);
            if (fd >= 0 && fd < 10) { /* clear of the stdio the child fills */
                int hi = fcntl(fd, F_DUPFD_CLOEXEC, 10);
                close(fd);
                fd = hi;
            }
            if (fd < 0) {
                int e = errno;
                kgate_err_set(err, e,
                              "%s %s since kgate checked it (%s); nothing was "
                              "started",
                              src,
                              e == ELOOP ? "became a symbolic link or has one "
                                           "on its way"
                                         : "changed",
                              strerror(e));
                goto fail;
            }
            struct stat st;
            char *num;
            if (fstat(fd, &st) < 0 || add_fd(p, fd, &num) < 0) {
                close(fd);
                goto nomem;
            }
            p->argv[p->argc++] = ro ? "--ro-bind-fd" : "--bind-fd";
            p->argv[p->argc++] = num;
            p->argv[p->argc++] = dest;
            if (add_check(p, (kgl_check){dest, KGL_CHECK_OBJECT, ro, 0, st.st_dev, st.st_ino}) < 0)
                goto nomem;
            i += 3;
            continue;
        }
        if (strcmp(a, "--remount-ro") == 0) {
            for (size_t c = p->n_checks; c-- > 0;)
                if (strcmp(p->checks[c].dest, dest) == 0) {
                    p->checks[c].ro = 1;
                    break;
                }
        } else if (mounts) {
            kgl_check_kind kind = KGL_CHECK_NONE;
            if (strcmp(a, "--dev-bind") == 0 && strcmp(pargv[i + 1], "/dev/null") == 0)
                kind = KGL_CHECK_DEVNULL;
            else if (strcmp(a, "--tmpfs") == 0)
                kind = KGL_CHECK_TMPFS;
            /* Under a later mount (on its place or above) it cannot be
             * seen: only the topmost is checked. */
            int hidden = covered_later(pargv, argc, i, dest);
            if (add_check(p, (kgl_check){dest, kind, 0, hidden, 0, 0}) < 0) goto nomem;
        }
        for (int k = 0; k <= n; k++) p->argv[p->argc++] = pargv[i + (size_t)k];
        i += (size_t)n + 1;
    }
    while (i < argc) p->argv[p->argc++] = pargv[i++];
    return 0;
nomem:
    kgate_err_set(err, ENOMEM, "out of memory");
fail:
    kgl_pins_free(p);
    return -1;
}

/* The devices of the filesystems mounted where kgate runs, read from
 * /proc/self/mountinfo ("ID PARENT MAJ:MIN ...").  bwrap's --tmpfs makes a
 * new filesystem with a device of its own; a tmpfs in the sandbox with one
 * of these devices is a host directory bound there (a /tmp on tmpfs makes
 * the real home one, measured), not the empty one planned.  NULL when the
 * table cannot be read: the tmpfs checks then fail. */
static dev_t *host_devices(size_t *n)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f) return NULL;
    dev_t *v = NULL;
    size_t cap = 0;
    unsigned maj, min;
    int c;
    *n = 0;
    for (;;) {
        if (fscanf(f, "%*u %*u %u:%u", &maj, &min) != 2) break;
        if (*n == cap) {
            dev_t *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
            if (!nv) {
                free(v);
                v = NULL;
                break;
            }
            v = nv;
        }
        v[(*n)++] = makedev(maj, min);
        while ((c = getc(f)) != EOF && c != '\n') {}
        if (c == EOF) break;
    }
    if (v && ferror(f)) {
        free(v);
        v = NULL;
    }
    fclose(f);
    return v;
}

/* One destination inside the sandbox: NULL when it holds what was
 * planned, else what is wrong (static text).  What was planned is a mount
 * there (its root, not the same object reached inside some other mount):
 * that each planned mount is at its own destination is what shows that no
 * mount bwrap made went to a place a renamed name led it to. */
static const char *check_one(int root, const kgl_check *c, const dev_t *host, size_t n_host)
{
    int fd = open_nofollow(root, c->dest);
    if (fd < 0) return errno == ELOOP ? "a symbolic link is on its way" : "it cannot be reached";
    struct stat st;
    struct statfs fs;
    struct statvfs vfs;
    struct statx sx;
    const char *why = NULL;
    if (fstat(fd, &st) < 0 || fstatfs(fd, &fs) < 0 || fstatvfs(fd, &vfs) < 0 ||
        statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) < 0) {
        why = "it cannot be examined";
        goto out;
    }
    if (!(sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
        why = "this kernel cannot tell a mount from a directory (statx's "
              "STATX_ATTR_MOUNT_ROOT, Linux 5.8)";
        goto out;
    }
    if (!(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) {
        why = "no mount is there";
        goto out;
    }
    switch (c->kind) {
    case KGL_CHECK_NONE: break;
    case KGL_CHECK_OBJECT:
        if (st.st_dev != c->dev || st.st_ino != c->ino)
            why = "another object than the one kgate opened is there";
        break;
    case KGL_CHECK_DEVNULL:
        if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
            why = "the cover (/dev/null) is not there";
        break;
    case KGL_CHECK_TMPFS:
        if ((unsigned long)fs.f_type != TMPFS_MAGIC) {
            why = "the empty tmpfs is not there";
            break;
        }
        if (!host) {
            why = "kgate cannot read its own mount table to tell a new tmpfs "
                  "from a host one";
            break;
        }
        for (size_t i = 0; i < n_host; i++)
            if (host[i] == st.st_dev) {
                why = "a host directory is there, not a new empty tmpfs";
                break;
            }
        break;
    }
    if (!why && c->ro && !(vfs.f_flag & ST_RDONLY)) why = "it is not read-only";
out:
    close(fd);
    return why;
}

int kgl_pins_verify(const kgl_pins *p, pid_t sandbox, kgate_err *err)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/%ld/root", (long)sandbox);
    int root = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return kgate_err_set(err, errno,
                             "cannot look into the sandbox to check its mounts "
                             "(%s: %s); nothing was started",
                             proc, strerror(errno));
    size_t n_host = 0;
    dev_t *host = host_devices(&n_host);
    int r = 0;
    for (size_t i = 0; i < p->n_checks && r == 0; i++) {
        if (p->checks[i].hidden || p->checks[i].kind == KGL_CHECK_NONE) continue;
        const char *why = check_one(root, &p->checks[i], host, n_host);
        if (why)
            r = kgate_err_set(err, EBUSY,
                              "the sandbox's mount on %s is not the one kgate "
                              "checked (%s; something renamed it while the "
                              "sandbox was set up); nothing was started",
                              p->checks[i].dest, why);
    }
    free(host);
    close(root);
    return r;
}
