/* p2p-sample.c - one measurement of mgpu-p2p, done as doc/design.md section 6
 * asks: warmed up, each sample's destinations poisoned before and verified
 * after, and the copies timed with events while queued behind a spin
 * kernel.
 *
 * Why the spin: copies issued one by one from the host start as soon as
 * each is issued, so a batch of short copies would be timed together with
 * the host's launch gaps.  The spin holds the first stream while the host
 * queues the whole batch; the start event after it fires only when every
 * copy is already waiting, and the batch then runs back to back.  The other
 * streams wait for that start event.  The host checks that it finished
 * queueing well within the spin; if not, the spin doubles and the sample is
 * taken again, up to a limit past which the sample is counted as gapped.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "p2p.h"

/* The poison: the pattern of another seed differs in every word. */
#define POISON 0xFFFFFFFFu
/* The host must finish queueing within this share of the spin. */
#define SPIN_MARGIN 0.5
#define SPIN_MAX_US 20000.0

void p2p_job_lane(p2p_job *job, int device, int lane)
{
    if (job->nlanes < P2P_MAX_LANES)
        job->lane[job->nlanes++] = (p2p_lane){device, lane};
}

void p2p_job_region(p2p_job *job, int device, void *ptr, size_t bytes, uint32_t seed,
                    uint64_t offset)
{
    if (job->nregions < P2P_MAX_REGIONS)
        job->region[job->nregions++] = (p2p_region){device, ptr, bytes, seed, offset};
}

mgpu_stream *p2p_stream(p2p_ctx *ctx, p2p_lane lane)
{
    return lane.lane == LANE_DEFAULT ? NULL : ctx->dev[lane.device].stream[lane.lane];
}

/* Fill every destination with the poison, and wait until it is there. */
static mgpu_status poison(const p2p_job *job)
{
    for (int r = 0; r < job->nregions; r++) {
        const p2p_region *g = &job->region[r];
        if (g->device != MGPU_HOST_MEMORY)
            MGPU_TRY(mgpu_device_set(g->device));
        MGPU_TRY(mgpu_pattern_fill(g->device, g->ptr, g->bytes, g->seed ^ POISON, g->offset, NULL));
        if (g->device != MGPU_HOST_MEMORY)
            MGPU_TRY(mgpu_device_synchronize(g->device));
    }
    return MGPU_OK;
}

/* The test hook: turn one byte of a destination into another, as a broken
 * copy would, so that a test sees the check catch it. */
static mgpu_status corrupt(void *ptr, size_t bytes)
{
    unsigned char *byte = (unsigned char *) ptr + bytes / 2;
    unsigned char value;
    MGPU_TRY(mgpu_memcpy(&value, byte, 1));
    value ^= 0xFF;
    return mgpu_memcpy(byte, &value, 1);
}

static mgpu_status verify(p2p_ctx *ctx, const p2p_job *job, int sample)
{
    for (int r = 0; r < job->nregions; r++) {
        const p2p_region *g = &job->region[r];
        int corrupted = ++ctx->checks == ctx->corrupt_at;
        if (corrupted)
            MGPU_TRY(corrupt(g->ptr, g->bytes));
        if (g->device != MGPU_HOST_MEMORY)
            MGPU_TRY(mgpu_device_set(g->device));
        mgpu_pattern_result found;
        MGPU_TRY(mgpu_pattern_check(g->device, g->ptr, g->bytes, g->seed, g->offset, NULL, &found));
        if (found.wrong == 0)
            continue;
        char where[32] = "in host memory";
        if (g->device != MGPU_HOST_MEMORY)
            snprintf(where, sizeof where, "on device %d", g->device);
        return mgpu_error_set(MGPU_ERR_VERIFY,
                              "verification failed: %s, sample %d: %llu of %zu bytes wrong, the "
                              "first at byte %llu of the destination %s: expected 0x%02x, found "
                              "0x%02x%s",
                              job->what, sample + 1, found.wrong, g->bytes, found.first, where,
                              found.expected, found.found,
                              corrupted ? " (corrupted on purpose by MGPU_P2P_CORRUPT)" : "");
    }
    return MGPU_OK;
}

/* Pageable copies block the host: time them with its clock, between two
 * synchronisations of every device taking part. */
static mgpu_status sample_host_clock(p2p_ctx *ctx, const p2p_job *job, double *seconds)
{
    for (int l = 0; l < job->nlanes; l++)
        MGPU_TRY(mgpu_device_synchronize(job->lane[l].device));
    double begin = mgpu_now();
    MGPU_TRY(job->issue(ctx, job));
    for (int l = 0; l < job->nlanes; l++)
        MGPU_TRY(mgpu_device_synchronize(job->lane[l].device));
    *seconds = mgpu_now() - begin;
    return MGPU_OK;
}

/* One sample timed by events behind the spin.  *QUEUED gets how long the
 * host took to queue the copies. */
static mgpu_status sample_events(p2p_ctx *ctx, const p2p_job *job, double *seconds, double *queued)
{
    p2p_lane lead = job->lane[0];
    p2p_device *ld = &ctx->dev[lead.device];
    MGPU_TRY(mgpu_device_set(lead.device));
    MGPU_TRY(mgpu_stream_spin(p2p_stream(ctx, lead), ctx->spin_us));
    MGPU_TRY(mgpu_event_record(ld->start, p2p_stream(ctx, lead)));
    for (int l = 1; l < job->nlanes; l++) {
        MGPU_TRY(mgpu_device_set(job->lane[l].device));
        MGPU_TRY(mgpu_stream_wait_event(p2p_stream(ctx, job->lane[l]), ld->start));
    }
    double begin = mgpu_now();
    MGPU_TRY(job->issue(ctx, job));
    *queued = mgpu_now() - begin;
    /* The lead stream waits for every other lane before the stop event. */
    for (int l = 1; l < job->nlanes; l++) {
        p2p_lane lane = job->lane[l];
        mgpu_event *done = ctx->dev[lane.device].done[lane.lane];
        MGPU_TRY(mgpu_device_set(lane.device));
        MGPU_TRY(mgpu_event_record(done, p2p_stream(ctx, lane)));
        MGPU_TRY(mgpu_device_set(lead.device));
        MGPU_TRY(mgpu_stream_wait_event(p2p_stream(ctx, lead), done));
    }
    MGPU_TRY(mgpu_device_set(lead.device));
    MGPU_TRY(mgpu_event_record(ld->stop, p2p_stream(ctx, lead)));
    MGPU_TRY(mgpu_event_synchronize(ld->stop));
    return mgpu_event_elapsed(ld->start, ld->stop, seconds);
}

static mgpu_status one_sample(p2p_ctx *ctx, const p2p_job *job, int sample, double *seconds)
{
    MGPU_TRY(poison(job));
    if (job->host_clock) {
        MGPU_TRY(sample_host_clock(ctx, job, seconds));
    } else {
        double queued;
        for (;;) {
            MGPU_TRY(sample_events(ctx, job, seconds, &queued));
            if (!ctx->cuda || queued < SPIN_MARGIN * ctx->spin_us * 1e-6)
                break;
            if (ctx->spin_us >= SPIN_MAX_US) {
                ctx->gapped++; /* a call that blocks the host: no spin helps */
                break;
            }
            /* The batch may have started before the host had queued all of
             * it: take the sample again behind a longer spin. */
            ctx->spin_us *= 2;
            MGPU_TRY(poison(job));
        }
    }
    return verify(ctx, job, sample);
}

mgpu_status p2p_time(p2p_ctx *ctx, const p2p_job *job, double *seconds)
{
    const p2p_options *opt = ctx->opt;
    /* --progress: the test and its copies, as each job begins (a job's
     * samples take milliseconds; the line names what is being measured). */
    if (ctx->progress.on) {
        char line[160];
        snprintf(line, sizeof line, "%s: %s", p2p_test_names[ctx->test], job->what);
        mgpu_progress_note(&ctx->progress, line);
    }
    /* Each job finds the spin it needs, so that one slow job does not
     * lengthen all that follow. */
    ctx->spin_us = opt->spin_us;
    for (int s = 0; s < opt->warmup + opt->repeat; s++) {
        double t;
        MGPU_TRY(one_sample(ctx, job, s, &t));
        if (s >= opt->warmup)
            seconds[s - opt->warmup] = t > 1e-9 ? t : 1e-9; /* one tick at least */
    }
    return MGPU_OK;
}
