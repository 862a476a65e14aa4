/* gpu-hold.c - holds a CUDA context open on each GPU it sees while a GPU
 * test script runs (tests/lib.sh, gpu_lock), and exits within a second of
 * the script.
 *
 * Why: on 4 H100s with persistence mode on (BENCHMARKS.md section 17), a
 * run of 2 steps of a 17 x 13 grid took 1.3 s when no other process had a
 * context on the GPUs and 0.3 s when one had.  The driver sets up every
 * GPU a new process sees unless a context is open there already, and the
 * GPU tests are hundreds of short runs (a mgpu-fork run on 4 GPUs is 9
 * CUDA processes).  An idle context takes no GPU time.
 *
 * A GPU in an exclusive compute mode is left alone (a context here would
 * lock the tests out of it), and a GPU that cannot be held is not held:
 * the tests run as they would without this program, only slower.  So a
 * failed call is not an error here; it is said on stderr and skipped. */
#include <stdio.h>
#include <unistd.h>

#include <cuda_runtime.h>

int main(void)
{
    pid_t script = getppid();
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        fprintf(stderr, "gpu-hold: cudaGetDeviceCount: %s\n", cudaGetErrorString(err));
        return 0;
    }
    for (int d = 0; d < count; d++) {
        int mode;
        err = cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, d);
        if (err == cudaSuccess && mode != cudaComputeModeDefault)
            continue;
        if (err == cudaSuccess)
            err = cudaSetDevice(d);
        if (err == cudaSuccess)
            err = cudaFree(0); /* makes the device's primary context */
        if (err != cudaSuccess)
            fprintf(stderr, "gpu-hold: GPU %d not held: %s\n", d, cudaGetErrorString(err));
    }
    while (getppid() == script)
        sleep(1);
    return 0;
}
