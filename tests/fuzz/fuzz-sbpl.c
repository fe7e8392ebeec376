/* fuzz-sbpl: the Seatbelt profile builder with hostile paths, read back by
 * the tests' SBPL evaluator.
 *
 * Paths are the one thing in a profile a repository or a user can choose;
 * a quote, a parenthesis, a backslash, a newline or a ';' in one must never
 * change the profile's structure.  For every policy the builder accepts:
 * - both forms (parameters and inline literals) read back without error
 *   and give rule for rule the same profile (sbe_dump);
 * - each parameter is exactly one of the policy's paths;
 * - the evaluator's answers for the policy's own paths (and a file below
 *   each) are what the rules of docs/seatbelt.md say, worked out here from
 *   the policy directly.
 *
 * Input: byte 0 (bit 0 strict, bits 1-2 network), then NUL-separated
 * fields: home, project, tmpdir (empty: none), then entries whose first
 * byte says the list (a allow_paths, r read_paths, d deny_read, p
 * protect_paths, s allow_sockets, m macos_allow_mach). */
#include <stdbool.h>
#include <string.h>

#include "fuzz-util.h"
#include "sb-profile.h"
#include "sbpl-eval.h"

#define MAXE 24

typedef struct list {
    const char *v[MAXE];
    size_t n;
} list;

static bool under(const char *a, const char *q)
{
    size_t n = strlen(a);
    if (strcmp(a, "/") == 0) return q[0] == '/';
    return strncmp(a, q, n) == 0 && (q[n] == '\0' || q[n] == '/');
}

static bool any_under(const list *l, const char *q)
{
    for (size_t i = 0; i < l->n; i++)
        if (under(l->v[i], q)) return true;
    return false;
}

typedef struct pol {
    kgate_policy p;
    list allow, read, deny, protect, sockets, mach;
} pol;

/* -1: depends on the base profile, which this does not model. */
static int want_write(const pol *x, const char *q)
{
    const kgate_policy *p = &x->p;
    int v = 0;
    if (!strcmp(q, "/dev/null") || !strcmp(q, "/dev/zero") || !strcmp(q, "/dev/tty") ||
        under("/dev/fd", q) || !strcmp(q, "/dev/ptmx"))
        v = 1;
    if (under("/private/tmp", q) || (p->tmpdir && under(p->tmpdir, q))) v = 1;
    if (under(p->home, q)) v = 0;
    if (under(p->project, q)) v = 1;
    if (any_under(&x->allow, q)) v = 1;
    if (any_under(&x->deny, q) || any_under(&x->protect, q)) v = 0;
    return v;
}

static int want_read(const pol *x, const char *q)
{
    const kgate_policy *p = &x->p;
    int v = p->macos_profile == KGATE_MACOS_STRICT ? -1 : 1;
    if (under(p->home, q)) v = 0;
    if (under(p->project, q)) v = 1;
    if (any_under(&x->read, q) || any_under(&x->allow, q)) v = 1;
    if (any_under(&x->deny, q)) v = 0;
    return v;
}

static void ask_path(const pol *x, const sbe_profile *e, const char *q)
{
    int w = want_write(x, q), r = want_read(x, q);
    int gw = sbe_allows(e, "file-write-data", SBE_PATH, q);
    int gr = sbe_allows(e, "file-read-data", SBE_PATH, q);
    FZ_CHECK(w < 0 || gw == w, "write %s: want %d, profile says %d", q, w, gw);
    FZ_CHECK(r < 0 || gr == r, "read %s: want %d, profile says %d", q, r, gr);
}

static void ask_all(const pol *x, const sbe_profile *e)
{
    const list *ls[] = {&x->allow, &x->read, &x->deny, &x->protect};
    const char *fixed[] = {x->p.home, x->p.project, x->p.tmpdir};
    char q[4200];
    for (size_t i = 0; i < 3; i++) {
        if (!fixed[i]) continue;
        ask_path(x, e, fixed[i]);
        snprintf(q, sizeof q, "%s/x", fixed[i]);
        ask_path(x, e, q);
    }
    for (size_t l = 0; l < 4; l++)
        for (size_t i = 0; i < ls[l]->n; i++) {
            ask_path(x, e, ls[l]->v[i]);
            snprintf(q, sizeof q, "%s/x", ls[l]->v[i]);
            ask_path(x, e, q);
        }
    for (size_t i = 0; i < x->sockets.n; i++) {
        const char *s = x->sockets.v[i];
        FZ_CHECK(sbe_allows(e, "network-outbound", SBE_UNIX, s),
                 "allow_sockets entry %s not allowed", s);
        snprintf(q, sizeof q, "%sx", s);
        bool listed = false;
        for (size_t k = 0; k < x->sockets.n; k++) listed |= !strcmp(x->sockets.v[k], q);
        /* In network open the resolver's socket is allowed by name. */
        if (x->p.network == KGATE_NET_OPEN && !strcmp(q, "/private/var/run/mDNSResponder"))
            listed = true;
        if (!listed)
            FZ_CHECK(!sbe_allows(e, "network-outbound", SBE_UNIX, q),
                     "socket %s allowed although not listed", q);
    }
    for (size_t i = 0; i < x->mach.n; i++)
        FZ_CHECK(sbe_allows(e, "mach-lookup", SBE_MACH, x->mach.v[i]),
                 "mach service %s not allowed back", x->mach.v[i]);
}

static bool is_policy_path(const pol *x, const char *v)
{
    const list *ls[] = {&x->allow, &x->read, &x->deny, &x->protect, &x->sockets};
    if (!strcmp(v, x->p.home) || !strcmp(v, x->p.project) ||
        (x->p.tmpdir && !strcmp(v, x->p.tmpdir)))
        return true;
    for (size_t l = 0; l < 5; l++)
        for (size_t i = 0; i < ls[l]->n; i++)
            if (!strcmp(ls[l]->v[i], v)) return true;
    return false;
}

static kgate_strlist sl(const list *l) { return (kgate_strlist){l->v, l->n}; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 8192) return 0;
    /* NUL-terminated fields in a copy we own. */
    char *buf = malloc(size + 1);
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    buf[size] = '\0';
    char *field[3 + 6 * MAXE];
    size_t nf = 0;
    for (char *p = buf; p < buf + size && nf < sizeof field / sizeof *field;) {
        field[nf++] = p;
        p += strlen(p) + 1;
    }
    if (nf < 2) {
        free(buf);
        return 0;
    }
    pol x = {0};
    x.p.struct_size = sizeof x.p;
    x.p.macos_profile = (data[0] & 1) ? KGATE_MACOS_STRICT : KGATE_MACOS_PERMISSIVE;
    static const kgate_network nets[] = {KGATE_NET_OFF, KGATE_NET_RESTRICTED, KGATE_NET_OPEN,
                                         KGATE_NET_OFF};
    x.p.network = x.p.configured_network = nets[(data[0] >> 1) & 3];
    x.p.home = field[0];
    x.p.project = field[1];
    x.p.tmpdir = nf > 2 && *field[2] ? field[2] : NULL;
    for (size_t i = 3; i < nf; i++) {
        list *l = NULL;
        switch (field[i][0]) {
        case 'a': l = &x.allow; break;
        case 'r': l = &x.read; break;
        case 'd': l = &x.deny; break;
        case 'p': l = &x.protect; break;
        case 's': l = &x.sockets; break;
        case 'm': l = &x.mach; break;
        }
        if (l && l->n < MAXE) l->v[l->n++] = field[i] + 1;
    }
    x.p.allow_paths = sl(&x.allow);
    x.p.read_paths = sl(&x.read);
    x.p.deny_read = sl(&x.deny);
    x.p.protect_paths = sl(&x.protect);
    x.p.allow_sockets = sl(&x.sockets);
    x.p.macos_allow_mach = sl(&x.mach);

    sb_profile prof[2];
    kgate_err err = {0};
    int r0 = sb_build(&x.p, SB_FORM_PARAMS, &prof[0], &err);
    int r1 = sb_build(&x.p, SB_FORM_INLINE, &prof[1], &err);
    FZ_CHECK(r0 == r1, "the two forms disagree about accepting the policy");
    if (r0 < 0) {
        FZ_CHECK(err.msg[0], "refused without a message");
        free(buf);
        return 0;
    }
    char *dump[2];
    for (int f = 0; f < 2; f++) {
        char perr[256] = "";
        sbe_profile *e = sbe_parse(prof[f].text, (const char *const *)prof[f].params,
                                   prof[f].n_params, perr, sizeof perr);
        FZ_CHECK(e != NULL, "form %d does not read back: %s\n%s", f, perr, prof[f].text);
        dump[f] = sbe_dump(e);
        ask_all(&x, e);
        sbe_free(e);
    }
    FZ_CHECK(strcmp(dump[0], dump[1]) == 0, "the forms differ:\n%s\n----\n%s", dump[0], dump[1]);
    for (size_t i = 0; i < prof[0].n_params; i++) {
        const char *eq = strchr(prof[0].params[i], '=');
        FZ_CHECK(eq && is_policy_path(&x, eq + 1), "parameter %s is no policy path",
                 prof[0].params[i]);
    }
    free(dump[0]);
    free(dump[1]);
    sb_profile_clear(&prof[0]);
    sb_profile_clear(&prof[1]);
    free(buf);
    return 0;
}
