// stencil-warp.cuh - a warp's share of a stencil row on the device: VEC columns per thread,
// their loads and stores, and one row computed from the rows around it with the horizontal
// neighbours from the neighbouring lanes.  Shared by the one-step kernel (kernels-cuda.cu)
// and the temporally blocked one (kernels-blocked-cuda.cu), so both compute a row alike.
#ifndef MGPU_STENCIL_WARP_CUH
#define MGPU_STENCIL_WARP_CUH

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

// Store the VEC results at COL of ROW: one wide store when all are interior cells, else
// only the interior ones (columns 0 and nx-1 are the boundary and stay as they are).
template <int VEC>
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
        if (col + k >= 1 && col + k <= nx - 2)
            row[col + k] = r.v[k];
}

// The cell a warp-edge lane needs from another warp's columns: left of the first lane,
// right of the last.  Other lanes, and cells outside the row, get 0 (never used).
template <int VEC>
__device__ __forceinline__ float load_edge(const float *__restrict__ row, long long col,
                                           long long nx, int lane)
{
    long long e = lane == 0 ? col - 1 : lane == 31 ? col + VEC : -1;
    return e >= 0 && e < nx ? row[e] : 0.0f;
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

} // namespace

#endif /* MGPU_STENCIL_WARP_CUH */
