#include "bench-stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double kgb_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double kgb_report(const char *group, const char *what, double *t, size_t n)
{
    qsort(t, n, sizeof *t, cmp);
    printf("%-7s %-26s median %8.1f us (p10 %.1f, p90 %.1f, n=%zu)\n", group, what, t[n / 2],
           t[n / 10], t[n - 1 - n / 10], n);
    return t[n / 2];
}
