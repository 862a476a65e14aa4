/* graph.c - mgpu-streams --graph: the steady-state step of every device,
 * captured once into a CUDA graph and replayed.  A step issues a dozen calls
 * per device (waits, kernels, copies, records); on a small grid the host takes
 * longer to issue them than the devices take to run them.  A graph launch
 * issues two steps' work, every device's, in one call.
 *
 * The capture starts on the origin, part 0's interior stream; the other
 * streams, of every device, join it by waiting for an event recorded there
 * (the fork), and leave it when the origin waits for an event recorded on
 * each (the join).  Inside, the steps wait only for events recorded inside
 * (streams_mark stands for the step before), since a captured wait cannot
 * name work outside the graph.  An even number of steps is captured, so that
 * the buffers' parity comes round again, and many of them (MGPU_GRAPH_STEPS).
 * Launches on one stream run one after another, so each replay begins where
 * the previous one ended. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>

#include "streams.h"

mgpu_status streams_graph_capture(streams_domain *dom, long long steps, int compute,
                                  mgpu_graph **graph)
{
    *graph = NULL;
    dom->graph_steps = steps < MGPU_GRAPH_STEPS ? (steps > 2 ? steps / 2 * 2 : 2)
                                                : MGPU_GRAPH_STEPS;
    mgpu_stream *origin = dom->part[0].interior;
    int device = mgpu_stencil_slab(dom->st, 0)->device;
    double seconds, host_seconds;
    /* The same two steps run plainly first: a kernel's first launch loads
     * its code and asks the device for its launch shape, which the capture
     * must not have to do. */
    MGPU_TRY(streams_run(dom, dom->graph_steps, compute, NULL, NULL, &seconds, &host_seconds));
    MGPU_TRY(mgpu_device_set(device));
    MGPU_TRY(mgpu_graph_begin(origin));
    mgpu_status status = streams_fork(dom);
    if (status == MGPU_OK)
        status = streams_mark(dom, 0, 0);
    for (long long step = 0; step < dom->graph_steps && status == MGPU_OK; step++)
        status = streams_step(dom, step, compute);
    if (status == MGPU_OK)
        status = streams_join(dom);
    if (status == MGPU_OK)
        return mgpu_graph_end(origin, graph);
    /* Close the capture all the same, and report what broke it. */
    char first[512];
    snprintf(first, sizeof first, "%s", mgpu_last_error());
    mgpu_graph *broken = NULL;
    if (mgpu_graph_end(origin, &broken) == MGPU_OK)
        mgpu_graph_destroy(broken);
    return mgpu_error_set(status, "%s", first);
}

mgpu_status streams_graph_replay(streams_domain *dom, mgpu_graph *graph, long long steps,
                                 long long *done)
{
    mgpu_stream *origin = dom->part[0].interior;
    *done = 0;
    /* The first replay follows the sends streams_mark issued on every stream. */
    MGPU_TRY(streams_join(dom));
    MGPU_TRY(mgpu_device_set(mgpu_stencil_slab(dom->st, 0)->device));
    long long k = dom->graph_steps;
    for (long long step = 0; step + k <= steps; step += k) {
        /* The kernels in the graph checked MGPU_INJECT_FAULT for steps 0 to
         * k-1 when they were captured; the replayed steps are checked here. */
        MGPU_TRY(mgpu_fault_check_steps(dom->nparts, step, k));
        mgpu_trace_replay_begin(step, k);
        mgpu_status status = mgpu_graph_launch(graph, origin);
        mgpu_trace_end();
        MGPU_TRY(status);
        *done = step + k;
    }
    if (*done == steps)
        return MGPU_OK;
    /* Steps are left: every stream waits for the last replay, and the step
     * before them is announced as streams_step expects. */
    MGPU_TRY(streams_fork(dom));
    return streams_mark(dom, *done, 0);
}
