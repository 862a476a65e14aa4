/* monitor-cuda.h - the launchers of monitor-cuda.cu, which monitor.c calls. */
#ifndef MGPU_MONITOR_CUDA_H
#define MGPU_MONITOR_CUDA_H

#include "mgpu-private.h"

#ifdef MGPU_HAVE_CUDA
#ifdef __cplusplus
extern "C" {
#endif

/* Both asynchronous on S, the current device's stream. */
cudaError_t mgpu_cuda_persistent_launch(const mgpu_persistent_desc *desc, cudaStream_t s);
cudaError_t mgpu_cuda_monitor_launch(mgpu_counters *counters, mgpu_signal *signal, int part,
                                     long long steps, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif

#endif /* MGPU_MONITOR_CUDA_H */
