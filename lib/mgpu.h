/* mgpu.h - public interface of the mgpu runtime library.
 *
 * mgpu drives several GPUs from one host program.  Every call takes plain
 * values or opaque handles and returns an mgpu_status; the text of the last
 * failure in the calling thread is kept by mgpu_last_error().  The same calls
 * run on two backends: "cuda" (real devices) and "host" (a "device" is a
 * partition of host memory, kernels are the C reference, streams run
 * eagerly), so that every strategy's orchestration runs everywhere.
 *
 * Functions that take a device index operate on that device.  Functions that
 * take a stencil part operate on the part's device, which the caller must
 * have made current (mgpu_device_set or mgpu_context_push): making a device
 * current is the strategy's job, as in the book.
 */
#ifndef MGPU_H
#define MGPU_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MGPU_VERSION "0.1.0"

/* ------------------------------------------------------------------ status */

typedef enum mgpu_status {
    MGPU_OK = 0,
    MGPU_ERR_USAGE,       /* the request cannot be done as asked (exit 2) */
    MGPU_ERR_NOMEM,       /* a host or device allocation failed */
    MGPU_ERR_NO_DEVICE,   /* no usable device of the asked backend */
    MGPU_ERR_UNSUPPORTED, /* this backend or build cannot do it */
    MGPU_ERR_CUDA,        /* a CUDA call failed */
    MGPU_ERR_SYSTEM,      /* an operating-system call failed */
    MGPU_ERR_VERIFY,      /* a result differs from its reference */
    MGPU_ERR_FAULT,       /* a fault injected by MGPU_INJECT_FAULT */
    MGPU_ERR_INTERRUPTED  /* stopped by a signal or by another worker */
} mgpu_status;

const char *mgpu_strerror(mgpu_status status);

/* One line on the most recent failure in this thread: what failed, on which
 * device, why.  Empty when nothing failed. */
const char *mgpu_last_error(void);
/* What to tell the user of a failure with STATUS: mgpu_last_error(), or
 * mgpu_strerror(STATUS) where no failure left words. */
const char *mgpu_error_message(mgpu_status status);

/* Exit code a program should return for STATUS: 0, 1 or 2 (usage). */
int mgpu_exit_code(mgpu_status status);

/* Return the status of EXPR from the calling function unless it is MGPU_OK:
 * the one line that turns a chain of library calls into early returns. */
#define MGPU_TRY(expr)                                                                  \
    do {                                                                                \
        mgpu_status mgpu_try_status_ = (expr);                                          \
        if (mgpu_try_status_ != MGPU_OK)                                                \
            return mgpu_try_status_;                                                    \
    } while (0)

/* ------------------------------------------------------------ the names */

/* Each enum of named values (backend, kernel, exchange mode, and the
 * command line's verify, format, bind and progress) is made from one table,
 * an X-macro MGPU_<LIST>_MAP(X) of rows X(SUFFIX, "name", ...): it gives
 * the enum its values MGPU_<LIST>_<SUFFIX>, from 0 in the table's order,
 * and names.c its NULL-ended array mgpu_<list>_names, indexed by value,
 * the names the command line takes and the record prints.  A value is one
 * row; the order of the rows is the order --help lists them in. */

/* NAMES[INDEX], or "unknown" past its end (a NULL-ended list). */
const char *mgpu_name_at(const char *const *names, int index);
/* The index of TEXT in NAMES, or -1. */
int mgpu_name_find(const char *const *names, const char *text);
/* The names of NAMES whose bit (1u << index) is set in MASK, SEPARATOR
 * between them, into BUF of SIZE bytes: cut when too long, never
 * overflowed.  A name past the 32nd is always taken. */
void mgpu_names_join(char *buf, size_t size, const char *const *names, unsigned mask,
                     const char *separator);
/* MASK of every name, for mgpu_names_join. */
#define MGPU_ALL_NAMES (~0u)

/* ----------------------------------------------------------------- backend */

#define MGPU_BACKEND_MAP(X)                                                             \
    X(AUTO, "auto") /* cuda where a device is usable, else host */                      \
    X(CUDA, "cuda")                                                                     \
    X(HOST, "host")

typedef enum mgpu_backend {
#define MGPU_BACKEND_VALUE_(suffix, name) MGPU_BACKEND_##suffix,
    MGPU_BACKEND_MAP(MGPU_BACKEND_VALUE_)
#undef MGPU_BACKEND_VALUE_
} mgpu_backend;
extern const char *const mgpu_backend_names[];

#define MGPU_MAX_DEVICES 64

/* Choose the backend for this process.  AUTO takes CUDA when a device is
 * usable and the host otherwise.  HOST_DEVICES is how many host "devices"
 * the host backend offers (1..MGPU_MAX_DEVICES).  May be called again (after
 * fork, say); the last call wins. */
mgpu_status mgpu_init(mgpu_backend want, int host_devices);
mgpu_backend mgpu_backend_active(void);
const char *mgpu_backend_name(mgpu_backend backend);
/* Why the active backend was chosen, e.g. "no CUDA driver". */
const char *mgpu_backend_reason(void);
/* 1 when this build has the CUDA backend. */
int mgpu_cuda_built(void);

/* Number of CUDA devices, found without making a CUDA context in this
 * process (a short-lived child process asks), so that a program may still
 * fork workers afterwards.  0 with a reason in mgpu_last_error when none. */
mgpu_status mgpu_cuda_device_count_nofork(int *count);

/* ----------------------------------------------------------------- devices */

typedef struct mgpu_device_info {
    int index;
    char name[256];
    size_t total_bytes;
    size_t free_bytes;
    int multiprocessors;
    int cc_major, cc_minor;
    int pci_domain, pci_bus, pci_device;
    double peak_gbps; /* memory clock x bus width, 0 when unknown */
    size_t cache_bytes; /* the last cache before its memory: a GPU's L2, the
                           host's last-level cache; 0 when unknown */
} mgpu_device_info;

mgpu_status mgpu_device_count(int *count);
mgpu_status mgpu_device_info_get(int device, mgpu_device_info *info);

/* Runtime API context switching: make DEVICE current for this thread. */
mgpu_status mgpu_device_set(int device);
mgpu_status mgpu_device_get(int *device);
mgpu_status mgpu_device_synchronize(int device);

/* Driver API context switching: push DEVICE's primary context onto this
 * thread's context stack, pop it again.  The driver is reached through
 * cudaGetDriverEntryPoint, so programs never link libcuda. */
mgpu_status mgpu_context_push(int device);
mgpu_status mgpu_context_pop(void);

/* ------------------------------------------------------------------ memory */

mgpu_status mgpu_malloc(int device, size_t bytes, void **ptr);
void mgpu_free(int device, void *ptr);

enum {
    MGPU_HOST_PINNED = 0,    /* page-locked host memory */
    MGPU_HOST_MAPPED = 1 << 0 /* also mapped into every device (zero-copy) */
};
mgpu_status mgpu_host_alloc(size_t bytes, unsigned flags, void **ptr);
void mgpu_host_free(void *ptr);
/* The address kernels use for mapped host memory. */
mgpu_status mgpu_host_device_pointer(void *host, void **device_ptr);

/* Copies between any two of host memory, device memory of any device
 * (unified addressing): synchronous, and on a stream.  mgpu_memset is done
 * when it returns, as mgpu_memcpy is. */
typedef struct mgpu_stream mgpu_stream;
mgpu_status mgpu_memcpy(void *dst, const void *src, size_t bytes);
mgpu_status mgpu_memcpy_async(void *dst, const void *src, size_t bytes, mgpu_stream *stream);
mgpu_status mgpu_memset(int device, void *ptr, int byte, size_t bytes);

/* --------------------------------------------------------- streams, events */

/* Lower numbers are higher priority, as in CUDA; mgpu_stream_priority_range
 * gives the device's range.  Streams run eagerly on the host backend. */
mgpu_status mgpu_stream_priority_range(int device, int *least, int *greatest);
mgpu_status mgpu_stream_create(int device, int priority, mgpu_stream **stream);
void mgpu_stream_destroy(mgpu_stream *stream);
mgpu_status mgpu_stream_synchronize(mgpu_stream *stream);
int mgpu_stream_device(const mgpu_stream *stream);

typedef struct mgpu_event mgpu_event;
enum { MGPU_EVENT_TIMING = 1 << 0 };
mgpu_status mgpu_event_create(int device, unsigned flags, mgpu_event **event);
void mgpu_event_destroy(mgpu_event *event);
mgpu_status mgpu_event_record(mgpu_event *event, mgpu_stream *stream);
mgpu_status mgpu_event_synchronize(mgpu_event *event);
/* Make STREAM wait for EVENT, which may belong to another device. */
mgpu_status mgpu_stream_wait_event(mgpu_stream *stream, mgpu_event *event);
mgpu_status mgpu_event_elapsed(mgpu_event *start, mgpu_event *stop, double *seconds);

/* -------------------------------------------------------------- peer copies */

/* Whether DEVICE can read and write PEER's memory directly. */
mgpu_status mgpu_peer_can_access(int device, int peer, int *can);
/* Enable DEVICE's access to PEER's memory (idempotent). */
mgpu_status mgpu_peer_enable(int device, int peer);
/* The host backend normally lets every pair access each other; tests turn
 * a pair off to exercise the fallback. */
void mgpu_host_peer_set(int device, int peer, int can);

/* cudaMemcpyPeer: asynchronous to the host but serialised with all work on
 * both devices. */
mgpu_status mgpu_copy_peer(void *dst, int dst_device, const void *src, int src_device,
                           size_t bytes);
/* cudaMemcpyPeerAsync on STREAM (of the source device). */
mgpu_status mgpu_copy_peer_async(void *dst, int dst_device, const void *src, int src_device,
                                 size_t bytes, mgpu_stream *stream);
/* Device to pinned STAGING (at least BYTES), then staging to device: the
 * path when the two devices have no peer access.  Returns when done. */
mgpu_status mgpu_copy_staged(void *dst, int dst_device, const void *src, int src_device,
                             size_t bytes, void *staging);

typedef enum mgpu_copy_path { MGPU_PATH_PEER, MGPU_PATH_STAGED } mgpu_copy_path;
/* Copy BYTES between two devices by the best path: peer when the pair has
 * peer access (enabled here), staged through STAGING otherwise.  *PATH says
 * which was taken; it may be NULL. */
mgpu_status mgpu_copy_device_to_device(void *dst, int dst_device, const void *src,
                                       int src_device, size_t bytes, void *staging,
                                       mgpu_copy_path *path);

/* ----------------------------------------------------------------- kernels */

#define MGPU_KERNEL_MAP(X)                                                              \
    X(PATTERN2D, "pattern2d") /* the book's pattern2d; boundary ring 0 */               \
    /* 5-point Jacobi; left/right columns fixed, top/bottom periodic */                 \
    X(JACOBI, "jacobi")

typedef enum mgpu_kernel {
#define MGPU_KERNEL_VALUE_(suffix, name) MGPU_KERNEL_##suffix,
    MGPU_KERNEL_MAP(MGPU_KERNEL_VALUE_)
#undef MGPU_KERNEL_VALUE_
} mgpu_kernel;
extern const char *const mgpu_kernel_names[];

const char *mgpu_kernel_name(mgpu_kernel kernel);

/* One step on rows [R0, R1) of a row-major block of rows PITCH floats apart:
 * every interior column of those rows of OUT is computed from IN's rows
 * R0-1 .. R1.  The C reference, used by the host backend and for checks. */
void mgpu_stencil_rows_host(mgpu_kernel kernel, const float *in, float *out, long long nx,
                            size_t pitch, long long r0, long long r1);

/* For a worker (thread or process) that runs host-backend kernels beside
 * WORKERS-1 others: its kernels take its share of the cores, not all of
 * them each.  Call it in the worker, before its first kernel. */
void mgpu_host_share_cores(int workers);

/* The same on a device, launched on STREAM (host backend: at once). */
mgpu_status mgpu_stencil_rows(mgpu_kernel kernel, const float *in, float *out, long long nx,
                              size_t pitch, long long r0, long long r1, mgpu_stream *stream);

/* mgpu_stencil_rows that also stores its first row (R0) into FIRST_TO and its
 * last (R1-1) into LAST_TO, each unless NULL: the neighbours' halo rows of the
 * buffer the step writes, which may be a peer's memory.  This is exchange mode
 * direct folded into the step: the halos travel without a launch of their
 * own.  Only the interior cells of those rows are stored. */
mgpu_status mgpu_stencil_rows_sending(mgpu_kernel kernel, const float *in, float *out,
                                      long long nx, size_t pitch, long long r0, long long r1,
                                      float *first_to, float *last_to, mgpu_stream *stream);

/* Temporal blocking: STEPS steps of rows [R0, R1) in one pass over memory.
 *
 * IN holds rows [R0-STEPS, R1+STEPS) at some step s; OUT gets the interior
 * columns (1 .. nx-2) of rows [R0, R1) at step s+STEPS, bit-identical to
 * STEPS calls of mgpu_stencil_rows_host, the first on rows
 * [R0-STEPS+1, R1+STEPS-1) and each next on one row fewer at each end (the
 * trapezoid).  Nothing else of OUT is written; IN is only read (IN != OUT).
 *
 * Columns 0 and nx-1 are the fixed boundary of both kernels: every step sees
 * IN's values there.  Rows beyond the band are the caller's: either halo rows
 * that hold step s (jacobi's periodic images, a neighbour's rows), as above,
 * or, with MGPU_ROWS_FIXED_TOP, row R0-1 is a fixed boundary row (pattern2d's
 * row 0) that every step sees unchanged and IN need not hold rows above it;
 * MGPU_ROWS_FIXED_BOTTOM likewise for row R1.  1 <= STEPS <=
 * MGPU_TIME_BLOCK_MAX, else MGPU_ERR_USAGE.  The host version allocates a
 * few rows per thread (MGPU_ERR_NOMEM); the device version uses none. */
#define MGPU_TIME_BLOCK_MAX 8
/* The deepest --halo: deeper exchanges more rows than any slab worth
 * splitting has; each part must also hold at least --halo rows. */
#define MGPU_HALO_MAX 1024
enum { MGPU_ROWS_FIXED_TOP = 1, MGPU_ROWS_FIXED_BOTTOM = 2 };
mgpu_status mgpu_stencil_rows_blocked_host(mgpu_kernel kernel, const float *in, float *out,
                                           long long nx, size_t pitch, long long r0,
                                           long long r1, int steps, unsigned fixed);
mgpu_status mgpu_stencil_rows_blocked(mgpu_kernel kernel, const float *in, float *out,
                                      long long nx, size_t pitch, long long r0, long long r1,
                                      int steps, unsigned fixed, mgpu_stream *stream);

/* Copy one row of N floats from SRC to DST with a kernel on STREAM's device;
 * either pointer may be a peer's memory or mapped host memory. */
mgpu_status mgpu_copy_row_kernel(float *dst, const float *src, long long n, mgpu_stream *stream);

/* ------------------------------------------------------------ the field */

/* The initial field for cell (i, j) of an NX x NY grid: deterministic from
 * SEED, values in [0,1) inside, the kernel's boundary on the edge. */
float mgpu_field_initial(mgpu_kernel kernel, long long nx, long long ny, long long i,
                         long long j, uint64_t seed);
/* Rows [ROW0, ROW0+NROWS) of the initial field into ROWS, PITCH floats apart. */
void mgpu_field_initial_rows(float *rows, size_t pitch, mgpu_kernel kernel, long long nx,
                             long long ny, long long row0, long long nrows, uint64_t seed);
/* Make the rows outside the interior of a full field consistent with its
 * interior (periodic copies for jacobi; nothing for pattern2d). */
void mgpu_field_fill_halo_rows(float *field, mgpu_kernel kernel, long long nx, long long ny);
/* The outer rows of a full field whose interior rows were gathered from
 * its parts: the first and last rows of the initial field, then
 * mgpu_field_fill_halo_rows. */
void mgpu_field_outer_rows(float *field, mgpu_kernel kernel, long long nx, long long ny,
                           uint64_t seed);

/* The single-device CPU reference: STEPS steps of the whole NX x NY field,
 * starting from the initial field.  FIELD receives the result. */
mgpu_status mgpu_reference_run(float *field, mgpu_kernel kernel, long long nx, long long ny,
                               long long steps, uint64_t seed);

/* Compare FIELD with REF cell by cell.  *MAX_ERROR gets the largest
 * relative difference |a-b|/max(|b|,1e-30); *MISMATCHES (optional) the
 * count of cells whose difference exceeds TOLERANCE or that are NaN. */
void mgpu_field_compare(const float *field, const float *ref, long long nx, long long ny,
                        double tolerance, double *max_error, long long *mismatches);

/* ----------------------------------------------------- decomposition */

/* A part's share of the grid: interior rows [row_begin, row_end).  Its
 * buffers also hold the halo rows row_begin-1 and row_end. */
typedef struct mgpu_slab {
    int part;
    int device;
    long long row_begin, row_end;
} mgpu_slab;

/* Split the NY-2 interior rows into NPARTS contiguous slabs as evenly as
 * possible (the first NY-2 mod NPARTS slabs get one row more).  Fails with
 * MGPU_ERR_USAGE when a part would get no row. */
mgpu_status mgpu_decompose(long long ny, int nparts, mgpu_slab *slabs);

/* ---------------------------------------------------- the stencil domain */

/* The programs, by the exchange modes they implement (the last column of
 * MGPU_EXCHANGE_MAP). */
enum {
    MGPU_BY_IN_PROCESS = 1 << 0, /* mgpu-single, -pthread, -openmp: the stencil
                                    domain's modes (lib/stencil.c) */
    MGPU_BY_STREAMS = 1 << 1,    /* mgpu-streams */
    MGPU_BY_PERSISTENT = 1 << 2, /* mgpu-persistent */
    MGPU_BY_FORK = 1 << 3,       /* mgpu-fork */
    MGPU_BY_MPI = 1 << 4,        /* mgpu-mpi */
};

/* The exchange modes: rows X(A, SUFFIX, "name", BY), BY the programs that
 * implement the mode (MGPU_BY_*); A is the expansion's own argument, given
 * to every X (MGPU_EXCHANGES_OF passes its BY).  AUTO stays first: every
 * program takes it and resolves it to one of the others.  A mode that only
 * some builds have gives MGPU_IF_BUILT(FLAG, BY) as its BY, FLAG the
 * configure result (config.h's, as MGPU_HAVE_CUDA), so that its row reads
 * X(A, NAME, "name", MGPU_IF_BUILT(MGPU_HAVE_NAME, MGPU_BY_FORK)): its
 * name is known in every build (--exchange=name where it is not built says
 * which modes are), but only a build with FLAG offers it.  FLAG is read
 * where MGPU_EXCHANGES_OF is, in a program's file, after config.h. */
#define MGPU_EXCHANGE_MAP(X, A)                                                         \
    /* peer-async where every pair has peer access, staged otherwise */                 \
    X(A, AUTO, "auto", 0)                                                               \
    /* cudaMemcpyPeer */                                                                \
    X(A, PEER, "peer", MGPU_BY_IN_PROCESS | MGPU_BY_STREAMS)                            \
    /* cudaMemcpyPeerAsync on the part's stream */                                      \
    X(A, PEER_ASYNC, "peer-async", MGPU_BY_IN_PROCESS | MGPU_BY_STREAMS)                \
    /* through pinned host memory (fork: shared memory; mpi: host buffers) */           \
    X(A, STAGED, "staged", MGPU_BY_IN_PROCESS | MGPU_BY_FORK | MGPU_BY_MPI)             \
    /* a kernel writes the neighbour's halo */                                          \
    X(A, DIRECT, "direct", MGPU_BY_IN_PROCESS | MGPU_BY_STREAMS | MGPU_BY_PERSISTENT)   \
    /* through zero-copy mapped host memory */                                          \
    X(A, MAPPED, "mapped", MGPU_BY_IN_PROCESS)                                          \
    /* between processes: CUDA IPC */                                                   \
    X(A, IPC, "ipc", MGPU_BY_FORK | MGPU_BY_MPI)                                        \
    /* between ranks: MPI */                                                            \
    X(A, MPI, "mpi", MGPU_BY_MPI)                                                       \
    /* ncclSend/ncclRecv, a communicator per part (a build without NCCL refuses it) */ \
    X(A, NCCL, "nccl", MGPU_BY_IN_PROCESS | MGPU_BY_STREAMS | MGPU_BY_FORK | MGPU_BY_MPI)

typedef enum mgpu_exchange {
#define MGPU_EXCHANGE_VALUE_(a, suffix, name, by) MGPU_EXCHANGE_##suffix,
    MGPU_EXCHANGE_MAP(MGPU_EXCHANGE_VALUE_, )
#undef MGPU_EXCHANGE_VALUE_
    MGPU_EXCHANGE_COUNT
} mgpu_exchange;
extern const char *const mgpu_exchange_names[];

const char *mgpu_exchange_name(mgpu_exchange exchange);
/* Set of modes as a bit mask: 1u << mode. */
#define MGPU_EXCHANGE_BIT(m) (1u << (m))
/* The modes that programs BY implement (a constant, for mgpu_program's
 * exchanges): those whose row names one of BY. */
#define MGPU_EXCHANGES_OF(by) (0u MGPU_EXCHANGE_MAP(MGPU_EXCHANGE_IF_BY_, by))
#define MGPU_EXCHANGE_IF_BY_(wanted, suffix, name, by)                                  \
    | (((by) & (wanted)) ? MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_##suffix) : 0u)
/* BY where FLAG is defined to 1, else 0 (FLAG undefined, or 0): the BY of
 * a mode that only some builds have.  (The name MGPU_BUILT_##FLAG is a
 * macro only when FLAG was 1; then it adds a first argument.) */
#define MGPU_IF_BUILT(flag, by) MGPU_IF_BUILT_(flag, by)
#define MGPU_IF_BUILT_(flag, by) MGPU_SECOND_(MGPU_BUILT_##flag(by), 0u, ~)
#define MGPU_BUILT_1(by) ~, (by)
#define MGPU_SECOND_(...) MGPU_SECOND__(__VA_ARGS__)
#define MGPU_SECOND__(first, second, ...) second

typedef struct mgpu_stencil_desc {
    long long nx, ny;
    mgpu_kernel kernel;
    mgpu_exchange exchange; /* AUTO is resolved by mgpu_stencil_create */
    uint64_t seed;
    int nparts;             /* parts of the whole grid */
    int first_part;         /* the parts this process holds: */
    int local_parts;        /* [first_part, first_part+local_parts); 0 = all */
    const int *devices;     /* device of each part; NULL: part p on device p */
    int halo;               /* halo rows a side, exchanged every HALO steps; 0: 1 */
    int time_block;         /* steps per pass over memory, at most HALO; 0: auto */
    long long steps;        /* steps of a run, where passes end; 0: unbounded */
    /* nccl: the communicator's id, the same in every process that holds
     * parts (mgpu_nccl_id_create in one, handed to the others); NULL where
     * this process holds every part, which then makes one itself. */
    const struct mgpu_nccl_id *nccl_id;
} mgpu_stencil_desc;


typedef struct mgpu_stencil mgpu_stencil;

/* The steps per pass that --time-block=TIME_BLOCK (0: auto) gives with
 * --halo=HALO: at most HALO, as a pass never crosses an exchange; auto
 * takes up to 4, where the blocked kernels gain most (doc/kernels.md). */
int mgpu_time_block_resolve(int time_block, int halo);
/* A run's halo exchanges: one every HALO steps, none when no part has a
 * neighbour (one device, pattern2d). */
long long mgpu_exchanges_per_run(mgpu_kernel kernel, int devices, long long steps, int halo);

/* Allocate each local part's two buffers (slab plus HALO halo rows a side),
 * its stream and what the exchange needs; enable peer access where the
 * mode uses it.  A mode the devices cannot do is MGPU_ERR_USAGE. */
mgpu_status mgpu_stencil_create(mgpu_stencil **stencil, const mgpu_stencil_desc *desc);
void mgpu_stencil_destroy(mgpu_stencil *stencil);

mgpu_exchange mgpu_stencil_exchange_mode(const mgpu_stencil *stencil);
const mgpu_slab *mgpu_stencil_slab(const mgpu_stencil *stencil, int part);
/* The device of PART (its slab's). */
int mgpu_stencil_device(const mgpu_stencil *stencil, int part);
mgpu_stream *mgpu_stencil_stream(const mgpu_stencil *stencil, int part);
/* The buffer that holds the field before step STEP (buffers alternate). */
float *mgpu_stencil_buffer(const mgpu_stencil *stencil, int part, long long step);
size_t mgpu_stencil_pitch(const mgpu_stencil *stencil, int part);
/* Bytes of device memory each part holds. */
size_t mgpu_stencil_part_bytes(const mgpu_stencil *stencil, int part);

/* Load the initial field into PART (both buffers, boundary included).
 * Returns when done.  Sets the device itself. */
mgpu_status mgpu_stencil_reset(mgpu_stencil *stencil, int part);

/* One step is, for every part: send, then (once every part has sent) recv,
 * then compute.  Send publishes PART's edge rows of the field before STEP
 * towards its neighbours' halos; recv completes PART's halos; compute
 * launches the step on PART's stream, writing the other buffer.  A strategy
 * that runs parts concurrently puts a barrier between send and recv. */
/* With HALO = K > 1, send and recv act at steps that are multiples of K and
 * move K rows a side; the steps between compute the rows still valid (the
 * trapezoid), TIME_BLOCK steps a pass: compute at the first step of a pass
 * launches it, at the others only checks for an injected fault.  Every step
 * is still issued, so strategies loop over steps as before. */
mgpu_status mgpu_stencil_send(mgpu_stencil *stencil, int part, long long step);
mgpu_status mgpu_stencil_recv(mgpu_stencil *stencil, int part, long long step);
mgpu_status mgpu_stencil_compute(mgpu_stencil *stencil, int part, long long step);
/* A thread that issues the sends of several parts (mgpu-single, -streams)
 * brackets them: in mode nccl their transfers then go out as one NCCL group,
 * which one thread driving several devices needs (a part's transfer waits
 * for its neighbour's, which the thread would issue only afterwards).  In
 * the other modes nothing.  Every begin is ended, after a failure too. */
mgpu_status mgpu_stencil_send_begin(mgpu_stencil *stencil);
mgpu_status mgpu_stencil_send_end(mgpu_stencil *stencil);
/* Compute only slab rows [R0, R1) (global row numbers) on STREAM. */
mgpu_status mgpu_stencil_compute_rows(mgpu_stencil *stencil, int part, long long step,
                                      long long r0, long long r1, mgpu_stream *stream);
mgpu_status mgpu_stencil_synchronize(mgpu_stencil *stencil, int part);
/* After a failure, before waiting for anything: stop the work on the local
 * parts' streams that may wait for a part that will never send (mode nccl:
 * every communicator is aborted, ncclCommAbort), so that synchronizing and
 * destroying return.  The domain can only be destroyed after.  Nothing in
 * the other modes.  mgpu_stencil_destroy does it itself when a part's
 * stream is still busy. */
void mgpu_stencil_abort(mgpu_stencil *stencil);

/* For strategies that move halos themselves (between processes or ranks):
 * a row of PART's field before STEP, nx floats of device memory.  FIRST and
 * LAST are its first and last interior rows (what it sends), HALO_TOP and
 * HALO_BOTTOM the rows its neighbours fill. */
typedef enum mgpu_row {
    MGPU_ROW_FIRST,
    MGPU_ROW_LAST,
    MGPU_ROW_HALO_TOP,
    MGPU_ROW_HALO_BOTTOM
} mgpu_row;
float *mgpu_stencil_row(const mgpu_stencil *stencil, int part, long long step, mgpu_row row);
/* With --halo=K an exchange moves K rows each way, one contiguous block:
 * FIRST's block is the first K interior rows, LAST's the last K, HALO_TOP's
 * and HALO_BOTTOM's the K halo rows (with K = 1, the row itself).
 * mgpu_stencil_block: where ROW's block of PART's field before STEP starts;
 * mgpu_stencil_block_offset: where it lies in either of PART's buffers, in
 * floats from its start (for a buffer that another process maps, held by
 * no local part); mgpu_stencil_block_bytes: a block's bytes from its first
 * float to its last used one, what a copy of it moves (rows padded, see
 * mgpu_stencil_pitch); mgpu_block_bytes: the same for a grid of NX columns,
 * known before any domain is made. */
float *mgpu_stencil_block(const mgpu_stencil *stencil, int part, long long step, mgpu_row row);
size_t mgpu_stencil_block_offset(const mgpu_stencil *stencil, int part, mgpu_row row);
size_t mgpu_stencil_block_bytes(const mgpu_stencil *stencil);
size_t mgpu_block_bytes(long long nx, int halo);
/* Whether STEP exchanges halos (a multiple of --halo), and the parity of
 * that exchange (0, 1, 0, ... for the exchanges of a run). */
int mgpu_stencil_exchanges_at(const mgpu_stencil *stencil, long long step);
int mgpu_stencil_exchange_parity(const mgpu_stencil *stencil, long long step);
/* Which of a part's two buffers (0 or 1) holds the field before STEP: the
 * parity of the passes before it (mgpu_stencil_buffer(.., 0) is buffer 0,
 * (.., 1) buffer 1). */
int mgpu_stencil_buffer_index(const mgpu_stencil *stencil, long long step);
/* Whether a part's passes overwrite the edge rows it sent at an exchange
 * before the next one (more than one pass between exchanges: a time block
 * below --halo): a neighbour that reads them from its memory must have read
 * them before the second pass. */
int mgpu_stencil_rewrites_edges(const mgpu_stencil *stencil);
/* The part whose rows fill PART's top halo (its LAST row) or bottom halo
 * (its FIRST row), or -1 where that halo is a fixed boundary. */
int mgpu_stencil_above(const mgpu_stencil *stencil, int part);
int mgpu_stencil_below(const mgpu_stencil *stencil, int part);

/* Copy PART's interior rows of the field after STEPS steps into the full
 * host FIELD (nx*ny floats), and the outer row beside them where the part
 * is the first or the last.  Sets the device itself. */
mgpu_status mgpu_stencil_gather(mgpu_stencil *stencil, int part, long long steps, float *field);
/* The same rows alone into ROWS, nx floats apart, the slab's first row at
 * ROWS: for a process that holds one part of a field gathered elsewhere. */
mgpu_status mgpu_stencil_gather_rows(mgpu_stencil *stencil, int part, long long steps,
                                     float *rows);
/* Every part this process holds gathered into FIELD, and the outer rows
 * made (mgpu_field_fill_halo_rows): the final field a strategy that holds
 * all parts leaves in mgpu_run's FIELD. */
mgpu_status mgpu_stencil_gather_all(mgpu_stencil *stencil, long long steps, float *field);

/* ------------------------------------------------- NCCL (lib/nccl.c) */

/* Exchange mode nccl: each part is rank PART of one NCCL communicator of
 * all the parts, whichever process holds it, so the same stencil domain
 * serves one process (a communicator per device) and several (mgpu-fork's
 * workers, MPI ranks on any hosts).  mgpu_stencil_send issues a part's whole
 * exchange, its ncclSend of each edge block and ncclRecv into each halo block
 * (in place: the blocks are contiguous), as one group on the part's stream;
 * recv has nothing left to do, and no host waits inside a run.
 *
 * Processes that each hold some parts share the communicator's id: one makes
 * it (mgpu_nccl_id_create), hands its bytes to the others (shared memory,
 * MPI_Bcast), and every one names it in mgpu_stencil_desc.nccl_id.  Creating
 * the domain joins the communicator, so it waits until every process has.
 * The process that made the id serves that meeting from a thread of its
 * own, and must live until all have joined.
 *
 * NVLink multicast (NVLS) is never used: before the first id or
 * communicator, NCCL_NVLS_ENABLE=0 is set where the environment leaves it
 * unset (multicast objects can take a shared machine's GPUs out of service,
 * and send/recv has no use for them). */
#define MGPU_NCCL_ID_BYTES 128
typedef struct mgpu_nccl_id {
    unsigned char bytes[MGPU_NCCL_ID_BYTES];
} mgpu_nccl_id;

/* 1 when this build has NCCL (configure --with-nccl). */
int mgpu_nccl_built(void);
/* Whether --exchange=nccl can run here: MGPU_ERR_USAGE, with a line that
 * says what is missing, in a build without NCCL or on the host backend
 * (whose devices have no device memory to share). */
mgpu_status mgpu_nccl_check(void);
/* A new communicator id (ncclGetUniqueId).  It makes no CUDA call, so a
 * parent may make it before it forks the workers that use it. */
mgpu_status mgpu_nccl_id_create(mgpu_nccl_id *id);

/* ------------------------------------------------------ fault injection */

/* MGPU_INJECT_FAULT=STEP:DEVICE makes worker DEVICE fail at step STEP.
 * Returns MGPU_ERR_FAULT (with a message) when PART must fail at STEP. */
mgpu_status mgpu_fault_check(int part, long long step);
/* mgpu_fault_check for every part below NPARTS and every step of [FIRST,
 * FIRST+COUNT): for work issued ahead as a whole, a graph's replay. */
mgpu_status mgpu_fault_check_steps(int nparts, long long first, long long count);
/* Before any run: MGPU_ERR_USAGE, naming the variable, when the fault asked
 * for is malformed or can never fire in a run of NDEVICES devices and
 * STEPS steps. */
mgpu_status mgpu_fault_validate(int ndevices, long long steps);

/* ------------------------------------- workers that meet at barriers */

/* Worker threads that step together through barriers (mgpu-pthread,
 * mgpu-openmp) share one mgpu_failure.  A worker that fails neither leaves
 * nor is cancelled, since the others would then wait for it forever at the
 * next barrier: it records the failure and keeps arriving, and after the
 * next barrier every worker sees the failure and all leave together.
 *
 * All must decide alike, so the barriers are numbered in the order every
 * worker passes them.  A failure is recorded with the number of the next
 * barrier its worker reaches, and a worker asks about the barrier it has
 * just passed: when a fast worker fails after barrier K while a slow one
 * has not yet asked about K, the slow one does not see that failure (and
 * leave) early, and all see it after barrier K+1, which everyone reaches.
 *
 * Worker processes (mgpu-fork) share one in memory they all map, each
 * recording its failure before barrier 0 and the parent reading the first
 * once they have ended; a worker killed while recording leaves none. */
typedef struct mgpu_failure {
    long long barrier;  /* before which the first failure happened; read and
                           written atomically; above every barrier while none
                           (LLONG_MAX) or while being recorded */
    mgpu_status status;
    char message[512];
} mgpu_failure;

void mgpu_failure_init(mgpu_failure *failure);
/* Record STATUS, with this thread's mgpu_last_error(), as a failure before
 * barrier BARRIER.  The first failure recorded is kept. */
void mgpu_failure_record(mgpu_failure *failure, mgpu_status status, long long barrier);
/* After passing barrier BARRIER: 1 when some worker failed before it. */
int mgpu_failure_before(const mgpu_failure *failure, long long barrier);
/* In the thread that reports, once the workers are done: the first failure's
 * status (MGPU_OK when none), its message made this thread's
 * mgpu_last_error(), which mgpu_main prints. */
mgpu_status mgpu_failure_status(const mgpu_failure *failure);

/* A program's own failure (an operating-system call, a combination of
 * options the common parser cannot judge): the message becomes this
 * thread's mgpu_last_error() and STATUS is returned. */
mgpu_status mgpu_error_set(mgpu_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ------------------------------------------------------------ timing */

/* Seconds on a monotonic clock. */
double mgpu_now(void);

typedef struct mgpu_stats {
    double median, min, max;
} mgpu_stats;
/* Median, min and max of N samples (sorted in place). */
mgpu_stats mgpu_stats_of(double *samples, int n);

/* Device-to-device copy bandwidth of DEVICE (host: memcpy), bytes read plus
 * bytes written per second, median of a few copies of BYTES. */
mgpu_status mgpu_copy_bandwidth(int device, size_t bytes, double *gbps);

/* -------------------------------------------------------- command line */

/* --verify: against what a run's field is checked (doc/design.md section 5). */
#define MGPU_VERIFY_MAP(X)                                                              \
    X(AUTO, "auto")                                                                     \
    X(CPU, "cpu")                                                                       \
    X(DEVICE, "device")                                                                 \
    X(NONE, "none")

typedef enum mgpu_verify {
#define MGPU_VERIFY_VALUE_(suffix, name) MGPU_VERIFY_##suffix,
    MGPU_VERIFY_MAP(MGPU_VERIFY_VALUE_)
#undef MGPU_VERIFY_VALUE_
} mgpu_verify;
extern const char *const mgpu_verify_names[];

#define MGPU_FORMAT_MAP(X)                                                              \
    X(TABLE, "table")                                                                   \
    X(CSV, "csv")                                                                       \
    X(JSON, "json")

typedef enum mgpu_format {
#define MGPU_FORMAT_VALUE_(suffix, name) MGPU_FORMAT_##suffix,
    MGPU_FORMAT_MAP(MGPU_FORMAT_VALUE_)
#undef MGPU_FORMAT_VALUE_
} mgpu_format;
extern const char *const mgpu_format_names[];

/* --bind: where each worker runs (lib/bind.c, doc/design.md section 3). */
#define MGPU_BIND_MAP(X)                                                                \
    /* on the CPUs nearest its device (host backend: a share of the CPUs of its own) */ \
    X(AUTO, "auto")                                                                     \
    X(NONE, "none") /* where the operating system puts it */

typedef enum mgpu_bind {
#define MGPU_BIND_VALUE_(suffix, name) MGPU_BIND_##suffix,
    MGPU_BIND_MAP(MGPU_BIND_VALUE_)
#undef MGPU_BIND_VALUE_
} mgpu_bind;
extern const char *const mgpu_bind_names[];

/* --progress: a line of progress on stderr while the runs go (lib/progress.c). */
#define MGPU_PROGRESS_MAP(X)                                                            \
    X(AUTO, "auto") /* when stderr is a terminal */                                     \
    X(ALWAYS, "always")                                                                 \
    X(NEVER, "never")

typedef enum mgpu_progress_when {
#define MGPU_PROGRESS_VALUE_(suffix, name) MGPU_PROGRESS_##suffix,
    MGPU_PROGRESS_MAP(MGPU_PROGRESS_VALUE_)
#undef MGPU_PROGRESS_VALUE_
} mgpu_progress_when;
extern const char *const mgpu_progress_names[];

typedef struct mgpu_options {
    long long nx, ny, steps;
    int devices;            /* 0: every device (host backend: 2) */
    mgpu_backend backend;
    mgpu_kernel kernel;
    mgpu_exchange exchange;
    mgpu_verify verify;
    int repeat, warmup;
    mgpu_format format;
    uint64_t seed;
    int baseline;           /* also time one device, for speedup */
    int header;             /* csv: print the header line */
    mgpu_bind bind;
    mgpu_progress_when progress;
    int halo;               /* halo rows a side, exchanged every HALO steps */
    int time_block;         /* steps per pass over memory; 0: auto */
} mgpu_options;

/* An option of one program only: --NAME=VALUE.  With CHOICES (NULL-ended),
 * VALUE must be one of them and *VALUE gets its index; without, VALUE is an
 * integer in [MIN, MAX], or of KIND MGPU_EXTRA_SIZE a byte count in [MIN,
 * MAX] with an optional K, M, G or T (powers of 1024); of KIND
 * MGPU_EXTRA_FLAG, --NAME alone sets *VALUE to 1.  CHOICES with BARE, one
 * of them, also take --NAME alone, meaning --NAME=BARE (and --NAME CHOICE,
 * the value as the next word). */
enum { MGPU_EXTRA_VALUE = 0, MGPU_EXTRA_FLAG = 1, MGPU_EXTRA_SIZE = 2 };
typedef struct mgpu_extra_option {
    const char *name;
    const char *help;
    const char *const *choices;
    long long min, max;
    int kind; /* MGPU_EXTRA_VALUE, _FLAG or _SIZE */
    long long *value;
    const char *bare;
} mgpu_extra_option;

typedef struct mgpu_program {
    const char *name;       /* "mgpu-single" */
    const char *strategy;   /* "single-thread" */
    const char *summary;    /* one line for --help */
    unsigned exchanges;     /* modes it supports: MGPU_EXCHANGE_BIT set, as
                               MGPU_EXCHANGES_OF(MGPU_BY_...) */
    const mgpu_extra_option *extra; /* ended by a NULL name; may be NULL */
    int forks;              /* workers are processes: no CUDA here first */
    int binds_workers;      /* its workers bind themselves (mgpu_bind_worker);
                               else one thread drives every device, and
                               mgpu_main binds it near the first device */
    int deep_halo;          /* takes --halo and --time-block above 1 */
} mgpu_program;

/* Parse the command line into OPT (defaults first).  Returns -1 to go on,
 * or the exit code: 0 after --help or --version, 2 after a usage error,
 * whose one-line message names the option and what it accepts. */
int mgpu_options_parse(mgpu_options *opt, const mgpu_program *program, int argc, char **argv);
/* Whether every slab of NY rows on DEVICES devices holds --halo=HALO rows
 * of its own to send: a usage error naming --halo if not. */
mgpu_status mgpu_halo_check(int halo, long long ny, int devices);

/* The whole of TEXT as a decimal integer, into *NUMBER: 0; or EINVAL when
 * it is not one (empty, a blank first, text after it), ERANGE when it does
 * not fit, and *NUMBER is left alone.  What strtoll alone lets through
 * ("" as 0, "12x" as 12) is how a typo changes what a benchmark measures. */
int mgpu_parse_integer(const char *text, long long *number);

/* Print "PROGRAM: MESSAGE" on stderr, in the one-line form every error takes. */
void mgpu_error(const mgpu_program *program, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* --help within 80 columns (MGPU_HELP_WIDTH characters a line at most),
 * broken between words (a word longer than a line stays whole).  A
 * paragraph of TEXT; and an entry of an option list: "  OPTION", TEXT from
 * column 26 on (below OPTION when it is longer than 22), its further lines
 * indented as far, the form help2man reads. */
#define MGPU_HELP_WIDTH 79
void mgpu_help_text(FILE *out, const char *text);
void mgpu_help_line(FILE *out, const char *option, const char *text);

/* Called first by a program that prints its result on stdout: a standard
 * descriptor that is closed gets /dev/null opened so that writes to it
 * still fail, and no file the program opens later takes its place. */
void mgpu_stdout_guard(void);

/* Flush OUT after printing WHAT ("the record") there.  MGPU_ERR_SYSTEM,
 * with a message naming WHAT, when any of it could not be written; OUT's
 * error indicator is then cleared, so that the failure, reported once by
 * this status, is not reported again by mgpu_stdout_close. */
mgpu_status mgpu_output_flush(FILE *out, const char *what);

/* Called last, with the exit code CODE the program would return: flush and
 * close stdout.  When something printed there could not be written, one
 * line on stderr says so and the code becomes 1 (CODE itself when not 0). */
int mgpu_stdout_close(const mgpu_program *program, int code);

/* ------------------------------------------------------------ the record */

#define MGPU_RECORD_EXTRA 12

typedef struct mgpu_record_extra {
    const char *key;
    char text[64];      /* used when !is_number */
    double number;
    int is_number;
} mgpu_record_extra;

typedef struct mgpu_record {
    const char *program, *strategy;
    mgpu_backend backend;
    const char *backend_reason;
    mgpu_kernel kernel;
    mgpu_exchange exchange;
    int devices;
    long long nx, ny, steps;
    int repeats;
    int halo, time_block;  /* --halo; steps per pass as resolved */
    long long exchanges;   /* halo exchanges per run; <0: not known */
    mgpu_stats time;       /* seconds for all steps */
    double exchange_s;     /* the same steps with exchanges only; <0: not measured */
    double copy_gbps;      /* copy ceiling of the devices used; 0: not measured */
    double baseline_s;     /* one device, same run; 0: not measured */
    /* Where a step's time goes, seconds per step (<0: not measured): the
     * host issuing it, the host waiting (at barriers, for devices), and the
     * kernel of the largest part alone on its device. */
    double issue_step_s, wait_step_s, device_step_s;
    const char *verify;    /* "cpu", "device", "none" */
    int verified;          /* 1 passed, 0 failed, -1 not checked */
    double max_error;
    double tolerance;
    /* When the run began (mgpu_record_init), seconds since 1970 UTC; the
     * record prints it as an ISO 8601 UTC timestamp (doc/record.md). */
    long long started;
    /* Which CPUs each device's worker ran on (mgpu_record_set_binding). */
    char binding[2048];
    int nextra;
    mgpu_record_extra extra[MGPU_RECORD_EXTRA];
} mgpu_record;

/* Where and with what a run ran (doc/record.md): the names of its DEVICES
 * (on BACKEND cuda; "host" otherwise), the CUDA runtime and driver versions
 * (0 without CUDA), the host name, and STARTED (seconds since 1970) as an
 * ISO 8601 UTC time; a text that could not be found is empty. */
typedef struct mgpu_machine {
    char gpus[8 * 64]; /* "; " between the names */
    long long runtime; /* cudaRuntimeGetVersion */
    long long driver;  /* cudaDriverGetVersion */
    char hostname[256];
    char timestamp[32];
} mgpu_machine;
void mgpu_machine_find(mgpu_backend backend, int devices, long long started, mgpu_machine *m);

/* The version of the record's layout, its first field ("schema"); raised
 * when a field changes name, unit or meaning (doc/record.md). */
#define MGPU_RECORD_SCHEMA 1

/* Fill the common fields from OPT and stamp the start time; time and
 * verification stay unset. */
void mgpu_record_init(mgpu_record *record, const mgpu_program *program,
                      const mgpu_options *opt);
void mgpu_record_set_text(mgpu_record *record, const char *key, const char *text);
void mgpu_record_set_number(mgpu_record *record, const char *key, double number);
/* Print the record: a table of fields, a CSV line (after a header when
 * HEADER), or one JSON object, and flush OUT (mgpu_output_flush: an error
 * when the record could not all be written). */
mgpu_status mgpu_record_print(const mgpu_record *record, mgpu_format format, int header,
                              FILE *out);
/* Text as the record writes it, for programs that write their own CSV and
 * JSON: one CSV cell, quoted as RFC 4180 asks when it must be; a JSON
 * string, quotes, backslashes and control characters escaped, other bytes
 * (UTF-8) as they are. */
void mgpu_csv_text(const char *text, FILE *out);
void mgpu_json_string(const char *text, FILE *out);

/* ------------------------------------------- binding workers (lib/bind.c) */

/* What each device's worker got: its CPUs as read back after binding, in
 * the cpulist form ("0-15,32-47"), or "none (WHY)".  Plain bytes, so that
 * worker processes can write it in memory they share with their parent. */
#define MGPU_BIND_TEXT 256
typedef struct mgpu_binding {
    char cpus[MGPU_MAX_DEVICES][MGPU_BIND_TEXT];
} mgpu_binding;

/* In a worker, before it makes its device current: bind the calling thread
 * as BIND asks to the CPUs nearest DEVICE (CUDA: its NUMA node's, by hwloc
 * or sysfs; host backend: share DEVICE of WORKERS of the process's CPUs),
 * and write what it got into CPUS (MGPU_BIND_TEXT bytes; NULL: nowhere).
 * When OMP_PROC_BIND or OMP_PLACES is set, OpenMP's placement is kept and
 * only read back.  Never fails: what cannot be bound is not, and CPUS says
 * why. */
void mgpu_bind_worker(mgpu_bind bind, int device, int workers, char *cpus);
/* Give the calling thread back the CPUs the process started with. */
void mgpu_bind_release(void);
/* The record's binding field from BINDING's first record->devices entries
 * (doc/record.md). */
void mgpu_record_set_binding(mgpu_record *record, const mgpu_binding *binding);

/* ------------------------------------------------------- verification */

/* Verify the FIELD a run produced against its reference, as OPT asks:
 * cpu (the C reference), device (one device of this build), or auto (cpu
 * for small problems, device otherwise).  Fills record->verify, verified,
 * max_error and tolerance.  MGPU_ERR_VERIFY when it differs. */
mgpu_status mgpu_verify_field(const float *field, const mgpu_options *opt, mgpu_record *record);

/* ------------------------------------------------------ program harness */

/* What the harness asks of a strategy: run opt->steps steps of the grid on
 * NDEVICES devices, WARMUP times untimed and then REPEATS times, each time
 * from the initial field, and put the seconds of each timed run (from the
 * first step to the end of the last, devices synchronised) in SECONDS.  With
 * COMPUTE 0 the kernels are left out (the exchanges alone).  When FIELD is
 * not NULL, leave the final field there (nx*ny floats, outer rows too); in
 * a process of a group (mgpu_group_main), only its own part: the interior
 * rows of slab RANK of mgpu_decompose's NDEVICES, nx floats apart. */
typedef struct mgpu_run {
    const mgpu_options *opt;
    int ndevices;
    int compute;
    int warmup, repeats;
    double *seconds;
    /* Of each timed run, the seconds the host spent waiting inside it (at
     * barriers, for devices), averaged over the threads or processes that
     * drove it; the rest of the run's time it spent issuing work.  Left
     * negative by a strategy that does not tell. */
    double *waited;
    float *field;
    mgpu_record *record; /* for the strategy's own fields */
    /* Where each device's worker writes what mgpu_bind_worker got; NULL
     * when nobody reads it (the runs not reported). */
    mgpu_binding *binding;
    /* Where the strategy tells how far it got (mgpu_progress_run, _step);
     * NULL in runs nobody watches. */
    struct mgpu_progress *progress;
} mgpu_run;

typedef mgpu_status (*mgpu_strategy_fn)(void *ctx, mgpu_run *run);

/* ------------------------------------------ progress on stderr (progress.c) */

/* A long run shows how far it got on one line of stderr, redrawn in place
 * (a carriage return) a few times a second: the run and the step, steps a
 * second, the time left.  The harness opens a phase of runs (the timed runs,
 * the exchanges alone, one device), the strategy says when each run begins
 * and how many steps it has issued, from the thread or process that drives
 * part 0.  The steps told are those issued: on a GPU the host may be ahead
 * of the devices by what their queues hold, until each run's end waits.
 * Every call takes NULL, and does nothing when progress is off.  The
 * fields are the library's. */
typedef struct mgpu_progress {
    FILE *out;
    int on;
    long long steps;    /* a run's */
    double cells;       /* interior cells of the grid */
    const char *what;   /* the phase: NULL for the runs the record is about */
    int warmup, runs, compute;
    int run;            /* the run going, -1 before the first */
    long long base;     /* steps of the phase's earlier runs */
    long long next;     /* look at the clock once the phase has this many */
    double start, drawn; /* the phase's first run began; the line was drawn */
    int width;          /* of the line on the screen, 0: none */
} mgpu_progress;

/* On as OPT->progress asks (auto: when OUT is a terminal). */
void mgpu_progress_init(mgpu_progress *progress, const mgpu_options *opt, FILE *out);
/* A phase of WARMUP + REPEATS runs, called WHAT (NULL: the runs the record
 * is about); COMPUTE 0 when they leave the kernels out. */
void mgpu_progress_begin(mgpu_progress *progress, const char *what, int warmup, int repeats,
                         int compute);
/* Run R of the phase (from 0, the warm-up runs first) begins. */
void mgpu_progress_run(mgpu_progress *progress, int run);
/* DONE steps of the run are issued.  Costs a comparison: the clock is read
 * only every so many steps, as many as take about a twentieth of a second. */
void mgpu_progress_step(mgpu_progress *progress, long long done);
/* A stage without steps, such as the verification, shown at once. */
void mgpu_progress_note(mgpu_progress *progress, const char *what);
/* Clear the line, before the record or an error is printed. */
void mgpu_progress_end(mgpu_progress *progress);
/* The line is drawn by another process (mgpu-fork's worker 0, which may be
 * killed before it can clear it): this one's end blanks a whole line. */
void mgpu_progress_elsewhere(mgpu_progress *progress);

/* The whole program around a strategy: parse the command line, choose the
 * backend, check the request, time the run (and its exchanges alone, and
 * one device when --baseline), measure the copy ceiling, verify, print the
 * record, and close stdout checked (mgpu_stdout_close).  Returns the exit
 * code: 0, 1 (failure, wrong result, lost record), 2 (usage).
 * With FORKS set, no CUDA call happens in this process before the strategy
 * has run (it forks workers), and the ceiling and verification come last. */
int mgpu_main(const mgpu_program *program, int argc, char **argv, mgpu_strategy_fn strategy,
              void *ctx);

/* A program run by a group of processes, one device each (mgpu-mpi's ranks
 * under mpirun), that meet through a transport of the program's own: each
 * process runs mgpu_group_main, which goes through mgpu_main's phases in
 * every one of them, together.  Process 0 alone prints (an error of the
 * command line, --help, the progress line, the record); a run takes as
 * long as its slowest process; each process's part of the final field is
 * gathered on process 0, which verifies it.  A process that cannot start
 * does not leave the others waiting: all learn it, the lowest such says
 * why, and all return its exit code.  A process that fails once the runs
 * began ends the whole group (ABORT), since the others may wait for it.
 * The calls below are collective (every process makes each, in the same
 * order) and do not return on a failure of the transport. */
typedef enum mgpu_group_op { MGPU_GROUP_MIN, MGPU_GROUP_MAX, MGPU_GROUP_SUM } mgpu_group_op;

typedef struct mgpu_group {
    int rank, ranks;    /* this process, of RANKS; part RANK of the grid */
    const char *where;  /* how this process names itself in a failure of its
                           own, not of the command line: "rank 1 on node7" */
    /* The device whose copy ceiling this process measures, one term of the
     * record's sum; -1 when another process measures its device.  PREPARE
     * sets it. */
    int ceiling_device;
    void *ctx;          /* passed to every call */
    /* Not collective: once the options are parsed, check them against the
     * group, choose the backend (mgpu_init) and this process's device, and
     * make it current. */
    mgpu_status (*prepare)(void *ctx, const mgpu_options *opt);
    /* VALUES[0..N) combined by OP over the processes, into every one's. */
    void (*combine)(void *ctx, mgpu_group_op op, double *values, int n);
    /* *VALUE of process ROOT into every process's. */
    void (*broadcast)(void *ctx, int *value, int root);
    /* BYTES at MINE from every process into ALL on process 0, in rank order
     * (ALL is ignored elsewhere). */
    void (*gather)(void *ctx, const void *mine, size_t bytes, void *all);
    /* Each process's part of the field, the interior rows of SLABS[rank]
     * at ROWS, nx floats apart, into FIELD (nx*ny floats) on process 0. */
    void (*gather_rows)(void *ctx, const float *rows, const mgpu_slab *slabs, long long nx,
                        float *field);
    /* After the last phase of runs, before the copy ceiling: free what the
     * processes kept from one phase to the next (NULL: nothing). */
    mgpu_status (*release)(void *ctx);
    /* End every process of the group now, with exit code CODE. */
    void (*abort)(void *ctx, int code);
} mgpu_group;

/* mgpu_main in each process of GROUP (mgpu_stdout_guard is the program's
 * to call, before its transport opens files).  STRATEGY is called in every
 * process for each phase of runs; with RUN->ndevices below the group's
 * size (the one-device baseline), the processes beyond it have no part and
 * return at once.  Returns the exit code, the same in every process. */
int mgpu_group_main(const mgpu_program *program, const mgpu_group *group, int argc,
                    char **argv, mgpu_strategy_fn strategy, void *ctx);

/* Sum of the copy bandwidths of devices 0..NDEVICES-1 (host backend: one
 * copy on all cores, since host "devices" share one memory) for a grid of
 * FIELD_BYTES per buffer, on buffers that leave the caches (ceiling.c says
 * how large); 0 (not measured) when the grid fits in the cache, or memory
 * cannot hold buffers large enough on some device. */
mgpu_status mgpu_copy_ceiling(int ndevices, size_t field_bytes, double *gbps);

/* ------------------------------------- devices in several processes (mpi) */

/* The copy bandwidth of DEVICE alone, one term of mgpu_copy_ceiling's sum
 * (host backend: the one copy), for a program whose devices are driven by
 * several processes, each measuring its own; 0 when not measured, which
 * makes the sum not measured too. */
mgpu_status mgpu_copy_ceiling_device(int device, size_t field_bytes, double *gbps);

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
typedef mgpu_status (*mgpu_pipeline_fn)(void *arg, const float *d_in, float *d_out,
                                        long long row0, long long nrows, size_t pitch,
                                        mgpu_stream *stream);

typedef struct mgpu_pipeline_desc {
    int device;
    long long nx;        /* floats used in a row */
    size_t host_pitch;   /* floats between rows of the host buffers (>= nx) */
    long long rows;      /* output rows of the block */
    int halo;            /* input rows needed above and below an output row */
    int chunks;          /* 1..rows; rows are shared as evenly as possible */
    int streams;         /* chunk c goes on stream c % streams */
    mgpu_pipeline_fn fn;
    void *arg;           /* passed to fn */
} mgpu_pipeline_desc;

typedef struct mgpu_pipeline mgpu_pipeline;

/* Create the streams and, per stream, a device input buffer (largest chunk
 * plus 2*halo rows) and output buffer, rows padded to 32 floats.  A desc out
 * of range is MGPU_ERR_USAGE with a message. */
mgpu_status mgpu_pipeline_create(mgpu_pipeline **pipeline, const mgpu_pipeline_desc *desc);

/* Run every chunk, pipelined, and return when all are done.  HOST_IN points
 * at input row 0; rows -halo .. rows-1+halo must exist.  Output rows
 * [0, rows) go to HOST_OUT, nothing else is written there.  The caller's
 * current device is left as it was. */
mgpu_status mgpu_pipeline_run(mgpu_pipeline *pipeline, const float *host_in, float *host_out);

/* The same chunks one after another on one stream, waiting after each stage,
 * for comparison; the seconds spent uploading, computing and downloading,
 * summed over the chunks, go to the pointers that are not NULL. */
mgpu_status mgpu_pipeline_run_serial(mgpu_pipeline *pipeline, const float *host_in,
                                     float *host_out, double *upload_s, double *compute_s,
                                     double *download_s);

void mgpu_pipeline_destroy(mgpu_pipeline *pipeline);

/* ------------------------------------ workers in processes (lib/procs.c) */

/* Page-lock BYTES of host memory at PTR that did not come from
 * mgpu_host_alloc, such as a mapping shared with other processes, so that
 * copies between it and a device are DMA and asynchronous on a stream
 * (cudaHostRegister).  Every process that copies registers it itself.  The
 * host backend has nothing to do. */
mgpu_status mgpu_host_register(void *ptr, size_t bytes);
void mgpu_host_unregister(void *ptr);

/* Initialise BARRIER, in memory that processes share (a MAP_SHARED mapping,
 * an MPI shared-memory window), for COUNT processes to wait at.  POSIX
 * barriers are there only when the feature macros ask for POSIX 2001 or
 * later (the C library's default; not -std=c11 alone). */
#if defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 200112L
mgpu_status mgpu_process_barrier_init(pthread_barrier_t *barrier, unsigned count);
#endif

/* CUDA IPC.  A handle is plain bytes naming one process's device memory or
 * event; another process receives it (through shared memory, a pipe, MPI)
 * and opens it.  The cuda backend only: a host-backend device's memory is
 * private to its process (MGPU_ERR_UNSUPPORTED). */
typedef struct mgpu_ipc_handle {
    unsigned char bytes[64];
} mgpu_ipc_handle;

/* The handle of PTR, the start of an mgpu_malloc allocation on DEVICE
 * (cudaIpcGetMemHandle). */
mgpu_status mgpu_ipc_memory_handle(int device, void *ptr, mgpu_ipc_handle *handle);
/* Map the memory that HANDLE names, made by another process, into this one
 * for DEVICE, the current device, enabling peer access to the owner's device
 * as needed (cudaIpcOpenMemHandle).  Needs peer access between the two
 * devices (mgpu_peer_can_access) when they differ. */
mgpu_status mgpu_ipc_memory_open(int device, const mgpu_ipc_handle *handle, void **ptr);
mgpu_status mgpu_ipc_memory_close(void *ptr);

/* An mgpu_event that other processes can wait for (cudaEventInterprocess,
 * no timing): made on DEVICE, with the HANDLE to pass on; or opened, with
 * DEVICE current, from another process's HANDLE.  It is recorded, waited
 * for and destroyed as any mgpu_event (mgpu_event_record,
 * mgpu_stream_wait_event, mgpu_event_destroy); streams of either process
 * wait for the most recent record made before the wait is issued.
 * Destroying an opened event closes it. */
mgpu_status mgpu_ipc_event_create(int device, mgpu_event **event, mgpu_ipc_handle *handle);
mgpu_status mgpu_ipc_event_open(int device, const mgpu_ipc_handle *handle, mgpu_event **event);

/* Halos between processes of one node through CUDA IPC (lib/ipc-halo.c),
 * for a strategy whose processes hold one part each of a stencil domain
 * (mgpu-fork's workers, mgpu-mpi's ranks).  Each part publishes its buffers
 * and events (an mgpu_ipc_part, plain bytes the strategy hands to every
 * other: shared memory, MPI) and opens its neighbours'; at each exchange
 * it pulls their edge blocks into its halos device to device, on its
 * stream, ordered by the events and by BARRIER, where every process meets
 * the others (lib/ipc-halo.c has the orders and why they hold).  A step
 * of part P is, in every process alike:
 *     if (mgpu_stencil_exchanges_at(st, step)) mgpu_ipc_halo_exchange(h, step);
 *     mgpu_stencil_compute(st, P, step);   (left out for the exchanges alone)
 *     mgpu_ipc_halo_computed(h, step);
 * and a run starts with every part reset, its device synchronised, and a
 * barrier.  The cuda backend only. */
typedef struct mgpu_ipc_part {
    int device;                /* of the part, as its process numbers devices */
    mgpu_ipc_handle buffer[2]; /* its two buffers */
    mgpu_ipc_handle done[2];   /* events: its passes of a cycle are done, by the
                                  parity of the exchange that ends the cycle */
    mgpu_ipc_handle pulled;    /* event: its pulls of an exchange are done */
} mgpu_ipc_part;

typedef struct mgpu_ipc_halo mgpu_ipc_halo;
/* Returns once every process of the domain has called it. */
typedef mgpu_status (*mgpu_barrier_fn)(void *ctx);

/* For PART of STENCIL, held by this process: its events, and its handles
 * into *MINE to publish.  After a failure *HALO, if not NULL, is to be
 * destroyed. */
mgpu_status mgpu_ipc_halo_create(mgpu_ipc_halo **halo, mgpu_stencil *stencil, int part,
                                 mgpu_barrier_fn barrier, void *ctx, mgpu_ipc_part *mine);
/* Once every part has published (PARTS, indexed by part): map the
 * neighbours' buffers and open their events.  A neighbour on a device this
 * one cannot reach is MGPU_ERR_USAGE. */
mgpu_status mgpu_ipc_halo_connect(mgpu_ipc_halo *halo, const mgpu_ipc_part *parts);
/* At an exchange step: the barrier, then the pulls, on the part's stream. */
mgpu_status mgpu_ipc_halo_exchange(mgpu_ipc_halo *halo, long long step);
/* After STEP's compute was issued (or left out): what orders the
 * neighbours' next pulls and passes. */
mgpu_status mgpu_ipc_halo_computed(mgpu_ipc_halo *halo, long long step);
/* After the last run: unmap the neighbours and meet them at the barrier,
 * after which the part's buffers may be freed. */
mgpu_status mgpu_ipc_halo_disconnect(mgpu_ipc_halo *halo);
/* Close whatever is open (also after a failure, without a barrier). */
void mgpu_ipc_halo_destroy(mgpu_ipc_halo *halo);

/* Worker processes (lib/supervise.c, book 10.2).  mgpu_workers_run forks N
 * workers, worker I running WORKER(CTX, I) and exiting with what it returns
 * (0: success), and watches them until all have ended.  Each dies with its
 * parent, whatever ends the parent.  When one ends badly (a status other
 * than 0, a signal) or SIGINT or SIGTERM comes, the others get SIGTERM,
 * and SIGKILL half a second later: nobody waits forever at a barrier.
 * MGPU_OK when every worker exited 0; MGPU_ERR_INTERRUPTED when a signal
 * came, which *INTERRUPTED then holds (a signal it already held stops the
 * new workers at once); MGPU_ERR_SYSTEM naming the first bad end (a fork
 * that failed, a worker that was killed or exited with a status).  A
 * worker that can say why it failed records it where the parent can read
 * it (an mgpu_failure in shared memory).  Make no CUDA context before: a
 * child does not inherit it, and the CUDA runtime is not fork-safe. */
typedef int (*mgpu_worker_fn)(void *ctx, int index);
mgpu_status mgpu_workers_run(int n, mgpu_worker_fn worker, void *ctx, int *interrupted);

/* ------------------------- measuring copies (lib/measure.c, lib/peer.c) */

/* What mgpu-p2p needs to time copies honestly: a pattern that proves every
 * byte of a copy arrived, a spin that holds a stream while the host queues
 * the timed copies, and the staged path queued on streams. */

/* The "device" of host memory (pinned or pageable) for the pattern calls. */
#define MGPU_HOST_MEMORY (-1)

/* Fill BYTES at PTR with bytes OFFSET.. of the pattern of SEED.  PTR and
 * OFFSET are 4-byte aligned; PTR is memory of DEVICE, filled by a kernel on
 * STREAM (a stream of DEVICE, or NULL for its default stream; DEVICE must
 * be current), or host memory (MGPU_HOST_MEMORY), filled at once.  At the
 * same offset, two different seeds differ in every 32-bit word. */
mgpu_status mgpu_pattern_fill(int device, void *ptr, size_t bytes, uint32_t seed,
                              uint64_t offset, mgpu_stream *stream);

typedef struct mgpu_pattern_result {
    unsigned long long wrong; /* bytes that differ from the pattern */
    unsigned long long first; /* offset from PTR of the first of them */
    unsigned char expected, found;
} mgpu_pattern_result;

/* Compare BYTES at PTR with bytes OFFSET.. of the pattern of SEED, after
 * the work queued on STREAM (device memory: DEVICE current, checked by a
 * kernel; only the result crosses to the host).  PTR and OFFSET are 4-byte
 * aligned.  MGPU_OK when the check ran; RESULT says what it found. */
mgpu_status mgpu_pattern_check(int device, const void *ptr, size_t bytes, uint32_t seed,
                               uint64_t offset, mgpu_stream *stream,
                               mgpu_pattern_result *result);

/* Queue a kernel on STREAM (its device current) that spins for
 * MICROSECONDS: work queued behind it starts only when it ends, so a timed
 * batch queued meanwhile runs back to back, free of the host's launch gaps.
 * Nothing on the host backend, whose streams run eagerly. */
mgpu_status mgpu_stream_spin(mgpu_stream *stream, double microseconds);

/* What the driver says of the link from DEVICE to PEER
 * (cudaDeviceGetP2PAttribute); all -1 on the host backend. */
typedef struct mgpu_peer_link {
    int access;           /* peer access is possible */
    int performance_rank; /* relative performance of the link, 0 the best */
    int native_atomics;   /* atomics over the link: NVLink offers them, PCIe not */
} mgpu_peer_link;
mgpu_status mgpu_peer_link_get(int device, int peer, mgpu_peer_link *link);

/* How DEVICE and PEER are linked (lib/nvml.c).  From NVML, the driver's
 * management library, loaded at run time where there is one: the NVLinks
 * between them and their common PCIe ancestor.  Where NVML cannot be
 * loaded or does not know the devices, a guess from mgpu_peer_link_get
 * (native atomics mean NVLink), labelled as such; on the host backend
 * nothing is known.  Only a bad device number is an error. */
typedef enum mgpu_link_source {
    MGPU_LINK_UNKNOWN, /* the host backend, or one device */
    MGPU_LINK_GUESS,   /* native atomics: NVLink, else PCIe */
    MGPU_LINK_NVML
} mgpu_link_source;

typedef struct mgpu_link_info {
    mgpu_link_source source;
    const char *type;      /* "NVLink", "NVSwitch" (NVLinks to a switch both
                              devices reach), "PCIe"; NULL when unknown */
    int nvlinks;           /* active NVLinks from DEVICE to PEER, through a
                              switch the fewer of the two sides'; -1 unknown */
    const char *pcie_path; /* their common PCIe ancestor as nvidia-smi topo
                              names it: PIX, PXB, PHB, NODE, SYS (BOARD: one
                              board); NULL when unknown */
    char why[192];         /* where not from NVML: why not */
} mgpu_link_info;

mgpu_status mgpu_link_query(int device, int peer, mgpu_link_info *info);
/* "unknown", "guess", "nvml" */
const char *mgpu_link_source_name(mgpu_link_source source);

/* mgpu_copy_staged queued on streams: SRC to pinned STAGING on FROM (a
 * stream of SRC_DEVICE), EVENT (of SRC_DEVICE) recorded after it, and
 * STAGING to DST on TO (a stream of DST_DEVICE) once EVENT has happened.
 * Returns at once; the host backend copies at once. */
mgpu_status mgpu_copy_staged_async(void *dst, int dst_device, const void *src, int src_device,
                                   size_t bytes, void *staging, mgpu_stream *from,
                                   mgpu_stream *to, mgpu_event *event);

/* ------------------------------ streams: graphs, the progress monitor (mgpu-streams) */

/* Whether the work issued on STREAM so far has finished (*DONE 1) or not yet
 * (0), without waiting.  A kernel that failed is reported as its error.  The
 * host backend's streams are always done. */
mgpu_status mgpu_stream_query(mgpu_stream *stream, int *done);

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
mgpu_status mgpu_stencil_capture_steps(mgpu_stencil *stencil, int nparts, long long k,
                                       int compute, mgpu_graph **graph);
mgpu_status mgpu_stencil_replay(mgpu_stencil *stencil, int nparts, mgpu_graph *graph);

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
    int stop;                         /* nonzero: every kernel leaves soon */
    int failed_part;                  /* the part that stopped the run, + 1 */
    long long failed_step;
    int progress[MGPU_MAX_DEVICES];   /* steps finished, as the monitors saw */
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
    int compute;             /* 0: exchange halos only */
    long long fail_step;     /* stop the run at this step (MGPU_INJECT_FAULT);
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

/* The stream pipeline's run in two halves (lib/pipeline.c), so that one host
 * thread keeps several devices' pipelines going at once: start issues every
 * chunk and returns, wait returns once they are done.  Start leaves the
 * caller's current device as it was; after a failure it has waited itself. */
mgpu_status mgpu_pipeline_start(mgpu_pipeline *pipeline, const float *host_in, float *host_out);
mgpu_status mgpu_pipeline_wait(mgpu_pipeline *pipeline);
/* Bytes of device memory a pipeline of DESC allocates, to be checked against
 * a budget before creating it. */
mgpu_status mgpu_pipeline_device_bytes(const mgpu_pipeline_desc *desc, size_t *bytes);

#ifdef __cplusplus
}
#endif

#endif /* MGPU_H */
