/* gpu-hold.c - gpu-hold PID: holds a CUDA context open on each GPU it sees
 * while process PID runs (a GPU test script, tests/lib.sh's gpu_lock; a
 * session, bench/gpu-session.sh), and exits within a second of it.
 *
 * Why: on 4 H100s (BENCHMARKS.md sections 17 and 19), a run of 2 steps of
 * a 17 x 13 grid took 1.3 s when no other process had a context on the
 * GPUs and 0.34 s when one had.  The driver sets up every GPU a new process
 * sees unless a context is open there already, and the GPU tests are
 * hundreds of short runs (a mgpu-fork run on 4 GPUs is 9 CUDA processes).
 * An idle context takes no GPU time.
 *
 * PID is given, not taken from getppid(): a holder started in a subshell,
 * or after its script has gone, would otherwise watch the wrong process
 * for ever.  A GPU in an exclusive compute mode is left alone (a context
 * here would lock the tests out of it), and a GPU that cannot be held is
 * not held: the tests run as they would without this program, only
 * slower.  So a failed call is not an error here; it is said on stderr
 * and skipped. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cuda_runtime.h>

/* Whether PID is still there (a zombie counts until its parent reaps it). */
static int alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

int main(int argc, char **argv)
{
    char *end;
    long watched = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    if (argc != 2 || *end || watched <= 1) {
        fprintf(stderr, "usage: gpu-hold PID (the process to hold the GPUs for)\n");
        return 2;
    }
    pid_t script = (pid_t) watched;
    if (!alive(script))
        return 0;
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
    while (alive(script))
        sleep(1);
    return 0;
}
