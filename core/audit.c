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
 * the next audit line somewhere else, or block kgate on a FIFO. */
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"

static void format_time(UT_string *out)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char buf[64];
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    utstring_printf(out, "\"%s.%03ldZ\"", buf, ts.tv_nsec / 1000000);
}

static void opt_str(UT_string *out, const char *key, const char *value)
{
    if (!value || !*value) return;
    utstring_printf(out, ",\"%s\":", key);
    kg_json_str(out, value);
}

static void opt_strv(UT_string *out, const char *key, const kg_strv *v)
{
    if (kg_strv_len(v) == 0) return;
    utstring_printf(out, ",\"%s\":", key);
    kg_json_strv(out, v);
}

void kg_audit_format(const kg_audit_event *ev, UT_string *out)
{
    utstring_bincpy(out, "{\"time\":", 8);
    format_time(out);
    utstring_bincpy(out, ",\"kind\":", 8);
    kg_json_str(out, ev->kind);
    utstring_bincpy(out, ",\"argv\":", 8);
    kg_json_strlist(out, ev->argv, ev->argv ? ev->argc : 0);
    utstring_bincpy(out, ",\"cwd\":", 7);
    kg_json_str(out, ev->cwd);
    utstring_printf(out, ",\"pid\":%ld", (long)getpid());
    opt_str(out, "backend", ev->backend);
    opt_str(out, "network", ev->network);
    if (ev->verdict) {
        opt_str(out, "verdict", ev->verdict);
        opt_str(out, "name", ev->name);
        opt_str(out, "addr", ev->addr);
        utstring_printf(out, ",\"port\":%u", ev->port);
    }
    opt_str(out, "reason", ev->reason);
    opt_strv(out, "allow_paths", ev->allow_paths);
    opt_strv(out, "allow_hosts", ev->allow_hosts);
    opt_strv(out, "withheld_env", ev->withheld_env);
    utstring_bincpy(out, "}\n", 2);
}

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

int kg_audit_open(const char *log_path, kg_error *err)
{
    if (!log_path || !*log_path)
        return kg_err_set(err, EINVAL, "no audit log path");
    if (ensure_dir(log_path, err) < 0) return -1;
    int fd = open(log_path,
                  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
                      O_NONBLOCK | O_NOCTTY,
                  0600);
    if (fd < 0) {
        if (errno == ELOOP)
            return kg_err_set(err, ELOOP,
                              "refusing audit log %s: it is a symlink", log_path);
        return kg_err_set(err, errno, "cannot open audit log %s: %s", log_path,
                          strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return kg_err_set(err, EINVAL,
                          "refusing audit log %s: not a regular file", log_path);
    }
    return fd;
}

int kg_audit_write_fd(int fd, const kg_audit_event *ev, kg_error *err)
{
    UT_string *line;
    utstring_new(line);
    kg_audit_format(ev, line);
    size_t len = utstring_len(line);
    ssize_t n;
    do {
        n = write(fd, utstring_body(line), len);
    } while (n < 0 && errno == EINTR);
    int r = 0;
    if (n < 0)
        r = kg_err_set(err, errno, "cannot write audit line: %s", strerror(errno));
    else if ((size_t)n != len)
        /* A second write could interleave with another launch's line: a
         * short write is a failure, never something to complete. */
        r = kg_err_set(err, EIO, "short write of audit line (%zd of %zu bytes)",
                       n, len);
    utstring_free(line);
    return r;
}

int kg_audit_write(const char *log_path, const kg_audit_event *ev,
                   kg_error *err)
{
    int fd = kg_audit_open(log_path, err);
    if (fd < 0) return -1;
    int r = kg_audit_write_fd(fd, ev, err);
    if (r < 0) kg_err_wrap(err, "%s", log_path);
    close(fd);
    return r;
}
