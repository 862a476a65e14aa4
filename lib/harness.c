/* harness.c - the program around a strategy: options, backend, the timed
 * runs, the exchanges alone, the baseline, the copy ceiling, verification
 * and the record.  The program's main drives it (mgpu_harness_start, _next,
 * _done, _end) and calls its strategy itself, so that a strategy's own file
 * keeps only what makes it that strategy.
 *
 * A program whose processes each drive one device (mgpu_group: mgpu-mpi's
 * ranks) goes through the same phases in every process, together: process
 * 0 alone prints, a run takes as long as its slowest process, each process
 * measures the copy ceiling of its own device, and the field is gathered
 * on process 0 to be verified there. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mgpu-private.h"

/* Where a program is: the phases of runs in turn, then the end. */
enum phase { PHASE_RUNS, PHASE_EXCHANGES, PHASE_BASELINE, PHASE_END };

/* One program's invocation, mgpu_harness_start to mgpu_harness_end. */
struct mgpu_harness {
    const mgpu_program *program;
    const mgpu_group *group; /* NULL: one process drives every device */
    mgpu_options opt;
    int ndevices;
    int code;           /* the exit code once known; -1 while the program goes on */
    bool started;       /* the backend and devices chosen, the request checked */
    mgpu_status status; /* of the runs so far */
    enum phase phase;   /* the phase of runs going, or the next */
    mgpu_run run;       /* the phase going, from mgpu_harness_next to _done */
    size_t part_bytes;  /* of run.part_times */
    mgpu_record record;
    mgpu_progress progress;             /* off where it is not drawn */
    mgpu_binding binding;               /* what each device's worker got */
    mgpu_gpu_id gpus[MGPU_MAX_DEVICES]; /* a group's, gathered for the record */
    float *field;                       /* the final field, where it is verified */
    float *rows;                        /* a group's part of it */
    mgpu_slab slabs[MGPU_MAX_DEVICES];  /* a group's parts */
    double ceiling_before;              /* the copy ceiling before the runs */
};

/* Whether this process prints: every process that is not of a group, and
 * process 0 of one. */
static bool prints(const mgpu_harness *h) { return !h->group || h->group->rank == 0; }

/* A group's run takes as long as its slowest process, each having timed
 * its own part from a start they share; the host's wait is the average of
 * the processes' (each tells, or none: then it stays negative). */
static void combine_runs(const mgpu_group *group, mgpu_run *run)
{
    group->combine(group->ctx, MGPU_GROUP_MAX, run->seconds, run->repeats);
    group->combine(group->ctx, MGPU_GROUP_SUM, run->waited, run->repeats);
    for (int r = 0; r < run->repeats; r++)
        run->waited[r] /= group->ranks;
}

void mgpu_run_keep(mgpu_run *run, int r, double seconds, double waited)
{
    if (r < run->warmup)
        return;
    run->seconds[r - run->warmup] = seconds;
    run->waited[r - run->warmup] = waited;
}

/* Part P's seconds and wait of timed run R: two doubles, [R][P]. */
static double *part_time(const mgpu_run *run, int r, int p)
{
    return run->part_times + 2 * ((size_t) r * (size_t) run->ndevices + (size_t) p);
}

void mgpu_run_keep_part(const mgpu_run *run, int r, int part, double seconds, double waited)
{
    if (r < run->warmup)
        return;
    double *kept = part_time(run, r - run->warmup, part);
    kept[0] = seconds;
    kept[1] = waited;
}

/* The timed runs whose parts were kept (mgpu_run_keep_part): each takes as
 * long as its slowest part, and waited the parts' mean. */
static void fold_parts(mgpu_run *run)
{
    int n = run->ndevices;
    for (int r = 0; r < run->repeats; r++) {
        if (part_time(run, r, 0)[0] < 0.0)
            continue;
        double slowest = 0.0, wait = 0.0;
        for (int p = 0; p < n; p++) {
            const double *kept = part_time(run, r, p);
            if (kept[0] > slowest)
                slowest = kept[0];
            wait += kept[1] / n;
        }
        run->seconds[r] = slowest;
        run->waited[r] = wait;
    }
}

void mgpu_record_cpu_control(mgpu_record *record, double devices_s, double cpu_s, double both_s)
{
    double hidden = cpu_s > 0.0 ? (devices_s + cpu_s - both_s) / cpu_s : 1.0;
    mgpu_record_set_number(record, "cpu_control_s", cpu_s);
    mgpu_record_set_number(record, "concurrent_s", both_s);
    mgpu_record_set_number(record, "cpu_control_hidden",
                           hidden < 0.0   ? 0.0
                           : hidden > 1.0 ? 1.0
                                          : hidden);
}

/* The device count the run will use, or a usage error. */
static mgpu_status resolve_devices(const mgpu_options *opt, int *ndevices)
{
    int available = mgpu_devices_available();
    *ndevices = opt->devices ? opt->devices : available;
    if (*ndevices > available)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "--devices: %d asked, but %d %s device%s exist "
                         "(accepted: 1 to %d)",
                         *ndevices, available, mgpu_backend_name(mgpu_backend_active()),
                         available == 1 ? "" : "s", available);
    mgpu_slab slabs[MGPU_MAX_DEVICES];
    return mgpu_decompose(opt->ny, *ndevices, slabs);
}

static int finish(const mgpu_program *program, mgpu_progress *progress, mgpu_status status)
{
    mgpu_progress_end(progress);
    if (status != MGPU_OK)
        mgpu_error(program, "%s", mgpu_error_message(status));
    return mgpu_exit_code(status);
}

mgpu_stencil_desc mgpu_stencil_desc_of(const mgpu_options *opt, int nparts)
{
    return (mgpu_stencil_desc){
        .nx = opt->nx,
        .ny = opt->ny,
        .kernel = opt->kernel,
        .exchange = opt->exchange,
        .seed = opt->seed,
        .nparts = nparts,
        .halo = opt->halo,
        .time_block = opt->time_block,
        .steps = opt->steps,
    };
}

/* The host memory the run will take in this process, into *NEED: PARTS of
 * the grid's parts from FIRST on (this process's), whose buffers are host
 * memory on the host backend, and, where the result is verified here
 * (FIELD), the result field and beside it the reference, two fields (the
 * CPU reference's; a device reference's one and its device's buffers).
 * The parts and the reference are not held at once.  A lower bound: a
 * program's own buffers (--cpu-control's field) come on top. */
static mgpu_status memory_need(const mgpu_harness *h, int first, int parts, bool field,
                               size_t *need)
{
    const mgpu_options *opt = &h->opt;
    mgpu_stencil_desc desc = mgpu_stencil_desc_of(opt, h->ndevices);
    desc.first_part = first;
    desc.local_parts = parts;
    size_t device_bytes, host_bytes, cells, field_bytes;
    MGPU_TRY(mgpu_stencil_bytes(&desc, &device_bytes, &host_bytes));
    MGPU_TRY(mgpu_mul_size((size_t) opt->nx, (size_t) opt->ny, &cells));
    MGPU_TRY(mgpu_mul_size(cells, sizeof(float), &field_bytes));
    size_t run = host_bytes + (mgpu_backend_active() == MGPU_BACKEND_HOST ? device_bytes : 0);
    size_t copies = field ? field_bytes : 0, reference = field ? 2 * field_bytes : 0;
    *need = copies + (run > reference ? run : reference);
    if (*need < run || field_bytes > SIZE_MAX / 4)
        *need = SIZE_MAX; /* a sum past SIZE_MAX fits nowhere */
    return MGPU_OK;
}

/* What a run of PARTS parts asks for, in a failure's line. */
static void memory_what(const mgpu_harness *h, int parts, char *what, size_t size)
{
    const mgpu_options *opt = &h->opt;
    if (mgpu_backend_active() != MGPU_BACKEND_HOST)
        snprintf(what, size,
                 "--nx, --ny: the %lld x %lld grid's result and reference in host memory", opt->nx,
                 opt->ny);
    else if (parts < h->ndevices)
        snprintf(what, size,
                 "--nx, --ny, --devices: the %d parts on this machine of a %lld x %lld grid on %d "
                 "host devices, and the result",
                 parts, opt->nx, opt->ny, h->ndevices);
    else
        snprintf(what, size, "--nx, --ny, --devices: a %lld x %lld grid on %d host device%s",
                 opt->nx, opt->ny, parts, parts == 1 ? "" : "s");
}

/* Whether the run's host memory (memory_need) fits in what this process
 * may have (mgpu_host_memory_check), before anything is allocated. */
static mgpu_status check_memory(const mgpu_harness *h)
{
    size_t need;
    char what[192];
    MGPU_TRY(memory_need(h, 0, h->ndevices, h->opt.verify != MGPU_VERIFY_NONE, &need));
    memory_what(h, h->ndevices, what, sizeof what);
    return mgpu_host_memory_check(need, what);
}

/* check_memory in a group, collective: the processes that share a machine
 * (G->node) share its memory, so what each needs is summed per machine
 * and checked by each against its own room.  STATUS: this process's so
 * far (a process that failed already adds nothing). */
static mgpu_status check_group_memory(const mgpu_harness *h, mgpu_status status)
{
    const mgpu_group *g = h->group;
    double sums[2 * MGPU_MAX_DEVICES] = {0}; /* bytes, then processes, per machine */
    size_t need = 0;
    int slot = g->node % MGPU_MAX_DEVICES;
    if (status == MGPU_OK)
        status = memory_need(h, g->rank, 1, g->rank == 0 && h->opt.verify != MGPU_VERIFY_NONE,
                             &need);
    sums[slot] = (double) need;
    sums[MGPU_MAX_DEVICES + slot] = 1;
    g->combine(g->ctx, MGPU_GROUP_SUM, sums, 2 * MGPU_MAX_DEVICES);
    if (status != MGPU_OK)
        return status;
    char what[192];
    memory_what(h, (int) sums[MGPU_MAX_DEVICES + slot], what, sizeof what);
    return mgpu_host_memory_check(sums[slot] >= (double) SIZE_MAX ? SIZE_MAX : (size_t) sums[slot],
                                  what);
}

/* The command line.  In a group process 0 reads it first and alone prints
 * a usage error, --help or --version; the others read it only when process
 * 0 goes on (every process has the same command line): one message, not
 * one a process.  Returns -1 to go on, or the exit code. */
static int parse(mgpu_harness *h, int argc, char **argv)
{
    const mgpu_group *g = h->group;
    if (!g)
        return mgpu_options_parse(&h->opt, h->program, argc, argv);
    int code = -1;
    if (g->rank == 0)
        code = mgpu_options_parse(&h->opt, h->program, argc, argv);
    g->broadcast(g->ctx, &code, 0);
    if (code < 0 && g->rank != 0)
        code = mgpu_options_parse(&h->opt, h->program, argc, argv);
    return code;
}

/* A group's processes, each having prepared its own device (PREPARED: how
 * that went), check the request; then every one learns whether any cannot
 * start.  The lowest that cannot
 * says why, and every one returns its exit code: one message, one code,
 * and nobody left waiting in a call the others never make.  What process
 * 0 finds wrong is wrong for all (the command line); what another finds
 * may be its host's own trouble: it says where.  -1: all go on. */
static int start_group(mgpu_harness *h, mgpu_status prepared)
{
    const mgpu_group *g = h->group;
    h->ndevices = g->ranks;
    mgpu_status status = prepared;
    if (status == MGPU_OK)
        status = mgpu_halo_check(h->opt.halo, h->opt.ny, g->ranks);
    status = check_group_memory(h, status);
    if (status == MGPU_OK)
        status = mgpu_fault_validate(g->ranks, h->opt.steps);
    double first = status == MGPU_OK ? g->ranks : g->rank;
    g->combine(g->ctx, MGPU_GROUP_MIN, &first, 1);
    int lowest = (int) first;
    if (lowest == g->ranks) {
        double span[2] = {g->choice, -g->choice};
        g->combine(g->ctx, MGPU_GROUP_MIN, span, 2);
        if (span[0] == -span[1])
            return -1;
        if (g->rank == 0)
            mgpu_error(h->program, "the processes chose different backends or exchange modes "
                                   "(one found the devices or their peer access otherwise): "
                                   "name both, --backend and --exchange");
        return 1;
    }
    int code = mgpu_exit_code(status);
    if (g->rank == lowest && lowest == 0)
        mgpu_error(h->program, "%s", mgpu_error_message(status));
    else if (g->rank == lowest)
        mgpu_error(h->program, "%s: %s", g->where, mgpu_error_message(status));
    g->broadcast(g->ctx, &code, lowest);
    return code;
}

/* The backend, the devices and the request checked, in a program of one
 * process.  -1 to go on, or the exit code. */
static int start(mgpu_harness *h)
{
    const mgpu_options *opt = &h->opt;
    int host_devices = opt->devices ? opt->devices : 2;
    mgpu_status status = h->program->forks ? mgpu_init_nocuda(opt->backend, host_devices)
                                           : mgpu_init(opt->backend, host_devices);
    if (status == MGPU_OK)
        status = resolve_devices(opt, &h->ndevices);
    if (status == MGPU_OK)
        status = mgpu_fault_validate(h->ndevices, opt->steps);
    if (status == MGPU_OK)
        status = check_memory(h);
    /* Known only now that the backend is: NCCL moves device memory. */
    if (status == MGPU_OK && opt->exchange == MGPU_EXCHANGE_NCCL)
        status = mgpu_nccl_check();
    return status == MGPU_OK ? -1 : finish(h->program, NULL, status);
}

/* The record's binding, in a group: each process's, gathered on process 0. */
static void gather_binding(const mgpu_group *g, mgpu_binding *binding)
{
    char mine[MGPU_BIND_TEXT];
    memcpy(mine, binding->cpus[g->rank], sizeof mine);
    g->gather(g->ctx, mine, sizeof mine, binding->cpus);
}

/* The record's GPUs, in a group: each process's own device, gathered on
 * process 0 into GPUS, since a process may see no GPU but its own (one GPU
 * a rank, CUDA_VISIBLE_DEVICES set per rank by the launcher). */
static void gather_gpus(const mgpu_group *g, mgpu_gpu_id *gpus, mgpu_record *record)
{
    mgpu_gpu_id mine;
    int device = -1;
    if (mgpu_device_get(&device) != MGPU_OK)
        device = -1; /* named "unknown" */
    mgpu_gpu_identify(device, &mine);
    g->gather(g->ctx, &mine, sizeof mine, gpus);
    mgpu_record_set_gpus(record, gpus, g->ranks);
}

/* A group's copy ceiling: each device's, measured by one of the processes
 * that drive it, summed.  A device not measured (its grid fits in its
 * cache) leaves the sum without its term: then there is no ceiling. */
static mgpu_status group_ceiling(const mgpu_group *g, size_t field_bytes, double *gbps)
{
    double mine[2] = {0.0, 0.0}; /* the ceiling; 1 when not measured */
    if (g->ceiling_device >= 0) {
        MGPU_TRY(mgpu_copy_ceiling_device(g->ceiling_device, field_bytes, &mine[0]));
        mine[1] = mine[0] <= 0.0;
    }
    g->combine(g->ctx, MGPU_GROUP_SUM, mine, 2);
    *gbps = mine[1] > 0.0 ? 0.0 : mine[0];
    return MGPU_OK;
}

/* In a group, this process's part of the field: the interior rows of its
 * slab.  *SLABS gets every process's. */
static mgpu_status part_rows(const mgpu_harness *h, mgpu_slab *slabs, float **rows)
{
    MGPU_TRY(mgpu_decompose(h->opt.ny, h->ndevices, slabs));
    const mgpu_slab *mine = &slabs[h->group->rank];
    size_t cells = (size_t) h->opt.nx * (size_t) (mine->row_end - mine->row_begin);
    *rows = malloc(cells * sizeof **rows);
    if (!*rows)
        return mgpu_fail(MGPU_ERR_NOMEM, "the part's rows of the field: %zu bytes of host memory",
                         cells * sizeof **rows);
    return MGPU_OK;
}

void mgpu_program_start(void)
{
    mgpu_stdout_guard();
    mgpu_bind_start();
    /* A reader of stdout that has gone (a pager quit early) and a file
     * grown past the size limit (ulimit -f) are write errors, said in a
     * line, not deaths by a signal without a word, and the files already
     * written stay. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
}

/* ------------------------------------------------------ the phases of runs */

/* Stop the runs at STATUS.  A group's processes all end now: the others may
 * be waiting for this one. */
static void fail(mgpu_harness *h, mgpu_status status)
{
    h->status = status;
    if (!h->group)
        return;
    mgpu_progress_end(&h->progress);
    mgpu_error(h->program, "%s: %s", h->group->where, mgpu_error_message(status));
    h->group->abort(h->group->ctx, mgpu_exit_code(status));
}

/* What the runs need before the first: the record, the field they leave
 * (where it is verified), the progress line; then, once started, where the
 * runs are bound and the copy ceiling before them. */
static void prepare_runs(mgpu_harness *h)
{
    const mgpu_options *opt = &h->opt;
    h->started = true;
    mgpu_record_init(&h->record, h->program, opt);
    h->record.devices = h->ndevices;
    h->record.exchanges = mgpu_exchanges_per_run(opt->kernel, h->ndevices, opt->steps, opt->halo);
    bool verify = opt->verify != MGPU_VERIFY_NONE;
    if (verify && prints(h)) {
        size_t cells = (size_t) opt->nx * (size_t) opt->ny;
        h->field = malloc(cells * sizeof *h->field);
        if (!h->field) {
            fail(h, mgpu_fail(MGPU_ERR_NOMEM, "the result field: %zu bytes of host memory",
                              cells * sizeof *h->field));
            return;
        }
    }
    if (prints(h))
        mgpu_progress_init(&h->progress, opt, stderr);
    /* What each device's worker got.  A program whose one thread drives
     * every device is bound here, once, near the first device: the union
     * of the devices' nodes is the whole machine on one with GPUs on both
     * sockets (no binding at all), and device 0 is the one every run uses,
     * the one-device baseline included. */
    if (!h->program->binds_workers) {
        mgpu_bind_worker(opt->bind, 0, 1, h->binding.cpus[0]);
        for (int d = 1; d < h->ndevices; d++)
            memcpy(h->binding.cpus[d], h->binding.cpus[0], sizeof h->binding.cpus[0]);
        mgpu_record_set_binding(&h->record, &h->binding);
    }
    mgpu_status status = MGPU_OK;
    if (h->group && verify)
        status = part_rows(h, h->slabs, &h->rows);
    /* A GPU's ceiling is measured before and after the runs (a card that
     * has worked for seconds may run slower), and the higher one is kept, so
     * that the ratio to it is never flattered.  Workers in processes forbid
     * the "before" here: no CUDA in this process until they have run; in a
     * group each process measures its own device, once, after the runs. */
    if (status == MGPU_OK && !h->group && !h->program->forks &&
        mgpu_backend_active() == MGPU_BACKEND_CUDA)
        status = mgpu_copy_ceiling(h->ndevices, (size_t) opt->nx * (size_t) opt->ny * sizeof(float),
                                   &h->ceiling_before);
    if (status != MGPU_OK)
        fail(h, status);
}

/* Open a phase of runs as RUN describes it, WHAT on the progress line (NULL:
 * the runs the record is about): where the strategy keeps what it measured. */
static mgpu_run *phase_begin(mgpu_harness *h, mgpu_run run, const char *what)
{
    int n = run.repeats;
    run.seconds = calloc((size_t) n, sizeof *run.seconds);
    run.waited = calloc((size_t) n, sizeof *run.waited);
    /* Shared before the strategy forks: its workers keep their parts here. */
    h->part_bytes = 2 * (size_t) n * (size_t) run.ndevices * sizeof(double);
    void *parts = mmap(NULL, h->part_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                       0);
    run.part_times = parts == MAP_FAILED ? NULL : parts;
    if (!run.seconds || !run.waited || !run.part_times) {
        free(run.seconds);
        free(run.waited);
        if (run.part_times)
            munmap(run.part_times, h->part_bytes);
        fail(h, mgpu_fail(MGPU_ERR_NOMEM, "out of host memory"));
        return NULL;
    }
    for (int r = 0; r < n; r++) {
        run.waited[r] = -1.0;
        for (int p = 0; p < run.ndevices; p++)
            part_time(&run, r, p)[0] = -1.0;
    }
    h->run = run;
    mgpu_progress_begin(run.progress, what, run.warmup, run.repeats, run.compute);
    return &h->run;
}

/* Close the phase going: STATS of its timed runs, from what the strategy
 * kept (STATUS: how it went); for the record's runs, also where its steps'
 * time went on the host. */
static mgpu_status phase_end(mgpu_harness *h, mgpu_status status, mgpu_stats *stats)
{
    mgpu_run *run = &h->run;
    int n = run->repeats;
    if (status == MGPU_OK && run->part_times)
        fold_parts(run);
    if (run->part_times)
        munmap(run->part_times, h->part_bytes);
    run->part_times = NULL;
    if (status == MGPU_OK && h->group)
        combine_runs(h->group, run);
    bool told = true;
    for (int r = 0; status == MGPU_OK && r < n; r++)
        told = told && run->waited[r] >= 0.0;
    if (status == MGPU_OK)
        *stats = mgpu_stats_of(run->seconds, n); /* sorts SECONDS: the pairs end here */
    if (status == MGPU_OK && told && run->record && run->compute) {
        double steps = (double) (run->opt->steps > 0 ? run->opt->steps : 1);
        /* The two add up to the step.  A wait averaged over threads whose
         * clocks start a little apart can come out above the run's time
         * (many threads on few cores): then all of it was waiting. */
        double wait = mgpu_stats_of(run->waited, n).median;
        if (wait > stats->median)
            wait = stats->median;
        run->record->wait_step_s = wait / steps;
        run->record->issue_step_s = (stats->median - wait) / steps;
    }
    free(run->seconds);
    free(run->waited);
    run->seconds = run->waited = NULL;
    return status;
}

mgpu_run *mgpu_harness_next(mgpu_harness *h)
{
    if (!h || h->code >= 0 || !h->started)
        return NULL;
    const mgpu_options *opt = &h->opt;
    mgpu_progress *progress = prints(h) ? &h->progress : NULL;
    /* The runs the record is about; then the exchanges alone, the same steps
     * with the kernels left out, which say what share of the time the
     * exchange costs; then one device, with --baseline. */
    mgpu_run runs = {.opt = opt,
                     .ndevices = h->ndevices,
                     .compute = 1,
                     .warmup = opt->warmup,
                     .repeats = opt->repeat,
                     .field = h->group ? h->rows : h->field,
                     .record = &h->record,
                     .binding = &h->binding,
                     .progress = progress};
    mgpu_run exchanges = {.opt = opt,
                          .ndevices = h->ndevices,
                          .compute = 0,
                          .warmup = 1,
                          .repeats = opt->repeat,
                          .record = &h->record,
                          .progress = progress};
    mgpu_run one = {.opt = opt,
                    .ndevices = 1,
                    .compute = 1,
                    .warmup = opt->warmup,
                    .repeats = opt->repeat,
                    .progress = progress};
    for (; h->status == MGPU_OK && h->phase < PHASE_END; h->phase++) {
        if (h->phase == PHASE_RUNS)
            return phase_begin(h, runs, NULL);
        if (h->phase == PHASE_EXCHANGES && (h->ndevices > 1 || opt->kernel == MGPU_KERNEL_JACOBI))
            return phase_begin(h, exchanges, "exchanges alone");
        if (h->phase == PHASE_EXCHANGES)
            h->record.exchange_s = 0.0;
        if (h->phase == PHASE_BASELINE && opt->baseline && h->ndevices > 1)
            return phase_begin(h, one, "1 device");
        if (h->phase == PHASE_BASELINE && opt->baseline)
            h->record.baseline_s = h->record.time.median;
    }
    return NULL;
}

void mgpu_harness_done(mgpu_harness *h, mgpu_status status)
{
    if (!h || h->phase == PHASE_END || !h->run.seconds)
        return;
    mgpu_stats stats;
    status = phase_end(h, status, &stats);
    enum phase phase = h->phase++;
    if (status != MGPU_OK) {
        fail(h, status);
        return;
    }
    const mgpu_group *g = h->group;
    if (phase == PHASE_RUNS) {
        h->record.time = stats;
        if (h->program->binds_workers) {
            if (g)
                gather_binding(g, &h->binding);
            mgpu_record_set_binding(&h->record, &h->binding);
        }
        if (g)
            gather_gpus(g, h->gpus, &h->record);
    } else if (phase == PHASE_EXCHANGES) {
        h->record.exchange_s = stats.median;
    } else {
        h->record.baseline_s = stats.median;
    }
}

/* --------------------------------------------------------- the end */

/* After the runs: the copy ceiling and the device time of a step, the
 * field gathered and verified, the record printed.  The exit code. */
static int finish_runs(mgpu_harness *h)
{
    const mgpu_options *opt = &h->opt;
    const mgpu_group *g = h->group;
    mgpu_record *record = &h->record;
    mgpu_progress *progress = &h->progress;
    size_t field_bytes = (size_t) opt->nx * (size_t) opt->ny * sizeof(float);
    mgpu_status status = h->status;
    if (status == MGPU_OK && g && g->release)
        status = g->release(g->ctx);
    if (status == MGPU_OK && g) {
        mgpu_progress_note(progress, "the copy ceiling");
        status = group_ceiling(g, field_bytes, &record->copy_gbytes_per_s);
    } else if (status == MGPU_OK) {
        mgpu_progress_note(progress, "timing one step alone, and the copy ceiling");
        status = mgpu_step_device_time(opt, h->ndevices, &record->device_step_s);
        if (status == MGPU_OK)
            status = mgpu_copy_ceiling(h->ndevices, field_bytes, &record->copy_gbytes_per_s);
        if (record->copy_gbytes_per_s < h->ceiling_before)
            record->copy_gbytes_per_s = h->ceiling_before;
    }
    if (status == MGPU_OK && g && opt->verify != MGPU_VERIFY_NONE) {
        g->gather_rows(g->ctx, h->rows, h->slabs, opt->nx, h->field);
        if (h->field)
            mgpu_field_outer_rows(h->field, opt->kernel, opt->nx, opt->ny, opt->seed);
    }
    if (status != MGPU_OK && h->status == MGPU_OK)
        fail(h, status);
    if (status == MGPU_OK && h->field)
        mgpu_progress_note(progress, "verifying");
    if (status == MGPU_OK && h->field)
        status = mgpu_verify_field(h->field, opt, record);
    mgpu_progress_end(progress);
    /* A record that could not be written is the failure to report (the
     * verdict of a failed verification was in that record; the exit code
     * is 1 either way). */
    if (prints(h) && (status == MGPU_OK || status == MGPU_ERR_VERIFY)) {
        mgpu_status printed = mgpu_record_print(record, opt->format, opt->header, stdout);
        if (printed != MGPU_OK)
            status = printed;
    }
    return finish(h->program, progress, status);
}

static mgpu_harness *harness_new(const mgpu_program *program, const mgpu_group *group)
{
    mgpu_harness *h = calloc(1, sizeof *h);
    if (!h) {
        mgpu_error(program, "the program's harness: out of host memory");
        if (group)
            group->abort(group->ctx, 1);
        return NULL;
    }
    h->program = program;
    h->group = group;
    h->code = -1;
    return h;
}

mgpu_harness *mgpu_harness_start(const mgpu_program *program, int argc, char **argv)
{
    mgpu_program_start();
    mgpu_harness *h = harness_new(program, NULL);
    if (!h)
        return NULL;
    h->code = parse(h, argc, argv);
    if (h->code < 0)
        h->code = start(h);
    if (h->code < 0)
        prepare_runs(h);
    return h;
}

mgpu_harness *mgpu_harness_group_start(const mgpu_program *program, const mgpu_group *group,
                                       int argc, char **argv)
{
    mgpu_harness *h = harness_new(program, group);
    if (h)
        h->code = parse(h, argc, argv);
    return h;
}

const mgpu_options *mgpu_harness_options(const mgpu_harness *h)
{
    return h && h->code < 0 ? &h->opt : NULL;
}

void mgpu_harness_group_ready(mgpu_harness *h, mgpu_status prepared)
{
    if (!h || h->code >= 0 || h->started)
        return;
    h->code = start_group(h, prepared);
    if (h->code < 0)
        prepare_runs(h);
}

int mgpu_harness_end(mgpu_harness *h)
{
    if (!h)
        return 1;
    int code = h->code;
    if (code < 0 && !h->started)
        code = finish(h->program, NULL,
                      mgpu_fail(MGPU_ERR_USAGE, "the program never started its runs "
                                                "(mgpu_harness_group_ready)"));
    else if (code < 0)
        code = finish_runs(h);
    if (!h->group) {
        code = mgpu_stdout_close(h->program, code);
    } else {
        /* Process 0 alone printed; whether that reached stdout decides
         * every process's exit code. */
        if (h->group->rank == 0)
            code = mgpu_stdout_close(h->program, code);
        h->group->broadcast(h->group->ctx, &code, 0);
    }
    free(h->field);
    free(h->rows);
    free(h);
    return code;
}

int mgpu_main(const mgpu_program *program, int argc, char **argv, mgpu_strategy_fn strategy,
              void *ctx)
{
    mgpu_harness *h = mgpu_harness_start(program, argc, argv);
    for (mgpu_run *run; (run = mgpu_harness_next(h));)
        mgpu_harness_done(h, strategy(ctx, run));
    return mgpu_harness_end(h);
}
