/* ipc-halo.c - halos between processes of one node through CUDA IPC
 * (mgpu-fork's workers, mgpu-mpi's ranks), ordered on the devices alone:
 * no barrier, no message and no host wait in a step.
 *
 * Each process maps its neighbours' two buffers and their SIGNALS into its
 * own address space.  The signals of part P are counters in P's device
 * memory, two per part N of the domain: READY[N], the last exchange whose
 * field N has finished (its edge rows for that exchange may be read), and
 * PULLED[N], the last exchange for which N has copied P's edge rows.  N's
 * stream writes them (mgpu_stream_write_signal: after N's earlier work,
 * whose memory writes it makes visible first) and P's stream waits for
 * them (mgpu_stream_wait_signal), so a process issues its steps without
 * waiting for the others, as threads do with events.  Why those orders
 * suffice is said above exchange(). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgpu-private.h"
#include "trace.h"

/* The signals of a part: READY then PULLED, one counter per part each. */
enum { READY = 0, PULLED = MGPU_MAX_DEVICES, SIGNALS = 2 * MGPU_MAX_DEVICES };

/* A neighbour's buffers and signals, mapped here. */
typedef struct peer {
    float *buf[2];
    uint32_t *signals;
} peer;

struct mgpu_ipc_halo {
    mgpu_stencil *st;
    int part, device;
    char gpu[48]; /* the device's UUID */
    mgpu_barrier_fn barrier;
    void *ctx;
    uint32_t *signals;            /* this part's, which the neighbours write */
    uint32_t base;                /* SEQ of this run's exchange at step 0 */
    uint32_t next;                /* SEQ of the next run's: past every value written */
    peer peers[MGPU_MAX_DEVICES]; /* indexed by part; only the neighbours' open */
};

static mgpu_stream *stream_of(const mgpu_ipc_halo *h)
{
    return mgpu_stencil_stream(h->st, h->part);
}

/* SEQ: the number of the exchange at STEP, or of the one that ends STEP's
 * cycle, across runs. */
static uint32_t seq(const mgpu_ipc_halo *h, long long step)
{
    return h->base + (uint32_t) (step / mgpu_stencil_halo(h->st));
}

/* The parts this one waits for and signals: its neighbours but itself
 * (one part alone reads its own rows), each once (two parts of a periodic
 * grid are each other's neighbour above and below). */
static int others(const mgpu_ipc_halo *h, int out[2])
{
    int p = h->part, n = 0;
    const int side[2] = {mgpu_stencil_above(h->st, p), mgpu_stencil_below(h->st, p)};
    for (int k = 0; k < 2; k++)
        if (side[k] >= 0 && side[k] != p && (n == 0 || out[0] != side[k]))
            out[n++] = side[k];
    return n;
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
    h->next = 1;
    *halo = h;
    /* Zero before any neighbour can map them: the handles are published
     * after this returns.  Exchange numbers start at 1. */
    void *signals;
    MGPU_TRY(mgpu_malloc(h->device, SIGNALS * sizeof(uint32_t), &signals));
    h->signals = signals;
    MGPU_TRY(mgpu_memset(h->device, h->signals, 0, SIGNALS * sizeof(uint32_t)));
    /* The buffers are published by index; a neighbour's block is read from
     * the one mgpu_stencil_buffer_index names for the step. */
    mgpu_device_info info;
    MGPU_TRY(mgpu_device_info_get(h->device, &info));
    snprintf(h->gpu, sizeof h->gpu, "%s", info.uuid);
    mine->device = h->device;
    memcpy(mine->gpu, h->gpu, sizeof mine->gpu);
    for (int b = 0; b < 2; b++)
        MGPU_TRY(
            mgpu_ipc_memory_handle(h->device, mgpu_stencil_buffer(st, part, b), &mine->buffer[b]));
    return mgpu_ipc_memory_handle(h->device, h->signals, &mine->signals);
}

mgpu_status mgpu_ipc_halo_connect(mgpu_ipc_halo *h, const mgpu_ipc_part *parts)
{
    int n[2], count = others(h, n);
    for (int k = 0; k < count; k++) {
        /* Two processes on one GPU need no peer access.  A GPU this process
         * does not see is reached if its handles open below. */
        int can = 1, there = -1;
        if (strcmp(parts[n[k]].gpu, h->gpu) != 0)
            MGPU_TRY(mgpu_device_by_uuid(parts[n[k]].gpu, &there));
        if (there >= 0)
            MGPU_TRY(mgpu_peer_can_access(h->device, there, &can));
        if (!can)
            return mgpu_fail(MGPU_ERR_USAGE,
                             "--exchange=ipc: device %d cannot access device "
                             "%d's memory (no peer access); use "
                             "--exchange=staged",
                             h->device, there);
        peer *pr = &h->peers[n[k]];
        for (int b = 0; b < 2; b++) {
            void *ptr;
            MGPU_TRY(mgpu_ipc_memory_open(h->device, &parts[n[k]].buffer[b], &ptr));
            pr->buf[b] = ptr;
        }
        void *signals;
        MGPU_TRY(mgpu_ipc_memory_open(h->device, &parts[n[k]].signals, &signals));
        pr->signals = signals;
        /* The kernels of this part store into the neighbour's halos. */
        MGPU_TRY(mgpu_stencil_map_part(h->st, n[k], pr->buf[0], pr->buf[1]));
    }
    return MGPU_OK;
}

/* Write VALUE into signal WHICH (READY or PULLED) of every neighbour, after
 * the work issued so far on this part's stream. */
static mgpu_status signal_neighbours(mgpu_ipc_halo *h, int which, uint32_t value)
{
    int n[2], count = others(h, n);
    for (int k = 0; k < count; k++)
        MGPU_TRY(mgpu_stream_write_signal(stream_of(h), &h->peers[n[k]].signals[which + h->part],
                                          value));
    return MGPU_OK;
}

/* Hold this part's stream until every neighbour has written at least VALUE
 * into its signal WHICH here. */
static mgpu_status wait_for_neighbours(mgpu_ipc_halo *h, int which, uint32_t value)
{
    int n[2], count = others(h, n);
    for (int k = 0; k < count; k++)
        MGPU_TRY(mgpu_stream_wait_signal(stream_of(h), &h->signals[which + n[k]], value));
    return MGPU_OK;
}

/* Where neighbour N's edge block EDGE of the field before STEP lies for
 * this part (mgpu_edge_fn): in N's buffer mapped here, or in this part's
 * own buffer (one part alone is its own neighbour). */
static const float *mapped_edge(void *ctx, long long step, int n, mgpu_row edge)
{
    const mgpu_ipc_halo *h = ctx;
    if (n == h->part)
        return mgpu_stencil_block(h->st, n, step, edge);
    return h->peers[n].buf[mgpu_stencil_buffer_index(h->st, step)] +
           mgpu_stencil_block_offset(h->st, n, edge);
}

/* The neighbours' edge blocks copied into this part's halos, device to
 * device. */
static mgpu_status pull(mgpu_ipc_halo *h, long long step)
{
    MGPU_TRY(mgpu_stencil_halos_in(h->st, h->part, step, mapped_edge, h));
    /* Only a second pass before the next exchange waits for the copies. */
    return mgpu_stencil_rewrites_edges(h->st) ? signal_neighbours(h, PULLED, seq(h, step))
                                              : MGPU_OK;
}

/* Exchanges are numbered across the runs of a process (SEQ), the same in
 * every process, since each issues the same steps.  At exchange E, at step
 * S, of part P and its neighbour N:
 *  - read after write: P's stream waits for READY[N] >= E, which N's
 *    stream writes after the last pass of the cycle before E; then P copies
 *    N's edge blocks into its halos, one copy each.  With one-row halos and
 *    the steps computed, N's kernel of step S-1 already stored its edge
 *    rows in P's halos through the mapped buffers, as mode direct does
 *    between threads (mgpu_stencil_map_part), and nothing is left to copy.
 *    The first exchange of a run waits for nothing: the strategy resets
 *    every part, synchronises its device and meets the others at a barrier
 *    before a run.
 *  - write after read: N's passes write its two buffers in turn.  The next
 *    pass of N to overwrite the rows P copies at E is, with one pass per
 *    cycle (T = K), N's pass after exchange E+1, which waits for READY[P] >=
 *    E+1, written after P's copy; with more passes (T < K), N's second pass
 *    of the cycle, before which N's stream waits for PULLED[P] >= E.  With
 *    the kernels storing (K = 1), P's kernel of step S writes the halo of
 *    N's buffer that N's step S-1 read: it follows P's wait for READY[N] >= E.
 * A later value satisfies a wait for an earlier one (each write of a
 * counter follows the work of the one before), and the counters compare
 * cyclically, so the 32 bits may wrap.
 *
 * What the strategy owes: before a run every part is reset, its device
 * synchronised and the processes meet at a barrier (the first exchange
 * waits for nothing); after a run every part's stream is synchronised and
 * they meet again before anyone resets (a neighbour may still read or
 * write this part's buffers until then).  Every part maps all its
 * neighbours at connect, so every part's kernels store, or none do: a part
 * that stored (mgpu_stencil_delivered) knows its neighbours stored too.
 * The kernels' stores into a neighbour's memory are read there after the
 * signal that follows them: mgpu.h says why that is ordered. */
static mgpu_status exchange(mgpu_ipc_halo *h, long long step)
{
    if (step == 0) {
        h->base = h->next;
        h->next = h->base + 1;
    } else {
        MGPU_TRY(wait_for_neighbours(h, READY, seq(h, step)));
    }
    return mgpu_stencil_delivered(h->st, h->part, step) ? MGPU_OK : pull(h, step);
}

mgpu_status mgpu_ipc_halo_exchange(mgpu_ipc_halo *h, long long step)
{
    mgpu_trace_begin(MGPU_TRACE_RECV, h->part, step);
    mgpu_status status = exchange(h, step);
    mgpu_trace_end();
    return status;
}

mgpu_status mgpu_ipc_halo_computed(mgpu_ipc_halo *h, long long step)
{
    mgpu_stencil *st = h->st;
    /* More than one pass between exchanges: the second would overwrite the
     * edge rows the neighbours copy at this exchange. */
    if (mgpu_stencil_exchanges_at(st, step) && mgpu_stencil_rewrites_edges(st))
        MGPU_TRY(wait_for_neighbours(h, PULLED, seq(h, step)));
    if (!mgpu_stencil_exchanges_at(st, step + 1))
        return MGPU_OK;
    /* The next run starts past every value written in this one. */
    uint32_t ready = seq(h, step + 1);
    h->next = ready + 1;
    return signal_neighbours(h, READY, ready);
}

/* Unmap the neighbours' buffers and signals. */
static mgpu_status close_peers(mgpu_ipc_halo *h)
{
    mgpu_status status = MGPU_OK;
    for (int n = 0; n < MGPU_MAX_DEVICES; n++) {
        peer *pr = &h->peers[n];
        void *mapped[3] = {pr->buf[0], pr->buf[1], pr->signals};
        if (mapped[0])
            mgpu_stencil_map_part(h->st, n, NULL, NULL);
        for (int m = 0; m < 3; m++) {
            if (!mapped[m])
                continue;
            mgpu_status closed = mgpu_ipc_memory_close(mapped[m]);
            status = status != MGPU_OK ? status : closed;
        }
        *pr = (peer){0};
    }
    return status;
}

mgpu_status mgpu_ipc_halo_disconnect(mgpu_ipc_halo *h)
{
    /* Nothing of this part's still uses a neighbour's memory when it is
     * unmapped. */
    MGPU_TRY(mgpu_stream_synchronize(stream_of(h)));
    MGPU_TRY(close_peers(h));
    /* Every neighbour has unmapped this part's memory before it is freed. */
    return h->barrier(h->ctx);
}

void mgpu_ipc_halo_destroy(mgpu_ipc_halo *h)
{
    if (!h)
        return;
    close_peers(h);
    mgpu_free(h->device, h->signals);
    free(h);
}
