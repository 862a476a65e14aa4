/* test-staged-copy.c - the staged copy in chunks (lib/staged-copy.c)
 * delivers every byte, and no other: 1 byte, one byte short of a chunk,
 * exactly one chunk, one byte past it, many chunks with a remainder, with
 * 2, 3 and the most buffers; copies queued back to back through one set of
 * buffers, the two directions at once; bad arguments refused.  Then the
 * stencil's staged exchange through it (lib/exchange.c): taken where a
 * block holds two chunks or more, every part in the process and none its
 * own neighbour, and only there (mgpu_stencil_staging_chunk says which
 * path a domain took), MGPU_STAGING_CHUNK read or refused, and the fields
 * it gives equal to the CPU reference.  On the host backend always, and
 * between two GPUs (or one with itself) where CUDA runs, where each
 * chunk's order rests on events. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mgpu.h"

/* A small chunk: many chunks without large buffers. */
enum { CHUNK = 4096, GUARD = 64 };

static const char *backend_name;

/* Bytes that differ from copy to copy, so that a stale buffer never passes. */
static void pattern(unsigned char *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (unsigned char) (x >> 24);
    }
}

typedef struct pair {
    int a, b;
    mgpu_stream *sa, *sb; /* a stream of each device */
} pair;

/* Copy BYTES from device A to B through COPY (queued SAME times back to
 * back, each its own source), then compare each destination, with GUARD
 * bytes after it that must stay untouched.  1 when every byte is right. */
static int copies_arrive(pair *p, mgpu_staged_copy *copy, size_t bytes, int times, unsigned seed)
{
    size_t span = bytes + GUARD;
    size_t all = span * (size_t) times;
    unsigned char *want = malloc(all), *got = malloc(all);
    void *src = NULL, *dst = NULL;
    int ok = want && got && mgpu_malloc(p->a, all, &src) == MGPU_OK &&
             mgpu_malloc(p->b, all, &dst) == MGPU_OK;
    if (ok) {
        pattern(want, all, seed);
        memset(got, 0xA5, all);
        /* The destination starts as poison; its guards must stay so. */
        ok = mgpu_memcpy(src, want, all) == MGPU_OK && mgpu_memcpy(dst, got, all) == MGPU_OK;
        for (int t = 0; ok && t < times; t++)
            ok = mgpu_staged_copy_async(copy, (char *) dst + (size_t) t * span,
                                        (const char *) src + (size_t) t * span, bytes, p->sa,
                                        p->sb) == MGPU_OK;
        ok = ok && mgpu_stream_synchronize(p->sb) == MGPU_OK &&
             mgpu_stream_synchronize(p->sa) == MGPU_OK && mgpu_memcpy(got, dst, all) == MGPU_OK;
        for (int t = 0; ok && t < times; t++) {
            size_t at = (size_t) t * span;
            ok = memcmp(got + at, want + at, bytes) == 0;
            for (size_t g = 0; ok && g < GUARD; g++)
                ok = got[at + bytes + g] == 0xA5;
        }
    }
    if (!ok)
        printf("# %s\n", mgpu_last_error());
    mgpu_free(p->a, src);
    mgpu_free(p->b, dst);
    free(want);
    free(got);
    return ok;
}

static void test_sizes(pair *p)
{
    static const int buffer_counts[] = {2, 3, MGPU_STAGED_BUFFERS_MAX};
    static const size_t sizes[] = {1, CHUNK - 1, CHUNK, CHUNK + 1, 37 * CHUNK + 123};
    for (size_t i = 0; i < sizeof buffer_counts / sizeof buffer_counts[0]; i++) {
        mgpu_staged_copy *copy = NULL;
        int buffers = buffer_counts[i];
        CHECK(mgpu_staged_copy_create(p->a, p->b, CHUNK, buffers, &copy) == MGPU_OK,
              "%s: %d buffers of %d bytes from device %d to %d", backend_name, buffers, CHUNK, p->a,
              p->b);
        if (!copy)
            continue;
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            CHECK(copies_arrive(p, copy, sizes[s], 1, (unsigned) (s + 10 * i)),
                  "%s, %d buffers: %zu bytes (%zu chunks and %zu bytes) arrive exact", backend_name,
                  buffers, sizes[s], sizes[s] / CHUNK, sizes[s] % CHUNK);
        CHECK(copies_arrive(p, copy, 5 * CHUNK + 7, 6, 99),
              "%s, %d buffers: 6 copies queued back to back, each exact", backend_name, buffers);
        CHECK(copies_arrive(p, copy, 0, 1, 98), "%s, %d buffers: 0 bytes copies nothing",
              backend_name, buffers);
        mgpu_staged_copy_destroy(copy);
    }
}

/* The defaults: MGPU_STAGED_CHUNK bytes a chunk; a copy of 2.5 chunks. */
static void test_defaults(pair *p)
{
    mgpu_staged_copy *copy = NULL;
    CHECK(mgpu_staged_copy_create(p->a, p->b, 0, 0, &copy) == MGPU_OK,
          "%s: the default chunk and buffers", backend_name);
    if (!copy)
        return;
    CHECK(copies_arrive(p, copy, 2 * MGPU_STAGED_CHUNK + MGPU_STAGED_CHUNK / 2, 1, 7),
          "%s: 2.5 default chunks arrive exact", backend_name);
    mgpu_staged_copy_destroy(copy);
}

/* Both directions at once, each through its own buffers, on the same two
 * streams: neither copy's chunks land in the other's. */
static void test_both_ways(pair *p)
{
    mgpu_staged_copy *there = NULL, *back = NULL;
    size_t bytes = 9 * CHUNK + 5;
    unsigned char *want = malloc(2 * bytes), *got = malloc(2 * bytes);
    void *a_src = NULL, *a_dst = NULL, *b_src = NULL, *b_dst = NULL;
    int ok = want && got && mgpu_staged_copy_create(p->a, p->b, CHUNK, 2, &there) == MGPU_OK &&
             mgpu_staged_copy_create(p->b, p->a, CHUNK, 2, &back) == MGPU_OK &&
             mgpu_malloc(p->a, bytes, &a_src) == MGPU_OK &&
             mgpu_malloc(p->a, bytes, &a_dst) == MGPU_OK &&
             mgpu_malloc(p->b, bytes, &b_src) == MGPU_OK &&
             mgpu_malloc(p->b, bytes, &b_dst) == MGPU_OK;
    if (ok) {
        pattern(want, 2 * bytes, 5);
        ok = mgpu_memcpy(a_src, want, bytes) == MGPU_OK &&
             mgpu_memcpy(b_src, want + bytes, bytes) == MGPU_OK &&
             mgpu_staged_copy_async(there, b_dst, a_src, bytes, p->sa, p->sb) == MGPU_OK &&
             mgpu_staged_copy_async(back, a_dst, b_src, bytes, p->sb, p->sa) == MGPU_OK &&
             mgpu_stream_synchronize(p->sa) == MGPU_OK &&
             mgpu_stream_synchronize(p->sb) == MGPU_OK &&
             mgpu_memcpy(got, b_dst, bytes) == MGPU_OK &&
             mgpu_memcpy(got + bytes, a_dst, bytes) == MGPU_OK && memcmp(got, want, 2 * bytes) == 0;
    }
    CHECK(ok, "%s: %zu bytes both ways at once, each exact", backend_name, bytes);
    mgpu_free(p->a, a_src);
    mgpu_free(p->a, a_dst);
    mgpu_free(p->b, b_src);
    mgpu_free(p->b, b_dst);
    mgpu_staged_copy_destroy(there);
    mgpu_staged_copy_destroy(back);
    free(want);
    free(got);
}

static void test_refused(pair *p)
{
    mgpu_staged_copy *copy = (mgpu_staged_copy *) p; /* must be set to NULL */
    CHECK(mgpu_staged_copy_create(p->a, p->b, CHUNK, 1, &copy) == MGPU_ERR_USAGE && !copy,
          "%s: one buffer is refused: %s", backend_name, mgpu_last_error());
    CHECK(mgpu_staged_copy_create(p->a, p->b, CHUNK, MGPU_STAGED_BUFFERS_MAX + 1, &copy) ==
              MGPU_ERR_USAGE,
          "%s: %d buffers are refused", backend_name, MGPU_STAGED_BUFFERS_MAX + 1);
    CHECK(mgpu_staged_copy_create(p->a, p->b, MGPU_STAGED_CHUNK_MAX + 1, 2, &copy) ==
              MGPU_ERR_USAGE,
          "%s: a chunk past the largest is refused", backend_name);
    CHECK(mgpu_staged_copy_create(p->a, 64, CHUNK, 2, &copy) == MGPU_ERR_USAGE,
          "%s: a device that does not exist is refused", backend_name);
    CHECK(mgpu_staged_copy_create(p->a, p->b, CHUNK, 2, &copy) == MGPU_OK,
          "%s: a staged copy to try streams on", backend_name);
    char byte = 0, out = 0;
    CHECK(mgpu_staged_copy_async(copy, &out, &byte, 1, p->sa, NULL) == MGPU_ERR_USAGE &&
              mgpu_staged_copy_async(copy, &out, &byte, 1, NULL, p->sb) == MGPU_ERR_USAGE,
          "%s: a NULL stream is refused", backend_name);
    if (p->a != p->b)
        CHECK(mgpu_staged_copy_async(copy, &out, &byte, 1, p->sb, p->sa) == MGPU_ERR_USAGE,
              "%s: streams of the other devices are refused: %s", backend_name, mgpu_last_error());
    mgpu_staged_copy_destroy(copy);
}

/* ------------------------------------ the stencil's staged exchange */

/* MGPU_STAGING_CHUNK as TEXT, or unset for NULL. */
static void set_chunk(const char *text)
{
    if (text)
        setenv("MGPU_STAGING_CHUNK", text, 1);
    else
        unsetenv("MGPU_STAGING_CHUNK");
}

/* Part P on device P of the first DEVICES, round the ring. */
static int part_devices[8];

static mgpu_stencil_desc staged_desc(mgpu_kernel kernel, long long nx, long long ny, int parts,
                                     int halo, int time_block)
{
    return (mgpu_stencil_desc){.nx = nx,
                               .ny = ny,
                               .kernel = kernel,
                               .exchange = MGPU_EXCHANGE_STAGED,
                               .seed = 7,
                               .nparts = parts,
                               .devices = part_devices,
                               .halo = halo,
                               .time_block = time_block};
}

/* The chunk of a domain of DESC under MGPU_STAGING_CHUNK=TEXT (0 for
 * whole blocks); -1 where the domain is refused, *STATUS saying how. */
static long long chunk_of(const char *text, const mgpu_stencil_desc *desc, mgpu_status *status)
{
    mgpu_stencil *st = NULL;
    set_chunk(text);
    *status = mgpu_stencil_create(&st, desc);
    long long chunk = *status == MGPU_OK ? (long long) mgpu_stencil_staging_chunk(st) : -1;
    mgpu_stencil_destroy(st);
    return chunk;
}

/* STEPS steps of DESC's domain under MGPU_STAGING_CHUNK=TEXT, issued as
 * mgpu-single issues them; *CHUNK gets the domain's chunk.  The cells that
 * differ from the CPU reference, or -1 where something failed. */
static long long staged_mismatches(const char *text, mgpu_stencil_desc desc, long long steps,
                                   long long *chunk)
{
    mgpu_stencil *st = NULL;
    float *field = malloc(sizeof(float) * (size_t) (desc.nx * desc.ny));
    float *ref = malloc(sizeof(float) * (size_t) (desc.nx * desc.ny));
    long long bad = -1;
    desc.steps = steps;
    set_chunk(text);
    mgpu_status status = field && ref ? mgpu_stencil_create(&st, &desc) : MGPU_ERR_NOMEM;
    *chunk = status == MGPU_OK ? (long long) mgpu_stencil_staging_chunk(st) : -1;
    for (int p = 0; status == MGPU_OK && p < desc.nparts; p++)
        status = mgpu_stencil_reset(st, p);
    for (long long step = 0; status == MGPU_OK && step < steps; step++) {
        for (int p = 0; status == MGPU_OK && p < desc.nparts; p++)
            if ((status = mgpu_device_set(mgpu_stencil_device(st, p))) == MGPU_OK)
                status = mgpu_stencil_send(st, p, step);
        for (int p = 0; status == MGPU_OK && p < desc.nparts; p++)
            if ((status = mgpu_device_set(mgpu_stencil_device(st, p))) == MGPU_OK &&
                (status = mgpu_stencil_recv(st, p, step)) == MGPU_OK)
                status = mgpu_stencil_compute(st, p, step);
    }
    if (status == MGPU_OK)
        status = mgpu_stencil_gather_all(st, steps, field);
    if (status == MGPU_OK)
        status = mgpu_reference_run(ref, desc.kernel, desc.nx, desc.ny, steps, desc.seed);
    if (status == MGPU_OK) {
        double err;
        mgpu_field_compare(field, ref, desc.nx, desc.ny, 0.0, &err, &bad);
    } else {
        printf("# %s\n", mgpu_last_error());
    }
    mgpu_stencil_destroy(st);
    free(field);
    free(ref);
    return bad;
}

/* Runs in chunks of a few bytes, each against the CPU reference: odd
 * widths, uneven slabs, one-row and deep halos, both kernels, two parts
 * that are each other's neighbours on both sides (jacobi) and chunks that
 * split a float. */
static void test_stencil_runs(void)
{
    static const struct {
        const char *chunk;
        mgpu_kernel kernel;
        long long nx, ny, steps;
        int parts, halo, time_block;
        long long want; /* the chunk the domain takes */
    } runs[] = {
        {"4096", MGPU_KERNEL_PATTERN2D, 2051, 41, 7, 3, 1, 1, 4096},
        {"4096", MGPU_KERNEL_JACOBI, 700, 30, 10, 2, 3, 2, 4096},
        {"37", MGPU_KERNEL_JACOBI, 37, 43, 11, 4, 4, 3, 37},
        {"37", MGPU_KERNEL_PATTERN2D, 101, 53, 9, 4, 2, 1, 37},
        {"0", MGPU_KERNEL_JACOBI, 101, 53, 9, 3, 2, 2, 0},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        mgpu_stencil_desc desc = staged_desc(runs[i].kernel, runs[i].nx, runs[i].ny, runs[i].parts,
                                             runs[i].halo, runs[i].time_block);
        long long chunk;
        long long bad = staged_mismatches(runs[i].chunk, desc, runs[i].steps, &chunk);
        CHECK(bad == 0 && chunk == runs[i].want,
              "%s: staged, MGPU_STAGING_CHUNK=%s, %s, %lld x %lld, %d parts, --halo=%d "
              "--time-block=%d, %lld steps: chunks of %lld bytes (want %lld), the CPU reference's "
              "field (%lld cells differ)",
              backend_name, runs[i].chunk, mgpu_kernel_name(runs[i].kernel), runs[i].nx, runs[i].ny,
              runs[i].parts, runs[i].halo, runs[i].time_block, runs[i].steps, chunk, runs[i].want,
              bad);
    }
}

/* Where the chunked path is taken, and where not. */
static void test_stencil_choice(void)
{
    mgpu_status status;
    mgpu_stencil_desc two = staged_desc(MGPU_KERNEL_PATTERN2D, 2048, 20, 2, 1, 1);
    CHECK(chunk_of("4096", &two, &status) == 4096,
          "%s: a block of exactly two chunks (2048 floats, 4096-byte chunks) goes in chunks",
          backend_name);
    two.nx = 2047;
    CHECK(chunk_of("4096", &two, &status) == 0, "%s: 4 bytes fewer, it goes whole", backend_name);
    two.nx = 2048;
    CHECK(chunk_of("0", &two, &status) == 0, "%s: MGPU_STAGING_CHUNK=0: whole at any size",
          backend_name);
    two.exchange = MGPU_EXCHANGE_PEER;
    CHECK(chunk_of("4096", &two, &status) == 0, "%s: no chunks in mode peer", backend_name);
    two.exchange = MGPU_EXCHANGE_STAGED;
    two.local_parts = 1;
    CHECK(chunk_of("4096", &two, &status) == 0,
          "%s: none where a neighbour is another process's part", backend_name);
    mgpu_stencil_desc one = staged_desc(MGPU_KERNEL_JACOBI, 2048, 20, 1, 1, 1);
    CHECK(chunk_of("4096", &one, &status) == 0, "%s: none for one periodic part, its own neighbour",
          backend_name);
}

/* MGPU_STAGING_CHUNK unset: 4 MiB chunks, from blocks of 8 MiB (16384
 * floats, 128 rows deep), as the host memory of a domain shows without
 * allocating it: three pinned chunks a side, or two parities of edge rows. */
static void test_stencil_default(void)
{
    size_t device_bytes, host_bytes;
    mgpu_stencil_desc desc = staged_desc(MGPU_KERNEL_JACOBI, 16384, 258, 2, 128, 4);
    const struct {
        long long nx;
        size_t want;
        const char *what;
    } widths[] = {
        {16384, 2 * 2 * MGPU_STAGED_BUFFERS * MGPU_STAGED_CHUNK, "blocks of two chunks, in chunks"},
        {16383, 2 * 2 * 2 * (size_t) 128 * 16384 * sizeof(float), "4 bytes short, whole"},
    };
    for (int empty = 0; empty < 2; empty++)
        for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
            set_chunk(empty ? "" : NULL);
            desc.nx = widths[i].nx;
            CHECK(mgpu_stencil_bytes(&desc, &device_bytes, &host_bytes) == MGPU_OK &&
                      host_bytes == widths[i].want,
                  "MGPU_STAGING_CHUNK %s: %lld columns, 128 rows deep: %s (%zu host bytes, "
                  "want %zu)",
                  empty ? "empty" : "unset", widths[i].nx, widths[i].what, host_bytes,
                  widths[i].want);
        }
    /* pattern2d's first and last parts have one neighbour each, one
     * staged copy. */
    desc.kernel = MGPU_KERNEL_PATTERN2D;
    desc.nx = 16384;
    desc.nparts = 3;
    size_t want = (1 + 2 + 1) * MGPU_STAGED_BUFFERS * MGPU_STAGED_CHUNK;
    CHECK(mgpu_stencil_bytes(&desc, &device_bytes, &host_bytes) == MGPU_OK && host_bytes == want,
          "pattern2d, 3 parts: a staged copy a neighbour (%zu host bytes, want %zu)", host_bytes,
          want);
}

/* A value that is no chunk is refused, whatever the mode, before anything
 * is made. */
static void test_stencil_refused(void)
{
    static const char *const bad[] = {"abc", "-1", "4096x", " 4096", "1073741825"};
    mgpu_stencil_desc desc = staged_desc(MGPU_KERNEL_PATTERN2D, 64, 20, 2, 1, 1);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mgpu_status status;
        size_t device_bytes, host_bytes;
        desc.exchange = i % 2 ? MGPU_EXCHANGE_PEER : MGPU_EXCHANGE_STAGED;
        CHECK(chunk_of(bad[i], &desc, &status) == -1 && status == MGPU_ERR_USAGE &&
                  strstr(mgpu_last_error(), "MGPU_STAGING_CHUNK") &&
                  mgpu_stencil_bytes(&desc, &device_bytes, &host_bytes) == MGPU_ERR_USAGE,
              "MGPU_STAGING_CHUNK='%s', --exchange=%s: refused: %s", bad[i],
              mgpu_exchange_name(desc.exchange), mgpu_last_error());
    }
    set_chunk(NULL);
}

static void run(int a, int b)
{
    pair p = {a, b, NULL, NULL};
    if (mgpu_stream_create(a, 0, &p.sa) != MGPU_OK || mgpu_stream_create(b, 0, &p.sb) != MGPU_OK) {
        CHECK(0, "%s: a stream on devices %d and %d: %s", backend_name, a, b, mgpu_last_error());
        return;
    }
    test_sizes(&p);
    test_defaults(&p);
    test_both_ways(&p);
    test_refused(&p);
    mgpu_stream_destroy(p.sa);
    mgpu_stream_destroy(p.sb);
}

/* The stencil's parts on DEVICES devices, round the ring. */
static void run_stencil(int devices)
{
    for (int p = 0; p < 8; p++)
        part_devices[p] = p % devices;
    test_stencil_runs();
    test_stencil_choice();
    set_chunk(NULL);
}

int main(void)
{
    backend_name = "host";
    CHECK(mgpu_init(MGPU_BACKEND_HOST, 4) == MGPU_OK, "host backend with 4 devices");
    run(0, 1);
    run_stencil(4);
    test_stencil_default();
    test_stencil_refused();
    int n = 0;
    if (mgpu_init(MGPU_BACKEND_CUDA, 1) == MGPU_OK && mgpu_device_count(&n) == MGPU_OK && n > 0) {
        backend_name = "cuda";
        run(0, n > 1 ? 1 : 0);
        run_stencil(n);
    } else {
        printf("# no usable GPU: the copies ran on the host backend only\n");
    }
    return check_done();
}
