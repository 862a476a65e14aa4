// kernels-blocked-cuda.cu - temporal blocking on the device: T steps of a band of rows per
// pass over device memory, behind mgpu_kernel_rows_blocked (the contract is in mgpu.h).
//
// The one-step kernel moves 8 bytes a cell a step as fast as a copy does (doc/kernels.md);
// the only way past that roofline is to do several steps per byte moved.  Here each warp
// owns a tile of 32 x VEC columns and walks a strip of rows downwards as a wavefront in
// time, all in registers (AN5D's register streaming, CGO 2020, without its shared memory):
// when input row p arrives, the warp computes step 1 of row p-1, step 2 of row p-2, ...,
// step T of row p-T, each from the two rows of the step below that it keeps plus the row
// just made.  Per level that is two rows of VEC floats a thread: 8T registers at VEC = 4.
//
// Tiles are independent: no shared memory, no barrier.  The price is redundant work at
// the tile's sides and strip's ends.  A cell at level k is right only if its level k-1
// neighbours were, so the wrong cells at a tile's edge (whose outer neighbour is another
// warp's) spread one column a level: after T levels, MARGIN >= T columns at each side are
// wrong and only the middle STRIDE = 32 VEC - 2 MARGIN are stored; the next tile starts
// STRIDE columns on (at VEC = 4, T <= 4: 120 of 128 columns, 6% of the cells computed
// twice, the reloaded columns L2 hits).  Likewise a strip of S rows reads S + 2T rows.
//
// The row arithmetic is the one-step kernel's (stencil-warp.cuh, stencil-cell.cuh), so each
// level is bit-identical to a step of it.  What a step does not compute stays as it was:
// columns 0 and nx-1 and the caller's fixed rows keep their input value at every level.
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <atomic>
#include <stdint.h>

#include "mgpu-private.h"
#include "resident-wave.cuh"
#include "stencil-warp.cuh"

namespace {

// A warp's tile: 32 VEC columns loaded, the middle STRIDE stored.  MARGIN is a multiple of
// VEC, so that a thread's group of columns is all inside or all outside the row's start.
template <int T, int VEC> struct blocked_tile {
    static constexpr int margin = (T + VEC - 1) / VEC * VEC;
    static constexpr int stride = 32 * VEC - 2 * margin;
    static_assert(stride >= VEC, "the tile stores nothing: T too deep for VEC");
};

struct blocked_band {
    const float *in;
    float *out;
    long long nx, pitch;
    long long r0, r1; // the band's output rows
    long long strip;  // output rows per blockIdx.y
    unsigned fixed;   // MGPU_ROWS_FIXED_*
};

template <int VEC> __device__ __forceinline__ cols<VEC> zero_cols()
{
    cols<VEC> z;
#pragma unroll
    for (int q = 0; q < VEC; q++)
        z.v[q] = 0.0f;
    return z;
}

// WARPS tiles side by side per block (blockIdx.x), one strip of output rows per blockIdx.y.
// PREFETCH loads each input row one row ahead, so that its load is in flight while the T
// levels of the row before are computed (a warp's loop is otherwise load, then wait).
template <mgpu_kernel K, int T, int VEC, int WARPS, bool PREFETCH>
__global__ void __launch_bounds__(WARPS * 32) blocked_kernel(blocked_band b)
{
    using tile = blocked_tile<T, VEC>;
    const int lane = threadIdx.x & 31;
    const long long first = (static_cast<long long>(blockIdx.x) * WARPS + threadIdx.x / 32) *
                            tile::stride; // the tile's first stored column
    if (first >= b.nx - 1)
        return; // a whole warp past the row: the shuffles see only whole warps
    const long long col = first - tile::margin + static_cast<long long>(lane) * VEC;
    const bool outside = col < 0; // the first tile's left margin: zeros, never stored
    const bool whole = col + VEC <= b.nx;
    const bool owner = lane * VEC >= tile::margin && lane * VEC < tile::margin + tile::stride;
    const bool store_whole = col >= 1 && col + VEC <= b.nx - 1;
    // Columns of this thread that no step computes (0, nx-1, beyond): they keep their value.
    unsigned boundary = 0;
#pragma unroll
    for (int q = 0; q < VEC; q++)
        if (col + q < 1 || col + q > b.nx - 2)
            boundary |= 1u << q;

    const bool fixed_top = b.fixed & MGPU_ROWS_FIXED_TOP;
    const bool fixed_bottom = b.fixed & MGPU_ROWS_FIXED_BOTTOM;
    const long long j0 = b.r0 + static_cast<long long>(blockIdx.y) * b.strip;
    const long long j1 = j0 + b.strip < b.r1 ? j0 + b.strip : b.r1;
    // Input rows [lo, hi): T beyond the strip at each end, none past a fixed row.
    long long lo = j0 - T, hi = j1 + T;
    if (fixed_top && lo < b.r0 - 1)
        lo = b.r0 - 1;
    if (fixed_bottom && hi > b.r1 + 1)
        hi = b.r1 + 1;

    // Level k's two latest rows (level 0: the input).  Rows before the first loaded are
    // zeros: they only make cells outside what the strip stores.
    cols<VEC> behind[T], centre[T];
#pragma unroll
    for (int k = 0; k < T; k++)
        behind[k] = centre[k] = zero_cols<VEC>();

    // Input row P; past HI (a fixed bottom row) the pipeline only drains: nothing is loaded.
    auto input_row = [&](long long p) {
        return outside || p >= hi ? zero_cols<VEC>()
                                  : load_cols<VEC>(b.in + p * b.pitch, col, b.nx, whole);
    };
    cols<VEC> ahead = PREFETCH ? input_row(lo) : zero_cols<VEC>();
    for (long long p = lo; p < j1 + T; p++) {
        cols<VEC> fresh;
        if (PREFETCH) {
            fresh = ahead;
            ahead = input_row(p + 1);
        } else {
            fresh = input_row(p);
        }
#pragma unroll
        for (int k = 1; k <= T; k++) {
            cols<VEC> r = compute_row<K, VEC>(lane, behind[k - 1], centre[k - 1], 0.0f, fresh);
            if (k < T) { // the stored level writes only interior columns anyway
                const long long i = p - k;
                const bool fixed_row = (fixed_top && i == b.r0 - 1) || (fixed_bottom && i == b.r1);
                const unsigned keep = fixed_row ? ~0u : boundary;
#pragma unroll
                for (int q = 0; q < VEC; q++)
                    if (keep & (1u << q))
                        r.v[q] = centre[k - 1].v[q];
            }
            behind[k - 1] = centre[k - 1];
            centre[k - 1] = fresh;
            fresh = r;
        }
        const long long i = p - T;
        if (owner && i >= j0)
            store_cols<VEC>(b.out + i * b.pitch, col, b.nx, store_whole, fresh);
    }
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
    const blocked_band b = {in, out, nx, static_cast<long long>(pitch), r0, r1, strip, fixed};
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
