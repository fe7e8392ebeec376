/* bench_plugins.c: plugin discovery and load as `kgate run` does it:
 * kg_registry_load (scan the plugin path, dlopen each file, check its
 * descriptor), a QUICK probe of every backend, and the registry's free
 * (dlclose).  Prints each part and the whole.  The plugin path is
 * KGATE_PLUGIN_PATH, as for kgate itself.
 *
 *   ninja -C build bench/bench_plugins && build/bench/bench_plugins [N] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench-stats.h"
#include "host.h"
#include "loader.h"
#include "select.h"

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atoi(argv[1]) : 2000;
    if (n < 10) n = 10;
    double *t_load = calloc(n, sizeof(double)), *t_probe = calloc(n, sizeof(double)),
           *t_free = calloc(n, sizeof(double)), *t_all = calloc(n, sizeof(double));
    if (!t_load || !t_probe || !t_free || !t_all) return 1;
    unsigned loaded = 0, refused = 0;
    for (size_t i = 0; i < n; i++) {
        kg_host host;
        kg_host_init(&host);
        double t0 = kgb_now_us();
        kg_registry *r = kg_registry_load(0);
        double t1 = kgb_now_us();
        kg_select_probe_all(r, &host, KGATE_PROBE_QUICK);
        double t2 = kgb_now_us();
        if (i == 0) {
            loaded = HASH_COUNT(r->by_name);
            refused = (unsigned)kg_strv_len(r->refusals);
            kg_plugin *p, *tmp;
            HASH_ITER(hh, r->by_name, p, tmp)
            printf("plugins %-12s %s%s\n", p->name,
                   p->probe.available ? "available" : "not available: ",
                   p->probe.available ? "" : p->probe.reason);
        }
        kg_registry_free(r);
        double t3 = kgb_now_us();
        t_load[i] = t1 - t0;
        t_probe[i] = t2 - t1;
        t_free[i] = t3 - t2;
        t_all[i] = t3 - t0;
    }
    printf("plugins %u loaded, %u refused\n", loaded, refused);
    double l = kgb_report("plugins", "discover+dlopen", t_load, n);
    double p = kgb_report("plugins", "QUICK probe of all", t_probe, n);
    double f = kgb_report("plugins", "free (dlclose)", t_free, n);
    double a = kgb_report("plugins", "whole", t_all, n);
    printf("plugins breakdown of the median: dlopen %.0f%%, probe %.0f%%, dlclose %.0f%%\n",
           100 * l / a, 100 * p / a, 100 * f / a);
    free(t_load);
    free(t_probe);
    free(t_free);
    free(t_all);
    return loaded ? 0 : 1;
}
