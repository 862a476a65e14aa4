// resident-wave.cuh - how many blocks of a kernel one full wave of the current device
// holds, for the launches that size their grids in waves (kernels-cuda.cu's one-step
// stencil, kernels-blocked-cuda.cu's blocked one).
#ifndef MGPU_RESIDENT_WAVE_CUH
#define MGPU_RESIDENT_WAVE_CUH

#include <atomic>

#include "mgpu-private.h"

namespace {

// Multiprocessors times resident blocks of THREADS threads of KERNEL per multiprocessor
// (at least one) into *BLOCKS, asked once a device into CACHE: the queries take
// microseconds, a launch should not.  Threads driving different devices may fill the
// cache at once, hence atomics (0 = unknown).
template <class F>
cudaError_t resident_wave(F kernel, int threads, std::atomic<int> *cache, long long *blocks)
{
    int dev, sms, per_sm;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess)
        return err;
    const bool cached = dev >= 0 && dev < MGPU_MAX_DEVICES;
    int wave = cached ? cache[dev].load(std::memory_order_relaxed) : 0;
    if (wave == 0) {
        err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        if (err == cudaSuccess)
            err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0);
        if (err != cudaSuccess)
            return err;
        wave = sms * (per_sm > 0 ? per_sm : 1);
        if (cached)
            cache[dev].store(wave, std::memory_order_relaxed);
    }
    *blocks = wave;
    return cudaSuccess;
}

} // namespace

#endif
