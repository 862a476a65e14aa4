/* pthread.c - mgpu-pthread: one POSIX thread per device (book 10.4).
 *
 * Each worker makes its device current and steps its part of the grid on
 * its own; a pthread_barrier_t per step separates every part's send from
 * every part's receive.  One barrier a step is enough, although the threads
 * only issue work that the devices do later (doc/design.md section 3, "One
 * barrier a step").  --mode=persistent (book 10.5) is persistent.c.
 *
 * A failing worker is never cancelled and never leaves alone: it keeps
 * arriving at the barriers until every worker has seen the failure
 * (mgpu_failure in mgpu/harness.h), so nobody waits forever.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/measurement.h"
#include "mgpu/graph.h"
#include "team.h"
#include "trace.h"

/* Arrive at the next barrier with the worker's status, how its work since
 * the last one went; false when some worker failed, and all leave.  The
 * wait counts towards the barrier time when COUNTED. */
static bool arrive(worker *w, bool counted)
{
    team *t = w->team;
    if (w->status != MGPU_OK)
        mgpu_failure_record(&t->failure, w->status, w->barriers);
    double before = mgpu_now();
    pthread_barrier_wait(&t->barrier);
    if (counted) {
        double waited = mgpu_now() - before;
        w->waited += waited;
        w->run_waited += waited;
    }
    return !mgpu_failure_before(&t->failure, w->barriers++);
}

/* Step STEP of the worker's part: send, the barrier, receive and compute.
 * False when some worker failed and all leave. */
static bool one_step(worker *w, long long step, bool timed)
{
    team *t = w->team;
    mgpu_trace_begin(MGPU_TRACE_STEP, mgpu_stencil_device(t->st, w->part), step);
    if (w->status == MGPU_OK)
        w->status = mgpu_stencil_send(t->st, w->part, step);
    bool go_on = arrive(w, timed);
    if (go_on)
        w->status = mgpu_stencil_recv(t->st, w->part, step);
    if (go_on && w->status == MGPU_OK && t->run->compute)
        w->status = mgpu_stencil_compute(t->st, w->part, step);
    mgpu_trace_end();
    return go_on;
}

/* With a graph, after the first steps worker 0 replays it while the others
 * wait at a barrier: a replay orders itself after every part's work issued
 * before it, and every part's later work after it.  *STEP gets the next step. */
static bool replay(worker *w, long long *step, bool timed)
{
    team *t = w->team;
    *step = 0;
    if (!t->graph.graph)
        return true;
    for (; *step < t->graph.first; ++*step)
        if (!one_step(w, *step, timed))
            return false;
    if (!arrive(w, timed))
        return false;
    if (w->part == 0 && w->status == MGPU_OK)
        w->status = mgpu_graph_steps_replay(&t->graph, t->st, t->run);
    *step = t->graph.end;
    return arrive(w, timed);
}

/* The worker's device done with the run's work; the wait is part of the
 * run's. */
static void synchronize(worker *w)
{
    double before = mgpu_now();
    if (w->status == MGPU_OK)
        w->status = mgpu_stencil_synchronize(w->team->st, w->part);
    w->run_waited += mgpu_now() - before;
}

/* Every run, warm-up and timed: load the initial field, then the steps.
 * Each worker times the run from the barrier that opens the first step to
 * the one that all reach with their devices synchronised.  A failure in one
 * step's compute is reported at the barrier of the next step's send. */
static void *step_worker(void *arg)
{
    worker *w = arg;
    team *t = w->team;
    const mgpu_run *run = t->run;
    int p = w->part;
    if (!team_complete(t))
        return NULL;
    w->status = team_enter(t, p);
    mgpu_progress *progress = p == 0 ? run->progress : NULL; /* worker 0 tells it */
    for (int r = 0; r < run->warmup + run->repeats; r++) {
        bool timed = r >= run->warmup;
        if (w->status == MGPU_OK)
            w->status = mgpu_stencil_reset(t->st, p);
        if (!arrive(w, false))
            return NULL;
        mgpu_progress_run(progress, r);
        double start = mgpu_now();
        w->run_waited = 0.0;
        long long step;
        if (!replay(w, &step, timed))
            return NULL;
        for (; step < run->opt->steps; step++) {
            if (!one_step(w, step, timed))
                return NULL;
            mgpu_progress_step(progress, step + 1);
        }
        synchronize(w);
        if (!arrive(w, timed))
            return NULL;
        mgpu_run_keep_part(run, r, p, mgpu_now() - start, w->run_waited);
    }
    return NULL;
}

static mgpu_status step_mode(team *t)
{
    mgpu_run *run = t->run;
    int err = pthread_barrier_init(&t->barrier, NULL, (unsigned) t->n);
    if (err)
        return team_error("pthread_barrier_init", err);
    mgpu_status status = team_start(t, step_worker);
    if (status == MGPU_OK) {
        team_join(t);
        status = mgpu_failure_status(&t->failure);
    }
    pthread_barrier_destroy(&t->barrier);
    if (status == MGPU_OK && t->graph.graph)
        mgpu_graph_steps_record(&t->graph, run);
    if (status == MGPU_OK && run->record && run->compute) {
        double waited = 0.0;
        for (int p = 0; p < t->n; p++)
            waited += t->workers[p].waited;
        mgpu_record_set_number(run->record, "barrier_wait_s", waited / t->n / run->repeats);
    }
    if (status == MGPU_OK && run->field)
        status = mgpu_stencil_gather_all(t->st, run->opt->steps, run->field);
    return status;
}

/* ------------------------------------- the team, which both modes drive */

/* Create one worker per part.  They wait at the gate until all exist: when
 * one cannot be created, those that were leave at once instead of waiting
 * forever at a barrier for a worker that never comes. */
mgpu_status team_start(team *t, void *(*fn)(void *arg))
{
    int created, err = 0;
    pthread_mutex_lock(&t->gate);
    for (created = 0; created < t->n; created++) {
        worker *w = &t->workers[created];
        w->team = t;
        w->part = created;
        err = pthread_create(&w->thread, NULL, fn, w);
        if (err)
            break;
    }
    t->complete = created == t->n;
    pthread_mutex_unlock(&t->gate);
    if (t->complete)
        return MGPU_OK;
    for (int i = 0; i < created; i++)
        pthread_join(t->workers[i].thread, NULL);
    return mgpu_error_set(MGPU_ERR_SYSTEM, "pthread_create for device %d: %s",
                          mgpu_stencil_device(t->st, created), strerror(err));
}

/* A worker's first act once its team exists: its share of the host's cores
 * for host kernels (counted before it is bound), then its own CPUs near its
 * device (--bind), then its device. */
mgpu_status team_enter(team *t, int p)
{
    mgpu_host_share_cores(t->run->ndevices);
    mgpu_bind_worker(t->run->opt->bind, mgpu_stencil_device(t->st, p), t->run->ndevices,
                     t->run->binding ? t->run->binding->cpus[p] : NULL);
    return mgpu_device_set(mgpu_stencil_device(t->st, p));
}

bool team_complete(team *t)
{
    pthread_mutex_lock(&t->gate);
    bool complete = t->complete;
    pthread_mutex_unlock(&t->gate);
    return complete;
}

void team_join(team *t)
{
    for (int p = 0; p < t->n; p++)
        pthread_join(t->workers[p].thread, NULL);
}

mgpu_status team_error(const char *call, int err)
{
    return mgpu_error_set(MGPU_ERR_SYSTEM, "%s: %s", call, strerror(err));
}

/* ------------------------------------------------------------ the run */

enum mode { MODE_STEP, MODE_PERSISTENT };
static const char *const mode_names[] = {"step", "persistent", NULL};
static long long mode = MODE_STEP;
static long long cpu_control;
static long long use_graph;

static mgpu_status pthreads(mgpu_run *run)
{
    const mgpu_options *opt = run->opt;
    if (cpu_control && mode != MODE_PERSISTENT)
        return mgpu_error_set(MGPU_ERR_USAGE, "--cpu-control: only with --mode=persistent, "
                                              "where the main thread is free between barriers");
    if (use_graph && mode != MODE_STEP)
        return mgpu_error_set(MGPU_ERR_USAGE, "--graph: only with --mode=step, where the "
                                              "workers issue the steps themselves");
    mgpu_stencil_desc desc = mgpu_stencil_desc_of(opt, run->ndevices);
    team *t = calloc(1, sizeof *t);
    if (!t)
        return mgpu_error_set(MGPU_ERR_NOMEM, "the thread team: out of host memory");
    mgpu_status status = mgpu_stencil_create(&t->st, &desc);
    if (status != MGPU_OK) {
        free(t);
        return status;
    }
    t->run = run;
    t->n = run->ndevices;
    /* --graph: the main thread captures every device's steps once, as
     * mgpu-single does (lib/stencil-graph.c says why not the workers);
     * worker 0 replays them. */
    if (use_graph)
        status = mgpu_graph_steps_capture(&t->graph, t->st, run);
    mgpu_failure_init(&t->failure);
    pthread_mutex_init(&t->gate, NULL);
    if (run->record) {
        mgpu_record_set_stencil(run->record, t->st);
        mgpu_record_set_text(run->record, "mode", mode_names[mode]);
    }
    if (status == MGPU_OK)
        status = mode == MODE_STEP ? step_mode(t) : persistent_mode(t, cpu_control);
    mgpu_graph_destroy(t->graph.graph);
    pthread_mutex_destroy(&t->gate);
    mgpu_stencil_destroy(t->st);
    free(t);
    return status;
}

static const mgpu_extra_option extra[] = {
    {.name = "mode",
     .help = "step: each worker steps its device, a barrier per step (book 10.4); "
             "persistent: the main thread steps the workers, two barriers per step (10.5)",
     .choices = mode_names,
     .max = 1,
     .value = &mode},
    {.name = "cpu-control",
     .help = "with --mode=persistent: the main thread computes the CPU control field "
             "between the barriers; reports how much of it the devices' work hid",
     .max = 1,
     .kind = MGPU_EXTRA_FLAG,
     .value = &cpu_control},
    {.name = "graph",
     .help = "with --mode=step: every device's steps captured into one CUDA graph once, "
             "worker 0 replays it, many steps a launch",
     .kind = MGPU_EXTRA_FLAG,
     .value = &use_graph},
    {.name = NULL},
};

static const mgpu_program program = {
    .name = "mgpu-pthread",
    .strategy = "pthread",
    .summary = "one POSIX thread per device, a barrier per step",
    .exchanges = MGPU_STENCIL_EXCHANGES,
    .extra = extra,
    .binds_workers = 1,
    .deep_halo = 1,
};

int main(int argc, char **argv)
{
    mgpu_harness *h = mgpu_harness_start(&program, argc, argv); /* options, devices */
    for (mgpu_run *run; (run = mgpu_harness_next(h));)
        mgpu_harness_done(h, pthreads(run));
    return mgpu_harness_end(h); /* the ceiling, the verification, the record */
}
