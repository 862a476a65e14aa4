// stencil-cell.cuh - the arithmetic of one stencil cell on the device, shared by every CUDA
// kernel that must give the C reference's field to the bit (kernels-cuda.cu, the device-driven
// program's persistent kernel, the persistent-worker kernel of monitor-cuda.cu).
//
// __fadd_rn/__fsub_rn/__fmul_rn are never contracted into a fused multiply-add by nvcc, and
// __fsqrt_rn is IEEE whatever the flags: with the operations in the order of the C reference
// (compiled with -ffp-contract=off), every cell is the reference's to the bit.
#ifndef MGPU_STENCIL_CELL_CUH
#define MGPU_STENCIL_CELL_CUH

#include "mgpu.h"

template <mgpu_kernel K> struct cell_rule;

// pattern2d: sqrtf(fabsf((((c + w) + e) - 2n) + 3s)), left to right as in C.
template <> struct cell_rule<MGPU_KERNEL_PATTERN2D> {
    static __device__ __forceinline__ float apply(float c, float w, float e, float n, float s)
    {
        float t = __fadd_rn(__fadd_rn(c, w), e);
        t = __fsub_rn(t, __fmul_rn(2.0f, n));
        t = __fadd_rn(t, __fmul_rn(3.0f, s));
        return __fsqrt_rn(fabsf(t));
    }
};

// jacobi: 0.25f * (((w + e) + n) + s).
template <> struct cell_rule<MGPU_KERNEL_JACOBI> {
    static __device__ __forceinline__ float apply(float c, float w, float e, float n, float s)
    {
        (void) c;
        return __fmul_rn(0.25f, __fadd_rn(__fadd_rn(__fadd_rn(w, e), n), s));
    }
};

#endif /* MGPU_STENCIL_CELL_CUH */
