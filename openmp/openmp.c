/* openmp.c - mgpu-openmp: one OpenMP thread per device (book 10.6).
 *
 * Each run is one parallel region with a thread per device: the thread
 * makes its device current and steps its part of the grid, with an omp
 * barrier between every part's send and every part's receive (one a step
 * is enough: doc/design.md section 3, "One barrier a step"); the region's
 * end is where all devices are synchronised, and OpenMP keeps its threads
 * from one region to the next.  A failing thread keeps arriving at the
 * barriers until all have seen the failure (mgpu_failure in
 * mgpu/harness.h).  --cpu-control (book 10.6): one more run, in a parallel
 * sections construct, one section driving the devices through a nested
 * parallel region, the other computing the CPU control field meanwhile.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <omp.h>
#include <stdbool.h>
#include <stdlib.h>

#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/measurement.h"
#include "mgpu/graph.h"
#include "trace.h"

static long long cpu_control;
static long long use_graph;

/* Arrive at the next barrier with STATUS, how the work since the last one
 * went; false when some thread failed, and all leave.  *WAITED gets the
 * seconds spent there. */
static bool arrive(mgpu_failure *failure, mgpu_status status, long long *barrier, double *waited)
{
    if (status != MGPU_OK)
        mgpu_failure_record(failure, status, *barrier);
    double before = mgpu_now();
#pragma omp barrier
    *waited += mgpu_now() - before;
    return !mgpu_failure_before(failure, (*barrier)++);
}

/* What a part's thread carries through a parallel region. */
typedef struct part_thread {
    mgpu_stencil *st;
    const mgpu_run *run;
    int p;
    mgpu_failure *failure;
    long long barrier; /* barriers passed */
    double *waited;    /* seconds at them */
    mgpu_status status;
} part_thread;

/* Step STEP: send, the barrier, receive and compute; false when some
 * thread failed and all leave. */
static bool one_step(part_thread *t, long long step)
{
    mgpu_trace_begin(MGPU_TRACE_STEP, mgpu_stencil_device(t->st, t->p), step);
    if (t->status == MGPU_OK)
        t->status = mgpu_stencil_send(t->st, t->p, step);
    bool go_on = arrive(t->failure, t->status, &t->barrier, t->waited);
    if (go_on)
        t->status = mgpu_stencil_recv(t->st, t->p, step);
    if (go_on && t->status == MGPU_OK && t->run->compute)
        t->status = mgpu_stencil_compute(t->st, t->p, step);
    mgpu_trace_end();
    return go_on;
}

/* With a graph: the first steps, then thread 0 replays it while the others
 * wait at a barrier.  The next step, or -1 when all leave. */
static long long replay(part_thread *t, const mgpu_graph_steps *g)
{
    if (!g->graph)
        return 0;
    for (long long step = 0; step < g->first; step++)
        if (!one_step(t, step))
            return -1;
    if (!arrive(t->failure, t->status, &t->barrier, t->waited))
        return -1;
    if (t->p == 0 && t->status == MGPU_OK)
        t->status = mgpu_graph_steps_replay(g, t->st, t->run);
    return arrive(t->failure, t->status, &t->barrier, t->waited) ? g->end : -1;
}

/* Part P's steps, in its thread.  A failure in one step's compute is
 * reported at the barrier of the next step's send, or after the last step. */
static void steps(mgpu_stencil *st, const mgpu_run *run, int p, mgpu_failure *failure,
                  const mgpu_graph_steps *g, double *waited, double *synced)
{
    mgpu_status entered = mgpu_device_set(mgpu_stencil_device(st, p));
    part_thread t = {
        .st = st, .run = run, .p = p, .failure = failure, .waited = waited, .status = entered};
    /* Thread 0 tells the progress of the run. */
    mgpu_progress *progress = p == 0 ? run->progress : NULL;
    long long step = replay(&t, g);
    if (step < 0)
        return;
    for (; step < run->opt->steps; step++) {
        if (!one_step(&t, step))
            return;
        mgpu_progress_step(progress, step + 1);
    }
    double before = mgpu_now();
    if (t.status == MGPU_OK)
        t.status = mgpu_stencil_synchronize(st, p);
    *synced += mgpu_now() - before;
    if (t.status != MGPU_OK)
        mgpu_failure_record(failure, t.status, t.barrier);
}

/* One run from the initial field: the parts' threads, timed from the
 * region's start to its end.  *WAITED gets the seconds the threads spent at
 * barriers, summed, and *SYNCED those they spent waiting for their devices
 * at the end. */
static mgpu_status run_once(mgpu_stencil *st, const mgpu_run *run, const mgpu_graph_steps *g,
                            double *seconds, double *waited, double *synced)
{
    int n = run->ndevices;
    for (int p = 0; p < n; p++) {
        mgpu_status status = mgpu_stencil_reset(st, p);
        if (status != MGPU_OK)
            return status;
    }
    mgpu_failure failure;
    mgpu_failure_init(&failure);
    double sum = 0.0, sync_sum = 0.0, start = mgpu_now();
#pragma omp parallel num_threads(n) reduction(+ : sum, sync_sum)
    {
        /* Every thread sees the same team size, so all take the same branch
         * and none waits at a barrier the others skip. */
        int got = omp_get_num_threads();
        if (got == n) {
            steps(st, run, omp_get_thread_num(), &failure, g, &sum, &sync_sum);
        } else if (omp_get_thread_num() == 0) {
            mgpu_status status = mgpu_error_set(MGPU_ERR_SYSTEM,
                                                "OpenMP gave %d threads, %d "
                                                "devices need one each (OMP_THREAD_LIMIT?)",
                                                got, n);
            mgpu_failure_record(&failure, status, 0);
        }
    }
    *seconds = mgpu_now() - start;
    *waited = sum;
    *synced = sync_sum;
    return mgpu_failure_status(&failure);
}

/* Book 10.6: one section drives the devices, the other computes the CPU
 * control field.  The share of the CPU's time during which the devices also
 * worked was hidden; the book compares the two results. */
static mgpu_status control_run(mgpu_stencil *st, const mgpu_run *run, const mgpu_graph_steps *g,
                               float *control)
{
    const mgpu_options *opt = run->opt;
    mgpu_failure failure;
    mgpu_failure_init(&failure);
    /* The devices' threads are a parallel region inside a section. */
    int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(2);
    double devices_s = 0.0, cpu_s = 0.0, start = mgpu_now();
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
        {
            double seconds, waited, synced, begin = mgpu_now();
            mgpu_status status = run_once(st, run, g, &seconds, &waited, &synced);
            devices_s = mgpu_now() - begin;
            if (status != MGPU_OK)
                mgpu_failure_record(&failure, status, 0);
        }
#pragma omp section
        {
            double begin = mgpu_now();
            mgpu_status status = mgpu_reference_run(control, opt->kernel, opt->nx, opt->ny,
                                                    opt->steps, opt->seed);
            cpu_s = mgpu_now() - begin;
            if (status != MGPU_OK)
                mgpu_failure_record(&failure, status, 0);
        }
    }
    double both = mgpu_now() - start;
    omp_set_max_active_levels(levels);
    mgpu_status status = mgpu_failure_status(&failure);
    if (status != MGPU_OK)
        return status;
    mgpu_record_cpu_control(run->record, devices_s, cpu_s, both);
    return MGPU_OK;
}

static mgpu_status timed_runs(mgpu_stencil *st, mgpu_run *run, const mgpu_graph_steps *g,
                              float *control)
{
    double waited = 0.0;
    if (g->graph)
        mgpu_graph_steps_record(g, run);
    for (int r = 0; r < run->warmup + run->repeats; r++) {
        double seconds, run_waited, run_synced;
        mgpu_progress_run(run->progress, r);
        mgpu_status status = run_once(st, run, g, &seconds, &run_waited, &run_synced);
        if (status != MGPU_OK)
            return status;
        mgpu_run_keep(run, r, seconds, (run_waited + run_synced) / run->ndevices);
        if (r >= run->warmup)
            waited += run_waited;
    }
    if (run->record && run->compute)
        mgpu_record_set_number(run->record, "barrier_wait_s",
                               waited / run->ndevices / run->repeats);
    if (control) {
        mgpu_progress_begin(run->progress, "with the CPU control", 0, 1, 1);
        mgpu_progress_run(run->progress, 0);
    }
    mgpu_status status = control ? control_run(st, run, g, control) : MGPU_OK;
    if (status != MGPU_OK || !run->field)
        return status;
    status = mgpu_stencil_gather_all(st, run->opt->steps, run->field);
    if (status == MGPU_OK && control) {
        double max_error;
        long long mismatches;
        const mgpu_options *opt = run->opt;
        mgpu_field_compare(run->field, control, opt->nx, opt->ny, 0.0, &max_error, &mismatches);
        mgpu_record_set_number(run->record, "control_max_error", max_error);
    }
    return status;
}

/* --bind: each device's thread on the CPUs nearest its device, in a region
 * of its own before the runs, so that no run's time holds it.  The runs'
 * regions have the same size, and OpenMP gives a thread the same number in
 * each (libgomp does, unless OMP_PROC_BIND reorders them, and then OpenMP's
 * placement is kept anyway).  After the runs every thread gets the
 * process's CPUs back (RELEASE), since the threads serve the program's
 * other regions too (the reference, the host kernels).  The --cpu-control
 * run's nested threads inherit the binding of the section that starts them. */
static void bind_team(mgpu_stencil *st, const mgpu_run *run, bool release)
{
#pragma omp parallel num_threads(run->ndevices)
    {
        int p = omp_get_thread_num();
        if (release)
            mgpu_bind_release();
        else
            mgpu_bind_worker(run->opt->bind, mgpu_stencil_device(st, p), run->ndevices,
                             run->binding ? run->binding->cpus[p] : NULL);
    }
}

static mgpu_status runs(mgpu_stencil *st, mgpu_run *run, const mgpu_graph_steps *g, float *control)
{
    bind_team(st, run, false);
    mgpu_status status = timed_runs(st, run, g, control);
    bind_team(st, run, true);
    return status;
}

static mgpu_status openmp(mgpu_run *run)
{
    const mgpu_options *opt = run->opt;
    mgpu_stencil_desc desc = mgpu_stencil_desc_of(opt, run->ndevices);
    omp_set_dynamic(0); /* exactly one thread per device */
    mgpu_stencil *st;
    mgpu_status status = mgpu_stencil_create(&st, &desc);
    if (status != MGPU_OK)
        return status;
    if (run->record)
        mgpu_record_set_stencil(run->record, st);
    /* The control belongs to the run that is reported, not to the runs of
     * exchanges alone or of one device. */
    float *control = NULL;
    if (cpu_control && run->record && run->compute) {
        size_t bytes = (size_t) opt->nx * (size_t) opt->ny * sizeof(float);
        control = malloc(bytes);
        if (!control)
            status = mgpu_error_set(MGPU_ERR_NOMEM, "--cpu-control: %zu bytes of host memory",
                                    bytes);
    }
    /* --graph: this thread captures every device's steps once, as
     * mgpu-single does (lib/stencil-graph.c says why not each thread its
     * own); thread 0 of each run replays them. */
    mgpu_graph_steps g = {.graph = NULL};
    if (status == MGPU_OK && use_graph)
        status = mgpu_graph_steps_capture(&g, st, run);
    if (status == MGPU_OK)
        status = runs(st, run, &g, control);
    mgpu_graph_destroy(g.graph);
    free(control);
    mgpu_stencil_destroy(st);
    return status;
}

static const mgpu_extra_option extra[] = {
    {.name = "cpu-control",
     .help = "one more run, the CPU control field computed in a concurrent OpenMP "
             "section; reports how much of it the devices' work hid",
     .max = 1,
     .kind = MGPU_EXTRA_FLAG,
     .value = &cpu_control},
    {.name = "graph",
     .help = "every device's steps captured into one CUDA graph once, thread 0 replays "
             "it, many steps a launch",
     .kind = MGPU_EXTRA_FLAG,
     .value = &use_graph},
    {.name = NULL},
};

static const mgpu_program program = {
    .name = "mgpu-openmp",
    .strategy = "openmp",
    .summary = "one OpenMP thread per device, an omp barrier per step",
    .exchanges = MGPU_STENCIL_EXCHANGES,
    .extra = extra,
    .binds_workers = 1,
    .deep_halo = 1,
};

int main(int argc, char **argv)
{
    mgpu_harness *h = mgpu_harness_start(&program, argc, argv); /* options, devices */
    for (mgpu_run *run; (run = mgpu_harness_next(h));)
        mgpu_harness_done(h, openmp(run));
    return mgpu_harness_end(h); /* the ceiling, the verification, the record */
}
