/* kernels.c - the stencil in C: the reference every backend is checked
 * against, and the dispatch of a step to the active backend. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "mgpu-private.h"
#include "stencil-row.h"

/* The host kernel: rows are shared among the cores (OpenMP), each row is
 * computed by mgpu_row_host (stencil-row.h). */
void mgpu_kernel_rows_host(mgpu_kernel kernel, const float *in, float *out, long long nx,
                           size_t pitch, long long r0, long long r1)
{
    MGPU_OMP(omp parallel for schedule(static) if ((r1 - r0) * nx >= MGPU_PARALLEL_CELLS) num_threads(mgpu_host_threads()))
    for (long long j = r0; j < r1; j++) {
        const float *row = in + (size_t) j * pitch;
        mgpu_row_host(kernel, row - pitch, row, row + pitch, out + (size_t) j * pitch, nx);
    }
}

mgpu_status mgpu_kernel_rows(mgpu_kernel kernel, const float *in, float *out, long long nx,
                             size_t pitch, long long r0, long long r1, mgpu_stream *stream)
{
    return mgpu_kernel_rows_sending(kernel, in, out, nx, pitch, r0, r1, NULL, NULL, stream);
}

mgpu_status mgpu_kernel_rows_sending(mgpu_kernel kernel, const float *in, float *out, long long nx,
                                     size_t pitch, long long r0, long long r1, float *first_to,
                                     float *last_to, mgpu_stream *stream)
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
    mgpu_kernel_rows_host(kernel, in, out, nx, pitch, r0, r1);
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
