/* stream.c - streams and events on both backends.  On the host backend
 * work runs eagerly when it is issued, so a stream is only a name and an
 * event a time stamp. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stdlib.h>

#include "mgpu-private.h"

#ifdef MGPU_HAVE_CUDA
#include <cuda.h> /* types only: the driver is reached through the runtime */
#endif

struct mgpu_stream {
    int device;
#ifdef MGPU_HAVE_CUDA
    cudaStream_t cuda;
    bool flushes; /* a wait also flushes remote writes that reached the device */
#endif
};

struct mgpu_event {
    int device;
    double host_time;
#ifdef MGPU_HAVE_CUDA
    cudaEvent_t cuda;
#endif
};

#ifdef MGPU_HAVE_CUDA
cudaStream_t mgpu_stream_cuda(const mgpu_stream *stream) { return stream ? stream->cuda : 0; }

static mgpu_status stream_create_cuda(mgpu_stream *s, int priority)
{
    /* A blocking stream: it stays ordered with the legacy default stream,
     * on which cudaMemcpyPeer and cudaMemcpy run. */
    int flush = 0;
    MGPU_CUDA(cudaDeviceGetAttribute(&flush, cudaDevAttrCanFlushRemoteWrites, s->device),
              s->device);
    s->flushes = flush != 0;
    MGPU_CUDA_ON(s->device, cudaStreamCreateWithPriority(&s->cuda, cudaStreamDefault, priority));
    return MGPU_OK;
}

static mgpu_status event_create_cuda(mgpu_event *e, unsigned flags)
{
    unsigned cuda_flags = (flags & MGPU_EVENT_TIMING) ? cudaEventDefault : cudaEventDisableTiming;
    MGPU_CUDA_ON(e->device, cudaEventCreateWithFlags(&e->cuda, cuda_flags));
    return MGPU_OK;
}

#endif

int mgpu_stream_device(const mgpu_stream *stream) { return stream->device; }

mgpu_status mgpu_stream_priority_range(int device, int *least, int *greatest)
{
    MGPU_TRY(mgpu_check_device(device));
    *least = *greatest = 0;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda())
        MGPU_CUDA_ON(device, cudaDeviceGetStreamPriorityRange(least, greatest));
#endif
    return MGPU_OK;
}

mgpu_status mgpu_stream_create(int device, int priority, mgpu_stream **stream)
{
    *stream = NULL;
    MGPU_TRY(mgpu_check_device(device));
    mgpu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return mgpu_fail(MGPU_ERR_NOMEM, "stream: out of host memory");
    s->device = device;
#ifdef MGPU_HAVE_CUDA
    mgpu_status status = mgpu_on_cuda() ? stream_create_cuda(s, priority) : MGPU_OK;
    if (status != MGPU_OK) {
        free(s);
        return status;
    }
#else
    (void) priority;
#endif
    *stream = s;
    return MGPU_OK;
}

void mgpu_stream_destroy(mgpu_stream *stream)
{
    if (!stream)
        return;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda() && stream->cuda)
        cudaStreamDestroy(stream->cuda);
#endif
    free(stream);
}

mgpu_status mgpu_stream_synchronize(mgpu_stream *stream)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda())
        MGPU_CUDA(cudaStreamSynchronize(mgpu_stream_cuda(stream)), stream ? stream->device : -1);
#endif
    (void) stream;
    return MGPU_OK;
}

mgpu_status mgpu_stream_query(mgpu_stream *stream, int *done)
{
    *done = 1;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        cudaError_t err = cudaStreamQuery(mgpu_stream_cuda(stream));
        if (err == cudaErrorNotReady) {
            cudaGetLastError(); /* not a failure: leave no trace of it */
            *done = 0;
            return MGPU_OK;
        }
        MGPU_CUDA(err, stream ? mgpu_stream_device(stream) : -1);
    }
#endif
    (void) stream;
    return MGPU_OK;
}

mgpu_status mgpu_event_create(int device, unsigned flags, mgpu_event **event)
{
    *event = NULL;
    MGPU_TRY(mgpu_check_device(device));
    mgpu_event *e = calloc(1, sizeof *e);
    if (!e)
        return mgpu_fail(MGPU_ERR_NOMEM, "event: out of host memory");
    e->device = device;
#ifdef MGPU_HAVE_CUDA
    mgpu_status status = mgpu_on_cuda() ? event_create_cuda(e, flags) : MGPU_OK;
    if (status != MGPU_OK) {
        free(e);
        return status;
    }
#else
    (void) flags;
#endif
    *event = e;
    return MGPU_OK;
}

void mgpu_event_destroy(mgpu_event *event)
{
    if (!event)
        return;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda() && event->cuda)
        cudaEventDestroy(event->cuda);
#endif
    free(event);
}

mgpu_status mgpu_event_record(mgpu_event *event, mgpu_stream *stream)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(cudaEventRecord(event->cuda, mgpu_stream_cuda(stream)), event->device);
        return MGPU_OK;
    }
#endif
    (void) stream;
    event->host_time = mgpu_now();
    return MGPU_OK;
}

mgpu_status mgpu_event_synchronize(mgpu_event *event)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda())
        MGPU_CUDA(cudaEventSynchronize(event->cuda), event->device);
#endif
    (void) event;
    return MGPU_OK;
}

mgpu_status mgpu_stream_wait_event(mgpu_stream *stream, mgpu_event *event)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda())
        MGPU_CUDA(cudaStreamWaitEvent(mgpu_stream_cuda(stream), event->cuda, 0),
                  stream ? stream->device : -1);
#endif
    (void) stream;
    (void) event;
    return MGPU_OK;
}

#ifdef MGPU_HAVE_CUDA
/* cuStreamWriteValue32 and cuStreamWaitValue32, looked up once. */
typedef CUresult (*value_op_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
static struct {
    value_op_fn write, wait;
    cudaError_t error;
    const char *missing;
} memops;
static pthread_once_t memops_once = PTHREAD_ONCE_INIT;

static void memops_load(void)
{
    static const char *const names[2] = {"cuStreamWriteValue32", "cuStreamWaitValue32"};
    void *fn[2] = {NULL, NULL};
    memops.error = mgpu_driver_entries(names, fn, 2, &memops.missing);
    if (memops.error != cudaSuccess)
        return;
    memops.write = (value_op_fn) fn[0];
    memops.wait = (value_op_fn) fn[1];
}

static mgpu_status value_op(const char *call, value_op_fn op, mgpu_stream *stream,
                            const uint32_t *signal, uint32_t value, unsigned flags)
{
    if (memops.error != cudaSuccess)
        return mgpu_driver_entry_fail(memops.missing, memops.error);
    CUresult r = op(mgpu_stream_cuda(stream), (CUdeviceptr) (uintptr_t) signal, value, flags);
    if (r != CUDA_SUCCESS)
        return mgpu_fail(MGPU_ERR_CUDA,
                         "%s on device %d: driver error %d (a device without stream memory "
                         "operations cannot use signals)",
                         call, stream->device, (int) r);
    return MGPU_OK;
}
#endif

mgpu_status mgpu_stream_write_signal(mgpu_stream *stream, uint32_t *signal, uint32_t value)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        pthread_once(&memops_once, memops_load);
        return value_op("cuStreamWriteValue32", memops.write, stream, signal, value,
                        CU_STREAM_WRITE_VALUE_DEFAULT);
    }
#endif
    (void) stream;
    __atomic_store_n(signal, value, __ATOMIC_RELEASE);
    return MGPU_OK;
}

mgpu_status mgpu_stream_wait_signal(mgpu_stream *stream, const uint32_t *signal, uint32_t value)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        pthread_once(&memops_once, memops_load);
        /* Where the device can, the wait also flushes the remote writes
         * that reached it before the signal (CU_STREAM_WAIT_VALUE_FLUSH);
         * that flush is for writes from other devices over PCIe
         * (GPUDirect RDMA), and x86 machines have none.  Elsewhere the
         * writer's fence orders its peer stores before the signal: see
         * mgpu.h. */
        unsigned flags = CU_STREAM_WAIT_VALUE_GEQ |
                         (stream->flushes ? CU_STREAM_WAIT_VALUE_FLUSH : 0);
        return value_op("cuStreamWaitValue32", memops.wait, stream, signal, value, flags);
    }
#endif
    (void) stream;
    uint32_t now = __atomic_load_n(signal, __ATOMIC_ACQUIRE);
    if ((int32_t) (now - value) < 0)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "a wait for signal value %u, which holds %u: the host backend runs "
                         "work as it is issued, and the wait would never end",
                         (unsigned) value, (unsigned) now);
    return MGPU_OK;
}

mgpu_status mgpu_event_elapsed(mgpu_event *start, mgpu_event *stop, double *seconds)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        float ms = 0;
        MGPU_CUDA(cudaEventElapsedTime(&ms, start->cuda, stop->cuda), stop->device);
        *seconds = ms / 1e3;
        return MGPU_OK;
    }
#endif
    *seconds = stop->host_time - start->host_time;
    return MGPU_OK;
}
