/* compare.h - what the files of mgpu-compare share: one row per run, the
 * child processes it starts, the flat JSON objects it reads, the results
 * it writes and the plots. */
#ifndef MGPU_BENCH_COMPARE_H
#define MGPU_BENCH_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#define COMPARE_NAME "mgpu-compare"

/* ---------------------------------------------------------------- a run */

typedef enum cmp_status { RUN_OK, RUN_FAILED, RUN_SKIPPED } cmp_status;

/* One run of one strategy program.  Numbers that were not measured are
 * NaN (null in JSON, empty in CSV). */
typedef struct cmp_row {
    char program[32];  /* "mgpu-single" */
    char strategy[32]; /* the record's strategy, "single-thread" */
    char exchange[16]; /* the mode that ran (the record's), else the one asked */
    int devices;
    char backend[8];
    char kernel[16];
    long long nx, ny, steps;
    int repeats;
    cmp_status status;
    char reason[200]; /* why it failed or was skipped */
    double time_s, time_min_s, time_max_s, us_per_step, gcells_per_s, gbytes_per_s;
    double exchange_s, exchange_share, copy_gbps, roofline;
    double baseline_s, speedup, efficiency; /* against this program's 1-device row */
    char verify[8];                         /* how it was verified */
    int verified;                           /* 1 passed, 0 failed, -1 not checked */
    double max_error;
} cmp_row;

typedef struct cmp_rows {
    cmp_row *row;
    int count, capacity;
} cmp_rows;

/* A new row (zeroed, numbers NaN) at the end, or NULL when out of memory. */
cmp_row *cmp_rows_add(cmp_rows *rows);
void cmp_rows_free(cmp_rows *rows);
const char *cmp_status_name(cmp_status status);

/* ------------------------------------------------------ child processes */

typedef struct cmp_output {
    char *out;      /* everything the child wrote on stdout (NUL-terminated) */
    char err[2048]; /* the end of what it wrote on stderr */
    int exit_code;  /* when it exited; -1 when killed */
    int signal;     /* the signal that killed it, or 0 */
    int timed_out;
    double seconds;
} cmp_output;

/* Run ARGV (ARGV[0] a path, or a name looked up in PATH) with stdin from
 * /dev/null, collecting its output, for at most TIMEOUT_S seconds.  0 when
 * it ran (whatever its exit code), -1 with a message in ERROR when it
 * could not be started.  Free the output with cmp_output_free. */
int cmp_spawn(char *const argv[], double timeout_s, cmp_output *output, char *error,
              size_t error_size);
void cmp_output_free(cmp_output *output);
/* Set by SIGINT or SIGTERM; a running child is then stopped too. */
int cmp_interrupted(void);
void cmp_catch_signals(void);

/* ---------------------------------------------------- flat JSON objects */

typedef enum cmp_json_kind { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING } cmp_json_kind;

typedef struct cmp_json_field {
    char key[48];
    cmp_json_kind kind;
    double number;  /* JSON_NUMBER; JSON_BOOL: 1 or 0 */
    char text[256]; /* JSON_STRING (cut at 255 bytes) */
} cmp_json_field;

#define CMP_JSON_FIELDS 64

typedef struct cmp_json_object {
    int count;
    cmp_json_field field[CMP_JSON_FIELDS];
} cmp_json_object;

/* Parse one flat object (string keys; values strings, numbers, true,
 * false, null) at *TEXT and move *TEXT past it.  0, or -1 with a message
 * in ERROR. */
int cmp_json_parse_object(const char **text, cmp_json_object *object, char *error,
                          size_t error_size);

/* Fill ROW from the record a program printed. */
void cmp_row_from_record(cmp_row *row, const cmp_json_object *record);

/* ---------------------------------------------------------- the results */

/* Speedup and efficiency of every row against the 1-device row of the same
 * program (the first that ran). */
void cmp_derive(cmp_rows *rows);
void cmp_print_table(const cmp_rows *rows, FILE *out);
int cmp_write_csv(const cmp_rows *rows, const char *path);
int cmp_write_json(const cmp_rows *rows, const char *path);
/* Read what cmp_write_json wrote.  0, or -1 with a message in ERROR. */
int cmp_read_json(const char *path, cmp_rows *rows, char *error, size_t error_size);

/* Write DIR/plots.gp and, with gnuplot, the scaling and exchange-mode
 * plots as PNG and SVG in DIR.  Says on stderr what it did. */
void cmp_plot(const cmp_rows *rows, const char *dir);

#endif /* MGPU_BENCH_COMPARE_H */
