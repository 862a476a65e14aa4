/* p2p-output.c - mgpu-p2p's results: labelled matrices ("figures"), printed
 * as tables for people, one CSV line per cell, or one JSON document
 * (written with jansson) whose numbers are numbers and whose empty cells are
 * null.  Each figure carries its unit and the rule its numbers follow (what
 * bytes count, over what time), and every format prints it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "p2p.h"

/* Figures are allocated one by one: a figure's address stays valid while
 * more are added. */
struct p2p_results {
    p2p_figure **figure;
    int count, capacity;
};

p2p_results *p2p_results_create(void) { return calloc(1, sizeof(p2p_results)); }

static void figure_free(p2p_figure *f)
{
    if (!f)
        return;
    free(f->row_bytes);
    free(f->row_names);
    free(f->column_names);
    free(f->cells);
    free(f);
}

void p2p_results_destroy(p2p_results *results)
{
    if (!results)
        return;
    for (int i = 0; i < results->count; i++)
        figure_free(results->figure[i]);
    free(results->figure);
    free(results);
}

p2p_figure *p2p_figure_add(p2p_results *results, const char *key, int rows, int columns)
{
    if (results->count == results->capacity) {
        int capacity = results->capacity ? 2 * results->capacity : 16;
        p2p_figure **grown = realloc(results->figure, (size_t) capacity * sizeof *grown);
        if (!grown)
            return NULL;
        results->figure = grown;
        results->capacity = capacity;
    }
    p2p_figure *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    *f = (p2p_figure){.unit = "",
                      .rule = "",
                      .row_title = "",
                      .column_title = "",
                      .rows = rows,
                      .columns = columns};
    snprintf(f->key, sizeof f->key, "%s", key);
    f->title = f->key;
    f->row_names = calloc((size_t) rows, sizeof *f->row_names);
    f->column_names = calloc((size_t) columns, sizeof *f->column_names);
    f->cells = calloc((size_t) rows * (size_t) columns, sizeof *f->cells);
    if (!f->row_names || !f->column_names || !f->cells) {
        figure_free(f);
        return NULL;
    }
    results->figure[results->count++] = f;
    return f;
}

p2p_figure *p2p_figure_find(p2p_results *results, const char *key)
{
    for (int i = 0; i < results->count; i++)
        if (strcmp(results->figure[i]->key, key) == 0)
            return results->figure[i];
    return NULL;
}

int p2p_figure_size_rows(p2p_figure *figure, const size_t *sizes)
{
    figure->row_bytes = calloc((size_t) figure->rows, sizeof *figure->row_bytes);
    if (!figure->row_bytes)
        return 0;
    for (int r = 0; r < figure->rows; r++) {
        figure->row_bytes[r] = sizes[r];
        snprintf(figure->row_names[r], P2P_LABEL, "%zu", figure->row_bytes[r]);
    }
    return 1;
}

void p2p_figure_device_rows(p2p_figure *figure)
{
    for (int r = 0; r < figure->rows; r++)
        snprintf(figure->row_names[r], P2P_LABEL, "%d", r);
}

void p2p_figure_device_columns(p2p_figure *figure)
{
    for (int c = 0; c < figure->columns; c++)
        snprintf(figure->column_names[c], P2P_LABEL, "%d", c);
}

const char *p2p_column_unit(const p2p_figure *figure, int column)
{
    return figure->column_units ? figure->column_units[column] : figure->unit;
}

static size_t cell_index(const p2p_figure *f, int row, int column)
{
    return (size_t) row * (size_t) f->columns + (size_t) column;
}

p2p_cell *p2p_cell_at(p2p_figure *figure, int row, int column)
{
    return &figure->cells[cell_index(figure, row, column)];
}

static const p2p_cell *cell_of(const p2p_figure *f, int row, int column)
{
    return &f->cells[cell_index(f, row, column)];
}

void p2p_cell_number(p2p_figure *figure, int row, int column, double value)
{
    *p2p_cell_at(figure, row, column) = (p2p_cell){.kind = CELL_NUMBER, .value = value};
}

void p2p_cell_text(p2p_figure *figure, int row, int column, const char *text)
{
    p2p_cell *cell = p2p_cell_at(figure, row, column);
    *cell = (p2p_cell){.kind = CELL_TEXT};
    snprintf(cell->text, sizeof cell->text, "%s", text);
}

static void cell_stats(p2p_figure *figure, int row, int column, double *values, int n)
{
    mgpu_stats stats = mgpu_stats_of(values, n);
    *p2p_cell_at(figure, row, column) = (p2p_cell){
        .kind = CELL_STATS, .value = stats.median, .min = stats.min, .max = stats.max};
}

void p2p_cell_rate(p2p_figure *figure, int row, int column, double value, const double *seconds,
                   int n)
{
    double rates[P2P_MAX_REPEAT];
    for (int i = 0; i < n; i++)
        rates[i] = value / seconds[i] / 1e9;
    cell_stats(figure, row, column, rates, n);
}

void p2p_cell_time(p2p_figure *figure, int row, int column, double scale, const double *seconds,
                   int n)
{
    double times[P2P_MAX_REPEAT];
    for (int i = 0; i < n; i++)
        times[i] = seconds[i] * scale;
    cell_stats(figure, row, column, times, n);
}

/* "256 MiB", "4 KiB", "100 B" */
static void size_name(size_t bytes, char *text, size_t size)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    snprintf(text, size, "%zu %s", bytes, units[u]);
}

/* -------------------------------------------------------------- the header */

static const char *host_note =
    "host backend: a \"device\" is a partition of host memory and every copy is memcpy; "
    "these figures say nothing about GPUs";

static const char *timing_note(const p2p_ctx *ctx)
{
    return ctx->cuda ? "CUDA events; each batch queued behind a spin kernel, so that the "
                       "host's launch gaps do not count"
                     : "the host clock around each batch of memcpy";
}

/* ---------------------------------------------------------------- table */

/* A row's name for people: a copy size as "4096 (4 KiB)". */
static const char *row_label(const p2p_figure *f, int r, char text[P2P_LABEL])
{
    char size[P2P_LABEL / 2];
    if (!f->row_bytes)
        return f->row_names[r];
    size_name(f->row_bytes[r], size, sizeof size);
    snprintf(text, P2P_LABEL, "%s (%s)", f->row_names[r], size);
    return text;
}

static int label_width(const p2p_figure *f)
{
    int width = (int) strlen(f->row_title) + (int) strlen(f->column_title) + 1;
    for (int r = 0; r < f->rows; r++) {
        char text[P2P_LABEL];
        int len = (int) strlen(row_label(f, r, text));
        if (len > width)
            width = len;
    }
    return width;
}

static int column_width(const p2p_figure *f, int c)
{
    int width = (int) strlen(f->column_names[c]);
    for (int r = 0; r < f->rows; r++) {
        const p2p_cell *cell = cell_of(f, r, c);
        if (cell->kind == CELL_TEXT && (int) strlen(cell->text) > width)
            width = (int) strlen(cell->text);
    }
    return width < 8 ? 8 : width;
}

/* DIGITS decimals, or more for a small fraction, so that it keeps two
 * significant digits (a latency of 0.0123 us is "0.012", not "0.01"). */
static int decimals(int digits, double value)
{
    double magnitude = fabs(value);
    while (digits > 0 && digits < 6 && magnitude > 0 && magnitude < 10.0 * pow(10.0, -digits))
        digits++;
    return digits;
}

static void print_table_cell(const p2p_figure *f, const p2p_cell *cell, int width, FILE *out)
{
    switch (cell->kind) {
    case CELL_EMPTY:
        fprintf(out, "  %*s", width, "-");
        break;
    case CELL_TEXT:
        fprintf(out, "  %*s", width, cell->text);
        break;
    case CELL_NUMBER:
    case CELL_STATS:
        fprintf(out, "  %*.*f", width, decimals(f->digits, cell->value), cell->value);
        break;
    }
}

/* The largest (max - min) / median of a figure's cells, or -1. */
static double largest_spread(const p2p_figure *f, int *row, int *column)
{
    double worst = -1.0;
    for (int r = 0; r < f->rows; r++) {
        for (int c = 0; c < f->columns; c++) {
            const p2p_cell *cell = cell_of(f, r, c);
            if (cell->kind != CELL_STATS || cell->value <= 0)
                continue;
            double spread = (cell->max - cell->min) / cell->value;
            if (spread > worst) {
                worst = spread;
                *row = r;
                *column = c;
            }
        }
    }
    return worst;
}

static void print_table_figure(const p2p_figure *f, FILE *out)
{
    char size[32] = "";
    if (f->bytes)
        size_name(f->bytes, size, sizeof size);
    fprintf(out, "\n%s", f->title);
    if (*f->unit)
        fprintf(out, " [%s]", f->unit);
    if (f->bytes)
        fprintf(out, ", %s per copy", size);
    fprintf(out, "  (%s)\n  rule: %s\n", f->key, f->rule);
    int lw = label_width(f);
    char corner[64];
    snprintf(corner, sizeof corner, "%s%s%s", f->row_title, *f->column_title ? "\\" : "",
             f->column_title);
    fprintf(out, "  %-*s", lw, corner);
    for (int c = 0; c < f->columns; c++)
        fprintf(out, "  %*s", column_width(f, c), f->column_names[c]);
    fputc('\n', out);
    char text[P2P_LABEL];
    for (int r = 0; r < f->rows; r++) {
        fprintf(out, "  %-*s", lw, row_label(f, r, text));
        for (int c = 0; c < f->columns; c++)
            print_table_cell(f, cell_of(f, r, c), column_width(f, c), out);
        fputc('\n', out);
    }
    int row = 0, column = 0;
    double spread = largest_spread(f, &row, &column);
    if (spread >= 0)
        fprintf(out,
                "  median of %d samples; largest spread (max-min)/median: %.1f%% "
                "(%s %s, %s %s)\n",
                f->samples, 100.0 * spread, f->row_title, row_label(f, row, text),
                *f->column_title ? f->column_title : "column", f->column_names[column]);
}

static void print_table(const p2p_ctx *ctx, FILE *out)
{
    const p2p_options *opt = ctx->opt;
    char size[32];
    size_name(opt->bytes, size, sizeof size);
    fprintf(out,
            "# %s %s: %s backend (%s), %d device%s, %s copies, median of %d samples "
            "after %d warm-up\n",
            P2P_NAME, MGPU_VERSION, mgpu_backend_name(mgpu_backend_active()), mgpu_backend_reason(),
            ctx->n, ctx->n == 1 ? "" : "s", size, opt->repeat, opt->warmup);
    if (!ctx->cuda)
        fprintf(out, "# %s\n", host_note);
    fprintf(out, "# timing: %s; every copy is verified against its source's pattern\n",
            timing_note(ctx));
    if (ctx->cuda && ctx->link_note[0])
        fprintf(out, "# links: guessed from native atomics (%s)\n", ctx->link_note);
    if (ctx->gapped)
        fprintf(out,
                "# %ld samples: the host took longer to queue the copies than the "
                "longest spin; their times include launch gaps\n",
                ctx->gapped);
    if (opt->tests != P2P_ALL_TESTS) {
        char tests[1024];
        mgpu_names_join(tests, sizeof tests, p2p_test_names, opt->tests, ", ");
        fprintf(out, "# tests (--test): %s\n", tests);
    }
    if (opt->pairs_given) {
        fputs("# pairs (--pairs):", out);
        for (int a = 0; a < ctx->n; a++)
            for (int b = 0; b < ctx->n; b++)
                if (opt->pair[a][b])
                    fprintf(out, " %d:%d", a, b);
        fputc('\n', out);
    }
    if (opt->tests & P2P_SWEEP_TESTS) {
        char min[32], max[32], step[32];
        size_name(opt->sweep_min, min, sizeof min);
        size_name(opt->sweep_max, max, sizeof max);
        size_name(opt->sweep_step, step, sizeof step);
        fprintf(out, "# size sweep: %d sizes from %s to %s, ", ctx->sizes, min, max);
        if (opt->sweep_factor)
            fprintf(out, "each %d times the last (-f)\n", opt->sweep_factor);
        else
            fprintf(out, "each %s past the last (-i)\n", step);
    }
    char chunk[32];
    size_name(opt->staging_chunk, chunk, sizeof chunk);
    fprintf(out, "# staged copies: in chunks of %s through %d pinned buffers\n", chunk,
            opt->staging_buffers);
    fprintf(out, "# - : not applicable or not possible (a device with itself, no peer "
                 "access)\n");
    for (int i = 0; i < ctx->results->count; i++)
        print_table_figure(ctx->results->figure[i], out);
}

/* ------------------------------------------------------------------ CSV */

/* Where the run came from (doc/record.md's provenance), on every line, so
 * that lines from several machines and builds can be told apart. */
static mgpu_status print_csv(const p2p_ctx *ctx, FILE *out)
{
    static mgpu_machine m; /* large: kept off the stack */
    mgpu_machine_find(mgpu_backend_active(), ctx->n, ctx->started, &m);
    if (ctx->opt->header) {
        fprintf(out, "figure,row,column,value,min,max,unit,bytes,samples,backend,rule");
        MGPU_TRY(mgpu_provenance_csv(&m, 1, out));
        fputc('\n', out);
    }
    for (int i = 0; i < ctx->results->count; i++) {
        const p2p_figure *f = ctx->results->figure[i];
        for (int r = 0; r < f->rows; r++) {
            for (int c = 0; c < f->columns; c++) {
                const p2p_cell *cell = cell_of(f, r, c);
                fprintf(out, "%s,", f->key);
                mgpu_csv_text(f->row_names[r], out);
                fputc(',', out);
                mgpu_csv_text(f->column_names[c], out);
                fputc(',', out);
                if (cell->kind == CELL_TEXT)
                    mgpu_csv_text(cell->text, out);
                else if (cell->kind != CELL_EMPTY)
                    fprintf(out, "%.10g", cell->value);
                if (cell->kind == CELL_STATS)
                    fprintf(out, ",%.10g,%.10g,", cell->min, cell->max);
                else
                    fputs(",,,", out);
                mgpu_csv_text(p2p_column_unit(f, c), out);
                fputc(',', out);
                if (f->bytes)
                    fprintf(out, "%zu", f->bytes);
                fputc(',', out);
                if (cell->kind == CELL_STATS)
                    fprintf(out, "%d", f->samples);
                fprintf(out, ",%s,", mgpu_backend_name(mgpu_backend_active()));
                mgpu_csv_text(f->rule, out);
                MGPU_TRY(mgpu_provenance_csv(&m, 0, out));
                fputc('\n', out);
            }
        }
    }
    return MGPU_OK;
}

/* ----------------------------------------------------------------- JSON */

/* A number, an integer where it is one (a count, a byte count), null where
 * it is not finite. */
static json_t *json_number(double value)
{
    if (!isfinite(value))
        return json_null();
    if (value == trunc(value) && fabs(value) < 0x1p53)
        return json_integer((json_int_t) value);
    return json_real(value);
}

static json_t *json_text_or_null(const char *text)
{
    return text && *text ? json_string(text) : json_null();
}

static json_t *json_rows(const p2p_figure *f)
{
    json_t *rows = json_array();
    for (int r = 0; rows && r < f->rows; r++) {
        json_t *row = f->row_bytes ? json_integer((json_int_t) f->row_bytes[r])
                                   : json_string(f->row_names[r]);
        if (json_array_append_new(rows, row) != 0) {
            json_decref(rows);
            return NULL;
        }
    }
    return rows;
}

static json_t *json_columns(const p2p_figure *f)
{
    json_t *columns = json_array();
    for (int c = 0; columns && c < f->columns; c++) {
        if (json_array_append_new(columns, json_string(f->column_names[c])) != 0) {
            json_decref(columns);
            return NULL;
        }
    }
    return columns;
}

enum cell_part { PART_VALUE, PART_MIN, PART_MAX };

static json_t *json_cell(const p2p_cell *cell, enum cell_part part)
{
    if (part == PART_VALUE && cell->kind == CELL_TEXT)
        return json_string(cell->text);
    if (part == PART_VALUE && cell->kind != CELL_EMPTY)
        return json_number(cell->value);
    if (cell->kind == CELL_STATS)
        return json_number(part == PART_MIN ? cell->min : cell->max);
    return json_null();
}

/* One part of every cell, as rows of columns. */
static json_t *json_matrix(const p2p_figure *f, enum cell_part part)
{
    json_t *matrix = json_array();
    int failed = !matrix;
    for (int r = 0; !failed && r < f->rows; r++) {
        json_t *row = json_array();
        failed = !row;
        for (int c = 0; !failed && c < f->columns; c++)
            failed = json_array_append_new(row, json_cell(cell_of(f, r, c), part)) != 0;
        failed |= json_array_append_new(matrix, row) != 0;
    }
    if (failed) {
        json_decref(matrix);
        return NULL;
    }
    return matrix;
}

/* Each column's unit. */
static json_t *json_units(const p2p_figure *f)
{
    json_t *units = json_array();
    for (int c = 0; units && c < f->columns; c++) {
        if (json_array_append_new(units, json_string(p2p_column_unit(f, c))) != 0) {
            json_decref(units);
            return NULL;
        }
    }
    return units;
}

static json_t *json_figure(const p2p_figure *f)
{
    return json_pack("{s:s, s:s, s:o, s:s, s:o, s:i, s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "title",
                     f->title, "unit", f->unit, "units", json_units(f), "rule", f->rule, "bytes",
                     f->bytes ? json_integer((json_int_t) f->bytes) : json_null(), "samples",
                     f->samples, "row_title", f->row_title, "column_title", f->column_title, "rows",
                     json_rows(f), "columns", json_columns(f), "value", json_matrix(f, PART_VALUE),
                     "min", json_matrix(f, PART_MIN), "max", json_matrix(f, PART_MAX));
}

/* --pairs as [[from, to], ...], or null: every pair. */
static json_t *json_pairs(const p2p_ctx *ctx)
{
    if (!ctx->opt->pairs_given)
        return json_null();
    json_t *pairs = json_array();
    for (int a = 0; pairs && a < ctx->n; a++) {
        for (int b = 0; b < ctx->n; b++) {
            if (ctx->opt->pair[a][b] &&
                json_array_append_new(pairs, json_pack("[i, i]", a, b)) != 0) {
                json_decref(pairs);
                return NULL;
            }
        }
    }
    return pairs;
}

/* The run: what and where (the record's metadata, doc/record.md), how it
 * was measured; then the figures, each keyed by its name. */
static json_t *json_document(const p2p_ctx *ctx)
{
    const p2p_options *opt = ctx->opt;
    mgpu_machine m;
    mgpu_machine_find(mgpu_backend_active(), ctx->n, ctx->started, &m);
    json_t *figures = json_object();
    for (int i = 0; figures && i < ctx->results->count; i++) {
        const p2p_figure *f = ctx->results->figure[i];
        if (json_object_set_new(figures, f->key, json_figure(f)) != 0) {
            json_decref(figures);
            figures = NULL;
        }
    }
    json_t *run = json_pack(
        "{s:i, s:s, s:s, s:s, s:s, s:o, s:s, s:o, s:i, s:I, s:I, s:I, s:i, s:i, s:o, s:I}",
        "schema", P2P_SCHEMA, "program", P2P_NAME, "version", MGPU_VERSION, "backend",
        mgpu_backend_name(mgpu_backend_active()), "backend_reason", mgpu_backend_reason(), "note",
        ctx->cuda ? json_null() : json_string(host_note), "timing", timing_note(ctx), "link_note",
        json_text_or_null(ctx->link_note), "devices", ctx->n, "bytes", (json_int_t) opt->bytes,
        "halo_bytes", (json_int_t) opt->halo, "latency_bytes", (json_int_t) opt->latency_bytes,
        "repeat", opt->repeat, "warmup", opt->warmup, "spin_us",
        json_number(ctx->cuda ? opt->spin_us : 0.0), "gapped_samples", (json_int_t) ctx->gapped);
    json_t *machine = mgpu_provenance_json(&m);
    json_t *how = json_pack(
        "{s:I, s:I, s:o, s:o, s:I, s:i, s:o}", "sweep_min_bytes", (json_int_t) opt->sweep_min,
        "sweep_max_bytes", (json_int_t) opt->sweep_max, "sweep_factor",
        opt->sweep_factor ? json_integer(opt->sweep_factor) : json_null(), "sweep_step_bytes",
        opt->sweep_factor ? json_null() : json_integer((json_int_t) opt->sweep_step),
        "staging_chunk_bytes", (json_int_t) opt->staging_chunk, "staging_buffers",
        opt->staging_buffers, "pairs", json_pairs(ctx));
    /* The tests that ran (--test), in the order they ran. */
    json_t *tests = json_array();
    for (int t = 0; tests && t < P2P_TESTS; t++) {
        if (p2p_test_on(ctx, (p2p_test) t) &&
            json_array_append_new(tests, json_string(p2p_test_names[t])) != 0) {
            json_decref(tests);
            tests = NULL;
        }
    }
    int failed = !run || !how || !machine || !figures || !tests ||
                 json_object_update(run, how) != 0 || json_object_update(run, machine) != 0;
    if (!failed) {
        failed = json_object_set_new(run, "tests", tests) != 0; /* TESTS is the run's now */
        tests = NULL;
    }
    if (!failed)
        failed = json_object_set(run, "figures", figures) != 0;
    if (failed) {
        json_decref(run);
        run = NULL;
    }
    json_decref(tests);
    json_decref(how);
    json_decref(machine);
    json_decref(figures);
    return run;
}

static mgpu_status print_json(const p2p_ctx *ctx, FILE *out)
{
    json_t *document = json_document(ctx);
    char *text = document ? json_dumps(document, JSON_REAL_PRECISION(10)) : NULL;
    json_decref(document);
    if (!text)
        return mgpu_error_set(MGPU_ERR_NOMEM, "out of host memory for the JSON document");
    /* A write that fails is mgpu_output_flush's to report, as in every format. */
    fprintf(out, "%s\n", text);
    free(text);
    return MGPU_OK;
}

mgpu_status p2p_print(const p2p_ctx *ctx, mgpu_format format, FILE *out)
{
    switch (format) {
    case MGPU_FORMAT_CSV:
        MGPU_TRY(print_csv(ctx, out));
        break;
    case MGPU_FORMAT_JSON:
        MGPU_TRY(print_json(ctx, out));
        break;
    case MGPU_FORMAT_TABLE:
    default:
        print_table(ctx, out);
        break;
    }
    return mgpu_output_flush(out, "the measurements");
}
