/* kernels-blocked.c - temporal blocking on the host: several steps of a band
 * of rows in one pass over memory (the contract is in mgpu.h, at
 * mgpu_kernel_rows_blocked).
 *
 * One step streams the whole field through memory: 8 bytes a cell, which on a
 * few cores is the limit, not the arithmetic.  Here a thread sweeps its rows
 * once, top to bottom, as a wavefront in time: when input row j arrives, it
 * computes step 1 of row j-1, step 2 of row j-2, ..., step T of row j-T.
 * Step k of a row needs only the three latest rows of step k-1, so each of
 * the T-1 intermediate steps keeps a ring of three rows: a few hundred
 * kilobytes that stay in the core's L2, while the field passes through DRAM
 * once per T steps.  No cell is computed twice, except the T-1 rows of the
 * trapezoid on either side of each thread's share.  Rows are whole: a tile
 * of columns would need a redundant halo of columns too, and at the widths
 * that run on the host (up to 32768 floats, 1.5 MB of rings at T = 4) the
 * rings still fit the last cache. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "mgpu-private.h"
#include "stencil-row.h"

/* One thread's sweep: rows [C0, C1) of the band [R0, R1) advanced STEPS
 * steps from IN to OUT, through RING (STEPS-1 levels of 3 rows, RPITCH floats
 * apart).  Level 0 is IN, level STEPS is OUT. */
typedef struct sweep {
    mgpu_kernel kernel;
    const float *in;
    float *out;
    long long nx;
    size_t pitch;
    long long r0, r1;
    int steps;
    unsigned fixed;
    float *ring;
    size_t rpitch;
} sweep;

static int fixed_row(const sweep *s, long long j)
{
    return (j == s->r0 - 1 && (s->fixed & MGPU_ROWS_FIXED_TOP)) ||
           (j == s->r1 && (s->fixed & MGPU_ROWS_FIXED_BOTTOM));
}

static float *ring_row(const sweep *s, int level, long long j)
{
    long long slot = ((j % 3) + 3) % 3;
    return s->ring + ((size_t) (level - 1) * 3 + (size_t) slot) * s->rpitch;
}

/* Row J at LEVEL (0 .. steps-1), for reading: a fixed row is the same at
 * every level, so it is read from IN. */
static const float *level_row(const sweep *s, int level, long long j)
{
    if (level == 0 || fixed_row(s, j))
        return s->in + (size_t) j * s->pitch;
    return ring_row(s, level, j);
}

static void sweep_rows(const sweep *s, long long c0, long long c1)
{
    const int t = s->steps;
    for (long long j = c0 - t; j < c1 + t; j++)
        for (int k = 1; k <= t; k++) {
            /* The rows of level K that rows [C0, C1) of level T depend on:
             * one more at each end per level below T, none past a fixed row. */
            long long i = j - k;
            long long lo = c0 - (t - k), hi = c1 + (t - k);
            if ((s->fixed & MGPU_ROWS_FIXED_TOP) && lo < s->r0)
                lo = s->r0;
            if ((s->fixed & MGPU_ROWS_FIXED_BOTTOM) && hi > s->r1)
                hi = s->r1;
            if (i < lo || i >= hi)
                continue;
            const float *src = s->in + (size_t) i * s->pitch;
            float *dst = k == t ? s->out + (size_t) i * s->pitch : ring_row(s, k, i);
            if (k < t) { /* the fixed columns, which the next level reads */
                dst[0] = src[0];
                dst[s->nx - 1] = src[s->nx - 1];
            }
            mgpu_row_host(s->kernel, level_row(s, k - 1, i - 1), level_row(s, k - 1, i),
                          level_row(s, k - 1, i + 1), dst, s->nx);
        }
}

static mgpu_status check_steps(int steps)
{
    if (steps < 1 || steps > MGPU_TIME_BLOCK_MAX)
        return mgpu_fail(MGPU_ERR_USAGE, "time block %d: expected 1 to %d steps", steps,
                         MGPU_TIME_BLOCK_MAX);
    return MGPU_OK;
}

mgpu_status mgpu_kernel_rows_blocked_host(mgpu_kernel kernel, const float *in, float *out,
                                          long long nx, size_t pitch, long long r0, long long r1,
                                          int steps, unsigned fixed)
{
    MGPU_TRY(check_steps(steps));
    if (r0 >= r1 || nx < 3)
        return MGPU_OK;
    if (steps == 1) {
        mgpu_kernel_rows_host(kernel, in, out, nx, pitch, r0, r1);
        return MGPU_OK;
    }
    /* Ring rows 64-byte aligned, so that vectors start on a cache line. */
    const size_t rpitch = ((size_t) nx + 15) / 16 * 16;
    const size_t ring_bytes = (size_t) (steps - 1) * 3 * rpitch * sizeof(float);
    int failed = 0;
    MGPU_OMP(omp parallel if ((r1 - r0) * nx * steps >= MGPU_PARALLEL_CELLS)
                 num_threads(mgpu_host_threads()))
    {
        int nthreads = 1, id = 0;
#ifdef _OPENMP
        nthreads = omp_get_num_threads();
        id = omp_get_thread_num();
#endif
        /* Contiguous shares: each pays the trapezoid once at each end. */
        long long rows = r1 - r0;
        long long c0 = r0 + rows * id / nthreads, c1 = r0 + rows * (id + 1) / nthreads;
        float *ring = c0 < c1 ? aligned_alloc(64, ring_bytes) : NULL;
        if (c0 < c1 && !ring) {
            MGPU_OMP(omp atomic write)
            failed = 1;
        } else if (c0 < c1) {
            sweep s = {kernel, in, out, nx, pitch, r0, r1, steps, fixed, ring, rpitch};
            sweep_rows(&s, c0, c1);
        }
        free(ring);
    }
    if (failed)
        return mgpu_fail(MGPU_ERR_NOMEM, "blocked host kernel: %zu bytes of rings", ring_bytes);
    return MGPU_OK;
}

mgpu_status mgpu_kernel_rows_blocked(mgpu_kernel kernel, const float *in, float *out, long long nx,
                                     size_t pitch, long long r0, long long r1, int steps,
                                     unsigned fixed, mgpu_stream *stream)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_TRY(check_steps(steps));
        MGPU_CUDA(mgpu_cuda_stencil_rows_blocked(kernel, in, out, nx, pitch, r0, r1, steps, fixed,
                                                 mgpu_stream_cuda(stream)),
                  stream ? mgpu_stream_device(stream) : -1);
        return MGPU_OK;
    }
#endif
    (void) stream;
    return mgpu_kernel_rows_blocked_host(kernel, in, out, nx, pitch, r0, r1, steps, fixed);
}
