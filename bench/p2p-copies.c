/* p2p-copies.c - what mgpu-p2p measures: the links between devices, copy
 * bandwidth between every pair (peer, a kernel through a peer pointer, and
 * staged through pinned host memory in chunks, lib/staged-copy.c; one
 * direction and both), the halo exchange of book table 11.1
 * (cudaMemcpyPeer against cudaMemcpyPeerAsync), small-copy latency,
 * host-device bandwidth, each device's own copy bandwidth, and the size
 * sweep, as nccl-tests prints one (time, algbw and, for all pairs at once,
 * busbw).  Each measurement is a job (p2p-sample.c times and verifies it);
 * each result is a cell of a figure. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "p2p.h"

/* The kinds of copy a job queues. */
enum path {
    PATH_PEER,   /* cudaMemcpyPeerAsync on the source's stream */
    PATH_DIRECT, /* a kernel on the source writes through a peer pointer */
    PATH_STAGED, /* device -> pinned host -> device in chunks (mgpu_staged_copy) */
    PATH_H2D_PINNED,
    PATH_D2H_PINNED,
    PATH_H2D_PAGEABLE, /* synchronous: the driver stages through its own buffer */
    PATH_D2H_PAGEABLE,
    PATH_LOCAL,     /* within one device */
    PATH_HALO_SYNC, /* the halo exchange by cudaMemcpyPeer */
    PATH_HALO_ASYNC /* the same by cudaMemcpyPeerAsync on per-device streams */
};

/* Copies per sample of the size sweep, at most: enough to time small
 * copies well above the event clock's resolution. */
#define SWEEP_BATCH 64

#define RULE_ONE_WAY "GB/s = bytes copied / time (1 GB = 10^9 bytes), one direction"
#define STAGING_RULE                                                                        \
    "staged in chunks of %zu bytes through %d pinned buffers, each chunk's host-to-device " \
    "copy overlapping the next one's device-to-host copy"
#define RULE_BOTH_WAYS                                                                   \
    "GB/s = 2 x bytes / time: the bytes of both directions together, the two copies at " \
    "the same time"

static char *at(void *base, size_t offset) { return (char *) base + offset; }

const char *const p2p_test_names[] = {
#define P2P_TEST_NAME_(id, name, what) name,
    P2P_TEST_MAP(P2P_TEST_NAME_)
#undef P2P_TEST_NAME_
        NULL};

/* --test keeps the tests in a mask of unsigned bits. */
_Static_assert(P2P_TESTS <= 32, "more tests than bits in p2p_options.tests");

const char *const p2p_test_measures[] = {
#define P2P_TEST_MEASURES_(id, name, what) what,
    P2P_TEST_MAP(P2P_TEST_MEASURES_)
#undef P2P_TEST_MEASURES_
        NULL};

/* ------------------------------------------------------ queueing copies */

/* COUNT copies of BYTES from A's source to B's destination by PATH, copy k
 * from offset k * BYTES and to offset BASE + k * BYTES.  Chained staged
 * copies each wait for the previous one to arrive, so that their time is a
 * latency. */
static mgpu_status pair_copies(p2p_ctx *ctx, const p2p_job *job, int a, int b, size_t base)
{
    p2p_device *da = &ctx->dev[a], *db = &ctx->dev[b];
    mgpu_stream *send = da->stream[LANE_SEND];
    size_t bytes = job->bytes;
    if (job->path == PATH_DIRECT)
        MGPU_TRY(mgpu_device_set(a)); /* the kernel runs on the source */
    for (int k = 0; k < job->count; k++) {
        size_t off = (size_t) k * bytes;
        void *dst = at(db->dst, base + off);
        switch (job->path) {
        case PATH_PEER:
            MGPU_TRY(mgpu_copy_peer_async(dst, b, at(da->src, off), a, bytes, send));
            break;
        case PATH_DIRECT:
            MGPU_TRY(mgpu_copy_row_kernel((float *) dst, (const float *) at(da->src, off),
                                          (long long) (bytes / sizeof(float)), send));
            break;
        case PATH_STAGED:
            if (job->chained && k > 0)
                MGPU_TRY(mgpu_stream_wait_event(send, db->back));
            MGPU_TRY(mgpu_staged_copy_async(ctx->staging[a][b], dst, at(da->src, off), bytes, send,
                                            db->stream[LANE_RECV]));
            if (job->chained)
                MGPU_TRY(mgpu_event_record(db->back, db->stream[LANE_RECV]));
            break;
        }
    }
    return MGPU_OK;
}

static mgpu_status issue_pair(p2p_ctx *ctx, const p2p_job *job)
{
    MGPU_TRY(pair_copies(ctx, job, job->a, job->b, 0));
    if (job->both)
        MGPU_TRY(pair_copies(ctx, job, job->b, job->a, 0));
    return MGPU_OK;
}

/* All pairs at once: device b receives from device a into its slot of the
 * other devices' (a's rank among them), each slot COUNT copies long. */
static size_t all_slot(const p2p_job *job, int a, int b)
{
    return (size_t) (a < b ? a : a - 1) * job->bytes * (size_t) job->count;
}

static mgpu_status issue_all(p2p_ctx *ctx, const p2p_job *job)
{
    for (int a = 0; a < ctx->n; a++)
        for (int b = 0; b < ctx->n; b++)
            if (a != b)
                MGPU_TRY(pair_copies(ctx, job, a, b, all_slot(job, a, b)));
    return MGPU_OK;
}

/* Copies between device D and the host, or within D. */
static mgpu_status device_copies(p2p_ctx *ctx, int path, int d, size_t bytes, int count)
{
    p2p_device *dv = &ctx->dev[d];
    mgpu_stream *send = dv->stream[LANE_SEND];
    for (int k = 0; k < count; k++) {
        size_t off = (size_t) k * bytes;
        switch (path) {
        case PATH_H2D_PINNED:
            MGPU_TRY(mgpu_memcpy_async(at(dv->dst, off), at(dv->host_src, off), bytes, send));
            break;
        case PATH_D2H_PINNED:
            MGPU_TRY(mgpu_memcpy_async(at(dv->stage, off), at(dv->src, off), bytes, send));
            break;
        case PATH_H2D_PAGEABLE:
            MGPU_TRY(mgpu_device_set(d));
            MGPU_TRY(mgpu_memcpy(at(dv->dst, off), at(dv->page_src, off), bytes));
            break;
        case PATH_D2H_PAGEABLE:
            MGPU_TRY(mgpu_device_set(d));
            MGPU_TRY(mgpu_memcpy(at(dv->page_dst, off), at(dv->src, off), bytes));
            break;
        case PATH_LOCAL:
            MGPU_TRY(mgpu_memcpy_async(at(dv->dst, off), at(dv->src, off), bytes, send));
            break;
        }
    }
    return MGPU_OK;
}

/* Pageable copies to every device at once need a host thread each: each
 * copy holds its thread until the driver has staged it. */
typedef struct pageable_worker {
    pthread_t thread;
    p2p_ctx *ctx;
    const p2p_job *job;
    int device;
    mgpu_status status;
    char error[256];
} pageable_worker;

static void *pageable_main(void *arg)
{
    pageable_worker *w = arg;
    w->status = device_copies(w->ctx, w->job->path, w->device, w->job->bytes, w->job->count);
    if (w->status == MGPU_OK)
        w->status = mgpu_device_synchronize(w->device);
    if (w->status != MGPU_OK)
        snprintf(w->error, sizeof w->error, "%s", mgpu_last_error());
    return NULL;
}

static mgpu_status pageable_everywhere(p2p_ctx *ctx, const p2p_job *job)
{
    pageable_worker w[MGPU_MAX_DEVICES];
    int started = 0;
    mgpu_status status = MGPU_OK;
    for (int d = 0; d < ctx->n; d++) {
        w[d] = (pageable_worker){.ctx = ctx, .job = job, .device = d};
        if (pthread_create(&w[d].thread, NULL, pageable_main, &w[d]) != 0) {
            status = mgpu_error_set(MGPU_ERR_SYSTEM, "pthread_create: cannot start a copy thread");
            break;
        }
        started++;
    }
    for (int d = 0; d < started; d++) {
        pthread_join(w[d].thread, NULL);
        if (status == MGPU_OK && w[d].status != MGPU_OK)
            status = mgpu_error_set(w[d].status, "%s", w[d].error);
    }
    return status;
}

static mgpu_status issue_device(p2p_ctx *ctx, const p2p_job *job)
{
    if (job->a >= 0)
        return device_copies(ctx, job->path, job->a, job->bytes, job->count);
    if (job->path == PATH_H2D_PAGEABLE || job->path == PATH_D2H_PAGEABLE)
        return pageable_everywhere(ctx, job);
    for (int d = 0; d < ctx->n; d++)
        MGPU_TRY(device_copies(ctx, job->path, d, job->bytes, job->count));
    return MGPU_OK;
}

/* Book 11.3: every device sends its first row to the device above and its
 * last row to the device below.  Device i's source holds its first row at
 * [0, h) and its last at [h, 2h); its destination receives the row from
 * above at [0, h) and the row from below at [h, 2h). */
static mgpu_status halo_send(p2p_ctx *ctx, int path, int i, size_t h)
{
    p2p_device *dv = &ctx->dev[i];
    int to[2] = {i + 1, i - 1};  /* below, above */
    size_t from_off[2] = {h, 0}; /* last row goes below, first row above */
    size_t to_off[2] = {0, h};   /* into the receiver's top, bottom halo */
    for (int k = 0; k < 2; k++) {
        if (to[k] < 0 || to[k] >= ctx->n)
            continue;
        void *dst = at(ctx->dev[to[k]].dst, to_off[k]);
        const void *src = at(dv->src, from_off[k]);
        if (path == PATH_HALO_SYNC)
            MGPU_TRY(mgpu_copy_peer(dst, to[k], src, i, h));
        else
            MGPU_TRY(mgpu_copy_peer_async(dst, to[k], src, i, h, dv->stream[LANE_SEND]));
    }
    return MGPU_OK;
}

static mgpu_status issue_halo(p2p_ctx *ctx, const p2p_job *job)
{
    int n = ctx->n;
    for (int round = 0; round < job->count; round++) {
        if (job->path == PATH_HALO_SYNC) {
            /* cudaMemcpyPeer orders itself after all work on both devices. */
            for (int i = 0; i < n; i++)
                MGPU_TRY(halo_send(ctx, PATH_HALO_SYNC, i, job->bytes));
            continue;
        }
        /* A device sends again only once its neighbours' rows of the
         * previous round have arrived, as a step's compute would need:
         * streams wait for events, the host for nothing.  Every wait is
         * queued before any new record, so that it refers to the previous
         * round. */
        for (int i = 0; round > 0 && i < n; i++) {
            mgpu_stream *send = ctx->dev[i].stream[LANE_SEND];
            if (i > 0)
                MGPU_TRY(mgpu_stream_wait_event(send, ctx->dev[i - 1].sent));
            if (i < n - 1)
                MGPU_TRY(mgpu_stream_wait_event(send, ctx->dev[i + 1].sent));
        }
        for (int i = 0; i < n; i++) {
            MGPU_TRY(halo_send(ctx, PATH_HALO_ASYNC, i, job->bytes));
            MGPU_TRY(mgpu_event_record(ctx->dev[i].sent, ctx->dev[i].stream[LANE_SEND]));
        }
    }
    return MGPU_OK;
}

/* ---------------------------------------------------------- making jobs */

/* Jobs are made in place: all pairs at once give one a region for each
 * pair, too much to pass around by value. */
static void new_job(p2p_job *job, const char *what, int path, int a, int b, size_t bytes, int count)
{
    memset(job, 0, sizeof *job);
    snprintf(job->what, sizeof job->what, "%s", what);
    job->path = path;
    job->a = a;
    job->b = b;
    job->bytes = bytes;
    job->count = count;
}

static const char *const path_names[] = {
    [PATH_PEER] = "peer copy",
    [PATH_DIRECT] = "kernel copy",
    [PATH_STAGED] = "staged copy",
    [PATH_H2D_PINNED] = "pinned host-to-device copy",
    [PATH_D2H_PINNED] = "pinned device-to-host copy",
    [PATH_H2D_PAGEABLE] = "pageable host-to-device copy",
    [PATH_D2H_PAGEABLE] = "pageable device-to-host copy",
    [PATH_LOCAL] = "local copy",
    [PATH_HALO_SYNC] = "halo exchange (cudaMemcpyPeer)",
    [PATH_HALO_ASYNC] = "halo exchange (cudaMemcpyPeerAsync)",
};

/* A job of COUNT copies of BYTES from device A to device B by PATH (and
 * back, when BOTH), with its lanes and the regions it writes. */
static void pair_job(p2p_ctx *ctx, p2p_job *job, int path, int a, int b, int both, size_t bytes,
                     int count)
{
    char what[96];
    snprintf(what, sizeof what, "%s %d %s %d, %d x %zu bytes", path_names[path], a,
             both ? "<->" : "->", b, count, bytes);
    new_job(job, what, path, a, b, bytes, count);
    job->issue = issue_pair;
    job->both = both;
    p2p_job_lane(job, a, LANE_SEND);
    if (path == PATH_STAGED)
        p2p_job_lane(job, b, LANE_RECV);
    p2p_job_region(job, b, ctx->dev[b].dst, bytes * (size_t) count, device_seed(a), 0);
    if (both) {
        p2p_job_lane(job, b, LANE_SEND);
        if (path == PATH_STAGED)
            p2p_job_lane(job, a, LANE_RECV);
        p2p_job_region(job, a, ctx->dev[a].dst, bytes * (size_t) count, device_seed(b), 0);
    }
}

/* A job of every device copying COUNT copies of BYTES by PATH to every
 * other at once, each pair into its own slot of the destination. */
static void all_job(p2p_ctx *ctx, p2p_job *job, int path, size_t bytes, int count)
{
    char what[96];
    snprintf(what, sizeof what, "%s, all pairs at once, %d x %zu bytes", path_names[path], count,
             bytes);
    new_job(job, what, path, 0, 0, bytes, count);
    job->issue = issue_all;
    job->all = 1;
    for (int d = 0; d < ctx->n; d++) {
        p2p_job_lane(job, d, LANE_SEND);
        if (path == PATH_STAGED)
            p2p_job_lane(job, d, LANE_RECV);
    }
    for (int a = 0; a < ctx->n; a++)
        for (int b = 0; b < ctx->n; b++)
            if (a != b)
                p2p_job_region(job, b, at(ctx->dev[b].dst, all_slot(job, a, b)),
                               bytes * (size_t) count, device_seed(a), 0);
}

/* The region a host or local copy of device D writes, and the pattern. */
static void device_region(p2p_ctx *ctx, p2p_job *job, int d, size_t bytes)
{
    p2p_device *dv = &ctx->dev[d];
    switch (job->path) {
    case PATH_H2D_PINNED:
        p2p_job_region(job, d, dv->dst, bytes, host_seed(d), 0);
        break;
    case PATH_H2D_PAGEABLE:
        p2p_job_region(job, d, dv->dst, bytes, page_seed(d), 0);
        break;
    case PATH_D2H_PINNED:
        p2p_job_region(job, MGPU_HOST_MEMORY, dv->stage, bytes, device_seed(d), 0);
        break;
    case PATH_D2H_PAGEABLE:
        p2p_job_region(job, MGPU_HOST_MEMORY, dv->page_dst, bytes, device_seed(d), 0);
        break;
    case PATH_LOCAL:
        p2p_job_region(job, d, dv->dst, bytes, device_seed(d), 0);
        break;
    }
}

/* A job of COUNT copies of BYTES by PATH for device D, or (D = -1) for
 * every device at once. */
static void device_job(p2p_ctx *ctx, p2p_job *job, int path, int d, size_t bytes, int count)
{
    char what[96], who[32] = "every device at once";
    if (d >= 0)
        snprintf(who, sizeof who, "device %d", d);
    snprintf(what, sizeof what, "%s, %s, %d x %zu bytes", path_names[path], who, count, bytes);
    new_job(job, what, path, d, d, bytes, count);
    job->issue = issue_device;
    job->host_clock = path == PATH_H2D_PAGEABLE || path == PATH_D2H_PAGEABLE;
    for (int i = 0; i < ctx->n; i++) {
        if (d >= 0 && i != d)
            continue;
        p2p_job_lane(job, i, LANE_SEND);
        device_region(ctx, job, i, bytes * (size_t) count);
    }
}

/* The staged copies' pinned buffers from device A to B, made at their
 * first job (before it is timed) and kept for the later ones. */
static mgpu_status staging_ready(p2p_ctx *ctx, int a, int b)
{
    if (ctx->staging[a][b])
        return MGPU_OK;
    return mgpu_staged_copy_create(a, b, ctx->opt->staging_chunk, ctx->opt->staging_buffers,
                                   &ctx->staging[a][b]);
}

void p2p_measure_done(p2p_ctx *ctx)
{
    for (int a = 0; a < ctx->n; a++)
        for (int b = 0; b < ctx->n; b++) {
            mgpu_staged_copy_destroy(ctx->staging[a][b]);
            ctx->staging[a][b] = NULL;
        }
}

/* p2p_time, once what JOB's copies go through is there. */
static mgpu_status time_job(p2p_ctx *ctx, const p2p_job *job, double *seconds)
{
    for (int a = 0; job->path == PATH_STAGED && a < ctx->n; a++)
        for (int b = 0; b < ctx->n; b++)
            if (a != b && (job->all || (a == job->a && b == job->b) ||
                           (job->both && a == job->b && b == job->a)))
                MGPU_TRY(staging_ready(ctx, a, b));
    return p2p_time(ctx, job, seconds);
}

/* ------------------------------------------------------------ the figures */

static p2p_figure *figure(p2p_ctx *ctx, const char *key, int rows, int columns, const char *title,
                          const char *unit, const char *rule, int digits)
{
    p2p_figure *f = p2p_figure_add(ctx->results, key, rows, columns);
    if (!f)
        return NULL;
    f->title = title;
    f->unit = unit;
    f->rule = rule;
    f->digits = digits;
    return f;
}

/* An n x n figure of device pairs: row the source, column the destination. */
static p2p_figure *pair_figure(p2p_ctx *ctx, const char *key, const char *title, const char *unit,
                               const char *rule, int digits, size_t bytes)
{
    p2p_figure *f = figure(ctx, key, ctx->n, ctx->n, title, unit, rule, digits);
    if (!f)
        return NULL;
    p2p_figure_device_rows(f);
    p2p_figure_device_columns(f);
    f->row_title = "from";
    f->column_title = "to";
    f->bytes = bytes;
    return f;
}

#define NEW_FIGURE(var, call)                                                            \
    do {                                                                                 \
        if (!((var) = (call)))                                                           \
            return mgpu_error_set(MGPU_ERR_NOMEM, "out of host memory for the results"); \
    } while (0)

static int can_access(int a, int b)
{
    int can = 0;
    return mgpu_peer_can_access(a, b, &can) == MGPU_OK && can;
}

/* Whether copies of BYTES from device A to B can go by PATH: the staged
 * path always, the others with peer access, a kernel's in whole floats. */
static int pair_copies_possible(int path, int a, int b, size_t bytes)
{
    if (path == PATH_STAGED)
        return 1;
    return can_access(a, b) && (path != PATH_DIRECT || bytes % sizeof(float) == 0);
}

mgpu_status p2p_measure_links(p2p_ctx *ctx)
{
    int n = ctx->n;
    p2p_figure *devices, *access, *link, *nvlinks, *path, *source, *rank, *atomics;
    NEW_FIGURE(devices, figure(ctx, "devices", n, 6, "the devices", "",
                               "as the driver reports them; peak_gbytes_per_s: memory clock x bus "
                               "width x 2 (double data rate)",
                               1));
    p2p_figure_device_rows(devices);
    devices->row_title = "device";
    static const char *const device_columns[] = {"name",
                                                 "pci_bus_id",
                                                 "memory_gib",
                                                 "multiprocessors",
                                                 "compute_capability",
                                                 "peak_gbytes_per_s"};
    for (int c = 0; c < 6; c++)
        snprintf(devices->column_names[c], P2P_LABEL, "%s", device_columns[c]);
    for (int d = 0; d < n; d++) {
        const mgpu_device_info *info = &ctx->dev[d].info;
        p2p_cell_text(devices, d, 0, info->name);
        if (!ctx->cuda)
            continue;
        char text[32];
        snprintf(text, sizeof text, "%04x:%02x:%02x.0", info->pci_domain, info->pci_bus,
                 info->pci_device);
        p2p_cell_text(devices, d, 1, text);
        p2p_cell_number(devices, d, 2, (double) info->total_bytes / (1024.0 * 1024 * 1024));
        p2p_cell_number(devices, d, 3, info->multiprocessors);
        snprintf(text, sizeof text, "%d.%d", info->cc_major, info->cc_minor);
        p2p_cell_text(devices, d, 4, text);
        p2p_cell_number(devices, d, 5, info->peak_gbps);
    }
    /* The devices are told whatever the tests; the links are a test. */
    if (!p2p_test_on(ctx, P2P_TEST_LINKS))
        return MGPU_OK;

    NEW_FIGURE(access, pair_figure(ctx, "peer_access", "peer access", "",
                                   "1: the row device can read and write the column "
                                   "device's memory directly (cudaDeviceCanAccessPeer)",
                                   0, 0));
    NEW_FIGURE(link, pair_figure(ctx, "link", "the link between each pair", "",
                                 ctx->cuda ? "NVLink (direct), NVSwitch (NVLinks to a switch) "
                                             "or PCIe, from NVML; where NVML could not be "
                                             "loaded, guessed: NVLink where the link offers "
                                             "native atomics, PCIe where not (link_source "
                                             "says which); none: no peer access, copies are "
                                             "staged through host memory"
                                           : "host backend: host \"devices\" share the "
                                             "host's memory; copies are memcpy",
                                 0, 0));
    NEW_FIGURE(nvlinks, pair_figure(ctx, "nvlinks", "active NVLinks between each pair", "",
                                    "nvmlDeviceGetNvLinkState and -RemotePciInfo_v2, link by "
                                    "link; through NVSwitches, the fewer of the two GPUs' "
                                    "switch links (null where NVML could not tell)",
                                    0, 0));
    NEW_FIGURE(path, pair_figure(ctx, "pcie_path", "PCIe path between each pair", "",
                                 "nvmlDeviceGetTopologyCommonAncestor, named as nvidia-smi "
                                 "topo -m: PIX one PCIe switch, PXB several, PHB a host "
                                 "bridge, NODE host bridges of one NUMA node, SYS across "
                                 "NUMA nodes, BOARD one board (null where NVML could not "
                                 "tell)",
                                 0, 0));
    NEW_FIGURE(source, pair_figure(ctx, "link_source", "where the link figures come from", "",
                                   "nvml: NVML; guess: native atomics, NVML not there "
                                   "(link_note says why); unknown: the host backend",
                                   0, 0));
    NEW_FIGURE(rank, pair_figure(ctx, "performance_rank", "link performance rank", "",
                                 "cudaDevP2PAttrPerformanceRank: relative performance of the "
                                 "link, 0 the best (null on the host backend)",
                                 0, 0));
    NEW_FIGURE(atomics, pair_figure(ctx, "native_atomics", "native atomics over the link", "",
                                    "cudaDevP2PAttrNativeAtomicSupported (null on the host "
                                    "backend)",
                                    0, 0));
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++) {
            p2p_cell_number(access, a, b, can_access(a, b));
            if (a == b)
                continue;
            mgpu_link_info li;
            MGPU_TRY(mgpu_link_query(a, b, &li));
            p2p_cell_text(source, a, b, mgpu_link_source_name(li.source));
            if (li.source != MGPU_LINK_NVML && !ctx->link_note[0])
                snprintf(ctx->link_note, sizeof ctx->link_note, "%s", li.why);
            if (!ctx->cuda) {
                p2p_cell_text(link, a, b, "host memcpy");
                continue;
            }
            p2p_cell_text(link, a, b, !can_access(a, b) ? "none" : li.type);
            if (li.nvlinks >= 0)
                p2p_cell_number(nvlinks, a, b, li.nvlinks);
            if (li.pcie_path)
                p2p_cell_text(path, a, b, li.pcie_path);
            mgpu_peer_link pl;
            MGPU_TRY(mgpu_peer_link_get(a, b, &pl));
            p2p_cell_number(rank, a, b, pl.performance_rank);
            p2p_cell_number(atomics, a, b, pl.native_atomics);
        }
    }
    return MGPU_OK;
}

/* The ratio of two figures' medians, cell by cell, where both exist. */
static void ratio_cells(p2p_figure *ratio, p2p_figure *num, p2p_figure *den)
{
    for (int r = 0; r < ratio->rows; r++) {
        for (int c = 0; c < ratio->columns; c++) {
            p2p_cell *x = p2p_cell_at(num, r, c), *y = p2p_cell_at(den, r, c);
            if (x->kind == CELL_STATS && y->kind == CELL_STATS && y->value > 0)
                p2p_cell_number(ratio, r, c, x->value / y->value);
        }
    }
}

mgpu_status p2p_measure_pairs(p2p_ctx *ctx)
{
    const p2p_options *opt = ctx->opt;
    int n = ctx->n;
    size_t bytes = opt->bytes;
    double seconds[P2P_MAX_REPEAT];
    static p2p_job job; /* large: kept off the stack */
    static const struct {
        int path;
        p2p_test one_test, both_test;
        const char *one_key, *one_title, *both_key, *both_title;
    } kinds[] = {
        {PATH_PEER, P2P_TEST_PEER_ONE, P2P_TEST_PEER_BOTH, "peer_bw_one_way",
         "device-to-device bandwidth, peer access on (cudaMemcpyPeerAsync), one direction",
         "peer_bw_both_ways", "device-to-device bandwidth, peer access on, both directions"},
        {PATH_DIRECT, P2P_TEST_KERNEL_ONE, P2P_TEST_KERNEL_BOTH, "kernel_bw_one_way",
         "device-to-device bandwidth, a kernel writing through a peer pointer, one direction",
         "kernel_bw_both_ways",
         "device-to-device bandwidth, a kernel writing through a peer pointer, both "
         "directions"},
        {PATH_STAGED, P2P_TEST_STAGED_ONE, P2P_TEST_STAGED_BOTH, "staged_bw_one_way",
         "device-to-device bandwidth, peer access off: staged through pinned host memory, "
         "one direction",
         "staged_bw_both_ways",
         "device-to-device bandwidth, peer access off: staged, both directions"},
    };
    /* The staged figures also say how the copies were staged. */
    static char staged_one[320], staged_both[320];
    snprintf(staged_one, sizeof staged_one, "%s; " STAGING_RULE, RULE_ONE_WAY, opt->staging_chunk,
             opt->staging_buffers);
    snprintf(staged_both, sizeof staged_both, "%s; " STAGING_RULE, RULE_BOTH_WAYS,
             opt->staging_chunk, opt->staging_buffers);
    /* A figure for each test that runs, NULL for the others. */
    p2p_figure *one[3] = {NULL}, *both[3] = {NULL};
    for (int k = 0; k < 3; k++) {
        int path = kinds[k].path;
        if (p2p_test_on(ctx, kinds[k].one_test)) {
            NEW_FIGURE(one[k],
                       pair_figure(ctx, kinds[k].one_key, kinds[k].one_title, "GB/s",
                                   path == PATH_STAGED ? staged_one : RULE_ONE_WAY, 1, bytes));
            one[k]->samples = opt->repeat;
        }
        if (p2p_test_on(ctx, kinds[k].both_test)) {
            NEW_FIGURE(both[k],
                       pair_figure(ctx, kinds[k].both_key, kinds[k].both_title, "GB/s",
                                   path == PATH_STAGED ? staged_both : RULE_BOTH_WAYS, 1, bytes));
            both[k]->samples = opt->repeat;
        }
        for (int a = 0; a < n; a++) {
            for (int b = 0; b < n; b++) {
                if (a == b || !pair_copies_possible(path, a, b, bytes))
                    continue;
                if (one[k] && p2p_pair_on(ctx, a, b)) {
                    ctx->test = kinds[k].one_test;
                    pair_job(ctx, &job, path, a, b, 0, bytes, 1);
                    MGPU_TRY(time_job(ctx, &job, seconds));
                    p2p_cell_rate(one[k], a, b, (double) bytes, seconds, opt->repeat);
                }
                if (!both[k] || b < a || !pair_copies_possible(path, b, a, bytes) ||
                    !(p2p_pair_on(ctx, a, b) || p2p_pair_on(ctx, b, a)))
                    continue;
                ctx->test = kinds[k].both_test;
                pair_job(ctx, &job, path, a, b, 1, bytes, 1);
                MGPU_TRY(time_job(ctx, &job, seconds));
                p2p_cell_rate(both[k], a, b, 2.0 * (double) bytes, seconds, opt->repeat);
                *p2p_cell_at(both[k], b, a) = *p2p_cell_at(both[k], a, b);
            }
        }
    }
    /* The ratios where both of their tests ran. */
    p2p_figure *ratio;
    if (one[0] && one[2]) {
        NEW_FIGURE(ratio, pair_figure(ctx, "peer_over_staged_one_way",
                                      "peer access on / off, one direction", "x",
                                      "peer_bw_one_way / staged_bw_one_way (medians)", 2, bytes));
        ratio_cells(ratio, one[0], one[2]);
    }
    if (both[0] && both[2]) {
        NEW_FIGURE(ratio,
                   pair_figure(ctx, "peer_over_staged_both_ways",
                               "peer access on / off, both directions", "x",
                               "peer_bw_both_ways / staged_bw_both_ways (medians)", 2, bytes));
        ratio_cells(ratio, both[0], both[2]);
    }
    return MGPU_OK;
}

mgpu_status p2p_measure_halo(p2p_ctx *ctx)
{
    const p2p_options *opt = ctx->opt;
    int n = ctx->n;
    size_t h = opt->halo;
    double seconds[P2P_MAX_REPEAT];
    static p2p_job job; /* large: kept off the stack */
    p2p_figure *halo, *speedup;
    if (!p2p_test_on(ctx, P2P_TEST_HALO))
        return MGPU_OK;
    ctx->test = P2P_TEST_HALO;
    NEW_FIGURE(halo, figure(ctx, "halo_exchange", 2, 1,
                            "halo exchange among all devices at once (book table 11.1)", "us",
                            "microseconds per exchange: each device sends one halo to each "
                            "neighbour, 2 x (devices - 1) copies of the halo's bytes; the "
                            "time of --rounds exchanges / rounds",
                            2));
    snprintf(halo->row_names[0], P2P_LABEL, "cudaMemcpyPeer");
    snprintf(halo->row_names[1], P2P_LABEL, "cudaMemcpyPeerAsync");
    snprintf(halo->column_names[0], P2P_LABEL, "us/exchange");
    halo->row_title = "copy call";
    halo->bytes = h;
    halo->samples = opt->repeat;
    NEW_FIGURE(speedup,
               figure(ctx, "halo_exchange_speedup", 1, 1, "cudaMemcpyPeerAsync over cudaMemcpyPeer",
                      "x", "time of cudaMemcpyPeer / time of cudaMemcpyPeerAsync (medians)", 2));
    snprintf(speedup->row_names[0], P2P_LABEL, "speedup");
    snprintf(speedup->column_names[0], P2P_LABEL, "x");
    speedup->bytes = h;
    if (n < 2)
        return MGPU_OK; /* one device has no neighbour */
    for (int k = 0; k < 2; k++) {
        int path = k == 0 ? PATH_HALO_SYNC : PATH_HALO_ASYNC;
        char what[96];
        snprintf(what, sizeof what, "%s, %d rounds of %zu-byte halos", path_names[path],
                 opt->rounds, h);
        new_job(&job, what, path, 0, 0, h, opt->rounds);
        job.issue = issue_halo;
        for (int i = 0; i < n; i++) {
            p2p_job_lane(&job, i, path == PATH_HALO_SYNC ? LANE_DEFAULT : LANE_SEND);
            if (i > 0)
                p2p_job_region(&job, i, ctx->dev[i].dst, h, device_seed(i - 1), h);
            if (i < n - 1)
                p2p_job_region(&job, i, at(ctx->dev[i].dst, h), h, device_seed(i + 1), 0);
        }
        MGPU_TRY(time_job(ctx, &job, seconds));
        p2p_cell_time(halo, k, 0, 1e6 / opt->rounds, seconds, opt->repeat);
    }
    double sync = p2p_cell_at(halo, 0, 0)->value, async = p2p_cell_at(halo, 1, 0)->value;
    p2p_cell_number(speedup, 0, 0, sync / async);
    return MGPU_OK;
}

mgpu_status p2p_measure_latency(p2p_ctx *ctx)
{
    const p2p_options *opt = ctx->opt;
    int n = ctx->n, copies = opt->latency_copies;
    size_t bytes = opt->latency_bytes;
    double seconds[P2P_MAX_REPEAT];
    p2p_figure *peer = NULL, *staged = NULL;
    if (p2p_test_on(ctx, P2P_TEST_PEER_LATENCY)) {
        NEW_FIGURE(peer, pair_figure(ctx, "peer_latency_us",
                                     "latency of a small copy, peer access on "
                                     "(cudaMemcpyPeerAsync)",
                                     "us",
                                     "microseconds per copy: the time of --latency-copies copies "
                                     "queued back to back on one stream / their number",
                                     2, bytes));
        peer->samples = opt->repeat;
    }
    if (p2p_test_on(ctx, P2P_TEST_STAGED_LATENCY)) {
        NEW_FIGURE(staged, pair_figure(ctx, "staged_latency_us",
                                       "latency of a small copy, peer access off (staged)", "us",
                                       "microseconds per copy: each staged copy (device to "
                                       "pinned host to device) waits for the previous one to "
                                       "arrive; the time of all / their number",
                                       2, bytes));
        staged->samples = opt->repeat;
    }
    static p2p_job job; /* large: kept off the stack */
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++) {
            if (!p2p_pair_on(ctx, a, b))
                continue;
            if (peer && can_access(a, b)) {
                ctx->test = P2P_TEST_PEER_LATENCY;
                pair_job(ctx, &job, PATH_PEER, a, b, 0, bytes, copies);
                MGPU_TRY(time_job(ctx, &job, seconds));
                p2p_cell_time(peer, a, b, 1e6 / copies, seconds, opt->repeat);
            }
            if (!staged)
                continue;
            ctx->test = P2P_TEST_STAGED_LATENCY;
            pair_job(ctx, &job, PATH_STAGED, a, b, 0, bytes, copies);
            job.chained = 1;
            MGPU_TRY(time_job(ctx, &job, seconds));
            p2p_cell_time(staged, a, b, 1e6 / copies, seconds, opt->repeat);
        }
    }
    return MGPU_OK;
}

/* Staged copies against the two pinned copies each is made of: from
 * device a to b over the slower of a's device-to-host and b's
 * host-to-device copy, each measured alone.  Chunked staging can come
 * near 1; done whole, it is near 1/2 where the two directions are alike. */
static mgpu_status staged_over_pinned(p2p_ctx *ctx, p2p_figure *host)
{
    p2p_figure *staged = p2p_figure_find(ctx->results, "staged_bw_one_way");
    if (!staged || !p2p_test_on(ctx, P2P_TEST_H2D) || !p2p_test_on(ctx, P2P_TEST_D2H))
        return MGPU_OK;
    p2p_figure *f;
    NEW_FIGURE(f, pair_figure(ctx, "staged_over_pinned_one_way",
                              "staged copies against the slower of the pinned copies they are "
                              "made of",
                              "x",
                              "staged_bw_one_way from a to b / min(host_bw's d2h pinned of a, "
                              "h2d pinned of b) (medians, each copy measured alone): what "
                              "staging keeps of the host link",
                              2, ctx->opt->bytes));
    for (int a = 0; a < ctx->n; a++) {
        for (int b = 0; b < ctx->n; b++) {
            const p2p_cell *x = p2p_cell_at(staged, a, b);
            const p2p_cell *d2h = p2p_cell_at(host, a, 1), *h2d = p2p_cell_at(host, b, 0);
            if (x->kind != CELL_STATS || d2h->kind != CELL_STATS || h2d->kind != CELL_STATS)
                continue;
            double slower = d2h->value < h2d->value ? d2h->value : h2d->value;
            if (slower > 0)
                p2p_cell_number(f, a, b, x->value / slower);
        }
    }
    return MGPU_OK;
}

mgpu_status p2p_measure_host(p2p_ctx *ctx)
{
    const p2p_options *opt = ctx->opt;
    int n = ctx->n;
    size_t bytes = opt->bytes;
    double seconds[P2P_MAX_REPEAT];
    static const int paths[4] = {PATH_H2D_PINNED, PATH_D2H_PINNED, PATH_H2D_PAGEABLE,
                                 PATH_D2H_PAGEABLE};
    static const char *const names[4] = {"h2d pinned", "d2h pinned", "h2d pageable",
                                         "d2h pageable"};
    /* A column each; the columns of tests not run stay empty. */
    static const p2p_test tests[4] = {P2P_TEST_H2D, P2P_TEST_D2H, P2P_TEST_H2D_PAGEABLE,
                                      P2P_TEST_D2H_PAGEABLE};
    int any = 0;
    for (int c = 0; c < 4; c++)
        any |= p2p_test_on(ctx, tests[c]);
    if (!any)
        return MGPU_OK;
    p2p_figure *f;
    NEW_FIGURE(f, figure(ctx, "host_bw", n + 1, 4, "host-to-device and device-to-host bandwidth",
                         "GB/s",
                         RULE_ONE_WAY "; the row \"all\" copies to (from) every device at "
                                      "once and counts the bytes of all of them. Pinned: "
                                      "events behind a spin; pageable copies block the "
                                      "host, so they are timed by its clock between two "
                                      "synchronisations",
                         1));
    p2p_figure_device_rows(f);
    snprintf(f->row_names[n], P2P_LABEL, "all");
    f->row_title = "device";
    f->bytes = bytes;
    f->samples = opt->repeat;
    for (int c = 0; c < 4; c++) {
        snprintf(f->column_names[c], P2P_LABEL, "%s", names[c]);
        if (!p2p_test_on(ctx, tests[c]))
            continue;
        ctx->test = tests[c];
        for (int d = -1; d < n; d++) {
            /* One device needs no "all" row of its own; it is the same. */
            if (d < 0 && n == 1)
                continue;
            static p2p_job job; /* large: kept off the stack */
            device_job(ctx, &job, paths[c], d, bytes, 1);
            MGPU_TRY(time_job(ctx, &job, seconds));
            p2p_cell_rate(f, d < 0 ? n : d, c, (double) bytes * (d < 0 ? n : 1), seconds,
                          opt->repeat);
        }
    }
    for (int c = 0; n == 1 && c < 4; c++)
        *p2p_cell_at(f, 1, c) = *p2p_cell_at(f, 0, c);
    return staged_over_pinned(ctx, f);
}

mgpu_status p2p_measure_local(p2p_ctx *ctx)
{
    const p2p_options *opt = ctx->opt;
    double seconds[P2P_MAX_REPEAT];
    p2p_figure *f;
    if (!p2p_test_on(ctx, P2P_TEST_LOCAL))
        return MGPU_OK;
    ctx->test = P2P_TEST_LOCAL;
    NEW_FIGURE(f, figure(ctx, "local_bw", ctx->n, 1,
                         "device-to-device copy within each device (the memory ceiling)", "GB/s",
                         "GB/s = 2 x bytes / time: each byte copied is read once and written "
                         "once (read+write counted, as the stencil record's copy_gbytes_per_s)",
                         1));
    p2p_figure_device_rows(f);
    snprintf(f->column_names[0], P2P_LABEL, "copy");
    f->row_title = "device";
    f->bytes = opt->bytes;
    f->samples = opt->repeat;
    for (int d = 0; d < ctx->n; d++) {
        static p2p_job job; /* large: kept off the stack */
        device_job(ctx, &job, PATH_LOCAL, d, opt->bytes, 1);
        MGPU_TRY(time_job(ctx, &job, seconds));
        p2p_cell_rate(f, d, 0, 2.0 * (double) opt->bytes, seconds, opt->repeat);
    }
    return MGPU_OK;
}

/* ------------------------------------------------------------ the size sweep */

/* As nccl-tests prints a size: the time, the algorithm bandwidth (the
 * bytes of the operation / its time) and, for a collective, the bus
 * bandwidth (doc/p2p.md says which factor applies and why). */
static const char *const sweep_columns[] = {"time_us", "algbw", "busbw"};
static const char *const sweep_units[] = {"us", "GB/s", "GB/s"};

#define SWEEP_TIME_RULE                                                                     \
    "time_us: microseconds per copy, a batch of min(64, buffer / size) copies queued back " \
    "to back timed together / their number; "
#define SWEEP_PAIR_RULE                                                                  \
    SWEEP_TIME_RULE "algbw: GB/s = bytes of the copy / time_us (1 GB = 10^9 bytes), as " \
                    "nccl-tests' algbw of a send/recv, whose busbw is the same"
#define SWEEP_ALL_RULE                                                                        \
    "every device copies size / devices (rounded down to 16 bytes, as nccl-tests' alltoall) " \
    "to every other device at once, each row's size the rounded one; time_us: "               \
    "microseconds per all-to-all, a batch of them queued back to back / their number; "       \
    "algbw: GB/s = size / time_us, nccl-tests' alltoall algbw; busbw = algbw x "              \
    "(devices - 1) / devices, its busbw: what each device sends over its links / time_us"

/* A figure of the sweep: a row per size of SIZES, columns time_us, algbw
 * and, for a collective (BUSBW), busbw. */
static p2p_figure *sweep_figure(p2p_ctx *ctx, const char *key, const char *title, const char *rule,
                                const size_t *sizes, int busbw)
{
    p2p_figure *f = figure(ctx, key, ctx->sizes, busbw ? 3 : 2, title, "us, GB/s", rule, 2);
    if (!f || !p2p_figure_size_rows(f, sizes))
        return NULL;
    snprintf(f->title_text, sizeof f->title_text, "%s", title);
    f->title = f->title_text;
    f->column_units = sweep_units;
    f->row_title = "bytes";
    f->samples = ctx->opt->repeat;
    for (int c = 0; c < f->columns; c++)
        snprintf(f->column_names[c], P2P_LABEL, "%s", sweep_columns[c]);
    return f;
}

/* Copies of SIZE per sample: enough to time small ones well above the
 * event clock's resolution, as many as fit in a buffer of ROOM. */
static int sweep_batch(size_t room, size_t size)
{
    size_t batch = room / size;
    return batch < SWEEP_BATCH ? (int) batch : SWEEP_BATCH;
}

/* JOB timed into row ROW of F: microseconds per copy (or per all-to-all),
 * ALGBW_BYTES of each over its time, and busbw (the third column, where F
 * has one) BUS_FACTOR times that. */
static mgpu_status sweep_row(p2p_ctx *ctx, p2p_figure *f, int row, const p2p_job *job,
                             double algbw_bytes, double bus_factor)
{
    const p2p_options *opt = ctx->opt;
    double seconds[P2P_MAX_REPEAT];
    MGPU_TRY(time_job(ctx, job, seconds));
    p2p_cell_time(f, row, 0, 1e6 / job->count, seconds, opt->repeat);
    p2p_cell_rate(f, row, 1, algbw_bytes * job->count, seconds, opt->repeat);
    if (f->columns > 2)
        p2p_cell_rate(f, row, 2, algbw_bytes * bus_factor * job->count, seconds, opt->repeat);
    return MGPU_OK;
}

static const struct {
    p2p_test test;
    int path;
    const char *key, *what;
} sweep_pair_kinds[] = {
    {P2P_TEST_SWEEP_PEER, PATH_PEER, "peer", "peer copies (cudaMemcpyPeerAsync)"},
    {P2P_TEST_SWEEP_KERNEL, PATH_DIRECT, "kernel", "a kernel writing through a peer pointer"},
    {P2P_TEST_SWEEP_STAGED, PATH_STAGED, "staged", "staged through pinned host memory"},
};

/* RULE, and for staged copies how they were staged, in TEXT (SIZE bytes,
 * kept as long as the figure). */
static const char *sweep_rule(p2p_ctx *ctx, int path, const char *rule, char *text, size_t size)
{
    if (path != PATH_STAGED)
        return rule;
    snprintf(text, size, "%s; " STAGING_RULE, rule, ctx->opt->staging_chunk,
             ctx->opt->staging_buffers);
    return text;
}

/* Copies of PATH by size from device A to B. */
static mgpu_status sweep_pair(p2p_ctx *ctx, int kind, int a, int b)
{
    static p2p_job job; /* large: kept off the stack */
    int path = sweep_pair_kinds[kind].path;
    char key[P2P_KEY], title[128];
    snprintf(key, sizeof key, "sweep_%s_%d_%d", sweep_pair_kinds[kind].key, a, b);
    snprintf(title, sizeof title, "%s from device %d to %d, by size", sweep_pair_kinds[kind].what,
             a, b);
    static char staged_rule[512];
    p2p_figure *f;
    NEW_FIGURE(f,
               sweep_figure(ctx, key, title,
                            sweep_rule(ctx, path, SWEEP_PAIR_RULE, staged_rule, sizeof staged_rule),
                            ctx->size, 0));
    for (int row = 0; row < ctx->sizes; row++) {
        size_t s = ctx->size[row];
        if (!pair_copies_possible(path, a, b, s))
            continue;
        pair_job(ctx, &job, path, a, b, 0, s, sweep_batch(ctx->buffer_bytes, s));
        MGPU_TRY(sweep_row(ctx, f, row, &job, (double) s, 1.0));
    }
    return MGPU_OK;
}

/* Every device to every other at once, by size: nccl-tests' alltoall of
 * that size per device. */
static mgpu_status sweep_all(p2p_ctx *ctx, int kind)
{
    static p2p_job job; /* large: kept off the stack */
    static size_t sizes[P2P_MAX_SIZES];
    int n = ctx->n, path = sweep_pair_kinds[kind].path;
    for (int row = 0; row < ctx->sizes; row++) {
        size_t slice = ctx->size[row] / (size_t) n & ~(size_t) 15;
        sizes[row] = slice ? slice * (size_t) n : ctx->size[row];
    }
    char key[P2P_KEY], title[128];
    snprintf(key, sizeof key, "sweep_%s_all", sweep_pair_kinds[kind].key);
    snprintf(title, sizeof title, "%s, every device to every other at once, by size",
             sweep_pair_kinds[kind].what);
    static char staged_rule[768];
    p2p_figure *f;
    NEW_FIGURE(f,
               sweep_figure(ctx, key, title,
                            sweep_rule(ctx, path, SWEEP_ALL_RULE, staged_rule, sizeof staged_rule),
                            sizes, 1));
    for (int row = 0; row < ctx->sizes; row++) {
        size_t slice = ctx->size[row] / (size_t) n & ~(size_t) 15;
        int possible = slice > 0;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                possible &= a == b || pair_copies_possible(path, a, b, slice);
        if (!possible)
            continue;
        /* Each destination holds a slot for each of the others. */
        all_job(ctx, &job, path, slice, sweep_batch(ctx->buffer_bytes / (size_t) (n - 1), slice));
        MGPU_TRY(sweep_row(ctx, f, row, &job, (double) sizes[row], (double) (n - 1) / n));
    }
    return MGPU_OK;
}

/* Host and local copies of device D by size. */
static mgpu_status sweep_device(p2p_ctx *ctx, int path, const char *name, const char *what, int d)
{
    static p2p_job job; /* large: kept off the stack */
    char key[P2P_KEY], title[128];
    snprintf(key, sizeof key, "sweep_%s_%d", name, d);
    snprintf(title, sizeof title, "%s, device %d, by size", what, d);
    p2p_figure *f;
    NEW_FIGURE(f, sweep_figure(ctx, key, title,
                               path == PATH_LOCAL
                                   ? SWEEP_TIME_RULE "algbw: GB/s = bytes copied / time_us (the "
                                                     "bytes once: local_bw counts them read and "
                                                     "written, twice this)"
                                   : SWEEP_TIME_RULE "algbw: GB/s = bytes copied / time_us",
                               ctx->size, 0));
    for (int row = 0; row < ctx->sizes; row++) {
        size_t s = ctx->size[row];
        device_job(ctx, &job, path, d, s, sweep_batch(ctx->buffer_bytes, s));
        MGPU_TRY(sweep_row(ctx, f, row, &job, (double) s, 1.0));
    }
    return MGPU_OK;
}

mgpu_status p2p_measure_sweep(p2p_ctx *ctx)
{
    int n = ctx->n;
    for (int k = 0; k < 3; k++) {
        if (!p2p_test_on(ctx, sweep_pair_kinds[k].test))
            continue;
        ctx->test = sweep_pair_kinds[k].test;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                if (p2p_pair_on(ctx, a, b))
                    MGPU_TRY(sweep_pair(ctx, k, a, b));
        if (n > 1)
            MGPU_TRY(sweep_all(ctx, k));
    }
    if (p2p_test_on(ctx, P2P_TEST_SWEEP_HOST)) {
        ctx->test = P2P_TEST_SWEEP_HOST;
        for (int d = 0; d < n; d++) {
            MGPU_TRY(sweep_device(ctx, PATH_H2D_PINNED, "h2d", "pinned host to device", d));
            MGPU_TRY(sweep_device(ctx, PATH_D2H_PINNED, "d2h", "device to pinned host", d));
        }
    }
    if (p2p_test_on(ctx, P2P_TEST_SWEEP_LOCAL)) {
        ctx->test = P2P_TEST_SWEEP_LOCAL;
        for (int d = 0; d < n; d++)
            MGPU_TRY(sweep_device(ctx, PATH_LOCAL, "local", "copies within the device", d));
    }
    return MGPU_OK;
}
