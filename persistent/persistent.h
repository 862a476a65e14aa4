/* persistent.h - what mgpu-persistent's host side (persistent.c) and its kernel
 * (persistent-cuda.cu) share: one part's description and the memory through
 * which the parts' kernels meet. */
#ifndef MGPU_PERSISTENT_H
#define MGPU_PERSISTENT_H

#include "mgpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a device meets its neighbours each step (doc/persistent.md). */
enum persistent_protocol {
    PROTOCOL_OVERLAP = 0, /* only the warps of the two edge rows wait for the
                             neighbours' flags; the interior is computed meanwhile */
    PROTOCOL_BARRIER      /* compute, grid barrier, flags, grid barrier */
};

/* Threads per block of the persistent kernel: few large blocks make the
 * grid barrier cheap (one arrival per block).  The deep-halo kernel's
 * warps keep T steps of rows in registers (lib/stencil-blocked.cuh), up to
 * 202 a thread at T = 8: blocks of 256 threads may have 255 (with 512 the
 * deeper passes spilled to local memory and ran at half speed). */
enum { PERSISTENT_BLOCK_THREADS = 1024, PERSISTENT_DEEP_THREADS = 256 };

/* In each part's device memory, zeroed before every run.  The two flags are
 * written by the neighbours through peer pointers, each on a 128-byte line of
 * its own.  A flag's value is the count of exchange phases that neighbour
 * has finished: in the resident one-row kernel phase 0 fills the halos of
 * buffer 0 before step 0 and phase t+1 is step t; in the graph form, the
 * steps (one-row halos) or cycles (deep) it has ended (looped-cuda.cu). */
typedef struct persistent_flags {
    unsigned long long from_above; /* the part above: my top halo is written */
    unsigned long long pad0[15];
    unsigned long long from_below; /* the part below: my bottom halo is written */
    unsigned long long pad1[15];
    unsigned long long edges_done; /* overlap: my edge warps' arrivals, all phases */
    unsigned long long abort_at;   /* step + 1 at which a wait gave up; 0: none */
    unsigned long long pad2[14];
    /* --halo=K > 1: the cycles of K steps for which the part above (below)
     * has copied my first (last) K rows, which my later passes of the cycle
     * overwrite.  With deep halos from_above and from_below count the
     * cycles the neighbours have ended. */
    unsigned long long pulled_by_above;
    unsigned long long pad3[15];
    unsigned long long pulled_by_below;
    unsigned long long pad4[15];
    /* --form=graph (looped-cuda.cu), this part's own: the exchanges ended
     * (the last block of each advances it, so the next reads the cycle it
     * is for), the blocks of the exchange under way that have ended, the
     * loop's iterations ended, and: */
    unsigned long long cycle;
    unsigned long long arrivals;
    unsigned long long loops;
    unsigned long long top_arrivals;    /* one-row halos: the blocks of my first and */
    unsigned long long bottom_arrivals; /* last strip that have ended, all steps */
    unsigned long long pad5[11];
} persistent_flags;

/* What runs on each device (doc/persistent.md, "Forms"). */
enum persistent_form {
    FORM_RESIDENT = 0, /* one cooperative kernel a device for the whole run */
    FORM_GRAPH         /* a CUDA graph a device whose conditional node loops over the
                          library's launched kernels, neighbours met through flags */
};

/* In mapped host memory, shared by every part, zeroed before every run. */
enum { STOP_NONE = 0, STOP_TIMEOUT = 1, STOP_HOST = 2 };
typedef struct persistent_signal {
    int stop;       /* nonzero: every kernel leaves at its next wait */
    int part;       /* STOP_TIMEOUT: the part that gave up */
    long long step; /* and the step it waited for */
} persistent_signal;

/* One part's kernel. */
typedef struct persistent_part {
    mgpu_kernel kernel;
    int protocol;
    int compute; /* 0: the exchanges and barriers alone */
    int part;
    long long nx, rows; /* columns; interior rows of the part */
    size_t pitch;       /* floats from one row to the next */
    long long steps;
    float *buf[2];                 /* the two buffers: with one-row halos the
                                      field before even / odd steps, local
                                      rows 0 and rows+1 the halos */
    float *up[2], *down[2];        /* per buffer: the halo row that my first
                                      row fills (the part above's bottom halo)
                                      and my last row fills (the part below's
                                      top halo); NULL at a fixed boundary */
    unsigned long long *up_flag;   /* the part above's from_below and the part */
    unsigned long long *down_flag; /* below's from_above; NULL when there is no
                                      such part or it is this part itself */
    int wait_above, wait_below;    /* whether my halos come from another part */
    persistent_flags *flags;       /* mine */
    persistent_signal *signal;     /* device address of the shared block */
    long long wait_limit_ns;       /* a wait longer than this stops the run */
    long long delay_ns;            /* MGPU_INJECT_DELAY: this part sleeps up to so
                                      long at its start and after each wait for
                                      its neighbours (resident.cuh, dawdle); 0:
                                      never */
    /* --halo=K > 1 (deep-cuda.cu): K halo rows a side (local rows 0..K-1 and
     * rows+K..rows+2K-1), which each kernel copies from its neighbours
     * every K steps, and passes of up to TIME_BLOCK steps between. */
    int halo, time_block;
    const float *pull_top[2];        /* per buffer: the part above's last K rows */
    const float *pull_bottom[2];     /* and the part below's first K; NULL at a
                                        fixed boundary; a part alone with periodic
                                        rows points at its own */
    unsigned long long *up_pulled;   /* the part above's pulled_by_below and */
    unsigned long long *down_pulled; /* the part below's pulled_by_above, where I
                                        say I copied their rows; NULL as up_flag */
    int blocks, threads;             /* grid and block size, set by persistent_prepare */
} persistent_part;

#ifdef MGPU_HAVE_CUDA
/* Usage error unless DEVICE can launch cooperative kernels. */
mgpu_status persistent_check_device(int device);
/* With the part's device current: load the kernel there and choose the grid,
 * BLOCKS_PER_SM blocks per multiprocessor at most (fewer where they do not
 * fit, or where the part has less work), into PART->blocks. */
mgpu_status persistent_prepare(persistent_part *part, int blocks_per_sm);
/* Launch the part's kernel on STREAM, its device current; returns at once. */
mgpu_status persistent_launch(const persistent_part *part, mgpu_stream *stream);

/* The graph form (looped-cuda.cu): PART's whole run as one graph on its
 * device (made current by the caller), launched on the part's stream. */
typedef struct looped_graph looped_graph;
mgpu_status looped_build(mgpu_stencil *stencil, const persistent_part *part, looped_graph **graph);
mgpu_status looped_launch(looped_graph *graph, mgpu_stream *stream);
void looped_destroy(looped_graph *graph);
/* Whether the build and the driver have what the graph form needs (CUDA
 * 12.3's conditional nodes). */
int looped_supported(void);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MGPU_PERSISTENT_H */
