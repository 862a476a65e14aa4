/* compare-row.c - the rows of a comparison, and where they come from: the
 * record a program printed for one run, or a results.json read back by
 * --from.  Nothing read is trusted: every name must be a plain name (no
 * blank, quote or control character can reach the table, the CSV or
 * gnuplot, where such text could forge lines or run commands), every text
 * must fit its field whole, and every number must be in the range the
 * command line accepts (a row of 2000000000 devices would have the plots
 * loop for minutes).  A row that breaks a rule is an error naming the row
 * and the field. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "mgpu.h"
#include "mgpu/harness.h"

/* ---------------------------------------------------------------- rows */

cmp_row *cmp_rows_add(cmp_rows *rows)
{
    if (rows->count == rows->capacity) {
        int capacity = rows->capacity ? 2 * rows->capacity : 32;
        cmp_row *grown = realloc(rows->row, (size_t) capacity * sizeof *grown);
        if (!grown)
            return NULL;
        rows->row = grown;
        rows->capacity = capacity;
    }
    cmp_row *r = &rows->row[rows->count++];
    memset(r, 0, sizeof *r);
    r->time_s = r->time_min_s = r->time_max_s = r->time_spread = r->us_per_step = NAN;
    r->gcells_per_s = r->gbytes_per_s = r->exchange_s = r->exchange_share = NAN;
    r->copy_gbytes_per_s = r->roofline = r->baseline_s = r->speedup = r->efficiency = NAN;
    r->host_issue_us_per_step = r->host_wait_us_per_step = r->device_us_per_step = NAN;
    r->max_error = r->exchanges = NAN;
    r->verified = -1;
    r->halo = 1;
    return r;
}

void cmp_rows_free(cmp_rows *rows)
{
    for (int i = 0; i < rows->count; i++)
        json_decref(rows->row[i].record);
    free(rows->row);
    rows->row = NULL;
    rows->count = rows->capacity = 0;
}

const char *cmp_status_name(cmp_status status)
{
    return status == RUN_OK ? "ok" : status == RUN_SKIPPED ? "skipped" : "failed";
}

int cmp_host_ran(const cmp_rows *rows)
{
    for (int i = 0; i < rows->count; i++) {
        if (rows->row[i].status == RUN_OK && strcmp(rows->row[i].backend, "host") == 0)
            return 1;
    }
    return 0;
}

/* ------------------------------------------------- fields into a row */

typedef struct reader {
    const json_t *o;
    char *error;
    size_t size;
} reader;

static int bad(reader *rd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rd->error, rd->size, fmt, ap);
    va_end(ap);
    return -1;
}

static int has_control(const char *text)
{
    for (const unsigned char *c = (const unsigned char *) text; *c; c++) {
        if (*c < 0x20 || *c == 0x7F)
            return 1;
    }
    return 0;
}

/* O's keys are names and its values scalars but for the field NESTED (or
 * NULL), its texts plain; WHAT names O in a message. */
static int scalars(reader *rd, const json_t *o, const char *nested, const char *what)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *) o, key, value) {
        if (nested && strcmp(key, nested) == 0)
            continue;
        if (strlen(key) > CMP_JSON_KEY)
            return bad(rd, "%sa key longer than %d bytes", what, CMP_JSON_KEY);
        if (!cmp_is_name(key))
            return bad(rd,
                       "%sa key that is not a name (letters, digits, and . _ + - after the "
                       "first)",
                       what);
        if (json_is_object(value) || json_is_array(value))
            return bad(rd, "%s\"%s\": nested value in a flat object", what, key);
        if (json_is_string(value) && has_control(json_string_value(value)))
            return bad(rd, "%s\"%s\": a control character", what, key);
    }
    return 0;
}

/* "gpu_list" (doc/record.md), the one nested field: an array of at most
 * MGPU_MAX_DEVICES GPUs, each an object of scalars with its device number,
 * name, and UUID and PCI bus id (text or null); or null (results.json's
 * metadata where no run printed one).  Only results.json and results.csv
 * write it again, as JSON. */
static int gpu_list_of(reader *rd, const json_t *list)
{
    size_t index;
    json_t *gpu;
    if (json_is_null(list))
        return 0;
    if (!json_is_array(list))
        return bad(rd, "\"gpu_list\": neither an array nor null");
    if (json_array_size(list) > MGPU_MAX_DEVICES)
        return bad(rd, "\"gpu_list\": more than %d GPUs", MGPU_MAX_DEVICES);
    json_array_foreach(list, index, gpu) {
        char what[48];
        snprintf(what, sizeof what, "\"gpu_list\" %zu: ", index + 1);
        if (!json_is_object(gpu) || json_object_size(gpu) > 16)
            return bad(rd, "%snot an object of at most 16 fields", what);
        if (scalars(rd, gpu, NULL, what) != 0)
            return -1;
        const json_t *device = json_object_get(gpu, "device");
        if (!json_is_integer(device) || json_integer_value(device) < 0 ||
            json_integer_value(device) >= MGPU_MAX_DEVICES)
            return bad(rd, "%s\"device\": not an integer from 0 to %d", what, MGPU_MAX_DEVICES - 1);
        if (!json_is_string(json_object_get(gpu, "name")))
            return bad(rd, "%s\"name\": not a string", what);
        static const char *const ids[] = {"uuid", "pci_bus_id"};
        for (int i = 0; i < 2; i++) {
            const json_t *id = json_object_get(gpu, ids[i]);
            if (!json_is_string(id) && !json_is_null(id))
                return bad(rd, "%s\"%s\": neither a string nor null", what, ids[i]);
        }
    }
    return 0;
}

/* The object is flat but for its gpu_list, of a sane size, its keys names
 * and its texts plain: fields a row has no place for are kept and written
 * again, so they are held to the same rules as those it has. */
static int flat_object(reader *rd)
{
    if (!json_is_object(rd->o))
        return bad(rd, "not an object");
    if (json_object_size(rd->o) > CMP_JSON_FIELDS)
        return bad(rd, "more than %d fields", CMP_JSON_FIELDS);
    const json_t *gpus = json_object_get(rd->o, "gpu_list");
    if (gpus && gpu_list_of(rd, gpus) != 0)
        return -1;
    return scalars(rd, rd->o, "gpu_list", "");
}

/* How a text field may look. */
enum { NAME, NAME_OR_EMPTY, TEXT };

/* KEY, a string, into OUT whole.  REQUIRED: absent is an error. */
static int text_of(reader *rd, const char *key, int form, int required, char *out, size_t size)
{
    const json_t *f = json_object_get(rd->o, key);
    if (!f)
        return required ? bad(rd, "no \"%s\"", key) : 0;
    if (!json_is_string(f))
        return bad(rd, "\"%s\": not a string", key);
    if (json_string_length(f) >= size)
        return bad(rd, "\"%s\": longer than %zu bytes", key, size - 1);
    memcpy(out, json_string_value(f), json_string_length(f) + 1);
    if (has_control(out))
        return bad(rd, "\"%s\": a control character", key);
    if (form == TEXT || (form == NAME_OR_EMPTY && !*out) || cmp_is_name(out))
        return 0;
    return bad(rd, "\"%s\": '%s' is not a name (letters, digits, and . _ + - after the first)", key,
               out);
}

/* "binding" (doc/record.md), when there: the CPUs of each device's worker
 * or why none, "0:0-15;1:16-31" or "none (WHY)", written in letters,
 * digits, blanks and the few signs those take; it is printed in the table
 * and plots' data again, so no other byte passes. */
static int binding_of(reader *rd)
{
    char text[2048] = ""; /* absent: nothing to check */
    if (text_of(rd, "binding", TEXT, 0, text, sizeof text) != 0)
        return -1;
    for (const char *c = text; *c; c++) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr(" :;,.-_()/='+", *c)))
            return bad(rd,
                       "\"binding\": '%s' is neither CPU lists nor a reason (letters, "
                       "digits, blanks and :;,.-_()/='+)",
                       text);
    }
    return 0;
}

/* KEY, an integer in [MIN, MAX], into *VALUE. */
static int integer_of(reader *rd, const char *key, long long min, long long max, long long *value)
{
    const json_t *f = json_object_get(rd->o, key);
    if (!f)
        return bad(rd, "no \"%s\"", key);
    if (!json_is_number(f))
        return bad(rd, "\"%s\": not a number (accepted: an integer from %lld to %lld)", key, min,
                   max);
    double number = json_number_value(f);
    if (number != floor(number) || number < (double) min || number > (double) max)
        return bad(rd, "\"%s\": %.17g is not an integer from %lld to %lld", key, number, min, max);
    *value = (long long) number;
    return 0;
}

/* KEY, a number not below 0, or NaN when null or absent. */
static int measure_of(reader *rd, const char *key, double *value)
{
    const json_t *f = json_object_get(rd->o, key);
    *value = NAN;
    if (!f || json_is_null(f))
        return 0;
    if (!json_is_number(f) || !(json_number_value(f) >= 0))
        return bad(rd, "\"%s\": not a number from 0 up, nor null", key);
    *value = json_number_value(f);
    return 0;
}

static int verdict_of(reader *rd, int *verified)
{
    const json_t *f = json_object_get(rd->o, "verified");
    *verified = -1;
    if (!f || json_is_null(f))
        return 0;
    if (!json_is_boolean(f))
        return bad(rd, "\"verified\": not true, false or null");
    *verified = json_is_true(f);
    return 0;
}

static int status_of(reader *rd, cmp_status *status)
{
    char text[16];
    if (text_of(rd, "status", NAME, 1, text, sizeof text) != 0)
        return -1;
    for (int s = RUN_OK; s <= RUN_SKIPPED; s++) {
        if (strcmp(text, cmp_status_name((cmp_status) s)) == 0) {
            *status = (cmp_status) s;
            return 0;
        }
    }
    return bad(rd, "\"status\": '%s' is none of ok, failed, skipped", text);
}

/* ROW from O, in this vocabulary (schema 2); RESULTS: a run of a
 * results.json. */
static int row_from(cmp_row *row, json_t *o, int results, char *error, size_t error_size)
{
    reader rd = {.o = o, .error = error, .size = error_size};
    long long devices, repeats;
    if (flat_object(&rd) != 0)
        return -1;
#define TEXT_FIELD(key, form, required) \
    text_of(&rd, #key, form, required, row->key, sizeof row->key) != 0
#define MEASURE(key) measure_of(&rd, #key, &row->key) != 0
    if (TEXT_FIELD(program, NAME, 1) || TEXT_FIELD(strategy, NAME, 1) ||
        TEXT_FIELD(exchange, NAME, 1) || TEXT_FIELD(backend, NAME, 1) ||
        TEXT_FIELD(kernel, NAME, 1) || TEXT_FIELD(verify, NAME_OR_EMPTY, 0))
        return -1;
    if (strcmp(row->backend, "cuda") != 0 && strcmp(row->backend, "host") != 0)
        return bad(&rd, "\"backend\": '%s' is neither cuda nor host", row->backend);
    if (integer_of(&rd, "devices", 1, MGPU_MAX_DEVICES, &devices) != 0 ||
        integer_of(&rd, "nx", CMP_MIN_GRID, CMP_MAX_GRID, &row->nx) != 0 ||
        integer_of(&rd, "ny", CMP_MIN_GRID, CMP_MAX_GRID, &row->ny) != 0 ||
        integer_of(&rd, "steps", 1, CMP_MAX_STEPS, &row->steps) != 0 ||
        integer_of(&rd, "repeats", 1, CMP_MAX_RUNS, &repeats) != 0)
        return -1;
    row->devices = (int) devices;
    row->repeats = (int) repeats;
    /* Records and results before deep halos have none of these: the depth
     * was 1, the time block and the exchanges are not known.  A record that
     * has them is held to the command line's ranges; results.json says null
     * for a time block that is not known (a run that did not start). */
    long long halo = 1, time_block = 0;
    const json_t *block = json_object_get(o, "time_block");
    if ((json_object_get(o, "halo") && integer_of(&rd, "halo", 1, MGPU_HALO_MAX, &halo) != 0) ||
        (block && !json_is_null(block) &&
         integer_of(&rd, "time_block", 1, MGPU_TIME_BLOCK_MAX, &time_block) != 0) ||
        measure_of(&rd, "exchanges", &row->exchanges) != 0)
        return -1;
    if (!isnan(row->exchanges) &&
        (row->exchanges != floor(row->exchanges) || row->exchanges > (double) CMP_MAX_STEPS))
        return bad(&rd, "\"exchanges\": %.17g is not a whole number from 0 to %lld", row->exchanges,
                   CMP_MAX_STEPS);
    /* What a run does: a pass never crosses an exchange (T at most K), and
     * it exchanges at most once every step. */
    if (time_block > halo)
        return bad(&rd,
                   "\"time_block\": %lld is more than the \"halo\" of %lld (accepted: an "
                   "integer from 1 to the halo)",
                   time_block, halo);
    if (!isnan(row->exchanges) && row->exchanges > (double) row->steps)
        return bad(&rd,
                   "\"exchanges\": %.17g is more than the %lld steps (accepted: a whole "
                   "number from 0 to the steps)",
                   row->exchanges, row->steps);
    row->halo = (int) halo;
    row->time_block = (int) time_block;
    if (MEASURE(time_s) || MEASURE(time_min_s) || MEASURE(time_max_s) || MEASURE(us_per_step) ||
        MEASURE(gcells_per_s) || MEASURE(gbytes_per_s) || MEASURE(exchange_s) ||
        MEASURE(exchange_share) || MEASURE(copy_gbytes_per_s) || MEASURE(roofline) ||
        MEASURE(host_issue_us_per_step) || MEASURE(host_wait_us_per_step) ||
        MEASURE(device_us_per_step) || MEASURE(max_error) || verdict_of(&rd, &row->verified) != 0 ||
        binding_of(&rd) != 0)
        return -1;
    /* results.json also holds what mgpu-compare itself adds; speedup and
     * efficiency are derived again, never taken on trust. */
    if (results && (status_of(&rd, &row->status) != 0 || TEXT_FIELD(reason, TEXT, 0)))
        return -1;
    if (results && row->status != RUN_OK && !row->reason[0])
        return bad(&rd, "\"reason\": empty, where a run that is %s says why",
                   cmp_status_name(row->status));
#undef TEXT_FIELD
#undef MEASURE
    if (row->status == RUN_OK && !(row->time_s > 0))
        return bad(&rd, "\"time_s\": a run that is ok needs a time above 0");
    json_decref(row->record);
    row->record = json_incref(o);
    return 0;
}

/* ------------------------------------------------- schema 1's vocabulary */

/* The fields schema 2 renamed, so that GB/s has one spelling. */
static const struct renamed {
    const char *old, *now;
} renamed[] = {
    {.old = "copy_gbps", .now = "copy_gbytes_per_s"},
    {.old = "upload_gbps", .now = "upload_gbytes_per_s"},
    {.old = "download_gbps", .now = "download_gbytes_per_s"},
};
#define NRENAMED ((int) (sizeof renamed / sizeof renamed[0]))

/* KEY's name in schema 2. */
static const char *name_now(const char *key)
{
    for (int i = 0; i < NRENAMED; i++) {
        if (strcmp(key, renamed[i].old) == 0)
            return renamed[i].now;
    }
    return key;
}

/* The value of KEY in schema 2: the yes-or-no texts of schema 1 (mgpu-mpi's
 * overlap and cuda_aware, yes, no or unknown; mgpu-streams' overlap, on or
 * off) as booleans, null where not known; any other value as it is. */
static json_t *value_now(const char *key, json_t *value)
{
    const char *text = json_string_value(value);
    if (!text || (strcmp(key, "overlap") != 0 && strcmp(key, "cuda_aware") != 0))
        return json_incref(value);
    if (strcmp(text, "yes") == 0 || strcmp(text, "on") == 0)
        return json_true();
    if (strcmp(text, "no") == 0 || strcmp(text, "off") == 0)
        return json_false();
    return strcmp(text, "unknown") == 0 ? json_null() : json_incref(value);
}

/* The vocabulary O is written in: SCHEMA, the results.json's of a run of
 * one; for a program's record (SCHEMA 0), its own "schema" (1 where it has
 * none). */
static int vocabulary_of(const json_t *o, int schema)
{
    const json_t *own = json_object_get(o, "schema");
    if (schema > 0)
        return schema;
    return json_is_integer(own) ? (int) json_integer_value(own) : 1;
}

/* O in schema 2's vocabulary: O itself (a new reference) when it is in it,
 * else a new object of O's fields in their order, each renamed field under
 * its name now, each yes-or-no text a boolean, and a record's "schema" 2.
 * NULL with a message in ERROR when out of memory, or when O has a field
 * under both its names. */
static json_t *in_vocabulary(json_t *o, int schema, char *error, size_t size)
{
    if (!json_is_object(o) || vocabulary_of(o, schema) >= 2)
        return json_incref(o);
    json_t *now = json_object();
    const char *key;
    json_t *value;
    json_object_foreach(o, key, value) {
        const char *name = name_now(key);
        if (name != key && json_object_get(o, name)) {
            snprintf(error, size, "\"%s\" and \"%s\": one field under both its names", key, name);
            json_decref(now);
            return NULL;
        }
        json_t *field = strcmp(key, "schema") == 0 ? json_integer(MGPU_RECORD_SCHEMA)
                                                   : value_now(key, value);
        if (!now || json_object_set_new(now, name, field) != 0) {
            snprintf(error, size, "out of memory");
            json_decref(now);
            return NULL;
        }
    }
    return now;
}

int cmp_row_from_object(cmp_row *row, json_t *object, int schema, char *error, size_t error_size)
{
    json_t *o = in_vocabulary(object, schema, error, error_size);
    if (!o)
        return -1;
    int rc = row_from(row, o, schema > 0, error, error_size);
    json_decref(o);
    return rc;
}

/* ------------------------------------------------------- results.json */

/* The metadata of a results.json: flat, its texts plain. */
static int metadata_of(json_t *metadata, char *error, size_t size)
{
    char why[300];
    reader rd = {.o = metadata, .error = why, .size = sizeof why};
    if (!metadata)
        return snprintf(error, size, "no \"metadata\""), -1;
    if (flat_object(&rd) != 0)
        return snprintf(error, size, "\"metadata\": %s", why), -1;
    return 0;
}

/* The runs of RUNS (an array of objects, of a results.json of SCHEMA)
 * appended to ROWS. */
static int add_runs(json_t *runs, int schema, cmp_rows *rows, char *error, size_t size)
{
    size_t index;
    json_t *run;
    if (!json_is_array(runs)) {
        snprintf(error, size, "\"runs\": %s", runs ? "not an array" : "absent");
        return -1;
    }
    /* mgpu-compare writes no results without a run: such a file has
     * nothing to print or plot, and says so rather than printing nothing. */
    if (json_array_size(runs) == 0) {
        snprintf(error, size, "\"runs\": empty, no run to print or plot");
        return -1;
    }
    json_array_foreach(runs, index, run) {
        char why[300];
        cmp_row *row = cmp_rows_add(rows);
        if (!row) {
            snprintf(error, size, "out of memory");
            return -1;
        }
        if (cmp_row_from_object(row, run, schema, why, sizeof why) != 0) {
            snprintf(error, size, "run %zu: %s", index + 1, why);
            return -1;
        }
    }
    return 0;
}

/* {"schema": 1 or 2, "metadata": {...}, "runs": [...]}, nothing else. */
static int add_results(json_t *results, cmp_rows *rows, char *error, size_t size)
{
    const char *key;
    json_t *value, *schema = json_object_get(results, "schema");
    json_object_foreach(results, key, value) {
        if (strcmp(key, "schema") != 0 && strcmp(key, "metadata") != 0 &&
            strcmp(key, "runs") != 0) {
            snprintf(error, size, "\"%.*s\": not a field of results.json (schema, metadata, runs)",
                     CMP_JSON_KEY, key);
            return -1;
        }
    }
    if (!json_is_integer(schema) || json_integer_value(schema) < 1 ||
        json_integer_value(schema) > CMP_RESULTS_SCHEMA) {
        snprintf(error, size, "\"schema\": not 1 to %d (the schemas this mgpu-compare reads)",
                 CMP_RESULTS_SCHEMA);
        return -1;
    }
    if (metadata_of(json_object_get(results, "metadata"), error, size) != 0)
        return -1;
    return add_runs(json_object_get(results, "runs"), (int) json_integer_value(schema), rows, error,
                    size);
}

int cmp_results_parse(const char *text, size_t len, cmp_rows *rows, char *error, size_t error_size)
{
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        snprintf(error, error_size, "a NUL byte at byte %ld", (long) (nul - text));
        return -1;
    }
    if (len == 0 || strspn(text, " \t\r\n") == len) {
        snprintf(error, error_size, "empty");
        return -1;
    }
    json_t *results = cmp_json_load(text, len, error, error_size);
    if (!results)
        return -1;
    /* An array of runs: what mgpu-compare wrote before schema 1, in schema
     * 1's vocabulary. */
    int rc = json_is_array(results) ? add_runs(results, 1, rows, error, error_size)
                                    : add_results(results, rows, error, error_size);
    json_decref(results);
    return rc;
}

int cmp_read_json(const char *path, cmp_rows *rows, char *error, size_t error_size)
{
    char why[400];
    /* Opened without blocking: the open of a FIFO waits for a writer, which
     * may never come; its type is checked before anything reads it. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > CMP_MAX_RESULTS) {
        snprintf(error, error_size, "%s: %s", path,
                 S_ISDIR(st.st_mode)   ? "a directory, not a results.json"
                 : S_ISREG(st.st_mode) ? "larger than " CMP_MAX_RESULTS_TEXT
                                       : "not a regular file");
        close(fd);
        return -1;
    }
    /* A regular file: reads block no more (and FUSE may take O_NONBLOCK). */
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    size_t len = 0, cap = (size_t) st.st_size + 1;
    char *text = malloc(cap);
    ssize_t n = 1;
    while (text && len < cap - 1 && (n = read(fd, text + len, cap - 1 - len)) != 0) {
        if (n < 0 && errno != EINTR)
            break;
        len += n > 0 ? (size_t) n : 0;
    }
    int read_errno = errno;
    close(fd);
    if (!text || n < 0) {
        snprintf(error, error_size, "%s: %s", path, text ? strerror(read_errno) : "out of memory");
        free(text);
        return -1;
    }
    text[len] = '\0';
    int rc = cmp_results_parse(text, len, rows, why, sizeof why);
    if (rc != 0)
        snprintf(error, error_size, "%s: %s", path, why);
    free(text);
    return rc;
}
