/* stencil.c - the stencil domain: the grid split into row slabs, one part
 * per device, each with two buffers (slab plus a halo row above and below),
 * and the halo exchange in the in-process modes (book 11.3, 3.4).
 *
 * The exchange pushes: each part sends its first interior row to the part
 * above (into that part's bottom halo) and its last interior row to the
 * part below (into its top halo).  The field before step t lives in buffer
 * t % 2, so a send for step t never touches a buffer that step t-1 reads.
 *
 * In mode direct the step's own kernel does the pushing: computing step t, it
 * stores its first and last rows also into the neighbours' halos of buffer
 * (t+1) % 2, through peer pointers, and the send of step t+1 only records
 * the event the neighbours wait for.  A step is then one kernel, one event
 * and a wait per neighbour, as in NVIDIA's multi_threaded_p2p.  The orders
 * that makes safe:
 *  - read after write: a neighbour's step t+1 reads the halo that this
 *    part's step t wrote; its stream waits (recv) for the event this part
 *    records at its send of step t+1, after the kernel of step t;
 *  - write after read: this part's step t writes the neighbour's halo of
 *    buffer (t+1) % 2, which the neighbour's step t-1 read; this part's
 *    stream waited (recv of step t) for the neighbour's send of step t,
 *    recorded after that step t-1.
 * Where no kernel of the step before delivered them (step 0, whose halos
 * mgpu_stencil_reset poisons, or a run of exchanges alone), the send pushes
 * the rows with a copy kernel as before.
 *
 * Deep halos (--halo=K): each part holds K halo rows a side and the
 * exchange moves K rows (one contiguous block) every K steps.  After the
 * exchange at step c the halos hold step c, so step c+i can compute K-1-i
 * rows of halo beyond the slab on each exchanged side, and step c+K-1 the
 * slab alone (the trapezoid).  The steps of a cycle go TIME_BLOCK to a pass
 * (mgpu_stencil_rows_blocked); a pass never crosses an exchange or the end
 * of the run.  The field after step t lives in the buffer of the parity of
 * the passes before t (buffer_of), which is t % 2 when every pass is one
 * step.  One more order then matters in modes peer-async and direct, whose
 * sender writes into the receiver's halo: the receiver's passes inside the
 * last cycle also wrote and read halo rows of that buffer, so the sender
 * first waits for the receiver's event COMPUTED, recorded after each of its
 * passes.  The passes that touch those rows were issued before the barrier
 * of the step before the exchange, hence before the send, so the wait sees
 * them; the last pass of a cycle, which may be issued after, touches no
 * halo row.  That barrier is essential: a strategy that drops the barriers
 * of the steps that exchange nothing must keep those of the step before an
 * exchange and of the exchange itself.
 *
 * Mode nccl needs none of those orders from outside: a part's send issues
 * its whole exchange on its own stream, ncclSend of its edge blocks and
 * ncclRecv into its halo blocks, one NCCL group, and NCCL matches each
 * transfer with the neighbour's.  The receive writes the halos after this
 * part's earlier passes (its own stream) and the transfer reads the edge
 * rows before its later ones, so neither buffers nor events are needed, nor
 * neighbours in this process: each part is rank PART of one communicator,
 * wherever the other ranks live.  Two sends to one neighbour (two parts of a
 * periodic grid, or one part its own neighbour) are matched with its
 * receives in the order posted: first towards the part above (the first
 * block into its bottom halo), then towards the part below; a receiver
 * posts the bottom halo (from below) before the top one (from above). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mgpu-private.h"
#include "trace.h"

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

static bool is_local(const mgpu_stencil *st, int p)
{
    return p >= st->first && p < st->first + st->count;
}

/* Where the passes of the cycle that holds STEP start and how many steps the
 * one starting at STEP takes (0: STEP starts none). */
static long long pass_steps(const mgpu_stencil *st, long long step)
{
    long long phase = step % st->halo;
    if (phase % st->block != 0)
        return 0;
    long long n = st->halo - phase < st->block ? st->halo - phase : st->block;
    if (st->steps > 0 && st->steps - step < n)
        n = st->steps - step;
    return n;
}

/* The buffer that holds the field after STEP steps: the parity of the
 * passes before it (every cycle of K steps has ceil(K/T) passes). */
static int buffer_of(const mgpu_stencil *st, long long step)
{
    long long per_cycle = (st->halo + st->block - 1) / st->block;
    long long phase = step % st->halo;
    return (int) (((step / st->halo) * per_cycle + (phase + st->block - 1) / st->block) & 1);
}

static float *row_of(const mgpu_stencil *st, const part *pt, long long step, long long local_row)
{
    return pt->buf[buffer_of(st, step)] + (size_t) local_row * pt->pitch;
}

/* Whether STEP exchanges halos, and that exchange's parity (the events and
 * host rows that alternate between exchanges). */
static bool exchanges_at(const mgpu_stencil *st, long long step) { return step % st->halo == 0; }
static int exchange_parity(const mgpu_stencil *st, long long step)
{
    return (int) ((step / st->halo) & 1);
}

/* Floats from one row to the next in a part of NX columns. */
static size_t pitch_of(long long nx)
{
    return ((size_t) nx + PITCH_FLOATS - 1) / PITCH_FLOATS * PITCH_FLOATS;
}

/* The floats of HALO rows of NX columns from the start of the first to the
 * end of the last: what an exchange moves each way, as one block. */
static size_t floats_of_block(long long nx, int halo)
{
    return (size_t) (halo - 1) * pitch_of(nx) + (size_t) nx;
}
static size_t block_floats(const mgpu_stencil *st, const part *pt)
{
    (void) pt; /* every part has the same pitch */
    return floats_of_block(st->desc.nx, st->halo);
}
static size_t block_bytes(const mgpu_stencil *st, const part *pt)
{
    return block_floats(st, pt) * sizeof(float);
}

/* The local row of ROW in part PT: the row itself, or with BLOCK the first
 * of its K rows (FIRST: the first K interior rows, LAST: the last K,
 * HALO_TOP and HALO_BOTTOM: the K halo rows on either side). */
static long long local_row_of(const mgpu_stencil *st, const part *pt, mgpu_row row, bool block)
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

/* Neighbours: pattern2d's top and bottom rows are a fixed boundary; jacobi's
 * are periodic, so the first and last parts exchange with each other. */
static void find_neighbours(mgpu_stencil *st, int p)
{
    int n = st->desc.nparts;
    bool periodic = st->desc.kernel == MGPU_KERNEL_JACOBI;
    part *pt = &st->parts[p];
    pt->above = p > 0 ? p - 1 : (periodic ? n - 1 : -1);
    pt->below = p < n - 1 ? p + 1 : (periodic ? 0 : -1);
}

/* Every pair of devices that exchanges halos, checked for peer access. */
static mgpu_status all_pairs_have_peer(const mgpu_stencil *st, bool *all)
{
    *all = true;
    for (int p = 0; p < st->desc.nparts; p++) {
        const part *pt = &st->parts[p];
        int targets[2] = {pt->above, pt->below};
        for (int k = 0; k < 2; k++) {
            if (targets[k] < 0)
                continue;
            int can;
            MGPU_TRY(
                mgpu_peer_can_access(pt->slab.device, st->parts[targets[k]].slab.device, &can));
            if (!can)
                *all = false;
        }
    }
    return MGPU_OK;
}

static mgpu_status enable_peers(const mgpu_stencil *st, bool required)
{
    for (int p = st->first; p < st->first + st->count; p++) {
        const part *pt = &st->parts[p];
        int targets[2] = {pt->above, pt->below};
        for (int k = 0; k < 2; k++) {
            if (targets[k] < 0)
                continue;
            int dev = pt->slab.device, peer = st->parts[targets[k]].slab.device, can;
            MGPU_TRY(mgpu_peer_can_access(dev, peer, &can));
            if (can) {
                MGPU_TRY(mgpu_peer_enable(dev, peer));
            } else if (required) {
                return mgpu_fail(MGPU_ERR_USAGE,
                                 "--exchange=%s: device %d cannot access device %d's memory "
                                 "(no peer access); use peer, peer-async, staged or mapped",
                                 mgpu_exchange_name(st->mode), dev, peer);
            }
        }
    }
    return MGPU_OK;
}

static mgpu_status part_alloc(mgpu_stencil *st, part *pt)
{
    int dev = pt->slab.device;
    size_t cells, bytes;
    MGPU_TRY(mgpu_mul_size(pt->pitch, (size_t) (pt->rows + 2 * st->halo), &cells));
    MGPU_TRY(mgpu_mul_size(cells, sizeof(float), &bytes));
    for (int b = 0; b < 2; b++) {
        void *p;
        MGPU_TRY(mgpu_malloc(dev, bytes, &p));
        pt->buf[b] = p;
    }
    MGPU_TRY(mgpu_stream_create(dev, 0, &pt->stream));
    for (int b = 0; b < 2; b++)
        MGPU_TRY(mgpu_event_create(dev, 0, &pt->sent[b]));
    MGPU_TRY(mgpu_event_create(dev, 0, &pt->joined));
    MGPU_TRY(mgpu_event_create(dev, 0, &pt->computed));
    if (st->mode == MGPU_EXCHANGE_STAGED || st->mode == MGPU_EXCHANGE_MAPPED) {
        unsigned flags = st->mode == MGPU_EXCHANGE_MAPPED ? MGPU_HOST_MAPPED : MGPU_HOST_PINNED;
        for (int b = 0; b < 2; b++) {
            void *host, *devp;
            MGPU_TRY(
                mgpu_host_alloc(2 * (size_t) st->halo * pt->pitch * sizeof(float), flags, &host));
            pt->edges[b] = host;
            if (st->mode == MGPU_EXCHANGE_MAPPED) {
                MGPU_TRY(mgpu_host_device_pointer(host, &devp));
                pt->edges_dev[b] = devp;
            }
        }
    }
    return MGPU_OK;
}

static mgpu_status nccl_exchange(mgpu_stencil *st, part *pt, long long step);

/* nccl: join the communicator, a rank per local part, with the id given or,
 * where this process holds every part, one made here; then connect every
 * pair of neighbours.  A first transfer between two ranks sets up their
 * connection, which takes milliseconds and waits for the peer: here it is
 * in no run's time, and one thread may issue a step's transfers of several
 * parts without any of them waiting on the host. */
static mgpu_status nccl_join(mgpu_stencil *st, const mgpu_nccl_id *given)
{
    mgpu_nccl_id made;
    if (!given && st->count != st->desc.nparts)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "--exchange=nccl: this process holds parts [%d, %d) "
                         "of %d, and no communicator id was given (the "
                         "stencil's nccl_id)",
                         st->first, st->first + st->count, st->desc.nparts);
    if (!given) {
        MGPU_TRY(mgpu_nccl_id_create(&made));
        given = &made;
    }
    int devices[MGPU_MAX_DEVICES];
    mgpu_nccl_comm *comms[MGPU_MAX_DEVICES];
    for (int i = 0; i < st->count; i++)
        devices[i] = st->parts[st->first + i].slab.device;
    MGPU_TRY(mgpu_nccl_comms_create(given, st->desc.nparts, st->first, st->count, devices, comms));
    for (int i = 0; i < st->count; i++)
        st->parts[st->first + i].comm = comms[i];
    /* The edge rows go out before any reset wrote them: zeros, not memory
     * that was never written (compute-sanitizer's initcheck). */
    const mgpu_row edges[2] = {MGPU_ROW_FIRST, MGPU_ROW_LAST};
    for (int p = st->first; p < st->first + st->count; p++)
        for (int e = 0; e < 2; e++)
            MGPU_TRY(mgpu_memset(st->parts[p].slab.device, mgpu_stencil_block(st, p, 0, edges[e]),
                                 0, block_bytes(st, &st->parts[p])));
    int previous;
    MGPU_TRY(mgpu_device_get(&previous));
    MGPU_TRY(mgpu_nccl_group_begin());
    mgpu_status status = MGPU_OK;
    for (int p = st->first; p < st->first + st->count && status == MGPU_OK; p++) {
        status = mgpu_device_set(st->parts[p].slab.device);
        if (status == MGPU_OK)
            status = nccl_exchange(st, &st->parts[p], 0);
    }
    mgpu_status ended = mgpu_nccl_group_end();
    if (status == MGPU_OK)
        status = ended;
    for (int p = st->first; p < st->first + st->count && status == MGPU_OK; p++)
        status = mgpu_nccl_wait(st->parts[p].comm, st->parts[p].stream);
    if (status == MGPU_OK)
        status = mgpu_device_set(previous);
    return status;
}

/* Free the communicators, aborting them all when a part's stream is still
 * busy (after a failure its transfers may wait for a part that never sends;
 * in one process the communicators wait for each other, so all go). */
static void nccl_leave(mgpu_stencil *st)
{
    bool busy = false;
    for (int p = st->first; p < st->first + st->count; p++) {
        part *pt = &st->parts[p];
        int done = 1;
        if (pt->comm && (mgpu_stream_query(pt->stream, &done) != MGPU_OK || !done))
            busy = true;
    }
    for (int p = st->first; p < st->first + st->count; p++) {
        mgpu_nccl_comm_free(st->parts[p].comm, busy);
        st->parts[p].comm = NULL;
    }
}

void mgpu_stencil_abort(mgpu_stencil *st)
{
    if (!st)
        return;
    for (int p = st->first; p < st->first + st->count; p++) {
        mgpu_nccl_comm_free(st->parts[p].comm, true);
        st->parts[p].comm = NULL;
    }
}

static mgpu_status resolve_mode(mgpu_stencil *st)
{
    st->mode = st->desc.exchange;
    if (st->mode == MGPU_EXCHANGE_AUTO) {
        bool all;
        MGPU_TRY(all_pairs_have_peer(st, &all));
        st->mode = all ? MGPU_EXCHANGE_PEER_ASYNC : MGPU_EXCHANGE_STAGED;
    }
    switch (st->mode) {
    case MGPU_EXCHANGE_PEER:
    case MGPU_EXCHANGE_PEER_ASYNC:
        return enable_peers(st, false); /* faster where possible, not needed */
    case MGPU_EXCHANGE_DIRECT:
        return enable_peers(st, true); /* the kernel writes peer memory */
    case MGPU_EXCHANGE_STAGED:
    case MGPU_EXCHANGE_MAPPED:
    case MGPU_EXCHANGE_IPC:
    case MGPU_EXCHANGE_MPI:
        return MGPU_OK; /* the last two belong to the strategies */
    case MGPU_EXCHANGE_NCCL:
        return mgpu_nccl_check(); /* a build with NCCL, the cuda backend */
    default:
        return mgpu_fail(MGPU_ERR_USAGE, "--exchange: unknown mode %d", (int) st->mode);
    }
}

mgpu_status mgpu_stencil_create(mgpu_stencil **stencil, const mgpu_stencil_desc *desc)
{
    *stencil = NULL;
    if (desc->nx < 3 || desc->ny < 3)
        return mgpu_fail(MGPU_ERR_USAGE, "the grid must be at least 3 x 3");
    if (desc->nparts < 1 || desc->nparts > MGPU_MAX_DEVICES)
        return mgpu_fail(MGPU_ERR_USAGE, "--devices: %d is out of range 1..%d", desc->nparts,
                         MGPU_MAX_DEVICES);
    mgpu_stencil *st = calloc(1, sizeof *st);
    if (!st)
        return mgpu_fail(MGPU_ERR_NOMEM, "stencil: out of host memory");
    st->desc = *desc;
    st->desc.devices = NULL; /* not kept: the slabs hold the devices */
    st->desc.nccl_id = NULL; /* used once, by nccl_join */
    st->halo = desc->halo > 0 ? desc->halo : 1;
    st->block = mgpu_time_block_resolve(desc->time_block, st->halo);
    st->steps = desc->steps;
    st->first = desc->local_parts ? desc->first_part : 0;
    st->count = desc->local_parts ? desc->local_parts : desc->nparts;
    mgpu_status status = MGPU_OK;
    mgpu_slab slabs[MGPU_MAX_DEVICES];
    if (st->first < 0 || st->count < 1 || st->first + st->count > desc->nparts) {
        status = mgpu_fail(MGPU_ERR_USAGE, "local parts [%d, %d) are not parts of %d", st->first,
                           st->first + st->count, desc->nparts);
        goto fail;
    }
    status = mgpu_decompose(desc->ny, desc->nparts, slabs);
    if (status != MGPU_OK)
        goto fail;
    size_t pitch = pitch_of(desc->nx);
    for (int p = 0; p < desc->nparts; p++) {
        part *pt = &st->parts[p];
        pt->slab = slabs[p];
        pt->slab.device = desc->devices ? desc->devices[p] : p;
        pt->rows = slabs[p].row_end - slabs[p].row_begin;
        pt->pitch = pitch;
        if (pt->rows < st->halo) {
            status = mgpu_fail(MGPU_ERR_USAGE,
                               "--halo: '%d' is more than the %lld row%s of part %d (accepted: "
                               "an integer from 1 to the rows of the thinnest slab)",
                               st->halo, pt->rows, pt->rows == 1 ? "" : "s", p);
            goto fail;
        }
        find_neighbours(st, p);
        if (is_local(st, p) && (status = mgpu_check_device(pt->slab.device)) != MGPU_OK)
            goto fail;
    }
    if ((status = resolve_mode(st)) != MGPU_OK)
        goto fail;
    for (int p = st->first; p < st->first + st->count; p++)
        if ((status = part_alloc(st, &st->parts[p])) != MGPU_OK)
            goto fail;
    if (st->mode == MGPU_EXCHANGE_NCCL && (status = nccl_join(st, desc->nccl_id)) != MGPU_OK)
        goto fail;
    if (st->first == 0 &&
        (status = mgpu_event_create(st->parts[0].slab.device, 0, &st->fork)) != MGPU_OK)
        goto fail;
    *stencil = st;
    return MGPU_OK;
fail:
    mgpu_stencil_destroy(st);
    return status;
}

void mgpu_stencil_destroy(mgpu_stencil *st)
{
    if (!st)
        return;
    nccl_leave(st);
    /* Nothing may still use the buffers when they are freed: not the parts'
     * streams, and not a copy on a device's default stream (cudaMemcpyPeer)
     * that writes a neighbour's halo.  A failed device cannot be waited for;
     * its buffers are freed all the same. */
    for (int p = st->first; p < st->first + st->count; p++)
        if (st->parts[p].stream)
            mgpu_device_synchronize(st->parts[p].slab.device);
    for (int p = st->first; p < st->first + st->count; p++) {
        part *pt = &st->parts[p];
        for (int b = 0; b < 2; b++) {
            mgpu_free(pt->slab.device, pt->buf[b]);
            mgpu_host_free(pt->edges[b]);
        }
        mgpu_event_destroy(pt->sent[0]);
        mgpu_event_destroy(pt->sent[1]);
        mgpu_event_destroy(pt->joined);
        mgpu_event_destroy(pt->computed);
        mgpu_stream_destroy(pt->stream);
    }
    mgpu_event_destroy(st->fork);
    free(st);
}

mgpu_exchange mgpu_stencil_exchange_mode(const mgpu_stencil *st) { return st->mode; }
const mgpu_slab *mgpu_stencil_slab(const mgpu_stencil *st, int p) { return &st->parts[p].slab; }
int mgpu_stencil_device(const mgpu_stencil *st, int p) { return st->parts[p].slab.device; }
mgpu_stream *mgpu_stencil_stream(const mgpu_stencil *st, int p) { return st->parts[p].stream; }
size_t mgpu_stencil_pitch(const mgpu_stencil *st, int p) { return st->parts[p].pitch; }

float *mgpu_stencil_buffer(const mgpu_stencil *st, int p, long long step)
{
    return st->parts[p].buf[buffer_of(st, step)];
}

int mgpu_stencil_halo(const mgpu_stencil *st) { return st->halo; }

int mgpu_time_block_resolve(int time_block, int halo)
{
    int t = time_block > 0 ? time_block : 4;
    return t < halo ? t : halo;
}

long long mgpu_exchanges_per_run(mgpu_kernel kernel, int devices, long long steps, int halo)
{
    bool neighbours = devices > 1 || kernel == MGPU_KERNEL_JACOBI; /* find_neighbours */
    return neighbours ? (steps + halo - 1) / halo : 0;
}

float *mgpu_stencil_row(const mgpu_stencil *st, int p, long long step, mgpu_row row)
{
    const part *pt = &st->parts[p];
    return row_of(st, pt, step, local_row_of(st, pt, row, false));
}

size_t mgpu_stencil_block_offset(const mgpu_stencil *st, int p, mgpu_row row)
{
    const part *pt = &st->parts[p];
    return (size_t) local_row_of(st, pt, row, true) * pt->pitch;
}

float *mgpu_stencil_block(const mgpu_stencil *st, int p, long long step, mgpu_row row)
{
    return st->parts[p].buf[buffer_of(st, step)] + mgpu_stencil_block_offset(st, p, row);
}

size_t mgpu_block_bytes(long long nx, int halo)
{
    return floats_of_block(nx, halo) * sizeof(float);
}
size_t mgpu_stencil_block_bytes(const mgpu_stencil *st)
{
    return block_bytes(st, &st->parts[st->first]);
}

int mgpu_stencil_exchanges_at(const mgpu_stencil *st, long long step)
{
    return exchanges_at(st, step);
}
int mgpu_stencil_exchange_parity(const mgpu_stencil *st, long long step)
{
    return exchange_parity(st, step);
}
int mgpu_stencil_buffer_index(const mgpu_stencil *st, long long step)
{
    return buffer_of(st, step);
}

int mgpu_stencil_rewrites_edges(const mgpu_stencil *st) { return st->block < st->halo; }

mgpu_event *mgpu_stencil_fork_event(const mgpu_stencil *st) { return st->fork; }

mgpu_event *mgpu_stencil_join_event(const mgpu_stencil *st, int p) { return st->parts[p].joined; }

int mgpu_stencil_above(const mgpu_stencil *st, int p) { return st->parts[p].above; }
int mgpu_stencil_below(const mgpu_stencil *st, int p) { return st->parts[p].below; }

size_t mgpu_stencil_part_bytes(const mgpu_stencil *st, int p)
{
    const part *pt = &st->parts[p];
    return 2 * pt->pitch * (size_t) (pt->rows + 2 * st->halo) * sizeof(float);
}

/* Whether a part other than PT itself fills one of PT's halos. */
/* Modes whose receivers' streams wait for their senders' events (the others
 * are ordered by the copy itself or by the host). */
static bool orders_by_event(const mgpu_stencil *st)
{
    return st->mode == MGPU_EXCHANGE_PEER_ASYNC || st->mode == MGPU_EXCHANGE_DIRECT;
}

/* Whether PT waits for the events of its neighbour on SIDE (0 above, 1
 * below): one that exists, is another part (a part's own stream is ordered
 * already), and is not the one above again (two parts of a periodic grid are
 * each other's neighbours on both sides: an event is waited for once). */
static bool waits_for_side(const part *pt, int side)
{
    int n = side == 0 ? pt->above : pt->below;
    return n >= 0 && n != pt->slab.part && !(side == 1 && pt->below == pt->above);
}

static bool has_other_neighbour(const part *pt)
{
    return waits_for_side(pt, 0) || waits_for_side(pt, 1);
}

/* Whether local row LOCAL of part PT is a halo row filled by an exchange
 * (rather than interior, or beyond a fixed boundary). */
static bool halo_is_exchanged(const mgpu_stencil *st, const part *pt, long long local)
{
    if (local < st->halo)
        return pt->above >= 0;
    return local >= st->halo + pt->rows && pt->below >= 0;
}

/* Rows [row0, row0+n) (local) of the initial field.  The halo rows an
 * exchange fills are poisoned (NaN) but for their boundary columns, which
 * every step reads and no exchange needs to bring: a halo that no exchange
 * fills shows up in the result.  Jacobi's halo rows beyond the grid are its
 * periodic images (interior rows repeat every ny-2); pattern2d's rows beyond
 * its fixed boundary are never read, and NaN. */
static void initial_block(const mgpu_stencil *st, const part *pt, float *host, long long row0,
                          long long n)
{
    const mgpu_stencil_desc *d = &st->desc;
    /* A row at a time, but the rows in parallel: one thread would take a
     * second a repeat to make a 16384 x 16384 field. */
    MGPU_OMP(omp parallel for schedule(static))
    for (long long r = 0; r < n; r++) {
        long long local = row0 + r;
        long long global = pt->slab.row_begin - st->halo + local;
        float *row = host + (size_t) r * pt->pitch;
        if (d->kernel == MGPU_KERNEL_JACOBI && (global < 0 || global > d->ny - 1))
            global = ((global - 1) % (d->ny - 2) + (d->ny - 2)) % (d->ny - 2) + 1;
        if (global < 0 || global > d->ny - 1) {
            for (long long i = 0; i < d->nx; i++)
                row[i] = NAN;
            continue;
        }
        mgpu_field_initial_rows(row, pt->pitch, d->kernel, d->nx, d->ny, global, 1, d->seed);
        if (halo_is_exchanged(st, pt, local))
            for (long long i = 1; i < d->nx - 1; i++)
                row[i] = NAN;
    }
}

mgpu_status mgpu_stencil_reset(mgpu_stencil *st, int p)
{
    part *pt = &st->parts[p];
    size_t row_size = pt->pitch * sizeof(float);
    pt->delivered = -1;
    MGPU_TRY(mgpu_device_set(pt->slab.device));
    /* The field is made on the host a block at a time, so even a 50000 x
     * 50000 grid needs little host memory to start. */
    long long block = (long long) ((64u << 20) / row_size);
    long long total = pt->rows + 2 * st->halo;
    block = block < 1 ? 1 : block > total ? total : block;
    float *host = malloc((size_t) block * row_size);
    if (!host)
        return mgpu_fail(MGPU_ERR_NOMEM, "reset: out of host memory");
    mgpu_status status = MGPU_OK;
    for (long long r = 0; r < total && status == MGPU_OK; r += block) {
        long long n = total - r < block ? total - r : block;
        initial_block(st, pt, host, r, n);
        status = mgpu_memcpy(pt->buf[0] + (size_t) r * pt->pitch, host, (size_t) n * row_size);
    }
    free(host);
    /* Buffer 1 is buffer 0 with every cell a step computes poisoned: all
     * bits set is a NaN, so a cell that no step writes fails verification. */
    if (status == MGPU_OK)
        status = mgpu_memcpy(pt->buf[1], pt->buf[0], (size_t) total * row_size);
    if (status == MGPU_OK)
        status = mgpu_memset_2d(pt->slab.device, pt->buf[1] + (size_t) st->halo * pt->pitch + 1,
                                row_size, 0xff, (size_t) (st->desc.nx - 2) * sizeof(float),
                                (size_t) pt->rows);
    return status;
}

static mgpu_status check_current(const part *pt)
{
    int current;
    MGPU_TRY(mgpu_device_get(&current));
    if (current != pt->slab.device)
        return mgpu_fail(MGPU_ERR_USAGE, "part %d lives on device %d, but device %d is current",
                         pt->slab.part, pt->slab.device, current);
    return MGPU_OK;
}

/* Whether PT's neighbours, where it has them, are parts of this process. */
static bool neighbours_local(const mgpu_stencil *st, const part *pt)
{
    return (pt->above < 0 || is_local(st, pt->above)) && (pt->below < 0 || is_local(st, pt->below));
}

/* Whether PT's one-row kernels store its edge rows into its neighbours'
 * halos themselves: mode direct, the neighbours in this process; mode ipc,
 * their buffers mapped into it (mgpu_stencil_map_part). */
static bool kernel_sends(const mgpu_stencil *st, const part *pt)
{
    if (st->mode == MGPU_EXCHANGE_DIRECT)
        return neighbours_local(st, pt);
    if (st->mode != MGPU_EXCHANGE_IPC)
        return false;
    return (pt->above < 0 || st->parts[pt->above].buf[0]) &&
           (pt->below < 0 || st->parts[pt->below].buf[0]);
}

mgpu_status mgpu_stencil_map_part(mgpu_stencil *st, int p, float *buffer0, float *buffer1)
{
    if (p < 0 || p >= st->desc.nparts || is_local(st, p))
        return mgpu_fail(MGPU_ERR_USAGE, "part %d: not a part that another process holds", p);
    st->parts[p].buf[0] = buffer0;
    st->parts[p].buf[1] = buffer1;
    return MGPU_OK;
}

int mgpu_stencil_delivered(const mgpu_stencil *st, int p, long long step)
{
    return st->parts[p].delivered == step;
}

static mgpu_status check_neighbours_local(const mgpu_stencil *st, const part *pt)
{
    if (!neighbours_local(st, pt))
        return mgpu_fail(MGPU_ERR_UNSUPPORTED,
                         "part %d: its neighbours are in another "
                         "process; the strategy exchanges its halos",
                         pt->slab.part);
    return MGPU_OK;
}

/* PT's K edge rows of block ROW to one neighbour's halo block TO_ROW, in an
 * in-process mode: one contiguous block. */
static mgpu_status push_rows(mgpu_stencil *st, part *pt, long long step, mgpu_row row, part *to,
                             mgpu_row to_row)
{
    const float *src = row_of(st, pt, step, local_row_of(st, pt, row, true));
    float *dst = row_of(st, to, step, local_row_of(st, to, to_row, true));
    int src_dev = pt->slab.device, dst_dev = to->slab.device;
    switch (st->mode) {
    case MGPU_EXCHANGE_PEER:
        return mgpu_copy_peer(dst, dst_dev, src, src_dev, block_bytes(st, pt));
    case MGPU_EXCHANGE_PEER_ASYNC:
        return mgpu_copy_peer_async(dst, dst_dev, src, src_dev, block_bytes(st, pt), pt->stream);
    case MGPU_EXCHANGE_DIRECT:
        return mgpu_copy_row_kernel(dst, src, (long long) block_floats(st, pt), pt->stream);
    default:
        return mgpu_fail(MGPU_ERR_UNSUPPORTED, "push_rows: mode %s", mgpu_exchange_name(st->mode));
    }
}

/* Deep halos, modes that write into the receiver's halos from the sender's
 * stream: after the receivers' passes that wrote those rows (see the top). */
static mgpu_status wait_for_receivers(mgpu_stencil *st, part *pt)
{
    if (st->halo == 1 || !orders_by_event(st))
        return MGPU_OK;
    int to[2] = {pt->above, pt->below};
    for (int k = 0; k < 2; k++)
        if (waits_for_side(pt, k))
            MGPU_TRY(mgpu_stream_wait_event(pt->stream, st->parts[to[k]].computed));
    return MGPU_OK;
}

/* A capture may wait only for events recorded inside it, and outside one
 * no wait may name an event last recorded inside one.  With deep halos a
 * cycle's first send waits for the receivers' COMPUTED of the cycle before,
 * and a neighbour's recv may wait for a SENT that this part's next send has
 * not yet recorded.  Recorded again where the part's stream joins the
 * capture, and again once it ended, they stand for all the part's work
 * before, which every replay and every later step follows. */
mgpu_status mgpu_stencil_record_waited(mgpu_stencil *st, int p)
{
    /* One-row halos wait for nothing recorded a step before: each SENT is
     * recorded by the same step's send before any recv waits for it. */
    if (st->halo == 1 || !orders_by_event(st))
        return MGPU_OK;
    part *pt = &st->parts[p];
    MGPU_TRY(mgpu_event_record(pt->computed, pt->stream));
    for (int b = 0; b < 2; b++)
        if (pt->sent[b])
            MGPU_TRY(mgpu_event_record(pt->sent[b], pt->stream));
    return MGPU_OK;
}

/* nccl: PT's edge blocks to its neighbours and their edge blocks into its
 * halos, in place, one group on its stream (see the top for the order). */
static mgpu_status nccl_transfers(mgpu_stencil *st, part *pt, long long step)
{
    const size_t n = block_floats(st, pt);
    const int p = pt->slab.part;
    if (pt->above >= 0)
        MGPU_TRY(mgpu_nccl_send(pt->comm, mgpu_stencil_block(st, p, step, MGPU_ROW_FIRST), n,
                                pt->above, pt->stream));
    if (pt->below >= 0)
        MGPU_TRY(mgpu_nccl_send(pt->comm, mgpu_stencil_block(st, p, step, MGPU_ROW_LAST), n,
                                pt->below, pt->stream));
    if (pt->below >= 0)
        MGPU_TRY(mgpu_nccl_recv(pt->comm, mgpu_stencil_block(st, p, step, MGPU_ROW_HALO_BOTTOM), n,
                                pt->below, pt->stream));
    if (pt->above >= 0)
        MGPU_TRY(mgpu_nccl_recv(pt->comm, mgpu_stencil_block(st, p, step, MGPU_ROW_HALO_TOP), n,
                                pt->above, pt->stream));
    return MGPU_OK;
}

static mgpu_status nccl_exchange(mgpu_stencil *st, part *pt, long long step)
{
    MGPU_TRY(mgpu_nccl_group_begin());
    mgpu_status status = nccl_transfers(st, pt, step);
    mgpu_status ended = mgpu_nccl_group_end(); /* the group is closed after a failure too */
    return status != MGPU_OK ? status : ended;
}

mgpu_status mgpu_stencil_send_begin(mgpu_stencil *st)
{
    return st->mode == MGPU_EXCHANGE_NCCL ? mgpu_nccl_group_begin() : MGPU_OK;
}

mgpu_status mgpu_stencil_send_end(mgpu_stencil *st)
{
    return st->mode == MGPU_EXCHANGE_NCCL ? mgpu_nccl_group_end() : MGPU_OK;
}

static mgpu_status send_part(mgpu_stencil *st, part *pt, long long step)
{
    MGPU_TRY(check_current(pt));
    if (st->mode != MGPU_EXCHANGE_NCCL) /* a communicator reaches them anywhere */
        MGPU_TRY(check_neighbours_local(st, pt));
    if (!exchanges_at(st, step))
        return MGPU_OK;
    const int parity = exchange_parity(st, step);
    switch (st->mode) {
    case MGPU_EXCHANGE_DIRECT:
        /* The kernel sent them; the event is for the neighbours in other
         * parts, and a part that is its own neighbour (or has none) waits
         * for nobody's. */
        if (pt->delivered == step)
            return has_other_neighbour(pt) ? mgpu_event_record(pt->sent[parity], pt->stream)
                                           : MGPU_OK;
        /* fall through */
    case MGPU_EXCHANGE_PEER:
    case MGPU_EXCHANGE_PEER_ASYNC:
        MGPU_TRY(wait_for_receivers(st, pt));
        if (pt->above >= 0)
            MGPU_TRY(push_rows(st, pt, step, MGPU_ROW_FIRST, &st->parts[pt->above],
                               MGPU_ROW_HALO_BOTTOM));
        if (pt->below >= 0)
            MGPU_TRY(
                push_rows(st, pt, step, MGPU_ROW_LAST, &st->parts[pt->below], MGPU_ROW_HALO_TOP));
        /* The receivers' streams wait for this event, not for the host. */
        if (st->mode != MGPU_EXCHANGE_PEER)
            MGPU_TRY(mgpu_event_record(pt->sent[parity], pt->stream));
        return MGPU_OK;
    case MGPU_EXCHANGE_STAGED:
    case MGPU_EXCHANGE_MAPPED: {
        /* Both edge blocks go to host memory; the receivers fetch them after
         * the barrier, so the copy must be complete when send returns. */
        float *edges = st->mode == MGPU_EXCHANGE_MAPPED ? pt->edges_dev[parity] : pt->edges[parity];
        const mgpu_row rows[2] = {MGPU_ROW_FIRST, MGPU_ROW_LAST};
        for (int e = 0; e < 2; e++) {
            float *dst = edges + (size_t) e * (size_t) st->halo * pt->pitch;
            const float *src = row_of(st, pt, step, local_row_of(st, pt, rows[e], true));
            if (st->mode == MGPU_EXCHANGE_MAPPED)
                MGPU_TRY(
                    mgpu_copy_row_kernel(dst, src, (long long) block_floats(st, pt), pt->stream));
            else
                MGPU_TRY(mgpu_memcpy_async(dst, src, block_bytes(st, pt), pt->stream));
        }
        return mgpu_stream_synchronize(pt->stream);
    }
    case MGPU_EXCHANGE_NCCL:
        return nccl_exchange(st, pt, step);
    default:
        return mgpu_fail(MGPU_ERR_UNSUPPORTED,
                         "--exchange=%s is done by the strategy, "
                         "not the stencil domain",
                         mgpu_exchange_name(st->mode));
    }
}

/* Send and recv as the timeline names them (trace.h), the range closed on
 * every return. */
mgpu_status mgpu_stencil_send(mgpu_stencil *st, int p, long long step)
{
    part *pt = &st->parts[p];
    mgpu_trace_begin(MGPU_TRACE_SEND, pt->slab.device, step);
    mgpu_status status = send_part(st, pt, step);
    mgpu_trace_end();
    return status;
}

static mgpu_status recv_part(mgpu_stencil *st, int p, long long step)
{
    part *pt = &st->parts[p];
    MGPU_TRY(check_current(pt));
    if (st->mode == MGPU_EXCHANGE_NCCL)
        return MGPU_OK; /* its send received too */
    MGPU_TRY(check_neighbours_local(st, pt));
    if (!exchanges_at(st, step))
        return MGPU_OK;
    const size_t k = (size_t) st->halo;
    const int parity = exchange_parity(st, step);
    int from[2] = {pt->above, pt->below};
    const long long halo[2] = {local_row_of(st, pt, MGPU_ROW_HALO_TOP, true),
                               local_row_of(st, pt, MGPU_ROW_HALO_BOTTOM, true)};
    for (int e = 0; e < 2; e++) {
        if (from[e] < 0)
            continue;
        if (orders_by_event(st) && !waits_for_side(pt, e))
            continue;
        part *src = &st->parts[from[e]];
        /* The top halo is the sender's last rows (edge block 1), the bottom
         * halo its first rows (edge block 0). */
        size_t edge = (size_t) (1 - e) * k * src->pitch;
        switch (st->mode) {
        case MGPU_EXCHANGE_PEER:
            break; /* cudaMemcpyPeer is ordered with all work on both devices */
        case MGPU_EXCHANGE_PEER_ASYNC:
        case MGPU_EXCHANGE_DIRECT:
            MGPU_TRY(mgpu_stream_wait_event(pt->stream, src->sent[parity]));
            break;
        case MGPU_EXCHANGE_STAGED:
            MGPU_TRY(mgpu_memcpy_async(row_of(st, pt, step, halo[e]), src->edges[parity] + edge,
                                       block_bytes(st, pt), pt->stream));
            break;
        case MGPU_EXCHANGE_MAPPED:
            MGPU_TRY(mgpu_copy_row_kernel(row_of(st, pt, step, halo[e]),
                                          src->edges_dev[parity] + edge,
                                          (long long) block_floats(st, pt), pt->stream));
            break;
        default:
            return mgpu_fail(MGPU_ERR_UNSUPPORTED, "--exchange=%s is done by the strategy",
                             mgpu_exchange_name(st->mode));
        }
    }
    return MGPU_OK;
}

mgpu_status mgpu_stencil_recv(mgpu_stencil *st, int p, long long step)
{
    mgpu_trace_begin(MGPU_TRACE_RECV, st->parts[p].slab.device, step);
    mgpu_status status = recv_part(st, p, step);
    mgpu_trace_end();
    return status;
}

/* Local rows [L0, L1) of step STEP on STREAM; rows L0 and L1-1 of the
 * result also go to FIRST_TO and LAST_TO unless NULL. */
static mgpu_status compute_local(mgpu_stencil *st, part *pt, long long step, long long l0,
                                 long long l1, float *first_to, float *last_to, mgpu_stream *stream)
{
    MGPU_TRY(mgpu_fault_check(pt->slab.part, step));
    MGPU_TRY(check_current(pt));
    mgpu_trace_begin(MGPU_TRACE_COMPUTE, pt->slab.device, step);
    mgpu_status status = mgpu_stencil_rows_sending(st->desc.kernel, pt->buf[buffer_of(st, step)],
                                                   pt->buf[buffer_of(st, step + 1)], st->desc.nx,
                                                   pt->pitch, l0, l1, first_to, last_to, stream);
    mgpu_trace_end();
    return status;
}

/* Local rows [L0, L1) of part PT advanced N steps from STEP in one pass on
 * STREAM; FIXED says which of the rows around them are the field's
 * boundary (MGPU_ROWS_FIXED_*). */
static mgpu_status compute_band(mgpu_stencil *st, part *pt, long long step, long long n,
                                long long l0, long long l1, unsigned fixed, mgpu_stream *stream)
{
    MGPU_TRY(mgpu_fault_check(pt->slab.part, step));
    MGPU_TRY(check_current(pt));
    mgpu_trace_begin(MGPU_TRACE_COMPUTE, pt->slab.device, step);
    mgpu_status status = mgpu_stencil_rows_blocked(st->desc.kernel, pt->buf[buffer_of(st, step)],
                                                   pt->buf[buffer_of(st, step + n)], st->desc.nx,
                                                   pt->pitch, l0, l1, (int) n, fixed, stream);
    mgpu_trace_end();
    return status;
}

/* The pass that starts at STEP: N steps of the rows that must still be valid
 * after it, K-phase-N beyond the slab on each exchanged side. */
static mgpu_status compute_pass(mgpu_stencil *st, part *pt, long long step, long long n)
{
    long long beyond = st->halo - step % st->halo - n;
    long long l0 = st->halo - (pt->above >= 0 ? beyond : 0);
    long long l1 = st->halo + pt->rows + (pt->below >= 0 ? beyond : 0);
    unsigned fixed = (pt->above < 0 ? MGPU_ROWS_FIXED_TOP : 0) |
                     (pt->below < 0 ? MGPU_ROWS_FIXED_BOTTOM : 0);
    MGPU_TRY(compute_band(st, pt, step, n, l0, l1, fixed, pt->stream));
    if (st->halo > 1 && orders_by_event(st))
        MGPU_TRY(mgpu_event_record(pt->computed, pt->stream));
    return MGPU_OK;
}

mgpu_status mgpu_stencil_compute_rows(mgpu_stencil *st, int p, long long step, long long r0,
                                      long long r1, mgpu_stream *stream)
{
    part *pt = &st->parts[p];
    if (r0 < pt->slab.row_begin || r1 > pt->slab.row_end)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "part %d: rows [%lld, %lld) are outside its slab "
                         "[%lld, %lld)",
                         p, r0, r1, pt->slab.row_begin, pt->slab.row_end);
    long long local0 = r0 - pt->slab.row_begin + st->halo;
    long long local1 = r1 - pt->slab.row_begin + st->halo;
    if (st->halo == 1)
        return compute_local(st, pt, step, local0, local1, NULL, NULL, stream);
    /* Deep halos: a cycle's one pass (T = K) reads K rows beyond the band,
     * all in the buffer; with several passes a cycle the later ones would
     * need rows beyond the slab that only the whole slab's pass computes. */
    if (st->block != st->halo)
        return mgpu_fail(MGPU_ERR_UNSUPPORTED,
                         "computing part of a slab: --time-block must equal --halo (%d, "
                         "not %d)",
                         st->halo, st->block);
    long long n = pass_steps(st, step);
    if (n == 0)
        return mgpu_fault_check(pt->slab.part, step);
    /* On a side that is the field's fixed boundary a band starts at the
     * boundary (the kernel keeps that row) or far enough from it that its
     * pass neither reads above the row nor computes it: N-1 rows. */
    long long top_gap = r0 - pt->slab.row_begin, bottom_gap = pt->slab.row_end - r1;
    if ((pt->above < 0 && top_gap > 0 && top_gap < n - 1) ||
        (pt->below < 0 && bottom_gap > 0 && bottom_gap < n - 1))
        return mgpu_fail(MGPU_ERR_UNSUPPORTED,
                         "part %d: rows [%lld, %lld) end nearer the field's fixed boundary than "
                         "the %lld rows a pass of %lld steps reaches",
                         p, r0, r1, n - 1, n);
    unsigned fixed = (pt->above < 0 && top_gap == 0 ? MGPU_ROWS_FIXED_TOP : 0) |
                     (pt->below < 0 && bottom_gap == 0 ? MGPU_ROWS_FIXED_BOTTOM : 0);
    return compute_band(st, pt, step, n, local0, local1, fixed, stream);
}

/* Where part PT's kernel of step STEP stores its edge rows (kernel_sends):
 * the bottom halo of the part above and the top halo of the part below, in
 * the buffer the step writes; NULL for a fixed boundary.  One-row halos. */
static float *halo_of_next(const mgpu_stencil *st, int neighbour, long long step, bool bottom)
{
    if (neighbour < 0)
        return NULL;
    const part *to = &st->parts[neighbour];
    return row_of(st, to, step + 1, bottom ? to->rows + 1 : 0);
}

mgpu_status mgpu_stencil_compute(mgpu_stencil *st, int p, long long step)
{
    part *pt = &st->parts[p];
    if (st->halo > 1) {
        long long n = pass_steps(st, step);
        return n > 0 ? compute_pass(st, pt, step, n) : mgpu_fault_check(pt->slab.part, step);
    }
    bool sending = kernel_sends(st, pt);
    MGPU_TRY(compute_local(st, pt, step, 1, pt->rows + 1,
                           sending ? halo_of_next(st, pt->above, step, true) : NULL,
                           sending ? halo_of_next(st, pt->below, step, false) : NULL, pt->stream));
    if (sending)
        pt->delivered = step + 1;
    return MGPU_OK;
}

mgpu_status mgpu_stencil_synchronize(mgpu_stencil *st, int p)
{
    part *pt = &st->parts[p];
    /* nccl: not blocked in cudaStreamSynchronize, where a transfer from a
     * peer that failed would hold the host forever. */
    if (pt->comm)
        return mgpu_nccl_wait(pt->comm, pt->stream);
    MGPU_TRY(mgpu_stream_synchronize(pt->stream));
    /* cudaMemcpyPeer runs on the current device's legacy default stream,
     * which waiting for the part's own stream does not cover. */
    if (st->mode == MGPU_EXCHANGE_PEER)
        MGPU_TRY(mgpu_stream_synchronize(NULL));
    return MGPU_OK;
}

mgpu_status mgpu_stencil_gather_rows(mgpu_stencil *st, int p, long long steps, float *rows)
{
    part *pt = &st->parts[p];
    size_t nx = (size_t) st->desc.nx;
    MGPU_TRY(mgpu_device_set(pt->slab.device));
    MGPU_TRY(mgpu_stream_synchronize(pt->stream));
    return mgpu_memcpy_2d(rows, nx * sizeof(float), row_of(st, pt, steps, st->halo),
                          pt->pitch * sizeof(float), nx * sizeof(float), (size_t) pt->rows);
}

mgpu_status mgpu_stencil_gather(mgpu_stencil *st, int p, long long steps, float *field)
{
    const mgpu_stencil_desc *d = &st->desc;
    part *pt = &st->parts[p];
    size_t nx = (size_t) d->nx;
    MGPU_TRY(mgpu_stencil_gather_rows(st, p, steps, field + (size_t) pt->slab.row_begin * nx));
    /* The outer rows are not computed: they are the boundary (pattern2d) or
     * periodic images that mgpu_field_fill_halo_rows makes (jacobi). */
    if (pt->slab.row_begin == 1)
        mgpu_field_initial_rows(field, nx, d->kernel, d->nx, d->ny, 0, 1, d->seed);
    if (pt->slab.row_end == d->ny - 1)
        mgpu_field_initial_rows(field + (size_t) (d->ny - 1) * nx, nx, d->kernel, d->nx, d->ny,
                                d->ny - 1, 1, d->seed);
    return MGPU_OK;
}

mgpu_status mgpu_stencil_gather_all(mgpu_stencil *st, long long steps, float *field)
{
    for (int p = st->first; p < st->first + st->count; p++)
        MGPU_TRY(mgpu_stencil_gather(st, p, steps, field));
    mgpu_field_fill_halo_rows(field, st->desc.kernel, st->desc.nx, st->desc.ny);
    return MGPU_OK;
}
