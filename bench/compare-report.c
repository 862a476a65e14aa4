/* compare-report.c - what mgpu-compare makes of the runs: the spread of
 * each run's times, its speedup and parallel efficiency against its
 * program's own 1-device run at the same grid with the same halo depth in
 * the same comparison; the table (a group per grid size when there are
 * several) and, after it, the device-driven floor against the host-driven
 * programs; results.csv (a row per run) and results.json, written with
 * jansson (the same runs, each with every field its program printed, and
 * the metadata of the machine). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "compare.h"
#include "mgpu.h"
#include "mgpu/harness.h"

/* ------------------------------------------------------- derived figures */

void cmp_derive(cmp_rows *rows)
{
    for (int i = 0; i < rows->count; i++) {
        cmp_row *r = &rows->row[i];
        r->time_spread = r->baseline_s = r->speedup = r->efficiency = NAN;
        if (r->status != RUN_OK)
            continue;
        r->time_spread = (r->time_max_s - r->time_min_s) / r->time_s;
        for (int j = 0; j < rows->count; j++) {
            const cmp_row *base = &rows->row[j];
            /* The same grid: across sizes, a 1-device time of another
             * size would make the speedup a ratio of two grids.  The same
             * halo depth: a deep halo changes the one device's kernel too
             * (several steps a pass), so the speedup of K > 1 is what the
             * devices add to the program's own blocked run. */
            if (base->status == RUN_OK && base->devices == 1 && base->nx == r->nx &&
                base->ny == r->ny && base->halo == r->halo &&
                strcmp(cmp_series(base), cmp_series(r)) == 0) {
                r->baseline_s = base->time_s;
                r->speedup = base->time_s / r->time_s;
                r->efficiency = r->speedup / r->devices;
                break;
            }
        }
    }
}

/* ---------------------------------------------------------------- table */

static const cmp_row *first_measured(const cmp_rows *rows)
{
    for (int i = 0; i < rows->count; i++) {
        if (rows->row[i].status == RUN_OK)
            return &rows->row[i];
    }
    return rows->count ? &rows->row[0] : NULL;
}

/* A number into a column, or "n/a". */
static void cell(FILE *out, int width, int decimals, double value, const char *suffix)
{
    char text[32];
    if (isfinite(value))
        snprintf(text, sizeof text, "%.*f%s", decimals, value, suffix);
    else
        snprintf(text, sizeof text, "n/a");
    fprintf(out, " %*s", width, text);
}

static void print_row(const cmp_row *r, FILE *out)
{
    fprintf(out, "%-15s %7d %-10s %4d", r->program, r->devices, r->exchange, r->halo);
    if (r->status != RUN_OK) {
        fprintf(out, " %s: %s\n", r->status == RUN_SKIPPED ? "skipped" : "FAILED", r->reason);
        return;
    }
    if (r->time_block > 0)
        fprintf(out, " %10d", r->time_block);
    else
        fprintf(out, " %10s", "n/a");
    cell(out, 9, 0, r->exchanges, "");
    cell(out, 11, 1, r->us_per_step, "");
    cell(out, 11, 1, 100 * r->time_spread, "%");
    cell(out, 12, 2, r->gcells_per_s, "");
    cell(out, 7, 2, r->speedup, "");
    cell(out, 10, 1, 100 * r->efficiency, "%");
    cell(out, 14, 1, 100 * r->exchange_share, "%");
    cell(out, 22, 1, r->host_issue_us_per_step, "");
    cell(out, 21, 1, r->host_wait_us_per_step, "");
    cell(out, 18, 1, r->device_us_per_step, "");
    fprintf(out, "  %s (%s)\n",
            r->verified > 0    ? "passed"
            : r->verified == 0 ? "FAILED"
                               : "no check",
            r->verify);
}

void cmp_print_table(const cmp_rows *rows, FILE *out)
{
    const cmp_row *m = first_measured(rows);
    if (!m) {
        fprintf(out, "# %s: no runs\n", COMPARE_NAME);
        return;
    }
    int sizes = cmp_rows_size_count(rows, 0);
    if (sizes == 1)
        fprintf(out, "# %s: %s backend, %s %lld x %lld, %lld steps, median of %d runs\n",
                COMPARE_NAME, m->backend, m->kernel, m->nx, m->ny, m->steps, m->repeats);
    else
        fprintf(out, "# %s: %s backend, %s at %d grid sizes, %lld steps, median of %d runs\n",
                COMPARE_NAME, m->backend, m->kernel, sizes, m->steps, m->repeats);
    if (cmp_host_ran(rows))
        fprintf(out, "# %s\n", CMP_HOST_NOTE);
    /* The heads are the names of results.csv's and results.json's fields. */
    fprintf(out,
            "# halo: rows a side, exchanged every halo steps (--halo); time_block: steps per "
            "pass over memory as run; exchanges: halo exchanges in a run\n"
            "# us_per_step: time_s / steps; time_spread: (time_max_s - time_min_s) / time_s "
            "of the runs; gcells_per_s: interior cells x steps / time_s\n"
            "# speedup: the program's own 1-device time_s %sin this comparison / time_s; "
            "efficiency: speedup / devices\n"
            "# exchange_share: exchange_s (the same steps with the exchanges alone) / "
            "time_s; time_spread, efficiency and exchange_share in %%\n"
            "# host_issue_us_per_step, host_wait_us_per_step: host us a step issuing work "
            "and waiting (barriers, devices); device_us_per_step: us a step of the largest "
            "part's kernel alone\n",
            sizes == 1 && !cmp_rows_deep(rows) ? ""
            : sizes == 1                       ? "with the same halo "
            : cmp_rows_deep(rows)              ? "at the same grid and halo "
                                               : "at the same grid ");
    fprintf(out, "%-15s %7s %-10s %4s %10s %9s %11s %11s %12s %7s %10s %14s %22s %21s %18s  %s\n",
            "program", "devices", "exchange", "halo", "time_block", "exchanges", "us_per_step",
            "time_spread", "gcells_per_s", "speedup", "efficiency", "exchange_share",
            "host_issue_us_per_step", "host_wait_us_per_step", "device_us_per_step", "verified");
    if (sizes == 1) {
        for (int i = 0; i < rows->count; i++)
            print_row(&rows->row[i], out);
        return;
    }
    /* A group per size, smallest first, whatever order the rows came in. */
    cmp_size s;
    for (const cmp_size *after = NULL; cmp_rows_next_size(rows, 0, after, &s); after = &s) {
        fprintf(out, "\n# grid %lld x %lld\n", s.nx, s.ny);
        for (int i = 0; i < rows->count; i++) {
            if (cmp_row_at(&rows->row[i], &s))
                print_row(&rows->row[i], out);
        }
    }
}

/* ------------------------------------------------------------- the floor */

/* The fastest row that ran, of a program other than the floor, of the set
 * of F, on its devices with its halo depth and kernel at its grid (by time
 * per step: sets may differ in steps); or NULL. */
static const cmp_row *fastest_host_driven(const cmp_rows *rows, const cmp_row *f)
{
    const cmp_row *best = NULL;
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        if (r->status == RUN_OK && !cmp_is_floor(cmp_series(r)) && strcmp(r->set, f->set) == 0 &&
            r->devices == f->devices && r->halo == f->halo && r->nx == f->nx && r->ny == f->ny &&
            strcmp(r->kernel, f->kernel) == 0 && (!best || r->us_per_step < best->us_per_step))
            best = r;
    }
    return best;
}

void cmp_print_floor(const cmp_rows *rows, FILE *out)
{
    int deep = cmp_rows_deep(rows), lines = 0;
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *f = &rows->row[i];
        cmp_size at = {.nx = f->nx, .ny = f->ny};
        /* Each grid, device count and depth once: at the floor's fastest
         * row there. */
        if (f->status != RUN_OK || !cmp_is_floor(cmp_series(f)) ||
            cmp_fastest(rows, cmp_series(f), f->devices, f->halo, &at) != f)
            continue;
        if (!lines++)
            fprintf(out,
                    "\n# the device-driven floor (%s): its time per step against the "
                    "fastest host-driven program's on as many devices at the same grid%s; "
                    "floor/host below 1: the floor is below them all\n",
                    CMP_FLOOR_PROGRAM, deep ? " and halo" : "");
        fprintf(out, "floor %-22s %lld x %lld, %d device%s", cmp_series(f), f->nx, f->ny,
                f->devices, f->devices == 1 ? "" : "s");
        if (deep)
            fprintf(out, ", halo %d", f->halo);
        fprintf(out, ": %.1f us/step", f->us_per_step);
        const cmp_row *host = fastest_host_driven(rows, f);
        if (host)
            fprintf(out, "; host-driven %s (%s) %.1f us/step; floor/host %.3f\n", host->program,
                    host->exchange, host->us_per_step, f->us_per_step / host->us_per_step);
        else
            fputs("; no host-driven run to hold it against\n", out);
    }
}

/* ------------------------------------------------- the row as a field list */

/* F_COUNT: a whole number, or not known (below 0, NaN): null, empty. */
typedef enum field_kind { F_TEXT, F_INTEGER, F_COUNT, F_NUMBER, F_VERDICT } field_kind;

typedef struct field {
    const char *key;
    field_kind kind;
    const char *text;
    double number;
} field;

#define ROW_FIELDS 35

static int row_fields(const cmp_row *r, field *f)
{
    int n = 0;
#define TEXT(k, v) f[n++] = (field){.key = k, .kind = F_TEXT, .text = v}
#define INTEGER(k, v) \
    f[n++] = (field) { .key = k, .kind = F_INTEGER, .number = (double) (v) }
#define NUMBER(k, v) \
    f[n++] = (field) { .key = k, .kind = F_NUMBER, .number = v }
    TEXT("program", r->program);
    TEXT("strategy", r->strategy);
    TEXT("exchange", r->exchange);
    INTEGER("devices", r->devices);
    TEXT("backend", r->backend);
    TEXT("kernel", r->kernel);
    INTEGER("nx", r->nx);
    INTEGER("ny", r->ny);
    INTEGER("steps", r->steps);
    INTEGER("repeats", r->repeats);
    INTEGER("halo", r->halo);
    f[n++] = (field){
        .key = "time_block", .kind = F_COUNT, .number = r->time_block > 0 ? r->time_block : NAN};
    f[n++] = (field){.key = "exchanges", .kind = F_COUNT, .number = r->exchanges};
    TEXT("status", cmp_status_name(r->status));
    NUMBER("time_s", r->time_s);
    NUMBER("time_min_s", r->time_min_s);
    NUMBER("time_max_s", r->time_max_s);
    NUMBER("time_spread", r->time_spread);
    NUMBER("us_per_step", r->us_per_step);
    NUMBER("host_issue_us_per_step", r->host_issue_us_per_step);
    NUMBER("host_wait_us_per_step", r->host_wait_us_per_step);
    NUMBER("device_us_per_step", r->device_us_per_step);
    NUMBER("gcells_per_s", r->gcells_per_s);
    NUMBER("gbytes_per_s", r->gbytes_per_s);
    NUMBER("exchange_s", r->exchange_s);
    NUMBER("exchange_share", r->exchange_share);
    NUMBER("copy_gbytes_per_s", r->copy_gbytes_per_s);
    NUMBER("roofline", r->roofline);
    NUMBER("baseline_s", r->baseline_s);
    NUMBER("speedup", r->speedup);
    NUMBER("efficiency", r->efficiency);
    TEXT("verify", r->verify);
    f[n++] = (field){.key = "verified", .kind = F_VERDICT, .number = (double) r->verified};
    NUMBER("max_error", r->max_error);
    TEXT("reason", r->reason);
#undef TEXT
#undef INTEGER
#undef NUMBER
    return n;
}

/* ---------------------------------------------------------------- CSV */

/* Not measured: an empty cell. */
static void print_csv_value(const field *f, FILE *out)
{
    switch (f->kind) {
    case F_TEXT:
        mgpu_csv_text(f->text, out);
        break;
    case F_INTEGER:
        fprintf(out, "%.0f", f->number);
        break;
    case F_COUNT:
        if (f->number >= 0)
            fprintf(out, "%.0f", f->number);
        break;
    case F_NUMBER:
        if (isfinite(f->number))
            fprintf(out, "%.10g", f->number);
        break;
    case F_VERDICT:
        fputs(f->number > 0 ? "passed" : f->number == 0 ? "failed" : "", out);
        break;
    }
}

static int write_failed(const char *path, const char *why)
{
    fprintf(stderr, "%s: cannot write %s: %s\n", COMPARE_NAME, path, why);
    return -1;
}

/* The I-th of the record's fields that say where a run came from (the
 * machine's, then the build's: doc/record.md), or NULL past the last. */
static const char *provenance_key(int i)
{
    int machine = 0;
    while (mgpu_record_machine_fields[machine])
        machine++;
    if (i < machine)
        return mgpu_record_machine_fields[i];
    for (const mgpu_build_field *b = mgpu_build; b->key; b++, i--) {
        if (i == machine)
            return b->key;
    }
    return NULL;
}

/* A field of a run's record as a CSV cell: a text as it is, a number, true
 * or false, gpu_list as its JSON text; empty when null or absent (a run
 * that printed no record).  -1 when out of memory. */
static int print_csv_json(const json_t *value, FILE *out)
{
    char *text;
    switch (value ? json_typeof(value) : JSON_NULL) {
    case JSON_STRING:
        mgpu_csv_text(json_string_value(value), out);
        break;
    case JSON_INTEGER:
        fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(value));
        break;
    case JSON_REAL:
        fprintf(out, "%.10g", json_real_value(value));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        fputs(json_is_true(value) ? "true" : "false", out);
        break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        if (!(text = json_dumps(value, JSON_REAL_PRECISION(10))))
            return -1;
        mgpu_csv_text(text, out);
        free(text);
        break;
    case JSON_NULL:
        break;
    }
    return 0;
}

/* results.csv: a header, then a line per run, the row's fields and where
 * the run came from (its record's machine and build): the programs' own
 * fields differ from program to program (results.json has them). */
int cmp_write_csv(const cmp_rows *rows, const char *path)
{
    FILE *out = fopen(path, "w");
    if (!out)
        return write_failed(path, strerror(errno));
    field f[ROW_FIELDS];
    cmp_row empty;
    memset(&empty, 0, sizeof empty);
    int n = row_fields(&empty, f);
    for (int i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? "," : "", f[i].key);
    for (int i = 0; provenance_key(i); i++)
        fprintf(out, ",%s", provenance_key(i));
    fputc('\n', out);
    int lost = 0;
    for (int r = 0; r < rows->count; r++) {
        n = row_fields(&rows->row[r], f);
        for (int i = 0; i < n; i++) {
            if (i)
                fputc(',', out);
            print_csv_value(&f[i], out);
        }
        const json_t *record = rows->row[r].record;
        for (int i = 0; provenance_key(i); i++) {
            fputc(',', out);
            lost |= print_csv_json(record ? json_object_get(record, provenance_key(i)) : NULL, out);
        }
        fputc('\n', out);
    }
    if (lost) {
        fclose(out);
        return write_failed(path, "out of memory");
    }
    if (ferror(out) | (fclose(out) != 0))
        return write_failed(path, strerror(errno));
    return 0;
}

/* --------------------------------------------------------------- JSON */

/* The row's fields (null where not measured), then every other field the
 * program printed, in its order.  NULL when out of memory. */
static json_t *run_json(const cmp_row *r)
{
    field f[ROW_FIELDS];
    int n = row_fields(r, f), failed = 0;
    json_t *run = json_object();
    for (int i = 0; run && i < n; i++) {
        json_t *value;
        switch (f[i].kind) {
        case F_TEXT:
            value = json_string(f[i].text);
            break;
        case F_INTEGER:
            value = json_integer((json_int_t) f[i].number);
            break;
        case F_COUNT:
            value = f[i].number >= 0 ? json_integer((json_int_t) f[i].number) : json_null();
            break;
        case F_NUMBER:
            value = isfinite(f[i].number) ? json_real(f[i].number) : json_null();
            break;
        case F_VERDICT:
        default:
            value = f[i].number < 0 ? json_null() : json_boolean(f[i].number > 0);
            break;
        }
        failed |= json_object_set_new(run, f[i].key, value) != 0;
    }
    const char *key;
    json_t *value;
    if (run && r->record) {
        json_object_foreach(r->record, key, value) {
            if (!json_object_get(run, key))
                failed |= json_object_set(run, key, value) != 0;
        }
    }
    if (failed) {
        json_decref(run);
        return NULL;
    }
    return run;
}

/* The record's field KEY of the run on the most devices that printed it,
 * else null: the machine the comparison ran on, as its programs saw it. */
static json_t *from_runs(const cmp_rows *rows, const char *key)
{
    const json_t *found = NULL;
    int devices = 0;
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        const json_t *value = r->record ? json_object_get(r->record, key) : NULL;
        if (value && !json_is_null(value) && r->devices > devices) {
            found = value;
            devices = r->devices;
        }
    }
    return found ? json_deep_copy(found) : json_null();
}

/* TEXT as a JSON string, or null when empty. */
static json_t *text_or_null(const char *text) { return text[0] ? json_string(text) : json_null(); }

/* Where, when and with what this comparison ran (doc/record.md): the GPUs
 * and drivers as its runs saw them, this program's host, time and build. */
static json_t *metadata_json(const cmp_rows *rows)
{
    static mgpu_machine m; /* mgpu-compare's own: the host and the time */
    mgpu_machine_find(MGPU_BACKEND_HOST, 0, (long long) time(NULL), &m);
    json_t *metadata = json_pack(
        "{s:o, s:o, s:o, s:s, s:o, s:o, s:o, s:o}", "gpus", from_runs(rows, "gpus"), "cuda_runtime",
        from_runs(rows, "cuda_runtime"), "cuda_driver", from_runs(rows, "cuda_driver"),
        "mgpu_version", MGPU_VERSION, "hostname", text_or_null(m.hostname), "timestamp",
        text_or_null(m.timestamp), "gpu_list", from_runs(rows, "gpu_list"), "nvidia_driver",
        from_runs(rows, "nvidia_driver"));
    for (const mgpu_build_field *b = mgpu_build; metadata && b->key; b++) {
        if (json_object_set_new(metadata, b->key, json_string(b->text)) != 0) {
            json_decref(metadata);
            metadata = NULL;
        }
    }
    return metadata;
}

/* results.json: {"schema": 2, "metadata": {...}, "runs": [{...}, ...]}. */
int cmp_write_json(const cmp_rows *rows, const char *path)
{
    json_t *runs = json_array();
    int failed = !runs;
    for (int r = 0; !failed && r < rows->count; r++)
        failed = json_array_append_new(runs, run_json(&rows->row[r])) != 0;
    json_t *results = failed ? NULL
                             : json_pack("{s:i, s:o, s:O}", "schema", CMP_RESULTS_SCHEMA,
                                         "metadata", metadata_json(rows), "runs", runs);
    json_decref(runs);
    if (!results)
        return write_failed(path, "out of memory");
    errno = 0;
    int rc = json_dump_file(results, path, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
    json_decref(results);
    if (rc != 0)
        return write_failed(path, errno ? strerror(errno) : "jansson could not write it");
    return 0;
}
