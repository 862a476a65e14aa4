// cuda-check.h - what the hand-run CUDA tools share: CK(call) exits with the call, the
// place and CUDA's error string when a CUDA call fails.
#ifndef MGPU_TOOLS_CUDA_CHECK_H
#define MGPU_TOOLS_CUDA_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif /* MGPU_TOOLS_CUDA_CHECK_H */
