/* stencil-part.h - the stencil domain's parts and their layout, shared by
 * stencil.c (the domain) and exchange.c (the halo exchange between parts),
 * and what stencil.c asks of exchange.c.  Private to the library. */
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
    /* staged in chunks: the copies to the part above (0) and below (1), in
     * place of EDGES */
    mgpu_staged_copy *chunked[2];
} part;

struct mgpu_stencil {
    mgpu_stencil_desc desc;
    mgpu_exchange mode;
    mgpu_event *fork; /* graphs: on part 0's stream, which the others wait for */
    int first, count;
    int halo;        /* K: halo rows a side, steps between exchanges */
    int block;       /* steps per pass, at most K */
    long long steps; /* of a run, 0: unbounded */
    float *field[2]; /* managed: each buffer of the whole field, one
                        allocation; the parts' buffers point into it */
    /* staged: the chunk its blocks go in, 0 where they go whole */
    size_t staging_chunk;
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

/* Where ROW's block (mgpu_stencil_block) of PT's field before STEP starts. */
static inline float *block_of(const mgpu_stencil *st, const part *pt, long long step, mgpu_row row)
{
    return row_of(st, pt, step, local_row_of(st, pt, row, true));
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

static inline mgpu_status check_current(const part *pt)
{
    int current;
    MGPU_TRY(mgpu_device_get(&current));
    if (current != pt->slab.device)
        return mgpu_fail(MGPU_ERR_USAGE, "part %d lives on device %d, but device %d is current",
                         pt->slab.part, pt->slab.device, current);
    return MGPU_OK;
}

/* What the domain asks of exchange.c: the mode that auto resolves to, the
 * peer access it needs and the chunk of staged copies; the host memory of
 * modes staged and mapped (*BYTES for a part of DESC's that has NEIGHBOURS
 * neighbours, HALO rows deep), made and freed; managed's field; nccl's
 * communicator, joined and left. */
mgpu_status mgpu_exchange_resolve(mgpu_stencil *st);
mgpu_status mgpu_exchange_host_bytes(const mgpu_stencil_desc *desc, int halo, int neighbours,
                                     size_t *bytes);
mgpu_status mgpu_exchange_part_alloc(mgpu_stencil *st, part *pt);
void mgpu_exchange_part_free(part *pt);
/* Mode managed (NULL field elsewhere): the bytes of each of the field's two
 * buffers (NY rows of one pitch); the buffers in managed memory, each local
 * part's buffers pointing into them, placed; freed.
 * The local rows [*FIRST, *END) that PT's reset writes: all of them, but
 * in mode managed, where its halos are its neighbours' rows, only its own;
 * then what follows the reset (managed: the prefetch to PT's device). */
mgpu_status mgpu_exchange_field_bytes(const mgpu_stencil_desc *desc, size_t *bytes);
mgpu_status mgpu_exchange_field_alloc(mgpu_stencil *st);
void mgpu_exchange_field_free(mgpu_stencil *st);
void mgpu_exchange_reset_rows(const mgpu_stencil *st, const part *pt, long long *first,
                              long long *end);
mgpu_status mgpu_exchange_reset_done(mgpu_stencil *st, part *pt);
mgpu_status mgpu_exchange_nccl_join(mgpu_stencil *st, const mgpu_nccl_id *given);
void mgpu_exchange_nccl_leave(mgpu_stencil *st);
/* One-row halos, modes direct, managed and ipc: where PT's kernel of STEP also
 * stores its edge rows, the neighbours' halos of the buffer it writes (TO[0]
 * the part above's, TO[1] the part below's), or NULL and NULL; where it
 * does, the send of STEP+1 finds them delivered (the kernel launched next
 * stores them). */
void mgpu_exchange_kernel_stores(mgpu_stencil *st, part *pt, long long step, float *to[2]);
/* After each of PT's passes (deep halos): what orders the neighbours' next
 * sends into its halos after it. */
mgpu_status mgpu_exchange_passed(const mgpu_stencil *st, part *pt);

#endif
