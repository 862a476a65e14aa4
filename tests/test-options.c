/* test-options.c - the common command line: defaults, both spellings of a
 * value, strict numbers, names (and the tables in mgpu.h and mgpu/harness.h
 * that make them), the program's own options, and the one-line message of
 * every usage error.
 *
 * Each error case captures stderr in a temporary file, so that the test can
 * check the message (one line, naming the option) and its own output stays
 * readable.  The parser runs many times in this one process, which also
 * tests that it starts getopt over each time.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/processes.h"

#define MAX_ARGS 32
#define MAX_OUTPUT 8192

/* The options of a made-up program, of every kind an extra option has. */
static const char *const contexts[] = {"runtime", "driver", NULL};
static const char *const levels[] = {"off", "on", "auto", NULL};
static long long context, chunks, pipeline, level, memory;

static const mgpu_extra_option extras[] = {
    {.name = "context",
     .help = "how devices are made current",
     .choices = contexts,
     .value = &context},
    {.name = "chunks", .help = "pipeline chunks", .min = 1, .max = 64, .value = &chunks},
    {.name = "pipeline", .help = "run the pipeline", .kind = MGPU_EXTRA_FLAG, .value = &pipeline},
    {.name = "level", .help = "how much", .choices = levels, .value = &level, .bare = "on"},
    {.name = "memory",
     .help = "bytes",
     .max = 1LL << 40,
     .kind = MGPU_EXTRA_SIZE,
     .value = &memory},
    {.name = NULL},
};

static const mgpu_program program = {
    .name = "test-prog",
    .strategy = "testing",
    .summary = "A program that only parses its options.",
    /* The in-process modes but nccl, so that a mode a program lacks is
     * tested with nccl too. */
    .exchanges = MGPU_STENCIL_EXCHANGES & ~MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_NCCL),
    .extra = extras,
};

/* ------------------------------------------------- capturing an output */

typedef struct capture {
    int fd;     /* the descriptor captured: 1 or 2 */
    int saved;  /* its original, to restore */
    FILE *file; /* where it writes meanwhile */
} capture;

static int capture_begin(capture *c, int fd)
{
    fflush(stdout);
    fflush(stderr);
    c->fd = fd;
    c->file = tmpfile();
    c->saved = dup(fd);
    if (c->file == NULL || c->saved < 0 || dup2(fileno(c->file), fd) < 0) {
        perror("test-options: capture");
        exit(99);
    }
    return 0;
}

/* Restore the descriptor and put what was written into TEXT. */
static void capture_end(capture *c, char *text, size_t size)
{
    size_t n;

    fflush(stdout);
    fflush(stderr);
    dup2(c->saved, c->fd);
    close(c->saved);
    rewind(c->file);
    n = fread(text, 1, size - 1, c->file);
    text[n] = '\0';
    fclose(c->file);
}

static int count_lines(const char *text)
{
    int lines = 0;

    for (const char *c = text; *c != '\0'; c++)
        lines += *c == '\n';
    return lines;
}

/* Drop the last newline, so that the text reads well inside a message. */
static void chomp(char *text)
{
    size_t n = strlen(text);

    if (n > 0 && text[n - 1] == '\n')
        text[n - 1] = '\0';
}

/* ------------------------------------------------------ running the parser */

static char err[MAX_OUTPUT]; /* stderr of the last parse, without its last newline */
static int err_lines;        /* and how many lines it had */
static char out[MAX_OUTPUT]; /* stdout of the last parse */

static void reset_extras(void)
{
    context = 0;
    chunks = 4;
    pipeline = 0;
    level = 2;
}

/* Parse the NULL-ended arguments after the program name, with the program's
 * extra options reset to their defaults; stdout and stderr land in OUT and
 * ERR. */
static int parse_args(mgpu_options *opt, const mgpu_program *prog, const char *arg, ...)
{
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    va_list ap;
    capture cout, cerr;
    int code;

    argv[argc++] = (char *) prog->name;
    va_start(ap, arg);
    for (; arg != NULL; arg = va_arg(ap, const char *)) {
        if (argc > MAX_ARGS) {
            fprintf(stderr, "test-options: more than %d arguments\n", MAX_ARGS);
            exit(99);
        }
        argv[argc++] = (char *) arg;
    }
    va_end(ap);
    argv[argc] = NULL;

    reset_extras();
    capture_begin(&cout, 1);
    capture_begin(&cerr, 2);
    code = mgpu_options_parse(opt, prog, argc, argv);
    capture_end(&cerr, err, sizeof err);
    capture_end(&cout, out, sizeof out);
    err_lines = count_lines(err);
    chomp(err);
    return code;
}

#define PARSE(opt, ...) parse_args(opt, &program, __VA_ARGS__, (const char *) NULL)

/* A usage error: code 2, one line on stderr that contains NAME. */
static void check_usage_error(const char *what, int code, const char *name)
{
    CHECK(code == 2 && err_lines == 1 && strstr(err, name) != NULL,
          "%s: exit 2, one line naming %s: %s", what, name, err);
}

/* Parse ARG alone, expecting a usage error that names OPTION. */
static void check_rejected(const char *arg, const char *option)
{
    mgpu_options opt;
    int code = PARSE(&opt, arg);

    check_usage_error(arg, code, option);
}

/* --------------------------------------------------------------- the tests */

static void test_defaults(void)
{
    mgpu_options opt;
    int code = PARSE(&opt, NULL);

    CHECK(code == -1, "no arguments: go on (got %d)", code);
    CHECK(opt.nx == 4096 && opt.ny == 4096, "default grid 4096 x 4096");
    CHECK(opt.steps == 100, "default steps 100");
    CHECK(opt.devices == 0, "default devices 0 (all)");
    CHECK(opt.backend == MGPU_BACKEND_AUTO, "default backend auto");
    CHECK(opt.kernel == MGPU_KERNEL_PATTERN2D, "default kernel pattern2d");
    CHECK(opt.exchange == MGPU_EXCHANGE_AUTO, "default exchange auto");
    CHECK(opt.verify == MGPU_VERIFY_AUTO, "default verify auto");
    CHECK(opt.repeat == 3 && opt.warmup == 1, "default repeat 3, warmup 1");
    CHECK(opt.format == MGPU_FORMAT_TABLE, "default format table");
    CHECK(opt.seed == 1, "default seed 1");
    CHECK(opt.baseline == 0 && opt.header == 1, "default no baseline, csv header");
    CHECK(opt.progress == MGPU_PROGRESS_AUTO, "default progress auto");
    CHECK(context == 0 && chunks == 4 && pipeline == 0, "extra options keep their defaults");
    CHECK(err[0] == '\0' && out[0] == '\0', "nothing printed");
}

static void test_every_option(void)
{
    mgpu_options opt;
    int code = PARSE(&opt, "--nx=10", "--ny", "12", "--steps=7", "--devices", "3", "--backend=host",
                     "--kernel", "jacobi", "--exchange=staged", "--verify=cpu", "--repeat=5",
                     "--warmup", "0", "--format=csv", "--seed=18446744073709551615", "--baseline",
                     "--no-header");

    CHECK(code == -1, "every option: go on (got %d) %s", code, err);
    CHECK(opt.nx == 10 && opt.ny == 12, "--nx=10 and --ny 12 both read");
    CHECK(opt.steps == 7 && opt.devices == 3, "steps 7, devices 3");
    CHECK(opt.backend == MGPU_BACKEND_HOST && opt.kernel == MGPU_KERNEL_JACOBI,
          "backend host, kernel jacobi");
    CHECK(opt.exchange == MGPU_EXCHANGE_STAGED && opt.verify == MGPU_VERIFY_CPU,
          "exchange staged, verify cpu");
    CHECK(opt.repeat == 5 && opt.warmup == 0, "repeat 5, warmup 0");
    CHECK(opt.format == MGPU_FORMAT_CSV && opt.header == 0, "csv without header");
    CHECK(opt.seed == UINT64_MAX, "seed 2^64-1");
    CHECK(opt.baseline == 1, "baseline on");

    code = PARSE(&opt, "--nx=3", "--ny=3", "--devices=1", "--seed=0", "--repeat=1000",
                 "--warmup=1000", "--steps=1");
    CHECK(code == -1 && opt.nx == 3 && opt.ny == 3 && opt.devices == 1 && opt.seed == 0 &&
              opt.repeat == 1000 && opt.warmup == 1000 && opt.steps == 1,
          "the smallest and largest accepted values (%s)", err);
    code = PARSE(&opt, "--ny=100", "--devices=64");
    CHECK(code == -1 && opt.devices == 64, "--devices=64 (MGPU_MAX_DEVICES) with 98 rows");
}

/* Every numeric option against every kind of bad number. */
static void test_bad_numbers(void)
{
    static const char *const options[] = {"nx",     "ny",     "steps", "devices",
                                          "repeat", "warmup", "seed"};
    static const char *const values[] = {"abc", "12x", "", " 5", "-5", "99999999999999999999999",
                                         "1.5", "0x10"};
    char arg[128], name[32];

    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        snprintf(name, sizeof name, "--%s", options[i]);
        for (size_t j = 0; j < sizeof values / sizeof values[0]; j++) {
            snprintf(arg, sizeof arg, "--%s=%s", options[i], values[j]);
            check_rejected(arg, name);
        }
    }
    /* Zero is too small for all but --warmup and --seed. */
    check_rejected("--nx=0", "--nx");
    check_rejected("--nx=2", "--nx");
    check_rejected("--ny=0", "--ny");
    check_rejected("--steps=0", "--steps");
    check_rejected("--devices=0", "--devices");
    check_rejected("--repeat=0", "--repeat");
    /* And each has a ceiling. */
    check_rejected("--devices=65", "--devices");
    check_rejected("--repeat=1001", "--repeat");
    check_rejected("--warmup=1001", "--warmup");
    check_rejected("--steps=1000000000000", "--steps");
    check_rejected("--seed=18446744073709551616", "--seed");
    check_rejected("--nx", "--nx"); /* no value at all */
}

static void test_messages(void)
{
    mgpu_options opt;
    int code = PARSE(&opt, "--nx=abc");

    CHECK(code == 2 && strcmp(err, "test-prog: --nx: 'abc' is not a number (accepted: an "
                                   "integer from 3 to 192153584101141162)") == 0,
          "the message of a non-number: %s", err);
    code = PARSE(&opt, "--steps=-1");
    CHECK(code == 2 && strstr(err, "'-1' is out of range (accepted: an integer from 1 to"),
          "the message of a number out of range: %s", err);
    code = PARSE(&opt, "--kernel=foo");
    CHECK(code == 2 && strcmp(err, "test-prog: --kernel: unknown 'foo' "
                                   "(accepted: pattern2d, jacobi)") == 0,
          "the message of an unknown name: %s", err);
    code = PARSE(&opt, "--seed=-1");
    CHECK(code == 2 && strstr(err, "--seed: '-1' is out of range"),
          "a negative seed is out of range, not wrapped: %s", err);
}

static void test_grid_limits(void)
{
    mgpu_options opt;
    int code = PARSE(&opt, "--nx=4000000000", "--ny=4000000000");

    check_usage_error("a 4e9 x 4e9 grid (2^62 bytes exceeded)", code, "--nx");
    code = PARSE(&opt, "--nx=1000000000", "--ny=576460752");
    CHECK(code == -1, "a grid just within 2^62 bytes is accepted (%s)", err);
    code = PARSE(&opt, "--nx=1000000000", "--ny=576460753");
    check_usage_error("a grid just beyond 2^62 bytes", code, "--ny");
    code = PARSE(&opt, "--ny=5", "--devices=4");
    check_usage_error("4 devices for 3 interior rows", code, "--devices");
    code = PARSE(&opt, "--ny=3", "--devices=2");
    check_usage_error("2 devices for 1 interior row", code, "--devices");
    code = PARSE(&opt, "--ny=5", "--devices=3");
    CHECK(code == -1, "3 devices for 3 interior rows are accepted (%s)", err);
}

static void test_names(void)
{
    mgpu_options opt;
    int code = PARSE(&opt, "--backend=cuda", "--verify=device", "--format=json");

    CHECK(code == -1 && opt.backend == MGPU_BACKEND_CUDA && opt.verify == MGPU_VERIFY_DEVICE &&
              opt.format == MGPU_FORMAT_JSON,
          "backend cuda, verify device, format json");
    code = PARSE(&opt, "--verify=none", "--format=table", "--exchange=auto");
    CHECK(code == -1 && opt.verify == MGPU_VERIFY_NONE && opt.format == MGPU_FORMAT_TABLE,
          "verify none, format table");
    for (int mode = MGPU_EXCHANGE_PEER; mode <= MGPU_EXCHANGE_MAPPED; mode++) {
        char arg[64];
        snprintf(arg, sizeof arg, "--exchange=%s", mgpu_exchange_name((mgpu_exchange) mode));
        code = PARSE(&opt, arg);
        CHECK(code == -1 && opt.exchange == (mgpu_exchange) mode, "%s", arg);
    }
    check_rejected("--backend=opencl", "--backend");
    check_rejected("--backend=", "--backend");
    check_rejected("--kernel=foo", "--kernel");
    check_rejected("--kernel=Jacobi", "--kernel");
    check_rejected("--exchange=bogus", "--exchange");
    check_rejected("--verify=maybe", "--verify");
    check_rejected("--format=xml", "--format");
}

static void test_exchange_mask(void)
{
    mgpu_options opt;
    int code = PARSE(&opt, "--exchange=ipc");

    check_usage_error("--exchange=ipc in a program without it", code, "--exchange");
    CHECK(strstr(err, "not supported by test-prog") != NULL &&
              strstr(err, "(supported: auto, peer, peer-async, staged, direct, mapped, managed)"),
          "the message names the supported modes: %s", err);
    check_rejected("--exchange=mpi", "--exchange");

    static const mgpu_program forked = {
        .name = "test-fork",
        .strategy = "fork",
        .exchanges = MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_IPC) | MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_STAGED),
    };
    code = parse_args(&opt, &forked, "--exchange=ipc", (const char *) NULL);
    CHECK(code == -1 && opt.exchange == MGPU_EXCHANGE_IPC, "ipc where the program has it");
    code = parse_args(&opt, &forked, "--exchange=peer", (const char *) NULL);
    CHECK(code == 2 && strstr(err, "(supported: auto, staged, ipc)"),
          "peer where the program lacks it: %s", err);
    code = parse_args(&opt, &forked, "--exchange=auto", (const char *) NULL);
    CHECK(code == -1 && opt.exchange == MGPU_EXCHANGE_AUTO, "auto is always accepted");
}

/* nccl is a mode only where the build has NCCL: elsewhere asking for it is
 * a usage error that says what is missing, in a program that implements it. */
static void test_exchange_nccl(void)
{
    mgpu_options opt;
    static const mgpu_program with_nccl = {
        .name = "test-nccl",
        .strategy = "single-thread",
        .exchanges = MGPU_STENCIL_EXCHANGES,
    };
    CHECK(strcmp(mgpu_exchange_name(MGPU_EXCHANGE_NCCL), "nccl") == 0, "exchange name nccl");
    int code = parse_args(&opt, &with_nccl, "--exchange=nccl", (const char *) NULL);
    if (mgpu_nccl_built())
        CHECK(code == -1 && opt.exchange == MGPU_EXCHANGE_NCCL, "nccl in a build with NCCL");
    else
        CHECK(code == 2 && strstr(err, "--exchange=nccl: this build has no NCCL") &&
                  strstr(err, "--with-nccl") && strchr(err, '\n') == NULL,
              "nccl in a build without NCCL: %s", err);
    code = PARSE(&opt, "--exchange=nccl");
    CHECK(code == 2 && strstr(err, "not supported by test-prog"),
          "nccl where the program lacks it: %s", err);
}

static void test_extra_options(void)
{
    mgpu_options opt;
    int code = PARSE(&opt, "--context=driver", "--chunks=8", "--pipeline");

    CHECK(code == -1 && context == 1 && chunks == 8 && pipeline == 1,
          "choice, integer and flag set (%d, %lld, %lld, %lld)", code, context, chunks, pipeline);
    code = PARSE(&opt, "--context", "runtime", "--chunks", "64");
    CHECK(code == -1 && context == 0 && chunks == 64, "extra options take --x v too");
    check_rejected("--context=foo", "--context");
    check_rejected("--chunks=0", "--chunks");
    check_rejected("--chunks=65", "--chunks");
    check_rejected("--chunks=abc", "--chunks");
    check_rejected("--pipeline=1", "--pipeline");
}

/* A size: bytes, or K, M, G or T of them (mgpu-streams --device-memory). */
static void test_size_option(void)
{
    mgpu_options opt;
    int code = PARSE(&opt, "--memory=64K");
    CHECK(code == -1 && memory == 65536, "--memory=64K is 65536 bytes (%lld)", memory);
    code = PARSE(&opt, "--memory", "3G");
    CHECK(code == -1 && memory == 3LL << 30, "--memory 3G, the value as the next word");
    code = PARSE(&opt, "--memory=1T");
    CHECK(code == -1 && memory == 1LL << 40, "--memory=1T, the largest allowed");
    code = PARSE(&opt, "--memory=12345");
    CHECK(code == -1 && memory == 12345, "a plain number of bytes");
    code = PARSE(&opt, "--memory=4X");
    CHECK(code == 2 && err_lines == 1 && strstr(err, "--memory: '4X' is not a size"),
          "an unknown unit: %s", err);
    check_rejected("--memory=2T", "--memory");
    check_rejected("--memory=64k", "--memory");
    check_rejected("--memory=64KB", "--memory");
    check_rejected("--memory=-1", "--memory");
    check_rejected("--memory=", "--memory");
    check_rejected("--memory=99999999999999999999", "--memory");
    code = PARSE(&opt, "--help");
    CHECK(strstr(out, "--memory=SIZE") != NULL, "--help names it a SIZE");
}

/* A choice that may stand alone (mgpu-streams --overlap). */
static void test_bare_choice(void)
{
    mgpu_options opt;
    int code = PARSE(&opt, "--level", "--nx=64");

    CHECK(code == -1 && level == 1 && opt.nx == 64, "--level alone is --level=on (%d, %lld)", code,
          level);
    code = PARSE(&opt, "--nx=64", "--level");
    CHECK(code == -1 && level == 1, "--level alone, last (%d, %lld)", code, level);
    code = PARSE(&opt, "--level=off");
    CHECK(code == -1 && level == 0, "--level=off (%d, %lld)", code, level);
    code = PARSE(&opt, "--level", "auto", "--nx=64");
    CHECK(code == -1 && level == 2 && opt.nx == 64, "--level auto, the value as the next word");
    code = PARSE(&opt, "--nx=64");
    CHECK(code == -1 && level == 2, "--level keeps its default");
    check_rejected("--level=bogus", "--level");
    check_rejected("--level=", "--level");
    code = PARSE(&opt, "--level", "bogus");
    check_usage_error("--level bogus: a stray argument", code, "bogus");
    code = PARSE(&opt, "--help");
    CHECK(strstr(out, "--level[=off|on|auto]") && strstr(out, "--level alone: on"),
          "--help: the bare form and its value");
}

/* --progress takes the forms of a choice that may stand alone, and
 * --no-progress is --progress=never. */
static void test_progress(void)
{
    mgpu_options opt;
    int code = PARSE(&opt, "--progress", "--nx=64");

    CHECK(code == -1 && opt.progress == MGPU_PROGRESS_ALWAYS && opt.nx == 64,
          "--progress alone is --progress=always");
    code = PARSE(&opt, "--progress=never");
    CHECK(code == -1 && opt.progress == MGPU_PROGRESS_NEVER, "--progress=never");
    code = PARSE(&opt, "--progress", "auto");
    CHECK(code == -1 && opt.progress == MGPU_PROGRESS_AUTO, "--progress auto, the next word");
    code = PARSE(&opt, "--progress", "--no-progress");
    CHECK(code == -1 && opt.progress == MGPU_PROGRESS_NEVER, "--no-progress, the last, wins");
    check_rejected("--progress=sometimes", "--progress");
    check_rejected("--no-progress=1", "--no-progress");
    code = PARSE(&opt, "--help");
    CHECK(strstr(out, "--progress[=WHEN]") && strstr(out, "auto|always|never"),
          "--help: --progress and its values");
}

static void test_bad_arguments(void)
{
    mgpu_options opt;
    int code;

    check_rejected("--bogus-option", "--bogus-option");
    check_rejected("-x", "-x");
    check_rejected("--help=all", "--help");
    code = PARSE(&opt, "--nx=10", "stray");
    check_usage_error("a stray argument", code, "stray");
    code = PARSE(&opt, "--", "--nx=10");
    check_usage_error("an argument after --", code, "--nx=10");
    code = PARSE(&opt, "--nx=10");
    CHECK(code == -1 && opt.nx == 10, "the parser starts over after errors");
}

static void test_help_and_version(void)
{
    mgpu_options opt;
    int code = PARSE(&opt, "--help");

    CHECK(code == 0 && err[0] == '\0', "--help returns 0, nothing on stderr");
    CHECK(strstr(out, "Usage: test-prog") != NULL, "--help: the usage line");
    CHECK(strstr(out, "A program that only parses its options.") != NULL, "--help: summary");
    CHECK(strstr(out, "--nx=N") && strstr(out, "--seed=N") && strstr(out, "--no-header") &&
              strstr(out, "--baseline") && strstr(out, "pattern2d|jacobi"),
          "--help: the common options");
    CHECK(strstr(out, "--context=runtime|driver") && strstr(out, "--chunks=N") &&
              strstr(out, "1 to 64 (default 4)") && strstr(out, "--pipeline"),
          "--help: the program's options, with defaults");
    CHECK(strstr(out, "auto|peer|peer-async|staged|direct|mapped") && !strstr(out, "ipc"),
          "--help: only the exchanges this program supports");
    CHECK(strstr(out, "MGPU_INJECT_FAULT=STEP:DEVICE") != NULL, "--help: the fault variable");
    CHECK(strstr(out, "0 success") && strstr(out, "1 run-time") && strstr(out, "2 usage"),
          "--help: the exit codes");
    code = PARSE(&opt, "-h");
    CHECK(code == 0 && strstr(out, "Usage") != NULL, "-h is --help");

    code = PARSE(&opt, "--version");
    CHECK(code == 0 && strcmp(out, "test-prog (mgpu) " MGPU_VERSION "\n") == 0,
          "--version prints the name and version");

    code = PARSE(&opt, "--list-exchanges");
    CHECK(code == 0 && err[0] == '\0' &&
              strcmp(out, "peer\npeer-async\nstaged\ndirect\nmapped\nmanaged\n") == 0,
          "--list-exchanges: the modes the program implements, one a line, no auto");
    CHECK(PARSE(&opt, "--list-exchanges=peer") == 2, "--list-exchanges takes no value");
}

static void test_error_function(void)
{
    capture c;

    capture_begin(&c, 2);
    mgpu_error(&program, "something %s at %d", "failed", 3);
    mgpu_error(NULL, "no program");
    capture_end(&c, err, sizeof err);
    chomp(err);
    CHECK(strcmp(err, "test-prog: something failed at 3\nmgpu: no program") == 0,
          "mgpu_error: NAME: message");
}

static void test_enum_names(void)
{
    CHECK(strcmp(mgpu_backend_name(MGPU_BACKEND_HOST), "host") == 0, "backend host");
    CHECK(strcmp(mgpu_kernel_name(MGPU_KERNEL_JACOBI), "jacobi") == 0, "kernel jacobi");
    CHECK(strcmp(mgpu_exchange_name(MGPU_EXCHANGE_PEER_ASYNC), "peer-async") == 0 &&
              strcmp(mgpu_exchange_name(MGPU_EXCHANGE_MPI), "mpi") == 0,
          "exchange names");
    CHECK(strcmp(mgpu_exchange_name(MGPU_EXCHANGE_COUNT), "unknown") == 0,
          "a value outside the enum is \"unknown\"");

    /* Each list is made from its enum's table: a name per value, in order. */
    int n = 0;
    while (mgpu_exchange_names[n] != NULL)
        n++;
    CHECK(n == MGPU_EXCHANGE_COUNT, "a name per exchange mode (%d names, %d modes)", n,
          MGPU_EXCHANGE_COUNT);
    CHECK(strcmp(mgpu_backend_names[MGPU_BACKEND_HOST], "host") == 0 &&
              mgpu_backend_names[MGPU_BACKEND_HOST + 1] == NULL &&
              strcmp(mgpu_kernel_names[MGPU_KERNEL_JACOBI], "jacobi") == 0 &&
              mgpu_kernel_names[MGPU_KERNEL_JACOBI + 1] == NULL &&
              strcmp(mgpu_verify_names[MGPU_VERIFY_NONE], "none") == 0 &&
              strcmp(mgpu_format_names[MGPU_FORMAT_JSON], "json") == 0 &&
              strcmp(mgpu_bind_names[MGPU_BIND_NONE], "none") == 0 &&
              strcmp(mgpu_progress_names[MGPU_PROGRESS_NEVER], "never") == 0 &&
              mgpu_progress_names[MGPU_PROGRESS_NEVER + 1] == NULL,
          "each names array indexed by its enum, NULL-ended");
}

static void test_name_lookup(void)
{
    char buf[64];

    CHECK(mgpu_name_find(mgpu_exchange_names, "peer-async") == MGPU_EXCHANGE_PEER_ASYNC &&
              mgpu_name_find(mgpu_backend_names, "auto") == MGPU_BACKEND_AUTO,
          "mgpu_name_find: the index of a name");
    CHECK(mgpu_name_find(mgpu_exchange_names, "Peer") == -1 &&
              mgpu_name_find(mgpu_exchange_names, "") == -1,
          "mgpu_name_find: -1 for no name of the list");
    mgpu_names_join(buf, sizeof buf, mgpu_exchange_names,
                    MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_STAGED) | MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_IPC),
                    ", ");
    CHECK(strcmp(buf, "staged, ipc") == 0, "mgpu_names_join: the masked names, in order: %s", buf);
    mgpu_names_join(buf, 10, mgpu_verify_names, MGPU_ALL_NAMES, "|");
    CHECK(strcmp(buf, "auto|cpu|") == 0, "mgpu_names_join: cut to its buffer: %s", buf);
    mgpu_names_join(buf, sizeof buf, mgpu_kernel_names, 0, "|");
    CHECK(buf[0] == '\0', "mgpu_names_join: no name selected, empty");
}

/* The stencil domain's modes: those lib/exchange.c moves halos in, not auto
 * (options.c adds it to every program) nor the strategies' own. */
static void test_exchange_table(void)
{
    unsigned modes = MGPU_STENCIL_EXCHANGES;
    CHECK(!(modes & MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_AUTO)), "auto is no mode of its own");
    for (int m = MGPU_EXCHANGE_PEER; m <= MGPU_EXCHANGE_MAPPED; m++)
        CHECK(modes & MGPU_EXCHANGE_BIT(m), "the domain moves halos in %s", mgpu_exchange_name(m));
    CHECK(modes & MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_NCCL), "and in nccl");
    CHECK(modes & MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_MANAGED), "and in managed");
    CHECK(!(modes & (MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_IPC) | MGPU_EXCHANGE_BIT(MGPU_EXCHANGE_MPI))),
          "ipc and mpi belong to the strategies (%#x)", modes);
}

/* The strict integer that every option and mgpu-p2p's and mgpu-compare's
 * numbers go through. */
static void test_parse_integer(void)
{
    long long n = 7;
    CHECK(mgpu_parse_integer("-42", &n) == 0 && n == -42, "-42 is -42");
    CHECK(mgpu_parse_integer("9223372036854775807", &n) == 0 && n == 9223372036854775807LL,
          "the largest long long");
    n = 7;
    CHECK(mgpu_parse_integer("", &n) == EINVAL && n == 7, "empty: EINVAL, left alone");
    CHECK(mgpu_parse_integer(" 1", &n) == EINVAL, "a blank first: EINVAL");
    CHECK(mgpu_parse_integer("12x", &n) == EINVAL && n == 7, "12x: EINVAL, left alone");
    CHECK(mgpu_parse_integer("-", &n) == EINVAL, "a sign alone: EINVAL");
    CHECK(mgpu_parse_integer("9223372036854775808", &n) == ERANGE && n == 7,
          "one more than fits: ERANGE, left alone");
}

int main(void)
{
    test_defaults();
    test_every_option();
    test_bad_numbers();
    test_messages();
    test_grid_limits();
    test_names();
    test_exchange_mask();
    test_exchange_nccl();
    test_extra_options();
    test_size_option();
    test_bare_choice();
    test_progress();
    test_bad_arguments();
    test_help_and_version();
    test_error_function();
    test_enum_names();
    test_name_lookup();
    test_exchange_table();
    test_parse_integer();
    return check_done();
}
