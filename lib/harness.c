/* harness.c - the program around a strategy: options, backend, the timed
 * runs, the baseline, the copy ceiling, verification and the record.  A
 * strategy's own file keeps only what makes it that strategy. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "mgpu-private.h"

/* Run the strategy REPEATS times (after WARMUP) and give the median etc.;
 * for the record's run, also where its steps' time went on the host.  WHAT
 * names the phase on the progress line. */
static mgpu_status timed(mgpu_strategy_fn strategy, void *ctx, mgpu_run *run,
                         const char *what, mgpu_stats *stats)
{
    int n = run->repeats;
    double *seconds = calloc((size_t) n, sizeof *seconds);
    double *waited = calloc((size_t) n, sizeof *waited);
    if (!seconds || !waited) {
        free(seconds);
        free(waited);
        return mgpu_fail(MGPU_ERR_NOMEM, "out of host memory");
    }
    for (int r = 0; r < n; r++)
        waited[r] = -1.0;
    run->seconds = seconds;
    run->waited = waited;
    mgpu_progress_begin(run->progress, what, run->warmup, run->repeats, run->compute);
    mgpu_status status = strategy(ctx, run);
    bool told = true;
    for (int r = 0; r < n; r++)
        told = told && waited[r] >= 0.0;
    if (status == MGPU_OK)
        *stats = mgpu_stats_of(seconds, n); /* sorts SECONDS: the pairs end here */
    if (status == MGPU_OK && told && run->record && run->compute) {
        double steps = (double) (run->opt->steps > 0 ? run->opt->steps : 1);
        /* The two add up to the step.  A wait averaged over threads whose
         * clocks start a little apart can come out above the run's time
         * (many threads on few cores): then all of it was waiting. */
        double wait = mgpu_stats_of(waited, n).median;
        if (wait > stats->median)
            wait = stats->median;
        run->record->wait_step_s = wait / steps;
        run->record->issue_step_s = (stats->median - wait) / steps;
    }
    run->seconds = run->waited = NULL;
    free(seconds);
    free(waited);
    return status;
}

/* The device count the run will use, or a usage error. */
static mgpu_status resolve_devices(const mgpu_options *opt, int *ndevices)
{
    int available = mgpu_devices_available();
    *ndevices = opt->devices ? opt->devices : available;
    if (*ndevices > available)
        return mgpu_fail(MGPU_ERR_USAGE, "--devices: %d asked, but %d %s device%s exist "
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

/* mgpu_main without the final check of stdout. */
static int run_program(const mgpu_program *program, int argc, char **argv,
                       mgpu_strategy_fn strategy, void *ctx)
{
    mgpu_options opt;
    int code = mgpu_options_parse(&opt, program, argc, argv);
    if (code >= 0)
        return code;
    int host_devices = opt.devices ? opt.devices : 2;
    mgpu_status status = program->forks ? mgpu_init_nocuda(opt.backend, host_devices)
                                        : mgpu_init(opt.backend, host_devices);
    int ndevices = 0;
    if (status == MGPU_OK)
        status = resolve_devices(&opt, &ndevices);
    if (status == MGPU_OK)
        status = mgpu_fault_validate(ndevices, opt.steps);
    /* Known only now that the backend is: NCCL moves device memory. */
    if (status == MGPU_OK && opt.exchange == MGPU_EXCHANGE_NCCL)
        status = mgpu_nccl_check();
    if (status != MGPU_OK)
        return finish(program, NULL, status);

    mgpu_record record;
    mgpu_record_init(&record, program, &opt);
    record.devices = ndevices;
    /* What each device's worker got.  A program whose one thread drives
     * every device is bound here, once, near the first device: the union
     * of the devices' nodes is the whole machine on one with GPUs on both
     * sockets (no binding at all), and device 0 is the one every run uses,
     * the one-device baseline included. */
    static mgpu_binding binding;
    if (!program->binds_workers) {
        mgpu_bind_worker(opt.bind, 0, 1, binding.cpus[0]);
        for (int d = 1; d < ndevices; d++)
            memcpy(binding.cpus[d], binding.cpus[0], sizeof binding.cpus[0]);
        mgpu_record_set_binding(&record, &binding);
    }
    record.exchanges = mgpu_exchanges_per_run(opt.kernel, ndevices, opt.steps, opt.halo);
    float *field = NULL;
    if (opt.verify != MGPU_VERIFY_NONE) {
        size_t cells = (size_t) opt.nx * (size_t) opt.ny;
        field = malloc(cells * sizeof *field);
        if (!field)
            return finish(program, NULL,
                          mgpu_fail(MGPU_ERR_NOMEM, "the result field: %zu bytes of host memory",
                                    cells * sizeof *field));
    }

    /* A GPU's ceiling is measured before and after the runs (a card that
     * has worked for seconds may run slower), and the higher one is kept, so
     * that the ratio to it is never flattered.  Workers in processes forbid
     * the "before" here: no CUDA in this process until they have run. */
    size_t field_bytes = (size_t) opt.nx * (size_t) opt.ny * sizeof(float);
    double ceiling_before = 0.0;
    if (!program->forks && mgpu_backend_active() == MGPU_BACKEND_CUDA)
        status = mgpu_copy_ceiling(ndevices, field_bytes, &ceiling_before);

    mgpu_progress progress;
    mgpu_progress_init(&progress, &opt, stderr);
    mgpu_run run = {.opt = &opt, .ndevices = ndevices, .compute = 1, .warmup = opt.warmup,
                    .repeats = opt.repeat, .field = field, .record = &record,
                    .binding = &binding,
                    .progress = &progress};
    if (status == MGPU_OK)
        status = timed(strategy, ctx, &run, NULL, &record.time);
    if (status == MGPU_OK && program->binds_workers)
        mgpu_record_set_binding(&record, &binding);

    /* The exchanges alone, the same steps with the kernels left out, say
     * what share of the time the exchange costs. */
    bool exchanges = ndevices > 1 || opt.kernel == MGPU_KERNEL_JACOBI;
    if (status == MGPU_OK && exchanges) {
        mgpu_stats alone;
        mgpu_run ex = {.opt = &opt, .ndevices = ndevices, .compute = 0, .warmup = 1,
                       .repeats = opt.repeat, .record = &record, .progress = &progress};
        status = timed(strategy, ctx, &ex, "exchanges alone", &alone);
        record.exchange_s = alone.median;
    } else if (status == MGPU_OK) {
        record.exchange_s = 0.0;
    }
    if (status == MGPU_OK && opt.baseline) {
        mgpu_stats one = record.time;
        if (ndevices > 1) {
            mgpu_run base = {.opt = &opt, .ndevices = 1, .compute = 1, .warmup = opt.warmup,
                             .repeats = opt.repeat, .progress = &progress};
            status = timed(strategy, ctx, &base, "1 device", &one);
        }
        record.baseline_s = one.median;
    }
    if (status == MGPU_OK)
        mgpu_progress_note(&progress, "timing one step alone, and the copy ceiling");
    if (status == MGPU_OK)
        status = mgpu_step_device_time(&opt, ndevices, &record.device_step_s);
    if (status == MGPU_OK)
        status = mgpu_copy_ceiling(ndevices, field_bytes, &record.copy_gbps);
    if (record.copy_gbps < ceiling_before)
        record.copy_gbps = ceiling_before;
    if (status == MGPU_OK && field)
        mgpu_progress_note(&progress, "verifying");
    if (status == MGPU_OK && field)
        status = mgpu_verify_field(field, &opt, &record);
    free(field);
    mgpu_progress_end(&progress);
    /* A record that could not be written is the failure to report (the
     * verdict of a failed verification was in that record; the exit code
     * is 1 either way). */
    if (status == MGPU_OK || status == MGPU_ERR_VERIFY) {
        mgpu_status printed = mgpu_record_print(&record, opt.format, opt.header, stdout);
        if (printed != MGPU_OK)
            status = printed;
    }
    return finish(program, &progress, status);
}

int mgpu_main(const mgpu_program *program, int argc, char **argv, mgpu_strategy_fn strategy,
              void *ctx)
{
    mgpu_stdout_guard();
    return mgpu_stdout_close(program, run_program(program, argc, argv, strategy, ctx));
}
