/* stream-cuda.c - streams and events on the CUDA backend: CUDA streams and
 * events, and signals written and awaited by the driver's stream memory
 * operations.  stream.c calls these (stream-cuda.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>

#include "stream-cuda.h"

#include <cuda.h> /* types only: the driver is reached through the runtime */

cudaStream_t mgpu_stream_cuda(const mgpu_stream *stream) { return stream ? stream->cuda : 0; }

mgpu_status mgpu_cuda_stream_priority_range(int device, int *least, int *greatest)
{
    MGPU_CUDA_ON(device, cudaDeviceGetStreamPriorityRange(least, greatest));
    return MGPU_OK;
}

mgpu_status mgpu_cuda_stream_create(mgpu_stream *s, int priority)
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

void mgpu_cuda_stream_destroy(mgpu_stream *stream)
{
    if (stream->cuda)
        cudaStreamDestroy(stream->cuda);
}

mgpu_status mgpu_cuda_stream_synchronize(mgpu_stream *stream)
{
    MGPU_CUDA(cudaStreamSynchronize(mgpu_stream_cuda(stream)), stream ? stream->device : -1);
    return MGPU_OK;
}

mgpu_status mgpu_cuda_stream_query(mgpu_stream *stream, int *done)
{
    cudaError_t err = cudaStreamQuery(mgpu_stream_cuda(stream));
    if (err == cudaErrorNotReady) {
        cudaGetLastError(); /* not a failure: leave no trace of it */
        *done = 0;
        return MGPU_OK;
    }
    MGPU_CUDA(err, stream ? mgpu_stream_device(stream) : -1);
    return MGPU_OK;
}

mgpu_status mgpu_cuda_event_create(mgpu_event *e, unsigned flags)
{
    unsigned cuda_flags = (flags & MGPU_EVENT_TIMING) ? cudaEventDefault : cudaEventDisableTiming;
    MGPU_CUDA_ON(e->device, cudaEventCreateWithFlags(&e->cuda, cuda_flags));
    return MGPU_OK;
}

void mgpu_cuda_event_destroy(mgpu_event *event)
{
    if (event->cuda)
        cudaEventDestroy(event->cuda);
}

mgpu_status mgpu_cuda_event_record(mgpu_event *event, mgpu_stream *stream)
{
    MGPU_CUDA(cudaEventRecord(event->cuda, mgpu_stream_cuda(stream)), event->device);
    return MGPU_OK;
}

mgpu_status mgpu_cuda_event_synchronize(mgpu_event *event)
{
    MGPU_CUDA(cudaEventSynchronize(event->cuda), event->device);
    return MGPU_OK;
}

mgpu_status mgpu_cuda_stream_wait_event(mgpu_stream *stream, mgpu_event *event)
{
    MGPU_CUDA(cudaStreamWaitEvent(mgpu_stream_cuda(stream), event->cuda, 0),
              stream ? stream->device : -1);
    return MGPU_OK;
}

mgpu_status mgpu_cuda_event_elapsed(mgpu_event *start, mgpu_event *stop, double *seconds)
{
    float ms = 0;
    MGPU_CUDA(cudaEventElapsedTime(&ms, start->cuda, stop->cuda), stop->device);
    *seconds = ms / 1e3;
    return MGPU_OK;
}

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

mgpu_status mgpu_cuda_stream_write_signal(mgpu_stream *stream, uint32_t *signal, uint32_t value)
{
    pthread_once(&memops_once, memops_load);
    return value_op("cuStreamWriteValue32", memops.write, stream, signal, value,
                    CU_STREAM_WRITE_VALUE_DEFAULT);
}

mgpu_status mgpu_cuda_stream_wait_signal(mgpu_stream *stream, const uint32_t *signal,
                                         uint32_t value)
{
    pthread_once(&memops_once, memops_load);
    /* Where the device can, the wait also flushes the remote writes that
     * reached it before the signal (CU_STREAM_WAIT_VALUE_FLUSH); that flush
     * is for writes from other devices over PCIe (GPUDirect RDMA), and x86
     * machines have none.  Elsewhere the writer's fence orders its peer
     * stores before the signal: see mgpu.h. */
    unsigned flags = CU_STREAM_WAIT_VALUE_GEQ | (stream->flushes ? CU_STREAM_WAIT_VALUE_FLUSH : 0);
    return value_op("cuStreamWaitValue32", memops.wait, stream, signal, value, flags);
}
