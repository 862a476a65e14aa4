/* mpi.c - mgpu-mpi: one MPI rank per device, on one host or several (book 10.3).
 *
 * mpirun starts the program once per device.  Each rank holds one slab of
 * the grid on the device its rank within its node picks, and trades halo
 * rows with the ranks above and below it in messages: straight from device
 * memory when the MPI library is CUDA-aware (--exchange=mpi), through pinned
 * host buffers otherwise (--exchange=staged).  With --halo=K a message
 * carries K rows, every K steps, and the steps between compute the rows
 * still valid (the stencil domain's passes).  With --overlap (one-row
 * halos) the rows that read no halo are computed while the messages travel.
 *
 * Ranks that share a node can do without messages (--exchange=ipc): they
 * trade CUDA IPC handles of their buffers and signals once (MPI_Allgather),
 * then their kernels store edge rows straight into the neighbours' mapped
 * halos (or, with deep halos, each copies its neighbours' edge rows device
 * to device), ordered on the devices by the signals alone, as mgpu-fork's
 * workers do (lib/ipc-halo.c).
 *
 * Or the ranks are the ranks of an NCCL communicator (--exchange=nccl), on
 * one node or several: rank 0 makes its id and sends it to the others
 * (MPI_Bcast), and the stencil domain does the rest (lib/stencil.c): each
 * exchange is one NCCL group of ncclSend and ncclRecv on the rank's stream,
 * issued without the host waiting for anything, and the host waits for the
 * device only at the end of a run.  A rank that fails aborts its
 * communicator before it ends the job, so that none of its kernels waits
 * for a peer that is gone.
 *
 * The program around the ranks is the harness's (mgpu_group_main), run by
 * every rank together; this file gives it the MPI calls it meets the other
 * ranks through: rank 0 alone prints, a run takes as long as its slowest
 * rank (MPI_Allreduce), the field is gathered on rank 0 to be verified
 * (MPI_Gatherv), and a rank that fails ends the whole job with MPI_Abort:
 * the others may be waiting for its messages.
 *
 * MPI errors are not checked call by call: the default error handler,
 * MPI_ERRORS_ARE_FATAL, already ends the whole job on any of them.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#ifdef HAVE_MPI_EXT_H
#include <mpi-ext.h> /* Open MPI's MPIX_Query_cuda_support */
#endif

#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/measurement.h"
#include "mgpu/processes.h"
#include "trace.h"

static const char *const overlap_names[] = {"off", "on", NULL};
static long long overlap; /* an index of overlap_names: 1 on */

static const mgpu_extra_option extra[] = {
    {"overlap",
     "on: compute the rows that read no halo while the halos travel "
     "(MPI_Isend/MPI_Irecv); off: MPI_Sendrecv, then compute",
     overlap_names, 0, 1, 0, &overlap, "on"},
    {NULL, NULL, NULL, 0, 0, 0, NULL, NULL},
};

static const mgpu_program program = {
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

/* Where this process is in the job. */
static struct {
    int rank, ranks;             /* in MPI_COMM_WORLD */
    int local_rank, local_ranks; /* among the ranks of this node */
    int hosts;
    int node_of[MGPU_MAX_DEVICES]; /* each rank's node, named by its lowest rank
                                      (unknown beyond MGPU_MAX_DEVICES ranks) */
    int node_devices;              /* devices this rank sees */
    int device;                    /* the one it drives */
    int aware;                     /* the MPI takes device memory: cuda_aware() */
    char cpus[MGPU_BIND_TEXT];     /* the CPUs it runs on (--bind) */
    char host[MPI_MAX_PROCESSOR_NAME];
    char where[MPI_MAX_PROCESSOR_NAME + 32]; /* "rank R on HOST" */
} me;

static void find_place(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &me.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &me.ranks);
    /* The ranks that share this node's memory share its devices too. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me.rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &me.local_rank);
    MPI_Comm_size(node, &me.local_ranks);
    /* The ranks of a node run their host kernels side by side. */
    mgpu_host_share_cores(me.local_ranks);
    int leader = me.local_rank == 0, lowest, length;
    MPI_Allreduce(&leader, &me.hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&me.rank, &lowest, 1, MPI_INT, MPI_MIN, node);
    if (me.ranks <= MGPU_MAX_DEVICES)
        MPI_Allgather(&lowest, 1, MPI_INT, me.node_of, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    MPI_Get_processor_name(me.host, &length);
    snprintf(me.where, sizeof me.where, "rank %d on %s", me.rank, me.host);
}

/* A phase of runs' ranks and this rank's part (below). */
typedef struct domain domain;

/* How the halos travel: an exchange mode of mgpu-mpi (the table of them is
 * with the modes, below). */
typedef struct transport {
    mgpu_exchange mode;
    /* Whether this job can run it: MGPU_OK, or a usage error saying why. */
    mgpu_status (*usable)(const mgpu_options *opt);
    /* What the mode adds to a domain, or NULL. */
    mgpu_status (*connect)(domain *dm);
    /* One step: the exchange (where the step has one) and the compute (unless
     * COMPUTE is false: the exchanges alone). */
    mgpu_status (*step)(domain *dm, long long step, bool compute);
    /* Run only when asked for by name: --exchange=auto passes it by. */
    bool named_only;
} transport;
static const transport *chosen; /* the job's, --exchange=auto resolved */

/* Which ranks share a node, into TEXT (SIZE bytes): each node's ranks, as
 * runs FIRST-LAST or a rank alone, ',' between runs, ';' between nodes, the
 * nodes in the order of their lowest rank ("0-3;4-7").  What does not fit
 * is cut after a run and ends with "...". */
static void node_ranks_text(char *text, size_t size)
{
    char all[MGPU_MAX_DEVICES * 8];
    size_t len = 0;
    all[0] = '\0';
    for (int node = 0; node < me.ranks; node++) {
        if (me.node_of[node] != node)
            continue;
        const char *sep = len ? ";" : "";
        for (int r = node; r < me.ranks; r++) {
            if (me.node_of[r] != node)
                continue;
            int last = r;
            while (last + 1 < me.ranks && me.node_of[last + 1] == node)
                last++;
            if (last == r)
                len += (size_t) snprintf(all + len, sizeof all - len, "%s%d", sep, r);
            else
                len += (size_t) snprintf(all + len, sizeof all - len, "%s%d-%d", sep, r, last);
            sep = ",";
            r = last;
        }
    }
    if (len < size) {
        memcpy(text, all, len + 1);
        return;
    }
    size_t cut = size - 4; /* room for "..." */
    while (cut > 0 && all[cut] != ',' && all[cut] != ';')
        cut--;
    memcpy(text, all, cut);
    memcpy(text + cut, "...", 4);
}

/* ------------------------------------ what the harness asks of the ranks */

static void combine(void *ctx, mgpu_group_op op, double *values, int n)
{
    (void) ctx;
    MPI_Op mpi_op = op == MGPU_GROUP_MIN ? MPI_MIN : op == MGPU_GROUP_MAX ? MPI_MAX : MPI_SUM;
    MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, mpi_op, MPI_COMM_WORLD);
}

static void broadcast(void *ctx, int *value, int root)
{
    (void) ctx;
    MPI_Bcast(value, 1, MPI_INT, root, MPI_COMM_WORLD);
}

static void gather(void *ctx, const void *mine, size_t bytes, void *all)
{
    (void) ctx;
    MPI_Gather(mine, (int) bytes, MPI_BYTE, all, (int) bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
}

/* Each rank's slab, rows of NX floats, at its place in rank 0's FIELD. */
static void gather_rows(void *ctx, const float *rows, const mgpu_slab *slabs, long long nx,
                        float *field)
{
    (void) ctx;
    int counts[MGPU_MAX_DEVICES], first_rows[MGPU_MAX_DEVICES];
    for (int r = 0; r < me.ranks; r++) {
        counts[r] = (int) (slabs[r].row_end - slabs[r].row_begin);
        first_rows[r] = (int) slabs[r].row_begin;
    }
    MPI_Datatype row;
    MPI_Type_contiguous((int) nx, MPI_FLOAT, &row);
    MPI_Type_commit(&row);
    MPI_Gatherv(rows, counts[me.rank], row, field, counts, first_rows, row, 0, MPI_COMM_WORLD);
    MPI_Type_free(&row);
}

static mgpu_stencil *held_stencil(void);

static void end_job(void *ctx, int code)
{
    (void) ctx;
    /* nccl: this rank's transfers may wait for a peer that failed, and
     * its exit for them: the communicator goes first. */
    mgpu_stencil_abort(held_stencil());
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code); /* not reached: MPI_Abort does not return */
}

static mgpu_status prepare(void *ctx, const mgpu_options *opt);
static mgpu_status release_domain(void *ctx);

static mgpu_group group = {
    .where = me.where,
    .ceiling_device = -1,
    .prepare = prepare,
    .combine = combine,
    .broadcast = broadcast,
    .gather = gather,
    .gather_rows = gather_rows,
    .release = release_domain,
    .abort = end_job,
};

/* ------------------------------------------------------------ starting */

/* Whether the MPI library takes device pointers: 1 yes, 0 no, -1 it cannot
 * say.  Asked at run time, of the library that is loaded.  An MPI that is
 * not CUDA-aware reads a device pointer as host memory and crashes. */
static int cuda_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    return MPIX_Query_cuda_support(); /* Open MPI */
#elif defined(MPIX_GPU_SUPPORT_CUDA)
    int yes = 0;
    MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes); /* MPICH 4 */
    return yes;
#else
    return -1;
#endif
}

static const char *cuda_aware_name(int aware)
{
    return aware > 0 ? "yes" : aware == 0 ? "no" : "unknown";
}

static mgpu_status choose_transport(const mgpu_options *opt);

/* Check the request against the job, choose the backend, this rank's
 * device and the exchange mode. */
static mgpu_status prepare(void *ctx, const mgpu_options *opt)
{
    (void) ctx;
    if (opt->devices && opt->devices != me.ranks)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--devices: %d, but mpirun started %d rank%s, one "
                              "per device (accepted: %d, or leave it out)",
                              opt->devices, me.ranks, me.ranks == 1 ? "" : "s", me.ranks);
    if (me.ranks > MGPU_MAX_DEVICES)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "mpirun -np %d: too many ranks (accepted: 1 to %d, "
                              "one per device)",
                              me.ranks, MGPU_MAX_DEVICES);
    if (opt->ny - 2 < me.ranks)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "mpirun -np %d: each rank needs an interior row, "
                              "but --ny=%lld has %lld (accepted: 1 to %lld ranks)",
                              me.ranks, opt->ny, opt->ny - 2, opt->ny - 2);
    /* Message sizes, strides and displacements are ints in MPI. */
    if (opt->nx > INT_MAX - 64 || opt->ny > INT_MAX)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--nx, --ny: %lld x %lld is too large for MPI's "
                              "int counts (accepted: nx up to %d, ny up to %d)",
                              opt->nx, opt->ny, INT_MAX - 64, INT_MAX);
    if (overlap && opt->halo > 1)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--overlap: on overlaps one-row halos with the rows "
                              "that read none, and --halo=%d exchanges %d rows "
                              "every %d steps (accepted with --halo above 1: "
                              "--overlap=off)",
                              opt->halo, opt->halo, opt->halo);

    /* The host backend gives each rank of a node a "device" of its own. */
    int host_devices = me.local_ranks < MGPU_MAX_DEVICES ? me.local_ranks : MGPU_MAX_DEVICES;
    MGPU_TRY(mgpu_init(opt->backend, host_devices));
    MGPU_TRY(mgpu_device_count(&me.node_devices));
    /* The ranks of a node take its devices in turn, so the same command
     * runs one rank per device on one host or on many. */
    me.device = me.local_rank % me.node_devices;
    /* The rank is its device's worker: bound before its context exists, so
     * that the threads CUDA makes for it run near the device too.  On the
     * host backend the ranks of a node share its CPUs out. */
    mgpu_bind_worker(opt->bind, me.device, me.local_ranks, me.cpus);
    MGPU_TRY(mgpu_device_set(me.device));
    /* Each device's ceiling is measured by the first rank on it; the host
     * backend's "devices" share one memory per node. */
    bool cuda = mgpu_backend_active() == MGPU_BACKEND_CUDA;
    if (cuda ? me.local_rank < me.node_devices : me.local_rank == 0)
        group.ceiling_device = me.device;

    me.aware = cuda_aware();
    MGPU_TRY(choose_transport(opt));
    group.choice = (int) chosen->mode * 8 + (int) mgpu_backend_active(); /* 3 backends */
    return MGPU_OK;
}

/* ------------------------------------------------------------ a domain */

/* The ranks of a phase of runs (a communicator of their own), this rank's
 * slab of the grid, and where its halos come from and go to. */
struct domain {
    MPI_Comm comm; /* part p of the grid is rank p of COMM */
    mgpu_stencil *st;
    int part, nparts;
    int nx;
    int to[2], from[2];      /* per direction; MPI_PROC_NULL at a fixed boundary */
    size_t block_floats;     /* a block of --halo rows, padding between them included */
    MPI_Datatype block;      /* what a message carries: --halo rows of nx floats */
    float *staging;          /* staged: pinned blocks, outgoing UP, DOWN, incoming UP, DOWN */
    mgpu_event *edges_ready; /* --overlap: the rows to send are ready */
    mgpu_ipc_halo *ipc;      /* ipc: the neighbours' buffers and signals, mapped here */
};

/* The two messages of an exchange.  UP carries a slab's first K rows to the
 * rank above, into its bottom halo; DOWN its last K rows to the rank below,
 * into its top halo (K: --halo, the rows of the stencil domain's blocks).
 * The direction is the tag, so the two messages between one pair of ranks
 * (two ranks, or one: jacobi is periodic) never mix. */
enum { UP, DOWN };
static const mgpu_row outgoing_row[2] = {MGPU_ROW_FIRST, MGPU_ROW_LAST};
static const mgpu_row incoming_row[2] = {MGPU_ROW_HALO_BOTTOM, MGPU_ROW_HALO_TOP};

static int rank_of(int part) { return part >= 0 ? part : MPI_PROC_NULL; }

/* nccl: the id of the domain's communicator, made by its rank 0 and sent
 * to the others.  An id serves one communicator: every domain has its own.
 * Should rank 0 fail to make it, it ends the job, and the others wait in
 * MPI_Bcast until then. */
static mgpu_status nccl_id_share(const domain *dm, mgpu_nccl_id *id)
{
    if (dm->part == 0)
        MGPU_TRY(mgpu_nccl_id_create(id));
    MPI_Bcast(id->bytes, (int) sizeof id->bytes, MPI_BYTE, 0, dm->comm);
    return MGPU_OK;
}

static mgpu_status domain_create(domain *dm, MPI_Comm comm, const mgpu_options *opt)
{
    memset(dm, 0, sizeof *dm);
    dm->block = MPI_DATATYPE_NULL;
    dm->comm = comm;
    MPI_Comm_rank(comm, &dm->part);
    MPI_Comm_size(comm, &dm->nparts);
    dm->nx = (int) opt->nx;
    int devices[MGPU_MAX_DEVICES] = {0};
    devices[dm->part] = me.device;
    /* The domain holds the one local part; the halos are this file's job,
     * or (nccl) the stencil domain's, or (ipc) the library's CUDA IPC halos,
     * whose one-row kernels store into the neighbours' mapped halos. */
    mgpu_stencil_desc desc = mgpu_stencil_desc_of(opt, dm->nparts);
    desc.exchange = chosen->mode == MGPU_EXCHANGE_IPC ? MGPU_EXCHANGE_IPC : MGPU_EXCHANGE_MPI;
    desc.first_part = dm->part;
    desc.local_parts = 1;
    desc.devices = devices;
    mgpu_nccl_id id;
    if (chosen->mode == MGPU_EXCHANGE_NCCL) {
        MGPU_TRY(nccl_id_share(dm, &id));
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
    MGPU_TRY(mgpu_event_create(me.device, 0, &dm->edges_ready));
    return chosen->connect ? chosen->connect(dm) : MGPU_OK;
}

/* The domain freed, in every rank of it at once.  ipc: the neighbours
 * unmapped first, and nobody frees what another may still map; a failure
 * there leaves the others waiting, for the caller to end the job. */
static mgpu_status domain_destroy(domain *dm)
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

static float *device_block(const domain *dm, long long step, mgpu_row row)
{
    return mgpu_stencil_block(dm->st, dm->part, step, row);
}

/* The memory MPI sends direction D's block from and receives it into: the
 * device rows themselves, or their pinned host copies (laid out alike). */
static float *outgoing(const domain *dm, long long step, int d)
{
    return dm->staging ? dm->staging + (size_t) d * dm->block_floats
                       : device_block(dm, step, outgoing_row[d]);
}

static float *incoming(const domain *dm, long long step, int d)
{
    return dm->staging ? dm->staging + (size_t) (2 + d) * dm->block_floats
                       : device_block(dm, step, incoming_row[d]);
}

/* staged: pinned host memory for the blocks MPI sends and receives. */
static mgpu_status staging_alloc(domain *dm)
{
    void *rows;
    MGPU_TRY(mgpu_host_alloc(4 * mgpu_stencil_block_bytes(dm->st), MGPU_HOST_PINNED, &rows));
    dm->staging = rows;
    return MGPU_OK;
}

/* Staged: the rows this rank sends, copied to host memory on the stream,
 * behind the kernel of the previous step that wrote them. */
static mgpu_status edges_out(domain *dm, long long step)
{
    mgpu_stream *stream = mgpu_stencil_stream(dm->st, dm->part);
    for (int d = 0; dm->staging && d < 2; d++) {
        if (dm->to[d] != MPI_PROC_NULL)
            MGPU_TRY(mgpu_memcpy_async(outgoing(dm, step, d),
                                       device_block(dm, step, outgoing_row[d]),
                                       mgpu_stencil_block_bytes(dm->st), stream));
    }
    return MGPU_OK;
}

/* Staged: the received rows into the halos, on the stream, ahead of the
 * kernels that read them.  A fixed boundary receives nothing. */
static mgpu_status halos_in(domain *dm, long long step)
{
    mgpu_stream *stream = mgpu_stencil_stream(dm->st, dm->part);
    for (int d = 0; dm->staging && d < 2; d++) {
        if (dm->from[d] != MPI_PROC_NULL)
            MGPU_TRY(mgpu_memcpy_async(device_block(dm, step, incoming_row[d]),
                                       incoming(dm, step, d), mgpu_stencil_block_bytes(dm->st),
                                       stream));
    }
    return MGPU_OK;
}

/* One step: at the steps that exchange (every K-th), the exchange, then
 * the compute (a pass at the first step of each, mgpu_stencil_compute).  MPI
 * knows nothing of streams, so the host first waits for the stream: for the
 * rows to send, written by the passes before (and for the previous
 * exchange's copies out of the incoming rows).  MPI_Sendrecv pairs each
 * send with a receive, so a ring of ranks that all send at once cannot
 * deadlock. */
static mgpu_status step_plain(domain *dm, long long step, bool compute)
{
    if (mgpu_stencil_exchanges_at(dm->st, step)) {
        mgpu_trace_begin(MGPU_TRACE_EXCHANGE, me.device, step);
        mgpu_status status = edges_out(dm, step);
        if (status == MGPU_OK)
            status = mgpu_stream_synchronize(mgpu_stencil_stream(dm->st, dm->part));
        for (int d = 0; d < 2 && status == MGPU_OK; d++)
            MPI_Sendrecv(outgoing(dm, step, d), 1, dm->block, dm->to[d], d, incoming(dm, step, d),
                         1, dm->block, dm->from[d], d, dm->comm, MPI_STATUS_IGNORE);
        if (status == MGPU_OK)
            status = halos_in(dm, step);
        mgpu_trace_end();
        MGPU_TRY(status);
    }
    return compute ? mgpu_stencil_compute(dm->st, dm->part, step) : MGPU_OK;
}

/* One step, --overlap: the slab's inner rows read no halo, so their kernel
 * goes on the stream first, and the host waits only for the event behind
 * the rows to send before the messages go; the edge rows are computed once
 * the halos are in. */
static mgpu_status step_overlapped(domain *dm, long long step, bool compute)
{
    mgpu_stencil *st = dm->st;
    int p = dm->part;
    mgpu_stream *stream = mgpu_stencil_stream(st, p);
    const mgpu_slab *slab = mgpu_stencil_slab(st, p);
    long long first = slab->row_begin, last = slab->row_end - 1;
    MGPU_TRY(edges_out(dm, step));
    MGPU_TRY(mgpu_event_record(dm->edges_ready, stream));
    if (compute && last - first > 1)
        MGPU_TRY(mgpu_stencil_compute_rows(st, p, step, first + 1, last, stream));
    MGPU_TRY(mgpu_event_synchronize(dm->edges_ready));
    mgpu_trace_begin(MGPU_TRACE_EXCHANGE, me.device, step);
    MPI_Request requests[4];
    for (int d = 0; d < 2; d++)
        MPI_Irecv(incoming(dm, step, d), 1, dm->block, dm->from[d], d, dm->comm, &requests[d]);
    for (int d = 0; d < 2; d++)
        MPI_Isend(outgoing(dm, step, d), 1, dm->block, dm->to[d], d, dm->comm, &requests[2 + d]);
    MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
    mgpu_status status = halos_in(dm, step);
    mgpu_trace_end();
    MGPU_TRY(status);
    if (!compute)
        return MGPU_OK;
    MGPU_TRY(mgpu_stencil_compute_rows(st, p, step, first, first + 1, stream));
    return last > first ? mgpu_stencil_compute_rows(st, p, step, last, last + 1, stream) : MGPU_OK;
}

static mgpu_status step_messages(domain *dm, long long step, bool compute)
{
    return overlap ? step_overlapped(dm, step, compute) : step_plain(dm, step, compute);
}

/* ipc: where the ranks meet, at connecting and disconnecting only. */
static mgpu_status node_barrier(void *ctx)
{
    const domain *dm = ctx;
    MPI_Barrier(dm->comm);
    return MGPU_OK;
}

/* ipc: every rank's CUDA IPC handles to every rank, once (MPI_Allgather),
 * and its neighbours' buffers and signals opened. */
static mgpu_status ipc_connect(domain *dm)
{
    mgpu_ipc_part handles, parts[MGPU_MAX_DEVICES];
    MGPU_TRY(mgpu_ipc_halo_create(&dm->ipc, dm->st, dm->part, node_barrier, dm, &handles));
    MPI_Allgather(&handles, (int) sizeof handles, MPI_BYTE, parts, (int) sizeof handles, MPI_BYTE,
                  dm->comm);
    return mgpu_ipc_halo_connect(dm->ipc, parts);
}

/* One step, ipc: at the steps that exchange, the halos filled through the
 * neighbours' mapped buffers, on the stream, device to device; the host
 * waits for no device and sends no message (lib/ipc-halo.c says what
 * orders what). */
static mgpu_status step_ipc(domain *dm, long long step, bool compute)
{
    if (mgpu_stencil_exchanges_at(dm->st, step))
        MGPU_TRY(mgpu_ipc_halo_exchange(dm->ipc, step));
    if (compute)
        MGPU_TRY(mgpu_stencil_compute(dm->st, dm->part, step));
    return mgpu_ipc_halo_computed(dm->ipc, step);
}

/* One step, nccl: at the steps that exchange, the stencil domain's NCCL
 * group of transfers on the rank's stream (its send receives too), then the
 * compute behind it on that stream; the host waits for nothing. */
static mgpu_status step_nccl(domain *dm, long long step, bool compute)
{
    MGPU_TRY(mgpu_stencil_send(dm->st, dm->part, step));
    MGPU_TRY(mgpu_stencil_recv(dm->st, dm->part, step));
    return compute ? mgpu_stencil_compute(dm->st, dm->part, step) : MGPU_OK;
}

/* STEPS steps from the field the domain holds; with COMPUTE false the
 * kernels are left out (the exchanges alone). */
static mgpu_status run_steps(domain *dm, long long steps, bool compute, mgpu_progress *progress)
{
    for (long long step = 0; step < steps; step++) {
        mgpu_trace_begin(MGPU_TRACE_STEP, me.device, step);
        mgpu_status status = chosen->step(dm, step, compute);
        mgpu_trace_end();
        MGPU_TRY(status);
        mgpu_progress_step(progress, step + 1);
    }
    return mgpu_stencil_synchronize(dm->st, dm->part);
}

/* ---------------------------------------------------- the exchange modes */

static mgpu_status staged_usable(const mgpu_options *opt)
{
    (void) opt;
    return MGPU_OK;
}

/* mpi: MPI moves the device rows itself; a host-backend "device" is host
 * memory, which every MPI takes. */
static mgpu_status mpi_usable(const mgpu_options *opt)
{
    (void) opt;
    if (mgpu_backend_active() != MGPU_BACKEND_CUDA || me.aware > 0)
        return MGPU_OK;
    return mgpu_error_set(MGPU_ERR_USAGE,
                          "--exchange=mpi: this MPI library %s device memory "
                          "(CUDA-aware: %s); use --exchange=staged",
                          me.aware == 0 ? "cannot take" : "does not say whether it takes",
                          cuda_aware_name(me.aware));
}

/* ipc: CUDA IPC, between the GPUs of one node that reach each other's
 * memory; no message travels, so none overlaps the inner rows. */
static mgpu_status ipc_usable(const mgpu_options *opt)
{
    (void) opt;
    if (mgpu_backend_active() != MGPU_BACKEND_CUDA)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--exchange=ipc needs the cuda backend: a host "
                              "device's memory is private to its rank (the %s "
                              "backend supports: staged, mpi)",
                              mgpu_backend_name(mgpu_backend_active()));
    if (me.hosts > 1) {
        char nodes[MGPU_MAX_DEVICES * 8];
        node_ranks_text(nodes, sizeof nodes);
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--exchange=ipc: CUDA IPC joins the ranks of one "
                              "node, and these run on %d (ranks by node: %s; "
                              "accepted across nodes: staged, mpi)",
                              me.hosts, nodes);
    }
    if (overlap)
        return mgpu_error_set(MGPU_ERR_USAGE, "--overlap: on overlaps the halo messages with the "
                                              "rows that read no halo, and --exchange=ipc sends "
                                              "none (accepted with ipc: --overlap=off)");
    /* Two ranks on one device would order each other by signals alone,
     * across two contexts of one GPU, with nothing CUDA sees: NVIDIA's
     * stream memory operations are not promised to progress there. */
    if (me.local_ranks > me.node_devices)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--exchange=ipc: %d ranks on a node of %d device%s would share one "
                              "(accepted there: staged, nccl; or at most %d ranks a node)",
                              me.local_ranks, me.node_devices, me.node_devices == 1 ? "" : "s",
                              me.node_devices);
    /* On one node rank r drives device r mod the devices (find_place). */
    int used = me.ranks < me.node_devices ? me.ranks : me.node_devices;
    int all, pair[2];
    MGPU_TRY(mgpu_peer_all(used, &all, pair));
    if (!all)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--exchange=ipc: device %d cannot access device %d's memory (no "
                              "peer access); use --exchange=staged",
                              pair[0], pair[1]);
    return MGPU_OK;
}

/* nccl: a build with NCCL and the cuda backend (mgpu_nccl_check), and
 * nothing for --overlap to overlap: the transfers are on the stream, ahead
 * of the compute.  Two ranks on one device are NCCL's to refuse (ranks may
 * each see one device of their own, CUDA_VISIBLE_DEVICES, and then the
 * devices they see say nothing of the devices they drive). */
static mgpu_status nccl_usable(const mgpu_options *opt)
{
    (void) opt;
    MGPU_TRY(mgpu_nccl_check());
    if (overlap)
        return mgpu_error_set(MGPU_ERR_USAGE, "--overlap: on overlaps the halo messages with the "
                                              "rows that read no halo, and under "
                                              "--exchange=nccl the halos travel on the stream, "
                                              "ahead of the compute (accepted with nccl: "
                                              "--overlap=off)");
    return MGPU_OK;
}

/* The exchange modes, in the order --exchange=auto prefers them: the first
 * this job can run is taken, of those not NAMED_ONLY.  nccl is one of
 * those: it is run where asked for (its communicators take long to set
 * up, and NCCL's own environment decides how it travels).  A mode added
 * here is added to the program's exchanges too. */
static const transport transports[] = {
    {MGPU_EXCHANGE_IPC, ipc_usable, ipc_connect, step_ipc, false},
    {MGPU_EXCHANGE_MPI, mpi_usable, NULL, step_messages, false},
    {MGPU_EXCHANGE_STAGED, staged_usable, staging_alloc, step_messages, false},
    {MGPU_EXCHANGE_NCCL, nccl_usable, NULL, step_nccl, true},
};

/* --exchange: the mode asked for, if this job can run it; auto: the first
 * of the table it can.  Every rank chooses alike: the options, the backend
 * and the nodes are the job's. */
static mgpu_status choose_transport(const mgpu_options *opt)
{
    for (size_t i = 0; i < sizeof transports / sizeof transports[0]; i++) {
        const transport *t = &transports[i];
        if (opt->exchange == MGPU_EXCHANGE_AUTO ? t->named_only : opt->exchange != t->mode)
            continue;
        mgpu_status status = t->usable(opt);
        if (status == MGPU_OK) {
            chosen = t;
            return MGPU_OK;
        }
        if (opt->exchange != MGPU_EXCHANGE_AUTO)
            return status;
    }
    return mgpu_error_set(MGPU_ERR_USAGE, "--exchange: no mode of %s can run this job",
                          program.name);
}

/* ------------------------------------------------------------ the runs */

/* The domain of the phase of runs going on: made at the first phase of its
 * size, kept for the next of the same size (the timed runs and the
 * exchanges alone: under ipc the handles are traded once), so that a rank
 * holds one slab at a time, and released after the last phase, before the
 * copy ceiling is measured. */
static struct {
    int nparts; /* the phase's parts; 0 before the first */
    bool held;  /* this rank holds one of them, in DM */
    domain dm;
} current;

static mgpu_stencil *held_stencil(void) { return current.held ? current.dm.st : NULL; }

static mgpu_status release_domain(void *ctx)
{
    (void) ctx;
    bool held = current.held;
    current.held = false;
    current.nparts = 0;
    return held ? domain_destroy(&current.dm) : MGPU_OK;
}

/* This rank's domain for a phase of NPARTS parts, ranks 0 to NPARTS-1; NULL
 * when it has no part (the others of the one-device baseline). */
static mgpu_status domain_for(int nparts, const mgpu_options *opt, domain **dm)
{
    if (current.nparts != nparts) {
        MGPU_TRY(release_domain(NULL));
        MPI_Comm comm;
        MPI_Comm_split(MPI_COMM_WORLD, me.rank < nparts ? 0 : MPI_UNDEFINED, me.rank, &comm);
        current.nparts = nparts;
        if (comm != MPI_COMM_NULL) {
            current.held = true;
            MGPU_TRY(domain_create(&current.dm, comm, opt));
        }
    }
    *dm = current.held ? &current.dm : NULL;
    return MGPU_OK;
}

/* The record's fields of the job. */
static void describe(mgpu_record *record)
{
    record->exchange = chosen->mode;
    mgpu_record_set_text(record, "overlap", overlap ? "yes" : "no");
    mgpu_record_set_text(record, "cuda_aware", cuda_aware_name(me.aware));
    mgpu_record_set_number(record, "hosts", me.hosts);
    /* "Open MPI v4.1.4, package: ..." is cut after the name and version. */
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(library, &length);
    library[strcspn(library, ",\n")] = '\0';
    mgpu_record_set_text(record, "mpi", library);
    char nodes[64];
    node_ranks_text(nodes, sizeof nodes);
    mgpu_record_set_text(record, "node_ranks", nodes);
}

/* A phase of runs, in this rank: WARMUP untimed runs, then REPEATS timed
 * ones, each from the initial field.  A rank times its own part, from a
 * start all ranks share (a barrier) to the end of its last step on its
 * device; the harness takes the slowest.  A failure returns at once,
 * freeing nothing: the harness ends the job, and a rank may not wait for
 * a neighbour that will never come. */
static mgpu_status run_part(void *ctx, mgpu_run *run)
{
    (void) ctx;
    const mgpu_options *opt = run->opt;
    if (run->record)
        describe(run->record);
    if (run->binding)
        memcpy(run->binding->cpus[me.rank], me.cpus, MGPU_BIND_TEXT);
    domain *dm;
    MGPU_TRY(domain_for(run->ndevices, opt, &dm));
    if (!dm)
        return MGPU_OK;
    for (int r = 0; r < run->warmup + run->repeats; r++) {
        MGPU_TRY(mgpu_stencil_reset(dm->st, dm->part));
        /* Some of the reset's copies return before the device has done
         * them; under ipc the neighbours read these buffers after the
         * barrier, ordered by nothing else. */
        if (dm->ipc)
            MGPU_TRY(mgpu_device_synchronize(me.device));
        MPI_Barrier(dm->comm);
        mgpu_progress_run(run->progress, r);
        double start = mgpu_now();
        MGPU_TRY(run_steps(dm, opt->steps, run->compute, run->progress));
        if (r >= run->warmup)
            run->seconds[r - run->warmup] = mgpu_now() - start;
        /* Nobody starts the next run, resetting its buffers, while another
         * may still be in this one (ipc: reading or writing them). */
        MPI_Barrier(dm->comm);
    }
    return run->field ? mgpu_stencil_gather_rows(dm->st, dm->part, opt->steps, run->field)
                      : MGPU_OK;
}

int main(int argc, char **argv)
{
    /* Before MPI opens its files and sockets: none may take a closed
     * stdout's place. */
    mgpu_stdout_guard();
    /* MPI first, before any CUDA call (book 10.3): as with fork, a CUDA
     * context made before MPI_Init is not carried into what MPI sets up,
     * and a CUDA-aware MPI prepares its own use of the devices there. */
    MPI_Init(&argc, &argv);
    find_place();
    group.rank = me.rank;
    group.ranks = me.ranks;
    int code = mgpu_group_main(&program, &group, argc, argv, run_part, NULL);
    MPI_Finalize();
    return code;
}
