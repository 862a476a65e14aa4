/* mpi.c - mgpu-mpi: one MPI rank per device, on one host or several (book 10.3).
 *
 * mpirun starts the program once per device.  Each rank holds one slab of
 * the grid on the device its rank within its node picks, and trades halo
 * rows with the ranks above and below it in messages (step_messages):
 * through pinned host buffers (--exchange=staged), or straight from device
 * memory when the MPI library is CUDA-aware (--exchange=mpi).  The other
 * ways, --overlap's MPI_Isend/MPI_Irecv, CUDA IPC between the ranks of a
 * node and NCCL, are transports.c's, with the domain each rank holds; where
 * the ranks run and the MPI calls the harness meets them through, group.c.
 *
 * MPI errors are not checked call by call: the default error handler,
 * MPI_ERRORS_ARE_FATAL, already ends the whole job on any of them.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include <mpi.h>

#include "mgpu/measurement.h"
#include "ranks.h"
#include "trace.h"

/* One step in messages: at the steps that exchange (every K-th), the
 * exchange, then the compute (a pass at the first step of each,
 * mgpu_stencil_compute).  MPI knows nothing of streams, so the host first
 * waits for the stream: for the rows to send, written by the passes before
 * (and for the previous exchange's copies out of the incoming rows).
 * MPI_Sendrecv pairs each send with a receive, so a ring of ranks that all
 * send at once cannot deadlock. */
static mgpu_status step_messages(ranks_domain *dm, long long step, bool compute)
{
    if (mgpu_stencil_exchanges_at(dm->st, step)) {
        mgpu_trace_begin(MGPU_TRACE_EXCHANGE, job.device, step);
        mgpu_status status = ranks_edges_out(dm, step);
        if (status == MGPU_OK)
            status = mgpu_stream_synchronize(mgpu_stencil_stream(dm->st, dm->part));
        for (int d = 0; d < 2 && status == MGPU_OK; d++)
            MPI_Sendrecv(ranks_outgoing(dm, step, d), 1, dm->block, dm->to[d], d,
                         ranks_incoming(dm, step, d), 1, dm->block, dm->from[d], d, dm->comm,
                         MPI_STATUS_IGNORE);
        if (status == MGPU_OK)
            status = ranks_halos_in(dm, step);
        mgpu_trace_end();
        MGPU_TRY(status);
    }
    return compute ? mgpu_stencil_compute(dm->st, dm->part, step) : MGPU_OK;
}

/* Step STEP in the job's exchange mode; with COMPUTE false the kernels are
 * left out (the exchanges alone). */
static mgpu_status one_step(ranks_domain *dm, long long step, bool compute)
{
    mgpu_trace_begin(MGPU_TRACE_STEP, job.device, step);
    mgpu_status status;
    switch (job.exchange) {
    case MGPU_EXCHANGE_IPC:
        status = ranks_step_ipc(dm, step, compute);
        break;
    case MGPU_EXCHANGE_NCCL:
        status = ranks_step_nccl(dm, step, compute);
        break;
    default: /* staged, mpi */
        status = ranks_overlap ? ranks_step_overlapped(dm, step, compute)
                               : step_messages(dm, step, compute);
    }
    mgpu_trace_end();
    return status;
}

/* A phase of runs, in this rank: WARMUP untimed runs, then REPEATS timed
 * ones, each from the initial field.  A rank times its own part, from a
 * start all ranks share (a barrier) to the end of its last step on its
 * device; the harness takes the slowest.  A failure returns at once,
 * freeing nothing: the harness ends the job, and a rank may not wait for
 * a neighbour that will never come. */
static mgpu_status run_part(mgpu_run *run)
{
    if (run->record)
        ranks_describe(run->record);
    if (run->binding)
        memcpy(run->binding->cpus[job.rank], job.cpus, MGPU_BIND_TEXT);
    ranks_domain *dm;
    MGPU_TRY(ranks_domain_for(run->ndevices, run->opt, &dm));
    if (!dm)
        return MGPU_OK;
    for (int r = 0; r < run->warmup + run->repeats; r++) {
        MGPU_TRY(mgpu_stencil_reset(dm->st, dm->part));
        /* Some of the reset's copies return before the device has done
         * them; under ipc the neighbours read these buffers after the
         * barrier, ordered by nothing else. */
        if (dm->ipc)
            MGPU_TRY(mgpu_device_synchronize(job.device));
        MPI_Barrier(dm->comm);
        mgpu_progress_run(run->progress, r);
        double start = mgpu_now();
        for (long long step = 0; step < run->opt->steps; step++) {
            MGPU_TRY(one_step(dm, step, run->compute));
            mgpu_progress_step(run->progress, step + 1);
        }
        MGPU_TRY(mgpu_stencil_synchronize(dm->st, dm->part));
        mgpu_run_keep(run, r, mgpu_now() - start, -1.0);
        /* Nobody starts the next run, resetting its buffers, while another
         * may still be in this one (ipc: reading or writing them). */
        MPI_Barrier(dm->comm);
    }
    return run->field ? mgpu_stencil_gather_rows(dm->st, dm->part, run->opt->steps, run->field)
                      : MGPU_OK;
}

/* Once the options are parsed: the request checked against the job, the
 * backend, this rank's device and the exchange mode. */
static mgpu_status prepare_rank(const mgpu_options *opt)
{
    MGPU_TRY(ranks_check(opt));
    /* The host backend gives each rank of a node a "device" of its own. */
    int host_devices = job.local_ranks < MGPU_MAX_DEVICES ? job.local_ranks : MGPU_MAX_DEVICES;
    MGPU_TRY(mgpu_init(opt->backend, host_devices));
    MGPU_TRY(mgpu_device_count(&job.node_devices));
    /* The ranks of a node take its devices in turn, so the same command
     * runs one rank per device on one host or on many. */
    job.device = job.local_rank % job.node_devices;
    /* The rank is its device's worker: bound before its context exists, so
     * that the threads CUDA makes for it run near the device too.  On the
     * host backend the ranks of a node share its CPUs out. */
    mgpu_bind_worker(opt->bind, job.device, job.local_ranks, job.cpus);
    MGPU_TRY(mgpu_device_set(job.device));
    MGPU_TRY(ranks_transport_choose(opt));
    ranks_group_chosen();
    return MGPU_OK;
}

/* ------------------------------------------------------------ the program */

static const char *const overlap_names[] = {"off", "on", NULL};
long long ranks_overlap; /* an index of overlap_names: 1 on */

static const mgpu_extra_option extra[] = {
    {.name = "overlap",
     .help = "on: compute the rows that read no halo while the halos travel "
             "(MPI_Isend/MPI_Irecv); off: MPI_Sendrecv, then compute",
     .choices = overlap_names,
     .max = 1,
     .value = &ranks_overlap,
     .bare = "on"},
    {.name = NULL},
};

const mgpu_program ranks_program = {
    .name = "mgpu-mpi",
    .strategy = "mpi",
    .summary = "one MPI rank per device, on one host or several: mpirun -np N mgpu-mpi; halos "
               "in MPI messages, through CUDA IPC between the ranks of one node, or "
               "through NCCL",
    .exchanges = MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_STAGED) | MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_IPC) |
                 MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_MPI) | MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_NCCL),
    .extra = extra,
    .binds_workers = 1,
    .deep_halo = 1,
};

int main(int argc, char **argv)
{
    /* Before MPI opens its files and sockets: none may take a closed
     * stdout's place. */
    mgpu_program_start();
    /* MPI first, before any CUDA call (book 10.3): as with fork, a CUDA
     * context made before MPI_Init is not carried into what MPI sets up,
     * and a CUDA-aware MPI prepares its own use of the devices there. */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &job.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &job.ranks);
    ranks_find_place();
    /* A test hook that is not a count refuses the job before anything else,
     * --list-exchanges included: what it asks is a job of other nodes. */
    if (job.pretend_nodes) {
        if (job.rank == 0)
            mgpu_error(&ranks_program,
                       "MGPU_MPI_RANKS_PER_NODE: '%s' is not a count of ranks (accepted: 1 to %d)",
                       job.pretend_nodes, MGPU_MAX_DEVICES);
        MPI_Finalize();
        return 2;
    }
    /* The program around the ranks is the harness's, run by every rank
     * together. */
    mgpu_harness *h = mgpu_harness_group_start(&ranks_program, &ranks_group, argc, argv);
    const mgpu_options *opt = mgpu_harness_options(h); /* NULL: --help, a usage error */
    if (opt)
        mgpu_harness_group_ready(h, prepare_rank(opt));
    for (mgpu_run *run; (run = mgpu_harness_next(h));)
        mgpu_harness_done(h, run_part(run));
    int code = mgpu_harness_end(h); /* the ceiling, the verification, the record */
    MPI_Finalize();
    return code;
}
