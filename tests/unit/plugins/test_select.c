/* test_select.c: picking a backend, with in-process fake backends whose
 * probe facts and doctor verdicts each test decides. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select.h"
#include "testutil.h"

/* What one fake backend answers.  Fakes find their own entry through
 * host->current, which the core sets to the backend's name around every
 * call into a plugin. */
typedef struct fake {
    const char *name;
    int available;
    int score;
    int probe_rc; /* -1: probe itself fails */
    kgate_verdict verdict;
    int findings; /* how many findings doctor adds (0: none) */
    int doctor_rc;
    const char *reason; /* the probe's reason */
    int probes[2]; /* calls, by depth */
    int doctors; /* doctor calls */
    const char *also; /* doctor adds a second BLOCKED finding with this id */
    kgate_network planned; /* the network its plan was asked with */
    int plan_arg; /* 1: plan adds an argument (a stage must not) */
    int stage; /* registered as a network stage */
    int keeps_state; /* probe allocates a state, release frees it */
    void *seen_state; /* what doctor last found in its probe */
    const char *id; /* its findings' id (NULL: "fake.finding") */
} fake;

/* States alive and released, across fakes (a state records its fake). */
static int states_alive, states_released;
typedef struct f_state {
    fake *owner;
    kgate_probe_depth depth;
} f_state;

static fake fakes[8];
static size_t n_fakes;

static fake *self(const kgate_host *host)
{
    const char *name = ((const kg_host *)host)->current;
    for (size_t i = 0; i < n_fakes; i++)
        if (strcmp(fakes[i].name, name) == 0) return &fakes[i];
    ck_abort_msg("no fake named %s", name);
    return NULL;
}

static int f_probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *p, kgate_err *err)
{
    fake *f = self(host);
    f->probes[depth]++;
    if (f->keeps_state) {
        f_state *st = malloc(sizeof *st);
        ck_assert_ptr_nonnull(st);
        *st = (f_state){.owner = f, .depth = depth};
        p->state = st;
        states_alive++;
    }
    if (f->probe_rc < 0) return kgate_err_set(err, 5, "cannot look\nat all");
    p->available = f->available;
    p->score = f->score;
    snprintf(p->reason, sizeof p->reason, "%s", f->reason ? f->reason : "");
    snprintf(p->version, sizeof p->version, "%d.0", f->score);
    return 0;
}

static int f_doctor(const kgate_host *host, const kgate_policy *pol, const kgate_probe *p,
                    kgate_report *rep)
{
    (void)pol;
    fake *f = self(host);
    f->doctors++;
    f->seen_state = p->state;
    if (f->also) host->report(rep, KGATE_BLOCKED, f->also, "%s cannot", f->name);
    for (int i = 0; i < f->findings; i++)
        host->report(rep, i == 0 ? f->verdict : KGATE_READY,
                     f->id && i == 0 ? f->id : "fake.finding", "%s finding %d", f->name, i);
    host->report_detail(rep, "fake", f->name);
    return f->doctor_rc;
}

static int f_plan(const kgate_host *h, const kgate_policy *pol, const kgate_probe *p,
                  kgate_plan *plan, kgate_err *err)
{
    (void)p;
    (void)err;
    fake *f = self(h);
    f->planned = pol->network;
    if (f->stage) {
        if (f->plan_arg) h->plan_arg(plan, "--sneaky");
        return h->plan_file(plan, "stage file", "from the stage\n");
    }
    return h->plan_arg(plan, "/bin/true");
}

static int f_launch(const kgate_host *h, const kgate_policy *pol, const kgate_probe *p,
                    const kgate_plan *plan, const kgate_launch *io, kgate_proc *proc,
                    kgate_err *err)
{
    (void)h;
    (void)pol;
    (void)p;
    (void)plan;
    (void)io;
    (void)proc;
    return kgate_err_set(err, 0, "fake");
}

static void f_release(void *state)
{
    f_state *st = state;
    ck_assert_ptr_nonnull(st->owner);
    states_alive--;
    states_released++;
    free(st);
}

static kg_registry *reg;
static kg_host host;
static kgate_policy policy;
static kgate_backend descs[8];

static void setup(void)
{
    memset(fakes, 0, sizeof fakes);
    n_fakes = 0;
    states_alive = states_released = 0;
    reg = kg_registry_new();
    kg_host_init(&host);
    policy = (kgate_policy){.struct_size = sizeof policy, .network = KGATE_NET_OFF};
}

static void teardown(void) { kg_registry_free(reg); }

static fake *add_kind(const char *name, int score, kgate_backend_kind kind,
                      const char *const *boxes);

/* Registers a fake READY box; the caller adjusts the returned entry. */
static fake *add_fake(const char *name, int score)
{
    return add_kind(name, score, KGATE_KIND_BOX, NULL);
}

static fake *add_kind(const char *name, int score, kgate_backend_kind kind,
                      const char *const *boxes)
{
    fake *f = &fakes[n_fakes];
    *f = (fake){.name = name,
                .available = 1,
                .score = score,
                .verdict = KGATE_READY,
                .findings = 1,
                .stage = kind == KGATE_KIND_NETWORK};
    kgate_backend *b = &descs[n_fakes++];
    *b = (kgate_backend){KGATE_BACKEND_INIT,   .name = name,   .probe = f_probe,
                         .doctor = f_doctor,   .plan = f_plan, .launch = f_launch,
                         .release = f_release, .kind = kind,   .boxes = boxes};
    kg_error err = {0};
    ck_assert_msg(kg_registry_add(reg, b, NULL, NULL, &err) != NULL, "%s", err.msg);
    return f;
}

static kg_plugin *pick(const char *forced, kgate_report **rep, kg_error *err)
{
    return kg_select_backend(reg, &host, &policy, forced, KGATE_PROBE_QUICK, rep, err);
}

START_TEST(ready_beats_degraded_whatever_the_score)
{
    add_fake("degraded", 100)->verdict = KGATE_DEGRADED;
    add_fake("ready", 1);
    kgate_report *rep = NULL;
    kg_error err = {0};
    kg_plugin *p = pick(NULL, &rep, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->name, "ready");
    ck_assert_int_eq(rep->verdict, KGATE_READY);
    ck_assert_str_eq(rep->items[0].text, "ready finding 0");
    kg_report_free(rep);
}
END_TEST

START_TEST(higher_score_then_load_order)
{
    add_fake("first", 5);
    add_fake("second", 9);
    add_fake("third", 9);
    kgate_report *rep = NULL;
    kg_error err = {0};
    kg_plugin *p = pick(NULL, &rep, &err);
    ck_assert_str_eq(p->name, "second");
    kg_report_free(rep);
}
END_TEST

START_TEST(degraded_is_picked_when_nothing_is_ready)
{
    add_fake("blocked", 50)->verdict = KGATE_BLOCKED;
    add_fake("degraded", 1)->verdict = KGATE_DEGRADED;
    kgate_report *rep = NULL;
    kg_error err = {0};
    kg_plugin *p = pick(NULL, &rep, &err);
    ck_assert_str_eq(p->name, "degraded");
    ck_assert_int_eq(rep->verdict, KGATE_DEGRADED);
    kg_report_free(rep);
}
END_TEST

START_TEST(forced_backend_is_used_even_if_worse)
{
    add_fake("ready", 10);
    add_fake("degraded", 1)->verdict = KGATE_DEGRADED;
    kgate_report *rep = NULL;
    kg_error err = {0};
    kg_plugin *p = pick("degraded", &rep, &err);
    ck_assert_str_eq(p->name, "degraded");
    ck_assert_int_eq(rep->verdict, KGATE_DEGRADED);
    kg_report_free(rep);
    /* Only the forced one was asked. */
    ck_assert_int_eq(fakes[0].probes[0], 0);
}
END_TEST

START_TEST(forced_blocked_is_an_error_with_its_report)
{
    add_fake("ready", 10);
    add_fake("stuck", 1)->verdict = KGATE_BLOCKED;
    kgate_report *rep = NULL;
    kg_plugin *cand = NULL;
    kg_error err = {0};
    ck_assert_ptr_null(pick("stuck", &rep, &err));
    ck_assert_str_eq(err.msg, "backend stuck cannot enforce this policy: stuck finding 0");
    ck_assert_int_eq(rep->verdict, KGATE_BLOCKED);
    kg_report_free(rep);
    ck_assert_int_eq(
        kg_select_candidate(reg, &host, &policy, "stuck", KGATE_PROBE_QUICK, &cand, &rep, &err),
        -1);
    ck_assert_str_eq(cand->name, "stuck");
    kg_report_free(rep);
}
END_TEST

START_TEST(forced_missing_names_the_found_ones)
{
    add_fake("alpha", 1);
    add_fake("beta", 1);
    kgate_report *rep = NULL;
    kg_error err = {0};
    ck_assert_ptr_null(pick("gamma", &rep, &err));
    ck_assert_ptr_null(rep);
    ck_assert_str_eq(err.msg, "backend gamma not found (found: alpha, beta)");
}
END_TEST

START_TEST(all_blocked_is_an_error_naming_each)
{
    add_fake("one", 3)->verdict = KGATE_BLOCKED;
    fake *two = add_fake("two", 9);
    two->verdict = KGATE_BLOCKED;
    fake *gone = add_fake("gone", 99);
    gone->available = 0;
    gone->reason = "tool missing";
    kgate_report *rep = NULL;
    kg_plugin *cand = NULL;
    kg_error err = {0};
    ck_assert_int_eq(
        kg_select_candidate(reg, &host, &policy, NULL, KGATE_PROBE_QUICK, &cand, &rep, &err), -1);
    ck_assert_str_eq(err.msg, "no backend can enforce this policy: one: one finding 0; "
                              "two: two finding 0; gone: not available here: tool missing");
    /* The report shown is the most useful one: available, higher score. */
    ck_assert_str_eq(cand->name, "two");
    ck_assert_int_eq(rep->verdict, KGATE_BLOCKED);
    kg_report_free(rep);
    ck_assert_ptr_null(pick(NULL, &rep, &err));
    kg_report_free(rep);
}
END_TEST

START_TEST(no_plugin_says_where_it_looked)
{
    kg_strv_push(reg->searched, "/opt/a");
    kg_strv_push(reg->searched, "/usr/lib/kgate/plugins");
    kgate_report *rep = NULL;
    kg_error err = {0};
    ck_assert_ptr_null(pick(NULL, &rep, &err));
    ck_assert_ptr_null(rep);
    ck_assert_str_eq(err.msg, "no backend plugin found in /opt/a:/usr/lib/kgate/plugins "
                              "(set KGATE_PLUGIN_PATH?)");
    ck_assert_ptr_null(pick("bubblewrap", &rep, &err));
    ck_assert_str_eq(err.msg, "backend bubblewrap not found: no backend plugin found in "
                              "/opt/a:/usr/lib/kgate/plugins (set KGATE_PLUGIN_PATH?)");
    kg_registry_refuse(reg, "/opt/a/x.so", "broken", 0);
    ck_assert_ptr_null(pick(NULL, &rep, &err));
    ck_assert_str_eq(err.msg, "no usable backend plugin in /opt/a:/usr/lib/kgate/plugins "
                              "(1 refused: see kgate plugins)");
}
END_TEST

START_TEST(failed_probe_blocks_on_one_line)
{
    add_fake("broken", 5)->probe_rc = -1;
    kg_plugin *p = kg_registry_find(reg, "broken");
    kgate_report *rep = kg_select_doctor(p, &host, &policy, KGATE_PROBE_QUICK);
    ck_assert_int_eq(rep->verdict, KGATE_BLOCKED);
    ck_assert_uint_eq(rep->n_items, 1);
    /* The plugin's newline is masked by msg.c's one rule ('?'). */
    ck_assert_str_eq(rep->items[0].text, "probe failed: cannot look?at all");
    ck_assert_int_eq(p->probe_failed, 1);
    ck_assert_int_eq(p->probe.available, 0);
    kg_report_free(rep);
}
END_TEST

/* Details are for `kgate doctor`: a run's host (details false) keeps
 * none, in the backend's report or the composed one, and loses no
 * finding; doctor's host (kg_host_init's default) keeps them. */
START_TEST(a_run_keeps_no_details)
{
    add_fake("detailed", 5);
    kg_plugin *p = kg_registry_find(reg, "detailed");
    kgate_report *kept = kg_select_doctor(p, &host, &policy, KGATE_PROBE_QUICK);
    ck_assert_uint_eq(kg_strv_len(kept->detail_keys), 1);
    ck_assert_str_eq(kg_strv_get(kept->detail_values, 0), "detailed");
    host.details = false;
    kgate_report *run = kg_select_doctor(p, &host, &policy, KGATE_PROBE_QUICK);
    kgate_report *composed = kg_compose_report(&host, run, kept);
    host.details = true;
    ck_assert_uint_eq(kg_strv_len(run->detail_keys), 0);
    ck_assert_uint_eq(kg_strv_len(composed->detail_keys), 0);
    ck_assert_uint_eq(run->n_items, kept->n_items);
    ck_assert_uint_gt(run->n_items, 0);
    ck_assert_int_eq(run->verdict, kept->verdict);
    kg_report_free(composed);
    kg_report_free(run);
    kg_report_free(kept);
}
END_TEST

START_TEST(unavailable_cannot_read_ready)
{
    fake *f = add_fake("absent", 5);
    f->available = 0;
    f->reason = "no such tool";
    kgate_report *rep =
        kg_select_doctor(kg_registry_find(reg, "absent"), &host, &policy, KGATE_PROBE_QUICK);
    ck_assert_int_eq(rep->verdict, KGATE_BLOCKED);
    ck_assert_str_eq(rep->items[rep->n_items - 1].text, "not available here: no such tool");
    kg_report_free(rep);
}
END_TEST

/* The report of the named fake's doctor, as selection would see it. */
static kgate_report *doctor_of(const char *name)
{
    return kg_select_doctor(kg_registry_find(reg, name), &host, &policy, KGATE_PROBE_QUICK);
}

START_TEST(silent_or_failing_doctor_blocks)
{
    add_fake("silent", 5)->findings = 0;
    fake *f = add_fake("failing", 5);
    f->doctor_rc = -1;
    kgate_report *rep = doctor_of("silent");
    ck_assert_int_eq(rep->verdict, KGATE_BLOCKED);
    ck_assert_str_eq(rep->items[0].text, "doctor gave no finding");
    kg_report_free(rep);
    rep = doctor_of("failing");
    ck_assert_int_eq(rep->verdict, KGATE_BLOCKED);
    ck_assert_str_eq(rep->items[1].text, "doctor failed");
    kg_report_free(rep);
}
END_TEST

/* Finding ids: what the core accepts (kgate-plugin.h).  Each rejected
 * case differs from an accepted one by one character. */
START_TEST(finding_id_rules)
{
    const char *ok[] = {"net.hosts-unsupported",
                        "fs.home-hidden",
                        "a",
                        "seccomp.filter",
                        "x1.y-2.z3",
                        "core.finding-id-invalid",
                        "a23456789012345678901234567890123456789012345678"};
    const char *bad[] = {
        NULL,       "",          "Net.off",
        "net.off ", "net_off",   "net..off",
        ".net",     "net.",      "net-",
        "1net",     "-net",      "net.\xc3\xa9",
        "net/off",  "net.off\n", "a234567890123456789012345678901234567890123456789"};
    ck_assert_uint_eq(strlen(ok[6]), KGATE_FINDING_ID_MAX);
    ck_assert_uint_eq(strlen(bad[14]), KGATE_FINDING_ID_MAX + 1);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        ck_assert_msg(kg_finding_id_ok(ok[i]), "refused %s", ok[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!kg_finding_id_ok(bad[i]), "accepted %s", bad[i] ? bad[i] : "NULL");
}
END_TEST

/* The id travels with its finding; a bad one is not recorded, and the
 * report reads BLOCKED even before the core says why. */
START_TEST(report_keeps_ids)
{
    kgate_report *rep = kg_report_new();
    ck_assert_int_eq(host.pub.report(rep, KGATE_READY, "fs.home-hidden", "home %s", "hidden"), 0);
    ck_assert_int_eq(rep->verdict, KGATE_READY);
    ck_assert_int_eq(host.pub.report(rep, KGATE_READY, "Bad Id", "not kept"), -1);
    ck_assert_int_eq(host.pub.report(rep, KGATE_READY, NULL, "not kept either"), -1);
    ck_assert_uint_eq(rep->n_items, 1);
    ck_assert_str_eq(rep->items[0].id, "fs.home-hidden");
    ck_assert_str_eq(rep->items[0].text, "home hidden");
    ck_assert_int_eq(rep->verdict, KGATE_BLOCKED);
    ck_assert_str_eq(rep->bad_id, "Bad Id");
    kg_report_free(rep);
}
END_TEST

/* A backend that gives a bad id has its doctor refused: BLOCKED, with one
 * finding that names the id, and selection passes it over.  The control is
 * the same fake with a valid id. */
START_TEST(bad_finding_id_refuses_doctor)
{
    add_fake("named", 1)->id = "fake.ok";
    add_fake("unnamed", 100)->id = "Fake Finding";
    kgate_report *rep = doctor_of("named");
    ck_assert(rep->verdict == KGATE_READY && strcmp(rep->items[0].id, "fake.ok") == 0);
    kg_report_free(rep);
    rep = doctor_of("unnamed");
    ck_assert_int_eq(rep->verdict, KGATE_BLOCKED);
    ck_assert_uint_eq(rep->n_items, 1);
    ck_assert_str_eq(rep->items[0].id, "core.finding-id-invalid");
    ck_assert_str_eq(rep->items[0].text,
                     "doctor refused: finding id \"Fake Finding\" is not valid (1 to 48 of "
                     "a-z, 0-9, '.', '-')");
    kg_report_free(rep);
    /* The higher score loses: its report is refused. */
    kg_error err = {0};
    kg_plugin *p = pick(NULL, &rep, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->name, "named");
    kg_report_free(rep);
    /* Forced, it is refused with that reason. */
    p = pick("unnamed", &rep, &err);
    ck_assert_ptr_null(p);
    ck_assert_ptr_nonnull(strstr(err.msg, "finding id \"Fake Finding\" is not valid"));
    kg_report_free(rep);
}
END_TEST

START_TEST(missing_methods_block)
{
    add_fake("full", 1);
    kg_plugin *p = kg_registry_find(reg, "full");
    p->be.launch = NULL;
    kgate_report *rep = kg_select_doctor(p, &host, &policy, KGATE_PROBE_QUICK);
    ck_assert_int_eq(rep->verdict, KGATE_BLOCKED);
    ck_assert_str_eq(rep->items[1].text, "plugin cannot launch (no plan or launch method)");
    kg_report_free(rep);
    p->be.doctor = NULL;
    rep = kg_select_doctor(p, &host, &policy, KGATE_PROBE_QUICK);
    ck_assert_str_eq(rep->items[0].text, "plugin has no doctor method");
    kg_report_free(rep);
    p->be.probe = NULL;
    p->probed = 0;
    kg_select_probe(p, &host, KGATE_PROBE_QUICK);
    ck_assert_int_eq(p->probe.available, 0);
    ck_assert_str_eq(p->probe.reason, "plugin has no probe method");
}
END_TEST

START_TEST(probe_is_cached_per_depth)
{
    fake *f = add_fake("once", 1);
    kg_select_probe_all(reg, &host, KGATE_PROBE_QUICK);
    kg_select_probe_all(reg, &host, KGATE_PROBE_QUICK);
    ck_assert_int_eq(f->probes[KGATE_PROBE_QUICK], 1);
    kg_select_probe_all(reg, &host, KGATE_PROBE_THOROUGH);
    kg_select_probe_all(reg, &host, KGATE_PROBE_QUICK);
    ck_assert_int_eq(f->probes[KGATE_PROBE_THOROUGH], 1);
    ck_assert_int_eq(f->probes[KGATE_PROBE_QUICK], 1);
    ck_assert_int_eq(kg_registry_find(reg, "once")->probe_depth, KGATE_PROBE_THOROUGH);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Composition: boxes and network stages                                     */
/* ------------------------------------------------------------------------ */

static const char *hosts[] = {"allowed.test"};
static const char *const takes_bw[] = {"bw", NULL};
static const char *const takes_both[] = {"bw", "other", NULL};

static void restricted(void)
{
    policy.network = policy.configured_network = KGATE_NET_RESTRICTED;
    policy.allow_hosts = (kgate_strlist){hosts, 1};
}

/* A box that, like bubblewrap, cannot filter hosts itself. */
static fake *add_box(const char *name, int score)
{
    fake *f = add_fake(name, score);
    f->verdict = KGATE_BLOCKED;
    f->id = KGATE_FINDING_NET_HOSTS_UNSUPPORTED;
    f->findings = 2; /* the hosts finding, then a READY one */
    return f;
}

static int report_has_id(const kgate_report *rep, const char *id)
{
    for (size_t i = 0; i < rep->n_items; i++)
        if (strcmp(rep->items[i].id, id) == 0) return 1;
    return 0;
}

static int choose(const char *forced, kg_choice *c, kg_error *err)
{
    return kg_select_choose(reg, &host, &policy, forced, KGATE_PROBE_QUICK, c, err);
}

START_TEST(composes_best_box_with_best_stage)
{
    restricted();
    add_box("bw", 50);
    add_box("other", 90)->also = "userns.unavailable"; /* better score, but BLOCKED */
    add_kind("net-a", 1, KGATE_KIND_NETWORK, takes_both);
    add_kind("net-b", 5, KGATE_KIND_NETWORK, takes_bw);
    fake *c9 = add_kind("net-c", 9, KGATE_KIND_NETWORK, takes_bw);
    c9->verdict = KGATE_BLOCKED; /* best score, cannot run */
    kg_choice c;
    kg_error err = {0};
    ck_assert_int_eq(choose(NULL, &c, &err), 0);
    ck_assert_str_eq(c.box->name, "bw");
    ck_assert_str_eq(c.stage->name, "net-b");
    ck_assert_str_eq(c.name, "bw+net-b");
    ck_assert_int_eq(c.rep->verdict, KGATE_READY);
    /* The box's findings without the hosts one, then the stage's. */
    ck_assert(!report_has_id(c.rep, KGATE_FINDING_NET_HOSTS_UNSUPPORTED));
    ck_assert_uint_eq(c.rep->n_items, 2);
    ck_assert_str_eq(c.rep->items[0].text, "bw finding 1");
    ck_assert_str_eq(c.rep->items[1].text, "net-b finding 0");
    ck_assert_uint_eq(kg_strv_len(c.rep->detail_keys), 2);
    kg_report_free(c.rep);
}
END_TEST

/* Selection fails with the box alone, its report holding id; returns the
 * error message. */
static const char *fails_uncomposed(const char *box, const char *id)
{
    static kg_error err;
    kg_choice c;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(choose(NULL, &c, &err), -1);
    ck_assert_str_eq(c.box->name, box);
    ck_assert_ptr_null(c.stage);
    ck_assert_int_eq(c.rep->verdict, KGATE_BLOCKED);
    ck_assert(report_has_id(c.rep, id));
    kg_report_free(c.rep);
    return err.msg;
}

START_TEST(box_blocked_for_another_reason_is_not_composed)
{
    restricted();
    add_box("other", 90)->also = "userns.unavailable";
    add_kind("net-a", 1, KGATE_KIND_NETWORK, takes_both);
    ck_assert_ptr_nonnull(strstr(fails_uncomposed("other", "userns.unavailable"),
                                 "no backend can enforce this policy: other: "));
}
END_TEST

START_TEST(stage_must_name_the_box)
{
    restricted();
    add_box("bw", 50);
    add_kind("net-x", 1, KGATE_KIND_NETWORK, NULL); /* starts no box's plan */
    fails_uncomposed("bw", KGATE_FINDING_NET_HOSTS_UNSUPPORTED);
}
END_TEST

START_TEST(blocked_stage_blocks_the_composition)
{
    restricted();
    add_box("bw", 50);
    add_kind("net-b", 5, KGATE_KIND_NETWORK, takes_bw)->verdict = KGATE_BLOCKED;
    kg_choice c;
    kg_error err = {0};
    ck_assert_int_eq(choose(NULL, &c, &err), -1);
    ck_assert_str_eq(c.name, "bw+net-b");
    ck_assert_int_eq(c.rep->verdict, KGATE_BLOCKED);
    /* Both the box's own reason and the stage's are named. */
    ck_assert_ptr_nonnull(strstr(err.msg, "bw: bw finding 0"));
    ck_assert_ptr_nonnull(strstr(err.msg, "net-b: net-b finding 0"));
    kg_report_free(c.rep);
}
END_TEST

/* A stronger box kept out by missing tools alone, a weaker one picked:
 * the choice says so (issue 43.3); kept out for anything else, or with
 * the weaker one forced, it does not. */
static void lost_for_a_tool(const char *stage_id, const char *forced, int said)
{
    /* A fresh registry each time; the fixture frees the last one. */
    teardown();
    setup();
    restricted();
    add_box("bw", 50);
    fake *st = add_kind("net-b", 5, KGATE_KIND_NETWORK, takes_bw);
    st->verdict = KGATE_BLOCKED;
    st->id = stage_id;
    fake *ll = add_fake("ll", 10);
    ll->verdict = KGATE_DEGRADED;
    ll->id = "proc.visible";
    kg_choice c;
    kg_error err = {0};
    ck_assert_int_eq(choose(forced, &c, &err), 0);
    ck_assert_str_eq(c.name, "ll");
    ck_assert_int_eq(report_has_id(c.rep, "core.fallback"), said);
    if (said)
        ck_assert_str_eq(c.fallback, "picked ll, a weaker box: bw+net-b would give the stronger "
                                     "one but lacks a tool (net-b: net-b finding 0); what ll "
                                     "lacks: ll finding 0 (proc.visible)");
    else
        ck_assert_str_eq(c.fallback, "");
    kg_report_free(c.rep);
}

START_TEST(stronger_box_lost_for_a_tool_is_said)
{
    lost_for_a_tool("tool.slirp4netns-missing", NULL, 1);
    lost_for_a_tool("net.tun-unavailable", NULL, 0);
    lost_for_a_tool("tool.slirp4netns-missing", "ll", 0);
}
END_TEST

START_TEST(no_stage_for_off_or_open)
{
    fake *bw = add_fake("bw", 50);
    fake *st = add_kind("net-b", 500, KGATE_KIND_NETWORK, takes_bw);
    kgate_network modes[] = {KGATE_NET_OFF, KGATE_NET_OPEN};
    for (size_t i = 0; i < 2; i++) {
        policy.network = modes[i];
        kg_choice c;
        kg_error err = {0};
        ck_assert_int_eq(choose(NULL, &c, &err), 0);
        ck_assert_str_eq(c.name, "bw");
        ck_assert_ptr_null(c.stage);
        kg_report_free(c.rep);
        /* A stage named for off or open is refused, not run alone. */
        ck_assert_int_eq(choose("net-b", &c, &err), -1);
        ck_assert_ptr_nonnull(strstr(err.msg, "backend net-b is a network stage"));
    }
    ck_assert_int_eq(st->doctors, 0);
    ck_assert_int_eq(bw->doctors, 2);
    /* And a stage alone is never a box. */
    kg_registry_free(reg);
    reg = kg_registry_new();
    n_fakes = 0;
    add_kind("net-b", 500, KGATE_KIND_NETWORK, takes_bw);
    kg_choice c;
    kg_error err = {0};
    ck_assert_int_eq(choose(NULL, &c, &err), -1);
    ck_assert_ptr_null(c.box);
}
END_TEST

START_TEST(forced_box_stage_and_pair)
{
    restricted();
    add_box("bw", 50);
    add_kind("net-a", 1, KGATE_KIND_NETWORK, takes_bw);
    add_kind("net-b", 5, KGATE_KIND_NETWORK, takes_bw);
    kg_choice c;
    kg_error err = {0};
    /* A box named alone runs alone: it cannot filter hosts. */
    ck_assert_int_eq(choose("bw", &c, &err), -1);
    ck_assert_ptr_null(c.stage);
    ck_assert_ptr_nonnull(strstr(err.msg, "backend bw cannot enforce this policy"));
    kg_report_free(c.rep);
    /* A stage named alone gets the best box it can start. */
    ck_assert_int_eq(choose("net-a", &c, &err), 0);
    ck_assert_str_eq(c.name, "bw+net-a");
    kg_report_free(c.rep);
    ck_assert_int_eq(choose("bw+net-a", &c, &err), 0);
    ck_assert_str_eq(c.name, "bw+net-a");
    kg_report_free(c.rep);
    ck_assert_int_eq(choose("net-a+bw", &c, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "expected BOX+STAGE"));
    ck_assert_int_eq(choose("bw+nosuch", &c, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "backend nosuch not found"));
}
END_TEST

START_TEST(composed_plan_leaves_the_network_to_the_stage)
{
    restricted();
    fake *bw = add_box("bw", 50);
    fake *st = add_kind("net-b", 5, KGATE_KIND_NETWORK, takes_bw);
    bw->planned = st->planned = (kgate_network)-1;
    kg_choice c;
    kg_error err = {0};
    ck_assert_int_eq(choose(NULL, &c, &err), 0);
    kg_report_free(c.rep);
    kgate_plan *plan = kg_plan_new();
    kgate_err perr = {0};
    const char *who = NULL;
    ck_assert_int_eq(kg_select_plan(&c, &host, &policy, plan, &who, &perr), 0);
    ck_assert_int_eq(bw->planned, KGATE_NET_OPEN);
    ck_assert_int_eq(st->planned, KGATE_NET_RESTRICTED);
    size_t argc = 0;
    const char *const *argv = host.pub.plan_argv(plan, &argc);
    ck_assert_uint_eq(argc, 1);
    ck_assert_str_eq(argv[0], "/bin/true");
    ck_assert_str_eq(host.pub.plan_file_content(plan, "stage file"), "from the stage\n");
    kg_plan_free(plan);
    /* A stage that touches the box's argv is refused, and named. */
    st->plan_arg = 1;
    plan = kg_plan_new();
    ck_assert_int_eq(kg_select_plan(&c, &host, &policy, plan, &who, &perr), -1);
    ck_assert_str_eq(who, "net-b");
    ck_assert_ptr_nonnull(strstr(perr.msg, "changed the box's argv"));
    kg_plan_free(plan);
    /* Alone, the box plans with the real policy. */
    c.stage = NULL;
    plan = kg_plan_new();
    ck_assert_int_eq(kg_select_plan(&c, &host, &policy, plan, &who, &perr), 0);
    ck_assert_int_eq(bw->planned, KGATE_NET_RESTRICTED);
    kg_plan_free(plan);
}
END_TEST

/* A 2.0 descriptor that ends at release reads as a box; a kind the core
 * does not know is refused. */
START_TEST(kind_defaults_to_box_and_unknown_is_refused)
{
    fake *f = &fakes[n_fakes++];
    *f = (fake){.name = "short", .available = 1, .verdict = KGATE_READY, .findings = 1};
    kgate_backend b = {
        KGATE_BACKEND_INIT, .name = "short",    .probe = f_probe,     .doctor = f_doctor,
        .plan = f_plan,     .launch = f_launch, .release = f_release, .kind = KGATE_KIND_NETWORK};
    b.struct_size = KG_BACKEND_MIN_SIZE;
    kg_error err = {0};
    kg_plugin *p = kg_registry_add(reg, &b, NULL, NULL, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p->be.kind, KGATE_KIND_BOX);
    b = (kgate_backend){KGATE_BACKEND_INIT, .name = "odd", .kind = (kgate_backend_kind)7};
    ck_assert_ptr_null(kg_registry_add(reg, &b, NULL, NULL, &err));
    ck_assert_str_eq(err.msg, "unknown backend kind 7");
}
END_TEST

/* The state a probe makes reaches doctor through the cached probe, lives
 * until that probe is dropped, and goes back to its backend exactly once:
 * before a deeper probe replaces it, and when the registry unloads. */
START_TEST(probe_state_lives_until_the_probe_is_dropped)
{
    fake *f = add_fake("stateful", 1);
    f->keeps_state = 1;
    fake *g = add_fake("stateless", 2);
    kg_plugin *p = kg_registry_find(reg, "stateful");
    kg_select_probe_all(reg, &host, KGATE_PROBE_QUICK);
    ck_assert_int_eq(states_alive, 1);
    f_state *quick = p->probe.state;
    ck_assert_ptr_nonnull(quick);
    ck_assert_ptr_eq(quick->owner, f);
    ck_assert_ptr_null(kg_registry_find(reg, "stateless")->probe.state);
    kgate_report *rep = kg_select_doctor(p, &host, &policy, KGATE_PROBE_QUICK);
    ck_assert_int_eq(rep->verdict, KGATE_READY);
    kg_report_free(rep);
    ck_assert_ptr_eq(f->seen_state, quick);
    /* A cached probe is reused with its state: nothing freed. */
    kg_select_probe_all(reg, &host, KGATE_PROBE_QUICK);
    ck_assert_int_eq(states_released, 0);
    /* A deeper probe: the old state is released first. */
    kg_select_probe_all(reg, &host, KGATE_PROBE_THOROUGH);
    ck_assert_int_eq(states_released, 1);
    ck_assert_int_eq(states_alive, 1);
    ck_assert_int_eq(((f_state *)p->probe.state)->depth, KGATE_PROBE_THOROUGH);
    ck_assert_int_eq(g->probes[KGATE_PROBE_THOROUGH], 1);
    /* A failed probe's state is still the backend's to free. */
    f->probe_rc = -1;
    p->probed = 0;
    kg_select_probe(p, &host, KGATE_PROBE_THOROUGH);
    ck_assert_int_eq(p->probe_failed, 1);
    ck_assert_int_eq(states_released, 2);
    ck_assert_int_eq(states_alive, 1);
    kg_registry_free(reg);
    reg = NULL;
    ck_assert_int_eq(states_released, 3);
    ck_assert_int_eq(states_alive, 0);
}
END_TEST

START_TEST(reasons_are_the_worst_findings)
{
    kgate_report *rep = kg_report_new();
    host.pub.report(rep, KGATE_READY, "fs.box", "fs box");
    host.pub.report(rep, KGATE_DEGRADED, "net.open", "network open");
    host.pub.report(rep, KGATE_READY, "mask", "mask");
    host.pub.report(rep, KGATE_DEGRADED, "seccomp.none", "no seccomp");
    kg_strv *v = kg_strv_new();
    kg_report_reasons(rep, v);
    ck_assert_uint_eq(kg_strv_len(v), 2);
    ck_assert_str_eq(kg_strv_get(v, 0), "network open");
    ck_assert_str_eq(kg_strv_get(v, 1), "no seccomp");
    kg_strv_free(v);
    kg_report_free(rep);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("select");
    TCase *tc = tcase_create("select");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, ready_beats_degraded_whatever_the_score);
    tcase_add_test(tc, a_run_keeps_no_details);
    tcase_add_test(tc, higher_score_then_load_order);
    tcase_add_test(tc, degraded_is_picked_when_nothing_is_ready);
    tcase_add_test(tc, forced_backend_is_used_even_if_worse);
    tcase_add_test(tc, forced_blocked_is_an_error_with_its_report);
    tcase_add_test(tc, forced_missing_names_the_found_ones);
    tcase_add_test(tc, all_blocked_is_an_error_naming_each);
    tcase_add_test(tc, no_plugin_says_where_it_looked);
    tcase_add_test(tc, failed_probe_blocks_on_one_line);
    tcase_add_test(tc, unavailable_cannot_read_ready);
    tcase_add_test(tc, silent_or_failing_doctor_blocks);
    tcase_add_test(tc, missing_methods_block);
    tcase_add_test(tc, probe_is_cached_per_depth);
    tcase_add_test(tc, composes_best_box_with_best_stage);
    tcase_add_test(tc, box_blocked_for_another_reason_is_not_composed);
    tcase_add_test(tc, stage_must_name_the_box);
    tcase_add_test(tc, blocked_stage_blocks_the_composition);
    tcase_add_test(tc, stronger_box_lost_for_a_tool_is_said);
    tcase_add_test(tc, no_stage_for_off_or_open);
    tcase_add_test(tc, forced_box_stage_and_pair);
    tcase_add_test(tc, composed_plan_leaves_the_network_to_the_stage);
    tcase_add_test(tc, kind_defaults_to_box_and_unknown_is_refused);
    tcase_add_test(tc, reasons_are_the_worst_findings);
    tcase_add_test(tc, probe_state_lives_until_the_probe_is_dropped);
    tcase_add_test(tc, finding_id_rules);
    tcase_add_test(tc, report_keeps_ids);
    tcase_add_test(tc, bad_finding_id_refuses_doctor);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
