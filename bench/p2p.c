/* p2p.c - mgpu-p2p: what the copies of this machine really do, in one run.
 *
 * The peer-access matrix and the link between each pair; device-to-device
 * bandwidth for every pair with peer access on (copy engine, or a kernel
 * writing through a peer pointer) and off (staged through pinned host
 * memory), one direction and both; the halo exchange of book table 11.1,
 * cudaMemcpyPeer against cudaMemcpyPeerAsync; small-copy latency;
 * host-device bandwidth, pinned and pageable, per device and all at once;
 * each device's own copy bandwidth; and bandwidth by copy size, each a test
 * that --test runs alone (--list names them).  Every copy is verified;
 * every figure states what it counts.  This file holds the command line and
 * the buffers; p2p-copies.c the measurements.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
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

/* A byte count: digits and an optional binary suffix, K, M, G or T (KiB..). */
static int parse_size(const char *option, const char *text, size_t min, size_t *bytes)
{
    char *end;
    errno = 0;
    unsigned long long v = isdigit((unsigned char) *text) ? strtoull(text, &end, 10) : 0;
    int bad = !isdigit((unsigned char) *text) || errno;
    int shift = 0;
    if (!bad && *end) {
        const char *suffixes = "KMGT";
        const char *s = strchr(suffixes, toupper((unsigned char) *end));
        shift = s ? 10 * (int) (s - suffixes + 1) : -1;
        end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
        else if (*end == 'B')
            end++;
        bad = shift < 0 || *end;
    }
    if (!bad && (v > (MAX_BYTES >> shift) || (v << shift) < min))
        bad = 1;
    if (bad)
        return usage_error("--%s: '%s' is not a size from %zu to 1T bytes (accepted: a "
                           "number of bytes with an optional K, M, G or T suffix, powers "
                           "of 1024)",
                           option, text, min);
    *bytes = (size_t) (v << shift);
    return -1;
}

/* --sizes=MIN:MAX, or none. */
static int parse_sweep(const char *text, p2p_options *opt)
{
    if (strcmp(text, "none") == 0) {
        opt->sweep_min = opt->sweep_max = 0;
        return -1;
    }
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
    return code;
}

/* --test=NAME[,NAME]...: the tests to run, added to those of an earlier
 * --test.  An unknown or empty name is a usage error naming every test. */
static int parse_tests(const char *text, unsigned *tests)
{
    const char *name = text;
    for (;;) {
        size_t len = strcspn(name, ",");
        char one[64];
        int found = -1;
        if (len > 0 && len < sizeof one) {
            memcpy(one, name, len);
            one[len] = '\0';
            found = mgpu_name_find(p2p_test_names, one);
        }
        if (found < 0) {
            char accepted[1024];
            mgpu_names_join(accepted, sizeof accepted, p2p_test_names, MGPU_ALL_NAMES, ", ");
            mgpu_error(&program,
                       "--test: unknown test '%.*s' (accepted: %s; --list says what "
                       "each measures)",
                       (int) (len < 64 ? len : 64), name, accepted);
            return 2;
        }
        *tests |= 1u << found;
        if (name[len] == '\0')
            return -1;
        name += len + 1;
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
           "host-device bandwidth, each device's own copy bandwidth, and a size sweep.\n"
           "Links (NVLink count, PCIe path) come from NVML, the driver's libnvidia-ml.so.1,\n"
           "loaded at run time; without it they are guessed from native atomics, and the\n"
           "output says so (link_source).\n\n",
           P2P_NAME);
    bench_help_choice("--backend=NAME", mgpu_backend_names,
                      " (default auto: cuda if a GPU is usable)");
    bench_help_line("--devices=N", "devices to measure, 1 to 64 (default: all; host backend: 2)");
    bench_help_line("--test=NAME[,NAME]...", "run only these tests, in their usual order "
                                             "(default: all; names as nvbandwidth's where "
                                             "they measure the same)");
    bench_help_line("--list", "print the tests, one a line, with what each measures, and exit");
    bench_help_line("--bytes=SIZE", "size of each bandwidth copy (default 256M; host backend 8M)");
    bench_help_line("--sizes=MIN:MAX", "size sweep, doubling from MIN to MAX, or none "
                                       "(default 4K:--bytes)");
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
    printf("\nSizes take a K, M, G or T suffix (powers of 1024); the output gives them in\n"
           "bytes.  Bandwidths are in GB/s (10^9 bytes per second); each figure states\n"
           "what its bytes count.\n"
           "Every copy is checked against the pattern of its source; a wrong byte stops\n"
           "the run with exit status 1.  Buffers (six a device, four of them in host\n"
           "memory on GPUs) that need more host memory than the process may take (what\n"
           "the machine has available, what its cgroup's limit leaves) are refused\n"
           "before any is allocated, with exit status 1.\n\n"
           "Exit status: 0 success, 1 run-time failure or a wrong copy, 2 usage error.\n\n"
           "Environment:\n");
    bench_help_line("MGPU_P2P_CORRUPT=N", "flip a byte before the Nth check (a test of the "
                                          "verification; N past the run's checks is a usage "
                                          "error)");
    bench_help_line("CUDA_VISIBLE_DEVICES", "the GPUs the CUDA runtime shows, and their order");
}

enum {
    OPT_BACKEND = 256,
    OPT_DEVICES,
    OPT_BYTES,
    OPT_SIZES,
    OPT_HALO,
    OPT_ROUNDS,
    OPT_LATENCY_BYTES,
    OPT_LATENCY_COPIES,
    OPT_REPEAT,
    OPT_WARMUP,
    OPT_SPIN,
    OPT_FORMAT,
    OPT_NO_HEADER,
    OPT_TEST,
    OPT_LIST,
    OPT_PROGRESS,
    OPT_NO_PROGRESS
};

static const struct option long_options[] = {
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"bytes", required_argument, NULL, OPT_BYTES},
    {"sizes", required_argument, NULL, OPT_SIZES},
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

static int apply_option(p2p_options *opt, int id, const char *text, int *sweep_given)
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
    case OPT_BYTES:
        return parse_size("bytes", text, 1, &opt->bytes);
    case OPT_SIZES:
        *sweep_given = 1;
        return parse_sweep(text, opt);
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

/* -1 to go on, or the exit code. */
static int parse_options(p2p_options *opt, int argc, char **argv, int *bytes_given,
                         int *sweep_given)
{
    *opt = (p2p_options){.halo = 64 << 10,
                         .rounds = 100,
                         .latency_bytes = 4,
                         .latency_copies = 100,
                         .repeat = 7,
                         .warmup = 2,
                         .spin_us = 200,
                         .header = 1,
                         .progress = MGPU_PROGRESS_AUTO};
    optind = 0;
    opterr = 0;
    int id, list = 0;
    while ((id = getopt_long(argc, argv, "+:hV", long_options, NULL)) != -1) {
        int code;
        if (id == 'h') {
            print_help();
            return 0;
        } else if (id == 'V') {
            printf("%s (mgpu) %s\n", P2P_NAME, MGPU_VERSION);
            return 0;
        } else if (id == '?') {
            return usage_error("unknown option '%s' (see --help)", argv[optind - 1]);
        } else if (id == ':') {
            return usage_error("%s: needs a value (see --help)", argv[optind - 1]);
        } else if (id == OPT_LIST) {
            list = 1;
            continue;
        }
        if (id == OPT_BYTES)
            *bytes_given = 1;
        const char *value = optarg;
        /* "--progress WHEN" as well as "--progress=WHEN", as the stencil
         * programs take it: the next word, when it is one of the choices. */
        if (id == OPT_PROGRESS && !value && optind < argc &&
            mgpu_name_find(mgpu_progress_names, argv[optind]) >= 0)
            value = argv[optind++];
        code = apply_option(opt, id, value, sweep_given);
        if (code >= 0)
            return code;
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s' (options only, see --help)", argv[optind]);
    if (list) {
        print_tests();
        return 0;
    }
    if (opt->tests == 0)
        opt->tests = P2P_ALL_TESTS;
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
    MGPU_TRY(mgpu_event_create(d, 0, &dv->staged));
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
        mgpu_event_destroy(dv->staged);
        mgpu_event_destroy(dv->back);
        mgpu_event_destroy(dv->sent);
        for (int l = 0; l < LANE_DEFAULT; l++)
            mgpu_stream_destroy(dv->stream[l]);
    }
    p2p_results_destroy(ctx->results);
}

static size_t largest(size_t a, size_t b) { return a > b ? a : b; }

/* The option that asked for buffers of BYTES, the largest of the copies. */
static const char *largest_option(const p2p_options *opt, size_t bytes)
{
    if (bytes == opt->bytes)
        return "--bytes";
    if (bytes == opt->sweep_max)
        return "--sizes";
    return bytes == 2 * opt->halo ? "--halo" : "--latency-bytes";
}

static mgpu_status setup(p2p_ctx *ctx)
{
    const p2p_options *opt = ctx->opt;
    ctx->buffer_bytes = largest(
        largest(opt->bytes, opt->sweep_max),
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

/* main without the final check of stdout. */
static int run(int argc, char **argv)
{
    p2p_options opt;
    int bytes_given = 0, sweep_given = 0;
    int code = parse_options(&opt, argc, argv, &bytes_given, &sweep_given);
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
    /* The host backend's memcpy needs no 256 MiB to be measured. */
    if (!bytes_given)
        opt.bytes = ctx.cuda ? (size_t) 256 << 20 : (size_t) 8 << 20;
    if (!sweep_given) {
        opt.sweep_min = 4096;
        opt.sweep_max = largest(opt.bytes, opt.sweep_min);
    }
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
