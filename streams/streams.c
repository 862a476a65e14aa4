/* streams.c - mgpu-streams' step (book 11.3): one host thread drives every
 * device through asynchronous streams and events.  Each device computes its
 * first and last rows on two high-priority streams and sends each to its
 * neighbour at once (cudaMemcpyPeerAsync, or a kernel writing the peer's
 * memory), while the rows between compute on a third stream.  Every order
 * between streams, and between devices, is an event that a stream waits for
 * (cudaStreamWaitEvent): the host never waits for a device inside a run.
 * Why these waits are enough is said above step_overlapped.  program.c holds
 * the program around the step: its options, the runs and the record. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdbool.h>
#include <string.h>

#include "streams.h"

/* ------------------------------------------------ the parts and their sends */

static const mgpu_slab *slab_of(const streams_domain *dom, int p)
{
    return mgpu_stencil_slab(dom->st, p);
}

static streams_part *above_of(streams_domain *dom, int p)
{
    int a = mgpu_stencil_above(dom->st, p);
    return a >= 0 ? &dom->part[a] : NULL;
}

static streams_part *below_of(streams_domain *dom, int p)
{
    int b = mgpu_stencil_below(dom->st, p);
    return b >= 0 ? &dom->part[b] : NULL;
}

/* Without overlap, the edge rows go on the interior stream too. */
static mgpu_stream *up_stream(const streams_domain *dom, const streams_part *pt)
{
    return dom->overlap ? pt->up : pt->interior;
}

static mgpu_stream *down_stream(const streams_domain *dom, const streams_part *pt)
{
    return dom->overlap ? pt->down : pt->interior;
}

/* Rows [R0, R1) (global) of part P at STEP on STREAM, unless COMPUTE is 0. */
static mgpu_status rows(streams_domain *dom, int p, long long step, long long r0, long long r1,
                        int compute, mgpu_stream *stream)
{
    if (!compute)
        return MGPU_OK;
    return mgpu_stencil_compute_rows(dom->st, p, step, r0, r1, stream);
}

/* The two sends of a part at an exchange: UP, its first row (K rows) into
 * the above part's bottom halo; DOWN, its last into the below part's top
 * halo. */
enum { UP, DOWN };

/* Part P's send DIR of buffer B on STREAM of P's device, the current one:
 * the copy (in a range of the timeline whose payload is B, the parity of
 * the buffer written, all that is known here), then the event that
 * announces it. */
static mgpu_status send_edge(streams_domain *dom, int p, int dir, int b, mgpu_stream *stream)
{
    int to = dir == UP ? mgpu_stencil_above(dom->st, p) : mgpu_stencil_below(dom->st, p);
    if (to < 0)
        return MGPU_OK;
    const long long at = (long long) b * dom->halo; /* a step whose field is in buffer B */
    const float *src = mgpu_stencil_block(dom->st, p, at,
                                          dir == UP ? MGPU_ROW_FIRST : MGPU_ROW_LAST);
    float *dst = mgpu_stencil_block(dom->st, to, at,
                                    dir == UP ? MGPU_ROW_HALO_BOTTOM : MGPU_ROW_HALO_TOP);
    int src_dev = slab_of(dom, p)->device, dst_dev = slab_of(dom, to)->device;
    size_t bytes = mgpu_stencil_block_bytes(dom->st);
    mgpu_status status;
    mgpu_trace_begin(MGPU_TRACE_SEND, src_dev, b);
    switch (dom->mode) {
    case MGPU_EXCHANGE_PEER:
        /* Waits for all work on both devices, and all their later work for
         * it: what the book's table 11.1 measures against the next mode. */
        status = mgpu_copy_peer(dst, dst_dev, src, src_dev, bytes);
        break;
    case MGPU_EXCHANGE_DIRECT:
        status = mgpu_copy_row_kernel(dst, src, (long long) (bytes / sizeof(float)), stream);
        break;
    default:
        status = mgpu_copy_peer_async(dst, dst_dev, src, src_dev, bytes, stream);
    }
    mgpu_trace_end();
    MGPU_TRY(status);
    streams_part *pt = &dom->part[p];
    return mgpu_event_record(dir == UP ? pt->sent_up[b] : pt->sent_down[b], stream);
}

/* ------------------------------------------------------------ the step */

/* Which waits step_overlapped needs, and why they are enough.  Step t reads
 * buffer b = t%2 and writes w = 1-b, and the buffers alternate, so step t
 * writes the buffer that step t-1 read.
 * A part of R rows: U (up stream) computes row 1, then sends it into the
 * above part's bottom halo of buffer w; D (down stream) does row R and the
 * part below; C (interior stream) computes rows 2..R-1.
 *  - Reads after writes.  Row r of step t reads rows r-1..r+1 of b, written at
 *    step t-1 by whoever computed them, or sent by a neighbour.  So U waits
 *    for the above part's send (its halo row 0) and for C (row 2); D for the
 *    below part's send and for C; C for U and D (rows 1 and R).  With R = 2,
 *    U and D wait for each other instead of C; with R = 1, U computes the one
 *    row from both halos, and D only forwards it down once U is done.
 *  - Writes after reads.  Step t writes the rows of w that step t-1 read to
 *    compute the same rows' neighbours: exactly the computations the waits
 *    above already wait for, so nothing more is needed.
 *  - A halo written before the neighbour has read it.  U's send at step t
 *    writes the above part's bottom halo of w, which that part read at step
 *    t-1 to compute its last row.  U already waited, at step t, for that
 *    part's send of the same step t-1, issued after that very computation.
 *  - A send before its row: the row's computation and its send are on one
 *    stream.
 * Each event is recorded once per buffer: waits for the b events of step t-1
 * are all issued before any part records them again at step t+1.  C never
 * waits for a send, so the interior of step t+1 starts as soon as the
 * interior of step t is done, and the sends fly meanwhile.
 *
 * --overlap=off issues the same work without the overlap: one stream per
 * part, which waits for both halos, computes every row and then sends.
 *
 * Deep halos (--halo=K, one pass of K steps a cycle) are the same step with
 * bands of K rows for rows and cycles for steps: U computes the first K
 * rows, K steps in one pass, and sends them as one block into the above
 * part's K halo rows; D the last K; C the rows between.  Every band's pass
 * reads K rows beyond it, which lie in the same neighbours as the one row
 * does at K = 1 when a part has 3K rows or more (program.c asks for that),
 * so the waits are the ones above, once a cycle; the steps between only
 * check for an injected fault. */

/* The overlapped step of part P, book 11.3 (every wait: see just above).
 * B and W are the parities of the buffers read and written, which with deep
 * halos alternate once a cycle. */
static mgpu_status step_overlapped(streams_domain *dom, int p, long long step, int compute)
{
    if (!mgpu_stencil_exchanges_at(dom->st, step)) /* inside a cycle: its pass is issued */
        return compute ? mgpu_stencil_compute(dom->st, p, step) : MGPU_OK;
    int b = mgpu_stencil_exchange_parity(dom->st, step), w = 1 - b;
    streams_part *pt = &dom->part[p], *above = above_of(dom, p), *below = below_of(dom, p);
    const mgpu_slab *s = slab_of(dom, p);
    long long n = s->row_end - s->row_begin, first = s->row_begin, last = s->row_end - 1;
    const long long k = dom->halo; /* rows a band; below 3K rows only K = 1 comes here */

    /* U: the first row, then at once to the part above. */
    if (above)
        MGPU_TRY(mgpu_stream_wait_event(pt->up, above->sent_down[b]));
    if (n >= 3 * k)
        MGPU_TRY(mgpu_stream_wait_event(pt->up, pt->interior_done[b]));
    else if (n == 2)
        MGPU_TRY(mgpu_stream_wait_event(pt->up, pt->bottom_done[b]));
    else if (below)
        MGPU_TRY(mgpu_stream_wait_event(pt->up, below->sent_up[b]));
    MGPU_TRY(rows(dom, p, step, first, first + k, compute, pt->up));
    MGPU_TRY(mgpu_event_record(pt->top_done[w], pt->up));
    MGPU_TRY(send_edge(dom, p, UP, w, pt->up));

    /* D: the last row, then to the part below; a one-row part's D forwards
     * the row U computed. */
    if (n >= 2) {
        if (below)
            MGPU_TRY(mgpu_stream_wait_event(pt->down, below->sent_up[b]));
        MGPU_TRY(
            mgpu_stream_wait_event(pt->down, n >= 3 * k ? pt->interior_done[b] : pt->top_done[b]));
        MGPU_TRY(rows(dom, p, step, last + 1 - k, last + 1, compute, pt->down));
        MGPU_TRY(mgpu_event_record(pt->bottom_done[w], pt->down));
    } else if (below) {
        MGPU_TRY(mgpu_stream_wait_event(pt->down, pt->top_done[w]));
    }
    MGPU_TRY(send_edge(dom, p, DOWN, w, pt->down));

    /* C: the rows between, once the edge rows they read are computed; it
     * never waits for a send. */
    if (n >= 3 * k) {
        MGPU_TRY(mgpu_stream_wait_event(pt->interior, pt->top_done[b]));
        MGPU_TRY(mgpu_stream_wait_event(pt->interior, pt->bottom_done[b]));
        MGPU_TRY(rows(dom, p, step, first + k, last + 1 - k, compute, pt->interior));
        MGPU_TRY(mgpu_event_record(pt->interior_done[w], pt->interior));
    }
    return MGPU_OK;
}

/* Without overlap: both halos, every row, then both sends, on one stream.
 * In mode direct that is one kernel, which stores its edge rows into the
 * neighbours' halos as it computes them (mgpu_stencil_compute); both sends
 * are then one point of this stream, and a neighbour above and below that
 * is one part (two parts, periodic) is waited for once, a part that is its
 * own neighbour (one part, periodic) not at all: its stream is ordered. */
static mgpu_status step_serial(streams_domain *dom, int p, long long step, int compute)
{
    int b = (int) (step & 1), w = 1 - b;
    streams_part *pt = &dom->part[p], *above = above_of(dom, p), *below = below_of(dom, p);
    const mgpu_slab *s = slab_of(dom, p);
    bool fused = compute && dom->mode == MGPU_EXCHANGE_DIRECT;
    if (above && above != pt)
        MGPU_TRY(mgpu_stream_wait_event(pt->interior, above->sent_down[b]));
    if (below && below != pt && !(fused && below == above))
        MGPU_TRY(mgpu_stream_wait_event(pt->interior, below->sent_up[b]));
    if (!fused) {
        MGPU_TRY(rows(dom, p, step, s->row_begin, s->row_end, compute, pt->interior));
        MGPU_TRY(send_edge(dom, p, UP, w, pt->interior));
        return send_edge(dom, p, DOWN, w, pt->interior);
    }
    MGPU_TRY(mgpu_stencil_compute(dom->st, p, step));
    if (above && above != pt)
        MGPU_TRY(mgpu_event_record(pt->sent_up[w], pt->interior));
    if (below && below != pt)
        MGPU_TRY(mgpu_event_record(pt->sent_down[w], pt->interior));
    return MGPU_OK;
}

static mgpu_status issue_step(streams_domain *dom, long long step, int compute)
{
    for (int p = 0; p < dom->nparts; p++) {
        MGPU_TRY(mgpu_device_set(slab_of(dom, p)->device));
        if (dom->overlap)
            MGPU_TRY(step_overlapped(dom, p, step, compute));
        else
            MGPU_TRY(step_serial(dom, p, step, compute));
    }
    return MGPU_OK;
}

mgpu_status streams_step(streams_domain *dom, long long step, int compute)
{
    mgpu_trace_begin(MGPU_TRACE_STEP, MGPU_TRACE_ALL, step);
    mgpu_status status = issue_step(dom, step, compute);
    mgpu_trace_end();
    return status;
}

mgpu_status streams_mark(streams_domain *dom, long long step, int send)
{
    int b = mgpu_stencil_exchange_parity(dom->st, step);
    for (int p = 0; p < dom->nparts; p++) {
        streams_part *pt = &dom->part[p];
        mgpu_stream *up = up_stream(dom, pt), *down = down_stream(dom, pt);
        MGPU_TRY(mgpu_device_set(slab_of(dom, p)->device));
        MGPU_TRY(mgpu_event_record(pt->top_done[b], up));
        MGPU_TRY(mgpu_event_record(pt->bottom_done[b], down));
        MGPU_TRY(mgpu_event_record(pt->interior_done[b], pt->interior));
        if (send) {
            MGPU_TRY(send_edge(dom, p, UP, b, up));
            MGPU_TRY(send_edge(dom, p, DOWN, b, down));
        } else {
            MGPU_TRY(mgpu_event_record(pt->sent_up[b], up));
            MGPU_TRY(mgpu_event_record(pt->sent_down[b], down));
        }
    }
    return MGPU_OK;
}

/* ----------------------------------------------------------- the domain */

static mgpu_status create_events(int device, mgpu_event **events, int n)
{
    for (int k = 0; k < n; k++)
        MGPU_TRY(mgpu_event_create(device, 0, &events[k]));
    return MGPU_OK;
}

static mgpu_status create_part(streams_domain *dom, int p)
{
    streams_part *pt = &dom->part[p];
    int dev = slab_of(dom, p)->device, least, greatest;
    pt->interior = mgpu_stencil_stream(dom->st, p);
    /* The edge rows go first wherever they compete with the interior's
     * blocks for the multiprocessors: their neighbours wait for them. */
    MGPU_TRY(mgpu_stream_priority_range(dev, &least, &greatest));
    MGPU_TRY(mgpu_stream_create(dev, greatest, &pt->up));
    MGPU_TRY(mgpu_stream_create(dev, greatest, &pt->down));
    MGPU_TRY(create_events(dev, pt->top_done, 2));
    MGPU_TRY(create_events(dev, pt->bottom_done, 2));
    MGPU_TRY(create_events(dev, pt->interior_done, 2));
    MGPU_TRY(create_events(dev, pt->sent_up, 2));
    MGPU_TRY(create_events(dev, pt->sent_down, 2));
    return create_events(dev, pt->joined, 3);
}

mgpu_status streams_domain_create(streams_domain *dom, const mgpu_options *opt, int nparts,
                                  mgpu_exchange mode, int overlap)
{
    memset(dom, 0, sizeof *dom);
    mgpu_stencil_desc desc = mgpu_stencil_desc_of(opt, nparts);
    desc.exchange = mode;
    MGPU_TRY(mgpu_stencil_create(&dom->st, &desc));
    dom->nparts = nparts;
    dom->mode = mgpu_stencil_exchange_mode(dom->st);
    dom->overlap = overlap;
    dom->halo = opt->halo;
    for (int p = 0; p < nparts; p++)
        MGPU_TRY(create_part(dom, p));
    return mgpu_event_create(slab_of(dom, 0)->device, 0, &dom->fork);
}

static void destroy_events(mgpu_event **events, int n)
{
    for (int k = 0; k < n; k++)
        mgpu_event_destroy(events[k]);
}

void streams_domain_destroy(streams_domain *dom)
{
    for (int p = 0; p < dom->nparts; p++) {
        streams_part *pt = &dom->part[p];
        /* Nothing may still use the stencil's buffers when it goes. */
        if (pt->up)
            mgpu_stream_synchronize(pt->up);
        if (pt->down)
            mgpu_stream_synchronize(pt->down);
        mgpu_stream_destroy(pt->up);
        mgpu_stream_destroy(pt->down);
        destroy_events(pt->top_done, 2);
        destroy_events(pt->bottom_done, 2);
        destroy_events(pt->interior_done, 2);
        destroy_events(pt->sent_up, 2);
        destroy_events(pt->sent_down, 2);
        destroy_events(pt->joined, 3);
    }
    mgpu_event_destroy(dom->fork);
    mgpu_stencil_destroy(dom->st);
    memset(dom, 0, sizeof *dom);
}

/* The streams part P uses, but the origin (part 0's interior stream). */
static int streams_in_use(const streams_domain *dom, int p, mgpu_stream **s)
{
    const streams_part *pt = &dom->part[p];
    int n = 0;
    if (dom->overlap) {
        s[n++] = pt->up;
        s[n++] = pt->down;
    }
    if (p > 0)
        s[n++] = pt->interior;
    return n;
}

mgpu_status streams_fork(streams_domain *dom)
{
    mgpu_stream *origin = dom->part[0].interior;
    MGPU_TRY(mgpu_device_set(slab_of(dom, 0)->device));
    MGPU_TRY(mgpu_event_record(dom->fork, origin));
    for (int p = 0; p < dom->nparts; p++) {
        mgpu_stream *s[3];
        int n = streams_in_use(dom, p, s);
        MGPU_TRY(mgpu_device_set(slab_of(dom, p)->device));
        for (int k = 0; k < n; k++)
            MGPU_TRY(mgpu_stream_wait_event(s[k], dom->fork));
    }
    return MGPU_OK;
}

mgpu_status streams_join(streams_domain *dom)
{
    mgpu_stream *origin = dom->part[0].interior;
    for (int p = 0; p < dom->nparts; p++) {
        mgpu_stream *s[3];
        int n = streams_in_use(dom, p, s);
        for (int k = 0; k < n; k++) {
            MGPU_TRY(mgpu_device_set(slab_of(dom, p)->device));
            MGPU_TRY(mgpu_event_record(dom->part[p].joined[k], s[k]));
            MGPU_TRY(mgpu_device_set(slab_of(dom, 0)->device));
            MGPU_TRY(mgpu_stream_wait_event(origin, dom->part[p].joined[k]));
        }
    }
    return MGPU_OK;
}

mgpu_status streams_synchronize(streams_domain *dom)
{
    for (int p = 0; p < dom->nparts; p++) {
        streams_part *pt = &dom->part[p];
        MGPU_TRY(mgpu_stream_synchronize(pt->up));
        MGPU_TRY(mgpu_stream_synchronize(pt->down));
        MGPU_TRY(mgpu_stream_synchronize(pt->interior));
    }
    return MGPU_OK;
}

/* Deep halos without the overlap, and modes nccl and managed: the stencil
 * domain's steps, as one thread issues them in mgpu-single (every part
 * sends, then every part receives and computes); in modes peer-async,
 * direct and managed nothing waits on the host, the streams order
 * themselves through the domain's events, and in mode nccl every part's
 * transfers of a step go out as one group on the parts' streams.  The
 * edge-row streams and events stay idle. */
static bool domain_steps(const streams_domain *dom)
{
    return (dom->halo > 1 && !dom->overlap) || streams_domain_mode(dom->mode);
}

static mgpu_status send_all(streams_domain *dom, long long step)
{
    for (int p = 0; p < dom->nparts; p++) {
        MGPU_TRY(mgpu_device_set(slab_of(dom, p)->device));
        MGPU_TRY(mgpu_stencil_send(dom->st, p, step));
    }
    return MGPU_OK;
}

static mgpu_status deep_steps(streams_domain *dom, long long steps, int compute)
{
    for (long long step = 0; step < steps; step++) {
        MGPU_TRY(mgpu_stencil_send_begin(dom->st));
        mgpu_status sent = send_all(dom, step);
        mgpu_status ended = mgpu_stencil_send_end(dom->st);
        MGPU_TRY(sent);
        MGPU_TRY(ended);
        for (int p = 0; p < dom->nparts; p++) {
            MGPU_TRY(mgpu_device_set(slab_of(dom, p)->device));
            MGPU_TRY(mgpu_stencil_recv(dom->st, p, step));
            if (compute)
                MGPU_TRY(mgpu_stencil_compute(dom->st, p, step));
        }
    }
    return MGPU_OK;
}

mgpu_status streams_run(streams_domain *dom, long long steps, int compute, mgpu_graph *graph,
                        mgpu_progress *progress, double *seconds, double *host_seconds)
{
    for (int p = 0; p < dom->nparts; p++)
        MGPU_TRY(mgpu_stencil_reset(dom->st, p));
    /* The reset's last copy (device to device) may still run on each
     * device's default stream when it returns; the neighbours' sends, on
     * their own devices' streams, must not meet it. */
    for (int p = 0; p < dom->nparts; p++)
        MGPU_TRY(mgpu_device_synchronize(slab_of(dom, p)->device));
    double start = mgpu_now();
    if (domain_steps(dom)) {
        MGPU_TRY(deep_steps(dom, steps, compute));
        *host_seconds = mgpu_now() - start;
        for (int p = 0; p < dom->nparts; p++)
            MGPU_TRY(mgpu_stencil_synchronize(dom->st, p));
        *seconds = mgpu_now() - start;
        return MGPU_OK;
    }
    MGPU_TRY(streams_mark(dom, 0, 1));
    long long step = 0;
    if (graph)
        MGPU_TRY(streams_graph_replay(dom, graph, steps, &step));
    mgpu_progress_step(progress, step);
    for (; step < steps; step++) {
        MGPU_TRY(streams_step(dom, step, compute));
        mgpu_progress_step(progress, step + 1);
    }
    *host_seconds = mgpu_now() - start;
    MGPU_TRY(streams_synchronize(dom));
    *seconds = mgpu_now() - start;
    return MGPU_OK;
}
