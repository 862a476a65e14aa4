/* stream-cuda.h - what stream.c and its CUDA backend, stream-cuda.c, share:
 * the stream and event, and the backend's half of each mgpu_stream_* and
 * mgpu_event_* function, which stream.c calls when mgpu_on_cuda(). */
#ifndef MGPU_STREAM_CUDA_H
#define MGPU_STREAM_CUDA_H

#include "mgpu-private.h"

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
/* Each does on the CUDA backend what the mgpu_ function of its name does;
 * the creates fill S or E, whose device stream.c has set. */
mgpu_status mgpu_cuda_stream_priority_range(int device, int *least, int *greatest);
mgpu_status mgpu_cuda_stream_create(mgpu_stream *s, int priority);
void mgpu_cuda_stream_destroy(mgpu_stream *stream);
mgpu_status mgpu_cuda_stream_synchronize(mgpu_stream *stream);
mgpu_status mgpu_cuda_stream_query(mgpu_stream *stream, int *done);
mgpu_status mgpu_cuda_event_create(mgpu_event *e, unsigned flags);
void mgpu_cuda_event_destroy(mgpu_event *event);
mgpu_status mgpu_cuda_event_record(mgpu_event *event, mgpu_stream *stream);
mgpu_status mgpu_cuda_event_synchronize(mgpu_event *event);
mgpu_status mgpu_cuda_stream_wait_event(mgpu_stream *stream, mgpu_event *event);
mgpu_status mgpu_cuda_stream_write_signal(mgpu_stream *stream, uint32_t *signal, uint32_t value);
mgpu_status mgpu_cuda_stream_wait_signal(mgpu_stream *stream, const uint32_t *signal,
                                         uint32_t value);
mgpu_status mgpu_cuda_event_elapsed(mgpu_event *start, mgpu_event *stop, double *seconds);
#else
/* A build without CUDA never runs on its backend: these stand in for it,
 * so that stream.c needs no #ifdef. */
#define mgpu_cuda_stream_priority_range(device, least, greatest) mgpu_cuda_absent()
#define mgpu_cuda_stream_create(s, priority) mgpu_cuda_absent()
#define mgpu_cuda_stream_destroy(stream) ((void) 0)
#define mgpu_cuda_stream_synchronize(stream) mgpu_cuda_absent()
#define mgpu_cuda_stream_query(stream, done) mgpu_cuda_absent()
#define mgpu_cuda_event_create(e, flags) mgpu_cuda_absent()
#define mgpu_cuda_event_destroy(event) ((void) 0)
#define mgpu_cuda_event_record(event, stream) mgpu_cuda_absent()
#define mgpu_cuda_event_synchronize(event) mgpu_cuda_absent()
#define mgpu_cuda_stream_wait_event(stream, event) mgpu_cuda_absent()
#define mgpu_cuda_stream_write_signal(stream, signal, value) mgpu_cuda_absent()
#define mgpu_cuda_stream_wait_signal(stream, signal, value) mgpu_cuda_absent()
#define mgpu_cuda_event_elapsed(start, stop, seconds) mgpu_cuda_absent()
#endif

#endif /* MGPU_STREAM_CUDA_H */
