/* compare.c - mgpu-compare: every built strategy program side by side.
 *
 * It finds the strategy programs next to itself (installed) or in the build
 * tree (bench/../single_thread/mgpu-single, ...), asks each for its
 * exchange modes (the --exchange line of its --help), and runs each on 1
 * device and on every larger device count with each mode, as a child
 * process whose JSON record it reads.  The table puts them side by side,
 * with speedup and parallel efficiency against the program's own 1-device
 * run of this comparison, never a number from another day.  results.csv,
 * results.json and the plots go into the output folder; --from prints and
 * plots a finished comparison again without running anything.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "compare.h"
#include "mgpu.h"

/* The strategy programs, in the order of the table: name for
 * --strategies, build-tree folder, program. */
static const struct strategy {
    const char *name, *folder, *program;
} strategies[] = {
    {"single", "single_thread", "mgpu-single"}, {"fork", "fork", "mgpu-fork"},
    {"pthread", "pthread", "mgpu-pthread"},     {"openmp", "openmp", "mgpu-openmp"},
    {"streams", "streams", "mgpu-streams"},     {"mpi", "mpi", "mgpu-mpi"},
};
#define NSTRATEGIES ((int) (sizeof strategies / sizeof strategies[0]))

/* The names of the options' values, NULL-ended. */
static const char *const exchange_names[] = {"peer",   "peer-async", "staged", "direct",
                                             "mapped", "ipc",        "mpi",    NULL};
#define NEXCHANGES ((int) (sizeof exchange_names / sizeof exchange_names[0]) - 1)
static const char *const strategy_names[] = {"single",  "fork", "pthread", "openmp",
                                             "streams", "mpi",  NULL};
static const char *const backend_names[] = {"auto", "cuda", "host", NULL};
static const char *const kernel_names[] = {"pattern2d", "jacobi", NULL};
static const char *const verify_names[] = {"auto", "cpu", "device", "none", NULL};

typedef struct options {
    int backend;             /* an mgpu_backend: the index of backend_names */
    long long nx, ny, steps; /* 0: the backend's default */
    int kernel, verify;
    long long repeat, warmup, timeout;
    unsigned strategies;          /* bit per strategies[]; 0: all */
    unsigned exchanges;           /* bit per exchange_names[]; 0: each program's own */
    int counts[MGPU_MAX_DEVICES]; /* device counts; none: the default */
    int ncounts;
    const char *output;
    const char *from;
    char mpirun[512];
} options;

/* Usage errors name the program, as every mgpu program's do. */
#define usage(...) bench_usage(COMPARE_NAME, __VA_ARGS__)

static int parse_integer(const char *option, const char *text, long long min, long long max,
                         long long *value)
{
    return bench_parse_integer(COMPARE_NAME, option, text, min, max, value);
}

static int parse_choice(const char *option, const char *text, const char *const *names, int *index)
{
    return bench_parse_choice(COMPARE_NAME, option, text, names, index);
}

/* A comma-separated list of names into a bit set. */
static int parse_set(const char *option, const char *text, const char *const *names, unsigned *set)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", text);
    *set = 0;
    for (char *save = NULL, *item = strtok_r(copy, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        int index = 0;
        int code = parse_choice(option, item, names, &index);
        if (code >= 0)
            return code;
        *set |= 1u << index;
    }
    if (*set == 0)
        return usage("--%s: an empty list", option);
    return -1;
}

/* --devices=1,2,4 or 1-4 (and both: 1-2,8): sorted, each once. */
static int parse_counts(const char *text, options *opt)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", text);
    int seen[MGPU_MAX_DEVICES + 1] = {0};
    for (char *save = NULL, *item = strtok_r(copy, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        long long lo, hi;
        char *dash = strchr(item, '-');
        if (dash)
            *dash = '\0';
        int code = parse_integer("devices", item, 1, MGPU_MAX_DEVICES, &lo);
        if (code < 0)
            code = dash ? parse_integer("devices", dash + 1, lo, MGPU_MAX_DEVICES, &hi)
                        : (hi = lo, -1);
        if (code >= 0)
            return code;
        for (long long d = lo; d <= hi; d++)
            seen[d] = 1;
    }
    opt->ncounts = 0;
    for (int d = 1; d <= MGPU_MAX_DEVICES; d++) {
        if (seen[d])
            opt->counts[opt->ncounts++] = d;
    }
    if (opt->ncounts == 0)
        return usage("--devices: an empty list (accepted: counts and ranges, as 1,2,4 or 1-4)");
    return -1;
}

static void print_help(void)
{
    printf("Usage: %s [OPTION]...\n"
           "Run every built strategy program on 1 and more devices with each of its\n"
           "exchange modes and print them side by side; write results.csv, results.json\n"
           "and, with gnuplot, scaling and exchange-mode plots (PNG and SVG).\n\n",
           COMPARE_NAME);
    bench_help_line("--backend=NAME", "auto|cuda|host (default auto: cuda if a GPU is usable)");
    bench_help_line("--nx=N, --ny=N", "the grid (default 16384 x 16384 on GPUs, 512 x 512 on "
                                      "the host backend)");
    bench_help_line("--steps=N", "steps per run (default 200 on GPUs, 20 on the host backend)");
    bench_help_line("--kernel=NAME", "pattern2d|jacobi (default pattern2d)");
    bench_help_line("--repeat=N", "timed runs each, median reported (default 3)");
    bench_help_line("--warmup=N", "untimed runs first (default 1)");
    bench_help_line("--verify=HOW", "auto|cpu|device|none (default auto)");
    bench_help_line("--strategies=LIST", "some of single,fork,pthread,openmp,streams,mpi "
                                         "(default: every one built)");
    bench_help_line("--devices=LIST", "device counts, as 1,2,4 or 1-4 (default: 1, 2, 4, ... and "
                                      "all; host backend: 1,2)");
    bench_help_line("--exchanges=LIST", "only these exchange modes, of peer,peer-async,staged,"
                                        "direct,mapped,ipc,mpi (default: each program's own, "
                                        "from its --help)");
    bench_help_line("--output=DIR", "where results and plots go (default: .)");
    bench_help_line("--from=FILE", "print and plot a results.json again, running nothing");
    bench_help_line("--mpirun=COMMAND", "how mgpu-mpi is started, -np N is added (default: "
                                        "$MPIRUN, else mpirun; as root, Open MPI is allowed "
                                        "to run)");
    bench_help_line("--timeout=SECONDS", "stop a run that takes longer (default 600)");
    bench_help_line("-h, --help", "print this help and exit");
    bench_help_line("-V, --version", "print the version and exit");
    printf("\nEach program runs on one device with --exchange=auto, and on more devices\n"
           "with each of its modes; speedup and efficiency are against that one-device\n"
           "run, made in the same comparison.  Progress goes to stderr, the table to\n"
           "stdout.  Exit status: 0 when every run passed or was skipped (a mode the\n"
           "backend cannot do), 1 when a run failed, 2 usage error.\n");
}

enum {
    OPT_BACKEND = 256,
    OPT_NX,
    OPT_NY,
    OPT_STEPS,
    OPT_KERNEL,
    OPT_REPEAT,
    OPT_WARMUP,
    OPT_VERIFY,
    OPT_STRATEGIES,
    OPT_DEVICES,
    OPT_EXCHANGES,
    OPT_OUTPUT,
    OPT_FROM,
    OPT_MPIRUN,
    OPT_TIMEOUT
};

static const struct option long_options[] = {
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"nx", required_argument, NULL, OPT_NX},
    {"ny", required_argument, NULL, OPT_NY},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"verify", required_argument, NULL, OPT_VERIFY},
    {"strategies", required_argument, NULL, OPT_STRATEGIES},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"exchanges", required_argument, NULL, OPT_EXCHANGES},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"from", required_argument, NULL, OPT_FROM},
    {"mpirun", required_argument, NULL, OPT_MPIRUN},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static int apply(options *opt, int id, const char *text)
{
    switch (id) {
    case OPT_BACKEND:
        return parse_choice("backend", text, backend_names, &opt->backend);
    case OPT_NX:
        return parse_integer("nx", text, CMP_MIN_GRID, CMP_MAX_GRID, &opt->nx);
    case OPT_NY:
        return parse_integer("ny", text, CMP_MIN_GRID, CMP_MAX_GRID, &opt->ny);
    case OPT_STEPS:
        return parse_integer("steps", text, 1, CMP_MAX_STEPS, &opt->steps);
    case OPT_KERNEL:
        return parse_choice("kernel", text, kernel_names, &opt->kernel);
    case OPT_REPEAT:
        return parse_integer("repeat", text, 1, CMP_MAX_RUNS, &opt->repeat);
    case OPT_WARMUP:
        return parse_integer("warmup", text, 0, CMP_MAX_RUNS, &opt->warmup);
    case OPT_VERIFY:
        return parse_choice("verify", text, verify_names, &opt->verify);
    case OPT_STRATEGIES:
        return parse_set("strategies", text, strategy_names, &opt->strategies);
    case OPT_DEVICES:
        return parse_counts(text, opt);
    case OPT_EXCHANGES:
        return parse_set("exchanges", text, exchange_names, &opt->exchanges);
    case OPT_OUTPUT:
        if (!*text)
            return usage("--output: an empty folder name");
        opt->output = text;
        return -1;
    case OPT_FROM:
        opt->from = text;
        return -1;
    case OPT_MPIRUN:
        if (strspn(text, " \t") == strlen(text))
            return usage("--mpirun: an empty command");
        snprintf(opt->mpirun, sizeof opt->mpirun, "%s", text);
        return -1;
    case OPT_TIMEOUT:
        return parse_integer("timeout", text, 1, 86400, &opt->timeout);
    }
    return usage("unknown option (see --help)");
}

/* -1 to go on, or the exit code. */
static int parse_options(options *opt, int argc, char **argv)
{
    const char *mpirun = getenv("MPIRUN");
    *opt = (options){.repeat = 3, .warmup = 1, .timeout = 600, .output = "."};
    snprintf(opt->mpirun, sizeof opt->mpirun, "%s", mpirun && *mpirun ? mpirun : "mpirun");
    int id, run_options = 0;
    optind = 0;
    opterr = 0;
    while ((id = getopt_long(argc, argv, "+:hV", long_options, NULL)) != -1) {
        if (id == 'h') {
            print_help();
            return 0;
        }
        if (id == 'V') {
            printf("%s (mgpu) %s\n", COMPARE_NAME, MGPU_VERSION);
            return 0;
        }
        if (id == '?')
            return usage("unknown option '%s' (see --help)", argv[optind - 1]);
        if (id == ':')
            return usage("%s: needs a value (see --help)", argv[optind - 1]);
        int code = apply(opt, id, optarg);
        if (code >= 0)
            return code;
        run_options += id != OPT_FROM && id != OPT_OUTPUT;
    }
    if (optind < argc)
        return usage("unexpected argument '%s' (options only, see --help)", argv[optind]);
    if (opt->from && run_options)
        return usage("--from: prints a finished comparison; it takes no options of a new "
                     "run (only --output, for the plots)");
    return -1;
}

/* ------------------------------------------------------------ discovery */

/* The folder this program lives in. */
static void own_folder(const char *argv0, char *dir, size_t size)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0)
        self[n] = '\0';
    else
        snprintf(self, sizeof self, "%s", argv0);
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(self, sizeof self, ".");
    snprintf(dir, size, "%s", self);
}

/* Installed programs sit side by side; in the build tree each strategy
 * has its folder beside bench/. */
static int find_program(const char *dir, const struct strategy *s, char *path, size_t size)
{
    if ((size_t) snprintf(path, size, "%s/%s", dir, s->program) < size && access(path, X_OK) == 0)
        return 1;
    return (size_t) snprintf(path, size, "%s/../%s/%s", dir, s->folder, s->program) < size &&
           access(path, X_OK) == 0;
}

/* Split COMMAND at blanks into ARGV (at most MAX-1 words, NULL-ended). */
static int split_words(char *command, char **argv, int max)
{
    int n = 0;
    for (char *save = NULL, *w = strtok_r(command, " \t", &save); w && n < max - 1;
         w = strtok_r(NULL, " \t", &save))
        argv[n++] = w;
    argv[n] = NULL;
    return n;
}

typedef struct program {
    const struct strategy *s;
    char path[PATH_MAX];
    unsigned modes; /* bit per exchange_names[] */
} program;

/* The words of a command line, and room for the text they point into. */
typedef struct command {
    char *argv[96];
    int argc;
    char mpirun[512];
    char np[16];
    char args[12][64];
} command;

/* PROG's command: itself, or (mgpu-mpi) the mpirun command and -np NP
 * before it.  More words follow with add(). */
static void command_of(command *cmd, const options *opt, const program *prog, int np)
{
    cmd->argc = 0;
    if (strcmp(prog->s->name, "mpi") == 0) {
        snprintf(cmd->mpirun, sizeof cmd->mpirun, "%s", opt->mpirun);
        cmd->argc = split_words(cmd->mpirun, cmd->argv, 64);
        snprintf(cmd->np, sizeof cmd->np, "%d", np);
        cmd->argv[cmd->argc++] = "-np";
        cmd->argv[cmd->argc++] = cmd->np;
    }
    cmd->argv[cmd->argc++] = (char *) prog->path;
    cmd->argv[cmd->argc] = NULL;
}

static void add(command *cmd, const char *word)
{
    if (cmd->argc < (int) (sizeof cmd->argv / sizeof cmd->argv[0]) - 1) {
        cmd->argv[cmd->argc++] = (char *) word;
        cmd->argv[cmd->argc] = NULL;
    }
}

/* Add --NAME=VALUE, kept in the command's own text. */
static void add_option(command *cmd, int *used, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd->args[*used], sizeof cmd->args[*used], fmt, ap);
    va_end(ap);
    add(cmd, cmd->args[(*used)++]);
}

/* The exchange modes PROG lists in its --help ("--exchange=MODE  a|b|c
 * (default auto)"), less auto. */
static int read_modes(const options *opt, program *prog, char *error, size_t size)
{
    static command cmd;
    command_of(&cmd, opt, prog, 1);
    add(&cmd, "--help");
    cmp_output out;
    if (cmp_spawn(cmd.argv, 60.0, &out, error, size) != 0) {
        cmp_output_free(&out);
        return -1;
    }
    char *line = out.exit_code == 0 ? strstr(out.out, "--exchange=MODE") : NULL;
    prog->modes = 0;
    if (line) {
        line += strlen("--exchange=MODE");
        line += strspn(line, " ");
        size_t len = strcspn(line, " \n");
        char list[256];
        snprintf(list, sizeof list, "%.*s", (int) len, line);
        for (char *save = NULL, *m = strtok_r(list, "|", &save); m;
             m = strtok_r(NULL, "|", &save)) {
            for (int e = 0; e < NEXCHANGES; e++) {
                if (strcmp(m, exchange_names[e]) == 0)
                    prog->modes |= 1u << e;
            }
        }
    }
    if (!prog->modes)
        snprintf(error, size, "%s --help names no exchange mode (exit %d): %.200s", prog->path,
                 out.exit_code, out.err);
    cmp_output_free(&out);
    return prog->modes ? 0 : -1;
}

/* ---------------------------------------------------------------- running */

typedef struct plan {
    const options *opt;
    const char *backend;
    long long nx, ny, steps;
    int total, done;
    int failures;
} plan;

/* The last line of TEXT that starts with '{': the record. */
static const char *last_record(const char *text)
{
    const char *found = NULL;
    for (const char *line = text; line && *line;) {
        if (*line == '{')
            found = line;
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return found;
}

/* The line of TEXT (a run's stderr) that says why it failed: the last one
 * that starts with "NAME:" (mgpu_error's lines), else the last that has
 * more than dashes and blanks.  mpirun ends its stderr with a banner of
 * dashes after the rank's own error line. */
static void reason_line(const char *text, const char *name, char *out, size_t size)
{
    size_t name_len = strlen(name);
    const char *own = NULL, *other = NULL;
    size_t own_len = 0, other_len = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t) (end - line) : strlen(line);
        while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\r'))
            len--;
        if (len > name_len && strncmp(line, name, name_len) == 0 && line[name_len] == ':') {
            own = line;
            own_len = len;
        } else if (strspn(line, "- \t") < len) {
            other = line;
            other_len = len;
        }
        line = end ? end + 1 : line + strlen(line);
    }
    const char *line = own ? own : other;
    size_t len = own ? own_len : other_len;
    /* A line too long for the row ends in "...", never cut without a sign. */
    if (len >= size)
        snprintf(out, size, "%.*s...", (int) size - 4, line);
    else
        snprintf(out, size, "%.*s", (int) len, line ? line : "");
    cmp_plain_text(out);
}

static void run_one(plan *pl, const program *prog, int devices, const char *exchange, cmp_row *row)
{
    const options *opt = pl->opt;
    static command cmd;
    int used = 0;
    command_of(&cmd, opt, prog, devices);
    add_option(&cmd, &used, "--backend=%s", pl->backend);
    add_option(&cmd, &used, "--nx=%lld", pl->nx);
    add_option(&cmd, &used, "--ny=%lld", pl->ny);
    add_option(&cmd, &used, "--steps=%lld", pl->steps);
    add_option(&cmd, &used, "--devices=%d", devices);
    add_option(&cmd, &used, "--exchange=%s", exchange);
    add_option(&cmd, &used, "--kernel=%s", kernel_names[opt->kernel]);
    add_option(&cmd, &used, "--repeat=%lld", opt->repeat);
    add_option(&cmd, &used, "--warmup=%lld", opt->warmup);
    add_option(&cmd, &used, "--verify=%s", verify_names[opt->verify]);
    add(&cmd, "--format=json");

    snprintf(row->program, sizeof row->program, "%s", prog->s->program);
    snprintf(row->strategy, sizeof row->strategy, "%s", prog->s->name);
    snprintf(row->exchange, sizeof row->exchange, "%s", exchange);
    snprintf(row->backend, sizeof row->backend, "%s", pl->backend);
    snprintf(row->kernel, sizeof row->kernel, "%s", kernel_names[opt->kernel]);
    row->devices = devices;
    row->nx = pl->nx;
    row->ny = pl->ny;
    row->steps = pl->steps;
    row->repeats = (int) opt->repeat;

    fprintf(stderr, "%s: [%*d/%d] %s, %d device%s, %s ... ", COMPARE_NAME, pl->total >= 10 ? 2 : 1,
            ++pl->done, pl->total, prog->s->program, devices, devices == 1 ? "" : "s", exchange);
    fflush(stderr);
    cmp_output out;
    char error[256];
    if (cmp_spawn(cmd.argv, (double) opt->timeout, &out, error, sizeof error) != 0) {
        row->status = RUN_FAILED;
        snprintf(row->reason, sizeof row->reason, "%s", error);
        cmp_plain_text(row->reason);
    } else {
        const char *record = last_record(out.out);
        cmp_json_object object;
        char why[200] = "";
        /* Into a copy: a record that breaks a rule leaves the row as asked. */
        cmp_row checked = *row;
        int parsed = record && cmp_json_parse_object(&record, &object, why, sizeof why) == 0 &&
                     cmp_row_from_object(&checked, &object, 0, why, sizeof why) == 0;
        if (parsed)
            *row = checked;
        reason_line(out.err, prog->s->program, row->reason, sizeof row->reason);
        if (out.exit_code == 0 && parsed && row->verified != 0) {
            row->status = RUN_OK;
            row->reason[0] = '\0';
        } else if (out.exit_code == 2) {
            row->status = RUN_SKIPPED; /* a usage error: this mode or count is not for here */
        } else {
            row->status = RUN_FAILED;
            if (out.timed_out)
                snprintf(row->reason, sizeof row->reason, "stopped after %lld s (--timeout)",
                         opt->timeout);
            else if (out.signal)
                snprintf(row->reason, sizeof row->reason, "killed by signal %d", out.signal);
            else if (out.exit_code == 0)
                snprintf(row->reason, sizeof row->reason, "its record: %s",
                         record ? why : "no JSON line on stdout");
            else if (!row->reason[0])
                snprintf(row->reason, sizeof row->reason, "exit %d", out.exit_code);
        }
        if (row->status == RUN_OK)
            fprintf(stderr, "%.1f us/step, %s (%.1f s)\n", row->us_per_step,
                    row->verified > 0 ? "verified" : "not verified", out.seconds);
        else
            fprintf(stderr, "%s: %s\n", cmp_status_name(row->status), row->reason);
    }
    cmp_output_free(&out);
    pl->failures += row->status == RUN_FAILED;
}

/* The device counts to run: the ones asked for, or 1, 2, 4, ... and all. */
static int device_counts(const options *opt, int available, int *counts)
{
    if (opt->ncounts) {
        memcpy(counts, opt->counts, (size_t) opt->ncounts * sizeof *counts);
        return opt->ncounts;
    }
    int n = 0;
    for (int d = 1; d < available; d *= 2)
        counts[n++] = d;
    counts[n++] = available;
    return n;
}

static int count_modes(unsigned modes)
{
    int n = 0;
    for (int e = 0; e < NEXCHANGES; e++)
        n += (modes >> e) & 1u;
    return n;
}

static int compare(const options *opt, const char *argv0, cmp_rows *rows)
{
    /* The backend: asked of a child process, so that no CUDA context is
     * made here and none is held while the programs run. */
    int gpus = 0;
    if (opt->backend != MGPU_BACKEND_HOST && mgpu_cuda_device_count_nofork(&gpus) != MGPU_OK)
        gpus = 0;
    if (opt->backend == MGPU_BACKEND_CUDA && gpus == 0) {
        fprintf(stderr, "%s: --backend=cuda: %s\n", COMPARE_NAME, mgpu_last_error());
        return 1;
    }
    int cuda = opt->backend != MGPU_BACKEND_HOST && gpus > 0;
    int available = cuda ? gpus : 2;
    plan pl = {.opt = opt, .backend = cuda ? "cuda" : "host"};
    pl.nx = opt->nx ? opt->nx : cuda ? 16384 : 512;
    pl.ny = opt->ny ? opt->ny : cuda ? 16384 : 512;
    pl.steps = opt->steps ? opt->steps : cuda ? 200 : 20;
    int counts[MGPU_MAX_DEVICES + 1];
    int ncounts = device_counts(opt, available, counts);
    if (cuda && counts[ncounts - 1] > gpus)
        return usage("--devices: %d asked, but %d CUDA device%s exist", counts[ncounts - 1], gpus,
                     gpus == 1 ? "" : "s");

    /* Open MPI's mpirun refuses to run as root unless told so; benchmarks
     * in containers run as root.  Nothing but Open MPI reads these. */
    if (geteuid() == 0) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    }
    char dir[PATH_MAX];
    own_folder(argv0, dir, sizeof dir);
    program progs[NSTRATEGIES];
    int nprogs = 0;
    for (int i = 0; i < NSTRATEGIES; i++) {
        if (opt->strategies && !(opt->strategies & (1u << i)))
            continue;
        program *p = &progs[nprogs];
        p->s = &strategies[i];
        if (!find_program(dir, p->s, p->path, sizeof p->path)) {
            fprintf(stderr, "%s: %s is not built: skipped\n", COMPARE_NAME, p->s->program);
            continue;
        }
        char error[512];
        if (read_modes(opt, p, error, sizeof error) != 0) {
            fprintf(stderr, "%s: %s: skipped\n", COMPARE_NAME, error);
            continue;
        }
        if (opt->exchanges)
            p->modes &= opt->exchanges;
        if (p->modes)
            nprogs++;
    }
    if (nprogs == 0) {
        fprintf(stderr,
                "%s: no strategy program to run (looked next to %s and in the build "
                "tree around it)\n",
                COMPARE_NAME, dir);
        return 1;
    }
    for (int p = 0; p < nprogs; p++) {
        for (int c = 0; c < ncounts; c++)
            pl.total += counts[c] == 1 ? 1 : count_modes(progs[p].modes);
    }
    fprintf(stderr, "%s: %s backend, %s %lld x %lld, %lld steps: %d runs\n", COMPARE_NAME,
            pl.backend, kernel_names[opt->kernel], pl.nx, pl.ny, pl.steps, pl.total);
    for (int p = 0; p < nprogs && !cmp_interrupted(); p++) {
        for (int c = 0; c < ncounts && !cmp_interrupted(); c++) {
            for (int e = 0; e < NEXCHANGES && !cmp_interrupted(); e++) {
                /* One device exchanges with nobody: one run, its mode auto. */
                if (counts[c] == 1 ? e > 0 : !(progs[p].modes & (1u << e)))
                    continue;
                cmp_row *row = cmp_rows_add(rows);
                if (!row) {
                    fprintf(stderr, "%s: out of memory\n", COMPARE_NAME);
                    return 1;
                }
                run_one(&pl, &progs[p], counts[c], counts[c] == 1 ? "auto" : exchange_names[e],
                        row);
            }
        }
    }
    if (cmp_interrupted()) {
        fprintf(stderr, "%s: interrupted\n", COMPARE_NAME);
        return 1;
    }
    return pl.failures ? 1 : 0;
}

/* ------------------------------------------------------------------ main */

static int make_folder(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST)
        return 0;
    fprintf(stderr, "%s: --output: cannot make %s: %s\n", COMPARE_NAME, dir, strerror(errno));
    return -1;
}

/* The folder of FILE, for the plots of --from. */
static void folder_of(const char *file, char *dir, size_t size)
{
    const char *slash = strrchr(file, '/');
    if (slash)
        snprintf(dir, size, "%.*s", (int) (slash - file), file);
    else
        snprintf(dir, size, ".");
}

int main(int argc, char **argv)
{
    options opt;
    int code = parse_options(&opt, argc, argv);
    if (code >= 0)
        return code;
    cmp_catch_signals();
    cmp_rows rows = {0};
    char path[PATH_MAX + 32], dir[PATH_MAX];
    int given_output = strcmp(opt.output, ".") != 0;
    if (opt.from) {
        char error[512];
        if (cmp_read_json(opt.from, &rows, error, sizeof error) != 0) {
            fprintf(stderr, "%s: --from: %s\n", COMPARE_NAME, error);
            cmp_rows_free(&rows);
            return 2;
        }
        if (given_output)
            snprintf(dir, sizeof dir, "%s", opt.output);
        else
            folder_of(opt.from, dir, sizeof dir);
        code = 0;
        for (int i = 0; i < rows.count; i++)
            code |= rows.row[i].status == RUN_FAILED;
    } else {
        snprintf(dir, sizeof dir, "%s", opt.output);
        if (make_folder(dir) != 0)
            return 1;
        code = compare(&opt, argv[0], &rows);
        if (code == 2) {
            cmp_rows_free(&rows);
            return 2;
        }
    }
    cmp_derive(&rows);
    cmp_print_table(&rows, stdout);
    fflush(stdout);
    if (rows.count > 0) {
        if (given_output || !opt.from)
            make_folder(dir);
        if (!opt.from) {
            snprintf(path, sizeof path, "%s/results.csv", dir);
            code |= cmp_write_csv(&rows, path) != 0;
            snprintf(path, sizeof path, "%s/results.json", dir);
            code |= cmp_write_json(&rows, path) != 0;
            fprintf(stderr, "%s: results: %s/results.csv, %s/results.json\n", COMPARE_NAME, dir,
                    dir);
        }
        cmp_plot(&rows, dir);
    }
    cmp_rows_free(&rows);
    return code ? 1 : 0;
}
