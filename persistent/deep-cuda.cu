// deep-cuda.cu - mgpu-persistent's resident kernel for deep halos (--halo=K > 1): one
// cooperative launch per device runs every step of the part, K steps a cycle.  A cycle is
// the library's passes of up to T = --time-block steps (lib/stencil-blocked.cuh, bit-identical
// to T one-step passes), the first of which begins with each warp copying, through peer
// pointers, the neighbours' rows that its strip reads into this part's halo rows: each kernel
// pulls, and writes no field memory but its own (only its counters go into the neighbours'
// memory).  Then a grid barrier, and the count of cycles done goes to the neighbours
// (resident.cuh).  So a cycle of K steps costs ceil(K/T) grid barriers and one flag wait
// (two where T < K: the neighbours' copies too), where a one-row-halo step costs a barrier
// and a flag wait each.
//
// The passes and buffers are the library's (lib/stencil.c): after the copies at step cK the
// halos hold step cK, so the pass that starts at phase i of the cycle and runs n steps
// computes the slab and K-i-n rows beyond it on each side that has a neighbour (the
// trapezoid), reading the buffer the passes before left the field in and writing the other.
// The field after the run is where the library's gather looks for it.
//
// Hazards between devices, for a part P and a neighbour N, at cycle c (B: the buffer the
// field of step cK is in, the same on every part):
//  - read after write: P copies N's edge rows of buffer B, which N's last pass of cycle c-1
//    wrote.  N ends each cycle with its threads' system-scope fences, a grid barrier, and
//    then READY (N's from_above/from_below in P's memory) = c + 1 with a release store.
//    Before its first pass each block of P waits, in one thread with acquire loads, for
//    READY >= c, and its other threads pass a block barrier after it.  At c = 0 the host's
//    reset, finished on every device before any launch, put the rows there.
//  - write after read: N's next write to those rows.  With one pass a cycle (T = K) that is
//    N's pass of cycle c+1, after N waited for P's READY >= c+1, which P gives after the
//    grid barrier that ends its cycle c, copies included.  With more passes (T < K), N's
//    second pass of cycle c writes buffer B again: before it each block of N waits for P's
//    PULLED (pulled_by_above/below in N's memory) >= c + 1, which P gives after the grid
//    barrier that ends its first pass, copies included.
// Nothing else crosses devices: no kernel writes another's field.  Inside a device, a warp
// reads of its halo rows only the cells it copied itself (its columns of its strip's rows; a
// warp beside it may write some of them too, the same values), and the grid barrier after
// each pass orders the next pass's reads after every write they need: a pass reads only rows
// that the pass before it wrote, or the halo rows its first pass pulled.  Loads go through
// L2 (__ldcg: L1 sees neither other multiprocessors' writes nor a peer's).  A part alone with
// periodic rows (jacobi on one device) copies its own rows.
//
// A wait that gives up (the host's STOP, or --wait-limit) is recorded at the step it waited
// for (the cycle's first, or the second pass's); the block skips its passes, and every block
// leaves at the grid barrier after it (resident.cuh).
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <cooperative_groups.h>
#include <stdint.h>

#include "mgpu-private.h"
#include "persistent.h"
#include "resident.cuh"
#include "stencil-blocked.cuh"

namespace cg = cooperative_groups;

namespace {

// ROWS rows of PITCH floats, this thread's VEC columns from COL, FROM (a neighbour's memory)
// to TO (mine).  The loads of a batch go out together: a peer's rows are a link's latency
// away, paid once a batch rather than once a row.
template <int VEC>
__device__ void copy_rows(float *__restrict__ to, const float *__restrict__ from, long long rows,
                          long long pitch, long long col, long long nx)
{
    const int batch = 4;
    const bool whole = col + VEC <= nx;
    for (long long r0 = 0; r0 < rows; r0 += batch) {
        cols<VEC> v[batch];
#pragma unroll
        for (int i = 0; i < batch; i++)
            if (r0 + i < rows)
                v[i] = load_cols<VEC, true>(from + (r0 + i) * pitch, col, nx, whole);
#pragma unroll
        for (int i = 0; i < batch; i++)
            if (r0 + i < rows)
                store_cols<VEC, true>(to + (r0 + i) * pitch, col, nx, whole, v[i]);
    }
}

// My halo rows of buffer B among local rows [LO, HI), this thread's VEC columns from COL,
// from the neighbours' edge rows: the top halo (rows 0..K-1) is the part above's last K
// rows, the bottom one (rows+K..rows+2K-1) the part below's first K.
template <int VEC>
__device__ void pull_rows(const persistent_part &d, int b, long long lo, long long hi,
                          long long col)
{
    if (col < 0 || col >= d.nx)
        return;
    const long long k = d.halo, pitch = static_cast<long long>(d.pitch), end = d.rows + k;
    const long long top0 = lo > 0 ? lo : 0, top1 = hi < k ? hi : k;
    const long long bottom0 = lo > end ? lo : end, bottom1 = hi < end + k ? hi : end + k;
    if (d.pull_top[b] && top0 < top1)
        copy_rows<VEC>(d.buf[b] + top0 * pitch, d.pull_top[b] + top0 * pitch, top1 - top0, pitch,
                       col, d.nx);
    if (d.pull_bottom[b] && bottom0 < bottom1)
        copy_rows<VEC>(d.buf[b] + bottom0 * pitch, d.pull_bottom[b] + (bottom0 - end) * pitch,
                       bottom1 - bottom0, pitch, col, d.nx);
}

// Every halo row of buffer B, spread over the whole grid (the exchange-alone run's copies).
template <int VEC>
__device__ void pull_halos(const persistent_part &d, int b, long long thread, long long threads)
{
    const long long groups = (d.nx + VEC - 1) / VEC;
    for (long long g = thread; g < groups; g += threads)
        pull_rows<VEC>(d, b, 0, d.rows + 2 * d.halo, g * VEC);
}

// The rows a warp's strip reads: the halo rows among them copied in first, when the pass is
// the first of a cycle (PULL, the buffer, else -1).
template <int VEC> struct halo_inputs {
    const persistent_part &d;
    int pull;
    __device__ void operator()(long long col, long long lo, long long hi) const
    {
        if (pull >= 0)
            pull_rows<VEC>(d, pull, lo, hi, col);
    }
};

// One pass of N steps (up to T; fewer for the last pass of a cycle where T does not divide K,
// or of the run): local rows [L0, L1) from buffer IN to OUT, as the library's launch computes
// it (lib/kernels-blocked-cuda.cu), a tile and strip at a time on each warp.  The strips are as
// short as gives every warp one, since a warp walks its strip row after row: a pass takes
// one strip's walk, S + 2T rows, where the warps are enough for every strip at once (small
// slabs), so strips shorter than the library's 2T rows make the pass shorter, though more
// rows are read twice.  In a cycle's first pass (PULL >= 0) each warp first copies the halo
// rows its strip reads, its own columns of them, so that no grid barrier stands between the
// copies and the pass: every cell a warp reads of them it wrote itself (another warp may
// write the same cells, with the same values).
template <mgpu_kernel K, int VEC, int T>
__device__ void pass_of(const persistent_part &d, int n, const float *in, float *out, long long l0,
                        long long l1, unsigned fixed, int pull, long long warp, long long warps,
                        int lane)
{
    using tile = blocked_tile<T, VEC>;
    const long long tiles = (d.nx - 1 + tile::stride - 1) / tile::stride; // columns [0, nx-1)
    const long long rows = l1 - l0;
    const long long per_tile = warps / tiles > 1 ? warps / tiles : 1;
    long long strip = (rows + per_tile - 1) / per_tile;
    // Already at most ROWS (per_tile >= 1); said again for the compiler: without this line
    // ptxas makes other code (PTX with more registers), not measured on a GPU yet.
    strip = strip < rows ? strip : rows;
    const long long strips = (rows + strip - 1) / strip;
    const blocked_band band = {in,    out,   d.nx, static_cast<long long>(d.pitch), l0, l1,
                               strip, fixed, n};
    const halo_inputs<VEC> inputs = {d, pull};
    for (long long task = warp; task < tiles * strips; task += warps)
        blocked_warp<K, T, VEC, true, true, true>(band, task % tiles, task / tiles, lane, inputs);
}

// Thread 0 of each block waits for my counters ABOVE and BELOW to reach WANT (the counters
// are in this device's memory: every block may poll them), then sleeps if this is the slow
// part of MGPU_INJECT_DELAY, and the block learns whether it may go on.  A wait that gives
// up is recorded at STEP; every block leaves at the next grid barrier after it.
__device__ bool block_waits(const persistent_part &d, u64 *above, u64 *below, u64 want,
                            long long step)
{
    bool ok = true;
    if (threadIdx.x == 0 && !(wait_words(d, above, below, want, step) && dawdle(d, blockIdx.x))) {
        record_abort(d, step);
        ok = false;
    }
    return __syncthreads_and(ok);
}

// The launch bounds tell ptxas how many blocks of 256 threads a multiprocessor should hold:
// two where a strip's T levels fit in 128 registers a thread without spilling (T up to 4;
// --blocks-per-sm=2 then runs twice the warps), else one (up to 255 registers; 195-202 at T = 8).
template <mgpu_kernel K, int VEC, int TB>
__global__ void __launch_bounds__(PERSISTENT_DEEP_THREADS, TB <= 4 ? 2 : 1)
    deep_kernel(persistent_part d)
{
    cg::grid_group grid = cg::this_grid();
    const bool leader = grid.thread_rank() == 0;
    const long long thread = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    const int lane = static_cast<int>(threadIdx.x & 31);
    // A pass's tasks go to the first warp of every block, then the second...: where there
    // are fewer than warps, they spread over the multiprocessors, not fill a few.
    const long long warp = static_cast<long long>(threadIdx.x / 32) * gridDim.x + blockIdx.x;
    const long long k = d.halo;
    const bool top = d.pull_top[0], bottom = d.pull_bottom[0];
    const unsigned fixed = (top ? 0u : MGPU_ROWS_FIXED_TOP) |
                           (bottom ? 0u : MGPU_ROWS_FIXED_BOTTOM);
    int b = 0;
    dawdle_at_start(d);
    for (long long s = 0, c = 0; s < d.steps; s += k, c++) {
        // The step at which this cycle's latest wait gives up, should it: the barrier after a
        // wait looks for its record (aborted), and a later wait records a later step, so that
        // no block, however late it reads, mistakes that record for one made before the barrier.
        long long waited = s;
        // Read after write: the neighbours' edge rows of buffer B hold step S.
        bool ok = c == 0 || block_waits(d, &d.flags->from_above, &d.flags->from_below,
                                        static_cast<u64>(c), waited);
        if (!d.compute && ok)
            pull_halos<VEC>(d, b, thread, threads);
        for (long long phase = 0; d.compute && phase < k && s + phase < d.steps;) {
            long long n = d.time_block < k - phase ? d.time_block : k - phase;
            n = n < d.steps - s - phase ? n : d.steps - s - phase;
            if (phase > 0) {
                grid.sync();
                if (aborted(d, waited))
                    return;
                if (phase == d.time_block) {
                    // Write after read: this pass rewrites my edge rows, which the
                    // neighbours copy in their first pass; mine were copied in mine.
                    if (leader)
                        publish_to(d.up_pulled, d.down_pulled, static_cast<u64>(c) + 1);
                    waited = s + phase;
                    ok = block_waits(d, &d.flags->pulled_by_above, &d.flags->pulled_by_below,
                                     static_cast<u64>(c) + 1, waited);
                }
            }
            const long long beyond = k - phase - n;
            if (ok)
                pass_of<K, VEC, TB>(d, static_cast<int>(n), d.buf[b], d.buf[b ^ 1],
                                    k - (top ? beyond : 0), k + d.rows + (bottom ? beyond : 0),
                                    fixed, phase == 0 ? b : -1, warp, threads / 32, lane);
            b ^= 1;
            phase += n;
        }
        // My edge rows reach the neighbours' copies before the count says so.
        __threadfence_system();
        grid.sync();
        if (aborted(d, waited))
            return;
        if (leader)
            publish_to(d.up_flag, d.down_flag, static_cast<u64>(c) + 1);
    }
}

// The kernel of a kernel and time block (TB = 1 to MGPU_TIME_BLOCK_MAX), float4 columns: the
// stencil domain's rows are 16-byte aligned (its pitch is a multiple of 32 floats), so that
// one column a thread is never needed here (persistent_prepare checks).
template <mgpu_kernel K, int TB> persistent_kernel_fn deep_of(int time_block)
{
    if constexpr (TB < MGPU_TIME_BLOCK_MAX) {
        if (time_block > TB)
            return deep_of<K, TB + 1>(time_block);
    }
    return deep_kernel<K, 4, TB>;
}

} // namespace

persistent_kernel_fn deep_kernel_of(const persistent_part *d)
{
    return d->kernel == MGPU_KERNEL_JACOBI ? deep_of<MGPU_KERNEL_JACOBI, 1>(d->time_block)
                                           : deep_of<MGPU_KERNEL_PATTERN2D, 1>(d->time_block);
}
