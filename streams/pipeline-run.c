/* pipeline-run.c - mgpu-streams --pipeline (book 11.1): the field lives in
 * pinned host memory and need not fit on the devices.  Each step streams
 * every device's slab through it in chunks, each chunk with its halo rows,
 * over several streams: while one chunk uploads, another computes and a
 * third downloads, so the copies in both directions hide behind each other
 * and behind the kernels.  The library's pipeline cuts and issues the chunks;
 * this file sizes them to the device memory allowed, keeps every device's
 * pipeline going from one thread, and times the serial version (upload,
 * compute, download one after another) in the same run. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "streams.h"

/* Three stages, so three streams keep each busy; sixteen chunks a stream make
 * filling and draining the pipeline a small share of a step. */
enum { DEFAULT_STREAMS = 3, CHUNKS_PER_STREAM = 16 };

typedef struct chunk_work {
    mgpu_kernel kernel;
    long long nx;
    int compute;
} chunk_work;

typedef struct pipeline_state {
    const mgpu_options *opt;
    int ndevices;
    mgpu_slab slab[MGPU_MAX_DEVICES];
    mgpu_pipeline_desc desc[MGPU_MAX_DEVICES];
    mgpu_pipeline *pipe[MGPU_MAX_DEVICES];
    size_t device_bytes; /* the most one device holds */
    chunk_work work;
    float *field[2]; /* pinned: the field before even and odd steps */
} pipeline_state;

/* One chunk's step on the device.  D_IN starts one halo row above the
 * chunk's first output row.  The kernel writes the interior columns only; the
 * boundary columns of the output rows are those of the input, copied first
 * (a copy on the device, a small cost beside the two over the host link). */
static mgpu_status chunk_step(void *arg, const float *d_in, float *d_out, long long row0,
                              long long nrows, size_t pitch, mgpu_stream *stream)
{
    const chunk_work *work = arg;
    const float *centre = d_in + pitch;
    size_t used = ((size_t) nrows - 1) * pitch + (size_t) work->nx;
    (void) row0;
    MGPU_TRY(mgpu_memcpy_async(d_out, centre, used * sizeof(float), stream));
    if (!work->compute)
        return MGPU_OK;
    return mgpu_kernel_rows(work->kernel, centre, d_out, work->nx, pitch, 0, nrows, stream);
}

/* The device memory DEVICE's pipeline may use. */
static mgpu_status budget_of(const streams_options *o, int device, size_t *budget)
{
    if (o->device_memory) {
        *budget = (size_t) o->device_memory;
        return MGPU_OK;
    }
    mgpu_device_info info;
    MGPU_TRY(mgpu_device_info_get(device, &info));
    /* A tenth is left to the runtime and the allocator's rounding; the host
     * backend's devices are host memory, which says nothing of its size. */
    *budget = info.free_bytes ? info.free_bytes / 10 * 9 : SIZE_MAX;
    return MGPU_OK;
}

/* The chunks of device D: as asked, or the fewest whose buffers fit the
 * budget (fewer chunks, fewer and larger copies), but at least
 * CHUNKS_PER_STREAM per stream where the rows allow. */
static mgpu_status choose_chunks(const streams_options *o, pipeline_state *ps, int d)
{
    mgpu_pipeline_desc *desc = &ps->desc[d];
    size_t budget, bytes = 0;
    MGPU_TRY(budget_of(o, desc->device, &budget));
    if (o->chunks) {
        if (o->chunks > desc->rows)
            return mgpu_error_set(MGPU_ERR_USAGE,
                                  "--chunks: %lld is more than the %lld rows "
                                  "of device %d's slab (accepted: 1 to %lld)",
                                  o->chunks, desc->rows, desc->device, desc->rows);
        desc->chunks = (int) o->chunks;
        MGPU_TRY(mgpu_pipeline_device_bytes(desc, &bytes));
    } else {
        long long least = (long long) desc->streams * CHUNKS_PER_STREAM;
        desc->chunks = (int) (least < desc->rows ? least : desc->rows);
        MGPU_TRY(mgpu_pipeline_device_bytes(desc, &bytes));
        while (bytes > budget && desc->chunks < desc->rows) {
            desc->chunks++;
            MGPU_TRY(mgpu_pipeline_device_bytes(desc, &bytes));
        }
    }
    if (bytes > budget)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--device-memory: device %d may hold %zu bytes, "
                              "and %d streams of chunks of %lld rows need %zu "
                              "(accepted: more --chunks, fewer --streams or "
                              "more --device-memory)",
                              desc->device, budget, desc->streams,
                              (desc->rows + desc->chunks - 1) / desc->chunks, bytes);
    if (bytes > ps->device_bytes)
        ps->device_bytes = bytes;
    return MGPU_OK;
}

static mgpu_status state_create(const streams_options *o, const mgpu_run *run, pipeline_state *ps)
{
    const mgpu_options *opt = run->opt;
    memset(ps, 0, sizeof *ps);
    ps->opt = opt;
    ps->ndevices = run->ndevices;
    ps->work = (chunk_work){.kernel = opt->kernel, .nx = opt->nx, .compute = run->compute};
    MGPU_TRY(mgpu_decompose(opt->ny, ps->ndevices, ps->slab));
    for (int d = 0; d < ps->ndevices; d++) {
        const mgpu_slab *s = &ps->slab[d];
        ps->desc[d] = (mgpu_pipeline_desc){
            .device = d,
            .nx = opt->nx,
            .host_pitch = (size_t) opt->nx,
            .rows = s->row_end - s->row_begin,
            .halo = 1,
            .streams = o->streams ? (int) o->streams : DEFAULT_STREAMS,
            .fn = chunk_step,
            .arg = &ps->work,
        };
        MGPU_TRY(choose_chunks(o, ps, d));
        MGPU_TRY(mgpu_pipeline_create(&ps->pipe[d], &ps->desc[d]));
    }
    /* The parser keeps two fields of the grid within 2^62 bytes. */
    size_t bytes = (size_t) opt->nx * (size_t) opt->ny * sizeof(float);
    for (int b = 0; b < 2; b++) {
        void *p;
        MGPU_TRY(mgpu_host_alloc(bytes, MGPU_HOST_PINNED, &p));
        ps->field[b] = p;
    }
    return MGPU_OK;
}

static void state_destroy(pipeline_state *ps)
{
    for (int d = 0; d < ps->ndevices; d++)
        mgpu_pipeline_destroy(ps->pipe[d]);
    mgpu_host_free(ps->field[0]);
    mgpu_host_free(ps->field[1]);
}

/* The initial field in buffer 0; in buffer 1 the boundary rows, and every
 * cell a step writes poisoned (all bits set is a NaN): a cell that no chunk
 * writes fails verification. */
static void reset(pipeline_state *ps)
{
    const mgpu_options *opt = ps->opt;
    size_t nx = (size_t) opt->nx, ny = (size_t) opt->ny;
    mgpu_field_initial_rows(ps->field[0], nx, opt->kernel, opt->nx, opt->ny, 0, opt->ny, opt->seed);
    memcpy(ps->field[1], ps->field[0], nx * sizeof(float));
    memcpy(ps->field[1] + (ny - 1) * nx, ps->field[0] + (ny - 1) * nx, nx * sizeof(float));
    memset(ps->field[1] + nx, 0xff, (ny - 2) * nx * sizeof(float));
}

/* Step STEP's input and output on the host, the input's halo rows made. */
static void step_buffers(pipeline_state *ps, long long step, const float **in, float **out)
{
    float *from = ps->field[step & 1];
    /* jacobi's top and bottom rows are periodic images: the exchange, here
     * on the host, where the whole field is. */
    mgpu_field_fill_halo_rows(from, ps->opt->kernel, ps->opt->nx, ps->opt->ny);
    *in = from;
    *out = ps->field[(step + 1) & 1];
}

/* Every device's pipeline at once: each is started, and only then waited
 * for, so the devices' copies and kernels run side by side. */
static mgpu_status pipelined_steps(pipeline_state *ps, mgpu_progress *progress)
{
    size_t nx = (size_t) ps->opt->nx;
    for (long long step = 0; step < ps->opt->steps; step++) {
        const float *in;
        float *out;
        step_buffers(ps, step, &in, &out);
        mgpu_status status = MGPU_OK;
        int started = 0;
        while (started < ps->ndevices) {
            size_t row = (size_t) ps->slab[started].row_begin * nx;
            status = mgpu_fault_check(started, step);
            if (status == MGPU_OK)
                status = mgpu_pipeline_start(ps->pipe[started], in + row, out + row);
            if (status != MGPU_OK)
                break; /* a start that failed has waited for itself */
            started++;
        }
        /* Wait for all that started, also after a failure: nothing may still
         * copy into the field when the run returns. */
        for (int d = 0; d < started; d++) {
            mgpu_status s = mgpu_pipeline_wait(ps->pipe[d]);
            if (status == MGPU_OK)
                status = s;
        }
        MGPU_TRY(status);
        mgpu_progress_step(progress, step + 1);
    }
    return MGPU_OK;
}

typedef struct stage_times {
    double upload, compute, download;
} stage_times;

/* The same steps, every chunk's upload, compute and download one after
 * another, device after device. */
static mgpu_status serial_steps(pipeline_state *ps, mgpu_progress *progress, stage_times *t)
{
    size_t nx = (size_t) ps->opt->nx;
    *t = (stage_times){0, 0, 0};
    for (long long step = 0; step < ps->opt->steps; step++) {
        const float *in;
        float *out;
        step_buffers(ps, step, &in, &out);
        for (int d = 0; d < ps->ndevices; d++) {
            size_t row = (size_t) ps->slab[d].row_begin * nx;
            double up, work, down;
            MGPU_TRY(mgpu_fault_check(d, step));
            MGPU_TRY(mgpu_pipeline_run_serial(ps->pipe[d], in + row, out + row, &up, &work, &down));
            t->upload += up;
            t->compute += work;
            t->download += down;
        }
        mgpu_progress_step(progress, step + 1);
    }
    return MGPU_OK;
}

/* WARMUP untimed runs and REPEATS timed ones, pipelined or (with STAGES)
 * serial: their times into SECONDS, the serial stage times into STAGES. */
static mgpu_status time_runs(pipeline_state *ps, const mgpu_run *run, double *seconds,
                             stage_times *stages)
{
    for (int r = 0; r < run->warmup + run->repeats; r++) {
        stage_times t;
        reset(ps);
        mgpu_progress_run(run->progress, r);
        double start = mgpu_now();
        MGPU_TRY(stages ? serial_steps(ps, run->progress, &t) : pipelined_steps(ps, run->progress));
        if (r >= run->warmup) {
            seconds[r - run->warmup] = mgpu_now() - start;
            if (stages)
                stages[r - run->warmup] = t;
        }
    }
    return MGPU_OK;
}

/* Bytes over the host link each step: every chunk's rows with its two halo
 * rows up, its rows down. */
static void link_bytes(const pipeline_state *ps, double *up, double *down)
{
    double row = (double) ps->opt->nx * sizeof(float);
    *up = *down = 0;
    for (int d = 0; d < ps->ndevices; d++) {
        *up += (double) (ps->desc[d].rows + 2LL * ps->desc[d].chunks) * row;
        *down += (double) ps->desc[d].rows * row;
    }
}

/* The serial runs, and what the record says of both. */
static mgpu_status compare(pipeline_state *ps, const mgpu_run *run, double pipelined_s)
{
    int n = run->repeats;
    double *serial = calloc((size_t) n, sizeof *serial);
    double *up = calloc((size_t) n, sizeof *up), *work = calloc((size_t) n, sizeof *work);
    double *down = calloc((size_t) n, sizeof *down);
    stage_times *stages = calloc((size_t) n, sizeof *stages);
    mgpu_progress_begin(run->progress, "serial chunks", run->warmup, run->repeats, run->compute);
    mgpu_status status = serial && up && work && down && stages
                             ? time_runs(ps, run, serial, stages)
                             : mgpu_error_set(MGPU_ERR_NOMEM, "out of host memory");
    if (status == MGPU_OK) {
        for (int r = 0; r < n; r++) {
            up[r] = stages[r].upload;
            work[r] = stages[r].compute;
            down[r] = stages[r].download;
        }
        double serial_s = mgpu_stats_of(serial, n).median;
        double up_s = mgpu_stats_of(up, n).median, work_s = mgpu_stats_of(work, n).median;
        double down_s = mgpu_stats_of(down, n).median;
        double longest = up_s > work_s ? up_s : work_s, up_bytes, down_bytes;
        longest = longest > down_s ? longest : down_s;
        link_bytes(ps, &up_bytes, &down_bytes);
        double steps = (double) ps->opt->steps;
        mgpu_record *rec = run->record;
        mgpu_record_set_number(rec, "time_serial_s", serial_s);
        mgpu_record_set_number(rec, "upload_s", up_s);
        mgpu_record_set_number(rec, "compute_s", work_s);
        mgpu_record_set_number(rec, "download_s", down_s);
        mgpu_record_set_number(rec, "overlap_gain", serial_s / pipelined_s);
        mgpu_record_set_number(rec, "pipeline_bound", pipelined_s / longest);
        mgpu_record_set_number(rec, "upload_gbytes_per_s", up_bytes * steps / up_s / 1e9);
        mgpu_record_set_number(rec, "download_gbytes_per_s", down_bytes * steps / down_s / 1e9);
    }
    free(serial);
    free(up);
    free(work);
    free(down);
    free(stages);
    return status;
}

static mgpu_status measure(pipeline_state *ps, mgpu_run *run)
{
    const mgpu_options *opt = ps->opt;
    MGPU_TRY(time_runs(ps, run, run->seconds, NULL));
    if (run->field) {
        memcpy(run->field, ps->field[opt->steps & 1],
               (size_t) opt->nx * (size_t) opt->ny * sizeof(float));
        mgpu_field_fill_halo_rows(run->field, opt->kernel, opt->nx, opt->ny);
    }
    if (!run->record || !run->compute)
        return MGPU_OK;
    mgpu_record *rec = run->record;
    mgpu_record_set_text(rec, "mode", "pipeline");
    mgpu_record_set_number(rec, "chunks", ps->desc[0].chunks);
    mgpu_record_set_number(rec, "streams", ps->desc[0].streams);
    mgpu_record_set_number(rec, "device_bytes", (double) ps->device_bytes);
    return compare(ps, run, mgpu_stats_of(run->seconds, run->repeats).median);
}

mgpu_status streams_pipeline(const streams_options *o, mgpu_run *run)
{
    pipeline_state ps;
    /* The halos of every slab meet in host memory: staged, in the record's
     * words. */
    if (run->record)
        run->record->exchange = MGPU_EXCHANGE_STAGED;
    mgpu_status status = state_create(o, run, &ps);
    if (status == MGPU_OK)
        status = measure(&ps, run);
    state_destroy(&ps);
    return status;
}
