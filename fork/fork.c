/* fork.c - mgpu-fork: one worker process per device (book 10.2).
 *
 * The parent forks a worker for each device and waits for them.  Each worker
 * drives its device as a program of its own would: it makes its own CUDA
 * context (one made before fork is not inherited, and the CUDA runtime is not
 * fork-safe, so the parent makes none before forking), holds its own slab of
 * the grid and steps it.  Processes share no memory but what the parent
 * mapped MAP_SHARED before forking: the step barrier, the halo slots, the IPC
 * handles, the NCCL id, the timings, the failure reports and the result.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/measurement.h"
#include "mgpu/processes.h"
#include "trace.h"

/* -------------------------------------------- what the processes share */

typedef struct control {
    pthread_barrier_t barrier;           /* process-shared, one party per worker */
    mgpu_exchange mode;                  /* the workers' exchange, auto resolved */
    mgpu_failure failure;                /* the first worker's to fail */
    mgpu_ipc_part ipc[MGPU_MAX_DEVICES]; /* ipc: what each part publishes */
    mgpu_nccl_id nccl_id;                /* nccl: the workers' communicator */
    mgpu_binding binding;                /* the CPUs each worker got */
} control;

/* What the parent maps MAP_SHARED before it forks (shared_create): the
 * control block, the staged halo slots, the result. */
typedef struct shared {
    control *control;
    size_t control_bytes;
    float *slots; /* staged: [parity][part][first, last block][block] */
    size_t slot_bytes;
    float *result; /* the final field (nx * ny), when the driver asks for it */
    size_t result_bytes;
} shared;

/* ---------------------------------------------------------- a worker */

typedef struct worker {
    const mgpu_run *run;
    shared *sh;
    int part, nparts;
    mgpu_exchange mode;
    mgpu_stencil *st;
    bool registered;    /* staged: the slots are pinned here */
    double waited;      /* seconds at barriers and for the device */
    mgpu_ipc_halo *ipc; /* ipc: the neighbours' buffers and signals, mapped here */
} worker;

/* The process-shared barrier in the shared mapping, one party per worker;
 * the time a worker spends there is time it waited. */
static mgpu_status barrier(void *ctx)
{
    worker *w = ctx;
    double before = mgpu_now();
    int rc = pthread_barrier_wait(&w->sh->control->barrier);
    w->waited += mgpu_now() - before;
    if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD)
        return mgpu_error_set(MGPU_ERR_SYSTEM, "pthread_barrier_wait: %s", strerror(rc));
    return MGPU_OK;
}

/* The worker's device done with the run's work; the wait is part of the
 * run's. */
static mgpu_status synchronize(worker *w)
{
    double before = mgpu_now();
    mgpu_status status = mgpu_stencil_synchronize(w->st, w->part);
    w->waited += mgpu_now() - before;
    return status;
}

static mgpu_stream *stream_of(const worker *w) { return mgpu_stencil_stream(w->st, w->part); }

static size_t block_bytes(const worker *w) { return mgpu_stencil_block_bytes(w->st); }

/* staged: part P's FIRST or LAST block of the field before exchange step
 * STEP, in the shared slots.  Before the barrier of an exchange each worker
 * copies its edge blocks into its slots of that exchange's parity and waits
 * for the copy; after it, each copies its neighbours' slots into its halos.
 * The slots are double buffered by parity because a fast worker, already
 * publishing the next exchange, must not overwrite blocks that a slow
 * neighbour is still copying for this one.  It cannot publish into this
 * parity again before the exchange after next, past the barrier of the next,
 * which the slow neighbour reaches only once its copies of this one are done
 * (publishing waits for its stream, which holds them).  The field before an
 * exchange step is in the buffer mgpu_stencil_buffer_index says, the same in
 * every part. */
static float *slot(const worker *w, long long step, int p, mgpu_row edge)
{
    size_t index =
        ((size_t) mgpu_stencil_exchange_parity(w->st, step) * (size_t) w->nparts + (size_t) p) * 2 +
        (edge == MGPU_ROW_LAST);
    return w->sh->slots + index * (block_bytes(w) / sizeof(float));
}

/* staged: this worker's edge blocks into its slots.  The neighbours read
 * them after the barrier, so the copies must be complete before it. */
static mgpu_status publish_edges(worker *w, long long step)
{
    const mgpu_row edges[2] = {MGPU_ROW_FIRST, MGPU_ROW_LAST};
    for (int k = 0; k < 2; k++)
        MGPU_TRY(mgpu_memcpy_async(slot(w, step, w->part, edges[k]),
                                   mgpu_stencil_block(w->st, w->part, step, edges[k]),
                                   block_bytes(w), stream_of(w)));
    return mgpu_stream_synchronize(stream_of(w));
}

/* staged: where neighbour N left its edge block EDGE of the field before
 * STEP: its slot (mgpu_edge_fn). */
static const float *slot_edge(void *ctx, long long step, int n, mgpu_row edge)
{
    return slot(ctx, step, n, edge);
}

/* The exchange at STEP (--exchange), K rows at a time with --halo=K:
 *   staged  each worker copies its edge rows into pinned shared host memory;
 *           after the process-shared barrier its neighbours copy them into
 *           their halos;
 *   ipc     CUDA IPC: its kernels stored one-row halos straight into the
 *           neighbours' mapped buffers (deep halos are copied here), device
 *           to device, ordered by signals on the devices (lib/ipc-halo.c);
 *   nccl    one group of NCCL transfers on its stream, matched by NCCL with
 *           its neighbours' (lib/exchange.c).
 * Only staged meets the other workers. */
static mgpu_status exchange(worker *w, long long step)
{
    if (w->mode == MGPU_EXCHANGE_NCCL) {
        MGPU_TRY(mgpu_stencil_send(w->st, w->part, step));
        return mgpu_stencil_recv(w->st, w->part, step);
    }
    if (w->mode == MGPU_EXCHANGE_IPC)
        return mgpu_ipc_halo_exchange(w->ipc, step);
    mgpu_trace_begin(MGPU_TRACE_SEND, w->part, step);
    mgpu_status status = publish_edges(w, step);
    mgpu_trace_end();
    MGPU_TRY(status);
    MGPU_TRY(barrier(w));
    mgpu_trace_begin(MGPU_TRACE_RECV, w->part, step);
    status = mgpu_stencil_halos_in(w->st, w->part, step, slot_edge, w);
    mgpu_trace_end();
    return status;
}

/* One step: the exchange at the steps that have one (every K-th), then the
 * compute, a pass of up to T steps at a time between exchanges (--time-block,
 * mgpu_stencil_compute).  ipc: nothing here waits for a device or another
 * worker; the signals that order the neighbours' next copies and passes
 * follow the compute on the device (lib/ipc-halo.c). */
static mgpu_status one_step(worker *w, long long step)
{
    mgpu_stencil *st = w->st;
    if (mgpu_stencil_exchanges_at(st, step))
        MGPU_TRY(exchange(w, step));
    if (w->run->compute)
        MGPU_TRY(mgpu_stencil_compute(st, w->part, step));
    return w->mode == MGPU_EXCHANGE_IPC ? mgpu_ipc_halo_computed(w->ipc, step) : MGPU_OK;
}

/* The steps of one run.  Under staged the workers meet at a barrier only at
 * the steps that exchange. */
static mgpu_status run_steps(worker *w, mgpu_progress *progress)
{
    for (long long step = 0; step < w->run->opt->steps; step++) {
        mgpu_trace_begin(MGPU_TRACE_STEP, w->part, step);
        mgpu_status status = one_step(w, step);
        mgpu_trace_end();
        MGPU_TRY(status);
        mgpu_progress_step(progress, step + 1);
    }
    return MGPU_OK;
}

/* auto: ipc when every pair of the devices can reach each other's memory,
 * which CUDA IPC between two devices needs; staged otherwise, and always on
 * the host backend.  Every worker asks the same and gets the same answer. */
static mgpu_status choose_exchange(const mgpu_options *opt, int n, mgpu_exchange *mode)
{
    *mode = opt->exchange;
    if (*mode != MGPU_EXCHANGE_AUTO)
        return MGPU_OK;
    *mode = MGPU_EXCHANGE_STAGED;
    if (mgpu_backend_active() != MGPU_BACKEND_CUDA)
        return MGPU_OK;
    int all;
    MGPU_TRY(mgpu_peer_all(n, &all, NULL));
    if (all)
        *mode = MGPU_EXCHANGE_IPC;
    return MGPU_OK;
}

/* ipc: publish this worker's buffers and signals as handles in shared
 * memory, wait until every worker has, and open the neighbours'. */
static mgpu_status ipc_connect(worker *w)
{
    control *c = w->sh->control;
    MGPU_TRY(mgpu_ipc_halo_create(&w->ipc, w->st, w->part, barrier, w, &c->ipc[w->part]));
    MGPU_TRY(barrier(w));
    return mgpu_ipc_halo_connect(w->ipc, c->ipc);
}

/* The worker's domain: all parts' slabs known, only its own part's buffers
 * here, and what its exchange mode adds. */
static mgpu_status worker_domain(worker *w)
{
    const mgpu_options *opt = w->run->opt;
    int p = w->part;
    MGPU_TRY(choose_exchange(opt, w->nparts, &w->mode));
    if (p == 0)
        w->sh->control->mode = w->mode;
    mgpu_stencil_desc desc = mgpu_stencil_desc_of(opt, w->nparts);
    desc.exchange = w->mode;
    desc.first_part = p;
    desc.local_parts = 1;
    desc.nccl_id = w->mode == MGPU_EXCHANGE_NCCL ? &w->sh->control->nccl_id : NULL;
    /* nccl: this joins the communicator, once every worker has come. */
    MGPU_TRY(mgpu_stencil_create(&w->st, &desc));
    MGPU_TRY(mgpu_device_set(p));
    if (w->mode == MGPU_EXCHANGE_STAGED) {
        MGPU_TRY(mgpu_host_register(w->sh->slots, w->sh->slot_bytes));
        w->registered = true;
    } else if (w->mode == MGPU_EXCHANGE_IPC) {
        MGPU_TRY(ipc_connect(w));
    }
    return MGPU_OK;
}

/* Every run, warm-up and timed: load the initial field, then the steps,
 * timed from the barrier that starts them all to the end of the work on
 * this worker's device; then the final field into the shared result. */
static mgpu_status worker_runs(worker *w)
{
    const mgpu_run *run = w->run;
    int p = w->part;
    /* Worker 0 tells the progress, on the stderr it shares with its parent. */
    mgpu_progress *progress = p == 0 ? run->progress : NULL;
    for (int r = 0; r < run->warmup + run->repeats; r++) {
        MGPU_TRY(mgpu_stencil_reset(w->st, p));
        /* Some of the reset's copies return before the device has done
         * them; neighbours in other processes read these buffers after the
         * barrier, ordered by nothing else. */
        MGPU_TRY(mgpu_device_synchronize(p));
        MGPU_TRY(barrier(w));
        mgpu_progress_run(progress, r);
        double start = mgpu_now();
        w->waited = 0.0;
        MGPU_TRY(run_steps(w, progress));
        MGPU_TRY(synchronize(w));
        mgpu_run_keep_part(run, r, p, mgpu_now() - start, w->waited);
        /* Nobody starts the next run, rewriting its buffers and slots,
         * while a neighbour may still read them. */
        MGPU_TRY(barrier(w));
    }
    if (run->field)
        MGPU_TRY(mgpu_stencil_gather(w->st, p, run->opt->steps, w->sh->result));
    return w->mode == MGPU_EXCHANGE_IPC ? mgpu_ipc_halo_disconnect(w->ipc) : MGPU_OK;
}

/* After a failure (FAILED) NCCL's transfers may wait for a neighbour that
 * will not send: they are aborted first, or the wait below would hang. */
static void worker_cleanup(worker *w, bool failed)
{
    if (w->st && failed)
        mgpu_stencil_abort(w->st);
    if (w->st)
        mgpu_stencil_synchronize(w->st, w->part); /* no copy still uses what goes */
    mgpu_ipc_halo_destroy(w->ipc);
    if (w->registered)
        mgpu_host_unregister(w->sh->slots);
    mgpu_stencil_destroy(w->st);
}

/* The parent reports the first failure, the cause, not the ones it caused
 * in other workers, and names its worker. */
static void report_failure(control *c, int part, mgpu_status status)
{
    char cause[512];
    snprintf(cause, sizeof cause, "%s", mgpu_error_message(status));
    mgpu_error_set(status, "worker %d: %s", part, cause);
    mgpu_failure_record(&c->failure, status, 0);
}

/* The life of worker PART, in its own process, given the shared memory,
 * the run, and the backend the parent chose (without starting CUDA);
 * returns its exit status. */
static int worker_main(shared *sh, const mgpu_run *run, int part, mgpu_backend backend,
                       int host_devices)
{
    worker w = {.run = run, .sh = sh, .part = part, .nparts = run->ndevices};
    /* The worker's host kernels and initial field would take every core,
     * as would each of the others': each takes its share instead. */
    mgpu_host_share_cores(run->ndevices);
    /* Bound before CUDA starts, so that the threads CUDA makes for its
     * context run near the device too. */
    mgpu_bind_worker(run->opt->bind, part, run->ndevices, sh->control->binding.cpus[part]);
    /* CUDA starts here, in the worker, after the fork. */
    mgpu_status status = mgpu_init(backend, host_devices);
    if (status == MGPU_OK)
        status = worker_domain(&w);
    if (status == MGPU_OK)
        status = worker_runs(&w);
    /* Worker 0 drew the progress line (its parent did not): it clears it,
     * before its parent prints a record or an error. */
    if (part == 0)
        mgpu_progress_end(run->progress);
    if (status != MGPU_OK)
        report_failure(sh->control, part, status);
    worker_cleanup(&w, status != MGPU_OK);
    return status == MGPU_OK ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ---------------------------------------------------------- the parent */

/* Memory that the parent and every worker share: an anonymous shared
 * mapping made before fork is inherited by each child at the same address.
 * It has no name (nothing in /dev/shm to remove) and vanishes with the last
 * process that maps it, however the processes end.  NULL if it fails. */
static void *map_shared(size_t bytes, const char *what)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED)
        return p;
    mgpu_error_set(MGPU_ERR_NOMEM, "mmap of %zu shared bytes for the %s: %s", bytes, what,
                   strerror(errno));
    return NULL;
}

static void shared_destroy(shared *sh, bool barrier_idle)
{
    /* A worker killed inside pthread_barrier_wait never leaves it, and
     * destroying a barrier that someone waits at is undefined (glibc waits
     * for them): after a failure the mapping is just unmapped. */
    if (sh->control && barrier_idle)
        pthread_barrier_destroy(&sh->control->barrier);
    if (sh->control)
        munmap(sh->control, sh->control_bytes);
    if (sh->slots)
        munmap(sh->slots, sh->slot_bytes);
    if (sh->result)
        munmap(sh->result, sh->result_bytes);
}

static mgpu_status shared_create(shared *sh, const mgpu_run *run)
{
    const mgpu_options *opt = run->opt;
    size_t n = (size_t) run->ndevices;
    *sh = (shared){0};
    sh->control_bytes = sizeof(control);
    bool ok = (sh->control = map_shared(sh->control_bytes, "control block")) != NULL;
    /* auto may resolve to staged in the workers: only ipc and nccl need no
     * slots. */
    if (ok && opt->exchange != MGPU_EXCHANGE_IPC && opt->exchange != MGPU_EXCHANGE_NCCL) {
        sh->slot_bytes = 2 * n * 2 * mgpu_block_bytes(opt->nx, opt->halo);
        ok = (sh->slots = map_shared(sh->slot_bytes, "halo slots")) != NULL;
    }
    if (ok && run->field) {
        sh->result_bytes = (size_t) opt->nx * (size_t) opt->ny * sizeof(float);
        ok = (sh->result = map_shared(sh->result_bytes, "result field")) != NULL;
    }
    if (!ok) {
        shared_destroy(sh, false);
        return MGPU_ERR_NOMEM;
    }
    mgpu_failure_init(&sh->control->failure);
    mgpu_status status = mgpu_process_barrier_init(&sh->control->barrier, (unsigned) n);
    if (status != MGPU_OK)
        shared_destroy(sh, false);
    return status;
}

/* The failure a worker reported, if one did; STATUS otherwise. */
static mgpu_status worker_failure(const shared *sh, mgpu_status status)
{
    mgpu_status failed = mgpu_failure_status(&sh->control->failure);
    return failed != MGPU_OK ? failed : status;
}

/* Fork a worker per device, which runs worker_main in a process of its own,
 * and wait for them all.  mgpu_workers_wait (lib/supervise.c) reaps them
 * with waitpid: one that fails or dies makes it stop the others, so that
 * nobody waits forever at the barrier; SIGINT or SIGTERM makes it stop them
 * all; and no worker outlives the parent.  A worker that failed said why:
 * that, rather than how it ended, is the run's failure. */
static mgpu_status run_workers(shared *sh, const mgpu_run *run, int *interrupted)
{
    /* The parent chose the backend but started no CUDA: the driver counted
     * the devices in a child. */
    mgpu_backend backend = mgpu_backend_active();
    int host_devices;
    mgpu_device_count(&host_devices);
    mgpu_progress_elsewhere(run->progress);
    mgpu_workers *workers;
    MGPU_TRY(mgpu_workers_create(&workers, run->ndevices));
    for (int p = 0; p < run->ndevices; p++) {
        pid_t pid = fork();
        if (pid == 0) {
            mgpu_workers_enter(workers); /* dies with its parent */
            _exit(worker_main(sh, run, p, backend, host_devices));
        }
        if (!mgpu_workers_add(workers, p, pid))
            break; /* no fork: those running are stopped */
    }
    mgpu_status status = mgpu_workers_wait(workers, interrupted);
    return status == MGPU_OK || status == MGPU_ERR_INTERRUPTED ? status
                                                               : worker_failure(sh, status);
}

/* A set of runs: the shared mapping made, the workers forked and waited for
 * (run_workers), and what they left there read. */
static mgpu_status fork_strategy(mgpu_run *run, int *interrupted)
{
    const mgpu_options *opt = run->opt;
    if (opt->exchange == MGPU_EXCHANGE_IPC && mgpu_backend_active() != MGPU_BACKEND_CUDA)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--exchange=ipc needs the cuda backend: a host "
                              "device's memory is private to its worker process "
                              "(the %s backend supports: staged)",
                              mgpu_backend_name(mgpu_backend_active()));
    shared sh;
    MGPU_TRY(shared_create(&sh, run));
    /* nccl: each worker is one rank of a communicator whose id the parent
     * makes before forking (ncclGetUniqueId makes no CUDA call) and leaves in
     * the shared mapping.  A new id for every set of workers: an id serves
     * one communicator. */
    mgpu_status status = opt->exchange == MGPU_EXCHANGE_NCCL
                             ? mgpu_nccl_id_create(&sh.control->nccl_id)
                             : MGPU_OK;
    if (status == MGPU_OK)
        status = run_workers(&sh, run, interrupted);
    if (status == MGPU_OK) {
        if (run->field) {
            memcpy(run->field, sh.result, sh.result_bytes);
            mgpu_field_fill_halo_rows(run->field, opt->kernel, opt->nx, opt->ny);
        }
        if (run->record)
            run->record->exchange = sh.control->mode;
        if (run->binding)
            *run->binding = sh.control->binding;
    }
    shared_destroy(&sh, status == MGPU_OK);
    return status;
}

/* ------------------------------------------------------ the program */

static const mgpu_program program = {
    .name = "mgpu-fork",
    .strategy = "fork",
    .summary = "one worker process per device (fork); halos through shared host memory, "
               "CUDA IPC or NCCL",
    .exchanges = MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_STAGED) | MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_IPC) |
                 MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_NCCL),
    .forks = 1,
    .binds_workers = 1,
    .deep_halo = 1,
};

int main(int argc, char **argv)
{
    int interrupted = 0; /* by SIGINT or SIGTERM, which the workers were stopped for */
    mgpu_harness *h = mgpu_harness_start(&program, argc, argv); /* options, devices */
    for (mgpu_run *run; (run = mgpu_harness_next(h));)
        mgpu_harness_done(h, fork_strategy(run, &interrupted));
    int code = mgpu_harness_end(h); /* the ceiling, the verification, the record */
    if (interrupted) {
        /* End by the signal itself, as a program stopped by one should: the
         * shell sees 128 + signal, and a script running this one stops too.
         * Every worker has been reaped by now. */
        signal(interrupted, SIG_DFL);
        raise(interrupted);
    }
    return code;
}
