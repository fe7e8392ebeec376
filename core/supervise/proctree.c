/* proctree.c: finding and ending the run's processes (proctree.h says
 * why and how; this file makes no system call of its own). */
#include "proctree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct pid_at {
    pid_t pid;
    size_t at; /* index in the table */
} pid_at;

static int by_pid(const void *a, const void *b)
{
    pid_t x = ((const pid_at *)a)->pid, y = ((const pid_at *)b)->pid;
    return (x > y) - (x < y);
}

/* The index of pid in the table, through the sorted copy, or n. */
static size_t find(const pid_at *sorted, size_t n, pid_t pid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sorted[mid].pid == pid) return sorted[mid].at;
        if (sorted[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return n;
}

static bool has(const pid_t *v, size_t n, pid_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == pid) return true;
    return false;
}

enum { UNKNOWN, VISITING, BELOW, NOT_BELOW };

/* Walks up from entry i until an answer is known (a child of root, a
 * process already decided, one without a parent in the table, or a loop),
 * then writes that answer on the whole path.  path has room for n. */
static void decide(const kg_procent *v, size_t n, const pid_at *sorted, pid_t root,
                   const pid_t *spare, size_t nspare, unsigned char *state, size_t *path, size_t i)
{
    size_t len = 0, j = i;
    unsigned char answer = NOT_BELOW;
    for (;;) {
        if (state[j] == BELOW || state[j] == NOT_BELOW) {
            answer = state[j];
            break;
        }
        if (state[j] == VISITING || v[j].pid == root) break; /* a loop; root itself */
        state[j] = VISITING;
        path[len++] = j;
        if (v[j].ppid == root) {
            answer = has(spare, nspare, v[j].pid) ? NOT_BELOW : BELOW;
            break;
        }
        size_t up = v[j].ppid > 0 ? find(sorted, n, v[j].ppid) : n;
        if (up == n) break; /* no parent in the table: not ours */
        j = up;
    }
    while (len > 0) state[path[--len]] = answer;
}

long kg_proctree_below(const kg_procent *v, size_t n, pid_t root, const pid_t *spare, size_t nspare,
                       size_t *out)
{
    if (n == 0) return 0;
    pid_at *sorted = malloc(n * sizeof *sorted);
    unsigned char *state = calloc(n, 1);
    size_t *path = malloc(n * sizeof *path);
    if (!sorted || !state || !path) {
        free(sorted);
        free(state);
        free(path);
        return -1;
    }
    for (size_t i = 0; i < n; i++) sorted[i] = (pid_at){v[i].pid, i};
    qsort(sorted, n, sizeof *sorted, by_pid);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (state[i] == UNKNOWN) decide(v, n, sorted, root, spare, nspare, state, path, i);
        if (state[i] == BELOW) out[k++] = i;
    }
    free(sorted);
    free(state);
    free(path);
    return (long)k;
}

/* One round's state, shared with the scan callback. */
typedef struct round {
    const kg_proctree_ops *ops;
    pid_t self;
    const pid_t *spare;
    size_t nspare;
    bool killing;
    kg_procent *v;
    size_t n, cap;
    bool *sent; /* per entry: killed while the scan read it */
    bool oom;
    bool saw_self; /* a list without kgate in it is not the system's */
    size_t killed;
} round;

static void on_entry(void *arg, const kg_procent *e)
{
    round *r = arg;
    if (e->pid == r->self) r->saw_self = true;
    if (r->oom) return;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        kg_procent *v = realloc(r->v, cap * sizeof *v);
        bool *sent = v ? realloc(r->sent, cap * sizeof *sent) : NULL;
        if (v) r->v = v;
        if (!v || !sent) {
            r->oom = true;
            return;
        }
        r->sent = sent;
        r->cap = cap;
    }
    r->v[r->n] = *e;
    r->sent[r->n] = false;
    /* A child of ours, killed the moment it is seen: it cannot be reaped
     * by anyone else, so its pid cannot have been reused. */
    if (r->killing && !e->zombie && e->ppid == r->self && !has(r->spare, r->nspare, e->pid)) {
        r->ops->kill(r->ops->ctx, e->pid, e->ppid);
        r->sent[r->n] = true;
        r->killed++;
    }
    r->n++;
}

/* One scan: kills (when killing) and reaps what it finds below self.
 * Returns how many it found, zombies and what it reaped included, or -1
 * when the list failed.  Only a scan that finds none at all shows the
 * tree empty: every process of the tree at its start has a first
 * ancestor below kgate, which only kgate reaps (not during a scan), so
 * that one is listed, and without any there is no one left to fork.  A
 * scan that reaped or killed may have missed a child forked behind its
 * cursor (a pid lower than the one being read, after a wrap). */
static long one_round(round *r, kg_proctree_result *res)
{
    r->n = 0;
    r->oom = false;
    r->saw_self = false;
    r->killed = 0;
    res->rounds++;
    if (r->ops->scan(r->ops->ctx, on_entry, r) < 0) {
        res->scan_errno = errno ? errno : EIO;
        return -1;
    }
    /* An empty or foreign list (no procfs on /proc, another PID
     * namespace's) would show any tree empty. */
    if (!r->saw_self) {
        res->scan_errno = ESRCH;
        return -1;
    }
    size_t *below = r->oom ? NULL : malloc((r->n ? r->n : 1) * sizeof *below);
    long k = below ? kg_proctree_below(r->v, r->n, r->self, r->spare, r->nspare, below) : -1;
    if (k < 0) {
        free(below);
        res->scan_errno = ENOMEM;
        return -1;
    }
    size_t left = 0;
    for (long i = 0; i < k; i++) {
        const kg_procent *e = &r->v[below[i]];
        if (r->killing && !e->zombie && !r->sent[below[i]]) {
            r->ops->kill(r->ops->ctx, e->pid, e->ppid);
            r->killed++;
        }
        if (e->ppid == r->self && r->ops->reap(r->ops->ctx, e->pid)) continue;
        if (left < KG_PROCTREE_SHOW) res->shown[left] = e->pid;
        left++;
    }
    free(below);
    res->killed += r->killed;
    res->left = left;
    return k;
}

int kg_proctree_end(const kg_proctree_ops *ops, pid_t self, const pid_t *spare, size_t nspare,
                    int grace_ms, int bound_ms, kg_proctree_result *res)
{
    memset(res, 0, sizeof *res);
    round r = {.ops = ops, .self = self, .spare = spare, .nspare = nspare};
    int64_t start = ops->now_ms(ops->ctx);
    int64_t kill_at = start + (grace_ms > 0 ? grace_ms : 0);
    int64_t give_up = kill_at + (bound_ms > 0 ? bound_ms : 0);
    int rc = -1;
    bool quick = false;
    for (;;) {
        int64_t now = ops->now_ms(ops->ctx);
        r.killing = now >= kill_at;
        long found = one_round(&r, res);
        if (found == 0) {
            rc = 0;
            break;
        }
        /* The list cannot be read: nothing says the tree is empty. */
        if (found < 0) break;
        /* Past the bound with some alive: fail.  (With all it found reaped,
         * one more scan may well show none: a little longer for that.) */
        int64_t t = ops->now_ms(ops->ctx);
        if (t >= give_up && (res->left > 0 || t >= give_up + 1000)) break;
        /* All it found were reaped: the next scan is only the proof that
         * none is left (and what they left is listed by then), with
         * nothing to wait for: no pause, which no SIGCHLD would cut
         * short.  Once in a row: a tree that keeps leaving zombies is
         * alive, and gets the pause. */
        if (res->left == 0 && r.killed == 0 && !quick) {
            quick = true;
            continue;
        }
        quick = false;
        /* While killing, come back at once: what a dying process forked
         * is there now.  The pause only lets the kernel finish the exits
         * (woken by SIGCHLD). */
        ops->pause(ops->ctx, r.killing ? (r.killed ? 1 : 5) : 20);
    }
    free(r.v);
    free(r.sent);
    return rc;
}
