/* test-field.c - the initial field, the CPU reference and the comparison,
 * and the stencil domain's poisoning: a cell that no step writes, or a halo
 * that no exchange fills, must make the result differ from the reference. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mgpu.h"

static void test_initial(void)
{
    const long long nx = 37, ny = 23;
    int in_range = 1, boundary = 1, periodic = 1;
    for (long long j = 0; j < ny; j++)
        for (long long i = 0; i < nx; i++) {
            float v = mgpu_field_initial(MGPU_KERNEL_PATTERN2D, nx, ny, i, j, 5);
            bool edge = i == 0 || j == 0 || i == nx - 1 || j == ny - 1;
            if (edge)
                boundary &= v == 0.0f;
            else
                in_range &= v >= 0.0f && v < 1.0f;
        }
    for (long long i = 0; i < nx; i++) {
        periodic &= mgpu_field_initial(MGPU_KERNEL_JACOBI, nx, ny, i, 0, 5) ==
                    mgpu_field_initial(MGPU_KERNEL_JACOBI, nx, ny, i, ny - 2, 5);
        periodic &= mgpu_field_initial(MGPU_KERNEL_JACOBI, nx, ny, i, ny - 1, 5) ==
                    mgpu_field_initial(MGPU_KERNEL_JACOBI, nx, ny, i, 1, 5);
    }
    CHECK(in_range, "pattern2d: interior values lie in [0,1)");
    CHECK(boundary, "pattern2d: the boundary ring is 0");
    CHECK(periodic, "jacobi: top and bottom rows are periodic images");
    CHECK(mgpu_field_initial(MGPU_KERNEL_JACOBI, nx, ny, 0, 6, 5) ==
              (float) sin(2.0 * M_PI * 6.0 / (double) (ny - 1)),
          "jacobi: the left column holds sin(2 pi y)");
    CHECK(mgpu_field_initial(MGPU_KERNEL_PATTERN2D, nx, ny, 3, 4, 5) ==
                  mgpu_field_initial(MGPU_KERNEL_PATTERN2D, nx, ny, 3, 4, 5) &&
              mgpu_field_initial(MGPU_KERNEL_PATTERN2D, nx, ny, 3, 4, 5) !=
                  mgpu_field_initial(MGPU_KERNEL_PATTERN2D, nx, ny, 3, 4, 6),
          "the field is a function of the seed");
}

static void test_reference(void)
{
    const long long nx = 9, ny = 7;
    float a[63], b[63];
    CHECK(mgpu_reference_run(a, MGPU_KERNEL_PATTERN2D, nx, ny, 0, 1) == MGPU_OK,
          "reference: zero steps run");
    mgpu_field_initial_rows(b, (size_t) nx, MGPU_KERNEL_PATTERN2D, nx, ny, 0, ny, 1);
    CHECK(memcmp(a, b, sizeof a) == 0, "reference: zero steps leave the initial field");
    CHECK(mgpu_reference_run(a, MGPU_KERNEL_PATTERN2D, nx, ny, 1, 1) == MGPU_OK,
          "reference: one step runs");
    /* One cell by hand: the book's formula. */
    long long i = 4, j = 3;
    float c = b[j * nx + i], w = b[j * nx + i - 1], e = b[j * nx + i + 1];
    float n = b[(j - 1) * nx + i], s = b[(j + 1) * nx + i];
    float expect = sqrtf(fabsf(c + w + e - 2.0f * n + 3.0f * s));
    CHECK(fabsf(a[j * nx + i] - expect) <= 1e-6f * expect,
          "reference: pattern2d cell (4,3) is sqrt|c+w+e-2n+3s|");
    CHECK(a[0] == 0.0f && a[nx * ny - 1] == 0.0f, "reference: the boundary stays 0");
}

static void test_compare(void)
{
    float f[4] = {1, 2, 3, 4}, g[4] = {1, 2, 3, 4};
    double err;
    long long bad;
    mgpu_field_compare(f, g, 2, 2, 0.0, &err, &bad);
    CHECK(bad == 0 && err == 0.0, "compare: equal fields agree");
    g[2] = 3.0001f;
    mgpu_field_compare(f, g, 2, 2, 0.0, &err, &bad);
    CHECK(bad == 1 && err > 0.0, "compare: one differing cell is found");
    mgpu_field_compare(f, g, 2, 2, 1e-3, &err, &bad);
    CHECK(bad == 0, "compare: a difference within the tolerance passes");
    f[1] = NAN;
    mgpu_field_compare(f, g, 2, 2, 1e-3, &err, &bad);
    CHECK(bad == 1 && isinf(err), "compare: a NaN cell (never written) fails");
    float last[4] = {1, 2, 3, 4}, other[4] = {1, 2, 3, 5};
    mgpu_field_compare(last, other, 2, 2, 0.0, &err, &bad);
    CHECK(bad == 1, "compare: a difference in the last cell is found");
    float zero[2] = {0.0f, 1.0f}, minus_zero[2] = {-0.0f, 1.0f};
    mgpu_field_compare(zero, minus_zero, 2, 1, 0.0, &err, &bad);
    CHECK(bad == 0 && err == 0.0, "compare: -0 equals 0 (equal values, other bits)");
}

/* A small domain of NX x NY on NPARTS host parts, peer copies. */
static mgpu_stencil_desc small_desc(mgpu_kernel kernel, long long nx, long long ny, int nparts)
{
    return (mgpu_stencil_desc){.nx = nx,
                               .ny = ny,
                               .kernel = kernel,
                               .exchange = MGPU_EXCHANGE_PEER,
                               .seed = 3,
                               .nparts = nparts};
}

/* The cells of ST's field after STEPS steps that differ from the CPU
 * reference of DESC (-1: no host memory to compare them). */
static long long reference_mismatches(mgpu_stencil *st, const mgpu_stencil_desc *desc,
                                      long long steps)
{
    const long long nx = desc->nx, ny = desc->ny;
    float *field = malloc(sizeof(float) * nx * ny), *ref = malloc(sizeof(float) * nx * ny);
    long long bad = -1;
    if (field && ref) {
        double err;
        mgpu_stencil_gather_all(st, steps, field);
        mgpu_reference_run(ref, desc->kernel, nx, ny, steps, desc->seed);
        mgpu_field_compare(field, ref, nx, ny, 0.0, &err, &bad);
    }
    free(field);
    free(ref);
    return bad;
}

/* Run STEPS steps on two host parts, skipping what SKIP says, and count the
 * cells that differ from the CPU reference. */
enum skip { SKIP_NOTHING, SKIP_A_ROW, SKIP_EXCHANGE };
static long long mismatches_after(mgpu_kernel kernel, enum skip skip)
{
    const long long steps = 3;
    mgpu_stencil_desc desc = small_desc(kernel, 19, 11, 2);
    mgpu_stencil *st;
    if (mgpu_stencil_create(&st, &desc) != MGPU_OK)
        return -1;
    for (int p = 0; p < 2; p++)
        mgpu_stencil_reset(st, p);
    for (long long step = 0; step < steps; step++) {
        for (int p = 0; p < 2 && skip != SKIP_EXCHANGE; p++) {
            mgpu_device_set(p);
            mgpu_stencil_send(st, p, step);
        }
        for (int p = 0; p < 2; p++) {
            const mgpu_slab *slab = mgpu_stencil_slab(st, p);
            mgpu_device_set(p);
            if (skip != SKIP_EXCHANGE)
                mgpu_stencil_recv(st, p, step);
            long long end = slab->row_end - (skip == SKIP_A_ROW && p == 1 ? 1 : 0);
            mgpu_stencil_compute_rows(st, p, step, slab->row_begin, end,
                                      mgpu_stencil_stream(st, p));
        }
    }
    long long bad = reference_mismatches(st, &desc, steps);
    mgpu_stencil_destroy(st);
    return bad;
}

/* Deep halos, K = 3 and TIME_BLOCK, one part (pattern2d: both sides are the
 * field's fixed boundary), the slab computed as two bands that meet at row
 * SPLIT: the cells that differ from the CPU reference, or -1 when a band is
 * refused (*STATUS says why). */
static long long deep_bands_mismatches(long long split, int time_block, mgpu_status *status)
{
    const long long steps = 3;
    mgpu_stencil_desc desc = small_desc(MGPU_KERNEL_PATTERN2D, 17, 14, 1);
    desc.halo = 3;
    desc.time_block = time_block;
    desc.steps = steps;
    mgpu_stencil *st;
    if ((*status = mgpu_stencil_create(&st, &desc)) != MGPU_OK)
        return -1;
    mgpu_device_set(0);
    mgpu_stencil_reset(st, 0);
    const mgpu_slab *slab = mgpu_stencil_slab(st, 0);
    mgpu_stream *stream = mgpu_stencil_stream(st, 0);
    for (long long step = 0; step < steps && *status == MGPU_OK; step++) {
        *status = mgpu_stencil_compute_rows(st, 0, step, slab->row_begin, split, stream);
        if (*status == MGPU_OK)
            *status = mgpu_stencil_compute_rows(st, 0, step, split, slab->row_end, stream);
    }
    long long bad = *status == MGPU_OK ? reference_mismatches(st, &desc, steps) : -1;
    mgpu_stencil_destroy(st);
    return bad;
}

static void test_deep_bands(void)
{
    mgpu_status status;
    /* Rows 1..12; a pass of 3 steps reaches 2 rows beyond a band. */
    CHECK(deep_bands_mismatches(4, 3, &status) == 0 && status == MGPU_OK,
          "deep bands: K = T = 3, bands [1, 4) and [4, 13) equal the CPU reference");
    CHECK(deep_bands_mismatches(11, 3, &status) == 0 && status == MGPU_OK,
          "deep bands: bands [1, 11) and [11, 13), 2 rows from the bottom, equal it");
    CHECK(deep_bands_mismatches(2, 3, &status) == -1 && status == MGPU_ERR_UNSUPPORTED,
          "deep bands: a band 1 row from the fixed top is refused, not computed wrong");
    CHECK(deep_bands_mismatches(12, 3, &status) == -1 && status == MGPU_ERR_UNSUPPORTED,
          "deep bands: a band 1 row from the fixed bottom is refused");
    CHECK(deep_bands_mismatches(4, 1, &status) == -1 && status == MGPU_ERR_UNSUPPORTED,
          "deep bands: a time block below --halo is refused");
}

int main(void)
{
    test_initial();
    test_reference();
    test_compare();
    CHECK(mgpu_init(MGPU_BACKEND_HOST, 2) == MGPU_OK, "host backend with 2 devices");
    for (int k = 0; k < 2; k++) {
        mgpu_kernel kernel = k ? MGPU_KERNEL_JACOBI : MGPU_KERNEL_PATTERN2D;
        const char *name = mgpu_kernel_name(kernel);
        CHECK(mismatches_after(kernel, SKIP_NOTHING) == 0,
              "%s: 2 parts, 3 steps equal the CPU reference", name);
        CHECK(mismatches_after(kernel, SKIP_A_ROW) > 0,
              "%s: a row no step wrote is caught (poisoned buffers)", name);
        CHECK(mismatches_after(kernel, SKIP_EXCHANGE) > 0,
              "%s: halos no exchange filled are caught", name);
    }
    test_deep_bands();
    return check_done();
}
