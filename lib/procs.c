/* procs.c - what workers in separate processes need from the library:
 * shared host memory pinned for copies, and CUDA IPC handles that let one
 * process use another's device memory and events. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "mgpu-private.h"

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

struct mgpu_ipc_event {
    int device; /* made on, or opened for */
#ifdef MGPU_HAVE_CUDA
    cudaEvent_t cuda;
#endif
};

static mgpu_status no_ipc(void)
{
    return mgpu_fail(MGPU_ERR_UNSUPPORTED, "CUDA IPC needs the cuda backend: a host "
                                           "device's memory is private to its process");
}

/* Handles are plain bytes, copied in and out by value: they travel between
 * processes, where no pointer means anything. */
#ifdef MGPU_HAVE_CUDA
_Static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(mgpu_ipc_handle), "IPC memory handle size");
_Static_assert(sizeof(cudaIpcEventHandle_t) == sizeof(mgpu_ipc_handle), "IPC event handle size");
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

#ifdef MGPU_HAVE_CUDA
static mgpu_status event_create_cuda(mgpu_ipc_event *e, mgpu_ipc_handle *handle)
{
    /* An interprocess event must not take time stamps. */
    MGPU_CUDA_ON(e->device, cudaEventCreateWithFlags(&e->cuda, cudaEventInterprocess |
                                                                   cudaEventDisableTiming));
    cudaIpcEventHandle_t h;
    MGPU_CUDA(cudaIpcGetEventHandle(&h, e->cuda), e->device);
    memcpy(handle->bytes, &h, sizeof h);
    return MGPU_OK;
}
#endif

mgpu_status mgpu_ipc_event_create(int device, mgpu_ipc_event **event, mgpu_ipc_handle *handle)
{
    *event = NULL;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_TRY(mgpu_check_device(device));
        mgpu_ipc_event *e = calloc(1, sizeof *e);
        if (!e)
            return mgpu_fail(MGPU_ERR_NOMEM, "IPC event: out of host memory");
        e->device = device;
        mgpu_status status = event_create_cuda(e, handle);
        if (status != MGPU_OK) {
            mgpu_ipc_event_destroy(e);
            return status;
        }
        *event = e;
        return MGPU_OK;
    }
#endif
    (void) device;
    (void) handle;
    return no_ipc();
}

mgpu_status mgpu_ipc_event_open(int device, const mgpu_ipc_handle *handle,
                                mgpu_ipc_event **event)
{
    *event = NULL;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        mgpu_ipc_event *e = calloc(1, sizeof *e);
        if (!e)
            return mgpu_fail(MGPU_ERR_NOMEM, "IPC event: out of host memory");
        e->device = device;
        cudaIpcEventHandle_t h;
        memcpy(&h, handle->bytes, sizeof h);
        cudaError_t err = cudaIpcOpenEventHandle(&e->cuda, h);
        if (err != cudaSuccess) {
            free(e);
            return mgpu_cuda_fail(err, "cudaIpcOpenEventHandle", device, __FILE__, __LINE__);
        }
        *event = e;
        return MGPU_OK;
    }
#endif
    (void) device;
    (void) handle;
    return no_ipc();
}

mgpu_status mgpu_ipc_event_record(mgpu_ipc_event *event, mgpu_stream *stream)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(cudaEventRecord(event->cuda, mgpu_stream_cuda(stream)), event->device);
        return MGPU_OK;
    }
#endif
    (void) event;
    (void) stream;
    return no_ipc();
}

mgpu_status mgpu_stream_wait_ipc_event(mgpu_stream *stream, mgpu_ipc_event *event)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(cudaStreamWaitEvent(mgpu_stream_cuda(stream), event->cuda, 0),
                  stream ? mgpu_stream_device(stream) : -1);
        return MGPU_OK;
    }
#endif
    (void) stream;
    (void) event;
    return no_ipc();
}

void mgpu_ipc_event_destroy(mgpu_ipc_event *event)
{
    if (!event)
        return;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda() && event->cuda)
        cudaEventDestroy(event->cuda);
#endif
    free(event);
}
