/* mgpu/harness.h - the program around a strategy: the command line
 * (lib/options.c, lib/names.c), stdout and its errors (lib/output.c), the
 * record (lib/record.c), binding workers to CPUs (lib/bind.c), verification
 * (lib/verify.c), the harness and its runs (lib/harness.c), the progress line
 * (lib/progress.c), failures of workers that meet at barriers
 * (lib/failure.c) and fault injection (lib/fault.c).
 */
#ifndef MGPU_HARNESS_H
#define MGPU_HARNESS_H

#include <stdint.h>
#include <stdio.h>

#include "mgpu.h"
#include "mgpu/measurement.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -------------------------------------------------------- command line */

/* --verify: against what a run's field is checked (doc/design.md section 5). */
#define MGPU_VERIFY_MAP(X) \
    X(AUTO, "auto")        \
    X(CPU, "cpu")          \
    X(DEVICE, "device")    \
    X(NONE, "none")

typedef enum mgpu_verify {
#define MGPU_VERIFY_VALUE_(suffix, name) MGPU_VERIFY_##suffix,
    MGPU_VERIFY_MAP(MGPU_VERIFY_VALUE_)
#undef MGPU_VERIFY_VALUE_
} mgpu_verify;
extern const char *const mgpu_verify_names[];

#define MGPU_FORMAT_MAP(X) \
    X(TABLE, "table")      \
    X(CSV, "csv")          \
    X(JSON, "json")

typedef enum mgpu_format {
#define MGPU_FORMAT_VALUE_(suffix, name) MGPU_FORMAT_##suffix,
    MGPU_FORMAT_MAP(MGPU_FORMAT_VALUE_)
#undef MGPU_FORMAT_VALUE_
} mgpu_format;
extern const char *const mgpu_format_names[];

/* --bind: where each worker runs (lib/bind.c, doc/design.md section 3). */
#define MGPU_BIND_MAP(X)                                                                \
    /* on the CPUs nearest its device (host backend: a share of the CPUs of its own) */ \
    X(AUTO, "auto")                                                                     \
    X(NONE, "none") /* where the operating system puts it */

typedef enum mgpu_bind {
#define MGPU_BIND_VALUE_(suffix, name) MGPU_BIND_##suffix,
    MGPU_BIND_MAP(MGPU_BIND_VALUE_)
#undef MGPU_BIND_VALUE_
} mgpu_bind;
extern const char *const mgpu_bind_names[];

/* --progress: a line of progress on stderr while the runs go (lib/progress.c). */
#define MGPU_PROGRESS_MAP(X)                        \
    X(AUTO, "auto") /* when stderr is a terminal */ \
    X(ALWAYS, "always")                             \
    X(NEVER, "never")

typedef enum mgpu_progress_when {
#define MGPU_PROGRESS_VALUE_(suffix, name) MGPU_PROGRESS_##suffix,
    MGPU_PROGRESS_MAP(MGPU_PROGRESS_VALUE_)
#undef MGPU_PROGRESS_VALUE_
} mgpu_progress_when;
extern const char *const mgpu_progress_names[];

typedef struct mgpu_options {
    long long nx, ny, steps;
    int devices; /* 0: every device (host backend: 2) */
    mgpu_backend backend;
    mgpu_kernel kernel;
    mgpu_exchange exchange;
    mgpu_verify verify;
    int repeat, warmup;
    mgpu_format format;
    uint64_t seed;
    int baseline; /* also time one device, for speedup */
    int header;   /* csv: print the header line */
    mgpu_bind bind;
    mgpu_progress_when progress;
    int halo;       /* halo rows a side, exchanged every HALO steps */
    int time_block; /* steps per pass over memory; 0: auto */
} mgpu_options;

/* An option of one program only: --NAME=VALUE.  With CHOICES (NULL-ended),
 * VALUE must be one of them and *VALUE gets its index; without, VALUE is an
 * integer in [MIN, MAX], or of KIND MGPU_EXTRA_SIZE a byte count in [MIN,
 * MAX] with an optional K, M, G or T (powers of 1024); of KIND
 * MGPU_EXTRA_FLAG, --NAME alone sets *VALUE to 1.  CHOICES with BARE, one
 * of them, also take --NAME alone, meaning --NAME=BARE (and --NAME CHOICE,
 * the value as the next word). */
enum { MGPU_EXTRA_VALUE = 0, MGPU_EXTRA_FLAG = 1, MGPU_EXTRA_SIZE = 2 };
typedef struct mgpu_extra_option {
    const char *name;
    const char *help;
    const char *const *choices;
    long long min, max;
    int kind; /* MGPU_EXTRA_VALUE, _FLAG or _SIZE */
    long long *value;
    const char *bare;
} mgpu_extra_option;

typedef struct mgpu_program {
    const char *name;               /* "mgpu-single" */
    const char *strategy;           /* "single-thread" */
    const char *summary;            /* one line for --help */
    unsigned exchanges;             /* modes it supports: MGPU_EXCHANGE_BIT set, as
                                       MGPU_STENCIL_EXCHANGES */
    const mgpu_extra_option *extra; /* ended by a NULL name; may be NULL */
    int forks;                      /* workers are processes: no CUDA here first */
    int binds_workers;              /* its workers bind themselves (mgpu_bind_worker);
                                       else one thread drives every device, and
                                       the harness binds it near the first device */
    int deep_halo;                  /* takes --halo and --time-block above 1 */
    const char *const *environment; /* variables of its own for --help: NAME,
                                       TEXT pairs ended by a NULL NAME; may be
                                       NULL */
} mgpu_program;

/* Parse the command line into OPT (defaults first).  Returns -1 to go on,
 * or the exit code: 0 after --help or --version, 2 after a usage error,
 * whose one-line message names the option and what it accepts. */
int mgpu_options_parse(mgpu_options *opt, const mgpu_program *program, int argc, char **argv);
/* Whether every slab of NY rows on DEVICES devices holds --halo=HALO rows
 * of its own to send: a usage error naming --halo if not. */
mgpu_status mgpu_halo_check(int halo, long long ny, int devices);

/* The whole of TEXT as a decimal integer, into *NUMBER: 0; or EINVAL when
 * it is not one (empty, a blank first, text after it), ERANGE when it does
 * not fit, and *NUMBER is left alone.  What strtoll alone lets through
 * ("" as 0, "12x" as 12) is how a typo changes what a benchmark measures. */
int mgpu_parse_integer(const char *text, long long *number);

/* Print "PROGRAM: MESSAGE" on stderr, in the one-line form every error takes. */
void mgpu_error(const mgpu_program *program, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* An entry of --help's option list within 80 columns (MGPU_HELP_WIDTH
 * characters a line at most), broken between words (a word longer than a
 * line stays whole): "  OPTION", TEXT from column 26 on (below OPTION when
 * it is longer than 22), its further lines indented as far, the form
 * help2man reads. */
#define MGPU_HELP_WIDTH 79
void mgpu_help_line(FILE *out, const char *option, const char *text);

/* Called first by a program that prints its result on stdout: a standard
 * descriptor that is closed gets /dev/null opened so that writes to it
 * still fail, and no file the program opens later takes its place. */
void mgpu_stdout_guard(void);

/* What every program calls first, before MPI_Init or any thread:
 * mgpu_stdout_guard; the CPUs the process may use taken while no worker is
 * bound, which bound every host-backend team whatever the OpenMP
 * environment asks; and SIGPIPE and SIGXFSZ ignored, so that a write to a
 * reader that has gone (EPIPE) or past the file-size limit (EFBIG) fails
 * and is said like any other (a program that executes another gives it
 * back their defaults). */
void mgpu_program_start(void);

/* Flush OUT after printing WHAT ("the record") there.  MGPU_ERR_SYSTEM,
 * with a message naming WHAT, when any of it could not be written; OUT's
 * error indicator is then cleared, so that the failure, reported once by
 * this status, is not reported again by mgpu_stdout_close. */
mgpu_status mgpu_output_flush(FILE *out, const char *what);

/* Called last, with the exit code CODE the program would return: flush and
 * close stdout.  When something printed there could not be written, one
 * line on stderr says so and the code becomes 1 (CODE itself when not 0). */
int mgpu_stdout_close(const mgpu_program *program, int code);

/* ------------------------------------------------------------ the record */

#define MGPU_RECORD_EXTRA 12

/* What a program's own field holds: a text, a number, or a boolean (1 true,
 * 0 false, below 0 not known: null), as it was last set. */
typedef enum mgpu_record_kind {
    MGPU_RECORD_TEXT,
    MGPU_RECORD_NUMBER,
    MGPU_RECORD_BOOLEAN
} mgpu_record_kind;

typedef struct mgpu_record_extra {
    const char *key;
    mgpu_record_kind kind;
    char text[64]; /* MGPU_RECORD_TEXT's */
    double number; /* MGPU_RECORD_NUMBER's */
    int boolean;   /* MGPU_RECORD_BOOLEAN's */
} mgpu_record_extra;

/* Which GPU a device of a run was (doc/record.md, gpu_list): the device's
 * number in the process that drove it, its name, its UUID and PCI address
 * (mgpu_device_info's; empty where not known).  On the host backend the
 * name is "host". */
typedef struct mgpu_gpu_id {
    int device;
    char name[96];
    char uuid[48];
    char pci_bus_id[24];
} mgpu_gpu_id;
/* DEVICE's, on the active backend.  Never fails: what cannot be found stays
 * empty, the name then "unknown". */
void mgpu_gpu_identify(int device, mgpu_gpu_id *gpu);

typedef struct mgpu_record {
    const char *program, *strategy;
    mgpu_backend backend;
    const char *backend_reason;
    mgpu_kernel kernel;
    mgpu_exchange exchange;
    int devices;
    long long nx, ny, steps;
    int repeats;
    int halo, time_block;     /* --halo; steps per pass as resolved */
    long long exchanges;      /* halo exchanges per run; <0: not known */
    size_t staging_chunk;     /* the staged exchange's chunk, bytes; 0: whole or none */
    mgpu_stats time;          /* seconds for all steps */
    double exchange_s;        /* the same steps with exchanges only; <0: not measured */
    double copy_gbytes_per_s; /* copy ceiling of the devices used; 0: not measured */
    double baseline_s;        /* one device, same run; 0: not measured */
    /* Where a step's time goes, seconds per step (<0: not measured): the
     * host issuing it, the host waiting (at barriers, for devices), and the
     * kernel of the largest part alone on its device. */
    double issue_step_s, wait_step_s, device_step_s;
    const char *verify; /* "cpu", "device", "none" */
    int verified;       /* 1 passed, 0 failed, -1 not checked */
    double max_error;
    double tolerance;
    /* When the run began (mgpu_record_init), seconds since 1970 UTC; the
     * record prints it as an ISO 8601 UTC timestamp (doc/record.md). */
    long long started;
    /* Which CPUs each device's worker ran on (mgpu_record_set_binding). */
    char binding[2048];
    int nextra;
    mgpu_record_extra extra[MGPU_RECORD_EXTRA];
    /* The devices' GPUs when told (mgpu_record_set_gpus: a group's
     * processes each know their own); when 0, the record finds them. */
    int gpus_told;
    const mgpu_gpu_id *gpu_list;
} mgpu_record;

/* Where and with what a run ran (doc/record.md): the GPUs of its DEVICES
 * (on BACKEND cuda; "host" otherwise), their names joined, the CUDA runtime
 * and driver versions (0 without CUDA), the driver's own version (NVML's,
 * empty where it cannot tell), the host name, and STARTED (seconds since
 * 1970) as an ISO 8601 UTC time; a text that could not be found is empty. */
typedef struct mgpu_machine {
    int ngpus;
    mgpu_gpu_id gpu[MGPU_MAX_DEVICES];
    char gpus[8 * 64]; /* the names, "; " between */
    long long runtime; /* cudaRuntimeGetVersion */
    long long driver;  /* cudaDriverGetVersion */
    char nvidia_driver[96];
    char hostname[256];
    char timestamp[32];
} mgpu_machine;
void mgpu_machine_find(mgpu_backend backend, int devices, long long started, mgpu_machine *m);
/* M and this build (mgpu_build) as a JSON object, the record's fields in
 * the record's order but for the binding (gpus ... nvidia_driver,
 * mgpu_revision, build_*): for a program that writes a JSON document of
 * its own (mgpu-p2p).  NULL when out of memory.  In builds with jansson
 * only. */
struct json_t;
struct json_t *mgpu_provenance_json(const mgpu_machine *m);
/* The same fields as CSV cells, each after a comma: their names (HEADER)
 * or their values as the record's CSV writes them (gpu_list as one cell
 * of JSON text), for a program that writes a CSV of its own (mgpu-p2p). */
mgpu_status mgpu_provenance_csv(const mgpu_machine *m, int header, FILE *out);

/* What this build of mgpu is, in every record after the machine
 * (doc/record.md): the revision it was built from (mgpu_revision) and what
 * configure built it with (build_cuda, ...), each KEY with its TEXT; the
 * last entry's KEY is NULL. */
typedef struct mgpu_build_field {
    const char *key, *text;
} mgpu_build_field;
extern const mgpu_build_field mgpu_build[];

/* The names of the record's fields that say where and when a run ran (its
 * machine: the GPUs, CUDA, the host, the time, the binding), in the
 * record's order, NULL-ended; mgpu_build's follow them in the record.
 * mgpu-compare's results.csv gives both for every run (doc/record.md). */
extern const char *const mgpu_record_machine_fields[];

/* The version of the record's layout, its first field ("schema"); raised
 * when a field changes name, unit or meaning (doc/record.md). */
#define MGPU_RECORD_SCHEMA 2

/* Fill the common fields from OPT and stamp the start time; time and
 * verification stay unset. */
void mgpu_record_init(mgpu_record *record, const mgpu_program *program, const mgpu_options *opt);
void mgpu_record_set_text(mgpu_record *record, const char *key, const char *text);
void mgpu_record_set_number(mgpu_record *record, const char *key, double number);
/* A yes-or-no field: true when VALUE is 1, false when 0, null (not known)
 * when below 0. */
void mgpu_record_set_boolean(mgpu_record *record, const char *key, int value);
/* The GPUs of the record's devices, COUNT of them in device order, when the
 * record cannot find them itself (a group's processes, each of which sees
 * its own); GPUS must outlive the record's printing. */
void mgpu_record_set_gpus(mgpu_record *record, const mgpu_gpu_id *gpus, int count);
/* What STENCIL, the run's domain, resolved: the exchange mode that ran
 * (auto resolved) and the chunk its staged exchange copies blocks in. */
void mgpu_record_set_stencil(mgpu_record *record, const mgpu_stencil *stencil);
/* Print the record: a table of fields, a CSV line (after a header when
 * HEADER), or one JSON object, and flush OUT (mgpu_output_flush: an error
 * when the record could not all be written). */
mgpu_status mgpu_record_print(const mgpu_record *record, mgpu_format format, int header, FILE *out);
/* Text as the record writes it, for programs that write their own CSV: one
 * CSV cell, quoted as RFC 4180 asks when it must be. */
void mgpu_csv_text(const char *text, FILE *out);

/* ------------------------------------------- binding workers (lib/bind.c) */

/* What each device's worker got: its CPUs as read back after binding, in
 * the cpulist form ("0-15,32-47"), or "none (WHY)".  Plain bytes, so that
 * worker processes can write it in memory they share with their parent. */
#define MGPU_BIND_TEXT 256
typedef struct mgpu_binding {
    char cpus[MGPU_MAX_DEVICES][MGPU_BIND_TEXT];
} mgpu_binding;

/* In a worker, before it makes its device current: bind the calling thread
 * as BIND asks to the CPUs nearest DEVICE (CUDA: its NUMA node's, by hwloc
 * or sysfs; host backend: share DEVICE of WORKERS of the process's CPUs),
 * and write what it got into CPUS (MGPU_BIND_TEXT bytes; NULL: nowhere).
 * When OMP_PROC_BIND or OMP_PLACES is set, OpenMP's placement is kept and
 * only read back.  Never fails: what cannot be bound is not, and CPUS says
 * why. */
void mgpu_bind_worker(mgpu_bind bind, int device, int workers, char *cpus);
/* Give the calling thread back the CPUs the process started with. */
void mgpu_bind_release(void);
/* The record's binding field from BINDING's first record->devices entries
 * (doc/record.md). */
void mgpu_record_set_binding(mgpu_record *record, const mgpu_binding *binding);

/* ------------------------------------------------------- verification */

/* Verify the FIELD a run produced against its reference, as OPT asks:
 * cpu (the C reference), device (one device of this build), or auto (cpu
 * for small problems, device otherwise).  Fills record->verify, verified,
 * max_error and tolerance.  MGPU_ERR_VERIFY when it differs. */
mgpu_status mgpu_verify_field(const float *field, const mgpu_options *opt, mgpu_record *record);

/* -------------------------------------------- host memory (host-memory.c) */

/* MGPU_OK when BYTES of host memory fit in what this process may still take
 * (what the machine has available, and what its cgroups' limits leave);
 * else MGPU_ERR_NOMEM with one line: WHAT (the options that ask for it),
 * how much it needs, how much there is and which limit says so.  A run
 * calls it before it allocates: past that room, Linux's out-of-memory
 * killer ends a program with SIGKILL and no word.  The harness checks
 * every stencil program's run (the devices' buffers, the result field and
 * its reference); a program with buffers of its own checks them. */
mgpu_status mgpu_host_memory_check(size_t bytes, const char *what);
/* How many processes the kernel's out-of-memory killer has killed since
 * the machine started (/proc/vmstat oom_kill), or -1 when unknown: a
 * parent compares it before and after a child that died of SIGKILL. */
long long mgpu_oom_kills(void);

/* ------------------------------------------------------ program harness */

/* What the harness asks of a strategy: run opt->steps steps of the grid on
 * NDEVICES devices, WARMUP times untimed and then REPEATS times, each time
 * from the initial field, and put the seconds of each timed run (from the
 * first step to the end of the last, devices synchronised) in SECONDS.  With
 * COMPUTE 0 the kernels are left out (the exchanges alone).  When FIELD is
 * not NULL, leave the final field there (nx*ny floats, outer rows too); in
 * a process of a group (mgpu_harness_group_start), only its own part: the interior
 * rows of slab RANK of mgpu_decompose's NDEVICES, nx floats apart. */
typedef struct mgpu_run {
    const mgpu_options *opt;
    int ndevices;
    int compute;
    int warmup, repeats;
    double *seconds;
    /* Of each timed run, the seconds the host spent waiting inside it (at
     * barriers, for devices), averaged over the threads or processes that
     * drove it; the rest of the run's time it spent issuing work.  Left
     * negative by a strategy that does not tell. */
    double *waited;
    float *field;
    mgpu_record *record; /* for the strategy's own fields */
    /* Where each device's worker writes what mgpu_bind_worker got; NULL
     * when nobody reads it (the runs not reported). */
    mgpu_binding *binding;
    /* Where the strategy tells how far it got (mgpu_progress_run, _step);
     * NULL in runs nobody watches. */
    struct mgpu_progress *progress;
    /* The library's: each timed run's seconds and wait per part, as
     * mgpu_run_keep_part keeps them, in memory that the processes a
     * strategy forks share with it. */
    double *part_times;
} mgpu_run;

/* What run R of RUN's warm-up and timed runs (0 to warmup+repeats-1)
 * measured, kept when it is a timed one: its SECONDS, and WAITED (negative:
 * not told).  For a strategy that times each run in one place. */
void mgpu_run_keep(mgpu_run *run, int r, double seconds, double waited);
/* The same for a strategy whose workers, threads or forked processes, each
 * time their own part PART: SECONDS from the start all share (a barrier) to
 * its end, WAITED of them at barriers and for its device.  Once the
 * strategy returns, a run takes as long as its slowest part, and its wait
 * is the parts' mean.  Each worker writes its own slot: no lock. */
void mgpu_run_keep_part(const mgpu_run *run, int r, int part, double seconds, double waited);

/* The CPU control field computed beside the devices (book 10.5, 10.6): the
 * record's cpu_control_s (CPU_S, the CPU's time on it), concurrent_s (BOTH_S,
 * the devices and the CPU at once) and cpu_control_hidden, the share of the
 * CPU's time that did not make the devices' run (DEVICES_S alone) longer,
 * from 0 to 1. */
void mgpu_record_cpu_control(mgpu_record *record, double devices_s, double cpu_s, double both_s);

/* The stencil domain that the options OPT ask for, NPARTS parts, every one
 * local: the grid, kernel, exchange, seed, halo, time block and steps (a
 * program that holds some of the parts, or moves the halos itself, changes
 * the fields it owns). */
mgpu_stencil_desc mgpu_stencil_desc_of(const mgpu_options *opt, int nparts);

/* The whole program around a strategy, driven from the program's main:
 *
 *     mgpu_harness *h = mgpu_harness_start(&program, argc, argv);
 *     for (mgpu_run *run; (run = mgpu_harness_next(h));)
 *         mgpu_harness_done(h, strategy(run));
 *     return mgpu_harness_end(h);
 *
 * mgpu_harness_start parses the command line, chooses the backend and
 * checks the request (device count against the grid, MGPU_INJECT_FAULT,
 * host memory).  mgpu_harness_next gives each phase of runs in turn: the
 * runs the record is about, then the exchanges alone, then one device when
 * --baseline; NULL once they are done, after a failure, or when the program
 * ends before its runs (--help, a usage error).  mgpu_harness_done takes how
 * the phase went.  mgpu_harness_end measures the copy ceiling and the device
 * time of a step, verifies, prints the record, closes stdout checked
 * (mgpu_stdout_close), frees the harness and returns the exit code: 0, 1
 * (failure, wrong result, lost record), 2 (usage).  With the program's
 * FORKS set, no CUDA call happens in this process before the runs (its
 * strategy forks workers), and the ceiling and verification come last. */
typedef struct mgpu_harness mgpu_harness;
mgpu_harness *mgpu_harness_start(const mgpu_program *program, int argc, char **argv);
mgpu_run *mgpu_harness_next(mgpu_harness *h);
void mgpu_harness_done(mgpu_harness *h, mgpu_status status);
int mgpu_harness_end(mgpu_harness *h);

/* The same loop around STRATEGY, called with CTX for each phase: for a
 * program whose main has nothing else to say. */
typedef mgpu_status (*mgpu_strategy_fn)(void *ctx, mgpu_run *run);
int mgpu_main(const mgpu_program *program, int argc, char **argv, mgpu_strategy_fn strategy,
              void *ctx);

/* ------------------------------------------ progress on stderr (progress.c) */

/* A long run shows how far it got on one line of stderr, redrawn in place
 * (a carriage return) a few times a second: the run and the step, steps a
 * second, the time left.  The harness opens a phase of runs (the timed runs,
 * the exchanges alone, one device), the strategy says when each run begins
 * and how many steps it has issued, from the thread or process that drives
 * part 0.  The steps told are those issued: on a GPU the host may be ahead
 * of the devices by what their queues hold, until each run's end waits.
 * Every call takes NULL, and does nothing when progress is off.  The
 * fields are the library's. */
typedef struct mgpu_progress {
    FILE *out;
    int on;
    long long steps;  /* a run's */
    double cells;     /* interior cells of the grid */
    const char *what; /* the phase: NULL for the runs the record is about */
    int warmup, runs, compute;
    int run;             /* the run going, -1 before the first */
    long long base;      /* steps of the phase's earlier runs */
    long long next;      /* look at the clock once the phase has this many */
    double start, drawn; /* the phase's first run began; the line was drawn */
    int width;           /* of the line on the screen, 0: none */
} mgpu_progress;

/* On as OPT->progress asks (auto: when OUT is a terminal). */
void mgpu_progress_init(mgpu_progress *progress, const mgpu_options *opt, FILE *out);
/* A phase of WARMUP + REPEATS runs, called WHAT (NULL: the runs the record
 * is about); COMPUTE 0 when they leave the kernels out. */
void mgpu_progress_begin(mgpu_progress *progress, const char *what, int warmup, int repeats,
                         int compute);
/* Run R of the phase (from 0, the warm-up runs first) begins. */
void mgpu_progress_run(mgpu_progress *progress, int run);
/* DONE steps of the run are issued.  Costs a comparison: the clock is read
 * only every so many steps, as many as take about a twentieth of a second. */
void mgpu_progress_step(mgpu_progress *progress, long long done);
/* A stage without steps, such as the verification, shown at once. */
void mgpu_progress_note(mgpu_progress *progress, const char *what);
/* Clear the line, before the record or an error is printed. */
void mgpu_progress_end(mgpu_progress *progress);
/* The line is drawn by another process (mgpu-fork's worker 0, which may be
 * killed before it can clear it): this one's end blanks a whole line. */
void mgpu_progress_elsewhere(mgpu_progress *progress);

/* ------------------------------------- workers that meet at barriers */

/* Worker threads that step together through barriers (mgpu-pthread,
 * mgpu-openmp) share one mgpu_failure.  A worker that fails neither leaves
 * nor is cancelled, since the others would then wait for it forever at the
 * next barrier: it records the failure and keeps arriving, and after the
 * next barrier every worker sees the failure and all leave together.
 *
 * All must decide alike, so the barriers are numbered in the order every
 * worker passes them.  A failure is recorded with the number of the next
 * barrier its worker reaches, and a worker asks about the barrier it has
 * just passed: when a fast worker fails after barrier K while a slow one
 * has not yet asked about K, the slow one does not see that failure (and
 * leave) early, and all see it after barrier K+1, which everyone reaches.
 *
 * Worker processes (mgpu-fork) share one in memory they all map, each
 * recording its failure before barrier 0 and the parent reading the first
 * once they have ended; a worker killed while recording leaves none. */
typedef struct mgpu_failure {
    long long barrier; /* before which the first failure happened; read and
                          written atomically; above every barrier while none
                          (LLONG_MAX) or while being recorded */
    mgpu_status status;
    char message[512];
} mgpu_failure;

void mgpu_failure_init(mgpu_failure *failure);
/* Record STATUS, with this thread's mgpu_last_error(), as a failure before
 * barrier BARRIER.  The first failure recorded is kept. */
void mgpu_failure_record(mgpu_failure *failure, mgpu_status status, long long barrier);
/* After passing barrier BARRIER: 1 when some worker failed before it. */
int mgpu_failure_before(const mgpu_failure *failure, long long barrier);
/* In the thread that reports, once the workers are done: the first failure's
 * status (MGPU_OK when none), its message made this thread's
 * mgpu_last_error(), which the harness prints. */
mgpu_status mgpu_failure_status(const mgpu_failure *failure);

/* ------------------------------------------------------ fault injection */

/* MGPU_INJECT_FAULT=STEP:DEVICE makes worker DEVICE fail at step STEP.
 * Returns MGPU_ERR_FAULT (with a message) when PART must fail at STEP. */
mgpu_status mgpu_fault_check(int part, long long step);
/* mgpu_fault_check for every part below NPARTS and every step of [FIRST,
 * FIRST+COUNT): for work issued ahead as a whole, a graph's replay. */
mgpu_status mgpu_fault_check_steps(int nparts, long long first, long long count);
/* Before any run: MGPU_ERR_USAGE, naming the variable, when the fault asked
 * for is malformed or can never fire in a run of NDEVICES devices and
 * STEPS steps. */
mgpu_status mgpu_fault_validate(int ndevices, long long steps);

/* MGPU_INJECT_DELAY=US:DEVICE: DEVICE is slow, by US microseconds at each
 * exchange, so that its neighbours run ahead of it (mgpu-persistent's
 * kernels sleep after each wait for their neighbours; a test of the order
 * their flags keep).  Into *DEVICE and *US: the device, or -1 and 0 when
 * the variable is unset; MGPU_ERR_USAGE, naming the variable and what it
 * accepts, when it is not US:DEVICE with US from 1 to MGPU_DELAY_MAX_US
 * and DEVICE one of the run's NDEVICES. */
enum { MGPU_DELAY_MAX_US = 60000000 };
mgpu_status mgpu_delay_requested(int ndevices, int *device, long long *us);

#ifdef __cplusplus
}
#endif

#endif /* MGPU_HARNESS_H */
