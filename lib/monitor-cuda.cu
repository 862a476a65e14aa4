// monitor-cuda.cu - book 11.2 on GPUs: a persistent stencil kernel that runs every step
// of its part in one launch and counts its progress, and the monitor kernel that passes
// the count on to the host while the worker runs.
//
// The worker meets its neighbours' workers, on other devices, through counters: at step
// t each part first pushes its edge rows (of the buffer step t reads) into its
// neighbours' halos over the peer link, then advances their arrival counters to t+1,
// then waits until its own counters reach t+1, and only then computes.  Why that is
// enough with two alternating buffers: a part writes a neighbour's halo of buffer t%2 at
// step t; the neighbour last read that halo at its step t-2, and this part only got past
// step t-1 after the neighbour's counter said t, which the neighbour advanced after
// finishing step t-2.  The halo it reads at step t is there because it waited for t+1.
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <cooperative_groups.h>

#include "monitor-cuda.h"
#include "stencil-cell.cuh"

namespace cg = cooperative_groups;

namespace {

const int worker_threads = 256;

__device__ __forceinline__ int load_volatile(const int *p)
{
    return *static_cast<const volatile int *>(p);
}

__device__ __forceinline__ void store_volatile(int *p, int value)
{
    *static_cast<volatile int *>(p) = value;
}

__device__ __forceinline__ bool stopped(const mgpu_signal *signal)
{
    return load_volatile(&signal->stop) != 0;
}

// A spinning thread gives the multiprocessor to others for a while.
__device__ __forceinline__ void pause_briefly(unsigned nanoseconds)
{
#if __CUDA_ARCH__ >= 700
    __nanosleep(nanoseconds);
#else
    (void) nanoseconds;
#endif
}

// Record who stopped the run and at which step, then raise STOP for every kernel.
__device__ void stop_run(const mgpu_persistent_desc &d, long long step)
{
    volatile mgpu_signal *signal = d.signal;
    signal->failed_step = step;
    signal->failed_part = d.part + 1;
    __threadfence_system();
    signal->stop = 1;
    __threadfence_system();
}

// Rows 1..rows of OUT from IN, interior columns, a row per block at a time.  Loads bypass
// L1 (__ldcg): the rows were written during this launch, by other multiprocessors or, for
// the halos, by other devices, and L1 is not coherent with either.
template <mgpu_kernel K>
__device__ void compute_rows(const mgpu_persistent_desc &d, const float *in, float *out)
{
    const long long nx = d.nx;
    const size_t pitch = d.pitch;
    for (long long j = 1 + blockIdx.x; j <= d.rows; j += gridDim.x) {
        const float *row = in + j * pitch;
        const float *north = row - pitch, *south = row + pitch;
        float *dst = out + j * pitch;
        for (long long i = 1 + threadIdx.x; i < nx - 1; i += blockDim.x)
            dst[i] = cell_rule<K>::apply(__ldcg(row + i), __ldcg(row + i - 1), __ldcg(row + i + 1),
                                         __ldcg(north + i), __ldcg(south + i));
    }
}

template <mgpu_kernel K>
__global__ void __launch_bounds__(worker_threads) persistent_kernel(mgpu_persistent_desc d)
{
    cg::grid_group grid = cg::this_grid();
    const bool leader = grid.thread_rank() == 0;
    mgpu_counters *mine = d.counters;
    for (long long t = 0; t < d.steps; t++) {
        const int b = static_cast<int>(t & 1);
        const float *in = d.buf[b];
        // 1. The edge rows of the buffer this step reads into the neighbours' halos.
        for (long long i = grid.thread_rank(); i < d.nx; i += grid.size()) {
            if (d.up[b])
                d.up[b][i] = __ldcg(in + d.pitch + i);
            if (d.down[b])
                d.down[b][i] = __ldcg(in + d.rows * d.pitch + i);
        }
        __threadfence_system(); // the rows reach the peers before the counters say so
        grid.sync();
        if (leader) {
            const int arrived = static_cast<int>(t + 1);
            if (t == d.fail_step)
                stop_run(d, t);
            __threadfence_system();
            if (d.up[b])
                store_volatile(d.up_arrived, arrived);
            if (d.down[b])
                store_volatile(d.down_arrived, arrived);
            // 2. Wait for the neighbours' rows; give up when the run is stopped.
            while (!stopped(d.signal) &&
                   ((d.up[b] && load_volatile(&mine->arrived[0]) < arrived) ||
                    (d.down[b] && load_volatile(&mine->arrived[1]) < arrived)))
                pause_briefly(200);
            __threadfence_system();
            store_volatile(&mine->leave, stopped(d.signal));
        }
        grid.sync();
        if (load_volatile(&mine->leave))
            return; // every block sees the same flag, so all leave together
        // 3. The step.
        if (d.compute)
            compute_rows<K>(d, in, d.buf[b ^ 1]);
        grid.sync();
        if (leader)
            store_volatile(&mine->progress, static_cast<int>(t + 1));
    }
}

// Book 11.2's monitor: one thread that watches the worker's count in device memory and
// copies each new value to the host's mapped memory, so that the worker never waits on
// the host link.  It ends with the worker's last step, or when the run is stopped.
__global__ void monitor_kernel(const mgpu_counters *counters, mgpu_signal *signal, int part,
                               long long steps)
{
    volatile mgpu_signal *host = signal;
    int seen = -1;
    for (;;) {
        const int progress = load_volatile(&counters->progress);
        if (progress != seen) {
            host->progress[part] = progress;
            __threadfence_system();
            seen = progress;
        }
        if (progress >= steps || host->stop)
            return;
        pause_briefly(1000);
    }
}

template <mgpu_kernel K>
cudaError_t launch_persistent(const mgpu_persistent_desc *desc, cudaStream_t s)
{
    int dev, cooperative = 0, sms = 0, per_sm = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (err == cudaSuccess)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent_kernel<K>,
                                                            worker_threads, 0);
    if (err != cudaSuccess)
        return err;
    if (!cooperative)
        return cudaErrorNotSupported;
    // A cooperative launch starts only when all its blocks can be resident at once; the
    // monitor, launched before, holds one block's room, so one block fewer than the device
    // holds.  More blocks than rows would only wait at the barriers.
    long long blocks = static_cast<long long>(sms) * per_sm - 1;
    if (blocks > desc->rows)
        blocks = desc->rows;
    if (blocks < 1)
        blocks = 1;
    mgpu_persistent_desc copy = *desc;
    void *args[] = {&copy};
    return cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(persistent_kernel<K>),
                                       dim3(static_cast<unsigned>(blocks)), dim3(worker_threads),
                                       args, 0, s);
}

// CUDA loads a kernel's code on the device at its first use (lazy loading), and loading
// may wait for the kernels running there: loading the worker while its monitor spins
// would wait forever.  So the monitor's launch loads both first.
cudaError_t load_kernels()
{
    cudaFuncAttributes attributes;
    cudaError_t err = cudaFuncGetAttributes(&attributes, monitor_kernel);
    if (err == cudaSuccess)
        err = cudaFuncGetAttributes(&attributes, persistent_kernel<MGPU_KERNEL_PATTERN2D>);
    if (err == cudaSuccess)
        err = cudaFuncGetAttributes(&attributes, persistent_kernel<MGPU_KERNEL_JACOBI>);
    return err;
}

} // namespace

extern "C" cudaError_t mgpu_cuda_persistent_launch(const mgpu_persistent_desc *desc, cudaStream_t s)
{
    switch (desc->kernel) {
    case MGPU_KERNEL_PATTERN2D:
        return launch_persistent<MGPU_KERNEL_PATTERN2D>(desc, s);
    case MGPU_KERNEL_JACOBI:
        return launch_persistent<MGPU_KERNEL_JACOBI>(desc, s);
    }
    return cudaErrorInvalidValue;
}

extern "C" cudaError_t mgpu_cuda_monitor_launch(mgpu_counters *counters, mgpu_signal *signal,
                                                int part, long long steps, cudaStream_t s)
{
    cudaError_t err = load_kernels();
    if (err != cudaSuccess)
        return err;
    monitor_kernel<<<1, 1, 0, s>>>(counters, signal, part, steps);
    return cudaGetLastError();
}
