/* ranks.h - what the files of mgpu-mpi share: where a rank runs, its part
 * of the grid, and how its halos travel. */
#ifndef RANKS_H
#define RANKS_H

#include <stdbool.h>
#include <stddef.h>

#include <mpi.h>

#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/processes.h"

/* The program and its own option (mpi.c): --overlap, an index of its names
 * (1: on). */
extern const mgpu_program ranks_program;
extern long long ranks_overlap;

/* Where this process is in the job (group.c finds it). */
typedef struct ranks_job {
    int rank, ranks;             /* in MPI_COMM_WORLD */
    int local_rank, local_ranks; /* among the ranks of this node */
    int hosts;
    const char *pretend_nodes;     /* MGPU_MPI_RANKS_PER_NODE when it is not a count */
    int node_of[MGPU_MAX_DEVICES]; /* each rank's node, named by its lowest rank
                                      (unknown beyond MGPU_MAX_DEVICES ranks) */
    int node_devices;              /* devices this rank sees */
    int device;                    /* the one it drives */
    int aware;                     /* the MPI takes device memory (transports.c) */
    mgpu_exchange exchange;        /* the job's, --exchange=auto resolved */
    char cpus[MGPU_BIND_TEXT];     /* the CPUs it runs on (--bind) */
    char host[MPI_MAX_PROCESSOR_NAME];
    char where[MPI_MAX_PROCESSOR_NAME + 32]; /* "rank R on HOST" */
} ranks_job;
extern ranks_job job;

/* ------------------------------- how halos travel (transports.c) */

/* The ranks of a phase of runs (a communicator of their own), this rank's
 * slab of the grid, and where its halos come from and go to. */
typedef struct ranks_domain {
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
} ranks_domain;

/* --exchange: job.exchange and job.aware, alike in every rank. */
mgpu_status ranks_transport_choose(const mgpu_options *opt);
/* How a message names job.aware: yes, no, unknown. */
const char *ranks_cuda_aware_name(int aware);
/* The domain, made and freed in every rank of COMM at once. */
mgpu_status ranks_domain_create(ranks_domain *dm, MPI_Comm comm, const mgpu_options *opt);
mgpu_status ranks_domain_destroy(ranks_domain *dm);
/* The memory MPI sends direction D's block from and receives it into. */
float *ranks_outgoing(const ranks_domain *dm, long long step, int d);
float *ranks_incoming(const ranks_domain *dm, long long step, int d);
/* staged: the edge rows copied out to the pinned host blocks, and the
 * received rows copied into the halos, on the stream. */
mgpu_status ranks_edges_out(ranks_domain *dm, long long step);
mgpu_status ranks_halos_in(ranks_domain *dm, long long step);
/* One step in the modes beside mpi.c's messages: --overlap's, ipc's and
 * nccl's; with COMPUTE false the kernels are left out. */
mgpu_status ranks_step_overlapped(ranks_domain *dm, long long step, bool compute);
mgpu_status ranks_step_ipc(ranks_domain *dm, long long step, bool compute);
mgpu_status ranks_step_nccl(ranks_domain *dm, long long step, bool compute);

/* ------------------------------- the ranks as the harness's group (group.c) */

/* What the harness meets the other ranks through: MPI calls. */
extern mgpu_group ranks_group;
/* After MPI_Init and job.rank, job.ranks: the ranks of this node, the hosts,
 * and where this rank is. */
void ranks_find_place(void);
/* Once this rank chose its device and the exchange mode: what the harness
 * must know of them (ranks_group.ceiling_device, .choice). */
void ranks_group_chosen(void);
/* The options against the job: a usage error, or MGPU_OK. */
mgpu_status ranks_check(const mgpu_options *opt);
/* Which ranks share a node, into TEXT (SIZE bytes): "0-3;4-7". */
void ranks_nodes_text(char *text, size_t size);
/* This rank's domain for a phase of NPARTS parts (*DM NULL: it has none). */
mgpu_status ranks_domain_for(int nparts, const mgpu_options *opt, ranks_domain **dm);
/* The record's fields of the job. */
void ranks_describe(mgpu_record *record);

#endif /* RANKS_H */
