/* mgpu/graph.h - CUDA graphs (lib/graph.c) and the stencil domain's steps
 * captured in one and replayed (lib/stencil-graph.c), as --graph runs them. */
#ifndef MGPU_GRAPH_H
#define MGPU_GRAPH_H

#include <stddef.h>

#include "mgpu.h"
#include "mgpu/harness.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA graphs (lib/graph.c).  Between mgpu_graph_begin and mgpu_graph_end,
 * what is issued on ORIGIN is recorded into a graph instead of run; so is
 * what is issued on any stream, of any device, once it waits for an event
 * recorded in the capture, and each such stream must be joined back (ORIGIN
 * waits for an event recorded on it) before the end.  The capture is global:
 * a call that would synchronise with it (cudaMemcpyPeer, a host wait) fails
 * rather than quietly escaping the graph.  Launching the graph replays all
 * of it, every device's kernels and copies, for the host cost of one call.
 * After a failure between begin and end, call mgpu_graph_end all the same to
 * close the capture (it then fails too and makes no graph).  The host
 * backend has no graphs: MGPU_ERR_UNSUPPORTED. */
typedef struct mgpu_graph mgpu_graph;
mgpu_status mgpu_graph_begin(mgpu_stream *origin);
mgpu_status mgpu_graph_end(mgpu_stream *origin, mgpu_graph **graph);
/* Replay GRAPH on STREAM (a stream of the origin's device, made current). */
mgpu_status mgpu_graph_launch(mgpu_graph *graph, mgpu_stream *stream);
void mgpu_graph_destroy(mgpu_graph *graph);

/* Steps of the stencil domain in one graph (lib/stencil-graph.c), for the
 * strategies that issue them through mgpu_stencil_send, _recv and _compute,
 * in an asynchronous exchange mode (peer-async, direct).  One thread
 * captures every part's steps; a replay is one launch, on part 0's stream,
 * of all of them, ordered after the work issued before it on every part's
 * stream and before the work issued after it, from one thread while no
 * other issues work.  CUDA backend only. */
/* Steps a replay runs at most: launching a graph whose nodes span several
 * devices costs the host about what issuing its kernels plainly would (165 us
 * for 32 steps of two H200s), so one launch carries many steps, and the host
 * calls that order it before and after (four a part) are paid once for all. */
#define MGPU_GRAPH_STEPS 32
/* --graph of the programs that issue the steps themselves (mgpu-single,
 * -pthread, -openmp): a run's steps captured once, replayed in every run. */
typedef struct mgpu_graph_steps {
    mgpu_graph *graph; /* NULL: no replay fits the run */
    long long first;   /* the steps issued plainly before the first replay */
    long long k;       /* the steps of one replay */
    long long end;     /* the step after the last replay: plain steps go on */
} mgpu_graph_steps;
/* Check that RUN's steps can be captured (the CUDA backend, an exchange
 * mode a capture can hold; else a usage error naming --graph), reset every
 * part and capture them into *G: its first steps (the first cycle of the
 * exchanges, which fills the halos the reset poisoned) issued plainly, then
 * whole pairs of cycles, about MGPU_GRAPH_STEPS steps.  The caller resets the parts before each run and destroys
 * G->graph. */
mgpu_status mgpu_graph_steps_capture(mgpu_graph_steps *g, mgpu_stencil *stencil,
                                     const mgpu_run *run);
/* A run's replays, from one thread while no other issues work, its first
 * G->first steps issued: steps G->first to G->end, told to RUN's progress. */
mgpu_status mgpu_graph_steps_replay(const mgpu_graph_steps *g, mgpu_stencil *stencil,
                                    const mgpu_run *run);
/* The record's graph_steps: the steps of one replay. */
void mgpu_graph_steps_record(const mgpu_graph_steps *g, const mgpu_run *run);

#ifdef __cplusplus
}
#endif

#endif /* MGPU_GRAPH_H */
