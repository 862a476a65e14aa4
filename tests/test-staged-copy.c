/* test-staged-copy.c - the staged copy in chunks (lib/staged-copy.c)
 * delivers every byte, and no other: 1 byte, one byte short of a chunk,
 * exactly one chunk, one byte past it, many chunks with a remainder, with
 * 2, 3 and the most buffers; copies queued back to back through one set of
 * buffers, the two directions at once; bad arguments refused.  On the host
 * backend always, and between two GPUs (or one with itself) where CUDA
 * runs, where each chunk's order rests on events. */
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

int main(void)
{
    backend_name = "host";
    CHECK(mgpu_init(MGPU_BACKEND_HOST, 2) == MGPU_OK, "host backend with 2 devices");
    run(0, 1);
    int n = 0;
    if (mgpu_init(MGPU_BACKEND_CUDA, 1) == MGPU_OK && mgpu_device_count(&n) == MGPU_OK && n > 0) {
        backend_name = "cuda";
        run(0, n > 1 ? 1 : 0);
    } else {
        printf("# no usable GPU: the copies ran on the host backend only\n");
    }
    return check_done();
}
