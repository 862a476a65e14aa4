/* stream.c - streams and events on both backends: the checks they share,
 * and the host backend.  On the host backend work runs eagerly when it is
 * issued, so a stream is only a name and an event a time stamp; the CUDA
 * backend is stream-cuda.c. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>

#include "stream-cuda.h"

int mgpu_stream_device(const mgpu_stream *stream) { return stream->device; }

mgpu_status mgpu_stream_priority_range(int device, int *least, int *greatest)
{
    MGPU_TRY(mgpu_check_device(device));
    *least = *greatest = 0;
    return mgpu_on_cuda() ? mgpu_cuda_stream_priority_range(device, least, greatest) : MGPU_OK;
}

mgpu_status mgpu_stream_create(int device, int priority, mgpu_stream **stream)
{
    *stream = NULL;
    MGPU_TRY(mgpu_check_device(device));
    mgpu_stream *s = calloc(1, sizeof *s);
    if (!s)
        return mgpu_fail(MGPU_ERR_NOMEM, "stream: out of host memory");
    s->device = device;
    mgpu_status status = mgpu_on_cuda() ? mgpu_cuda_stream_create(s, priority) : MGPU_OK;
    if (status != MGPU_OK) {
        free(s);
        return status;
    }
    *stream = s;
    return MGPU_OK;
}

void mgpu_stream_destroy(mgpu_stream *stream)
{
    if (!stream)
        return;
    if (mgpu_on_cuda())
        mgpu_cuda_stream_destroy(stream);
    free(stream);
}

mgpu_status mgpu_stream_synchronize(mgpu_stream *stream)
{
    return mgpu_on_cuda() ? mgpu_cuda_stream_synchronize(stream) : MGPU_OK;
}

mgpu_status mgpu_stream_query(mgpu_stream *stream, int *done)
{
    *done = 1;
    return mgpu_on_cuda() ? mgpu_cuda_stream_query(stream, done) : MGPU_OK;
}

mgpu_status mgpu_event_create(int device, unsigned flags, mgpu_event **event)
{
    *event = NULL;
    MGPU_TRY(mgpu_check_device(device));
    mgpu_event *e = calloc(1, sizeof *e);
    if (!e)
        return mgpu_fail(MGPU_ERR_NOMEM, "event: out of host memory");
    e->device = device;
    mgpu_status status = mgpu_on_cuda() ? mgpu_cuda_event_create(e, flags) : MGPU_OK;
    if (status != MGPU_OK) {
        free(e);
        return status;
    }
    *event = e;
    return MGPU_OK;
}

void mgpu_event_destroy(mgpu_event *event)
{
    if (!event)
        return;
    if (mgpu_on_cuda())
        mgpu_cuda_event_destroy(event);
    free(event);
}

mgpu_status mgpu_event_record(mgpu_event *event, mgpu_stream *stream)
{
    if (mgpu_on_cuda())
        return mgpu_cuda_event_record(event, stream);
    event->host_time = mgpu_now();
    return MGPU_OK;
}

mgpu_status mgpu_event_synchronize(mgpu_event *event)
{
    return mgpu_on_cuda() ? mgpu_cuda_event_synchronize(event) : MGPU_OK;
}

mgpu_status mgpu_stream_wait_event(mgpu_stream *stream, mgpu_event *event)
{
    return mgpu_on_cuda() ? mgpu_cuda_stream_wait_event(stream, event) : MGPU_OK;
}

mgpu_status mgpu_stream_write_signal(mgpu_stream *stream, uint32_t *signal, uint32_t value)
{
    if (mgpu_on_cuda())
        return mgpu_cuda_stream_write_signal(stream, signal, value);
    __atomic_store_n(signal, value, __ATOMIC_RELEASE);
    return MGPU_OK;
}

mgpu_status mgpu_stream_wait_signal(mgpu_stream *stream, const uint32_t *signal, uint32_t value)
{
    if (mgpu_on_cuda())
        return mgpu_cuda_stream_wait_signal(stream, signal, value);
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
    if (mgpu_on_cuda())
        return mgpu_cuda_event_elapsed(start, stop, seconds);
    *seconds = stop->host_time - start->host_time;
    return MGPU_OK;
}
