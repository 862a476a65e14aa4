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
#include "mgpu/harness.h"
#include "mgpu/measurement.h"
#include "mgpu/graph.h"
#include "trace.h"

enum context_kind { CONTEXT_RUNTIME, CONTEXT_DRIVER };
static const char *const context_names[] = {"runtime", "driver", NULL};
static long long context = CONTEXT_RUNTIME;
static long long use_graph;

/* Make DEVICE current for the work that follows. */
static mgpu_status enter(int device)
{
    return context == CONTEXT_DRIVER ? mgpu_context_push(device) : mgpu_device_set(device);
}

static mgpu_status leave(void) { return context == CONTEXT_DRIVER ? mgpu_context_pop() : MGPU_OK; }

static mgpu_status send_all(mgpu_stencil *st, int n, long long step)
{
    for (int p = 0; p < n; p++) {
        MGPU_TRY(enter(mgpu_stencil_device(st, p)));
        MGPU_TRY(mgpu_stencil_send(st, p, step));
        MGPU_TRY(leave());
    }
    return MGPU_OK;
}

/* One step on N devices, two passes over them: every device sends its edge
 * rows to its neighbours, then every device takes its halos and launches its
 * kernel.  Nothing here waits for a device.  The sends are bracketed: in
 * mode nccl one thread issues every device's transfers, as one group. */
static mgpu_status issue_step(mgpu_stencil *st, int n, long long step, int compute)
{
    MGPU_TRY(mgpu_stencil_send_begin(st));
    mgpu_status sent = send_all(st, n, step);
    mgpu_status ended = mgpu_stencil_send_end(st);
    MGPU_TRY(sent);
    MGPU_TRY(ended);
    for (int p = 0; p < n; p++) {
        MGPU_TRY(enter(mgpu_stencil_device(st, p)));
        MGPU_TRY(mgpu_stencil_recv(st, p, step));
        if (compute)
            MGPU_TRY(mgpu_stencil_compute(st, p, step));
        MGPU_TRY(leave());
    }
    return MGPU_OK;
}

static mgpu_status one_step(mgpu_stencil *st, int n, long long step, int compute)
{
    mgpu_trace_begin(MGPU_TRACE_STEP, MGPU_TRACE_ALL, step);
    mgpu_status status = issue_step(st, n, step, compute);
    mgpu_trace_end();
    return status;
}

/* STEPS steps on N devices, the replays of G where there is one; the host
 * waits once, at the end, and *WAITED gets how long. */
static mgpu_status run_steps(mgpu_stencil *st, const mgpu_run *run, const mgpu_graph_steps *g,
                             double *waited)
{
    int n = run->ndevices, compute = run->compute;
    long long step = 0, steps = run->opt->steps;
    if (g->graph) {
        for (; step < g->first; step++)
            MGPU_TRY(one_step(st, n, step, compute));
        MGPU_TRY(mgpu_graph_steps_replay(g, st, run));
        step = g->end;
    }
    for (; step < steps; step++) {
        MGPU_TRY(one_step(st, n, step, compute));
        mgpu_progress_step(run->progress, step + 1);
    }
    double before = mgpu_now();
    for (int p = 0; p < n; p++) {
        MGPU_TRY(enter(mgpu_stencil_device(st, p)));
        MGPU_TRY(mgpu_stencil_synchronize(st, p));
        MGPU_TRY(leave());
    }
    *waited = mgpu_now() - before;
    return MGPU_OK;
}

static mgpu_status run_timed(mgpu_stencil *st, mgpu_run *run, const mgpu_graph_steps *g)
{
    int n = run->ndevices;
    for (int r = 0; r < run->warmup + run->repeats; r++) {
        for (int p = 0; p < n; p++)
            MGPU_TRY(mgpu_stencil_reset(st, p));
        mgpu_progress_run(run->progress, r);
        double start = mgpu_now(), waited;
        MGPU_TRY(run_steps(st, run, g, &waited));
        mgpu_run_keep(run, r, mgpu_now() - start, waited);
    }
    return run->field ? mgpu_stencil_gather_all(st, run->opt->steps, run->field) : MGPU_OK;
}

static mgpu_status single_thread(mgpu_run *run)
{
    const mgpu_options *opt = run->opt;
    mgpu_stencil_desc desc = mgpu_stencil_desc_of(opt, run->ndevices);
    mgpu_stencil *st;
    mgpu_status status = mgpu_stencil_create(&st, &desc);
    if (status != MGPU_OK)
        return status;
    if (run->record) {
        mgpu_record_set_stencil(run->record, st);
        mgpu_record_set_text(run->record, "context", context_names[context]);
    }
    mgpu_graph_steps g = {.graph = NULL};
    if (use_graph && context == CONTEXT_DRIVER)
        status = mgpu_error_set(MGPU_ERR_USAGE, "--graph: the capture and its replays switch "
                                                "devices with cudaSetDevice; not with "
                                                "--context=driver (accepted: --context=runtime)");
    else if (use_graph)
        status = mgpu_graph_steps_capture(&g, st, run);
    if (status == MGPU_OK)
        status = run_timed(st, run, &g);
    if (status == MGPU_OK && use_graph)
        mgpu_graph_steps_record(&g, run); /* 0 when no replay fits */
    mgpu_graph_destroy(g.graph);
    mgpu_stencil_destroy(st);
    return status;
}

static const mgpu_extra_option extra[] = {
    {.name = "context",
     .help = "how the thread switches devices: runtime (cudaSetDevice) or driver "
             "(cuCtxPushCurrent/cuCtxPopCurrent)",
     .choices = context_names,
     .max = 1,
     .value = &context},
    {.name = "graph",
     .help = "capture the steps of every device into a CUDA graph once, then replay it, "
             "many steps a launch",
     .kind = MGPU_EXTRA_FLAG,
     .value = &use_graph},
    {.name = NULL},
};

static const mgpu_program program = {
    .name = "mgpu-single",
    .strategy = "single-thread",
    .summary = "one host thread drives every device by switching the current context",
    .exchanges = MGPU_STENCIL_EXCHANGES,
    .extra = extra,
    .deep_halo = 1,
};

int main(int argc, char **argv)
{
    mgpu_harness *h = mgpu_harness_start(&program, argc, argv); /* options, devices */
    for (mgpu_run *run; (run = mgpu_harness_next(h));)
        mgpu_harness_done(h, single_thread(run));
    return mgpu_harness_end(h); /* the ceiling, the verification, the record */
}
