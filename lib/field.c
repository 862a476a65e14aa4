/* field.c - the initial field, the CPU reference run, and comparing fields. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mgpu-private.h"

/* splitmix64: a good 64-bit mix, so that each cell's value depends only on
 * the seed and the cell, and any part can make its own rows. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static float uniform01(uint64_t seed, uint64_t cell)
{
    /* 24 random bits make a float in [0,1) exactly. */
    return (float) (mix64(seed ^ mix64(cell)) >> 40) * (1.0f / 16777216.0f);
}

float mgpu_field_initial(mgpu_kernel kernel, long long nx, long long ny, long long i, long long j,
                         uint64_t seed)
{
    if (kernel == MGPU_KERNEL_JACOBI) {
        /* Top and bottom rows are periodic images of the last and first
         * interior rows; left and right columns hold sin(2 pi y), as in
         * NVIDIA's multi-gpu-programming-models. */
        if (j == 0)
            j = ny - 2;
        else if (j == ny - 1)
            j = 1;
        if (i == 0 || i == nx - 1)
            return (float) sin(2.0 * M_PI * (double) j / (double) (ny - 1));
        return uniform01(seed, (uint64_t) j * (uint64_t) nx + (uint64_t) i);
    }
    if (i == 0 || i == nx - 1 || j == 0 || j == ny - 1)
        return 0.0f;
    return uniform01(seed, (uint64_t) j * (uint64_t) nx + (uint64_t) i);
}

void mgpu_field_initial_rows(float *rows, size_t pitch, mgpu_kernel kernel, long long nx,
                             long long ny, long long row0, long long nrows, uint64_t seed)
{
    /* Each cell depends only on its position, so rows can be made in any
     * order: a large grid's start takes seconds, not minutes.  One row is
     * made by the calling thread (a caller's parallel loop over rows). */
    MGPU_OMP(omp parallel for schedule(static) if (nrows > 1) num_threads(mgpu_host_threads()))
    for (long long r = 0; r < nrows; r++) {
        float *dst = rows + (size_t) r * pitch;
        for (long long i = 0; i < nx; i++)
            dst[i] = mgpu_field_initial(kernel, nx, ny, i, row0 + r, seed);
    }
}

void mgpu_field_fill_halo_rows(float *field, mgpu_kernel kernel, long long nx, long long ny)
{
    if (kernel != MGPU_KERNEL_JACOBI)
        return;
    size_t row = (size_t) nx;
    memcpy(field, field + (size_t) (ny - 2) * row, row * sizeof *field);
    memcpy(field + (size_t) (ny - 1) * row, field + row, row * sizeof *field);
}

void mgpu_field_outer_rows(float *field, mgpu_kernel kernel, long long nx, long long ny,
                           uint64_t seed)
{
    /* No step computes them: they are the boundary (pattern2d) or periodic
     * images of the interior (jacobi). */
    size_t row = (size_t) nx;
    mgpu_field_initial_rows(field, row, kernel, nx, ny, 0, 1, seed);
    mgpu_field_initial_rows(field + (size_t) (ny - 1) * row, row, kernel, nx, ny, ny - 1, 1, seed);
    mgpu_field_fill_halo_rows(field, kernel, nx, ny);
}

mgpu_status mgpu_reference_run(float *field, mgpu_kernel kernel, long long nx, long long ny,
                               long long steps, uint64_t seed)
{
    size_t cells, bytes;
    MGPU_TRY(mgpu_mul_size((size_t) nx, (size_t) ny, &cells));
    MGPU_TRY(mgpu_mul_size(cells, sizeof(float), &bytes));
    float *other = malloc(bytes);
    if (!other)
        return mgpu_fail(MGPU_ERR_NOMEM, "CPU reference: %zu bytes of host memory", bytes);
    mgpu_field_initial_rows(field, (size_t) nx, kernel, nx, ny, 0, ny, seed);
    memcpy(other, field, bytes);
    float *cur = field, *next = other;
    for (long long step = 0; step < steps; step++) {
        mgpu_field_fill_halo_rows(cur, kernel, nx, ny); /* the exchange */
        mgpu_kernel_rows_host(kernel, cur, next, nx, (size_t) nx, 1, ny - 1);
        float *t = cur;
        cur = next;
        next = t;
    }
    if (cur != field)
        memcpy(field, cur, bytes);
    mgpu_field_fill_halo_rows(field, kernel, nx, ny);
    free(other);
    return MGPU_OK;
}

void mgpu_field_compare(const float *field, const float *ref, long long nx, long long ny,
                        double tolerance, double *max_error, long long *mismatches)
{
    double worst = 0.0;
    long long bad = 0;
    size_t cells = (size_t) nx * (size_t) ny;
    /* The strategies give the reference to the bit, so the common answer is
     * one pass at memory speed; the cell by cell look below is for the
     * fields that differ (or hold -0 against 0, equal but not the same
     * bits). */
    if (memcmp(field, ref, cells * sizeof *field) == 0)
        cells = 0;
    for (size_t k = 0; k < cells; k++) {
        double a = field[k], b = ref[k];
        if (isnan(a) || isnan(b)) {
            if (!(isnan(a) && isnan(b))) {
                bad++;
                worst = INFINITY;
            }
            continue;
        }
        double err = fabs(a - b) / fmax(fabs(b), 1e-30);
        if (a == b)
            err = 0.0;
        if (err > worst)
            worst = err;
        if (err > tolerance)
            bad++;
    }
    *max_error = worst;
    if (mismatches)
        *mismatches = bad;
}
