/* select.h: probing the loaded backends and picking the one that can
 * enforce a policy. */
#ifndef KG_SELECT_H
#define KG_SELECT_H

#include "error.h"
#include "host.h"
#include "loader.h"

/* Runs probe() once per plugin (cached in the registry). */
void kg_select_probe_all(kg_registry *r, kg_host *host, kgate_probe_depth depth);

/* Picks the backend for policy: forced when not NULL, else the best one:
 * available, doctor not BLOCKED, READY before DEGRADED, then higher score.
 * Returns the plugin with its doctor report in *rep (caller frees), or NULL
 * with err (and *rep the report of the best candidate, if any) when nothing
 * can enforce the policy. */
kg_plugin *kg_select_backend(kg_registry *r, kg_host *host, const kgate_policy *policy,
                             const char *forced, kgate_probe_depth depth, kgate_report **rep,
                             kg_error *err);

/* Runs one backend's doctor into a new report (probe first if needed).
 * Fails closed: a failed probe, a doctor error or silence, an unavailable
 * backend, or one without plan/launch adds a BLOCKED finding. */
kgate_report *kg_select_doctor(kg_plugin *p, kg_host *host, const kgate_policy *policy,
                               kgate_probe_depth depth);

/* Probes one plugin (cached; a QUICK result is redone for THOROUGH). */
void kg_select_probe(kg_plugin *p, kg_host *host, kgate_probe_depth depth);

/* kg_select_choose's box and report alone (for callers that show one
 * backend), also telling which plugin the report belongs to:
 * *cand is the chosen plugin (return 0), or the best candidate that could
 * not enforce the policy, or NULL when there was none (return -1 with err).
 * *rep is cand's doctor report (caller frees), NULL when cand is NULL. */
int kg_select_candidate(kg_registry *r, kg_host *host, const kgate_policy *policy,
                        const char *forced, kgate_probe_depth depth, kg_plugin **cand,
                        kgate_report **rep, kg_error *err);

/* What selection chose: a box, and for `network: restricted` with hosts
 * where the box cannot filter hosts itself, the network stage it runs in
 * (kgate-plugin.h, kgate_backend_kind). */
typedef struct kg_choice {
    kg_plugin *box; /* NULL when nothing could be judged */
    kg_plugin *stage; /* NULL: the box alone */
    /* The doctor report of the whole (caller frees): the box's findings
     * (without net.hosts-unsupported when there is a stage), then the
     * stage's. */
    kgate_report *rep;
    /* "bubblewrap", "bubblewrap+slirp-filter", or "none": the name the
     * doctor verdict line, messages and the audit log give the run. */
    char name[140];
    /* Empty, or why a stronger box lost to this one for want of a tool
     * alone: the tool, the box it would give, what this box lacks.  One
     * sentence, for run's stderr line; the report holds it too, as
     * core.fallback. */
    char fallback[1400];
} kg_choice;

/* Picks what enforces policy.  forced (--backend) is NULL, a box (which
 * then runs alone), a stage (composed with the best box it can start), or
 * BOX+STAGE.  Without it: the best box by the composed verdict (READY
 * before DEGRADED, then score), where a box whose only BLOCKED finding is
 * net.hosts-unsupported counts with the best stage that names it in
 * kgate_backend.boxes.  Off and open never involve a stage.  Returns 0, or
 * -1 with err when nothing can enforce the policy; c->box and c->rep are
 * then the best candidate's, when there was one. */
int kg_select_choose(kg_registry *r, kg_host *host, const kgate_policy *policy, const char *forced,
                     kgate_probe_depth depth, kg_choice *c, kg_error *err);

/* The plan of a choice: the box's (asked with the network open when a
 * stage is composed), then the stage's files and notes with the real
 * policy.  On failure *who names the backend that failed. */
int kg_select_plan(const kg_choice *c, kg_host *host, const kgate_policy *policy, kgate_plan *plan,
                   const char **who, kg_error *err);
/* The same from backends and probes (for drivers without a registry);
 * stage and stage_probe may be NULL. */
int kg_compose_plan(kg_host *host, const kgate_backend *box, const kgate_probe *box_probe,
                    const kgate_backend *stage, const kgate_probe *stage_probe,
                    const kgate_policy *policy, kgate_plan *plan, const char **who, kg_error *err);

/* The report of a composition (never NULL): box's findings without
 * net.hosts-unsupported, then stage's, and both reports' details. */
kgate_report *kg_compose_report(kg_host *host, const kgate_report *box, const kgate_report *stage);

/* 1 when rep holds KGATE_FINDING_NET_HOSTS_UNSUPPORTED: the box needs a
 * network stage for this policy. */
int kg_report_needs_stage(const kgate_report *rep);
/* rep's verdict as the box of a composition: the worst finding apart from
 * net.hosts-unsupported (BLOCKED still for a report refused as a whole). */
kgate_verdict kg_report_composed_verdict(const kgate_report *rep);

/* Appends to out the texts of rep's findings at its overall verdict: the
 * reasons of doctor's last line. */
void kg_report_reasons(const kgate_report *rep, kg_strv *out);

#endif
