/* ceiling.c - the copy ceiling: the copy bandwidth that a stencil's speed
 * is compared with.
 *
 * A stencil step reads and writes every cell once, so the fastest it can go
 * is the speed of a device-to-device copy of the same bytes: the "copy
 * ceiling" of the record's roofline field.  It is measured here as
 * doc/design.md section 6 asks: warmed up, timed with events on a GPU (host
 * timers would add launch latency), the median of a few copies, and counting
 * both the bytes read and the bytes written.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "mgpu-private.h"

/* Copies timed for one bandwidth figure; their median is reported. */
#define COPY_SAMPLES 5

/* One copy timed by events on STREAM: what the device spent, without the
 * host's launch and synchronisation overheads. */
static mgpu_status time_copy_with_events(void *dst, const void *src, size_t bytes,
                                         mgpu_stream *stream, mgpu_event *start, mgpu_event *stop,
                                         double *seconds)
{
    MGPU_TRY(mgpu_event_record(start, stream));
    MGPU_TRY(mgpu_memcpy_async(dst, src, bytes, stream));
    MGPU_TRY(mgpu_event_record(stop, stream));
    MGPU_TRY(mgpu_event_synchronize(stop));
    return mgpu_event_elapsed(start, stop, seconds);
}

/* COPY_SAMPLES copies on a stream of DEVICE, their times into SECONDS.
 * DEVICE stays current afterwards, as with mgpu_stencil_reset. */
static mgpu_status time_copies_on_device(int device, void *dst, const void *src, size_t bytes,
                                         double *seconds)
{
    mgpu_stream *stream = NULL;
    mgpu_event *start = NULL, *stop = NULL;
    mgpu_status status = mgpu_device_set(device);

    if (status == MGPU_OK)
        status = mgpu_stream_create(device, 0, &stream);
    if (status == MGPU_OK)
        status = mgpu_event_create(device, MGPU_EVENT_TIMING, &start);
    if (status == MGPU_OK)
        status = mgpu_event_create(device, MGPU_EVENT_TIMING, &stop);
    for (int i = 0; status == MGPU_OK && i < COPY_SAMPLES; i++)
        status = time_copy_with_events(dst, src, bytes, stream, start, stop, &seconds[i]);
    if (stop != NULL)
        mgpu_event_destroy(stop);
    if (start != NULL)
        mgpu_event_destroy(start);
    if (stream != NULL)
        mgpu_stream_destroy(stream);
    return status;
}

/* A host copy on every core, in slices, as the host backend's kernel runs
 * a large step: one core alone cannot draw the memory's bandwidth.  SRC
 * NULL: DST zeroed instead, which is how the buffers are first touched, on
 * every core too, since the kernel clears each new page as it is touched. */
static void copy_on_all_cores(void *dst, const void *src, size_t bytes)
{
    enum { SLICES = 64 };
    size_t slice = (bytes + SLICES - 1) / SLICES;
    MGPU_OMP(omp parallel for schedule(static) num_threads(mgpu_host_threads()))
    for (int k = 0; k < SLICES; k++) {
        size_t begin = (size_t) k * slice;
        if (begin >= bytes)
            continue;
        size_t n = bytes - begin < slice ? bytes - begin : slice;
        if (src)
            memcpy((char *) dst + begin, (const char *) src + begin, n);
        else
            memset((char *) dst + begin, 0, n);
    }
}

/* The host backend's copies return when done: a host clock around each is
 * exact enough. */
static mgpu_status time_copies_on_host(void *dst, const void *src, size_t bytes, double *seconds)
{
    for (int i = 0; i < COPY_SAMPLES; i++) {
        double begin = mgpu_now();
        copy_on_all_cores(dst, src, bytes);
        seconds[i] = mgpu_now() - begin;
    }
    return MGPU_OK;
}

/* The median of the samples' bandwidths, bytes read plus written, in GB/s. */
static double median_gbps(size_t bytes, const double *seconds)
{
    double gbps[COPY_SAMPLES];

    for (int i = 0; i < COPY_SAMPLES; i++) {
        /* A copy too short for the clock still took some time: one tick. */
        double t = seconds[i] > 1e-9 ? seconds[i] : 1e-9;
        gbps[i] = 2.0 * (double) bytes / t / 1e9;
    }
    return mgpu_stats_of(gbps, COPY_SAMPLES).median;
}

/* Time the copies between two buffers of DEVICE, both already there. */
static mgpu_status measure_copies(int device, void *dst, void *src, size_t bytes, double *gbps)
{
    double seconds[COPY_SAMPLES];

    /* Touch the source, then copy once untimed, so that no timed copy pays
     * for first-touch page faults, lazy allocation or a cold cache. */
    if (mgpu_backend_active() == MGPU_BACKEND_HOST) {
        copy_on_all_cores(src, NULL, bytes);
        copy_on_all_cores(dst, src, bytes);
        MGPU_TRY(time_copies_on_host(dst, src, bytes, seconds));
    } else {
        MGPU_TRY(mgpu_memset(device, src, 0, bytes));
        MGPU_TRY(mgpu_memcpy(dst, src, bytes));
        MGPU_TRY(time_copies_on_device(device, dst, src, bytes, seconds));
    }
    *gbps = median_gbps(bytes, seconds);
    return MGPU_OK;
}

/* Device-to-device copy bandwidth of DEVICE (host: memcpy), bytes read plus
 * bytes written per second, median of a few copies of BYTES. */
static mgpu_status copy_bandwidth(int device, size_t bytes, double *gbps)
{
    void *src = NULL, *dst = NULL;
    mgpu_status status;

    if (gbps == NULL || bytes == 0)
        return mgpu_fail(MGPU_ERR_USAGE, "copy_bandwidth: no bytes to copy or no result");
    *gbps = 0.0;
    status = mgpu_malloc(device, bytes, &src);
    if (status == MGPU_OK)
        status = mgpu_malloc(device, bytes, &dst);
    if (status == MGPU_OK)
        status = measure_copies(device, dst, src, bytes, gbps);
    if (dst != NULL)
        mgpu_free(device, dst);
    if (src != NULL)
        mgpu_free(device, src);
    return status;
}

/* The copy ceiling is the bandwidth of the memory a grid lives in, and a
 * copy measures it only once it leaves the last cache before that memory
 * (a GPU's L2, the host's last-level cache) behind: each of its two buffers
 * is at least twice that cache, so that together they are four times it.
 * On a GPU the copy is 1 GiB (more where the L2 asks for it), a few
 * milliseconds; on the host it is as large as the field, within those
 * bounds and CEILING_BYTES_HOST_MAX.
 *
 * A grid whose two buffers fit in that cache together runs from the cache,
 * and no memory ceiling bounds it: its ceiling is not measured (null in
 * the record, and so is its roofline).  That also spares small runs, the
 * tests' among them, a copy of hundreds of MiB.  So does a memory too full
 * for buffers large enough: a ceiling measured in the cache would flatter
 * nothing and mean nothing.  doc/record.md ("Reading the figures") states
 * this rule. */
#define CEILING_BYTES_CUDA ((size_t) 1 << 30)
#define CEILING_BYTES_HOST_MAX ((size_t) 256 << 20)
/* Where a device does not say how large its last cache is. */
#define CEILING_CACHE_GUESS ((size_t) 64 << 20)

size_t mgpu_copy_ceiling_bytes(int gpu, size_t cache_bytes, size_t field_bytes, size_t free_bytes)
{
    size_t cache = cache_bytes ? cache_bytes : CEILING_CACHE_GUESS;
    if (field_bytes <= cache / 2)
        return 0; /* both buffers of the grid fit in the cache */
    size_t floor = 2 * cache;
    size_t bytes = gpu                                    ? CEILING_BYTES_CUDA
                   : field_bytes < CEILING_BYTES_HOST_MAX ? field_bytes
                                                          : CEILING_BYTES_HOST_MAX;
    if (bytes < floor)
        bytes = floor;
    /* The copy's two buffers beside the grid's: a quarter of what is free
     * each, at most; halving keeps the GPU's sizes powers of two. */
    while (free_bytes && 2 * bytes > free_bytes / 2 && bytes / 2 >= floor)
        bytes /= 2;
    if (free_bytes && 2 * bytes > free_bytes / 2)
        return 0;
    return bytes;
}

mgpu_status mgpu_copy_ceiling_device(int device, size_t field_bytes, double *gbps)
{
    *gbps = 0.0;
    int gpu = mgpu_backend_active() == MGPU_BACKEND_CUDA;
    mgpu_device_info info;
    MGPU_TRY(mgpu_device_info_get(gpu ? device : 0, &info));
    size_t bytes = mgpu_copy_ceiling_bytes(gpu, info.cache_bytes, field_bytes, info.free_bytes);
    return bytes ? copy_bandwidth(gpu ? device : 0, bytes, gbps) : MGPU_OK;
}

mgpu_status mgpu_copy_ceiling(int ndevices, size_t field_bytes, double *gbps)
{
    *gbps = 0.0;
    if (mgpu_backend_active() != MGPU_BACKEND_CUDA)
        return mgpu_copy_ceiling_device(0, field_bytes, gbps);
    for (int d = 0; d < ndevices; d++) {
        double one;
        MGPU_TRY(mgpu_copy_ceiling_device(d, field_bytes, &one));
        if (one <= 0.0) {
            *gbps = 0.0; /* a sum without one device's term is no ceiling */
            return MGPU_OK;
        }
        *gbps += one;
    }
    return MGPU_OK;
}
