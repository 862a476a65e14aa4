/* memory.c - device buffers, pinned and mapped host buffers, plain copies,
 * and the byte count of a buffer checked for overflow. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgpu-private.h"

/* Host-backend buffers are aligned as cudaMalloc's are, so that code which
 * relies on that alignment (vector loads) behaves the same on both. */
enum { HOST_ALIGN = 256 };

static void *host_aligned(size_t bytes)
{
    size_t rounded = (bytes + HOST_ALIGN - 1) / HOST_ALIGN * HOST_ALIGN;
    if (rounded < bytes)
        return NULL;
    return aligned_alloc(HOST_ALIGN, rounded ? rounded : HOST_ALIGN);
}

#ifdef MGPU_HAVE_CUDA
static mgpu_status malloc_cuda(int device, size_t bytes, void **ptr)
{
    MGPU_CUDA_ON(device, cudaMalloc(ptr, bytes));
    return MGPU_OK;
}
#endif

mgpu_status mgpu_malloc(int device, size_t bytes, void **ptr)
{
    *ptr = NULL;
    MGPU_TRY(mgpu_check_device(device));
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        mgpu_status status = malloc_cuda(device, bytes, ptr);
        if (status != MGPU_OK) {
            /* The bytes asked for, beside the device the message names. */
            char cause[512];
            snprintf(cause, sizeof cause, "%s", mgpu_last_error());
            *ptr = NULL;
            return mgpu_fail(status, "allocation of %zu bytes: %s", bytes, cause);
        }
        return MGPU_OK;
    }
#endif
    /* A host "device" holds at most the machine's memory, as a GPU holds at
     * most its own: asking for more fails at once, where an overcommitting
     * kernel would grant it and then page for minutes. */
    size_t capacity = mgpu_host_memory_bytes();
    if (capacity && bytes > capacity)
        return mgpu_fail(MGPU_ERR_NOMEM,
                         "allocation of %zu bytes on host device %d: more "
                         "than the %zu bytes of host memory",
                         bytes, device, capacity);
    *ptr = host_aligned(bytes);
    if (!*ptr)
        return mgpu_fail(MGPU_ERR_NOMEM, "allocation of %zu bytes on host device %d failed", bytes,
                         device);
    return MGPU_OK;
}

void mgpu_free(int device, void *ptr)
{
    if (!ptr)
        return;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        /* cudaFree finds the owner of a unified address itself. */
        (void) device;
        cudaFree(ptr);
        return;
    }
#endif
    (void) device;
    free(ptr);
}

mgpu_status mgpu_host_alloc(size_t bytes, unsigned flags, void **ptr)
{
    *ptr = NULL;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        /* Portable: pinned for every device, not only the current one. */
        unsigned cuda_flags = cudaHostAllocPortable;
        if (flags & MGPU_HOST_MAPPED)
            cuda_flags |= cudaHostAllocMapped;
        cudaError_t err = cudaHostAlloc(ptr, bytes, cuda_flags);
        if (err != cudaSuccess) {
            cudaGetLastError();
            *ptr = NULL;
            return mgpu_fail(MGPU_ERR_NOMEM, "cudaHostAlloc of %zu pinned bytes: %s", bytes,
                             cudaGetErrorString(err));
        }
        return MGPU_OK;
    }
#endif
    (void) flags;
    *ptr = host_aligned(bytes);
    if (!*ptr)
        return mgpu_fail(MGPU_ERR_NOMEM, "allocation of %zu host bytes failed", bytes);
    return MGPU_OK;
}

void mgpu_host_free(void *ptr)
{
    if (!ptr)
        return;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        cudaFreeHost(ptr);
        return;
    }
#endif
    free(ptr);
}

mgpu_status mgpu_host_device_pointer(void *host, void **device_ptr)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(cudaHostGetDevicePointer(device_ptr, host, 0), -1);
        return MGPU_OK;
    }
#endif
    *device_ptr = host;
    return MGPU_OK;
}

mgpu_status mgpu_memcpy(void *dst, const void *src, size_t bytes)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        /* A device-to-device cudaMemcpy returns before the copy is done;
         * waiting makes every mgpu_memcpy done on return, so that work a
         * neighbour's stream queues next cannot race it. */
        MGPU_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), -1);
        MGPU_CUDA(cudaStreamSynchronize(0), -1);
        return MGPU_OK;
    }
#endif
    memmove(dst, src, bytes);
    return MGPU_OK;
}

mgpu_status mgpu_memcpy_async(void *dst, const void *src, size_t bytes, mgpu_stream *stream)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, mgpu_stream_cuda(stream)),
                  stream ? mgpu_stream_device(stream) : -1);
        return MGPU_OK;
    }
#endif
    (void) stream;
    memmove(dst, src, bytes);
    return MGPU_OK;
}

#ifdef MGPU_HAVE_CUDA
/* cudaMemset runs asynchronously on the current device's default stream:
 * work that another device then queues on its own streams would not wait
 * for it.  Waiting here makes a memset, like mgpu_memcpy, done on return. */
static cudaError_t memset_2d_done(void *ptr, size_t pitch, int byte, size_t width, size_t rows)
{
    cudaError_t err = cudaMemset2D(ptr, pitch, byte, width, rows);
    return err == cudaSuccess ? cudaStreamSynchronize(0) : err;
}
#endif

mgpu_status mgpu_memset(int device, void *ptr, int byte, size_t bytes)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        /* A memset runs on the current device: it must own the memory. */
        MGPU_CUDA_ON(device, memset_2d_done(ptr, bytes, byte, bytes, 1));
        return MGPU_OK;
    }
#endif
    (void) device;
    memset(ptr, byte, bytes);
    return MGPU_OK;
}

mgpu_status mgpu_memset_2d(int device, void *ptr, size_t pitch_bytes, int byte, size_t width_bytes,
                           size_t rows)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA_ON(device, memset_2d_done(ptr, pitch_bytes, byte, width_bytes, rows));
        return MGPU_OK;
    }
#endif
    (void) device;
    for (size_t r = 0; r < rows; r++)
        memset((char *) ptr + r * pitch_bytes, byte, width_bytes);
    return MGPU_OK;
}

mgpu_status mgpu_mul_size(size_t count, size_t size, size_t *bytes)
{
    if (size != 0 && count > SIZE_MAX / size)
        return mgpu_fail(MGPU_ERR_USAGE, "%zu items of %zu bytes overflow the address space", count,
                         size);
    *bytes = count * size;
    return MGPU_OK;
}
