/* kernels.c - the stencil in C: the reference every backend is checked
 * against, and the dispatch of a step to the active backend. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "mgpu-private.h"

/* The arithmetic is written out in the order the CUDA kernels use, and the
 * library is built with -ffp-contract=off, so host and GPU agree to the bit. */
static inline float pattern2d_cell(const float *row, const float *above, const float *below,
                                   long long i)
{
    float sum = row[i] + row[i - 1];
    sum = sum + row[i + 1];
    sum = sum - 2.0f * above[i];
    sum = sum + 3.0f * below[i];
    return sqrtf(fabsf(sum));
}

static inline float jacobi_cell(const float *row, const float *above, const float *below,
                                long long i)
{
    float sum = row[i - 1] + row[i + 1];
    sum = sum + above[i];
    sum = sum + below[i];
    return 0.25f * sum;
}

/* Below this many cells (16 MiB of floats, milliseconds of work) a step is
 * not worth waking a team of threads: on many cores the wake-up costs more
 * than the work. */
#define PARALLEL_CELLS (1LL << 22)

/* The host kernel: rows are shared among the cores (OpenMP) and each row is
 * computed a vector of cells at a time (omp simd).  Neither changes a bit of
 * the result: every cell is computed alone, in the same order of operations.
 * sqrtf vectorises because the library is built with -fno-math-errno. */
void mgpu_stencil_rows_host(mgpu_kernel kernel, const float *in, float *out, long long nx,
                            size_t pitch, long long r0, long long r1)
{
    MGPU_OMP(omp parallel for schedule(static) if ((r1 - r0) * nx >= PARALLEL_CELLS))
    for (long long j = r0; j < r1; j++) {
        const float *restrict row = in + (size_t) j * pitch;
        const float *restrict above = row - pitch;
        const float *restrict below = row + pitch;
        float *restrict dst = out + (size_t) j * pitch;
        if (kernel == MGPU_KERNEL_PATTERN2D) {
            MGPU_OMP(omp simd)
            for (long long i = 1; i < nx - 1; i++)
                dst[i] = pattern2d_cell(row, above, below, i);
        } else {
            MGPU_OMP(omp simd)
            for (long long i = 1; i < nx - 1; i++)
                dst[i] = jacobi_cell(row, above, below, i);
        }
    }
}

void mgpu_host_share_cores(int workers)
{
#ifdef _OPENMP
    int share = omp_get_num_procs() / (workers > 0 ? workers : 1);
    omp_set_num_threads(share > 1 ? share : 1);
#else
    (void) workers;
#endif
}

mgpu_status mgpu_stencil_rows(mgpu_kernel kernel, const float *in, float *out, long long nx,
                              size_t pitch, long long r0, long long r1, mgpu_stream *stream)
{
    return mgpu_stencil_rows_sending(kernel, in, out, nx, pitch, r0, r1, NULL, NULL, stream);
}

mgpu_status mgpu_stencil_rows_sending(mgpu_kernel kernel, const float *in, float *out,
                                      long long nx, size_t pitch, long long r0, long long r1,
                                      float *first_to, float *last_to, mgpu_stream *stream)
{
    if (r0 >= r1)
        return MGPU_OK;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(mgpu_cuda_stencil_rows(kernel, in, out, nx, pitch, r0, r1, first_to, last_to,
                                         mgpu_stream_cuda(stream)),
                  stream ? mgpu_stream_device(stream) : -1);
        return MGPU_OK;
    }
#endif
    (void) stream;
    mgpu_stencil_rows_host(kernel, in, out, nx, pitch, r0, r1);
    /* The interior cells, as the CUDA kernel stores them. */
    size_t interior = nx > 2 ? (size_t) (nx - 2) * sizeof(float) : 0;
    if (first_to)
        memcpy(first_to + 1, out + (size_t) r0 * pitch + 1, interior);
    if (last_to)
        memcpy(last_to + 1, out + (size_t) (r1 - 1) * pitch + 1, interior);
    return MGPU_OK;
}

mgpu_status mgpu_copy_row_kernel(float *dst, const float *src, long long n, mgpu_stream *stream)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(mgpu_cuda_copy_row(dst, src, n, mgpu_stream_cuda(stream)),
                  stream ? mgpu_stream_device(stream) : -1);
        return MGPU_OK;
    }
#endif
    (void) stream;
    memmove(dst, src, (size_t) n * sizeof *dst);
    return MGPU_OK;
}
