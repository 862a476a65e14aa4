/* p2p.h - what the files of mgpu-p2p share: its options, each device's
 * buffers, streams and events, one timed measurement (a "job"), and the
 * labelled matrices ("figures") that the results are printed as. */
#ifndef MGPU_BENCH_P2P_H
#define MGPU_BENCH_P2P_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/measurement.h"

#define P2P_NAME "mgpu-p2p"
/* The version of the JSON document's layout (doc/record.md, "mgpu-p2p";
 * doc/p2p.schema.json). */
#define P2P_SCHEMA 2

#define P2P_MAX_REPEAT 1000 /* --repeat */
#define P2P_MAX_SIZES 1000  /* sizes of the size sweep */

typedef struct p2p_options {
    mgpu_backend backend;
    int devices;                 /* 0: every device (host backend: 2) */
    size_t bytes;                /* each copy of the bandwidth matrices */
    size_t sweep_min, sweep_max; /* the size sweep (-b, -e) */
    int sweep_factor;            /* -f: each size FACTOR times the last; 0: by -i */
    size_t sweep_step;           /* -i: each size STEP bytes past the last */
    int no_sweep;                /* --sizes=none: the sweep's tests left out */
    size_t staging_chunk;        /* staged copies: bytes of a chunk */
    int staging_buffers;         /* and the pinned buffers they go through */
    /* --pairs: the device pairs (from, to) the pair tests measure; all
     * when none was given. */
    int pairs_given;
    unsigned char pair[MGPU_MAX_DEVICES][MGPU_MAX_DEVICES];
    size_t halo; /* one halo of the halo exchange */
    int rounds;  /* halo exchanges per sample */
    size_t latency_bytes;
    int latency_copies; /* copies per latency sample */
    int repeat, warmup;
    double spin_us; /* first length of the spin, grown as needed */
    mgpu_format format;
    int header;                  /* csv: print the header line */
    unsigned tests;              /* --test: bit (1u << p2p_test) for each test run */
    mgpu_progress_when progress; /* --progress */
} p2p_options;

/* The tests, in the order they run: what --test selects and --list lists
 * (NAME, then what it measures).  Where one does what a test of NVIDIA's
 * nvbandwidth does, it has that test's name (doc/p2p.md maps them). */
#define P2P_TEST_MAP(X)                                                                       \
    X(LINKS, "links",                                                                         \
      "peer access and the link of every pair (NVML, cudaDeviceGetP2PAttribute); no copies")  \
    X(PEER_ONE, "device_to_device_memcpy_write_ce",                                           \
      "GB/s, peer access on: cudaMemcpyPeerAsync issued by the source (copy engine, write), " \
      "one way")                                                                              \
    X(PEER_BOTH, "device_to_device_bidirectional_memcpy_write_ce",                            \
      "GB/s, the same both ways at once, the bytes of both directions counted")               \
    X(KERNEL_ONE, "device_to_device_memcpy_write_sm",                                         \
      "GB/s, a kernel on the source stores through a peer pointer (SM, write), one way")      \
    X(KERNEL_BOTH, "device_to_device_bidirectional_memcpy_write_sm",                          \
      "GB/s, the same both ways at once, the bytes of both directions counted")               \
    X(STAGED_ONE, "device_to_device_staged_memcpy_ce",                                        \
      "GB/s, peer access off: staged through pinned host memory (two copies), one way")       \
    X(STAGED_BOTH, "device_to_device_bidirectional_staged_memcpy_ce",                         \
      "GB/s, the same both ways at once, the bytes of both directions counted")               \
    X(HALO, "halo_exchange",                                                                  \
      "us per halo exchange among all devices, cudaMemcpyPeer against cudaMemcpyPeerAsync "   \
      "(book table 11.1)")                                                                    \
    X(PEER_LATENCY, "device_to_device_latency_ce",                                            \
      "us per small copy, peer access on, cudaMemcpyPeerAsync back to back")                  \
    X(STAGED_LATENCY, "device_to_device_staged_latency_ce",                                   \
      "us per small staged copy, each waiting for the previous one to arrive")                \
    X(H2D, "host_to_device_memcpy_ce",                                                        \
      "GB/s, pinned host memory to each device (cudaMemcpyAsync), and to all at once")        \
    X(D2H, "device_to_host_memcpy_ce",                                                        \
      "GB/s, each device to pinned host memory (cudaMemcpyAsync), and all at once")           \
    X(H2D_PAGEABLE, "host_to_device_pageable_memcpy_ce",                                      \
      "GB/s, pageable host memory to each device (cudaMemcpy), and to all at once")           \
    X(D2H_PAGEABLE, "device_to_host_pageable_memcpy_ce",                                      \
      "GB/s, each device to pageable host memory (cudaMemcpy), and all at once")              \
    X(LOCAL, "device_local_copy",                                                             \
      "GB/s within each device (cudaMemcpyAsync), bytes read plus bytes written")             \
    X(SWEEP_PEER, "size_sweep_peer",                                                          \
      "us and GB/s by copy size (-b, -e, -f, -i): peer copies, each pair, and all pairs at "  \
      "once both ways (busbw)")                                                               \
    X(SWEEP_KERNEL, "size_sweep_kernel", "the same, a kernel writing through a peer pointer") \
    X(SWEEP_STAGED, "size_sweep_staged",                                                      \
      "the same, peer access off: staged through pinned host memory in chunks")               \
    X(SWEEP_HOST, "size_sweep_host",                                                          \
      "us and GB/s by copy size: pinned host to each device, and each device to pinned host") \
    X(SWEEP_LOCAL, "size_sweep_local", "us and GB/s by copy size within each device")

typedef enum p2p_test {
#define P2P_TEST_VALUE_(id, name, what) P2P_TEST_##id,
    P2P_TEST_MAP(P2P_TEST_VALUE_)
#undef P2P_TEST_VALUE_
        P2P_TESTS
} p2p_test;
/* The tests' names, NULL-ended (mgpu_name_find, mgpu_names_join), and
 * what each measures. */
extern const char *const p2p_test_names[];
extern const char *const p2p_test_measures[];
#define P2P_ALL_TESTS ((1u << P2P_TESTS) - 1u)
/* The tests of the size sweep, which --sizes=none leaves out. */
#define P2P_SWEEP_TESTS                                                                            \
    ((1u << P2P_TEST_SWEEP_PEER) | (1u << P2P_TEST_SWEEP_KERNEL) | (1u << P2P_TEST_SWEEP_STAGED) | \
     (1u << P2P_TEST_SWEEP_HOST) | (1u << P2P_TEST_SWEEP_LOCAL))

/* The streams a device's copies go on.  The third lane is the device's
 * default (legacy) stream, where cudaMemcpyPeer runs. */
enum { LANE_SEND, LANE_RECV, LANE_DEFAULT, LANES };

typedef struct p2p_device {
    mgpu_device_info info;
    mgpu_stream *stream[LANE_DEFAULT]; /* the default stream is NULL */
    mgpu_event *start, *stop;          /* timing events */
    mgpu_event *done[LANES];           /* this lane's share of a sample is done */
    mgpu_event *back;                  /* a staged latency copy arrived */
    mgpu_event *sent;                  /* halo exchange: this device's halos are out */
    void *src, *dst;                   /* device memory; src holds device_seed() */
    void *host_src, *stage;            /* pinned; host_src holds host_seed() */
    void *page_src, *page_dst;         /* pageable; page_src holds page_seed() */
} p2p_device;

/* The pattern each source buffer holds, so that every destination can be
 * checked against the source it came from. */
static inline uint32_t device_seed(int d) { return 0x5EED0000u + (uint32_t) d; }
static inline uint32_t host_seed(int d) { return 0x40570000u + (uint32_t) d; }
static inline uint32_t page_seed(int d) { return 0x9A9E0000u + (uint32_t) d; }

typedef struct p2p_results p2p_results;

typedef struct p2p_ctx {
    const p2p_options *opt;
    int n;               /* devices measured */
    int cuda;            /* the cuda backend is active */
    size_t buffer_bytes; /* size of every buffer above */
    double spin_us;      /* the spin of the job now timed */
    long gapped;         /* samples the host could not queue within the longest spin */
    long checks;         /* destinations verified so far */
    long corrupt_at;     /* MGPU_P2P_CORRUPT: flip a byte of that check; 0 never */
    long long started;   /* when the run began, seconds since 1970 */
    char link_note[224]; /* where the links were not all from NVML: why */
    p2p_test test;       /* the test now measured, for the progress line */
    mgpu_progress progress;
    p2p_device dev[MGPU_MAX_DEVICES];
    /* The pinned buffers of the staged copies from device a to b, made
     * when a job first needs them (p2p-copies.c). */
    mgpu_staged_copy *staging[MGPU_MAX_DEVICES][MGPU_MAX_DEVICES];
    int sizes; /* the size sweep's sizes, in order */
    size_t size[P2P_MAX_SIZES];
    p2p_results *results;
} p2p_ctx;

/* ---------------------------------------------------------------- a job */

/* A stream that takes part in a sample: device and lane. */
typedef struct p2p_lane {
    int device, lane;
} p2p_lane;

/* Memory the copies write: poisoned before each sample, checked after it
 * against bytes OFFSET.. of the pattern of SEED. */
typedef struct p2p_region {
    int device; /* or MGPU_HOST_MEMORY */
    void *ptr;
    size_t bytes;
    uint32_t seed;
    uint64_t offset;
} p2p_region;

#define P2P_MAX_LANES (LANES * MGPU_MAX_DEVICES)
/* All pairs at once: a region for each. */
#define P2P_MAX_REGIONS (MGPU_MAX_DEVICES * MGPU_MAX_DEVICES)

/* One measurement: queue copies on some lanes, time them, verify. */
typedef struct p2p_job {
    char what[96]; /* names the copies in messages */
    int nlanes;
    p2p_lane lane[P2P_MAX_LANES]; /* lane[0] is timed; the others join it */
    int nregions;
    p2p_region region[P2P_MAX_REGIONS];
    /* The copies block the host (pageable memory): synchronise, and time
     * with the host clock, instead of events behind a spin. */
    int host_clock;
    mgpu_status (*issue)(p2p_ctx *ctx, const struct p2p_job *job);
    /* What ISSUE queues: */
    int path;     /* which kind of copy (p2p-copies.c) */
    int a, b;     /* from device A to device B; A -1: every device */
    int both;     /* also from B to A, at the same time */
    int all;      /* every device to every other at once (A and B unused) */
    int chained;  /* each copy waits for the previous one to arrive */
    size_t bytes; /* bytes of one copy */
    int count;    /* copies per sample, each to its own offset */
} p2p_job;

void p2p_job_lane(p2p_job *job, int device, int lane);
void p2p_job_region(p2p_job *job, int device, void *ptr, size_t bytes, uint32_t seed,
                    uint64_t offset);

/* Whether --test selected TEST. */
static inline int p2p_test_on(const p2p_ctx *ctx, p2p_test test)
{
    return (ctx->opt->tests >> test) & 1u;
}

/* Whether the pair tests measure copies from device A to B (--pairs). */
static inline int p2p_pair_on(const p2p_ctx *ctx, int a, int b)
{
    return a != b && (!ctx->opt->pairs_given || ctx->opt->pair[a][b]);
}

/* The stream of a lane (NULL for the default stream). */
mgpu_stream *p2p_stream(p2p_ctx *ctx, p2p_lane lane);

/* Run JOB WARMUP times untimed, then REPEAT times into SECONDS, verifying
 * every sample.  MGPU_ERR_VERIFY, with a message, when a copy is wrong. */
mgpu_status p2p_time(p2p_ctx *ctx, const p2p_job *job, double *seconds);

/* The measurements, in the order they are printed (p2p-copies.c). */
mgpu_status p2p_measure_links(p2p_ctx *ctx);
mgpu_status p2p_measure_pairs(p2p_ctx *ctx);
mgpu_status p2p_measure_halo(p2p_ctx *ctx);
mgpu_status p2p_measure_latency(p2p_ctx *ctx);
mgpu_status p2p_measure_host(p2p_ctx *ctx);
mgpu_status p2p_measure_local(p2p_ctx *ctx);
mgpu_status p2p_measure_sweep(p2p_ctx *ctx);
/* Release what the measurements made (the staging buffers). */
void p2p_measure_done(p2p_ctx *ctx);

/* ------------------------------------------------------------- figures */

/* A labelled matrix of results.  A cell is empty (not applicable or not
 * measured: null in JSON), a number, a median with its min and max, or a
 * text. */
typedef enum p2p_cell_kind { CELL_EMPTY, CELL_NUMBER, CELL_STATS, CELL_TEXT } p2p_cell_kind;

typedef struct p2p_cell {
    p2p_cell_kind kind;
    double value, min, max;
    char text[32];
} p2p_cell;

#define P2P_LABEL 32

#define P2P_KEY 48

typedef struct p2p_figure {
    char key[P2P_KEY]; /* JSON and CSV name */
    const char *title;
    const char *unit; /* "" for counts and flags */
    /* Each column's unit where they differ (NULL: all are UNIT), and then
     * UNIT names them for people ("us, GB/s"). */
    const char *const *column_units;
    const char *rule; /* what the numbers count: the byte-counting rule */
    const char *row_title, *column_title;
    int digits;   /* after the decimal point, in the table */
    size_t bytes; /* bytes per copy; 0 where none applies */
    int samples;  /* per median; 0 where none applies */
    int rows, columns;
    /* Rows that are copy sizes: each row's bytes (NULL otherwise), printed
     * as integers in JSON and CSV and as "4 KiB" in the table. */
    size_t *row_bytes;
    char title_text[128]; /* where TITLE is made for the figure */
    char (*row_names)[P2P_LABEL];
    char (*column_names)[P2P_LABEL];
    p2p_cell *cells; /* rows x columns, row-major */
} p2p_figure;

p2p_results *p2p_results_create(void);
void p2p_results_destroy(p2p_results *results);
/* A new figure whose cells are empty, or NULL when out of memory. */
p2p_figure *p2p_figure_add(p2p_results *results, const char *key, int rows, int columns);
/* The figure called KEY, or NULL. */
p2p_figure *p2p_figure_find(p2p_results *results, const char *key);
/* Rows of copy sizes, SIZES[row] (the figure has a row for each):
 * row_bytes, and the row names their byte counts.  0 when out of memory. */
int p2p_figure_size_rows(p2p_figure *figure, const size_t *sizes);
/* A column's unit. */
const char *p2p_column_unit(const p2p_figure *figure, int column);
/* Name rows (or columns) "0", "1", ... as the devices. */
void p2p_figure_device_rows(p2p_figure *figure);
void p2p_figure_device_columns(p2p_figure *figure);
p2p_cell *p2p_cell_at(p2p_figure *figure, int row, int column);
void p2p_cell_number(p2p_figure *figure, int row, int column, double value);
void p2p_cell_text(p2p_figure *figure, int row, int column, const char *text);
/* Samples of a rate (value / seconds, per sample) as a median, min, max. */
void p2p_cell_rate(p2p_figure *figure, int row, int column, double value, const double *seconds,
                   int n);
/* Samples of a time, scaled (1e6 / copies: microseconds per copy). */
void p2p_cell_time(p2p_figure *figure, int row, int column, double scale, const double *seconds,
                   int n);

mgpu_status p2p_print(const p2p_ctx *ctx, mgpu_format format, FILE *out);

#endif /* MGPU_BENCH_P2P_H */
