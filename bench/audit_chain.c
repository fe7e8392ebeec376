/* audit_chain.c: what the hash chain costs per audit record.
 *
 * A launch record as `kgate run` writes one, into a log on the machine's
 * /tmp, three ways, alternating:
 *   plain    open(O_APPEND) + format + one write + close: the log before
 *            the chain (what each record cost until issue 31)
 *   chained  kg_audit_write: open log and head, flock, read the head,
 *            format, SHA-256, one write, rewrite the head, unlock, close
 *   append   kg_audit_append on an already open log (the net and end
 *            records of a run, which reuse the launch's descriptors)
 * The difference plain -> chained is what the chain adds to a launch.
 *
 *   ninja -C build bench/audit_chain && build/bench/audit_chain [N] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "bench-stats.h"

static const char *argv_[] = {"make", "-j2", "CFLAGS=-O2 -g", "all", "check"};

static kg_audit_event event(kg_strv *withheld)
{
    return (kg_audit_event){.kind = "launch",
                            .argv = argv_,
                            .argc = 5,
                            .cwd = "/home/u/projects/kgate",
                            .run = "0123456789abcdef0123456789abcdef",
                            .backend = "bubblewrap",
                            .network = "off",
                            .withheld_env = withheld};
}

static int plain(const char *path, const kg_audit_event *ev)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return -1;
    UT_string *line;
    utstring_new(line);
    kg_audit_format(ev, line);
    int r = kg_audit_write_line(fd, utstring_body(line), utstring_len(line), NULL);
    utstring_free(line);
    close(fd);
    return r;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atoi(argv[1]) : 20000;
    if (n < 10) n = 10;
    char dir[] = "/tmp/kg-bench-audit-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char p_plain[128], p_chain[128], p_app[128];
    snprintf(p_plain, sizeof p_plain, "%s/plain.log", dir);
    snprintf(p_chain, sizeof p_chain, "%s/chain.log", dir);
    snprintf(p_app, sizeof p_app, "%s/append.log", dir);
    kg_strv *withheld = kg_strv_new();
    kg_strv_push(withheld, "GITHUB_TOKEN");
    kg_strv_push(withheld, "OPENAI_API_KEY");
    kg_audit_event ev = event(withheld);
    double *tp = calloc(n, sizeof(double)), *tc = calloc(n, sizeof(double)),
           *ta = calloc(n, sizeof(double));
    /* The first chained record of a process, as in every `kgate run`:
     * what the hash library costs to start, on top of the record.  The
     * time zone is loaded first: both kinds of record pay for it once per
     * process (the first localtime_r reads /etc/localtime), and whichever
     * came first was charged for it. */
    tzset();
    double f0 = kgb_now_us();
    if (kg_audit_write(p_chain, &ev, NULL) < 0) return 1;
    double f1 = kgb_now_us();
    if (plain(p_plain, &ev) < 0) return 1;
    double f2 = kgb_now_us();
    printf("audit first record of the process: chained %.1f us, plain %.1f us\n", f1 - f0, f2 - f1);
    kg_audit_log *log = kg_audit_open(p_app, NULL);
    if (!tp || !tc || !ta || !log) return 1;
    for (size_t i = 0; i < n; i++) {
        double t0 = kgb_now_us();
        if (plain(p_plain, &ev) < 0) return 1;
        double t1 = kgb_now_us();
        if (kg_audit_write(p_chain, &ev, NULL) < 0) return 1;
        double t2 = kgb_now_us();
        if (kg_audit_append(log, &ev, NULL) < 0) return 1;
        double t3 = kgb_now_us();
        tp[i] = t1 - t0;
        tc[i] = t2 - t1;
        ta[i] = t3 - t2;
    }
    kg_audit_close(log);
    double a = kgb_report("audit", "plain open+write+close (us)", tp, n);
    double b = kgb_report("audit", "chained open+append+close (us)", tc, n);
    kgb_report("audit", "chained append, log open (us)", ta, n);
    printf("audit the chain adds %.1f us per launch record (median)\n", b - a);
    const char *files[] = {p_chain};
    size_t records;
    UT_string *out;
    utstring_new(out);
    double v0 = kgb_now_us();
    int r = kg_audit_verify(files, 1, &records, out, NULL);
    double v1 = kgb_now_us();
    printf("audit verify of %zu records: %.1f ms (%s)\n", records, (v1 - v0) / 1000,
           utstring_body(out));
    utstring_free(out);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    kg_strv_free(withheld);
    free(tp);
    free(tc);
    free(ta);
    return r == 0 ? 0 : 1;
}
