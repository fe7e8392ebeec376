/* sb-plan.c: the seatbelt backend's plan: sandbox-exec, the profile
 * (sb-profile.c) and the command. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kgate/kgate-denycheck.h"
#include "kgate/kgate-path.h"
#include "kgate/kgate-plugin.h"
#include "sb-host.h"
#include "sb-profile.h"
#include "sb-watch.h"
#include "sb-internal.h"

/* The profile can let the program read p, or another name of it: below
 * the project, a read or allow path, or anywhere outside $HOME (the
 * profile denies reading $HOME and gives back only those). */
static int deny_visible(const kgate_policy *pol, const char *p)
{
    if (pol->project && kgate_path_under(p, pol->project)) return 1;
    const kgate_strlist *back[2] = {&pol->read_paths, &pol->allow_paths};
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; i < back[l]->n; i++)
            if (back[l]->v[i] && kgate_path_under(p, back[l]->v[i])) return 1;
    return !(pol->home && kgate_path_under(p, pol->home));
}

/* A deny_read rule names a path: a second hard link, or a symbolic link
 * at the name, is refused as on Linux (kgate-denycheck.h). */
static int check_deny(const kgate_policy *pol, kgate_err *err)
{
    for (size_t i = 0; i < pol->deny_read.n; i++)
        if (pol->deny_read.v[i] && deny_visible(pol, pol->deny_read.v[i]) &&
            kgate_deny_read_check(pol->deny_read.v[i], err) < 0)
            return -1;
    return 0;
}

int sb_plan(const kgate_host *host, const kgate_policy *pol, const kgate_probe *probe,
            kgate_plan *plan, kgate_err *err)
{
    if (!pol->command_path || pol->command_path[0] != '/')
        return kgate_err_set(err, EINVAL, "the command has no absolute path");
    if (check_deny(pol, err) < 0) return -1;

    sb_profile prof, shown;
    if (sb_build(pol, SB_FORM_PARAMS, &prof, err) < 0) return -1;
    if (sb_build(pol, SB_FORM_INLINE, &shown, err) < 0) {
        sb_profile_clear(&prof);
        return -1;
    }

    const char *tool = probe && probe->tool_path[0] ? probe->tool_path : SB_TOOL;
    int r = host->plan_arg(plan, tool);
    for (size_t i = 0; r == 0 && i < prof.n_params; i++) {
        r = host->plan_arg(plan, "-D");
        if (r == 0) r = host->plan_arg(plan, prof.params[i]);
    }
    if (r == 0) r = host->plan_arg(plan, "-p");
    if (r == 0) r = host->plan_arg(plan, prof.text);
    /* sandbox-exec takes the command as its first non-option argument; the
     * command path is absolute, so it can never be read as an option and
     * no "--" is needed (and none is known to be accepted). */
    if (r == 0) r = host->plan_arg(plan, pol->command_path);
    for (size_t i = 1; r == 0 && i < pol->argv.n; i++) r = host->plan_arg(plan, pol->argv.v[i]);
    if (r == 0) r = host->plan_file(plan, "seatbelt profile", prof.text);
    if (r == 0)
        r = host->plan_file(plan,
                            "seatbelt profile, parameters inlined "
                            "(for reading only)",
                            shown.text);
    sb_profile_clear(&prof);
    sb_profile_clear(&shown);
    if (r < 0) return kgate_err_set(err, ENOMEM, "out of memory building the plan");
    return 0;
}
