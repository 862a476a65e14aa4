/* stream.c - streams and events on both backends.  On the host backend
 * work runs eagerly when it is issued, so a stream is only a name and an
 * event a time stamp. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>

#include "mgpu-private.h"

struct mgpu_stream {
    int device;
#ifdef MGPU_HAVE_CUDA
    cudaStream_t cuda;
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
    MGPU_CUDA_ON(s->device, cudaStreamCreateWithPriority(&s->cuda, cudaStreamDefault, priority));
    return MGPU_OK;
}

static mgpu_status event_create_cuda(mgpu_event *e, unsigned flags)
{
    unsigned cuda_flags = (flags & MGPU_EVENT_TIMING) ? cudaEventDefault : cudaEventDisableTiming;
    /* An interprocess event must not take time stamps. */
    if (flags & MGPU_EVENT_INTERPROCESS)
        cuda_flags = cudaEventInterprocess | cudaEventDisableTiming;
    MGPU_CUDA_ON(e->device, cudaEventCreateWithFlags(&e->cuda, cuda_flags));
    return MGPU_OK;
}

cudaEvent_t mgpu_event_cuda(const mgpu_event *event) { return event->cuda; }

mgpu_status mgpu_event_adopt(int device, cudaEvent_t cuda, mgpu_event **event)
{
    *event = calloc(1, sizeof **event);
    if (!*event) {
        cudaEventDestroy(cuda);
        return mgpu_fail(MGPU_ERR_NOMEM, "event: out of host memory");
    }
    (*event)->device = device;
    (*event)->cuda = cuda;
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
