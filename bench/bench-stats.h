/* bench-stats.h: the clock and the summary line the C benchmarks share. */
#ifndef KG_BENCH_STATS_H
#define KG_BENCH_STATS_H

#include <stddef.h>

/* Monotonic time in microseconds. */
double kgb_now_us(void);
/* Sorts t and prints "<group> <what> median ... (p10, p90, n)"; returns the
 * median. */
double kgb_report(const char *group, const char *what, double *t, size_t n);

#endif
