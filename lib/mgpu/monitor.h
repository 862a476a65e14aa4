/* mgpu/monitor.h - the progress monitor of book 11.2 (lib/monitor.c,
 * lib/monitor-cuda.cu): a persistent stencil kernel whose progress a
 * monitor kernel passes on to the host. */
#ifndef MGPU_MONITOR_H
#define MGPU_MONITOR_H

#include <stddef.h>

#include "mgpu.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#endif /* MGPU_MONITOR_H */
