/* blocked-case.h - what the blocked-kernel tests share (test-blocked.c on the
 * host backend, test-cuda-blocked.c on a GPU): one case runs
 * mgpu_kernel_rows_blocked and, as the reference, STEPS calls of the
 * one-step mgpu_kernel_rows on the shrinking band, on the active backend,
 * and compares every cell bit for bit. */
#ifndef MGPU_TESTS_BLOCKED_CASE_H
#define MGPU_TESTS_BLOCKED_CASE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mgpu.h"

static const uint32_t blocked_poison_bits = 0x7fc0dead; /* a NaN no computation makes */

/* Floats in [-1, 1): negative sums exercise pattern2d's fabsf. */
static void blocked_random(float *f, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 7;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        f[i] = (float) (x >> 8) / (float) (1u << 23) - 1.0f;
    }
}

/* The rows of level K (after K of STEPS steps) that the band's last step needs. */
static void blocked_level_rows(long long r0, long long r1, int steps, int k, unsigned fixed,
                               long long *lo, long long *hi)
{
    *lo = r0 - (steps - k);
    *hi = r1 + (steps - k);
    if ((fixed & MGPU_ROWS_FIXED_TOP) && *lo < r0)
        *lo = r0;
    if ((fixed & MGPU_ROWS_FIXED_BOTTOM) && *hi > r1)
        *hi = r1;
}

static float *blocked_buffer(size_t bytes)
{
    void *p = NULL;
    if (mgpu_malloc(0, bytes, &p) != MGPU_OK) {
        printf("Bail out! %zu bytes: %s\n", bytes, mgpu_last_error());
        exit(1);
    }
    return p;
}

/* Rows [R0, R1) of a block of rows PITCH floats apart, STEPS steps, on device
 * 0 of the active backend.  Input rows that the contract says need not be
 * held are NaN, so reading one shows; OUT starts as NaN and must keep it
 * everywhere but the band's interior.  Returns whether all that held. */
static int blocked_case(mgpu_kernel kernel, long long nx, size_t pitch, long long r0, long long r1,
                        int steps, unsigned fixed, unsigned seed)
{
    const long long rows = r1 + steps + 1;
    const size_t cells = (size_t) rows * pitch, bytes = cells * sizeof(float);
    float *in = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
    float *d_in = blocked_buffer(bytes), *d_a = blocked_buffer(bytes);
    float *d_b = blocked_buffer(bytes), *d_out = blocked_buffer(bytes);
    blocked_random(in, cells, seed);
    long long in_lo = (fixed & MGPU_ROWS_FIXED_TOP) ? r0 - 1 : r0 - steps;
    long long in_hi = (fixed & MGPU_ROWS_FIXED_BOTTOM) ? r1 + 1 : r1 + steps;
    for (long long j = 0; j < rows; j++)
        for (size_t i = 0; i < pitch; i++)
            if (j < in_lo || j >= in_hi || i >= (size_t) nx)
                memcpy(&in[(size_t) j * pitch + i], &blocked_poison_bits, sizeof(float));
    for (size_t c = 0; c < cells; c++)
        memcpy(&got[c], &blocked_poison_bits, sizeof(float));

    mgpu_stream *s = NULL;
    mgpu_status status = mgpu_stream_create(0, 0, &s);
    if (status == MGPU_OK)
        status = mgpu_memcpy(d_in, in, bytes);
    if (status == MGPU_OK)
        status = mgpu_memcpy(d_a, in, bytes);
    if (status == MGPU_OK)
        status = mgpu_memcpy(d_b, in, bytes);
    if (status == MGPU_OK)
        status = mgpu_memcpy(d_out, got, bytes);
    float *cur = d_a, *next = d_b;
    for (int k = 1; k <= steps && status == MGPU_OK; k++) {
        long long lo, hi;
        blocked_level_rows(r0, r1, steps, k, fixed, &lo, &hi);
        status = mgpu_kernel_rows(kernel, cur, next, nx, pitch, lo, hi, s);
        float *t = cur;
        cur = next;
        next = t;
    }
    if (status == MGPU_OK)
        status = mgpu_kernel_rows_blocked(kernel, d_in, d_out, nx, pitch, r0, r1, steps, fixed, s);
    if (status == MGPU_OK)
        status = mgpu_stream_synchronize(s);
    if (status == MGPU_OK)
        status = mgpu_memcpy(want, cur, bytes);
    if (status == MGPU_OK)
        status = mgpu_memcpy(got, d_out, bytes);
    int ok = status == MGPU_OK;
    if (!ok)
        printf("# %s\n", mgpu_last_error());
    for (long long j = 0; j < rows && ok; j++)
        for (long long i = 0; i < (long long) pitch && ok; i++) {
            size_t c = (size_t) j * pitch + (size_t) i;
            int mine = j >= r0 && j < r1 && i >= 1 && i < nx - 1;
            ok = memcmp(&got[c], mine ? (const void *) &want[c] : &blocked_poison_bits,
                        sizeof(float)) == 0;
            if (!ok)
                printf("# %s nx %lld pitch %zu rows [%lld, %lld) steps %d fixed %u: cell (%lld, "
                       "%lld) is %.9g, expected %.9g\n",
                       mgpu_kernel_name(kernel), nx, pitch, r0, r1, steps, fixed, i, j,
                       (double) got[c], mine ? (double) want[c] : (double) NAN);
        }
    mgpu_stream_destroy(s);
    mgpu_free(0, d_in);
    mgpu_free(0, d_a);
    mgpu_free(0, d_b);
    mgpu_free(0, d_out);
    free(in);
    free(want);
    free(got);
    return ok;
}

/* Both kernels, 1 to MGPU_TIME_BLOCK_MAX steps, tiny and odd widths, packed
 * (odd) and 128-byte pitches, bands of 1 to 40 rows, each end fixed or not. */
static void blocked_matrix(void)
{
    static const long long widths[] = {3, 4, 5, 17, 130, 257};
    static const long long bands[] = {1, 2, 7, 40};
    for (int kernel = 0; kernel < 2; kernel++)
        for (int steps = 1; steps <= MGPU_TIME_BLOCK_MAX; steps++) {
            int ok = 1, n = 0;
            for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
                for (size_t b = 0; b < sizeof bands / sizeof *bands; b++)
                    for (unsigned fixed = 0; fixed < 4; fixed++)
                        for (int aligned = 0; aligned < 2; aligned++) {
                            size_t pitch = aligned ? ((size_t) widths[w] + 31) / 32 * 32
                                                   : (size_t) widths[w];
                            long long r0 = steps + 1 + (long long) b;
                            ok &= blocked_case((mgpu_kernel) kernel, widths[w], pitch, r0,
                                               r0 + bands[b], steps, fixed,
                                               (unsigned) (n * 31 + steps));
                            n++;
                        }
            CHECK(ok, "%s, %d step(s): %d shapes bit-identical to the one-step kernel",
                  mgpu_kernel_name((mgpu_kernel) kernel), steps, n);
        }
}

#endif /* MGPU_TESTS_BLOCKED_CASE_H */
