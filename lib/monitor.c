/* monitor.c - the host's side of kernels that run for long (book 11.2): launching
 * the persistent stencil worker and its monitor. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>

#include "monitor-cuda.h"

/* Both kernels exist only on GPUs: the host backend runs a kernel to its end
 * before the next call, so there is nothing running to watch. */
static mgpu_status host_has_none(const char *what)
{
    return mgpu_fail(MGPU_ERR_UNSUPPORTED,
                     "%s needs the CUDA backend: the %s backend runs "
                     "each kernel to its end before going on",
                     what, mgpu_backend_name(mgpu_backend_active()));
}

mgpu_status mgpu_persistent_launch(const mgpu_persistent_desc *desc, mgpu_stream *stream)
{
    /* The counters are ints: steps must fit. */
    if (desc->nx < 3 || desc->rows < 1 || desc->steps < 1 || desc->steps > INT_MAX ||
        !desc->counters || !desc->signal)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "persistent kernel: %lld x %lld rows, %lld steps "
                         "(at most %d), counters and signal needed",
                         desc->nx, desc->rows, desc->steps, INT_MAX);
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(mgpu_cuda_persistent_launch(desc, mgpu_stream_cuda(stream)),
                  mgpu_stream_device(stream));
        return MGPU_OK;
    }
#endif
    (void) stream;
    return host_has_none("the persistent stencil kernel");
}

mgpu_status mgpu_monitor_launch(mgpu_counters *counters, mgpu_signal *signal, int part,
                                long long steps, mgpu_stream *stream)
{
    if (part < 0 || part >= MGPU_MAX_DEVICES)
        return mgpu_fail(MGPU_ERR_USAGE, "monitor: part %d is out of range 0..%d", part,
                         MGPU_MAX_DEVICES - 1);
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(mgpu_cuda_monitor_launch(counters, signal, part, steps, mgpu_stream_cuda(stream)),
                  mgpu_stream_device(stream));
        return MGPU_OK;
    }
#endif
    (void) counters;
    (void) signal;
    (void) steps;
    (void) stream;
    return host_has_none("the monitor kernel");
}
