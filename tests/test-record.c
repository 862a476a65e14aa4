/* test-record.c - the result record in its three formats: the same fields
 * everywhere, derived values computed right, JSON numbers as numbers and
 * strings escaped, "not measured" as null / empty / n/a.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mgpu.h"
#include "mgpu/harness.h"
#include "mgpu/measurement.h"

#define MAX_TEXT 16384

static const mgpu_program program = {
    .name = "test-prog",
    .strategy = "testing",
    .summary = "records",
    .exchanges = MGPU_STENCIL_EXCHANGES,
};

/* The fields every record has, in their order. */
static const char *const common_keys[] = {
    "schema",
    "program",
    "strategy",
    "backend",
    "backend_reason",
    "kernel",
    "exchange",
    "devices",
    "nx",
    "ny",
    "steps",
    "repeats",
    "halo",
    "time_block",
    "exchanges",
    "staging_chunk_bytes",
    "time_s",
    "time_min_s",
    "time_max_s",
    "us_per_step",
    "host_issue_us_per_step",
    "host_wait_us_per_step",
    "device_us_per_step",
    "gcells_per_s",
    "gbytes_per_s",
    "exchange_s",
    "exchange_share",
    "copy_gbytes_per_s",
    "roofline",
    "baseline_s",
    "speedup",
    "efficiency",
    "verify",
    "verified",
    "max_error",
    "tolerance",
    "gpus",
    "cuda_runtime",
    "cuda_driver",
    "mgpu_version",
    "hostname",
    "timestamp",
    "binding",
    "gpu_list",
    "nvidia_driver",
    "mgpu_revision",
    "build_cuda",
    "build_cuda_archs",
    "build_nccl",
    "build_mpi",
    "build_hwloc",
    "build_jansson",
};
#define COMMON_KEYS (sizeof common_keys / sizeof common_keys[0])

/* The record printed in FORMAT, as a string in TEXT. */
static void print_to_text(const mgpu_record *record, mgpu_format format, int header, char *text)
{
    FILE *file = tmpfile();
    size_t n;

    if (file == NULL) {
        perror("test-record: tmpfile");
        exit(99);
    }
    mgpu_record_print(record, format, header, file);
    rewind(file);
    n = fread(text, 1, MAX_TEXT - 1, file);
    text[n] = '\0';
    fclose(file);
}

/* A record whose derived values are round numbers: 1000 x 1000 interior
 * cells, 100 steps in 0.5 s on 4 devices, 1.6 s on one. */
static void known_record(mgpu_record *record)
{
    mgpu_options opt = {
        .nx = 1002,
        .ny = 1002,
        .steps = 100,
        .devices = 4,
        .repeat = 3,
        .kernel = MGPU_KERNEL_JACOBI,
        .exchange = MGPU_EXCHANGE_PEER_ASYNC,
    };

    mgpu_record_init(record, &program, &opt);
    record->time = (mgpu_stats){0.5, 0.4, 0.7};
    record->exchange_s = 0.1;
    record->copy_gbytes_per_s = 3.2;
    record->baseline_s = 1.6;
    record->verify = "cpu";
    record->verified = 1;
    record->max_error = 0.0;
    record->tolerance = 1e-6;
}

/* ----------------------------------------------------------- reading JSON */

/* The text right after "KEY": in JSON, or NULL. */
static const char *json_value(const char *json, const char *key)
{
    char pattern[128];
    const char *at;

    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    at = strstr(json, pattern);
    if (at == NULL)
        return NULL;
    at += strlen(pattern);
    while (*at == ' ')
        at++;
    return at;
}

/* 1 when KEY's value is a JSON number, stored in *NUMBER. */
static int json_number(const char *json, const char *key, double *number)
{
    const char *value = json_value(json, key);
    char *end;

    if (value == NULL || !(*value == '-' || (*value >= '0' && *value <= '9')))
        return 0;
    *number = strtod(value, &end);
    return *end == ',' || *end == '}';
}

static int json_is(const char *json, const char *key, const char *literal)
{
    const char *value = json_value(json, key);

    return value != NULL && strncmp(value, literal, strlen(literal)) == 0;
}

/* 1 when some JSON string holds only a number ("12", "0.5"): a number
 * printed as a string.  The build's versions ("2.14") are texts. */
static int has_quoted_number(const char *record)
{
    static char json[MAX_TEXT];
    const char *c = json;

    snprintf(json, sizeof json, "%s", record);
    for (const mgpu_build_field *b = mgpu_build; b->key; b++) {
        char *value = (char *) json_value(json, b->key);
        if (value && *value == '"')
            for (value++; *value && *value != '"'; value++)
                *value = 'v';
    }

    while ((c = strchr(c, '"')) != NULL) {
        const char *begin = ++c;
        char *end;
        while (*c != '\0' && *c != '"')
            c += (*c == '\\' && c[1] != '\0') ? 2 : 1;
        if (c > begin) {
            strtod(begin, &end);
            if (end == c)
                return 1;
        }
        if (*c == '"')
            c++;
    }
    return 0;
}

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

/* ------------------------------------------------------------ reading CSV */

/* Fields of one CSV line, quotes respected; *REST gets the next line. */
static int csv_fields(const char *line, const char **rest)
{
    int fields = 1, quoted = 0;
    const char *c = line;

    for (; *c != '\0' && (quoted || *c != '\n'); c++) {
        if (*c == '"')
            quoted = !quoted; /* a doubled quote toggles twice */
        else if (*c == ',' && !quoted)
            fields++;
    }
    *rest = *c == '\n' ? c + 1 : c;
    return fields;
}

/* ----------------------------------------------------------------- tests */

static void test_init(void)
{
    mgpu_record record;
    mgpu_options opt = {.nx = 34, .ny = 29, .steps = 5, .devices = 2, .repeat = 3};

    mgpu_record_init(&record, &program, &opt);
    CHECK(strcmp(record.program, "test-prog") == 0 && strcmp(record.strategy, "testing") == 0,
          "init: program and strategy");
    CHECK(record.nx == 34 && record.ny == 29 && record.steps == 5 && record.devices == 2 &&
              record.repeats == 3,
          "init: the problem from the options");
    CHECK(record.backend == mgpu_backend_active(), "init: the active backend");
    CHECK(record.time.median == 0 && record.exchange_s < 0 && record.verified == -1 &&
              strcmp(record.verify, "none") == 0 && record.nextra == 0,
          "init: nothing measured yet");
}

static void test_derived_values(void)
{
    mgpu_record record;
    char json[MAX_TEXT];
    double value = 0;

    known_record(&record);
    print_to_text(&record, MGPU_FORMAT_JSON, 1, json);
    CHECK(json_number(json, "time_s", &value) && near(value, 0.5), "time_s 0.5");
    CHECK(json_number(json, "us_per_step", &value) && near(value, 5000), "us_per_step 5000");
    CHECK(json_number(json, "gcells_per_s", &value) && near(value, 0.2),
          "gcells_per_s: 1e6 cells x 100 steps / 0.5 s = 0.2 (got %g)", value);
    CHECK(json_number(json, "gbytes_per_s", &value) && near(value, 1.6),
          "gbytes_per_s: 8 bytes per cell = 1.6 (got %g)", value);
    CHECK(json_number(json, "exchange_share", &value) && near(value, 0.2),
          "exchange_share 0.1 / 0.5 = 0.2");
    CHECK(json_number(json, "roofline", &value) && near(value, 0.5), "roofline 1.6 / 3.2");
    CHECK(json_number(json, "speedup", &value) && near(value, 3.2), "speedup 1.6 / 0.5");
    CHECK(json_number(json, "efficiency", &value) && near(value, 0.8),
          "efficiency 3.2 / 4 devices = 0.8 (got %g)", value);
    CHECK(json_number(json, "devices", &value) && value == 4, "devices 4, a number");
    CHECK(json_is(json, "verified", "true"), "verified true");
    CHECK(json_is(json, "kernel", "\"jacobi\"") && json_is(json, "exchange", "\"peer-async\""),
          "kernel and exchange by name");
}

static void test_json(void)
{
    mgpu_record record;
    char json[MAX_TEXT];
    const char *chunks_key;
    double value = 0;

    known_record(&record);
    mgpu_record_set_text(&record, "context", "runtime");
    mgpu_record_set_number(&record, "chunks", 8);
    mgpu_record_set_text(&record, "note", "say \"hi\" \\ back\tand\x01");
    mgpu_record_set_text(&record, "utf8", "caf\xc3\xa9");
    mgpu_record_set_number(&record, "weird", NAN);
    mgpu_record_set_number(&record, "chunks", 16); /* replaces */
    mgpu_record_set_boolean(&record, "on", 1);
    mgpu_record_set_boolean(&record, "off", 0);
    mgpu_record_set_boolean(&record, "unknown", -1);
    print_to_text(&record, MGPU_FORMAT_JSON, 1, json);

    CHECK(json[0] == '{' && strchr(json, '\n') == json + strlen(json) - 1,
          "JSON: one object on one line");
    for (size_t i = 0; i < COMMON_KEYS; i++)
        CHECK(json_value(json, common_keys[i]) != NULL, "JSON has %s", common_keys[i]);
    CHECK(json_number(json, "time_s", &value), "\"time_s\": is followed by a number");
    CHECK(!has_quoted_number(json), "JSON: no number in quotes");
    CHECK(json_is(json, "context", "\"runtime\""), "extra text field");
    CHECK(json_number(json, "chunks", &value) && value == 16, "extra number, replaced by 16");
    chunks_key = strstr(json, "\"chunks\"");
    CHECK(chunks_key != NULL && strstr(chunks_key + 1, "\"chunks\"") == NULL,
          "the replaced key appears once");
    CHECK(json_is(json, "note", "\"say \\\"hi\\\" \\\\ back\\tand\\u0001\""),
          "quote, backslash and control characters escaped");
    CHECK(json_is(json, "utf8", "\"caf\xc3\xa9\""), "UTF-8 kept as it is");
    CHECK(json_is(json, "weird", "null"), "NaN prints as null");
    CHECK(json_is(json, "on", "true") && json_is(json, "off", "false") &&
              json_is(json, "unknown", "null"),
          "extra booleans: true, false, and null where not known");
    CHECK(strstr(json, "nan") == NULL && strstr(json, "inf") == NULL, "no nan or inf");
}

static void test_not_measured(void)
{
    mgpu_record record;
    mgpu_options opt = {.nx = 34, .ny = 29, .steps = 5, .devices = 2, .repeat = 3};
    static const char *const nulls[] = {
        "exchange_s", "exchange_share", "copy_gbytes_per_s", "roofline",
        "baseline_s", "speedup",        "efficiency",        "verified",
        "max_error",  "tolerance",      "gcells_per_s",      "staging_chunk_bytes",
    };
    char json[MAX_TEXT], csv[MAX_TEXT], table[MAX_TEXT];

    mgpu_record_init(&record, &program, &opt);
    print_to_text(&record, MGPU_FORMAT_JSON, 1, json);
    print_to_text(&record, MGPU_FORMAT_CSV, 1, csv);
    print_to_text(&record, MGPU_FORMAT_TABLE, 1, table);
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        CHECK(json_is(json, nulls[i], "null"), "not measured: JSON %s is null", nulls[i]);
    CHECK(strstr(csv, ",,") != NULL, "not measured: empty CSV cells");
    CHECK(strstr(csv, "skipped") != NULL && strstr(table, "skipped") != NULL,
          "verified: skipped in CSV and table");
    CHECK(strstr(table, "n/a") != NULL, "not measured: n/a in the table");

    record.verified = 0;
    print_to_text(&record, MGPU_FORMAT_JSON, 1, json);
    print_to_text(&record, MGPU_FORMAT_CSV, 0, csv);
    CHECK(json_is(json, "verified", "false") && strstr(csv, "failed"), "verified: failed");
}

static void test_csv(void)
{
    mgpu_record record;
    char csv[MAX_TEXT];
    const char *data, *end;
    int header_fields, data_fields;

    known_record(&record);
    mgpu_record_set_text(&record, "note", "a, b and \"c\"");
    mgpu_record_set_number(&record, "chunks", 8);
    mgpu_record_set_boolean(&record, "on", 1);
    mgpu_record_set_boolean(&record, "off", 0);
    mgpu_record_set_boolean(&record, "unknown", -1);
    print_to_text(&record, MGPU_FORMAT_CSV, 1, csv);

    header_fields = csv_fields(csv, &data);
    data_fields = csv_fields(data, &end);
    CHECK(header_fields == (int) COMMON_KEYS + 5, "CSV header: %d fields", header_fields);
    CHECK(data_fields == header_fields, "CSV data: %d fields, as many as the header", data_fields);
    CHECK(*end == '\0', "CSV: header and one line, nothing else");
    CHECK(strncmp(csv, "schema,program,strategy,backend,backend_reason,kernel,", 54) == 0,
          "CSV header in the record's order");
    CHECK(strstr(data, "\"a, b and \"\"c\"\"\"") != NULL, "RFC 4180 quoting of , and \"");
    CHECK(strstr(data, ",passed,") != NULL, "verified: passed");
    CHECK(strstr(data, ",8,true,false,\n") != NULL,
          "extra booleans: true, false, and an empty cell where not known");

    print_to_text(&record, MGPU_FORMAT_CSV, 0, csv);
    CHECK(strncmp(csv, "2,test-prog,testing,", 20) == 0 && strchr(csv, '\n') == strrchr(csv, '\n'),
          "CSV without header: the data line only");
}

static void test_table(void)
{
    mgpu_record record;
    char table[MAX_TEXT], line[64];

    known_record(&record);
    mgpu_record_set_text(&record, "context", "runtime");
    mgpu_record_set_boolean(&record, "on", 1);
    mgpu_record_set_boolean(&record, "unknown", -1);
    print_to_text(&record, MGPU_FORMAT_TABLE, 1, table);
    CHECK(table[0] == '#' &&
              strstr(table, "8 bytes per interior cell per step (one read and one write of a "
                            "float)") != NULL,
          "table: the byte-counting rule first");
    for (size_t i = 0; i < COMMON_KEYS; i++) {
        snprintf(line, sizeof line, "\n%s ", common_keys[i]);
        CHECK(strstr(table, line) != NULL, "table has a line for %s", common_keys[i]);
    }
    CHECK(strstr(table, "\ncontext ") != NULL, "table has the extra field");
    CHECK(strstr(table, "passed") != NULL, "table: verified passed");
    const char *on = strstr(table, "\non "), *unknown = strstr(table, "\nunknown ");
    CHECK(on && strncmp(on + 4 + strspn(on + 4, " "), "true\n", 5) == 0 && unknown &&
              strncmp(unknown + 9 + strspn(unknown + 9, " "), "n/a\n", 4) == 0,
          "table: an extra boolean true, and n/a where not known");
}

/* What the run's domain resolved: the exchange mode, and the chunk of its
 * staged exchange where it went in chunks (MGPU_STAGING_CHUNK of a few
 * bytes on a small grid), null where the blocks went whole or the mode is
 * another. */
static void test_stencil_fields(void)
{
    static const struct {
        mgpu_exchange exchange;
        const char *chunk, *name, *field;
    } cases[] = {
        {MGPU_EXCHANGE_STAGED, "20", "\"staged\"", "20"},
        {MGPU_EXCHANGE_STAGED, "0", "\"staged\"", "null"},
        {MGPU_EXCHANGE_STAGED, "1000000", "\"staged\"", "null"},
        {MGPU_EXCHANGE_AUTO, "20", "\"direct\"", "null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mgpu_options opt = {.nx = 17,
                            .ny = 13,
                            .steps = 3,
                            .devices = 2,
                            .repeat = 1,
                            .halo = 1,
                            .exchange = cases[i].exchange};
        mgpu_stencil_desc desc = mgpu_stencil_desc_of(&opt, 2);
        mgpu_stencil *st = NULL;
        mgpu_record record;
        char json[MAX_TEXT], field[32];

        setenv("MGPU_STAGING_CHUNK", cases[i].chunk, 1);
        mgpu_status status = mgpu_stencil_create(&st, &desc);
        CHECK(status == MGPU_OK, "a domain of 2 parts, %s", mgpu_last_error());
        if (status != MGPU_OK)
            continue;
        mgpu_record_init(&record, &program, &opt);
        mgpu_record_set_stencil(&record, st);
        mgpu_stencil_destroy(st);
        print_to_text(&record, MGPU_FORMAT_JSON, 1, json);
        snprintf(field, sizeof field, "%s, ", cases[i].field); /* 20, not 200 */
        CHECK(json_is(json, "exchange", cases[i].name) &&
                  json_is(json, "staging_chunk_bytes", field),
              "MGPU_STAGING_CHUNK=%s, exchange %s: exchange %s, staging_chunk_bytes %s",
              cases[i].chunk, mgpu_exchange_name(cases[i].exchange), cases[i].name, cases[i].field);
    }
    unsetenv("MGPU_STAGING_CHUNK");
}

/* Where and when: the schema first, the machine after the verdict, each
 * typed; on the host backend no CUDA versions. */
static void test_metadata(void)
{
    mgpu_record record;
    char json[MAX_TEXT], csv[MAX_TEXT], table[MAX_TEXT], pattern[64];
    const char *stamp;
    double value = 0;
    int y, mo, d, h, mi, sec, n = 0;

    known_record(&record);
    record.started = 1795391999; /* 2026-11-22T23:59:59Z */
    print_to_text(&record, MGPU_FORMAT_JSON, 1, json);
    CHECK(strncmp(json, "{\"schema\": 2, \"program\":", 24) == 0, "JSON: schema 2 first");
    CHECK(json_number(json, "schema", &value) && value == MGPU_RECORD_SCHEMA,
          "schema is the number %d", MGPU_RECORD_SCHEMA);
    CHECK(json_is(json, "gpus", "\"host\""), "host backend: gpus \"host\"");
    CHECK(json_is(json, "cuda_runtime", "null") && json_is(json, "cuda_driver", "null"),
          "host backend: CUDA versions null");
    snprintf(pattern, sizeof pattern, "\"%s\"", MGPU_VERSION);
    CHECK(json_is(json, "mgpu_version", pattern), "mgpu_version is MGPU_VERSION");
    CHECK(json_is(json, "hostname", "\"") && !json_is(json, "hostname", "\"\""),
          "hostname: a string, not empty");
    CHECK(json_is(json, "timestamp", "\"2026-11-22T23:59:59Z\""), "timestamp: ISO 8601 UTC");
    const char *tolerance = strstr(json, "\"tolerance\": "), *gpus = strstr(json, "\"gpus\": ");
    /* The key after tolerance's (1e-06, jansson's 1e-6) is gpus. */
    CHECK(tolerance && gpus && strchr(tolerance + strlen("\"tolerance\": "), '"') == gpus,
          "the machine follows the verdict");

    mgpu_record_init(&record, &program,
                     &(mgpu_options){.nx = 10, .ny = 10, .steps = 1, .devices = 1, .repeat = 1});
    print_to_text(&record, MGPU_FORMAT_JSON, 1, json);
    stamp = json_value(json, "timestamp");
    CHECK(stamp &&
              sscanf(stamp, "\"%4d-%2d-%2dT%2d:%2d:%2dZ\"%n", &y, &mo, &d, &h, &mi, &sec, &n) ==
                  6 &&
              n == 22 && y >= 2024,
          "a new record is stamped now (%.24s)", stamp ? stamp : "none");

    print_to_text(&record, MGPU_FORMAT_CSV, 1, csv);
    CHECK(strstr(csv, ",gpus,cuda_runtime,cuda_driver,mgpu_version,hostname,timestamp") &&
              strstr(csv, ",host,,,"),
          "CSV: the machine's fields, CUDA versions empty");
    print_to_text(&record, MGPU_FORMAT_TABLE, 1, table);
    CHECK(strstr(table, "\nschema ") && strstr(table, "\ncuda_runtime  ") &&
              strstr(table, "n/a\ncuda_driver"),
          "table: schema, and n/a for the CUDA versions");
}

/* The binding field: one reason when no worker was bound, else each
 * device's CPUs in device order; cut at a device when too long; whose
 * placement it was when OpenMP's. */
static void test_binding(void)
{
    static mgpu_binding binding;
    mgpu_record record;
    char json[MAX_TEXT];
    mgpu_options opt = {.nx = 10, .ny = 10, .steps = 1, .devices = 2, .repeat = 1};

    mgpu_record_init(&record, &program, &opt);
    print_to_text(&record, MGPU_FORMAT_JSON, 1, json);
    CHECK(json_is(json, "binding", "\"none (not told)\", "), "binding: none until told");

    snprintf(binding.cpus[0], MGPU_BIND_TEXT, "none (--bind=none)");
    snprintf(binding.cpus[1], MGPU_BIND_TEXT, "none (--bind=none)");
    mgpu_record_set_binding(&record, &binding);
    CHECK(strcmp(record.binding, "none (--bind=none)") == 0, "one reason for all: %s",
          record.binding);

    snprintf(binding.cpus[0], MGPU_BIND_TEXT, "0-15,32-47");
    snprintf(binding.cpus[1], MGPU_BIND_TEXT, "none (sched_setaffinity: Invalid argument)");
    mgpu_record_set_binding(&record, &binding);
    CHECK(strcmp(record.binding, "0:0-15,32-47;1:none (sched_setaffinity: Invalid argument)") == 0,
          "each device's: %s", record.binding);

    record.devices = MGPU_MAX_DEVICES;
    for (int d = 0; d < MGPU_MAX_DEVICES; d++) {
        memset(binding.cpus[d], '7', MGPU_BIND_TEXT - 1);
        binding.cpus[d][MGPU_BIND_TEXT - 1] = '\0';
    }
    mgpu_record_set_binding(&record, &binding);
    size_t n = strlen(record.binding);
    CHECK(n < sizeof record.binding && n > 4 && strcmp(record.binding + n - 4, ";...") == 0,
          "too long: cut at a device with ;... (%zu bytes)", n);

    record.devices = 2;
    snprintf(binding.cpus[0], MGPU_BIND_TEXT, "0");
    snprintf(binding.cpus[1], MGPU_BIND_TEXT, "1");
    setenv("OMP_PLACES", "cores", 1);
    mgpu_record_set_binding(&record, &binding);
    unsetenv("OMP_PLACES");
    CHECK(strcmp(record.binding, "0:0;1:1 (OMP_PLACES set: OpenMP's placement kept)") == 0,
          "OpenMP's placement: %s", record.binding);
}

static void test_extra_limit(void)
{
    static const char *const keys[] = {"k0", "k1", "k2",  "k3",  "k4",  "k5",  "k6", "k7",
                                       "k8", "k9", "k10", "k11", "k12", "k13", "k14"};
    mgpu_record record;
    char long_text[200];
    mgpu_options opt = {.nx = 10, .ny = 10, .steps = 1, .devices = 1, .repeat = 1};

    mgpu_record_init(&record, &program, &opt);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        mgpu_record_set_number(&record, keys[i], (double) i);
    CHECK(record.nextra == MGPU_RECORD_EXTRA, "extras beyond %d are dropped (have %d)",
          MGPU_RECORD_EXTRA, record.nextra);
    mgpu_record_set_text(&record, "k3", "three");
    CHECK(record.nextra == MGPU_RECORD_EXTRA && record.extra[3].kind == MGPU_RECORD_TEXT &&
              strcmp(record.extra[3].text, "three") == 0,
          "a full record still replaces an existing key");

    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    mgpu_record_set_text(&record, "k0", long_text);
    CHECK(strlen(record.extra[0].text) == sizeof record.extra[0].text - 1,
          "a long text is cut to fit");
}

/* TEXT written by WRITE (mgpu_csv_text), in OUT. */
static void write_text(void (*write)(const char *, FILE *), const char *text, char *out,
                       size_t size)
{
    FILE *file = tmpfile();
    if (file == NULL) {
        perror("test-record: tmpfile");
        exit(99);
    }
    write(text, file);
    rewind(file);
    size_t n = fread(out, 1, size - 1, file);
    out[n] = '\0';
    fclose(file);
}

/* The CSV cell writer the programs that write their own CSV share. */
static void test_text_writers(void)
{
    char out[256];
    write_text(mgpu_csv_text, "plain text", out, sizeof out);
    CHECK(strcmp(out, "plain text") == 0, "CSV: plain text as it is: %s", out);
    write_text(mgpu_csv_text, "a,b \"c\"", out, sizeof out);
    CHECK(strcmp(out, "\"a,b \"\"c\"\"\"") == 0, "CSV: a comma and quotes quoted: %s", out);
    write_text(mgpu_csv_text, "two\nlines", out, sizeof out);
    CHECK(strcmp(out, "\"two\nlines\"") == 0, "CSV: a line break quoted");
}

/* Where the run came from: each device's GPU as an object (the host
 * backend's named host), the GPUs a group's processes told, and the build's
 * own fields, in every format. */
static void test_provenance(void)
{
    static const mgpu_gpu_id told[2] = {
        {.device = 0,
         .name = "GPU \"A\"",
         .uuid = "GPU-01234567-89ab-cdef-0123-456789abcdef",
         .pci_bus_id = "0000:1b:00.0"},
        {.device = 0, .name = "GPU B", .pci_bus_id = "0001:2c:00.0"},
    };
    mgpu_record record;
    char json[MAX_TEXT], csv[MAX_TEXT], table[MAX_TEXT], pattern[256];
    mgpu_options opt = {.nx = 10, .ny = 10, .steps = 1, .devices = 2, .repeat = 1};

    mgpu_record_init(&record, &program, &opt);
    print_to_text(&record, MGPU_FORMAT_JSON, 1, json);
    CHECK(json_is(json, "gpu_list",
                  "[{\"device\": 0, \"name\": \"host\", \"uuid\": null, \"pci_bus_id\": null}, "
                  "{\"device\": 1, \"name\": \"host\", \"uuid\": null, \"pci_bus_id\": null}], "),
          "host backend: a GPU object a device, named host, no UUID or bus");
    CHECK(json_is(json, "nvidia_driver", "null"), "host backend: no driver version");
    for (const mgpu_build_field *b = mgpu_build; b->key; b++) {
        snprintf(pattern, sizeof pattern, "\"%s\"", b->text);
        CHECK(b->text[0] && json_is(json, b->key, pattern), "%s: %s", b->key, b->text);
    }
    CHECK(json_value(json, "mgpu_revision") && !json_is(json, "mgpu_revision", "\"\""),
          "mgpu_revision: told");
#ifdef MGPU_HAVE_JANSSON
    CHECK(!json_is(json, "build_jansson", "\"none\""), "build_jansson: a version");
#else
    CHECK(json_is(json, "build_jansson", "\"none\""), "build_jansson: none");
#endif
#ifndef MGPU_HAVE_CUDA
    CHECK(json_is(json, "build_cuda", "\"none\"") && json_is(json, "build_cuda_archs", "\"none\""),
          "a build without CUDA: build_cuda and its architectures none");
#endif

    /* The machine's fields, then the build's, one after the other. */
    print_to_text(&record, MGPU_FORMAT_CSV, 1, csv);
    pattern[0] = '\0';
    for (int i = 0; mgpu_record_machine_fields[i]; i++)
        snprintf(pattern + strlen(pattern), sizeof pattern - strlen(pattern), ",%s",
                 mgpu_record_machine_fields[i]);
    for (const mgpu_build_field *b = mgpu_build; b->key; b++)
        snprintf(pattern + strlen(pattern), sizeof pattern - strlen(pattern), ",%s", b->key);
    CHECK(strstr(csv, pattern) != NULL, "CSV header: the provenance fields in order (%s)", pattern);
    CHECK(strstr(csv, ",\"[{\"\"device\"\": 0, \"\"name\"\": \"\"host\"\", ") != NULL,
          "CSV: gpu_list's JSON text, quoted as RFC 4180 asks");
    print_to_text(&record, MGPU_FORMAT_TABLE, 1, table);
    CHECK(strstr(table, "\ngpu_list ") && strstr(table, "  [{\"device\": 0, \"name\": \"host\""),
          "table: gpu_list's JSON text");

    /* A group's processes tell their own GPUs: those are the record's. */
    record.backend = MGPU_BACKEND_CUDA;
    mgpu_record_set_gpus(&record, told, 2);
    print_to_text(&record, MGPU_FORMAT_JSON, 1, json);
    CHECK(json_is(json, "gpus", "\"GPU \\\"A\\\"; GPU B\""), "told: gpus joins their names");
    CHECK(json_is(json, "gpu_list",
                  "[{\"device\": 0, \"name\": \"GPU \\\"A\\\"\", "
                  "\"uuid\": \"GPU-01234567-89ab-cdef-0123-456789abcdef\", "
                  "\"pci_bus_id\": \"0000:1b:00.0\"}, "
                  "{\"device\": 0, \"name\": \"GPU B\", \"uuid\": null, "
                  "\"pci_bus_id\": \"0001:2c:00.0\"}], "),
          "told: each GPU as told, its name escaped, an unknown UUID null");
}

int main(void)
{
    mgpu_status status = mgpu_init(MGPU_BACKEND_HOST, 2);

    CHECK(status == MGPU_OK, "the host backend starts %s", mgpu_last_error());
    test_init();
    test_derived_values();
    test_json();
    test_not_measured();
    test_csv();
    test_table();
    test_stencil_fields();
    test_metadata();
    test_extra_limit();
    test_binding();
    test_text_writers();
    test_provenance();
    return check_done();
}
