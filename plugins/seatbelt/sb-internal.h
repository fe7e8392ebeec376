/* sb-internal.h: the seatbelt backend's parts, one file each (sb-probe.c,
 * sb-doctor.c, sb-plan.c, sb-launch.c), for its vtable in sb.c. */
#ifndef SB_INTERNAL_H
#define SB_INTERNAL_H

#include "kgate/kgate-plugin.h"

int sb_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *probe, kgate_err *err);
int sb_doctor(const kgate_host *host, const kgate_policy *pol, const kgate_probe *probe,
              kgate_report *rep);
int sb_plan(const kgate_host *host, const kgate_policy *pol, const kgate_probe *probe,
            kgate_plan *plan, kgate_err *err);
int sb_launch(const kgate_host *host, const kgate_policy *pol, const kgate_probe *probe,
              const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc, kgate_err *err);

#endif
