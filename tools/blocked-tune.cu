// blocked-tune.cu - the lab bench behind lib/kernels-blocked-cuda.cu: on one GPU, times the
// one-step kernel and the blocked kernel at T = 2..8 steps a pass (the library's launch and
// variants: warps per block, rows per strip) against the one-step roofline, cudaMemcpy
// device to device measured in the same run, and checks every variant bit for bit against
// T launches of the one-step kernel.  It includes the library's kernel files, so it times
// the very code the library runs.  Built by make where CUDA is configured:
//
//   make tools/blocked-tune && tools/blocked-tune            # check, then 16384² and 32768²
//   tools/blocked-tune check                                 # odd grids only
//   tools/blocked-tune time NX NY                            # one grid
//   tools/blocked-tune slab NX NY PARTS                      # the grid and its slab of PARTS
//
// "x roofline" is cell updates per second over (copy GB/s, read + written) / 8 bytes: the
// rate of a one-step kernel that moved its bytes as fast as cudaMemcpy.
#include "../lib/kernels-cuda.cu"
#include "../lib/kernels-blocked-cuda.cu"

#include <algorithm>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "cuda-check.h"

namespace tune {

const unsigned both_fixed = MGPU_ROWS_FIXED_TOP | MGPU_ROWS_FIXED_BOTTOM;

// One pass of T steps over the whole field (rows 1 .. ny-2, ring fixed), IN to OUT.
typedef void (*pass_fn)(mgpu_kernel k, const float *in, float *out, long long nx, long long pitch,
                        long long ny);

struct variant {
    const char *name;
    int t;
    pass_fn pass;
};

template <int T>
void library_pass(mgpu_kernel k, const float *in, float *out, long long nx, long long pitch,
                  long long ny)
{
    CK(mgpu_cuda_stencil_rows_blocked(k, in, out, nx, pitch, 1, ny - 1, T, both_fixed, 0));
}

// WARPS warps a block, rows loaded one ahead or not (PF), and STRIP rows a strip, or for
// STRIP <= 0 the library's rule with TARGET rows and at least MIN_T T rows (at least one).
template <int T, int WARPS, bool PF, int STRIP, int TARGET = 0, int MIN_T = 0>
void shaped_pass(mgpu_kernel k, const float *in, float *out, long long nx, long long pitch,
                 long long ny)
{
    const long long min = MIN_T > 0 ? MIN_T * T : 1;
    if (k == MGPU_KERNEL_PATTERN2D)
        CK((launch_blocked<MGPU_KERNEL_PATTERN2D, T, 4, WARPS, PF>(
            in, out, nx, pitch, 1, ny - 1, both_fixed, STRIP, TARGET, min, 0)));
    else
        CK((launch_blocked<MGPU_KERNEL_JACOBI, T, 4, WARPS, PF>(
            in, out, nx, pitch, 1, ny - 1, both_fixed, STRIP, TARGET, min, 0)));
}

// The rule of the library before 2026-11-23, for comparison: about 64 blocks a
// multiprocessor, at least 8T rows a strip, 4 warps a block, no prefetch.
template <int T>
void before_pass(mgpu_kernel k, const float *in, float *out, long long nx, long long pitch,
                 long long ny)
{
    int dev, sms;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const long long stride = 32 * 4 - 2 * blocked_tile<T, 4>::margin;
    const long long col_blocks = ((nx - 1 + stride - 1) / stride + 3) / 4, rows = ny - 2;
    long long strip = std::max((rows * col_blocks + 64LL * sms - 1) / (64LL * sms), 8LL * T);
    strip = std::min(strip, rows);
    if (k == MGPU_KERNEL_PATTERN2D)
        CK((launch_blocked<MGPU_KERNEL_PATTERN2D, T, 4, 4, false>(in, out, nx, pitch, 1, ny - 1,
                                                                  both_fixed, strip, 0, 1, 0)));
    else
        CK((launch_blocked<MGPU_KERNEL_JACOBI, T, 4, 4, false>(in, out, nx, pitch, 1, ny - 1,
                                                               both_fixed, strip, 0, 1, 0)));
}

// The library at each T, then its rule and shapes around it: "before" the former rule,
// "rN" the rule with strips of about N rows, "m1" at least one row (else 2T), "wN" N warps
// a block (else 4), "nopf" without the prefetch, "sN" N rows a strip.  Add rows here to
// try others; T and the shape are template arguments, so each row is its own kernel.
// clang-format off
#define SHAPES(T)                                                                         \
    {"library", T, library_pass<T>}, {"before", T, before_pass<T>},                        \
        {"w2 r64", T, shaped_pass<T, 2, true, 0, 64, 2>},                                 \
        {"w2 r128", T, shaped_pass<T, 2, true, 0, 128, 2>},                               \
        {"w2 r256", T, shaped_pass<T, 2, true, 0, 256, 2>},                               \
        {"w4 r64", T, shaped_pass<T, 4, true, 0, 64, 2>},                                 \
        {"w4 r128", T, shaped_pass<T, 4, true, 0, 128, 2>},                               \
        {"w2 r128 nopf", T, shaped_pass<T, 2, false, 0, 128, 2>},                         \
        {"w2 r128 m1", T, shaped_pass<T, 2, true, 0, 128, 0>}
const variant variants[] = {{"one-step", 1, library_pass<1>},
                            SHAPES(2), SHAPES(3), SHAPES(4), SHAPES(5), SHAPES(6), SHAPES(8)};
// clang-format on
const int nvariants = sizeof variants / sizeof variants[0];

struct field {
    long long nx, ny, pitch;
    float *a, *b, *ref, *scratch;
};

size_t field_bytes(const field &f) { return static_cast<size_t>(f.pitch * f.ny) * 4; }

field field_new(long long nx, long long ny, unsigned seed)
{
    field f{nx, ny, (nx + 31) / 32 * 32, nullptr, nullptr, nullptr, nullptr};
    for (float **p : {&f.a, &f.b, &f.ref, &f.scratch})
        CK(cudaMalloc(p, field_bytes(f)));
    std::vector<float> h(static_cast<size_t>(f.pitch * ny));
    srand(seed);
    for (auto &v : h)
        v = static_cast<float>(rand()) / RAND_MAX * 2.0f - 1.0f;
    CK(cudaMemcpy(f.a, h.data(), field_bytes(f), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(f.b, f.a, field_bytes(f), cudaMemcpyDeviceToDevice));
    return f;
}

void field_free(field &f)
{
    for (float *p : {f.a, f.b, f.ref, f.scratch})
        CK(cudaFree(p));
}

// Cells whose bits differ, counted on the device (the fields may be gigabytes).
__global__ void count_differences(const float *x, const float *y, long long n,
                                  unsigned long long *bad)
{
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<long long>(gridDim.x) * blockDim.x)
        if (__float_as_uint(x[i]) != __float_as_uint(y[i]))
            atomicAdd(bad, 1ull);
}

unsigned long long differences(const float *x, const float *y, size_t n)
{
    unsigned long long *bad, host = 0;
    CK(cudaMalloc(&bad, sizeof *bad));
    CK(cudaMemset(bad, 0, sizeof *bad));
    count_differences<<<1024, 256>>>(x, y, static_cast<long long>(n), bad);
    CK(cudaGetLastError());
    CK(cudaMemcpy(&host, bad, sizeof host, cudaMemcpyDeviceToHost));
    CK(cudaFree(bad));
    return host;
}

// F.ref = T one-step launches from F.a (through F.scratch); and both already hold F.a's
// boundary, so cells no step writes agree.
void reference(mgpu_kernel k, field &f, int t)
{
    CK(cudaMemcpy(f.ref, f.a, field_bytes(f), cudaMemcpyDeviceToDevice));
    CK(cudaMemcpy(f.scratch, f.a, field_bytes(f), cudaMemcpyDeviceToDevice));
    float *cur = f.ref, *next = f.scratch;
    for (int s = 0; s < t; s++) {
        library_pass<1>(k, cur, next, f.nx, f.pitch, f.ny);
        std::swap(cur, next);
    }
    if (cur != f.ref)
        CK(cudaMemcpy(f.ref, cur, field_bytes(f), cudaMemcpyDeviceToDevice));
}

// Whether one pass of V from F.a into F.b (a copy of F.a first) is F.ref to the bit.
bool matches(const variant &v, mgpu_kernel k, field &f)
{
    CK(cudaMemcpy(f.b, f.a, field_bytes(f), cudaMemcpyDeviceToDevice));
    v.pass(k, f.a, f.b, f.nx, f.pitch, f.ny);
    CK(cudaDeviceSynchronize());
    return differences(f.b, f.ref, static_cast<size_t>(f.pitch * f.ny)) == 0;
}

// Whether variants[V] of kernel K is T one-step launches to the bit on F; F.ref is made
// anew at the first variant of each T (the variants come in runs of one T).
bool checked(int v, mgpu_kernel k, field &f)
{
    if (v == 0 || variants[v].t != variants[v - 1].t)
        reference(k, f, variants[v].t);
    return matches(variants[v], k, f);
}

const char *kernel_name(mgpu_kernel k) { return k == MGPU_KERNEL_JACOBI ? "jacobi" : "pattern2d"; }

int check()
{
    const long long grids[][2] = {{3, 3},    {5, 4},       {17, 13},   {101, 53},
                                  {1001, 7}, {1031, 2049}, {4099, 77}, {8195, 1025}};
    int failed = 0;
    for (auto &g : grids)
        for (mgpu_kernel k : {MGPU_KERNEL_PATTERN2D, MGPU_KERNEL_JACOBI}) {
            field f = field_new(g[0], g[1], 7);
            for (int v = 0; v < nvariants; v++) {
                if (!checked(v, k, f)) {
                    printf("FAIL %s T=%d %s %lldx%lld\n", variants[v].name, variants[v].t,
                           kernel_name(k), g[0], g[1]);
                    failed++;
                }
            }
            field_free(f);
        }
    printf("check: %s\n", failed ? "FAILED" : "every variant bit-identical to T one-step launches");
    return failed ? 1 : 0;
}

// Median over 5 runs of the seconds per step of about 96 steps back to back, between
// F.b and F.scratch: F.a and F.ref stay what the next variant is checked against.
double seconds_per_step(const variant &v, mgpu_kernel k, field &f)
{
    const int passes = std::max(2, 96 / v.t);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> per;
    for (int r = -1; r < 5; r++) { // run -1 warms up
        CK(cudaEventRecord(e0, 0));
        for (int p = 0; p < passes; p++)
            v.pass(k, p % 2 ? f.scratch : f.b, p % 2 ? f.b : f.scratch, f.nx, f.pitch, f.ny);
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0)
            per.push_back(ms / 1e3 / (passes * v.t));
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    std::sort(per.begin(), per.end());
    return per[per.size() / 2];
}

// cudaMemcpy device to device of 1 GiB (as the library measures its ceiling), GB/s read +
// written, median of 7.
double copy_gbps()
{
    const size_t bytes = size_t(1) << 30;
    void *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> gbps;
    for (int r = -1; r < 7; r++) {
        CK(cudaEventRecord(e0, 0));
        for (int i = 0; i < 4; i++)
            CK(cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice, 0));
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0)
            gbps.push_back(4.0 * 2.0 * bytes / (ms / 1e3) / 1e9);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaFree(a));
    CK(cudaFree(b));
    std::sort(gbps.begin(), gbps.end());
    return gbps[gbps.size() / 2];
}

int time_grid(long long nx, long long ny)
{
    const double ceiling = copy_gbps();
    const double roofline = ceiling * 1e9 / 8.0; // cells per second
    const double cells = static_cast<double>(nx - 2) * (ny - 2);
    field f = field_new(nx, ny, 11);
    printf("%lld x %lld: cudaMemcpy %.0f GB/s (read + written): one-step roofline %.1f "
           "Gcells/s\n",
           nx, ny, ceiling, roofline / 1e9);
    printf("%-10s %2s %-13s %10s %10s %10s  %s\n", "kernel", "T", "variant", "us/step", "Gcells/s",
           "x roofline", "bits");
    int failed = 0;
    for (mgpu_kernel k : {MGPU_KERNEL_PATTERN2D, MGPU_KERNEL_JACOBI})
        for (int v = 0; v < nvariants; v++) {
            const bool same = checked(v, k, f);
            failed += !same;
            const double s = seconds_per_step(variants[v], k, f);
            printf("%-10s %2d %-13s %10.1f %10.1f %10.3f  %s\n", kernel_name(k), variants[v].t,
                   variants[v].name, s * 1e6, cells / s / 1e9, cells / s / roofline,
                   same ? "same" : "DIFFER");
        }
    field_free(f);
    return failed ? 1 : 0;
}

// Each variant on the whole field and on the largest slab of PARTS (its rows and one halo
// row a side), as a device of a PARTS-device run computes it: "slab/share" is the whole
// field's time over PARTS, over the slab's, what the run's efficiency against one device
// can reach before any exchange.
int time_slab(long long nx, long long ny, int parts)
{
    const long long slab_ny = (ny - 2 + parts - 1) / parts + 2;
    field whole = field_new(nx, ny, 11), slab = field_new(nx, slab_ny, 13);
    printf("%lld x %lld, and its slab of %d: %lld x %lld\n", nx, ny, parts, nx, slab_ny);
    printf("%-10s %2s %-13s %12s %12s %11s  %s\n", "kernel", "T", "variant", "whole us/st",
           "slab us/st", "slab/share", "bits");
    int failed = 0;
    for (mgpu_kernel k : {MGPU_KERNEL_PATTERN2D, MGPU_KERNEL_JACOBI})
        for (int v = 0; v < nvariants; v++) {
            // Both checked, so that each field's reference follows the T.
            const bool on_whole = checked(v, k, whole), on_slab = checked(v, k, slab);
            const bool same = on_whole && on_slab;
            failed += !same;
            const double w = seconds_per_step(variants[v], k, whole);
            const double s = seconds_per_step(variants[v], k, slab);
            printf("%-10s %2d %-13s %12.1f %12.1f %11.3f  %s\n", kernel_name(k), variants[v].t,
                   variants[v].name, w * 1e6, s * 1e6, w / parts / s, same ? "same" : "DIFFER");
        }
    field_free(whole);
    field_free(slab);
    return failed ? 1 : 0;
}

} // namespace tune

// ARG as a whole number from LO to HI into *VALUE, or false.
static bool number(const char *arg, long long lo, long long hi, long long *value)
{
    char *end;
    errno = 0;
    *value = strtoll(arg, &end, 10);
    return errno == 0 && end != arg && *end == '\0' && *value >= lo && *value <= hi;
}

int main(int argc, char **argv)
{
    const long long most = 1LL << 20; // a side; 2^40 cells would not fit a GPU anyway
    long long nx, ny, parts;
    bool grid = argc >= 4 && number(argv[2], 3, most, &nx) && number(argv[3], 3, most, &ny);
    if (argc == 2 && strcmp(argv[1], "check") == 0)
        return tune::check();
    if (argc == 4 && strcmp(argv[1], "time") == 0 && grid)
        return tune::time_grid(nx, ny);
    if (argc == 5 && strcmp(argv[1], "slab") == 0 && grid && number(argv[4], 1, ny - 2, &parts))
        return tune::time_slab(nx, ny, static_cast<int>(parts));
    if (argc == 1) {
        int failed = tune::check();
        failed |= tune::time_grid(16384, 16384);
        failed |= tune::time_grid(32768, 32768);
        return failed;
    }
    fprintf(stderr,
            "usage: blocked-tune [check | time NX NY | slab NX NY PARTS] (NX, NY: 3 to "
            "%lld; PARTS: 1 to NY-2)\n",
            most);
    return 2;
}
