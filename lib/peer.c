/* peer.c - copies between devices: peer access (book 3.4.2) and what the
 * driver says about the link between two devices, cudaMemcpyPeer and
 * cudaMemcpyPeerAsync (11.3), and the staged path through pinned host
 * memory that runs when two devices cannot reach each other (in chunks, on
 * streams: staged-copy.c). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <string.h>

#include "mgpu-private.h"
#include "mgpu-test.h"

/* Host backend: which pairs may "access" each other; all, unless a test
 * says otherwise. */
static unsigned char host_no_peer[MGPU_MAX_DEVICES][MGPU_MAX_DEVICES];

#ifdef MGPU_HAVE_CUDA
/* Pairs already enabled: enabling twice is an error CUDA reports (and the
 * sanitizer lists), so each pair is enabled once per process. */
static pthread_mutex_t enabled_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char enabled[MGPU_MAX_DEVICES][MGPU_MAX_DEVICES];
#endif

#ifdef MGPU_HAVE_CUDA
/* cudaDeviceEnablePeerAccess for the current device; access that someone
 * else enabled already is fine. */
static cudaError_t enable_peer_access(int peer)
{
    cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();
        err = cudaSuccess;
    }
    return err;
}

static mgpu_status enable_on(int device, int peer)
{
    MGPU_CUDA_ON(device, enable_peer_access(peer));
    return MGPU_OK;
}
#endif

void mgpu_host_peer_set(int device, int peer, int can)
{
    if (device >= 0 && device < MGPU_MAX_DEVICES && peer >= 0 && peer < MGPU_MAX_DEVICES)
        host_no_peer[device][peer] = !can;
}

mgpu_status mgpu_peer_can_access(int device, int peer, int *can)
{
    MGPU_TRY(mgpu_check_device(device));
    MGPU_TRY(mgpu_check_device(peer));
    if (device == peer) {
        *can = 1;
        return MGPU_OK;
    }
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(cudaDeviceCanAccessPeer(can, device, peer), device);
        return MGPU_OK;
    }
#endif
    *can = !host_no_peer[device][peer];
    return MGPU_OK;
}

mgpu_status mgpu_peer_all(int n, int *all, int pair[2])
{
    *all = 1;
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++) {
            MGPU_TRY(mgpu_peer_can_access(a, b, all));
            if (!*all) {
                if (pair) {
                    pair[0] = a;
                    pair[1] = b;
                }
                return MGPU_OK;
            }
        }
    }
    return MGPU_OK;
}

mgpu_status mgpu_peer_link_get(int device, int peer, mgpu_peer_link *link)
{
    *link = (mgpu_peer_link){-1, -1, -1};
    MGPU_TRY(mgpu_check_device(device));
    MGPU_TRY(mgpu_check_device(peer));
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda() && device != peer) {
        MGPU_CUDA(
            cudaDeviceGetP2PAttribute(&link->access, cudaDevP2PAttrAccessSupported, device, peer),
            device);
        MGPU_CUDA(cudaDeviceGetP2PAttribute(&link->performance_rank, cudaDevP2PAttrPerformanceRank,
                                            device, peer),
                  device);
        MGPU_CUDA(cudaDeviceGetP2PAttribute(&link->native_atomics,
                                            cudaDevP2PAttrNativeAtomicSupported, device, peer),
                  device);
    }
#endif
    return MGPU_OK;
}

mgpu_status mgpu_peer_enable(int device, int peer)
{
    int can;
    MGPU_TRY(mgpu_peer_can_access(device, peer, &can));
    if (!can)
        return mgpu_fail(MGPU_ERR_UNSUPPORTED, "device %d cannot access device %d's memory", device,
                         peer);
    if (device == peer)
        return MGPU_OK;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        pthread_mutex_lock(&enabled_lock);
        mgpu_status status = MGPU_OK;
        if (!enabled[device][peer]) {
            status = enable_on(device, peer);
            enabled[device][peer] = status == MGPU_OK;
        }
        pthread_mutex_unlock(&enabled_lock);
        return status;
    }
#endif
    return MGPU_OK;
}

mgpu_status mgpu_copy_peer(void *dst, int dst_device, const void *src, int src_device, size_t bytes)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(cudaMemcpyPeer(dst, dst_device, src, src_device, bytes), src_device);
        return MGPU_OK;
    }
#endif
    (void) dst_device;
    (void) src_device;
    memmove(dst, src, bytes);
    return MGPU_OK;
}

mgpu_status mgpu_copy_peer_async(void *dst, int dst_device, const void *src, int src_device,
                                 size_t bytes, mgpu_stream *stream)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        cudaStream_t s = mgpu_stream_cuda(stream);
        enum cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
        MGPU_CUDA(cudaStreamIsCapturing(s, &capturing), src_device);
        /* A graph cannot hold cudaMemcpyPeerAsync; with unified addressing
         * cudaMemcpyAsync is the same copy, and a graph can (book 11.3 names
         * both). */
        if (capturing != cudaStreamCaptureStatusNone)
            MGPU_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s), src_device);
        else
            MGPU_CUDA(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, s), src_device);
        return MGPU_OK;
    }
#endif
    (void) dst_device;
    (void) src_device;
    (void) stream;
    memmove(dst, src, bytes);
    return MGPU_OK;
}

mgpu_status mgpu_copy_staged(void *dst, int dst_device, const void *src, int src_device,
                             size_t bytes, void *staging)
{
    (void) dst_device;
    (void) src_device;
    /* Unified addressing tells each copy its direction from the pointers. */
    MGPU_TRY(mgpu_memcpy(staging, src, bytes));
    return mgpu_memcpy(dst, staging, bytes);
}

mgpu_status mgpu_copy_device_to_device(void *dst, int dst_device, const void *src, int src_device,
                                       size_t bytes, void *staging, mgpu_copy_path *path)
{
    int can;
    MGPU_TRY(mgpu_peer_can_access(src_device, dst_device, &can));
    mgpu_copy_path taken = can ? MGPU_PATH_PEER : MGPU_PATH_STAGED;
    if (path)
        *path = taken;
    if (taken == MGPU_PATH_PEER) {
        MGPU_TRY(mgpu_peer_enable(src_device, dst_device));
        return mgpu_copy_peer(dst, dst_device, src, src_device, bytes);
    }
    if (!staging)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "devices %d and %d have no peer access and no "
                         "staging buffer was given",
                         src_device, dst_device);
    return mgpu_copy_staged(dst, dst_device, src, src_device, bytes, staging);
}
