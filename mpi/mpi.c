/* mpi.c - mgpu-mpi: one MPI rank per device, on one host or several (book 10.3).
 *
 * mpirun starts the program once per device.  Each rank holds one slab of
 * the grid on the device its rank within its node picks, and trades halo
 * rows with the ranks above and below it in messages: straight from device
 * memory when the MPI library is CUDA-aware (--exchange=mpi), through pinned
 * host buffers otherwise (--exchange=staged).  With --halo=K a message
 * carries K rows, every K steps, and the steps between compute the rows
 * still valid (the stencil domain's passes).  With --overlap (one-row halos)
 * the rows that read no halo are computed while the messages travel.  Rank 0 gathers the
 * field, verifies it and prints the record.  A rank that fails ends the
 * whole job with MPI_Abort: the others may be waiting for its messages.
 *
 * MPI errors are not checked call by call: the default error handler,
 * MPI_ERRORS_ARE_FATAL, already ends the whole job on any of them.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#ifdef HAVE_MPI_EXT_H
#include <mpi-ext.h> /* Open MPI's MPIX_Query_cuda_support */
#endif

#include "mgpu.h"
#include "trace.h"

static const char *const overlap_names[] = {"off", "on", NULL};
static long long overlap; /* an index of overlap_names: 1 on */

static const mgpu_extra_option extra[] = {
    {"overlap", "on: compute the rows that read no halo while the halos travel "
                "(MPI_Isend/MPI_Irecv); off: MPI_Sendrecv, then compute",
     overlap_names, 0, 1, 0, &overlap, "on"},
    {NULL, NULL, NULL, 0, 0, 0, NULL, NULL},
};

static const mgpu_program program = {
    .name = "mgpu-mpi",
    .strategy = "mpi",
    .summary = "one MPI rank per device, on one host or several: mpirun -np N mgpu-mpi",
    .exchanges = MGPU_EXCHANGES_OF(MGPU_BY_MPI),
    .extra = extra,
    .deep_halo = 1,
};

/* Where this process is in the job. */
static struct {
    int rank, ranks;             /* in MPI_COMM_WORLD */
    int local_rank, local_ranks; /* among the ranks of this node */
    int hosts;
    int node_devices;            /* devices this rank sees */
    int device;                  /* the one it drives */
    char cpus[MGPU_BIND_TEXT];   /* the CPUs it runs on (--bind) */
    char host[MPI_MAX_PROCESSOR_NAME];
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
    MPI_Comm_free(&node);
    /* The ranks of a node run their host kernels side by side. */
    mgpu_host_share_cores(me.local_ranks);
    int leader = me.local_rank == 0, length;
    MPI_Allreduce(&leader, &me.hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Get_processor_name(me.host, &length);
}

/* Rank 0's progress line, cleared before an error is printed (a static is
 * off until rank 0 turns it on). */
static mgpu_progress shown;

/* A rank that fails ends the job; the line says which rank, where and why. */
static void abort_job(int code, const char *why)
{
    mgpu_progress_end(&shown);
    mgpu_error(&program, "rank %d on %s: %s", me.rank, me.host, why);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code); /* not reached: MPI_Abort does not return */
}

static void check(mgpu_status status)
{
    if (status != MGPU_OK)
        abort_job(mgpu_exit_code(status), mgpu_error_message(status));
}

/* The record's binding: each rank's CPUs, gathered on rank 0. */
static void describe_binding(mgpu_record *record)
{
    char *all = me.rank == 0 ? calloc((size_t) me.ranks, MGPU_BIND_TEXT) : NULL;
    static mgpu_binding binding;
    if (me.rank == 0 && !all)
        abort_job(1, "out of host memory");
    MPI_Gather(me.cpus, MGPU_BIND_TEXT, MPI_CHAR, all, MGPU_BIND_TEXT, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    for (int r = 0; all && r < me.ranks && r < MGPU_MAX_DEVICES; r++)
        memcpy(binding.cpus[r], all + (size_t) r * MGPU_BIND_TEXT, MGPU_BIND_TEXT);
    if (all)
        mgpu_record_set_binding(record, &binding);
    free(all);
}

/* ------------------------------------------------------------ starting */

/* Rank 0 reads the command line first and alone prints a usage error,
 * --help or --version; the others read it only when rank 0 goes on (mpirun
 * gives every rank the same command line), so one message, not N. */
static int parse(mgpu_options *opt, int argc, char **argv)
{
    int code = -1;
    if (me.rank == 0)
        code = mgpu_options_parse(opt, &program, argc, argv);
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (code < 0 && me.rank != 0)
        code = mgpu_options_parse(opt, &program, argc, argv);
    return code;
}

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

enum { WHY_SIZE = 256 };

/* Write why the job cannot start into WHY (WHY_SIZE bytes); return CODE. */
static int refuse(char *why, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int refuse(char *why, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, WHY_SIZE, fmt, ap);
    va_end(ap);
    return code;
}

static int refuse_status(char *why, mgpu_status status)
{
    return refuse(why, mgpu_exit_code(status), "%s", mgpu_error_message(status));
}

/* Check the request against the job, choose the backend, this rank's
 * device and the exchange mode.  Returns -1 to go on, or the exit code
 * with the reason in WHY. */
static int setup(const mgpu_options *opt, mgpu_exchange *mode, int *aware, char *why)
{
    if (opt->devices && opt->devices != me.ranks)
        return refuse(why, 2, "--devices: %d, but mpirun started %d rank%s, one per device "
                              "(accepted: %d, or leave it out)",
                      opt->devices, me.ranks, me.ranks == 1 ? "" : "s", me.ranks);
    if (me.ranks > MGPU_MAX_DEVICES)
        return refuse(why, 2, "mpirun -np %d: too many ranks (accepted: 1 to %d, one per "
                              "device)", me.ranks, MGPU_MAX_DEVICES);
    if (opt->ny - 2 < me.ranks)
        return refuse(why, 2, "mpirun -np %d: each rank needs an interior row, but --ny=%lld "
                              "has %lld (accepted: 1 to %lld ranks)",
                      me.ranks, opt->ny, opt->ny - 2, opt->ny - 2);
    /* Message sizes, strides and displacements are ints in MPI. */
    if (opt->nx > INT_MAX - 64 || opt->ny > INT_MAX)
        return refuse(why, 2, "--nx, --ny: %lld x %lld is too large for MPI's int counts "
                              "(accepted: nx up to %d, ny up to %d)",
                      opt->nx, opt->ny, INT_MAX - 64, INT_MAX);

    if (overlap && opt->halo > 1)
        return refuse(why, 2, "--overlap: on overlaps one-row halos with the rows that read "
                              "none, and --halo=%d exchanges %d rows every %d steps (accepted "
                              "with --halo above 1: --overlap=off)",
                      opt->halo, opt->halo, opt->halo);
    mgpu_status status = mgpu_halo_check(opt->halo, opt->ny, me.ranks);
    if (status == MGPU_OK)
        status = mgpu_fault_validate(me.ranks, opt->steps);
    if (status != MGPU_OK)
        return refuse_status(why, status);

    /* The host backend gives each rank of a node a "device" of its own. */
    int host_devices = me.local_ranks < MGPU_MAX_DEVICES ? me.local_ranks : MGPU_MAX_DEVICES;
    status = mgpu_init(opt->backend, host_devices);
    if (status == MGPU_OK)
        status = mgpu_device_count(&me.node_devices);
    if (status != MGPU_OK)
        return refuse_status(why, status);
    /* The ranks of a node take its devices in turn, so the same command
     * runs one rank per device on one host or on many. */
    me.device = me.local_rank % me.node_devices;
    /* The rank is its device's worker: bound before its context exists, so
     * that the threads CUDA makes for it run near the device too.  On the
     * host backend the ranks of a node share its CPUs out. */
    mgpu_bind_worker(opt->bind, me.device, me.local_ranks, me.cpus);
    if ((status = mgpu_device_set(me.device)) != MGPU_OK)
        return refuse_status(why, status);

    *aware = cuda_aware();
    bool device_buffers = mgpu_backend_active() != MGPU_BACKEND_CUDA || *aware > 0;
    if (opt->exchange == MGPU_EXCHANGE_MPI && !device_buffers)
        return refuse(why, 2, "--exchange=mpi: this MPI library %s device memory "
                              "(CUDA-aware: %s); use --exchange=staged",
                      *aware == 0 ? "cannot take" : "does not say whether it takes",
                      cuda_aware_name(*aware));
    *mode = opt->exchange;
    if (*mode == MGPU_EXCHANGE_AUTO)
        *mode = device_buffers ? MGPU_EXCHANGE_MPI : MGPU_EXCHANGE_STAGED;
    return -1;
}

/* Every rank learns whether any rank cannot start.  The lowest such rank
 * prints why, and every rank returns its exit code: one message, one code,
 * and nobody left waiting in a collective the others never reach. */
static int agree(int code, const char *why)
{
    int mine = code >= 0 ? me.rank : me.ranks, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == me.ranks)
        return -1;
    /* What rank 0 finds wrong is wrong for all (the command line); what
     * another rank finds may be its host's own trouble: it says where. */
    if (me.rank == first && first == 0)
        mgpu_error(&program, "%s", why);
    else if (me.rank == first)
        mgpu_error(&program, "rank %d on %s: %s", me.rank, me.host, why);
    MPI_Bcast(&code, 1, MPI_INT, first, MPI_COMM_WORLD);
    return code;
}

/* ------------------------------------------------------ one run's domain */

/* The ranks of a run, this rank's slab of the grid, and where its halo
 * messages come from and go to. */
typedef struct domain {
    MPI_Comm comm;           /* part p of the grid is rank p of COMM */
    mgpu_stencil *st;
    int part;
    int nx;
    int to[2], from[2];      /* per direction; MPI_PROC_NULL at a fixed boundary */
    size_t block_floats;     /* a block of --halo rows, padding between them included */
    MPI_Datatype block;      /* what a message carries: --halo rows of nx floats */
    float *staging;          /* staged: pinned blocks, outgoing UP, DOWN, incoming UP, DOWN */
    mgpu_event *edges_ready; /* --overlap: the rows to send are ready */
} domain;

/* The two messages of an exchange.  UP carries a slab's first K rows to the
 * rank above, into its bottom halo; DOWN its last K rows to the rank below,
 * into its top halo (K: --halo, the rows of the stencil domain's blocks).
 * The direction is the tag, so the two messages between one pair of ranks
 * (two ranks, or one: jacobi is periodic) never mix. */
enum { UP, DOWN };
static const mgpu_row outgoing_row[2] = {MGPU_ROW_FIRST, MGPU_ROW_LAST};
static const mgpu_row incoming_row[2] = {MGPU_ROW_HALO_BOTTOM, MGPU_ROW_HALO_TOP};

static int rank_of(int part) { return part >= 0 ? part : MPI_PROC_NULL; }

static mgpu_status domain_create(domain *dm, MPI_Comm comm, const mgpu_options *opt,
                                 mgpu_exchange mode)
{
    int nparts;
    memset(dm, 0, sizeof *dm);
    dm->block = MPI_DATATYPE_NULL;
    dm->comm = comm;
    MPI_Comm_rank(comm, &dm->part);
    MPI_Comm_size(comm, &nparts);
    dm->nx = (int) opt->nx;
    int devices[MGPU_MAX_DEVICES] = {0};
    devices[dm->part] = me.device;
    /* The domain holds the one local part; the halos are this file's job. */
    mgpu_stencil_desc desc = {
        .nx = opt->nx, .ny = opt->ny, .kernel = opt->kernel, .exchange = MGPU_EXCHANGE_MPI,
        .seed = opt->seed, .nparts = nparts, .first_part = dm->part, .local_parts = 1,
        .devices = devices, .halo = opt->halo, .time_block = opt->time_block,
        .steps = opt->steps,
    };
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
    if (mode == MGPU_EXCHANGE_STAGED) {
        void *rows;
        MGPU_TRY(mgpu_host_alloc(4 * mgpu_stencil_block_bytes(dm->st), MGPU_HOST_PINNED, &rows));
        dm->staging = rows;
    }
    return MGPU_OK;
}

static void domain_destroy(domain *dm)
{
    if (dm->block != MPI_DATATYPE_NULL)
        MPI_Type_free(&dm->block);
    mgpu_event_destroy(dm->edges_ready);
    mgpu_host_free(dm->staging);
    mgpu_stencil_destroy(dm->st);
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
            MPI_Sendrecv(outgoing(dm, step, d), 1, dm->block, dm->to[d], d,
                         incoming(dm, step, d), 1, dm->block, dm->from[d], d, dm->comm,
                         MPI_STATUS_IGNORE);
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
        MPI_Isend(outgoing(dm, step, d), 1, dm->block, dm->to[d], d, dm->comm,
                  &requests[2 + d]);
    MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
    mgpu_status status = halos_in(dm, step);
    mgpu_trace_end();
    MGPU_TRY(status);
    if (!compute)
        return MGPU_OK;
    MGPU_TRY(mgpu_stencil_compute_rows(st, p, step, first, first + 1, stream));
    return last > first ? mgpu_stencil_compute_rows(st, p, step, last, last + 1, stream)
                        : MGPU_OK;
}

/* STEPS steps from the field the domain holds; with COMPUTE false the
 * kernels are left out (the exchanges alone). */
static mgpu_status run_steps(domain *dm, long long steps, bool compute,
                             mgpu_progress *progress)
{
    for (long long step = 0; step < steps; step++) {
        mgpu_trace_begin(MGPU_TRACE_STEP, me.device, step);
        mgpu_status status = overlap ? step_overlapped(dm, step, compute)
                                     : step_plain(dm, step, compute);
        mgpu_trace_end();
        MGPU_TRY(status);
        mgpu_progress_step(progress, step + 1);
    }
    return mgpu_stencil_synchronize(dm->st, dm->part);
}

/* WARMUP untimed runs, then REPEATS timed ones into SECONDS, each from the
 * initial field.  A run takes as long as its slowest rank, from a common
 * start (a barrier) to the end of that rank's last step on its device.
 * PROGRESS (rank 0's, NULL elsewhere) shows them as WHAT. */
static mgpu_status run_timed(domain *dm, const mgpu_options *opt, bool compute, int warmup,
                             int repeats, double *seconds, mgpu_progress *progress,
                             const char *what)
{
    mgpu_progress_begin(progress, what, warmup, repeats, compute);
    for (int r = 0; r < warmup + repeats; r++) {
        MGPU_TRY(mgpu_stencil_reset(dm->st, dm->part));
        MPI_Barrier(dm->comm);
        mgpu_progress_run(progress, r);
        double start = mgpu_now();
        MGPU_TRY(run_steps(dm, opt->steps, compute, progress));
        double mine = mgpu_now() - start, slowest;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, dm->comm);
        if (r >= warmup)
            seconds[r - warmup] = slowest;
    }
    return MGPU_OK;
}

/* The field after the last run, on rank 0 (FIELD, nx*ny floats; NULL on
 * the other ranks): every slab's rows in rank order, and the outer rows
 * made as every strategy makes them (see mgpu_stencil_gather). */
static mgpu_status gather(domain *dm, const mgpu_options *opt, float *field)
{
    mgpu_stencil *st = dm->st;
    const mgpu_slab *slab = mgpu_stencil_slab(st, dm->part);
    int rows = (int) (slab->row_end - slab->row_begin);
    int pitch = (int) mgpu_stencil_pitch(st, dm->part);
    /* The slab as it lies on the device, rows PITCH floats apart, in one
     * copy; an MPI vector type then sends the NX used floats of each row. */
    size_t span = (size_t) (rows - 1) * (size_t) pitch + (size_t) dm->nx;
    void *host;
    MGPU_TRY(mgpu_host_alloc(span * sizeof(float), MGPU_HOST_PINNED, &host));
    mgpu_status status = mgpu_memcpy(host, device_block(dm, opt->steps, MGPU_ROW_FIRST),
                                     span * sizeof(float));
    if (status != MGPU_OK) {
        mgpu_host_free(host);
        return status;
    }
    int nparts, counts[MGPU_MAX_DEVICES], first_rows[MGPU_MAX_DEVICES];
    MPI_Comm_size(dm->comm, &nparts);
    for (int q = 0; q < nparts; q++) {
        const mgpu_slab *s = mgpu_stencil_slab(st, q);
        counts[q] = (int) (s->row_end - s->row_begin);
        first_rows[q] = (int) s->row_begin;
    }
    MPI_Datatype slab_rows, row;
    MPI_Type_vector(rows, dm->nx, pitch, MPI_FLOAT, &slab_rows);
    MPI_Type_contiguous(dm->nx, MPI_FLOAT, &row);
    MPI_Type_commit(&slab_rows);
    MPI_Type_commit(&row);
    MPI_Gatherv(host, 1, slab_rows, field, counts, first_rows, row, 0, dm->comm);
    MPI_Type_free(&slab_rows);
    MPI_Type_free(&row);
    mgpu_host_free(host);
    if (dm->part == 0) {
        size_t nx = (size_t) opt->nx, last = (size_t) opt->ny - 1;
        mgpu_field_initial_rows(field, nx, opt->kernel, opt->nx, opt->ny, 0, 1, opt->seed);
        mgpu_field_initial_rows(field + last * nx, nx, opt->kernel, opt->nx, opt->ny,
                                opt->ny - 1, 1, opt->seed);
        mgpu_field_fill_halo_rows(field, opt->kernel, opt->nx, opt->ny);
    }
    return MGPU_OK;
}

/* ------------------------------------------------------------ the job */

static void describe(mgpu_record *record, mgpu_exchange mode, int aware)
{
    record->devices = me.ranks;
    record->exchange = mode;
    record->exchanges = mgpu_exchanges_per_run(record->kernel, me.ranks, record->steps,
                                               record->halo);
    mgpu_record_set_text(record, "overlap", overlap ? "yes" : "no");
    mgpu_record_set_text(record, "cuda_aware", cuda_aware_name(aware));
    mgpu_record_set_number(record, "hosts", me.hosts);
    /* "Open MPI v4.1.4, package: ..." is cut after the name and version. */
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(library, &length);
    library[strcspn(library, ",\n")] = '\0';
    mgpu_record_set_text(record, "mpi", library);
}

/* What mgpu_main does for the strategies of one process, by every rank:
 * the timed steps, the exchanges alone, one device for --baseline, the copy
 * ceiling; then rank 0 verifies and prints the record.  Returns the exit
 * code, the same on every rank. */
static int measure(const mgpu_options *opt, mgpu_exchange mode, int aware)
{
    mgpu_record record;
    mgpu_record_init(&record, &program, opt);
    describe(&record, mode, aware);
    describe_binding(&record);
    double *seconds = calloc((size_t) opt->repeat, sizeof *seconds);
    if (!seconds)
        abort_job(1, "out of host memory");
    bool verify = opt->verify != MGPU_VERIFY_NONE;
    float *field = NULL;
    if (verify && me.rank == 0) {
        size_t bytes = (size_t) opt->nx * (size_t) opt->ny * sizeof *field;
        if (!(field = malloc(bytes)))
            abort_job(1, "the gathered field: out of host memory");
    }

    /* Rank 0 alone shows the progress: all ranks step together. */
    mgpu_progress *progress = NULL;
    if (me.rank == 0) {
        mgpu_progress_init(&shown, opt, stderr);
        progress = &shown;
    }
    domain dm;
    check(domain_create(&dm, MPI_COMM_WORLD, opt, mode));
    check(run_timed(&dm, opt, true, opt->warmup, opt->repeat, seconds, progress, NULL));
    record.time = mgpu_stats_of(seconds, opt->repeat);
    if (verify)
        check(gather(&dm, opt, field));
    /* The same steps with the kernels left out: the exchange's share. */
    record.exchange_s = 0.0;
    if (me.ranks > 1 || opt->kernel == MGPU_KERNEL_JACOBI) {
        check(run_timed(&dm, opt, false, 1, opt->repeat, seconds, progress,
                        "exchanges alone"));
        record.exchange_s = mgpu_stats_of(seconds, opt->repeat).median;
    }
    domain_destroy(&dm);

    record.baseline_s = opt->baseline ? record.time.median : 0.0;
    if (opt->baseline && me.ranks > 1) {
        /* Rank 0 alone, in a communicator of its own, runs the whole grid
         * on its device: the same program on one device. */
        MPI_Comm solo;
        MPI_Comm_split(MPI_COMM_WORLD, me.rank == 0 ? 0 : MPI_UNDEFINED, 0, &solo);
        if (solo != MPI_COMM_NULL) {
            check(domain_create(&dm, solo, opt, mode));
            check(run_timed(&dm, opt, true, opt->warmup, opt->repeat, seconds, progress,
                            "1 device"));
            record.baseline_s = mgpu_stats_of(seconds, opt->repeat).median;
            domain_destroy(&dm);
            MPI_Comm_free(&solo);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* no copy below runs beside the baseline */
    }
    free(seconds);

    /* Each device's ceiling, measured by the first rank on it, summed; the
     * host backend's "devices" share one memory per node. */
    double ceiling = 0.0;
    bool measures = mgpu_backend_active() == MGPU_BACKEND_CUDA ? me.local_rank < me.node_devices
                                                               : me.local_rank == 0;
    if (measures)
        check(mgpu_copy_ceiling_device(me.device,
                                       (size_t) opt->nx * (size_t) opt->ny * sizeof(float),
                                       &ceiling));
    /* A device whose ceiling was not measured (its grid fits in its cache)
     * leaves the sum without its term: then there is no ceiling at all. */
    int unmeasured = measures && ceiling <= 0.0, any_unmeasured = 0;
    MPI_Reduce(&ceiling, &record.copy_gbps, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&unmeasured, &any_unmeasured, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (any_unmeasured)
        record.copy_gbps = 0.0;

    int code = 0;
    if (me.rank == 0) {
        if (field)
            mgpu_progress_note(progress, "verifying");
        mgpu_status status = field ? mgpu_verify_field(field, opt, &record) : MGPU_OK;
        mgpu_progress_end(progress);
        if (status == MGPU_OK || status == MGPU_ERR_VERIFY) {
            mgpu_status printed = mgpu_record_print(&record, opt->format, opt->header, stdout);
            if (printed != MGPU_OK)
                status = printed; /* a lost record is what fails (as in mgpu_main) */
        }
        if (status != MGPU_OK)
            mgpu_error(&program, "%s", mgpu_last_error());
        code = mgpu_exit_code(status);
        free(field);
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return code;
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
    mgpu_options opt;
    int code = parse(&opt, argc, argv);
    mgpu_exchange mode = MGPU_EXCHANGE_AUTO;
    int aware = -1;
    char why[WHY_SIZE] = "";
    if (code < 0)
        code = agree(setup(&opt, &mode, &aware, why), why);
    if (code < 0)
        code = measure(&opt, mode, aware);
    /* Rank 0 alone printed (the record, --help, --version); whether that
     * reached stdout decides every rank's exit code. */
    if (me.rank == 0)
        code = mgpu_stdout_close(&program, code);
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return code;
}
