/* options.c - the command line every mgpu program shares.
 *
 * Every stencil program accepts the same options, so they are parsed here,
 * once.  The rules a user meets are the contract of doc/design.md section 7:
 * a bad value gets exactly one line on stderr that names the option and
 * what it accepts, and the exit code 2.  Numbers are parsed strictly (no
 * empty strings, no trailing junk, no silent overflow), because a typo that
 * turns "--nx=4096x" into 4096 or "--seed=-1" into 2^64-1 makes a benchmark
 * measure something else than the user asked for.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mgpu-private.h"

/* ----------------------------------------------------------- the limits */

#define DEFAULT_GRID 4096
#define DEFAULT_STEPS 100
#define DEFAULT_REPEAT 3
#define DEFAULT_WARMUP 1
#define DEFAULT_SEED 1

#define MIN_GRID 3 /* a boundary ring around at least one interior cell */
/* A billion steps of even the smallest grid is hours of kernel launches:
 * a larger number is a typo, not a benchmark. */
#define MAX_STEPS 1000000000LL
#define MAX_RUNS 1000 /* --repeat and --warmup */

/* The largest grid: its two float buffers must have a byte count that fits
 * in size_t and stays within 2^62, so that no size derived from it later
 * (pitches, offsets, byte counts) can overflow. */
static long long max_grid_cells(void)
{
    uint64_t bytes = UINT64_C(1) << 62;

    if ((uint64_t) SIZE_MAX < bytes)
        bytes = SIZE_MAX;
    return (long long) (bytes / (2 * sizeof(float)));
}

/* Either side may be this long, because the other is at least MIN_GRID. */
static long long max_grid_side(void) { return max_grid_cells() / MIN_GRID; }

/* ------------------------------------------------------ error reporting */

void mgpu_error(const mgpu_program *program, const char *fmt, ...)
{
    const char *name = program && program->name ? program->name : "mgpu";
    /* The line is made first and written in one write(2): stderr has no
     * buffer, so the name, the message and the newline would be three
     * writes, and another process on the same stderr (mpirun's notice of
     * MPI_Abort, a rank's own error) could land between them.  A write of
     * up to PIPE_BUF bytes to a pipe is not interleaved with others. */
    char line[4096];
    va_list ap;
    int head = snprintf(line, sizeof line, "%s: ", name);
    int body = -1;
    if (head >= 0 && (size_t) head < sizeof line) {
        va_start(ap, fmt);
        body = vsnprintf(line + head, sizeof line - (size_t) head, fmt, ap);
        va_end(ap);
    }
    /* Hold the stream so that another thread's error cannot land inside
     * this line. */
    flockfile(stderr);
    if (body >= 0 && (size_t) head + (size_t) body + 1 < sizeof line) {
        size_t len = (size_t) head + (size_t) body, done = 0;
        line[len++] = '\n';
        fflush(stderr);
        while (done < len) {
            ssize_t wrote = write(fileno(stderr), line + done, len - done);
            if (wrote < 0 && errno == EINTR)
                continue;
            if (wrote <= 0)
                break; /* nowhere to say it: the exit status still does */
            done += (size_t) wrote;
        }
    } else { /* longer than a pipe writes at once: in pieces, as it comes */
        fprintf(stderr, "%s: ", name);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    }
    funlockfile(stderr);
}

/* What mgpu_options_parse returns: go on, or exit with this code. */
enum {
    PARSE_GO_ON = -1,
    PARSE_EXIT_OK = 0,
    PARSE_EXIT_FAILURE = 1,
    PARSE_EXIT_USAGE = 2,
    PARSE_LIST_EXCHANGES = -2, /* go on, then list the exchange modes */
};

typedef enum value_problem {
    VALUE_NOT_A_NUMBER,
    VALUE_OUT_OF_RANGE,
    VALUE_UNKNOWN,
} value_problem;

/* The one line for a bad VALUE of --OPTION (NULL: the value is missing). */
static int bad_value(const mgpu_program *program, const char *option, const char *value,
                     value_problem problem, const char *accepted)
{
    if (value == NULL) {
        mgpu_error(program, "--%s: needs a value (accepted: %s)", option, accepted);
        return PARSE_EXIT_USAGE;
    }
    switch (problem) {
    case VALUE_NOT_A_NUMBER:
        mgpu_error(program, "--%s: '%s' is not a number (accepted: %s)", option, value, accepted);
        break;
    case VALUE_OUT_OF_RANGE:
        mgpu_error(program, "--%s: '%s' is out of range (accepted: %s)", option, value, accepted);
        break;
    case VALUE_UNKNOWN:
        mgpu_error(program, "--%s: unknown '%s' (accepted: %s)", option, value, accepted);
        break;
    }
    return PARSE_EXIT_USAGE;
}

/* ------------------------------------------------------------ numbers */

typedef enum number_result { NUMBER_OK, NUMBER_INVALID, NUMBER_RANGE } number_result;

/* strtoll alone takes "" as 0, skips leading blanks and stops quietly at
 * "12x"; here the whole text must be the number. */
int mgpu_parse_integer(const char *text, long long *number)
{
    char *end;
    long long value;

    if (text[0] == '\0' || isspace((unsigned char) text[0]))
        return EINVAL;
    errno = 0;
    value = strtoll(text, &end, 10);
    if (end == text || *end != '\0')
        return EINVAL;
    if (errno == ERANGE)
        return ERANGE;
    *number = value;
    return 0;
}

static number_result parse_integer(const char *text, long long *number)
{
    int err = mgpu_parse_integer(text, number);
    return err == 0 ? NUMBER_OK : err == ERANGE ? NUMBER_RANGE : NUMBER_INVALID;
}

/* The same for an unsigned 64-bit number.  strtoull would wrap "-1" to
 * 2^64-1 without a word, so a minus sign is looked at first. */
static number_result parse_unsigned(const char *text, uint64_t *number)
{
    char *end;
    unsigned long long value;

    if (text[0] == '-') {
        long long negative = 0;
        number_result result = parse_integer(text, &negative);
        if (result == NUMBER_OK && negative == 0) {
            *number = 0;
            return NUMBER_OK;
        }
        return result == NUMBER_INVALID ? NUMBER_INVALID : NUMBER_RANGE;
    }
    if (text[0] == '\0' || isspace((unsigned char) text[0]))
        return NUMBER_INVALID;
    errno = 0;
    value = strtoull(text, &end, 10);
    if (end == text || *end != '\0')
        return NUMBER_INVALID;
    if (errno == ERANGE)
        return NUMBER_RANGE;
    *number = (uint64_t) value;
    return NUMBER_OK;
}

/* --OPTION=TEXT, an integer in [MIN, MAX], into *VALUE (left alone on error). */
static int set_integer(const mgpu_program *program, const char *option, const char *text,
                       long long min, long long max, long long *value)
{
    char accepted[96];
    long long number = 0;
    number_result result = text ? parse_integer(text, &number) : NUMBER_INVALID;

    snprintf(accepted, sizeof accepted, "an integer from %lld to %lld", min, max);
    if (result == NUMBER_INVALID)
        return bad_value(program, option, text, VALUE_NOT_A_NUMBER, accepted);
    if (result == NUMBER_RANGE || number < min || number > max)
        return bad_value(program, option, text, VALUE_OUT_OF_RANGE, accepted);
    *value = number;
    return PARSE_GO_ON;
}

/* TEXT as a byte count: digits, then optionally K, M, G or T (powers of
 * 1024), nothing else. */
static number_result parse_size(const char *text, unsigned long long *bytes)
{
    static const char units[] = "KMGT";
    char *end;
    unsigned long long n;

    if (text[0] < '0' || text[0] > '9')
        return NUMBER_INVALID;
    errno = 0;
    n = strtoull(text, &end, 10);
    if (errno == ERANGE)
        return NUMBER_RANGE;
    if (*end != '\0') {
        const char *unit = strchr(units, *end);
        if (unit == NULL || end[1] != '\0')
            return NUMBER_INVALID;
        for (long shift = 0; shift <= unit - units; shift++) {
            if (n > (ULLONG_MAX >> 10))
                return NUMBER_RANGE;
            n <<= 10;
        }
    }
    *bytes = n;
    return NUMBER_OK;
}

/* --OPTION=TEXT, a byte count in [MIN, MAX] (MIN at least 0), into *VALUE. */
static int set_size(const mgpu_program *program, const char *option, const char *text,
                    long long min, long long max, long long *value)
{
    char accepted[160];
    unsigned long long bytes = 0;
    number_result result = text ? parse_size(text, &bytes) : NUMBER_INVALID;

    snprintf(accepted, sizeof accepted,
             "a number of bytes from %lld to %lld, or of K, M, G or "
             "T, such as 512M or 4G",
             min, max);
    if (text != NULL && result == NUMBER_INVALID) {
        mgpu_error(program, "--%s: '%s' is not a size (accepted: %s)", option, text, accepted);
        return PARSE_EXIT_USAGE;
    }
    if (result == NUMBER_RANGE || bytes < (unsigned long long) min ||
        bytes > (unsigned long long) max)
        return bad_value(program, option, text, VALUE_OUT_OF_RANGE, accepted);
    *value = (long long) bytes;
    return PARSE_GO_ON;
}

/* The same for an int field. */
static int set_int(const mgpu_program *program, const char *option, const char *text, int min,
                   int max, int *value)
{
    long long number = *value;
    int code = set_integer(program, option, text, min, max, &number);

    if (code == PARSE_GO_ON)
        *value = (int) number;
    return code;
}

static int set_seed(const mgpu_program *program, const char *text, uint64_t *seed)
{
    const char *accepted = "an integer from 0 to 18446744073709551615";
    uint64_t number = 0;
    number_result result = text ? parse_unsigned(text, &number) : NUMBER_INVALID;

    if (result == NUMBER_INVALID)
        return bad_value(program, "seed", text, VALUE_NOT_A_NUMBER, accepted);
    if (result == NUMBER_RANGE)
        return bad_value(program, "seed", text, VALUE_OUT_OF_RANGE, accepted);
    *seed = number;
    return PARSE_GO_ON;
}

/* --time-block: auto (0) or a number of steps. */
static int set_time_block(const mgpu_program *program, const char *text, int *time_block)
{
    char accepted[64];
    long long number = 0;
    number_result result = text ? parse_integer(text, &number) : NUMBER_INVALID;

    if (text != NULL && strcmp(text, "auto") == 0) {
        *time_block = 0;
        return PARSE_GO_ON;
    }
    snprintf(accepted, sizeof accepted, "auto or an integer from 1 to %d", MGPU_TIME_BLOCK_MAX);
    if (result == NUMBER_INVALID)
        return bad_value(program, "time-block", text, VALUE_NOT_A_NUMBER, accepted);
    if (result == NUMBER_RANGE || number < 1 || number > MGPU_TIME_BLOCK_MAX)
        return bad_value(program, "time-block", text, VALUE_OUT_OF_RANGE, accepted);
    *time_block = (int) number;
    return PARSE_GO_ON;
}

/* --OPTION=TEXT, one of NAMES, its index into *INDEX. */
static int set_name(const mgpu_program *program, const char *option, const char *text,
                    const char *const *names, int *index)
{
    char accepted[256];
    int found = text ? mgpu_name_find(names, text) : -1;

    if (found < 0) {
        mgpu_names_join(accepted, sizeof accepted, names, MGPU_ALL_NAMES, ", ");
        return bad_value(program, option, text, VALUE_UNKNOWN, accepted);
    }
    *index = found;
    return PARSE_GO_ON;
}

/* The exchange modes PROGRAM implements in this build, auto included (the
 * program resolves it): nccl only where the build has NCCL. */
static unsigned exchanges_built(const mgpu_program *program)
{
    unsigned modes = program->exchanges | MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_AUTO);
    if (!mgpu_nccl_built())
        modes &= ~MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_NCCL);
    return modes;
}

/* --exchange: a known mode, and one that this program implements in this
 * build. */
static int set_exchange(const mgpu_program *program, const char *text, mgpu_exchange *exchange)
{
    unsigned supported = exchanges_built(program);
    int mode = text ? mgpu_name_find(mgpu_exchange_names, text) : -1;
    char names[256];

    mgpu_names_join(names, sizeof names, mgpu_exchange_names, supported, ", ");
    if (mode < 0)
        return bad_value(program, "exchange", text, VALUE_UNKNOWN, names);
    if (mode == MGPU_EXCHANGE_NCCL && (program->exchanges & MGPU_EXCHANGE_BIT(mode)) &&
        mgpu_nccl_missing() != NULL) {
        mgpu_error(program, "--exchange=nccl: %s", mgpu_nccl_missing());
        return PARSE_EXIT_USAGE;
    }
    if (!(supported & MGPU_EXCHANGE_BIT(mode))) {
        mgpu_error(program, "--exchange: '%s' is not supported by %s (supported: %s)", text,
                   program->name, names);
        return PARSE_EXIT_USAGE;
    }
    *exchange = (mgpu_exchange) mode;
    return PARSE_GO_ON;
}

/* ------------------------------------------------------- the option table */

/* getopt_long's return values for the long options; the program's extra
 * options come after OPT_EXTRA, in table order. */
enum option_id {
    OPT_HELP = 'h',
    OPT_VERSION = 'V',
    OPT_NX = 256,
    OPT_NY,
    OPT_STEPS,
    OPT_DEVICES,
    OPT_BACKEND,
    OPT_KERNEL,
    OPT_EXCHANGE,
    OPT_VERIFY,
    OPT_REPEAT,
    OPT_WARMUP,
    OPT_FORMAT,
    OPT_SEED,
    OPT_BASELINE,
    OPT_NO_HEADER,
    OPT_BIND,
    OPT_LIST_EXCHANGES,
    OPT_PROGRESS,
    OPT_NO_PROGRESS,
    OPT_HALO,
    OPT_TIME_BLOCK,
    OPT_EXTRA = 1024,
};

static const struct option common_options[] = {
    {"nx", required_argument, NULL, OPT_NX},
    {"ny", required_argument, NULL, OPT_NY},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"exchange", required_argument, NULL, OPT_EXCHANGE},
    {"verify", required_argument, NULL, OPT_VERIFY},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"baseline", no_argument, NULL, OPT_BASELINE},
    {"no-header", no_argument, NULL, OPT_NO_HEADER},
    {"bind", required_argument, NULL, OPT_BIND},
    {"list-exchanges", no_argument, NULL, OPT_LIST_EXCHANGES},
    {"progress", optional_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"halo", required_argument, NULL, OPT_HALO},
    {"time-block", required_argument, NULL, OPT_TIME_BLOCK},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
};
#define COMMON_OPTIONS (sizeof common_options / sizeof common_options[0])

static size_t count_extras(const mgpu_program *program)
{
    size_t n = 0;

    while (program->extra != NULL && program->extra[n].name != NULL)
        n++;
    return n;
}

/* The common options, then the program's, then the all-zero entry that
 * ends getopt_long's table.  NULL when out of memory. */
static struct option *build_long_options(const mgpu_program *program)
{
    size_t nextra = count_extras(program);
    struct option *all = calloc(COMMON_OPTIONS + nextra + 1, sizeof *all);

    if (all == NULL)
        return NULL;
    memcpy(all, common_options, sizeof common_options);
    for (size_t i = 0; i < nextra; i++) {
        const mgpu_extra_option *extra = &program->extra[i];
        int has_arg = extra->kind == MGPU_EXTRA_FLAG  ? no_argument
                      : extra->choices && extra->bare ? optional_argument
                                                      : required_argument;
        all[COMMON_OPTIONS + i] = (struct option){extra->name, has_arg, NULL, OPT_EXTRA + (int) i};
    }
    return all;
}

/* The long name of the option whose id is ID, or NULL. */
static const char *option_name(const struct option *longopts, int id)
{
    for (const struct option *o = longopts; o->name != NULL; o++) {
        if (o->val == id)
            return o->name;
    }
    return NULL;
}

/* ---------------------------------------------------------------- --help */

/* Width of the option column of --help. */
#define HELP_COLUMN 22
#define HELP_INDENT (2 + HELP_COLUMN + 1) /* where an option's description starts */

/* TEXT's words after the USED columns of the line begun, the line broken
 * before a word that would pass MGPU_HELP_WIDTH and the next begun with
 * INDENT blanks; ends the last line. */
static void wrap_words(FILE *out, const char *text, int used, int indent)
{
    int line_empty = 1; /* no word on this line yet */

    for (const char *word = text; *word != '\0';) {
        int blanks = (int) strspn(word, " ");
        word += blanks;
        int length = (int) strcspn(word, " \n");
        if (length == 0) {
            if (*word == '\n') { /* a line break of the text's own */
                fprintf(out, "\n%*s", indent, "");
                used = indent;
                line_empty = 1;
                word++;
            }
            continue;
        }
        if (!line_empty && used + 1 + length > MGPU_HELP_WIDTH) {
            fprintf(out, "\n%*s", indent, "");
            used = indent;
            line_empty = 1;
        }
        if (!line_empty) {
            fputc(' ', out);
            used++;
        }
        fwrite(word, 1, (size_t) length, out);
        used += length;
        line_empty = 0;
        word += length;
    }
    fputc('\n', out);
}

static void help_text(FILE *out, const char *text) { wrap_words(out, text, 0, 0); }

void mgpu_help_line(FILE *out, const char *option, const char *text)
{
    if (strlen(option) > HELP_COLUMN)
        fprintf(out, "  %s\n%*s", option, HELP_INDENT, "");
    else
        fprintf(out, "  %-*s ", HELP_COLUMN, option);
    wrap_words(out, text, HELP_INDENT, HELP_INDENT);
}

/* mgpu_help_line with a description made by printf. */
static void help_line(FILE *out, const char *option, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void help_line(FILE *out, const char *option, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    mgpu_help_line(out, option, text);
}

/* Every name of NAMES into BUF, as --help lists an option's values: a|b|c. */
static const char *choices(char *buf, size_t size, const char *const *names)
{
    mgpu_names_join(buf, size, names, MGPU_ALL_NAMES, "|");
    return buf;
}

static void print_extra_help(const mgpu_extra_option *extra, FILE *out)
{
    char names[256], option[sizeof names + 64];

    if (extra->kind == MGPU_EXTRA_FLAG) {
        snprintf(option, sizeof option, "--%s", extra->name);
        help_line(out, option, "%s", extra->help ? extra->help : "");
    } else if (extra->choices != NULL && extra->bare != NULL) {
        snprintf(option, sizeof option, "--%s[=%s]", extra->name,
                 choices(names, sizeof names, extra->choices));
        help_line(out, option, "%s (default %s; --%s alone: %s)", extra->help ? extra->help : "",
                  mgpu_name_at(extra->choices, (int) *extra->value), extra->name, extra->bare);
    } else if (extra->choices != NULL) {
        snprintf(option, sizeof option, "--%s=%s", extra->name,
                 choices(names, sizeof names, extra->choices));
        help_line(out, option, "%s (default %s)", extra->help ? extra->help : "",
                  mgpu_name_at(extra->choices, (int) *extra->value));
    } else {
        snprintf(option, sizeof option, "--%s=%s", extra->name,
                 extra->kind == MGPU_EXTRA_SIZE ? "SIZE" : "N");
        help_line(out, option, "%s, %lld to %lld (default %lld)", extra->help ? extra->help : "",
                  extra->min, extra->max, *extra->value);
    }
}

static void print_usage(const mgpu_program *program, FILE *out)
{
    unsigned exchanges = exchanges_built(program);
    char names[256];

    fprintf(out, "Usage: %s [OPTION]...\n", program->name);
    if (program->summary != NULL)
        help_text(out, program->summary);
    fprintf(out, "\nThe problem:\n");
    help_line(out, "--nx=N", "columns, 3 or more (default %d)", DEFAULT_GRID);
    help_line(out, "--ny=N", "rows, 3 or more (default %d); nx*ny at most 2^59", DEFAULT_GRID);
    help_line(out, "--steps=N", "stencil steps, 1 to %lld (default %d)", MAX_STEPS, DEFAULT_STEPS);
    help_line(out, "--kernel=NAME", "%s (default pattern2d)",
              choices(names, sizeof names, mgpu_kernel_names));
    help_line(out, "--seed=N", "seed of the initial field, 0 to 2^64-1 (default %d)", DEFAULT_SEED);
    fprintf(out, "\nHow it runs:\n");
    help_line(out, "--devices=N", "1 to %d, at most ny-2 (default: all; host backend: 2)",
              MGPU_MAX_DEVICES);
    help_line(out, "--backend=NAME", "%s (default auto: cuda if a GPU is usable)",
              choices(names, sizeof names, mgpu_backend_names));
    mgpu_names_join(names, sizeof names, mgpu_exchange_names, exchanges, "|");
    help_line(out, "--exchange=MODE", "%s (default auto)", names);
    help_line(out, "--verify=HOW", "%s (default auto)",
              choices(names, sizeof names, mgpu_verify_names));
    help_line(out, "--bind=HOW",
              "%s (default auto: each worker on the CPUs nearest its "
              "device; host backend: CPUs of its own)",
              choices(names, sizeof names, mgpu_bind_names));
    help_line(out, "--halo=K", "halo rows a side, exchanged every K steps, 1 to %d (default 1)",
              MGPU_HALO_MAX);
    help_line(out, "--time-block=T",
              "steps per pass over memory, 1 to %d, at most K; or auto "
              "(default)",
              MGPU_TIME_BLOCK_MAX);
    fprintf(out, "\nMeasuring:\n");
    help_line(out, "--repeat=N", "timed runs, median reported, 1 to %d (default %d)", MAX_RUNS,
              DEFAULT_REPEAT);
    help_line(out, "--warmup=N", "untimed runs first, 0 to %d (default %d)", MAX_RUNS,
              DEFAULT_WARMUP);
    help_line(out, "--baseline", "also time one device, for speedup and efficiency");
    help_line(out, "--format=NAME", "%s (default table)",
              choices(names, sizeof names, mgpu_format_names));
    help_line(out, "--no-header", "csv: leave out the header line");
    help_line(out, "--list-exchanges",
              "print the exchange modes %s implements, one a line, "
              "and exit",
              program->name);
    help_line(out, "--progress[=WHEN]",
              "%s: the run, step, rate and time left on stderr, redrawn in place (default "
              "auto: when stderr is a terminal; --progress alone: always; --no-progress: "
              "never)",
              choices(names, sizeof names, mgpu_progress_names));
    help_line(out, "-h, --help", "print this help and exit");
    help_line(out, "-V, --version", "print the version and exit");
    if (count_extras(program) > 0) {
        fprintf(out, "\nOptions of %s:\n", program->name);
        for (size_t i = 0; i < count_extras(program); i++)
            print_extra_help(&program->extra[i], out);
    }
    fprintf(out, "\nBandwidths count 8 bytes per interior cell per step "
                 "(one read and one write).\n");
    fprintf(out, "A run whose buffers (the devices' on the host backend, the result and\n"
                 "its reference) need more host memory than the process may take (what\n"
                 "the machine has available, what its cgroup's limit leaves) is refused\n"
                 "before anything is allocated, with exit status 1.\n");
    fprintf(out, "Exit status: 0 success, 1 run-time failure or failed verification,\n"
                 "2 usage error.\n");
    /* Last: help2man makes the rest of --help its ENVIRONMENT section. */
    fprintf(out, "\nEnvironment:\n");
    help_line(out, "MGPU_INJECT_FAULT=STEP:DEVICE",
              "make the worker of DEVICE fail at STEP (a test of the failure paths)");
    for (const char *const *e = program->environment; e && e[0]; e += 2)
        help_line(out, e[0], e[1]);
    help_line(out, "CUDA_VISIBLE_DEVICES", "the GPUs the CUDA runtime shows, and their order");
    help_line(out, "OMP_PROC_BIND, OMP_PLACES",
              "when set, OpenMP's placement of threads is kept, not --bind's");
    help_line(out, "OMP_NUM_THREADS",
              "host backend: the most threads a device's kernels take, never more "
              "than the CPUs (default: its share of the CPUs)");
    if (exchanges & MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_MPI))
        help_line(out, "MGPU_MPI_RANKS_PER_NODE=N",
                  "take every N ranks in turn as one node, as if on hosts of their own "
                  "(a test of the paths between nodes on one machine)");
    if (exchanges & MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_NCCL))
        help_line(out, "NCCL_NVLS_ENABLE",
                  "--exchange=nccl sets it to 0 where unset: NVLink "
                  "multicast stays off");
}

/* -------------------------------------------------------------- parsing */

static void set_defaults(mgpu_options *opt)
{
    *opt = (mgpu_options){
        .nx = DEFAULT_GRID,
        .ny = DEFAULT_GRID,
        .steps = DEFAULT_STEPS,
        .devices = 0,
        .backend = MGPU_BACKEND_AUTO,
        .kernel = MGPU_KERNEL_PATTERN2D,
        .exchange = MGPU_EXCHANGE_AUTO,
        .verify = MGPU_VERIFY_AUTO,
        .repeat = DEFAULT_REPEAT,
        .warmup = DEFAULT_WARMUP,
        .format = MGPU_FORMAT_TABLE,
        .seed = DEFAULT_SEED,
        .baseline = 0,
        .header = 1,
        .bind = MGPU_BIND_AUTO,
        .progress = MGPU_PROGRESS_AUTO,
        .halo = 1,
        .time_block = 0,
    };
}

static int apply_extra(const mgpu_program *program, const mgpu_extra_option *extra,
                       const char *text)
{
    int index = 0;
    int code;

    if (extra->kind == MGPU_EXTRA_FLAG) {
        *extra->value = 1;
        return PARSE_GO_ON;
    }
    if (extra->kind == MGPU_EXTRA_SIZE)
        return set_size(program, extra->name, text, extra->min, extra->max, extra->value);
    if (extra->choices == NULL)
        return set_integer(program, extra->name, text, extra->min, extra->max, extra->value);
    if (text == NULL && extra->bare != NULL)
        text = extra->bare;
    code = set_name(program, extra->name, text, extra->choices, &index);
    if (code == PARSE_GO_ON)
        *extra->value = index;
    return code;
}

/* An enum option: a name of NAMES into *FIELD. */
#define SET_ENUM(option, names, field, type)                         \
    do {                                                             \
        int index_ = 0;                                              \
        int code_ = set_name(program, option, text, names, &index_); \
        if (code_ == PARSE_GO_ON)                                    \
            (field) = (type) index_;                                 \
        return code_;                                                \
    } while (0)

/* Store option ID with value TEXT (NULL: none was given) in OPT. */
static int apply_option(mgpu_options *opt, const mgpu_program *program, int id, const char *text)
{
    switch (id) {
    case OPT_NX:
        return set_integer(program, "nx", text, MIN_GRID, max_grid_side(), &opt->nx);
    case OPT_NY:
        return set_integer(program, "ny", text, MIN_GRID, max_grid_side(), &opt->ny);
    case OPT_STEPS:
        return set_integer(program, "steps", text, 1, MAX_STEPS, &opt->steps);
    case OPT_DEVICES:
        return set_int(program, "devices", text, 1, MGPU_MAX_DEVICES, &opt->devices);
    case OPT_REPEAT:
        return set_int(program, "repeat", text, 1, MAX_RUNS, &opt->repeat);
    case OPT_WARMUP:
        return set_int(program, "warmup", text, 0, MAX_RUNS, &opt->warmup);
    case OPT_SEED:
        return set_seed(program, text, &opt->seed);
    case OPT_HALO:
        return set_int(program, "halo", text, 1, MGPU_HALO_MAX, &opt->halo);
    case OPT_TIME_BLOCK:
        return set_time_block(program, text, &opt->time_block);
    case OPT_BACKEND:
        SET_ENUM("backend", mgpu_backend_names, opt->backend, mgpu_backend);
    case OPT_KERNEL:
        SET_ENUM("kernel", mgpu_kernel_names, opt->kernel, mgpu_kernel);
    case OPT_VERIFY:
        SET_ENUM("verify", mgpu_verify_names, opt->verify, mgpu_verify);
    case OPT_FORMAT:
        SET_ENUM("format", mgpu_format_names, opt->format, mgpu_format);
    case OPT_BIND:
        SET_ENUM("bind", mgpu_bind_names, opt->bind, mgpu_bind);
    case OPT_EXCHANGE:
        return set_exchange(program, text, &opt->exchange);
    case OPT_BASELINE:
        opt->baseline = 1;
        return PARSE_GO_ON;
    case OPT_NO_HEADER:
        opt->header = 0;
        return PARSE_GO_ON;
    case OPT_PROGRESS:
        if (text == NULL)
            text = mgpu_progress_names[MGPU_PROGRESS_ALWAYS];
        SET_ENUM("progress", mgpu_progress_names, opt->progress, mgpu_progress_when);
    case OPT_NO_PROGRESS:
        opt->progress = MGPU_PROGRESS_NEVER;
        return PARSE_GO_ON;
    case OPT_HELP:
        print_usage(program, stdout);
        return PARSE_EXIT_OK;
    case OPT_VERSION:
        printf("%s (mgpu) %s\n", program->name, MGPU_VERSION);
        return PARSE_EXIT_OK;
    case OPT_LIST_EXCHANGES:
        /* Listed once the rest of the command line is known good
         * (parse_arguments), so that a bad option after it is still an
         * error. */
        return PARSE_LIST_EXCHANGES;
    default:
        return apply_extra(program, &program->extra[id - OPT_EXTRA], text);
    }
}

/* getopt_long returned '?': an unknown option, or a value given to an
 * option that takes none.  ARG is the element of argv it was reading. */
static int bad_option(const mgpu_program *program, const struct option *longopts, const char *arg)
{
    const char *name = optopt != 0 ? option_name(longopts, optopt) : NULL;

    if (name != NULL)
        mgpu_error(program, "--%s: takes no value (see --help)", name);
    else if (optopt != 0)
        mgpu_error(program, "unknown option '-%c' (see --help)", optopt);
    else
        mgpu_error(program, "unknown option '%s' (see --help)", arg);
    return PARSE_EXIT_USAGE;
}

/* The choices of option ID when it may stand alone (--progress, and an
 * extra option with a BARE), else NULL. */
static const char *const *bare_choices(const mgpu_program *program, int id)
{
    const mgpu_extra_option *extra = id >= OPT_EXTRA ? &program->extra[id - OPT_EXTRA] : NULL;

    if (id == OPT_PROGRESS)
        return mgpu_progress_names;
    return extra != NULL && extra->bare != NULL ? extra->choices : NULL;
}

/* An option that may stand alone came without "=VALUE": its value is the
 * next word when that is one of its choices, as it was when the option
 * always took one, else none (its bare meaning). */
static const char *next_choice(const mgpu_program *program, int id, int argc, char **argv)
{
    const char *const *choices = bare_choices(program, id);

    if (choices == NULL || optind >= argc || mgpu_name_find(choices, argv[optind]) < 0)
        return NULL;
    return argv[optind++];
}

/* Walk argv with getopt_long, storing each option; stop at the first
 * error or at --help or --version. */
static int parse_arguments(mgpu_options *opt, const mgpu_program *program,
                           const struct option *longopts, int argc, char **argv)
{
    int id, list_exchanges = 0;

    /* getopt keeps its position in globals.  0 (rather than 1) makes glibc
     * and musl start over completely, so that a program or a test may
     * parse more than one command line.  Our own messages replace
     * getopt's ("+": stop at the first operand, never reorder argv;
     * ":": report a missing value as ':'). */
    optind = 0;
    opterr = 0;
    while ((id = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
        int code;
        if (id == '?')
            code = bad_option(program, longopts, argv[optind - 1]);
        else if (id == ':')
            code = apply_option(opt, program, optopt, NULL);
        else if (optarg == NULL)
            code = apply_option(opt, program, id, next_choice(program, id, argc, argv));
        else
            code = apply_option(opt, program, id, optarg);
        if (code == PARSE_LIST_EXCHANGES) {
            list_exchanges = 1;
            code = PARSE_GO_ON;
        }
        if (code != PARSE_GO_ON)
            return code;
    }
    if (optind < argc) {
        mgpu_error(program, "unexpected argument '%s' (options only, see --help)", argv[optind]);
        return PARSE_EXIT_USAGE;
    }
    if (list_exchanges) {
        /* For programs that run this one (mgpu-compare): no auto, which
         * resolves to one of these. */
        unsigned modes = exchanges_built(program);
        for (int mode = 0; mgpu_exchange_names[mode] != NULL; mode++)
            if (mode != MGPU_EXCHANGE_AUTO && (modes & MGPU_EXCHANGE_BIT(mode)))
                printf("%s\n", mgpu_exchange_names[mode]);
        return PARSE_EXIT_OK;
    }
    return PARSE_GO_ON;
}

/* Rules between options, checked once all are known. */
static int check_combination(const mgpu_options *opt, const mgpu_program *program)
{
    long long interior_rows = opt->ny - 2;

    if (opt->nx > max_grid_cells() / opt->ny) {
        mgpu_error(program,
                   "--nx, --ny: a %lld x %lld grid is too large (accepted: nx*ny up to %lld "
                   "cells, so that its two float buffers stay within 2^62 bytes)",
                   opt->nx, opt->ny, max_grid_cells());
        return PARSE_EXIT_USAGE;
    }
    /* Each device needs one interior row at least (doc/design.md section 2). */
    if (opt->devices > interior_rows) {
        mgpu_error(program,
                   "--devices: '%d' is more than the %lld interior row%s of --ny=%lld "
                   "(accepted: an integer from 1 to %lld)",
                   opt->devices, interior_rows, interior_rows == 1 ? "" : "s", opt->ny,
                   interior_rows);
        return PARSE_EXIT_USAGE;
    }
    if (!program->deep_halo && (opt->halo > 1 || opt->time_block > 1)) {
        mgpu_error(program,
                   "--%s: %s exchanges one halo row every step (accepted: --halo=1, "
                   "--time-block=1 or auto)",
                   opt->halo > 1 ? "halo" : "time-block", program->name);
        return PARSE_EXIT_USAGE;
    }
    /* --help says T is at most K: a larger T asked for is refused, not run
     * as K without a word. */
    if (opt->time_block > opt->halo) {
        mgpu_error(program,
                   "--time-block: '%d' is more than --halo=%d (accepted: auto or an integer "
                   "from 1 to K, the halo depth)",
                   opt->time_block, opt->halo);
        return PARSE_EXIT_USAGE;
    }
    if (mgpu_halo_check(opt->halo, opt->ny, opt->devices > 0 ? opt->devices : 1) != MGPU_OK) {
        mgpu_error(program, "%s", mgpu_last_error());
        return PARSE_EXIT_USAGE;
    }
    return PARSE_GO_ON;
}

/* Every part holds --halo rows of its own to send (doc/design.md section 2). */
mgpu_status mgpu_halo_check(int halo, long long ny, int devices)
{
    long long interior_rows = ny - 2, thinnest = interior_rows / devices;
    if (halo <= thinnest)
        return MGPU_OK;
    return mgpu_error_set(MGPU_ERR_USAGE,
                          "--halo: '%d' is more than the %lld row%s of the thinnest slab (%lld "
                          "interior rows on %d device%s; accepted: an integer from 1 to %lld)",
                          halo, thinnest, thinnest == 1 ? "" : "s", interior_rows, devices,
                          devices > 1 ? "s" : "", thinnest);
}

int mgpu_options_parse(mgpu_options *opt, const mgpu_program *program, int argc, char **argv)
{
    struct option *longopts;
    int code;

    set_defaults(opt);
    longopts = build_long_options(program);
    if (longopts == NULL) {
        mgpu_error(program, "out of memory parsing the command line");
        return PARSE_EXIT_FAILURE;
    }
    code = parse_arguments(opt, program, longopts, argc, argv);
    free(longopts);
    if (code == PARSE_GO_ON)
        code = check_combination(opt, program);
    return code;
}
