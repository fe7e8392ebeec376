/* proclimit.c: max_processes as RLIMIT_NPROC (proclimit.h). */
#include "proclimit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The tasks (threads) whose real uid is uid: what RLIMIT_NPROC counts.
 * -1 when /proc cannot be read. */
static long count_tasks(uid_t uid)
{
    DIR *d = opendir("/proc");
    if (!d) return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        char path[64], buf[2048];
        snprintf(path, sizeof path, "/proc/%.20s/status", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t r = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (r <= 0) continue;
        buf[r] = '\0';
        const char *u = strstr(buf, "\nUid:");
        const char *t = strstr(buf, "\nThreads:");
        if (!u || strtoul(u + 5, NULL, 10) != (unsigned long)uid) continue;
        long threads = t ? strtol(t + 9, NULL, 10) : 1;
        n += threads > 0 ? threads : 1;
    }
    closedir(d);
    return n;
}

static int compute(long max, kg_proclimit *out)
{
    memset(out, 0, sizeof *out);
    if (max <= 0) {
        snprintf(out->text, sizeof out->text, "none (max_processes: unlimited)");
        return 0;
    }
    if (getuid() == 0) {
        snprintf(out->text, sizeof out->text,
                 "none: root is not bound by RLIMIT_NPROC (max_processes %ld "
                 "applies to ordinary users only)",
                 max);
        return 0;
    }
    out->current = count_tasks(getuid());
    if (out->current < 0) {
        snprintf(out->text, sizeof out->text,
                 "none: /proc cannot be read to count the user's processes");
        return 0;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NPROC, &rl) < 0) return -1;
    long want = out->current + max;
    out->bound = true;
    if (rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur <= want) {
        out->limit = (long)rl.rlim_cur;
        snprintf(out->text, sizeof out->text,
                 "RLIMIT_NPROC %ld (already lower than your %ld processes + "
                 "max_processes %ld)",
                 out->limit, out->current, max);
    } else {
        out->limit = want;
        snprintf(out->text, sizeof out->text,
                 "RLIMIT_NPROC %ld: your %ld processes now + max_processes %ld", want, out->current,
                 max);
    }
    return 0;
}

void kg_proclimit_describe(long max, kg_proclimit *out)
{
    if (compute(max, out) < 0)
        snprintf(out->text, sizeof out->text, "unknown: getrlimit: %s", strerror(errno));
}

int kg_proclimit_apply(long max, kg_proclimit *out)
{
    if (compute(max, out) < 0) return -1;
    if (!out->bound) return 0;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NPROC, &rl) < 0) return -1;
    rlim_t lim = (rlim_t)out->limit;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > lim) rl.rlim_cur = lim;
    /* The hard limit too: the program could raise a soft one back. */
    if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > lim) rl.rlim_max = lim;
    return setrlimit(RLIMIT_NPROC, &rl);
}
