// kernels-blocked-cuda.cu - temporal blocking on the device: T steps of a band of rows per
// pass over device memory, behind mgpu_kernel_rows_blocked (the contract is in mgpu.h).
//
// stencil-blocked.cuh has the algorithm (a warp's tile down a strip, T levels in registers);
// this file launches it, a tile and strip per warp, with the strips sized to the device.
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <atomic>
#include <stdint.h>

#include "mgpu-private.h"
#include "resident-wave.cuh"
#include "stencil-blocked.cuh"

namespace {

// WARPS tiles side by side per block (blockIdx.x), one strip of output rows per blockIdx.y.
template <mgpu_kernel K, int T, int VEC, int WARPS, bool PREFETCH>
__global__ void __launch_bounds__(WARPS * 32) blocked_kernel(blocked_band b)
{
    blocked_warp<K, T, VEC, PREFETCH, false>(
        b, static_cast<long long>(blockIdx.x) * WARPS + threadIdx.x / 32, blockIdx.y,
        static_cast<int>(threadIdx.x & 31));
}

// Rows per strip when the caller gives none: as many strips as fill whole waves of
// RESIDENT blocks (a last wave part full leaves the device part idle), in the fewest waves
// that keep strips to about TARGET rows, and no fewer than MIN rows.  A strip of S rows
// reads S + 2T rows, so longer strips redo less; more waves share the work out more evenly.
// A small band fills one wave with short strips: its time is one strip's latency.
// tools/blocked-tune.cu times the choices (doc/kernels.md).
long long blocked_strip(long long rows, long long col_blocks, long long resident, long long target,
                        long long min)
{
    long long per_wave = resident / col_blocks; // strips that one wave holds
    if (per_wave < 1)
        per_wave = 1;
    const long long waves = (rows + per_wave * target - 1) / (per_wave * target);
    long long strip = (rows + waves * per_wave - 1) / (waves * per_wave);
    if (strip < min)
        strip = min;
    return strip < rows ? strip : rows;
}

// STRIP rows a strip, or when STRIP <= 0 the rule's strip for TARGET rows, MIN at least.
template <mgpu_kernel K, int T, int VEC, int WARPS, bool PREFETCH>
cudaError_t launch_blocked(const float *in, float *out, long long nx, size_t pitch, long long r0,
                           long long r1, unsigned fixed, long long strip, long long target,
                           long long min, cudaStream_t s)
{
    using tile = blocked_tile<T, VEC>;
    const long long tiles = (nx - 1 + tile::stride - 1) / tile::stride; // columns [0, nx-1)
    const long long col_blocks = (tiles + WARPS - 1) / WARPS;
    if (col_blocks > 0x7fffffffLL)
        return cudaErrorInvalidValue;
    const long long rows = r1 - r0;
    const auto kernel = blocked_kernel<K, T, VEC, WARPS, PREFETCH>;
    if (strip <= 0) {
        static std::atomic<int> wave_cache[MGPU_MAX_DEVICES];
        long long resident;
        cudaError_t err = resident_wave(kernel, WARPS * 32, wave_cache, &resident);
        if (err != cudaSuccess)
            return err;
        strip = blocked_strip(rows, col_blocks, resident, target, min);
    }
    const long long max_y = 65535;
    if ((rows + strip - 1) / strip > max_y)
        strip = (rows + max_y - 1) / max_y;
    const blocked_band b = {in, out, nx, static_cast<long long>(pitch), r0, r1, strip, fixed, T};
    const dim3 grid(static_cast<unsigned>(col_blocks),
                    static_cast<unsigned>((rows + strip - 1) / strip));
    kernel<<<grid, WARPS * 32, 0, s>>>(b);
    return cudaGetLastError();
}

// The library's choice (tools/blocked-tune's measurements, doc/kernels.md): 2 warps a
// block, rows loaded one ahead, float4 columns where rows are 16-byte aligned, and strips
// of about 128 rows for jacobi (2T/128 of its rows redone) but 64 for pattern2d, whose
// square roots make it bound by arithmetic, not memory: more, shorter strips balance the
// multiprocessors' work better than fewer rows redone saves.  At least 2T rows a strip.
const int blocked_warps = 2;
const bool blocked_prefetch = true;
constexpr long long blocked_target_rows(mgpu_kernel k)
{
    return k == MGPU_KERNEL_PATTERN2D ? 64 : 128;
}

template <mgpu_kernel K, int T>
cudaError_t launch_blocked_aligned(const float *in, float *out, long long nx, size_t pitch,
                                   long long r0, long long r1, unsigned fixed, cudaStream_t s)
{
    const bool wide = reinterpret_cast<uintptr_t>(in) % 16 == 0 &&
                      reinterpret_cast<uintptr_t>(out) % 16 == 0 && pitch % 4 == 0;
    if (wide)
        return launch_blocked<K, T, 4, blocked_warps, blocked_prefetch>(
            in, out, nx, pitch, r0, r1, fixed, 0, blocked_target_rows(K), 2 * T, s);
    return launch_blocked<K, T, 1, blocked_warps, blocked_prefetch>(
        in, out, nx, pitch, r0, r1, fixed, 0, blocked_target_rows(K), 2 * T, s);
}

template <mgpu_kernel K>
cudaError_t launch_blocked_steps(const float *in, float *out, long long nx, size_t pitch,
                                 long long r0, long long r1, int steps, unsigned fixed,
                                 cudaStream_t s)
{
    switch (steps) {
    case 2:
        return launch_blocked_aligned<K, 2>(in, out, nx, pitch, r0, r1, fixed, s);
    case 3:
        return launch_blocked_aligned<K, 3>(in, out, nx, pitch, r0, r1, fixed, s);
    case 4:
        return launch_blocked_aligned<K, 4>(in, out, nx, pitch, r0, r1, fixed, s);
    case 5:
        return launch_blocked_aligned<K, 5>(in, out, nx, pitch, r0, r1, fixed, s);
    case 6:
        return launch_blocked_aligned<K, 6>(in, out, nx, pitch, r0, r1, fixed, s);
    case 7:
        return launch_blocked_aligned<K, 7>(in, out, nx, pitch, r0, r1, fixed, s);
    case 8:
        return launch_blocked_aligned<K, 8>(in, out, nx, pitch, r0, r1, fixed, s);
    }
    return cudaErrorInvalidValue;
}

} // namespace

extern "C" cudaError_t mgpu_cuda_stencil_rows_blocked(mgpu_kernel kernel, const float *in,
                                                      float *out, long long nx, size_t pitch,
                                                      long long r0, long long r1, int steps,
                                                      unsigned fixed, cudaStream_t s)
{
    if (r0 >= r1 || nx < 3)
        return cudaSuccess; // no interior cell to compute
    if (pitch < static_cast<size_t>(nx) || in == NULL || out == NULL || steps < 1 ||
        steps > MGPU_TIME_BLOCK_MAX)
        return cudaErrorInvalidValue;
    if (steps == 1) // the one-step kernel is the tuned one
        return mgpu_cuda_stencil_rows(kernel, in, out, nx, pitch, r0, r1, NULL, NULL, s);
    switch (kernel) {
    case MGPU_KERNEL_PATTERN2D:
        return launch_blocked_steps<MGPU_KERNEL_PATTERN2D>(in, out, nx, pitch, r0, r1, steps, fixed,
                                                           s);
    case MGPU_KERNEL_JACOBI:
        return launch_blocked_steps<MGPU_KERNEL_JACOBI>(in, out, nx, pitch, r0, r1, steps, fixed,
                                                        s);
    }
    return cudaErrorInvalidValue;
}
