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
 *
 * This header is the core: status, names, backends, devices, memory,
 * streams, peer copies, kernels, the field, its decomposition and the
 * stencil domain.  Each further topic has a header of its own, under
 * mgpu/, that a program includes beside this one (as hwloc's users add
 * hwloc/cudart.h to hwloc.h):
 *     mgpu/harness.h      the program harness: command line, record,
 *                         binding, verification, progress, failures
 *     mgpu/processes.h    workers in processes, CUDA IPC, NCCL, a group
 *                         of processes (mgpu-mpi)
 *     mgpu/measurement.h  timing, copy bandwidth and ceilings, what
 *                         mgpu-p2p measures copies with
 *     mgpu/pipeline.h     the stream pipeline (book 11.1)
 *     mgpu/graph.h        CUDA graphs, the stencil's steps replayed from one
 *     mgpu/monitor.h      the progress monitor and its persistent kernel
 *                         (book 11.2)
 */
#ifndef MGPU_H
#define MGPU_H

#include <stddef.h>
#include <stdint.h>

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
#define MGPU_TRY(expr)                         \
    do {                                       \
        mgpu_status mgpu_try_status_ = (expr); \
        if (mgpu_try_status_ != MGPU_OK)       \
            return mgpu_try_status_;           \
    } while (0)

/* A program's own failure (an operating-system call, a combination of
 * options the common parser cannot judge): the message becomes this
 * thread's mgpu_last_error() and STATUS is returned. */
mgpu_status mgpu_error_set(mgpu_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

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

#define MGPU_BACKEND_MAP(X)                                        \
    X(AUTO, "auto") /* cuda where a device is usable, else host */ \
    X(CUDA, "cuda")                                                \
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
    double peak_gbps;   /* memory clock x bus width, 0 when unknown */
    size_t cache_bytes; /* the last cache before its memory: a GPU's L2, the
                           host's last-level cache; 0 when unknown */
    /* Which GPU it is, as nvidia-smi -L names it ("GPU-" and the UUID, in
     * lower-case hex) and its PCI address as lspci -D and sysfs write it
     * ("0000:1b:00.0"); empty on the host backend. */
    char uuid[48];
    char pci_bus_id[24];
} mgpu_device_info;

mgpu_status mgpu_device_count(int *count);
mgpu_status mgpu_device_info_get(int device, mgpu_device_info *info);
/* The device of this process that is the GPU named UUID (an
 * mgpu_device_info's uuid): *DEVICE its number, -1 where this process does
 * not see it (CUDA_VISIBLE_DEVICES) and on the host backend. */
mgpu_status mgpu_device_by_uuid(const char *uuid, int *device);

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
    MGPU_HOST_PINNED = 0,     /* page-locked host memory */
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

/* Signals: 32-bit counters in device memory (a peer's or another process's
 * mapped memory too) that streams write and wait for with no host in the
 * way (the driver's stream memory operations).  A write comes after the
 * stream's earlier work and makes that work's memory writes visible first,
 * as __threadfence_system does; a wait holds the stream's later work until
 * (int32_t)(*SIGNAL - VALUE) >= 0, a comparison that survives the counter
 * wrapping.  On the host backend, which runs work as it is issued, a wait
 * that is not already met would wait forever: MGPU_ERR_USAGE.
 * Data stored into a peer's memory and then signalled there is read after
 * the peer's wait: NVIDIA documents a flush for remote writes that arrive
 * unordered (CU_STREAM_WAIT_VALUE_FLUSH, used where the device offers it),
 * which concerns writes from other PCIe devices; between GPUs the writer's
 * fence completes its peer stores before the signal leaves, the pattern of
 * NVIDIA's own nvFuser (its CUDA-backend allgather: peer copies, a peer
 * signal, a local wait, no flush).  test-cuda-lib checks it between
 * devices 0 and 1, round after round. */
mgpu_status mgpu_stream_write_signal(mgpu_stream *stream, uint32_t *signal, uint32_t value);
mgpu_status mgpu_stream_wait_signal(mgpu_stream *stream, const uint32_t *signal, uint32_t value);

/* Whether the work issued on STREAM so far has finished (*DONE 1) or not yet
 * (0), without waiting.  A kernel that failed is reported as its error.  The
 * host backend's streams are always done. */
mgpu_status mgpu_stream_query(mgpu_stream *stream, int *done);

/* -------------------------------------------------------------- peer copies */

/* Whether DEVICE can read and write PEER's memory directly. */
mgpu_status mgpu_peer_can_access(int device, int peer, int *can);
/* Whether each of devices 0 to N-1 can reach the memory of every other:
 * *ALL 1 or 0; where not, PAIR (unless NULL) gets the first device and
 * peer that cannot. */
mgpu_status mgpu_peer_all(int n, int *all, int pair[2]);
/* Enable DEVICE's access to PEER's memory (idempotent). */
mgpu_status mgpu_peer_enable(int device, int peer);
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
mgpu_status mgpu_copy_device_to_device(void *dst, int dst_device, const void *src, int src_device,
                                       size_t bytes, void *staging, mgpu_copy_path *path);

/* The staged copy in chunks (lib/staged-copy.c): BYTES from the source
 * device's memory through BUFFERS pinned host buffers of CHUNK bytes into
 * the destination's, a chunk's host-to-device copy overlapping the next
 * one's device-to-host copy, so that a large copy takes about the time of
 * the slower direction instead of the sum of both.  A copy of one chunk or
 * less is mgpu_copy_staged's two copies; the gain starts at two chunks. */
#define MGPU_STAGED_CHUNK ((size_t) 4 << 20) /* the default chunk */
#define MGPU_STAGED_CHUNK_MAX ((size_t) 1 << 30)
#define MGPU_STAGED_BUFFERS 3 /* the default number of buffers */
#define MGPU_STAGED_BUFFERS_MAX 8
typedef struct mgpu_staged_copy mgpu_staged_copy;
/* The pinned buffers and events of staged copies from SRC_DEVICE to
 * DST_DEVICE: CHUNK bytes (0: MGPU_STAGED_CHUNK; at most
 * MGPU_STAGED_CHUNK_MAX) times BUFFERS (0: MGPU_STAGED_BUFFERS; 2 to
 * MGPU_STAGED_BUFFERS_MAX), else MGPU_ERR_USAGE. */
mgpu_status mgpu_staged_copy_create(int src_device, int dst_device, size_t chunk, int buffers,
                                    mgpu_staged_copy **copy);
void mgpu_staged_copy_destroy(mgpu_staged_copy *copy);
/* Queue the copy of BYTES from SRC to DST: the device-to-host copies on
 * FROM (a stream of the source device), the host-to-device copies on TO (a
 * stream of the destination), ordered by events, never by the host, which
 * this call does not wait for.  Work queued on TO afterwards sees DST
 * written; work queued on FROM afterwards runs once the last chunk has left
 * SRC (and may wait for TO, whose deliveries free the buffers).  Copies
 * through one COPY may be queued back to back.  Streams that are NULL or
 * of other devices: MGPU_ERR_USAGE.  The host backend copies at once. */
mgpu_status mgpu_staged_copy_async(mgpu_staged_copy *copy, void *dst, const void *src, size_t bytes,
                                   mgpu_stream *from, mgpu_stream *to);

/* ----------------------------------------------------------------- kernels */

#define MGPU_KERNEL_MAP(X)                                                \
    X(PATTERN2D, "pattern2d") /* the book's pattern2d; boundary ring 0 */ \
    /* 5-point Jacobi; left/right columns fixed, top/bottom periodic */   \
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
void mgpu_kernel_rows_host(mgpu_kernel kernel, const float *in, float *out, long long nx,
                           size_t pitch, long long r0, long long r1);

/* For a worker (thread or process) that runs host-backend kernels beside
 * WORKERS-1 others: its kernels take its share of the cores, not all of
 * them each.  Call it in the worker, before its first kernel. */
void mgpu_host_share_cores(int workers);

/* The same on a device, launched on STREAM (host backend: at once). */
mgpu_status mgpu_kernel_rows(mgpu_kernel kernel, const float *in, float *out, long long nx,
                             size_t pitch, long long r0, long long r1, mgpu_stream *stream);

/* mgpu_kernel_rows that also stores its first row (R0) into FIRST_TO and its
 * last (R1-1) into LAST_TO, each unless NULL: the neighbours' halo rows of the
 * buffer the step writes, which may be a peer's memory.  This is exchange mode
 * direct folded into the step: the halos travel without a launch of their
 * own.  Only the interior cells of those rows are stored. */
mgpu_status mgpu_kernel_rows_sending(mgpu_kernel kernel, const float *in, float *out, long long nx,
                                     size_t pitch, long long r0, long long r1, float *first_to,
                                     float *last_to, mgpu_stream *stream);

/* Temporal blocking: STEPS steps of rows [R0, R1) in one pass over memory.
 *
 * IN holds rows [R0-STEPS, R1+STEPS) at some step s; OUT gets the interior
 * columns (1 .. nx-2) of rows [R0, R1) at step s+STEPS, bit-identical to
 * STEPS calls of mgpu_kernel_rows_host, the first on rows
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
mgpu_status mgpu_kernel_rows_blocked_host(mgpu_kernel kernel, const float *in, float *out,
                                          long long nx, size_t pitch, long long r0, long long r1,
                                          int steps, unsigned fixed);
mgpu_status mgpu_kernel_rows_blocked(mgpu_kernel kernel, const float *in, float *out, long long nx,
                                     size_t pitch, long long r0, long long r1, int steps,
                                     unsigned fixed, mgpu_stream *stream);

/* Copy one row of N floats from SRC to DST with a kernel on STREAM's device;
 * either pointer may be a peer's memory or mapped host memory. */
mgpu_status mgpu_copy_row_kernel(float *dst, const float *src, long long n, mgpu_stream *stream);

/* ------------------------------------------------------------ the field */

/* The initial field for cell (i, j) of an NX x NY grid: deterministic from
 * SEED, values in [0,1) inside, the kernel's boundary on the edge. */
float mgpu_field_initial(mgpu_kernel kernel, long long nx, long long ny, long long i, long long j,
                         uint64_t seed);
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

/* The exchange modes: rows X(SUFFIX, "name").  AUTO stays first: every
 * program takes it and resolves it to one of the others.  A mode that only
 * some builds have (nccl) stays here in every build; the command line drops
 * it where it is not built (options.c), so that asking for it there says
 * what is missing.  Which modes a program offers is its own to say
 * (mgpu_program's exchanges). */
#define MGPU_EXCHANGE_MAP(X)                                                           \
    /* direct where every pair has peer access, staged otherwise (exchange.c) */       \
    X(AUTO, "auto")                                                                    \
    /* cudaMemcpyPeer */                                                               \
    X(PEER, "peer")                                                                    \
    /* cudaMemcpyPeerAsync on the part's stream */                                     \
    X(PEER_ASYNC, "peer-async")                                                        \
    /* through pinned host memory (fork: shared memory; mpi: host buffers) */          \
    X(STAGED, "staged")                                                                \
    /* a kernel writes the neighbour's halo */                                         \
    X(DIRECT, "direct")                                                                \
    /* through zero-copy mapped host memory */                                         \
    X(MAPPED, "mapped")                                                                \
    /* between processes: CUDA IPC */                                                  \
    X(IPC, "ipc")                                                                      \
    /* between ranks: MPI */                                                           \
    X(MPI, "mpi")                                                                      \
    /* ncclSend/ncclRecv, a communicator per part (a build without NCCL refuses it) */ \
    X(NCCL, "nccl")                                                                    \
    /* the field in managed memory: the halos are the neighbours' own rows */          \
    X(MANAGED, "managed")

typedef enum mgpu_exchange {
#define MGPU_EXCHANGE_VALUE_(suffix, name) MGPU_EXCHANGE_##suffix,
    MGPU_EXCHANGE_MAP(MGPU_EXCHANGE_VALUE_)
#undef MGPU_EXCHANGE_VALUE_
        MGPU_EXCHANGE_COUNT
} mgpu_exchange;
extern const char *const mgpu_exchange_names[];

const char *mgpu_exchange_name(mgpu_exchange exchange);
/* Set of modes as a bit mask: 1u << mode. */
#define MGPU_EXCHANGE_BIT(m) (1u << (m))
/* The modes the stencil domain moves halos in itself (lib/exchange.c), for
 * the programs that leave the exchange to it; a strategy that moves halos
 * its own way lists its own modes. */
#define MGPU_STENCIL_EXCHANGES                                                             \
    (MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_PEER) | MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_PEER_ASYNC) | \
     MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_STAGED) | MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_DIRECT) |   \
     MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_MAPPED) | MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_NCCL) |     \
     MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_MANAGED))

typedef struct mgpu_stencil_desc {
    long long nx, ny;
    mgpu_kernel kernel;
    mgpu_exchange exchange; /* AUTO is resolved by mgpu_stencil_create */
    uint64_t seed;
    int nparts;         /* parts of the whole grid */
    int first_part;     /* the parts this process holds: */
    int local_parts;    /* [first_part, first_part+local_parts); 0 = all */
    const int *devices; /* device of each part; NULL: part p on device p */
    int halo;           /* halo rows a side, exchanged every HALO steps; 0: 1 */
    int time_block;     /* steps per pass over memory, at most HALO; 0: auto */
    long long steps;    /* steps of a run, where passes end; 0: unbounded */
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
/* What mgpu_stencil_create would allocate for DESC's local parts, without
 * allocating: *DEVICE_BYTES of device memory (the parts' buffers; host
 * memory on the host backend) and *HOST_BYTES of host memory (the edge rows
 * of the staged and mapped modes, when DESC names one, or the pinned
 * buffers of staged copies in chunks).  Usage errors as
 * mgpu_stencil_create's for the decomposition and MGPU_STAGING_CHUNK. */
mgpu_status mgpu_stencil_bytes(const mgpu_stencil_desc *desc, size_t *device_bytes,
                               size_t *host_bytes);
void mgpu_stencil_destroy(mgpu_stencil *stencil);

mgpu_exchange mgpu_stencil_exchange_mode(const mgpu_stencil *stencil);
/* The chunk STENCIL's staged exchange copies its blocks in; 0: whole, or not staged. */
size_t mgpu_stencil_staging_chunk(const mgpu_stencil *stencil);
/* MGPU_STAGING_CHUNK's chunk into *CHUNK: 0 (whole blocks) to
 * MGPU_STAGED_CHUNK_MAX bytes, MGPU_STAGED_CHUNK where unset or empty;
 * anything else is MGPU_ERR_USAGE, one line naming the variable. */
mgpu_status mgpu_staging_chunk_env(size_t *chunk);
const mgpu_slab *mgpu_stencil_slab(const mgpu_stencil *stencil, int part);
/* The device of PART (its slab's). */
int mgpu_stencil_device(const mgpu_stencil *stencil, int part);
mgpu_stream *mgpu_stencil_stream(const mgpu_stencil *stencil, int part);
/* The buffer that holds the field before step STEP (buffers alternate). */
float *mgpu_stencil_buffer(const mgpu_stencil *stencil, int part, long long step);
size_t mgpu_stencil_pitch(const mgpu_stencil *stencil, int part);

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
 * is still issued: a strategy loops over every step whatever K is. */
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
/* Compute only slab rows [R0, R1) (global row numbers) on STREAM.  With
 * --halo=K > 1 the time block must be K: at a cycle's first step the rows
 * advance K steps (fewer at the run's end) in one pass that reads K rows
 * beyond them, at its other steps only the fault check runs; a band
 * nearer a fixed boundary of the field than that pass reaches (N-1 rows for
 * N steps), but not at it, and any other time block are
 * MGPU_ERR_UNSUPPORTED.  The rows' kernel stores nothing beyond them: in
 * mode managed jacobi's periodic rows are then the caller's to store
 * (mgpu-streams, its one caller, refuses managed with --overlap=on). */
mgpu_status mgpu_stencil_compute_rows(mgpu_stencil *stencil, int part, long long step, long long r0,
                                      long long r1, mgpu_stream *stream);
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
/* PART, held by another process, with its two buffers mapped into this one
 * (CUDA IPC; NULL, NULL: unmapped again).  In mode ipc with one-row halos
 * the kernel of a local neighbour then stores its edge rows straight into
 * PART's halos, as mode direct does between the parts of one process. */
mgpu_status mgpu_stencil_map_part(mgpu_stencil *stencil, int part, float *buffer0, float *buffer1);
/* Whether PART's kernel of the step before STEP already stored its edge
 * rows of the field before STEP in its neighbours' halos (modes direct,
 * managed and ipc, one-row halos, the steps computed). */
int mgpu_stencil_delivered(const mgpu_stencil *stencil, int part, long long step);
/* The receiving half of every exchange through staged copies (mode staged
 * where it copies whole blocks, mode mapped, mgpu-fork's and mgpu-mpi's
 * staged halos, CUDA IPC's deep halos): PART's halos at STEP filled from
 * its neighbours' edge blocks, the top halo from the last block of the
 * part above, the bottom halo from the first block of the part below,
 * each one copy on PART's stream
 * (cudaMemcpyAsync; in mode mapped a copy kernel, which reads mapped host
 * memory).  EDGE says where a neighbour's block lies: the block EDGE
 * (MGPU_ROW_FIRST or MGPU_ROW_LAST) of part NEIGHBOUR's field before STEP,
 * as CTX knows it (host memory it was copied to, a buffer mapped here).  A
 * side without a neighbour is the field's fixed boundary. */
typedef const float *(*mgpu_edge_fn)(void *ctx, long long step, int neighbour, mgpu_row edge);
mgpu_status mgpu_stencil_halos_in(mgpu_stencil *stencil, int part, long long step,
                                  mgpu_edge_fn edge, void *ctx);

/* Copy PART's interior rows of the field after STEPS steps into the full
 * host FIELD (nx*ny floats), and the outer row beside them where the part
 * is the first or the last.  Sets the device itself. */
mgpu_status mgpu_stencil_gather(mgpu_stencil *stencil, int part, long long steps, float *field);
/* The same rows alone into ROWS, nx floats apart, the slab's first row at
 * ROWS: for a process that holds one part of a field gathered elsewhere. */
mgpu_status mgpu_stencil_gather_rows(mgpu_stencil *stencil, int part, long long steps, float *rows);
/* Every part this process holds gathered into FIELD, and the outer rows
 * made (mgpu_field_fill_halo_rows): the final field a strategy that holds
 * all parts leaves in mgpu_run's FIELD. */
mgpu_status mgpu_stencil_gather_all(mgpu_stencil *stencil, long long steps, float *field);

#ifdef __cplusplus
}
#endif

#endif /* MGPU_H */
