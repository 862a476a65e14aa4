/* transports.c - mgpu-mpi's exchange modes beside the messages of mpi.c:
 * whether the MPI library takes device memory (--exchange=mpi), --overlap's
 * MPI_Isend/MPI_Irecv behind the inner rows, CUDA IPC between the ranks of
 * one node (--exchange=ipc), NCCL (--exchange=nccl), and the choice among
 * them.
 *
 * ipc: ranks that share a node can do without messages: they trade CUDA IPC
 * handles of their buffers and signals once (MPI_Allgather), then their
 * kernels store edge rows straight into the neighbours' mapped halos (or,
 * with deep halos, each copies its neighbours' edge rows device to device),
 * ordered on the devices by the signals alone, as mgpu-fork's workers do
 * (lib/ipc-halo.c).
 *
 * nccl: the ranks are the ranks of an NCCL communicator, on one node or
 * several: rank 0 makes its id and sends it to the others (MPI_Bcast), and
 * the stencil domain does the rest (lib/exchange.c): each exchange is one
 * NCCL group of ncclSend and ncclRecv on the rank's stream, issued without
 * the host waiting for anything, and the host waits for the device only at
 * the end of a run.  A rank that fails aborts its communicator before it
 * ends the job (group.c), so that none of its kernels waits for a peer that
 * is gone.
 */
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

/* nccl: the id of the domain's communicator, made by its rank 0 and sent
 * to the others.  An id serves one communicator: every domain has its own.
 * Should rank 0 fail to make it, it ends the job, and the others wait in
 * MPI_Bcast until then. */
mgpu_status ranks_nccl_id_share(const ranks_domain *dm, mgpu_nccl_id *id)
{
    if (dm->part == 0)
        MGPU_TRY(mgpu_nccl_id_create(id));
    MPI_Bcast(id->bytes, (int) sizeof id->bytes, MPI_BYTE, 0, dm->comm);
    return MGPU_OK;
}

/* One step, --overlap: the slab's inner rows read no halo, so their kernel
 * goes on the stream first, and the host waits only for the event behind
 * the rows to send before the messages go; the edge rows are computed once
 * the halos are in. */
static mgpu_status step_overlapped(ranks_domain *dm, long long step, bool compute)
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

/* staged and mpi: MPI_Sendrecv, then compute (mpi.c), or --overlap's
 * messages behind the inner rows. */
static mgpu_status step_messages(ranks_domain *dm, long long step, bool compute)
{
    return ranks_overlap ? step_overlapped(dm, step, compute) : ranks_step_plain(dm, step, compute);
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

/* One step, ipc: at the steps that exchange, the halos filled through the
 * neighbours' mapped buffers, on the stream, device to device; the host
 * waits for no device and sends no message (lib/ipc-halo.c says what
 * orders what). */
static mgpu_status step_ipc(ranks_domain *dm, long long step, bool compute)
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
static mgpu_status step_nccl(ranks_domain *dm, long long step, bool compute)
{
    MGPU_TRY(mgpu_stencil_send(dm->st, dm->part, step));
    MGPU_TRY(mgpu_stencil_recv(dm->st, dm->part, step));
    return compute ? mgpu_stencil_compute(dm->st, dm->part, step) : MGPU_OK;
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
static mgpu_status ipc_usable(const mgpu_options *opt)
{
    (void) opt;
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
static mgpu_status nccl_usable(const mgpu_options *opt)
{
    (void) opt;
    MGPU_TRY(mgpu_nccl_check());
    if (ranks_overlap)
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
static const ranks_transport transports[] = {
    {MGPU_EXCHANGE_IPC, ipc_usable, ipc_connect, step_ipc, false},
    {MGPU_EXCHANGE_MPI, mpi_usable, NULL, step_messages, false},
    {MGPU_EXCHANGE_STAGED, staged_usable, ranks_staging_alloc, step_messages, false},
    {MGPU_EXCHANGE_NCCL, nccl_usable, NULL, step_nccl, true},
};

/* --exchange: the mode asked for, if this job can run it; auto: the first
 * of the table it can.  Every rank chooses alike: the options, the backend
 * and the nodes are the job's. */
mgpu_status ranks_transport_choose(const mgpu_options *opt)
{
    job.aware = cuda_aware();
    for (size_t i = 0; i < sizeof transports / sizeof transports[0]; i++) {
        const ranks_transport *t = &transports[i];
        if (opt->exchange == MGPU_EXCHANGE_AUTO ? t->named_only : opt->exchange != t->mode)
            continue;
        mgpu_status status = t->usable(opt);
        if (status == MGPU_OK) {
            job.transport = t;
            return MGPU_OK;
        }
        if (opt->exchange != MGPU_EXCHANGE_AUTO)
            return status;
    }
    return mgpu_error_set(MGPU_ERR_USAGE, "--exchange: no mode of %s can run this job",
                          ranks_program.name);
}
