/* audit.c: the JSON Lines audit log.
 *
 * One line per decision, appended with exactly one write(2) on an O_APPEND
 * descriptor: the kernel positions and writes each append under the inode
 * lock, so concurrent launches never interleave or overwrite each other's
 * lines, however long a command line is.  No stdio: a buffered line that
 * has not reached the kernel when the program starts is a line that may
 * never be written.  No fsync either: it would cost milliseconds on every
 * command, and a line in the page cache survives everything but a crash of
 * the machine itself.
 *
 * The log lives in the user's own ~/.kgate (0700) and is 0600.  It is never
 * followed through a symlink (O_NOFOLLOW) and must be a regular file: a
 * program that once had write access to ~/.kgate must not be able to point
 * the next audit line somewhere else, or block kgate on a FIFO.
 *
 * The chain (docs/output-and-audit.md "Tamper evidence"): every record
 * ends with "prev", the SHA-256 of the exact bytes of the record before
 * it, newline included.  The hash of the last record written is kept in
 * LOG.head, so that
 *   - a record is chained without reading the log (one pread of 65 bytes),
 *   - a log emptied or cut at the end is found by `kgate audit verify`
 *     (its last record is not the one the head names), and the next
 *     record still names the true predecessor, so the cut stays visible,
 *   - a log moved away by logrotate (kgate never rotates) is followed by a
 *     new file whose first record names the last hash of the old one.
 * Reading the head, appending the line and updating the head happen under
 * an exclusive flock on the head, so parallel launches never fork the
 * chain.  Without a head (deleted, or a log from before the chain) the
 * predecessor is read from the end of the log, or of LOG.1 when the log
 * is empty. */
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auditsink.h"
#include "json.h"
#include "os.h"

/* Creates the log's directory (one level: ~/.kgate) when it is missing. */
static int ensure_dir(const char *log_path, kg_error *err)
{
    char *copy = strdup(log_path);
    if (!copy) return kg_err_set(err, ENOMEM, "out of memory");
    const char *dir = dirname(copy);
    int r = 0;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        r = kg_err_set(err, errno, "cannot create %s: %s", dir, strerror(errno));
    free(copy);
    return r;
}

/* Opens path (created 0600) for flags, never through a symlink, and only
 * a regular file: a FIFO must not block kgate (O_NONBLOCK), nor a
 * directory or device take the records. */
static int open_regular(const char *path, int flags, const char *what, kg_error *err)
{
    int fd = open(path, flags | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
    if (fd < 0) {
        if (errno == ELOOP)
            return kg_err_set(err, ELOOP, "refusing %s %s: it is a symlink", what, path);
        return kg_err_set(err, errno, "cannot open %s %s: %s", what, path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return kg_err_set(err, EINVAL, "refusing %s %s: not a regular file", what, path);
    }
    return fd;
}

struct kg_audit_log {
    char *path;
    char *head_path;
    int fd; /* the log, O_APPEND (read too: its last record, see tail_prev) */
    int head_fd; /* LOG.head, read and rewritten in place; the chain's lock */
    kg_sink *sink; /* journald or syslog instead of the file; NULL: the file */
};

void kg_audit_close(kg_audit_log *log)
{
    if (!log) return;
    if (log->fd >= 0) close(log->fd);
    if (log->head_fd >= 0) close(log->head_fd);
    kg_sink_close(log->sink);
    free(log->path);
    free(log->head_path);
    free(log);
}

kg_audit_log *kg_audit_open_sink(const char *log_path, int sink, kg_error *err)
{
    if (sink == KG_SINK_FILE) return kg_audit_open(log_path, err);
    kg_audit_log *log = calloc(1, sizeof *log);
    if (!log) kg_oom();
    log->fd = log->head_fd = -1;
    log->sink = kg_sink_open((kg_audit_sink)sink, err);
    if (!log->sink) {
        kg_audit_close(log);
        return NULL;
    }
    return log;
}

kg_audit_log *kg_audit_open(const char *log_path, kg_error *err)
{
    if (!log_path || !*log_path) {
        kg_err_set(err, EINVAL, "no audit log path");
        return NULL;
    }
    if (ensure_dir(log_path, err) < 0) return NULL;
    kg_audit_log *log = calloc(1, sizeof *log);
    if (!log) kg_oom();
    log->fd = log->head_fd = -1;
    log->path = strdup(log_path);
    if (!log->path || asprintf(&log->head_path, "%s.head", log_path) < 0) kg_oom();
    log->fd = open_regular(log_path, O_RDWR | O_APPEND, "audit log", err);
    if (log->fd >= 0) log->head_fd = open_regular(log->head_path, O_RDWR, "audit log head", err);
    if (log->head_fd < 0) {
        kg_audit_close(log);
        return NULL;
    }
    return log;
}

void kg_audit_hash(const char *line, size_t len, char hex[KG_AUDIT_HASH_HEX])
{
    unsigned char md[32];
    kg_os_sha256(line, len, md);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

static bool is_hash(const char *s, size_t n)
{
    if (n != KG_AUDIT_HASH_HEX - 1) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

int kg_audit_tail_hash(int fd, char hex[KG_AUDIT_HASH_HEX], kg_error *err)
{
    struct stat st;
    if (fstat(fd, &st) < 0) return kg_err_set(err, errno, "stat: %s", strerror(errno));
    if (st.st_size == 0) return 0;
    /* Back from the end, 4 KiB at a time, to the newline before the last
     * record (the file's last byte is that record's own newline). */
    off_t end = st.st_size, start = 0, pos = end - 1;
    char buf[4096];
    while (pos > 0) {
        size_t want = pos > (off_t)sizeof buf ? sizeof buf : (size_t)pos;
        ssize_t n = pread(fd, buf, want, pos - (off_t)want);
        if (n != (ssize_t)want)
            return kg_err_set(err, n < 0 ? errno : EIO, "cannot read the log's end");
        size_t i = want; /* memrchr is not in macOS's libc */
        while (i > 0 && buf[i - 1] != '\n') i--;
        if (i > 0) {
            start = pos - (off_t)want + (off_t)i;
            break;
        }
        pos -= (off_t)want;
    }
    size_t len = (size_t)(end - start);
    char *line = malloc(len);
    if (!line) kg_oom();
    ssize_t n = pread(fd, line, len, start);
    if (n != (ssize_t)len) {
        free(line);
        return kg_err_set(err, n < 0 ? errno : EIO, "cannot read the log's last record");
    }
    kg_audit_hash(line, len, hex);
    free(line);
    return 1;
}

/* The predecessor's hash when the head has none: the end of the log, else
 * the end of the file logrotate moved it to, else none (all zeros: the
 * first record there ever was). */
static int tail_prev(const kg_audit_log *log, char hex[KG_AUDIT_HASH_HEX], kg_error *err)
{
    int r = kg_audit_tail_hash(log->fd, hex, err);
    if (r != 0) return r < 0 ? -1 : 0;
    char *old = NULL;
    if (asprintf(&old, "%s.1", log->path) < 0) kg_oom();
    int ofd = open(old, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    free(old);
    struct stat st;
    if (ofd >= 0 && fstat(ofd, &st) == 0 && S_ISREG(st.st_mode))
        r = kg_audit_tail_hash(ofd, hex, err);
    if (ofd >= 0) close(ofd);
    if (r < 0) return -1;
    if (r == 0) memset(hex, '0', KG_AUDIT_HASH_HEX - 1), hex[KG_AUDIT_HASH_HEX - 1] = '\0';
    return 0;
}

static int read_prev(const kg_audit_log *log, char hex[KG_AUDIT_HASH_HEX], kg_error *err)
{
    char buf[KG_AUDIT_HASH_HEX + 1];
    ssize_t n = pread(log->head_fd, buf, sizeof buf, 0);
    if (n < 0) return kg_err_set(err, errno, "cannot read %s: %s", log->head_path, strerror(errno));
    if (n == KG_AUDIT_HASH_HEX && buf[KG_AUDIT_HASH_HEX - 1] == '\n' &&
        is_hash(buf, KG_AUDIT_HASH_HEX - 1)) {
        memcpy(hex, buf, KG_AUDIT_HASH_HEX - 1);
        hex[KG_AUDIT_HASH_HEX - 1] = '\0';
        return 0;
    }
    return tail_prev(log, hex, err);
}

static void on_lock_alarm(int sig) { (void)sig; /* only to interrupt flock(2) */ }

/* The exclusive lock on the head, waited for at most 30 s: a process that
 * holds it for longer (none of kgate's does: it is held for one append,
 * tens of microseconds) must not hang every launch, and a launch that
 * cannot chain its record does not start.  flock(2) has no timeout, and
 * polling it starves writers when many wait (the kernel queues blocked
 * waiters; a poller loses to them): so a blocking flock, interrupted by
 * SIGALRM after 30 s.  The handler and any alarm of the caller are put
 * back; alarms are not inherited by the program (fork drops them). */
static int lock_head(const kg_audit_log *log, kg_error *err)
{
    if (flock(log->head_fd, LOCK_EX | LOCK_NB) == 0) return 0;
    if (errno != EWOULDBLOCK && errno != EINTR)
        return kg_err_set(err, errno, "cannot lock %s: %s", log->head_path, strerror(errno));
    struct sigaction sa = {.sa_handler = on_lock_alarm}, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, &old); /* no SA_RESTART: flock returns EINTR */
    unsigned before = alarm(30);
    time_t start = time(NULL);
    int r, e;
    do {
        r = flock(log->head_fd, LOCK_EX);
        e = errno;
    } while (r < 0 && e == EINTR && time(NULL) - start < 30);
    alarm(0);
    sigaction(SIGALRM, &old, NULL);
    if (before) alarm(before);
    if (r == 0) return 0;
    if (e == EINTR) return kg_err_set(err, ETIMEDOUT, "%s stayed locked for 30 s", log->head_path);
    return kg_err_set(err, e, "cannot lock %s: %s", log->head_path, strerror(e));
}

/* logrotate may have moved the log since it was opened (a run's net and
 * end records come minutes after its launch): records go to the file now
 * at the path, so that each file's chain is whole. */
static int follow_rotation(kg_audit_log *log, kg_error *err)
{
    struct stat cur, at;
    if (fstat(log->fd, &cur) < 0) return kg_err_set(err, errno, "stat: %s", strerror(errno));
    if (lstat(log->path, &at) == 0 && at.st_dev == cur.st_dev && at.st_ino == cur.st_ino) return 0;
    int fd = open_regular(log->path, O_RDWR | O_APPEND, "audit log", err);
    if (fd < 0) return -1;
    close(log->fd);
    log->fd = fd;
    return 0;
}

int kg_audit_write_line(int fd, const char *line, size_t len, kg_error *err)
{
    ssize_t n;
    do {
        n = write(fd, line, len);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return kg_err_set(err, errno, "cannot write audit line: %s", strerror(errno));
    if ((size_t)n != len)
        return kg_err_set(err, EIO, "short write of audit line (%zd of %zu bytes)", n, len);
    return 0;
}

/* Under the lock: the predecessor, the line, then the head. */
static int append_locked(kg_audit_log *log, const kg_audit_event *ev, kg_error *err)
{
    char prev[KG_AUDIT_HASH_HEX], next[KG_AUDIT_HASH_HEX + 1];
    if (follow_rotation(log, err) < 0 || read_prev(log, prev, err) < 0) return -1;
    kg_audit_event chained = *ev;
    chained.prev = prev;
    UT_string *line;
    utstring_new(line);
    kg_audit_format(&chained, line);
    int r = kg_audit_write_line(log->fd, utstring_body(line), utstring_len(line), err);
    if (r == 0) {
        kg_audit_hash(utstring_body(line), utstring_len(line), next);
        next[KG_AUDIT_HASH_HEX - 1] = '\n';
        /* Same length every time: rewritten in place, never truncated. */
        errno = 0;
        if (pwrite(log->head_fd, next, KG_AUDIT_HASH_HEX, 0) != KG_AUDIT_HASH_HEX)
            r = kg_err_set(err, errno ? errno : EIO, "cannot update %s: %s", log->head_path,
                           strerror(errno));
    }
    utstring_free(line);
    return r;
}

int kg_audit_append(kg_audit_log *log, const kg_audit_event *ev, kg_error *err)
{
    /* The journal and syslog keep records out of the user's reach: the
     * chain is the file's. */
    if (log->sink) return kg_sink_send(log->sink, ev, err);
    if (lock_head(log, err) < 0) return -1;
    int r = append_locked(log, ev, err);
    flock(log->head_fd, LOCK_UN);
    return r;
}

int kg_audit_write(const char *log_path, const kg_audit_event *ev, kg_error *err)
{
    return kg_audit_write_sink(log_path, KG_SINK_FILE, ev, err);
}

int kg_audit_write_sink(const char *log_path, int sink, const kg_audit_event *ev, kg_error *err)
{
    kg_audit_log *log = kg_audit_open_sink(log_path, sink, err);
    if (!log) return -1;
    int r = kg_audit_append(log, ev, err);
    if (r < 0) kg_err_wrap(err, "%s", log_path);
    kg_audit_close(log);
    return r;
}
