/* test-compare-read.c - what mgpu-compare reads (bench/compare-row.c) in
 * the record's vocabulary of schema 2, whatever schema it was written in:
 * a results.json of schema 1 and the array of runs before it, and a
 * program's record of schema 1, come out with schema 2's names (one
 * spelling of GB/s) and booleans for their yes-or-no texts; what is written
 * in schema 2 is taken as it is (doc/record.md, Schema). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "check.h"
#include "compare.h"

/* Two runs that ran, mgpu-mpi's and mgpu-streams', and one that failed,
 * in schema 1's words. */
#define RUNS_1                                                                                   \
    "{\"schema\": 1, \"program\": \"mgpu-mpi\", \"strategy\": \"mpi\", \"exchange\": "           \
    "\"staged\", \"devices\": 2, \"backend\": \"host\", \"kernel\": \"jacobi\", \"nx\": 34, "    \
    "\"ny\": 29, \"steps\": 5, \"repeats\": 1, \"status\": \"ok\", \"time_s\": 0.5, "            \
    "\"copy_gbps\": 3.5, \"verified\": true, \"reason\": \"\", \"overlap\": \"yes\", "           \
    "\"cuda_aware\": \"unknown\", \"hosts\": 1}, "                                               \
    "{\"schema\": 1, \"program\": \"mgpu-streams\", \"strategy\": \"streams\", \"exchange\": "   \
    "\"peer\", \"devices\": 2, \"backend\": \"host\", \"kernel\": \"jacobi\", \"nx\": 34, "      \
    "\"ny\": 29, \"steps\": 5, \"repeats\": 1, \"status\": \"ok\", \"time_s\": 0.25, "           \
    "\"copy_gbps\": null, \"verified\": true, \"reason\": \"\", \"overlap\": \"off\", "          \
    "\"upload_gbps\": 2, \"mode\": \"overlap\"}, "                                               \
    "{\"program\": \"mgpu-mpi\", \"strategy\": \"mpi\", \"exchange\": \"mpi\", \"devices\": 2, " \
    "\"backend\": \"host\", \"kernel\": \"jacobi\", \"nx\": 34, \"ny\": 29, \"steps\": 5, "      \
    "\"repeats\": 1, \"status\": \"failed\", \"time_s\": null, \"copy_gbps\": null, "            \
    "\"reason\": \"exit 1\"}"

#define METADATA "\"metadata\": {\"gpu_list\": null}"

static int parse(const char *text, cmp_rows *rows, char *error, size_t size)
{
    rows->count = 0;
    return cmp_results_parse(text, strlen(text), rows, error, size);
}

/* The value of KEY in ROW's record, or NULL. */
static const json_t *field(const cmp_row *row, const char *key)
{
    return row->record ? json_object_get(row->record, key) : NULL;
}

/* ROWS, read from schema 1's words (WHAT says from where), in schema 2's. */
static void check_schema_1(const cmp_rows *rows, const char *what)
{
    CHECK(rows->count == 3, "%s: 3 runs read", what);
    if (rows->count != 3)
        return;
    const cmp_row *mpi = &rows->row[0], *streams = &rows->row[1], *failed = &rows->row[2];
    CHECK(mpi->copy_gbytes_per_s == 3.5 &&
              json_number_value(field(mpi, "copy_gbytes_per_s")) == 3.5,
          "%s: copy_gbps read as copy_gbytes_per_s", what);
    CHECK(!field(mpi, "copy_gbps") && !field(streams, "copy_gbps") && !field(failed, "copy_gbps"),
          "%s: no copy_gbps left", what);
    CHECK(json_is_null(field(streams, "copy_gbytes_per_s")) && isnan(streams->copy_gbytes_per_s),
          "%s: a null copy_gbps, a null copy_gbytes_per_s", what);
    CHECK(json_is_true(field(mpi, "overlap")), "%s: mgpu-mpi's overlap yes read as true", what);
    CHECK(json_is_null(field(mpi, "cuda_aware")), "%s: mgpu-mpi's cuda_aware unknown read as null",
          what);
    CHECK(json_is_false(field(streams, "overlap")), "%s: mgpu-streams' overlap off read as false",
          what);
    CHECK(json_number_value(field(streams, "upload_gbytes_per_s")) == 2 &&
              !field(streams, "upload_gbps"),
          "%s: upload_gbps read as upload_gbytes_per_s", what);
    CHECK(json_integer_value(field(mpi, "schema")) == 2,
          "%s: the record's schema, its vocabulary now, 2", what);
    CHECK(json_is_string(field(streams, "mode")) && json_integer_value(field(mpi, "hosts")) == 1,
          "%s: the other fields as they were", what);
    /* The fields keep their order: the renamed one where it stood. */
    const char *before = NULL, *key;
    json_t *value;
    json_object_foreach(mpi->record, key, value) {
        if (strcmp(key, "copy_gbytes_per_s") == 0)
            break;
        before = key;
    }
    CHECK(before && strcmp(before, "time_s") == 0, "%s: copy_gbytes_per_s where copy_gbps stood",
          what);
}

int main(void)
{
    cmp_rows rows = {0};
    char error[512] = "";

    CHECK(parse("{\"schema\": 1, " METADATA ", \"runs\": [" RUNS_1 "]}", &rows, error,
                sizeof error) == 0,
          "results.json of schema 1 read (%s)", error);
    check_schema_1(&rows, "schema 1");
    cmp_rows_free(&rows);

    CHECK(parse("[" RUNS_1 "]", &rows, error, sizeof error) == 0,
          "the array of runs before schema 1 read (%s)", error);
    check_schema_1(&rows, "before schema 1");
    cmp_rows_free(&rows);

    /* Schema 2's words are taken as they are: a yes-or-no text there is
     * some program's text, and copy_gbps some program's own field. */
    const char *run_2 =
        "{\"schema\": 2, " METADATA ", \"runs\": [{\"schema\": 2, \"program\": \"mgpu-mpi\", "
        "\"strategy\": \"mpi\", \"exchange\": \"staged\", \"devices\": 2, \"backend\": \"host\", "
        "\"kernel\": \"jacobi\", \"nx\": 34, \"ny\": 29, \"steps\": 5, \"repeats\": 1, "
        "\"status\": \"ok\", \"time_s\": 0.5, \"copy_gbytes_per_s\": 4.5, \"verified\": true, "
        "\"reason\": \"\", \"overlap\": false, \"cuda_aware\": true, \"copy_gbps\": 1, "
        "\"note\": \"yes\"}]}";
    CHECK(parse(run_2, &rows, error, sizeof error) == 0, "results.json of schema 2 read (%s)",
          error);
    if (rows.count == 1) {
        const cmp_row *r = &rows.row[0];
        CHECK(r->copy_gbytes_per_s == 4.5 && json_is_false(field(r, "overlap")) &&
                  json_is_true(field(r, "cuda_aware")),
              "schema 2: copy_gbytes_per_s and the booleans read");
        CHECK(json_integer_value(field(r, "copy_gbps")) == 1 &&
                  strcmp(json_string_value(field(r, "note")), "yes") == 0,
              "schema 2: nothing renamed or made a boolean");
    }
    cmp_rows_free(&rows);

    /* Schema 1's name and schema 2's of one field in one run: which is
     * meant is not known, and the run is refused. */
    const char *twice =
        "[{\"program\": \"mgpu-single\", \"strategy\": \"single-thread\", \"exchange\": \"auto\", "
        "\"devices\": 1, \"backend\": \"host\", \"kernel\": \"jacobi\", \"nx\": 5, \"ny\": 5, "
        "\"steps\": 1, \"repeats\": 1, \"status\": \"ok\", \"time_s\": 1, \"copy_gbps\": 1, "
        "\"copy_gbytes_per_s\": 2}]";
    CHECK(parse(twice, &rows, error, sizeof error) != 0 &&
              strstr(error, "run 1: \"copy_gbps\" and \"copy_gbytes_per_s\""),
          "schema 1: a field under both its names refused (%s)", error);
    cmp_rows_free(&rows);
    CHECK(parse("{\"schema\": 3, " METADATA ", \"runs\": []}", &rows, error, sizeof error) != 0 &&
              strstr(error, "\"schema\": not 1 to 2"),
          "schema 3 refused (%s)", error);
    cmp_rows_free(&rows);

    /* A program's record says its own schema. */
    const char *records[] = {
        "{\"schema\": 1, \"program\": \"mgpu-streams\", \"strategy\": \"streams\", \"exchange\": "
        "\"peer\", \"devices\": 2, \"backend\": \"host\", \"kernel\": \"jacobi\", \"nx\": 34, "
        "\"ny\": 29, \"steps\": 5, \"repeats\": 1, \"time_s\": 0.25, \"copy_gbps\": 7, "
        "\"overlap\": \"on\"}",
        "{\"schema\": 2, \"program\": \"mgpu-streams\", \"strategy\": \"streams\", \"exchange\": "
        "\"peer\", \"devices\": 2, \"backend\": \"host\", \"kernel\": \"jacobi\", \"nx\": 34, "
        "\"ny\": 29, \"steps\": 5, \"repeats\": 1, \"time_s\": 0.25, \"copy_gbytes_per_s\": 7, "
        "\"overlap\": true}",
    };
    for (int i = 0; i < 2; i++) {
        json_t *record = cmp_json_load(records[i], strlen(records[i]), error, sizeof error);
        cmp_row *row = cmp_rows_add(&rows);
        CHECK(record && row && cmp_row_from_object(row, record, 0, error, sizeof error) == 0,
              "a record of schema %d read (%s)", i + 1, error);
        CHECK(row && row->copy_gbytes_per_s == 7 && json_is_true(field(row, "overlap")),
              "a record of schema %d: copy_gbytes_per_s 7, overlap true", i + 1);
        json_decref(record);
    }
    cmp_rows_free(&rows);
    return check_done();
}
