// persistent-cuda.cu - mgpu-persistent's kernel: one cooperative launch per device runs every
// step of the device's part, computing its slab, writing its edge rows into the neighbours' halos
// through peer pointers and meeting the neighbours' kernels through flags in device memory.
// doc/persistent.md has the protocol; the hazards are reasoned out here, beside the code.
//
// The buffers alternate as in lib/stencil.c: the field before step t is in buffer t%2, so step
// t reads buffer t%2 (with its halo rows) and writes buffer (t+1)%2, and the edge rows it
// computes also go into the neighbours' halo rows of buffer (t+1)%2.  A part's halo rows are
// written only by its neighbours; everything else only by itself.
//
// Hazards between devices, for a part P and a neighbour N:
//  - read after write: P's step t reads its halo of buffer t%2, which N writes at its step t-1
//    (at phase 0, before step 0, for t = 0).  P must not read it before N's write is visible.
//  - write after read: P's step t writes N's halo of buffer (t+1)%2, which N read at its step
//    t-1 (the same buffer, two steps earlier).  P must not write it while N may still read it.
// Both are closed by one flag per direction.  N's flag in P's memory counts the exchange phases
// N has finished (phase 0 is the exchange before step 0, phase t+1 is step t), and N advances it
// only after (a) its halo writes for P are visible (every writing thread fences at system scope,
// then the count is published with a system-scope release store) and (b) it has finished every
// read of its own halos of that phase.  P waits, with acquire loads, for the flag to reach t+1
// before the work of step t that reads its halos or writes N's: then N's step t-1 writes are
// visible to P (read after write), and N's step t-1 reads, the last of N's halo of buffer
// (t+1)%2 before P overwrites it, are over (write after read).  Nothing else crosses devices:
// halo rows are the only memory written by another device, and only the edge rows (rows 1
// and rows) read them.
//
// Hazards inside a device (a block reads rows another block wrote at the previous step, or
// overwrites rows another block still reads) are closed by the grid-wide barrier between
// steps (cooperative groups, legal because every block is resident: cooperative launch).
// Loads of the field bypass L1 (__ldcg): L1 is coherent neither with other multiprocessors
// nor with the peer's writes, which land in this device's L2.
//
// With one part and periodic rows (jacobi on one device) the part is its own neighbour: it
// writes its own halos, ordered by the grid barrier alone, and no flag is used.
//
// Ending: a wait that sees the host's STOP word (the host saw a failure) or that lasts longer
// than the wait limit gives up.  Every block must then leave at the same barrier, or the others
// would wait there forever: a waiting thread that gives up at step t records t+1 in abort_at
// (compare-and-swap from 0, so the first, and earliest, step stays), and after the next grid
// barrier every block reads abort_at and leaves when it is set to at most t+1.  Records made
// before that barrier are all of step t or earlier (every thread arrives at it only after its
// step t work), records of step t+1 come after it and cannot be mistaken for step t's: every
// block decides alike.
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <cooperative_groups.h>
#include <cuda/atomic>
#include <stdint.h>

#include "mgpu-private.h"
#include "persistent.h"
#include "resident.cuh"
#include "stencil-warp.cuh"

namespace cg = cooperative_groups;

namespace {

const int block_threads = PERSISTENT_BLOCK_THREADS;

// ------------------------------------------------------------- one tile

// A tile is 32*VEC columns of one row, one warp's work: the warp's lanes hold adjacent columns,
// so a cell's left and right neighbours come from the next lanes by shuffles, and only lanes 0
// and 31 load a cell of the next tile.  Local row J of OUT from rows J-1..J+1 of IN (COMPUTE), or
// row J of IN as it is (the exchange alone); row 1 also goes to UP, row ROWS to DOWN (either
// NULL).  Every lane runs it (the shuffles need the whole warp); lanes past the row store
// nothing.  The boundary columns 0 and nx-1 are copied, not computed: they are the same in
// both buffers, and a neighbour's halo row gets the whole row as the library's exchange gives.
template <mgpu_kernel K, int VEC, bool COMPUTE>
__device__ __forceinline__ void do_tile(const persistent_part &d, const float *in, float *out,
                                        float *up, float *down, long long j, long long chunk,
                                        int lane)
{
    const long long nx = d.nx;
    const long long col = (chunk * 32 + lane) * VEC;
    const float *row = in + j * static_cast<long long>(d.pitch);
    const bool whole = col + VEC <= nx;
    const cols<VEC> c = load_cols<VEC, true>(row, col, nx, whole);
    cols<VEC> r = c;
    if constexpr (COMPUTE) {
        const cols<VEC> n = load_cols<VEC, true>(row - d.pitch, col, nx, whole);
        const cols<VEC> s = load_cols<VEC, true>(row + d.pitch, col, nx, whole);
        const float edge = load_edge<VEC, true>(row, col, nx, lane);
        const cols<VEC> computed = compute_row<K, VEC>(lane, n, c, edge, s);
#pragma unroll
        for (int k = 0; k < VEC; k++)
            if (col + k >= 1 && col + k <= nx - 2)
                r.v[k] = computed.v[k];
        store_cols<VEC, true>(out + j * static_cast<long long>(d.pitch), col, nx, whole, r);
    }
    if (j == 1 && up)
        store_cols<VEC, true>(up, col, nx, whole, r);
    if (j == d.rows && down)
        store_cols<VEC, true>(down, col, nx, whole, r);
}

// ------------------------------------------------------------- flags

// Tell the neighbours that phase PHASE is done: my halo writes of it are visible (the writers
// fenced at system scope before this thread learnt of them) and my reads of my halos of it are
// over (resident.cuh's publish_to).
__device__ __forceinline__ void publish(const persistent_part &d, u64 phase)
{
    publish_to(d.up_flag, d.down_flag, phase + 1);
}

// Wait until both neighbours have finished phase STEP (their flags reach STEP+1), the phases
// that step STEP's halo reads and writes depend on (resident.cuh's wait_words).  One thread per
// waiting warp or block calls it; its acquire loads order the halo reads after.
__device__ bool wait_neighbours(const persistent_part &d, long long step)
{
    return wait_words(d, &d.flags->from_above, &d.flags->from_below, static_cast<u64>(step) + 1,
                      step);
}

// ------------------------------------------------------------- the passes

struct shape {
    long long chunks;     // tiles per row
    long long edge_tiles; // the tiles of rows 1 and ROWS, first in the order
    long long strip;      // interior rows (2 .. ROWS-1) a strip
    long long tasks;      // the edge tiles, then the interior's strips, chunks x strips
    long long warp, warps;
    int lane;
};

// Edge tile T's row: rows 1 and ROWS, which the neighbours wait for, come first in the order.
__device__ __forceinline__ long long row_of_tile(const persistent_part &d, const shape &sh,
                                                 long long t, long long *chunk)
{
    const long long k = t / sh.chunks;
    *chunk = t - k * sh.chunks;
    return k == 0 ? 1 : d.rows;
}

// Interior rows [J0, J1), this lane's VEC columns from COL, walked as the library's one-step
// kernel walks a strip (stencil-warp.cuh): each row loaded once rather than three times as a
// tile of one row does, and an iteration early.  Out of line, its arguments by value: the
// 1024-thread blocks leave 64 registers a thread, and with the pass's state beside the walk's
// window ptxas spilled into the walk (120 bytes stored, up to 356 loaded a thread at VEC = 4);
// here the walk spills at most 16 bytes, loaded, and the kernel saves its state once a strip.
template <mgpu_kernel K, int VEC>
__device__ __noinline__ void walk_interior(const float *in, float *out, long long nx,
                                           long long pitch, long long j0, long long j1,
                                           long long col, int lane, bool down)
{
    const bool whole = col + VEC <= nx, store_whole = col >= 1 && col + VEC <= nx - 1;
    const edge_rows nowhere = {nullptr, nullptr};
    if (down)
        walk_strip<K, VEC, true, true, true>(in, out, nx, pitch, j0, j1, 0, 0, nowhere, col, col,
                                             lane, whole, store_whole);
    else
        walk_strip<K, VEC, false, true, true>(in, out, nx, pitch, j0, j1, 0, 0, nowhere, col, col,
                                              lane, whole, store_whole);
}

// Task T past the edge tiles: a tile's columns down a strip of interior rows.  Even strips
// walk down, odd ones up, so that two neighbouring strips read the rows they share at about
// the same time.  Interior rows read no halo row and go nowhere else: the strips never wait.
template <mgpu_kernel K, int VEC>
__device__ __forceinline__ void do_strip(const persistent_part &d, const shape &sh, const float *in,
                                         float *out, long long t)
{
    const long long u = t - sh.edge_tiles, strip = u / sh.chunks;
    const long long j0 = 2 + strip * sh.strip;
    const long long j1 = j0 + sh.strip < d.rows ? j0 + sh.strip : d.rows;
    const long long col = ((u - strip * sh.chunks) * 32 + sh.lane) * VEC;
    walk_interior<K, VEC>(in, out, d.nx, static_cast<long long>(d.pitch), j0, j1, col, sh.lane,
                          strip % 2 == 0);
}

// The overlap protocol's pass for PHASE (0: the exchange before step 0; t+1: step t).  A warp
// with edge tiles first waits for the neighbours (not at phase 0: no halo is read, and no
// neighbour has read the halos it writes), computes them, fences its halo writes, and counts
// them in edges_done; the warp that completes the phase's count publishes the phase.  Warps
// with interior strips go on meanwhile: they neither read halos nor write a neighbour's memory.
template <mgpu_kernel K, int VEC, bool COMPUTE>
__device__ void overlap_pass(const persistent_part &d, const shape &sh, long long phase,
                             const float *in, float *out, float *up, float *down)
{
    const bool talks = d.up_flag || d.down_flag;
    bool ready = phase == 0 || !(d.wait_above || d.wait_below), give_up = false;
    long long handled = 0, t = sh.warp;
    for (; t < sh.edge_tiles; t += sh.warps) {
        if (!ready) {
            int ok = 1;
            if (sh.lane == 0) {
                ok = wait_neighbours(d, phase - 1) && dawdle(d, sh.warp);
                if (!ok)
                    record_abort(d, phase - 1);
            }
            ok = __shfl_sync(full_warp, ok, 0);
            __syncwarp(); // the lanes' halo reads come after lane 0's acquire
            ready = true;
            give_up = !ok;
        }
        if (give_up)
            continue;
        long long chunk;
        const long long j = row_of_tile(d, sh, t, &chunk);
        do_tile<K, VEC, COMPUTE>(d, in, out, up, down, j, chunk, sh.lane);
        handled++;
        if (talks && t + sh.warps >= sh.edge_tiles) {
            // This warp's last edge tile of the phase: its rows reach the neighbours before
            // the count says so.
            __threadfence_system();
            __syncwarp();
            if (sh.lane == 0) {
                const u64 target = static_cast<u64>(phase + 1) * static_cast<u64>(sh.edge_tiles);
                const u64 before = device_word(d.flags->edges_done)
                                       .fetch_add(static_cast<u64>(handled),
                                                  cuda::memory_order_acq_rel);
                if (before + static_cast<u64>(handled) == target)
                    publish(d, static_cast<u64>(phase));
            }
            __syncwarp();
        }
    }
    if constexpr (COMPUTE) // the interior, after this warp's edge tiles
        for (; t < sh.tasks; t += sh.warps)
            do_strip<K, VEC>(d, sh, in, out, t);
}

// The barrier protocol's pass: the edge tiles and the interior's strips (or the edge tiles
// alone), the halo writes fenced.
template <mgpu_kernel K, int VEC, bool COMPUTE>
__device__ void barrier_pass(const persistent_part &d, const shape &sh, const float *in, float *out,
                             float *up, float *down)
{
    long long t = sh.warp;
    for (; t < sh.edge_tiles; t += sh.warps) {
        long long chunk;
        const long long j = row_of_tile(d, sh, t, &chunk);
        do_tile<K, VEC, COMPUTE>(d, in, out, up, down, j, chunk, sh.lane);
    }
    if (sh.warp < sh.edge_tiles && (d.up_flag || d.down_flag))
        __threadfence_system();
    if constexpr (COMPUTE)
        for (; t < sh.tasks; t += sh.warps)
            do_strip<K, VEC>(d, sh, in, out, t);
}

template <mgpu_kernel K, int VEC, bool COMPUTE>
__device__ void run_steps(const persistent_part &d, const shape &sh)
{
    cg::grid_group grid = cg::this_grid();
    const bool leader = grid.thread_rank() == 0;
    const bool overlap = d.protocol == PROTOCOL_OVERLAP;
    dawdle_at_start(d);
    // Phase 0: buffer 0's edge rows into the neighbours' halos of buffer 0, which the reset
    // left as NaN.  The barrier after it also keeps phase 0's arrivals in edges_done apart
    // from step 0's.
    if (overlap)
        overlap_pass<K, VEC, false>(d, sh, 0, d.buf[0], nullptr, d.up[0], d.down[0]);
    else
        barrier_pass<K, VEC, false>(d, sh, d.buf[0], nullptr, d.up[0], d.down[0]);
    grid.sync();
    for (long long t = 0; t < d.steps; t++) {
        const int b = static_cast<int>(t & 1);
        const float *in = d.buf[b];
        float *out = d.buf[b ^ 1];
        if (overlap) {
            overlap_pass<K, VEC, COMPUTE>(d, sh, t + 1, in, out, d.up[b ^ 1], d.down[b ^ 1]);
        } else {
            // Phase t (step t-1, or phase 0) is over on this device: say so, then wait for
            // the neighbours' phase t before anyone starts step t.
            if (leader) {
                publish(d, static_cast<u64>(t));
                if (!wait_neighbours(d, t) || !dawdle(d, 1))
                    record_abort(d, t);
            }
            grid.sync();
            if (aborted(d, t))
                return;
            barrier_pass<K, VEC, COMPUTE>(d, sh, in, out, d.up[b ^ 1], d.down[b ^ 1]);
        }
        grid.sync();
        if (aborted(d, t))
            return; // every block reads the same decision: all leave at this barrier
    }
}

template <mgpu_kernel K, int VEC>
__global__ void __launch_bounds__(block_threads) persistent_kernel(persistent_part d)
{
    shape sh;
    const long long groups = (d.nx + VEC - 1) / VEC;
    sh.chunks = (groups + 31) / 32;
    sh.edge_tiles = (d.rows < 2 ? d.rows : 2) * sh.chunks;
    sh.lane = static_cast<int>(threadIdx.x & 31);
    sh.warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    sh.warps = static_cast<long long>(gridDim.x) * blockDim.x / 32;
    // The interior in strips, about one for each warp that has no edge tile: long strips
    // load each row once, and those warps have one strip a step.  Where they are fewer than
    // the chunks (rows of some 260,000 columns and more), strips as if every warp had one,
    // not a strip a chunk as tall as the interior after an edge tile.
    const long long interior = d.rows > 2 ? d.rows - 2 : 0;
    const long long free_warps = sh.warps > sh.edge_tiles ? sh.warps - sh.edge_tiles : 0;
    long long per_chunk = (free_warps >= sh.chunks ? free_warps : sh.warps) / sh.chunks;
    per_chunk = per_chunk > 1 ? per_chunk : 1;
    sh.strip = interior > 0 ? (interior + per_chunk - 1) / per_chunk : 1;
    sh.tasks = sh.edge_tiles + sh.chunks * ((interior + sh.strip - 1) / sh.strip);
    if (d.compute)
        run_steps<K, VEC, true>(d, sh);
    else
        run_steps<K, VEC, false>(d, sh);
}

// ------------------------------------------------------------- host side

typedef persistent_kernel_fn kernel_fn;

// float4 columns need 16-byte aligned rows everywhere a tile loads or stores.
bool wide_rows(const persistent_part *d)
{
    bool wide = d->pitch % 4 == 0;
    for (int b = 0; b < 2; b++) {
        const void *rows[] = {d->buf[b], d->up[b], d->down[b], d->pull_top[b], d->pull_bottom[b]};
        for (const void *r : rows)
            wide = wide && reinterpret_cast<uintptr_t>(r) % 16 == 0;
    }
    return wide;
}

kernel_fn kernel_of(const persistent_part *d)
{
    const bool wide = wide_rows(d);
    if (d->halo > 1)
        return deep_kernel_of(d);
    if (d->kernel == MGPU_KERNEL_JACOBI)
        return wide ? persistent_kernel<MGPU_KERNEL_JACOBI, 4>
                    : persistent_kernel<MGPU_KERNEL_JACOBI, 1>;
    return wide ? persistent_kernel<MGPU_KERNEL_PATTERN2D, 4>
                : persistent_kernel<MGPU_KERNEL_PATTERN2D, 1>;
}

} // namespace

extern "C" mgpu_status persistent_check_device(int device)
{
    int cooperative = 0;
    MGPU_CUDA(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device), device);
    if (!cooperative)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "device %d cannot launch cooperative kernels "
                         "(cudaDevAttrCooperativeLaunch is 0): the persistent "
                         "kernel needs all its blocks resident at once",
                         device);
    return MGPU_OK;
}

extern "C" mgpu_status persistent_prepare(persistent_part *d, int blocks_per_sm)
{
    int dev, sms = 0, fit = 0;
    MGPU_CUDA(cudaGetDevice(&dev), -1);
    if (d->halo > 1 && !wide_rows(d))
        return mgpu_fail(MGPU_ERR_SYSTEM,
                         "device %d: the deep-halo kernel loads float4 columns, and part %d's "
                         "rows are not 16-byte aligned",
                         dev, d->part);
    const kernel_fn kernel = kernel_of(d);
    d->threads = d->halo > 1 ? PERSISTENT_DEEP_THREADS : block_threads;
    // Loads the kernel's code now: CUDA loads it lazily, at the first launch otherwise, and
    // a device whose kernel is late keeps its neighbours waiting.
    cudaFuncAttributes attributes;
    MGPU_CUDA(cudaFuncGetAttributes(&attributes, kernel), dev);
    MGPU_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), dev);
    MGPU_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, d->threads, 0), dev);
    if (fit < 1)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "device %d: no block of %d threads of the persistent kernel fits on "
                         "a multiprocessor",
                         dev, d->threads);
    if (blocks_per_sm > fit)
        blocks_per_sm = fit;
    long long blocks = static_cast<long long>(sms) * blocks_per_sm;
    // No more blocks than the part has tiles for: the others would only add arrivals to
    // every grid barrier.  (The deep kernel spreads a pass over every multiprocessor.)
    if (d->halo == 1) {
        const int vec = wide_rows(d) ? 4 : 1;
        const long long groups = (d->nx + vec - 1) / vec, warps_per_block = block_threads / 32;
        const long long tiles = d->rows * ((groups + 31) / 32);
        const long long needed = (tiles + warps_per_block - 1) / warps_per_block;
        if (blocks > needed)
            blocks = needed;
    }
    d->blocks = static_cast<int>(blocks < 1 ? 1 : blocks);
    return MGPU_OK;
}

extern "C" mgpu_status persistent_launch(const persistent_part *d, mgpu_stream *stream)
{
    persistent_part copy = *d;
    void *args[] = {&copy};
    MGPU_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(kernel_of(d)),
                                          dim3(static_cast<unsigned>(d->blocks)),
                                          dim3(static_cast<unsigned>(d->threads)), args, 0,
                                          mgpu_stream_cuda(stream)),
              mgpu_stream_device(stream));
    return MGPU_OK;
}
