/* group.c - mgpu-mpi's ranks as the harness's group of processes: where
 * each rank runs, the options checked against the job, the domain a phase
 * of runs keeps, and the MPI calls the harness (run by every rank
 * together) meets the other ranks through: rank 0 alone prints,
 * a run takes as long as its slowest rank (MPI_Allreduce), the field is
 * gathered on rank 0 to be verified (MPI_Gatherv), and a rank that fails
 * ends the whole job with MPI_Abort: the others may be waiting for its
 * messages.
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

#include "mgpu/measurement.h"
#include "ranks.h"

ranks_job job;

/* ------------------------------------------------ where the ranks run */

void ranks_find_place(void)
{
    /* The ranks that share this node's memory share its devices too.  A
     * test may have every N ranks in turn taken as one node
     * (MGPU_MPI_RANKS_PER_NODE), so that the paths between nodes run on
     * one machine; a value that is not a count is refused by main. */
    MPI_Comm node;
    const char *pretend = getenv("MGPU_MPI_RANKS_PER_NODE");
    long long per_node = 0;
    if (pretend && (mgpu_parse_integer(pretend, &per_node) != 0 || per_node < 1 ||
                    per_node > MGPU_MAX_DEVICES)) {
        job.pretend_nodes = pretend;
        per_node = 0;
    }
    if (per_node > 0)
        MPI_Comm_split(MPI_COMM_WORLD, (int) (job.rank / per_node), job.rank, &node);
    else
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, job.rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &job.local_rank);
    MPI_Comm_size(node, &job.local_ranks);
    /* The ranks of a node run their host kernels side by side. */
    mgpu_host_share_cores(job.local_ranks);
    int leader = job.local_rank == 0, lowest, length;
    MPI_Allreduce(&leader, &job.hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&job.rank, &lowest, 1, MPI_INT, MPI_MIN, node);
    if (job.ranks <= MGPU_MAX_DEVICES)
        MPI_Allgather(&lowest, 1, MPI_INT, job.node_of, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    MPI_Get_processor_name(job.host, &length);
    snprintf(job.where, sizeof job.where, "rank %d on %s", job.rank, job.host);
    ranks_group.rank = job.rank;
    ranks_group.ranks = job.ranks;
    ranks_group.node = lowest;
}

/* Which ranks share a node, into TEXT (SIZE bytes): each node's ranks, as
 * runs FIRST-LAST or a rank alone, ',' between runs, ';' between nodes, the
 * nodes in the order of their lowest rank ("0-3;4-7").  What does not fit
 * is cut after a run and ends with "...". */
void ranks_nodes_text(char *text, size_t size)
{
    char all[MGPU_MAX_DEVICES * 8];
    size_t len = 0;
    all[0] = '\0';
    for (int node = 0; node < job.ranks; node++) {
        if (job.node_of[node] != node)
            continue;
        const char *sep = len ? ";" : "";
        for (int r = node; r < job.ranks; r++) {
            if (job.node_of[r] != node)
                continue;
            int last = r;
            while (last + 1 < job.ranks && job.node_of[last + 1] == node)
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

mgpu_status ranks_check(const mgpu_options *opt)
{
    if (opt->devices && opt->devices != job.ranks)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              MGPU_LAUNCH_REFUSAL "--devices: %d, but mpirun started %d rank%s, "
                                                  "one per device (accepted: %d, or leave it out)",
                              opt->devices, job.ranks, job.ranks == 1 ? "" : "s", job.ranks);
    if (job.ranks > MGPU_MAX_DEVICES)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              MGPU_LAUNCH_REFUSAL "mpirun -np %d: too many ranks (accepted: 1 "
                                                  "to %d, one per device)",
                              job.ranks, MGPU_MAX_DEVICES);
    if (opt->ny - 2 < job.ranks)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "mpirun -np %d: each rank needs an interior row, "
                              "but --ny=%lld has %lld (accepted: 1 to %lld ranks)",
                              job.ranks, opt->ny, opt->ny - 2, opt->ny - 2);
    /* Message sizes, strides and displacements are ints in MPI. */
    if (opt->nx > INT_MAX - 64 || opt->ny > INT_MAX)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--nx, --ny: %lld x %lld is too large for MPI's "
                              "int counts (accepted: nx up to %d, ny up to %d)",
                              opt->nx, opt->ny, INT_MAX - 64, INT_MAX);
    if (ranks_overlap && opt->halo > 1)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--overlap: on overlaps one-row halos with the rows "
                              "that read none, and --halo=%d exchanges %d rows "
                              "every %d steps (accepted with --halo above 1: "
                              "--overlap=off)",
                              opt->halo, opt->halo, opt->halo);
    return MGPU_OK;
}

/* The domain of the phase of runs going on: made at the first phase of its
 * size, kept for the next of the same size (the timed runs and the
 * exchanges alone: under ipc the handles are traded once), so that a rank
 * holds one slab at a time, and released after the last phase, before the
 * copy ceiling is measured. */
static struct {
    int nparts; /* the phase's parts; 0 before the first */
    bool held;  /* this rank holds one of them, in DM */
    ranks_domain dm;
} current;

static mgpu_stencil *held_stencil(void) { return current.held ? current.dm.st : NULL; }

static mgpu_status release_domain(void *ctx)
{
    (void) ctx;
    bool held = current.held;
    current.held = false;
    current.nparts = 0;
    return held ? ranks_domain_destroy(&current.dm) : MGPU_OK;
}

/* This rank's domain for a phase of NPARTS parts, ranks 0 to NPARTS-1; NULL
 * when it has no part (the others of the one-device baseline). */
mgpu_status ranks_domain_for(int nparts, const mgpu_options *opt, ranks_domain **dm)
{
    if (current.nparts != nparts) {
        MGPU_TRY(release_domain(NULL));
        MPI_Comm comm;
        MPI_Comm_split(MPI_COMM_WORLD, job.rank < nparts ? 0 : MPI_UNDEFINED, job.rank, &comm);
        current.nparts = nparts;
        if (comm != MPI_COMM_NULL) {
            current.held = true;
            MGPU_TRY(ranks_domain_create(&current.dm, comm, opt));
        }
    }
    *dm = current.held ? &current.dm : NULL;
    return MGPU_OK;
}

/* ------------------------------------ what the harness asks of the ranks */

void ranks_group_chosen(void)
{
    /* Each device's ceiling is measured by the first rank on it; the host
     * backend's "devices" share one memory per node. */
    bool cuda = mgpu_backend_active() == MGPU_BACKEND_CUDA;
    if (cuda ? job.local_rank < job.node_devices : job.local_rank == 0)
        ranks_group.ceiling_device = job.device;
    ranks_group.choice = (int) job.exchange * 8 + (int) mgpu_backend_active(); /* 3 backends */
}

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
    for (int r = 0; r < job.ranks; r++) {
        counts[r] = (int) (slabs[r].row_end - slabs[r].row_begin);
        first_rows[r] = (int) slabs[r].row_begin;
    }
    MPI_Datatype row;
    MPI_Type_contiguous((int) nx, MPI_FLOAT, &row);
    MPI_Type_commit(&row);
    MPI_Gatherv(rows, counts[job.rank], row, field, counts, first_rows, row, 0, MPI_COMM_WORLD);
    MPI_Type_free(&row);
}

static void end_job(void *ctx, int code)
{
    (void) ctx;
    /* nccl: this rank's transfers may wait for a peer that failed, and
     * its exit for them: the communicator goes first. */
    mgpu_stencil_abort(held_stencil());
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code); /* not reached: MPI_Abort does not return */
}

mgpu_group ranks_group = {
    .where = job.where,
    .ceiling_device = -1,
    .combine = combine,
    .broadcast = broadcast,
    .gather = gather,
    .gather_rows = gather_rows,
    .release = release_domain,
    .abort = end_job,
};

/* The record's fields of the job. */
void ranks_describe(mgpu_record *record)
{
    record->exchange = job.exchange;
    mgpu_record_set_boolean(record, "overlap", ranks_overlap != 0);
    mgpu_record_set_boolean(record, "cuda_aware", job.aware);
    mgpu_record_set_number(record, "hosts", job.hosts);
    /* "Open MPI v4.1.4, package: ..." is cut after the name and version. */
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(library, &length);
    library[strcspn(library, ",\n")] = '\0';
    mgpu_record_set_text(record, "mpi", library);
    char nodes[64];
    ranks_nodes_text(nodes, sizeof nodes);
    mgpu_record_set_text(record, "node_ranks", nodes);
}
