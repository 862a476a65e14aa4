/* mgpu/measurement.h - what mgpu measures with: a monotonic clock and the
 * statistics of samples (lib/timing.c), the copy bandwidth of a device and
 * the copy ceiling a stencil step is measured against (lib/ceiling.c), and
 * what mgpu-p2p needs to time copies honestly: the verification pattern
 * and the spin (lib/measure.c, lib/measure-cuda.cu), the driver's view of
 * a link (lib/peer.c), how two devices are linked (lib/nvml.c).
 */
#ifndef MGPU_MEASUREMENT_H
#define MGPU_MEASUREMENT_H

#include <stddef.h>
#include <stdint.h>

#include "mgpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------- timing (lib/timing.c) */

/* Seconds on a monotonic clock. */
double mgpu_now(void);

typedef struct mgpu_stats {
    double median, min, max;
} mgpu_stats;
/* Median, min and max of N samples (sorted in place). */
mgpu_stats mgpu_stats_of(double *samples, int n);

/* ----------------------------- copy bandwidth and ceilings (lib/ceiling.c) */

/* Sum of the copy bandwidths of devices 0..NDEVICES-1 (host backend: one
 * copy on all cores, since host "devices" share one memory) for a grid of
 * FIELD_BYTES per buffer, on buffers that leave the caches (ceiling.c says
 * how large); 0 (not measured) when the grid fits in the cache, or memory
 * cannot hold buffers large enough on some device. */
mgpu_status mgpu_copy_ceiling(int ndevices, size_t field_bytes, double *gbps);

/* The copy bandwidth of DEVICE alone, one term of mgpu_copy_ceiling's sum
 * (host backend: the one copy), for a program whose devices are driven by
 * several processes, each measuring its own; 0 when not measured, which
 * makes the sum not measured too. */
mgpu_status mgpu_copy_ceiling_device(int device, size_t field_bytes, double *gbps);

/* ------------------------- measuring copies (lib/measure.c, lib/peer.c) */

/* What mgpu-p2p needs to time copies honestly: a pattern that proves every
 * byte of a copy arrived, and a spin that holds a stream while the host
 * queues the timed copies. */

/* The "device" of host memory (pinned or pageable) for the pattern calls. */
#define MGPU_HOST_MEMORY (-1)

/* Fill BYTES at PTR with bytes OFFSET.. of the pattern of SEED.  PTR and
 * OFFSET are 4-byte aligned; PTR is memory of DEVICE, filled by a kernel on
 * STREAM (a stream of DEVICE, or NULL for its default stream; DEVICE must
 * be current), or host memory (MGPU_HOST_MEMORY), filled at once.  At the
 * same offset, two different seeds differ in every 32-bit word. */
mgpu_status mgpu_pattern_fill(int device, void *ptr, size_t bytes, uint32_t seed, uint64_t offset,
                              mgpu_stream *stream);

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
                               uint64_t offset, mgpu_stream *stream, mgpu_pattern_result *result);

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

#ifdef __cplusplus
}
#endif

#endif /* MGPU_MEASUREMENT_H */
