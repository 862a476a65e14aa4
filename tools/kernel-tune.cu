// kernel-tune.cu - the lab bench behind lib/kernels-cuda.cu: times the library's
// stencil beside candidate variants and copy kernels on one GPU, against the
// cudaMemcpy device-to-device ceiling measured in the same run, and checks that
// every variant is bit-identical to the library's kernel.  Not built by make: it
// is compiled by hand on a GPU machine (see doc/kernels.md):
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -DMGPU_HAVE_CUDA -Ilib -o kernel-tune \
//        tools/kernel-tune.cu
//   ./kernel-tune check               # variants == library kernel, odd grids
//   ./kernel-tune time NX NY STEPS    # one table row per variant
//   ./kernel-tune one V NX NY STEPS   # variant V alone, pattern2d (for ncu)
//
// It includes the library's kernel file, so it times the very code the library
// runs, and reuses its cell rules.
#include "../lib/kernels-cuda.cu"

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "cuda-check.h"

namespace tune {

// ----------------------------------------------------------- bulk-copy (TMA) stencil
//
// The same rolling window, but the rows come into shared memory by the Hopper
// bulk-copy engine (cp.async.bulk) STAGES rows ahead, instead of each thread
// keeping one float4 load in flight: the bytes in flight per multiprocessor no
// longer depend on registers or threads.  A block owns a band of THREADS*4
// columns plus 4 columns each side (16-byte aligned copies), walks a strip of
// rows, and reuses a ring of STAGES row buffers; one thread issues the copies.

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count)
                 : "memory");
}

__device__ __forceinline__ void bulk_load(float *dst, const float *src, unsigned bytes,
                                          uint64_t *bar)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
                 "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], "
                 "[%1], %2, [%3];" ::"r"(smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity)
{
    unsigned done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(smem_addr(bar)), "r"(parity)
                     : "memory");
    } while (!done);
}

template <mgpu_kernel K, int THREADS, int STAGES, bool PDL>
__global__ void __launch_bounds__(THREADS)
    bulk_stencil(const float *__restrict__ in, float *__restrict__ out, long long nx,
                 long long pitch, long long r0, long long r1, long long strip)
{
    constexpr int W = THREADS * 4; // the band's columns
    constexpr int SW = W + 8;      // a stage: the band and 4 columns each side
    __shared__ alignas(128) float ring[STAGES][SW];
    __shared__ alignas(8) uint64_t full[STAGES];

    const int t = threadIdx.x, lane = t & 31;
    const long long c0 = static_cast<long long>(blockIdx.x) * W;
    const long long j0 = r0 + static_cast<long long>(blockIdx.y) * strip;
    const long long j1 = j0 + strip < r1 ? j0 + strip : r1;
    const long long rows = j1 - j0 + 2; // rows j0-1 .. j1 come in
    // The span copied per row, 16-byte aligned, never past the padded row.
    const long long nx4 = (nx + 3) / 4 * 4;
    const long long lo = c0 >= 4 ? c0 - 4 : 0;
    const long long hi = c0 + W + 4 < nx4 ? c0 + W + 4 : nx4;
    const unsigned bytes = static_cast<unsigned>((hi - lo) * 4);
    const int at = static_cast<int>(lo - (c0 - 4)); // where the span lands in a stage
    const float *src = in + (j0 - 1) * pitch + lo;

    if (PDL) {
        // Let the next step's grid start as this one's blocks end, and wait for
        // the previous step's grid to finish before reading what it wrote.
        asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
        asm volatile("griddepcontrol.wait;" ::: "memory");
    }
    if (t == 0) {
        for (int s = 0; s < STAGES; s++)
            mbar_init(&full[s], 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int i = 0; i < STAGES && i < rows; i++)
            bulk_load(&ring[i][at], src + i * pitch, bytes, &full[i]);
    }
    __syncthreads();

    const long long col = c0 + 4 * t;
    const bool store_whole = col >= 1 && col + 4 <= nx - 1;
    const int x = 4 + 4 * t; // this thread's columns in a stage
    auto read = [&](long long i, cols<4> &v, float &edge) {
        const int s = static_cast<int>(i % STAGES);
        mbar_wait(&full[s], static_cast<unsigned>((i / STAGES) & 1));
        const float4 q = *reinterpret_cast<const float4 *>(&ring[s][x]);
        v = cols<4>{{q.x, q.y, q.z, q.w}};
        edge = lane == 0 ? ring[s][x - 1] : lane == 31 ? ring[s][x + 4] : 0.0f;
    };
    auto refill = [&](long long i) { // stage of row i is read by all: bring row i+STAGES
        __syncthreads();
        if (t == 0 && i + STAGES < rows) {
            const int s = static_cast<int>(i % STAGES);
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            bulk_load(&ring[s][at], src + (i + STAGES) * pitch, bytes, &full[s]);
        }
    };

    cols<4> n, c, s;
    float n_edge, c_edge, s_edge;
    read(0, n, n_edge);
    read(1, c, c_edge);
    refill(0);
    refill(1);
    float *q = out + j0 * pitch;
    for (long long i = 2; i < rows; i++) {
        read(i, s, s_edge);
        // Threads past the row's end take part in the shuffles and store nothing.
        store_cols<4>(q, col, nx, store_whole, compute_row<K, 4>(lane, n, c, c_edge, s));
        n = c;
        c = s;
        c_edge = s_edge;
        q += pitch;
        refill(i);
    }
    (void) n_edge;
}

// ----------------------------------------------------------- one-way strips
// The library's kernel before its strips took turns walking up and down: every
// strip walks down.

template <mgpu_kernel K, int THREADS>
__global__ void __launch_bounds__(THREADS)
    oneway_stencil(const float *__restrict__ in, float *__restrict__ out, long long nx,
                   long long pitch, long long r0, long long r1, long long strip, edge_rows edges)
{
    const int lane = threadIdx.x & 31;
    const long long col = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
    const long long j0 = r0 + static_cast<long long>(blockIdx.y) * strip;
    const long long j1 = j0 + strip < r1 ? j0 + strip : r1;
    walk_strip<K, 4, true>(in, out, nx, pitch, j0, j1, r0, r1, edges, col, col, lane, col + 4 <= nx,
                           col >= 1 && col + 4 <= nx - 1);
}

// ----------------------------------------------------------- copy kernels

// A float4 grid-stride copy with UNROLL independent loads in flight per thread.
template <int UNROLL>
__global__ void copy4(float4 *__restrict__ dst, const float4 *__restrict__ src, long long n)
{
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            v[u] = src[i + u * stride];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            dst[i + u * stride] = v[u];
    }
    for (; i < n; i += stride)
        dst[i] = src[i];
}

// ----------------------------------------------------------- launching

struct grid_shape {
    dim3 grid;
    long long strip;
};

// Bands of BAND columns across x; strips of rows across y making about WAVES
// waves of PER_SM blocks per multiprocessor.
grid_shape shape(long long nx, long long rows, long long band, int per_sm, double waves)
{
    int dev, sms;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const long long bands = (nx + band - 1) / band;
    long long strips = static_cast<long long>(waves * sms * per_sm / bands + 0.5);
    strips = std::max(1LL, std::min(strips, rows));
    long long strip = (rows + strips - 1) / strips;
    strips = (rows + strip - 1) / strip;
    return {dim3(static_cast<unsigned>(bands), static_cast<unsigned>(strips)), strip};
}

template <mgpu_kernel K, int THREADS, int STAGES, bool PDL>
void launch_bulk(const float *in, float *out, long long nx, long long pitch, long long r0,
                 long long r1, double waves)
{
    static int per_sm = 0;
    auto kernel = bulk_stencil<K, THREADS, STAGES, PDL>;
    if (per_sm == 0)
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, 0));
    grid_shape g = shape(nx, r1 - r0, THREADS * 4, per_sm, waves);
    if (!PDL) {
        kernel<<<g.grid, THREADS>>>(in, out, nx, pitch, r0, r1, g.strip);
        return;
    }
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.gridDim = g.grid;
    cfg.blockDim = dim3(THREADS);
    cfg.stream = 0;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, kernel, in, out, nx, pitch, r0, r1, g.strip));
}

struct variant {
    const char *name;
    void (*step)(mgpu_kernel, const float *, float *, long long nx, long long pitch, long long ny);
};

void lib_step(mgpu_kernel k, const float *in, float *out, long long nx, long long pitch,
              long long ny)
{
    CK(mgpu_cuda_stencil_rows(k, in, out, nx, static_cast<size_t>(pitch), 1, ny - 1, NULL, NULL,
                              0));
}

template <int THREADS, int STAGES, int WAVES10, bool PDL = false>
void bulk_step(mgpu_kernel k, const float *in, float *out, long long nx, long long pitch,
               long long ny)
{
    if (k == MGPU_KERNEL_PATTERN2D)
        launch_bulk<MGPU_KERNEL_PATTERN2D, THREADS, STAGES, PDL>(in, out, nx, pitch, 1, ny - 1,
                                                                 WAVES10 / 10.0);
    else
        launch_bulk<MGPU_KERNEL_JACOBI, THREADS, STAGES, PDL>(in, out, nx, pitch, 1, ny - 1,
                                                              WAVES10 / 10.0);
    CK(cudaGetLastError());
}

// The library's kernel (ONEWAY: the one-way kernel) on THREADS-thread blocks and a
// grid of WAVES10/10 waves, for widths that are a multiple of 4; other widths take
// the library's own launch.
template <int THREADS, int WAVES10, bool ONEWAY = false>
void grid_step(mgpu_kernel k, const float *in, float *out, long long nx, long long pitch,
               long long ny)
{
    static_assert(THREADS <= stencil_block_max, "the library's launch bound");
    static int per_sm = 0;
    auto kp = ONEWAY ? oneway_stencil<MGPU_KERNEL_PATTERN2D, THREADS>
                     : stencil_kernel<MGPU_KERNEL_PATTERN2D, 4, false>;
    auto kj = ONEWAY ? oneway_stencil<MGPU_KERNEL_JACOBI, THREADS>
                     : stencil_kernel<MGPU_KERNEL_JACOBI, 4, false>;
    if (nx % 4) {
        lib_step(k, in, out, nx, pitch, ny);
        return;
    }
    if (per_sm == 0)
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kp, THREADS, 0));
    grid_shape g = shape(nx, ny - 2, THREADS * 4, per_sm, WAVES10 / 10.0);
    (k == MGPU_KERNEL_PATTERN2D ? kp : kj)<<<g.grid, THREADS>>>(in, out, nx, pitch, 1, ny - 1,
                                                                g.strip, edge_rows{});
    CK(cudaGetLastError());
}

template <int UNROLL>
void copy_step(mgpu_kernel, const float *in, float *out, long long, long long pitch, long long ny)
{
    const long long n4 = pitch * ny / 4;
    int dev, sms;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    copy4<UNROLL><<<sms * 8, 256>>>(reinterpret_cast<float4 *>(out),
                                    reinterpret_cast<const float4 *>(in), n4);
    CK(cudaGetLastError());
}

void memcpy_step(mgpu_kernel, const float *in, float *out, long long, long long pitch, long long ny)
{
    CK(cudaMemcpyAsync(out, in, static_cast<size_t>(pitch * ny) * 4, cudaMemcpyDeviceToDevice, 0));
}

// What each row is.  "wN": a grid of N waves of resident blocks.  "library":
// the library's own launch (24 waves); "library wN": its kernel on another
// grid of 256-thread blocks.  "one-way": every strip walks down (the
// library's design before 707c21c: 128-thread blocks, 4 waves); "alternate
// 128": the library's kernel on that older grid.  "bulk": rows through shared
// memory by TMA bulk copies (THREADS x STAGES).  The L2 prefetch hints of
// doc/kernels.md were measured with a variant since removed (the same walk
// with ld.global.nc.L2::256B loads).  The copies move the field's
// bytes once each way: the ceiling a kernel can hope for, and cudaMemcpy's.
// doc/kernels.md has what they measured.
const variant variants[] = {
    {"library", lib_step},
    {"library w8", grid_step<256, 80>},
    {"library w16", grid_step<256, 160>},
    {"library w24", grid_step<256, 240>},
    {"library w32", grid_step<256, 320>},
    {"library w48", grid_step<256, 480>},
    {"one-way 128 w4", grid_step<128, 40, true>}, // the library before 707c21c
    {"alternate 128 w4", grid_step<128, 40>},
    {"bulk 256x8 w1", bulk_step<256, 8, 10>},
    {"copy kernel x1", copy_step<1>},
    {"copy kernel x4", copy_step<4>},
    {"cudaMemcpy", memcpy_step},
};
const int nvariants = sizeof variants / sizeof variants[0];
const int first_copy = nvariants - 3;

// ----------------------------------------------------------- the field

struct field {
    long long nx, ny, pitch;
    float *a, *b;
};

field field_new(long long nx, long long ny, unsigned seed)
{
    field f{nx, ny, (nx + 31) / 32 * 32, nullptr, nullptr};
    const size_t bytes = static_cast<size_t>(f.pitch * ny) * 4;
    CK(cudaMalloc(&f.a, bytes));
    CK(cudaMalloc(&f.b, bytes));
    std::vector<float> h(static_cast<size_t>(f.pitch * ny));
    srand(seed);
    for (auto &v : h)
        v = static_cast<float>(rand()) / RAND_MAX * 4.0f - 1.0f;
    CK(cudaMemcpy(f.a, h.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(f.b, h.data(), bytes, cudaMemcpyHostToDevice));
    return f;
}

void field_free(field &f)
{
    CK(cudaFree(f.a));
    CK(cudaFree(f.b));
}

// STEPS steps of variant V from a fresh field; the result copied to HOST.
void run_steps(const variant &v, mgpu_kernel k, field &f, int steps, std::vector<float> &host)
{
    for (int s = 0; s < steps; s++) {
        if (s % 2 == 0)
            v.step(k, f.a, f.b, f.nx, f.pitch, f.ny);
        else
            v.step(k, f.b, f.a, f.nx, f.pitch, f.ny);
    }
    CK(cudaDeviceSynchronize());
    host.resize(static_cast<size_t>(f.pitch * f.ny));
    CK(cudaMemcpy(host.data(), steps % 2 ? f.b : f.a, host.size() * 4, cudaMemcpyDeviceToHost));
}

// Bit-compare the interior-and-boundary cells (columns < nx) of two results.
long long differences(const std::vector<float> &x, const std::vector<float> &y, const field &f)
{
    long long bad = 0;
    for (long long j = 0; j < f.ny; j++)
        for (long long i = 0; i < f.nx; i++)
            bad += memcmp(&x[j * f.pitch + i], &y[j * f.pitch + i], 4) != 0;
    return bad;
}

int check()
{
    const long long grids[][3] = {{3, 3, 1},     {5, 4, 2},      {17, 13, 7},
                                  {101, 53, 5},  {1001, 7, 3},   {1031, 2049, 4},
                                  {4099, 77, 3}, {2048, 300, 6}, {8195, 1025, 2}};
    int failed = 0;
    for (auto &g : grids)
        for (mgpu_kernel k : {MGPU_KERNEL_PATTERN2D, MGPU_KERNEL_JACOBI}) {
            std::vector<float> ref, got;
            field f = field_new(g[0], g[1], 7);
            run_steps(variants[0], k, f, static_cast<int>(g[2]), ref);
            field_free(f);
            for (int v = 1; v < first_copy; v++) {
                field h = field_new(g[0], g[1], 7);
                run_steps(variants[v], k, h, static_cast<int>(g[2]), got);
                long long bad = differences(ref, got, h);
                field_free(h);
                if (bad) {
                    printf("FAIL %s %s %lldx%lld: %lld cells differ\n", variants[v].name,
                           k == MGPU_KERNEL_JACOBI ? "jacobi" : "pattern2d", g[0], g[1], bad);
                    failed++;
                }
            }
        }
    printf("check: %s\n", failed ? "FAILED" : "all variants bit-identical to the library");
    return failed ? 1 : 0;
}

// Median over REPEATS of the time per step of STEPS back-to-back steps.
double time_variant(const variant &v, mgpu_kernel k, field &f, int steps, int repeats)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> per;
    for (int r = -1; r < repeats; r++) {
        CK(cudaEventRecord(e0, 0));
        for (int s = 0; s < steps; s++) {
            if (s % 2 == 0)
                v.step(k, f.a, f.b, f.nx, f.pitch, f.ny);
            else
                v.step(k, f.b, f.a, f.nx, f.pitch, f.ny);
        }
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0)
            per.push_back(ms / 1e3f / steps);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    std::sort(per.begin(), per.end());
    return per[per.size() / 2];
}

int time_all(long long nx, long long ny, int steps)
{
    field f = field_new(nx, ny, 11);
    // The ceiling: 1 GiB device-to-device (as the library measures it).
    const size_t cb = size_t(1) << 30;
    field big{cb / 4 / 32, 32, cb / 4 / 32, nullptr, nullptr};
    CK(cudaMalloc(&big.a, cb));
    CK(cudaMalloc(&big.b, cb));
    double ceil_s = time_variant(variants[nvariants - 1], MGPU_KERNEL_JACOBI, big, 4, 7);
    const double ceiling = 2.0 * cb / ceil_s / 1e9;
    const double cells = static_cast<double>(nx - 2) * (ny - 2);
    const double moved = static_cast<double>(f.pitch) * f.ny * 8; // what a copy moves
    printf("%lld x %lld, %d steps: copy ceiling %.0f GB/s (1 GiB cudaMemcpy, read+write)\n", nx, ny,
           steps, ceiling);
    printf("%-18s %10s %10s %10s %10s\n", "variant", "kernel", "us/step", "GB/s", "ceiling");
    for (int v = 0; v < nvariants; v++)
        for (mgpu_kernel k : {MGPU_KERNEL_PATTERN2D, MGPU_KERNEL_JACOBI}) {
            if (v >= first_copy && k == MGPU_KERNEL_JACOBI)
                continue;
            double s = time_variant(variants[v], k, f, steps, 5);
            double gbps = (v >= first_copy ? moved : 8.0 * cells) / s / 1e9;
            printf("%-18s %10s %10.1f %10.0f %10.3f\n", variants[v].name,
                   v >= first_copy           ? "-"
                   : k == MGPU_KERNEL_JACOBI ? "jacobi"
                                             : "pattern2d",
                   s * 1e6, gbps, gbps / ceiling);
        }
    field_free(f);
    field_free(big);
    return 0;
}

} // namespace tune

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "check") == 0)
        return tune::check();
    if (argc == 6 && strcmp(argv[1], "one") == 0) { // for a profiler: VARIANT NX NY STEPS
        int v = atoi(argv[2]);
        if (v < 0 || v >= tune::nvariants)
            return 2;
        tune::field f = tune::field_new(atoll(argv[3]), atoll(argv[4]), 11);
        std::vector<float> h;
        tune::run_steps(tune::variants[v], MGPU_KERNEL_PATTERN2D, f, atoi(argv[5]), h);
        printf("%s: done\n", tune::variants[v].name);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "time") == 0)
        return tune::time_all(atoll(argv[2]), atoll(argv[3]), atoi(argv[4]));
    fprintf(stderr, "usage: kernel-tune check | time NX NY STEPS | one VARIANT NX NY STEPS\n");
    return 2;
}
