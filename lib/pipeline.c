/* pipeline.c - the stream pipeline (book 11.1): chunks of rows uploaded,
 * computed and downloaded on several streams, so that copies overlap work. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>

#include "mgpu-private.h"

/* Device rows are padded to 32 floats (128 bytes), so that every row starts
 * aligned for the kernels' vector loads, whatever the host pitch. */
enum { DEVICE_ROW_FLOATS = 32 };

struct mgpu_pipeline {
    mgpu_pipeline_desc desc;
    size_t pitch; /* floats between device rows */
    int nstreams; /* streams in use: more than one per chunk would idle */
    mgpu_stream **streams;
    float **d_in, **d_out; /* per stream: a chunk's input rows with halos, its output */
};

/* Output rows [*ROW0, *ROW0 + *NROWS) of chunk C: as even as possible, the
 * first rows % chunks chunks one row longer. */
static void chunk_rows(const mgpu_pipeline_desc *d, int c, long long *row0, long long *nrows)
{
    long long base = d->rows / d->chunks, longer = d->rows % d->chunks;
    *row0 = c * base + (c < longer ? c : longer);
    *nrows = base + (c < longer ? 1 : 0);
}

static mgpu_status check_desc(const mgpu_pipeline_desc *d)
{
    if (!d || !d->fn)
        return mgpu_fail(MGPU_ERR_USAGE, "pipeline: no description or no chunk function");
    MGPU_TRY(mgpu_check_device(d->device));
    if (d->nx < 1)
        return mgpu_fail(MGPU_ERR_USAGE, "pipeline: nx %lld must be at least 1", d->nx);
    if (d->host_pitch < (size_t) d->nx)
        return mgpu_fail(MGPU_ERR_USAGE, "pipeline: host pitch %zu is less than nx %lld",
                         d->host_pitch, d->nx);
    if (d->rows < 1)
        return mgpu_fail(MGPU_ERR_USAGE, "pipeline: rows %lld must be at least 1", d->rows);
    if (d->halo < 0)
        return mgpu_fail(MGPU_ERR_USAGE, "pipeline: halo %d must be 0 or more", d->halo);
    if (d->chunks < 1 || d->chunks > d->rows)
        return mgpu_fail(MGPU_ERR_USAGE, "pipeline: chunks %d must be in 1..%lld (the rows)",
                         d->chunks, d->rows);
    if (d->streams < 1)
        return mgpu_fail(MGPU_ERR_USAGE, "pipeline: streams %d must be at least 1", d->streams);
    return MGPU_OK;
}

/* Bytes of a device buffer of ROWS rows of the pipeline's pitch. */
static mgpu_status buffer_bytes(const mgpu_pipeline *p, long long rows, size_t *bytes)
{
    size_t cells;
    MGPU_TRY(mgpu_mul_size(p->pitch, (size_t) rows, &cells));
    return mgpu_mul_size(cells, sizeof(float), bytes);
}

/* The layout of a pipeline of DESC (checked) in P: its streams and pitch, and
 * the bytes of each stream's input and output buffers. */
static mgpu_status plan(mgpu_pipeline *p, const mgpu_pipeline_desc *desc, size_t *in_bytes,
                        size_t *out_bytes)
{
    MGPU_TRY(check_desc(desc));
    p->desc = *desc;
    p->nstreams = desc->streams < desc->chunks ? desc->streams : desc->chunks;
    p->pitch = ((size_t) desc->nx + DEVICE_ROW_FLOATS - 1) / DEVICE_ROW_FLOATS * DEVICE_ROW_FLOATS;
    long long longest = (desc->rows + desc->chunks - 1) / desc->chunks;
    MGPU_TRY(buffer_bytes(p, longest + 2LL * desc->halo, in_bytes));
    return buffer_bytes(p, longest, out_bytes);
}

mgpu_status mgpu_pipeline_device_bytes(const mgpu_pipeline_desc *desc, size_t *bytes)
{
    mgpu_pipeline p;
    size_t in_bytes, out_bytes;
    MGPU_TRY(plan(&p, desc, &in_bytes, &out_bytes));
    if (in_bytes > SIZE_MAX - out_bytes)
        return mgpu_fail(MGPU_ERR_USAGE, "pipeline: its buffers' size overflows");
    return mgpu_mul_size((size_t) p.nstreams, in_bytes + out_bytes, bytes);
}

mgpu_status mgpu_pipeline_create(mgpu_pipeline **pipeline, const mgpu_pipeline_desc *desc)
{
    *pipeline = NULL;
    mgpu_pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return mgpu_fail(MGPU_ERR_NOMEM, "pipeline: out of host memory");
    size_t in_bytes, out_bytes;
    mgpu_status status = plan(p, desc, &in_bytes, &out_bytes);
    if (status == MGPU_OK) {
        p->streams = calloc((size_t) p->nstreams, sizeof *p->streams);
        p->d_in = calloc((size_t) p->nstreams, sizeof *p->d_in);
        p->d_out = calloc((size_t) p->nstreams, sizeof *p->d_out);
        if (!p->streams || !p->d_in || !p->d_out)
            status = mgpu_fail(MGPU_ERR_NOMEM, "pipeline: out of host memory");
    }
    for (int k = 0; k < p->nstreams && status == MGPU_OK; k++) {
        void *in = NULL, *out = NULL;
        status = mgpu_stream_create(desc->device, 0, &p->streams[k]);
        if (status == MGPU_OK)
            status = mgpu_malloc(desc->device, in_bytes, &in);
        p->d_in[k] = in;
        if (status == MGPU_OK)
            status = mgpu_malloc(desc->device, out_bytes, &out);
        p->d_out[k] = out;
    }
    if (status != MGPU_OK) {
        mgpu_pipeline_destroy(p);
        return status;
    }
    *pipeline = p;
    return MGPU_OK;
}

void mgpu_pipeline_destroy(mgpu_pipeline *p)
{
    if (!p)
        return;
    for (int k = 0; k < p->nstreams; k++) {
        if (p->streams)
            mgpu_stream_destroy(p->streams[k]);
        if (p->d_in)
            mgpu_free(p->desc.device, p->d_in[k]);
        if (p->d_out)
            mgpu_free(p->desc.device, p->d_out[k]);
    }
    free(p->streams);
    free(p->d_in);
    free(p->d_out);
    free(p);
}

/* The three stages of chunk C, using the buffers of stream slot K. */
static mgpu_status upload(const mgpu_pipeline *p, int c, int k, const float *host_in)
{
    const mgpu_pipeline_desc *d = &p->desc;
    long long row0, nrows;
    chunk_rows(d, c, &row0, &nrows);
    /* The chunk's input starts HALO rows above its first output row. */
    const float *src = host_in + (row0 - d->halo) * (long long) d->host_pitch;
    return mgpu_memcpy_2d_async(p->d_in[k], p->pitch * sizeof(float), src,
                                d->host_pitch * sizeof(float), (size_t) d->nx * sizeof(float),
                                (size_t) (nrows + 2LL * d->halo), p->streams[k]);
}

static mgpu_status compute(const mgpu_pipeline *p, int c, int k)
{
    long long row0, nrows;
    chunk_rows(&p->desc, c, &row0, &nrows);
    return p->desc.fn(p->desc.arg, p->d_in[k], p->d_out[k], row0, nrows, p->pitch, p->streams[k]);
}

static mgpu_status download(const mgpu_pipeline *p, int c, int k, float *host_out)
{
    const mgpu_pipeline_desc *d = &p->desc;
    long long row0, nrows;
    chunk_rows(d, c, &row0, &nrows);
    return mgpu_memcpy_2d_async(
        host_out + row0 * (long long) d->host_pitch, d->host_pitch * sizeof(float), p->d_out[k],
        p->pitch * sizeof(float), (size_t) d->nx * sizeof(float), (size_t) nrows, p->streams[k]);
}

/* Wait for every stream, also after a failure: nothing may still be copying
 * into the caller's buffers when a run returns.  STATUS is the run's so far;
 * its message survives the waits. */
static mgpu_status drain(const mgpu_pipeline *p, mgpu_status status)
{
    char first[512] = "";
    if (status != MGPU_OK)
        snprintf(first, sizeof first, "%s", mgpu_last_error());
    for (int k = 0; k < p->nstreams; k++) {
        mgpu_status s = mgpu_stream_synchronize(p->streams[k]);
        if (status == MGPU_OK)
            status = s;
    }
    if (first[0])
        mgpu_fail(status, "%s", first);
    return status;
}

/* Make the pipeline's device current for a run; *PREVIOUS gets the caller's. */
static mgpu_status enter(const mgpu_pipeline *p, int *previous)
{
    MGPU_TRY(mgpu_device_get(previous));
    return mgpu_device_set(p->desc.device);
}

static mgpu_status leave(int previous, mgpu_status status)
{
    mgpu_status s = mgpu_device_set(previous);
    return status != MGPU_OK ? status : s;
}

mgpu_status mgpu_pipeline_start(mgpu_pipeline *p, const float *host_in, float *host_out)
{
    int previous;
    MGPU_TRY(enter(p, &previous));
    /* Chunk c on stream c % K, its three stages in order on that stream:
     * the stream orders them, and orders chunk c+K after chunk c, which
     * reuses the same buffers.  Different streams run concurrently, so the
     * upload of one chunk, the kernel of another and the download of a third
     * proceed at once (one copy engine per direction). */
    mgpu_status status = MGPU_OK;
    for (int c = 0; c < p->desc.chunks && status == MGPU_OK; c++) {
        int k = c % p->nstreams;
        status = upload(p, c, k, host_in);
        if (status == MGPU_OK)
            status = compute(p, c, k);
        if (status == MGPU_OK)
            status = download(p, c, k, host_out);
    }
    if (status != MGPU_OK)
        status = drain(p, status);
    return leave(previous, status);
}

mgpu_status mgpu_pipeline_wait(mgpu_pipeline *p) { return drain(p, MGPU_OK); }

mgpu_status mgpu_pipeline_run(mgpu_pipeline *p, const float *host_in, float *host_out)
{
    MGPU_TRY(mgpu_pipeline_start(p, host_in, host_out));
    return mgpu_pipeline_wait(p);
}

/* Add the seconds since *T to *SUM after STREAM has finished, and restart *T. */
static mgpu_status stage_done(mgpu_stream *stream, double *t, double *sum)
{
    MGPU_TRY(mgpu_stream_synchronize(stream));
    double now = mgpu_now();
    *sum += now - *t;
    *t = now;
    return MGPU_OK;
}

mgpu_status mgpu_pipeline_run_serial(mgpu_pipeline *p, const float *host_in, float *host_out,
                                     double *upload_s, double *compute_s, double *download_s)
{
    int previous;
    MGPU_TRY(enter(p, &previous));
    mgpu_stream *s = p->streams[0];
    double up = 0, work = 0, down = 0;
    mgpu_status status = MGPU_OK;
    for (int c = 0; c < p->desc.chunks && status == MGPU_OK; c++) {
        double t = mgpu_now();
        status = upload(p, c, 0, host_in);
        if (status == MGPU_OK)
            status = stage_done(s, &t, &up);
        if (status == MGPU_OK)
            status = compute(p, c, 0);
        if (status == MGPU_OK)
            status = stage_done(s, &t, &work);
        if (status == MGPU_OK)
            status = download(p, c, 0, host_out);
        if (status == MGPU_OK)
            status = stage_done(s, &t, &down);
    }
    if (upload_s)
        *upload_s = up;
    if (compute_s)
        *compute_s = work;
    if (download_s)
        *download_s = down;
    return leave(previous, drain(p, status));
}
