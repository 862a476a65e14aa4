/* streams.h - what the files of mgpu-streams share. */
#ifndef STREAMS_H
#define STREAMS_H

#include <stdbool.h>

#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/measurement.h"
#include "mgpu/graph.h"
#include "mgpu/monitor.h"
#include "mgpu/pipeline.h"
#include "trace.h"

/* The program's own options, as the command line left them (long long, as
 * the parser writes them). */
enum { STREAMS_OVERLAP_ON = 1, STREAMS_OVERLAP_AUTO = 2 };

typedef struct streams_options {
    long long overlap;          /* 1: edge rows overlap the interior; 0: one
                                   kernel a step; STREAMS_OVERLAP_AUTO: chosen
                                   by the size (default) */
    long long graph;            /* replay the steps from a CUDA graph */
    long long pipeline;         /* stream the field from host memory in chunks */
    long long monitor;          /* one persistent kernel, watched by a monitor */
    long long compare_exchange; /* also time the halos with peer and peer-async */
    long long chunks;           /* --pipeline: chunks per device; 0: chosen */
    long long streams;          /* --pipeline: streams per device; 0: chosen */
    long long device_memory;    /* --pipeline: bytes per device; 0: what is free */
} streams_options;

/* ------------------------------------------------ the overlapped step (streams.c) */

/* One part's streams and events.  Each event comes twice, indexed by the
 * buffer (0 or 1) whose rows it announces: the step that writes buffer w
 * records the w events, and waits for the 1-w ones of the step before. */
typedef struct streams_part {
    mgpu_stream *interior;        /* the stencil's stream: the interior rows */
    mgpu_stream *up, *down;       /* high priority: the first and the last row
                                     (K rows), each computed and sent on its own
                                     stream */
    mgpu_event *top_done[2];      /* the first row is computed */
    mgpu_event *bottom_done[2];   /* the last row is computed */
    mgpu_event *interior_done[2]; /* the rows between are computed */
    mgpu_event *sent_up[2];       /* the first row is in the above part's halo */
    mgpu_event *sent_down[2];     /* the last row is in the below part's halo */
    mgpu_event *joined[3];        /* up, down, interior: their work so far */
} streams_part;

typedef struct streams_domain {
    mgpu_stencil *st;
    int nparts;
    mgpu_exchange mode;    /* how edge rows travel: peer, peer-async or direct;
                              nccl, managed: the stencil domain's steps, as
                              with deep halos without the overlap */
    int overlap;           /* 0: one stream per part, compute then send */
    int halo;              /* K: rows a band of the overlapped step, steps a cycle;
                              above 1 without the overlap, the stencil domain's own
                              exchange (send, recv, compute) moves K rows every K
                              steps */
    mgpu_event *fork;      /* on the origin, part 0's interior stream */
    long long graph_steps; /* --graph: the steps one replay runs (even) */
    streams_part part[MGPU_MAX_DEVICES];
} streams_domain;

/* Modes whose halos the stencil domain moves in its own steps, overlap or
 * not: nccl (one group of transfers a part) and managed (nothing moves: the
 * kernel reads its neighbours' rows where they are).  Nothing is left for
 * the edge rows' own streams to overlap, nor for streams.c's graph. */
static inline bool streams_domain_mode(mgpu_exchange mode)
{
    return mode == MGPU_EXCHANGE_NCCL || mode == MGPU_EXCHANGE_MANAGED;
}

mgpu_status streams_domain_create(streams_domain *dom, const mgpu_options *opt, int nparts,
                                  mgpu_exchange mode, int overlap);
void streams_domain_destroy(streams_domain *dom);

/* Announce buffer STEP%2 as ready to the next step's waits: record its
 * events, after sending its edge rows when SEND (the first step needs that:
 * mgpu_stencil_reset leaves the exchanged halos poisoned). */
mgpu_status streams_mark(streams_domain *dom, long long step, int send);
/* Issue step STEP on every part; with COMPUTE 0 the kernels are left out. */
mgpu_status streams_step(streams_domain *dom, long long step, int compute);
/* Every stream in use waits for the origin's work so far (fork), or the
 * origin for every stream's (join). */
mgpu_status streams_fork(streams_domain *dom);
mgpu_status streams_join(streams_domain *dom);
mgpu_status streams_synchronize(streams_domain *dom);

/* One run from the initial field: STEPS steps issued one by one, or, with
 * GRAPH, replayed from it two at a time, told to PROGRESS (may be NULL).
 * *HOST_SECONDS gets the host's time to issue them, *SECONDS the time until
 * the devices are done. */
mgpu_status streams_run(streams_domain *dom, long long steps, int compute, mgpu_graph *graph,
                        mgpu_progress *progress, double *seconds, double *host_seconds);

/* --------------------------------------------------- CUDA graphs (graph.c) */

/* Capture steps 0 to dom->graph_steps-1 of every device into a graph: an
 * even number, up to 32 and no more than a run of STEPS needs. */
mgpu_status streams_graph_capture(streams_domain *dom, long long steps, int compute,
                                  mgpu_graph **graph);
/* From the state streams_mark(dom, 0, 1) leaves: replay GRAPH for as many
 * whole multiples of dom->graph_steps as STEPS holds; *DONE gets how many
 * steps.  When steps are left over, the streams are left ready for
 * streams_step to issue them. */
mgpu_status streams_graph_replay(streams_domain *dom, mgpu_graph *graph, long long steps,
                                 long long *done);

/* ------------------------------------------------------------- the modes */

mgpu_status streams_pipeline(const streams_options *o, mgpu_run *run);
mgpu_status streams_monitor(const streams_options *o, mgpu_run *run);

#endif /* STREAMS_H */
