/* measure.h - what measure.c and measure-cuda.cu share: the verification
 * pattern, computed the same way on the host and on a device, and the
 * kernel launchers.
 *
 * Byte K of a pattern is byte K%4 (little-endian) of word K/4, and word I
 * of the pattern of SEED is fmix32(I xor SEED), MurmurHash3's finaliser.
 * fmix32 is a bijection of 32-bit words, so two different seeds give
 * different words at every index: a buffer "poisoned" with the pattern of
 * another seed differs from the expected one in every word, and a byte that
 * a copy failed to write cannot pass by chance.  Neighbouring words look
 * unrelated, so a copy from a shifted offset fails too.
 */
#ifndef MGPU_MEASURE_H
#define MGPU_MEASURE_H

#include <stdint.h>

#include "mgpu-private.h"

#ifdef __CUDACC__
#define MGPU_HOST_DEVICE __host__ __device__
#else
#define MGPU_HOST_DEVICE
#endif

static inline MGPU_HOST_DEVICE uint32_t mgpu_pattern_word(uint64_t index, uint32_t seed)
{
    /* Above 2^32 words (16 GiB) the high half of the index is folded in. */
    uint32_t h = (uint32_t) index ^ seed ^ ((uint32_t) (index >> 32) * 0x9E3779B9u);
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

static inline MGPU_HOST_DEVICE unsigned char mgpu_pattern_byte(uint64_t offset, uint32_t seed)
{
    return (unsigned char) (mgpu_pattern_word(offset / 4, seed) >> (8 * (offset % 4)));
}

#ifdef MGPU_HAVE_CUDA
#ifdef __cplusplus
extern "C" {
#endif
/* Fill BYTES at PTR (4-byte aligned) with the pattern of SEED from pattern
 * offset OFFSET (a multiple of 4), on S. */
cudaError_t mgpu_cuda_pattern_fill(void *ptr, size_t bytes, uint32_t seed, uint64_t offset,
                                   cudaStream_t s);
/* Compare BYTES at PTR (4-byte aligned) with the pattern of SEED from
 * pattern offset OFFSET (a multiple of 4); wait for S; RESULT[0] gets the
 * count of wrong bytes, RESULT[1] the offset of the first (from PTR). */
cudaError_t mgpu_cuda_pattern_check(const void *ptr, size_t bytes, uint32_t seed, uint64_t offset,
                                    unsigned long long result[2], cudaStream_t s);
/* A one-thread kernel on S that returns after NANOSECONDS of the GPU's
 * global timer. */
cudaError_t mgpu_cuda_spin(unsigned long long nanoseconds, cudaStream_t s);
#ifdef __cplusplus
}
#endif
#endif

#endif /* MGPU_MEASURE_H */
