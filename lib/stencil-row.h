/* stencil-row.h - one row of the stencil in C, shared by the one-step host
 * kernel (kernels.c) and the blocked one (kernels-blocked.c), so that the
 * reference's arithmetic exists once. */
#ifndef MGPU_STENCIL_ROW_H
#define MGPU_STENCIL_ROW_H

#include <math.h>

#include "mgpu-private.h"

/* The arithmetic is written out in the order the CUDA kernels use
 * (lib/stencil-cell.cuh), and the library is built with -ffp-contract=off,
 * so host and GPU agree to the bit. */
static inline float mgpu_pattern2d_cell(const float *row, const float *above, const float *below,
                                        long long i)
{
    float sum = row[i] + row[i - 1];
    sum = sum + row[i + 1];
    sum = sum - 2.0f * above[i];
    sum = sum + 3.0f * below[i];
    return sqrtf(fabsf(sum));
}

static inline float mgpu_jacobi_cell(const float *row, const float *above, const float *below,
                                     long long i)
{
    float sum = row[i - 1] + row[i + 1];
    sum = sum + above[i];
    sum = sum + below[i];
    return 0.25f * sum;
}

/* Columns 1 .. nx-2 of DST from ROW and the rows ABOVE and BELOW it, a vector
 * of cells at a time (omp simd): every cell is computed alone, in the same
 * order of operations, so vectors change no bit.  sqrtf vectorises because
 * the library is built with -fno-math-errno. */
static inline void mgpu_row_host(mgpu_kernel kernel, const float *restrict above,
                                 const float *restrict row, const float *restrict below,
                                 float *restrict dst, long long nx)
{
    if (kernel == MGPU_KERNEL_PATTERN2D) {
        MGPU_OMP(omp simd)
        for (long long i = 1; i < nx - 1; i++)
            dst[i] = mgpu_pattern2d_cell(row, above, below, i);
    } else {
        MGPU_OMP(omp simd)
        for (long long i = 1; i < nx - 1; i++)
            dst[i] = mgpu_jacobi_cell(row, above, below, i);
    }
}

/* Below this many cells (16 MiB of floats, milliseconds of work) a step is
 * not worth waking a team of threads: on many cores the wake-up costs more
 * than the work. */
#define MGPU_PARALLEL_CELLS (1LL << 22)

#endif /* MGPU_STENCIL_ROW_H */
