/* persistent.c - mgpu-persistent: the device-driven floor.
 *
 * The host launches once per run and then only waits: every device steps
 * its slab, writes its edge rows into the neighbours' halo rows through peer
 * pointers (or, with --halo=K, copies its neighbours' K edge rows every K
 * steps and runs the library's passes of up to T steps between), and meets
 * the neighbours through flags in device memory.  No host launch, event or
 * host decision sits between two steps, so what a step costs here is what
 * the devices and the link cost: the floor that the host-driven strategies
 * are measured against.  Two forms (--form, doc/persistent.md "Forms"): one
 * persistent kernel a device (cooperative launch, every block resident, a
 * grid-wide barrier between steps; persistent-cuda.cu, deep-cuda.cu), or a
 * CUDA graph a device whose conditional loop launches the library's own
 * kernels (looped-cuda.cu).  The protocols and their hazards are in those
 * files and doc/persistent.md.
 *
 * The host backend cannot run it: its "devices" run one kernel to its end
 * before the next starts, so two kernels that wait for each other would
 * never end.  Asking for it is a usage error, never a silent pass. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/measurement.h"
#include "persistent.h"

static const char *const protocol_names[] = {"overlap", "barrier", NULL};
static long long protocol = PROTOCOL_OVERLAP;
/* --form's choices: auto, then enum persistent_form's, in order. */
static const char *const form_names[] = {"auto", "resident", "graph", NULL};
enum { FORM_AUTO = 0 };
static long long form = FORM_AUTO;
static long long blocks_per_sm = 1;
static long long wait_limit_s = 10;

static const mgpu_extra_option extra[] = {
    {"form",
     "what runs on each device: resident (one cooperative kernel for the whole "
     "run), graph (a CUDA graph whose device-side loop launches the library's own "
     "kernels, neighbours met through flags in device memory), or auto (the faster "
     "for the grid, devices and halo, doc/persistent.md)",
     form_names, 0, 2, 0, &form, NULL},
    {"protocol",
     "how the resident kernel meets its neighbours each step, with one-row "
     "halos: overlap (only the warps of the edge rows wait for the neighbours' "
     "flags, the interior is computed meanwhile) or barrier (compute all, grid "
     "barrier, flags, grid barrier); barrier makes --form=auto take the resident "
     "kernel",
     protocol_names, 0, 1, 0, &protocol, NULL},
    {"blocks-per-sm",
     "the resident kernel's blocks per multiprocessor, of 1024 threads (256 with "
     "--halo above 1; fewer where they do not fit); above 1 makes --form=auto "
     "take the resident kernel",
     NULL, 1, 32, 0, &blocks_per_sm, NULL},
    {"wait-limit", "seconds a kernel waits for a neighbour before it stops the run", NULL, 1, 3600,
     0, &wait_limit_s, NULL},
    {NULL, NULL, NULL, 0, 0, 0, NULL, NULL},
};

static const char *const environment[] = {
    "MGPU_INJECT_DELAY=US:DEVICE",
    "DEVICE's kernel sleeps US microseconds (1 to 60000000) at its start and "
    "after each wait for its neighbours, so that they run ahead and only the "
    "flags hold them (a test of the order they keep; runs of one device take "
    "no notice)",
    NULL,
};

static const mgpu_program program = {
    .name = "mgpu-persistent",
    .strategy = "device-driven",
    .summary = "the host launches once; each device steps and exchanges halos on its own (peer "
               "pointers, flags in device memory), from a CUDA graph's device-side loop or one "
               "persistent kernel",
    .exchanges = MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_DIRECT),
    .extra = extra,
    .deep_halo = 1,
    .environment = environment,
};

static mgpu_status needs_cuda(void)
{
    mgpu_backend backend = mgpu_backend_active();
    return mgpu_error_set(MGPU_ERR_USAGE,
                          "needs the CUDA backend: the %s backend was chosen "
                          "(%s), whose devices run one kernel to its end at a "
                          "time, so kernels that wait for each other never end",
                          mgpu_backend_name(backend), mgpu_backend_reason());
}

/* --form, auto resolved into *FORM_RUN: the faster form where it was
 * measured (doc/persistent.md, "Forms"), or the resident one where an option
 * of its own asks for what the graph form does not do. */
static mgpu_status form_of(const mgpu_run *run, int *form_run)
{
    int resident_asked = protocol != PROTOCOL_OVERLAP || blocks_per_sm != 1;
    if (form == FORM_AUTO) {
        /* Measured on 2 and 4 H200s (BENCHMARKS.md sections 26 and 27): the
         * graph form is as fast as or faster than the resident kernel
         * everywhere but one-row halos on parts of 4 Mi cells (2048² on one
         * device, 4096² on four), which fit in L2 with both buffers; parts
         * of 2 Mi and 8 Mi cells went to the graph form or tied. */
        const double part_cells = (double) run->opt->nx * (double) run->opt->ny / run->ndevices;
        const int resident_faster = run->opt->halo == 1 && part_cells > 2.0 * 1048576 &&
                                    part_cells < 8.0 * 1048576;
        *form_run = resident_asked || resident_faster ? FORM_RESIDENT : FORM_GRAPH;
        return MGPU_OK;
    }
    *form_run = (int) form - 1;
    if (*form_run == FORM_GRAPH && resident_asked)
        return mgpu_error_set(MGPU_ERR_USAGE,
                              "--protocol and --blocks-per-sm shape the resident kernel: "
                              "--form=graph runs the library's launched kernels (accepted "
                              "with them: --form=resident or auto)");
    return MGPU_OK;
}

#ifdef MGPU_HAVE_CUDA

typedef struct state {
    mgpu_stencil *st;
    int nparts;
    persistent_flags *flags[MGPU_MAX_DEVICES]; /* each part's, in its device memory */
    persistent_signal *signal;                 /* mapped: the host's address */
    persistent_signal *signal_dev;             /* and the devices' */
    persistent_part parts[MGPU_MAX_DEVICES];
    int form;                               /* enum persistent_form */
    int time_block;                         /* steps a pass (time_block_of) */
    looped_graph *graphs[MGPU_MAX_DEVICES]; /* FORM_GRAPH: each part's run */
    int slow_part;                          /* MGPU_INJECT_DELAY's device, or -1 */
    long long slow_us;                      /* and how long it sleeps at each wait */
} state;

/* MGPU_INJECT_FAULT: the kernels cannot fail on purpose at a step without a
 * check inside the step loop, so the host asks for every part and step
 * before anything runs, and a run that would fail fails there, with the
 * library's message. */
static mgpu_status check_faults(const mgpu_run *run)
{
    if (!getenv("MGPU_INJECT_FAULT"))
        return MGPU_OK;
    return mgpu_fault_check_steps(run->ndevices, 0, run->opt->steps);
}

/* The steps a pass runs: --time-block's, or where it is auto, the resident
 * kernel's up to 4 (its registers) and the graph form's up to K (a pass a
 * cycle, what the launched blocked kernel runs best from 2 Mi cells a part
 * up), but 4 on parts of at most 1 Mi cells, where a shorter pass won
 * (doc/persistent.md, "Forms"). */
static int time_block_of(const mgpu_options *opt, int ndevices, int form_run)
{
    const double cells = (double) opt->nx * (double) opt->ny / ndevices;
    if (opt->time_block > 0 || form_run != FORM_GRAPH || cells <= 1048576.0)
        return mgpu_time_block_resolve(opt->time_block, opt->halo);
    return opt->halo < MGPU_TIME_BLOCK_MAX ? opt->halo : MGPU_TIME_BLOCK_MAX;
}

/* Every device launches cooperative kernels, and every pair of neighbours
 * reaches each other's memory: a clear usage error otherwise, before
 * anything is allocated.  The neighbours are the stencil domain's: parts
 * p-1 and p+1, around the ring for jacobi's periodic rows. */
static mgpu_status check_devices(const mgpu_run *run)
{
    int n = run->ndevices;
    int periodic = run->opt->kernel == MGPU_KERNEL_JACOBI;
    for (int p = 0; p < n; p++) {
        MGPU_TRY(persistent_check_device(p));
        int neighbours[2] = {p > 0      ? p - 1
                             : periodic ? n - 1
                                        : -1,
                             p < n - 1  ? p + 1
                             : periodic ? 0
                                        : -1};
        for (int k = 0; k < 2; k++) {
            int q = neighbours[k], can;
            if (q < 0 || q == p)
                continue;
            MGPU_TRY(mgpu_peer_can_access(p, q, &can));
            if (!can)
                return mgpu_error_set(MGPU_ERR_USAGE,
                                      "device %d cannot access device %d's "
                                      "memory (no peer access): the persistent "
                                      "kernels write their neighbours' halos "
                                      "and flags through peer pointers",
                                      p, q);
        }
    }
    return MGPU_OK;
}

/* PART's kernel: its buffers, the neighbours' halo rows and flags. */
static void describe(state *s, const mgpu_run *run, int part)
{
    const mgpu_slab *slab = mgpu_stencil_slab(s->st, part);
    int above = mgpu_stencil_above(s->st, part), below = mgpu_stencil_below(s->st, part);
    persistent_part *d = &s->parts[part];
    *d = (persistent_part){
        .kernel = run->opt->kernel,
        .protocol = (int) protocol,
        .compute = run->compute,
        .part = part,
        .nx = run->opt->nx,
        .rows = slab->row_end - slab->row_begin,
        .pitch = mgpu_stencil_pitch(s->st, part),
        .steps = run->opt->steps,
        .wait_above = above >= 0 && above != part,
        .wait_below = below >= 0 && below != part,
        .flags = s->flags[part],
        .signal = s->signal_dev,
        .wait_limit_ns = wait_limit_s * 1000000000LL,
        .halo = run->opt->halo,
        .time_block = s->time_block,
    };
    /* A part that waits for no other part has no one to be late for. */
    if (part == s->slow_part && (d->wait_above || d->wait_below))
        d->delay_ns = s->slow_us * 1000;
    /* Buffer b is mgpu_stencil_buffer's at step b, whatever the halo (mgpu.h). */
    for (int b = 0; b < 2; b++) {
        d->buf[b] = mgpu_stencil_buffer(s->st, part, b);
        if (d->halo == 1 && above >= 0)
            d->up[b] = mgpu_stencil_row(s->st, above, b, MGPU_ROW_HALO_BOTTOM);
        if (d->halo == 1 && below >= 0)
            d->down[b] = mgpu_stencil_row(s->st, below, b, MGPU_ROW_HALO_TOP);
        if (d->halo > 1 && above >= 0)
            d->pull_top[b] = mgpu_stencil_buffer(s->st, above, b) +
                             mgpu_stencil_block_offset(s->st, above, MGPU_ROW_LAST);
        if (d->halo > 1 && below >= 0)
            d->pull_bottom[b] = mgpu_stencil_buffer(s->st, below, b) +
                                mgpu_stencil_block_offset(s->st, below, MGPU_ROW_FIRST);
    }
    if (d->wait_above) {
        d->up_flag = &s->flags[above]->from_below;
        d->up_pulled = &s->flags[above]->pulled_by_below;
    }
    if (d->wait_below) {
        d->down_flag = &s->flags[below]->from_above;
        d->down_pulled = &s->flags[below]->pulled_by_above;
    }
}

/* SLOW_PART and SLOW_US: MGPU_INJECT_DELAY's (-1, 0: none). */
static mgpu_status state_create(state *s, const mgpu_run *run, int form_run, int time_block,
                                int slow_part, long long slow_us)
{
    const mgpu_options *opt = run->opt;
    memset(s, 0, sizeof *s);
    s->form = form_run;
    s->time_block = time_block;
    s->slow_part = slow_part;
    s->slow_us = slow_us;
    /* direct: the stencil domain enables peer access between neighbours, so
     * that the kernels may use each other's pointers. */
    mgpu_stencil_desc desc = mgpu_stencil_desc_of(opt, run->ndevices);
    desc.exchange = MGPU_EXCHANGE_DIRECT;
    desc.time_block = time_block;
    MGPU_TRY(mgpu_stencil_create(&s->st, &desc));
    s->nparts = run->ndevices;
    for (int p = 0; p < s->nparts; p++) {
        void *flags;
        MGPU_TRY(mgpu_malloc(mgpu_stencil_device(s->st, p), sizeof(persistent_flags), &flags));
        s->flags[p] = flags;
    }
    void *host, *dev;
    MGPU_TRY(mgpu_host_alloc(sizeof(persistent_signal), MGPU_HOST_MAPPED, &host));
    s->signal = host;
    MGPU_TRY(mgpu_host_device_pointer(host, &dev));
    s->signal_dev = dev;
    for (int p = 0; p < s->nparts; p++) {
        describe(s, run, p);
        MGPU_TRY(mgpu_device_set(mgpu_stencil_device(s->st, p)));
        if (s->form == FORM_GRAPH)
            MGPU_TRY(looped_build(s->st, &s->parts[p], &s->graphs[p]));
        else
            MGPU_TRY(persistent_prepare(&s->parts[p], (int) blocks_per_sm));
    }
    return MGPU_OK;
}

static void state_destroy(state *s)
{
    if (!s->st)
        return;
    for (int p = 0; p < s->nparts; p++)
        looped_destroy(s->graphs[p]);
    for (int p = 0; p < s->nparts; p++)
        if (s->flags[p]) {
            mgpu_device_synchronize(mgpu_stencil_device(s->st, p));
            mgpu_free(mgpu_stencil_device(s->st, p), s->flags[p]);
        }
    mgpu_host_free(s->signal);
    mgpu_stencil_destroy(s->st);
}

/* Every part back to the initial field, every flag to 0, and all of it done
 * on every device before any kernel starts: a neighbour's kernel writes into
 * these buffers and flags as soon as it runs. */
static mgpu_status reset(state *s)
{
    for (int p = 0; p < s->nparts; p++) {
        MGPU_TRY(mgpu_stencil_reset(s->st, p));
        MGPU_TRY(
            mgpu_memset(mgpu_stencil_device(s->st, p), s->flags[p], 0, sizeof(persistent_flags)));
    }
    for (int p = 0; p < s->nparts; p++)
        MGPU_TRY(mgpu_device_synchronize(mgpu_stencil_device(s->st, p)));
    memset((void *) s->signal, 0, sizeof *s->signal);
    return MGPU_OK;
}

/* Wait until every kernel has ended.  The host polls rather than blocks on
 * one device, so that a failure on any device is seen at once: it raises
 * STOP, the other kernels leave at their next wait, and the first failure is
 * reported. */
static mgpu_status wait_all(state *s, mgpu_status status)
{
    volatile persistent_signal *signal = s->signal;
    char first[512] = "";
    int done[MGPU_MAX_DEVICES] = {0}, left = s->nparts;
    if (status != MGPU_OK) {
        snprintf(first, sizeof first, "%s", mgpu_last_error());
        signal->stop = STOP_HOST;
    }
    while (left > 0) {
        for (int p = 0; p < s->nparts; p++) {
            if (done[p])
                continue;
            int finished;
            mgpu_status st = mgpu_stream_query(mgpu_stencil_stream(s->st, p), &finished);
            if (st != MGPU_OK) {
                if (status == MGPU_OK) {
                    status = st;
                    snprintf(first, sizeof first, "%s", mgpu_last_error());
                }
                signal->stop = STOP_HOST;
                finished = 1;
            }
            if (finished) {
                done[p] = 1;
                left--;
            }
        }
    }
    if (status != MGPU_OK)
        return mgpu_error_set(status, "%s", first);
    if (signal->stop == STOP_TIMEOUT)
        return mgpu_error_set(MGPU_ERR_SYSTEM,
                              "device %d waited more than %lld s for a "
                              "neighbour's halo of step %lld; every kernel "
                              "stopped (--wait-limit)",
                              mgpu_stencil_device(s->st, signal->part), wait_limit_s, signal->step);
    if (signal->stop != STOP_NONE)
        return mgpu_error_set(MGPU_ERR_SYSTEM, "the run was stopped (%d)", signal->stop);
    return MGPU_OK;
}

/* One run from the initial field: one launch per device, then wait.  The
 * launches go out one after the other from this thread, and each returns at
 * once, so all kernels run together; a device whose kernel starts later
 * holds its neighbours at their first wait, which the time includes. */
static mgpu_status one_run(state *s, const mgpu_run *run, double *seconds, double *launch_s)
{
    MGPU_TRY(reset(s));
    double start = mgpu_now();
    mgpu_status status = MGPU_OK;
    if (run->opt->steps > 0) {
        for (int p = 0; p < s->nparts && status == MGPU_OK; p++) {
            status = mgpu_device_set(mgpu_stencil_device(s->st, p));
            if (status == MGPU_OK && s->form == FORM_GRAPH)
                status = looped_launch(s->graphs[p], mgpu_stencil_stream(s->st, p));
            else if (status == MGPU_OK)
                status = persistent_launch(&s->parts[p], mgpu_stencil_stream(s->st, p));
        }
    }
    *launch_s = mgpu_now() - start;
    status = wait_all(s, status);
    *seconds = mgpu_now() - start;
    return status;
}

/* The host's time in a run is issuing the launches, then waiting for the
 * kernels: the record's host_issue and host_wait per step. */
static mgpu_status timed_runs(state *s, mgpu_run *run)
{
    for (int r = 0; r < run->warmup + run->repeats; r++) {
        double seconds, launch_s;
        /* The kernels tell the host nothing while they run (a write to host
         * memory each step would cost the floor they measure): the progress
         * moves a whole run at a time. */
        mgpu_progress_run(run->progress, r);
        MGPU_TRY(one_run(s, run, &seconds, &launch_s));
        mgpu_progress_step(run->progress, run->opt->steps);
        mgpu_run_keep(run, r, seconds, seconds - launch_s);
    }
    if (run->record && run->compute) {
        /* Deep halos meet once a cycle, by pulling (deep-cuda.cu, and the
         * graph form's exchange nodes): --protocol is how the resident
         * kernel's one-row halos meet; the graph form's one-step kernels
         * push theirs (looped-cuda.cu). */
        mgpu_record_set_text(run->record, "form", form_names[s->form + 1]);
        mgpu_record_set_text(run->record, "protocol",
                             s->parts[0].halo > 1    ? "pull"
                             : s->form == FORM_GRAPH ? "push"
                                                     : protocol_names[protocol]);
        if (s->form == FORM_RESIDENT) {
            mgpu_record_set_number(run->record, "blocks", s->parts[0].blocks);
            mgpu_record_set_number(run->record, "block_threads", s->parts[0].threads);
        }
    }
    return run->field ? mgpu_stencil_gather_all(s->st, run->opt->steps, run->field) : MGPU_OK;
}

#endif /* MGPU_HAVE_CUDA */

static mgpu_status device_driven(void *ctx, mgpu_run *run)
{
    (void) ctx;
    /* MGPU_INJECT_DELAY is checked first, on any backend: its usage error
     * names the variable, not the backend.  A slow device is a test of how
     * devices meet: the one-device runs (--baseline, --verify=device's
     * reference) take no notice. */
    int slow_part = -1;
    long long slow_us = 0;
    if (run->ndevices > 1)
        MGPU_TRY(mgpu_delay_requested(run->ndevices, &slow_part, &slow_us));
    int form_run;
    MGPU_TRY(form_of(run, &form_run));
    if (mgpu_backend_active() != MGPU_BACKEND_CUDA)
        return needs_cuda();
#ifdef MGPU_HAVE_CUDA
    MGPU_TRY(check_faults(run));
    MGPU_TRY(check_devices(run));
    if (form_run == FORM_GRAPH && !looped_supported()) {
        if (form != FORM_AUTO)
            return mgpu_error_set(MGPU_ERR_USAGE,
                                  "--form=graph: needs conditional graph nodes, which this "
                                  "build or the CUDA driver lacks (CUDA 12.3 or newer for "
                                  "both; accepted here: --form=resident)");
        form_run = FORM_RESIDENT;
    }
    const int time_block = time_block_of(run->opt, run->ndevices, form_run);
    if (run->record) {
        run->record->exchange = MGPU_EXCHANGE_DIRECT;
        run->record->time_block = time_block;
    }
    state s;
    mgpu_status status = state_create(&s, run, form_run, time_block, slow_part, slow_us);
    if (status == MGPU_OK)
        status = timed_runs(&s, run);
    state_destroy(&s);
    return status;
#else
    return needs_cuda();
#endif
}

int main(int argc, char **argv) { return mgpu_main(&program, argc, argv, device_driven, NULL); }
