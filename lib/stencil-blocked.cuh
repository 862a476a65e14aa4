// stencil-blocked.cuh - temporal blocking on the device: T steps of a band of rows per pass
// over device memory, one warp's tile of columns down one strip of rows.  The launched kernel
// of mgpu_kernel_rows_blocked (kernels-blocked-cuda.cu) runs a tile and strip per warp of its
// grid; mgpu-persistent's resident kernel (persistent/deep-cuda.cu) runs them in turn on its
// resident warps, between grid barriers.
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
// twice, the reloaded columns L2 hits).  Likewise a strip of S rows reads S + 2T rows (S + 2n
// for a PARTIAL pass of n levels).
//
// The row arithmetic is the one-step kernel's (stencil-warp.cuh, stencil-cell.cuh), so each
// level is bit-identical to a step of it.  What a step does not compute stays as it was:
// columns 0 and nx-1 and the caller's fixed rows keep their input value at every level.
#ifndef MGPU_STENCIL_BLOCKED_CUH
#define MGPU_STENCIL_BLOCKED_CUH

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
    long long strip;  // output rows per strip
    unsigned fixed;   // MGPU_ROWS_FIXED_*
    int levels;       // steps this pass makes, 1 to T, read where blocked_warp is PARTIAL
};

template <int VEC> __device__ __forceinline__ cols<VEC> zero_cols()
{
    cols<VEC> z;
#pragma unroll
    for (int q = 0; q < VEC; q++)
        z.v[q] = 0.0f;
    return z;
}

// What a launch has nothing to do with: the rows a warp is about to read (blocked_warp).
struct no_inputs {
    __device__ void operator()(long long, long long, long long) const {}
};

// Tile TILE_INDEX of the band's columns, down strip STRIP_INDEX of its rows, by the calling
// warp (LANE its lane; every lane calls it).  PREFETCH loads each input row one row ahead, so
// that its load is in flight while the T levels of the row before are computed (a warp's
// loop is otherwise load, then wait).  COHERENT loads through L2 alone (__ldcg): for a
// kernel that reads, after a grid barrier, rows that other multiprocessors wrote since its
// start, where L1 would not see their writes.  INPUTS(COL, LO, HI) is told, before any
// load, which input rows [LO, HI) the lane will read at its VEC columns from COL (a
// resident kernel fetches its halo rows among them there).
//
// PARTIAL: a pass may make fewer steps than T (B.LEVELS < T: a resident kernel's last pass
// of a cycle where T does not divide K, or of a run) in the same body: levels above
// B.LEVELS pass their row through unchanged, so level T of a row is level B.LEVELS of it,
// only later in the walk.  A kernel thus holds one body, not one per length, and the
// margins, made for T, are wide enough.  Every level computes and those past B.LEVELS take
// their row back by a select, not a branch: a branch a level kept ptxas from overlapping one
// level's arithmetic with the next one's (the deep resident kernel, K=T=8 at 16384² on one
// H100: 313 us a step with the branches, 245 with the select; BENCHMARKS.md section 21).
// Else B.LEVELS is T, known to the compiler (a launch makes T steps).
template <mgpu_kernel K, int T, int VEC, bool PREFETCH, bool COHERENT, bool PARTIAL = false,
          class Inputs = no_inputs>
__device__ __forceinline__ void blocked_warp(const blocked_band &b, long long tile_index,
                                             long long strip_index, int lane,
                                             const Inputs &inputs = Inputs())
{
    using tile = blocked_tile<T, VEC>;
    const long long first = tile_index * tile::stride; // the tile's first stored column
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
    const long long j0 = b.r0 + strip_index * b.strip;
    const long long j1 = j0 + b.strip < b.r1 ? j0 + b.strip : b.r1;
    // Input rows [lo, hi): a row beyond the strip at each end per level, none past a fixed
    // row.
    const int levels = PARTIAL ? b.levels : T;
    long long lo = j0 - levels, hi = j1 + levels;
    if (fixed_top && lo < b.r0 - 1)
        lo = b.r0 - 1;
    if (fixed_bottom && hi > b.r1 + 1)
        hi = b.r1 + 1;
    inputs(col, lo, hi);

    // Level k's two latest rows (level 0: the input).  Rows before the first loaded are
    // zeros: they only make cells outside what the strip stores.
    cols<VEC> behind[T], centre[T];
#pragma unroll
    for (int k = 0; k < T; k++)
        behind[k] = centre[k] = zero_cols<VEC>();

    // Input row P; past HI (a fixed bottom row) the pipeline only drains: nothing is loaded.
    auto input_row = [&](long long p) {
        return outside || p >= hi ? zero_cols<VEC>()
                                  : load_cols<VEC, COHERENT>(b.in + p * b.pitch, col, b.nx, whole);
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
            if (PARTIAL && k > levels) // a level past b.levels: row p - k as it was
#pragma unroll
                for (int q = 0; q < VEC; q++)
                    r.v[q] = centre[k - 1].v[q];
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

} // namespace

#endif /* MGPU_STENCIL_BLOCKED_CUH */
