/* bwrap-launch.c: the plan started by the SDK's bwrap start
 * (sdk/linux/kgl-bwrap.c, shared with the slirp-filter stage), which adds
 * bwrap's descriptors, checks the mounts before the program starts, and
 * hands the core the sandbox's process group to signal (docs/bubblewrap.md).
 * With ports to publish (network: off only), the host's listeners are made
 * first, and the forwarder enters the box once bwrap made it, before the
 * program runs (bwrap-publish.c). */
#include "bwrap-internal.h"

#include <errno.h>
#include <signal.h>

int bwrap_launch(const kgate_host *host, const kgate_policy *policy, const kgate_probe *probe,
                 const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc, kgate_err *err)
{
    /* The plan carries all launch needs; bubblewrap keeps no state. */
    (void)probe;
    kgl_bwrap b kgl_autobwrap = KGL_BWRAP_INIT;
    b.pargv = host->plan_argv(plan, &b.argc);
    if (b.argc < 2 || !b.pargv[0] || b.pargv[0][0] != '/')
        return kgate_err_set(err, EINVAL,
                             "the plan does not start with an "
                             "absolute bwrap path");
    if (!policy->project || policy->project[0] != '/')
        return kgate_err_set(err, EINVAL, "no project directory");
    b.path = b.pargv[0];
    b.io = io;
    b.dir = policy->project;
    proc->n_helpers = 0;
    size_t np = KGATE_HAS_FIELD(policy, kgate_policy, n_publish) ? policy->n_publish : 0;
    int lfds[64];
    if (np > 64) return kgate_err_set(err, EINVAL, "--publish: more than 64 ports");
    if (np && bwrap_publish_listen(policy, lfds, err) < 0) {
        bwrap_publish_close(lfds, np);
        return -1;
    }
    int rc = kgl_bwrap_open(&b, err) < 0 || kgl_bwrap_spawn(&b, err) < 0 ||
                     kgl_bwrap_exec_wait(&b, err) < 0 || kgl_bwrap_await(&b, err) < 0
                 ? -1
                 : 0;
    pid_t fwd = rc == 0 && np ? bwrap_publish_start(policy, lfds, b.sandbox, err) : 0;
    /* The forwarder holds the listeners now: the port closes with it. */
    if (np) bwrap_publish_close(lfds, np);
    if (fwd > 0) proc->helpers[proc->n_helpers++] = fwd;
    if (rc < 0 || fwd < 0 || kgl_bwrap_let_run(&b, proc, err) < 0) {
        if (fwd > 0) {
            kill(fwd, SIGKILL);
            kgl_reap(fwd);
        }
        proc->n_helpers = 0;
        return -1;
    }
    host->log(host, KGATE_LOG_DEBUG, "bwrap pid %ld, sandbox pid 1 is %ld", (long)proc->pid,
              (long)b.sandbox);
    return 0;
}
