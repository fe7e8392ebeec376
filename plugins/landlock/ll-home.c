/* ll-home.c: what the Landlock box's HOME holds.
 *
 * Nothing can be mounted here, so HOME is an empty directory of the run,
 * $TMPDIR/home (ll-launch.c), where bubblewrap puts a tmpfs over the real
 * home at its own path.  Two things make it the same home the bubblewrap
 * box shows:
 *
 *   - the files the core made for the box (kgate_policy.home_files: the
 *     .gitconfig with the user's identity and the excludes that keep the
 *     placeholders out of git add) are copied in, writable like the rest
 *     of the run's HOME and thrown away with it;
 *   - a read_paths or allow_paths entry under the real home (~/.gitconfig,
 *     ~/.cargo) appears at the same place below HOME as a symbolic link to
 *     the real path, which the program's rules already grant: under
 *     bubblewrap, ~/.gitconfig given back is the real file at the same
 *     path, and here it was out of git's sight.  Made after the copies, so
 *     the user's own file given back wins over the core's, as under
 *     bubblewrap where its bind comes later. */
#include "ll-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directories of rel below home, made as needed (0700). */
static int make_parents(const char *home, const char *rel, kgate_err *err)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s/%s", home, rel) >= (int)sizeof p)
        return kgate_err_set(err, ENAMETOOLONG, "HOME path too long: %s/%s", home, rel);
    for (char *s = p + strlen(home) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        int r = mkdir(p, 0700);
        *s = '/';
        if (r < 0 && errno != EEXIST)
            return kgate_err_set(err, errno, "cannot make %s in the box's HOME: %s", rel,
                                 strerror(errno));
    }
    return 0;
}

static int copy_file(const char *from, const char *to, kgate_err *err)
{
    int in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    char buf[8192];
    ssize_t n = 0;
    int e = out < 0 ? errno : 0;
    while (!e && (n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        ssize_t w = n < 0 ? -1 : write(out, buf, (size_t)n);
        if (w != n) e = w < 0 ? errno : EIO; /* a short write: a full disk */
    }
    if (in >= 0) close(in);
    if (out >= 0 && close(out) < 0 && !e) e = errno;
    if (!e) return 0;
    return kgate_err_set(err, e, "cannot copy %s into the box's HOME: %s", from, strerror(e));
}

static int copy_home_files(const kgate_policy *pol, const char *home, kgate_err *err)
{
    if (!KGATE_HAS_FIELD(pol, kgate_policy, n_home_files)) return 0;
    for (size_t i = 0; i < pol->n_home_files; i++) {
        const kgate_home_file *f = &pol->home_files[i];
        char to[4096];
        if (!f->name || !f->source || f->name[0] == '/' || strstr(f->name, "..")) continue;
        if (snprintf(to, sizeof to, "%s/%s", home, f->name) >= (int)sizeof to ||
            make_parents(home, f->name, err) < 0 || copy_file(f->source, to, err) < 0)
            return err->msg[0] ? -1 : kgate_err_set(err, ENAMETOOLONG, "HOME path too long");
    }
    return 0;
}

static int link_list(const kgate_policy *pol, const kgate_strlist *l, const char *home,
                     kgate_err *err)
{
    size_t hl = pol->home ? strlen(pol->home) : 0;
    for (size_t i = 0; i < l->n; i++) {
        const char *p = l->v[i];
        char at[4096];
        if (!hl || strcmp(p, pol->home) == 0 || !kgate_path_under(p, pol->home)) continue;
        const char *rel = p + hl + 1;
        if (snprintf(at, sizeof at, "%s/%s", home, rel) >= (int)sizeof at) continue;
        if (make_parents(home, rel, err) < 0) return -1;
        unlink(at); /* the core's file of the same name: the user's wins */
        if (symlink(p, at) < 0 && errno != EEXIST)
            return kgate_err_set(err, errno, "cannot show %s in the box's HOME: %s", p,
                                 strerror(errno));
    }
    return 0;
}

int ll_home_fill(const kgate_policy *pol, const char *home, kgate_err *err)
{
    if (copy_home_files(pol, home, err) < 0) return -1;
    if (link_list(pol, &pol->read_paths, home, err) < 0) return -1;
    return link_list(pol, &pol->allow_paths, home, err);
}
