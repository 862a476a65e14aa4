/* peer-um-hints.h - forced into the build of NVIDIA's multi_threaded_um with
 * -DUM_HINTS (bench/step-cost.sh, nvcc -include): its cudaMemAdvise calls
 * name the device by number, as CUDA 12 took it, and CUDA 13 takes a
 * cudaMemLocation.  This overload gives those calls CUDA 13's form, so that
 * the peer's source is built as it ships. */
#include <cuda_runtime.h>

#if CUDART_VERSION >= 13000
static inline cudaError_t cudaMemAdvise(const void *ptr, size_t bytes, cudaMemoryAdvise advice,
                                        int device)
{
    cudaMemLocation where = {cudaMemLocationTypeDevice, device};
    return cudaMemAdvise(ptr, bytes, advice, where);
}
#endif
