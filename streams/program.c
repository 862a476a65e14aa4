/* program.c - mgpu-streams, the program around its step (streams.c): one
 * host thread drives every device through asynchronous streams and events
 * (book chapter 11).  With --overlap=on each step sends every device's edge
 * rows to its neighbours while its interior computes, and the host never
 * waits for a device until the run ends; --overlap=off issues one kernel a
 * step, which in mode direct sends the edge rows as it computes them; auto
 * overlaps where a device's share pays for it.  Each run measures the other
 * setting too, in the same run.  --graph replays the steps from a CUDA graph
 * (graph.c), --pipeline streams a field held in host memory through the
 * devices in chunks (pipeline-run.c), --monitor runs all steps in one
 * persistent kernel per device watched by a monitor kernel (monitor.c), and
 * --compare-exchange times the halos alone with cudaMemcpyPeer and with
 * cudaMemcpyPeerAsync, the book's table 11.1.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streams.h"

static const char *const overlap_names[] = {"off", "on", "auto", NULL};
static streams_options options = {.overlap = STREAMS_OVERLAP_AUTO};

/* --overlap=auto overlaps where each device has at least this many cells.
 * Below, a step takes less time than the edge rows' own kernels, copies and
 * events cost to issue and to order, and one kernel a step is faster.  A
 * graph issues all of that once, and the overlap pays at far fewer cells.
 * BENCHMARKS.md sections 8 and 10 have the measurements behind them. */
#define OVERLAP_MIN_CELLS (1LL << 25)
#define OVERLAP_MIN_CELLS_GRAPH (1LL << 21)

static const mgpu_extra_option extra[] = {
    {.name = "overlap",
     .help = "on: send the edge rows while the interior rows compute; off: one kernel a "
             "step, which in mode direct also sends them; auto: on where there is more "
             "than one device and each has 32Mi cells or more (2Mi with --graph); with "
             "--halo=K, bands of K rows, given K <= 8, --time-block=K and 3K rows a device",
     .choices = overlap_names,
     .max = 2,
     .value = &options.overlap,
     .bare = "on"},
    {.name = "graph",
     .help = "capture up to 32 steps of every device into a CUDA graph once, then replay "
             "it",
     .kind = MGPU_EXTRA_FLAG,
     .value = &options.graph},
    {.name = "compare-exchange",
     .help = "also time the halos alone with cudaMemcpyPeer and "
             "cudaMemcpyPeerAsync (the book's table 11.1)",
     .kind = MGPU_EXTRA_FLAG,
     .value = &options.compare_exchange},
    {.name = "pipeline",
     .help = "keep the field in pinned host memory and stream it through the devices "
             "in chunks each step (book 11.1)",
     .kind = MGPU_EXTRA_FLAG,
     .value = &options.pipeline},
    {.name = "chunks",
     .help = "with --pipeline: chunks per device and step; 0: the fewest that fit "
             "--device-memory, at least 16 per stream",
     .max = INT_MAX,
     .value = &options.chunks},
    {.name = "streams",
     .help = "with --pipeline: streams per device; 0: 3 (upload, compute, download)",
     .max = 64,
     .value = &options.streams},
    {.name = "device-memory",
     .help = "with --pipeline: bytes each device may hold, with K, M, G or T (powers of "
             "1024) if wanted; 0: nine tenths of what it has free",
     .max = 1LL << 62,
     .kind = MGPU_EXTRA_SIZE,
     .value = &options.device_memory},
    {.name = "monitor",
     .help = "run all steps in one persistent kernel per device and print its progress, "
             "which a monitor kernel passes on (book 11.2)",
     .kind = MGPU_EXTRA_FLAG,
     .value = &options.monitor},
    {.name = NULL},
};

static const mgpu_program program = {
    .name = "mgpu-streams",
    .strategy = "streams",
    .summary = "one host thread, asynchronous streams and events: each device sends its edge "
               "rows while its interior computes",
    .exchanges = MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_PEER) |
                 MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_PEER_ASYNC) |
                 MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_DIRECT) | MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_NCCL) |
                 MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_MANAGED),
    .extra = extra,
    .deep_halo = 1,
};

/* ------------------------------------------------- checking the request */

/* Why deep halos cannot overlap on NDEVICES (NULL: they can): streams.c
 * computes a part's first and last K rows apart from the rest, each band in
 * one pass of K steps, so it needs --time-block=K and 3K rows a part. */
static const char *deep_overlap_refused(const mgpu_options *opt, int ndevices)
{
    if (opt->halo == 1)
        return NULL;
    if (opt->halo > MGPU_TIME_BLOCK_MAX)
        return "a halo deeper than the longest pass";
    if (mgpu_time_block_resolve(opt->time_block, opt->halo) != opt->halo)
        return "a time block below --halo";
    /* mgpu_decompose's thinnest part, its last (too few rows for the devices
     * is the domain's error to report). */
    long long thinnest = ndevices > 0 ? (opt->ny - 2) / ndevices : 0;
    if (thinnest >= 1 && thinnest < 3LL * opt->halo)
        return "a part of fewer than 3K rows";
    return NULL;
}

/* What the options mean together, and what the backend can do; the
 * backend is known only here, after mgpu_harness_start has chosen it. */
static mgpu_status check_request(const streams_options *o, const mgpu_options *opt, int ndevices)
{
    const char *mode = o->graph ? "--graph" : o->pipeline ? "--pipeline" : "--monitor";
    if (opt->halo > 1 && (o->graph || o->pipeline || o->monitor))
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--halo: %s exchanges one row a step (accepted "
                              "with %s: --halo=1)",
                              mode, mode);
    const char *refused = deep_overlap_refused(opt, ndevices);
    if (o->overlap == STREAMS_OVERLAP_ON && refused)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--halo: --overlap=on computes each device's first and last K "
                              "rows in one pass of K steps, not with %s (accepted with "
                              "--halo above 1: --halo up to %d with --time-block=K and 3K "
                              "rows a device, or --overlap=off or auto)",
                              refused, MGPU_TIME_BLOCK_MAX);
    if (opt->halo > 1 && o->compare_exchange)
        return mgpu_error_set(MGPU_ERR_USAGE, "--halo: --compare-exchange times one-row "
                                              "halos by cudaMemcpyPeer and "
                                              "cudaMemcpyPeerAsync (accepted with it: "
                                              "--halo=1)");
    /* NCCL's transfers of a part are one group on its stream, and managed
     * memory moves nothing, both issued by the stencil domain: nothing for
     * the edge rows' own streams to overlap (streams_domain_mode). */
    if (streams_domain_mode(opt->exchange) && (o->overlap == STREAMS_OVERLAP_ON || o->graph))
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--exchange=%s: %s; the steps are issued as mgpu-single issues "
                              "them (accepted with it: --overlap=off or auto, no --graph)",
                              mgpu_exchange_name(opt->exchange),
                              opt->exchange == MGPU_EXCHANGE_NCCL
                                  ? "each part's halos are one NCCL group on its stream"
                                  : "each part's kernel reads its neighbours' rows in managed "
                                    "memory, where nothing is sent");
    if (opt->exchange == MGPU_EXCHANGE_MANAGED && o->compare_exchange)
        return mgpu_error_set(MGPU_ERR_USAGE, "--compare-exchange: copies halos between the "
                                              "parts' own buffers, and --exchange=managed's "
                                              "parts share one field (accepted with it: "
                                              "another --exchange)");
    if (o->graph + o->pipeline + o->monitor > 1)
        return mgpu_error_set(MGPU_ERR_USAGE, "--graph, --pipeline, --monitor: these are "
                                              "modes (accepted: one of them at most)");
    if (!o->pipeline && (o->chunks || o->streams || o->device_memory))
        return mgpu_error_set(MGPU_ERR_USAGE, "--chunks, --streams, --device-memory: they "
                                              "size the chunks of --pipeline, which was not "
                                              "asked for");
    if (o->compare_exchange && (o->pipeline || o->monitor))
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--compare-exchange: times the exchange of the "
                              "default and --graph modes, not of %s",
                              o->pipeline ? "--pipeline" : "--monitor");
    if ((o->graph || o->monitor) && mgpu_backend_active() != MGPU_BACKEND_CUDA)
        return mgpu_error_set(
            MGPU_ERR_USAGE,
            "%s: needs the CUDA backend, and this run has the %s backend, "
            "which runs work as it is issued: %s (use --backend=cuda on a "
            "machine with a GPU)",
            o->graph ? "--graph" : "--monitor", mgpu_backend_name(mgpu_backend_active()),
            o->graph ? "there is no graph to capture" : "no kernel is ever running to be watched");
    if (o->graph && opt->exchange == MGPU_EXCHANGE_PEER)
        return mgpu_error_set(MGPU_ERR_USAGE, "--exchange=peer: cudaMemcpyPeer synchronises "
                                              "the devices and cannot be captured into a "
                                              "graph (accepted with --graph: peer-async, "
                                              "direct)");
    if (o->pipeline && opt->exchange != MGPU_EXCHANGE_AUTO)
        return mgpu_error_set(MGPU_ERR_USAGE, "--exchange: --pipeline keeps the field in host "
                                              "memory, where the devices' rows meet, and "
                                              "exchanges nothing between devices (leave "
                                              "--exchange out)");
    if (o->monitor && opt->exchange != MGPU_EXCHANGE_AUTO && opt->exchange != MGPU_EXCHANGE_DIRECT)
        return mgpu_error_set(MGPU_ERR_USAGE, "--exchange: --monitor's kernels write their "
                                              "neighbours' halos themselves (accepted: "
                                              "direct, or leave --exchange out)");
    return MGPU_OK;
}

/* ------------------------------------------------- the overlapped steps */

/* WARMUP untimed runs, then REPEATS timed ones: their times into SECONDS
 * and the host's time to issue them into HOST. */
static mgpu_status time_runs(streams_domain *dom, const mgpu_run *run, int compute,
                             mgpu_graph *graph, double *seconds, double *host)
{
    for (int r = 0; r < run->warmup + run->repeats; r++) {
        double s, h;
        mgpu_progress_run(run->progress, r);
        MGPU_TRY(streams_run(dom, run->opt->steps, compute, graph, run->progress, &s, &h));
        if (r >= run->warmup) {
            seconds[r - run->warmup] = s;
            host[r - run->warmup] = h;
        }
    }
    return MGPU_OK;
}

static double median(double *samples, int n) { return mgpu_stats_of(samples, n).median; }

/* The median time of the same runs done otherwise (WHAT, on the progress
 * line): the other overlap setting, no graph, or the halos alone with
 * another exchange mode. */
static mgpu_status time_variant(streams_domain *dom, const mgpu_run *run, const char *what,
                                int compute, double *seconds, double *host)
{
    mgpu_progress_begin(run->progress, what, run->warmup, run->repeats, compute);
    double *s = calloc((size_t) run->repeats, sizeof *s);
    double *h = calloc((size_t) run->repeats, sizeof *h);
    mgpu_status status = s && h ? time_runs(dom, run, compute, NULL, s, h)
                                : mgpu_error_set(MGPU_ERR_NOMEM, "out of host memory");
    if (status == MGPU_OK) {
        *seconds = median(s, run->repeats);
        *host = median(h, run->repeats);
    }
    free(s);
    free(h);
    return status;
}

/* Table 11.1: the halos alone, each step, by cudaMemcpyPeer and by
 * cudaMemcpyPeerAsync. */
static mgpu_status compare_exchange(streams_domain *dom, const mgpu_run *run)
{
    static const mgpu_exchange modes[2] = {MGPU_EXCHANGE_PEER, MGPU_EXCHANGE_PEER_ASYNC};
    static const char *const keys[2] = {"halo_peer_ms", "halo_peer_async_ms"};
    static const char *const names[2] = {"halos by cudaMemcpyPeer", "halos by cudaMemcpyPeerAsync"};
    mgpu_exchange mode = dom->mode;
    double ms[2], host;
    mgpu_status status = MGPU_OK;
    for (int k = 0; k < 2 && status == MGPU_OK; k++) {
        dom->mode = modes[k];
        status = time_variant(dom, run, names[k], 0, &ms[k], &host);
        ms[k] *= 1e3 / (double) run->opt->steps;
        mgpu_record_set_number(run->record, keys[k], ms[k]);
    }
    dom->mode = mode;
    if (status == MGPU_OK)
        mgpu_record_set_number(run->record, "halo_async_gain", ms[0] / ms[1]);
    return status;
}

/* The record's own fields: the mode's comparison, measured in this run. */
static mgpu_status compare(const streams_options *o, streams_domain *dom, const mgpu_run *run,
                           double time_s, double host_s)
{
    mgpu_record *rec = run->record;
    double steps = (double) run->opt->steps, other_s, other_host_s;
    mgpu_record_set_text(rec, "mode", o->graph ? "graph" : "overlap");
    mgpu_record_set_boolean(rec, "overlap", dom->overlap);
    mgpu_record_set_number(rec, "host_us_per_step", host_s / steps * 1e6);
    if (o->graph) {
        MGPU_TRY(time_variant(dom, run, "without the graph", 1, &other_s, &other_host_s));
        mgpu_record_set_number(rec, "time_nograph_s", other_s);
        mgpu_record_set_number(rec, "host_us_per_step_nograph", other_host_s / steps * 1e6);
        mgpu_record_set_number(rec, "graph_gain", other_s / time_s);
    } else if (!deep_overlap_refused(run->opt, dom->nparts) && !streams_domain_mode(dom->mode)) {
        /* With NCCL or managed memory, or deep halos that cannot overlap,
         * the stencil domain steps, overlap or not: there is no other
         * variant to time. */
        dom->overlap = !dom->overlap;
        mgpu_status status = time_variant(dom, run, dom->overlap ? "overlap on" : "overlap off", 1,
                                          &other_s, &other_host_s);
        dom->overlap = !dom->overlap;
        MGPU_TRY(status);
        double on = dom->overlap ? time_s : other_s, off = dom->overlap ? other_s : time_s;
        mgpu_record_set_number(rec, "time_overlap_on_s", on);
        mgpu_record_set_number(rec, "time_overlap_off_s", off);
        mgpu_record_set_number(rec, "overlap_gain", off / on);
    }
    return o->compare_exchange ? compare_exchange(dom, run) : MGPU_OK;
}

/* The asked runs, the field they leave, then (for the record) the runs to
 * compare them with, which overwrite that field. */
static mgpu_status measure(const streams_options *o, streams_domain *dom, mgpu_run *run,
                           mgpu_graph *graph)
{
    double *host = calloc((size_t) run->repeats, sizeof *host);
    if (!host)
        return mgpu_error_set(MGPU_ERR_NOMEM, "out of host memory");
    mgpu_status status = time_runs(dom, run, run->compute, graph, run->seconds, host);
    /* The host waits for the devices only at the end of a run. */
    for (int r = 0; r < run->repeats && status == MGPU_OK; r++)
        run->waited[r] = run->seconds[r] - host[r];
    if (status == MGPU_OK && run->field)
        status = mgpu_stencil_gather_all(dom->st, run->opt->steps, run->field);
    /* mgpu_stats_of sorts the samples in place; the driver sorts them anyway. */
    if (status == MGPU_OK && run->record && run->compute)
        status = compare(o, dom, run, median(run->seconds, run->repeats),
                         median(host, run->repeats));
    free(host);
    return status;
}

static mgpu_status overlapped(const streams_options *o, mgpu_run *run)
{
    /* auto: direct where the devices reach each other's memory, as in the
     * library (lib/exchange.c says why); else cudaMemcpyPeerAsync, which
     * needs no peer access (the driver stages the copy where there is none). */
    mgpu_exchange mode = run->opt->exchange;
    if (mode == MGPU_EXCHANGE_AUTO) {
        int all;
        MGPU_TRY(mgpu_peer_all(run->ndevices, &all, NULL));
        mode = all ? MGPU_EXCHANGE_DIRECT : MGPU_EXCHANGE_PEER_ASYNC;
    }
    int overlap = (int) o->overlap;
    if (o->overlap == STREAMS_OVERLAP_AUTO) {
        mgpu_slab slabs[MGPU_MAX_DEVICES];
        MGPU_TRY(mgpu_decompose(run->opt->ny, run->ndevices, slabs));
        long long cells = (slabs[0].row_end - slabs[0].row_begin) * run->opt->nx;
        long long least = o->graph ? OVERLAP_MIN_CELLS_GRAPH : OVERLAP_MIN_CELLS;
        overlap = run->ndevices > 1 && cells >= least &&
                  !deep_overlap_refused(run->opt, run->ndevices) && !streams_domain_mode(mode);
    }
    streams_domain dom;
    mgpu_graph *graph = NULL;
    mgpu_status status = streams_domain_create(&dom, run->opt, run->ndevices, mode, overlap);
    if (status == MGPU_OK && run->record)
        run->record->exchange = dom.mode;
    if (status == MGPU_OK && o->graph)
        status = streams_graph_capture(&dom, run->opt->steps, run->compute, &graph);
    if (status == MGPU_OK)
        status = measure(o, &dom, run, graph);
    mgpu_graph_destroy(graph);
    streams_domain_destroy(&dom);
    return status;
}

static mgpu_status streams_strategy(const streams_options *o, mgpu_run *run)
{
    MGPU_TRY(check_request(o, run->opt, run->ndevices));
    if (o->pipeline)
        return streams_pipeline(o, run);
    if (o->monitor)
        return streams_monitor(o, run);
    return overlapped(o, run);
}

/* ------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    mgpu_harness *h = mgpu_harness_start(&program, argc, argv); /* options, devices */
    for (mgpu_run *run; (run = mgpu_harness_next(h));)
        mgpu_harness_done(h, streams_strategy(&options, run));
    return mgpu_harness_end(h); /* the ceiling, the verification, the record */
}
