/* mpi.c - mgpu-mpi: one MPI rank per device, on one host or several (book 10.3).
 *
 * mpirun starts the program once per device.  Each rank holds one slab of
 * the grid on the device its rank within its node picks, and trades halo
 * rows with the ranks above and below it in messages: through pinned host
 * buffers (--exchange=staged), or straight from device memory when the MPI
 * library is CUDA-aware (--exchange=mpi).  With --halo=K a message carries K
 * rows, every K steps, and the steps between compute the rows still valid
 * (the stencil domain's passes).  The other ways the halos travel, CUDA IPC
 * between the ranks of a node, NCCL, and --overlap's MPI_Isend/MPI_Irecv,
 * are in transports.c; the MPI calls the harness meets the ranks through,
 * and which ranks share a node, in group.c.
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

static mgpu_status run_part(mgpu_run *run);

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
        mgpu_harness_group_ready(h, ranks_prepare(opt));
    for (mgpu_run *run; (run = mgpu_harness_next(h));)
        mgpu_harness_done(h, run_part(run));
    int code = mgpu_harness_end(h);
    MPI_Finalize();
    return code;
}

/* Check the request against the job, choose the backend, this rank's
 * device and the exchange mode. */
mgpu_status ranks_prepare(const mgpu_options *opt)
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

/* One step: at the steps that exchange (every K-th), the exchange, then
 * the compute (a pass at the first step of each, mgpu_stencil_compute).  MPI
 * knows nothing of streams, so the host first waits for the stream: for the
 * rows to send, written by the passes before (and for the previous
 * exchange's copies out of the incoming rows).  MPI_Sendrecv pairs each
 * send with a receive, so a ring of ranks that all send at once cannot
 * deadlock. */
mgpu_status ranks_step_plain(ranks_domain *dm, long long step, bool compute)
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

/* STEPS steps from the field the domain holds, each the transport's (this
 * file's ranks_step_plain for staged and mpi); with COMPUTE false the
 * kernels are left out (the exchanges alone). */
static mgpu_status run_steps(ranks_domain *dm, long long steps, bool compute,
                             mgpu_progress *progress)
{
    for (long long step = 0; step < steps; step++) {
        mgpu_trace_begin(MGPU_TRACE_STEP, job.device, step);
        mgpu_status status = job.transport->step(dm, step, compute);
        mgpu_trace_end();
        MGPU_TRY(status);
        mgpu_progress_step(progress, step + 1);
    }
    return mgpu_stencil_synchronize(dm->st, dm->part);
}

/* A phase of runs, in this rank: WARMUP untimed runs, then REPEATS timed
 * ones, each from the initial field.  A rank times its own part, from a
 * start all ranks share (a barrier) to the end of its last step on its
 * device; the harness takes the slowest.  A failure returns at once,
 * freeing nothing: the harness ends the job, and a rank may not wait for
 * a neighbour that will never come. */
static mgpu_status run_part(mgpu_run *run)
{
    const mgpu_options *opt = run->opt;
    if (run->record)
        ranks_describe(run->record);
    if (run->binding)
        memcpy(run->binding->cpus[job.rank], job.cpus, MGPU_BIND_TEXT);
    ranks_domain *dm;
    MGPU_TRY(ranks_domain_for(run->ndevices, opt, &dm));
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
        MGPU_TRY(run_steps(dm, opt->steps, run->compute, run->progress));
        mgpu_run_keep(run, r, mgpu_now() - start, -1.0);
        /* Nobody starts the next run, resetting its buffers, while another
         * may still be in this one (ipc: reading or writing them). */
        MPI_Barrier(dm->comm);
    }
    return run->field ? mgpu_stencil_gather_rows(dm->st, dm->part, opt->steps, run->field)
                      : MGPU_OK;
}

/* ------------------------------------------------------------ a domain */

/* The two messages of an exchange.  UP carries a slab's first K rows to the
 * rank above, into its bottom halo; DOWN its last K rows to the rank below,
 * into its top halo (K: --halo, the rows of the stencil domain's blocks).
 * The direction is the tag, so the two messages between one pair of ranks
 * (two ranks, or one: jacobi is periodic) never mix. */
enum { UP, DOWN };
static const mgpu_row outgoing_row[2] = {MGPU_ROW_FIRST, MGPU_ROW_LAST};
static const mgpu_row incoming_row[2] = {MGPU_ROW_HALO_BOTTOM, MGPU_ROW_HALO_TOP};

static int rank_of(int part) { return part >= 0 ? part : MPI_PROC_NULL; }

mgpu_status ranks_domain_create(ranks_domain *dm, MPI_Comm comm, const mgpu_options *opt)
{
    memset(dm, 0, sizeof *dm);
    dm->block = MPI_DATATYPE_NULL;
    dm->comm = comm;
    MPI_Comm_rank(comm, &dm->part);
    MPI_Comm_size(comm, &dm->nparts);
    dm->nx = (int) opt->nx;
    int devices[MGPU_MAX_DEVICES] = {0};
    devices[dm->part] = job.device;
    /* The domain holds the one local part; the halos are mgpu-mpi's job,
     * or (nccl) the stencil domain's, or (ipc) the library's CUDA IPC halos,
     * whose one-row kernels store into the neighbours' mapped halos. */
    mgpu_stencil_desc desc = mgpu_stencil_desc_of(opt, dm->nparts);
    desc.exchange = job.transport->mode == MGPU_EXCHANGE_IPC ? MGPU_EXCHANGE_IPC
                                                             : MGPU_EXCHANGE_MPI;
    desc.first_part = dm->part;
    desc.local_parts = 1;
    desc.devices = devices;
    mgpu_nccl_id id;
    if (job.transport->mode == MGPU_EXCHANGE_NCCL) {
        MGPU_TRY(ranks_nccl_id_share(dm, &id));
        desc.exchange = MGPU_EXCHANGE_NCCL;
        desc.nccl_id = &id;
    }
    /* nccl: this joins the communicator, once every rank of COMM has come. */
    MGPU_TRY(mgpu_stencil_create(&dm->st, &desc));
    /* The rows of a block lie a pitch apart: the message takes their NX
     * floats, not the padding between them. */
    dm->block_floats = mgpu_stencil_block_bytes(dm->st) / sizeof(float);
    MPI_Type_vector(opt->halo, dm->nx, (int) mgpu_stencil_pitch(dm->st, dm->part), MPI_FLOAT,
                    &dm->block);
    MPI_Type_commit(&dm->block);
    int above = mgpu_stencil_above(dm->st, dm->part), below = mgpu_stencil_below(dm->st, dm->part);
    dm->to[UP] = rank_of(above);
    dm->from[UP] = rank_of(below);
    dm->to[DOWN] = rank_of(below);
    dm->from[DOWN] = rank_of(above);
    MGPU_TRY(mgpu_event_create(job.device, 0, &dm->edges_ready));
    return job.transport->connect ? job.transport->connect(dm) : MGPU_OK;
}

/* The domain freed, in every rank of it at once.  ipc: the neighbours
 * unmapped first, and nobody frees what another may still map; a failure
 * there leaves the others waiting, for the caller to end the job. */
mgpu_status ranks_domain_destroy(ranks_domain *dm)
{
    if (dm->ipc)
        MGPU_TRY(mgpu_ipc_halo_disconnect(dm->ipc));
    mgpu_ipc_halo_destroy(dm->ipc);
    mgpu_event_destroy(dm->edges_ready);
    mgpu_host_free(dm->staging);
    mgpu_stencil_destroy(dm->st);
    if (dm->block != MPI_DATATYPE_NULL)
        MPI_Type_free(&dm->block);
    MPI_Comm_free(&dm->comm);
    return MGPU_OK;
}

static float *device_block(const ranks_domain *dm, long long step, mgpu_row row)
{
    return mgpu_stencil_block(dm->st, dm->part, step, row);
}

/* The memory MPI sends direction D's block from and receives it into: the
 * device rows themselves, or their pinned host copies (laid out alike). */
float *ranks_outgoing(const ranks_domain *dm, long long step, int d)
{
    return dm->staging ? dm->staging + (size_t) d * dm->block_floats
                       : device_block(dm, step, outgoing_row[d]);
}

float *ranks_incoming(const ranks_domain *dm, long long step, int d)
{
    return dm->staging ? dm->staging + (size_t) (2 + d) * dm->block_floats
                       : device_block(dm, step, incoming_row[d]);
}

/* staged: pinned host memory for the blocks MPI sends and receives. */
mgpu_status ranks_staging_alloc(ranks_domain *dm)
{
    void *rows;
    MGPU_TRY(mgpu_host_alloc(4 * mgpu_stencil_block_bytes(dm->st), MGPU_HOST_PINNED, &rows));
    dm->staging = rows;
    return MGPU_OK;
}

/* Staged: the rows this rank sends, copied to host memory on the stream,
 * behind the kernel of the previous step that wrote them. */
mgpu_status ranks_edges_out(ranks_domain *dm, long long step)
{
    mgpu_stream *stream = mgpu_stencil_stream(dm->st, dm->part);
    for (int d = 0; dm->staging && d < 2; d++) {
        if (dm->to[d] != MPI_PROC_NULL)
            MGPU_TRY(mgpu_memcpy_async(ranks_outgoing(dm, step, d),
                                       device_block(dm, step, outgoing_row[d]),
                                       mgpu_stencil_block_bytes(dm->st), stream));
    }
    return MGPU_OK;
}

/* Staged: the received rows into the halos, on the stream, ahead of the
 * kernels that read them.  A fixed boundary receives nothing. */
mgpu_status ranks_halos_in(ranks_domain *dm, long long step)
{
    mgpu_stream *stream = mgpu_stencil_stream(dm->st, dm->part);
    for (int d = 0; dm->staging && d < 2; d++) {
        if (dm->from[d] != MPI_PROC_NULL)
            MGPU_TRY(mgpu_memcpy_async(device_block(dm, step, incoming_row[d]),
                                       ranks_incoming(dm, step, d),
                                       mgpu_stencil_block_bytes(dm->st), stream));
    }
    return MGPU_OK;
}

/* ------------------------------------------------------------ the program */

static const char *const overlap_names[] = {"off", "on", NULL};
long long ranks_overlap; /* an index of overlap_names: 1 on */

static const mgpu_extra_option extra[] = {
    {"overlap",
     "on: compute the rows that read no halo while the halos travel "
     "(MPI_Isend/MPI_Irecv); off: MPI_Sendrecv, then compute",
     overlap_names, 0, 1, 0, &ranks_overlap, "on"},
    {NULL, NULL, NULL, 0, 0, 0, NULL, NULL},
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
