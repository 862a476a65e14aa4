/* names.c - the names of the library's enums (backends, kernels, exchange
 * modes, and the command line's verify, format, bind and progress), as the
 * command line takes them and the record prints them; each list made from
 * its enum's table in mgpu.h (the command line's in mgpu/harness.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>

#include "mgpu-private.h"

/* Indexed by the enum values; the NULL ends each list. */
#define NAME_(suffix, name) name,
const char *const mgpu_backend_names[] = {MGPU_BACKEND_MAP(NAME_) NULL};
const char *const mgpu_kernel_names[] = {MGPU_KERNEL_MAP(NAME_) NULL};
const char *const mgpu_verify_names[] = {MGPU_VERIFY_MAP(NAME_) NULL};
const char *const mgpu_format_names[] = {MGPU_FORMAT_MAP(NAME_) NULL};
const char *const mgpu_bind_names[] = {MGPU_BIND_MAP(NAME_) NULL};
const char *const mgpu_progress_names[] = {MGPU_PROGRESS_MAP(NAME_) NULL};
const char *const mgpu_exchange_names[] = {MGPU_EXCHANGE_MAP(NAME_) NULL};
#undef NAME_

const char *mgpu_name_at(const char *const *names, int index)
{
    for (int i = 0; names[i] != NULL; i++) {
        if (i == index)
            return names[i];
    }
    return "unknown";
}

int mgpu_name_find(const char *const *names, const char *text)
{
    for (int i = 0; names[i] != NULL; i++) {
        if (strcmp(names[i], text) == 0)
            return i;
    }
    return -1;
}

void mgpu_names_join(char *buf, size_t size, const char *const *names, unsigned mask,
                     const char *separator)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; names[i] != NULL && used < size; i++) {
        if (i < 32 && !(mask & (1u << i)))
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? separator : "", names[i]);
        if (n < 0)
            break;
        used += (size_t) n;
    }
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
