/* monitor.c - mgpu-streams --monitor (book 11.2): a kernel that runs for
 * long tells the host how far it is.  Each device runs every step of its part
 * in one persistent kernel, which meets its neighbours' kernels through
 * counters in peer memory and writes the count of finished steps to its own
 * memory.  Before it, on a second stream, goes the monitor: one thread that
 * copies each new count to mapped host memory.  The host reads that memory
 * while the kernels run and prints the progress.
 *
 * Ending cleanly: every kernel watches a STOP word in the same mapped memory.
 * A worker that fails (MGPU_INJECT_FAULT) sets it, and its neighbours, which
 * would otherwise wait for its rows forever, leave; so do the monitors.  The
 * host sets it too when a launch or a kernel fails, or when no step has
 * finished for WATCHDOG_S seconds, and then waits for the kernels to leave. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "streams.h"

enum { WATCHDOG_S = 30 };

typedef struct monitor_state {
    mgpu_stencil *st;
    int nparts;
    mgpu_stream *watch[MGPU_MAX_DEVICES];      /* the monitors' streams */
    mgpu_counters *counters[MGPU_MAX_DEVICES]; /* each part's, in its device memory */
    mgpu_signal *signal;                       /* mapped: the host's address */
    mgpu_signal *signal_dev;                   /* and the devices' */
} monitor_state;

static mgpu_status state_create(const mgpu_run *run, monitor_state *ms)
{
    const mgpu_options *opt = run->opt;
    memset(ms, 0, sizeof *ms);
    /* The workers write their neighbours' halos themselves: direct. */
    mgpu_stencil_desc desc = mgpu_stencil_desc_of(opt, run->ndevices);
    desc.exchange = MGPU_EXCHANGE_DIRECT;
    MGPU_TRY(mgpu_stencil_create(&ms->st, &desc));
    ms->nparts = run->ndevices;
    for (int p = 0; p < ms->nparts; p++) {
        int dev = mgpu_stencil_slab(ms->st, p)->device;
        void *counters;
        MGPU_TRY(mgpu_stream_create(dev, 0, &ms->watch[p]));
        MGPU_TRY(mgpu_malloc(dev, sizeof(mgpu_counters), &counters));
        ms->counters[p] = counters;
    }
    void *host, *dev;
    MGPU_TRY(mgpu_host_alloc(sizeof(mgpu_signal), MGPU_HOST_MAPPED, &host));
    ms->signal = host;
    MGPU_TRY(mgpu_host_device_pointer(host, &dev));
    ms->signal_dev = dev;
    return MGPU_OK;
}

static void state_destroy(monitor_state *ms)
{
    for (int p = 0; p < ms->nparts; p++) {
        if (ms->watch[p])
            mgpu_stream_synchronize(ms->watch[p]);
        mgpu_stream_destroy(ms->watch[p]);
        mgpu_free(mgpu_stencil_slab(ms->st, p)->device, ms->counters[p]);
    }
    mgpu_host_free(ms->signal);
    mgpu_stencil_destroy(ms->st);
}

/* The step at which MGPU_INJECT_FAULT makes PART fail, or -1. */
static mgpu_status fail_step(int part, long long steps, long long *step)
{
    *step = -1;
    if (!getenv("MGPU_INJECT_FAULT"))
        return MGPU_OK;
    for (long long s = 0; s < steps; s++) {
        mgpu_status status = mgpu_fault_check(part, s);
        if (status == MGPU_ERR_FAULT) {
            *step = s;
            return MGPU_OK;
        }
        MGPU_TRY(status);
    }
    return MGPU_OK;
}

/* PART's worker: its buffers, its neighbours' halo rows and counters. */
static mgpu_status describe(const monitor_state *ms, const mgpu_run *run, int part,
                            mgpu_persistent_desc *d)
{
    const mgpu_slab *s = mgpu_stencil_slab(ms->st, part);
    int above = mgpu_stencil_above(ms->st, part), below = mgpu_stencil_below(ms->st, part);
    *d = (mgpu_persistent_desc){
        .kernel = run->opt->kernel,
        .nx = run->opt->nx,
        .rows = s->row_end - s->row_begin,
        .pitch = mgpu_stencil_pitch(ms->st, part),
        .counters = ms->counters[part],
        .signal = ms->signal_dev,
        .part = part,
        .steps = run->opt->steps,
        .compute = run->compute,
    };
    for (int b = 0; b < 2; b++) {
        d->buf[b] = mgpu_stencil_buffer(ms->st, part, b);
        if (above >= 0)
            d->up[b] = mgpu_stencil_row(ms->st, above, b, MGPU_ROW_HALO_BOTTOM);
        if (below >= 0)
            d->down[b] = mgpu_stencil_row(ms->st, below, b, MGPU_ROW_HALO_TOP);
    }
    if (above >= 0)
        d->up_arrived = &ms->counters[above]->arrived[1];
    if (below >= 0)
        d->down_arrived = &ms->counters[below]->arrived[0];
    return fail_step(part, run->opt->steps, &d->fail_step);
}

static void pause_ms(double ms)
{
    struct timespec t = {.tv_sec = 0, .tv_nsec = (long) (ms * 1e6)};
    nanosleep(&t, NULL);
}

/* The fewest steps any part has finished, as the monitors last said. */
static int least_progress(const monitor_state *ms)
{
    const volatile mgpu_signal *signal = ms->signal;
    int least = signal->progress[0];
    for (int p = 1; p < ms->nparts; p++)
        if (signal->progress[p] < least)
            least = signal->progress[p];
    return least;
}

/* Read the progress in mapped memory while the workers run, printing it
 * (every tenth of the run) when PRINT; *SEEN counts the values the host saw
 * before the end.  Returns once every worker has ended. */
static mgpu_status watch(monitor_state *ms, long long steps, int print, mgpu_progress *progress,
                         int *seen)
{
    volatile mgpu_signal *signal = ms->signal;
    int last = 0;
    long long next = (steps + 9) / 10;
    double changed = mgpu_now();
    *seen = 0;
    for (;;) {
        int all_done = 1;
        for (int p = 0; p < ms->nparts; p++) {
            int done;
            mgpu_status status = mgpu_stream_query(mgpu_stencil_stream(ms->st, p), &done);
            if (status != MGPU_OK) {
                signal->stop = 1;
                return status;
            }
            all_done &= done;
        }
        if (all_done)
            return MGPU_OK;
        int least = least_progress(ms);
        mgpu_progress_step(progress, least);
        if (least != last) {
            (*seen)++;
            last = least;
            changed = mgpu_now();
            if (print && least >= next) {
                fprintf(stderr, "mgpu-streams: monitor: %d of %lld steps done\n", least, steps);
                next = least + (steps + 9) / 10;
            }
        } else if (mgpu_now() - changed > WATCHDOG_S && !signal->stop) {
            signal->stop = 1;
            mgpu_error_set(MGPU_ERR_SYSTEM,
                           "monitor: no step finished for %d s (at step %d of "
                           "%lld); every kernel was stopped",
                           WATCHDOG_S, least, steps);
            return MGPU_ERR_SYSTEM;
        }
        pause_ms(0.5);
    }
}

/* Wait for every stream of the run, keeping the first failure. */
static mgpu_status wait_all(monitor_state *ms, mgpu_status status)
{
    char first[512] = "";
    if (status != MGPU_OK)
        snprintf(first, sizeof first, "%s", mgpu_last_error());
    for (int p = 0; p < ms->nparts; p++) {
        mgpu_status a = mgpu_stream_synchronize(ms->watch[p]);
        mgpu_status b = mgpu_stencil_synchronize(ms->st, p);
        if (status == MGPU_OK)
            status = a != MGPU_OK ? a : b;
    }
    if (first[0])
        mgpu_error_set(status, "%s", first);
    return status;
}

/* One run from the initial field: launch, watch, wait. */
static mgpu_status monitor_run(monitor_state *ms, const mgpu_run *run, int print, double *seconds,
                               int *seen)
{
    volatile mgpu_signal *signal = ms->signal;
    for (int p = 0; p < ms->nparts; p++) {
        int dev = mgpu_stencil_slab(ms->st, p)->device;
        MGPU_TRY(mgpu_stencil_reset(ms->st, p));
        MGPU_TRY(mgpu_memset(dev, ms->counters[p], 0, sizeof(mgpu_counters)));
    }
    /* Every device's reset is over before any worker starts, on any device:
     * its last copy (device to device) may still run when it returns, and a
     * neighbour's worker writes into these buffers and counters at once. */
    for (int p = 0; p < ms->nparts; p++)
        MGPU_TRY(mgpu_device_synchronize(mgpu_stencil_slab(ms->st, p)->device));
    memset((void *) signal, 0, sizeof *signal);
    double start = mgpu_now();
    mgpu_status status = MGPU_OK;
    /* The monitors first, as in the book: each sits on its device before
     * the worker it watches, which leaves it room. */
    for (int p = 0; p < ms->nparts && status == MGPU_OK; p++) {
        status = mgpu_device_set(mgpu_stencil_slab(ms->st, p)->device);
        if (status == MGPU_OK)
            status = mgpu_monitor_launch(ms->counters[p], ms->signal_dev, p, run->opt->steps,
                                         ms->watch[p]);
    }
    for (int p = 0; p < ms->nparts && status == MGPU_OK; p++) {
        mgpu_persistent_desc desc;
        status = describe(ms, run, p, &desc);
        if (status == MGPU_OK)
            status = mgpu_device_set(mgpu_stencil_slab(ms->st, p)->device);
        if (status == MGPU_OK)
            status = mgpu_persistent_launch(&desc, mgpu_stencil_stream(ms->st, p));
    }
    if (status == MGPU_OK)
        status = watch(ms, run->opt->steps, print, run->progress, seen);
    else
        signal->stop = 1; /* the kernels already launched leave */
    status = wait_all(ms, status);
    *seconds = mgpu_now() - start;
    MGPU_TRY(status);
    if (signal->stop) {
        /* Only a worker that fails on purpose stops a run that went well. */
        int part = signal->failed_part - 1;
        if (part < 0 || part >= ms->nparts)
            return mgpu_error_set(MGPU_ERR_SYSTEM, "monitor: the run was stopped");
        return mgpu_error_set(MGPU_ERR_FAULT,
                              "device %d failed at step %lld "
                              "(MGPU_INJECT_FAULT); every kernel stopped",
                              mgpu_stencil_slab(ms->st, part)->device, signal->failed_step);
    }
    if (print)
        fprintf(stderr, "mgpu-streams: monitor: %d of %lld steps done\n", least_progress(ms),
                run->opt->steps);
    return MGPU_OK;
}

static mgpu_status measure(monitor_state *ms, mgpu_run *run)
{
    /* Progress is printed for the runs the record is about. */
    int print = run->record && run->compute, seen = 0;
    for (int r = 0; r < run->warmup + run->repeats; r++) {
        double s;
        mgpu_progress_run(run->progress, r);
        MGPU_TRY(monitor_run(ms, run, print && r >= run->warmup, &s, &seen));
        mgpu_run_keep(run, r, s, -1.0);
    }
    if (run->field)
        MGPU_TRY(mgpu_stencil_gather_all(ms->st, run->opt->steps, run->field));
    if (print) {
        mgpu_record_set_text(run->record, "mode", "monitor");
        /* How many counts the host saw while the kernels ran (last run):
         * more than one, or the monitor only reported the end. */
        mgpu_record_set_number(run->record, "progress_seen", seen);
    }
    return MGPU_OK;
}

mgpu_status streams_monitor(const streams_options *o, mgpu_run *run)
{
    monitor_state ms;
    (void) o;
    if (run->record)
        run->record->exchange = MGPU_EXCHANGE_DIRECT;
    mgpu_status status = state_create(run, &ms);
    if (status == MGPU_OK)
        status = measure(&ms, run);
    state_destroy(&ms);
    return status;
}
