/* test-blocked.c - the blocked host kernel against STEPS calls of the C
 * reference on the shrinking band, bit for bit (blocked-case.h has the
 * matrix), on rows shared among threads, on a whole field against the CPU
 * reference run, and its usage errors. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "blocked-case.h"

/* Large enough that the threads share the rows (OpenMP), with an odd width. */
static void test_threads(void)
{
    for (int kernel = 0; kernel < 2; kernel++)
        CHECK(blocked_case((mgpu_kernel) kernel, 1029, 1056, 5, 4107, 3, MGPU_ROWS_FIXED_TOP, 9),
              "%s, 1029 x 4102 rows, 3 steps, shared among threads",
              mgpu_kernel_name((mgpu_kernel) kernel));
}

/* A whole pattern2d field, its ring fixed: the CPU reference run. */
static void test_reference_run(void)
{
    const long long nx = 61, ny = 45;
    const int steps = 4;
    float *ref = malloc((size_t) (nx * ny) * sizeof *ref);
    float *in = malloc((size_t) (nx * ny) * sizeof *in);
    mgpu_reference_run(ref, MGPU_KERNEL_PATTERN2D, nx, ny, steps, 3);
    mgpu_field_initial_rows(in, (size_t) nx, MGPU_KERNEL_PATTERN2D, nx, ny, 0, ny, 3);
    float *out = malloc((size_t) (nx * ny) * sizeof *out);
    memcpy(out, in, (size_t) (nx * ny) * sizeof *out);
    mgpu_status status = mgpu_kernel_rows_blocked_host(
        MGPU_KERNEL_PATTERN2D, in, out, nx, (size_t) nx, 1, ny - 1, steps,
        MGPU_ROWS_FIXED_TOP | MGPU_ROWS_FIXED_BOTTOM);
    CHECK(status == MGPU_OK && memcmp(out, ref, (size_t) (nx * ny) * sizeof *out) == 0,
          "pattern2d %lld x %lld, %d steps in one pass: the CPU reference run", nx, ny, steps);
    free(ref);
    free(in);
    free(out);
}

static void test_usage(void)
{
    float f[27] = {0};
    for (int steps = 0; steps <= MGPU_TIME_BLOCK_MAX + 1; steps += MGPU_TIME_BLOCK_MAX + 1)
        CHECK(mgpu_kernel_rows_blocked_host(MGPU_KERNEL_JACOBI, f, f + 9, 3, 3, 1, 2, steps, 0) ==
                  MGPU_ERR_USAGE,
              "%d steps: %s", steps, mgpu_last_error());
}

int main(void)
{
    CHECK(mgpu_init(MGPU_BACKEND_HOST, 1) == MGPU_OK, "host backend");
    blocked_matrix();
    test_threads();
    test_reference_run();
    test_usage();
    return check_done();
}
