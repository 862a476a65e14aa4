/* stencil-part.h - the stencil domain's parts and their layout, shared by
 * stencil.c (the domain) and exchange.c (the halo exchange between parts).
 * Private to the library. */
#ifndef MGPU_STENCIL_PART_H
#define MGPU_STENCIL_PART_H

#include <stdbool.h>

#include "mgpu-private.h"

/* Device rows start on 128-byte boundaries: whole memory transactions and
 * aligned vector loads for any nx.  The host backend uses the same layout so
 * that it tests the same indexing. */
enum { PITCH_FLOATS = 32 };

typedef struct part {
    mgpu_slab slab;
    long long rows; /* interior rows; local rows HALO .. HALO+rows-1, the
                       halos the HALO rows on either side */
    size_t pitch;   /* floats from one row to the next */
    float *buf[2];
    mgpu_stream *stream;
    mgpu_event *sent[2];  /* peer-async, direct: an exchange's sends are
                             done, by the exchange's parity: a neighbour one
                             exchange behind still waits for the send it
                             needs, not for this part's next one */
    mgpu_event *joined;   /* graphs: this part's stream joins the origin */
    float *edges[2];      /* staged, mapped: this part's first and last HALO
                             rows, per exchange parity, in host memory */
    float *edges_dev[2];  /* mapped: the same memory as the devices see it */
    mgpu_event *computed; /* halo > 1, peer-async, direct: its last pass is done */
    int above, below;     /* part that fills the top / bottom halo, or -1 */
    long long delivered;  /* direct, ipc: the step whose halos this part's
                             last kernel already stored in its neighbours,
                             or -1 */
    mgpu_nccl_comm *comm; /* nccl: this part's rank */
} part;

struct mgpu_stencil {
    mgpu_stencil_desc desc;
    mgpu_exchange mode;
    mgpu_event *fork; /* graphs: on part 0's stream, which the others wait for */
    int first, count;
    int halo;        /* K: halo rows a side, steps between exchanges */
    int block;       /* steps per pass, at most K */
    long long steps; /* of a run, 0: unbounded */
    part parts[MGPU_MAX_DEVICES];
};

static inline bool is_local(const mgpu_stencil *st, int p)
{
    return p >= st->first && p < st->first + st->count;
}

/* The buffer that holds the field after STEP steps: the parity of the
 * passes before it (every cycle of K steps has ceil(K/T) passes). */
static inline int buffer_of(const mgpu_stencil *st, long long step)
{
    long long per_cycle = (st->halo + st->block - 1) / st->block;
    long long phase = step % st->halo;
    return (int) (((step / st->halo) * per_cycle + (phase + st->block - 1) / st->block) & 1);
}

static inline float *row_of(const mgpu_stencil *st, const part *pt, long long step,
                            long long local_row)
{
    return pt->buf[buffer_of(st, step)] + (size_t) local_row * pt->pitch;
}

/* Whether STEP exchanges halos, and that exchange's parity (the events and
 * host rows that alternate between exchanges). */
static inline bool exchanges_at(const mgpu_stencil *st, long long step)
{
    return step % st->halo == 0;
}
static inline int exchange_parity(const mgpu_stencil *st, long long step)
{
    return (int) ((step / st->halo) & 1);
}

/* Floats from one row to the next in a part of NX columns. */
static inline size_t pitch_of(long long nx)
{
    return ((size_t) nx + PITCH_FLOATS - 1) / PITCH_FLOATS * PITCH_FLOATS;
}

/* The floats of HALO rows of NX columns from the start of the first to the
 * end of the last: what an exchange moves each way, as one block. */
static inline size_t floats_of_block(long long nx, int halo)
{
    return (size_t) (halo - 1) * pitch_of(nx) + (size_t) nx;
}
static inline size_t block_floats(const mgpu_stencil *st, const part *pt)
{
    (void) pt; /* every part has the same pitch */
    return floats_of_block(st->desc.nx, st->halo);
}
static inline size_t block_bytes(const mgpu_stencil *st, const part *pt)
{
    return block_floats(st, pt) * sizeof(float);
}

/* The local row of ROW in part PT: the row itself, or with BLOCK the first
 * of its K rows (FIRST: the first K interior rows, LAST: the last K,
 * HALO_TOP and HALO_BOTTOM: the K halo rows on either side). */
static inline long long local_row_of(const mgpu_stencil *st, const part *pt, mgpu_row row,
                                     bool block)
{
    const long long k = st->halo;
    switch (row) {
    case MGPU_ROW_FIRST:
        return k;
    case MGPU_ROW_LAST:
        return block ? pt->rows : k + pt->rows - 1;
    case MGPU_ROW_HALO_TOP:
        return block ? 0 : k - 1;
    case MGPU_ROW_HALO_BOTTOM:
        return k + pt->rows;
    }
    return 0;
}

/* Modes whose receivers' streams wait for their senders' events (the others
 * are ordered by the copy itself or by the host). */
static inline bool orders_by_event(const mgpu_stencil *st)
{
    return st->mode == MGPU_EXCHANGE_PEER_ASYNC || st->mode == MGPU_EXCHANGE_DIRECT;
}

/* Whether PT waits for the events of its neighbour on SIDE (0 above, 1
 * below): one that exists, is another part (a part's own stream is ordered
 * already), and is not the one above again (two parts of a periodic grid are
 * each other's neighbours on both sides: an event is waited for once). */
static inline bool waits_for_side(const part *pt, int side)
{
    int n = side == 0 ? pt->above : pt->below;
    return n >= 0 && n != pt->slab.part && !(side == 1 && pt->below == pt->above);
}

static inline bool has_other_neighbour(const part *pt)
{
    return waits_for_side(pt, 0) || waits_for_side(pt, 1);
}

static inline mgpu_status check_current(const part *pt)
{
    int current;
    MGPU_TRY(mgpu_device_get(&current));
    if (current != pt->slab.device)
        return mgpu_fail(MGPU_ERR_USAGE, "part %d lives on device %d, but device %d is current",
                         pt->slab.part, pt->slab.device, current);
    return MGPU_OK;
}

/* Whether PT's neighbours, where it has them, are parts of this process. */
static inline bool neighbours_local(const mgpu_stencil *st, const part *pt)
{
    return (pt->above < 0 || is_local(st, pt->above)) && (pt->below < 0 || is_local(st, pt->below));
}

static inline mgpu_status check_neighbours_local(const mgpu_stencil *st, const part *pt)
{
    if (!neighbours_local(st, pt))
        return mgpu_fail(MGPU_ERR_UNSUPPORTED,
                         "part %d: its neighbours are in another "
                         "process; the strategy exchanges its halos",
                         pt->slab.part);
    return MGPU_OK;
}

/* exchange.c's part of making and freeing the domain: the mode that auto
 * resolves to and the peer access it needs; nccl's communicator. */
mgpu_status mgpu_exchange_resolve(mgpu_stencil *st);
mgpu_status mgpu_exchange_nccl_join(mgpu_stencil *st, const mgpu_nccl_id *given);
void mgpu_exchange_nccl_leave(mgpu_stencil *st);

#endif
