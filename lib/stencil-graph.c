/* stencil-graph.c - steps of the stencil domain captured into one CUDA graph
 * and replayed (--graph in mgpu-single, -pthread and -openmp).
 *
 * One thread captures every part's steps, issued as mgpu-single issues them.
 * The capture starts on the origin, part 0's stream; every other part's
 * stream joins it by waiting for an event recorded there (the fork), the
 * steps follow, and each part's stream leaves by recording an event that the
 * origin waits for (the join).  The graph then holds every device's kernels,
 * copies and the events that order them; one launch on the origin replays
 * all of it.  (The threads of mgpu-pthread each issuing their own part into
 * one capture was tried: concurrently the process crashed, and one at a time
 * the graph ran about half as fast on 2 H200s as the one captured here.)
 *
 * A replay must come after the work issued plainly before it on every part's
 * stream, and the work issued after it must come after the replay: before a
 * launch the origin waits for every stream (join), after it every stream
 * waits for the origin (fork).  That is four calls a part per launch, so a
 * graph holds many steps.  Both leave the caller's current device as it was.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>

#include "mgpu-private.h"
#include "trace.h"

/* The origin's part; the fork and join events are the stencil's own. */
enum { ORIGIN = 0 };

/* STREAM of PART waits for EVENT (of any device), its device made current. */
static mgpu_status wait_on(const mgpu_stencil *st, int part, mgpu_event *event)
{
    MGPU_TRY(mgpu_device_set(mgpu_stencil_device(st, part)));
    return mgpu_stream_wait_event(mgpu_stencil_stream(st, part), event);
}

static mgpu_status record_on(const mgpu_stencil *st, int part, mgpu_event *event)
{
    MGPU_TRY(mgpu_device_set(mgpu_stencil_device(st, part)));
    return mgpu_event_record(event, mgpu_stencil_stream(st, part));
}

/* The steps issued plainly before the first replay: the first cycle of
 * the exchanges (step 0 with one-row halos, steps 0 to K-1 with --halo=K),
 * whose send fills the halos that the reset poisoned. */
static long long graph_first(const mgpu_stencil *st) { return mgpu_stencil_halo(st); }

/* What a replay leaves must be what the capture started from: the exchange
 * parity (the sent events, by parity) and the buffer holding the field
 * (one per pass, and a cycle may have an odd number of passes) both repeat
 * after two cycles, and every cycle has the same passes.  So a replay runs
 * whole pairs of cycles, about MGPU_GRAPH_STEPS steps; 0 when none fits. */
static long long graph_steps_of(const mgpu_stencil *st, long long steps)
{
    long long two_cycles = 2LL * mgpu_stencil_halo(st);
    long long most = (MGPU_GRAPH_STEPS + two_cycles - 1) / two_cycles * two_cycles;
    long long fits = (steps - graph_first(st)) / two_cycles * two_cycles;
    long long k = fits < most ? fits : most;
    return k >= two_cycles ? k : 0;
}

/* Whether ST's steps can be captured: MGPU_ERR_USAGE, with a line that
 * names OPTION, on the host backend or in a mode whose exchange is not one
 * stream's work: the host waits (peer, staged whole, mapped) or queues a
 * part's copies on its neighbour's stream (staged in chunks), which a
 * capture of one stream would not hold. */
static mgpu_status graph_check(const mgpu_stencil *st, const char *option)
{
    if (mgpu_backend_active() != MGPU_BACKEND_CUDA)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "%s: needs the CUDA backend, and this run has the %s "
                         "backend, which runs work as it is issued: there is "
                         "no graph to capture (use --backend=cuda on a machine "
                         "with a GPU)",
                         option, mgpu_backend_name(mgpu_backend_active()));
    mgpu_exchange mode = mgpu_stencil_exchange_mode(st);
    if (mode == MGPU_EXCHANGE_NCCL)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "%s: --exchange=nccl's groups are issued step by "
                         "step, not captured (accepted with %s: peer-async, "
                         "direct, managed)",
                         option, option);
    if (mode != MGPU_EXCHANGE_PEER_ASYNC && mode != MGPU_EXCHANGE_DIRECT &&
        mode != MGPU_EXCHANGE_MANAGED)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "%s: --exchange=%s is not captured into a graph "
                         "(accepted with %s: peer-async, direct, managed)",
                         option, mgpu_exchange_name(mode), option);
    return MGPU_OK;
}

static mgpu_status capture_enter(mgpu_stencil *st, int part)
{
    if (part != ORIGIN)
        MGPU_TRY(wait_on(st, part, mgpu_stencil_fork_event(st)));
    MGPU_TRY(mgpu_device_set(mgpu_stencil_device(st, part)));
    return mgpu_stencil_record_waited(st, part);
}

static mgpu_status capture_leave(mgpu_stencil *st, int part)
{
    return part == ORIGIN ? MGPU_OK : record_on(st, part, mgpu_stencil_join_event(st, part));
}

/* End the capture that STATUS says how it went, whatever that was: the
 * stream must leave capture mode.  After a failure the graph is dropped and
 * the first failure's message is the one that stays. */
static mgpu_status capture_end(mgpu_stencil *st, int nparts, mgpu_status status, mgpu_graph **graph)
{
    *graph = NULL;
    for (int p = 0; p < nparts && status == MGPU_OK; p++)
        if (p != ORIGIN)
            status = wait_on(st, ORIGIN, mgpu_stencil_join_event(st, p));
    char first[512];
    snprintf(first, sizeof first, "%s", mgpu_last_error());
    mgpu_status ended = mgpu_device_set(mgpu_stencil_device(st, ORIGIN));
    if (ended == MGPU_OK)
        ended = mgpu_graph_end(mgpu_stencil_stream(st, ORIGIN), graph);
    if (status == MGPU_OK)
        return ended;
    mgpu_graph_destroy(*graph);
    *graph = NULL;
    return mgpu_fail(status, "%s", first);
}

/* One step of every part, as mgpu-single issues it: every part sends, then
 * every part receives and computes. */
static mgpu_status issue_step(mgpu_stencil *st, int nparts, long long step, int compute)
{
    for (int p = 0; p < nparts; p++) {
        MGPU_TRY(mgpu_device_set(mgpu_stencil_device(st, p)));
        MGPU_TRY(mgpu_stencil_send(st, p, step));
    }
    for (int p = 0; p < nparts; p++) {
        MGPU_TRY(mgpu_device_set(mgpu_stencil_device(st, p)));
        MGPU_TRY(mgpu_stencil_recv(st, p, step));
        if (compute)
            MGPU_TRY(mgpu_stencil_compute(st, p, step));
    }
    return MGPU_OK;
}

/* From freshly reset parts: issue the first steps of every part plainly
 * (graph_first), capture the K after them into *GRAPH, and wait for the
 * first to be done; the caller resets the parts before its runs. */
static mgpu_status capture_steps(mgpu_stencil *st, int nparts, long long k, int compute,
                                 mgpu_graph **graph)
{
    *graph = NULL;
    int current;
    MGPU_TRY(mgpu_device_get(&current));
    /* A fault asked for at a captured step fails here, with its own message,
     * not inside the capture; the replays check the steps they run. */
    long long first = graph_first(st);
    if (compute)
        MGPU_TRY(mgpu_fault_check_steps(nparts, first, k));
    for (long long step = 0; step < first; step++)
        MGPU_TRY(issue_step(st, nparts, step, compute));
    MGPU_TRY(mgpu_device_set(mgpu_stencil_device(st, ORIGIN)));
    MGPU_TRY(mgpu_graph_begin(mgpu_stencil_stream(st, ORIGIN)));
    mgpu_status status = record_on(st, ORIGIN, mgpu_stencil_fork_event(st));
    for (int p = 0; p < nparts && status == MGPU_OK; p++)
        status = capture_enter(st, p);
    for (long long step = first; step < first + k && status == MGPU_OK; step++)
        status = issue_step(st, nparts, step, compute);
    for (int p = 0; p < nparts && status == MGPU_OK; p++)
        status = capture_leave(st, p);
    MGPU_TRY(capture_end(st, nparts, status, graph));
    for (int p = 0; p < nparts; p++) {
        MGPU_TRY(mgpu_device_set(mgpu_stencil_device(st, p)));
        MGPU_TRY(mgpu_stencil_record_waited(st, p));
    }
    /* The first steps ran; the steps captured did not.  Nothing may still run on the
     * buffers when the caller resets them. */
    for (int p = 0; p < nparts; p++)
        MGPU_TRY(mgpu_stencil_synchronize(st, p));
    return mgpu_device_set(current);
}

/* One replay of GRAPH, ordered after every part's work so far and before
 * every part's work after it. */
static mgpu_status replay(mgpu_stencil *st, int nparts, mgpu_graph *graph)
{
    int current;
    MGPU_TRY(mgpu_device_get(&current));
    for (int p = 0; p < nparts; p++) {
        if (p == ORIGIN)
            continue;
        MGPU_TRY(record_on(st, p, mgpu_stencil_join_event(st, p)));
        MGPU_TRY(wait_on(st, ORIGIN, mgpu_stencil_join_event(st, p)));
    }
    MGPU_TRY(mgpu_device_set(mgpu_stencil_device(st, ORIGIN)));
    MGPU_TRY(mgpu_graph_launch(graph, mgpu_stencil_stream(st, ORIGIN)));
    MGPU_TRY(record_on(st, ORIGIN, mgpu_stencil_fork_event(st)));
    for (int p = 0; p < nparts; p++)
        if (p != ORIGIN)
            MGPU_TRY(wait_on(st, p, mgpu_stencil_fork_event(st)));
    return mgpu_device_set(current);
}

/* ------------------------------------------ --graph in a strategy's runs */

/* What mgpu-single, -pthread and -openmp do with the above: capture once,
 * replay in every run after the first steps, say so in the record.  Each
 * keeps its own way of issuing the plain steps around the replays. */

mgpu_status mgpu_graph_steps_capture(mgpu_graph_steps *g, mgpu_stencil *st, const mgpu_run *run)
{
    *g = (mgpu_graph_steps){NULL, 0, 0, 0};
    MGPU_TRY(graph_check(st, "--graph"));
    g->first = graph_first(st);
    g->k = graph_steps_of(st, run->opt->steps);
    if (g->k == 0)
        return MGPU_OK;
    g->end = g->first + (run->opt->steps - g->first) / g->k * g->k;
    for (int p = 0; p < run->ndevices; p++)
        MGPU_TRY(mgpu_stencil_reset(st, p));
    return capture_steps(st, run->ndevices, g->k, run->compute, &g->graph);
}

mgpu_status mgpu_graph_steps_replay(const mgpu_graph_steps *g, mgpu_stencil *st,
                                    const mgpu_run *run)
{
    for (long long step = g->first; step < g->end; step += g->k) {
        /* A replayed kernel checks nothing: its steps are checked here. */
        MGPU_TRY(mgpu_fault_check_steps(run->ndevices, step, g->k));
        mgpu_trace_replay_begin(step, g->k);
        mgpu_status status = replay(st, run->ndevices, g->graph);
        mgpu_trace_end();
        MGPU_TRY(status);
        mgpu_progress_step(run->progress, step + g->k);
    }
    return MGPU_OK;
}

void mgpu_graph_steps_record(const mgpu_graph_steps *g, const mgpu_run *run)
{
    if (run->record)
        mgpu_record_set_number(run->record, "graph_steps", (double) g->k);
}
