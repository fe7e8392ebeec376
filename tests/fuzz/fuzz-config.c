/* fuzz-config: the YAML config parser and the narrowing rule.
 *
 * The input is a user config, a NUL byte, and a project file (no NUL: the
 * input is a project file over the defaults).  Checked:
 * - a refusal is one line (no control byte: a message is printed on a
 *   terminal) that names the file;
 * - every accepted entry obeys its key's rule (hosts valid and lowercase,
 *   no control characters anywhere);
 * - kg_policy_check_narrowing agrees with the spec's table, written again
 *   here the obvious way;
 * - kg_config_write writes what kg_config_load reads back the same. */
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fuzz-util.h"
#include "policy.h"

static char tmpdir[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/kg-fuzz-config.XXXXXX", base);
    FZ_CHECK(mkdtemp(tmpdir) != NULL, "mkdtemp");
    return 0;
}

static void check_msg(const kg_error *err, const char *name)
{
    FZ_CHECK(err->msg[0], "refused without a message");
    for (const unsigned char *p = (const unsigned char *)err->msg; *p; p++)
        FZ_CHECK(*p >= 0x20 && *p != 0x7f, "control byte 0x%02x in message: %s", *p, err->msg);
    FZ_CHECK(strncmp(err->msg, name, strlen(name)) == 0, "message does not name %s: %s", name,
             err->msg);
}

static void check_entries(const kg_config *c)
{
    for (int k = 0; k < KG_N_LIST_KEYS; k++) {
        for (size_t i = 0; i < kg_strv_len(c->lists[k]); i++) {
            const char *v = kg_strv_get(c->lists[k], i);
            FZ_CHECK(*v, "empty entry in %s", kg_list_key_name((kg_list_key)k));
            for (const unsigned char *p = (const unsigned char *)v; *p; p++)
                FZ_CHECK(*p >= 0x20 && *p != 0x7f, "control byte in %s",
                         kg_list_key_name((kg_list_key)k));
            if (k == KG_KEY_ALLOW_HOSTS) {
                FZ_CHECK(kg_host_name_valid(v), "invalid host accepted: %s", v);
                /* Stored in normal form: normalizing again changes nothing. */
                char norm[KG_HOST_ENTRY_MAX];
                FZ_CHECK(kg_host_entry_norm(v, norm, NULL) && strcmp(norm, v) == 0,
                         "host not in normal form: %s", v);
                for (const char *p = v; *p; p++)
                    FZ_CHECK(!(*p >= 'A' && *p <= 'Z'), "host not lowercased: %s", v);
            }
        }
    }
}

static bool in_list(const kg_strv *v, const char *s)
{
    for (size_t i = 0; i < kg_strv_len(v); i++)
        if (strcmp(kg_strv_get(v, i), s) == 0) return true;
    return false;
}

/* The spec's table: which keys only the user may widen. */
static bool may_only_drop(int k)
{
    return k == KG_KEY_ALLOW_HOSTS || k == KG_KEY_ALLOW_PATHS || k == KG_KEY_READ_PATHS ||
           k == KG_KEY_PASS_ENV || k == KG_KEY_UNPROTECT_PATHS || k == KG_KEY_ALLOW_SOCKETS ||
           k == KG_KEY_MACOS_ALLOW_MACH;
}

/* The oracle for allow_hosts, written from the entries' meaning rather
 * than from policy.c: an entry is a set of (name, port); "*.d" is every
 * name ending in ".d", a name without "*." is itself, no port is every
 * port.  v is within u when every name of v is a name of u and every port
 * of v a port of u.  Entries here are in normal form (check_entries). */
static bool ends_with_label(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && s[n - m - 1] == '.' && memcmp(s + n - m, suffix, m) == 0;
}

static bool host_within(const char *v, const char *u)
{
    char vb[KG_HOST_ENTRY_MAX], ub[KG_HOST_ENTRY_MAX];
    snprintf(vb, sizeof vb, "%s", v);
    snprintf(ub, sizeof ub, "%s", u);
    char *vp = strrchr(vb, ':'), *up = strrchr(ub, ':');
    if (vp) *vp++ = '\0';
    if (up) *up++ = '\0';
    if (up && (!vp || strcmp(up, vp) != 0)) return false;
    bool vw = strncmp(vb, "*.", 2) == 0, uw = strncmp(ub, "*.", 2) == 0;
    const char *vn = vw ? vb + 2 : vb, *un = uw ? ub + 2 : ub;
    if (!uw) return !vw && strcmp(vn, un) == 0;
    /* every x.vn (vw) or vn itself must end in ".un" */
    return vw ? (strcmp(vn, un) == 0 || ends_with_label(vn, un)) : ends_with_label(vn, un);
}

static bool hosts_within(const kg_strv *user, const char *v)
{
    for (size_t i = 0; i < kg_strv_len(user); i++)
        if (host_within(v, kg_strv_get(user, i))) return true;
    return false;
}

static bool widens(const kg_config *user, const kg_config *proj)
{
    static const int rank[] = {
        [KGATE_NET_OFF] = 0, [KGATE_NET_RESTRICTED] = 1, [KGATE_NET_OPEN] = 2};
    if (proj->has_network && rank[proj->network] > rank[user->network]) return true;
    if (proj->has_macos_profile && user->macos_profile == KGATE_MACOS_STRICT &&
        proj->macos_profile != KGATE_MACOS_STRICT)
        return true;
    for (int k = 0; k < KG_N_LIST_KEYS; k++) {
        if (!may_only_drop(k) || !proj->has[k]) continue;
        for (size_t i = 0; i < kg_strv_len(proj->lists[k]); i++) {
            const char *v = kg_strv_get(proj->lists[k], i);
            if (k == KG_KEY_ALLOW_HOSTS ? !hosts_within(user->lists[k], v)
                                        : !in_list(user->lists[k], v))
                return true;
        }
    }
    return false;
}

static void round_trip(const kg_config *c)
{
    char file[128];
    snprintf(file, sizeof file, "%s/config.yaml", tmpdir);
    kg_error err = {0};
    FZ_CHECK(kg_config_write(c, file, &err) == 0, "write: %s", err.msg);
    kg_config *back = kg_config_load(file, &err);
    FZ_CHECK(back != NULL, "what kg_config_write wrote does not load: %s", err.msg);
    if (c->has_network) FZ_CHECK(back->network == c->network, "network changed");
    if (c->has_macos_profile)
        FZ_CHECK(back->macos_profile == c->macos_profile, "macos_profile changed");
    for (int k = 0; k < KG_N_LIST_KEYS; k++) {
        if (!c->has[k]) continue;
        const kg_strv *a = c->lists[k], *b = back->lists[k];
        FZ_CHECK(kg_strv_len(a) == kg_strv_len(b), "%s: %zu entries written, %zu read",
                 kg_list_key_name((kg_list_key)k), kg_strv_len(a), kg_strv_len(b));
        for (size_t i = 0; i < kg_strv_len(a); i++)
            FZ_CHECK(strcmp(kg_strv_get(a, i), kg_strv_get(b, i)) == 0,
                     "%s: entry '%s' read back as '%s'", kg_list_key_name((kg_list_key)k),
                     kg_strv_get(a, i), kg_strv_get(b, i));
    }
    kg_config_free(back);
    unlink(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    const char *nul = memchr(buf, '\0', size);
    kg_config *user = kg_config_defaults();
    kg_error err = {0};
    const char *pbuf = buf;
    size_t plen = size;
    if (nul) {
        size_t ulen = (size_t)(nul - buf);
        kg_config *u = kg_config_parse("user.yaml", buf, ulen, &err);
        if (!u) {
            check_msg(&err, "user.yaml");
            kg_config_free(user);
            return 0;
        }
        check_entries(u);
        kg_config_apply(user, u);
        kg_config_free(u);
        pbuf = nul + 1;
        plen = size - ulen - 1;
    }
    memset(&err, 0, sizeof err);
    kg_config *proj = kg_config_parse_project(".kgate.yaml", pbuf, plen, &err);
    if (!proj) {
        check_msg(&err, ".kgate.yaml");
    } else {
        check_entries(proj);
        memset(&err, 0, sizeof err);
        int r = kg_policy_check_narrowing(user, proj, &err);
        bool w = widens(user, proj);
        FZ_CHECK((r < 0) == w, "narrowing check says %s, the spec's table says %s",
                 r < 0 ? "widens" : "narrows", w ? "widens" : "narrows");
        if (r < 0) check_msg(&err, ".kgate.yaml");
        round_trip(proj);
    }
    kg_config_free(proj);
    kg_config_free(user);
    return 0;
}
