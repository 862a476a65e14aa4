/* step-time.c - the device time of one step: the kernel of the largest part
 * alone, launched back to back on one device and timed with events.  It is
 * what a step would cost if issuing it and ordering the devices cost
 * nothing, the record's device_us_per_step; beside the host's time to issue
 * a step and its time waiting, it says where a step's time goes.  With
 * --time-block=T the kernel is a pass of T steps over the slab and T halo
 * rows a side, and a step costs a T-th of it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mgpu-private.h"

/* Launches are batched until a batch takes this long, so that the events'
 * resolution and a launch's latency vanish in it, or the batch is this big. */
#define BATCH_SECONDS 2e-3
#define BATCH_MAX 1024
#define BATCH_SAMPLES 3

/* N steps back to back from IN to OUT (and back), timed on STREAM. */
/* The steps of one pass. */
static int pass_steps(const mgpu_options *opt)
{
    return mgpu_time_block_resolve(opt->time_block, opt->halo);
}

static mgpu_status time_batch(const mgpu_options *opt, float *a, float *b, size_t pitch,
                              long long rows, int n, mgpu_stream *stream, mgpu_event *start,
                              mgpu_event *stop, double *seconds)
{
    const int t = pass_steps(opt);
    MGPU_TRY(mgpu_event_record(start, stream));
    for (int k = 0; k < n; k++)
        MGPU_TRY(mgpu_kernel_rows_blocked(opt->kernel, k % 2 ? b : a, k % 2 ? a : b, opt->nx, pitch,
                                          t, rows + t, t, 0, stream));
    MGPU_TRY(mgpu_event_record(stop, stream));
    MGPU_TRY(mgpu_event_synchronize(stop));
    return mgpu_event_elapsed(start, stop, seconds);
}

static mgpu_status measure(const mgpu_options *opt, float *a, float *b, size_t pitch,
                           long long rows, mgpu_stream *stream, mgpu_event *start, mgpu_event *stop,
                           double *seconds)
{
    double t;
    int n = 1;
    MGPU_TRY(time_batch(opt, a, b, pitch, rows, 1, stream, start, stop, &t)); /* warm-up */
    for (;;) {
        MGPU_TRY(time_batch(opt, a, b, pitch, rows, n, stream, start, stop, &t));
        if (t >= BATCH_SECONDS || n >= BATCH_MAX)
            break;
        n *= 2;
    }
    const double steps = (double) n * pass_steps(opt);
    double samples[BATCH_SAMPLES] = {t / steps};
    for (int s = 1; s < BATCH_SAMPLES; s++) {
        MGPU_TRY(time_batch(opt, a, b, pitch, rows, n, stream, start, stop, &t));
        samples[s] = t / steps;
    }
    *seconds = mgpu_stats_of(samples, BATCH_SAMPLES).median;
    return MGPU_OK;
}

mgpu_status mgpu_step_device_time(const mgpu_options *opt, int ndevices, double *seconds)
{
    *seconds = -1.0; /* not measured */
    mgpu_slab slabs[MGPU_MAX_DEVICES];
    MGPU_TRY(mgpu_decompose(opt->ny, ndevices, slabs));
    /* The first slab is the largest (mgpu_decompose gives the extra rows to
     * the first ones); its rows and halos, with the library's row pitch. */
    long long rows = slabs[0].row_end - slabs[0].row_begin;
    size_t pitch = ((size_t) opt->nx + 31) / 32 * 32, cells, bytes;
    MGPU_TRY(mgpu_mul_size(pitch, (size_t) (rows + 2 * pass_steps(opt)), &cells));
    MGPU_TRY(mgpu_mul_size(cells, sizeof(float), &bytes));
    /* A slab that does not fit (mgpu-streams --pipeline streams a field no
     * device holds) leaves the time not measured rather than failing a run
     * that succeeded: what is free, where it is known, must hold it twice
     * over, and an allocation that fails all the same is no error either. */
    mgpu_device_info info;
    MGPU_TRY(mgpu_device_info_get(0, &info));
    if (info.free_bytes > 0 && bytes > info.free_bytes / 4)
        return MGPU_OK;
    void *a = NULL, *b = NULL;
    mgpu_stream *stream = NULL;
    mgpu_event *start = NULL, *stop = NULL;
    mgpu_status status = mgpu_device_set(0);
    if (status == MGPU_OK)
        status = mgpu_malloc(0, bytes, &a);
    if (status == MGPU_OK)
        status = mgpu_malloc(0, bytes, &b);
    if (status == MGPU_ERR_NOMEM) {
        mgpu_clear_error();
        mgpu_free(0, a);
        return MGPU_OK;
    }
    /* Not zeros (they can run faster than real data): 0x3f3f3f3f is 0.747f. */
    if (status == MGPU_OK)
        status = mgpu_memset(0, a, 0x3f, bytes);
    if (status == MGPU_OK)
        status = mgpu_memset(0, b, 0x3f, bytes);
    if (status == MGPU_OK)
        status = mgpu_stream_create(0, 0, &stream);
    if (status == MGPU_OK)
        status = mgpu_event_create(0, MGPU_EVENT_TIMING, &start);
    if (status == MGPU_OK)
        status = mgpu_event_create(0, MGPU_EVENT_TIMING, &stop);
    if (status == MGPU_OK)
        status = measure(opt, a, b, pitch, rows, stream, start, stop, seconds);
    mgpu_event_destroy(stop);
    mgpu_event_destroy(start);
    mgpu_stream_destroy(stream);
    mgpu_free(0, b);
    mgpu_free(0, a);
    return status;
}
