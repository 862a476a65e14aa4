/* procs.c - what workers in separate processes need from the library:
 * a barrier they share, shared host memory pinned for copies, and CUDA IPC
 * handles that let one process use another's device memory. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "mgpu-private.h"

mgpu_status mgpu_process_barrier_init(pthread_barrier_t *barrier, unsigned count)
{
    /* The barrier lives in shared memory, so it must be told that
     * processes, not only threads of one, wait at it. */
    pthread_barrierattr_t attr;
    int rc = pthread_barrierattr_init(&attr);
    if (rc == 0) {
        rc = pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
        if (rc == 0)
            rc = pthread_barrier_init(barrier, &attr, count);
        pthread_barrierattr_destroy(&attr);
    }
    if (rc != 0)
        return mgpu_fail(MGPU_ERR_SYSTEM, "process-shared barrier: %s", strerror(rc));
    return MGPU_OK;
}

mgpu_status mgpu_host_register(void *ptr, size_t bytes)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        /* Portable: pinned for every device of this process, as
         * mgpu_host_alloc's memory is. */
        MGPU_CUDA(cudaHostRegister(ptr, bytes, cudaHostRegisterPortable), -1);
        return MGPU_OK;
    }
#endif
    (void) ptr;
    (void) bytes;
    return MGPU_OK;
}

void mgpu_host_unregister(void *ptr)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda() && ptr)
        cudaHostUnregister(ptr);
#endif
    (void) ptr;
}

static mgpu_status no_ipc(void)
{
    return mgpu_fail(MGPU_ERR_UNSUPPORTED, "CUDA IPC needs the cuda backend: a host "
                                           "device's memory is private to its process");
}

/* Handles are plain bytes, copied in and out by value: they travel between
 * processes, where no pointer means anything. */
#ifdef MGPU_HAVE_CUDA
_Static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(mgpu_ipc_handle), "IPC memory handle size");
#endif

mgpu_status mgpu_ipc_memory_handle(int device, void *ptr, mgpu_ipc_handle *handle)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        cudaIpcMemHandle_t h;
        MGPU_CUDA(cudaIpcGetMemHandle(&h, ptr), device);
        memcpy(handle->bytes, &h, sizeof h);
        return MGPU_OK;
    }
#endif
    (void) device;
    (void) ptr;
    (void) handle;
    return no_ipc();
}

mgpu_status mgpu_ipc_memory_open(int device, const mgpu_ipc_handle *handle, void **ptr)
{
    *ptr = NULL;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        cudaIpcMemHandle_t h;
        memcpy(&h, handle->bytes, sizeof h);
        MGPU_CUDA(cudaIpcOpenMemHandle(ptr, h, cudaIpcMemLazyEnablePeerAccess), device);
        return MGPU_OK;
    }
#endif
    (void) device;
    (void) handle;
    return no_ipc();
}

mgpu_status mgpu_ipc_memory_close(void *ptr)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(cudaIpcCloseMemHandle(ptr), -1);
        return MGPU_OK;
    }
#endif
    (void) ptr;
    return no_ipc();
}
