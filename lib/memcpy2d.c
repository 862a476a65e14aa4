/* memcpy2d.c - copies of a block of rows between buffers of different pitches
 * (a device buffer with padded rows and a packed host field, say). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "mgpu-private.h"

/* Both backends refuse what cudaMemcpy2D refuses, so that a mistake found on
 * the host backend is the same mistake on a GPU. */
static mgpu_status check_shape(size_t dpitch_bytes, size_t spitch_bytes, size_t width_bytes,
                               size_t rows)
{
    if (rows > 1 && (width_bytes > dpitch_bytes || width_bytes > spitch_bytes))
        return mgpu_fail(MGPU_ERR_USAGE,
                         "2D copy: rows of %zu bytes do not fit pitches of %zu and %zu bytes",
                         width_bytes, dpitch_bytes, spitch_bytes);
    return MGPU_OK;
}

/* The host backend's copy, and what a stream does there: at once. */
static void host_copy_2d(void *dst, size_t dpitch_bytes, const void *src, size_t spitch_bytes,
                         size_t width_bytes, size_t rows)
{
    if (dpitch_bytes == width_bytes && spitch_bytes == width_bytes) {
        memcpy(dst, src, width_bytes * rows); /* contiguous: one block */
        return;
    }
    for (size_t r = 0; r < rows; r++)
        memcpy((char *) dst + r * dpitch_bytes, (const char *) src + r * spitch_bytes, width_bytes);
}

mgpu_status mgpu_memcpy_2d(void *dst, size_t dpitch_bytes, const void *src, size_t spitch_bytes,
                           size_t width_bytes, size_t rows)
{
    if (rows == 0 || width_bytes == 0)
        return MGPU_OK;
    MGPU_TRY(check_shape(dpitch_bytes, spitch_bytes, width_bytes, rows));
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        /* cudaMemcpyDefault: unified addressing tells host from device memory. */
        MGPU_CUDA(cudaMemcpy2D(dst, dpitch_bytes, src, spitch_bytes, width_bytes, rows,
                               cudaMemcpyDefault),
                  -1);
        return MGPU_OK;
    }
#endif
    host_copy_2d(dst, dpitch_bytes, src, spitch_bytes, width_bytes, rows);
    return MGPU_OK;
}

mgpu_status mgpu_memcpy_2d_async(void *dst, size_t dpitch_bytes, const void *src,
                                 size_t spitch_bytes, size_t width_bytes, size_t rows,
                                 mgpu_stream *stream)
{
    if (rows == 0 || width_bytes == 0)
        return MGPU_OK;
    MGPU_TRY(check_shape(dpitch_bytes, spitch_bytes, width_bytes, rows));
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        /* Asynchronous to the host only when the host side is pinned memory;
         * from pageable memory CUDA stages the copy and the call blocks. */
        MGPU_CUDA(cudaMemcpy2DAsync(dst, dpitch_bytes, src, spitch_bytes, width_bytes, rows,
                                    cudaMemcpyDefault, mgpu_stream_cuda(stream)),
                  stream ? mgpu_stream_device(stream) : -1);
        return MGPU_OK;
    }
#endif
    (void) stream;
    host_copy_2d(dst, dpitch_bytes, src, spitch_bytes, width_bytes, rows);
    return MGPU_OK;
}
