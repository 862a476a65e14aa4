/* backend.c - choosing between the CUDA backend and the host backend. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mgpu-private.h"
#include "trace.h"

static mgpu_backend active = MGPU_BACKEND_HOST;
static int host_device_count = 1;
static int cuda_device_count;
static char reason[256] = "not initialised";

const char *mgpu_backend_reason(void) { return reason; }
mgpu_backend mgpu_backend_active(void) { return active; }

#ifdef MGPU_HAVE_CUDA
/* How many CUDA devices this process can use; 0 and a reason if none. */
static int cuda_probe(char *why, size_t why_size)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        cudaGetLastError();
        snprintf(why, why_size, "no usable CUDA device: %s (%s)", cudaGetErrorString(err),
                 cudaGetErrorName(err));
        return 0;
    }
    if (count == 0)
        snprintf(why, why_size, "no CUDA device");
    return count;
}
#endif

#ifdef MGPU_HAVE_CUDA
static int probe_in_child(char *why, size_t why_size);
#endif

static mgpu_status init(mgpu_backend want, int host_devices, bool in_child)
{
    /* The host device count matters only where the host backend may run. */
    if (want != MGPU_BACKEND_CUDA && (host_devices < 1 || host_devices > MGPU_MAX_DEVICES))
        return mgpu_fail(MGPU_ERR_USAGE, "host devices: %d is out of range 1..%d", host_devices,
                         MGPU_MAX_DEVICES);
    host_device_count = host_devices;
    if (want == MGPU_BACKEND_HOST) {
        active = MGPU_BACKEND_HOST;
        snprintf(reason, sizeof reason, "host backend asked for");
        return MGPU_OK;
    }
#ifdef MGPU_HAVE_CUDA
    char why[200] = "";
    int count = in_child ? probe_in_child(why, sizeof why) : cuda_probe(why, sizeof why);
    if (count > 0) {
        active = MGPU_BACKEND_CUDA;
        cuda_device_count = count;
        snprintf(reason, sizeof reason, "%d CUDA device%s found", count, count > 1 ? "s" : "");
        return MGPU_OK;
    }
    if (want == MGPU_BACKEND_CUDA)
        return mgpu_fail(MGPU_ERR_NO_DEVICE, "--backend=cuda: %s", why);
    active = MGPU_BACKEND_HOST;
    snprintf(reason, sizeof reason, "%s; host backend used", why);
    return MGPU_OK;
#else
    if (want == MGPU_BACKEND_CUDA)
        return mgpu_fail(MGPU_ERR_UNSUPPORTED, "--backend=cuda: this build has no CUDA backend "
                                               "(configure found no CUDA toolkit)");
    (void) in_child;
    active = MGPU_BACKEND_HOST;
    snprintf(reason, sizeof reason, "built without CUDA; host backend used");
    return MGPU_OK;
#endif
}

mgpu_status mgpu_init(mgpu_backend want, int host_devices)
{
    mgpu_trace_init();
    return init(want, host_devices, false);
}

mgpu_status mgpu_init_nocuda(mgpu_backend want, int host_devices)
{
    mgpu_trace_init();
    return init(want, host_devices, true);
}

int mgpu_devices_available(void)
{
    return active == MGPU_BACKEND_CUDA ? cuda_device_count : host_device_count;
}

mgpu_status mgpu_check_device(int device)
{
    int count = mgpu_devices_available();
    if (device < 0 || device >= count)
        return mgpu_fail(MGPU_ERR_USAGE, "device %d does not exist (%d %s device%s)", device, count,
                         mgpu_backend_name(active), count == 1 ? "" : "s");
    return MGPU_OK;
}

#ifdef MGPU_HAVE_CUDA
/* A CUDA context is not inherited across fork() and the runtime is not
 * fork-safe, so a short-lived child asks and this process stays clean. */
static int probe_in_child(char *why, size_t why_size)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(why, why_size, "pipe: %s", strerror(errno));
        return 0;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_size, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        char child_why[200] = "", msg[256];
        close(fds[0]);
        int n = cuda_probe(child_why, sizeof child_why);
        int len = snprintf(msg, sizeof msg, "%d %s", n, child_why);
        ssize_t written = write(fds[1], msg, (size_t) len);
        _exit(written == len ? 0 : 1);
    }
    close(fds[1]);
    char msg[256] = "";
    size_t got = 0;
    for (;;) {
        ssize_t r = read(fds[0], msg + got, sizeof msg - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t) r;
        if (got == sizeof msg - 1)
            break;
    }
    msg[got] = '\0';
    close(fds[0]);
    int wstatus;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
        ;
    int n = 0, used = 0;
    if (sscanf(msg, "%d %n", &n, &used) != 1) {
        snprintf(why, why_size, "the CUDA probe process gave no answer");
        return 0;
    }
    snprintf(why, why_size, "%s", msg + used);
    return n;
}
#endif

mgpu_status mgpu_cuda_device_count_nofork(int *count)
{
    *count = 0;
#ifdef MGPU_HAVE_CUDA
    char why[200] = "";
    *count = probe_in_child(why, sizeof why);
    if (*count == 0)
        return mgpu_fail(MGPU_ERR_NO_DEVICE, "%s", why);
    return MGPU_OK;
#else
    return mgpu_fail(MGPU_ERR_UNSUPPORTED, "this build has no CUDA backend");
#endif
}
