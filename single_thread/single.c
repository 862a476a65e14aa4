/* single.c - mgpu-single: one host thread drives every device (book 10.1).
 *
 * The thread switches the current device, by the runtime API's
 * cudaSetDevice or by pushing the device's context through the driver API,
 * and issues that device's work.  Kernel launches and the asynchronous
 * copies return at once, so while the thread moves on to the next device
 * the previous one is already computing: the devices work at the same
 * time, and a step costs about as long as the slowest device (table 10.1).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mgpu.h"

enum context_kind { CONTEXT_RUNTIME, CONTEXT_DRIVER };
static const char *const context_names[] = {"runtime", "driver", NULL};
static long long context = CONTEXT_RUNTIME;

static const mgpu_extra_option extra[] = {
    {"context", "how the thread switches devices: runtime (cudaSetDevice) or driver "
                "(cuCtxPushCurrent/cuCtxPopCurrent)",
     context_names, 0, 1, 0, &context},
    {NULL, NULL, NULL, 0, 0, 0, NULL},
};

static const mgpu_program program = {
    .name = "mgpu-single",
    .strategy = "single-thread",
    .summary = "one host thread drives every device by switching the current context",
    .exchanges = MGPU_EXCHANGE_IN_PROCESS,
    .extra = extra,
};

/* Make DEVICE current for the work that follows. */
static mgpu_status enter(int device)
{
    return context == CONTEXT_DRIVER ? mgpu_context_push(device) : mgpu_device_set(device);
}

static mgpu_status leave(void)
{
    return context == CONTEXT_DRIVER ? mgpu_context_pop() : MGPU_OK;
}

static int device_of(const mgpu_stencil *st, int part)
{
    return mgpu_stencil_slab(st, part)->device;
}

/* STEPS steps on N devices.  Each step is two passes over the devices: every
 * device sends its edge rows to its neighbours, then every device takes its
 * halos and launches its kernel.  Nothing here waits for a device; the host
 * waits once, at the end. */
static mgpu_status run_steps(mgpu_stencil *st, int n, long long steps, int compute,
                             double *waited)
{
    for (long long step = 0; step < steps; step++) {
        for (int p = 0; p < n; p++) {
            MGPU_TRY(enter(device_of(st, p)));
            MGPU_TRY(mgpu_stencil_send(st, p, step));
            MGPU_TRY(leave());
        }
        for (int p = 0; p < n; p++) {
            MGPU_TRY(enter(device_of(st, p)));
            MGPU_TRY(mgpu_stencil_recv(st, p, step));
            if (compute)
                MGPU_TRY(mgpu_stencil_compute(st, p, step));
            MGPU_TRY(leave());
        }
    }
    double before = mgpu_now();
    for (int p = 0; p < n; p++) {
        MGPU_TRY(enter(device_of(st, p)));
        MGPU_TRY(mgpu_stencil_synchronize(st, p));
        MGPU_TRY(leave());
    }
    *waited = mgpu_now() - before;
    return MGPU_OK;
}

static mgpu_status run_timed(mgpu_stencil *st, mgpu_run *run)
{
    int n = run->ndevices;
    for (int r = 0; r < run->warmup + run->repeats; r++) {
        for (int p = 0; p < n; p++)
            MGPU_TRY(mgpu_stencil_reset(st, p));
        double start = mgpu_now(), waited;
        MGPU_TRY(run_steps(st, n, run->opt->steps, run->compute, &waited));
        if (r >= run->warmup) {
            run->seconds[r - run->warmup] = mgpu_now() - start;
            run->waited[r - run->warmup] = waited;
        }
    }
    if (!run->field)
        return MGPU_OK;
    for (int p = 0; p < n; p++)
        MGPU_TRY(mgpu_stencil_gather(st, p, run->opt->steps, run->field));
    mgpu_field_fill_halo_rows(run->field, run->opt->kernel, run->opt->nx, run->opt->ny);
    return MGPU_OK;
}

static mgpu_status single_thread(void *ctx, mgpu_run *run)
{
    (void) ctx;
    const mgpu_options *opt = run->opt;
    mgpu_stencil_desc desc = {
        .nx = opt->nx, .ny = opt->ny, .kernel = opt->kernel, .exchange = opt->exchange,
        .seed = opt->seed, .nparts = run->ndevices,
    };
    mgpu_stencil *st;
    mgpu_status status = mgpu_stencil_create(&st, &desc);
    if (status != MGPU_OK)
        return status;
    if (run->record) {
        run->record->exchange = mgpu_stencil_exchange_mode(st);
        mgpu_record_set_text(run->record, "context", context_names[context]);
    }
    status = run_timed(st, run);
    mgpu_stencil_destroy(st);
    return status;
}

int main(int argc, char **argv)
{
    return mgpu_main(&program, argc, argv, single_thread, NULL);
}
