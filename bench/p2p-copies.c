/* p2p-copies.c - what mgpu-p2p measures: the links between devices, copy
 * bandwidth between every pair (peer, a kernel through a peer pointer, and
 * staged through pinned host memory; one direction and both), the halo
 * exchange of book table 11.1 (cudaMemcpyPeer against cudaMemcpyPeerAsync),
 * small-copy latency, host-device bandwidth, each device's own copy
 * bandwidth, and a size sweep.  Each measurement is a job (p2p-sample.c
 * times and verifies it); each result is a cell of a figure. */
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
    PATH_STAGED, /* device -> pinned host -> device, two queued copies */
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
 * from and to offset k * BYTES.  Chained staged copies each wait for the
 * previous one to arrive, so that their time is a latency. */
static mgpu_status pair_copies(p2p_ctx *ctx, int path, int a, int b, size_t bytes, int count,
                               int chained)
{
    p2p_device *da = &ctx->dev[a], *db = &ctx->dev[b];
    mgpu_stream *send = da->stream[LANE_SEND];
    if (path == PATH_DIRECT)
        MGPU_TRY(mgpu_device_set(a)); /* the kernel runs on the source */
    for (int k = 0; k < count; k++) {
        size_t off = (size_t) k * bytes;
        switch (path) {
        case PATH_PEER:
            MGPU_TRY(mgpu_copy_peer_async(at(db->dst, off), b, at(da->src, off), a, bytes, send));
            break;
        case PATH_DIRECT:
            MGPU_TRY(mgpu_copy_row_kernel((float *) at(db->dst, off),
                                          (const float *) at(da->src, off),
                                          (long long) (bytes / sizeof(float)), send));
            break;
        case PATH_STAGED:
            if (chained && k > 0)
                MGPU_TRY(mgpu_stream_wait_event(send, db->back));
            MGPU_TRY(mgpu_copy_staged_async(at(db->dst, off), b, at(da->src, off), a, bytes,
                                            at(da->stage, off), send, db->stream[LANE_RECV],
                                            da->staged));
            if (chained)
                MGPU_TRY(mgpu_event_record(db->back, db->stream[LANE_RECV]));
            break;
        }
    }
    return MGPU_OK;
}

static mgpu_status issue_pair(p2p_ctx *ctx, const p2p_job *job)
{
    MGPU_TRY(pair_copies(ctx, job->path, job->a, job->b, job->bytes, job->count, job->chained));
    if (job->both)
        MGPU_TRY(pair_copies(ctx, job->path, job->b, job->a, job->bytes, job->count, job->chained));
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

static p2p_job new_job(const char *what, int path, int a, int b, size_t bytes, int count)
{
    p2p_job job;
    memset(&job, 0, sizeof job);
    snprintf(job.what, sizeof job.what, "%s", what);
    job.path = path;
    job.a = a;
    job.b = b;
    job.bytes = bytes;
    job.count = count;
    return job;
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
static p2p_job pair_job(p2p_ctx *ctx, int path, int a, int b, int both, size_t bytes, int count)
{
    char what[96];
    snprintf(what, sizeof what, "%s %d %s %d, %d x %zu bytes", path_names[path], a,
             both ? "<->" : "->", b, count, bytes);
    p2p_job job = new_job(what, path, a, b, bytes, count);
    job.issue = issue_pair;
    job.both = both;
    p2p_job_lane(&job, a, LANE_SEND);
    if (path == PATH_STAGED)
        p2p_job_lane(&job, b, LANE_RECV);
    p2p_job_region(&job, b, ctx->dev[b].dst, bytes * (size_t) count, device_seed(a), 0);
    if (both) {
        p2p_job_lane(&job, b, LANE_SEND);
        if (path == PATH_STAGED)
            p2p_job_lane(&job, a, LANE_RECV);
        p2p_job_region(&job, a, ctx->dev[a].dst, bytes * (size_t) count, device_seed(b), 0);
    }
    return job;
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
static p2p_job device_job(p2p_ctx *ctx, int path, int d, size_t bytes, int count)
{
    char what[96], who[32] = "every device at once";
    if (d >= 0)
        snprintf(who, sizeof who, "device %d", d);
    snprintf(what, sizeof what, "%s, %s, %d x %zu bytes", path_names[path], who, count, bytes);
    p2p_job job = new_job(what, path, d, d, bytes, count);
    job.issue = issue_device;
    job.host_clock = path == PATH_H2D_PAGEABLE || path == PATH_D2H_PAGEABLE;
    for (int i = 0; i < ctx->n; i++) {
        if (d >= 0 && i != d)
            continue;
        p2p_job_lane(&job, i, LANE_SEND);
        device_region(ctx, &job, i, bytes * (size_t) count);
    }
    return job;
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

mgpu_status p2p_measure_links(p2p_ctx *ctx)
{
    int n = ctx->n;
    p2p_figure *devices, *access, *link, *nvlinks, *path, *source, *rank, *atomics;
    NEW_FIGURE(devices, figure(ctx, "devices", n, 6, "the devices", "",
                               "as the driver reports them; peak_gbps: memory clock x bus "
                               "width x 2 (double data rate)",
                               1));
    p2p_figure_device_rows(devices);
    devices->row_title = "device";
    static const char *const device_columns[] = {
        "name", "pci_bus_id", "memory_gib", "multiprocessors", "compute_capability", "peak_gbps"};
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
    /* A figure for each test that runs, NULL for the others. */
    p2p_figure *one[3] = {NULL}, *both[3] = {NULL};
    for (int k = 0; k < 3; k++) {
        int path = kinds[k].path;
        if (p2p_test_on(ctx, kinds[k].one_test)) {
            NEW_FIGURE(one[k], pair_figure(ctx, kinds[k].one_key, kinds[k].one_title, "GB/s",
                                           RULE_ONE_WAY, 1, bytes));
            one[k]->samples = opt->repeat;
        }
        if (p2p_test_on(ctx, kinds[k].both_test)) {
            NEW_FIGURE(both[k], pair_figure(ctx, kinds[k].both_key, kinds[k].both_title, "GB/s",
                                            RULE_BOTH_WAYS, 1, bytes));
            both[k]->samples = opt->repeat;
        }
        for (int a = 0; a < n; a++) {
            for (int b = 0; b < n; b++) {
                if (a == b || (path != PATH_STAGED && !can_access(a, b)) ||
                    (path == PATH_DIRECT && bytes % sizeof(float) != 0))
                    continue;
                p2p_job job;
                if (one[k]) {
                    ctx->test = kinds[k].one_test;
                    job = pair_job(ctx, path, a, b, 0, bytes, 1);
                    MGPU_TRY(p2p_time(ctx, &job, seconds));
                    p2p_cell_rate(one[k], a, b, (double) bytes, seconds, opt->repeat);
                }
                if (!both[k] || b < a || (path != PATH_STAGED && !can_access(b, a)))
                    continue;
                ctx->test = kinds[k].both_test;
                job = pair_job(ctx, path, a, b, 1, bytes, 1);
                MGPU_TRY(p2p_time(ctx, &job, seconds));
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
        p2p_job job = new_job(what, path, 0, 0, h, opt->rounds);
        job.issue = issue_halo;
        for (int i = 0; i < n; i++) {
            p2p_job_lane(&job, i, path == PATH_HALO_SYNC ? LANE_DEFAULT : LANE_SEND);
            if (i > 0)
                p2p_job_region(&job, i, ctx->dev[i].dst, h, device_seed(i - 1), h);
            if (i < n - 1)
                p2p_job_region(&job, i, at(ctx->dev[i].dst, h), h, device_seed(i + 1), 0);
        }
        MGPU_TRY(p2p_time(ctx, &job, seconds));
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
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++) {
            if (a == b)
                continue;
            p2p_job job;
            if (peer && can_access(a, b)) {
                ctx->test = P2P_TEST_PEER_LATENCY;
                job = pair_job(ctx, PATH_PEER, a, b, 0, bytes, copies);
                MGPU_TRY(p2p_time(ctx, &job, seconds));
                p2p_cell_time(peer, a, b, 1e6 / copies, seconds, opt->repeat);
            }
            if (!staged)
                continue;
            ctx->test = P2P_TEST_STAGED_LATENCY;
            job = pair_job(ctx, PATH_STAGED, a, b, 0, bytes, copies);
            job.chained = 1;
            MGPU_TRY(p2p_time(ctx, &job, seconds));
            p2p_cell_time(staged, a, b, 1e6 / copies, seconds, opt->repeat);
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
            p2p_job job = device_job(ctx, paths[c], d, bytes, 1);
            MGPU_TRY(p2p_time(ctx, &job, seconds));
            p2p_cell_rate(f, d < 0 ? n : d, c, (double) bytes * (d < 0 ? n : 1), seconds,
                          opt->repeat);
        }
    }
    for (int c = 0; n == 1 && c < 4; c++)
        *p2p_cell_at(f, 1, c) = *p2p_cell_at(f, 0, c);
    return MGPU_OK;
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
                         "once (read+write counted, as the stencil record's copy_gbps)",
                         1));
    p2p_figure_device_rows(f);
    snprintf(f->column_names[0], P2P_LABEL, "copy");
    f->row_title = "device";
    f->bytes = opt->bytes;
    f->samples = opt->repeat;
    for (int d = 0; d < ctx->n; d++) {
        p2p_job job = device_job(ctx, PATH_LOCAL, d, opt->bytes, 1);
        MGPU_TRY(p2p_time(ctx, &job, seconds));
        p2p_cell_rate(f, d, 0, 2.0 * (double) opt->bytes, seconds, opt->repeat);
    }
    return MGPU_OK;
}

mgpu_status p2p_measure_sweep(p2p_ctx *ctx)
{
    const p2p_options *opt = ctx->opt;
    int sizes = 0;
    for (size_t s = opt->sweep_min; s && s <= opt->sweep_max; s *= 2)
        sizes++;
    if (sizes == 0 || !p2p_test_on(ctx, P2P_TEST_SWEEP))
        return MGPU_OK;
    ctx->test = P2P_TEST_SWEEP;
    double seconds[P2P_MAX_REPEAT];
    static const int paths[6] = {PATH_PEER,       PATH_DIRECT,     PATH_STAGED,
                                 PATH_H2D_PINNED, PATH_D2H_PINNED, PATH_LOCAL};
    static const char *const names[6] = {"peer 0->1",    "kernel 0->1",  "staged 0->1",
                                         "h2d pinned 0", "d2h pinned 0", "local 0"};
    p2p_figure *f;
    NEW_FIGURE(f, figure(ctx, "sweep_bw", sizes, 6, "bandwidth by copy size", "GB/s",
                         RULE_ONE_WAY "; each sample times a batch of min(64, buffer / size) "
                                      "copies queued back to back (the staged copies of a "
                                      "batch overlap one another's halves); the local "
                                      "column counts read+write (2 x bytes / time)",
                         1));
    f->row_title = "bytes";
    f->samples = opt->repeat;
    if (!p2p_figure_size_rows(f, opt->sweep_min))
        return mgpu_error_set(MGPU_ERR_NOMEM, "out of host memory for the results");
    int two = ctx->n > 1;
    for (int c = 0; c < 6; c++)
        snprintf(f->column_names[c], P2P_LABEL, "%s", names[c]);
    int row = 0;
    for (size_t s = opt->sweep_min; s && s <= opt->sweep_max; s *= 2, row++) {
        size_t batch = ctx->buffer_bytes / s;
        int count = batch < SWEEP_BATCH ? (int) batch : SWEEP_BATCH;
        for (int c = 0; c < 6; c++) {
            int path = paths[c];
            int pair = path == PATH_PEER || path == PATH_DIRECT || path == PATH_STAGED;
            if (pair && (!two || (path != PATH_STAGED && !can_access(0, 1))))
                continue;
            if (path == PATH_DIRECT && s % sizeof(float) != 0)
                continue;
            p2p_job job = pair ? pair_job(ctx, path, 0, 1, 0, s, count)
                               : device_job(ctx, path, 0, s, count);
            MGPU_TRY(p2p_time(ctx, &job, seconds));
            double counted = (double) s * count * (path == PATH_LOCAL ? 2 : 1);
            p2p_cell_rate(f, row, c, counted, seconds, opt->repeat);
        }
    }
    return MGPU_OK;
}
