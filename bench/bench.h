/* bench.h - what mgpu-p2p and mgpu-compare share: strict values on the
 * command line with one-line usage errors, and text written as CSV cells
 * (both write JSON with jansson). */
#ifndef MGPU_BENCH_BENCH_H
#define MGPU_BENCH_BENCH_H

#include <stdio.h>

/* Print "PROGRAM: MESSAGE" on stderr and return 2, the usage exit code. */
int bench_usage(const char *program, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* --OPTION=TEXT: the whole TEXT an integer in [MIN, MAX], into *VALUE.
 * -1 to go on, or 2 after the error line. */
int bench_parse_integer(const char *program, const char *option, const char *text, long long min,
                        long long max, long long *value);

/* --OPTION=TEXT: one of NAMES (NULL-ended), its index into *INDEX. */
int bench_parse_choice(const char *program, const char *option, const char *text,
                       const char *const *names, int *index);

/* One entry of --help: the option, then what it does, in a column. */
void bench_help_line(const char *option, const char *text);

/* TEXT as one CSV cell, quoted as RFC 4180 asks when it must be. */
void bench_csv_text(const char *text, FILE *out);

#endif /* MGPU_BENCH_BENCH_H */
