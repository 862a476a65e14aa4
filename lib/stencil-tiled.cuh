// stencil-tiled.cuh - temporal blocking with a block's tile in shared memory: N steps of a
// tile of the band at once, every warp of the block on every level.
//
// The register-streamed pass (stencil-blocked.cuh) gives each warp a tile of columns and a
// strip of rows, which it walks row after row, the T levels of a row one after the other.
// Its time is that walk's latency, about a microsecond a row on an H100 at T = 8 (the
// floor model, doc/persistent.md), hidden only where many warps walk at once.  A small
// band has too few strips for that: 1024 columns by 512 rows make about 300 strips of 16
// rows for a device's 1,056 resident warps, each walking 32 rows.  Here the block loads a
// region of the band into shared memory and steps it level by level, each level spread over
// all its threads, a block barrier between levels: the latency of a level is a few
// shared-memory loads, and every warp works.
//
// The price is the same redundancy as the strips' (a cell at level k is right only if its
// level k-1 neighbours were): the region is TILED_REGION_W x TILED_REGION_H cells, of
// which the middle (W - 2N) x (H - 2N) are stored after N levels.  At the band's true
// edges (columns 0 and nx-1, a fixed row) the region stops there instead, and those cells
// keep their value, as at every step of the reference; every other cell of the region's
// edge is copied from the level below, wrong from level 1 on, which reaches N cells in by
// level N, no further than the cells that are not stored.  So every stored cell is the one
// N one-step passes give, to the bit: the arithmetic is stencil-cell.cuh's.
#ifndef MGPU_STENCIL_TILED_CUH
#define MGPU_STENCIL_TILED_CUH

#include "stencil-blocked.cuh"

namespace {

// A region of 128 x 64 cells, stepped by blocks of TILED_THREADS: a warp's 32 lanes cover a
// row in 4 loads, and the 8 warps step 8 rows each.  Two buffers of it (the level below and
// the level made) are 64 KiB, above the 48 KiB a block gets without asking (the launch asks;
// sm_75's most, with no other shared memory in the kernel).
enum { TILED_REGION_W = 128, TILED_REGION_H = 64, TILED_THREADS = 256 };
constexpr size_t tiled_smem_bytes = 2 * sizeof(float) * TILED_REGION_W * TILED_REGION_H;
constexpr int tiled_warps = TILED_THREADS / 32;
constexpr int tiled_warp_rows = TILED_REGION_H / tiled_warps; // rows of the region a warp loads
constexpr int tiled_lane_cols = TILED_REGION_W / 32;          // and columns a lane

// The band's rows as the caller reads them: IN's, by default.  A resident kernel gives the
// rows that hold its neighbours' halos from the neighbours' own memory.
struct band_rows {
    const float *in;
    long long pitch;
    __device__ const float *operator()(long long r) const { return in + r * pitch; }
};

// Output columns a tile stores after N levels, and output rows.
__host__ __device__ constexpr int tiled_width(int n) { return TILED_REGION_W - 2 * n; }
__host__ __device__ constexpr int tiled_height(int n) { return TILED_REGION_H - 2 * n; }

// Tiles of N levels that cover the band's output: its interior columns [1, nx-1) across,
// its rows [r0, r1) down.
__host__ __device__ inline long long tiled_across(const blocked_band &b, int n)
{
    return (b.nx - 2 + tiled_width(n) - 1) / tiled_width(n);
}
__host__ __device__ inline long long tiled_count(const blocked_band &b, int n)
{
    return tiled_across(b, n) * ((b.r1 - b.r0 + tiled_height(n) - 1) / tiled_height(n));
}

// Tile TASK (0 to tiled_count - 1) of the band, N levels (1 to TILED_REGION_H / 2 - 1), by
// the whole block of TILED_THREADS, SMEM being tiled_smem_bytes of its shared memory;
// ROWS(r) is where the band's input row r is.  Every thread of the block calls it with the
// same arguments (it has block barriers); SMEM may be used again as soon as it returns.
// COHERENT loads through L2 alone (__ldcg), as blocked_warp's.
template <mgpu_kernel K, bool COHERENT, class Rows>
__device__ void tiled_block(const blocked_band &b, int n, long long task, const Rows &rows,
                            float *smem)
{
    const long long across = tiled_across(b, n);
    const long long c0 = 1 + task % across * tiled_width(n);
    const long long c1 = c0 + tiled_width(n) < b.nx - 1 ? c0 + tiled_width(n) : b.nx - 1;
    const long long j0 = b.r0 + task / across * tiled_height(n);
    const long long j1 = j0 + tiled_height(n) < b.r1 ? j0 + tiled_height(n) : b.r1;
    // The region: N cells beyond the output on each side, stopping at the true edges.
    const long long x0 = c0 - n > 0 ? c0 - n : 0;
    const long long x1 = c1 + n < b.nx ? c1 + n : b.nx;
    long long y0 = j0 - n, y1 = j1 + n;
    if ((b.fixed & MGPU_ROWS_FIXED_TOP) && y0 < b.r0 - 1)
        y0 = b.r0 - 1;
    if ((b.fixed & MGPU_ROWS_FIXED_BOTTOM) && y1 > b.r1 + 1)
        y1 = b.r1 + 1;
    const int w = static_cast<int>(x1 - x0), h = static_cast<int>(y1 - y0);
    const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x & 31);
    const int warps = tiled_warps;
    float *below = smem, *made = smem + TILED_REGION_W * TILED_REGION_H;

    // Every load of a thread goes out before its first store to shared memory: a load and its
    // store in turn would wait a round trip each, a link's where a row is a neighbour's.
    float v[tiled_warp_rows][tiled_lane_cols];
#pragma unroll
    for (int i = 0; i < tiled_warp_rows; i++) {
        const int r = warp + i * warps;
        const float *row = r < h ? rows(y0 + r) + x0 : nullptr;
#pragma unroll
        for (int q = 0; q < tiled_lane_cols; q++) {
            const int c = lane + 32 * q;
            if (r < h && c < w)
                v[i][q] = COHERENT ? __ldcg(row + c) : row[c];
        }
    }
#pragma unroll
    for (int i = 0; i < tiled_warp_rows; i++) {
#pragma unroll
        for (int q = 0; q < tiled_lane_cols; q++) {
            const int r = warp + i * warps, c = lane + 32 * q;
            if (r < h && c < w)
                below[r * w + c] = v[i][q];
        }
    }
    __syncthreads();
    for (int level = 1; level <= n; level++) {
        for (int r = warp; r < h; r += warps) {
            const bool edge_row = r == 0 || r == h - 1;
            for (int c = lane; c < w; c += 32) {
                const float *at = below + r * w + c;
                float v = *at;
                if (!edge_row && c > 0 && c < w - 1)
                    v = cell_rule<K>::apply(v, at[-1], at[1], at[-w], at[w]);
                made[r * w + c] = v;
            }
        }
        __syncthreads();
        float *t = below;
        below = made;
        made = t;
    }
    for (long long j = j0 + warp; j < j1; j += warps) {
        float *row = b.out + j * b.pitch;
        const float *from = below + (j - y0) * w;
        for (long long i = c0 + lane; i < c1; i += 32)
            row[i] = from[i - x0];
    }
    __syncthreads(); // the next tile's loads overwrite what these stores read
}

} // namespace

#endif /* MGPU_STENCIL_TILED_CUH */
