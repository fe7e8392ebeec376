/* select.h: probing the loaded backends and picking the one that can
 * enforce a policy. */
#ifndef KG_SELECT_H
#define KG_SELECT_H

#include "error.h"
#include "host.h"
#include "loader.h"

/* Wires host's backend lookups to r. */
void kg_select_bind_host(kg_host *host, kg_registry *r);

/* Runs probe() once per plugin (cached in the registry). */
void kg_select_probe_all(kg_registry *r, kg_host *host, kgate_probe_depth depth);

/* Picks the backend for policy: forced when not NULL, else the best one:
 * available, doctor not BLOCKED, READY before DEGRADED, then higher score.
 * Returns the plugin with its doctor report in *rep (caller frees), or NULL
 * with err (and *rep the report of the best candidate, if any) when nothing
 * can enforce the policy. */
kg_plugin *kg_select_backend(kg_registry *r, kg_host *host,
                             const kgate_policy *policy, const char *forced,
                             kgate_probe_depth depth, kgate_report **rep,
                             kg_error *err);

/* Runs one backend's doctor into a new report (probe first if needed).
 * Fails closed: a failed probe, a doctor error or silence, an unavailable
 * backend, or one without plan/launch adds a BLOCKED finding. */
kgate_report *kg_select_doctor(kg_plugin *p, kg_host *host,
                               const kgate_policy *policy,
                               kgate_probe_depth depth);

/* Probes one plugin (cached; a QUICK result is redone for THOROUGH). */
void kg_select_probe(kg_plugin *p, kg_host *host, kgate_probe_depth depth);

/* kg_select_backend, also telling which plugin the report belongs to:
 * *cand is the chosen plugin (return 0), or the best candidate that could
 * not enforce the policy, or NULL when there was none (return -1 with err).
 * *rep is cand's doctor report (caller frees), NULL when cand is NULL. */
int kg_select_candidate(kg_registry *r, kg_host *host,
                        const kgate_policy *policy, const char *forced,
                        kgate_probe_depth depth, kg_plugin **cand,
                        kgate_report **rep, kg_error *err);

/* Appends to out the texts of rep's findings at its overall verdict: the
 * reasons of doctor's last line. */
void kg_report_reasons(const kgate_report *rep, kg_strv *out);

#endif
