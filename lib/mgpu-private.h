/* mgpu-private.h - what the library's files share and programs never see.
 * The library implements every topic, so its files see every public header. */
#ifndef MGPU_PRIVATE_H
#define MGPU_PRIVATE_H

#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/measurement.h"
#include "mgpu/processes.h"
#include "mgpu/graph.h"
#include "mgpu/monitor.h"
#include "mgpu/pipeline.h"

#include <stdarg.h>
#include <stdbool.h>

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#ifdef MGPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* The .cu files include this header too: keep C linkage for them. */
#ifdef __cplusplus
extern "C" {
#endif

/* An OpenMP pragma that vanishes (without a warning) where OpenMP is off. */
#ifdef _OPENMP
#define MGPU_OMP(directive) _Pragma(#directive)
#else
#define MGPU_OMP(directive)
#endif

/* The threads of a host-backend team (the num_threads of every parallel
 * region in the library): what OpenMP asks for (OMP_NUM_THREADS,
 * mgpu_host_share_cores), at most the CPUs the process had at its start.
 * In bind.c. */
int mgpu_host_threads(void);
/* Take the process's CPUs now, before any worker is bound (once; the
 * binding functions and mgpu_host_threads take them too, where no program
 * start did). */
void mgpu_bind_start(void);

/* Record a failure for mgpu_last_error() and return STATUS: the library's
 * name for the public mgpu_error_set (mgpu.h). */
#define mgpu_fail mgpu_error_set
mgpu_status mgpu_vfail(mgpu_status status, const char *fmt, va_list ap);
void mgpu_clear_error(void);

static inline bool mgpu_on_cuda(void) { return mgpu_backend_active() == MGPU_BACKEND_CUDA; }

#ifndef MGPU_HAVE_CUDA
/* What the CUDA backend's stand-ins (stream-cuda.h, memory-cuda.h) return
 * in a build without it, where mgpu_on_cuda() is false and none is called. */
static inline mgpu_status mgpu_cuda_absent(void)
{
    return mgpu_fail(MGPU_ERR_UNSUPPORTED, "this build has no CUDA backend");
}
#endif

#ifdef MGPU_HAVE_CUDA
/* Turn a cudaError_t into a status, recording the call, the device and
 * CUDA's words for the error.  Every CUDA call in the library goes through
 * this macro. */
mgpu_status mgpu_cuda_fail(cudaError_t err, const char *call, int device, const char *file,
                           int line);
#define MGPU_CUDA(call, device)                                                    \
    do {                                                                           \
        cudaError_t mgpu_err_ = (call);                                            \
        if (mgpu_err_ != cudaSuccess)                                              \
            return mgpu_cuda_fail(mgpu_err_, #call, (device), __FILE__, __LINE__); \
    } while (0)
/* The same, for code that must clean up: sets STATUS and jumps to LABEL. */
#define MGPU_CUDA_GOTO(call, device, status, label)                                    \
    do {                                                                               \
        cudaError_t mgpu_err_ = (call);                                                \
        if (mgpu_err_ != cudaSuccess) {                                                \
            (status) = mgpu_cuda_fail(mgpu_err_, #call, (device), __FILE__, __LINE__); \
            goto label;                                                                \
        }                                                                              \
    } while (0)

/* Run CALL (a CUDA call) with DEVICE current, then restore the caller's
 * device, returning a status on failure: for calls that act on the current
 * device, made by library functions that take a device argument. */
#define MGPU_CUDA_ON(device, call)                                \
    do {                                                          \
        int mgpu_previous_;                                       \
        MGPU_CUDA(cudaGetDevice(&mgpu_previous_), -1);            \
        MGPU_CUDA(cudaSetDevice(device), (device));               \
        cudaError_t mgpu_call_err_ = (call);                      \
        MGPU_CUDA(cudaSetDevice(mgpu_previous_), mgpu_previous_); \
        MGPU_CUDA(mgpu_call_err_, (device));                      \
    } while (0)

/* The driver API functions NAMES, as CUDA 12 defines them, into FNS,
 * without linking libcuda (cudaGetDriverEntryPoint); on failure *MISSING
 * names the first not found.  mgpu_driver_entry_fail: that failure as a
 * status, recorded. */
cudaError_t mgpu_driver_entries(const char *const *names, void **fns, int count,
                                const char **missing);
mgpu_status mgpu_driver_entry_fail(const char *missing, cudaError_t err);
/* The CUDA stream behind an mgpu stream (NULL: the legacy default stream). */
cudaStream_t mgpu_stream_cuda(const mgpu_stream *stream);
#endif

/* mgpu_init, but CUDA is asked about in a child process, so that this one
 * may still fork workers that use CUDA. */
mgpu_status mgpu_init_nocuda(mgpu_backend want, int host_devices);

/* mgpu_link_query's NVML part, for two GPUs known by their PCI addresses
 * (A and B's pci_domain, pci_bus, pci_device): MGPU_OK with INFO filled,
 * else MGPU_ERR_UNSUPPORTED with INFO->why saying why NVML cannot tell
 * (mgpu_last_error is left alone: the caller falls back). */
mgpu_status mgpu_nvml_link(const mgpu_device_info *a, const mgpu_device_info *b,
                           mgpu_link_info *info);
/* The driver's version as NVML tells it ("550.54.15"), into TEXT (SIZE
 * bytes): MGPU_OK, else MGPU_ERR_UNSUPPORTED where NVML cannot be loaded or
 * does not tell (mgpu_last_error is left alone, TEXT untouched). */
mgpu_status mgpu_nvml_driver_version(char *text, size_t size);

/* Number of devices the active backend offers. */
int mgpu_devices_available(void);
/* Fail with MGPU_ERR_USAGE unless DEVICE is a device of the active backend. */
mgpu_status mgpu_check_device(int device);

/* Physical memory of this machine in bytes (0 when unknown): the capacity
 * of a host-backend device (host-memory.c). */
size_t mgpu_host_memory_bytes(void);
/* The bytes of host memory this process may still take: the least of what
 * the machine has available and what its memory cgroups leave under their
 * limits; SIZE_MAX when nothing says.  WHY gets which of them it is. */
size_t mgpu_host_memory_room(char *why, size_t why_size);
/* The host's last-level cache in bytes, as the kernel (sysfs) or the C
 * library tells it; 0 when unknown. */
size_t mgpu_host_cache_bytes(void);

/* The bytes of each buffer of the copy that measures a copy ceiling (GPU
 * when GPU, else the host) of a device whose last cache holds CACHE_BYTES
 * (0: unknown) and FREE_BYTES are free (0: unknown), for a grid of
 * FIELD_BYTES per buffer; 0 when the ceiling is not to be measured. */
size_t mgpu_copy_ceiling_bytes(int gpu, size_t cache_bytes, size_t field_bytes, size_t free_bytes);

/* Set WIDTH_BYTES of each of ROWS rows, PITCH_BYTES apart, to BYTE; done
 * on return. */
mgpu_status mgpu_memset_2d(int device, void *ptr, size_t pitch_bytes, int byte, size_t width_bytes,
                           size_t rows);

/* Managed (unified) memory (memory.c): one allocation that every device
 * and the host address, its pages moved or mapped by the driver
 * (cudaMallocManaged); host memory on the host backend.  Whether DEVICE
 * reaches it at the same time as the others (cudaDevAttrConcurrentManaged-
 * Access; on the host backend yes, unless a test said otherwise).  The
 * hints (cudaMemAdvise) and the prefetch (cudaMemPrefetchAsync on STREAM)
 * are advice, which the host backend takes as done. */
typedef enum mgpu_managed_hint {
    MGPU_MANAGED_PREFER,     /* the pages live on DEVICE (preferred location) */
    MGPU_MANAGED_ACCESSED_BY /* DEVICE maps them where they are, no fault */
} mgpu_managed_hint;
mgpu_status mgpu_managed_concurrent(int device, int *concurrent);
mgpu_status mgpu_managed_alloc(size_t bytes, void **ptr);
void mgpu_managed_free(void *ptr);
mgpu_status mgpu_managed_advise(void *ptr, size_t bytes, mgpu_managed_hint hint, int device);
mgpu_status mgpu_managed_prefetch(void *ptr, size_t bytes, int device, mgpu_stream *stream);

/* Copy ROWS rows of WIDTH_BYTES from SRC (rows SPITCH_BYTES apart) to DST
 * (rows DPITCH_BYTES apart), between any host and device memory: returning
 * when done, or on STREAM (host backend: at once).  A width larger than a
 * pitch is MGPU_ERR_USAGE.  In memcpy2d.c. */
mgpu_status mgpu_memcpy_2d(void *dst, size_t dpitch_bytes, const void *src, size_t spitch_bytes,
                           size_t width_bytes, size_t rows);
mgpu_status mgpu_memcpy_2d_async(void *dst, size_t dpitch_bytes, const void *src,
                                 size_t spitch_bytes, size_t width_bytes, size_t rows,
                                 mgpu_stream *stream);

/* The stencil domain's events for graphs (stencil-graph.c): one on part 0's
 * stream that the others wait for, and one per part that part 0 waits for. */
mgpu_event *mgpu_stencil_fork_event(const mgpu_stencil *st);
/* Record again on part PART's stream the events that other parts' steps
 * wait for, where its stream joins a capture and after the capture
 * (lib/exchange.c says why). */
mgpu_status mgpu_stencil_record_waited(mgpu_stencil *st, int part);
mgpu_event *mgpu_stencil_join_event(const mgpu_stencil *st, int part);
/* Its halo rows a side (--halo): graphs take only 1. */
int mgpu_stencil_halo(const mgpu_stencil *st);

/* NCCL communicators (nccl.c), one per part, rank = part.  Without NCCL in
 * the build every call fails (mgpu_nccl_check says why first). */
typedef struct mgpu_nccl_comm mgpu_nccl_comm;
/* What a build without NCCL lacks, in words; NULL in a build with it. */
const char *mgpu_nccl_missing(void);
/* Join communicator ID of NRANKS as ranks FIRST .. FIRST+COUNT-1, rank
 * FIRST+i on DEVICES[i], into COMMS[i]: one group, so that one thread may
 * join several ranks; returns once every rank of every process has joined.
 * After a failure none is left. */
mgpu_status mgpu_nccl_comms_create(const mgpu_nccl_id *id, int nranks, int first, int count,
                                   const int *devices, mgpu_nccl_comm **comms);
/* Free COMM: destroyed once its work is done, or with ABORT aborted, which
 * stops its kernels that wait for a peer (ncclCommAbort).  NULL is nothing. */
void mgpu_nccl_comm_free(mgpu_nccl_comm *comm, bool abort);
/* Bracket transfers that must go out together: one NCCL group; groups nest. */
mgpu_status mgpu_nccl_group_begin(void);
mgpu_status mgpu_nccl_group_end(void);
/* COUNT floats from BUF to rank PEER, or from PEER into BUF, on STREAM (of
 * COMM's device), inside a group. */
mgpu_status mgpu_nccl_send(mgpu_nccl_comm *comm, const float *buf, size_t count, int peer,
                           mgpu_stream *stream);
mgpu_status mgpu_nccl_recv(mgpu_nccl_comm *comm, float *buf, size_t count, int peer,
                           mgpu_stream *stream);
/* Wait for the work on STREAM, COMM's asynchronous errors watched meanwhile
 * (a failed peer connection is reported, not waited for forever). */
mgpu_status mgpu_nccl_wait(mgpu_nccl_comm *comm, mgpu_stream *stream);

/* The device time of one step (step-time.c): the kernel of the largest of
 * NDEVICES parts alone on device 0, launched back to back, per launch. */
mgpu_status mgpu_step_device_time(const mgpu_options *opt, int ndevices, double *seconds);

/* Bytes of COUNT items of SIZE bytes, or fail on overflow. */
mgpu_status mgpu_mul_size(size_t count, size_t size, size_t *bytes);

/* Kernel launchers in the .cu files (extern "C"), all asynchronous on S. */
#ifdef MGPU_HAVE_CUDA
cudaError_t mgpu_cuda_stencil_rows(mgpu_kernel kernel, const float *in, float *out, long long nx,
                                   size_t pitch, long long r0, long long r1, float *first_to,
                                   float *last_to, cudaStream_t s);
cudaError_t mgpu_cuda_stencil_rows_blocked(mgpu_kernel kernel, const float *in, float *out,
                                           long long nx, size_t pitch, long long r0, long long r1,
                                           int steps, unsigned fixed, cudaStream_t s);
cudaError_t mgpu_cuda_copy_row(float *dst, const float *src, long long n, cudaStream_t s);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MGPU_PRIVATE_H */
