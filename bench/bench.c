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
#include "mgpu/harness.h"

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
    int found = mgpu_name_find(names, text);
    if (found >= 0) {
        *index = found;
        return -1;
    }
    char accepted[256];
    mgpu_names_join(accepted, sizeof accepted, names, MGPU_ALL_NAMES, ", ");
    return bench_usage(program, "--%s: unknown '%s' (accepted: %s)", option, text, accepted);
}

void bench_help_line(const char *option, const char *text) { mgpu_help_line(stdout, option, text); }

void bench_help_choice(const char *option, const char *const *names, const char *text)
{
    char line[512];
    mgpu_names_join(line, sizeof line, names, MGPU_ALL_NAMES, "|");
    size_t used = strlen(line);
    snprintf(line + used, sizeof line - used, "%s", text);
    bench_help_line(option, line);
}
