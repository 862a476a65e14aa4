/* staged-copy.c - a copy between two devices through pinned host memory, in
 * chunks: while one chunk goes from host memory to the destination, the
 * next comes from the source into another buffer, so that the two
 * directions' copies overlap (each is a different device's copy engine and
 * a different direction of the host link).  Done whole, a staged copy
 * takes the time of both copies; in chunks, about that of the slower one.
 * This is the path when two devices have no peer access. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mgpu-private.h"

struct mgpu_staged_copy {
    int src_device, dst_device;
    size_t chunk;
    int buffers;
    int next;                                       /* the buffer the next chunk goes through */
    void *host[MGPU_STAGED_BUFFERS_MAX];            /* pinned, CHUNK bytes each */
    mgpu_event *fetched[MGPU_STAGED_BUFFERS_MAX];   /* of the source: the chunk is in the buffer */
    mgpu_event *delivered[MGPU_STAGED_BUFFERS_MAX]; /* of the destination: it has left it */
    bool in_use[MGPU_STAGED_BUFFERS_MAX];           /* DELIVERED recorded: wait before refilling */
};

mgpu_status mgpu_staged_copy_create(int src_device, int dst_device, size_t chunk, int buffers,
                                    mgpu_staged_copy **copy)
{
    *copy = NULL;
    MGPU_TRY(mgpu_check_device(src_device));
    MGPU_TRY(mgpu_check_device(dst_device));
    if (chunk == 0)
        chunk = MGPU_STAGED_CHUNK;
    if (buffers == 0)
        buffers = MGPU_STAGED_BUFFERS;
    /* One buffer could not overlap anything: its next chunk must wait for
     * the last to leave it. */
    if (buffers < 2 || buffers > MGPU_STAGED_BUFFERS_MAX)
        return mgpu_fail(MGPU_ERR_USAGE, "staged copy: %d buffers (accepted: 2 to %d)", buffers,
                         MGPU_STAGED_BUFFERS_MAX);
    if (chunk > MGPU_STAGED_CHUNK_MAX)
        return mgpu_fail(MGPU_ERR_USAGE, "staged copy: a chunk of %zu bytes (accepted: 1 to %zu)",
                         chunk, MGPU_STAGED_CHUNK_MAX);
    mgpu_staged_copy *c = calloc(1, sizeof *c);
    if (!c)
        return mgpu_fail(MGPU_ERR_NOMEM, "staged copy: out of host memory");
    *c = (mgpu_staged_copy){
        .src_device = src_device, .dst_device = dst_device, .chunk = chunk, .buffers = buffers};
    mgpu_status status = MGPU_OK;
    for (int b = 0; status == MGPU_OK && b < buffers; b++) {
        status = mgpu_host_alloc(chunk, MGPU_HOST_PINNED, &c->host[b]);
        /* Pinned memory is resident; the host backend's stands for it once
         * touched, here rather than in the first copies. */
        if (status == MGPU_OK && !mgpu_on_cuda())
            memset(c->host[b], 0, chunk);
        if (status == MGPU_OK)
            status = mgpu_event_create(src_device, 0, &c->fetched[b]);
        if (status == MGPU_OK)
            status = mgpu_event_create(dst_device, 0, &c->delivered[b]);
    }
    if (status != MGPU_OK) {
        mgpu_staged_copy_destroy(c);
        return status;
    }
    *copy = c;
    return MGPU_OK;
}

void mgpu_staged_copy_destroy(mgpu_staged_copy *copy)
{
    if (!copy)
        return;
    for (int b = 0; b < copy->buffers; b++) {
        mgpu_host_free(copy->host[b]);
        mgpu_event_destroy(copy->fetched[b]);
        mgpu_event_destroy(copy->delivered[b]);
    }
    free(copy);
}

mgpu_status mgpu_staged_copy_async(mgpu_staged_copy *copy, void *dst, const void *src, size_t bytes,
                                   mgpu_stream *from, mgpu_stream *to)
{
    /* An event is recorded on a stream of its own device only. */
    if (!from || !to || mgpu_stream_device(from) != copy->src_device ||
        mgpu_stream_device(to) != copy->dst_device)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "staged copy from device %d to device %d: needs a stream of each, in "
                         "that order",
                         copy->src_device, copy->dst_device);
    /* A copy may go on a stream of a device that is not current; only a
     * kernel launch may not. */
    for (size_t done = 0; done < bytes;) {
        size_t n = bytes - done < copy->chunk ? bytes - done : copy->chunk;
        int b = copy->next;
        copy->next = (b + 1) % copy->buffers;
        /* The buffer's previous chunk (of this copy or an earlier one) must
         * have left it; the streams wait, never the host. */
        if (copy->in_use[b])
            MGPU_TRY(mgpu_stream_wait_event(from, copy->delivered[b]));
        MGPU_TRY(mgpu_memcpy_async(copy->host[b], (const char *) src + done, n, from));
        MGPU_TRY(mgpu_event_record(copy->fetched[b], from));
        MGPU_TRY(mgpu_stream_wait_event(to, copy->fetched[b]));
        MGPU_TRY(mgpu_memcpy_async((char *) dst + done, copy->host[b], n, to));
        MGPU_TRY(mgpu_event_record(copy->delivered[b], to));
        copy->in_use[b] = true;
        done += n;
    }
    return MGPU_OK;
}
