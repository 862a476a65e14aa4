/* status.c - status codes, their words, and the last failure of each thread. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>

#include "mgpu-private.h"

/* Each thread keeps its own last failure, as errno does: worker threads
 * fail independently and report their own cause. */
static _Thread_local char last_error[512];

const char *mgpu_strerror(mgpu_status status)
{
    switch (status) {
    case MGPU_OK:
        return "success";
    case MGPU_ERR_USAGE:
        return "invalid request";
    case MGPU_ERR_NOMEM:
        return "out of memory";
    case MGPU_ERR_NO_DEVICE:
        return "no usable device";
    case MGPU_ERR_UNSUPPORTED:
        return "not supported";
    case MGPU_ERR_CUDA:
        return "CUDA error";
    case MGPU_ERR_SYSTEM:
        return "system error";
    case MGPU_ERR_VERIFY:
        return "verification failed";
    case MGPU_ERR_FAULT:
        return "injected fault";
    case MGPU_ERR_INTERRUPTED:
        return "interrupted";
    }
    return "unknown status";
}

const char *mgpu_last_error(void) { return last_error; }

const char *mgpu_error_message(mgpu_status status)
{
    return last_error[0] ? last_error : mgpu_strerror(status);
}

void mgpu_clear_error(void) { last_error[0] = '\0'; }

int mgpu_exit_code(mgpu_status status)
{
    switch (status) {
    case MGPU_OK:
        return 0;
    case MGPU_ERR_USAGE:
        return 2;
    default:
        return 1;
    }
}

mgpu_status mgpu_vfail(mgpu_status status, const char *fmt, va_list ap)
{
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    return status;
}

mgpu_status mgpu_error_set(mgpu_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mgpu_vfail(status, fmt, ap);
    va_end(ap);
    return status;
}

#ifdef MGPU_HAVE_CUDA
mgpu_status mgpu_cuda_fail(cudaError_t err, const char *call, int device, const char *file,
                           int line)
{
    /* Keep only the function name of the call: the arguments are noise. */
    size_t name_len = strcspn(call, "(");
    mgpu_status status = err == cudaErrorMemoryAllocation ? MGPU_ERR_NOMEM : MGPU_ERR_CUDA;
    cudaGetLastError(); /* clear a sticky launch error so later calls see their own */
    if (device >= 0)
        return mgpu_fail(status, "%.*s on device %d: %s (%s, %s:%d)", (int) name_len, call, device,
                         cudaGetErrorString(err), cudaGetErrorName(err), file, line);
    return mgpu_fail(status, "%.*s: %s (%s, %s:%d)", (int) name_len, call, cudaGetErrorString(err),
                     cudaGetErrorName(err), file, line);
}
#endif
