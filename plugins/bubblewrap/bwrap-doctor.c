/* bwrap-doctor.c: can this machine enforce this policy with bubblewrap?
 * A pure function of the policy and the probe facts, so the tests can hand
 * it any kernel. */
#include "bwrap-internal.h"

#include <stdio.h>

/* Why bwrap cannot run here, and what to change.  Returns 1 when it
 * reported a blocker. */
static int report_machine(const kgate_host *h, const kgate_probe *pr, kgate_report *rep)
{
    int blocked = 0;
    if (!kgate_probe_fact(pr, BWRAP_FACT_LINUX, 0)) {
        h->report(rep, KGATE_BLOCKED, KGATE_FINDING_HOST_NOT_LINUX, "bubblewrap needs Linux");
        return 1;
    }
    if (!kgate_probe_fact(pr, BWRAP_FACT_BWRAP, 0)) {
        /* The probe's reason names where kgate looked, or the untrusted
         * copy it passed over (kgate-tool.h). */
        h->report(rep, KGATE_BLOCKED, KGATE_FINDING_TOOL_MISSING,
                  "%s: install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)",
                  pr->reason[0] ? pr->reason : "bwrap not found");
        blocked = 1;
    }
    if (kgate_probe_fact(pr, BWRAP_FACT_USERNS_MAX0, 0)) {
        h->report(rep, KGATE_BLOCKED, "userns.max-zero",
                  "user namespaces are disabled: user.max_user_namespaces is "
                  "0 (sysctl -w user.max_user_namespaces=15000)");
        blocked = 1;
    }
    if (kgate_probe_fact(pr, BWRAP_FACT_USERNS_CLONE0, 0)) {
        h->report(rep, KGATE_BLOCKED, "userns.clone-off",
                  "unprivileged user namespaces are disabled: "
                  "kernel.unprivileged_userns_clone is 0 (sysctl -w "
                  "kernel.unprivileged_userns_clone=1)");
        blocked = 1;
    }
    int trial = kgate_probe_fact(pr, BWRAP_FACT_TRIAL, -1);
    int apparmor = kgate_probe_fact(pr, BWRAP_FACT_APPARMOR, 0);
    if (!blocked && trial == 0) {
        if (apparmor)
            h->report(rep, KGATE_BLOCKED, "userns.apparmor",
                      "bwrap could not create a user namespace: AppArmor "
                      "restricts unprivileged user namespaces "
                      "(kernel.apparmor_restrict_unprivileged_userns=1); load "
                      "an AppArmor profile that lets bwrap use them, or set "
                      "that sysctl to 0");
        else
            h->report(rep, KGATE_BLOCKED, KGATE_FINDING_USERNS_UNAVAILABLE,
                      "bwrap could not create a user namespace (in a "
                      "container? it must allow nested user namespaces; try: "
                      "bwrap --unshare-user --ro-bind / / true)");
        blocked = 1;
    }
    if (!blocked && trial == -1 && apparmor)
        h->report(rep, KGATE_READY, "userns.apparmor-untried",
                  "AppArmor restricts unprivileged user namespaces; bwrap was "
                  "not tried by this quick probe (kgate doctor tries it)");
    if (!blocked && trial == 1)
        h->report(rep, KGATE_READY, "userns.works", "user namespaces work (bwrap tried)");
    return blocked;
}

static void report_network(const kgate_host *h, const kgate_policy *pol, kgate_report *rep)
{
    switch (pol->network) {
    case KGATE_NET_OFF:
        h->report(rep, KGATE_READY, KGATE_FINDING_NET_OFF, "network off (--unshare-net)%s",
                  pol->configured_network == KGATE_NET_RESTRICTED
                      ? ": restricted with an empty host list"
                      : "");
        break;
    case KGATE_NET_OPEN:
        h->report(rep, KGATE_DEGRADED, KGATE_FINDING_NET_OPEN,
                  "network open: the filesystem box is installed, the network "
                  "box is not");
        break;
    case KGATE_NET_RESTRICTED:
        if (pol->allow_hosts.n > 0)
            h->report(rep, KGATE_BLOCKED, KGATE_FINDING_NET_HOSTS_UNSUPPORTED, "%s",
                      bwrap_hosts_sentence());
        else /* the core maps this to OFF; never read it as open */
            h->report(rep, KGATE_READY, KGATE_FINDING_NET_OFF, "network off (--unshare-net)");
        break;
    default:
        h->report(rep, KGATE_BLOCKED, KGATE_FINDING_NET_MODE_UNKNOWN, "unknown network mode %d",
                  (int)pol->network);
        break;
    }
}

/* The escapes of issue 6 (docs/escapes.md): what is in force, from the
 * policy alone. */
static void report_escapes(const kgate_host *h, const kgate_policy *pol, kgate_report *rep)
{
    size_t ndirs;
    bwrap_socket_dirs(&ndirs);
    if (pol->allow_sockets.n == 0) {
        h->report(rep, KGATE_READY, KGATE_FINDING_SOCKETS_UNIX,
                  "host Unix sockets: none reachable (/run, /var/run and %zu "
                  "daemon directories covered by an empty tmpfs; /tmp and "
                  "$HOME are private)",
                  ndirs - 2);
    } else {
        char list[1024] = "";
        size_t used = 0;
        for (size_t i = 0; i < pol->allow_sockets.n && used < sizeof list; i++) {
            int n = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                             pol->allow_sockets.v[i]);
            if (n < 0) break;
            used += (size_t)n;
        }
        h->report(rep, KGATE_READY, KGATE_FINDING_SOCKETS_UNIX,
                  "host Unix sockets: only allow_sockets (%s); /run, /var/run "
                  "and %zu daemon directories covered by an empty tmpfs",
                  list, ndirs - 2);
    }
    if (pol->network == KGATE_NET_OPEN)
        h->report(rep, KGATE_DEGRADED, KGATE_FINDING_SOCKETS_ABSTRACT,
                  "abstract Unix sockets: network open shares the host's "
                  "network namespace, so abstract sockets (X11, some D-Bus "
                  "buses) are reachable");
    else
        h->report(rep, KGATE_READY, KGATE_FINDING_SOCKETS_ABSTRACT,
                  "abstract Unix sockets: unreachable (own network namespace)");

    size_t nprot = pol->protect_paths.n;
    h->report(rep, KGATE_READY, KGATE_FINDING_FS_PROTECT_PATHS,
              "planted hooks: %zu protected path%s read-only inside the "
              "project (a missing one is an empty placeholder for the run)",
              nprot, nprot == 1 ? "" : "s");
    int pty = KGATE_HAS_FIELD(pol, kgate_policy, pty) && pol->pty;
    h->report(rep, KGATE_READY, KGATE_FINDING_TTY_ISOLATED,
              "terminal: %s; ioctl TIOCSTI and TIOCLINUX refused by seccomp",
              pty ? "a pseudo-terminal of its own" : "no controlling terminal (--new-session)");
    h->report(rep, KGATE_READY, KGATE_FINDING_SECCOMP_FILTER,
              "seccomp filter: %zu rules (%s), refused with an errno, not a "
              "kill",
              kgl_seccomp_rule_count(), kgl_seccomp_groups());
}

int bwrap_doctor(const kgate_host *h, const kgate_policy *pol, const kgate_probe *pr,
                 kgate_report *rep)
{
    report_machine(h, pr, rep);
    h->report(
        rep, KGATE_READY, KGATE_FINDING_FS_HOME_HIDDEN,
        "home hidden (tmpfs on %s), project writable (%s), %zu read "
        "path%s, %zu extra writable path%s, %zu deny_read entr%s, "
        "private /tmp, /dev and /proc; new user, pid, ipc and uts "
        "namespaces; no capabilities",
        pol->home ? pol->home : "$HOME", pol->project ? pol->project : "the working directory",
        pol->read_paths.n, pol->read_paths.n == 1 ? "" : "s", pol->allow_paths.n,
        pol->allow_paths.n == 1 ? "" : "s", pol->deny_read.n, pol->deny_read.n == 1 ? "y" : "ies");
    report_network(h, pol, rep);
    report_escapes(h, pol, rep);
    h->report_detail(rep, "bwrap_path", pr->tool_path);
    h->report_detail(rep, "bwrap_version", pr->version[0] ? pr->version : "unknown (quick probe)");
    int trial = kgate_probe_fact(pr, BWRAP_FACT_TRIAL, -1);
    h->report_detail(rep, "userns_trial",
                     trial == 1   ? "works"
                     : trial == 0 ? "failed"
                                  : "not tried");
    return 0;
}
