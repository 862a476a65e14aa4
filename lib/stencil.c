/* stencil.c - the stencil domain: the grid split into row slabs, one part
 * per device, each with two buffers (slab plus K halo rows above and
 * below), its initial field, its steps and its result.  The halo exchange
 * between the parts, every mode's, is exchange.c's, which this file calls
 * (stencil-part.h) and which calls nothing here.
 *
 * The field before step t lives in buffer t % 2 when every pass is one
 * step.  Deep halos (--halo=K): each part holds K halo rows a side and an
 * exchange moves K rows (one contiguous block) every K steps.  After the
 * exchange at step c the halos hold step c, so step c+i can compute K-1-i
 * rows of halo beyond the slab on each exchanged side, and step c+K-1 the
 * slab alone (the trapezoid).  The steps of a cycle go TIME_BLOCK to a pass
 * (mgpu_kernel_rows_blocked); a pass never crosses an exchange or the end
 * of the run.  The field after step t lives in the buffer of the parity of
 * the passes before t (buffer_of). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stencil-part.h"
#include "trace.h"

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

/* Neighbours: pattern2d's top and bottom rows are a fixed boundary; jacobi's
 * are periodic, so the first and last parts exchange with each other. */
static void neighbours_of(const mgpu_stencil_desc *desc, int p, int *above, int *below)
{
    int n = desc->nparts;
    bool periodic = desc->kernel == MGPU_KERNEL_JACOBI;
    *above = p > 0 ? p - 1 : (periodic ? n - 1 : -1);
    *below = p < n - 1 ? p + 1 : (periodic ? 0 : -1);
}

static void find_neighbours(mgpu_stencil *st, int p)
{
    part *pt = &st->parts[p];
    neighbours_of(&st->desc, p, &pt->above, &pt->below);
}

/* The bytes of each of a part's two buffers: ROWS rows of PITCH floats and
 * HALO halo rows a side. */
static mgpu_status part_buffer_bytes(size_t pitch, long long rows, int halo, size_t *bytes)
{
    size_t cells;
    MGPU_TRY(mgpu_mul_size(pitch, (size_t) (rows + 2 * (long long) halo), &cells));
    return mgpu_mul_size(cells, sizeof(float), bytes);
}

mgpu_status mgpu_stencil_bytes(const mgpu_stencil_desc *desc, size_t *device_bytes,
                               size_t *host_bytes)
{
    *device_bytes = *host_bytes = 0;
    mgpu_slab slabs[MGPU_MAX_DEVICES];
    if (desc->nparts < 1 || desc->nparts > MGPU_MAX_DEVICES)
        return mgpu_fail(MGPU_ERR_USAGE, "--devices: %d is out of range 1..%d", desc->nparts,
                         MGPU_MAX_DEVICES);
    MGPU_TRY(mgpu_decompose(desc->ny, desc->nparts, slabs));
    int halo = desc->halo > 0 ? desc->halo : 1;
    int first = desc->local_parts ? desc->first_part : 0;
    int count = desc->local_parts ? desc->local_parts : desc->nparts;
    size_t pitch = pitch_of(desc->nx);
    for (int p = first; p < first + count && p < desc->nparts; p++) {
        size_t bytes, exchange_bytes;
        int above, below;
        neighbours_of(desc, p, &above, &below);
        MGPU_TRY(
            mgpu_exchange_host_bytes(desc, halo, (above >= 0) + (below >= 0), &exchange_bytes));
        /* Within the options' bound on cells, rows padded to a pitch and
         * the halos of many parts can still pass what a size holds.  Mode
         * managed: one field of NY rows a buffer holds every part. */
        mgpu_status sized = desc->exchange == MGPU_EXCHANGE_MANAGED
                                ? mgpu_exchange_field_bytes(desc, &bytes)
                                : part_buffer_bytes(pitch, slabs[p].row_end - slabs[p].row_begin,
                                                    halo, &bytes);
        if (sized != MGPU_OK || bytes > (SIZE_MAX - *device_bytes) / 2)
            return mgpu_fail(MGPU_ERR_USAGE,
                             "--nx, --ny: a %lld x %lld grid's buffers on %d device%s (rows "
                             "padded to %zu floats, %d halo row%s a side) need more than %zu "
                             "bytes (accepted: a grid of fewer cells)",
                             desc->nx, desc->ny, desc->nparts, desc->nparts == 1 ? "" : "s", pitch,
                             halo, halo == 1 ? "" : "s", (size_t) SIZE_MAX);
        if (desc->exchange != MGPU_EXCHANGE_MANAGED || p == first)
            *device_bytes += 2 * bytes;
        *host_bytes += exchange_bytes;
    }
    return MGPU_OK;
}

static mgpu_status part_alloc(mgpu_stencil *st, part *pt)
{
    int dev = pt->slab.device;
    size_t bytes;
    MGPU_TRY(part_buffer_bytes(pt->pitch, pt->rows, st->halo, &bytes));
    for (int b = 0; b < 2 && !st->field[b]; b++) { /* managed: in the field */
        void *p;
        MGPU_TRY(mgpu_malloc(dev, bytes, &p));
        pt->buf[b] = p;
    }
    MGPU_TRY(mgpu_stream_create(dev, 0, &pt->stream));
    for (int b = 0; b < 2; b++)
        MGPU_TRY(mgpu_event_create(dev, 0, &pt->sent[b]));
    MGPU_TRY(mgpu_event_create(dev, 0, &pt->joined));
    MGPU_TRY(mgpu_event_create(dev, 0, &pt->computed));
    return mgpu_exchange_part_alloc(st, pt);
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
    if ((status = mgpu_exchange_resolve(st)) != MGPU_OK ||
        (status = mgpu_exchange_field_alloc(st)) != MGPU_OK)
        goto fail;
    for (int p = st->first; p < st->first + st->count; p++)
        if ((status = part_alloc(st, &st->parts[p])) != MGPU_OK)
            goto fail;
    if (st->mode == MGPU_EXCHANGE_NCCL &&
        (status = mgpu_exchange_nccl_join(st, desc->nccl_id)) != MGPU_OK)
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
    mgpu_exchange_nccl_leave(st);
    /* Nothing may still use the buffers when they are freed: not the parts'
     * streams, and not a copy on a device's default stream (cudaMemcpyPeer)
     * that writes a neighbour's halo.  A failed device cannot be waited for;
     * its buffers are freed all the same. */
    for (int p = st->first; p < st->first + st->count; p++)
        if (st->parts[p].stream)
            mgpu_device_synchronize(st->parts[p].slab.device);
    for (int p = st->first; p < st->first + st->count; p++) {
        part *pt = &st->parts[p];
        for (int b = 0; b < 2 && !st->field[b]; b++)
            mgpu_free(pt->slab.device, pt->buf[b]);
        mgpu_exchange_part_free(pt);
        mgpu_event_destroy(pt->sent[0]);
        mgpu_event_destroy(pt->sent[1]);
        mgpu_event_destroy(pt->joined);
        mgpu_event_destroy(pt->computed);
        mgpu_stream_destroy(pt->stream);
    }
    mgpu_exchange_field_free(st);
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
    return block_of(st, &st->parts[p], step, row);
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
    MGPU_OMP(omp parallel for schedule(static) num_threads(mgpu_host_threads()))
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
     * 50000 grid needs little host memory to start.  Its rows: all the
     * part's, but where they are the neighbours' own (exchange.c). */
    long long first, end;
    mgpu_exchange_reset_rows(st, pt, &first, &end);
    long long block = (long long) ((64u << 20) / row_size);
    long long total = end - first;
    block = block < 1 ? 1 : block > total ? total : block;
    float *host = malloc((size_t) block * row_size);
    if (!host)
        return mgpu_fail(MGPU_ERR_NOMEM, "reset: out of host memory");
    mgpu_status status = MGPU_OK;
    for (long long r = first; r < end && status == MGPU_OK; r += block) {
        long long n = end - r < block ? end - r : block;
        initial_block(st, pt, host, r, n);
        status = mgpu_memcpy(pt->buf[0] + (size_t) r * pt->pitch, host, (size_t) n * row_size);
    }
    free(host);
    /* Buffer 1 is buffer 0 with every cell a step computes poisoned: all
     * bits set is a NaN, so a cell that no step writes fails verification. */
    size_t from = (size_t) first * pt->pitch;
    if (status == MGPU_OK)
        status = mgpu_memcpy(pt->buf[1] + from, pt->buf[0] + from, (size_t) total * row_size);
    if (status == MGPU_OK)
        status = mgpu_memset_2d(pt->slab.device, pt->buf[1] + (size_t) st->halo * pt->pitch + 1,
                                row_size, 0xff, (size_t) (st->desc.nx - 2) * sizeof(float),
                                (size_t) pt->rows);
    return status == MGPU_OK ? mgpu_exchange_reset_done(st, pt) : status;
}

mgpu_status mgpu_stencil_map_part(mgpu_stencil *st, int p, float *buffer0, float *buffer1)
{
    if (p < 0 || p >= st->desc.nparts || is_local(st, p))
        return mgpu_fail(MGPU_ERR_USAGE, "part %d: not a part that another process holds", p);
    st->parts[p].buf[0] = buffer0;
    st->parts[p].buf[1] = buffer1;
    return MGPU_OK;
}

/* Local rows [L0, L1) of step STEP on STREAM; rows L0 and L1-1 of the
 * result also go to FIRST_TO and LAST_TO unless NULL. */
static mgpu_status compute_local(mgpu_stencil *st, part *pt, long long step, long long l0,
                                 long long l1, float *first_to, float *last_to, mgpu_stream *stream)
{
    MGPU_TRY(mgpu_fault_check(pt->slab.part, step));
    MGPU_TRY(check_current(pt));
    mgpu_trace_begin(MGPU_TRACE_COMPUTE, pt->slab.device, step);
    mgpu_status status = mgpu_kernel_rows_sending(st->desc.kernel, pt->buf[buffer_of(st, step)],
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
    mgpu_status status = mgpu_kernel_rows_blocked(st->desc.kernel, pt->buf[buffer_of(st, step)],
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
    return mgpu_exchange_passed(st, pt);
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

mgpu_status mgpu_stencil_compute(mgpu_stencil *st, int p, long long step)
{
    part *pt = &st->parts[p];
    if (st->halo > 1) {
        long long n = pass_steps(st, step);
        return n > 0 ? compute_pass(st, pt, step, n) : mgpu_fault_check(pt->slab.part, step);
    }
    /* Modes direct and ipc: the kernel also stores its edge rows into the
     * neighbours' halos; mode managed: jacobi's periodic rows (exchange.c). */
    float *to[2];
    mgpu_exchange_kernel_stores(st, pt, step, to);
    return compute_local(st, pt, step, 1, pt->rows + 1, to[0], to[1], pt->stream);
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
