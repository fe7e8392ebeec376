/* auditrun.c: run ids and the end record of every launch.
 *
 * Every record of one `kgate run` carries the same run id.  A launch gets
 * an end record (exit status, duration) when its program has ended.  If
 * kgate itself is killed (SIGKILL, a crash, the machine), the run's end
 * record is written by the next `kgate run` instead, marked recovered.
 *
 * How the next kgate knows: before the launch record is written, kgate
 * creates ~/.kgate/runs/<id> and holds an exclusive flock on it until the
 * end record is written, then removes it.  The kernel drops the lock when
 * the process dies, however it dies, so a marker that can be locked is a
 * run whose kgate is gone; a pid could have been reused, a lock cannot.
 * The marker is made under a dot-name, locked, then renamed into place,
 * so no other kgate ever sees it unlocked while its kgate lives.  It holds
 * the backend, cwd and argv, NUL-separated, for the recovered record.
 * ~/.kgate is out of the box's reach, like the log.
 *
 * The dot-name itself is unlocked between its creation and its kgate's
 * flock, and open(2) cannot lock atomically on Linux (macOS's O_EXLOCK
 * can).  A recovering kgate that took such a name for dead removed it
 * under its maker, whose rename then failed and refused its run: one in
 * forty concurrent launches, about a third of the time.  So a dot-name is
 * left alone, not even locked, until it is KG_RUN_DOT_GRACE seconds old:
 * only a kgate that died before its launch record leaves one that old. */
#include "auditrun.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "strv.h"

#if defined(__APPLE__)
#include <sys/random.h>
#endif

int kg_run_id_new(char id[KG_RUN_ID_LEN])
{
    unsigned char b[16];
    if (getentropy(b, sizeof b) < 0) return -1;
    for (int i = 0; i < 16; i++) snprintf(id + 2 * i, 3, "%02x", b[i]);
    return 0;
}

static bool is_run_id(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f'))) return false;
    return n == KG_RUN_ID_LEN - 1;
}

struct kg_run_marker {
    int dfd; /* runs_dir */
    int fd; /* the marker, locked */
    char name[KG_RUN_ID_LEN];
};

static int open_runs_dir(const char *runs_dir, kg_error *err)
{
    if (mkdir(runs_dir, 0700) < 0 && errno != EEXIST)
        return kg_err_set(err, errno, "cannot create %s: %s", runs_dir, strerror(errno));
    int dfd = open(runs_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return kg_err_set(err, errno, "cannot open %s: %s", runs_dir, strerror(errno));
    return dfd;
}

/* backend \0 cwd \0 argv[0] \0 ... argv[n-1] \0 */
static int write_marker(int fd, const kg_audit_event *ev)
{
    UT_string *u;
    utstring_new(u);
    utstring_bincpy(u, ev->backend ? ev->backend : "", strlen(ev->backend ? ev->backend : "") + 1);
    utstring_bincpy(u, ev->cwd ? ev->cwd : "", strlen(ev->cwd ? ev->cwd : "") + 1);
    for (size_t i = 0; ev->argv && i < ev->argc; i++)
        utstring_bincpy(u, ev->argv[i], strlen(ev->argv[i]) + 1);
    ssize_t n = write(fd, utstring_body(u), utstring_len(u));
    int r = n == (ssize_t)utstring_len(u) ? 0 : -1;
    utstring_free(u);
    return r;
}

kg_run_marker *kg_run_marker_new(const char *runs_dir, const kg_audit_event *ev, kg_error *err)
{
    int dfd = open_runs_dir(runs_dir, err);
    if (dfd < 0) return NULL;
    char tmp[KG_RUN_ID_LEN + 1];
    snprintf(tmp, sizeof tmp, ".%s", ev->run);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || write_marker(fd, ev) < 0 ||
        renameat(dfd, tmp, dfd, ev->run) < 0) {
        kg_err_set(err, errno ? errno : EIO, "cannot create the run marker %s/%s: %s", runs_dir,
                   ev->run, strerror(errno));
        if (fd >= 0) {
            unlinkat(dfd, tmp, 0);
            close(fd);
        }
        close(dfd);
        return NULL;
    }
    kg_run_marker *m = calloc(1, sizeof *m);
    if (!m) kg_oom();
    m->dfd = dfd;
    m->fd = fd;
    snprintf(m->name, sizeof m->name, "%s", ev->run);
    return m;
}

void kg_run_marker_done(kg_run_marker *m)
{
    if (!m) return;
    unlinkat(m->dfd, m->name, 0);
    close(m->fd);
    close(m->dfd);
    free(m);
}

void kg_run_marker_keep(kg_run_marker *m)
{
    if (!m) return;
    close(m->fd);
    close(m->dfd);
    free(m);
}

/* The marker's contents as an end record's fields; argv and strings point
 * into buf. */
static void read_marker(int fd, UT_string *buf, kg_strv *fields)
{
    char chunk[4096];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0) utstring_bincpy(buf, chunk, (size_t)n);
    const char *p = utstring_body(buf), *end = p + utstring_len(buf);
    while (p < end) {
        kg_strv_push(fields, p);
        p += strlen(p) + 1;
    }
}

#define KG_RUN_DOT_GRACE 60

/* A dot-name young enough that its kgate may not have locked it yet (or
 * dated in the future: a clock set back). */
static bool dot_name_young(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0) return true;
    time_t now = time(NULL);
    return st.st_mtime > now - KG_RUN_DOT_GRACE;
}

/* One marker: 1 when its run's end was written now, 0 when its kgate
 * lives (or another kgate took it), -1 when the record failed. */
static int recover_one(int dfd, const char *name, kg_audit_log *log, kg_error *err)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    if (name[0] == '.' && dot_name_young(fd)) {
        close(fd); /* perhaps being made: its kgate locks it next */
        return 0;
    }
    struct stat st;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0 || fstat(fd, &st) < 0 || st.st_nlink == 0 ||
        !S_ISREG(st.st_mode)) {
        close(fd); /* alive, or already recovered by another kgate */
        return 0;
    }
    int r = 1;
    if (name[0] != '.') {
        UT_string *buf;
        utstring_new(buf);
        kg_strv *f = kg_strv_new();
        read_marker(fd, buf, f);
        size_t nf = kg_strv_len(f);
        const char **argv = calloc(nf > 2 ? nf - 2 : 1, sizeof *argv);
        if (!argv) kg_oom();
        for (size_t i = 2; i < nf; i++) argv[i - 2] = kg_strv_get(f, i);
        kg_audit_event ev = {
            .kind = "end",
            .run = name,
            .argv = argv,
            .argc = nf > 2 ? nf - 2 : 0,
            .backend = nf > 0 ? kg_strv_get(f, 0) : NULL,
            .cwd = nf > 1 ? kg_strv_get(f, 1) : "",
            .recovered = true,
            .reason = "kgate ended before the run did (killed, e.g. SIGKILL): exit status "
                      "and duration unknown; written by a later kgate",
        };
        if (kg_audit_append(log, &ev, err) < 0) r = -1;
        free(argv);
        kg_strv_free(f);
        utstring_free(buf);
    }
    /* A dot-name is a marker whose kgate died before its launch record:
     * no run to end, only the file to remove. */
    if (r >= 0) unlinkat(dfd, name, 0);
    close(fd);
    return name[0] == '.' ? 0 : r;
}

int kg_run_recover(const char *runs_dir, kg_audit_log *log, kg_error *err)
{
    int dfd = open(runs_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return 0; /* no run ever marked */
    int dup_fd = dup(dfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0) close(dup_fd);
        close(dfd);
        return 0;
    }
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (!is_run_id(n[0] == '.' ? n + 1 : n)) continue;
        int r = recover_one(dfd, n, log, err);
        if (r < 0) {
            count = -1;
            break;
        }
        count += r;
    }
    closedir(d);
    close(dfd);
    return count;
}
