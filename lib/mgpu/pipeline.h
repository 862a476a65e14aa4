/* mgpu/pipeline.h - the stream pipeline of book 11.1 (lib/pipeline.c): a
 * field held in host memory streamed through a device in chunks, each
 * chunk's upload, kernel and download on a stream of its own. */
#ifndef MGPU_PIPELINE_H
#define MGPU_PIPELINE_H

#include <stddef.h>

#include "mgpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Book 11.1: a block of rows too large (or too slow) to copy to one device
 * before computing is cut into chunks; each chunk's upload, compute and
 * download go on one of several streams, so that copies in both directions
 * overlap the computation of other chunks.  Copies overlap only when the host
 * buffers are pinned (mgpu_host_alloc): from pageable memory CUDA copies
 * synchronously through a staging buffer. */

/* The computation of one chunk, issued on STREAM (the pipeline's device is
 * current): output rows [ROW0, ROW0+NROWS) of the block into D_OUT, whose
 * first row is row ROW0, from D_IN, whose first row is row ROW0-halo; both
 * are device buffers with rows PITCH floats apart and NX floats used. */
typedef mgpu_status (*mgpu_pipeline_fn)(void *arg, const float *d_in, float *d_out, long long row0,
                                        long long nrows, size_t pitch, mgpu_stream *stream);

typedef struct mgpu_pipeline_desc {
    int device;
    long long nx;      /* floats used in a row */
    size_t host_pitch; /* floats between rows of the host buffers (>= nx) */
    long long rows;    /* output rows of the block */
    int halo;          /* input rows needed above and below an output row */
    int chunks;        /* 1..rows; rows are shared as evenly as possible */
    int streams;       /* chunk c goes on stream c % streams */
    mgpu_pipeline_fn fn;
    void *arg; /* passed to fn */
} mgpu_pipeline_desc;

typedef struct mgpu_pipeline mgpu_pipeline;

/* Create the streams and, per stream, a device input buffer (largest chunk
 * plus 2*halo rows) and output buffer, rows padded to 32 floats.  A desc out
 * of range is MGPU_ERR_USAGE with a message. */
mgpu_status mgpu_pipeline_create(mgpu_pipeline **pipeline, const mgpu_pipeline_desc *desc);

/* Bytes of device memory a pipeline of DESC allocates, to be checked against
 * a budget before creating it. */
mgpu_status mgpu_pipeline_device_bytes(const mgpu_pipeline_desc *desc, size_t *bytes);

/* Run every chunk, pipelined, and return when all are done.  HOST_IN points
 * at input row 0; rows -halo .. rows-1+halo must exist.  Output rows
 * [0, rows) go to HOST_OUT, nothing else is written there.  The caller's
 * current device is left as it was. */
mgpu_status mgpu_pipeline_run(mgpu_pipeline *pipeline, const float *host_in, float *host_out);

/* The stream pipeline's run in two halves (lib/pipeline.c), so that one host
 * thread keeps several devices' pipelines going at once: start issues every
 * chunk and returns, wait returns once they are done.  Start leaves the
 * caller's current device as it was; after a failure it has waited itself. */
mgpu_status mgpu_pipeline_start(mgpu_pipeline *pipeline, const float *host_in, float *host_out);
mgpu_status mgpu_pipeline_wait(mgpu_pipeline *pipeline);

/* The same chunks one after another on one stream, waiting after each stage,
 * for comparison; the seconds spent uploading, computing and downloading,
 * summed over the chunks, go to the pointers that are not NULL. */
mgpu_status mgpu_pipeline_run_serial(mgpu_pipeline *pipeline, const float *host_in, float *host_out,
                                     double *upload_s, double *compute_s, double *download_s);

void mgpu_pipeline_destroy(mgpu_pipeline *pipeline);

#ifdef __cplusplus
}
#endif

#endif /* MGPU_PIPELINE_H */
