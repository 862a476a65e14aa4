/* gpu-warm.c - holds a CUDA context open on each GPU while a GPU test
 * script runs (tests/lib.sh, gpu_lock), and exits within a second of the
 * script.
 *
 * On 4 H100s with persistence mode on (BENCHMARKS.md section 17), a run of
 * 2 steps of a 17 x 13 grid on one GPU took 1.3 s when no other process
 * had a context on the GPUs and 0.3 s when one had: the driver's set-up of
 * each visible GPU for a new process, which the hundreds of short runs of
 * the GPU tests each paid.  An idle context takes no GPU time.  A GPU in
 * an exclusive compute mode is left alone (a context here would lock the
 * tests out of it), and a GPU that cannot be held is simply not held: the
 * tests run as before, only slower. */
#include <stdio.h>
#include <unistd.h>

#include <cuda_runtime.h>

int main(void)
{
    pid_t script = getppid();
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess)
        return 0;
    for (int d = 0; d < count; d++) {
        int mode;
        if (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, d) != cudaSuccess ||
            mode != cudaComputeModeDefault)
            continue;
        if (cudaSetDevice(d) == cudaSuccess)
            (void) cudaFree(0); /* makes the context; a failure leaves D unheld */
    }
    while (getppid() == script)
        sleep(1);
    return 0;
}
