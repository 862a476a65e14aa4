/* transports.c - how mgpu-mpi's halos travel: the mode chosen for the job
 * (--exchange), the domain each rank holds and what its mode adds to it,
 * and the steps of the modes beside mpi.c's messages: --overlap's
 * MPI_Isend/MPI_Irecv behind the inner rows; CUDA IPC between the ranks of
 * one node, whose kernels store edge rows straight into the neighbours'
 * mapped halos, ordered on the devices by signals alone (lib/ipc-halo.c);
 * NCCL, each exchange one group of ncclSend and ncclRecv on the rank's
 * stream (lib/exchange.c).  A rank that fails aborts its NCCL communicator
 * before it ends the job (group.c), so that none of its kernels waits for a
 * peer that is gone. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdbool.h>
#include <string.h>

#include <mpi.h>
#ifdef HAVE_MPI_EXT_H
#include <mpi-ext.h> /* Open MPI's MPIX_Query_cuda_support */
#endif

#include "ranks.h"
#include "trace.h"

/* ---------------------------------------------------- choosing the mode */

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

const char *ranks_cuda_aware_name(int aware)
{
    return aware > 0 ? "yes" : aware == 0 ? "no" : "unknown";
}

/* mpi: MPI moves the device rows itself; a host-backend "device" is host
 * memory, which every MPI takes. */
static mgpu_status mpi_usable(void)
{
    if (mgpu_backend_active() != MGPU_BACKEND_CUDA || job.aware > 0)
        return MGPU_OK;
    return mgpu_error_set(MGPU_ERR_USAGE,
                          "--exchange=mpi: this MPI library %s device memory "
                          "(CUDA-aware: %s); use --exchange=staged",
                          job.aware == 0 ? "cannot take" : "does not say whether it takes",
                          ranks_cuda_aware_name(job.aware));
}

/* What each rank tells the others of its GPU, to find which GPUs the
 * ranks share and which reach each other (ipc_reach). */
typedef struct gpu_card {
    char uuid[48], bus_id[24];
    int ready;             /* PROBE is a handle to open */
    mgpu_ipc_handle probe; /* of a few bytes of its memory */
} gpu_card;

/* ipc, on one node: whether the ranks' GPUs reach each other's memory, and
 * each rank has one of its own.  The ranks trade their GPUs' UUIDs and an
 * IPC handle to a few bytes of each (MPI_Allgather), and each opens the
 * others': a launcher may give every rank one GPU of its own
 * (CUDA_VISIBLE_DEVICES, srun --gpus-per-task=1), and then no rank sees
 * another's GPU to ask for peer access by number, but CUDA IPC still opens
 * handles of GPUs the process does not see, where the GPUs reach each
 * other.  Every rank comes to the same verdict (MPI_Allreduce), so that
 * auto chooses alike. */
static mgpu_status ipc_reach(void)
{
    gpu_card mine = {0}, cards[MGPU_MAX_DEVICES];
    mgpu_device_info info = {0};
    void *probe = NULL;
    mgpu_status status = mgpu_device_info_get(job.device, &info);
    if (status == MGPU_OK)
        status = mgpu_malloc(job.device, 64, &probe);
    if (status == MGPU_OK)
        status = mgpu_ipc_memory_handle(job.device, probe, &mine.probe);
    mine.ready = status == MGPU_OK;
    memcpy(mine.uuid, info.uuid, sizeof mine.uuid);
    memcpy(mine.bus_id, info.pci_bus_id, sizeof mine.bus_id);
    MPI_Allgather(&mine, (int) sizeof mine, MPI_BYTE, cards, (int) sizeof mine, MPI_BYTE,
                  MPI_COMM_WORLD);
    /* Two ranks on one GPU would order each other by signals alone, across
     * two contexts of one GPU, with nothing CUDA sees: NVIDIA's stream
     * memory operations are not promised to progress there. */
    int ready = 1, shared = -1;
    for (int r = 0; r < job.ranks; r++) {
        ready &= cards[r].ready;
        for (int s = 0; s < r && shared < 0; s++)
            if (strcmp(cards[s].uuid, cards[r].uuid) == 0)
                shared = s * job.ranks + r;
    }
    /* The first pair (r, s), as r * ranks + s, where rank r cannot map the
     * memory of rank s's GPU; ranks * ranks where none. */
    int unreached = job.ranks * job.ranks;
    for (int s = 0; s < job.ranks && ready && shared < 0; s++) {
        void *mapped;
        if (s == job.rank)
            continue;
        if (mgpu_ipc_memory_open(job.device, &cards[s].probe, &mapped) != MGPU_OK) {
            unreached = job.rank * job.ranks + s;
            break;
        }
        mgpu_ipc_memory_close(mapped);
    }
    /* Also every rank's mapping is closed before its owner frees it. */
    MPI_Allreduce(MPI_IN_PLACE, &unreached, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (probe)
        mgpu_free(job.device, probe);
    if (!ready)
        return status != MGPU_OK ? status
                                 : mgpu_error_set(MGPU_ERR_USAGE,
                                                  "--exchange=ipc: a rank could not set up "
                                                  "CUDA IPC on its GPU (its own message says why)");
    if (shared >= 0) {
        int r = shared % job.ranks, s = shared / job.ranks;
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--exchange=ipc: ranks %d and %d drive one GPU (%s), and CUDA IPC "
                              "would order them across two contexts of it (accepted there: "
                              "staged, nccl; or a GPU for each rank)",
                              s, r, cards[r].bus_id);
    }
    if (unreached < job.ranks * job.ranks) {
        int r = unreached / job.ranks, s = unreached % job.ranks;
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--exchange=ipc: rank %d's GPU (%s) cannot map the memory of rank "
                              "%d's (%s): no peer access between them; use --exchange=staged",
                              r, cards[r].bus_id, s, cards[s].bus_id);
    }
    return MGPU_OK;
}

/* ipc: CUDA IPC, between the GPUs of one node that reach each other's
 * memory; no message travels, so none overlaps the inner rows. */
static mgpu_status ipc_usable(void)
{
    /* Across nodes first: there no backend could join the ranks. */
    if (job.hosts > 1) {
        char nodes[MGPU_MAX_DEVICES * 8];
        ranks_nodes_text(nodes, sizeof nodes);
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--exchange=ipc: CUDA IPC joins the ranks of one "
                              "node, and these run on %d (ranks by node: %s; "
                              "accepted across nodes: staged, mpi)",
                              job.hosts, nodes);
    }
    if (mgpu_backend_active() != MGPU_BACKEND_CUDA)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--exchange=ipc needs the cuda backend: a host "
                              "device's memory is private to its rank (the %s "
                              "backend supports: staged, mpi)",
                              mgpu_backend_name(mgpu_backend_active()));
    if (ranks_overlap)
        return mgpu_error_set(MGPU_ERR_USAGE, "--overlap: on overlaps the halo messages with the "
                                              "rows that read no halo, and --exchange=ipc sends "
                                              "none (accepted with ipc: --overlap=off)");
    return ipc_reach();
}

/* nccl: a build with NCCL and the cuda backend (mgpu_nccl_check), and
 * nothing for --overlap to overlap: the transfers are on the stream, ahead
 * of the compute.  Two ranks on one device are NCCL's to refuse (ranks may
 * each see one device of their own, CUDA_VISIBLE_DEVICES, and then the
 * devices they see say nothing of the devices they drive). */
static mgpu_status nccl_usable(void)
{
    MGPU_TRY(mgpu_nccl_check());
    if (ranks_overlap)
        return mgpu_error_set(MGPU_ERR_USAGE, "--overlap: on overlaps the halo messages with the "
                                              "rows that read no halo, and under "
                                              "--exchange=nccl the halos travel on the stream, "
                                              "ahead of the compute (accepted with nccl: "
                                              "--overlap=off)");
    return MGPU_OK;
}

/* --exchange=auto's order: the first mode this job can run is taken.  nccl
 * is run only where asked for by name (its communicators take long to set
 * up, and NCCL's own environment decides how it travels).  A mode added
 * here is added to the program's exchanges too. */
static const mgpu_exchange preferred[] = {MGPU_EXCHANGE_IPC, MGPU_EXCHANGE_MPI,
                                          MGPU_EXCHANGE_STAGED};

/* Whether this job can run MODE: MGPU_OK, or a usage error saying why. */
static mgpu_status usable(mgpu_exchange mode)
{
    switch (mode) {
    case MGPU_EXCHANGE_STAGED:
        return MGPU_OK;
    case MGPU_EXCHANGE_MPI:
        return mpi_usable();
    case MGPU_EXCHANGE_IPC:
        return ipc_usable();
    case MGPU_EXCHANGE_NCCL:
        return nccl_usable();
    default:
        return mgpu_error_set(MGPU_ERR_USAGE, "--exchange: no mode of %s can run this job",
                              ranks_program.name);
    }
}

/* --exchange: the mode asked for, if this job can run it; auto: the first
 * of PREFERRED it can.  Every rank chooses alike: the options, the backend
 * and the nodes are the job's. */
mgpu_status ranks_transport_choose(const mgpu_options *opt)
{
    job.aware = cuda_aware();
    if (opt->exchange != MGPU_EXCHANGE_AUTO) {
        MGPU_TRY(usable(opt->exchange));
        job.exchange = opt->exchange;
        return MGPU_OK;
    }
    for (size_t i = 0; i < sizeof preferred / sizeof preferred[0]; i++) {
        if (usable(preferred[i]) == MGPU_OK) {
            job.exchange = preferred[i];
            return MGPU_OK;
        }
    }
    return mgpu_error_set(MGPU_ERR_USAGE, "--exchange: no mode of %s can run this job",
                          ranks_program.name);
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

/* nccl: the id of the domain's communicator, made by its rank 0 and sent
 * to the others.  An id serves one communicator: every domain has its own.
 * Should rank 0 fail to make it, it ends the job, and the others wait in
 * MPI_Bcast until then. */
static mgpu_status nccl_id_share(const ranks_domain *dm, mgpu_nccl_id *id)
{
    if (dm->part == 0)
        MGPU_TRY(mgpu_nccl_id_create(id));
    MPI_Bcast(id->bytes, (int) sizeof id->bytes, MPI_BYTE, 0, dm->comm);
    return MGPU_OK;
}

/* ipc: where the ranks meet, at connecting and disconnecting only. */
static mgpu_status node_barrier(void *ctx)
{
    const ranks_domain *dm = ctx;
    MPI_Barrier(dm->comm);
    return MGPU_OK;
}

/* ipc: every rank's CUDA IPC handles to every rank, once (MPI_Allgather),
 * and its neighbours' buffers and signals opened. */
static mgpu_status ipc_connect(ranks_domain *dm)
{
    mgpu_ipc_part handles, parts[MGPU_MAX_DEVICES];
    MGPU_TRY(mgpu_ipc_halo_create(&dm->ipc, dm->st, dm->part, node_barrier, dm, &handles));
    MPI_Allgather(&handles, (int) sizeof handles, MPI_BYTE, parts, (int) sizeof handles, MPI_BYTE,
                  dm->comm);
    return mgpu_ipc_halo_connect(dm->ipc, parts);
}

/* staged: pinned host memory for the blocks MPI sends and receives. */
static mgpu_status staging_alloc(ranks_domain *dm)
{
    void *rows;
    MGPU_TRY(mgpu_host_alloc(4 * mgpu_stencil_block_bytes(dm->st), MGPU_HOST_PINNED, &rows));
    dm->staging = rows;
    return MGPU_OK;
}

/* This rank's domain: the one local part of a stencil domain of COMM's
 * ranks, and what its exchange mode adds to it. */
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
    desc.exchange = job.exchange == MGPU_EXCHANGE_IPC ? MGPU_EXCHANGE_IPC : MGPU_EXCHANGE_MPI;
    desc.first_part = dm->part;
    desc.local_parts = 1;
    desc.devices = devices;
    mgpu_nccl_id id;
    if (job.exchange == MGPU_EXCHANGE_NCCL) {
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
    MGPU_TRY(mgpu_event_create(job.device, 0, &dm->edges_ready));
    switch (job.exchange) {
    case MGPU_EXCHANGE_IPC:
        return ipc_connect(dm);
    case MGPU_EXCHANGE_STAGED:
        return staging_alloc(dm);
    default:
        return MGPU_OK;
    }
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

/* Staged: where the block neighbour N sent lies here (mgpu_edge_fn): the
 * pinned host block of its message, DOWN's from the rank above (its last
 * rows), UP's from the rank below (its first). */
static const float *received_edge(void *ctx, long long step, int n, mgpu_row edge)
{
    (void) n;
    return ranks_incoming(ctx, step, edge == MGPU_ROW_LAST ? DOWN : UP);
}

/* Staged: the received rows into the halos, on the stream, ahead of the
 * kernels that read them.  A fixed boundary receives nothing. */
mgpu_status ranks_halos_in(ranks_domain *dm, long long step)
{
    if (!dm->staging)
        return MGPU_OK;
    return mgpu_stencil_halos_in(dm->st, dm->part, step, received_edge, dm);
}

/* ---------------------------------------------- the steps of the modes */

/* One step, --overlap: the slab's inner rows read no halo, so their kernel
 * goes on the stream first, and the host waits only for the event behind
 * the rows to send before the messages go; the edge rows are computed once
 * the halos are in. */
mgpu_status ranks_step_overlapped(ranks_domain *dm, long long step, bool compute)
{
    mgpu_stencil *st = dm->st;
    int p = dm->part;
    mgpu_stream *stream = mgpu_stencil_stream(st, p);
    const mgpu_slab *slab = mgpu_stencil_slab(st, p);
    long long first = slab->row_begin, last = slab->row_end - 1;
    MGPU_TRY(ranks_edges_out(dm, step));
    MGPU_TRY(mgpu_event_record(dm->edges_ready, stream));
    if (compute && last - first > 1)
        MGPU_TRY(mgpu_stencil_compute_rows(st, p, step, first + 1, last, stream));
    MGPU_TRY(mgpu_event_synchronize(dm->edges_ready));
    mgpu_trace_begin(MGPU_TRACE_EXCHANGE, job.device, step);
    MPI_Request requests[4];
    for (int d = 0; d < 2; d++)
        MPI_Irecv(ranks_incoming(dm, step, d), 1, dm->block, dm->from[d], d, dm->comm,
                  &requests[d]);
    for (int d = 0; d < 2; d++)
        MPI_Isend(ranks_outgoing(dm, step, d), 1, dm->block, dm->to[d], d, dm->comm,
                  &requests[2 + d]);
    MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
    mgpu_status status = ranks_halos_in(dm, step);
    mgpu_trace_end();
    MGPU_TRY(status);
    if (!compute)
        return MGPU_OK;
    MGPU_TRY(mgpu_stencil_compute_rows(st, p, step, first, first + 1, stream));
    return last > first ? mgpu_stencil_compute_rows(st, p, step, last, last + 1, stream) : MGPU_OK;
}

/* One step, ipc: at the steps that exchange, the halos filled through the
 * neighbours' mapped buffers, on the stream, device to device; the host
 * waits for no device and sends no message (lib/ipc-halo.c says what
 * orders what). */
mgpu_status ranks_step_ipc(ranks_domain *dm, long long step, bool compute)
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
mgpu_status ranks_step_nccl(ranks_domain *dm, long long step, bool compute)
{
    MGPU_TRY(mgpu_stencil_send(dm->st, dm->part, step));
    MGPU_TRY(mgpu_stencil_recv(dm->st, dm->part, step));
    return compute ? mgpu_stencil_compute(dm->st, dm->part, step) : MGPU_OK;
}
