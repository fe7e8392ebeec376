/* test_ll_plan.c: the Landlock backend's rule set, doctor and plan, on a
 * tree made here and on made-up kernels (ABI 1 to 7). */
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"
#include "ll-internal.h"
#include "testutil.h"

static char root[64], home[128], proj[160], denied[192], hooks[192], sub[192], secret[160],
    dotgit[192], existing[192];

static void mk(const char *p) { ck_assert_int_eq(mkdir(p, 0755), 0); }
static void touch(const char *p)
{
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
}

static void setup(void)
{
    snprintf(root, sizeof root, "/tmp/kgll.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(home, sizeof home, "%s/home", root);
    snprintf(proj, sizeof proj, "%s/proj", home);
    snprintf(dotgit, sizeof dotgit, "%s/.git", proj);
    snprintf(hooks, sizeof hooks, "%s/.git/hooks", proj);
    snprintf(sub, sizeof sub, "%s/sub", proj);
    snprintf(denied, sizeof denied, "%s/denied.txt", proj);
    snprintf(existing, sizeof existing, "%s/existing.txt", proj);
    snprintf(secret, sizeof secret, "%s/secret.txt", home);
    mk(home);
    mk(proj);
    mk(dotgit);
    mk(hooks);
    mk(sub);
    touch(denied);
    touch(existing);
    touch(secret);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void teardown(void) { ck_assert_int_eq(nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0); }

typedef struct fixture {
    kg_host host;
    kgate_probe probe;
    kgate_policy pol;
    const char *args[2], *deny[1], *prot[1];
} fixture;

static void fixture_init(fixture *f, int abi)
{
    memset(f, 0, sizeof *f);
    kg_host_init(&f->host);
    kgate_probe_init(&f->probe);
    ll_probe_from_facts(&f->probe, abi, 1, 1, 0);
    f->pol.struct_size = sizeof f->pol;
    f->pol.network = KGATE_NET_OFF;
    f->pol.project = proj;
    f->pol.home = home;
    f->args[0] = "make";
    f->args[1] = "test";
    f->pol.argv = (kgate_strlist){f->args, 2};
    f->pol.command_path = "/usr/bin/make";
    f->deny[0] = denied;
    f->prot[0] = hooks;
    f->pol.deny_read = (kgate_strlist){f->deny, 1};
    f->pol.protect_paths = (kgate_strlist){f->prot, 1};
}

static const ll_path *rule_for(const ll_rules *r, const char *path)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->v[i].path, path) == 0) return &r->v[i];
    return NULL;
}

START_TEST(home_hidden_project_split)
{
    fixture f;
    fixture_init(&f, 7);
    ll_rules r;
    kgate_err err = {0};
    ck_assert_msg(ll_rules_build(&f.pol, 7, LL_TMP_PLACEHOLDER, &r, &err) == 0, "%s", err.msg);
    /* Nothing of home but the project; nothing of / as a whole. */
    for (size_t i = 0; i < r.n; i++) {
        ck_assert_msg(!kgate_path_under(r.v[i].path, home) || kgate_path_under(r.v[i].path, proj),
                      "home granted: %s", r.v[i].path);
        ck_assert_msg(strcmp(r.v[i].path, "/") != 0, "/ granted");
        ck_assert_msg(!kgate_path_under(r.v[i].path, "/tmp") ||
                          kgate_path_under(r.v[i].path, proj) ||
                          strcmp(r.v[i].path, LL_TMP_PLACEHOLDER) == 0,
                      "/tmp granted: %s", r.v[i].path);
    }
    ck_assert_ptr_null(rule_for(&r, secret));
    ck_assert_ptr_null(rule_for(&r, denied));
    /* The project root keeps listing only: everything below it would
     * otherwise get what it gets. */
    const ll_path *p = rule_for(&r, proj);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->access, LL_FS_READ_DIR);
    p = rule_for(&r, hooks);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->access, LL_FS_READ);
    p = rule_for(&r, sub);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->access, LL_FS_RW & ll_fs_handled(7));
    p = rule_for(&r, existing);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->access, (LL_FS_RW & LL_FS_FILE_RIGHTS) & ll_fs_handled(7));
    ck_assert_ptr_nonnull(rule_for(&r, "/usr"));
    ck_assert_uint_eq(rule_for(&r, "/usr")->access, LL_FS_READ);
    ck_assert_ptr_null(rule_for(&r, "/dev"));
    ck_assert_ptr_nonnull(rule_for(&r, "/dev/null"));
    ck_assert_uint_eq(r.n_split >= 3, 1); /* /, the project, .git */
    ck_assert_uint_eq(r.net_handled, LL_NET_BIND_TCP | LL_NET_CONNECT_TCP);
    ck_assert_uint_eq(r.scoped, LL_SCOPE_SIGNAL | LL_SCOPE_ABSTRACT_UNIX);
    ck_assert_int_eq(r.nonet, 1);
    char *t = ll_rules_table(&r);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(strstr(t, "rlxwcdtm-  dir   project"));
    ck_assert_ptr_nonnull(strstr(t, "TCP bind and connect refused"));
    free(t);
    ll_rules_free(&r);
}
END_TEST

START_TEST(without_holes_the_project_is_one_rule)
{
    fixture f;
    fixture_init(&f, 3);
    f.pol.deny_read.n = 0;
    f.pol.protect_paths.n = 0;
    f.pol.network = KGATE_NET_OPEN;
    ll_rules r;
    kgate_err err = {0};
    ck_assert_int_eq(ll_rules_build(&f.pol, 3, NULL, &r, &err), 0);
    ck_assert_uint_eq(rule_for(&r, proj)->access, LL_FS_RW & ll_fs_handled(3));
    ck_assert_ptr_null(rule_for(&r, sub));
    ck_assert_uint_eq(r.net_handled, 0);
    ck_assert_uint_eq(r.scoped, 0);
    ck_assert_int_eq(r.nonet, 0);
    ll_rules_free(&r);
}
END_TEST

START_TEST(abi_masks)
{
    ck_assert_uint_eq(ll_fs_handled(0), 0);
    ck_assert_uint_eq(ll_fs_handled(1), (1ULL << 13) - 1);
    ck_assert_uint_eq(ll_fs_handled(2) & LL_FS_REFER, LL_FS_REFER);
    ck_assert_uint_eq(ll_fs_handled(2) & LL_FS_TRUNCATE, 0);
    ck_assert_uint_eq(ll_fs_handled(3) & LL_FS_TRUNCATE, LL_FS_TRUNCATE);
    ck_assert_uint_eq(ll_fs_handled(4) & LL_FS_IOCTL_DEV, 0);
    ck_assert_uint_eq(ll_fs_handled(5) & LL_FS_IOCTL_DEV, LL_FS_IOCTL_DEV);
    ck_assert_uint_eq(ll_net_handled(3), 0);
    ck_assert_uint_eq(ll_net_handled(4), 3);
    ck_assert_uint_eq(ll_scoped(5), 0);
    ck_assert_uint_eq(ll_scoped(6), 3);
}
END_TEST

static kgate_verdict verdict_of(kgate_report *rep, const char *id)
{
    for (size_t i = 0; i < rep->n_items; i++)
        if (strcmp(rep->items[i].id, id) == 0) return rep->items[i].verdict;
    return (kgate_verdict)-1;
}

static const char *text_of(kgate_report *rep, const char *id)
{
    for (size_t i = 0; i < rep->n_items; i++)
        if (strcmp(rep->items[i].id, id) == 0) return rep->items[i].text;
    return "";
}

static kgate_report *doctor(fixture *f)
{
    kgate_report *rep = kg_report_new();
    ck_assert_int_eq(ll_doctor(&f->host.pub, &f->pol, &f->probe, rep), 0);
    return rep;
}

START_TEST(doctor_names_what_each_abi_lacks)
{
    for (int abi = 1; abi <= 8; abi++) {
        fixture f;
        fixture_init(&f, abi);
        kgate_report *rep = doctor(&f);
        /* Network off is never BLOCKED, on any ABI. */
        ck_assert_int_ne(rep->verdict, KGATE_BLOCKED);
        ck_assert_int_eq(verdict_of(rep, "net.off"), KGATE_READY);
        ck_assert_int_eq(verdict_of(rep, "scope.signal"), abi >= 6 ? KGATE_READY : KGATE_DEGRADED);
        ck_assert_int_eq(verdict_of(rep, "sockets.abstract"),
                         abi >= 6 ? KGATE_READY : KGATE_DEGRADED);
        ck_assert_int_eq(verdict_of(rep, "fs.truncate-unchecked"),
                         abi < 3 ? KGATE_DEGRADED : (kgate_verdict)-1);
        /* Without user notification no one decides host sockets. */
        ck_assert_int_eq(verdict_of(rep, "sockets.unix"), KGATE_DEGRADED);
        ck_assert_int_eq(verdict_of(rep, "proc.visible"), KGATE_DEGRADED);
        ck_assert_int_eq(verdict_of(rep, "fs.split"), KGATE_DEGRADED);
        kg_report_free(rep);
        /* With it the supervisor does (issue 43), on every ABI. */
        kgate_probe_set_fact(&f.probe, LL_FACT_UNOTIFY, 1);
        rep = doctor(&f);
        ck_assert_int_eq(verdict_of(rep, "sockets.unix"), KGATE_READY);
        ck_assert_ptr_nonnull(strstr(text_of(rep, "sockets.unix"), "allow_sockets"));
        kg_report_free(rep);
    }
}
END_TEST

START_TEST(doctor_network_modes)
{
    fixture f;
    fixture_init(&f, 7);
    const char *hosts[] = {"example.org"};
    f.pol.network = KGATE_NET_RESTRICTED;
    f.pol.allow_hosts = (kgate_strlist){hosts, 1};
    kgate_report *rep = doctor(&f);
    ck_assert_int_eq(rep->verdict, KGATE_BLOCKED);
    ck_assert_int_eq(verdict_of(rep, KGATE_FINDING_NET_HOSTS_UNSUPPORTED), KGATE_BLOCKED);
    kg_report_free(rep);
    f.pol.network = KGATE_NET_OPEN;
    rep = doctor(&f);
    ck_assert_int_eq(verdict_of(rep, "net.open"), KGATE_DEGRADED);
    kg_report_free(rep);
    /* No Landlock: BLOCKED, with the reason. */
    fixture_init(&f, 0);
    rep = doctor(&f);
    ck_assert_int_eq(verdict_of(rep, "landlock.unavailable"), KGATE_BLOCKED);
    kg_report_free(rep);
}
END_TEST

/* SysV IPC: supervised where the kernel has user notification with
 * continue, refused otherwise; READY both ways (nothing outside is
 * reachable), and the sentence says which, with what would do better. */
START_TEST(doctor_says_which_sysv_ipc)
{
    fixture f;
    fixture_init(&f, 7);
    kgate_report *rep = doctor(&f);
    ck_assert_int_eq(verdict_of(rep, "ipc.sysv"), KGATE_READY);
    ck_assert_ptr_nonnull(
        strstr(text_of(rep, "ipc.sysv"), "SysV IPC: none in the Landlock box; no IPC namespace"));
    ck_assert_ptr_nonnull(strstr(text_of(rep, "ipc.sysv"), "Linux 5.5"));
    kg_report_free(rep);
    kgate_probe_set_fact(&f.probe, LL_FACT_IPC, 1);
    rep = doctor(&f);
    ck_assert_int_eq(verdict_of(rep, "ipc.sysv"), KGATE_READY);
    ck_assert_ptr_nonnull(strstr(text_of(rep, "ipc.sysv"), "only the run's own objects"));
    kg_report_free(rep);
    /* With the filesystem supervisor too: it passes the calls on. */
    kgate_probe_set_fact(&f.probe, LL_FACT_UNOTIFY, 1);
    rep = doctor(&f);
    ck_assert_int_eq(verdict_of(rep, "ipc.sysv"), KGATE_READY);
    ck_assert_ptr_nonnull(strstr(text_of(rep, "ipc.sysv"), "only the run's own objects"));
    ck_assert_ptr_null(strstr(text_of(rep, "ipc.sysv"), "none in a project"));
    kg_report_free(rep);
}
END_TEST

START_TEST(probe_scores_below_bubblewrap)
{
    kgate_probe p;
    kgate_probe_init(&p);
    ll_probe_from_facts(&p, 7, 1, 1, 1);
    ck_assert_int_eq(p.available, 1);
    ck_assert_int_lt(p.score, 50); /* bubblewrap's */
    kgate_probe_init(&p);
    ll_probe_from_facts(&p, 0, 1, 1, 0);
    ck_assert_int_eq(p.available, 0);
    kgate_probe_init(&p);
    ll_probe_from_facts(&p, 7, 1, 0, 0);
    ck_assert_int_eq(p.available, 0);
}
END_TEST

START_TEST(plan_is_the_command_and_the_tables)
{
    fixture f;
    fixture_init(&f, 7);
    kgate_plan *plan = kg_plan_new();
    kgate_err err = {0};
    ck_assert_msg(ll_plan(&f.host.pub, &f.pol, &f.probe, plan, &err) == 0, "%s", err.msg);
    size_t n;
    const char *const *v = f.host.pub.plan_argv(plan, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(v[0], "/usr/bin/make");
    ck_assert_str_eq(v[1], "test");
    const char *t = f.host.pub.plan_file_content(plan, "landlock ruleset");
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(strstr(t, LL_TMP_PLACEHOLDER));
    ck_assert_ptr_nonnull(f.host.pub.plan_file_content(plan, KGL_SECCOMP_LABEL));
    ck_assert_ptr_nonnull(f.host.pub.plan_file_content(plan, KGL_SECCOMP_NONET_LABEL));
    /* The IPC filter's text, as this probe says (no notification: EPERM). */
    const char *ipc = f.host.pub.plan_file_content(plan, KGL_IPC_LABEL);
    ck_assert_ptr_nonnull(ipc);
    ck_assert_ptr_nonnull(strstr(ipc, "shmget shmat shmdt shmctl"));
    ck_assert_ptr_nonnull(strstr(ipc, ": EPERM (this kernel"));
    ck_assert_ptr_nonnull(strstr(ipc, "mq_open mq_unlink: EPERM"));
    kg_plan_free(plan);
    /* A host list: refused with doctor's sentence. */
    const char *hosts[] = {"example.org"};
    f.pol.network = KGATE_NET_RESTRICTED;
    f.pol.allow_hosts = (kgate_strlist){hosts, 1};
    plan = kg_plan_new();
    ck_assert_int_eq(ll_plan(&f.host.pub, &f.pol, &f.probe, plan, &err), -1);
    ck_assert_int_eq(strncmp(err.msg, ll_hosts_sentence(), strlen(ll_hosts_sentence())), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "(the supervisor is not available here)"));
    kg_plan_free(plan);
    /* With the supervisor (and dnsmasq, when installed): planned, and
     * the plan says how. */
    kgate_probe_set_fact(&f.probe, LL_FACT_UNOTIFY, 1);
    char bin[256];
    plan = kg_plan_new();
    if (kgl_un_find_dnsmasq(bin, sizeof bin) == 0) {
        ck_assert_int_eq(ll_plan(&f.host.pub, &f.pol, &f.probe, plan, &err), 0);
    } else {
        ck_assert_int_eq(ll_plan(&f.host.pub, &f.pol, &f.probe, plan, &err), -1);
        ck_assert_ptr_nonnull(strstr(err.msg, "dnsmasq is not installed"));
    }
    kg_plan_free(plan);
}
END_TEST

/* issue 40, defect 2: a deny_read file with a second name is refused by
 * the plan, naming it, as bubblewrap's plan refuses it; one in the hidden
 * home (the program sees neither name) is not looked at. */
START_TEST(plan_refuses_a_deny_read_file_with_two_names)
{
    fixture f;
    fixture_init(&f, 7);
    char other[200];
    snprintf(other, sizeof other, "%s/.x", proj);
    ck_assert_int_eq(link(denied, other), 0);
    kgate_plan *plan = kg_plan_new();
    kgate_err err = {0};
    ck_assert_int_eq(ll_plan(&f.host.pub, &f.pol, &f.probe, plan, &err), -1);
    ck_assert_msg(strstr(err.msg, denied) && strstr(err.msg, "has 2 hard links"), "%s", err.msg);
    kg_plan_free(plan);
    /* A symbolic link at the name: refused too. */
    ck_assert_int_eq(unlink(denied), 0);
    ck_assert_int_eq(symlink(".x", denied), 0);
    plan = kg_plan_new();
    ck_assert_int_eq(ll_plan(&f.host.pub, &f.pol, &f.probe, plan, &err), -1);
    ck_assert_msg(strstr(err.msg, "is a symbolic link"), "%s", err.msg);
    kg_plan_free(plan);
    /* Hidden: the home's secret with two names is the user's business. */
    char other2[200];
    snprintf(other2, sizeof other2, "%s/secret2", home);
    ck_assert_int_eq(link(secret, other2), 0);
    ck_assert_int_eq(unlink(denied), 0);
    f.deny[0] = secret;
    plan = kg_plan_new();
    ck_assert_msg(ll_plan(&f.host.pub, &f.pol, &f.probe, plan, &err) == 0, "%s", err.msg);
    kg_plan_free(plan);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("landlock");
    TCase *tc = tcase_create("plan");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, home_hidden_project_split);
    tcase_add_test(tc, without_holes_the_project_is_one_rule);
    tcase_add_test(tc, abi_masks);
    tcase_add_test(tc, doctor_names_what_each_abi_lacks);
    tcase_add_test(tc, doctor_network_modes);
    tcase_add_test(tc, doctor_says_which_sysv_ipc);
    tcase_add_test(tc, probe_scores_below_bubblewrap);
    tcase_add_test(tc, plan_is_the_command_and_the_tables);
    tcase_add_test(tc, plan_refuses_a_deny_read_file_with_two_names);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
