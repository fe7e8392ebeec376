/* auditsink.c: audit records into the journal or syslog (auditsink.h).
 *
 * The record is the same JSON object as in the file (audit.c's format,
 * without prev: the chain is the file's; the journal and a syslog server
 * keep records where the user's programs cannot rewrite them).
 *
 * journald: sd_journal_sendv, one entry per record, with native fields:
 *   MESSAGE          "kgate <kind>: <command line>" (for journalctl)
 *   PRIORITY         6 (info) for launch and end, 5 (notice) otherwise
 *   SYSLOG_IDENTIFIER kgate
 *   KGATE_KIND, KGATE_RUN, KGATE_CWD, KGATE_BACKEND, KGATE_NETWORK,
 *   KGATE_VERDICT, KGATE_NAME, KGATE_ADDR, KGATE_PORT, KGATE_REASON,
 *   KGATE_EXIT, KGATE_DURATION_MS, KGATE_RECOVERED: each when it applies;
 *   KGATE_ARGV       the argv as a JSON array
 *   KGATE_RECORD     the whole record as JSON
 * sd_journal_sendv returns an error when journald does not take the entry
 * (no socket, a full queue is waited for by the kernel): fail closed.
 *
 * syslog: RFC 5424 over the datagram socket /dev/log, written by kgate
 * itself: libc's syslog(3) drops a message it cannot send and says
 * nothing, which a fail-closed audit cannot accept.
 *   <PRI>1 TIMESTAMP HOSTNAME kgate PID KIND - JSON
 * PRI is facility authpriv (10) with severity info (6) or notice (5); no
 * structured data (the JSON message carries every field). */
#include "auditsink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "kgate-config.h"

/* macOS has no MSG_NOSIGNAL; a datagram to a unix socket does not raise
 * SIGPIPE there, and kgate handles SIGPIPE anyway (supervise.c). */
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

#ifdef KGATE_HAVE_LIBSYSTEMD
#include <dlfcn.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>
#endif

const char *kg_audit_sink_name(kg_audit_sink s)
{
    return s == KG_SINK_JOURNALD ? "journald" : s == KG_SINK_SYSLOG ? "syslog" : "file";
}

bool kg_audit_sink_journald_built(void)
{
#ifdef KGATE_HAVE_LIBSYSTEMD
    return true;
#else
    return false;
#endif
}

#ifdef KGATE_HAVE_LIBSYSTEMD
static int journal_there(kg_error *err);
#endif

struct kg_sink {
    kg_audit_sink kind;
    int fd; /* syslog: connected to /dev/log */
};

#define SYSLOG_PATH "/dev/log"

kg_sink *kg_sink_open(kg_audit_sink sink, kg_error *err)
{
    if (sink == KG_SINK_JOURNALD && !kg_audit_sink_journald_built()) {
        kg_err_set(err, ENOTSUP,
                   "audit_sink journald: this kgate was built without "
                   "libsystemd");
        return NULL;
    }
#ifdef KGATE_HAVE_LIBSYSTEMD
    if (sink == KG_SINK_JOURNALD && journal_there(err) < 0) return NULL;
#endif
    int fd = -1;
    if (sink == KG_SINK_SYSLOG) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof a.sun_path, "%s", SYSLOG_PATH);
        /* macOS has no SOCK_CLOEXEC: kgate has one thread, so no exec
         * can come between socket() and fcntl(). */
        fd = socket(AF_UNIX, SOCK_DGRAM, 0);
        if (fd >= 0) fcntl(fd, F_SETFD, FD_CLOEXEC);
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
            kg_err_set(err, errno, "audit_sink syslog: cannot connect to %s: %s", SYSLOG_PATH,
                       strerror(errno));
            if (fd >= 0) close(fd);
            return NULL;
        }
    }
    kg_sink *s = calloc(1, sizeof *s);
    if (!s) kg_oom();
    s->kind = sink;
    s->fd = fd;
    return s;
}

void kg_sink_close(kg_sink *s)
{
    if (!s) return;
    if (s->fd >= 0) close(s->fd);
    free(s);
}

static int severity(const kg_audit_event *ev)
{
    return strcmp(ev->kind, "launch") == 0 || strcmp(ev->kind, "end") == 0 ? 6 : 5;
}

/* The JSON record, without prev and newline. */
static void record_json(const kg_audit_event *ev, UT_string *out)
{
    kg_audit_event e = *ev;
    e.prev = NULL;
    kg_audit_format(&e, out);
    if (utstring_len(out) > 0) {
        out->i--; /* the newline */
        out->d[out->i] = '\0';
    }
}

static int send_syslog(kg_sink *s, const kg_audit_event *ev, kg_error *err)
{
    UT_string *msg;
    utstring_new(msg);
    struct timespec ts;
    struct tm tm;
    char when[40], host[256] = "-";
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    if (gethostname(host, sizeof host - 1) < 0 || !host[0]) snprintf(host, sizeof host, "-");
    /* HOSTNAME and MSGID are PRINTUSASCII without spaces (RFC 5424 6.2). */
    for (char *h = host; *h; h++)
        if (*h <= ' ' || *h > '~') *h = '_';
    utstring_printf(msg, "<%d>1 %s.%03ldZ %.255s kgate %ld %.32s - ", 10 * 8 + severity(ev), when,
                    ts.tv_nsec / 1000000, host, (long)getpid(), ev->kind);
    record_json(ev, msg);
    ssize_t n = send(s->fd, utstring_body(msg), utstring_len(msg), MSG_NOSIGNAL);
    int r = 0;
    if (n < 0)
        r = kg_err_set(err, errno, "audit_sink syslog: %s: %s", SYSLOG_PATH, strerror(errno));
    else if ((size_t)n != utstring_len(msg))
        r = kg_err_set(err, EIO, "audit_sink syslog: short send");
    utstring_free(msg);
    return r;
}

#ifdef KGATE_HAVE_LIBSYSTEMD
/* "NAME=value" for sd_journal_sendv; value's bytes as they are (the
 * journal takes binary values). */
static void field(UT_array *iov, UT_string **store, size_t *n, const char *name, const char *value,
                  size_t len)
{
    UT_string *u;
    utstring_new(u);
    utstring_printf(u, "%s=", name);
    utstring_bincpy(u, value, len);
    store[(*n)++] = u;
    struct iovec v = {utstring_body(u), utstring_len(u)};
    utarray_push_back(iov, &v);
}

static void sfield(UT_array *iov, UT_string **store, size_t *n, const char *name, const char *value)
{
    if (value && *value) field(iov, store, n, name, value, strlen(value));
}

/* sd_journal_sendv returns success when the journal's socket is missing
 * ("fail silently if the journal is not available"): kgate looks first,
 * before every record, so that no record is lost without a refusal. */
#define JOURNAL_SOCKET "/run/systemd/journal/socket"

static int journal_there(kg_error *err)
{
    struct stat st;
    if (stat(JOURNAL_SOCKET, &st) == 0 && S_ISSOCK(st.st_mode)) return 0;
    return kg_err_set(err, ENOENT,
                      "audit_sink journald: %s is not there: journald "
                      "is not running",
                      JOURNAL_SOCKET);
}

/* libsystemd is loaded here, the first time a record goes to the journal,
 * not linked: linked, every `kgate run` mapped it and the five libraries
 * behind it at exec time (several ms of the launch, docs/performance.md),
 * whichever sink it used.  Only the header is used at build time; the
 * static assertion checks the pointer's type against the header's
 * prototype (__typeof__ is unevaluated: no reference to the symbol). */
typedef int (*journal_sendv_fn)(const struct iovec *iov, int n);
_Static_assert(__builtin_types_compatible_p(__typeof__(&sd_journal_sendv), journal_sendv_fn),
               "sd_journal_sendv is not int (const struct iovec *, int)");

static journal_sendv_fn journal_sendv(kg_error *err)
{
    static journal_sendv_fn fn;
    if (fn) return fn;
    void *lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        kg_err_set(err, ENOENT, "audit_sink journald: cannot load libsystemd.so.0: %s",
                   why ? why : "unknown error");
        return NULL;
    }
    void *sym = dlsym(lib, "sd_journal_sendv");
    if (!sym) {
        kg_err_set(err, ENOENT, "audit_sink journald: libsystemd.so.0 has no sd_journal_sendv");
        dlclose(lib);
        return NULL;
    }
    /* POSIX: a dlsym result converts to a function pointer (the
     * memcpy keeps -pedantic quiet about object-to-function casts). */
    memcpy(&fn, &sym, sizeof fn);
    return fn;
}

static int send_journal(const kg_audit_event *ev, kg_error *err)
{
    if (journal_there(err) < 0) return -1;
    journal_sendv_fn sendv = journal_sendv(err);
    if (!sendv) return -1;
    static const UT_icd iov_icd = {sizeof(struct iovec), NULL, NULL, NULL};
    UT_array *iov;
    utarray_new(iov, &iov_icd);
    UT_string *store[32];
    size_t n = 0;
    char num[64];
    UT_string *tmp;
    utstring_new(tmp);
    utstring_printf(tmp, "kgate %s:", ev->kind);
    for (size_t i = 0; ev->argv && i < ev->argc; i++) utstring_printf(tmp, " %s", ev->argv[i]);
    field(iov, store, &n, "MESSAGE", utstring_body(tmp), utstring_len(tmp));
    snprintf(num, sizeof num, "%d", severity(ev));
    sfield(iov, store, &n, "PRIORITY", num);
    sfield(iov, store, &n, "SYSLOG_IDENTIFIER", "kgate");
    sfield(iov, store, &n, "KGATE_KIND", ev->kind);
    sfield(iov, store, &n, "KGATE_RUN", ev->run);
    sfield(iov, store, &n, "KGATE_CWD", ev->cwd);
    sfield(iov, store, &n, "KGATE_BACKEND", ev->backend);
    sfield(iov, store, &n, "KGATE_NETWORK", ev->network);
    sfield(iov, store, &n, "KGATE_REASON", ev->reason);
    if (ev->verdict) {
        sfield(iov, store, &n, "KGATE_VERDICT", ev->verdict);
        sfield(iov, store, &n, "KGATE_NAME", ev->name);
        sfield(iov, store, &n, "KGATE_ADDR", ev->addr);
        snprintf(num, sizeof num, "%u", ev->port);
        sfield(iov, store, &n, "KGATE_PORT", num);
    }
    if (ev->has_exit) {
        snprintf(num, sizeof num, "%d", ev->exit_status);
        sfield(iov, store, &n, "KGATE_EXIT", num);
        snprintf(num, sizeof num, "%lld", ev->duration_ms);
        sfield(iov, store, &n, "KGATE_DURATION_MS", num);
    }
    if (ev->recovered) sfield(iov, store, &n, "KGATE_RECOVERED", "true");
    utstring_clear(tmp);
    kg_json_strlist(tmp, ev->argv, ev->argv ? ev->argc : 0);
    field(iov, store, &n, "KGATE_ARGV", utstring_body(tmp), utstring_len(tmp));
    utstring_clear(tmp);
    record_json(ev, tmp);
    field(iov, store, &n, "KGATE_RECORD", utstring_body(tmp), utstring_len(tmp));
    utstring_free(tmp);
    int r = sendv((const struct iovec *)utarray_front(iov), (int)utarray_len(iov));
    for (size_t i = 0; i < n; i++) utstring_free(store[i]);
    utarray_free(iov);
    if (r < 0)
        return kg_err_set(err, -r,
                          "audit_sink journald: the journal did not take the "
                          "record: %s",
                          strerror(-r));
    return 0;
}
#endif

int kg_sink_send(kg_sink *s, const kg_audit_event *ev, kg_error *err)
{
    if (s->kind == KG_SINK_SYSLOG) return send_syslog(s, ev, err);
#ifdef KGATE_HAVE_LIBSYSTEMD
    if (s->kind == KG_SINK_JOURNALD) return send_journal(ev, err);
#endif
    return kg_err_set(err, ENOTSUP, "audit_sink %s: not available", kg_audit_sink_name(s->kind));
}
