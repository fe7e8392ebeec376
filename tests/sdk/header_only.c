/* header_only.c: the SDK header on its own, compiled as strict C99 and as
 * C++ by tests/unit/meson.build: a plugin author's compiler must accept it
 * with every warning turned into an error. */
#include <kgate/kgate-plugin.h>
/* The host entry parser's declarations, for a backend that checks its list. */
#include <kgate/kgate-hostspec.h>
/* The look every box takes at a deny_read entry before it covers it. */
#include <kgate/kgate-denycheck.h>
/* The path predicate every backend and the core share. */
#include <kgate/kgate-path.h>
/* Where the programs run outside the box are found. */
#include <kgate/kgate-tool.h>

static int probe(const kgate_host *host, kgate_probe_depth depth, kgate_probe *p, kgate_err *err)
{
    (void)host;
    (void)depth;
    kgate_probe_set_fact(p, "tool", 1);
    if (!kgate_probe_fact(p, "tool", 0)) return kgate_err_set(err, 2, "tool %s missing", "x");
    return 0;
}

static const kgate_backend backend = {
    KGATE_BACKEND_INIT, .name = "header-only", .description = "compiles, never loaded",
    .probe = probe,     .doctor = NULL,        .plan = NULL,
    .launch = NULL,     .release = NULL,       .kind = KGATE_KIND_BOX,
    .boxes = NULL,      .commits = 0,          .publishes = 0,
};
KGATE_PLUGIN_DEFINE(backend)

int main(void)
{
    kgate_probe p;
    kgate_err err;
    kgate_probe_init(&p);
    if (kgate_plugin_entry()->struct_size != sizeof(kgate_backend)) return 1;
    if (sizeof(((kgate_hostspec *)0)->name) != 254) return 1;
    int (*parse)(const char *, kgate_hostspec *, const char **) = kgate_hostspec_parse;
    if (!parse) return 1;
    return probe(NULL, KGATE_PROBE_QUICK, &p, &err) == 0 ? 0 : 1;
}
