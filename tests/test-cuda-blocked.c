/* test-cuda-blocked.c - the CUDA blocked kernel (mgpu_kernel_rows_blocked)
 * against STEPS launches of the one-step CUDA kernel on the shrinking band,
 * bit for bit, on device 0 (blocked-case.h has the matrix), and on fields
 * large enough for many strips and tiles.  Skips (exit 77) where there is no
 * usable GPU. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "blocked-case.h"

/* Many tiles across, many strips down, every fixed-row choice. */
static void test_large(void)
{
    for (int kernel = 0; kernel < 2; kernel++)
        for (int steps = 2; steps <= MGPU_TIME_BLOCK_MAX; steps += 2) {
            int ok = 1;
            for (unsigned fixed = 0; fixed < 4; fixed++) {
                ok &= blocked_case((mgpu_kernel) kernel, 2050, 2080, 9, 1500, steps, fixed,
                                   fixed + 1);
                ok &= blocked_case((mgpu_kernel) kernel, 4099, 4099, 9, 700, steps, fixed,
                                   fixed + 5);
            }
            CHECK(ok, "%s, %d steps, 2050 x 1491 (aligned) and 4099 x 691 (packed) rows",
                  mgpu_kernel_name((mgpu_kernel) kernel), steps);
        }
}

int main(void)
{
    /* The host device count is not used by the CUDA backend, but must be valid. */
    if (mgpu_init(MGPU_BACKEND_CUDA, 1) != MGPU_OK)
        check_skip(mgpu_last_error());
    blocked_matrix();
    test_large();
    return check_done();
}
