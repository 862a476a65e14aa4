/* p2p.c - mgpu-p2p: what the copies of this machine really do, in one run.
 *
 * The peer-access matrix and the link between each pair; device-to-device
 * bandwidth for every pair with peer access on (copy engine, or a kernel
 * writing through a peer pointer) and off (staged through pinned host
 * memory), one direction and both; the halo exchange of book table 11.1,
 * cudaMemcpyPeer against cudaMemcpyPeerAsync; small-copy latency;
 * host-device bandwidth, pinned and pageable, per device and all at once;
 * each device's own copy bandwidth; and time and bandwidth by copy size,
 * as nccl-tests sweeps them (-b, -e, -f, -i), each pair and all at once;
 * each a test that --test (-t) runs alone (--list, -l, names them).  Every
 * copy is verified; every figure states what it counts.  This file holds
 * the command line and the buffers; p2p-copies.c the measurements.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "p2p.h"

static const mgpu_program program = {.name = P2P_NAME};

/* ------------------------------------------------------- the command line */

#define MAX_BYTES ((size_t) 1 << 40)

/* Usage errors name the program, as every mgpu program's do. */
#define usage_error(...) bench_usage(P2P_NAME, __VA_ARGS__)

static int parse_int(const char *option, const char *text, long long min, long long max,
                     long long *value)
{
    return bench_parse_integer(P2P_NAME, option, text, min, max, value);
}

/* A byte count as nccl-tests reads one: a number, with a fraction or not,
 * and an optional binary suffix K, M, G or T in either case (KiB ...,
 * "KB" and "KiB" as well), making a whole number of bytes: 64K, 1.5m,
 * 4096. */
static int parse_size(const char *option, const char *text, size_t min, size_t *bytes)
{
    size_t digits = strspn(text, "0123456789");
    size_t fraction = text[digits] == '.' ? strspn(text + digits + 1, "0123456789") : 0;
    const char *end = text + digits + (text[digits] == '.' ? 1 + fraction : 0);
    int shift = 0, bad = digits == 0 || (text[digits] == '.' && fraction == 0) || fraction > 6;
    if (!bad && *end) {
        const char *suffixes = "KMGT";
        const char *s = strchr(suffixes, toupper((unsigned char) *end));
        shift = s && *end ? 10 * (int) (s - suffixes + 1) : -1;
        end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
        else if (*end == 'B')
            end++;
        bad = shift < 0 || *end;
    }
    /* Long double holds every whole count up to 1T and every fraction of
     * six digits that makes one exactly: only a binary fraction can. */
    long double v = bad ? 0 : strtold(text, NULL) * (long double) ((size_t) 1 << shift);
    if (!bad && (v != floorl(v) || v > (long double) MAX_BYTES || v < (long double) min))
        bad = 1;
    if (bad)
        return usage_error("--%s: '%s' is not a size from %zu to 1T bytes (accepted: a whole "
                           "number of bytes, with an optional K, M, G or T suffix, powers of "
                           "1024: 4096, 64K, 1.5M)",
                           option, text, min);
    *bytes = (size_t) v;
    return -1;
}

/* --sizes=MIN:MAX (-b MIN -e MAX), or none. */
static int parse_sweep(const char *text, p2p_options *opt, int *min_given, int *max_given)
{
    opt->no_sweep = strcmp(text, "none") == 0;
    if (opt->no_sweep)
        return -1;
    const char *colon = strchr(text, ':');
    char min_text[64];
    if (!colon || (size_t) (colon - text) >= sizeof min_text)
        return usage_error("--sizes: '%s' is not MIN:MAX (accepted: two sizes such as "
                           "4K:1G, or none)",
                           text);
    memcpy(min_text, text, (size_t) (colon - text));
    min_text[colon - text] = '\0';
    int code = parse_size("sizes", min_text, 1, &opt->sweep_min);
    if (code < 0)
        code = parse_size("sizes", colon + 1, 1, &opt->sweep_max);
    if (code < 0 && opt->sweep_max < opt->sweep_min)
        return usage_error("--sizes: '%s': the largest size is smaller than the smallest", text);
    *min_given = *max_given = 1;
    return code;
}

/* The tests that NAME selects: the test of that name, else every test
 * whose name begins with it (as nvbandwidth's -p); 0 when none. */
static unsigned tests_named(const char *name)
{
    int exact = mgpu_name_find(p2p_test_names, name);
    if (exact >= 0)
        return 1u << exact;
    unsigned found = 0;
    size_t len = strlen(name);
    for (int t = 0; len > 0 && t < P2P_TESTS; t++)
        if (strncmp(p2p_test_names[t], name, len) == 0)
            found |= 1u << t;
    return found;
}

/* --test=NAME[,NAME]... (-t): the tests to run, added to those of an
 * earlier --test; each NAME a test's name or the start of some.  A name
 * that selects none, or is empty, is a usage error naming every test. */
static int parse_tests(const char *text, unsigned *tests)
{
    const char *name = text;
    for (;;) {
        size_t len = strcspn(name, ",");
        char one[64];
        unsigned found = 0;
        if (len > 0 && len < sizeof one) {
            memcpy(one, name, len);
            one[len] = '\0';
            found = tests_named(one);
        }
        if (!found) {
            char accepted[1024];
            mgpu_names_join(accepted, sizeof accepted, p2p_test_names, MGPU_ALL_NAMES, ", ");
            mgpu_error(&program,
                       "--test: unknown test '%.*s' (accepted: a name or the start of names: %s; "
                       "--list says what each measures)",
                       (int) (len < 64 ? len : 64), name, accepted);
            return 2;
        }
        *tests |= found;
        if (name[len] == '\0')
            return -1;
        name += len + 1;
    }
}

/* --pairs=A:B[,A:B]...: the pairs the pair tests measure, from A to B.
 * Whether the devices exist is known only later (check_pairs). */
static int parse_pairs(const char *text, p2p_options *opt)
{
    const char *p = text;
    for (;;) {
        int a = -1, b = -1, used = 0;
        if (sscanf(p, "%2d:%2d%n", &a, &b, &used) != 2 || !isdigit((unsigned char) *p) ||
            !isdigit((unsigned char) p[strcspn(p, ":") + 1]) || a < 0 || b < 0 ||
            a >= MGPU_MAX_DEVICES || b >= MGPU_MAX_DEVICES || a == b ||
            (p[used] != ',' && p[used] != '\0'))
            return usage_error("--pairs: '%s' is not a list of pairs FROM:TO of two devices "
                               "(accepted: such as 0:1,1:0; from 0 to %d, FROM not TO)",
                               text, MGPU_MAX_DEVICES - 1);
        opt->pair[a][b] = 1;
        opt->pairs_given = 1;
        if (p[used] == '\0')
            return -1;
        p += used + 1;
    }
}

/* --list: each test, one a line: its name, then what it measures. */
static void print_tests(void)
{
    int width = 0;
    for (int t = 0; t < P2P_TESTS; t++)
        if ((int) strlen(p2p_test_names[t]) > width)
            width = (int) strlen(p2p_test_names[t]);
    for (int t = 0; t < P2P_TESTS; t++)
        printf("%-*s  %s\n", width, p2p_test_names[t], p2p_test_measures[t]);
}

static void print_help(void)
{
    printf("Usage: %s [OPTION]...\n"
           "What this machine's copies really do: peer access and links, device-to-device\n"
           "bandwidth (peer on and off), the halo exchange of book table 11.1, latency,\n"
           "host-device bandwidth, each device's own copy bandwidth, and time and bandwidth\n"
           "by copy size as nccl-tests sweeps them (-b, -e, -f, -i), with busbw for all\n"
           "pairs at once.\n"
           "Links (NVLink count, PCIe path) come from NVML, the driver's libnvidia-ml.so.1,\n"
           "loaded at run time; without it they are guessed from native atomics, and the\n"
           "output says so (link_source).\n\n",
           P2P_NAME);
    bench_help_choice("--backend=NAME", mgpu_backend_names,
                      " (default auto: cuda if a GPU is usable)");
    bench_help_line("--devices=N", "devices to measure, 1 to 64 (default: all; host backend: 2)");
    bench_help_line("--pairs=A:B[,A:B]...", "the pair tests measure these copies only, from "
                                            "device A to B (default: every pair)");
    bench_help_line("-t, --test=NAME[,NAME]...", "run only these tests, in their usual order; "
                                                 "a NAME may be the start of several "
                                                 "(default: all; names as nvbandwidth's where "
                                                 "they measure the same)");
    bench_help_line("-l, --list", "print the tests, one a line, with what each measures, and "
                                  "exit");
    bench_help_line("--bytes=SIZE", "size of each bandwidth copy (default 256M; host backend 8M)");
    bench_help_line("-b, --minbytes=SIZE", "the size sweep's first size (default 4K, or "
                                           "--maxbytes if smaller)");
    bench_help_line("-e, --maxbytes=SIZE", "the size sweep's last size at most (default "
                                           "--bytes, or --minbytes if larger)");
    bench_help_line("-f, --stepfactor=N", "each size of the sweep N times the last, 2 to 1024 "
                                          "(default 2)");
    bench_help_line("-i, --stepbytes=SIZE", "each size of the sweep SIZE bytes past the last, "
                                            "instead of -f");
    bench_help_line("--sizes=MIN:MAX", "the same as -b MIN -e MAX; none: no sweep");
    bench_help_line("--staging-chunk=SIZE", "staged copies go in chunks of SIZE, at most 1G "
                                            "(default 4M)");
    bench_help_line("--staging-buffers=N", "through N pinned buffers, 2 to 8 (default 3)");
    bench_help_line("--halo=SIZE", "bytes of one halo, a multiple of 4 (default 64K: one row of "
                                   "a 16384-wide float grid)");
    bench_help_line("--rounds=N", "halo exchanges per sample, 1 to 100000 (default 100)");
    bench_help_line("--latency-bytes=SIZE", "size of each latency copy (default 4)");
    bench_help_line("--latency-copies=N", "copies per latency sample, 1 to 100000 (default 100)");
    bench_help_line("--repeat=N", "timed samples per figure, median reported, 1 to 1000 "
                                  "(default 7)");
    bench_help_line("--warmup=N", "untimed samples first, 0 to 1000 (default 2)");
    bench_help_line("--spin-us=N", "first length of the spin kernel the timed copies queue "
                                   "behind, 1 to 100000 (default 200; doubled when the host "
                                   "needs longer to queue)");
    bench_help_choice("--format=NAME", mgpu_format_names, " (default table)");
    bench_help_line("--no-header", "csv: leave out the header line");
    bench_help_choice("--progress[=WHEN]", mgpu_progress_names,
                      ": the test and the copies measured now on stderr, redrawn in place "
                      "(default auto: when stderr is a terminal; --progress alone: always; "
                      "--no-progress: never)");
    bench_help_line("-h, --help", "print this help and exit");
    bench_help_line("-V, --version", "print the version and exit");
    printf("\nSizes take a K, M, G or T suffix (powers of 1024), in either case, and may\n"
           "have a fraction (1.5M) that makes whole bytes; the output gives them in\n"
           "bytes.  Bandwidths are in GB/s (10^9 bytes per second); each figure states\n"
           "what its bytes count.  A sweep has at most %d sizes.\n"
           "Every copy is checked against the pattern of its source; a wrong byte stops\n"
           "the run with exit status 1.  Buffers (six a device, four of them in host\n"
           "memory on GPUs) that need more host memory than the process may take (what\n"
           "the machine has available, what its cgroup's limit leaves) are refused\n"
           "before any is allocated, with exit status 1.  Staged copies add their own\n"
           "pinned buffers (--staging-buffers of --staging-chunk) for each pair they copy\n"
           "between.\n\n"
           "Exit status: 0 success, 1 run-time failure or a wrong copy, 2 usage error.\n\n"
           "Environment:\n",
           P2P_MAX_SIZES);
    bench_help_line("MGPU_P2P_CORRUPT=N", "flip a byte before the Nth check (a test of the "
                                          "verification; N past the run's checks is a usage "
                                          "error)");
    bench_help_line("CUDA_VISIBLE_DEVICES", "the GPUs the CUDA runtime shows, and their order");
}

enum {
    OPT_BACKEND = 256,
    OPT_DEVICES,
    OPT_PAIRS,
    OPT_BYTES,
    OPT_SIZES,
    OPT_STAGING_CHUNK,
    OPT_STAGING_BUFFERS,
    OPT_HALO,
    OPT_ROUNDS,
    OPT_LATENCY_BYTES,
    OPT_LATENCY_COPIES,
    OPT_REPEAT,
    OPT_WARMUP,
    OPT_SPIN,
    OPT_FORMAT,
    OPT_NO_HEADER,
    OPT_PROGRESS,
    OPT_NO_PROGRESS,
    /* The options with a short form (nvbandwidth's, nccl-tests') have it
     * as their id. */
    OPT_TEST = 't',
    OPT_LIST = 'l',
    OPT_MINBYTES = 'b',
    OPT_MAXBYTES = 'e',
    OPT_STEPFACTOR = 'f',
    OPT_STEPBYTES = 'i'
};
#define SHORT_OPTIONS "+:hVlt:b:e:f:i:"

static const struct option long_options[] = {
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"pairs", required_argument, NULL, OPT_PAIRS},
    {"bytes", required_argument, NULL, OPT_BYTES},
    {"minbytes", required_argument, NULL, OPT_MINBYTES},
    {"maxbytes", required_argument, NULL, OPT_MAXBYTES},
    {"stepfactor", required_argument, NULL, OPT_STEPFACTOR},
    {"stepbytes", required_argument, NULL, OPT_STEPBYTES},
    {"sizes", required_argument, NULL, OPT_SIZES},
    {"staging-chunk", required_argument, NULL, OPT_STAGING_CHUNK},
    {"staging-buffers", required_argument, NULL, OPT_STAGING_BUFFERS},
    {"halo", required_argument, NULL, OPT_HALO},
    {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"latency-bytes", required_argument, NULL, OPT_LATENCY_BYTES},
    {"latency-copies", required_argument, NULL, OPT_LATENCY_COPIES},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"spin-us", required_argument, NULL, OPT_SPIN},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"no-header", no_argument, NULL, OPT_NO_HEADER},
    {"test", required_argument, NULL, OPT_TEST},
    {"list", no_argument, NULL, OPT_LIST},
    {"progress", optional_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static size_t largest(size_t a, size_t b) { return a > b ? a : b; }

/* Which options the command line gave: the defaults of the others
 * depend on them. */
typedef struct given_options {
    int bytes, min, max, factor, step;
} given_options;

static int apply_option(p2p_options *opt, int id, const char *text, given_options *given)
{
    long long v = 0;
    int index = 0, code = -1;
    switch (id) {
    case OPT_BACKEND:
        code = bench_parse_choice(P2P_NAME, "backend", text, mgpu_backend_names, &index);
        opt->backend = (mgpu_backend) index;
        return code;
    case OPT_FORMAT:
        code = bench_parse_choice(P2P_NAME, "format", text, mgpu_format_names, &index);
        opt->format = (mgpu_format) index;
        return code;
    case OPT_DEVICES:
        code = parse_int("devices", text, 1, MGPU_MAX_DEVICES, &v);
        opt->devices = (int) v;
        return code;
    case OPT_PAIRS:
        return parse_pairs(text, opt);
    case OPT_BYTES:
        given->bytes = 1;
        return parse_size("bytes", text, 1, &opt->bytes);
    case OPT_MINBYTES:
        given->min = 1;
        return parse_size("minbytes", text, 1, &opt->sweep_min);
    case OPT_MAXBYTES:
        given->max = 1;
        return parse_size("maxbytes", text, 1, &opt->sweep_max);
    case OPT_STEPFACTOR:
        /* A factor of 1 would never reach the largest size. */
        given->factor = 1;
        code = parse_int("stepfactor", text, 2, 1024, &v);
        opt->sweep_factor = (int) v;
        return code;
    case OPT_STEPBYTES:
        given->step = 1;
        return parse_size("stepbytes", text, 1, &opt->sweep_step);
    case OPT_SIZES:
        return parse_sweep(text, opt, &given->min, &given->max);
    case OPT_STAGING_CHUNK:
        code = parse_size("staging-chunk", text, 1, &opt->staging_chunk);
        if (code < 0 && opt->staging_chunk > MGPU_STAGED_CHUNK_MAX)
            return usage_error("--staging-chunk: '%s' is larger than 1G", text);
        return code;
    case OPT_STAGING_BUFFERS:
        code = parse_int("staging-buffers", text, 2, MGPU_STAGED_BUFFERS_MAX, &v);
        opt->staging_buffers = (int) v;
        return code;
    case OPT_HALO:
        code = parse_size("halo", text, 4, &opt->halo);
        if (code < 0 && opt->halo % 4 != 0)
            return usage_error("--halo: '%s' is not a multiple of 4 bytes (a halo is a row "
                               "of floats)",
                               text);
        return code;
    case OPT_ROUNDS:
        code = parse_int("rounds", text, 1, 100000, &v);
        opt->rounds = (int) v;
        return code;
    case OPT_LATENCY_BYTES:
        return parse_size("latency-bytes", text, 1, &opt->latency_bytes);
    case OPT_LATENCY_COPIES:
        code = parse_int("latency-copies", text, 1, 100000, &v);
        opt->latency_copies = (int) v;
        return code;
    case OPT_REPEAT:
        code = parse_int("repeat", text, 1, P2P_MAX_REPEAT, &v);
        opt->repeat = (int) v;
        return code;
    case OPT_WARMUP:
        code = parse_int("warmup", text, 0, 1000, &v);
        opt->warmup = (int) v;
        return code;
    case OPT_SPIN:
        code = parse_int("spin-us", text, 1, 100000, &v);
        opt->spin_us = (double) v;
        return code;
    case OPT_NO_HEADER:
        opt->header = 0;
        return -1;
    case OPT_TEST:
        return parse_tests(text, &opt->tests);
    case OPT_PROGRESS:
        /* --progress alone means always, as in the stencil programs. */
        code = bench_parse_choice(P2P_NAME, "progress",
                                  text ? text : mgpu_progress_names[MGPU_PROGRESS_ALWAYS],
                                  mgpu_progress_names, &index);
        opt->progress = (mgpu_progress_when) index;
        return code;
    case OPT_NO_PROGRESS:
        opt->progress = MGPU_PROGRESS_NEVER;
        return -1;
    }
    return usage_error("unknown option (see --help)");
}

/* The size sweep's options, together: -1 to go on, or the exit code. */
static int check_sweep(const p2p_options *opt, const given_options *given)
{
    if (given->factor && given->step)
        return usage_error("-f (--stepfactor) and -i (--stepbytes): one or the other (a factor "
                           "or a step between sizes)");
    if (given->min && given->max && opt->sweep_min > opt->sweep_max)
        return usage_error("-b (--minbytes) %zu is larger than -e (--maxbytes) %zu", opt->sweep_min,
                           opt->sweep_max);
    return -1;
}

/* -1 to go on, or the exit code. */
static int parse_options(p2p_options *opt, int argc, char **argv, given_options *given)
{
    *opt = (p2p_options){.halo = 64 << 10,
                         .rounds = 100,
                         .latency_bytes = 4,
                         .latency_copies = 100,
                         .repeat = 7,
                         .warmup = 2,
                         .spin_us = 200,
                         .sweep_factor = 2,
                         .staging_chunk = MGPU_STAGED_CHUNK,
                         .staging_buffers = MGPU_STAGED_BUFFERS,
                         .header = 1,
                         .progress = MGPU_PROGRESS_AUTO};
    optind = 0;
    opterr = 0;
    int id, list = 0;
    while ((id = getopt_long(argc, argv, SHORT_OPTIONS, long_options, NULL)) != -1) {
        int code;
        if (id == 'h') {
            print_help();
            return 0;
        } else if (id == 'V') {
            printf("%s (mgpu) %s\n", P2P_NAME, MGPU_VERSION);
            return 0;
        } else if (id == '?') {
            if (optopt && optopt < 256)
                return usage_error("unknown option '-%c' (see --help)", optopt);
            return usage_error("unknown option '%s' (see --help)", argv[optind - 1]);
        } else if (id == ':') {
            if (optopt && optopt < 256)
                return usage_error("-%c: needs a value (see --help)", optopt);
            return usage_error("%s: needs a value (see --help)", argv[optind - 1]);
        } else if (id == OPT_LIST) {
            list = 1;
            continue;
        }
        const char *value = optarg;
        /* "--progress WHEN" as well as "--progress=WHEN", as the stencil
         * programs take it: the next word, when it is one of the choices. */
        if (id == OPT_PROGRESS && !value && optind < argc &&
            mgpu_name_find(mgpu_progress_names, argv[optind]) >= 0)
            value = argv[optind++];
        code = apply_option(opt, id, value, given);
        if (code >= 0)
            return code;
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s' (options only, see --help)", argv[optind]);
    if (list) {
        print_tests();
        return 0;
    }
    int code = check_sweep(opt, given);
    if (code >= 0)
        return code;
    if (opt->tests == 0)
        opt->tests = P2P_ALL_TESTS;
    if (opt->no_sweep)
        opt->tests &= ~P2P_SWEEP_TESTS;
    if (opt->tests == 0)
        return usage_error("--sizes=none leaves out every test --test named (the size sweep's)");
    return -1;
}

/* The size sweep's sizes into CTX, from the options and their defaults:
 * -1 to go on, or the exit code. */
static int sweep_sizes(p2p_ctx *ctx, p2p_options *opt, const given_options *given)
{
    size_t first = 4096;
    if (!given->min)
        opt->sweep_min = given->max && opt->sweep_max < first ? opt->sweep_max : first;
    if (!given->max)
        opt->sweep_max = largest(opt->bytes, opt->sweep_min);
    if (given->step)
        opt->sweep_factor = 0;
    ctx->sizes = 0;
    for (size_t s = opt->sweep_min; s <= opt->sweep_max;
         s = opt->sweep_factor ? s * (size_t) opt->sweep_factor : s + opt->sweep_step) {
        if (ctx->sizes == P2P_MAX_SIZES)
            return usage_error("-b %zu -e %zu %s %zu: more than %d sizes (accepted: a sweep of "
                               "at most %d)",
                               opt->sweep_min, opt->sweep_max, opt->sweep_factor ? "-f" : "-i",
                               opt->sweep_factor ? (size_t) opt->sweep_factor : opt->sweep_step,
                               P2P_MAX_SIZES, P2P_MAX_SIZES);
        ctx->size[ctx->sizes++] = s;
    }
    return -1;
}

/* ------------------------------------------------------------- the buffers */

static mgpu_status setup_device(p2p_ctx *ctx, int d)
{
    p2p_device *dv = &ctx->dev[d];
    size_t n = ctx->buffer_bytes;
    MGPU_TRY(mgpu_device_info_get(d, &dv->info));
    MGPU_TRY(mgpu_device_set(d));
    for (int l = 0; l < LANE_DEFAULT; l++)
        MGPU_TRY(mgpu_stream_create(d, 0, &dv->stream[l]));
    MGPU_TRY(mgpu_event_create(d, MGPU_EVENT_TIMING, &dv->start));
    MGPU_TRY(mgpu_event_create(d, MGPU_EVENT_TIMING, &dv->stop));
    for (int l = 0; l < LANES; l++)
        MGPU_TRY(mgpu_event_create(d, 0, &dv->done[l]));
    MGPU_TRY(mgpu_event_create(d, 0, &dv->back));
    MGPU_TRY(mgpu_event_create(d, 0, &dv->sent));
    MGPU_TRY(mgpu_malloc(d, n, &dv->src));
    MGPU_TRY(mgpu_malloc(d, n, &dv->dst));
    MGPU_TRY(mgpu_host_alloc(n, MGPU_HOST_PINNED, &dv->host_src));
    MGPU_TRY(mgpu_host_alloc(n, MGPU_HOST_PINNED, &dv->stage));
    dv->page_src = malloc(n);
    dv->page_dst = malloc(n);
    if (!dv->page_src || !dv->page_dst)
        return mgpu_error_set(MGPU_ERR_NOMEM,
                              "allocation of two pageable host buffers of %zu bytes for "
                              "device %d failed",
                              n, d);
    /* The sources hold their patterns for the whole run; the pageable
     * destination is touched now, so that no copy pays its first-touch
     * page faults. */
    MGPU_TRY(mgpu_pattern_fill(d, dv->src, n, device_seed(d), 0, NULL));
    MGPU_TRY(mgpu_device_synchronize(d));
    MGPU_TRY(mgpu_pattern_fill(MGPU_HOST_MEMORY, dv->host_src, n, host_seed(d), 0, NULL));
    MGPU_TRY(mgpu_pattern_fill(MGPU_HOST_MEMORY, dv->page_src, n, page_seed(d), 0, NULL));
    memset(dv->page_dst, 0, n);
    return MGPU_OK;
}

static void teardown(p2p_ctx *ctx)
{
    p2p_measure_done(ctx);
    for (int d = 0; d < ctx->n; d++) {
        p2p_device *dv = &ctx->dev[d];
        mgpu_free(d, dv->src);
        mgpu_free(d, dv->dst);
        mgpu_host_free(dv->host_src);
        mgpu_host_free(dv->stage);
        free(dv->page_src);
        free(dv->page_dst);
        mgpu_event_destroy(dv->start);
        mgpu_event_destroy(dv->stop);
        for (int l = 0; l < LANES; l++)
            mgpu_event_destroy(dv->done[l]);
        mgpu_event_destroy(dv->back);
        mgpu_event_destroy(dv->sent);
        for (int l = 0; l < LANE_DEFAULT; l++)
            mgpu_stream_destroy(dv->stream[l]);
    }
    p2p_results_destroy(ctx->results);
}

/* The option that asked for buffers of BYTES, the largest of the copies. */
static const char *largest_option(const p2p_options *opt, size_t bytes)
{
    if (bytes == opt->bytes)
        return "--bytes";
    if (bytes == opt->sweep_max)
        return "-e (--maxbytes)";
    return bytes == 2 * opt->halo ? "--halo" : "--latency-bytes";
}

static mgpu_status setup(p2p_ctx *ctx)
{
    const p2p_options *opt = ctx->opt;
    size_t sweep = opt->tests & P2P_SWEEP_TESTS ? opt->sweep_max : 0;
    ctx->buffer_bytes = largest(
        largest(opt->bytes, sweep),
        largest(2 * opt->halo, opt->latency_bytes * (size_t) opt->latency_copies));
    /* Each device has six buffers of that size (setup_device): two in its
     * own memory, two pinned and two pageable in the host's.  What lands in
     * host memory is checked before any is allocated: past it, the
     * out-of-memory killer would end the run without a word. */
    size_t in_host = ctx->cuda ? 4 : 6;
    size_t need = ctx->buffer_bytes <= SIZE_MAX / in_host / (size_t) ctx->n
                      ? ctx->buffer_bytes * in_host * (size_t) ctx->n
                      : SIZE_MAX;
    char what[160];
    snprintf(what, sizeof what, "%s: %d device%s x %zu buffers of %zu bytes",
             largest_option(opt, ctx->buffer_bytes), ctx->n, ctx->n == 1 ? "" : "s", in_host,
             ctx->buffer_bytes);
    MGPU_TRY(mgpu_host_memory_check(need, what));
    for (int d = 0; d < ctx->n; d++)
        MGPU_TRY(setup_device(ctx, d));
    for (int a = 0; a < ctx->n; a++) {
        for (int b = 0; b < ctx->n; b++) {
            int can = 0;
            MGPU_TRY(mgpu_peer_can_access(a, b, &can));
            if (a != b && can)
                MGPU_TRY(mgpu_peer_enable(a, b));
        }
    }
    return MGPU_OK;
}

/* --------------------------------------------------------------------- main */

/* MGPU_P2P_CORRUPT=N: a positive integer, or unset. */
static int read_corrupt(long *at)
{
    const char *text = getenv("MGPU_P2P_CORRUPT");
    *at = 0;
    if (!text || !*text)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (*end || errno || v < 1)
        return usage_error("MGPU_P2P_CORRUPT: '%s' is not a positive integer (the check "
                           "before which a byte is flipped)",
                           text);
    *at = v;
    return -1;
}

/* Each measurement runs the tests of --test among its own (p2p-copies.c). */
static mgpu_status measure(p2p_ctx *ctx)
{
    static mgpu_status (*const steps[])(p2p_ctx *) = {
        p2p_measure_links, p2p_measure_pairs, p2p_measure_halo,  p2p_measure_latency,
        p2p_measure_host,  p2p_measure_local, p2p_measure_sweep,
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        MGPU_TRY(steps[i](ctx));
    return MGPU_OK;
}

/* --pairs: every device named exists.  -1 to go on, or the exit code. */
static int check_pairs(const p2p_options *opt, int n)
{
    for (int a = 0; opt->pairs_given && a < MGPU_MAX_DEVICES; a++)
        for (int b = 0; b < MGPU_MAX_DEVICES; b++)
            if (opt->pair[a][b] && (a >= n || b >= n))
                return usage_error("--pairs: %d:%d names a device past the %d measured "
                                   "(accepted: devices 0 to %d)",
                                   a, b, n, n - 1);
    return -1;
}

/* main without the final check of stdout. */
static int run(int argc, char **argv)
{
    p2p_options opt;
    given_options given = {0};
    int code = parse_options(&opt, argc, argv, &given);
    if (code >= 0)
        return code;
    static p2p_ctx ctx; /* large: kept off the stack */
    ctx.started = (long long) time(NULL);
    if ((code = read_corrupt(&ctx.corrupt_at)) >= 0)
        return code;
    mgpu_status status = mgpu_init(opt.backend, opt.devices ? opt.devices : 2);
    if (status != MGPU_OK) {
        mgpu_error(&program, "%s", mgpu_last_error());
        return mgpu_exit_code(status);
    }
    int available = 0;
    mgpu_device_count(&available);
    ctx.cuda = mgpu_backend_active() == MGPU_BACKEND_CUDA;
    ctx.n = opt.devices ? opt.devices : available;
    if (ctx.n > available)
        return usage_error("--devices: %d asked, but %d %s device%s exist (accepted: 1 to %d)",
                           ctx.n, available, mgpu_backend_name(mgpu_backend_active()),
                           available == 1 ? "" : "s", available);
    if ((code = check_pairs(&opt, ctx.n)) >= 0)
        return code;
    /* The host backend's memcpy needs no 256 MiB to be measured. */
    if (!given.bytes)
        opt.bytes = ctx.cuda ? (size_t) 256 << 20 : (size_t) 8 << 20;
    if ((code = sweep_sizes(&ctx, &opt, &given)) >= 0)
        return code;
    ctx.opt = &opt;
    /* The library's progress line (lib/progress.c), as the stencil programs
     * draw it: each job of copies names itself there (p2p_time). */
    mgpu_progress_init(&ctx.progress, &(mgpu_options){.progress = opt.progress, .steps = 1},
                       stderr);
    ctx.results = p2p_results_create();
    if (!ctx.results)
        status = mgpu_error_set(MGPU_ERR_NOMEM, "out of host memory for the results");
    if (status == MGPU_OK)
        status = setup(&ctx);
    if (status == MGPU_OK)
        status = measure(&ctx);
    /* A check asked to be corrupted that never came tested nothing. */
    if (status == MGPU_OK && ctx.corrupt_at > ctx.checks) {
        mgpu_progress_end(&ctx.progress);
        teardown(&ctx);
        return usage_error("MGPU_P2P_CORRUPT: '%ld' is past the %ld checks of this run "
                           "(accepted: 1 to %ld)",
                           ctx.corrupt_at, ctx.checks, ctx.checks);
    }
    /* The line is cleared before the results or an error are printed. */
    mgpu_progress_end(&ctx.progress);
    if (status == MGPU_OK)
        status = p2p_print(&ctx, opt.format, stdout);
    if (status != MGPU_OK)
        mgpu_error(&program, "%s", mgpu_error_message(status));
    teardown(&ctx);
    return mgpu_exit_code(status);
}

int main(int argc, char **argv)
{
    mgpu_program_start();
    return mgpu_stdout_close(&program, run(argc, argv));
}
