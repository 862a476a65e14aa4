/* compare.h - what the files of mgpu-compare share: the text it lets
 * through, one row per run, the child processes it starts, the flat JSON
 * objects it reads, the grids, the results it writes, the plots, the output
 * folder and the command line.  compare.c calls into every file; each other
 * file calls only files below it, compare-text.c at the bottom. */
#ifndef MGPU_BENCH_COMPARE_H
#define MGPU_BENCH_COMPARE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "bench.h"
#include "mgpu.h"

#define COMPARE_NAME "mgpu-compare"
/* A usage error: one line naming the program, exit 2. */
#define cmp_usage(...) bench_usage(COMPARE_NAME, __VA_ARGS__)

/* ----------------------------------------------------------------- text */

/* What text from outside may be in the output (compare-text.c). */

/* 1 when TEXT is a name: letters, digits, and . _ + - after the first.
 * Such text can go into a table column, a CSV cell, a gnuplot string or
 * data block as it is. */
int cmp_is_name(const char *text);
/* TEXT (a child's error line) made plain: control characters become
 * blanks, so that it stays one line of a table, and bytes that are not
 * UTF-8 '?', so that results.json stays JSON. */
void cmp_plain_text(char *text);
/* The length of the well-formed UTF-8 sequence at S (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 (a NUL ends S). */
size_t cmp_utf8_length(const unsigned char *s);

/* ---------------------------------------------------------------- a run */

/* What mgpu-compare's command line accepts; a row read back must be in the
 * same ranges (devices: 1 to MGPU_MAX_DEVICES). */
#define CMP_MIN_GRID 3LL
#define CMP_MAX_GRID (1LL << 30)
#define CMP_MAX_STEPS 1000000000LL
#define CMP_MAX_RUNS 1000LL /* --repeat and --warmup */
/* A results.json of every program on 64 devices in every mode is about
 * 2 MB; a larger file is not one. */
#define CMP_MAX_RESULTS (64L << 20)
#define CMP_MAX_RESULTS_TEXT "64 MiB"

typedef enum cmp_status { RUN_OK, RUN_FAILED, RUN_SKIPPED } cmp_status;

/* One run of one strategy program.  Numbers that were not measured are
 * NaN (null in JSON, empty in CSV).  The texts are names (cmp_is_name) but
 * verify, empty when no check ran, and reason, text without control
 * characters. */
typedef struct cmp_row {
    char program[32];  /* "mgpu-single" */
    char strategy[32]; /* the record's strategy, "single-thread" */
    char exchange[16]; /* the mode that ran (the record's), else the one asked */
    int devices;
    char backend[8];
    char kernel[16];
    long long nx, ny, steps;
    int repeats;
    /* The halo depth (--halo=K: K rows a side, exchanged every K steps; 1
     * where a record or results file says none), the steps per pass over
     * memory as run (0: not known, as for a run that did not start), and
     * the exchanges of one run (NaN: not said). */
    int halo, time_block;
    double exchanges;
    cmp_status status;
    char reason[256]; /* why it failed or was skipped */
    double time_s, time_min_s, time_max_s, us_per_step, gcells_per_s, gbytes_per_s;
    double time_spread; /* (time_max_s - time_min_s) / time_s, derived by cmp_derive */
    double exchange_s, exchange_share, copy_gbytes_per_s, roofline;
    /* Where a step's time went: the host issuing it, the host waiting, and the
     * largest part's kernel alone (the record's fields of these names). */
    double host_issue_us_per_step, host_wait_us_per_step, device_us_per_step;
    double baseline_s, speedup, efficiency; /* against this program's 1-device row, same K */
    char verify[8];                         /* how it was verified */
    int verified;                           /* 1 passed, 0 failed, -1 not checked */
    double max_error;
    /* Every field the program printed (its own extras included), as read;
     * NULL when it printed none.  Owned by the row's cmp_rows. */
    json_t *record;
    /* The set of results the row came from, when --from reads several
     * (cmp_rows_name_set), and the name of its line, "PROGRAM@SET"; both
     * empty otherwise. */
    char set[32];
    char series[64];
} cmp_row;

/* What a row's line is called in the crossover and the plots, and what
 * rows must share to be one program's runs (of one machine): its program,
 * or "PROGRAM@SET" when several sets are shown side by side. */
static inline const char *cmp_series(const cmp_row *row)
{
    return row->series[0] ? row->series : row->program;
}

/* The program whose runs are the device-driven floor: the host launches
 * once a run and the devices step on their own (doc/persistent.md). */
#define CMP_FLOOR_PROGRAM "mgpu-persistent"
/* 1 when SERIES (cmp_series) is the floor program's, of any set. */
static inline int cmp_is_floor(const char *series)
{
    size_t n = strlen(CMP_FLOOR_PROGRAM);
    return strncmp(series, CMP_FLOOR_PROGRAM, n) == 0 && (series[n] == '\0' || series[n] == '@');
}

typedef struct cmp_rows {
    cmp_row *row;
    int count, capacity;
} cmp_rows;

/* A new row (zeroed, numbers NaN) at the end, or NULL when out of memory.
 * cmp_rows_free releases the rows' records. */
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
    int start_errno; /* why it could not be started, or 0 */
    double seconds;
    long long oom_before; /* mgpu_oom_kills when it started */
} cmp_output;

/* Run ARGV (ARGV[0] a path, or a name looked up in PATH) in the folder DIR
 * (NULL: this one) with stdin from /dev/null, collecting its output, for
 * at most TIMEOUT_S seconds; it and every process it starts in its process
 * group die with mgpu-compare.  0 when it ran (whatever its exit code), -1
 * with a message in ERROR when it could not be started.  Free the output
 * with cmp_output_free. */
int cmp_spawn(char *const argv[], const char *dir, double timeout_s, cmp_output *output,
              char *error, size_t error_size);
void cmp_output_free(cmp_output *output);
/* How the child of OUTPUT ended, into TEXT, when it was not stopped for its
 * time: "exit 3", or "killed by signal 11 (Segmentation fault)", or
 * "killed by the kernel's out-of-memory killer (signal 9)". */
void cmp_ended(const cmp_output *output, char *text, size_t size);
/* The line of TEXT (a child's stderr) that says why it failed, into OUT:
 * the last one that starts with "NAME:" (mgpu_error's lines; NAME may be
 * NULL), else the first paragraph after the last banner of dashes (a
 * launcher's message, mpirun's), its lines joined, else the last line that
 * has more than dashes and blanks; plain text (cmp_plain_text), ending in
 * "..." when it had to be cut. */
void cmp_last_line(const char *text, const char *name, char *out, size_t size);
/* The signal, SIGINT or SIGTERM, that came, or 0; a running child is then
 * stopped too. */
int cmp_interrupted(void);
void cmp_catch_signals(void);

/* ------------------------------------------------------------ JSON */

/* JSON is read and written with jansson (compare-json.c); what is read is
 * judged by compare-row.c. */

/* What results.json says it is: {"schema": CMP_RESULTS_SCHEMA, "metadata":
 * {...}, "runs": [...]} (doc/record.md).  Schema 1, and an array of runs
 * alone (what mgpu-compare wrote before schema 1), are still read, in
 * schema 1's vocabulary. */
#define CMP_RESULTS_SCHEMA 2
/* A record has about 40 fields; more than this is an error, not a cut. */
#define CMP_JSON_FIELDS 256
/* The longest key read. */
#define CMP_JSON_KEY 63

/* Parse TEXT (LEN bytes): one JSON value, an object or an array, with
 * nothing after it but blanks, no key given twice in an object, strings of
 * UTF-8 without NUL.  The value (json_decref it), or NULL with a one-line
 * message in ERROR that says where. */
json_t *cmp_json_load(const char *text, size_t len, char *error, size_t error_size);

/* Fill ROW from OBJECT: the record a program printed (SCHEMA 0: its own
 * "schema" says its vocabulary), or a run of a results.json of SCHEMA 1 or
 * 2, which also has the status and the reason.  Schema 1's names and
 * yes-or-no texts are read as schema 2's (doc/record.md).  Every field is
 * checked (see compare-row.c); the row keeps the object, in schema 2's
 * vocabulary, for the fields it has no place for.  0, or -1 with a message
 * naming the field. */
int cmp_row_from_object(cmp_row *row, json_t *object, int schema, char *error, size_t error_size);
/* The rows of a results.json in TEXT (LEN bytes, NUL-terminated after
 * them), appended to ROWS.  0, or -1 with a message naming the run and the
 * field.  What --from does with a file, and the fuzz test with its inputs. */
int cmp_results_parse(const char *text, size_t len, cmp_rows *rows, char *error, size_t error_size);
/* Read the results.json at PATH (what cmp_write_json wrote, of schema 1 or
 * 2, or the array of runs before them), its rows appended to ROWS.  0, or
 * -1 with a message in ERROR. */
int cmp_read_json(const char *path, cmp_rows *rows, char *error, size_t error_size);

/* ------------------------------------------------------------- lists */

/* Walk the comma-separated list TEXT: EACH(CONTEXT, ENTRY, LEN) for each
 * entry, ENTRY a NUL-ended copy of its LEN bytes.  An empty list or an
 * empty entry ("1,,2", "1,") is refused here.  0; -1 with a message in
 * ERROR (EACH writes its own, with cmp_list_refuse); -2 when out of memory
 * (EACH returns -2 for that). */
int cmp_list_each(const char *text, int (*each)(void *context, const char *entry, size_t len),
                  void *context, char *error, size_t error_size);
/* "'ENTRY': WHY" into ERROR, the entry cut to its first 40 bytes. */
void cmp_list_refuse(char *error, size_t error_size, const char *entry, size_t len, const char *fmt,
                     ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* The --halo list TEXT (depths K, separated by commas, each an integer
 * from 1 to MGPU_HALO_MAX as mgpu_parse_integer reads it) into HALOS (room
 * for MGPU_HALO_MAX), shallowest first, each once, and *COUNT.  0; -1 with
 * a message in ERROR; -2 when out of memory. */
int cmp_halos_parse(const char *text, int *halos, int *count, char *error, size_t error_size);

/* ---------------------------------------------------------- grid sizes */

/* One grid of a comparison across sizes (compare-sizes.c). */
typedef struct cmp_size {
    long long nx, ny;
} cmp_size;

typedef struct cmp_sizes {
    cmp_size *size;
    int count;
} cmp_sizes;

/* Sizes in the order of a comparison: by cells, then by columns.  <0, 0
 * (the same grid) or >0, as strcmp. */
int cmp_size_order(const cmp_size *a, const cmp_size *b);
/* The --sizes list TEXT (entries N, NXxNY and A:B, the doubling range A,
 * 2A, 4A, ... up to B, separated by commas) into SIZES, which it replaces:
 * smallest first, each grid once, every side in [CMP_MIN_GRID,
 * CMP_MAX_GRID].  0; -1 with a message in ERROR (the entry, what is wrong);
 * -2 when out of memory. */
int cmp_sizes_parse(const char *text, cmp_sizes *sizes, char *error, size_t error_size);
void cmp_sizes_free(cmp_sizes *sizes);
/* The size of ROWS (OK_ONLY: of the rows that ran) that comes next after
 * AFTER (NULL: the first) in cmp_size_order, into *NEXT: 1, or 0 when
 * there is none.  Walks the sizes of any set of rows, in any order, with
 * no list to allocate. */
int cmp_rows_next_size(const cmp_rows *rows, int ok_only, const cmp_size *after, cmp_size *next);
/* How many sizes ROWS span (OK_ONLY: the rows that ran). */
int cmp_rows_size_count(const cmp_rows *rows, int ok_only);
/* 1 when ROW was run at SIZE. */
int cmp_row_at(const cmp_row *row, const cmp_size *size);
/* 1 when row I ran and is the first of ROWS that ran of its program,
 * device count and halo depth: walking ROWS with it visits each such
 * triple once. */
int cmp_first_of_pair(const cmp_rows *rows, int i);
/* The fastest row of SERIES (cmp_series: a program, of one set) that ran
 * on DEVICES devices with halo depth HALO at SIZE (its best exchange mode
 * there), or NULL. */
const cmp_row *cmp_fastest(const cmp_rows *rows, const char *series, int devices, int halo,
                           const cmp_size *size);
/* 1 when a row of ROWS has a halo depth other than 1: the table, the
 * crossover and the plots then name each line's depth. */
int cmp_rows_deep(const cmp_rows *rows);
/* The speedup over one device that is a crossover. */
#define CMP_CROSSOVER 1.5
/* When ROWS span more than one size: per program, device count above 1
 * and halo depth, the smallest grid at which its fastest row is at least
 * CMP_CROSSOVER times faster than its 1-device row with the same depth at
 * that grid, or "none up to" the largest; the depth is named when a row
 * has one other than 1.  Needs cmp_derive first. */
void cmp_print_crossover(const cmp_rows *rows, FILE *out);

/* ---------------------------------------------------------- the results */

/* The spread of every row's times, and its speedup and efficiency against
 * the 1-device row of the same program at the same grid size with the same
 * halo depth (the first that ran). */
void cmp_derive(cmp_rows *rows);
void cmp_print_table(const cmp_rows *rows, FILE *out);
/* Where the floor program ran: per grid, device count and halo depth (and
 * set), its fastest time per step against the fastest host-driven
 * program's in the same conditions, and their ratio (below 1: the floor
 * is below every host-driven program).  Nothing when it did not run. */
void cmp_print_floor(const cmp_rows *rows, FILE *out);
/* Write results.csv or results.json to PATH.  0, or -1 after a message. */
int cmp_write_csv(const cmp_rows *rows, const char *path);
int cmp_write_json(const cmp_rows *rows, const char *path);

/* ------------------------------------------------------ sets side by side */

/* The most results files --from reads, shown side by side. */
#define CMP_MAX_SETS 8
/* Make rows FIRST to the last of ROWS, those read from the results file
 * PATH, a set of their own (compare-sets.c): named by the folder of PATH
 * when it is a results.json, else by its file name without ".json", as a
 * name (cmp_is_name), "-2", "-3", ... added where an earlier set has it;
 * each row's series is then "PROGRAM@SET". */
void cmp_rows_name_set(cmp_rows *rows, int first, const char *path);
/* The runs of the sets of ROWS side by side: where each set ran, then a
 * line per run (program, mode, devices, grid, halo, kernel) that any set
 * has, its time per step in each set ("-" where a set lacks it), and each
 * set's time over the first set's. */
void cmp_print_side_by_side(const cmp_rows *rows, FILE *out);

/* What the host backend's figures are, said wherever they are shown.  No
 * quote in it: it goes into a gnuplot string. */
#define CMP_HOST_NOTE                                                                     \
    "host backend: a device is a partition of host memory, its kernels the C reference; " \
    "these times say nothing about GPUs"
/* 1 when a run of ROWS ran on the host backend. */
int cmp_host_ran(const cmp_rows *rows);

#define CMP_PLOT_SCRIPT "plots.gp"
/* The files of the plots, in the output folder: the sizes- plots are made
 * only when the runs span more than one grid size, the halo- plots only
 * when they span more than one halo depth. */
#define CMP_PLOT_FILE_NAMES                                                                    \
    CMP_PLOT_SCRIPT, "scaling.png", "scaling.svg", "exchange-modes.png", "exchange-modes.svg", \
        "sizes-time.png", "sizes-time.svg", "sizes-efficiency.png", "sizes-efficiency.svg",    \
        "halo-time.png", "halo-time.svg", "halo-efficiency.png", "halo-efficiency.svg"
/* The same, NULL-ended. */
extern const char *const cmp_plot_files[];

enum {
    CMP_PLOTS_MADE,   /* the script and the PNG and SVG files */
    CMP_PLOTS_SCRIPT, /* no gnuplot on PATH, none asked for ($GNUPLOT): the script alone */
    CMP_PLOTS_NONE,   /* no run succeeded: nothing to plot */
    CMP_PLOTS_FAILED  /* asked-for plots could not be made (said on stderr) */
};
/* How long gnuplot may take at most, whatever --timeout says: a plot takes
 * a second or two. */
#define CMP_PLOT_TIMEOUT_S 60
/* Write DIR/plots.gp and, with gnuplot (run in DIR, stopped with what it
 * started after TIMEOUT_S seconds or CMP_PLOT_TIMEOUT_S), the scaling and
 * exchange-mode plots (at the largest grid) and, across grid sizes, the
 * time per step and the efficiency, as PNG and SVG in DIR.  One of the
 * CMP_PLOTS_; FAILED leaves no plot whole or not, and no plots.gp when it
 * could not be written. */
int cmp_plot(const cmp_rows *rows, const char *dir, long long timeout_s);

/* ------------------------------------------------------ the output folder */

/* A set of results being written (compare-output.c says how). */
typedef struct cmp_stage {
    char dir[PATH_MAX];  /* the output folder */
    char path[PATH_MAX]; /* the staging folder in it; empty when there is none */
} cmp_stage;

/* Every file of a comparison's set, results.json last: when it is new, so
 * is the rest.  NULL-ended. */
extern const char *const cmp_result_files[];
/* The folder FILE is in, into DIR (SIZE bytes): "." for a bare name, "/"
 * for one at the root. */
void cmp_folder_of(const char *file, char *dir, size_t size);
/* Make DIR if need be and prove it a folder this program can write in, and
 * where no name of NAMES (NULL-ended) is a folder, before anything runs.
 * -1 to go on, or 2 after a line naming OPTION. */
int cmp_folder_check(const char *dir, const char *option, const char *const *names);
/* The file in the output folder whose lock says a comparison writes there;
 * it is there while the lock is held. */
#define CMP_LOCK_NAME ".mgpu-compare.lock"
/* Lock DIR for this comparison, until cmp_folder_unlock: 0 (also on a file
 * system without locks, after a line that says so), or -1 after a line
 * naming OPTION (another mgpu-compare holds it). */
int cmp_folder_lock(const char *dir, const char *option);
/* Let the folder go (nothing when none is held): its lock file goes too. */
void cmp_folder_unlock(void);
/* Make a staging folder in DIR.  0, or -1 after a message. */
int cmp_stage_open(cmp_stage *stage, const char *dir);
/* The path of the file NAME in the staging folder. */
void cmp_stage_file(const cmp_stage *stage, const char *name, char *path, size_t size);
/* Put the set NAMES (NULL-ended) in place in the output folder: each file
 * the staging folder has replaces its namesake, each it lacks is removed
 * there, in that order, the last name last.  0, or -1 after a message. */
int cmp_stage_commit(cmp_stage *stage, const char *const *names);
/* Remove the staging folder and what is in it; the output folder keeps
 * what it had. */
void cmp_stage_discard(cmp_stage *stage);

/* ------------------------------------------------------ the command line */

/* A strategy program: the name --strategies takes, its folder in the build
 * tree, the program. */
typedef struct cmp_strategy {
    const char *name, *folder, *program;
} cmp_strategy;
/* Every strategy program, in the order of the table (compare-options.c). */
#define CMP_NSTRATEGIES 7
extern const cmp_strategy cmp_strategies[];

/* The modes a program lists (its --list-exchanges) and --exchanges takes:
 * every one but auto, which the library's table keeps first. */
#define CMP_FIRST_MODE (MGPU_EXCHANGE_AUTO + 1)

/* The most words a launcher's text may have (--mpirun's with "-np %n" after
 * them): the command of a run is these, the program and its dozen options. */
#define CMP_LAUNCHER_TEXT_WORDS 64
#define CMP_LAUNCHER_WORDS (CMP_LAUNCHER_TEXT_WORDS + 2)
/* The longest word of a launcher (a hostfile's path, -x NAME=VALUE); %n
 * becomes at most 2 digits (at most MGPU_MAX_DEVICES ranks). */
#define CMP_LAUNCHER_WORD_MAX 1024

/* What the command line asks (cmp_options_parse). */
typedef struct cmp_options {
    int backend;              /* an mgpu_backend */
    long long nx, ny, steps;  /* 0: the backend's default */
    cmp_sizes sizes;          /* --sizes; none: the one grid of --nx, --ny */
    int halos[MGPU_HALO_MAX]; /* --halo depths, shallowest first; none: 1 alone */
    int nhalos;
    int kernel, verify, bind; /* an mgpu_kernel, mgpu_verify, mgpu_bind */
    long long repeat, warmup, timeout;
    unsigned strategies;          /* bit per cmp_strategies[]; 0: all */
    unsigned exchanges;           /* MGPU_EXCHANGE_BIT set; 0: each program's own */
    int counts[MGPU_MAX_DEVICES]; /* device counts; none: the default */
    int ncounts;
    const char *output;
    const char *from[CMP_MAX_SETS]; /* --from, each one given */
    int nfrom;
    /* How mgpu-mpi's ranks are started: --launcher, or --mpirun (else
     * $MPIRUN, else mpirun) and "-np %n", split at blanks; %n in a word is
     * the number of ranks.  The words point into launcher_text, which
     * cmp_options_free frees. */
    char *launcher_text;
    char *launcher[CMP_LAUNCHER_WORDS + 1];
    const char *launcher_from; /* the option that set it, for its errors */
} cmp_options;

/* ARGV into OPT (which cmp_options_free frees): -1 to go on, or the exit
 * code, 0 after --help or --version, 2 after a usage error's line, 1 when
 * out of memory. */
int cmp_options_parse(cmp_options *opt, int argc, char **argv);
void cmp_options_free(cmp_options *opt);

#endif /* MGPU_BENCH_COMPARE_H */
