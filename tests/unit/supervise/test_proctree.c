/* test_proctree.c: ending the run's processes (core/proctree.c, issue 25
 * section 5) against a made-up process table: who is below kgate, and
 * the rounds of kills, with the attackers of tests/integration/outlive.sh
 * (a daemon chain that ignores SIGTERM, a fork loop whose pid keeps
 * changing, a loop that forks on every look) and one process that never
 * dies (the bound, and the failure it must report). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proctree.h"
#include "testutil.h"

#define SELF 100

/* ---- kg_proctree_below ---------------------------------------------- */

static size_t below(const kg_procent *v, size_t n, const pid_t *spare, size_t ns, pid_t *out)
{
    size_t idx[64];
    long k = kg_proctree_below(v, n, SELF, spare, ns, idx);
    ck_assert_int_ge(k, 0);
    for (long i = 0; i < k; i++) out[i] = v[idx[i]].pid;
    return (size_t)k;
}

static bool in(const pid_t *v, size_t n, pid_t p)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == p) return true;
    return false;
}

START_TEST(below_finds_every_descendant_and_nothing_else)
{
    /* Listed children before parents, as after a pid wrap. */
    const kg_procent v[] = {
        {5, 300, false}, /* great-grandchild */
        {1, 0, false}, /* init */
        {SELF, 1, false}, /* kgate */
        {300, 200, true}, /* a zombie grandchild: still there */
        {200, SELF, false}, {400, 1, false}, /* someone else's */
        {401, 400, false},  {500, SELF, false}, /* a helper: spared, with its child */
        {501, 500, false},  {600, 601, false}, /* a loop (a racy list): not ours */
        {601, 600, false},  {700, 999, false}, /* a parent not in the list */
    };
    const pid_t spare[] = {500};
    pid_t got[16];
    size_t k = below(v, sizeof v / sizeof *v, spare, 1, got);
    ck_assert_uint_eq(k, 3);
    ck_assert(in(got, k, 200) && in(got, k, 300) && in(got, k, 5));
    /* Without the spare list the helper's subtree is the run's too. */
    k = below(v, sizeof v / sizeof *v, NULL, 0, got);
    ck_assert_uint_eq(k, 5);
    ck_assert(in(got, k, 500) && in(got, k, 501));
    ck_assert(!in(got, k, SELF) && !in(got, k, 401) && !in(got, k, 600));
}
END_TEST

/* ---- a made-up system for kg_proctree_end ----------------------------- */

enum kind { PLAIN, HOPPER, FANNER, UNKILLABLE, ENDS_SOON };

typedef struct proc {
    pid_t pid, ppid;
    enum kind kind;
    bool zombie, gone, killed;
    bool behind; /* forked behind the scan's cursor (a lower pid after a
                    wrap): the scan under way does not see it */
    bool last; /* forked while SIGKILL came: it forks no more before
                    its own kill */
} proc;

typedef struct world {
    proc p[4096];
    size_t n;
    pid_t next;
    int64_t now;
    size_t kills_sent;
    int fail_scan; /* errno for the scan, or 0 */
} world;

static proc *add(world *w, pid_t ppid, enum kind kind)
{
    ck_assert_uint_lt(w->n, sizeof w->p / sizeof *w->p);
    proc *p = &w->p[w->n++];
    *p = (proc){.pid = w->next++, .ppid = ppid, .kind = kind};
    return p;
}

static proc *find(world *w, pid_t pid)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->p[i].pid == pid && !w->p[i].gone) return &w->p[i];
    return NULL;
}

/* A process ends: a zombie, its children reparented to kgate (the
 * subreaper above them all). */
static void die(world *w, proc *p)
{
    p->zombie = true;
    for (size_t i = 0; i < w->n; i++)
        if (!w->p[i].gone && w->p[i].ppid == p->pid) w->p[i].ppid = SELF;
}

static int w_scan(void *ctx, void (*each)(void *, const kg_procent *), void *arg)
{
    world *w = ctx;
    if (w->fail_scan) {
        errno = w->fail_scan;
        return -1;
    }
    /* In the order of the table; what is forked during the scan is
     * appended, and read too if the scan gets there (a higher pid). */
    size_t acting = w->n; /* one move each per scan: as fast as the reads */
    for (size_t i = 0; i < w->n; i++) w->p[i].behind = false;
    for (size_t i = 0; i < w->n; i++) {
        proc *p = &w->p[i];
        if (p->gone || p->behind) continue;
        kg_procent e = {p->pid, p->ppid, p->zombie};
        each(arg, &e);
        if (p->zombie || p->killed || p->last || i >= acting) continue;
        /* Between this entry and the next, the attackers move. */
        if (p->kind == HOPPER) {
            add(w, p->pid, HOPPER);
            die(w, p);
        } else if (p->kind == FANNER) {
            add(w, p->pid, PLAIN);
        }
    }
    return 0;
}

static void w_kill(void *ctx, pid_t pid, pid_t ppid)
{
    world *w = ctx;
    proc *p = find(w, pid);
    w->kills_sent++;
    if (!p || p->ppid != ppid || p->zombie || p->kind == UNKILLABLE) return;
    p->killed = true;
    /* A fork loop's fork under way when SIGKILL comes completes: one last
     * child, with a pid the scan has passed (it is found next round). */
    if (p->kind == HOPPER && !p->last) {
        proc *c = add(w, p->pid, HOPPER);
        c->behind = c->last = true;
    }
    die(w, p);
}

static bool w_reap(void *ctx, pid_t pid)
{
    world *w = ctx;
    proc *p = find(w, pid);
    if (!p || p->ppid != SELF) return true;
    if (!p->zombie) return false;
    p->gone = true;
    return true;
}

static void w_pause(void *ctx, int ms)
{
    world *w = ctx;
    w->now += ms;
    /* The polite ones end by themselves within the grace. */
    for (size_t i = 0; i < w->n; i++)
        if (!w->p[i].gone && !w->p[i].zombie && w->p[i].kind == ENDS_SOON && w->now >= 100)
            die(w, &w->p[i]);
}

static int64_t w_now(void *ctx) { return ((world *)ctx)->now; }

static world *new_world(void)
{
    world *w = calloc(1, sizeof *w);
    ck_assert_ptr_nonnull(w);
    w->p[w->n++] = (proc){.pid = SELF, .ppid = 1}; /* kgate itself */
    w->next = 1000;
    return w;
}

static int end(world *w, const pid_t *spare, size_t ns, kg_proctree_result *res)
{
    const kg_proctree_ops ops = {w, w_scan, w_kill, w_reap, w_pause, w_now};
    return kg_proctree_end(&ops, SELF, spare, ns, 2000, 5000, res);
}

/* What is left of the run (kgate itself aside). */
static size_t alive(world *w)
{
    size_t k = 0;
    for (size_t i = 0; i < w->n; i++)
        if (!w->p[i].gone && w->p[i].pid != SELF) k++;
    return k;
}

START_TEST(a_daemon_chain_that_ignores_sigterm_is_killed_whole)
{
    world *w = new_world();
    /* setsid daemon A (reparented to kgate), its child B, B's child C:
     * before, only kgate's children of the moment were killed, once. */
    proc *a = add(w, SELF, PLAIN);
    proc *b = add(w, a->pid, PLAIN);
    add(w, b->pid, PLAIN);
    kg_proctree_result res;
    ck_assert_int_eq(end(w, NULL, 0, &res), 0);
    ck_assert_uint_eq(alive(w), 0);
    ck_assert_uint_eq(res.left, 0);
    ck_assert_uint_ge(res.killed, 3);
    /* The grace was waited for, then no more than the bound. */
    ck_assert_int_ge(w->now, 2000);
    ck_assert_int_lt(w->now, 7000);
    free(w);
}
END_TEST

START_TEST(what_ends_by_itself_in_the_grace_is_not_killed)
{
    world *w = new_world();
    proc *a = add(w, SELF, ENDS_SOON);
    add(w, a->pid, ENDS_SOON);
    kg_proctree_result res;
    ck_assert_int_eq(end(w, NULL, 0, &res), 0);
    ck_assert_uint_eq(alive(w), 0);
    ck_assert_uint_eq(w->kills_sent, 0);
    ck_assert_int_lt(w->now, 2000);
    free(w);
}
END_TEST

START_TEST(nothing_left_returns_at_once)
{
    world *w = new_world();
    kg_proctree_result res;
    ck_assert_int_eq(end(w, NULL, 0, &res), 0);
    ck_assert_uint_eq(res.rounds, 1);
    ck_assert_int_eq(w->now, 0);
    free(w);
}
END_TEST

START_TEST(a_child_that_has_exited_is_reaped_without_a_pause)
{
    world *w = new_world();
    /* bwrap's pid 1, reparented to kgate when the outer bwrap ended, and
     * dead by the time of the scan: reaped, then one more scan shows the
     * tree empty.  A pause there (20 ms, which no SIGCHLD cuts short) was
     * most of what kgate added to a run's end. */
    proc *init = add(w, SELF, PLAIN);
    init->zombie = true;
    kg_proctree_result res;
    ck_assert_int_eq(end(w, NULL, 0, &res), 0);
    ck_assert(init->gone);
    ck_assert_uint_eq(res.rounds, 2);
    ck_assert_int_eq(w->now, 0);
    free(w);
}
END_TEST

START_TEST(a_fork_loop_that_changes_its_pid_converges)
{
    world *w = new_world();
    /* It forks and its parent exits between any two entries read. */
    add(w, SELF, HOPPER);
    proc *f = add(w, SELF, FANNER);
    add(w, f->pid, HOPPER);
    kg_proctree_result res;
    ck_assert_int_eq(end(w, NULL, 0, &res), 0);
    ck_assert_uint_eq(alive(w), 0);
    ck_assert_uint_lt(res.rounds, 2000 / 20 + 20);
    free(w);
}
END_TEST

START_TEST(helpers_and_earlier_children_are_spared)
{
    world *w = new_world();
    proc *helper = add(w, SELF, PLAIN);
    proc *hchild = add(w, helper->pid, PLAIN);
    proc *run = add(w, SELF, PLAIN);
    const pid_t spare[] = {helper->pid};
    kg_proctree_result res;
    ck_assert_int_eq(end(w, spare, 1, &res), 0);
    ck_assert(!helper->zombie && !helper->gone && !hchild->zombie && !hchild->gone);
    ck_assert(run->gone);
    free(w);
}
END_TEST

START_TEST(one_that_never_dies_fails_within_the_bound_and_is_named)
{
    world *w = new_world();
    proc *a = add(w, SELF, PLAIN);
    proc *d = add(w, a->pid, UNKILLABLE); /* uninterruptible sleep */
    kg_proctree_result res;
    ck_assert_int_eq(end(w, NULL, 0, &res), -1);
    ck_assert_uint_eq(res.left, 1);
    ck_assert_int_eq(res.shown[0], d->pid);
    ck_assert_int_eq(res.scan_errno, 0);
    /* Bounded: the grace and the bound, and a round's pause. */
    ck_assert_int_ge(w->now, 7000);
    ck_assert_int_lt(w->now, 7100);
    free(w);
}
END_TEST

START_TEST(a_list_that_cannot_be_read_is_a_failure)
{
    world *w = new_world();
    add(w, SELF, PLAIN);
    w->fail_scan = EACCES;
    kg_proctree_result res;
    ck_assert_int_eq(end(w, NULL, 0, &res), -1);
    ck_assert_int_eq(res.scan_errno, EACCES);
    free(w);
}
END_TEST

START_TEST(a_list_without_kgate_in_it_proves_nothing)
{
    /* /proc not a procfs, or another PID namespace's: empty or foreign. */
    world *w = new_world();
    w->p[0].gone = true;
    add(w, SELF, PLAIN);
    kg_proctree_result res;
    ck_assert_int_eq(end(w, NULL, 0, &res), -1);
    ck_assert_int_eq(res.scan_errno, ESRCH);
    free(w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("proctree");
    TCase *tc = tcase_create("proctree");
    tcase_add_test(tc, below_finds_every_descendant_and_nothing_else);
    tcase_add_test(tc, a_daemon_chain_that_ignores_sigterm_is_killed_whole);
    tcase_add_test(tc, what_ends_by_itself_in_the_grace_is_not_killed);
    tcase_add_test(tc, a_child_that_has_exited_is_reaped_without_a_pause);
    tcase_add_test(tc, nothing_left_returns_at_once);
    tcase_add_test(tc, a_fork_loop_that_changes_its_pid_converges);
    tcase_add_test(tc, helpers_and_earlier_children_are_spared);
    tcase_add_test(tc, one_that_never_dies_fails_within_the_bound_and_is_named);
    tcase_add_test(tc, a_list_that_cannot_be_read_is_a_failure);
    tcase_add_test(tc, a_list_without_kgate_in_it_proves_nothing);
    suite_add_tcase(s, tc);
    return kgt_run_suite(s);
}
