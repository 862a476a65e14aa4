// measure-cuda.cu - the kernels copy measurements need: fill a buffer with the
// verification pattern, check one against it, and a spin that holds a stream for a
// given time so that the timed copies queued behind it run back to back.
//
// None of these is timed, so they are plain grid-stride loops; what matters is that
// the check reads every byte and that only a short result crosses to the host.
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "measure.h"

namespace {

const int threads = 256;
const long long max_blocks = 1024; // a grid-stride loop walks larger buffers

unsigned blocks_for(size_t items)
{
    long long blocks = (static_cast<long long>(items) + threads - 1) / threads;
    if (blocks < 1)
        blocks = 1;
    return static_cast<unsigned>(blocks < max_blocks ? blocks : max_blocks);
}

__global__ void pattern_fill_kernel(uint32_t *words, size_t nwords, unsigned char *tail,
                                    unsigned tail_bytes, uint32_t seed, uint64_t first_word)
{
    size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < nwords;
         i += stride)
        words[i] = mgpu_pattern_word(first_word + i, seed);
    if (blockIdx.x == 0 && threadIdx.x < tail_bytes)
        tail[threadIdx.x] = mgpu_pattern_byte(4 * (first_word + nwords) + threadIdx.x, seed);
}

// Count one wrong word's wrong bytes and keep the lowest wrong offset.
__device__ void report(uint32_t diff, unsigned long long offset, unsigned long long *result)
{
    unsigned wrong = 0, first = 4;
    for (unsigned b = 0; b < 4; b++) {
        if ((diff >> (8 * b)) & 0xFFu) {
            wrong++;
            if (first == 4)
                first = b;
        }
    }
    atomicAdd(&result[0], static_cast<unsigned long long>(wrong));
    atomicMin(&result[1], offset + first);
}

__global__ void pattern_check_kernel(const uint32_t *words, size_t nwords,
                                     const unsigned char *tail, unsigned tail_bytes, uint32_t seed,
                                     uint64_t first_word, unsigned long long *result)
{
    size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < nwords;
         i += stride) {
        uint32_t diff = words[i] ^ mgpu_pattern_word(first_word + i, seed);
        if (diff != 0)
            report(diff, 4ull * i, result);
    }
    if (blockIdx.x == 0 && threadIdx.x < tail_bytes) {
        uint64_t offset = 4 * (first_word + nwords) + threadIdx.x;
        if (tail[threadIdx.x] != mgpu_pattern_byte(offset, seed)) {
            atomicAdd(&result[0], 1ull);
            atomicMin(&result[1], 4ull * nwords + threadIdx.x);
        }
    }
}

__device__ __forceinline__ unsigned long long global_timer_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin_kernel(unsigned long long nanoseconds)
{
    unsigned long long start = global_timer_ns();
    while (global_timer_ns() - start < nanoseconds) {
#if __CUDA_ARCH__ >= 700
        __nanosleep(1000); // one thread waiting need not keep its SM's issue slots busy
#endif
    }
}

} // namespace

extern "C" cudaError_t mgpu_cuda_pattern_fill(void *ptr, size_t bytes, uint32_t seed,
                                              uint64_t offset, cudaStream_t s)
{
    size_t nwords = bytes / 4;
    unsigned char *tail = static_cast<unsigned char *>(ptr) + 4 * nwords;
    pattern_fill_kernel<<<blocks_for(nwords), threads, 0, s>>>(
        static_cast<uint32_t *>(ptr), nwords, tail, static_cast<unsigned>(bytes % 4), seed,
        offset / 4);
    return cudaGetLastError();
}

extern "C" cudaError_t mgpu_cuda_pattern_check(const void *ptr, size_t bytes, uint32_t seed,
                                               uint64_t offset, unsigned long long result[2],
                                               cudaStream_t s)
{
    // Two counters on the device; cudaFree synchronises the device, which costs
    // nothing here: the caller waits for the answer anyway.
    unsigned long long *d_result = NULL;
    cudaError_t err = cudaMalloc(reinterpret_cast<void **>(&d_result), 2 * sizeof *d_result);
    if (err != cudaSuccess)
        return err;
    size_t nwords = bytes / 4;
    const unsigned char *tail = static_cast<const unsigned char *>(ptr) + 4 * nwords;
    err = cudaMemsetAsync(d_result, 0, sizeof *d_result, s); // wrong bytes: 0
    if (err == cudaSuccess)                                  // first: the largest offset
        err = cudaMemsetAsync(d_result + 1, 0xFF, sizeof *d_result, s);
    if (err == cudaSuccess) {
        pattern_check_kernel<<<blocks_for(nwords), threads, 0, s>>>(
            static_cast<const uint32_t *>(ptr), nwords, tail, static_cast<unsigned>(bytes % 4),
            seed, offset / 4, d_result);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(result, d_result, 2 * sizeof *d_result, cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(s);
    cudaError_t freed = cudaFree(d_result);
    return err != cudaSuccess ? err : freed;
}

extern "C" cudaError_t mgpu_cuda_spin(unsigned long long nanoseconds, cudaStream_t s)
{
    spin_kernel<<<1, 1, 0, s>>>(nanoseconds);
    return cudaGetLastError();
}
