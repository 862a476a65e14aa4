/* bench.c - what mgpu-p2p and mgpu-compare share: strict values on the
 * command line (the library's mgpu_parse_integer) and their --help lines. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "mgpu.h"

int bench_usage(const char *program, const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    mgpu_error(&(mgpu_program){.name = program}, "%s", message);
    return 2;
}

int bench_parse_integer(const char *program, const char *option, const char *text, long long min,
                        long long max, long long *value)
{
    long long v = 0;
    if (mgpu_parse_integer(text, &v) != 0 || v < min || v > max)
        return bench_usage(program, "--%s: '%s' is not an integer from %lld to %lld", option, text,
                           min, max);
    *value = v;
    return -1;
}

int bench_parse_choice(const char *program, const char *option, const char *text,
                       const char *const *names, int *index)
{
    char accepted[256] = "";
    for (int i = 0; names[i]; i++) {
        if (strcmp(text, names[i]) == 0) {
            *index = i;
            return -1;
        }
        size_t used = strlen(accepted);
        snprintf(accepted + used, sizeof accepted - used, "%s%s", i ? ", " : "", names[i]);
    }
    return bench_usage(program, "--%s: unknown '%s' (accepted: %s)", option, text, accepted);
}

void bench_help_line(const char *option, const char *text) { mgpu_help_line(stdout, option, text); }
