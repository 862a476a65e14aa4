/* compare-options.c - mgpu-compare's command line: what it runs (the
 * strategy programs, the device counts, the exchange modes, the grids and
 * halo depths), how long a run may take, where the results go, how
 * mgpu-mpi's ranks are started (--launcher, --mpirun, $MPIRUN), or the
 * results it prints again (--from).  A bad value is one line naming the
 * option and what it accepts, exit 2, before anything runs. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "compare.h"
#include "mgpu.h"
#include "mgpu/harness.h"

/* In the order of the table.  The other options' values are the
 * library's (mgpu_backend_names, mgpu_exchange_names, ...). */
const cmp_strategy cmp_strategies[] = {
    {.name = "single", .folder = "single_thread", .program = "mgpu-single"},
    {.name = "fork", .folder = "fork", .program = "mgpu-fork"},
    {.name = "pthread", .folder = "pthread", .program = "mgpu-pthread"},
    {.name = "openmp", .folder = "openmp", .program = "mgpu-openmp"},
    {.name = "streams", .folder = "streams", .program = "mgpu-streams"},
    {.name = "mpi", .folder = "mpi", .program = "mgpu-mpi"},
    {.name = "persistent", .folder = "persistent", .program = "mgpu-persistent"},
};
_Static_assert(sizeof cmp_strategies / sizeof cmp_strategies[0] == CMP_NSTRATEGIES,
               "CMP_NSTRATEGIES counts cmp_strategies");

/* Their names, as --strategies takes them (NULL-ended). */
static const char *const strategy_names[] = {"single",  "fork", "pthread",    "openmp",
                                             "streams", "mpi",  "persistent", NULL};
_Static_assert(sizeof strategy_names / sizeof strategy_names[0] == CMP_NSTRATEGIES + 1,
               "a name for each strategy");

static int parse_integer(const char *option, const char *text, long long min, long long max,
                         long long *value)
{
    return bench_parse_integer(COMPARE_NAME, option, text, min, max, value);
}

static int parse_choice(const char *option, const char *text, const char *const *names, int *index)
{
    return bench_parse_choice(COMPARE_NAME, option, text, names, index);
}

static int out_of_memory(void)
{
    fprintf(stderr, "%s: out of memory\n", COMPARE_NAME);
    return 1;
}

/* "1,,2", ",1" and "1," are typos, not one entry fewer (as in --sizes and
 * --halo): a usage error naming ACCEPTED, else -1. */
static int refuse_empty_entry(const char *option, const char *text, const char *accepted)
{
    size_t n = strlen(text);
    if (n == 0)
        return cmp_usage("--%s: an empty list (accepted: %s)", option, accepted);
    if (text[0] == ',' || text[n - 1] == ',' || strstr(text, ",,"))
        return cmp_usage("--%s: '%.40s%s' has an empty entry (accepted: %s)", option, text,
                         n > 40 ? "..." : "", accepted);
    return -1;
}

/* A comma-separated list of the names of NAMES from FIRST on, of any
 * length, into a bit set: 1u << the index in NAMES. */
static int parse_set(const char *option, const char *text, const char *const *names, int first,
                     unsigned *set)
{
    char list[256], accepted[sizeof list + 16];
    mgpu_names_join(list, sizeof list, names + first, MGPU_ALL_NAMES, ",");
    snprintf(accepted, sizeof accepted, "some of %s", list);
    int code = refuse_empty_entry(option, text, accepted);
    if (code >= 0)
        return code;
    char *copy = strdup(text);
    if (!copy)
        return out_of_memory();
    *set = 0;
    for (char *save = NULL, *item = strtok_r(copy, ",", &save); item && code < 0;
         item = strtok_r(NULL, ",", &save)) {
        int index = 0;
        code = parse_choice(option, item, names + first, &index);
        *set |= 1u << (first + index);
    }
    free(copy);
    if (code < 0 && *set == 0)
        return cmp_usage("--%s: an empty list (accepted: %s)", option, accepted);
    return code;
}

/* --devices=1,2,4 or 1-4 (and both: 1-2,8), of any length: sorted, each
 * once. */
static int parse_counts(const char *text, cmp_options *opt)
{
    int code = refuse_empty_entry("devices", text, "counts and ranges, as 1,2,4 or 1-4");
    if (code >= 0)
        return code;
    char *copy = strdup(text);
    if (!copy)
        return out_of_memory();
    int seen[MGPU_MAX_DEVICES + 1] = {0};
    for (char *save = NULL, *item = strtok_r(copy, ",", &save); item && code < 0;
         item = strtok_r(NULL, ",", &save)) {
        long long lo, hi;
        char *dash = strchr(item, '-');
        if (dash)
            *dash = '\0';
        code = parse_integer("devices", item, 1, MGPU_MAX_DEVICES, &lo);
        if (code < 0)
            code = dash ? parse_integer("devices", dash + 1, lo, MGPU_MAX_DEVICES, &hi)
                        : (hi = lo, -1);
        for (long long d = lo; code < 0 && d <= hi; d++)
            seen[d] = 1;
    }
    free(copy);
    if (code >= 0)
        return code;
    opt->ncounts = 0;
    for (int d = 1; d <= MGPU_MAX_DEVICES; d++) {
        if (seen[d])
            opt->counts[opt->ncounts++] = d;
    }
    if (opt->ncounts == 0)
        return cmp_usage("--devices: an empty list (accepted: counts and ranges, as 1,2,4 or 1-4)");
    return -1;
}

/* How many times WORD says %n (%% is a '%' of its own). */
static int ranks_in(const char *word)
{
    int n = 0;
    for (const char *c = word; *c; c++) {
        if (c[0] == '%' && (c[1] == 'n' || c[1] == '%'))
            n += *++c == 'n';
    }
    return n;
}

/* The launcher (WHERE: --launcher, --mpirun or MPIRUN) into its words: a
 * template, where %n stands for the number of ranks, or (an mpirun
 * command) the command, to which "-np %n" is added. */
static int parse_launcher(const char *where, const char *text, bool template, cmp_options *opt)
{
    if (opt->launcher_from && strcmp(opt->launcher_from, "MPIRUN") != 0 &&
        strcmp(opt->launcher_from, where) != 0)
        return cmp_usage(
            "%s and %s: give one of them (--launcher='mpirun -np %%n' is --mpirun=mpirun)",
            opt->launcher_from, where);
    /* An mpirun command gets -np N added: a %n of its own would be a
     * second count. */
    if (!template && ranks_in(text))
        return cmp_usage("%s: '%s': %%n is --launcher's; %s adds -np N itself", where, text, where);
    opt->launcher_from = where;
    free(opt->launcher_text);
    size_t size = strlen(text) + sizeof " -np %n";
    opt->launcher_text = malloc(size);
    if (!opt->launcher_text)
        return out_of_memory();
    snprintf(opt->launcher_text, size, "%s%s", text, template ? "" : " -np %n");
    int n = 0;
    bool ranks = false;
    for (char *save = NULL, *w = strtok_r(opt->launcher_text, " \t", &save); w;
         w = strtok_r(NULL, " \t", &save)) {
        if (n == CMP_LAUNCHER_TEXT_WORDS + (template ? 0 : 2))
            return cmp_usage("%s: more than %d words", where, CMP_LAUNCHER_TEXT_WORDS);
        if (n == 0 && ranks_in(w))
            return cmp_usage("%s: '%s': the first word is the command, %%n comes after it", where,
                             text);
        if (strlen(w) > CMP_LAUNCHER_WORD_MAX)
            return cmp_usage("%s: a word of %zu characters (accepted: at most %d)", where,
                             strlen(w), CMP_LAUNCHER_WORD_MAX);
        ranks = ranks || ranks_in(w);
        opt->launcher[n++] = w;
    }
    opt->launcher[n] = NULL;
    if (!template && n == 2)
        return cmp_usage("%s: an empty command", where);
    if (n == 0)
        return cmp_usage("%s: an empty template", where);
    if (!ranks)
        return cmp_usage("%s: '%s' does not say where the number of ranks goes (%%n, as 'srun -n "
                         "%%n' or 'mpirun -np %%n')",
                         where, text);
    return -1;
}

/* --sizes=1024,2048x512,4096:16384. */
static int parse_sizes(const char *text, cmp_options *opt)
{
    char error[256];
    int rc = cmp_sizes_parse(text, &opt->sizes, error, sizeof error);
    if (rc == -2)
        return out_of_memory();
    /* An entry's own message says what it is not; an empty one, what is. */
    return rc == 0 ? -1
                   : cmp_usage("--sizes: %s%s", error,
                               error[0] == '\'' ? ""
                                                : " (accepted: N, NXxNY or A:B, as "
                                                  "1024:16384,2048x512)");
}

/* --halo=1,2,4: depths, each once. */
static int parse_halos(const char *text, cmp_options *opt)
{
    char error[256];
    int rc = cmp_halos_parse(text, opt->halos, &opt->nhalos, error, sizeof error);
    if (rc == -2)
        return out_of_memory();
    if (rc == 0)
        return -1;
    if (error[0] == '\'')
        return cmp_usage("--halo: %s", error);
    return cmp_usage("--halo: %s (accepted: depths from 1 to %d, as 1,2,4)", error, MGPU_HALO_MAX);
}

void cmp_options_free(cmp_options *opt)
{
    free(opt->launcher_text);
    opt->launcher_text = NULL;
    cmp_sizes_free(&opt->sizes);
}

static void print_help(void)
{
    char modes[256], text[sizeof modes + 128];
    mgpu_names_join(modes, sizeof modes, mgpu_exchange_names + CMP_FIRST_MODE, MGPU_ALL_NAMES,
                    ", ");
    printf("Usage: %s [OPTION]...\n"
           "Run every built strategy program on 1 and more devices with each of its\n"
           "exchange modes and print them side by side; write results.csv, results.json\n"
           "and, with gnuplot, scaling and exchange-mode plots (PNG and SVG).\n\n",
           COMPARE_NAME);
    bench_help_choice("--backend=NAME", mgpu_backend_names,
                      " (default auto: cuda if a GPU is usable)");
    bench_help_line("--nx=N, --ny=N", "the grid (default 16384 x 16384 on GPUs, 512 x 512 on "
                                      "the host backend)");
    bench_help_line("--sizes=LIST", "grids to compare across: N (N x N), NXxNY, A:B (A, 2A, "
                                    "4A, ... up to B), as 1024:16384,2048x512; each once, "
                                    "smallest first; not with --nx, --ny");
    bench_help_line("--steps=N", "steps per run (default 200 on GPUs, 20 on the host backend)");
    bench_help_line("--halo=LIST", "halo depths K to compare, as 1,2,4: each run gets --halo=K "
                                   "and its own --time-block=auto (default 1)");
    bench_help_choice("--kernel=NAME", mgpu_kernel_names, " (default pattern2d)");
    bench_help_line("--repeat=N", "timed runs each, median reported (default 3)");
    bench_help_line("--warmup=N", "untimed runs first (default 1)");
    bench_help_choice("--verify=HOW", mgpu_verify_names, " (default auto)");
    bench_help_choice("--bind=HOW", mgpu_bind_names, ", given to every run (default auto)");
    bench_help_line("--strategies=LIST", "some of single,fork,pthread,openmp,streams,mpi,"
                                         "persistent (default: every one built)");
    bench_help_line("--devices=LIST", "device counts, as 1,2,4 or 1-4 (default: 1, 2, 4, ... and "
                                      "all; host backend: 1,2)");
    snprintf(text, sizeof text,
             "only these exchange modes, of %s (default: each program's "
             "own, from its --list-exchanges)",
             modes);
    bench_help_line("--exchanges=LIST", text);
    bench_help_line("--output=DIR", "where results and plots go (default: .)");
    bench_help_line("--from=FILE", "print and plot a results.json again, running nothing "
                                   "(its plots replaced only by a whole new set); given "
                                   "again (up to 8), the files side by side, each set "
                                   "named by its folder, plots in --output (a folder "
                                   "that holds no other comparison's results)");
    bench_help_line("--launcher=TEMPLATE", "how mgpu-mpi's ranks are started: a command in "
                                           "which %n is the number of ranks (%% a %), as "
                                           "'srun -n %n' or 'mpirun -np %n --hostfile hosts' "
                                           "(default: --mpirun's)");
    bench_help_line("--mpirun=COMMAND", "the same as --launcher='COMMAND -np %n' (default: "
                                        "$MPIRUN, else mpirun; Open MPI binds no rank, "
                                        "--bind places them, unless the launcher has "
                                        "--bind-to or --map-by; as root it is allowed to "
                                        "run)");
    bench_help_line("--timeout=SECONDS",
                    "stop a run that takes longer (default 600), and a program asked for "
                    "its modes, and gnuplot, after that or 60 s");
    bench_help_line("-h, --help", "print this help and exit");
    bench_help_line("-V, --version", "print the version and exit");
    printf("\nEach program runs on one device with --exchange=auto, and on more devices\n"
           "with each of its modes; speedup and efficiency are against that one-device\n"
           "run, made in the same comparison at the same grid.  With --sizes, each of\n"
           "these runs at every size; the table has a group per size, a crossover\n"
           "summary follows it (per program and device count, the smallest grid at\n"
           "which the devices are at least 1.5x faster than its one device, its fastest\n"
           "mode at each size), and two more plots show the time per step and the\n"
           "efficiency against grid size.  With --halo, each of these runs with every\n"
           "depth K, against the one-device run with the same K; a run that a program\n"
           "refuses is skipped with its reason; the crossover is per\n"
           "K, and two more plots show the time per step and the efficiency against K\n"
           "at the largest grid.  Progress goes to stderr, the table to stdout, last,\n"
           "once the set is written (a reader that goes early costs the table\n"
           "alone).  The output folder holds one comparison's files, each whole, never\n"
           "a mix: they replace the previous ones only once all are written, and while\n"
           "a comparison runs it holds the folder (.mgpu-compare.lock in it), so that a\n"
           "second one into the same folder fails at once, running nothing.  Exit\n"
           "status: 0 when every run passed or was skipped (a mode the backend cannot\n"
           "do) and one passed; 1 when a run failed (its launch included: a launcher\n"
           "that refuses it or starts other than asked), none passed, asked-for plots\n"
           "($GNUPLOT, or a gnuplot on PATH) could not be made, a file could not be\n"
           "written whole, or another mgpu-compare holds the folder; 2 usage error (a\n"
           "bad --from file included); ended by SIGINT or SIGTERM, the run is stopped\n"
           "and nothing is written.\n\nEnvironment:\n");
    bench_help_line("GNUPLOT", "the gnuplot to draw the plots with; when set, plots that "
                               "cannot be made are a failure (default: gnuplot on PATH, if "
                               "any)");
    bench_help_line("MPIRUN", "how mgpu-mpi is started, as --mpirun (which, and --launcher, "
                              "win)");
    bench_help_line("CUDA_VISIBLE_DEVICES", "the GPUs every run sees, and their order");
}

enum {
    OPT_BACKEND = 256,
    OPT_NX,
    OPT_NY,
    OPT_SIZES,
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
    OPT_LAUNCHER,
    OPT_TIMEOUT,
    OPT_BIND,
    OPT_HALO
};

static const struct option long_options[] = {
    {.name = "backend", .has_arg = required_argument, .val = OPT_BACKEND},
    {.name = "nx", .has_arg = required_argument, .val = OPT_NX},
    {.name = "ny", .has_arg = required_argument, .val = OPT_NY},
    {.name = "sizes", .has_arg = required_argument, .val = OPT_SIZES},
    {.name = "steps", .has_arg = required_argument, .val = OPT_STEPS},
    {.name = "kernel", .has_arg = required_argument, .val = OPT_KERNEL},
    {.name = "repeat", .has_arg = required_argument, .val = OPT_REPEAT},
    {.name = "warmup", .has_arg = required_argument, .val = OPT_WARMUP},
    {.name = "verify", .has_arg = required_argument, .val = OPT_VERIFY},
    {.name = "strategies", .has_arg = required_argument, .val = OPT_STRATEGIES},
    {.name = "devices", .has_arg = required_argument, .val = OPT_DEVICES},
    {.name = "exchanges", .has_arg = required_argument, .val = OPT_EXCHANGES},
    {.name = "output", .has_arg = required_argument, .val = OPT_OUTPUT},
    {.name = "from", .has_arg = required_argument, .val = OPT_FROM},
    {.name = "mpirun", .has_arg = required_argument, .val = OPT_MPIRUN},
    {.name = "launcher", .has_arg = required_argument, .val = OPT_LAUNCHER},
    {.name = "timeout", .has_arg = required_argument, .val = OPT_TIMEOUT},
    {.name = "bind", .has_arg = required_argument, .val = OPT_BIND},
    {.name = "halo", .has_arg = required_argument, .val = OPT_HALO},
    {.name = "help", .has_arg = no_argument, .val = 'h'},
    {.name = "version", .has_arg = no_argument, .val = 'V'},
    {.name = NULL},
};

static int apply(cmp_options *opt, int id, const char *text)
{
    switch (id) {
    case OPT_BACKEND:
        return parse_choice("backend", text, mgpu_backend_names, &opt->backend);
    case OPT_NX:
        return parse_integer("nx", text, CMP_MIN_GRID, CMP_MAX_GRID, &opt->nx);
    case OPT_NY:
        return parse_integer("ny", text, CMP_MIN_GRID, CMP_MAX_GRID, &opt->ny);
    case OPT_SIZES:
        return parse_sizes(text, opt);
    case OPT_STEPS:
        return parse_integer("steps", text, 1, CMP_MAX_STEPS, &opt->steps);
    case OPT_HALO:
        return parse_halos(text, opt);
    case OPT_KERNEL:
        return parse_choice("kernel", text, mgpu_kernel_names, &opt->kernel);
    case OPT_REPEAT:
        return parse_integer("repeat", text, 1, CMP_MAX_RUNS, &opt->repeat);
    case OPT_WARMUP:
        return parse_integer("warmup", text, 0, CMP_MAX_RUNS, &opt->warmup);
    case OPT_VERIFY:
        return parse_choice("verify", text, mgpu_verify_names, &opt->verify);
    case OPT_BIND:
        return parse_choice("bind", text, mgpu_bind_names, &opt->bind);
    case OPT_STRATEGIES:
        return parse_set("strategies", text, strategy_names, 0, &opt->strategies);
    case OPT_DEVICES:
        return parse_counts(text, opt);
    case OPT_EXCHANGES:
        return parse_set("exchanges", text, mgpu_exchange_names, CMP_FIRST_MODE, &opt->exchanges);
    case OPT_OUTPUT:
        if (!*text)
            return cmp_usage("--output: an empty folder name");
        opt->output = text;
        return -1;
    case OPT_FROM:
        if (!*text)
            return cmp_usage("--from: an empty file name");
        if (opt->nfrom == CMP_MAX_SETS)
            return cmp_usage("--from: more than %d results files (accepted: 1 to %d, shown side "
                             "by side)",
                             CMP_MAX_SETS, CMP_MAX_SETS);
        opt->from[opt->nfrom++] = text;
        return -1;
    case OPT_MPIRUN:
        return parse_launcher("--mpirun", text, false, opt);
    case OPT_LAUNCHER:
        return parse_launcher("--launcher", text, true, opt);
    case OPT_TIMEOUT:
        return parse_integer("timeout", text, 1, 86400, &opt->timeout);
    }
    return cmp_usage("unknown option (see --help)");
}

/* -1 to go on, or the exit code. */
int cmp_options_parse(cmp_options *opt, int argc, char **argv)
{
    const char *mpirun = getenv("MPIRUN");
    *opt = (cmp_options){
        .repeat = 3, .warmup = 1, .timeout = 600, .output = ".", .halos = {1}, .nhalos = 1};
    int id;
    const char *run_option = NULL; /* the first option of a new run */
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
            return cmp_usage("unknown option '%s' (see --help)", argv[optind - 1]);
        if (id == ':')
            return cmp_usage("%s: needs a value (see --help)", argv[optind - 1]);
        int code = apply(opt, id, optarg);
        if (code >= 0)
            return code;
        if (!run_option && id != OPT_FROM && id != OPT_OUTPUT && id != OPT_TIMEOUT)
            run_option = argv[optind - 1];
    }
    if (optind < argc)
        return cmp_usage("unexpected argument '%s' (options only, see --help)", argv[optind]);
    if (opt->sizes.count && (opt->nx || opt->ny))
        return cmp_usage("--sizes: not with --nx or --ny (a size of the list is N or NXxNY)");
    if (opt->nfrom && run_option)
        return cmp_usage("--from: prints a finished comparison; it takes no options of a new "
                         "run, as %.*s (only --output and --timeout, for the plots)",
                         (int) strcspn(run_option, "="), run_option);
    /* MGPU_STAGING_CHUNK reaches every program run: a bad value is one
     * usage error here, not a skipped row a run (doc/options.md). */
    size_t chunk;
    if (!opt->nfrom && mgpu_staging_chunk_env(&chunk) != MGPU_OK)
        return cmp_usage("%s", mgpu_last_error());
    /* $MPIRUN only where it is used: a run of mgpu-mpi, with no --launcher
     * or --mpirun; blanks alone are no command. */
    bool mpi = false;
    for (int i = 0; i < CMP_NSTRATEGIES; i++)
        mpi = mpi || (strcmp(cmp_strategies[i].name, "mpi") == 0 &&
                      (!opt->strategies || (opt->strategies & (1u << i))));
    if (!opt->nfrom && !opt->launcher_from && mpi) {
        bool set = mpirun && mpirun[strspn(mpirun, " \t")];
        return parse_launcher("MPIRUN", set ? mpirun : "mpirun", false, opt);
    }
    return -1;
}
