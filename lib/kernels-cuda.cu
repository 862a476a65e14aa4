// kernels-cuda.cu - the CUDA stencil and row-copy kernels behind mgpu_kernel_rows and
// mgpu_copy_row_kernel, with the extern "C" launchers that the C files call.
//
// The stencil is memory-bound: per cell it must read one float and write one float,
// 8 bytes, for a handful of flops.  Its speed is the fraction of the device's copy
// bandwidth it reaches, and the design is about moving each byte once:
//
//  - Each thread owns VEC adjacent columns (VEC = 4: one aligned 16-byte float4; rows
//    are 128-byte aligned, so a warp reads 512 contiguous bytes per row) and walks a
//    strip of rows.  The rows above, at and below the current row stay in registers
//    as a rolling window, so each input row is read once per strip instead of three
//    times.
//  - Horizontal neighbours come from the neighbouring lanes through warp shuffles.
//    Only the first and last lane of a warp need a cell of another warp's columns;
//    they load it (an L1/L2 hit: the other warp reads the same sector).
//  - The grid is many short strips: columns across x in blocks of 256 threads, and
//    strips of rows across y, as many as make 24 waves of resident blocks
//    (multiprocessors x blocks per multiprocessor, asked once per device).  Short
//    strips balance the load as blocks come and go, where one wave of long strips
//    leaves multiprocessors idle at the end; they cost a re-read of the row above
//    and the row below each strip, which the next point keeps out of DRAM.
//    The blocks resident at any time then cover a narrow band of rows (on an H200 at
//    16384 x 16384, strips of 14 rows: a wave spans about 700 rows, 45 MB), so DRAM
//    sees accesses about as local as a plain copy's.
//  - Even strips walk down, odd ones up, so neighbouring strips read the rows they
//    share at about the same time and the second read hits L2.
//  - A range of one row launches one strip of blocks, not a grid of idle ones.
//
// Measured on H200 (doc/kernels.md, tools/kernel-tune.cu): 90-93% of cudaMemcpy's
// device-to-device bandwidth, as much as a float4 copy kernel reaches; the previous
// design (one-way strips, 4 waves of 128-thread blocks) reached 85-89%.
//
// Bit-exactness: the arithmetic uses __fadd_rn/__fsub_rn/__fmul_rn, which nvcc never
// contracts into a fused multiply-add, and __fsqrt_rn (IEEE, whatever the flags), in
// the order of the C reference compiled with -ffp-contract=off.  doc/kernels.md has
// the resource report and the measured bandwidth.
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <atomic>
#include <stdint.h>

#include "mgpu-private.h"
#include "resident-wave.cuh"
#include "stencil-cell.cuh"
#include "stencil-warp.cuh"

namespace {

// One strip of rows [j0, j1) per blockIdx.y, VEC columns per thread across x
// (stencil-warp.cuh's step_block).
template <mgpu_kernel K, int VEC, bool RAGGED>
__global__ void __launch_bounds__(stencil_block_max)
    stencil_kernel(const float *__restrict__ in, float *__restrict__ out, long long nx,
                   long long pitch, long long r0, long long r1, long long strip, edge_rows edges)
{
    step_block<K, VEC, RAGGED>(in, out, nx, pitch, r0, r1, strip, edges, blockIdx.y);
}

// ------------------------------------------------------------- the row copy

// DST[i] = SRC[i] for i < n (stencil-warp.cuh's copy_floats).
template <int VEC>
__global__ void copy_row_kernel(float *__restrict__ dst, const float *__restrict__ src, long long n)
{
    copy_floats<VEC>(dst, src, n);
}

// ------------------------------------------------------------- launch shapes

// Blocks of stencil_block_max threads that a full wave of the current device holds.  The
// variants differ little in registers; the pattern2d float4 one, the most used, stands
// for all.
std::atomic<int> stencil_wave_cache[MGPU_MAX_DEVICES];
cudaError_t resident_blocks(long long *blocks)
{
    return resident_wave(stencil_kernel<MGPU_KERNEL_PATTERN2D, 4, false>, stencil_block_max,
                         stencil_wave_cache, blocks);
}

template <mgpu_kernel K, int VEC>
cudaError_t launch_stencil(const float *in, float *out, long long nx, size_t pitch, long long r0,
                           long long r1, edge_rows edges, cudaStream_t s)
{
    long long wave;
    cudaError_t err = resident_blocks(&wave);
    if (err != cudaSuccess)
        return err;
    step_shape sh;
    if (!step_shape_of(nx, r1 - r0, VEC, wave, &sh))
        return cudaErrorInvalidValue; // wider than a grid can be
    const dim3 grid(static_cast<unsigned>(sh.col_blocks), static_cast<unsigned>(sh.strips));
    const unsigned threads = static_cast<unsigned>(sh.threads);
    if constexpr (VEC > 1) {
        if (nx % VEC != 0) {
            stencil_kernel<K, VEC, true><<<grid, threads, 0, s>>>(
                in, out, nx, static_cast<long long>(pitch), r0, r1, sh.strip, edges);
            return cudaGetLastError();
        }
    }
    stencil_kernel<K, VEC, false><<<grid, threads, 0, s>>>(
        in, out, nx, static_cast<long long>(pitch), r0, r1, sh.strip, edges);
    return cudaGetLastError();
}

template <mgpu_kernel K>
cudaError_t launch_stencil_kernel(const float *in, float *out, long long nx, size_t pitch,
                                  long long r0, long long r1, edge_rows edges, cudaStream_t s)
{
    const bool wide = rows_take_float4(in, out, edges, static_cast<long long>(pitch));
    if (wide)
        return launch_stencil<K, 4>(in, out, nx, pitch, r0, r1, edges, s);
    return launch_stencil<K, 1>(in, out, nx, pitch, r0, r1, edges, s);
}

} // namespace

// ------------------------------------------------------------- the launchers

extern "C" cudaError_t mgpu_cuda_stencil_rows(mgpu_kernel kernel, const float *in, float *out,
                                              long long nx, size_t pitch, long long r0,
                                              long long r1, float *first_to, float *last_to,
                                              cudaStream_t s)
{
    if (r0 >= r1 || nx < 3)
        return cudaSuccess; // no interior cell to compute
    if (pitch < static_cast<size_t>(nx) || in == NULL || out == NULL)
        return cudaErrorInvalidValue;
    const edge_rows edges = {first_to, last_to};
    switch (kernel) {
    case MGPU_KERNEL_PATTERN2D:
        return launch_stencil_kernel<MGPU_KERNEL_PATTERN2D>(in, out, nx, pitch, r0, r1, edges, s);
    case MGPU_KERNEL_JACOBI:
        return launch_stencil_kernel<MGPU_KERNEL_JACOBI>(in, out, nx, pitch, r0, r1, edges, s);
    }
    return cudaErrorInvalidValue;
}

extern "C" cudaError_t mgpu_cuda_copy_row(float *dst, const float *src, long long n, cudaStream_t s)
{
    if (n <= 0)
        return cudaSuccess;
    const int threads = 256;
    const bool wide = reinterpret_cast<uintptr_t>(dst) % 16 == 0 &&
                      reinterpret_cast<uintptr_t>(src) % 16 == 0;
    const long long items = wide ? n / 4 + 1 : n;
    // A row is at most a few hundred kilobytes: enough blocks to cover it once, capped
    // so that a huge row is walked by a grid-stride loop instead.
    long long blocks = (items + threads - 1) / threads;
    if (blocks > 1024)
        blocks = 1024;
    if (wide)
        copy_row_kernel<4><<<static_cast<unsigned>(blocks), threads, 0, s>>>(dst, src, n);
    else
        copy_row_kernel<1><<<static_cast<unsigned>(blocks), threads, 0, s>>>(dst, src, n);
    return cudaGetLastError();
}
