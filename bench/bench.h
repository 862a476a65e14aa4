/* bench.h - what mgpu-p2p and mgpu-compare share: strict values on the
 * command line with one-line usage errors (CSV cells and JSON strings are
 * the library's: mgpu_csv_text, mgpu_json_string). */
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
/* The entry of an option whose value is one of NAMES (NULL-ended, as the
 * library's mgpu_*_names): "a|b|c" and TEXT right after. */
void bench_help_choice(const char *option, const char *const *names, const char *text);

#endif /* MGPU_BENCH_BENCH_H */
