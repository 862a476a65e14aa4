/* timing.c - the clock, and the statistics of repeated runs. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <time.h>

#include "mgpu-private.h"

double mgpu_now(void)
{
    struct timespec now;

    /* MONOTONIC: never steps back or jumps when the wall clock is set.
     * It cannot fail with a valid clock and pointer. */
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double) now.tv_sec + 1e-9 * (double) now.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *) a;
    double y = *(const double *) b;

    return (x > y) - (x < y);
}

mgpu_stats mgpu_stats_of(double *samples, int n)
{
    mgpu_stats stats = {0.0, 0.0, 0.0};

    if (samples == NULL || n <= 0)
        return stats;
    qsort(samples, (size_t) n, sizeof *samples, compare_doubles);
    stats.min = samples[0];
    stats.max = samples[n - 1];
    if (n % 2 == 1)
        stats.median = samples[n / 2];
    else
        stats.median = 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    return stats;
}
