/* measure.c - what copy measurements need: the verification pattern that
 * proves every byte of a copy arrived, and the spin that holds a stream
 * while timed work is queued behind it.
 * Device memory is filled and checked by kernels (measure-cuda.cu), so that
 * verifying a large copy costs a fraction of a millisecond, not a transfer
 * of the whole buffer back to the host. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "measure.h"

/* Byte order is part of the pattern's definition (little-endian words), so
 * the host writes and reads bytes, whatever its own order. */
static void host_fill(unsigned char *p, size_t bytes, uint32_t seed, uint64_t offset)
{
    size_t nwords = bytes / 4;
    for (size_t i = 0; i < nwords; i++) {
        uint32_t w = mgpu_pattern_word(offset / 4 + i, seed);
        p[4 * i] = (unsigned char) w;
        p[4 * i + 1] = (unsigned char) (w >> 8);
        p[4 * i + 2] = (unsigned char) (w >> 16);
        p[4 * i + 3] = (unsigned char) (w >> 24);
    }
    for (size_t k = 4 * nwords; k < bytes; k++)
        p[k] = mgpu_pattern_byte(offset + k, seed);
}

static void host_check(const unsigned char *p, size_t bytes, uint32_t seed, uint64_t offset,
                       mgpu_pattern_result *result)
{
    size_t nwords = bytes / 4;
    uint64_t first_word = offset / 4;
    for (size_t i = 0; i < nwords; i++) {
        const unsigned char *b = p + 4 * i;
        uint32_t w = (uint32_t) b[0] | (uint32_t) b[1] << 8 | (uint32_t) b[2] << 16 |
                     (uint32_t) b[3] << 24;
        if (w == mgpu_pattern_word(first_word + i, seed))
            continue;
        for (size_t k = 4 * i; k < 4 * i + 4; k++) {
            if (p[k] != mgpu_pattern_byte(offset + k, seed) && result->wrong++ == 0)
                result->first = k;
        }
    }
    for (size_t k = 4 * nwords; k < bytes; k++) {
        if (p[k] != mgpu_pattern_byte(offset + k, seed) && result->wrong++ == 0)
            result->first = k;
    }
}

static mgpu_status check_alignment(const char *what, const void *ptr, uint64_t offset)
{
    if ((uintptr_t) ptr % 4 != 0 || offset % 4 != 0)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "%s: the buffer and the pattern offset must be "
                         "4-byte aligned",
                         what);
    return MGPU_OK;
}

mgpu_status mgpu_pattern_fill(int device, void *ptr, size_t bytes, uint32_t seed, uint64_t offset,
                              mgpu_stream *stream)
{
    MGPU_TRY(check_alignment("mgpu_pattern_fill", ptr, offset));
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda() && device != MGPU_HOST_MEMORY) {
        MGPU_CUDA(mgpu_cuda_pattern_fill(ptr, bytes, seed, offset, mgpu_stream_cuda(stream)),
                  device);
        return MGPU_OK;
    }
#endif
    (void) device;
    (void) stream;
    host_fill(ptr, bytes, seed, offset);
    return MGPU_OK;
}

mgpu_status mgpu_pattern_check(int device, const void *ptr, size_t bytes, uint32_t seed,
                               uint64_t offset, mgpu_stream *stream, mgpu_pattern_result *result)
{
    memset(result, 0, sizeof *result);
    MGPU_TRY(check_alignment("mgpu_pattern_check", ptr, offset));
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda() && device != MGPU_HOST_MEMORY) {
        unsigned long long found[2];
        MGPU_CUDA(
            mgpu_cuda_pattern_check(ptr, bytes, seed, offset, found, mgpu_stream_cuda(stream)),
            device);
        result->wrong = found[0];
        result->first = found[0] ? found[1] : 0;
        if (result->wrong)
            MGPU_TRY(mgpu_memcpy(&result->found, (const unsigned char *) ptr + result->first, 1));
    } else
#endif
    {
        /* Host memory: read it once the copies into it are done. */
        MGPU_TRY(mgpu_stream_synchronize(stream));
        host_check(ptr, bytes, seed, offset, result);
        if (result->wrong)
            result->found = ((const unsigned char *) ptr)[result->first];
    }
    if (result->wrong)
        result->expected = mgpu_pattern_byte(offset + result->first, seed);
    return MGPU_OK;
}

mgpu_status mgpu_stream_spin(mgpu_stream *stream, double microseconds)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda() && microseconds > 0) {
        MGPU_CUDA(
            mgpu_cuda_spin((unsigned long long) (microseconds * 1e3), mgpu_stream_cuda(stream)),
            stream ? mgpu_stream_device(stream) : -1);
    }
#endif
    (void) stream;
    (void) microseconds;
    return MGPU_OK;
}
