// stencil-warp.cuh - a warp's share of a stencil row on the device: VEC columns per thread,
// their loads and stores, one row computed from the rows around it with the horizontal
// neighbours from the neighbouring lanes, and one step of a strip of rows.  Shared by the
// one-step kernel (kernels-cuda.cu), the temporally blocked one (kernels-blocked-cuda.cu)
// and mgpu-persistent's resident kernels, so that all compute a row alike.
#ifndef MGPU_STENCIL_WARP_CUH
#define MGPU_STENCIL_WARP_CUH

#include <stdint.h>

#include "stencil-cell.cuh"

namespace {

const unsigned full_warp = 0xffffffffu;

// ------------------------------------------------------- VEC columns of a row

template <int VEC> struct cols {
    float v[VEC];
};

// Load this thread's VEC columns starting at COL of ROW: one wide load when the whole
// group lies inside the row, else the cells that exist (the last group of a row whose
// width is not a multiple of VEC; nothing past column nx-1 is read).  COHERENT loads
// through L2 alone (__ldcg), for rows that other multiprocessors wrote since the kernel
// started (a resident kernel's earlier passes); a launch reads what was there before it.
template <int VEC, bool COHERENT = false>
__device__ __forceinline__ cols<VEC> load_cols(const float *__restrict__ row, long long col,
                                               long long nx, bool whole)
{
    if constexpr (VEC == 4) {
        if (whole) {
            const float4 *at = reinterpret_cast<const float4 *>(row + col);
            const float4 q = COHERENT ? __ldcg(at) : *at;
            return cols<VEC>{{q.x, q.y, q.z, q.w}};
        }
    }
    cols<VEC> r;
#pragma unroll
    for (int k = 0; k < VEC; k++)
        r.v[k] = col + k < nx ? (COHERENT ? __ldcg(row + col + k) : row[col + k]) : 0.0f;
    return r;
}

// Store the VEC results at COL of ROW: one wide store when WHOLE, else only the interior
// cells (columns 0 and nx-1 are the boundary and stay as they are) or, with BOUNDARY, every
// cell that lies in the row: a neighbour's halo row is the row as it is, boundary columns
// too, as the library's exchange copies it.
template <int VEC, bool BOUNDARY = false>
__device__ __forceinline__ void store_cols(float *__restrict__ row, long long col, long long nx,
                                           bool whole, const cols<VEC> &r)
{
    if constexpr (VEC == 4) {
        if (whole) {
            *reinterpret_cast<float4 *>(row + col) = make_float4(r.v[0], r.v[1], r.v[2], r.v[3]);
            return;
        }
    }
#pragma unroll
    for (int k = 0; k < VEC; k++)
        if (BOUNDARY ? col + k < nx : col + k >= 1 && col + k <= nx - 2)
            row[col + k] = r.v[k];
}

// The cell a warp-edge lane needs from another warp's columns: left of the first lane,
// right of the last.  Other lanes, and cells outside the row, get 0 (never used).
// COHERENT as for load_cols.
template <int VEC, bool COHERENT = false>
__device__ __forceinline__ float load_edge(const float *__restrict__ row, long long col,
                                           long long nx, int lane)
{
    long long e = lane == 0 ? col - 1 : lane == 31 ? col + VEC : -1;
    return e >= 0 && e < nx ? (COHERENT ? __ldcg(row + e) : row[e]) : 0.0f;
}

// ------------------------------------------------------------- the stencil

// Compute one row from the rows above (N), at (C) and below (S) it.  C_EDGE is the cell
// beyond this warp's columns that lane 0 (left) or 31 (right) needs.
template <mgpu_kernel K, int VEC>
__device__ __forceinline__ cols<VEC> compute_row(int lane, const cols<VEC> &n, const cols<VEC> &c,
                                                 float c_edge, const cols<VEC> &s)
{
    float left = __shfl_up_sync(full_warp, c.v[VEC - 1], 1);
    float right = __shfl_down_sync(full_warp, c.v[0], 1);
    if (lane == 0)
        left = c_edge;
    if (lane == 31)
        right = c_edge;
    cols<VEC> r;
#pragma unroll
    for (int k = 0; k < VEC; k++) {
        const float w = k == 0 ? left : c.v[k - 1];
        const float e = k == VEC - 1 ? right : c.v[k + 1];
        r.v[k] = cell_rule<K>::apply(c.v[k], w, e, n.v[k], s.v[k]);
    }
    return r;
}

// ------------------------------------------------------------- a strip of rows

// Where a walk's first and last rows also go: the neighbours' halo rows of the buffer it
// writes, through peer pointers (exchange mode direct, folded into the step), or nowhere
// (NULL).  The halo is stored with the same column layout as the row.
struct edge_rows {
    float *first_to; // row r0
    float *last_to;  // row r1 - 1
};

// One step of the rows [j0, j1) of one strip, VEC columns per thread, with the rows on either
// side of the current row as a rolling window, so that each input row is loaded once.  DOWN
// walks from j0 to j1-1, else from j1-1 up to j0: the window's "behind" row is then the one
// below.  The thread loads its columns at LOAD_COL (see kernels-cuda.cu's stencil_kernel) and
// stores them at COL; rows R0 and R1-1 also go to EDGES.  COHERENT as for load_cols.
// PREFETCH loads each row an iteration early, two rows in flight a warp instead of one, for
// a kernel with fewer warps than the multiprocessor holds (the resident one-row kernel).
template <mgpu_kernel K, int VEC, bool DOWN, bool COHERENT = false, bool PREFETCH = false>
__device__ __forceinline__ void
walk_strip(const float *__restrict__ in, float *__restrict__ out, long long nx, long long pitch,
           long long j0, long long j1, long long r0, long long r1, edge_rows edges, long long col,
           long long load_col, int lane, bool whole, bool store_whole)
{
    const long long step = DOWN ? pitch : -pitch;
    const long long first = DOWN ? j0 : j1 - 1;
    const float *p = in + (first - (DOWN ? 1 : -1)) * pitch;
    cols<VEC> behind = load_cols<VEC, COHERENT>(p, load_col, nx, whole);
    p += step;
    cols<VEC> c = load_cols<VEC, COHERENT>(p, load_col, nx, whole);
    float c_edge = load_edge<VEC, COHERENT>(p, col, nx, lane);
    cols<VEC> next;
    float next_edge = 0.0f;
    if constexpr (PREFETCH) { // the row after C; the loop loads one more only while rows remain
        next = load_cols<VEC, COHERENT>(p + step, load_col, nx, whole);
        next_edge = load_edge<VEC, COHERENT>(p + step, col, nx, lane);
    }
    float *q = out + first * pitch;
    long long j = first;
    for (long long k = j1 - j0; k > 0; k--) {
        p += step;
        cols<VEC> ahead;
        float ahead_edge;
        if constexpr (PREFETCH) {
            ahead = next;
            ahead_edge = next_edge;
            if (k > 1) {
                next = load_cols<VEC, COHERENT>(p + step, load_col, nx, whole);
                next_edge = load_edge<VEC, COHERENT>(p + step, col, nx, lane);
            }
        } else {
            ahead = load_cols<VEC, COHERENT>(p, load_col, nx, whole);
            ahead_edge = load_edge<VEC, COHERENT>(p, col, nx, lane);
        }
        const cols<VEC> r = DOWN ? compute_row<K, VEC>(lane, behind, c, c_edge, ahead)
                                 : compute_row<K, VEC>(lane, ahead, c, c_edge, behind);
        store_cols<VEC>(q, col, nx, store_whole, r);
        if (j == r0 && edges.first_to)
            store_cols<VEC>(edges.first_to, col, nx, store_whole, r);
        if (j == r1 - 1 && edges.last_to)
            store_cols<VEC>(edges.last_to, col, nx, store_whole, r);
        behind = c;
        c = ahead;
        c_edge = ahead_edge;
        q += step;
        j += DOWN ? 1 : -1;
    }
}

// ------------------------------------------------------------- the one-step kernel

// The library's one-step kernel (kernels-cuda.cu, whose top says why its grid is many
// short strips, STENCIL_WAVES waves of resident blocks, even ones walking down and odd ones
// up), and mgpu-persistent's graph form, which runs the same blocks between its waits for the
// neighbours (persistent/looped-cuda.cu): the launch's shape and one block's work.
const int stencil_block_max = 256; // threads per block (a multiple of 32)
const int stencil_waves = 24;      // grid size in full waves of resident blocks

// The grid of a launch over ROWS rows of NX columns, VEC columns a thread, on a device whose
// full wave is WAVE blocks.  False when the row is wider than a grid can be.
struct step_shape {
    long long threads, col_blocks; // blockDim.x and gridDim.x
    long long strip, strips;       // rows a strip, and gridDim.y
};
inline bool step_shape_of(long long nx, long long rows, int vec, long long wave, step_shape *sh)
{
    const long long groups = (nx + vec - 1) / vec;
    // Narrow rows get a narrower block rather than idle lanes (whole warps always: the
    // shuffles assume them).
    long long threads = (groups + 31) / 32 * 32;
    if (threads > stencil_block_max)
        threads = stencil_block_max;
    const long long col_blocks = (groups + threads - 1) / threads;
    if (col_blocks > 0x7fffffffLL)
        return false;
    // As many strips as fill stencil_waves waves, each at least one row, and no more than
    // the grid's y limit allows.  A range of one row launches one strip of blocks, not a
    // grid of idle ones.
    long long strips = (stencil_waves * wave + col_blocks - 1) / col_blocks;
    if (strips > rows)
        strips = rows;
    long long strip = (rows + strips - 1) / strips;
    const long long max_y = 65535;
    if ((rows + strip - 1) / strip > max_y)
        strip = (rows + max_y - 1) / max_y;
    *sh = {threads, col_blocks, strip, (rows + strip - 1) / strip};
    return true;
}

// Whether a launch over IN and OUT (and EDGES) takes float4 columns: 16-byte aligned bases
// (NULL is) and a pitch of a multiple of 4 floats (the library's buffers use multiples of 32).
inline bool rows_take_float4(const float *in, const float *out, edge_rows edges, long long pitch)
{
    const auto aligned = [](const float *p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    return aligned(in) && aligned(out) && aligned(edges.first_to) && aligned(edges.last_to) &&
           pitch % 4 == 0;
}

// One block of the launch: strip STRIP_INDEX (blockIdx.y, or another order of the strips)
// of the rows [r0, r1), STRIP rows each, the columns of blockIdx.x.  RAGGED: nx is not a
// multiple of VEC, so a row's last group is partial and its loads go cell by cell.  Otherwise
// every load is one unconditional wide load, which the compiler schedules more freely (2-3%
// faster, measured on H100): threads past the row's end load the row's last group instead
// and store nothing.
template <mgpu_kernel K, int VEC, bool RAGGED>
__device__ __forceinline__ void
step_block(const float *__restrict__ in, float *__restrict__ out, long long nx, long long pitch,
           long long r0, long long r1, long long strip, edge_rows edges, long long strip_index)
{
    const int lane = threadIdx.x & 31;
    const long long col = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * VEC;
    const long long j0 = r0 + strip_index * strip;
    const long long j1 = j0 + strip < r1 ? j0 + strip : r1;
    // Threads past the row's end stay: their lanes take part in the shuffles.
    const bool whole = RAGGED ? col + VEC <= nx : true;
    const long long load_col = RAGGED || col < nx ? col : nx - VEC;
    // Whether all VEC outputs are interior columns, so one wide store writes them.
    const bool store_whole = col >= 1 && col + VEC <= nx - 1;
    if (strip_index % 2 == 0)
        walk_strip<K, VEC, true>(in, out, nx, pitch, j0, j1, r0, r1, edges, col, load_col, lane,
                                 whole, store_whole);
    else
        walk_strip<K, VEC, false>(in, out, nx, pitch, j0, j1, r0, r1, edges, col, load_col, lane,
                                  whole, store_whole);
}

// ------------------------------------------------------------- the row copy

// DST[i] = SRC[i] for i < N across the grid's threads, a grid-stride loop; VEC = 4 when both
// are 16-byte aligned, the last N % 4 floats then one each by the grid's first threads.
// Either side may be a peer's memory or mapped host memory, where every access crosses a
// link: the loop keeps many accesses in flight, and the loads skip L1 (a peer may have
// written the lines since this kernel began: mgpu-persistent's graph form copies after a
// wait).
template <int VEC>
__device__ __forceinline__ void copy_floats(float *__restrict__ dst, const float *__restrict__ src,
                                            long long n)
{
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if constexpr (VEC == 4) {
        const long long n4 = n / 4;
        for (long long k = i; k < n4; k += stride)
            reinterpret_cast<float4 *>(dst)[k] = __ldcg(reinterpret_cast<const float4 *>(src) + k);
        const long long tail = n4 * 4 + i;
        if (tail < n)
            dst[tail] = __ldcg(src + tail);
    } else {
        for (; i < n; i += stride)
            dst[i] = __ldcg(src + i);
    }
}

} // namespace

#endif /* MGPU_STENCIL_WARP_CUH */
