/* mgpu/streams.h - what mgpu-streams builds on beyond plain streams: the
 * stream pipeline of book 11.1 (lib/pipeline.c), CUDA graphs (lib/graph.c)
 * and the stencil domain's steps captured in one (lib/stencil-graph.c), and
 * the progress monitor of book 11.2 with its persistent stencil kernel
 * (lib/monitor.c, lib/monitor-cuda.cu).
 */
#ifndef MGPU_STREAMS_H
#define MGPU_STREAMS_H

#include <stddef.h>

#include "mgpu.h"
#include "mgpu/harness.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ the stream pipeline */

/* Book 11.1: a block of rows too large (or too slow) to copy to one device
 * before computing is cut into chunks; each chunk's upload, compute and
 * download go on one of several streams, so that copies in both directions
 * overlap the computation of other chunks.  Copies overlap only when the host
 * buffers are pinned (mgpu_host_alloc): from pageable memory CUDA copies
 * synchronously through a staging buffer. */

/* The computation of one chunk, issued on STREAM (the pipeline's device is
 * current): output rows [ROW0, ROW0+NROWS) of the block into D_OUT, whose
 * first row is row ROW0, from D_IN, whose first row is row ROW0-halo; both
 * are device buffers with rows PITCH floats apart and NX floats used. */
typedef mgpu_status (*mgpu_pipeline_fn)(void *arg, const float *d_in, float *d_out, long long row0,
                                        long long nrows, size_t pitch, mgpu_stream *stream);

typedef struct mgpu_pipeline_desc {
    int device;
    long long nx;      /* floats used in a row */
    size_t host_pitch; /* floats between rows of the host buffers (>= nx) */
    long long rows;    /* output rows of the block */
    int halo;          /* input rows needed above and below an output row */
    int chunks;        /* 1..rows; rows are shared as evenly as possible */
    int streams;       /* chunk c goes on stream c % streams */
    mgpu_pipeline_fn fn;
    void *arg; /* passed to fn */
} mgpu_pipeline_desc;

typedef struct mgpu_pipeline mgpu_pipeline;

/* Create the streams and, per stream, a device input buffer (largest chunk
 * plus 2*halo rows) and output buffer, rows padded to 32 floats.  A desc out
 * of range is MGPU_ERR_USAGE with a message. */
mgpu_status mgpu_pipeline_create(mgpu_pipeline **pipeline, const mgpu_pipeline_desc *desc);

/* Bytes of device memory a pipeline of DESC allocates, to be checked against
 * a budget before creating it. */
mgpu_status mgpu_pipeline_device_bytes(const mgpu_pipeline_desc *desc, size_t *bytes);

/* Run every chunk, pipelined, and return when all are done.  HOST_IN points
 * at input row 0; rows -halo .. rows-1+halo must exist.  Output rows
 * [0, rows) go to HOST_OUT, nothing else is written there.  The caller's
 * current device is left as it was. */
mgpu_status mgpu_pipeline_run(mgpu_pipeline *pipeline, const float *host_in, float *host_out);

/* The stream pipeline's run in two halves (lib/pipeline.c), so that one host
 * thread keeps several devices' pipelines going at once: start issues every
 * chunk and returns, wait returns once they are done.  Start leaves the
 * caller's current device as it was; after a failure it has waited itself. */
mgpu_status mgpu_pipeline_start(mgpu_pipeline *pipeline, const float *host_in, float *host_out);
mgpu_status mgpu_pipeline_wait(mgpu_pipeline *pipeline);

/* The same chunks one after another on one stream, waiting after each stage,
 * for comparison; the seconds spent uploading, computing and downloading,
 * summed over the chunks, go to the pointers that are not NULL. */
mgpu_status mgpu_pipeline_run_serial(mgpu_pipeline *pipeline, const float *host_in, float *host_out,
                                     double *upload_s, double *compute_s, double *download_s);

void mgpu_pipeline_destroy(mgpu_pipeline *pipeline);

/* -------------------------- CUDA graphs (lib/graph.c, lib/stencil-graph.c) */

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
/* The steps issued plainly before the first replay: the first cycle of
 * the exchanges (step 0 with one-row halos, steps 0 to K-1 with --halo=K),
 * whose send fills the halos that the reset poisoned. */
long long mgpu_stencil_graph_first(const mgpu_stencil *stencil);
/* The steps a replay runs in a run of STEPS: whole pairs of cycles (each
 * replay then starts at the exchange parity and buffer the capture did),
 * about MGPU_GRAPH_STEPS; 0 when no replay fits. */
long long mgpu_stencil_graph_steps(const mgpu_stencil *stencil, long long steps);
/* Whether STENCIL's steps can be captured: MGPU_ERR_USAGE, with a line that
 * names OPTION, on the host backend or with a synchronous exchange mode. */
mgpu_status mgpu_stencil_graph_check(const mgpu_stencil *stencil, const char *option);
/* From freshly reset parts: issue the first steps of every part plainly
 * (mgpu_stencil_graph_first), capture the K after them
 * (mgpu_stencil_graph_steps) into *GRAPH, and wait for the first to be
 * done; the caller resets the parts before its runs. */
mgpu_status mgpu_stencil_capture_steps(mgpu_stencil *stencil, int nparts, long long k, int compute,
                                       mgpu_graph **graph);
mgpu_status mgpu_stencil_replay(mgpu_stencil *stencil, int nparts, mgpu_graph *graph);

/* --graph of the programs that issue the steps themselves (mgpu-single,
 * -pthread, -openmp): a run's steps captured once, replayed in every run. */
typedef struct mgpu_graph_steps {
    mgpu_graph *graph; /* NULL: no replay fits the run */
    long long first;   /* the steps issued plainly before the first replay */
    long long k;       /* the steps of one replay */
    long long end;     /* the step after the last replay: plain steps go on */
} mgpu_graph_steps;
/* Check that RUN's steps can be captured (mgpu_stencil_graph_check, naming
 * --graph), reset every part and capture them (mgpu_stencil_capture_steps)
 * into *G.  The caller resets the parts before each run and destroys
 * G->graph. */
mgpu_status mgpu_graph_steps_capture(mgpu_graph_steps *g, mgpu_stencil *stencil,
                                     const mgpu_run *run);
/* A run's replays, from one thread while no other issues work, its first
 * G->first steps issued: steps G->first to G->end, told to RUN's progress. */
mgpu_status mgpu_graph_steps_replay(const mgpu_graph_steps *g, mgpu_stencil *stencil,
                                    const mgpu_run *run);
/* The record's graph_steps: the steps of one replay. */
void mgpu_graph_steps_record(const mgpu_graph_steps *g, const mgpu_run *run);

/* ------------------------------------ the progress monitor (lib/monitor.c) */

/* Book 11.2: a kernel that runs for long tells the host how far it has got
 * (lib/monitor.c).  The worker is a persistent stencil kernel: one
 * cooperative launch runs every step of one part, a grid-wide barrier
 * between steps, and pushes its edge rows into its neighbours' halos through
 * peer memory, meeting their kernels through arrival counters.  After each
 * step it writes the count of finished steps to its device memory.  A
 * monitor kernel of one thread, on a second stream, copies that count to
 * mapped host memory whenever it changes; the host reads it there while both
 * run.  Every kernel checks STOP in the shared mapped block, so that one
 * failure (or the host) ends them all instead of leaving them waiting. */

/* In mapped host memory (mgpu_host_alloc with MGPU_HOST_MAPPED), zeroed
 * before a run; the kernels get its device address.  Both sides access it
 * through volatile pointers. */
typedef struct mgpu_signal {
    int stop;        /* nonzero: every kernel leaves soon */
    int failed_part; /* the part that stopped the run, + 1 */
    long long failed_step;
    int progress[MGPU_MAX_DEVICES]; /* steps finished, as the monitors saw */
} mgpu_signal;

/* A part's counters in its own device memory, zeroed before a run. */
typedef struct mgpu_counters {
    int arrived[2]; /* steps whose top / bottom halo row has arrived */
    int progress;   /* steps finished: the worker writes, the monitor reads */
    int leave;      /* the grid's decision to stop early */
} mgpu_counters;

typedef struct mgpu_persistent_desc {
    mgpu_kernel kernel;
    long long nx, rows;      /* columns; interior rows of the part */
    size_t pitch;            /* floats from one row to the next */
    float *buf[2];           /* the part's buffers: the field before even and
                                odd steps, halo rows 0 and rows+1 */
    float *up[2], *down[2];  /* per buffer: the halo row above's part fills
                                from this part's first row (the above part's
                                bottom halo), and the below part's top halo;
                                NULL where that side is a fixed boundary */
    mgpu_counters *counters; /* this part's */
    int *up_arrived;         /* the above part's arrived[1], the below */
    int *down_arrived;       /* part's arrived[0]: this part advances them */
    mgpu_signal *signal;     /* device address of the shared block */
    int part;
    long long steps;
    int compute;         /* 0: exchange halos only */
    long long fail_step; /* stop the run at this step (MGPU_INJECT_FAULT);
                            -1: never */
} mgpu_persistent_desc;

/* Launch the worker on STREAM, its device current.  It only ends once every
 * neighbour's worker has been launched too, or STOP is set. */
mgpu_status mgpu_persistent_launch(const mgpu_persistent_desc *desc, mgpu_stream *stream);
/* Launch the monitor of PART on STREAM, its device current: it copies
 * COUNTERS->progress (device address) to SIGNAL->progress[PART] until it
 * reaches STEPS or STOP is set.  Launch it before the worker (as the book
 * does): the worker leaves room on the device for it, and the monitor's
 * launch loads the worker's code, which CUDA would otherwise load at the
 * worker's launch, waiting for the spinning monitor. */
mgpu_status mgpu_monitor_launch(mgpu_counters *counters, mgpu_signal *signal, int part,
                                long long steps, mgpu_stream *stream);

#ifdef __cplusplus
}
#endif

#endif /* MGPU_STREAMS_H */
