/* verify.c - is a run's final field the reference field?  (doc/design.md section 5) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>

#include "mgpu-private.h"

/* Up to this many cell updates the C reference is quick (about a second). */
#define CPU_REFERENCE_LIMIT (1LL << 28)

/* GPU against CPU: the kernels do the C reference's arithmetic in its order
 * with no fused multiply-add, so they agree to the bit in practice; this is
 * the bound the check allows. */
#define CUDA_VS_CPU_TOLERANCE 1e-6

/* The whole grid on device 0 alone, one thread, the same library code. */
static mgpu_status single_device_run(const mgpu_options *opt, float *field)
{
    mgpu_stencil_desc desc = {
        .nx = opt->nx,
        .ny = opt->ny,
        .kernel = opt->kernel,
        /* The halos copied, not stored by the step's kernel as auto's
         * direct would: a fault in those stores then cannot be in the
         * run and its reference alike. */
        .exchange = MGPU_EXCHANGE_PEER_ASYNC,
        .seed = opt->seed,
        .nparts = 1,
    };
    mgpu_stencil *st;
    MGPU_TRY(mgpu_stencil_create(&st, &desc));
    mgpu_status status = mgpu_stencil_reset(st, 0);
    if (status == MGPU_OK)
        status = mgpu_device_set(0);
    for (long long step = 0; step < opt->steps && status == MGPU_OK; step++) {
        status = mgpu_stencil_send(st, 0, step);
        if (status == MGPU_OK)
            status = mgpu_stencil_recv(st, 0, step);
        if (status == MGPU_OK)
            status = mgpu_stencil_compute(st, 0, step);
    }
    if (status == MGPU_OK)
        status = mgpu_stencil_gather(st, 0, opt->steps, field);
    if (status == MGPU_OK)
        mgpu_field_fill_halo_rows(field, opt->kernel, opt->nx, opt->ny);
    mgpu_stencil_destroy(st);
    return status;
}

mgpu_status mgpu_verify_field(const float *field, const mgpu_options *opt, mgpu_record *record)
{
    mgpu_verify method = opt->verify;
    bool cuda = mgpu_backend_active() == MGPU_BACKEND_CUDA;
    if (method == MGPU_VERIFY_AUTO) {
        long long work = opt->nx * opt->ny;
        bool small = work <= CPU_REFERENCE_LIMIT / opt->steps;
        method = (!cuda || small) ? MGPU_VERIFY_CPU : MGPU_VERIFY_DEVICE;
    }
    record->verified = -1;
    record->max_error = 0.0;
    record->tolerance = 0.0;
    if (method == MGPU_VERIFY_NONE) {
        record->verify = "none";
        return MGPU_OK;
    }
    size_t cells, bytes;
    MGPU_TRY(mgpu_mul_size((size_t) opt->nx, (size_t) opt->ny, &cells));
    MGPU_TRY(mgpu_mul_size(cells, sizeof(float), &bytes));
    float *ref = malloc(bytes);
    if (!ref)
        return mgpu_fail(MGPU_ERR_NOMEM, "verification: %zu bytes of host memory", bytes);
    mgpu_status status;
    if (method == MGPU_VERIFY_CPU) {
        record->verify = "cpu";
        record->tolerance = cuda ? CUDA_VS_CPU_TOLERANCE : 0.0;
        status = mgpu_reference_run(ref, opt->kernel, opt->nx, opt->ny, opt->steps, opt->seed);
    } else {
        record->verify = "device";
        status = single_device_run(opt, ref);
    }
    if (status == MGPU_OK) {
        long long bad;
        mgpu_field_compare(field, ref, opt->nx, opt->ny, record->tolerance, &record->max_error,
                           &bad);
        record->verified = bad == 0;
        if (bad)
            status = mgpu_fail(MGPU_ERR_VERIFY,
                               "%lld of %lld cells differ from the %s "
                               "reference (max relative error %g)",
                               bad, opt->nx * opt->ny, record->verify, record->max_error);
    }
    free(ref);
    return status;
}
