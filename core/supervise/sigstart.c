/* sigstart.c: the signal dispositions kgate was started with.
 *
 * The program must start with the dispositions it would have had without
 * kgate: a signal kgate's caller ignored (nohup's SIGHUP, the SIGINT and
 * SIGQUIT a shell ignores for a script's background job) stays ignored,
 * every other one is at its default.  By the time the launch forks, the
 * core has handlers on SIGCHLD, SIGWINCH, SIGTTIN and the forwarded
 * signals, so the state then says nothing about what the caller gave: it
 * is read here, first thing, and handed to the backend
 * (kgate_launch.sig_ignored_at_start), whose launch child sets exactly
 * that before its exec (kgl_child_signals_from, sdk/linux).
 *
 * One exception: SIGCHLD is handed over at its default.  Ignored, it makes
 * the kernel reap children by itself, and bwrap (both its processes) and
 * the pty shim wait for theirs: the run hung.  POSIX leaves it unspecified
 * whether an ignored SIGCHLD stays ignored across exec, so no program can
 * count on it. */
#include "sigstart.h"

#include <signal.h>
#include <stdbool.h>
#include <string.h>

static unsigned long long start_ignored[2];
static bool recorded;

static void read_ignored(unsigned long long out[2])
{
    out[0] = out[1] = 0;
    for (int s = 1; s < NSIG && s <= 128; s++) {
        struct sigaction cur;
        if (sigaction(s, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
            cur.sa_handler == SIG_IGN)
            out[(s - 1) / 64] |= 1ULL << ((s - 1) % 64);
    }
    out[(SIGCHLD - 1) / 64] &= ~(1ULL << ((SIGCHLD - 1) % 64));
}

void kg_sigstart_record(void)
{
    if (recorded) return;
    read_ignored(start_ignored);
    recorded = true;
}

void kg_sigstart_ignored(unsigned long long out[2])
{
    if (!recorded) {
        read_ignored(out);
        return;
    }
    memcpy(out, start_ignored, sizeof start_ignored);
}
