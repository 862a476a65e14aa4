/* memory-cuda.c - device buffers, pinned and mapped host buffers, managed
 * memory and plain copies on the CUDA backend.  memory.c calls these (memory-cuda.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>

#include "memory-cuda.h"

static mgpu_status malloc_on(int device, size_t bytes, void **ptr)
{
    MGPU_CUDA_ON(device, cudaMalloc(ptr, bytes));
    return MGPU_OK;
}

mgpu_status mgpu_cuda_malloc(int device, size_t bytes, void **ptr)
{
    mgpu_status status = malloc_on(device, bytes, ptr);
    if (status != MGPU_OK) {
        /* The bytes asked for, beside the device the message names. */
        char cause[512];
        snprintf(cause, sizeof cause, "%s", mgpu_last_error());
        *ptr = NULL;
        return mgpu_fail(status, "allocation of %zu bytes: %s", bytes, cause);
    }
    return MGPU_OK;
}

/* cudaFree finds the owner of a unified address itself. */
void mgpu_cuda_free(void *ptr) { cudaFree(ptr); }

mgpu_status mgpu_cuda_host_alloc(size_t bytes, unsigned flags, void **ptr)
{
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

void mgpu_cuda_host_free(void *ptr) { cudaFreeHost(ptr); }

mgpu_status mgpu_cuda_host_device_pointer(void *host, void **device_ptr)
{
    MGPU_CUDA(cudaHostGetDevicePointer(device_ptr, host, 0), -1);
    return MGPU_OK;
}

mgpu_status mgpu_cuda_managed_concurrent(int device, int *concurrent)
{
    MGPU_CUDA(cudaDeviceGetAttribute(concurrent, cudaDevAttrConcurrentManagedAccess, device),
              device);
    return MGPU_OK;
}

mgpu_status mgpu_cuda_managed_alloc(size_t bytes, void **ptr)
{
    /* Global: any stream of any device may use it, the host too. */
    cudaError_t err = cudaMallocManaged(ptr, bytes, cudaMemAttachGlobal);
    if (err != cudaSuccess) {
        cudaGetLastError();
        *ptr = NULL;
        return mgpu_fail(MGPU_ERR_NOMEM, "cudaMallocManaged of %zu bytes: %s", bytes,
                         cudaGetErrorString(err));
    }
    return MGPU_OK;
}

/* CUDA 13 names a place by a cudaMemLocation where CUDA 12 took a device
 * number (its _v2 calls took the location already). */
#if CUDART_VERSION >= 13000
static struct cudaMemLocation location_of(int device)
{
    struct cudaMemLocation at = {.type = cudaMemLocationTypeDevice, .id = device};
    return at;
}
#define MGPU_PLACE(device) location_of(device)
#define MGPU_PREFETCH_FLAGS 0,
#else
#define MGPU_PLACE(device) (device)
#define MGPU_PREFETCH_FLAGS
#endif

mgpu_status mgpu_cuda_managed_advise(void *ptr, size_t bytes, mgpu_managed_hint hint, int device)
{
    enum cudaMemoryAdvise advice = hint == MGPU_MANAGED_PREFER ? cudaMemAdviseSetPreferredLocation
                                                               : cudaMemAdviseSetAccessedBy;
    MGPU_CUDA(cudaMemAdvise(ptr, bytes, advice, MGPU_PLACE(device)), device);
    return MGPU_OK;
}

mgpu_status mgpu_cuda_managed_prefetch(void *ptr, size_t bytes, int device, mgpu_stream *stream)
{
    MGPU_CUDA(cudaMemPrefetchAsync(ptr, bytes, MGPU_PLACE(device),
                                   MGPU_PREFETCH_FLAGS mgpu_stream_cuda(stream)),
              device);
    return MGPU_OK;
}

mgpu_status mgpu_cuda_memcpy(void *dst, const void *src, size_t bytes)
{
    /* A device-to-device cudaMemcpy returns before the copy is done;
     * waiting makes every mgpu_memcpy done on return, so that work a
     * neighbour's stream queues next cannot race it. */
    MGPU_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), -1);
    MGPU_CUDA(cudaStreamSynchronize(0), -1);
    return MGPU_OK;
}

mgpu_status mgpu_cuda_memcpy_async(void *dst, const void *src, size_t bytes, mgpu_stream *stream)
{
    MGPU_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, mgpu_stream_cuda(stream)),
              stream ? mgpu_stream_device(stream) : -1);
    return MGPU_OK;
}

/* cudaMemset runs asynchronously on the current device's default stream:
 * work that another device then queues on its own streams would not wait
 * for it.  Waiting here makes a memset, like mgpu_memcpy, done on return. */
static cudaError_t memset_2d_done(void *ptr, size_t pitch, int byte, size_t width, size_t rows)
{
    cudaError_t err = cudaMemset2D(ptr, pitch, byte, width, rows);
    return err == cudaSuccess ? cudaStreamSynchronize(0) : err;
}

mgpu_status mgpu_cuda_memset_2d(int device, void *ptr, size_t pitch_bytes, int byte,
                                size_t width_bytes, size_t rows)
{
    /* A memset runs on the current device: it must own the memory. */
    MGPU_CUDA_ON(device, memset_2d_done(ptr, pitch_bytes, byte, width_bytes, rows));
    return MGPU_OK;
}
