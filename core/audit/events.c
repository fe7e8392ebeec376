/* events.c: the refusal channel, see events.h. */
#include "events.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"

/* How long the rest of an object that was half written may take before the
 * channel is given up: a line cut in two would make the reader's next
 * parse fail, so the rest is worth a short wait, never a hung run. */
#define KG_EVENTS_REST_MS 200

struct kg_events {
    int fd;
    bool broken; /* a half-written object could not be finished */
    char *run_id;
    kg_strv *argv;
    char *backend;
    size_t sent, dropped, blocked;
};

static int parse_fd(const char *text)
{
    if (!text || !*text) return -1;
    long v = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
        if (v > INT_MAX) return -1;
    }
    /* A leading zero is not a typo kgate guesses about. */
    if (text[0] == '0' && text[1]) return -1;
    return (int)v;
}

/* -1 with err when fd is, by its object and not its number, one of the
 * program's standard streams: a copy of one (3>&1), the same pipe,
 * socket, terminal or file opened again (3>>log 1>>log).  The program
 * writes there too (and reads, for stdin), so its lines would mix with
 * the channel's and could pass for them.  The device and inode name the
 * object: a pipe's two ends, a socket, a terminal and a file each have
 * one.  A standard stream that is closed is nobody's. */
static int same_as_standard(int fd, kg_error *err)
{
    static const char *const name[] = {"input", "output", "error"};
    struct stat ev, st;
    if (fstat(fd, &ev) < 0)
        return kg_err_set(err, errno, "events descriptor %d: %s", fd, strerror(errno));
    for (int s = 0; s <= 2; s++)
        if (fstat(s, &st) == 0 && st.st_dev == ev.st_dev && st.st_ino == ev.st_ino)
            return kg_err_set(err, EINVAL,
                              "events descriptor %d is the program's standard %s (descriptor "
                              "%d) under another number; give the channel a pipe or file of "
                              "its own",
                              fd, name[s], s);
    return 0;
}

kg_events *kg_events_open(const char *fd_text, kg_error *err)
{
    int fd = parse_fd(fd_text);
    if (fd < 0) {
        kg_err_set(err, EINVAL, "events descriptor '%s' is not a descriptor number",
                   fd_text ? fd_text : "");
        return NULL;
    }
    /* 0, 1 and 2 are the program's: objects there would mix with its
     * output, and a program could print lines that look like ours. */
    if (fd <= 2) {
        kg_err_set(err, EINVAL,
                   "events descriptor %d is one of the program's standard "
                   "streams; give one above 2",
                   fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0) {
        kg_err_set(err, errno, "events descriptor %d is not open", fd);
        return NULL;
    }
    if ((fl & O_ACCMODE) == O_RDONLY) {
        kg_err_set(err, EBADF, "events descriptor %d is not open for writing", fd);
        return NULL;
    }
    if (same_as_standard(fd, err) < 0) return NULL;
    /* Close-on-exec (prepare_fds did it for every inherited descriptor;
     * said again here, where it matters): the program inside must not be
     * able to write objects that look like kgate's. */
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        kg_err_set(err, errno, "events descriptor %d: %s", fd, strerror(errno));
        return NULL;
    }
    kg_events *e = calloc(1, sizeof *e);
    if (!e) kg_oom();
    e->fd = fd;
    e->argv = kg_strv_new();
    return e;
}

void kg_events_close(kg_events *e)
{
    if (!e) return;
    close(e->fd);
    free(e->run_id);
    free(e->backend);
    kg_strv_free(e->argv);
    free(e);
}

/* Waits for room for the rest of a half-written object, within the budget. */
static bool finish_write(int fd, const char *p, size_t left)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (left > 0) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long spent = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (spent >= KG_EVENTS_REST_MS) return false;
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        if (poll(&pfd, 1, (int)(KG_EVENTS_REST_MS - spent)) < 0 && errno != EINTR) return false;
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
        if (n > 0) {
            p += n;
            left -= (size_t)n;
        }
    }
    return true;
}

/* One object, one write where the reader keeps up.  Dropped (counted) when
 * the reader is behind; the channel given up when an object was cut. */
static void send_line(kg_events *e, UT_string *line)
{
    if (e->broken) {
        e->dropped++;
        return;
    }
    utstring_printf(line, "}\n");
    const char *p = utstring_body(line);
    size_t len = utstring_len(line);
    ssize_t n;
    do n = write(e->fd, p, len);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        e->dropped++;
        /* EPIPE and the like: nobody is reading; stop trying. */
        if (errno != EAGAIN) e->broken = true;
        return;
    }
    if ((size_t)n < len && !finish_write(e->fd, p + n, len - (size_t)n)) {
        e->broken = true;
        e->dropped++;
        return;
    }
    e->sent++;
}

static void put_str(UT_string *out, const char *key, const char *value)
{
    utstring_printf(out, ",\"%s\":", key);
    if (value)
        kg_json_str(out, value);
    else
        utstring_printf(out, "null");
}

/* {"type":T,"kgate_events":1 and the run's common fields. */
static UT_string *start(const kg_events *e, const char *type)
{
    UT_string *s;
    utstring_new(s);
    utstring_printf(s, "{\"type\":\"%s\",\"kgate_events\":%d", type, KG_EVENTS_VERSION);
    if (e->run_id) put_str(s, "run", e->run_id);
    utstring_printf(s, ",\"time\":");
    kg_json_now(s);
    return s;
}

void kg_events_begin(kg_events *e, const char *run_id, const char *const *argv, size_t argc)
{
    if (!e) return;
    free(e->run_id);
    e->run_id = strdup(run_id);
    if (!e->run_id) kg_oom();
    for (size_t i = 0; i < argc; i++) kg_strv_push(e->argv, argv[i]);
    UT_string *s = start(e, "hello");
    /* sandbox-runtime's hello carries its protocol version; so does ours,
     * as kgate_events, on every object. */
    utstring_printf(s, ",\"protocol_version\":1,\"command\":");
    kg_json_strv(s, e->argv);
    send_line(e, s);
    utstring_free(s);
}

void kg_events_set_backend(kg_events *e, const char *backend)
{
    if (!e || !backend) return;
    free(e->backend);
    e->backend = strdup(backend);
    if (!e->backend) kg_oom();
}

void kg_events_blocked(kg_events *e, const kg_event_block *b)
{
    if (!e) return;
    e->blocked++;
    UT_string *s = start(e, "blocked");
    put_str(s, "code", b->code);
    utstring_printf(s, ",\"resource\":{\"type\":");
    kg_json_str(s, b->resource_type);
    if (b->host) put_str(s, "host", b->host);
    if (b->addr) put_str(s, "addr", b->addr);
    if (b->port) utstring_printf(s, ",\"port\":%u", b->port);
    if (b->path) put_str(s, "path", b->path);
    utstring_printf(s, "}");
    put_str(s, "operation", b->operation);
    put_str(s, "description", b->description);
    utstring_printf(s, ",\"rule\":{\"key\":");
    kg_json_str(s, b->rule_key);
    put_str(s, "entry", b->rule_entry);
    utstring_printf(s, "},\"command\":");
    kg_json_strv(s, e->argv);
    send_line(e, s);
    utstring_free(s);
}

void kg_events_refused(kg_events *e, const char *code, int status, const char *reason)
{
    if (!e) return;
    UT_string *s = start(e, "refused");
    put_str(s, "code", code);
    utstring_printf(s, ",\"exit_status\":%d", status);
    put_str(s, "description", reason);
    utstring_printf(s, ",\"command\":");
    kg_json_strv(s, e->argv);
    send_line(e, s);
    utstring_free(s);
}

void kg_events_summary(kg_events *e, bool started, int status, size_t masked)
{
    if (!e) return;
    UT_string *s = start(e, "summary");
    utstring_printf(s, ",\"started\":%s,\"exit_status\":%d", started ? "true" : "false", status);
    put_str(s, "backend", e->backend);
    utstring_printf(s, ",\"blocked\":%zu,\"masked\":%zu", e->blocked, masked);
    /* Counted before this object: the summary cannot count itself. */
    utstring_printf(s, ",\"dropped\":%zu,\"command\":", e->dropped);
    kg_json_strv(s, e->argv);
    send_line(e, s);
    utstring_free(s);
}

size_t kg_events_sent(const kg_events *e) { return e ? e->sent : 0; }
size_t kg_events_dropped(const kg_events *e) { return e ? e->dropped : 0; }
