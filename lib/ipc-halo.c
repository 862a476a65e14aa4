/* ipc-halo.c - halos between processes of one node through CUDA IPC
 * (mgpu-fork's workers, mgpu-mpi's ranks): each process maps its
 * neighbours' device buffers and events into its own address space and
 * pulls their edge rows into its halos device to device, on its stream,
 * ordered on the devices by the events.  No host copy, no message.
 *
 * A cycle is the K steps from one exchange to the next (--halo=K; K = 1:
 * every step); the field before an exchange step is in the buffer
 * mgpu_stencil_buffer_index names, the same in every part.  Nothing here
 * waits for a device.  Each part records DONE[e%2] on its stream after the
 * last step of cycle e (after its last pass).  After the barrier of
 * exchange e every neighbour has recorded done[(e-1)%2], so this part's
 * stream waits for that event (on the device) and then pulls the
 * neighbour's edge blocks from the buffer that holds the field before the
 * exchange, which the neighbour's last pass wrote; then it records PULLED.
 * The neighbour's passes write its two buffers in turn, so the next pass to
 * overwrite the rows pulled is
 *  - with one pass per cycle (T = K), its first pass after exchange e+1,
 *    behind its wait for this part's done[e%2], recorded after this pull;
 *  - with more (T < K), its second pass of cycle e: before issuing it, the
 *    neighbour meets the others at a second barrier, by which every part
 *    has recorded PULLED for exchange e, and its stream waits for theirs
 *    (wait_for_pulls).  One PULLED event suffices: it is recorded again
 *    only after the barrier of exchange e+1, which the neighbour reaches
 *    only after it issued its wait.
 * The done events are double buffered by parity so that no neighbour
 * records done[(e-1)%2] again (at the end of cycle e+1) before this part
 * has issued its wait: that takes the barrier of exchange e+1, which this
 * part reaches only after.
 *
 * A wait is for the record of the event issued, in any process, before the
 * wait is: the barriers are what put the records before the waits. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>

#include "mgpu-private.h"
#include "trace.h"

/* A neighbour's buffers and events, opened here. */
typedef struct peer {
    float *buf[2];
    mgpu_event *done[2];
    mgpu_event *pulled;
} peer;

struct mgpu_ipc_halo {
    mgpu_stencil *st;
    int part, device;
    mgpu_barrier_fn barrier;
    void *ctx;
    mgpu_event *done[2];          /* recorded after each cycle, by its exchange's parity */
    mgpu_event *pulled;           /* recorded after this part's pulls */
    peer peers[MGPU_MAX_DEVICES]; /* indexed by part; only the neighbours' open */
};

static mgpu_stream *stream_of(const mgpu_ipc_halo *h)
{
    return mgpu_stencil_stream(h->st, h->part);
}

mgpu_status mgpu_ipc_halo_create(mgpu_ipc_halo **halo, mgpu_stencil *st, int part,
                                 mgpu_barrier_fn barrier, void *ctx, mgpu_ipc_part *mine)
{
    *halo = NULL;
    mgpu_ipc_halo *h = calloc(1, sizeof *h);
    if (!h)
        return mgpu_fail(MGPU_ERR_NOMEM, "CUDA IPC halos: out of host memory");
    h->st = st;
    h->part = part;
    h->device = mgpu_stencil_device(st, part);
    h->barrier = barrier;
    h->ctx = ctx;
    *halo = h;
    /* The buffers are published by index; a neighbour's block is read from
     * the one mgpu_stencil_buffer_index names for the step. */
    mine->device = h->device;
    for (int b = 0; b < 2; b++) {
        MGPU_TRY(
            mgpu_ipc_memory_handle(h->device, mgpu_stencil_buffer(st, part, b), &mine->buffer[b]));
        MGPU_TRY(mgpu_ipc_event_create(h->device, &h->done[b], &mine->done[b]));
    }
    return mgpu_ipc_event_create(h->device, &h->pulled, &mine->pulled);
}

mgpu_status mgpu_ipc_halo_connect(mgpu_ipc_halo *h, const mgpu_ipc_part *parts)
{
    int p = h->part;
    /* Once each: with two parts and periodic rows the neighbour above is
     * also below; one part alone is its own neighbour, and reads itself. */
    int neighbours[2] = {mgpu_stencil_above(h->st, p), mgpu_stencil_below(h->st, p)};
    for (int k = 0; k < 2; k++) {
        int n = neighbours[k];
        if (n < 0 || n == p || h->peers[n].buf[0])
            continue;
        /* Two processes on one device need no peer access. */
        int can = 1;
        if (parts[n].device != h->device)
            MGPU_TRY(mgpu_peer_can_access(h->device, parts[n].device, &can));
        if (!can)
            return mgpu_fail(MGPU_ERR_USAGE,
                             "--exchange=ipc: device %d cannot access device "
                             "%d's memory (no peer access); use "
                             "--exchange=staged",
                             h->device, parts[n].device);
        peer *pr = &h->peers[n];
        for (int b = 0; b < 2; b++) {
            void *ptr;
            MGPU_TRY(mgpu_ipc_memory_open(h->device, &parts[n].buffer[b], &ptr));
            pr->buf[b] = ptr;
            MGPU_TRY(mgpu_ipc_event_open(h->device, &parts[n].done[b], &pr->done[b]));
        }
        MGPU_TRY(mgpu_ipc_event_open(h->device, &parts[n].pulled, &pr->pulled));
    }
    return MGPU_OK;
}

/* Where part FROM's EDGE block of the field before exchange step STEP is
 * read: its buffer mapped here, once the neighbour's cycle before has been
 * done on its device; or this part's own (one part, periodic rows). */
static mgpu_status edge_source(mgpu_ipc_halo *h, int from, long long step, mgpu_row edge,
                               const float **src)
{
    if (from == h->part) {
        *src = mgpu_stencil_block(h->st, from, step, edge);
        return MGPU_OK;
    }
    /* The event the neighbour recorded after the cycle before: the other
     * exchange parity. */
    peer *pr = &h->peers[from];
    MGPU_TRY(mgpu_stream_wait_event(stream_of(h),
                                    pr->done[1 - mgpu_stencil_exchange_parity(h->st, step)]));
    *src = pr->buf[mgpu_stencil_buffer_index(h->st, step)] +
           mgpu_stencil_block_offset(h->st, from, edge);
    return MGPU_OK;
}

/* The top halo is the last block of the part above, the bottom halo the
 * first block of the part below; a part with none there has a fixed
 * boundary.  The pulls done, PULLED is recorded where a neighbour waits for
 * it (wait_for_pulls). */
static mgpu_status pull(mgpu_ipc_halo *h, long long step)
{
    mgpu_stencil *st = h->st;
    int p = h->part;
    const int from[2] = {mgpu_stencil_above(st, p), mgpu_stencil_below(st, p)};
    const mgpu_row edge[2] = {MGPU_ROW_LAST, MGPU_ROW_FIRST};
    const mgpu_row halo[2] = {MGPU_ROW_HALO_TOP, MGPU_ROW_HALO_BOTTOM};
    for (int k = 0; k < 2; k++) {
        if (from[k] < 0)
            continue;
        const float *src;
        MGPU_TRY(edge_source(h, from[k], step, edge[k], &src));
        MGPU_TRY(mgpu_memcpy_async(mgpu_stencil_block(st, p, step, halo[k]), src,
                                   mgpu_stencil_block_bytes(st), stream_of(h)));
    }
    /* Only a second pass before the next exchange waits for the pulls. */
    return mgpu_stencil_rewrites_edges(st) ? mgpu_event_record(h->pulled, stream_of(h)) : MGPU_OK;
}

mgpu_status mgpu_ipc_halo_exchange(mgpu_ipc_halo *h, long long step)
{
    MGPU_TRY(h->barrier(h->ctx));
    mgpu_trace_begin(MGPU_TRACE_RECV, h->part, step);
    mgpu_status status = pull(h, step);
    mgpu_trace_end();
    return status;
}

/* More than one pass between exchanges: this part's second pass would
 * overwrite the edge rows its neighbours pull at this exchange, so its
 * stream first waits for their pulls; the barrier makes sure that each has
 * recorded PULLED for this exchange before the wait is issued. */
static mgpu_status wait_for_pulls(mgpu_ipc_halo *h)
{
    MGPU_TRY(h->barrier(h->ctx));
    int p = h->part;
    const int to[2] = {mgpu_stencil_above(h->st, p), mgpu_stencil_below(h->st, p)};
    for (int k = 0; k < 2; k++)
        if (to[k] >= 0 && to[k] != p)
            MGPU_TRY(mgpu_stream_wait_event(stream_of(h), h->peers[to[k]].pulled));
    return MGPU_OK;
}

mgpu_status mgpu_ipc_halo_computed(mgpu_ipc_halo *h, long long step)
{
    mgpu_stencil *st = h->st;
    if (mgpu_stencil_exchanges_at(st, step) && mgpu_stencil_rewrites_edges(st))
        MGPU_TRY(wait_for_pulls(h));
    if (mgpu_stencil_exchanges_at(st, step + 1))
        MGPU_TRY(mgpu_event_record(h->done[mgpu_stencil_exchange_parity(st, step)], stream_of(h)));
    return MGPU_OK;
}

/* Unmap the neighbours' buffers and close their events. */
static mgpu_status close_peers(mgpu_ipc_halo *h)
{
    mgpu_status status = MGPU_OK;
    for (int n = 0; n < MGPU_MAX_DEVICES; n++) {
        peer *pr = &h->peers[n];
        for (int b = 0; b < 2; b++) {
            if (pr->buf[b]) {
                mgpu_status closed = mgpu_ipc_memory_close(pr->buf[b]);
                status = status != MGPU_OK ? status : closed;
                pr->buf[b] = NULL;
            }
            mgpu_event_destroy(pr->done[b]);
            pr->done[b] = NULL;
        }
        mgpu_event_destroy(pr->pulled);
        pr->pulled = NULL;
    }
    return status;
}

mgpu_status mgpu_ipc_halo_disconnect(mgpu_ipc_halo *h)
{
    /* No copy out of a neighbour's buffer is left when it is unmapped. */
    MGPU_TRY(mgpu_stream_synchronize(stream_of(h)));
    MGPU_TRY(close_peers(h));
    /* Every neighbour has unmapped this part's buffers before it frees them. */
    return h->barrier(h->ctx);
}

void mgpu_ipc_halo_destroy(mgpu_ipc_halo *h)
{
    if (!h)
        return;
    close_peers(h);
    for (int b = 0; b < 2; b++)
        mgpu_event_destroy(h->done[b]);
    mgpu_event_destroy(h->pulled);
    free(h);
}
