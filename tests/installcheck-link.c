/* installcheck-link.c - a user's first program against the installed mgpu:
 * `make installcheck' builds it with nothing but
 *     cc t.c $(pkg-config --cflags --libs mgpu)
 * (and with --static, and by CMake's find_package(mgpu); tests/installcheck.sh)
 * and runs it.  Two host-backend devices step the stencil and must match the
 * single-device reference bit for bit, so the library's OpenMP kernels, its
 * libm calls and (in a CUDA build) the CUDA runtime are all linked. */
#include <stdio.h>
#include <stdlib.h>

#include <mgpu.h>

int main(void)
{
    const long long nx = 37, ny = 29, steps = 5;
    const uint64_t seed = 7;
    if (mgpu_init(MGPU_BACKEND_HOST, 2) != MGPU_OK) {
        fprintf(stderr, "mgpu_init: %s\n", mgpu_last_error());
        return 1;
    }
    mgpu_stencil_desc desc = {.nx = nx,
                              .ny = ny,
                              .kernel = MGPU_KERNEL_PATTERN2D,
                              .exchange = MGPU_EXCHANGE_PEER,
                              .seed = seed,
                              .nparts = 2};
    mgpu_stencil *st;
    float *field = calloc((size_t) (nx * ny), sizeof(float));
    float *ref = calloc((size_t) (nx * ny), sizeof(float));
    if (!field || !ref || mgpu_stencil_create(&st, &desc) != MGPU_OK) {
        fprintf(stderr, "mgpu_stencil_create: %s\n", mgpu_last_error());
        return 1;
    }
    mgpu_status s = MGPU_OK;
    for (int p = 0; p < 2 && s == MGPU_OK; p++)
        s = mgpu_stencil_reset(st, p);
    for (long long step = 0; step < steps && s == MGPU_OK; step++) {
        for (int p = 0; p < 2 && s == MGPU_OK; p++)
            if ((s = mgpu_device_set(p)) == MGPU_OK)
                s = mgpu_stencil_send(st, p, step);
        for (int p = 0; p < 2 && s == MGPU_OK; p++)
            if ((s = mgpu_device_set(p)) == MGPU_OK &&
                (s = mgpu_stencil_recv(st, p, step)) == MGPU_OK)
                s = mgpu_stencil_compute(st, p, step);
    }
    for (int p = 0; p < 2 && s == MGPU_OK; p++)
        s = mgpu_stencil_synchronize(st, p);
    if (s == MGPU_OK)
        s = mgpu_stencil_gather_all(st, steps, field);
    if (s == MGPU_OK)
        s = mgpu_reference_run(ref, MGPU_KERNEL_PATTERN2D, nx, ny, steps, seed);
    if (s != MGPU_OK) {
        fprintf(stderr, "%s: %s\n", mgpu_strerror(s), mgpu_last_error());
        return 1;
    }
    double err;
    long long bad;
    mgpu_field_compare(field, ref, nx, ny, 0.0, &err, &bad);
    mgpu_stencil_destroy(st);
    free(field);
    free(ref);
    printf("mgpu %s, %s backend, 2 devices, %lldx%lld, %lld steps: %lld cells differ from "
           "the reference\n",
           MGPU_VERSION, mgpu_backend_name(mgpu_backend_active()), nx, ny, steps, bad);
    return bad == 0 ? 0 : 1;
}
