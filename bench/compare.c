/* compare.c - mgpu-compare: every built strategy program side by side.
 *
 * main takes the command line (compare-options.c), then runs a comparison
 * or reads finished ones (--from, compare-row.c and compare-sets.c), and
 * puts the rows out: derived, written as one set into the output folder
 * (compare-report.c, compare-plot.c, compare-output.c), then printed.  A
 * comparison finds each strategy program next to itself (installed) or in
 * the build tree (bench/../single_thread/mgpu-single, ...), asks it for its
 * exchange modes (--list-exchanges), and runs it on 1 device and on each
 * larger device count with each mode (and, with --sizes and --halo, at
 * every grid and halo depth) as a child process (compare-spawn.c), whose
 * JSON record becomes the run's row.  Speedup and efficiency are against
 * the program's own 1-device run of this comparison, never a number from
 * another day. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "compare.h"
#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/processes.h"

/* Open MPI binds each of two ranks or fewer to one core (more: to a
 * socket), where the rank's verification and first touch then run on that
 * core alone, far slower than on 4 ranks (BENCHMARKS.md section 23).
 * Unbound, the ranks are placed by --bind as every other program's workers
 * are.  Not where the launcher places them itself (a --bind-to or --map-by
 * among its words: a mapping implies a binding, which the environment's
 * policy would override), nor where the user set the policy.  Open MPI 4 reads the first name, the
 * mpirun of Open MPI 5 (PRRTE) the second (not tried here); nothing else
 * reads either. */
static void unbind_ranks(const cmp_options *opt)
{
    for (int i = 0; opt->launcher[i]; i++)
        if (strstr(opt->launcher[i], "bind-to") || strstr(opt->launcher[i], "map-by"))
            return;
    setenv("OMPI_MCA_hwloc_base_binding_policy", "none", 0);
    setenv("PRTE_MCA_hwloc_default_binding_policy", "none", 0);
}

/* ------------------------------------------------------------ discovery */

/* The folder this program lives in.  In the build tree, linked with the
 * shared library, it runs from .libs/ under that folder, started by the
 * wrapper script libtool puts in the folder. */
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
    size_t len = strlen(self);
    if (len > 6 && strcmp(self + len - 6, "/.libs") == 0)
        self[len - 6] = '\0';
    snprintf(dir, size, "%s", self);
}

/* Installed programs sit side by side; in the build tree each strategy
 * has its folder beside bench/. */
static int find_program(const char *dir, const cmp_strategy *s, char *path, size_t size)
{
    if ((size_t) snprintf(path, size, "%s/%s", dir, s->program) < size && access(path, X_OK) == 0)
        return 1;
    return (size_t) snprintf(path, size, "%s/../%s/%s", dir, s->folder, s->program) < size &&
           access(path, X_OK) == 0;
}

typedef struct program {
    const cmp_strategy *s;
    char path[PATH_MAX];
    unsigned modes; /* MGPU_EXCHANGE_BIT set */
} program;

/* The words of a command line, and room for the text they point into:
 * the launcher's words with %n replaced, the program and its options
 * (short names and numbers that the options checked) always fit. */
typedef struct command {
    char *argv[CMP_LAUNCHER_WORDS + 32];
    int argc;
    char launch[CMP_LAUNCHER_WORDS][CMP_LAUNCHER_WORD_MAX + 1]; /* the launcher's, %n a number */
    char args[16][64];
    int nargs; /* args used */
} command;

/* WORD with each %n replaced by NP and each %% by %, into OUT (SIZE
 * bytes); false when it does not fit. */
static bool expand_ranks(const char *word, int np, char *out, size_t size)
{
    size_t used = 0;
    for (const char *c = word; *c; c++) {
        int escape = c[0] == '%' && (c[1] == 'n' || c[1] == '%');
        int n = escape && c[1] == 'n' ? snprintf(out + used, size - used, "%d", np)
                                      : snprintf(out + used, size - used, "%c", *c);
        if (n < 0 || (size_t) n >= size - used)
            return false;
        used += (size_t) n;
        c += escape;
    }
    return true;
}

/* PROG's command: itself, or (mgpu-mpi) the launcher's words for NP ranks
 * before it.  More words follow with add(). */
static void command_of(command *cmd, const cmp_options *opt, const program *prog, int np)
{
    cmd->argc = cmd->nargs = 0;
    if (strcmp(prog->s->name, "mpi") == 0) {
        for (; opt->launcher[cmd->argc]; cmd->argc++) {
            char *word = cmd->launch[cmd->argc];
            /* parse_launcher let through no word that %n's digits would
             * take past its room. */
            (void) expand_ranks(opt->launcher[cmd->argc], np, word, sizeof cmd->launch[0]);
            cmd->argv[cmd->argc] = word;
        }
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
static void add_option(command *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd->args[cmd->nargs], sizeof cmd->args[cmd->nargs], fmt, ap);
    va_end(ap);
    add(cmd, cmd->args[cmd->nargs++]);
}

typedef struct plan {
    const cmp_options *opt;
    const char *backend;
    long long nx, ny, steps; /* of the runs now */
    int halo;                /* of the runs now */
    int sizes;               /* how many grid sizes the comparison runs at */
    int total, done;
    int failures, passed;
} plan;

/* The options of a run on DEVICES devices with EXCHANGE, added to CMD. */
static void add_run_options(command *cmd, const plan *pl, int devices, const char *exchange)
{
    const cmp_options *opt = pl->opt;
    add_option(cmd, "--backend=%s", pl->backend);
    add_option(cmd, "--nx=%lld", pl->nx);
    add_option(cmd, "--ny=%lld", pl->ny);
    add_option(cmd, "--steps=%lld", pl->steps);
    add_option(cmd, "--devices=%d", devices);
    add_option(cmd, "--exchange=%s", exchange);
    add_option(cmd, "--kernel=%s", mgpu_kernel_names[opt->kernel]);
    add_option(cmd, "--repeat=%lld", opt->repeat);
    add_option(cmd, "--warmup=%lld", opt->warmup);
    add_option(cmd, "--verify=%s", mgpu_verify_names[opt->verify]);
    add_option(cmd, "--bind=%s", mgpu_bind_names[opt->bind]);
    /* --time-block is each program's auto: T follows K (doc/design.md). */
    add_option(cmd, "--halo=%d", pl->halo);
    add(cmd, "--format=json");
}

/* What every program would refuse in the options mgpu-compare gives it (a
 * grid too large, more devices than interior rows) is refused here, before
 * anything runs, by the parser the programs use: -1 to go on, or 2 after
 * its one line, which names mgpu-compare's option; a size of --sizes is
 * named first ("mgpu-compare: --sizes: 24x4: --devices: ..."). */
static int check_run_options(const plan *pl, int devices)
{
    static command cmd;
    cmd.argc = cmd.nargs = 0;
    add(&cmd, COMPARE_NAME);
    add_run_options(&cmd, pl, devices, "auto");
    mgpu_options parsed;
    char name[96];
    if (pl->opt->sizes.count)
        snprintf(name, sizeof name, "%s: --sizes: %lldx%lld", COMPARE_NAME, pl->nx, pl->ny);
    else
        snprintf(name, sizeof name, "%s", COMPARE_NAME);
    /* Deep halos allowed: a program that takes none says so when it runs
     * (a skipped row); a depth no slab holds is refused here. */
    mgpu_program self = {.name = name, .exchanges = ~0u, .deep_halo = 1};
    return mgpu_options_parse(&parsed, &self, cmd.argc, cmd.argv) == 2 ? 2 : -1;
}

/* How long the question of a program's modes may take: --timeout, and at
 * most a minute (an answer takes well under a second; mpirun's start, a
 * few). */
#define MODES_TIMEOUT_S 60

/* The exchange modes PROG implements, as its --list-exchanges prints them:
 * one a line.  A line that names no mode mgpu-compare knows is passed over. */
static int read_modes(const cmp_options *opt, program *prog, char *error, size_t size)
{
    static command cmd;
    command_of(&cmd, opt, prog, 1);
    add(&cmd, "--list-exchanges");
    cmp_output out;
    long long limit = opt->timeout < MODES_TIMEOUT_S ? opt->timeout : MODES_TIMEOUT_S;
    if (cmp_spawn(cmd.argv, NULL, (double) limit, &out, error, size) != 0) {
        cmp_output_free(&out);
        return -1;
    }
    if (out.timed_out) {
        snprintf(error, size,
                 "%s --list-exchanges: stopped after %lld s (--timeout, at most %d s "
                 "for this question)",
                 prog->path, limit, MODES_TIMEOUT_S);
        cmp_output_free(&out);
        return -1;
    }
    prog->modes = 0;
    char *list = out.exit_code == 0 ? out.out : NULL;
    for (char *save = NULL, *m = list ? strtok_r(list, "\n", &save) : NULL; m;
         m = strtok_r(NULL, "\n", &save)) {
        int e = mgpu_name_find(mgpu_exchange_names, m);
        if (e >= CMP_FIRST_MODE)
            prog->modes |= MGPU_EXCHANGE_BIT(e);
    }
    /* One line: what it said last, plain (it may be a launcher's garbage). */
    char ended[96], last[200];
    cmp_ended(&out, ended, sizeof ended);
    cmp_last_line(out.err, NULL, last, sizeof last);
    if (!prog->modes)
        snprintf(error, size, "%s --list-exchanges names no exchange mode (%s)%s%s", prog->path,
                 ended, last[0] ? ": " : "", last);
    cmp_output_free(&out);
    return prog->modes ? 0 : -1;
}

/* ---------------------------------------------------------------- running */

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

/* What ROW asks: strategy S on DEVICES devices with EXCHANGE, at PL's grid
 * and halo now. */
static void row_asked(cmp_row *row, const plan *pl, const cmp_strategy *s, int devices,
                      const char *exchange)
{
    snprintf(row->program, sizeof row->program, "%s", s->program);
    snprintf(row->strategy, sizeof row->strategy, "%s", s->name);
    snprintf(row->exchange, sizeof row->exchange, "%s", exchange);
    snprintf(row->backend, sizeof row->backend, "%s", pl->backend);
    snprintf(row->kernel, sizeof row->kernel, "%s", mgpu_kernel_names[pl->opt->kernel]);
    row->devices = devices;
    row->nx = pl->nx;
    row->ny = pl->ny;
    row->steps = pl->steps;
    row->repeats = (int) pl->opt->repeat;
    row->halo = pl->halo;
}

/* A failed row for strategy S, which could not even say its modes: on one
 * device at PL's grid and halo now, WHY its reason.  -1 when out of
 * memory. */
static int probe_failed(plan *pl, const cmp_strategy *s, const char *why, cmp_rows *rows)
{
    cmp_row *row = cmp_rows_add(rows);
    if (!row) {
        fprintf(stderr, "%s: out of memory\n", COMPARE_NAME);
        return -1;
    }
    row_asked(row, pl, s, 1, mgpu_exchange_name(MGPU_EXCHANGE_AUTO));
    row->status = RUN_FAILED;
    snprintf(row->reason, sizeof row->reason, "%.*s", (int) sizeof row->reason - 1, why);
    cmp_plain_text(row->reason);
    pl->failures++;
    return 0;
}

/* Whether the usage error (exit 2) whose line is REASON is the program
 * NAME's own refusal of what the backend or the devices cannot do (a
 * skipped row), not a failed start: a launcher's own exit 2, or a launch
 * mgpu-mpi found to be other than asked. */
static int refused_here(const char *name, const char *reason)
{
    size_t n = strlen(name);
    return strncmp(reason, name, n) == 0 && strncmp(reason + n, ": ", 2) == 0 &&
           strncmp(reason + n + 2, MGPU_LAUNCH_REFUSAL, strlen(MGPU_LAUNCH_REFUSAL)) != 0;
}

static void run_one(plan *pl, const program *prog, int devices, const char *exchange, cmp_row *row)
{
    const cmp_options *opt = pl->opt;
    static command cmd;
    command_of(&cmd, opt, prog, devices);
    add_run_options(&cmd, pl, devices, exchange);
    row_asked(row, pl, prog->s, devices, exchange);

    char grid[96] = "";
    if (pl->sizes > 1)
        snprintf(grid, sizeof grid, "%lld x %lld, ", pl->nx, pl->ny);
    if (opt->nhalos > 1)
        snprintf(grid + strlen(grid), sizeof grid - strlen(grid), "halo %d, ", pl->halo);
    fprintf(stderr, "%s: [%*d/%d] %s%s, %d device%s, %s ... ", COMPARE_NAME,
            pl->total >= 10 ? 2 : 1, ++pl->done, pl->total, grid, prog->s->program, devices,
            devices == 1 ? "" : "s", exchange);
    fflush(stderr);
    cmp_output out;
    char error[256];
    if (cmp_spawn(cmd.argv, NULL, (double) opt->timeout, &out, error, sizeof error) != 0) {
        row->status = RUN_FAILED;
        snprintf(row->reason, sizeof row->reason, "%s", error);
        cmp_plain_text(row->reason);
    } else {
        const char *record = last_record(out.out);
        char why[200] = "";
        /* Into a copy: a record that breaks a rule leaves the row as asked. */
        cmp_row checked = *row;
        json_t *object = record ? cmp_json_load(record, strcspn(record, "\n"), why, sizeof why)
                                : NULL;
        int parsed = object && cmp_row_from_object(&checked, object, 0, why, sizeof why) == 0;
        json_decref(object);
        if (parsed && checked.halo != pl->halo) {
            json_decref(checked.record);
            snprintf(why, sizeof why, "\"halo\": %d, not the --halo=%d it was given", checked.halo,
                     pl->halo);
            parsed = 0;
        }
        if (parsed)
            *row = checked;
        cmp_last_line(out.err, prog->s->program, row->reason, sizeof row->reason);
        if (out.exit_code == 0 && parsed && row->verified != 0) {
            row->status = RUN_OK;
            row->reason[0] = '\0';
        } else if (out.exit_code == 2 && refused_here(prog->s->program, row->reason)) {
            row->status = RUN_SKIPPED; /* this mode or count is not for here */
        } else {
            row->status = RUN_FAILED;
            if (out.timed_out)
                snprintf(row->reason, sizeof row->reason, "stopped after %lld s (--timeout)",
                         opt->timeout);
            else if (out.signal)
                cmp_ended(&out, row->reason, sizeof row->reason);
            else if (out.exit_code == 0)
                snprintf(row->reason, sizeof row->reason, "its record: %s",
                         record ? why : "no JSON line on stdout");
            else if (!row->reason[0])
                snprintf(row->reason, sizeof row->reason, "exit %d", out.exit_code);
        }
        if (cmp_interrupted())
            fprintf(stderr, "stopped\n");
        else if (row->status == RUN_OK)
            fprintf(stderr, "%.1f us/step, %s (%.1f s)\n", row->us_per_step,
                    row->verified > 0 ? "verified" : "not verified", out.seconds);
        else
            fprintf(stderr, "%s: %s\n", cmp_status_name(row->status), row->reason);
    }
    cmp_output_free(&out);
    pl->failures += row->status == RUN_FAILED;
    pl->passed += row->status == RUN_OK;
}

/* The device counts to run: the ones asked for, or 1, 2, 4, ... and all. */
static int device_counts(const cmp_options *opt, int available, int *counts)
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
    for (int e = CMP_FIRST_MODE; e < MGPU_EXCHANGE_COUNT; e++)
        n += (modes & MGPU_EXCHANGE_BIT(e)) != 0;
    return n;
}

static int compare(const cmp_options *opt, const char *argv0, cmp_rows *rows)
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
    /* Without --sizes, one size: --nx and --ny, or the backend's default. */
    cmp_size one = {.nx = opt->nx ? opt->nx
                          : cuda  ? 16384
                                  : 512,
                    .ny = opt->ny ? opt->ny
                          : cuda  ? 16384
                                  : 512};
    const cmp_size *sizes = opt->sizes.count ? opt->sizes.size : &one;
    pl.sizes = opt->sizes.count ? opt->sizes.count : 1;
    pl.steps = opt->steps ? opt->steps : cuda ? 200 : 20;
    int counts[MGPU_MAX_DEVICES + 1];
    int ncounts = device_counts(opt, available, counts);
    int most = counts[ncounts - 1];
    if (cuda && most > gpus)
        return cmp_usage("--devices: %d asked, but %d CUDA device%s exist", most, gpus,
                         gpus == 1 ? "" : "s");
    for (int z = 0; z < pl.sizes; z++) {
        pl.nx = sizes[z].nx;
        pl.ny = sizes[z].ny;
        /* The deepest halo on the most devices has the thinnest slabs. */
        pl.halo = opt->halos[opt->nhalos - 1];
        if (check_run_options(&pl, most) >= 0)
            return 2;
    }

    /* The first grid and depth: those of a program's failed row when it
     * cannot be asked for its modes (the runs set their own below). */
    pl.nx = sizes[0].nx;
    pl.ny = sizes[0].ny;
    pl.halo = opt->halos[0];

    /* Open MPI's mpirun refuses to run as root unless told so; benchmarks
     * in containers run as root.  Nothing but Open MPI reads these. */
    if (geteuid() == 0) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
    }
    unbind_ranks(opt);
    char dir[PATH_MAX];
    own_folder(argv0, dir, sizeof dir);
    program progs[CMP_NSTRATEGIES];
    int nprogs = 0;
    unsigned offered = 0; /* the modes of the programs found, before --exchanges */
    for (int i = 0; i < CMP_NSTRATEGIES; i++) {
        if (opt->strategies && !(opt->strategies & (1u << i)))
            continue;
        program *p = &progs[nprogs];
        p->s = &cmp_strategies[i];
        if (!find_program(dir, p->s, p->path, sizeof p->path)) {
            fprintf(stderr, "%s: %s is not built: skipped\n", COMPARE_NAME, p->s->program);
            continue;
        }
        char error[512];
        if (read_modes(opt, p, error, sizeof error) != 0) {
            /* A program that was built but cannot be asked (its launcher
             * failed, it hung or crashed) failed: a row says so. */
            fprintf(stderr, "%s: %s: FAILED\n", COMPARE_NAME, error);
            if (probe_failed(&pl, p->s, error, rows) != 0)
                return 1;
            continue;
        }
        offered |= p->modes;
        if (opt->exchanges)
            p->modes &= opt->exchanges;
        if (p->modes)
            nprogs++;
    }
    /* Programs were found, and --exchanges named none of their modes: a
     * usage error, not "no program" (nccl in a build without NCCL, ipc with
     * --strategies=single). */
    if (nprogs == 0 && offered) {
        char asked[256], have[256];
        mgpu_names_join(asked, sizeof asked, mgpu_exchange_names, opt->exchanges, ",");
        mgpu_names_join(have, sizeof have, mgpu_exchange_names, offered, ",");
        return cmp_usage("--exchanges: no program run here has %s (accepted with these "
                         "programs: some of %s)",
                         asked, have);
    }
    if (nprogs == 0) {
        /* Programs that could not be asked have their failed rows. */
        if (pl.failures == 0)
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
    pl.total *= pl.sizes * opt->nhalos;
    char depths[64] = "";
    if (opt->nhalos > 1)
        snprintf(depths, sizeof depths, ", %d halo depths", opt->nhalos);
    else if (opt->halos[0] > 1)
        snprintf(depths, sizeof depths, ", halo %d", opt->halos[0]);
    if (pl.sizes == 1)
        fprintf(stderr, "%s: %s backend, %s %lld x %lld, %lld steps%s: %d runs\n", COMPARE_NAME,
                pl.backend, mgpu_kernel_names[opt->kernel], sizes[0].nx, sizes[0].ny, pl.steps,
                depths, pl.total);
    else
        fprintf(stderr,
                "%s: %s backend, %s at %d grid sizes, %lld x %lld to %lld x %lld, %lld "
                "steps%s: %d runs\n",
                COMPARE_NAME, pl.backend, mgpu_kernel_names[opt->kernel], pl.sizes, sizes[0].nx,
                sizes[0].ny, sizes[pl.sizes - 1].nx, sizes[pl.sizes - 1].ny, pl.steps, depths,
                pl.total);
    /* Smallest grid first: the sizes where the strategies differ most come
     * back soonest. */
    for (int z = 0; z < pl.sizes && !cmp_interrupted(); z++) {
        pl.nx = sizes[z].nx;
        pl.ny = sizes[z].ny;
        for (int p = 0; p < nprogs && !cmp_interrupted(); p++) {
            /* A program's depths side by side, each with its own 1-device
             * run first. */
            for (int k = 0; k < opt->nhalos && !cmp_interrupted(); k++) {
                pl.halo = opt->halos[k];
                for (int c = 0; c < ncounts && !cmp_interrupted(); c++) {
                    for (int e = 0; e < MGPU_EXCHANGE_COUNT && !cmp_interrupted(); e++) {
                        /* One device: one run, its mode auto (which no
                         * program lists), as its one part exchanges with
                         * nobody or, jacobi's, with itself; more, each mode. */
                        if (counts[c] == 1 ? e != MGPU_EXCHANGE_AUTO
                                           : !(progs[p].modes & MGPU_EXCHANGE_BIT(e)))
                            continue;
                        cmp_row *row = cmp_rows_add(rows);
                        if (!row) {
                            fprintf(stderr, "%s: out of memory\n", COMPARE_NAME);
                            return 1;
                        }
                        run_one(&pl, &progs[p], counts[c], mgpu_exchange_name((mgpu_exchange) e),
                                row);
                        /* A run stopped by our own SIGINT or SIGTERM did
                         * not fail: no row for it. */
                        if (cmp_interrupted())
                            rows->count--;
                    }
                }
            }
        }
    }
    return pl.failures ? 1 : 0;
}

/* ------------------------------------------------------------------ main */

/* 1 when no run of ROWS succeeded, after a line that says so. */
static int none_succeeded(const cmp_rows *rows)
{
    int failed = 0, skipped = 0;
    for (int i = 0; i < rows->count; i++) {
        if (rows->row[i].status == RUN_OK)
            return 0;
        failed += rows->row[i].status == RUN_FAILED;
        skipped += rows->row[i].status == RUN_SKIPPED;
    }
    fprintf(stderr, "%s: no run succeeded (%d failed, %d skipped)\n", COMPARE_NAME, failed,
            skipped);
    return 1;
}

/* The results of a comparison (RESULTS; --from: the plots alone) into
 * DIR, as one set (compare-output.c).  0, 1 after a message, or -1 when
 * SIGINT or SIGTERM came first (nothing written). */
static int write_set(const cmp_rows *rows, const char *dir, int results, long long timeout)
{
    cmp_stage stage;
    char path[PATH_MAX + 32];
    if (cmp_stage_open(&stage, dir) != 0)
        return 1;
    if (results) {
        cmp_stage_file(&stage, "results.csv", path, sizeof path);
        int failed = cmp_write_csv(rows, path) != 0;
        cmp_stage_file(&stage, "results.json", path, sizeof path);
        if (failed || cmp_write_json(rows, path) != 0) {
            fprintf(stderr, "%s: %s keeps its previous results\n", COMPARE_NAME, dir);
            cmp_stage_discard(&stage);
            return 1;
        }
    }
    int plots = cmp_plot(rows, stage.path, timeout);
    if (cmp_interrupted()) {
        cmp_stage_discard(&stage);
        return -1;
    }
    /* Only a whole set of plots goes in: what a failed gnuplot left goes. */
    for (int i = 1; plots != CMP_PLOTS_MADE && cmp_plot_files[i]; i++) {
        cmp_stage_file(&stage, cmp_plot_files[i], path, sizeof path);
        unlink(path);
    }
    /* New results take no old plots, which are another comparison's.  A
     * re-print (--from) has the same results: it replaces the plots only
     * with a whole set, and without gnuplot their script alone, and
     * otherwise leaves the folder as it was. */
    static const char *const script[] = {CMP_PLOT_SCRIPT, NULL};
    const char *const *names = results                     ? cmp_result_files
                               : plots == CMP_PLOTS_MADE   ? cmp_plot_files
                               : plots == CMP_PLOTS_SCRIPT ? script
                                                           : NULL;
    if (!names) {
        cmp_stage_discard(&stage); /* cmp_plot said why, in a line */
        return plots == CMP_PLOTS_FAILED;
    }
    if (cmp_stage_commit(&stage, names) != 0)
        return 1;
    if (results)
        fprintf(stderr, "%s: results: %s/results.csv, %s/results.json\n", COMPARE_NAME, dir, dir);
    /* The plots that are there: which of them a set has depends on its
     * runs (sizes, device counts). */
    int listed = 0;
    for (int i = 0; plots == CMP_PLOTS_MADE && cmp_plot_files[i]; i++) {
        const char *name = cmp_plot_files[i], *png = strstr(name, ".png");
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (png && !png[4] && access(path, F_OK) == 0)
            fprintf(stderr, "%s %s/%.*s.{png,svg}", listed++ ? "," : COMPARE_NAME ": plots:", dir,
                    (int) (png - name), name);
    }
    if (listed)
        fputc('\n', stderr);
    return plots == CMP_PLOTS_FAILED;
}

/* SIGINT or SIGTERM came: the run it stopped has no row, and mgpu-compare
 * ends by the same signal (the shell sees 130 or 143, and a script running
 * it stops too).  WRITTEN: the signal came as the results were put in
 * place, too late to keep the old ones. */
static int stopped(int signo, const char *dir, int written)
{
    fprintf(
        stderr, "%s: stopped by %s; %s %s\n", COMPARE_NAME, signo == SIGINT ? "SIGINT" : "SIGTERM",
        written ? "the results were written first in" : "nothing written, previous results kept in",
        dir);
    cmp_folder_unlock();
    signal(signo, SIG_DFL);
    raise(signo);
    return 128 + signo;
}

/* Check the output folder DIR (OPTION names it) for the files NAMES, and
 * lock it for this comparison (cmp_folder_unlock lets it go): -1 to go on,
 * or the exit code after a line. */
static int take_folder(const char *dir, const char *option, const char *const *names)
{
    if (cmp_folder_check(dir, option, names) >= 0)
        return 2;
    return cmp_folder_lock(dir, option) == 0 ? -1 : 1;
}

static int run(const cmp_options *opt, const char *argv0, cmp_rows *rows)
{
    char dir[PATH_MAX];
    int code, plot = 1;
    if (opt->nfrom) {
        char error[512];
        for (int f = 0; f < opt->nfrom; f++) {
            int first = rows->count;
            if (cmp_read_json(opt->from[f], rows, error, sizeof error) != 0)
                return opt->nfrom > 1 ? cmp_usage("--from: %s: %s", opt->from[f], error)
                                      : cmp_usage("--from: %s", error);
            if (opt->nfrom > 1)
                cmp_rows_name_set(rows, first, opt->from[f]);
        }
        /* One file: its plots again beside it.  Several: the plots of all
         * go to --output, never over one set's own. */
        if (strcmp(opt->output, ".") != 0 || opt->nfrom > 1)
            snprintf(dir, sizeof dir, "%s", opt->output);
        else
            cmp_folder_of(opt->from[0], dir, sizeof dir);
        int own = 0; /* DIR is the folder of the one file read */
        for (int f = 0; f < opt->nfrom; f++) {
            char set_dir[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
            cmp_folder_of(opt->from[f], set_dir, sizeof set_dir);
            int same = realpath(set_dir, a) && realpath(dir, b) && strcmp(a, b) == 0;
            if (same && opt->nfrom > 1)
                return cmp_usage("--output: %s holds %s, one of the sets: their plots side by side "
                                 "would stand beside its own results (choose another folder)",
                                 dir, opt->from[f]);
            own |= same;
        }
        /* Plots beside another comparison's results would be a set mixed
         * from two. */
        for (int i = 0; !own && i < 2; i++) {
            const char *name = i ? "results.csv" : "results.json";
            char path[PATH_MAX + 16];
            snprintf(path, sizeof path, "%s/%s", dir, name);
            if (access(path, F_OK) == 0)
                return cmp_usage("--output: %s holds the results of another comparison (%s): the "
                                 "plots of --from would stand beside them (choose another folder)",
                                 dir, name);
        }
        /* A results.json where nothing can be written (a read-only copy):
         * the table is what was asked, and the plots are said lost. */
        if (own && access(dir, W_OK) != 0) {
            fprintf(stderr, "%s: --from: no plots: %s cannot be written in (%s)\n", COMPARE_NAME,
                    dir, strerror(errno));
            plot = 0;
        } else if ((code = take_folder(dir,
                                       strcmp(opt->output, ".") != 0 || opt->nfrom > 1 ? "--output"
                                                                                       : "--from",
                                       cmp_plot_files)) >= 0)
            return code;
        int failed = 0, passed = 0;
        for (int i = 0; i < rows->count; i++) {
            failed += rows->row[i].status == RUN_FAILED;
            passed += rows->row[i].status == RUN_OK;
        }
        /* Exit 1 said in a line (the table says why each failed; where
         * none passed, none_succeeded says so). */
        if (failed && passed)
            fprintf(stderr, "%s: %d of the %d runs read failed (the table says why)\n",
                    COMPARE_NAME, failed, rows->count);
        code = failed > 0 || !plot;
    } else {
        snprintf(dir, sizeof dir, "%s", opt->output);
        code = take_folder(dir, "--output", cmp_result_files);
        if (code >= 0)
            return code;
        code = compare(opt, argv0, rows);
        if (cmp_interrupted())
            return stopped(cmp_interrupted(), dir, 0);
        if (code == 2)
            return 2;
    }
    cmp_derive(rows);
    /* The set first, the table last: a reader of stdout that goes (a pager
     * quit early) costs the table alone.  No rows: compare() said why, and
     * the folder keeps what it had. */
    if (rows->count == 0)
        code = 1;
    else {
        code |= none_succeeded(rows);
        int wrote = plot ? write_set(rows, dir, !opt->nfrom, opt->timeout) : 0;
        if (cmp_interrupted())
            return stopped(cmp_interrupted(), dir, wrote >= 0);
        code |= wrote;
    }
    if (opt->nfrom > 1)
        cmp_print_side_by_side(rows, stdout);
    else
        cmp_print_table(rows, stdout);
    cmp_print_crossover(rows, stdout);
    cmp_print_floor(rows, stdout);
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: cannot write the table: %s\n", COMPARE_NAME,
                errno ? strerror(errno) : "a write failed");
        code = 1;
    }
    return code ? 1 : 0;
}

int main(int argc, char **argv)
{
    /* A closed stdout's number would go to the lock file, and the table
     * into it. */
    mgpu_program_start();
    cmp_options opt;
    int code = cmp_options_parse(&opt, argc, argv);
    /* --help and --version are output like any other: not written, not a
     * success (the other programs' mgpu_stdout_close). */
    if (code == 0) {
        static const mgpu_program self = {.name = COMPARE_NAME};
        code = mgpu_stdout_close(&self, 0);
    }
    if (code < 0) {
        cmp_catch_signals();
        cmp_rows rows = {0};
        code = run(&opt, argv[0], &rows);
        cmp_folder_unlock(); /* held to the end: the set is in place */
        cmp_rows_free(&rows);
    }
    cmp_options_free(&opt);
    return code;
}
