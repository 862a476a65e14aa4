/* test-cuda-lib.c - the library on real GPUs: devices and contexts, memory,
 * streams and events across devices, peer copies between every pair, the
 * stencil kernels bit for bit against the C reference, and the pipeline.
 * Skips (exit 77) where there is no usable GPU. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mgpu.h"
#include "mgpu/pipeline.h"

static int ndevices;

/* Bytes that differ from copy to copy, so that a stale buffer never passes. */
static void pattern(unsigned char *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (unsigned char) (x >> 24);
    }
}

/* Floats in [-1, 1): negative sums exercise pattern2d's fabsf. */
static void random_floats(float *f, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 7;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        f[i] = (float) (x >> 8) / (float) (1u << 23) - 1.0f;
    }
}

static void *host_buffer(size_t bytes, unsigned flags)
{
    void *p = NULL;
    if (mgpu_host_alloc(bytes, flags, &p) != MGPU_OK) {
        printf("Bail out! pinned host memory: %s\n", mgpu_last_error());
        exit(1);
    }
    return p;
}

static void *device_buffer(int device, size_t bytes)
{
    void *p = NULL;
    if (mgpu_malloc(device, bytes, &p) != MGPU_OK) {
        printf("Bail out! device %d memory: %s\n", device, mgpu_last_error());
        exit(1);
    }
    return p;
}

/* ---------------------------------------------------------------- devices */

static void test_devices(void)
{
    CHECK(mgpu_device_count(&ndevices) == MGPU_OK && ndevices >= 1, "%d CUDA device(s)", ndevices);
    for (int d = 0; d < ndevices; d++) {
        mgpu_device_info info;
        mgpu_status status = mgpu_device_info_get(d, &info);
        CHECK(status == MGPU_OK && info.index == d && info.name[0] != '\0' &&
                  info.total_bytes > 0 && info.multiprocessors > 0,
              "device %d: %s, %.1f GiB, %d multiprocessors, cc %d.%d", d, info.name,
              info.total_bytes / 1073741824.0, info.multiprocessors, info.cc_major, info.cc_minor);
    }
    mgpu_device_info info;
    CHECK(mgpu_device_info_get(ndevices, &info) == MGPU_ERR_USAGE, "device %d does not exist: %s",
          ndevices, mgpu_last_error());
}

/* Runtime API switching (cudaSetDevice) and driver API push/pop. */
static void test_current_device(void)
{
    for (int d = 0; d < ndevices; d++) {
        int got = -1;
        CHECK(mgpu_device_set(d) == MGPU_OK && mgpu_device_get(&got) == MGPU_OK && got == d,
              "mgpu_device_set(%d): current device %d", d, got);
    }
    for (int d = 0; d < ndevices; d++) {
        int pushed = -1, after = -1;
        mgpu_status status = mgpu_device_set(0);
        if (status == MGPU_OK)
            status = mgpu_context_push(d);
        if (status == MGPU_OK)
            status = mgpu_device_get(&pushed);
        if (status == MGPU_OK)
            status = mgpu_context_pop();
        if (status == MGPU_OK)
            status = mgpu_device_get(&after);
        CHECK(status == MGPU_OK && pushed == d && after == 0,
              "context push %d over device 0: current %d, after the pop %d%s%s", d, pushed, after,
              status == MGPU_OK ? "" : ": ", status == MGPU_OK ? "" : mgpu_last_error());
    }
    mgpu_device_set(0);
}

/* ----------------------------------------------------------------- memory */

static void test_memory(int d)
{
    enum { N = 1 << 20 };
    unsigned char *host = malloc(N), *back = malloc(N), *ones = malloc(N);
    void *a = device_buffer(d, N), *b = device_buffer(d, N);
    pattern(host, N, (unsigned) d + 1);
    memset(ones, 0x5a, N);

    mgpu_status status = mgpu_memset(d, a, 0x5a, N);
    if (status == MGPU_OK)
        status = mgpu_memcpy(back, a, N);
    CHECK(status == MGPU_OK && memcmp(back, ones, N) == 0, "device %d: memset, copy back", d);

    status = mgpu_memcpy(a, host, N);
    if (status == MGPU_OK)
        status = mgpu_memcpy(b, a, N);
    if (status == MGPU_OK) {
        memset(back, 0, N);
        status = mgpu_memcpy(back, b, N);
    }
    CHECK(status == MGPU_OK && memcmp(back, host, N) == 0,
          "device %d: host to device, device to device, device to host", d);

    mgpu_free(d, a);
    mgpu_free(d, b);
    free(host);
    free(back);
    free(ones);
}

/* Pinned and mapped host memory; a kernel that reads and writes mapped
 * memory through its device pointer (zero-copy, book 3.4.1). */
static void test_host_memory(int d)
{
    enum { N = 100003 }; /* odd: the vector loop's tail runs */
    const size_t bytes = (N + 1) * sizeof(float);
    float *mapped = host_buffer(bytes, MGPU_HOST_MAPPED);
    float *result = host_buffer(bytes, MGPU_HOST_MAPPED);
    float *pinned = host_buffer(bytes, MGPU_HOST_PINNED);
    float *dev = device_buffer(d, bytes);
    mgpu_stream *s = NULL;
    void *mapped_dev = NULL, *result_dev = NULL;
    random_floats(mapped, N + 1, 11u + (unsigned) d);

    mgpu_status status = mgpu_device_set(d);
    if (status == MGPU_OK)
        status = mgpu_stream_create(d, 0, &s);
    if (status == MGPU_OK)
        status = mgpu_host_device_pointer(mapped, &mapped_dev);
    if (status == MGPU_OK)
        status = mgpu_host_device_pointer(result, &result_dev);
    CHECK(status == MGPU_OK && mapped_dev && result_dev,
          "device %d: pinned and mapped host buffers, device pointers", d);

    /* Aligned (vector path) and one float off (scalar path), both ways. */
    for (int offset = 0; offset <= 1 && status == MGPU_OK; offset++) {
        memset(pinned, 0, bytes);
        memset(result, 0, bytes);
        status = mgpu_memset(d, dev, 0, bytes);
        if (status == MGPU_OK)
            status = mgpu_copy_row_kernel(dev, (float *) mapped_dev + offset, N - offset, s);
        if (status == MGPU_OK)
            status = mgpu_copy_row_kernel((float *) result_dev + offset, dev, N - offset, s);
        if (status == MGPU_OK)
            status = mgpu_memcpy_async(pinned, dev, bytes, s);
        if (status == MGPU_OK)
            status = mgpu_stream_synchronize(s);
        CHECK(status == MGPU_OK &&
                  memcmp(pinned, mapped + offset, (N - offset) * sizeof(float)) == 0 &&
                  memcmp(result + offset, mapped + offset, (N - offset) * sizeof(float)) == 0 &&
                  result[0] == (offset ? 0.0f : mapped[0]) && result[N] == 0.0f,
              "device %d: copy kernel from mapped memory to the device and back, %s", d,
              offset ? "unaligned" : "aligned");
    }
    mgpu_stream_destroy(s);
    mgpu_free(d, dev);
    mgpu_host_free(mapped);
    mgpu_host_free(result);
    mgpu_host_free(pinned);
}

/* ------------------------------------------------------- streams, events */

static void test_streams(int d)
{
    int least = 1, greatest = 1;
    mgpu_stream *low = NULL, *high = NULL;
    mgpu_event *start = NULL, *stop = NULL;
    mgpu_status status = mgpu_stream_priority_range(d, &least, &greatest);
    CHECK(status == MGPU_OK && greatest <= least,
          "device %d: stream priorities from %d (least) to %d (greatest)", d, least, greatest);
    status = mgpu_stream_create(d, least, &low);
    if (status == MGPU_OK)
        status = mgpu_stream_create(d, greatest, &high);
    CHECK(status == MGPU_OK && mgpu_stream_device(low) == d && mgpu_stream_device(high) == d,
          "device %d: streams of the least and the greatest priority", d);

    enum { N = 8 << 20 };
    unsigned char *host = host_buffer(N, MGPU_HOST_PINNED);
    unsigned char *back = host_buffer(N, MGPU_HOST_PINNED);
    void *dev = device_buffer(d, N);
    pattern(host, N, 77u + (unsigned) d);
    double seconds = -1;
    if (status == MGPU_OK)
        status = mgpu_event_create(d, MGPU_EVENT_TIMING, &start);
    if (status == MGPU_OK)
        status = mgpu_event_create(d, MGPU_EVENT_TIMING, &stop);
    if (status == MGPU_OK)
        status = mgpu_device_set(d);
    if (status == MGPU_OK)
        status = mgpu_event_record(start, high);
    if (status == MGPU_OK)
        status = mgpu_memcpy_async(dev, host, N, high);
    if (status == MGPU_OK)
        status = mgpu_memcpy_async(back, dev, N, high);
    if (status == MGPU_OK)
        status = mgpu_event_record(stop, high);
    if (status == MGPU_OK)
        status = mgpu_event_synchronize(stop);
    if (status == MGPU_OK)
        status = mgpu_event_elapsed(start, stop, &seconds);
    CHECK(status == MGPU_OK && memcmp(back, host, N) == 0 && seconds > 0,
          "device %d: copies on a stream between timing events: %.3f ms", d, seconds * 1e3);
    mgpu_event_destroy(start);
    mgpu_event_destroy(stop);
    mgpu_stream_destroy(low);
    mgpu_stream_destroy(high);
    mgpu_free(d, dev);
    mgpu_host_free(host);
    mgpu_host_free(back);
}

/* A stream of device 1 waits for an event of device 0: device 1 copies what
 * device 0's stream wrote only after it was written. */
static void test_cross_device_event(void)
{
    if (ndevices < 2) {
        printf("# one device: no cross-device event test\n");
        return;
    }
    enum { N = 64 << 20 }; /* long enough that a missing wait would show */
    unsigned char *host = host_buffer(N, MGPU_HOST_PINNED);
    unsigned char *back = host_buffer(N, MGPU_HOST_PINNED);
    void *a0 = device_buffer(0, N), *a1 = device_buffer(1, N);
    mgpu_stream *s0 = NULL, *s1 = NULL;
    mgpu_event *written = NULL;
    pattern(host, N, 5);
    memset(back, 0, N);

    /* Each buffer cleared with its device current: this test is about the
     * event, test_memory about mgpu_memset. */
    mgpu_status status = mgpu_device_set(0);
    if (status == MGPU_OK)
        status = mgpu_memset(0, a0, 0, N);
    if (status == MGPU_OK)
        status = mgpu_device_set(1);
    if (status == MGPU_OK)
        status = mgpu_memset(1, a1, 0, N);
    if (status == MGPU_OK)
        status = mgpu_stream_create(0, 0, &s0);
    if (status == MGPU_OK)
        status = mgpu_stream_create(1, 0, &s1);
    if (status == MGPU_OK)
        status = mgpu_event_create(0, 0, &written);
    if (status == MGPU_OK)
        status = mgpu_device_synchronize(0);
    if (status == MGPU_OK)
        status = mgpu_device_synchronize(1);
    if (status == MGPU_OK)
        status = mgpu_device_set(0);
    if (status == MGPU_OK)
        status = mgpu_memcpy_async(a0, host, N, s0);
    if (status == MGPU_OK)
        status = mgpu_event_record(written, s0);
    if (status == MGPU_OK)
        status = mgpu_device_set(1);
    if (status == MGPU_OK)
        status = mgpu_stream_wait_event(s1, written);
    if (status == MGPU_OK)
        status = mgpu_memcpy_async(a1, a0, N, s1);
    if (status == MGPU_OK)
        status = mgpu_memcpy_async(back, a1, N, s1);
    if (status == MGPU_OK)
        status = mgpu_stream_synchronize(s1);
    CHECK(status == MGPU_OK && memcmp(back, host, N) == 0,
          "a stream of device 1 waits for an event of device 0, then copies its data%s%s",
          status == MGPU_OK ? "" : ": ", status == MGPU_OK ? "" : mgpu_last_error());
    mgpu_stream_synchronize(s0);
    mgpu_event_destroy(written);
    mgpu_stream_destroy(s0);
    mgpu_stream_destroy(s1);
    mgpu_free(0, a0);
    mgpu_free(1, a1);
    mgpu_host_free(host);
    mgpu_host_free(back);
    mgpu_device_set(0);
}

/* A signal in device 1's memory, written through a peer pointer by a
 * stream of device 0 after a long copy, holds a stream of device 1 until
 * then: what orders mgpu-fork's and mgpu-mpi's CUDA IPC halos. */
static void test_cross_device_signal(void)
{
    int can = 0;
    if (ndevices < 2 || mgpu_peer_can_access(0, 1, &can) != MGPU_OK || !can) {
        printf("# no two devices with peer access: no cross-device signal test\n");
        return;
    }
    enum { N = 64 << 20 };
    unsigned char *host = host_buffer(N, MGPU_HOST_PINNED);
    unsigned char *back = host_buffer(N, MGPU_HOST_PINNED);
    void *a0 = device_buffer(0, N), *a1 = device_buffer(1, N), *sig = device_buffer(1, 256);
    mgpu_stream *s0 = NULL, *s1 = NULL;
    int done = 1;
    pattern(host, N, 9);
    memset(back, 0, N);
    mgpu_status status = mgpu_memset(1, sig, 0, 256);
    if (status == MGPU_OK)
        status = mgpu_device_synchronize(1);
    if (status == MGPU_OK)
        status = mgpu_peer_enable(0, 1);
    if (status == MGPU_OK)
        status = mgpu_stream_create(0, 0, &s0);
    if (status == MGPU_OK)
        status = mgpu_stream_create(1, 0, &s1);
    /* Device 1 first: its wait is issued before anything writes 5. */
    if (status == MGPU_OK)
        status = mgpu_device_set(1);
    if (status == MGPU_OK)
        status = mgpu_stream_wait_signal(s1, sig, 5);
    if (status == MGPU_OK)
        status = mgpu_memcpy_async(a1, a0, N, s1);
    if (status == MGPU_OK)
        status = mgpu_memcpy_async(back, a1, N, s1);
    if (status == MGPU_OK)
        status = mgpu_stream_query(s1, &done);
    CHECK(status == MGPU_OK && !done, "a stream waiting for a signal not yet written waits%s%s",
          status == MGPU_OK ? "" : ": ", status == MGPU_OK ? "" : mgpu_last_error());
    if (status == MGPU_OK)
        status = mgpu_device_set(0);
    if (status == MGPU_OK)
        status = mgpu_memcpy_async(a0, host, N, s0);
    if (status == MGPU_OK)
        status = mgpu_stream_write_signal(s0, sig, 5);
    if (status == MGPU_OK)
        status = mgpu_stream_synchronize(s1);
    CHECK(status == MGPU_OK && memcmp(back, host, N) == 0,
          "device 0's stream signals device 1's after its copy, and device 1 then reads "
          "the data%s%s",
          status == MGPU_OK ? "" : ": ", status == MGPU_OK ? "" : mgpu_last_error());
    mgpu_stream_synchronize(s0);
    mgpu_stream_destroy(s0);
    mgpu_stream_destroy(s1);
    mgpu_free(0, a0);
    mgpu_free(1, a1);
    mgpu_free(1, sig);
    mgpu_host_free(host);
    mgpu_host_free(back);
    mgpu_device_set(0);
}

/* What mgpu-fork's and mgpu-mpi's one-row IPC halos do, ROUNDS times over:
 * a kernel of device 0 stores a block into device 1's memory and then
 * signals there; device 1's stream waits for the signal, a kernel of its
 * own reads the block (into the round's place in COLLECTED) and signals
 * back that the landing buffer may be written again.  Every round's block
 * differs, so a read before the store was visible, or a store before the
 * read was done, shows. */
static void test_peer_store_signal(void)
{
    int can = 0;
    if (ndevices < 2 || mgpu_peer_can_access(0, 1, &can) != MGPU_OK || !can ||
        mgpu_peer_can_access(1, 0, &can) != MGPU_OK || !can) {
        printf("# no two devices with peer access: no peer store and signal test\n");
        return;
    }
    enum { N = 1 << 20, ROUNDS = 48 };
    const size_t bytes = (size_t) N * sizeof(float);
    float *host = host_buffer(ROUNDS * bytes, MGPU_HOST_PINNED);
    float *back = host_buffer(ROUNDS * bytes, MGPU_HOST_PINNED);
    float *blocks = device_buffer(0, ROUNDS * bytes), *landing = device_buffer(1, bytes);
    float *collected = device_buffer(1, ROUNDS * bytes);
    uint32_t *ready = device_buffer(1, 256), *taken = device_buffer(0, 256);
    mgpu_stream *s0 = NULL, *s1 = NULL;
    random_floats(host, (size_t) ROUNDS * N, 11);
    memset(back, 0, ROUNDS * bytes);
    mgpu_status status = mgpu_memset(1, ready, 0, 256);
    if (status == MGPU_OK)
        status = mgpu_memset(0, taken, 0, 256);
    if (status == MGPU_OK)
        status = mgpu_memcpy(blocks, host, ROUNDS * bytes);
    for (int d = 0; d < 2 && status == MGPU_OK; d++)
        status = mgpu_device_synchronize(d);
    if (status == MGPU_OK)
        status = mgpu_peer_enable(0, 1);
    if (status == MGPU_OK)
        status = mgpu_peer_enable(1, 0);
    if (status == MGPU_OK)
        status = mgpu_stream_create(0, 0, &s0);
    if (status == MGPU_OK)
        status = mgpu_stream_create(1, 0, &s1);
    for (uint32_t r = 1; r <= ROUNDS && status == MGPU_OK; r++) {
        status = mgpu_device_set(0);
        if (status == MGPU_OK)
            status = mgpu_stream_wait_signal(s0, taken, r - 1);
        if (status == MGPU_OK)
            status = mgpu_copy_row_kernel(landing, blocks + (size_t) (r - 1) * N, N, s0);
        if (status == MGPU_OK)
            status = mgpu_stream_write_signal(s0, ready, r);
        if (status == MGPU_OK)
            status = mgpu_device_set(1);
        if (status == MGPU_OK)
            status = mgpu_stream_wait_signal(s1, ready, r);
        if (status == MGPU_OK)
            status = mgpu_copy_row_kernel(collected + (size_t) (r - 1) * N, landing, N, s1);
        if (status == MGPU_OK)
            status = mgpu_stream_write_signal(s1, taken, r);
    }
    if (status == MGPU_OK)
        status = mgpu_stream_synchronize(s1);
    if (status == MGPU_OK)
        status = mgpu_memcpy(back, collected, ROUNDS * bytes);
    CHECK(status == MGPU_OK && memcmp(back, host, ROUNDS * bytes) == 0,
          "%d rounds: a kernel of device 0 stores into device 1 and signals there, device 1 "
          "reads after its wait and signals back%s%s",
          ROUNDS, status == MGPU_OK ? "" : ": ", status == MGPU_OK ? "" : mgpu_last_error());
    mgpu_stream_synchronize(s0);
    mgpu_stream_destroy(s0);
    mgpu_stream_destroy(s1);
    mgpu_free(0, blocks);
    mgpu_free(0, taken);
    mgpu_free(1, landing);
    mgpu_free(1, collected);
    mgpu_free(1, ready);
    mgpu_host_free(host);
    mgpu_host_free(back);
    mgpu_device_set(0);
}

/* ------------------------------------------------------------ peer copies */

/* Fill SRC on device S with a fresh pattern, clear DST on device D, copy by
 * METHOD and read DST back. */
enum copy_method { BY_PEER, BY_PEER_ASYNC, BY_STAGED, BY_BEST, METHODS };
static const char *const method_names[METHODS] = {"cudaMemcpyPeer", "cudaMemcpyPeerAsync", "staged",
                                                  "device to device"};

static void copy_pair(int s, int d, enum copy_method method, int can)
{
    enum { N = 3 << 20 };
    unsigned char *host = host_buffer(N, MGPU_HOST_PINNED);
    unsigned char *back = host_buffer(N, MGPU_HOST_PINNED);
    unsigned char *staging = host_buffer(N, MGPU_HOST_PINNED);
    void *src = device_buffer(s, N), *dst = device_buffer(d, N);
    mgpu_stream *stream = NULL;
    mgpu_copy_path path = (mgpu_copy_path) -1;
    pattern(host, N, (unsigned) (s * 64 + d * 4 + (int) method));

    mgpu_status status = mgpu_memcpy(src, host, N);
    if (status == MGPU_OK)
        status = mgpu_memset(d, dst, 0, N);
    if (status == MGPU_OK) {
        switch (method) {
        case BY_PEER:
            status = mgpu_copy_peer(dst, d, src, s, N);
            break;
        case BY_PEER_ASYNC:
            status = mgpu_stream_create(s, 0, &stream);
            if (status == MGPU_OK)
                status = mgpu_device_set(s);
            if (status == MGPU_OK)
                status = mgpu_copy_peer_async(dst, d, src, s, N, stream);
            if (status == MGPU_OK)
                status = mgpu_stream_synchronize(stream);
            break;
        case BY_STAGED:
            status = mgpu_copy_staged(dst, d, src, s, N, staging);
            break;
        default:
            status = mgpu_copy_device_to_device(dst, d, src, s, N, staging, &path);
            break;
        }
    }
    if (status == MGPU_OK)
        status = mgpu_memcpy(back, dst, N);
    int path_ok = method != BY_BEST || path == (can ? MGPU_PATH_PEER : MGPU_PATH_STAGED);
    CHECK(status == MGPU_OK && memcmp(back, host, N) == 0 && path_ok,
          "%s from device %d to device %d%s%s", method_names[method], s, d,
          status == MGPU_OK ? "" : ": ", status == MGPU_OK ? "" : mgpu_last_error());
    mgpu_stream_destroy(stream);
    mgpu_free(s, src);
    mgpu_free(d, dst);
    mgpu_host_free(host);
    mgpu_host_free(back);
    mgpu_host_free(staging);
    mgpu_device_set(0);
}

static void test_peer(void)
{
    printf("# peer access (row: device, column: peer):\n");
    for (int s = 0; s < ndevices; s++) {
        printf("#  %2d:", s);
        for (int d = 0; d < ndevices; d++) {
            int can = -1;
            mgpu_peer_can_access(s, d, &can);
            printf(" %d", can);
        }
        printf("\n");
    }
    /* Every ordered pair, a device with itself too, so that one GPU runs
     * the copies as well. */
    for (int s = 0; s < ndevices; s++)
        for (int d = 0; d < ndevices; d++) {
            int can = -1;
            mgpu_status status = mgpu_peer_can_access(s, d, &can);
            if (status == MGPU_OK && can)
                status = mgpu_peer_enable(s, d);
            if (status == MGPU_OK && can)
                status = mgpu_peer_enable(s, d); /* twice is fine */
            if (status == MGPU_OK && !can)
                status = mgpu_peer_enable(s, d) == MGPU_ERR_UNSUPPORTED ? MGPU_OK : MGPU_ERR_VERIFY;
            CHECK(status == MGPU_OK && (can == 0 || can == 1),
                  "device %d %s device %d's memory; enabling behaves accordingly", s,
                  can ? "can access" : "cannot access", d);
            for (int m = 0; m < METHODS; m++)
                copy_pair(s, d, (enum copy_method) m, can);
        }
}

/* -------------------------------------------------------------- the kernels */

/* One step on rows [R0, R1) of an NX x NY field with rows PITCH floats apart,
 * on device D, against the C reference; every other cell must keep the
 * poison. */
static void stencil_case(int d, mgpu_kernel kernel, long long nx, long long ny, size_t pitch,
                         long long r0, long long r1)
{
    size_t cells = pitch * (size_t) ny, bytes = cells * sizeof(float);
    float *in = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
    float *d_in = device_buffer(d, bytes), *d_out = device_buffer(d, bytes);
    mgpu_stream *s = NULL;
    random_floats(in, cells, (unsigned) (nx * 31 + ny + kernel));
    memset(want, 0xff, bytes);
    mgpu_kernel_rows_host(kernel, in, want, nx, pitch, r0, r1);

    mgpu_status status = mgpu_device_set(d);
    if (status == MGPU_OK)
        status = mgpu_stream_create(d, 0, &s);
    if (status == MGPU_OK)
        status = mgpu_memcpy(d_in, in, bytes);
    if (status == MGPU_OK)
        status = mgpu_memset(d, d_out, 0xff, bytes);
    if (status == MGPU_OK)
        status = mgpu_kernel_rows(kernel, d_in, d_out, nx, pitch, r0, r1, s);
    if (status == MGPU_OK)
        status = mgpu_stream_synchronize(s);
    if (status == MGPU_OK)
        status = mgpu_memcpy(got, d_out, bytes);
    long long wrong = 0, first = -1;
    for (size_t i = 0; status == MGPU_OK && i < cells; i++)
        if (memcmp(&got[i], &want[i], sizeof(float)) != 0 && wrong++ == 0)
            first = (long long) i;
    CHECK(status == MGPU_OK && wrong == 0,
          "device %d, %s, %lld x %lld, pitch %zu, rows [%lld, %lld): bit-identical to the C "
          "reference, nothing else written (%lld wrong, first at row %lld column %lld)",
          d, mgpu_kernel_name(kernel), nx, ny, pitch, r0, r1, wrong,
          first < 0 ? -1 : first / (long long) pitch, first < 0 ? -1 : first % (long long) pitch);
    mgpu_stream_destroy(s);
    mgpu_free(d, d_in);
    mgpu_free(d, d_out);
    free(in);
    free(want);
    free(got);
}

static void test_stencil(int d)
{
    static const long long sizes[][2] = {{37, 29}, {1001, 7},  {4097, 33}, {3, 3},
                                         {130, 5}, {2048, 17}, {33, 70}};
    for (int k = MGPU_KERNEL_PATTERN2D; k <= MGPU_KERNEL_JACOBI; k++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            long long nx = sizes[i][0], ny = sizes[i][1];
            size_t pitch = ((size_t) nx + 31) / 32 * 32;
            stencil_case(d, (mgpu_kernel) k, nx, ny, pitch, 1, ny - 1);
            /* Rows as the strategies ask for them: one row, a few, none. */
            stencil_case(d, (mgpu_kernel) k, nx, ny, pitch, ny / 2, ny / 2 + 1);
            stencil_case(d, (mgpu_kernel) k, nx, ny, pitch, 1, ny / 2 + 1);
            stencil_case(d, (mgpu_kernel) k, nx, ny, pitch, 2, 2);
            /* A packed field: rows not 16-byte aligned unless nx is a
             * multiple of 4 (the scalar path). */
            stencil_case(d, (mgpu_kernel) k, nx, ny, (size_t) nx, 1, ny - 1);
        }
}

/* ---------------------------------------------------------- the pipeline */

enum { PIPE_NX = 1001, PIPE_NY = 203 };

/* One stencil step of a chunk (halo 1): output row k is input row k+1; the
 * boundary columns come with a copy of the rows first. */
static mgpu_status pipeline_step(void *arg, const float *d_in, float *d_out, long long row0,
                                 long long nrows, size_t pitch, mgpu_stream *stream)
{
    const mgpu_kernel *kernel = arg;
    (void) row0;
    const float *centre = d_in + pitch;
    size_t used = ((size_t) nrows - 1) * pitch + PIPE_NX;
    mgpu_status status = mgpu_memcpy_async(d_out, centre, used * sizeof(float), stream);
    if (status != MGPU_OK)
        return status;
    return mgpu_kernel_rows(*kernel, centre, d_out, PIPE_NX, pitch, 0, nrows, stream);
}

static void test_pipeline(int d, mgpu_kernel kernel, int chunks, int streams, int serial)
{
    const size_t cells = (size_t) PIPE_NX * PIPE_NY, bytes = cells * sizeof(float);
    float *in = host_buffer(bytes, MGPU_HOST_PINNED), *out = host_buffer(bytes, MGPU_HOST_PINNED);
    float *want = malloc(bytes);
    random_floats(in, cells, (unsigned) (chunks * 7 + streams));
    memset(out, 0xff, bytes);
    memset(want, 0xff, bytes);
    memcpy(want + PIPE_NX, in + PIPE_NX, (size_t) (PIPE_NY - 2) * PIPE_NX * sizeof(float));
    mgpu_kernel_rows_host(kernel, in, want, PIPE_NX, PIPE_NX, 1, PIPE_NY - 1);

    mgpu_pipeline_desc desc = {.device = d,
                               .nx = PIPE_NX,
                               .host_pitch = PIPE_NX,
                               .rows = PIPE_NY - 2,
                               .halo = 1,
                               .chunks = chunks,
                               .streams = streams,
                               .fn = pipeline_step,
                               .arg = &kernel};
    mgpu_pipeline *p = NULL;
    double up = -1, work = -1, down = -1;
    int before = -1, after = -2;
    mgpu_status status = mgpu_device_get(&before);
    if (status == MGPU_OK)
        status = mgpu_pipeline_create(&p, &desc);
    if (status == MGPU_OK)
        status = serial
                     ? mgpu_pipeline_run_serial(p, in + PIPE_NX, out + PIPE_NX, &up, &work, &down)
                     : mgpu_pipeline_run(p, in + PIPE_NX, out + PIPE_NX);
    if (status == MGPU_OK)
        status = mgpu_device_get(&after);
    CHECK(status == MGPU_OK && memcmp(out, want, bytes) == 0 && before == after &&
              (!serial || (up >= 0 && work >= 0 && down >= 0)),
          "device %d: %s pipeline, %s, %d chunks on %d streams: bit-identical to the C "
          "reference%s%s",
          d, serial ? "serial" : "pipelined", mgpu_kernel_name(kernel), chunks, streams,
          status == MGPU_OK ? "" : ": ", status == MGPU_OK ? "" : mgpu_last_error());
    mgpu_pipeline_destroy(p);
    mgpu_host_free(in);
    mgpu_host_free(out);
    free(want);
}

int main(void)
{
    /* The host device count is not used by the CUDA backend, but must be valid. */
    if (mgpu_init(MGPU_BACKEND_CUDA, 1) != MGPU_OK)
        check_skip(mgpu_last_error());
    test_devices();
    test_current_device();
    for (int d = 0; d < ndevices; d++) {
        test_memory(d);
        test_host_memory(d);
        test_streams(d);
    }
    test_cross_device_event();
    test_cross_device_signal();
    test_peer_store_signal();
    test_peer();
    for (int d = 0; d < ndevices; d++)
        test_stencil(d);
    for (int d = 0; d < ndevices; d++) {
        test_pipeline(d, MGPU_KERNEL_PATTERN2D, 7, 3, 0);
        test_pipeline(d, MGPU_KERNEL_JACOBI, PIPE_NY - 2, 4, 0);
        test_pipeline(d, MGPU_KERNEL_PATTERN2D, 1, 2, 0);
        test_pipeline(d, MGPU_KERNEL_JACOBI, 5, 2, 1);
    }
    return check_done();
}
