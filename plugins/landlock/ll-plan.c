/* ll-plan.c: the plan is the command itself (launch execs it in place)
 * and, as files --dry-run shows, the Landlock rule table and the seccomp
 * filters.  The rules come from ll_rules_build, which launch calls again
 * with the real private TMPDIR. */
#include "ll-internal.h"
#include "kgate/kgate-denycheck.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LL_RULES_LABEL "landlock ruleset"

/* The entries a dry run shows: the first LL_NOTE_HOSTS of them, then how
 * many more (a list may hold 10,000 names). */
#define LL_NOTE_HOSTS 20

static int net_note(const kgate_host *h, const kgate_policy *pol, kgate_plan *plan)
{
    char *list = NULL;
    size_t len = 0, n = pol->allow_hosts.n;
    FILE *f = open_memstream(&list, &len);
    if (!f) return -1;
    for (size_t i = 0; i < n && i < LL_NOTE_HOSTS; i++)
        fprintf(f, "%s%s", i ? ", " : "", pol->allow_hosts.v[i]);
    if (n > LL_NOTE_HOSTS) fprintf(f, " and %zu more", n - LL_NOTE_HOSTS);
    if (fclose(f) != 0) {
        free(list);
        return -1;
    }
    int rc = h->plan_note(plan,
                          "network restricted to %zu host entr%s (%s): the supervisor "
                          "makes every connect and send itself after checking the "
                          "address (TCP only to addresses the filtering resolver "
                          "answered for listed names, on listed ports; UDP only to "
                          "port 53, relayed to dnsmasq on 127.0.0.1, which answers "
                          "unlisted names NXDOMAIN itself); IPv6 and other socket "
                          "families refused",
                          n, n == 1 ? "y" : "ies", list);
    free(list);
    return rc;
}

/* A deny_read entry is held back by its name alone: one with a second
 * name, or a symbolic link, is refused as bubblewrap refuses it
 * (kgate-denycheck.h), before anything is built. */
static int check_deny(const kgate_policy *pol, kgate_err *err)
{
    for (size_t i = 0; i < pol->deny_read.n; i++)
        if (ll_rules_visible(pol, pol->deny_read.v[i]) &&
            kgate_deny_read_check(pol->deny_read.v[i], err) < 0)
            return -1;
    return 0;
}

/* --publish (issue 43, 5).  The box shares the host's network namespace:
 * where the supervisor runs, the program's listen is made on the host's
 * own loopback, so its server on 127.0.0.1:PORT is already the host's
 * 127.0.0.1:PORT, and publishing is keeping that promise, nothing more.
 * Hence only HOSTPORT = PORT; without the supervisor the program makes no
 * Internet socket at all (network off) and nothing could listen. */
int ll_publish_check(const kgate_policy *pol, const kgate_probe *pr, kgate_err *err)
{
    size_t n = KGATE_HAS_FIELD(pol, kgate_policy, n_publish) ? pol->n_publish : 0;
    if (n == 0) return 0;
    const char *off = getenv(LL_ENV_NO_UNOTIFY);
    int sup = ll_net_hosts(pol) || (kgate_probe_fact(pr, LL_FACT_UNOTIFY, 0) == 1 &&
                                    !(off && *off && strcmp(off, "0") != 0));
    if (!sup)
        return kgate_err_set(err, ENOTSUP,
                             "--publish: the Landlock box without its supervisor (seccomp "
                             "user notification) lets the program make no Internet "
                             "socket, so nothing could listen on a published port");
    for (size_t i = 0; i < n; i++) {
        const kgate_publish *p = &pol->publish[i];
        if (p->host_port != p->port)
            return kgate_err_set(err, EINVAL,
                                 "--publish %s:%u:%u: the Landlock box shares the host's "
                                 "network, so the program's port %u is the host's port %u; "
                                 "publish it as %u:%u",
                                 p->host_addr, (unsigned)p->host_port, (unsigned)p->port,
                                 (unsigned)p->port, (unsigned)p->port, (unsigned)p->port,
                                 (unsigned)p->port);
    }
    return 0;
}

int ll_plan(const kgate_host *h, const kgate_policy *pol, const kgate_probe *pr, kgate_plan *plan,
            kgate_err *err)
{
    char why[128];
    if (ll_net_hosts(pol) && !ll_net_ready(pr, why, sizeof why))
        return kgate_err_set(err, ENOTSUP, "%s (%s)", ll_hosts_sentence(), why);
    if (ll_publish_check(pol, pr, err) < 0) return -1;
    if (!pol->command_path || pol->command_path[0] != '/' || pol->argv.n < 1)
        return kgate_err_set(err, EINVAL, "no command to run");
    int abi = kgate_probe_fact(pr, LL_FACT_ABI, 0);
    if (abi < 1) return kgate_err_set(err, ENOTSUP, "Landlock is not enabled in this kernel");
    if (check_deny(pol, err) < 0) return -1;
    ll_rules r;
    if (ll_rules_build(pol, abi, LL_TMP_PLACEHOLDER, &r, err) < 0) return -1;
    char *table = ll_rules_table(&r);
    char *sc = kgl_seccomp_describe();
    char *nonet = r.nonet ? kgl_seccomp_nonet_describe() : NULL;
    /* With the filesystem supervisor (as in launch, which reads the
     * variable too: a probe may come from the core's cache), its filter
     * holds the SysV IPC calls too. */
    const char *off = getenv(LL_ENV_NO_UNOTIFY);
    /* It runs wherever it can: host Unix sockets are its in every mode. */
    int sup =
        (kgate_probe_fact(pr, LL_FACT_UNOTIFY, 0) == 1 && !(off && *off && strcmp(off, "0"))) ||
        ll_net_hosts(pol);
    int ipc_notify = kgate_probe_fact(pr, LL_FACT_IPC, 0) == 1;
    char *ipc = kgl_ipc_describe(ipc_notify && sup ? KGL_IPC_ROUTED : ipc_notify);
    int rc = -1;
    if (!table || !sc || (r.nonet && !nonet) || !ipc) {
        kgate_err_set(err, ENOMEM, "out of memory");
        goto out;
    }
    if (h->plan_arg(plan, pol->command_path) < 0) goto oom;
    for (size_t i = 1; i < pol->argv.n; i++)
        if (h->plan_arg(plan, pol->argv.v[i]) < 0) goto oom;
    if (h->plan_file(plan, LL_RULES_LABEL, table) < 0 ||
        h->plan_file(plan, KGL_SECCOMP_LABEL, sc) < 0 ||
        (nonet && h->plan_file(plan, KGL_SECCOMP_NONET_LABEL, nonet) < 0) ||
        h->plan_file(plan, KGL_IPC_LABEL, ipc) < 0)
        goto oom;
    if (h->plan_note(plan,
                     "exec'd in place by kgate's launch child after "
                     "no_new_privs, an empty capability bounding set, a "
                     "session of its own, landlock_restrict_self and the "
                     "seccomp filters; argv[0] is \"%s\"; TMPDIR is a private "
                     "directory made at launch and removed after, and HOME its "
                     "empty subdirectory home (the real one stays hidden)",
                     pol->argv.v[0]) < 0)
        goto oom;
    /* The table's "split" lines say what Landlock alone does; where the
     * supervisor runs, launch gives those directories back. */
    if (kgate_probe_fact(pr, LL_FACT_UNOTIFY, 0) == 1 && ll_un_managed_count(pol, &r) &&
        h->plan_note(plan,
                     "the %zu split director%s inside the project are given "
                     "back by a supervisor (seccomp user notification, "
                     "sdk/linux/kgl-unotify.c): it creates, removes and "
                     "renames there itself and refuses the protected and "
                     "deny_read names; its ruleset is the table's plus "
                     "read-write on them%s",
                     ll_un_managed_count(pol, &r), ll_un_managed_count(pol, &r) == 1 ? "y" : "ies",
                     pol->deny_read.n ? "; the program's ruleset also has a rule "
                                        "(read, write, execute) on each of up "
                                        "to " KGL_UN_POOL_MAX_STR " unnamed files "
                                        "made at launch, which the supervisor "
                                        "puts in place of a program made in a "
                                        "split directory without execute when "
                                        "it is executed"
                                      : "") < 0)
        goto oom;
    if (ll_net_hosts(pol) && net_note(h, pol, plan) < 0) goto oom;
    if (sup && h->plan_note(plan,
                            "host Unix sockets by path: the supervisor resolves each "
                            "connect and send to a path and refuses (EACCES) every "
                            "socket but the %zu allow_sockets entr%s and the run's own "
                            "(below the project, allow_paths or TMPDIR), making the "
                            "allowed ones itself (sdk/linux/kgl-unotify-unix.c)",
                            pol->allow_sockets.n, pol->allow_sockets.n == 1 ? "y" : "ies") < 0)
        goto oom;
    rc = 0;
    goto out;
oom:
    kgate_err_set(err, ENOMEM, "out of memory");
out:
    free(table);
    free(sc);
    free(nonet);
    free(ipc);
    ll_rules_free(&r);
    return rc;
}
