/* record.c - the one result record every run prints.
 *
 * A record is turned into one list of (key, value) fields first, derived
 * values included; the three formats only print that list.  So every format
 * has the same fields in the same order, and a value that was not measured
 * is "not measured" everywhere: null in JSON, an empty cell in CSV, "n/a"
 * in the table.  Numbers that are undefined (a quotient by zero, NaN,
 * infinity) are not measured either: JSON has no way to write them.
 *
 * The JSON is jansson's where configure found it, as every other JSON mgpu
 * writes; a build without jansson writes it here, by hand, since every
 * program prints a record (doc/design.md section 4: one writer a build).
 * doc/record.md lists every field.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef MGPU_HAVE_JANSSON
#include <jansson.h>
#endif

#include "mgpu-private.h"

/* The byte-counting rule of every bandwidth in the record (doc/design.md section 6). */
#define BYTES_PER_CELL 8.0
#define BANDWIDTH_RULE                                                                  \
    "bandwidth counts 8 bytes per interior cell per step (one read and one write of a " \
    "float)"

/* ------------------------------------------------------ filling a record */

void mgpu_record_init(mgpu_record *record, const mgpu_program *program, const mgpu_options *opt)
{
    memset(record, 0, sizeof *record);
    record->program = program && program->name ? program->name : "mgpu";
    record->strategy = program && program->strategy ? program->strategy : "";
    record->backend = mgpu_backend_active();
    record->backend_reason = mgpu_backend_reason();
    record->kernel = opt->kernel;
    record->exchange = opt->exchange;
    record->devices = opt->devices;
    record->nx = opt->nx;
    record->ny = opt->ny;
    record->steps = opt->steps;
    record->repeats = opt->repeat;
    record->halo = opt->halo;
    record->time_block = mgpu_time_block_resolve(opt->time_block, opt->halo);
    record->exchanges = -1;
    record->exchange_s = -1.0;
    record->issue_step_s = record->wait_step_s = record->device_step_s = -1.0;
    record->verify = "none";
    record->verified = -1;
    record->started = (long long) time(NULL);
    /* Until the program says where its workers ran (mgpu_record_set_binding). */
    snprintf(record->binding, sizeof record->binding, "none (not told)");
}

/* The extra field called KEY: the existing one, else a new one; NULL when
 * the record is full (the field is dropped, as mgpu/harness.h says).  The
 * record keeps the KEY pointer, so keys are string literals. */
static mgpu_record_extra *extra_field(mgpu_record *record, const char *key)
{
    mgpu_record_extra *field;

    if (key == NULL)
        return NULL;
    for (int i = 0; i < record->nextra; i++) {
        if (strcmp(record->extra[i].key, key) == 0)
            return &record->extra[i];
    }
    if (record->nextra >= MGPU_RECORD_EXTRA)
        return NULL;
    field = &record->extra[record->nextra++];
    field->key = key;
    return field;
}

/* Copy TEXT into DST (SIZE bytes), cutting a long text before a UTF-8
 * character rather than through it, so that the JSON stays valid. */
static void copy_text(char *dst, size_t size, const char *text)
{
    size_t n = strlen(text);

    if (n >= size) {
        n = size - 1;
        while (n > 0 && ((unsigned char) text[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, text, n);
    dst[n] = '\0';
}

void mgpu_record_set_text(mgpu_record *record, const char *key, const char *text)
{
    mgpu_record_extra *field = extra_field(record, key);

    if (field == NULL)
        return;
    copy_text(field->text, sizeof field->text, text ? text : "");
    field->kind = MGPU_RECORD_TEXT;
}

void mgpu_record_set_number(mgpu_record *record, const char *key, double number)
{
    mgpu_record_extra *field = extra_field(record, key);

    if (field == NULL)
        return;
    field->number = number;
    field->kind = MGPU_RECORD_NUMBER;
}

void mgpu_record_set_boolean(mgpu_record *record, const char *key, int value)
{
    mgpu_record_extra *field = extra_field(record, key);

    if (field == NULL)
        return;
    field->boolean = value < 0 ? -1 : value > 0;
    field->kind = MGPU_RECORD_BOOLEAN;
}

void mgpu_record_set_gpus(mgpu_record *record, const mgpu_gpu_id *gpus, int count)
{
    record->gpu_list = gpus;
    record->gpus_told = count < 0 ? 0 : count > MGPU_MAX_DEVICES ? MGPU_MAX_DEVICES : count;
}

void mgpu_record_set_stencil(mgpu_record *record, const mgpu_stencil *stencil)
{
    record->exchange = mgpu_stencil_exchange_mode(stencil);
    record->staging_chunk = mgpu_stencil_staging_chunk(stencil);
}

/* ----------------------------------------------- the record as a field list */

typedef enum field_kind {
    FIELD_TEXT,    /* text; NULL: not measured */
    FIELD_INTEGER, /* integer */
    FIELD_COUNT,   /* integer; below 0: not known */
    FIELD_NUMBER,  /* number; not finite: not measured */
    FIELD_VERDICT, /* integer 1 passed, 0 failed, -1 not checked */
    FIELD_BOOLEAN, /* integer 1 true, 0 false, -1 not known */
    FIELD_GPUS     /* the machine's GPUs: a JSON array of objects, in CSV and
                      the table that array's JSON text */
} field_kind;

typedef struct field {
    const char *key;
    field_kind kind;
    const char *text;
    long long integer;
    double number;
    const mgpu_machine *machine;
} field;

#define COMMON_FIELDS 52
#define MAX_FIELDS (COMMON_FIELDS + MGPU_RECORD_EXTRA)

typedef struct field_list {
    field item[MAX_FIELDS];
    int count;
} field_list;

static void add_field(field_list *list, field value)
{
    if (list->count < MAX_FIELDS)
        list->item[list->count++] = value;
}

static void add_text(field_list *list, const char *key, const char *text)
{
    add_field(list, (field){.key = key, .kind = FIELD_TEXT, .text = text});
}

static void add_integer(field_list *list, const char *key, long long integer)
{
    add_field(list, (field){.key = key, .kind = FIELD_INTEGER, .integer = integer});
}

static void add_count(field_list *list, const char *key, long long count)
{
    add_field(list, (field){.key = key, .kind = FIELD_COUNT, .integer = count});
}

static void add_number(field_list *list, const char *key, double number)
{
    add_field(list, (field){.key = key, .kind = FIELD_NUMBER, .number = number});
}

static void add_verdict(field_list *list, const char *key, int verdict)
{
    add_field(list, (field){.key = key, .kind = FIELD_VERDICT, .integer = verdict});
}

static void add_boolean(field_list *list, const char *key, int value)
{
    add_field(list, (field){.key = key, .kind = FIELD_BOOLEAN, .integer = value});
}

/* NUMERATOR / DENOMINATOR, or NaN ("not measured") unless DENOMINATOR > 0. */
static double quotient(double numerator, double denominator)
{
    return denominator > 0.0 ? numerator / denominator : NAN;
}

/* VALUE when it was measured (> 0, or >= 0 where 0 is a measurement). */
static double positive_or_nan(double value) { return value > 0.0 ? value : NAN; }
static double nonnegative_or_nan(double value) { return value >= 0.0 ? value : NAN; }

static void add_run_fields(field_list *list, const mgpu_record *r)
{
    add_text(list, "program", r->program);
    add_text(list, "strategy", r->strategy);
    add_text(list, "backend", mgpu_backend_name(r->backend));
    add_text(list, "backend_reason", r->backend_reason);
    add_text(list, "kernel", mgpu_kernel_name(r->kernel));
    add_text(list, "exchange", mgpu_exchange_name(r->exchange));
    add_integer(list, "devices", r->devices);
    add_integer(list, "nx", r->nx);
    add_integer(list, "ny", r->ny);
    add_integer(list, "steps", r->steps);
    add_integer(list, "repeats", r->repeats);
    add_integer(list, "halo", r->halo);
    add_integer(list, "time_block", r->time_block);
    add_count(list, "exchanges", r->exchanges);
    /* null where the blocks went whole, or not staged (doc/record.md) */
    add_count(list, "staging_chunk_bytes",
              r->staging_chunk > 0 ? (long long) r->staging_chunk : -1);
}

static void add_speed_fields(field_list *list, const mgpu_record *r)
{
    double time_s = r->time.median;
    double cell_steps = (double) (r->nx - 2) * (double) (r->ny - 2) * (double) r->steps;
    double gcells_per_s = quotient(cell_steps, time_s) / 1e9;
    double gbytes_per_s = gcells_per_s * BYTES_PER_CELL;
    double exchange_s = nonnegative_or_nan(r->exchange_s);
    double copy_gbytes_per_s = positive_or_nan(r->copy_gbytes_per_s);
    double baseline_s = positive_or_nan(r->baseline_s);
    double speedup = quotient(baseline_s, time_s);

    add_number(list, "time_s", time_s);
    add_number(list, "time_min_s", r->time.min);
    add_number(list, "time_max_s", r->time.max);
    add_number(list, "us_per_step", quotient(time_s, (double) r->steps) * 1e6);
    add_number(list, "host_issue_us_per_step", nonnegative_or_nan(r->issue_step_s) * 1e6);
    add_number(list, "host_wait_us_per_step", nonnegative_or_nan(r->wait_step_s) * 1e6);
    add_number(list, "device_us_per_step", nonnegative_or_nan(r->device_step_s) * 1e6);
    add_number(list, "gcells_per_s", gcells_per_s);
    add_number(list, "gbytes_per_s", gbytes_per_s);
    add_number(list, "exchange_s", exchange_s);
    add_number(list, "exchange_share", quotient(exchange_s, time_s));
    add_number(list, "copy_gbytes_per_s", copy_gbytes_per_s);
    add_number(list, "roofline", quotient(gbytes_per_s, copy_gbytes_per_s));
    add_number(list, "baseline_s", baseline_s);
    add_number(list, "speedup", speedup);
    add_number(list, "efficiency", quotient(speedup, (double) r->devices));
}

static void add_verify_fields(field_list *list, const mgpu_record *r)
{
    /* Without a check, its error and tolerance mean nothing. */
    int checked = r->verified >= 0;

    add_text(list, "verify", r->verify);
    add_verdict(list, "verified", r->verified);
    add_number(list, "max_error", checked ? r->max_error : NAN);
    add_number(list, "tolerance", checked ? r->tolerance : NAN);
}

static void add_extra_fields(field_list *list, const mgpu_record *r)
{
    for (int i = 0; i < r->nextra && i < MGPU_RECORD_EXTRA; i++) {
        const mgpu_record_extra *extra = &r->extra[i];
        if (extra->kind == MGPU_RECORD_NUMBER)
            add_number(list, extra->key, extra->number);
        else if (extra->kind == MGPU_RECORD_BOOLEAN)
            add_boolean(list, extra->key, extra->boolean);
        else
            add_text(list, extra->key, extra->text);
    }
}

const char *const mgpu_record_machine_fields[] = {
    "gpus",      "cuda_runtime", "cuda_driver", "mgpu_version",  "hostname",
    "timestamp", "binding",      "gpu_list",    "nvidia_driver", NULL,
};

/* A device of the host backend: no GPU, nothing to tell but that. */
static void host_gpu(int device, mgpu_gpu_id *gpu)
{
    memset(gpu, 0, sizeof *gpu);
    gpu->device = device;
    snprintf(gpu->name, sizeof gpu->name, "host");
}

void mgpu_gpu_identify(int device, mgpu_gpu_id *gpu)
{
    mgpu_device_info info;

    if (!mgpu_on_cuda()) {
        host_gpu(device, gpu);
        return;
    }
    memset(gpu, 0, sizeof *gpu);
    gpu->device = device;
    /* A GPU that cannot be asked (its error is the one just reported, or
     * none: the run is over) is named so; the record still prints. */
    if (device < 0 || mgpu_device_info_get(device, &info) != MGPU_OK) {
        snprintf(gpu->name, sizeof gpu->name, "unknown");
        return;
    }
    copy_text(gpu->name, sizeof gpu->name, info.name);
    copy_text(gpu->uuid, sizeof gpu->uuid, info.uuid);
    copy_text(gpu->pci_bus_id, sizeof gpu->pci_bus_id, info.pci_bus_id);
}

/* The record's gpus: each GPU's name, in device order, "; " between (cut at
 * a device, never inside a name); "host" on the host backend. */
static void gpu_names(mgpu_machine *m, mgpu_backend backend)
{
    size_t len = 0;

    snprintf(m->gpus, sizeof m->gpus, "host");
    if (backend != MGPU_BACKEND_CUDA)
        return;
    m->gpus[0] = '\0';
    for (int d = 0; d < m->ngpus; d++) {
        const char *name = m->gpu[d].name;
        size_t need = strlen(name) + (d ? 2 : 0);
        if (len + need >= sizeof m->gpus)
            break;
        len += (size_t) snprintf(m->gpus + len, sizeof m->gpus - len, "%s%s", d ? "; " : "", name);
    }
}

void mgpu_machine_find(mgpu_backend backend, int devices, long long started, mgpu_machine *m)
{
    memset(m, 0, sizeof *m);
    m->ngpus = devices < 0 ? 0 : devices > MGPU_MAX_DEVICES ? MGPU_MAX_DEVICES : devices;
    for (int d = 0; d < m->ngpus; d++) {
        if (backend == MGPU_BACKEND_CUDA)
            mgpu_gpu_identify(d, &m->gpu[d]);
        else
            host_gpu(d, &m->gpu[d]);
    }
    gpu_names(m, backend);
#ifdef MGPU_HAVE_CUDA
    if (backend == MGPU_BACKEND_CUDA) {
        int version = 0;
        if (cudaRuntimeGetVersion(&version) == cudaSuccess)
            m->runtime = version;
        version = 0;
        if (cudaDriverGetVersion(&version) == cudaSuccess)
            m->driver = version;
        /* NVML's, where it can be loaded; else the field is null. */
        if (mgpu_nvml_driver_version(m->nvidia_driver, sizeof m->nvidia_driver) != MGPU_OK)
            m->nvidia_driver[0] = '\0';
    }
#endif
    if (gethostname(m->hostname, sizeof m->hostname) != 0)
        m->hostname[0] = '\0';
    m->hostname[sizeof m->hostname - 1] = '\0';
    time_t when = (time_t) started;
    struct tm utc;
    if (started > 0 && gmtime_r(&when, &utc) != NULL)
        strftime(m->timestamp, sizeof m->timestamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
}

/* The machine RECORD ran on: found now, but for the GPUs it was told. */
static void machine_of(const mgpu_record *record, mgpu_machine *m)
{
    int told = record->gpus_told > 0 && record->gpu_list;

    mgpu_machine_find(record->backend, told ? 0 : record->devices, record->started, m);
    if (told) {
        m->ngpus = record->gpus_told;
        memcpy(m->gpu, record->gpu_list, (size_t) m->ngpus * sizeof m->gpu[0]);
        gpu_names(m, record->backend);
    }
}

/* The machine and build fields; the binding where there is a record R. */
static void add_machine_fields(field_list *list, const mgpu_machine *m, const mgpu_record *r)
{
    /* In mgpu_record_machine_fields' order. */
    add_text(list, "gpus", m->gpus);
    /* The versions as CUDA gives them (1000 major + 10 minor); null
     * without CUDA. */
    add_count(list, "cuda_runtime", m->runtime > 0 ? m->runtime : -1);
    add_count(list, "cuda_driver", m->driver > 0 ? m->driver : -1);
    add_text(list, "mgpu_version", MGPU_VERSION);
    add_text(list, "hostname", m->hostname[0] ? m->hostname : NULL);
    add_text(list, "timestamp", m->timestamp[0] ? m->timestamp : NULL);
    if (r)
        add_text(list, "binding", r->binding);
    add_field(list, (field){.key = "gpu_list", .kind = FIELD_GPUS, .machine = m});
    add_text(list, "nvidia_driver", m->nvidia_driver[0] ? m->nvidia_driver : NULL);
    for (const mgpu_build_field *b = mgpu_build; b->key; b++)
        add_text(list, b->key, b->text);
}

static void collect_fields(field_list *list, const mgpu_record *r, const mgpu_machine *m)
{
    list->count = 0;
    add_integer(list, "schema", MGPU_RECORD_SCHEMA);
    add_run_fields(list, r);
    add_speed_fields(list, r);
    add_verify_fields(list, r);
    add_machine_fields(list, m, r);
    add_extra_fields(list, r);
}

static int is_measured(const field *f)
{
    switch (f->kind) {
    case FIELD_TEXT:
        return f->text != NULL;
    case FIELD_COUNT:
    case FIELD_BOOLEAN:
        return f->integer >= 0;
    case FIELD_NUMBER:
        return isfinite(f->number);
    case FIELD_VERDICT:
    case FIELD_INTEGER:
    case FIELD_GPUS:
        return 1;
    }
    return 0;
}

/* ----------------------------------------------------------------- JSON */

/* The machine's GPUs as JSON text (malloc'd), for CSV and the table; NULL
 * when out of memory.  Written by the JSON writer of the build, below. */
static char *gpus_text(const mgpu_machine *m);

#ifdef MGPU_HAVE_JANSSON

/* Ten significant digits, as in CSV; jansson's separators (", " and ": "),
 * the hand writer's too. */
#define JSON_FLAGS JSON_REAL_PRECISION(10)

/* TEXT as a JSON string, or null; NULL when out of memory. */
static json_t *text_json(const char *text)
{
    if (text == NULL)
        return json_null();
    json_t *value = json_string(text);
    if (value != NULL)
        return value;
    /* Not UTF-8 (a host name, say, in another encoding): its bytes beyond
     * ASCII become '?', so that the record stays JSON. */
    char *plain = strdup(text);
    if (plain == NULL)
        return NULL;
    for (unsigned char *c = (unsigned char *) plain; *c != '\0'; c++) {
        if (*c >= 0x80)
            *c = '?';
    }
    value = json_string(plain);
    free(plain);
    return value;
}

static json_t *gpus_json(const mgpu_machine *m)
{
    json_t *list = json_array();

    for (int d = 0; list != NULL && d < m->ngpus; d++) {
        const mgpu_gpu_id *g = &m->gpu[d];
        json_t *gpu = json_pack("{s:i, s:o, s:o, s:o}", "device", g->device, "name",
                                text_json(g->name), "uuid", text_json(g->uuid[0] ? g->uuid : NULL),
                                "pci_bus_id", text_json(g->pci_bus_id[0] ? g->pci_bus_id : NULL));
        if (json_array_append_new(list, gpu) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    return list;
}

json_t *mgpu_provenance_json(const mgpu_machine *m)
{
    json_t *o = json_pack(
        "{s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:o}", "gpus", m->gpus, "cuda_runtime",
        m->runtime > 0 ? json_integer(m->runtime) : json_null(), "cuda_driver",
        m->driver > 0 ? json_integer(m->driver) : json_null(), "mgpu_version", MGPU_VERSION,
        "hostname", text_json(m->hostname[0] ? m->hostname : NULL), "timestamp",
        text_json(m->timestamp[0] ? m->timestamp : NULL), "gpu_list", gpus_json(m), "nvidia_driver",
        text_json(m->nvidia_driver[0] ? m->nvidia_driver : NULL));
    for (const mgpu_build_field *b = mgpu_build; o && b->key; b++)
        if (json_object_set_new(o, b->key, text_json(b->text)) != 0) {
            json_decref(o);
            o = NULL;
        }
    return o;
}

static char *gpus_text(const mgpu_machine *m)
{
    json_t *list = gpus_json(m);
    char *text = list ? json_dumps(list, JSON_FLAGS) : NULL;

    json_decref(list);
    return text;
}

/* F's value; NULL when out of memory. */
static json_t *field_json(const field *f)
{
    if (!is_measured(f))
        return json_null();
    switch (f->kind) {
    case FIELD_TEXT:
        return text_json(f->text);
    case FIELD_INTEGER:
    case FIELD_COUNT:
        return json_integer((json_int_t) f->integer);
    case FIELD_NUMBER:
        /* A whole number below 10^10 as an integer ("max_error": 0), as
         * %.10g writes it in CSV and as the record always wrote it: scripts
         * that read the text see what they saw. */
        if (f->number == floor(f->number) && fabs(f->number) < 1e10)
            return json_integer((json_int_t) f->number);
        return json_real(f->number);
    case FIELD_VERDICT:
    case FIELD_BOOLEAN:
        return f->integer < 0 ? json_null() : json_boolean(f->integer > 0);
    case FIELD_GPUS:
        return gpus_json(f->machine);
    }
    return json_null();
}

/* One object on one line.  -1 when out of memory. */
static int print_json(const field_list *list, FILE *out)
{
    json_t *record = json_object();
    int failed = record == NULL;

    for (int i = 0; !failed && i < list->count; i++)
        failed = json_object_set_new(record, list->item[i].key, field_json(&list->item[i])) != 0;
    char *text = failed ? NULL : json_dumps(record, JSON_FLAGS);
    json_decref(record);
    if (text == NULL)
        return -1;
    fprintf(out, "%s\n", text);
    free(text);
    return 0;
}

#else /* !MGPU_HAVE_JANSSON: the record's JSON by hand */

static void json_string(const char *text, FILE *out)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *) text; *c != '\0'; c++) {
        switch (*c) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default:
            if (*c < 0x20)
                fprintf(out, "\\u%04X", *c);
            else
                fputc(*c, out);
        }
    }
    fputc('"', out);
}

/* TEXT as a JSON string; empty: null. */
static void json_string_or_null(const char *text, FILE *out)
{
    if (text[0] != '\0')
        json_string(text, out);
    else
        fputs("null", out);
}

static void json_gpus(const mgpu_machine *m, FILE *out)
{
    fputc('[', out);
    for (int d = 0; d < m->ngpus; d++) {
        const mgpu_gpu_id *g = &m->gpu[d];
        fprintf(out, "%s{\"device\": %d, \"name\": ", d ? ", " : "", g->device);
        json_string_or_null(g->name, out);
        fputs(", \"uuid\": ", out);
        json_string_or_null(g->uuid, out);
        fputs(", \"pci_bus_id\": ", out);
        json_string_or_null(g->pci_bus_id, out);
        fputc('}', out);
    }
    fputc(']', out);
}

static char *gpus_text(const mgpu_machine *m)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);

    if (out == NULL)
        return NULL;
    json_gpus(m, out);
    if (ferror(out) | (fclose(out) != 0)) {
        free(text);
        return NULL;
    }
    return text;
}

#endif /* MGPU_HAVE_JANSSON */

/* ------------------------------------------------- the formats' values */

/* How a format writes a field's value: what stands for a value not
 * measured (NULL: nothing), how it quotes text, the significant digits of a
 * number, and its words for a verdict passed, failed and skipped. */
typedef struct value_style {
    const char *missing;
    void (*text)(const char *text, FILE *out);
    int digits;
    const char *verdict[3];
} value_style;

/* -1 when out of memory. */
static int print_value(const field *f, const value_style *style, FILE *out)
{
    if (!is_measured(f)) {
        if (style->missing)
            fputs(style->missing, out);
        return 0;
    }
    switch (f->kind) {
    case FIELD_TEXT:
        style->text(f->text, out);
        break;
    case FIELD_INTEGER:
    case FIELD_COUNT:
        fprintf(out, "%lld", f->integer);
        break;
    case FIELD_NUMBER:
        fprintf(out, "%.*g", style->digits, f->number);
        break;
    case FIELD_VERDICT:
        fputs(style->verdict[f->integer > 0 ? 0 : f->integer == 0 ? 1 : 2], out);
        break;
    case FIELD_BOOLEAN:
        fputs(f->integer > 0 ? "true" : "false", out);
        break;
    case FIELD_GPUS: {
        char *text = gpus_text(f->machine);
        if (text == NULL)
            return -1;
        style->text(text, out);
        free(text);
        break;
    }
    }
    return 0;
}

static void put_text(const char *text, FILE *out) { fputs(text, out); }

#ifndef MGPU_HAVE_JANSSON
static const value_style json_style = {"null", json_string, 10, {"true", "false", "null"}};

static int print_json(const field_list *list, FILE *out)
{
    fputc('{', out);
    for (int i = 0; i < list->count; i++) {
        const field *f = &list->item[i];
        if (i > 0)
            fputs(", ", out);
        json_string(f->key, out);
        fputs(": ", out);
        if (f->kind == FIELD_GPUS)
            json_gpus(f->machine, out);
        else
            print_value(f, &json_style, out);
    }
    fputs("}\n", out);
    return 0;
}
#endif

/* ---------------------------------------------------------------- table */

/* Human readable: six significant digits are more than any timing holds. */
static const value_style table_style = {"n/a", put_text, 6, {"passed", "failed", "skipped"}};

static int print_table(const field_list *list, const mgpu_record *r, FILE *out)
{
    int width = 0;

    for (int i = 0; i < list->count; i++) {
        int len = (int) strlen(list->item[i].key);
        if (len > width)
            width = len;
    }
    fprintf(out, "# %s (%s): %s\n", r->program ? r->program : "mgpu",
            r->strategy ? r->strategy : "", BANDWIDTH_RULE);
    for (int i = 0; i < list->count; i++) {
        fprintf(out, "%-*s  ", width, list->item[i].key);
        if (print_value(&list->item[i], &table_style, out) != 0)
            return -1;
        fputc('\n', out);
    }
    return 0;
}

/* ------------------------------------------------------------------ CSV */

/* A CSV cell, quoted as RFC 4180 asks when it holds a separator, a quote
 * or a line break (a quote inside is doubled). */
void mgpu_csv_text(const char *text, FILE *out)
{
    if (strpbrk(text, ",\"\r\n") == NULL) {
        fputs(text, out);
        return;
    }
    fputc('"', out);
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '"')
            fputc('"', out);
        fputc(*c, out);
    }
    fputc('"', out);
}

/* Machine formats: ten significant digits, enough to compare runs. */
static const value_style csv_style = {NULL, mgpu_csv_text, 10, {"passed", "failed", "skipped"}};

static int print_csv(const field_list *list, int header, FILE *out)
{
    if (header) {
        for (int i = 0; i < list->count; i++) {
            if (i > 0)
                fputc(',', out);
            mgpu_csv_text(list->item[i].key, out);
        }
        fputc('\n', out);
    }
    for (int i = 0; i < list->count; i++) {
        if (i > 0)
            fputc(',', out);
        if (print_value(&list->item[i], &csv_style, out) != 0)
            return -1;
    }
    fputc('\n', out);
    return 0;
}

mgpu_status mgpu_provenance_csv(const mgpu_machine *m, int header, FILE *out)
{
    field_list list = {.count = 0};

    add_machine_fields(&list, m, NULL);
    for (int i = 0; i < list.count; i++) {
        fputc(',', out);
        if (header)
            mgpu_csv_text(list.item[i].key, out);
        else if (print_value(&list.item[i], &csv_style, out) != 0)
            return mgpu_fail(MGPU_ERR_NOMEM, "the provenance: out of host memory");
    }
    return MGPU_OK;
}

mgpu_status mgpu_record_print(const mgpu_record *record, mgpu_format format, int header, FILE *out)
{
    field_list list;
    mgpu_machine m;
    int failed;

    machine_of(record, &m);
    collect_fields(&list, record, &m);
    switch (format) {
    case MGPU_FORMAT_CSV:
        failed = print_csv(&list, header, out);
        break;
    case MGPU_FORMAT_JSON:
        failed = print_json(&list, out);
        break;
    case MGPU_FORMAT_TABLE:
    default:
        failed = print_table(&list, record, out);
        break;
    }
    if (failed)
        return mgpu_fail(MGPU_ERR_NOMEM, "the record: out of host memory");
    return mgpu_output_flush(out, "the record");
}
