/* pthread.c - mgpu-pthread: one POSIX thread per device (book 10.4, 10.5).
 *
 * --mode=step (book 10.4): each worker makes its device current and steps
 * its part of the grid on its own; a pthread_barrier_t per step separates
 * every part's send from every part's receive.  One barrier a step is
 * enough, although the threads only issue work that the devices do later
 * (lib/stencil.c):
 *  - a part's stream waits for its neighbours' sends of step t before it
 *    computes step t: cudaMemcpyPeer is ordered with all work on both
 *    devices, the asynchronous modes record an event after the send that
 *    the receiver's stream waits for, and the staged and mapped sends are
 *    complete when send returns;
 *  - the field before step t lives in buffer t % 2, so the send of step t+1
 *    writes the neighbour's halo row that the neighbour's step t-1 read.
 *    The neighbour issued that step before its send of step t, after which
 *    it recorded the event that this part's stream waited for at its
 *    receive of step t, before this send: the write comes after the read.
 *    A staged or mapped edge row, read by the neighbour's stream at its
 *    receive of step t, is written again at step t+2, after the neighbour
 *    has synchronised its stream in its send of step t+1.
 *  - with --halo=K the same holds per exchange, every K steps, and the
 *    barrier of every step stays: the one before an exchange is what makes
 *    a sender's wait for its receiver's passes see them (lib/stencil.c).
 *
 * --mode=persistent (book 10.5): workers created once wait for the main
 * thread's commands, two barriers a step: at "start" it releases them, at
 * "finish" it waits for them.  Between the two the main thread is free, and
 * with --cpu-control it computes the CPU control field there.
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
#include "mgpu/streams.h"
#include "trace.h"

enum mode { MODE_STEP, MODE_PERSISTENT };
static const char *const mode_names[] = {"step", "persistent", NULL};
static long long mode = MODE_STEP;
static long long cpu_control;
static long long use_graph;

static const mgpu_extra_option extra[] = {
    {"mode",
     "step: each worker steps its device, a barrier per step (book 10.4); "
     "persistent: the main thread steps the workers, two barriers per step (10.5)",
     mode_names, 0, 1, 0, &mode, NULL},
    {"cpu-control",
     "with --mode=persistent: the main thread computes the CPU control field "
     "between the barriers; reports how much of it the devices' work hid",
     NULL, 0, 1, 1, &cpu_control, NULL},
    {"graph",
     "with --mode=step: every device's steps captured into one CUDA graph once, "
     "worker 0 replays it, many steps a launch",
     NULL, 0, 0, 1, &use_graph, NULL},
    {NULL, NULL, NULL, 0, 0, 0, NULL, NULL},
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

/* The persistent workers' orders. */
enum command { CMD_RESET, CMD_ADVANCE, CMD_QUIT };

typedef struct team team;

typedef struct worker {
    team *team;
    int part;
    pthread_t thread;
    long long barriers; /* step mode: barriers passed */
    double waited;      /* step mode: seconds at barriers in the timed runs */
    double run_waited;  /* step mode: seconds waiting in this run (barriers,
                           the device at the end) */
} worker;

struct team {
    mgpu_stencil *st;
    mgpu_run *run;
    int n;
    pthread_mutex_t gate; /* held by the main thread while it creates workers */
    bool complete;        /* every worker was created */
    mgpu_failure failure;
    pthread_barrier_t barrier;          /* step mode: the workers */
    pthread_barrier_t start, finish;    /* persistent: the workers and the main thread */
    enum command command;               /* persistent: the order at "start", */
    long long step;                     /* its step, */
    long long commands;                 /* and how many came before it */
    mgpu_graph *graph;                  /* --graph: graph_steps steps after */
    long long graph_first, graph_steps; /* the first, issued plainly */
    worker workers[MGPU_MAX_DEVICES];
};

/* A worker's first act once its team exists: its share of the host's cores
 * for host kernels (counted before it is bound), then its own CPUs near its
 * device (--bind), then its device. */
static mgpu_status worker_start(team *t, int p)
{
    mgpu_host_share_cores(t->run->ndevices);
    mgpu_bind_worker(t->run->opt->bind, mgpu_stencil_device(t->st, p), t->run->ndevices,
                     t->run->binding ? t->run->binding->cpus[p] : NULL);
    return mgpu_device_set(mgpu_stencil_device(t->st, p));
}

static mgpu_status system_error(const char *call, int err)
{
    return mgpu_error_set(MGPU_ERR_SYSTEM, "%s: %s", call, strerror(err));
}

/* ------------------------------------------------------------ the team */

/* Create one worker per part.  They wait at the gate until all exist: when
 * one cannot be created, those that were leave at once instead of waiting
 * forever at a barrier for a worker that never comes. */
static mgpu_status team_start(team *t, void *(*fn)(void *arg))
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

/* A worker's first act: wait for the team to exist; false when it never will. */
static bool team_complete(team *t)
{
    pthread_mutex_lock(&t->gate);
    bool complete = t->complete;
    pthread_mutex_unlock(&t->gate);
    return complete;
}

static void team_join(team *t)
{
    for (int p = 0; p < t->n; p++)
        pthread_join(t->workers[p].thread, NULL);
}

/* ---------------------------------------------------- step mode (10.4) */

/* Arrive at the next barrier with STATUS, how the work since the last one
 * went; false when some worker failed, and all leave.  The wait counts
 * towards the barrier time when COUNTED. */
static bool arrive(worker *w, mgpu_status status, bool counted)
{
    team *t = w->team;
    if (status != MGPU_OK)
        mgpu_failure_record(&t->failure, status, w->barriers);
    double before = mgpu_now();
    pthread_barrier_wait(&t->barrier);
    if (counted) {
        w->waited += mgpu_now() - before;
        w->run_waited += mgpu_now() - before;
    }
    return !mgpu_failure_before(&t->failure, w->barriers++);
}

/* Step STEP of the worker's part: send, the barrier, receive and compute.
 * False when some worker failed and all leave. */
static bool one_step(worker *w, mgpu_status *status, long long step, bool timed)
{
    team *t = w->team;
    mgpu_trace_begin(MGPU_TRACE_STEP, mgpu_stencil_device(t->st, w->part), step);
    if (*status == MGPU_OK)
        *status = mgpu_stencil_send(t->st, w->part, step);
    bool go_on = arrive(w, *status, timed);
    if (go_on)
        *status = mgpu_stencil_recv(t->st, w->part, step);
    if (go_on && *status == MGPU_OK && t->run->compute)
        *status = mgpu_stencil_compute(t->st, w->part, step);
    mgpu_trace_end();
    return go_on;
}

/* With a graph, after the first steps worker 0 replays it while the others
 * wait at a barrier: a replay orders itself after every part's work issued
 * before it, and every part's later work after it.  *STEP gets the next step. */
static bool replay(worker *w, mgpu_status *status, long long *step, bool timed)
{
    team *t = w->team;
    long long steps = t->run->opt->steps, k = t->graph_steps;
    *step = 0;
    if (!t->graph || steps == 0)
        return true;
    for (; *step < t->graph_first; ++*step)
        if (!one_step(w, status, *step, timed))
            return false;
    if (!arrive(w, *status, timed))
        return false;
    for (; *step + k <= steps; *step += k) {
        if (w->part != 0)
            continue;
        /* A replayed kernel checks nothing: its steps are checked here. */
        if (*status == MGPU_OK)
            *status = mgpu_fault_check_steps(t->n, *step, k);
        mgpu_trace_replay_begin(*step, k);
        if (*status == MGPU_OK)
            *status = mgpu_stencil_replay(t->st, t->n, t->graph);
        mgpu_trace_end();
        mgpu_progress_step(t->run->progress, *step + k);
    }
    return arrive(w, *status, timed);
}

/* Every run, warm-up and timed: load the initial field, then the steps.
 * Worker 0 times each run from the barrier that opens the first step to the
 * one that all reach with their device synchronised.  A failure in one
 * step's compute is reported at the barrier of the next step's send. */
static void *step_worker(void *arg)
{
    worker *w = arg;
    team *t = w->team;
    const mgpu_run *run = t->run;
    mgpu_stencil *st = t->st;
    int p = w->part;
    if (!team_complete(t))
        return NULL;
    mgpu_status status = worker_start(t, p);
    for (int r = 0; r < run->warmup + run->repeats; r++) {
        bool timed = r >= run->warmup;
        if (status == MGPU_OK)
            status = mgpu_stencil_reset(st, p);
        /* Worker 0 opens the run's wait, which the others add to only
         * after the barriers below. */
        if (p == 0 && timed)
            run->waited[r - run->warmup] = 0.0;
        w->run_waited = 0.0;
        if (!arrive(w, status, false))
            return NULL;
        /* Worker 0 tells the progress of the run. */
        mgpu_progress *progress = p == 0 ? run->progress : NULL;
        mgpu_progress_run(progress, r);
        double start = mgpu_now();
        long long step;
        if (!replay(w, &status, &step, timed))
            return NULL;
        for (; step < run->opt->steps; step++) {
            if (!one_step(w, &status, step, timed))
                return NULL;
            mgpu_progress_step(progress, step + 1);
        }
        double before = mgpu_now();
        if (status == MGPU_OK)
            status = mgpu_stencil_synchronize(st, p);
        w->run_waited += mgpu_now() - before;
        if (!arrive(w, status, timed))
            return NULL;
        if (p == 0 && timed)
            run->seconds[r - run->warmup] = mgpu_now() - start;
        if (timed) {
            pthread_mutex_lock(&t->gate);
            run->waited[r - run->warmup] += w->run_waited / t->n;
            pthread_mutex_unlock(&t->gate);
        }
    }
    return NULL;
}

static mgpu_status step_mode(team *t)
{
    int err = pthread_barrier_init(&t->barrier, NULL, (unsigned) t->n);
    if (err)
        return system_error("pthread_barrier_init", err);
    mgpu_status status = team_start(t, step_worker);
    if (status == MGPU_OK) {
        team_join(t);
        status = mgpu_failure_status(&t->failure);
    }
    pthread_barrier_destroy(&t->barrier);
    if (status == MGPU_OK && t->run->record && t->graph)
        mgpu_record_set_number(t->run->record, "graph_steps", (double) t->graph_steps);
    if (status == MGPU_OK && t->run->record && t->run->compute) {
        double waited = 0.0;
        for (int p = 0; p < t->n; p++)
            waited += t->workers[p].waited;
        mgpu_record_set_number(t->run->record, "barrier_wait_s", waited / t->n / t->run->repeats);
    }
    return status;
}

/* ------------------------------------------------- the CPU control field */

/* Book 10.5: the whole grid on the host, the C reference advanced one step
 * in each gap that the workers leave the main thread. */
typedef struct control {
    const mgpu_options *opt;
    float *cur, *next;
    double seconds; /* spent computing it */
} control;

static mgpu_status control_init(control *c, const mgpu_options *opt)
{
    size_t bytes = (size_t) opt->nx * (size_t) opt->ny * sizeof(float);
    c->opt = opt;
    c->seconds = 0.0;
    c->cur = malloc(bytes);
    c->next = malloc(bytes);
    if (!c->cur || !c->next)
        return mgpu_error_set(MGPU_ERR_NOMEM, "--cpu-control: 2 x %zu bytes of host memory", bytes);
    mgpu_field_initial_rows(c->cur, (size_t) opt->nx, opt->kernel, opt->nx, opt->ny, 0, opt->ny,
                            opt->seed);
    memcpy(c->next, c->cur, bytes); /* the boundary, which no step writes */
    return MGPU_OK;
}

static void control_step(control *c)
{
    const mgpu_options *opt = c->opt;
    double start = mgpu_now();
    mgpu_field_fill_halo_rows(c->cur, opt->kernel, opt->nx, opt->ny);
    mgpu_stencil_rows_host(opt->kernel, c->cur, c->next, opt->nx, (size_t) opt->nx, 1, opt->ny - 1);
    float *swap = c->cur;
    c->cur = c->next;
    c->next = swap;
    c->seconds += mgpu_now() - start;
}

static void control_free(control *c)
{
    free(c->cur);
    free(c->next);
}

/* ---------------------------------------------- persistent mode (10.5) */

/* Command K of a run is the second half of step K-1 and the first half of
 * step K: take K-1's halos and compute, then send K's edges.  The finish
 * and start barriers between two commands separate every part's send from
 * every part's receive, so a step costs the book's two barriers. */
static mgpu_status advance(team *t, int p, long long k)
{
    mgpu_status status = MGPU_OK;
    if (k > 0) {
        status = mgpu_stencil_recv(t->st, p, k - 1);
        if (status == MGPU_OK && t->run->compute)
            status = mgpu_stencil_compute(t->st, p, k - 1);
    }
    if (status != MGPU_OK)
        return status;
    if (k < t->run->opt->steps)
        return mgpu_stencil_send(t->st, p, k);
    return mgpu_stencil_synchronize(t->st, p);
}

static void *persistent_worker(void *arg)
{
    worker *w = arg;
    team *t = w->team;
    int p = w->part;
    if (!team_complete(t))
        return NULL;
    mgpu_status status = worker_start(t, p);
    for (;;) {
        pthread_barrier_wait(&t->start);
        if (t->command == CMD_QUIT)
            return NULL;
        if (status == MGPU_OK)
            status = t->command == CMD_RESET ? mgpu_stencil_reset(t->st, p)
                                             : advance(t, p, t->step);
        if (status != MGPU_OK)
            mgpu_failure_record(&t->failure, status, t->commands);
        pthread_barrier_wait(&t->finish);
    }
}

/* The main thread's side: release the workers with an order... */
static void release(team *t, enum command command, long long step)
{
    t->command = command;
    t->step = step;
    pthread_barrier_wait(&t->start);
}

/* ...and, after its own work, wait for them; false when one failed. */
static bool collect(team *t)
{
    pthread_barrier_wait(&t->finish);
    return !mgpu_failure_before(&t->failure, t->commands++);
}

/* One run, run R of the phase: the initial field, then steps+1 commands,
 * timed from the first to the devices synchronised; the main thread
 * advances the CPU control C, when there is one, while the devices work. */
static bool persistent_run(team *t, control *c, int r, double *seconds)
{
    long long steps = t->run->opt->steps;
    release(t, CMD_RESET, 0);
    if (!collect(t))
        return false;
    mgpu_progress_run(t->run->progress, r);
    double start = mgpu_now();
    for (long long k = 0; k <= steps; k++) {
        release(t, CMD_ADVANCE, k);
        if (c && k < steps)
            control_step(c);
        if (!collect(t))
            return false;
        mgpu_progress_step(t->run->progress, k); /* command K ends step K-1 */
    }
    *seconds = mgpu_now() - start;
    return true;
}

/* The warm-up and timed runs, then with C one more run that computes the
 * control field meanwhile.  Its cost is set against the timed runs': the
 * share of the CPU's time that did not make the run longer was hidden. */
static mgpu_status persistent_mode(team *t, control *c)
{
    mgpu_run *run = t->run;
    int err = pthread_barrier_init(&t->start, NULL, (unsigned) t->n + 1);
    if (err)
        return system_error("pthread_barrier_init", err);
    err = pthread_barrier_init(&t->finish, NULL, (unsigned) t->n + 1);
    if (err) {
        pthread_barrier_destroy(&t->start);
        return system_error("pthread_barrier_init", err);
    }
    mgpu_status status = team_start(t, persistent_worker);
    if (status == MGPU_OK) {
        bool ok = true;
        for (int r = 0; ok && r < run->warmup + run->repeats; r++) {
            double seconds;
            ok = persistent_run(t, NULL, r, &seconds);
            /* Not run->waited: the main thread's time at "finish" holds the
             * workers' issuing too, so the record leaves issue and wait out. */
            if (ok && r >= run->warmup)
                run->seconds[r - run->warmup] = seconds;
        }
        double both;
        if (ok && c)
            mgpu_progress_begin(run->progress, "with the CPU control", 0, 1, 1);
        if (ok && c && persistent_run(t, c, 0, &both)) {
            double alone = mgpu_stats_of(run->seconds, run->repeats).median;
            double hidden = c->seconds > 0.0 ? (alone + c->seconds - both) / c->seconds : 1.0;
            mgpu_record_set_number(run->record, "cpu_control_s", c->seconds);
            mgpu_record_set_number(run->record, "concurrent_s", both);
            mgpu_record_set_number(run->record, "cpu_control_hidden",
                                   hidden < 0.0   ? 0.0
                                   : hidden > 1.0 ? 1.0
                                                  : hidden);
        }
        release(t, CMD_QUIT, 0);
        team_join(t);
        status = mgpu_failure_status(&t->failure);
    }
    pthread_barrier_destroy(&t->start);
    pthread_barrier_destroy(&t->finish);
    return status;
}

/* ------------------------------------------------------------ the run */

/* The book compares each device's result with the CPU control. */
static void control_compare(const control *c, const float *field, mgpu_record *record)
{
    const mgpu_options *opt = c->opt;
    double max_error;
    long long mismatches;
    mgpu_field_fill_halo_rows(c->cur, opt->kernel, opt->nx, opt->ny);
    mgpu_field_compare(field, c->cur, opt->nx, opt->ny, 0.0, &max_error, &mismatches);
    mgpu_record_set_number(record, "control_max_error", max_error);
}

static mgpu_status pthreads(void *ctx, mgpu_run *run)
{
    (void) ctx;
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
    if (use_graph && (status = mgpu_stencil_graph_check(t->st, "--graph")) == MGPU_OK)
        t->graph_steps = mgpu_stencil_graph_steps(t->st, opt->steps),
        t->graph_first = mgpu_stencil_graph_first(t->st);
    for (int p = 0; p < t->n && status == MGPU_OK && t->graph_steps > 0; p++)
        status = mgpu_stencil_reset(t->st, p);
    if (status == MGPU_OK && t->graph_steps > 0)
        status = mgpu_stencil_capture_steps(t->st, t->n, t->graph_steps, run->compute, &t->graph);
    mgpu_failure_init(&t->failure);
    pthread_mutex_init(&t->gate, NULL);
    if (run->record) {
        run->record->exchange = mgpu_stencil_exchange_mode(t->st);
        mgpu_record_set_text(run->record, "mode", mode_names[mode]);
    }

    /* The control belongs to the run that is reported, not to the runs of
     * exchanges alone or of one device. */
    control c = {0}, *cp = NULL;
    if (cpu_control && run->record && run->compute) {
        status = control_init(&c, opt);
        cp = &c;
    }
    if (status == MGPU_OK)
        status = mode == MODE_STEP ? step_mode(t) : persistent_mode(t, cp);
    if (status == MGPU_OK && run->field) {
        status = mgpu_stencil_gather_all(t->st, opt->steps, run->field);
        if (status == MGPU_OK && cp)
            control_compare(cp, run->field, run->record);
    }
    control_free(&c);
    mgpu_graph_destroy(t->graph);
    pthread_mutex_destroy(&t->gate);
    mgpu_stencil_destroy(t->st);
    free(t);
    return status;
}

int main(int argc, char **argv) { return mgpu_main(&program, argc, argv, pthreads, NULL); }
