/* names.c - the names of the library's enums: backends, kernels and
 * exchange modes, as the command line takes them and the record prints
 * them. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mgpu-private.h"

/* Indexed by the enum values; the NULL ends each list. */
const char *const mgpu_backend_names[] = {"auto", "cuda", "host", NULL};
const char *const mgpu_kernel_names[] = {"pattern2d", "jacobi", NULL};
const char *const mgpu_exchange_names[] = {
    "auto", "peer", "peer-async", "staged", "direct", "mapped", "ipc", "mpi", "nccl", NULL,
};

/* A mode added to mgpu_exchange must get its name here too. */
_Static_assert(sizeof mgpu_exchange_names / sizeof mgpu_exchange_names[0] ==
                   MGPU_EXCHANGE_COUNT + 1,
               "one name per exchange mode");

const char *mgpu_name_at(const char *const *names, int index)
{
    for (int i = 0; names[i] != NULL; i++) {
        if (i == index)
            return names[i];
    }
    return "unknown";
}

const char *mgpu_backend_name(mgpu_backend backend)
{
    return mgpu_name_at(mgpu_backend_names, backend);
}

const char *mgpu_kernel_name(mgpu_kernel kernel) { return mgpu_name_at(mgpu_kernel_names, kernel); }

const char *mgpu_exchange_name(mgpu_exchange exchange)
{
    return mgpu_name_at(mgpu_exchange_names, exchange);
}
