// cuda-start.cu - what a process pays for CUDA before and around its work: the
// first runtime call (driver and device start), peer access, allocations,
// pinned host memory.  The GPU tests start hundreds of small processes, and
// this is where their time goes (BENCHMARKS.md section 7).  Not built by make:
//
//   nvcc -O2 -arch=sm_90 -o cuda-start tools/cuda-start.cu
//   ./cuda-start                          # one process, every step timed
//   CUDA_VISIBLE_DEVICES=0 ./cuda-start   # the same with one GPU in view
//   time sh -c 'for i in $(seq 8); do ./cuda-start >/dev/null & done; wait'
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

static double now_ms()
{
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

// Two calls in order; the first one's error, else the second's.
#define BOTH(first, second)                       \
    [&] {                                         \
        cudaError_t e_ = (first);                 \
        return e_ != cudaSuccess ? e_ : (second); \
    }()

// Time CALL, print it under LABEL, stop at the first error.
#define TIMED(label, call)                                                          \
    do {                                                                            \
        double t0_ = now_ms();                                                      \
        cudaError_t e_ = (call);                                                    \
        printf("%-32s %8.1f ms\n", (label), now_ms() - t0_);                        \
        if (e_ != cudaSuccess) {                                                    \
            fprintf(stderr, "cuda-start: %s: %s\n", #call, cudaGetErrorString(e_)); \
            return 1;                                                               \
        }                                                                           \
    } while (0)

int main()
{
    const size_t big = (size_t) 1 << 30, pinned = (size_t) 64 << 20;
    char label[64];
    int n = 0;
    TIMED("first call (cudaGetDeviceCount)", cudaGetDeviceCount(&n));
    for (int d = 0; d < n; d++) {
        snprintf(label, sizeof label, "device %d context", d);
        TIMED(label, BOTH(cudaSetDevice(d), cudaFree(0)));
    }
    for (int d = 0; d < n; d++)
        for (int p = 0; p < n; p++) {
            int can = 0;
            if (p == d || cudaDeviceCanAccessPeer(&can, d, p) != cudaSuccess || !can)
                continue;
            snprintf(label, sizeof label, "peer access %d -> %d", d, p);
            TIMED(label, BOTH(cudaSetDevice(d), cudaDeviceEnablePeerAccess(p, 0)));
        }
    void *a, *b, *h;
    TIMED("cudaSetDevice(0)", cudaSetDevice(0));
    TIMED("cudaMalloc 1 GiB", cudaMalloc(&a, big));
    TIMED("cudaMalloc 1 GiB, again", cudaMalloc(&b, big));
    TIMED("cudaMemset 1 GiB", BOTH(cudaMemset(a, 0, big), cudaDeviceSynchronize()));
    TIMED("cudaMemcpy 1 GiB on the device",
          BOTH(cudaMemcpy(b, a, big, cudaMemcpyDeviceToDevice), cudaDeviceSynchronize()));
    TIMED("cudaFree 2 x 1 GiB", BOTH(cudaFree(a), cudaFree(b)));
    TIMED("cudaHostAlloc 64 MiB pinned", cudaHostAlloc(&h, pinned, cudaHostAllocPortable));
    TIMED("cudaFreeHost 64 MiB", cudaFreeHost(h));
    printf("%d device(s); the process's exit (contexts torn down) is outside these\n", n);
    return 0;
}
