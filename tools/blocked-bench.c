/* blocked-bench.c - the host kernels side by side: STEPS steps of an NX x NY
 * field by the one-step kernel and by the blocked kernel at T = 2..8 steps a
 * pass, and whether the blocked field is the one-step field to the bit.  The
 * variants take turns, 5 rounds, and each keeps its fastest run: on a shared
 * machine (CI, a busy workstation) a median still carries the neighbours' load,
 * the best of interleaved runs is what the kernels do.  Built on demand: make tools/blocked-bench;
 *   OMP_NUM_THREADS=2 tools/blocked-bench [NX NY STEPS]   (default 4096 4096 24) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mgpu.h"

#define ROUNDS 5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* STEPS steps of a pattern2d-style field (ring fixed) from A, T steps a pass
 * (T = 1: the one-step kernel); the result is in *RESULT.  Seconds taken. */
static double run(mgpu_kernel kernel, float *a, float *b, long long nx, long long ny, int steps,
                  int t, float **result)
{
    const unsigned fixed = MGPU_ROWS_FIXED_TOP | MGPU_ROWS_FIXED_BOTTOM;
    float *cur = a, *next = b;
    double t0 = now();
    for (int done = 0; done < steps; done += t) {
        int n = steps - done < t ? steps - done : t;
        if (n == 1)
            mgpu_kernel_rows_host(kernel, cur, next, nx, (size_t) nx, 1, ny - 1);
        else if (mgpu_kernel_rows_blocked_host(kernel, cur, next, nx, (size_t) nx, 1, ny - 1, n,
                                               fixed) != MGPU_OK) {
            fprintf(stderr, "blocked-bench: %s\n", mgpu_last_error());
            exit(1);
        }
        float *x = cur;
        cur = next;
        next = x;
    }
    double seconds = now() - t0;
    *result = cur;
    return seconds;
}

int main(int argc, char **argv)
{
    long long nx = argc > 1 ? atoll(argv[1]) : 4096, ny = argc > 2 ? atoll(argv[2]) : 4096;
    int steps = argc > 3 ? atoi(argv[3]) : 24;
    if (nx < 3 || ny < 3 || steps < 1) {
        fprintf(stderr, "usage: blocked-bench [NX NY STEPS]\n");
        return 2;
    }
    size_t cells = (size_t) nx * (size_t) ny;
    float *init = malloc(cells * sizeof *init), *a = malloc(cells * sizeof *a);
    float *b = malloc(cells * sizeof *b), *ref = malloc(cells * sizeof *ref);
    if (!init || !a || !b || !ref) {
        fprintf(stderr, "blocked-bench: out of memory\n");
        return 1;
    }
    printf("%lld x %lld, %d steps; Gcells/s = interior cells x steps / s, best of %d\n", nx, ny,
           steps, ROUNDS);
    for (int kernel = 0; kernel < 2; kernel++) {
        mgpu_field_initial_rows(init, (size_t) nx, (mgpu_kernel) kernel, nx, ny, 0, ny, 1);
        double best[MGPU_TIME_BLOCK_MAX + 1];
        int same[MGPU_TIME_BLOCK_MAX + 1];
        for (int round = 0; round < ROUNDS; round++)
            for (int t = 1; t <= MGPU_TIME_BLOCK_MAX; t++) {
                float *result = NULL;
                memcpy(a, init, cells * sizeof *a);
                memcpy(b, init, cells * sizeof *b);
                double s = run((mgpu_kernel) kernel, a, b, nx, ny, steps, t, &result);
                if (t == 1)
                    memcpy(ref, result, cells * sizeof *ref);
                best[t] = round == 0 || s < best[t] ? s : best[t];
                same[t] = memcmp(result, ref, cells * sizeof *ref) == 0;
            }
        for (int t = 1; t <= MGPU_TIME_BLOCK_MAX; t++)
            printf("%-9s T=%d  %7.3f s  %6.3f Gcells/s  %5.2fx  %s\n",
                   mgpu_kernel_name((mgpu_kernel) kernel), t, best[t],
                   (double) (nx - 2) * (double) (ny - 2) * steps / best[t] * 1e-9,
                   best[1] / best[t], same[t] ? "bit-identical" : "DIFFERS");
    }
    free(init);
    free(a);
    free(b);
    free(ref);
    return 0;
}
