/* persistent.c - mgpu-pthread --mode=persistent (book 10.5): workers created
 * once wait for the main thread's commands, two barriers a step: at "start"
 * it releases them, at "finish" it waits for them.  Between the two the
 * main thread is free, and with --cpu-control it computes the CPU control
 * field there.
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
#include "team.h"

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
    mgpu_kernel_rows_host(opt->kernel, c->cur, c->next, opt->nx, (size_t) opt->nx, 1, opt->ny - 1);
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

/* ------------------------------------ the workers and the main thread */

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
    mgpu_status status = team_enter(t, p);
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
static mgpu_status persistent_runs(team *t, control *c)
{
    mgpu_run *run = t->run;
    int err = pthread_barrier_init(&t->start, NULL, (unsigned) t->n + 1);
    if (err)
        return team_error("pthread_barrier_init", err);
    err = pthread_barrier_init(&t->finish, NULL, (unsigned) t->n + 1);
    if (err) {
        pthread_barrier_destroy(&t->start);
        return team_error("pthread_barrier_init", err);
    }
    mgpu_status status = team_start(t, persistent_worker);
    if (status == MGPU_OK) {
        bool ok = true;
        for (int r = 0; ok && r < run->warmup + run->repeats; r++) {
            double seconds;
            ok = persistent_run(t, NULL, r, &seconds);
            /* The wait not told: the main thread's time at "finish" holds
             * the workers' issuing too, so the record leaves issue and wait
             * out. */
            if (ok)
                mgpu_run_keep(run, r, seconds, -1.0);
        }
        double both;
        if (ok && c)
            mgpu_progress_begin(run->progress, "with the CPU control", 0, 1, 1);
        if (ok && c && persistent_run(t, c, 0, &both)) {
            double alone = mgpu_stats_of(run->seconds, run->repeats).median;
            mgpu_record_cpu_control(run->record, alone, c->seconds, both);
        }
        release(t, CMD_QUIT, 0);
        team_join(t);
        status = mgpu_failure_status(&t->failure);
    }
    pthread_barrier_destroy(&t->start);
    pthread_barrier_destroy(&t->finish);
    return status;
}

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

mgpu_status persistent_mode(team *t, bool cpu_control)
{
    mgpu_run *run = t->run;
    /* The control belongs to the run that is reported, not to the runs of
     * exchanges alone or of one device. */
    control c = {0}, *cp = NULL;
    mgpu_status status = MGPU_OK;
    if (cpu_control && run->record && run->compute) {
        status = control_init(&c, run->opt);
        cp = &c;
    }
    if (status == MGPU_OK)
        status = persistent_runs(t, cp);
    if (status == MGPU_OK && run->field) {
        status = mgpu_stencil_gather_all(t->st, run->opt->steps, run->field);
        if (status == MGPU_OK && cp)
            control_compare(cp, run->field, run->record);
    }
    control_free(&c);
    return status;
}
