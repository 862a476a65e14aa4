/* exchange.c - the halo exchange between the stencil domain's parts (book
 * 11.3, 3.4), every mode in its own section: mgpu_stencil_send and
 * mgpu_stencil_recv, at the end, name each mode's function, which makes the
 * copies itself.  A strategy calls mgpu_stencil_send for every part, meets
 * its own synchronisation (a barrier, or none where events order the
 * streams), then mgpu_stencil_recv.
 *
 * The exchange pushes: each part sends its first K interior rows into the
 * bottom halo of the part above and its last K rows into the top halo of
 * the part below (K: --halo, one contiguous block).  The field before step
 * t lives in buffer t % 2, so a send for step t never touches a buffer that
 * step t-1 reads.  Each mode's section says what orders its copies.
 *
 * The domain (stencil.c) calls this file; this file reads only the domain's
 * layout (stencil-part.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>

#include "mgpu-test.h"
#include "stencil-part.h"
#include "trace.h"

/* ------------------------------------------------------ choosing the mode */

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

/* Mode managed: one field of one process, one-row halos, and devices that
 * use managed memory at the same time as each other (section managed). */
static mgpu_status managed_check(const mgpu_stencil *st)
{
    if (st->halo > 1)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "--halo: --exchange=managed's halo rows are the neighbours' own rows, "
                         "which the passes of deep halos would overwrite (accepted with it: "
                         "--halo=1)");
    if (st->count != st->desc.nparts)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "--exchange=managed: the field is one allocation of one process, "
                         "which holds parts [%d, %d) of %d (accepted: every part in it)",
                         st->first, st->first + st->count, st->desc.nparts);
    for (int p = 0; p < st->desc.nparts; p++) {
        int device = st->parts[p].slab.device, concurrent;
        MGPU_TRY(mgpu_managed_concurrent(device, &concurrent));
        if (!concurrent)
            return mgpu_fail(MGPU_ERR_USAGE,
                             "--exchange=managed: device %d cannot use managed memory at the "
                             "same time as the others (cudaDevAttrConcurrentManagedAccess 0); "
                             "use direct, peer-async or staged",
                             device);
    }
    return MGPU_OK;
}

/* MGPU_STAGING_CHUNK=BYTES: 0 for whole blocks at any size, so that one
 * can be measured against the other, or a few bytes, so that the tests'
 * small grids take the chunked path. */
mgpu_status mgpu_staging_chunk_env(size_t *chunk)
{
    const char *text = getenv("MGPU_STAGING_CHUNK");
    long long bytes;
    *chunk = MGPU_STAGED_CHUNK;
    if (!text || !*text)
        return MGPU_OK;
    if (mgpu_parse_integer(text, &bytes) != 0 || bytes < 0 ||
        (unsigned long long) bytes > MGPU_STAGED_CHUNK_MAX)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "MGPU_STAGING_CHUNK: '%s' is not a chunk of the staged exchange "
                         "(accepted: 0, whole blocks, or 1 to %zu bytes)",
                         text, MGPU_STAGED_CHUNK_MAX);
    *chunk = (size_t) bytes;
    return MGPU_OK;
}

/* The chunk that the exchange of DESC's domain in MODE (resolved), HALO
 * rows deep, stages its blocks in, into *CHUNK; 0 where it copies them
 * whole.  Chunks in mode staged where the domain holds every part, so that
 * a sender reaches its neighbours' streams, of two parts or more, so that
 * none is its own neighbour, and where a block holds at least two chunks,
 * the fewest of which one's copy to the device overlaps the next one's to
 * the host (the staged section below). */
static mgpu_status staged_chunk_of(const mgpu_stencil_desc *desc, mgpu_exchange mode, int halo,
                                   size_t *chunk)
{
    size_t c;
    *chunk = 0;
    MGPU_TRY(mgpu_staging_chunk_env(&c)); /* a bad value is refused in any mode */
    bool all_local = desc->local_parts == 0 ||
                     (desc->first_part == 0 && desc->local_parts == desc->nparts);
    size_t block = floats_of_block(desc->nx, halo) * sizeof(float);
    if (mode == MGPU_EXCHANGE_STAGED && all_local && desc->nparts > 1 && c > 0 && block / 2 >= c)
        *chunk = c;
    return MGPU_OK;
}

mgpu_status mgpu_exchange_resolve(mgpu_stencil *st)
{
    /* auto: direct where every pair that exchanges has peer access (one
     * part alone included, its own neighbour or none): the step's kernel
     * stores the halos, one launch and an event a step, where peer-async
     * adds two copies and their issue (doc/design.md section 3 has what
     * was measured).  Without peer access, staged through pinned host
     * memory. */
    st->mode = st->desc.exchange;
    if (st->mode == MGPU_EXCHANGE_AUTO) {
        bool all;
        MGPU_TRY(all_pairs_have_peer(st, &all));
        st->mode = all ? MGPU_EXCHANGE_DIRECT : MGPU_EXCHANGE_STAGED;
    }
    MGPU_TRY(staged_chunk_of(&st->desc, st->mode, st->halo, &st->staging_chunk));
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
    case MGPU_EXCHANGE_MANAGED:
        /* Managed memory reaches every device without it; peer access is
         * enabled where the devices have it, as multi_threaded_um does, for
         * the mappings of a neighbour's pages that the hints ask for. */
        MGPU_TRY(managed_check(st));
        return enable_peers(st, false);
    default:
        return mgpu_fail(MGPU_ERR_USAGE, "--exchange: unknown mode %d", (int) st->mode);
    }
}

/* ------------------------------------------- what every mode's copies share */

/* Whether PT's neighbours, where it has them, are parts of this process. */
static bool neighbours_local(const mgpu_stencil *st, const part *pt)
{
    return (pt->above < 0 || is_local(st, pt->above)) && (pt->below < 0 || is_local(st, pt->below));
}

/* What every send and recv checks first: PT's device is current, and its
 * neighbours are parts of this process (but in mode nccl, whose
 * communicator reaches them anywhere). */
static mgpu_status check_part(const mgpu_stencil *st, const part *pt)
{
    MGPU_TRY(check_current(pt));
    if (st->mode == MGPU_EXCHANGE_NCCL || neighbours_local(st, pt))
        return MGPU_OK;
    return mgpu_fail(MGPU_ERR_UNSUPPORTED,
                     "part %d: its neighbours are in another "
                     "process; the strategy exchanges its halos",
                     pt->slab.part);
}

/* One block an exchange pushes: K rows of the sender into a neighbour's
 * halo. */
typedef struct push {
    const float *from;
    float *to;
    int to_device;
    mgpu_stream *to_stream; /* the receiver's */
    int side;               /* 0: to the part above, 1: below */
} push;

/* The pushes of PT's exchange at STEP, in the order they are issued: its
 * first K rows into the bottom halo of the part above, its last K rows into
 * the top halo of the part below, where those parts exist and that halo is
 * not the rows themselves (mode managed, whose parts share one field). */
static int pushes_of(mgpu_stencil *st, const part *pt, long long step, push to[2])
{
    const int neighbour[2] = {pt->above, pt->below};
    const mgpu_row from_row[2] = {MGPU_ROW_FIRST, MGPU_ROW_LAST};
    const mgpu_row to_row[2] = {MGPU_ROW_HALO_BOTTOM, MGPU_ROW_HALO_TOP};
    int n = 0;
    for (int side = 0; side < 2; side++) {
        if (neighbour[side] < 0)
            continue;
        const part *dst = &st->parts[neighbour[side]];
        to[n].from = block_of(st, pt, step, from_row[side]);
        to[n].to = block_of(st, dst, step, to_row[side]);
        to[n].to_device = dst->slab.device;
        to[n].to_stream = dst->stream;
        to[n].side = side;
        if (to[n].to != to[n].from)
            n++;
    }
    return n;
}

/* Modes whose receivers' streams wait for their senders' events:
 * peer-async, direct and managed (the others are ordered by the copy itself
 * or by the host). */
static bool orders_by_event(const mgpu_stencil *st)
{
    return st->mode == MGPU_EXCHANGE_PEER_ASYNC || st->mode == MGPU_EXCHANGE_DIRECT ||
           st->mode == MGPU_EXCHANGE_MANAGED;
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

/* The receiver's side of peer-async and direct: its stream waits for the
 * event each neighbour recorded after its pushes, never the host. */
static mgpu_status wait_for_senders(mgpu_stencil *st, part *pt, long long step)
{
    const int parity = exchange_parity(st, step);
    const int from[2] = {pt->above, pt->below};
    for (int side = 0; side < 2; side++)
        if (waits_for_side(pt, side))
            MGPU_TRY(mgpu_stream_wait_event(pt->stream, st->parts[from[side]].sent[parity]));
    return MGPU_OK;
}

/* Deep halos (--halo=K, stencil.c) move K rows every K steps.  One more
 * order then matters in modes peer-async and direct, whose sender writes
 * into the receiver's halo: the receiver's passes inside the last cycle
 * also wrote and read halo rows of that buffer, so the sender first waits
 * for the receiver's event COMPUTED, recorded after each of its passes
 * (mgpu_exchange_passed).  The passes that touch those rows were issued
 * before the barrier of the step before the exchange, hence before the
 * send, so the wait sees them; the last pass of a cycle, which may be
 * issued after, touches no halo row.  That barrier is essential: a strategy
 * that drops the barriers of the steps that exchange nothing must keep
 * those of the step before an exchange and of the exchange itself. */
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

mgpu_status mgpu_exchange_passed(const mgpu_stencil *st, part *pt)
{
    if (st->halo > 1 && orders_by_event(st))
        MGPU_TRY(mgpu_event_record(pt->computed, pt->stream));
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

/* ------------------------------------------------ peer (book 10.4, 3.4.2) */

/* Each edge block into its neighbour's halo with cudaMemcpyPeer
 * (mgpu_copy_peer).  The copy is ordered with all work on both devices, so
 * the receiver has nothing to wait for: its recv is empty. */
static mgpu_status send_peer(mgpu_stencil *st, part *pt, long long step)
{
    push to[2];
    for (int i = 0, n = pushes_of(st, pt, step, to); i < n; i++)
        MGPU_TRY(mgpu_copy_peer(to[i].to, to[i].to_device, to[i].from, pt->slab.device,
                                block_bytes(st, pt)));
    return MGPU_OK;
}

/* ----------------------------------------------- peer-async (book 11.3) */

/* Each edge block with cudaMemcpyPeerAsync (mgpu_copy_peer_async) on the
 * sender's stream, then an event on that stream, which the receivers'
 * streams wait for (wait_for_senders): the host waits for nothing. */
static mgpu_status send_peer_async(mgpu_stencil *st, part *pt, long long step)
{
    push to[2];
    MGPU_TRY(wait_for_receivers(st, pt));
    for (int i = 0, n = pushes_of(st, pt, step, to); i < n; i++)
        MGPU_TRY(mgpu_copy_peer_async(to[i].to, to[i].to_device, to[i].from, pt->slab.device,
                                      block_bytes(st, pt), pt->stream));
    return mgpu_event_record(pt->sent[exchange_parity(st, step)], pt->stream);
}

/* ------------------------------------------------------ direct (3.4.2) */

/* The step's own kernel does the pushing: computing step t, it stores its
 * first and last rows also into the neighbours' halos of buffer (t+1) % 2,
 * through peer pointers (mgpu_exchange_kernel_stores), and the send of step
 * t+1 only records the event the neighbours wait for.  A step is then one
 * kernel, one event and a wait per neighbour, as in NVIDIA's
 * multi_threaded_p2p.  The orders that makes safe:
 *  - read after write: a neighbour's step t+1 reads the halo that this
 *    part's step t wrote; its stream waits (recv) for the event this part
 *    records at its send of step t+1, after the kernel of step t;
 *  - write after read: this part's step t writes the neighbour's halo of
 *    buffer (t+1) % 2, which the neighbour's step t-1 read; this part's
 *    stream waited (recv of step t) for the neighbour's send of step t,
 *    recorded after that step t-1.
 * Where no kernel of the step before delivered them (step 0, whose halos
 * mgpu_stencil_reset poisons, or a run of exchanges alone), the send pushes
 * the rows with a copy kernel.  Mode ipc's kernels store the same way into
 * the buffers of neighbours in other processes (lib/ipc-halo.c). */

/* Whether PT's one-row kernels store its edge rows into its neighbours'
 * halos themselves: modes direct and managed, the neighbours in this
 * process; mode ipc, their buffers mapped into it (mgpu_stencil_map_part). */
static bool kernel_sends(const mgpu_stencil *st, const part *pt)
{
    if (st->mode == MGPU_EXCHANGE_DIRECT || st->mode == MGPU_EXCHANGE_MANAGED)
        return neighbours_local(st, pt);
    if (st->mode != MGPU_EXCHANGE_IPC)
        return false;
    return (pt->above < 0 || st->parts[pt->above].buf[0]) &&
           (pt->below < 0 || st->parts[pt->below].buf[0]);
}

/* Where part PT's kernel of step STEP stores its edge rows: the bottom halo
 * of the part above and the top halo of the part below, in the buffer the
 * step writes; NULL for a fixed boundary, and where that halo is the edge
 * row itself (mode managed: only jacobi's periodic rows, the field's first
 * and last, are stored twice).  One-row halos. */
static float *halo_of_next(const mgpu_stencil *st, const part *pt, int neighbour, long long step,
                           bool bottom)
{
    if (neighbour < 0)
        return NULL;
    const part *to = &st->parts[neighbour];
    float *halo = row_of(st, to, step + 1, bottom ? to->rows + 1 : 0);
    return halo == row_of(st, pt, step + 1, bottom ? 1 : pt->rows) ? NULL : halo;
}

void mgpu_exchange_kernel_stores(mgpu_stencil *st, part *pt, long long step, float *to[2])
{
    bool sending = kernel_sends(st, pt);
    to[0] = sending ? halo_of_next(st, pt, pt->above, step, true) : NULL;
    to[1] = sending ? halo_of_next(st, pt, pt->below, step, false) : NULL;
    if (sending)
        pt->delivered = step + 1;
}

int mgpu_stencil_delivered(const mgpu_stencil *st, int p, long long step)
{
    return st->parts[p].delivered == step;
}

/* The event alone remains where the kernel delivered the rows, for the
 * neighbours in other parts (a part that is its own neighbour, or has none,
 * waits for nobody's); elsewhere a copy kernel stores them through the same
 * pointers (mgpu_copy_row_kernel). */
static mgpu_status send_direct(mgpu_stencil *st, part *pt, long long step)
{
    const int parity = exchange_parity(st, step);
    bool other_neighbour = waits_for_side(pt, 0) || waits_for_side(pt, 1);
    if (pt->delivered == step)
        return other_neighbour ? mgpu_event_record(pt->sent[parity], pt->stream) : MGPU_OK;
    push to[2];
    MGPU_TRY(wait_for_receivers(st, pt));
    for (int i = 0, n = pushes_of(st, pt, step, to); i < n; i++)
        MGPU_TRY(mgpu_copy_row_kernel(to[i].to, to[i].from, (long long) block_floats(st, pt),
                                      pt->stream));
    return mgpu_event_record(pt->sent[parity], pt->stream);
}

/* ------------------------- staged, and mapped (3.4.1): through host memory */

/* Each part's first and last K rows, per exchange parity, in host memory:
 * pinned (staged: cudaMemcpyAsync to and from it) or mapped into the
 * devices' address space (mapped: copy kernels read and write it,
 * zero-copy).  The sender copies its edge blocks there and synchronises
 * its stream, since the receivers fetch them after the strategy's barrier;
 * then each receiver copies its neighbours' blocks into its halos.
 *
 * Staged blocks of two chunks or more (staged_chunk_of) go in chunks
 * instead, each straight from the sender's edge rows into the neighbour's
 * halo through pinned buffers of that pair's own (mgpu_staged_copy,
 * lib/staged-copy.c): the copies to the host on the sender's stream, those
 * to the device on the receiver's, a chunk's copy to the device
 * overlapping the next one's to the host.  The sender queues both, and the
 * receiver's recv has nothing left to do.  What orders them, with no event
 * of the domain's and no host waiting:
 *  - the copies out of the edge rows follow the sender's passes that wrote
 *    them and precede its later ones: one stream;
 *  - the copies into the halo precede the receiver's compute of the
 *    exchange's step, which it queues on the same stream after the
 *    strategy's barrier, hence after every send;
 *  - they follow the receiver's earlier work on those halo rows (the step
 *    that last read them; with deep halos every pass of the cycle but the
 *    last), which it queued before the barrier of the step before the
 *    exchange, hence before the send (wait_for_receivers says why that
 *    barrier must stay).  The last pass, which it may queue after them,
 *    reads the other buffer and writes only the slab's rows of this one.
 * A sender's thread thus queues work on a neighbour's stream, which CUDA
 * streams allow; the host backend runs each copy at once, into rows that
 * the neighbour's thread does not touch meanwhile, by the same orders.
 * The buffers' reuse from one exchange to the next is ordered by the
 * staged copy's own events. */

/* The bytes of a part's two edge blocks in host memory, one parity's. */
static size_t edge_bytes(size_t pitch, int halo)
{
    return 2 * (size_t) halo * pitch * sizeof(float);
}

mgpu_status mgpu_exchange_host_bytes(const mgpu_stencil_desc *desc, int halo, int neighbours,
                                     size_t *bytes)
{
    size_t chunk;
    *bytes = 0;
    MGPU_TRY(staged_chunk_of(desc, desc->exchange, halo, &chunk));
    if (chunk > 0) /* a staged copy a side that has a neighbour */
        *bytes = (size_t) neighbours * MGPU_STAGED_BUFFERS * chunk;
    else if (desc->exchange == MGPU_EXCHANGE_STAGED || desc->exchange == MGPU_EXCHANGE_MAPPED)
        *bytes = 2 * edge_bytes(pitch_of(desc->nx), halo); /* two parities */
    return MGPU_OK;
}

mgpu_status mgpu_exchange_part_alloc(mgpu_stencil *st, part *pt)
{
    if (st->staging_chunk > 0) {
        const int to[2] = {pt->above, pt->below};
        for (int side = 0; side < 2; side++)
            if (to[side] >= 0)
                MGPU_TRY(mgpu_staged_copy_create(pt->slab.device, st->parts[to[side]].slab.device,
                                                 st->staging_chunk, 0, &pt->chunked[side]));
        return MGPU_OK;
    }
    if (st->mode != MGPU_EXCHANGE_STAGED && st->mode != MGPU_EXCHANGE_MAPPED)
        return MGPU_OK;
    size_t bytes = edge_bytes(pt->pitch, st->halo);
    unsigned flags = st->mode == MGPU_EXCHANGE_MAPPED ? MGPU_HOST_MAPPED : MGPU_HOST_PINNED;
    for (int b = 0; b < 2; b++) {
        void *host, *devp;
        MGPU_TRY(mgpu_host_alloc(bytes, flags, &host));
        pt->edges[b] = host;
        if (st->mode == MGPU_EXCHANGE_MAPPED) {
            MGPU_TRY(mgpu_host_device_pointer(host, &devp));
            pt->edges_dev[b] = devp;
        }
    }
    return MGPU_OK;
}

void mgpu_exchange_part_free(part *pt)
{
    for (int b = 0; b < 2; b++) {
        mgpu_host_free(pt->edges[b]);
        mgpu_staged_copy_destroy(pt->chunked[b]);
        pt->chunked[b] = NULL;
    }
}

size_t mgpu_stencil_staging_chunk(const mgpu_stencil *st) { return st->staging_chunk; }

/* Edge block E of PT (0: its first K rows, 1: its last K) in its host
 * memory for the exchanges of PARITY, as the copies see it. */
static float *edge_slot(const mgpu_stencil *st, const part *pt, int parity, int e)
{
    float *edges = st->mode == MGPU_EXCHANGE_MAPPED ? pt->edges_dev[parity] : pt->edges[parity];
    return edges + (size_t) e * (size_t) st->halo * pt->pitch;
}

/* In chunks: each block into the neighbour's halo, queued on both streams. */
static mgpu_status send_staged_chunks(mgpu_stencil *st, part *pt, long long step)
{
    push to[2];
    for (int i = 0, n = pushes_of(st, pt, step, to); i < n; i++)
        MGPU_TRY(mgpu_staged_copy_async(pt->chunked[to[i].side], to[i].to, to[i].from,
                                        block_bytes(st, pt), pt->stream, to[i].to_stream));
    return MGPU_OK;
}

static mgpu_status send_staged(mgpu_stencil *st, part *pt, long long step)
{
    if (st->staging_chunk > 0)
        return send_staged_chunks(st, pt, step);
    const mgpu_row rows[2] = {MGPU_ROW_FIRST, MGPU_ROW_LAST};
    for (int e = 0; e < 2; e++)
        MGPU_TRY(mgpu_memcpy_async(edge_slot(st, pt, exchange_parity(st, step), e),
                                   block_of(st, pt, step, rows[e]), block_bytes(st, pt),
                                   pt->stream));
    return mgpu_stream_synchronize(pt->stream);
}

static mgpu_status send_mapped(mgpu_stencil *st, part *pt, long long step)
{
    const mgpu_row rows[2] = {MGPU_ROW_FIRST, MGPU_ROW_LAST};
    for (int e = 0; e < 2; e++)
        MGPU_TRY(mgpu_copy_row_kernel(edge_slot(st, pt, exchange_parity(st, step), e),
                                      block_of(st, pt, step, rows[e]),
                                      (long long) block_floats(st, pt), pt->stream));
    return mgpu_stream_synchronize(pt->stream);
}

/* Where the domain's part N left its edge block EDGE of the field before
 * STEP: its host memory (mgpu_edge_fn, CTX the domain). */
static const float *host_edge(void *ctx, long long step, int n, mgpu_row edge)
{
    const mgpu_stencil *st = ctx;
    return edge_slot(st, &st->parts[n], exchange_parity(st, step), edge == MGPU_ROW_LAST);
}

mgpu_status mgpu_stencil_halos_in(mgpu_stencil *st, int p, long long step, mgpu_edge_fn edge,
                                  void *ctx)
{
    part *pt = &st->parts[p];
    const int from[2] = {pt->above, pt->below};
    const mgpu_row edge_row[2] = {MGPU_ROW_LAST, MGPU_ROW_FIRST};
    const mgpu_row halo_row[2] = {MGPU_ROW_HALO_TOP, MGPU_ROW_HALO_BOTTOM};
    for (int side = 0; side < 2; side++) {
        if (from[side] < 0)
            continue;
        float *halo = block_of(st, pt, step, halo_row[side]);
        const float *src = edge(ctx, step, from[side], edge_row[side]);
        if (st->mode == MGPU_EXCHANGE_MAPPED)
            MGPU_TRY(mgpu_copy_row_kernel(halo, src, (long long) block_floats(st, pt), pt->stream));
        else
            MGPU_TRY(mgpu_memcpy_async(halo, src, block_bytes(st, pt), pt->stream));
    }
    return MGPU_OK;
}

/* ------------------------------------------- managed (unified memory) */

/* Each buffer of the whole field is one managed allocation
 * (cudaMallocManaged), the parts' slabs in it one after another with one
 * pitch, as NVIDIA's multi_threaded_um holds its field: part p's top halo
 * row is part p-1's last row and its bottom halo part p+1's first, so the
 * step's kernel reads its neighbours' edge rows where they are and nothing
 * is copied between parts.  Jacobi's periodic rows, the field's first and
 * last, are the only halos that are no part's own row: the kernel of the
 * part above the field's first row stores its last row there too, and that
 * below the last its first (mgpu_exchange_kernel_stores, as direct's kernel
 * stores into its peers; at step 0 send_direct's copy kernel).  The orders
 * are direct's, an event a step between neighbours (send_direct says why
 * they suffice): a part's step t+1 reads the rows its neighbours' step t
 * wrote, and its step t writes the rows its neighbours' step t-1 read.
 *
 * Placement, per buffer: a part's rows prefer its device
 * (cudaMemAdviseSetPreferredLocation); a neighbour that reads or writes
 * some of them (its halo, a periodic row) maps them where they live
 * (cudaMemAdviseSetAccessedBy), so that its access goes over the link
 * instead of faulting the page over; and the reset prefetches the part's
 * rows to its device (cudaMemPrefetchAsync) before the first step.  Hints
 * act on whole pages: the page where two slabs meet has one place, and the
 * other part reaches its rows in it there.  On the host backend the field
 * is host memory and the hints do nothing: the layout, the stores and the
 * orders are what CI verifies. */

void mgpu_exchange_reset_rows(const mgpu_stencil *st, const part *pt, long long *first,
                              long long *end)
{
    bool own_all = st->mode != MGPU_EXCHANGE_MANAGED;
    *first = own_all || pt->slab.row_begin == 1 ? 0 : st->halo;
    *end = own_all || pt->slab.row_end == st->desc.ny - 1 ? pt->rows + 2 * st->halo
                                                          : pt->rows + st->halo;
}

/* The local rows [R0, R1) of PT's buffers, each of them, advised HINT for
 * DEVICE. */
static mgpu_status advise_rows(const part *pt, long long r0, long long r1, mgpu_managed_hint hint,
                               int device)
{
    size_t bytes = (size_t) (r1 - r0) * pt->pitch * sizeof(float);
    for (int b = 0; b < 2 && r1 > r0; b++)
        MGPU_TRY(mgpu_managed_advise(pt->buf[b] + (size_t) r0 * pt->pitch, bytes, hint, device));
    return MGPU_OK;
}

/* PT's own rows on its device; the rows its neighbour above touches (its
 * first row, and the field's first row where PT holds it) mapped for that
 * neighbour's device, and the same below. */
static mgpu_status place_part(const mgpu_stencil *st, const part *pt)
{
    long long first, end;
    int dev = pt->slab.device;
    mgpu_exchange_reset_rows(st, pt, &first, &end);
    MGPU_TRY(advise_rows(pt, first, end, MGPU_MANAGED_PREFER, dev));
    if (pt->above >= 0 && st->parts[pt->above].slab.device != dev)
        MGPU_TRY(
            advise_rows(pt, first, 2, MGPU_MANAGED_ACCESSED_BY, st->parts[pt->above].slab.device));
    if (pt->below >= 0 && st->parts[pt->below].slab.device != dev)
        MGPU_TRY(advise_rows(pt, pt->rows, end, MGPU_MANAGED_ACCESSED_BY,
                             st->parts[pt->below].slab.device));
    return MGPU_OK;
}

mgpu_status mgpu_exchange_field_bytes(const mgpu_stencil_desc *desc, size_t *bytes)
{
    return mgpu_mul_size(pitch_of(desc->nx) * sizeof(float), (size_t) desc->ny, bytes);
}

mgpu_status mgpu_exchange_field_alloc(mgpu_stencil *st)
{
    if (st->mode != MGPU_EXCHANGE_MANAGED)
        return MGPU_OK;
    size_t bytes;
    MGPU_TRY(mgpu_exchange_field_bytes(&st->desc, &bytes));
    for (int b = 0; b < 2; b++) {
        void *field;
        MGPU_TRY(mgpu_managed_alloc(bytes, &field));
        st->field[b] = field;
    }
    for (int p = 0; p < st->desc.nparts; p++) {
        part *pt = &st->parts[p];
        for (int b = 0; b < 2; b++)
            pt->buf[b] = st->field[b] + (size_t) (pt->slab.row_begin - st->halo) * pt->pitch;
        MGPU_TRY(place_part(st, pt));
    }
    return MGPU_OK;
}

void mgpu_exchange_field_free(mgpu_stencil *st)
{
    for (int b = 0; b < 2; b++)
        mgpu_managed_free(st->field[b]);
}

mgpu_status mgpu_exchange_reset_done(mgpu_stencil *st, part *pt)
{
    if (st->mode != MGPU_EXCHANGE_MANAGED)
        return MGPU_OK;
    long long first, end;
    mgpu_exchange_reset_rows(st, pt, &first, &end);
    size_t bytes = (size_t) (end - first) * pt->pitch * sizeof(float);
    for (int b = 0; b < 2; b++)
        MGPU_TRY(mgpu_managed_prefetch(pt->buf[b] + (size_t) first * pt->pitch, bytes,
                                       pt->slab.device, pt->stream));
    return mgpu_stream_synchronize(pt->stream);
}

/* ---------------------------------------------------------------- nccl */

/* A part's send issues its whole exchange on its own stream, ncclSend of
 * its edge blocks and ncclRecv into its halo blocks, in place, one NCCL
 * group, and NCCL matches each transfer with the neighbour's.  The receive
 * writes the halos after this part's earlier passes (its own stream) and
 * the transfer reads the edge rows before its later ones, so neither
 * buffers nor events are needed, nor neighbours in this process: each part
 * is rank PART of one communicator, wherever the other ranks live.  Two
 * sends to one neighbour (two parts of a periodic grid, or one part its own
 * neighbour) are matched with its receives in the order posted: first
 * towards the part above (the first block into its bottom halo), then
 * towards the part below; a receiver posts the bottom halo (from below)
 * before the top one (from above). */
static mgpu_status nccl_transfers(mgpu_stencil *st, part *pt, long long step)
{
    const size_t n = block_floats(st, pt);
    if (pt->above >= 0)
        MGPU_TRY(mgpu_nccl_send(pt->comm, block_of(st, pt, step, MGPU_ROW_FIRST), n, pt->above,
                                pt->stream));
    if (pt->below >= 0)
        MGPU_TRY(mgpu_nccl_send(pt->comm, block_of(st, pt, step, MGPU_ROW_LAST), n, pt->below,
                                pt->stream));
    if (pt->below >= 0)
        MGPU_TRY(mgpu_nccl_recv(pt->comm, block_of(st, pt, step, MGPU_ROW_HALO_BOTTOM), n,
                                pt->below, pt->stream));
    if (pt->above >= 0)
        MGPU_TRY(mgpu_nccl_recv(pt->comm, block_of(st, pt, step, MGPU_ROW_HALO_TOP), n, pt->above,
                                pt->stream));
    return MGPU_OK;
}

static mgpu_status nccl_exchange(mgpu_stencil *st, part *pt, long long step)
{
    MGPU_TRY(mgpu_nccl_group_begin());
    mgpu_status status = nccl_transfers(st, pt, step);
    mgpu_status ended = mgpu_nccl_group_end(); /* the group is closed after a failure too */
    return status != MGPU_OK ? status : ended;
}

/* Join the communicator, a rank per local part, with the id given or,
 * where this process holds every part, one made here; then connect every
 * pair of neighbours.  A first transfer between two ranks sets up their
 * connection, which takes milliseconds and waits for the peer: here it is
 * in no run's time, and one thread may issue a step's transfers of several
 * parts without any of them waiting on the host. */
mgpu_status mgpu_exchange_nccl_join(mgpu_stencil *st, const mgpu_nccl_id *given)
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
            MGPU_TRY(mgpu_memset(st->parts[p].slab.device, block_of(st, &st->parts[p], 0, edges[e]),
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
void mgpu_exchange_nccl_leave(mgpu_stencil *st)
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

mgpu_status mgpu_stencil_send_begin(mgpu_stencil *st)
{
    return st->mode == MGPU_EXCHANGE_NCCL ? mgpu_nccl_group_begin() : MGPU_OK;
}

mgpu_status mgpu_stencil_send_end(mgpu_stencil *st)
{
    return st->mode == MGPU_EXCHANGE_NCCL ? mgpu_nccl_group_end() : MGPU_OK;
}

/* ------------------------------------------------- send and recv by mode */

/* Each in a range of the timeline (trace.h), closed on every return. */
mgpu_status mgpu_stencil_send(mgpu_stencil *st, int p, long long step)
{
    part *pt = &st->parts[p];
    mgpu_trace_begin(MGPU_TRACE_SEND, pt->slab.device, step);
    mgpu_status status = check_part(st, pt);
    if (status == MGPU_OK && exchanges_at(st, step)) {
        switch (st->mode) {
        case MGPU_EXCHANGE_PEER:
            status = send_peer(st, pt, step);
            break;
        case MGPU_EXCHANGE_PEER_ASYNC:
            status = send_peer_async(st, pt, step);
            break;
        case MGPU_EXCHANGE_DIRECT:
        case MGPU_EXCHANGE_MANAGED: /* direct's, whose pushes are only the periodic rows */
            status = send_direct(st, pt, step);
            break;
        case MGPU_EXCHANGE_STAGED:
            status = send_staged(st, pt, step);
            break;
        case MGPU_EXCHANGE_MAPPED:
            status = send_mapped(st, pt, step);
            break;
        case MGPU_EXCHANGE_NCCL:
            status = nccl_exchange(st, pt, step);
            break;
        default:
            status = mgpu_fail(MGPU_ERR_UNSUPPORTED,
                               "--exchange=%s is done by the strategy, "
                               "not the stencil domain",
                               mgpu_exchange_name(st->mode));
        }
    }
    mgpu_trace_end();
    return status;
}

mgpu_status mgpu_stencil_recv(mgpu_stencil *st, int p, long long step)
{
    part *pt = &st->parts[p];
    mgpu_trace_begin(MGPU_TRACE_RECV, pt->slab.device, step);
    mgpu_status status = check_part(st, pt);
    if (status == MGPU_OK && exchanges_at(st, step)) {
        switch (st->mode) {
        case MGPU_EXCHANGE_PEER: /* cudaMemcpyPeer is ordered with all work on both devices */
        case MGPU_EXCHANGE_NCCL: /* its send received too */
            break;
        case MGPU_EXCHANGE_PEER_ASYNC:
        case MGPU_EXCHANGE_DIRECT:
        case MGPU_EXCHANGE_MANAGED:
            status = wait_for_senders(st, pt, step);
            break;
        case MGPU_EXCHANGE_STAGED:
        case MGPU_EXCHANGE_MAPPED:
            if (st->staging_chunk == 0) /* in chunks, the sends filled the halos */
                status = mgpu_stencil_halos_in(st, p, step, host_edge, st);
            break;
        default: /* a part with no neighbour receives nothing in any mode */
            if (pt->above >= 0 || pt->below >= 0)
                status = mgpu_fail(MGPU_ERR_UNSUPPORTED, "--exchange=%s is done by the strategy",
                                   mgpu_exchange_name(st->mode));
        }
    }
    mgpu_trace_end();
    return status;
}
