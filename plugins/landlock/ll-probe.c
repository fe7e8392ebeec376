/* ll-probe.c: which Landlock ABI the kernel has, whether no_new_privs and
 * seccomp filters can be used, and whether user namespaces work (where
 * they do, bubblewrap is the stronger box and wins selection).  Every
 * look is a system call or one fork without exec (kgl_userns_trial), so
 * the quick probe does the same as the thorough one. */
#include "ll-internal.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif

void ll_probe_from_facts(kgate_probe *p, int abi, int nnp, int seccomp, int userns)
{
    kgate_probe_set_fact(p, LL_FACT_LINUX, 1);
    kgate_probe_set_fact(p, LL_FACT_ABI, abi);
    kgate_probe_set_fact(p, LL_FACT_NNP, nnp);
    kgate_probe_set_fact(p, LL_FACT_SECCOMP, seccomp);
    kgate_probe_set_fact(p, LL_FACT_USERNS, userns);
    /* Below bubblewrap's 50: where both can run, bubblewrap's namespaces
     * give the stronger box (docs/landlock.md, "Selection"). */
    p->score = 10;
    p->available = abi >= 1 && nnp && seccomp;
    snprintf(p->version, sizeof p->version, "ABI %d", abi);
    if (abi < 1)
        snprintf(p->reason, sizeof p->reason,
                 "Landlock is not enabled in this kernel (needs Linux 5.13 "
                 "with landlock in the lsm= list)");
    else if (!nnp)
        snprintf(p->reason, sizeof p->reason, "no_new_privs is not available");
    else if (!seccomp)
        snprintf(p->reason, sizeof p->reason, "seccomp filters cannot be loaded here");
    else
        snprintf(p->reason, sizeof p->reason, "Landlock ABI %d; user namespaces %s", abi,
                 userns == 1   ? "work (bubblewrap is preferred)"
                 : userns == 0 ? "refused"
                               : "not tried");
}

int ll_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe, kgate_err *err)
{
    (void)host;
    (void)depth;
    (void)err;
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    if (abi < 0) abi = 0;
    /* PR_GET_NO_NEW_PRIVS answers on every kernel that has the flag
     * (3.5); PR_GET_SECCOMP fails with EINVAL where seccomp is compiled
     * out, and kills with SIGKILL only in strict mode, which a process
     * that runs kgate is not in. */
    int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) >= 0;
    int seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
    ll_probe_from_facts(probe, (int)abi, nnp, seccomp, kgl_userns_trial());
    kgate_probe_set_fact(probe, LL_FACT_IPC, kgl_ipc_notify_available());
    char why[160];
    const char *off = getenv(LL_ENV_NO_UNOTIFY);
    kgate_probe_set_fact(probe, LL_FACT_UNOTIFY,
                         (off && *off && strcmp(off, "0")) ? 0 : kgl_un_available(why, sizeof why));
    return 0;
}
