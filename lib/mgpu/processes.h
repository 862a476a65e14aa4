/* mgpu/processes.h - devices driven by several processes: worker processes
 * watched by their parent (lib/supervise.c), host memory and barriers they
 * share and CUDA IPC (lib/procs.c), halos between them through CUDA IPC
 * (lib/ipc-halo.c), NCCL communicators that span them (lib/nccl.c), and a
 * program run by a group of processes, mgpu-mpi's ranks (lib/harness.c).
 */
#ifndef MGPU_PROCESSES_H
#define MGPU_PROCESSES_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#include "mgpu.h"
#include "mgpu/harness.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------- workers in processes (lib/supervise.c) */

/* Worker processes (lib/supervise.c, book 10.2).  The program forks them
 * itself, N workers, and this library watches them:
 *     mgpu_workers *w;
 *     MGPU_TRY(mgpu_workers_create(&w, n));
 *     for (int i = 0; i < n; i++) {
 *         pid_t pid = fork();
 *         if (pid == 0) {
 *             mgpu_workers_enter(w);
 *             _exit(worker_main(i));      (0: success)
 *         }
 *         if (!mgpu_workers_add(w, i, pid))
 *             break;
 *     }
 *     status = mgpu_workers_wait(w, &interrupted);
 * Each worker dies with its parent, whatever ends the parent.  When one ends
 * badly (a status other than 0, a signal) or SIGINT or SIGTERM comes, the
 * others get SIGTERM, and SIGKILL half a second later: nobody waits forever
 * at a barrier.  A worker that can say why it failed records it where the
 * parent can read it (an mgpu_failure in shared memory).  Make no CUDA
 * context before: a child does not inherit it, and the CUDA runtime is not
 * fork-safe. */
typedef struct mgpu_workers mgpu_workers;
/* How a child process that signal SIGNO ended was killed, into TEXT:
 * "killed by signal 9 (Killed)", or, when it was SIGKILL and the kernel's
 * out-of-memory killer killed a process since OOM_BEFORE (mgpu_oom_kills
 * before the child started; -1: not known), "killed by the kernel's
 * out-of-memory killer (signal 9)". */
void mgpu_killed_text(int signo, long long oom_before, char *text, size_t size);
/* Before the forks of N workers: block SIGINT, SIGTERM and SIGCHLD in the
 * parent until mgpu_workers_wait takes them, and flush stdio so that no
 * child writes the parent's buffered output again. */
mgpu_status mgpu_workers_create(mgpu_workers **workers, int n);
/* In a worker, first, just after fork returned 0: it dies with the parent
 * (or exits at once if the parent is gone already), and gets the signal
 * mask the parent had before mgpu_workers_create. */
void mgpu_workers_enter(const mgpu_workers *workers);
/* In the parent, after the fork of worker INDEX (0, 1, ... in turn) returned
 * PID.  A PID below 0, a fork that failed (errno says why), returns 0: fork
 * no more, and mgpu_workers_wait stops those already running. */
int mgpu_workers_add(mgpu_workers *workers, int index, pid_t pid);
/* Wait (waitpid) until every worker has ended, stopping the others when one
 * ends badly or a signal comes (above); frees WORKERS and restores the
 * parent's signals.  MGPU_OK when every worker exited 0;
 * MGPU_ERR_INTERRUPTED when SIGINT or SIGTERM came, which *INTERRUPTED then
 * holds (a signal it already held stops the workers at once);
 * MGPU_ERR_SYSTEM naming the first bad end (a fork that failed, a worker
 * that was killed or exited with a status). */
mgpu_status mgpu_workers_wait(mgpu_workers *workers, int *interrupted);

/* ----------------------------------- shared memory, CUDA IPC (lib/procs.c) */

/* Page-lock BYTES of host memory at PTR that did not come from
 * mgpu_host_alloc, such as a mapping shared with other processes, so that
 * copies between it and a device are DMA and asynchronous on a stream
 * (cudaHostRegister).  Every process that copies registers it itself.  The
 * host backend has nothing to do. */
mgpu_status mgpu_host_register(void *ptr, size_t bytes);
void mgpu_host_unregister(void *ptr);

/* Initialise BARRIER, in memory that processes share (a MAP_SHARED mapping,
 * an MPI shared-memory window), for COUNT processes to wait at.  POSIX
 * barriers are there only when the feature macros ask for POSIX 2001 or
 * later (the C library's default; not -std=c11 alone). */
#if defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 200112L
mgpu_status mgpu_process_barrier_init(pthread_barrier_t *barrier, unsigned count);
#endif

/* CUDA IPC.  A handle is plain bytes naming one process's device memory;
 * another process receives it (through shared memory, a pipe, MPI)
 * and opens it.  The cuda backend only: a host-backend device's memory is
 * private to its process (MGPU_ERR_UNSUPPORTED). */
typedef struct mgpu_ipc_handle {
    unsigned char bytes[64];
} mgpu_ipc_handle;

/* The handle of PTR, the start of an mgpu_malloc allocation on DEVICE
 * (cudaIpcGetMemHandle). */
mgpu_status mgpu_ipc_memory_handle(int device, void *ptr, mgpu_ipc_handle *handle);
/* Map the memory that HANDLE names, made by another process, into this one
 * for DEVICE, the current device, enabling peer access to the owner's device
 * as needed (cudaIpcOpenMemHandle).  Needs peer access between the two
 * devices (mgpu_peer_can_access) when they differ. */
mgpu_status mgpu_ipc_memory_open(int device, const mgpu_ipc_handle *handle, void **ptr);
mgpu_status mgpu_ipc_memory_close(void *ptr);

/* --------------------------------- halos through CUDA IPC (lib/ipc-halo.c) */

/* Halos between processes of one node through CUDA IPC (lib/ipc-halo.c),
 * for a strategy whose processes hold one part each of a stencil domain
 * (mgpu-fork's workers, mgpu-mpi's ranks).  Each part publishes its buffers
 * and signals (an mgpu_ipc_part, plain bytes the strategy hands to every
 * other: shared memory, MPI) and maps its neighbours'; then the halos go
 * device to device, the kernels storing one-row halos straight into the
 * neighbours' buffers and deep halos copied at each exchange, on the
 * part's stream, ordered by the signals alone: no process waits for
 * another in a step (lib/ipc-halo.c has the orders and why they hold).  A
 * step of part P is, in every process alike:
 *     if (mgpu_stencil_exchanges_at(st, step)) mgpu_ipc_halo_exchange(h, step);
 *     mgpu_stencil_compute(st, P, step);   (left out for the exchanges alone)
 *     mgpu_ipc_halo_computed(h, step);
 * and a run starts with every part reset, its device synchronised, and a
 * barrier, and ends with every part's stream synchronised and a barrier
 * (until then a neighbour may still read or write the part's buffers).
 * The cuda backend only. */
typedef struct mgpu_ipc_part {
    int device; /* of the part, as its process numbers devices */
    /* Its GPU's UUID: the processes may number their devices otherwise, or
     * see only their own (CUDA_VISIBLE_DEVICES per rank). */
    char gpu[48];
    mgpu_ipc_handle buffer[2]; /* its two buffers */
    mgpu_ipc_handle signals;   /* the counters its neighbours write */
} mgpu_ipc_part;

typedef struct mgpu_ipc_halo mgpu_ipc_halo;
/* Returns once every process of the domain has called it. */
typedef mgpu_status (*mgpu_barrier_fn)(void *ctx);

/* For PART of STENCIL, held by this process: its signals, and its handles
 * into *MINE to publish.  After a failure *HALO, if not NULL, is to be
 * destroyed. */
mgpu_status mgpu_ipc_halo_create(mgpu_ipc_halo **halo, mgpu_stencil *stencil, int part,
                                 mgpu_barrier_fn barrier, void *ctx, mgpu_ipc_part *mine);
/* Once every part has published (PARTS, indexed by part): map the
 * neighbours' buffers and signals.  A neighbour on a device this process
 * sees and cannot reach is MGPU_ERR_USAGE; on one it does not see, the
 * mapping itself tells (cudaIpcOpenMemHandle opens handles of devices the
 * process does not see). */
mgpu_status mgpu_ipc_halo_connect(mgpu_ipc_halo *halo, const mgpu_ipc_part *parts);
/* At an exchange step: the waits for the neighbours and the copies that
 * their kernels did not do, on the part's stream. */
mgpu_status mgpu_ipc_halo_exchange(mgpu_ipc_halo *halo, long long step);
/* After STEP's compute was issued (or left out): the signals that order
 * the neighbours' next copies and passes. */
mgpu_status mgpu_ipc_halo_computed(mgpu_ipc_halo *halo, long long step);
/* After the last run: unmap the neighbours and meet them at the barrier,
 * after which the part's buffers may be freed. */
mgpu_status mgpu_ipc_halo_disconnect(mgpu_ipc_halo *halo);
/* Close whatever is open (also after a failure, without a barrier). */
void mgpu_ipc_halo_destroy(mgpu_ipc_halo *halo);

/* ------------------------------------------------- NCCL (lib/nccl.c) */

/* Exchange mode nccl: each part is rank PART of one NCCL communicator of
 * all the parts, whichever process holds it, so the same stencil domain
 * serves one process (a communicator per device) and several (mgpu-fork's
 * workers, MPI ranks on any hosts).  mgpu_stencil_send issues a part's whole
 * exchange, its ncclSend of each edge block and ncclRecv into each halo block
 * (in place: the blocks are contiguous), as one group on the part's stream;
 * recv has nothing left to do, and no host waits inside a run.
 *
 * Processes that each hold some parts share the communicator's id: one makes
 * it (mgpu_nccl_id_create), hands its bytes to the others (shared memory,
 * MPI_Bcast), and every one names it in mgpu_stencil_desc.nccl_id.  Creating
 * the domain joins the communicator, so it waits until every process has.
 * The process that made the id serves that meeting from a thread of its
 * own, and must live until all have joined.
 *
 * NVLink multicast (NVLS) is never used: before the first id or
 * communicator, NCCL_NVLS_ENABLE=0 is set where the environment leaves it
 * unset (multicast objects can take a shared machine's GPUs out of service,
 * and send/recv has no use for them). */
#define MGPU_NCCL_ID_BYTES 128
typedef struct mgpu_nccl_id {
    unsigned char bytes[MGPU_NCCL_ID_BYTES];
} mgpu_nccl_id;

/* 1 when this build has NCCL (configure --with-nccl). */
int mgpu_nccl_built(void);
/* Whether --exchange=nccl can run here: MGPU_ERR_USAGE, with a line that
 * says what is missing, in a build without NCCL or on the host backend
 * (whose devices have no device memory to share). */
mgpu_status mgpu_nccl_check(void);
/* A new communicator id (ncclGetUniqueId).  It makes no CUDA call, so a
 * parent may make it before it forks the workers that use it. */
mgpu_status mgpu_nccl_id_create(mgpu_nccl_id *id);

/* ------------------------------------ a group of processes (lib/harness.c) */

/* A program run by a group of processes, one device each (mgpu-mpi's ranks
 * under mpirun), that meet through a transport of the program's own: each
 * process runs the harness (mgpu_harness_group_start), which goes through
 * its phases in every one of them, together.  Process 0 alone prints (an error of the
 * command line, --help, the progress line, the record); a run takes as
 * long as its slowest process; each process's part of the final field is
 * gathered on process 0, which verifies it.  A process that cannot start
 * does not leave the others waiting: all learn it, the lowest such says
 * why, and all return its exit code.  A process that fails once the runs
 * began ends the whole group (ABORT), since the others may wait for it.
 * The calls below are collective (every process makes each, in the same
 * order) and do not return on a failure of the transport. */
typedef enum mgpu_group_op { MGPU_GROUP_MIN, MGPU_GROUP_MAX, MGPU_GROUP_SUM } mgpu_group_op;

typedef struct mgpu_group {
    int rank, ranks;   /* this process, of RANKS; part RANK of the grid */
    int node;          /* the lowest rank of the processes that share this
                          one's machine (its memory); RANK where unknown */
    const char *where; /* how this process names itself in a failure of its
                          own, not of the command line: "rank 1 on node7" */
    /* The device whose copy ceiling this process measures, one term of the
     * record's sum; -1 when another process measures its device.  Set
     * before mgpu_harness_group_ready. */
    int ceiling_device;
    /* What the process chose that every process must choose alike
     * (mgpu-mpi: the backend and the exchange mode, as one number), set
     * before mgpu_harness_group_ready: processes that differ would call
     * collectives the others never call. */
    int choice;
    void *ctx; /* passed to every call */
    /* VALUES[0..N) combined by OP over the processes, into every one's. */
    void (*combine)(void *ctx, mgpu_group_op op, double *values, int n);
    /* *VALUE of process ROOT into every process's. */
    void (*broadcast)(void *ctx, int *value, int root);
    /* BYTES at MINE from every process into ALL on process 0, in rank order
     * (ALL is ignored elsewhere). */
    void (*gather)(void *ctx, const void *mine, size_t bytes, void *all);
    /* Each process's part of the field, the interior rows of SLABS[rank]
     * at ROWS, nx floats apart, into FIELD (nx*ny floats) on process 0. */
    void (*gather_rows)(void *ctx, const float *rows, const mgpu_slab *slabs, long long nx,
                        float *field);
    /* After the last phase of runs, before the copy ceiling: free what the
     * processes kept from one phase to the next (NULL: nothing). */
    mgpu_status (*release)(void *ctx);
    /* End every process of the group now, with exit code CODE. */
    void (*abort)(void *ctx, int code);
} mgpu_group;

/* How a group's process begins its usage error (exit 2) when the group was
 * started other than its command line asks (a launcher's count of ranks
 * against --devices): a program that runs the launcher (mgpu-compare) then
 * knows a failed launch from a mode the backend cannot do. */
#define MGPU_LAUNCH_REFUSAL "the launch: "

/* The harness (mgpu/harness.h) in each process of GROUP, driven from the
 * program's main alike in every process:
 *
 *     mgpu_harness *h = mgpu_harness_group_start(&program, &group, argc, argv);
 *     const mgpu_options *opt = mgpu_harness_options(h);
 *     if (opt)
 *         mgpu_harness_group_ready(h, prepare(opt));
 *     for (mgpu_run *run; (run = mgpu_harness_next(h));)
 *         mgpu_harness_done(h, strategy(run));
 *     return mgpu_harness_end(h);
 *
 * mgpu_harness_group_start parses the command line (process 0 first; it
 * alone prints a usage error or --help); mgpu_program_start is the
 * program's to call before, ahead of its transport's files.  The options
 * are NULL when the program ends there.  Each process then prepares its own
 * device (the options against the group, the backend by mgpu_init, the
 * device made current, the group's CEILING_DEVICE and CHOICE set) and hands
 * how that went to mgpu_harness_group_ready, which checks the request in
 * every process together.  Each phase of runs is the strategy's in every
 * process; with RUN->ndevices below the group's size (the one-device
 * baseline), the processes beyond it have no part and return at once.
 * mgpu_harness_end returns the exit code, the same in every process. */
mgpu_harness *mgpu_harness_group_start(const mgpu_program *program, const mgpu_group *group,
                                       int argc, char **argv);
const mgpu_options *mgpu_harness_options(const mgpu_harness *h);
void mgpu_harness_group_ready(mgpu_harness *h, mgpu_status prepared);

#ifdef __cplusplus
}
#endif

#endif /* MGPU_PROCESSES_H */
