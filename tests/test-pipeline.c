/* test-pipeline.c - the stream pipeline on the host backend: however the rows
 * are cut into chunks and streams, one stencil step through the pipeline is
 * the C reference's step, bit for bit, and nothing else is written. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mgpu.h"
#include "mgpu/pipeline.h"

/* The field: NY rows of NX cells, HOST_PITCH floats apart (padded, so that
 * the pipeline's copies between pitches are exercised). */
enum { NX = 37, NY = 29, HOST_PITCH = NX + 3, MAX_CALLS = 64 };

typedef struct chunk_arg {
    mgpu_kernel kernel;
    int halo;
    int step;    /* 1: one stencil step; 0: copy the rows */
    int fail_at; /* fail at this call (counting from 1); 0: never */
    int calls;
    long long row0[MAX_CALLS], nrows[MAX_CALLS];
} chunk_arg;

/* A chunk's work.  The stencil: output row k is input row k+halo, and
 * mgpu_kernel_rows reads rows r-1..r+1 of its input for output row r, so
 * the input is handed over from row HALO on (halo >= 1).  The boundary columns are
 * copied first, as the stencil domain keeps them in both buffers. */
static mgpu_status chunk_fn(void *arg, const float *d_in, float *d_out, long long row0,
                            long long nrows, size_t pitch, mgpu_stream *stream)
{
    chunk_arg *a = arg;
    if (a->calls < MAX_CALLS) {
        a->row0[a->calls] = row0;
        a->nrows[a->calls] = nrows;
    }
    a->calls++;
    if (a->calls == a->fail_at)
        return MGPU_ERR_FAULT;
    const float *centre = d_in + (size_t) a->halo * pitch;
    size_t used = ((size_t) nrows - 1) * pitch + NX; /* up to the last row's last cell */
    mgpu_status status = mgpu_memcpy_async(d_out, centre, used * sizeof(float), stream);
    if (status == MGPU_OK && a->step)
        status = mgpu_kernel_rows(a->kernel, centre, d_out, NX, pitch, 0, nrows, stream);
    return status;
}

static float *field_alloc(void)
{
    void *p = NULL;
    if (mgpu_host_alloc((size_t) NY * HOST_PITCH * sizeof(float), MGPU_HOST_PINNED, &p) !=
        MGPU_OK) {
        printf("Bail out! no host memory: %s\n", mgpu_last_error());
        exit(1);
    }
    return p;
}

static void poison(float *field)
{
    for (size_t i = 0; i < (size_t) NY * HOST_PITCH; i++)
        field[i] = NAN;
}

/* Values in [-1, 1): negative sums exercise pattern2d's fabsf. */
static void fill(float *field, uint32_t seed)
{
    poison(field);
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            seed = seed * 1664525u + 1013904223u;
            field[(size_t) j * HOST_PITCH + i] = (float) (seed >> 8) / (float) (1u << 23) - 1.0f;
        }
}

/* The block the pipeline computes: field rows HALO .. NY-1-HALO, so that
 * HALO rows of the field lie above and below it. */
static long long block_rows(int halo) { return NY - 2 * halo; }

/* What the output field must hold: the poison everywhere but in the block's
 * rows, columns 0..NX-1, which hold the input stepped (or copied). */
static void expected(const float *in, float *want, const chunk_arg *a)
{
    poison(want);
    for (int j = a->halo; j < NY - a->halo; j++)
        memcpy(want + (size_t) j * HOST_PITCH, in + (size_t) j * HOST_PITCH, NX * sizeof(float));
    if (a->step)
        mgpu_kernel_rows_host(a->kernel, in, want, NX, HOST_PITCH, a->halo, NY - a->halo);
}

/* The chunks the function saw tile the block in order, the longer ones first. */
static int chunks_tile(const chunk_arg *a, int chunks)
{
    long long rows = block_rows(a->halo), next = 0, base = rows / chunks;
    if (a->calls != chunks || chunks > MAX_CALLS)
        return 0;
    for (int c = 0; c < chunks; c++) {
        long long want = base + (c < rows % chunks ? 1 : 0);
        if (a->row0[c] != next || a->nrows[c] != want)
            return 0;
        next += want;
    }
    return next == rows;
}

static mgpu_pipeline_desc make_desc(chunk_arg *arg, int halo, int chunks, int streams)
{
    mgpu_pipeline_desc d = {.device = 0,
                            .nx = NX,
                            .host_pitch = HOST_PITCH,
                            .rows = block_rows(halo),
                            .halo = halo,
                            .chunks = chunks,
                            .streams = streams,
                            .fn = chunk_fn,
                            .arg = arg};
    return d;
}

static void run_case(mgpu_kernel kernel, int step, int halo, int chunks, int streams, int serial)
{
    float *in = field_alloc(), *out = field_alloc(), *want = field_alloc();
    chunk_arg arg = {.kernel = kernel, .halo = halo, .step = step};
    fill(in, (uint32_t) (chunks * 131 + streams * 7 + halo));
    poison(out);
    expected(in, want, &arg);

    mgpu_pipeline_desc d = make_desc(&arg, halo, chunks, streams);
    mgpu_pipeline *p = NULL;
    mgpu_status status = mgpu_pipeline_create(&p, &d);
    const float *host_in = in + (size_t) halo * HOST_PITCH; /* the block's row 0 */
    float *host_out = out + (size_t) halo * HOST_PITCH;
    double up = -1, work = -1, down = -1;
    if (status == MGPU_OK)
        status = serial ? mgpu_pipeline_run_serial(p, host_in, host_out, &up, &work, &down)
                        : mgpu_pipeline_run(p, host_in, host_out);
    const char *what = step ? mgpu_kernel_name(kernel) : "copy";
    CHECK(status == MGPU_OK && memcmp(out, want, (size_t) NY * HOST_PITCH * sizeof(float)) == 0,
          "%s %s, halo %d, %d chunk(s), %d stream(s): every cell as the reference, "
          "nothing else written%s%s",
          serial ? "serial" : "pipelined", what, halo, chunks, streams,
          status == MGPU_OK ? "" : ": ", status == MGPU_OK ? "" : mgpu_last_error());
    CHECK(chunks_tile(&arg, chunks), "%d chunks of %lld rows: %d calls, evenly, in order", chunks,
          block_rows(halo), arg.calls);
    if (serial)
        CHECK(up >= 0 && work >= 0 && down >= 0,
              "serial stage times are not negative (%g, %g, %g s)", up, work, down);
    mgpu_pipeline_destroy(p);
    mgpu_host_free(in);
    mgpu_host_free(out);
    mgpu_host_free(want);
}

static void refused(const char *what, mgpu_pipeline_desc d, const mgpu_pipeline_desc *dp)
{
    mgpu_pipeline *p = (mgpu_pipeline *) &d; /* anything but NULL */
    mgpu_status status = mgpu_pipeline_create(&p, dp ? &d : NULL);
    CHECK(status == MGPU_ERR_USAGE && p == NULL && mgpu_last_error()[0] != '\0',
          "%s is a usage error: %s", what, mgpu_last_error());
    mgpu_pipeline_destroy(p);
}

int main(void)
{
    CHECK(mgpu_init(MGPU_BACKEND_HOST, 1) == MGPU_OK, "host backend");

    /* {chunks, streams}: one chunk; chunks that do not divide the 27 rows;
     * one row per chunk; more streams than chunks; one stream. */
    static const int combos[][2] = {{1, 1}, {1, 3}, {4, 2}, {5, 3}, {NY - 2, 4},
                                    {3, 8}, {7, 7}, {2, 1}, {10, 4}};
    for (int kernel = MGPU_KERNEL_PATTERN2D; kernel <= MGPU_KERNEL_JACOBI; kernel++)
        for (size_t c = 0; c < sizeof combos / sizeof combos[0]; c++)
            run_case((mgpu_kernel) kernel, 1, 1, combos[c][0], combos[c][1], 0);
    run_case(MGPU_KERNEL_PATTERN2D, 1, 1, 5, 3, 1);
    run_case(MGPU_KERNEL_JACOBI, 1, 1, NY - 2, 2, 1);
    run_case(MGPU_KERNEL_PATTERN2D, 1, 1, 1, 1, 1);
    /* Other halos: the input offsets follow. */
    run_case(MGPU_KERNEL_PATTERN2D, 1, 3, 4, 2, 0);
    run_case(MGPU_KERNEL_JACOBI, 1, 2, NY - 4, 3, 1);
    run_case(MGPU_KERNEL_PATTERN2D, 0, 0, 4, 2, 0);
    run_case(MGPU_KERNEL_PATTERN2D, 0, 0, NY, 5, 1);

    /* Serial stage times may be NULL. */
    float *in = field_alloc(), *out = field_alloc();
    chunk_arg arg = {.kernel = MGPU_KERNEL_PATTERN2D, .halo = 1, .step = 1};
    mgpu_pipeline_desc d = make_desc(&arg, 1, 3, 2);
    mgpu_pipeline *p = NULL;
    fill(in, 5);
    CHECK(mgpu_pipeline_create(&p, &d) == MGPU_OK &&
              mgpu_pipeline_run_serial(p, in + HOST_PITCH, out + HOST_PITCH, NULL, NULL, NULL) ==
                  MGPU_OK,
          "serial run without stage times");
    mgpu_pipeline_destroy(p);
    mgpu_host_free(in);
    mgpu_host_free(out);

    /* A failing chunk stops the run: its status comes back, no later chunk
     * is started. */
    for (int serial = 0; serial <= 1; serial++) {
        chunk_arg failing = {.kernel = MGPU_KERNEL_PATTERN2D, .halo = 1, .step = 1, .fail_at = 3};
        d = make_desc(&failing, 1, 6, 2);
        in = field_alloc();
        out = field_alloc();
        fill(in, 9);
        mgpu_status status = mgpu_pipeline_create(&p, &d);
        if (status == MGPU_OK)
            status = serial ? mgpu_pipeline_run_serial(p, in + HOST_PITCH, out + HOST_PITCH, NULL,
                                                       NULL, NULL)
                            : mgpu_pipeline_run(p, in + HOST_PITCH, out + HOST_PITCH);
        CHECK(status == MGPU_ERR_FAULT && failing.calls == 3,
              "%s: a chunk function failing at chunk 3 of 6 stops the run there",
              serial ? "serial" : "pipelined");
        mgpu_pipeline_destroy(p);
        mgpu_host_free(in);
        mgpu_host_free(out);
    }
    mgpu_pipeline_destroy(NULL);

    mgpu_pipeline_desc bad = make_desc(&arg, 1, 3, 2);
    refused("no description", bad, NULL);
    bad.chunks = 0;
    refused("0 chunks", bad, &bad);
    bad.chunks = NY - 1;
    refused("more chunks than rows", bad, &bad);
    bad = make_desc(&arg, 1, 3, 0);
    refused("0 streams", bad, &bad);
    bad = make_desc(&arg, -1, 3, 2);
    refused("a negative halo", bad, &bad);
    bad = make_desc(&arg, 1, 3, 2);
    bad.rows = 0;
    bad.chunks = 1;
    refused("0 rows", bad, &bad);
    bad = make_desc(&arg, 1, 3, 2);
    bad.host_pitch = NX - 1;
    refused("a host pitch below nx", bad, &bad);
    bad = make_desc(&arg, 1, 3, 2);
    bad.nx = 0;
    refused("nx 0", bad, &bad);
    bad = make_desc(&arg, 1, 3, 2);
    bad.fn = NULL;
    refused("no chunk function", bad, &bad);
    bad = make_desc(&arg, 1, 3, 2);
    bad.device = 1;
    refused("a device that does not exist", bad, &bad);
    return check_done();
}
