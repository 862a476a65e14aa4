/* p2p-output.c - mgpu-p2p's results: labelled matrices ("figures"), printed
 * as tables for people, one CSV line per cell, or one JSON document whose
 * numbers are numbers and whose empty cells are null.  Each figure carries
 * its unit and the rule its numbers follow (what bytes count, over what
 * time), and every format prints it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

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
    *f = (p2p_figure){.key = key,
                      .title = key,
                      .unit = "",
                      .rule = "",
                      .row_title = "",
                      .column_title = "",
                      .rows = rows,
                      .columns = columns};
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

p2p_cell *p2p_cell_at(p2p_figure *figure, int row, int column)
{
    return &figure->cells[(size_t) row * (size_t) figure->columns + (size_t) column];
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
    *p2p_cell_at(figure, row, column) =
        (p2p_cell){.kind = CELL_STATS, .value = stats.median, .min = stats.min, .max = stats.max};
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

void p2p_size_name(size_t bytes, char *text, size_t size)
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

static int label_width(const p2p_figure *f)
{
    int width = (int) strlen(f->row_title) + (int) strlen(f->column_title) + 1;
    for (int r = 0; r < f->rows; r++) {
        int len = (int) strlen(f->row_names[r]);
        if (len > width)
            width = len;
    }
    return width;
}

static int column_width(const p2p_figure *f, int c)
{
    int width = (int) strlen(f->column_names[c]);
    for (int r = 0; r < f->rows; r++) {
        const p2p_cell *cell = &f->cells[(size_t) r * (size_t) f->columns + (size_t) c];
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
            const p2p_cell *cell = &f->cells[(size_t) r * (size_t) f->columns + (size_t) c];
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
        p2p_size_name(f->bytes, size, sizeof size);
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
    for (int r = 0; r < f->rows; r++) {
        fprintf(out, "  %-*s", lw, f->row_names[r]);
        for (int c = 0; c < f->columns; c++)
            print_table_cell(f, &f->cells[(size_t) r * (size_t) f->columns + (size_t) c],
                             column_width(f, c), out);
        fputc('\n', out);
    }
    int row = 0, column = 0;
    double spread = largest_spread(f, &row, &column);
    if (spread >= 0)
        fprintf(out,
                "  median of %d samples; largest spread (max-min)/median: %.1f%% "
                "(%s %s, %s %s)\n",
                f->samples, 100.0 * spread, f->row_title, f->row_names[row],
                *f->column_title ? f->column_title : "column", f->column_names[column]);
}

static void print_table(const p2p_ctx *ctx, FILE *out)
{
    const p2p_options *opt = ctx->opt;
    char size[32];
    p2p_size_name(opt->bytes, size, sizeof size);
    fprintf(out,
            "# %s %s: %s backend (%s), %d device%s, %s copies, median of %d samples "
            "after %d warm-up\n",
            P2P_NAME, MGPU_VERSION, mgpu_backend_name(mgpu_backend_active()), mgpu_backend_reason(),
            ctx->n, ctx->n == 1 ? "" : "s", size, opt->repeat, opt->warmup);
    if (!ctx->cuda)
        fprintf(out, "# %s\n", host_note);
    fprintf(out, "# timing: %s; every copy is verified against its source's pattern\n",
            timing_note(ctx));
    if (ctx->gapped)
        fprintf(out,
                "# %ld samples: the host took longer to queue the copies than the "
                "longest spin; their times include launch gaps\n",
                ctx->gapped);
    fprintf(out, "# - : not applicable or not possible (a device with itself, no peer "
                 "access)\n");
    for (int i = 0; i < ctx->results->count; i++)
        print_table_figure(ctx->results->figure[i], out);
}

/* ------------------------------------------------------------------ CSV */

static void print_csv(const p2p_ctx *ctx, FILE *out)
{
    if (ctx->opt->header)
        fprintf(out, "figure,row,column,value,min,max,unit,bytes,samples,backend,rule\n");
    for (int i = 0; i < ctx->results->count; i++) {
        const p2p_figure *f = ctx->results->figure[i];
        for (int r = 0; r < f->rows; r++) {
            for (int c = 0; c < f->columns; c++) {
                const p2p_cell *cell = &f->cells[(size_t) r * (size_t) f->columns + (size_t) c];
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
                mgpu_csv_text(f->unit, out);
                fputc(',', out);
                if (f->bytes)
                    fprintf(out, "%zu", f->bytes);
                fputc(',', out);
                if (cell->kind == CELL_STATS)
                    fprintf(out, "%d", f->samples);
                fprintf(out, ",%s,", mgpu_backend_name(mgpu_backend_active()));
                mgpu_csv_text(f->rule, out);
                fputc('\n', out);
            }
        }
    }
}

/* ----------------------------------------------------------------- JSON */

static void print_json_number(double value, FILE *out)
{
    if (isfinite(value))
        fprintf(out, "%.10g", value);
    else
        fputs("null", out);
}

static void print_json_names(char (*names)[P2P_LABEL], int n, FILE *out)
{
    fputc('[', out);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", out);
        mgpu_json_string(names[i], out);
    }
    fputc(']', out);
}

enum cell_part { PART_VALUE, PART_MIN, PART_MAX };

static void print_json_matrix(const p2p_figure *f, enum cell_part part, FILE *out)
{
    fputc('[', out);
    for (int r = 0; r < f->rows; r++) {
        fputs(r ? ", [" : "[", out);
        for (int c = 0; c < f->columns; c++) {
            const p2p_cell *cell = &f->cells[(size_t) r * (size_t) f->columns + (size_t) c];
            if (c)
                fputs(", ", out);
            if (part == PART_VALUE && cell->kind == CELL_TEXT)
                mgpu_json_string(cell->text, out);
            else if (part == PART_VALUE && cell->kind != CELL_EMPTY)
                print_json_number(cell->value, out);
            else if (cell->kind == CELL_STATS)
                print_json_number(part == PART_MIN ? cell->min : cell->max, out);
            else
                fputs("null", out);
        }
        fputc(']', out);
    }
    fputc(']', out);
}

static void print_json_figure(const p2p_figure *f, FILE *out)
{
    fputs("    ", out);
    mgpu_json_string(f->key, out);
    fputs(": {\"title\": ", out);
    mgpu_json_string(f->title, out);
    fputs(", \"unit\": ", out);
    mgpu_json_string(f->unit, out);
    fputs(", \"rule\": ", out);
    mgpu_json_string(f->rule, out);
    fputs(", \"bytes\": ", out);
    if (f->bytes)
        fprintf(out, "%zu", f->bytes);
    else
        fputs("null", out);
    fprintf(out, ", \"samples\": %d,\n      \"row_title\": ", f->samples);
    mgpu_json_string(f->row_title, out);
    fputs(", \"column_title\": ", out);
    mgpu_json_string(f->column_title, out);
    fputs(", \"rows\": ", out);
    print_json_names(f->row_names, f->rows, out);
    fputs(", \"columns\": ", out);
    print_json_names(f->column_names, f->columns, out);
    fputs(",\n      \"value\": ", out);
    print_json_matrix(f, PART_VALUE, out);
    fputs(",\n      \"min\": ", out);
    print_json_matrix(f, PART_MIN, out);
    fputs(",\n      \"max\": ", out);
    print_json_matrix(f, PART_MAX, out);
    fputc('}', out);
}

static void print_json(const p2p_ctx *ctx, FILE *out)
{
    const p2p_options *opt = ctx->opt;
    fprintf(out, "{\"program\": \"%s\", \"version\": \"%s\", \"backend\": ", P2P_NAME,
            MGPU_VERSION);
    mgpu_json_string(mgpu_backend_name(mgpu_backend_active()), out);
    fputs(", \"backend_reason\": ", out);
    mgpu_json_string(mgpu_backend_reason(), out);
    fputs(",\n  \"note\": ", out);
    if (ctx->cuda)
        fputs("null", out);
    else
        mgpu_json_string(host_note, out);
    fputs(", \"timing\": ", out);
    mgpu_json_string(timing_note(ctx), out);
    fprintf(out,
            ",\n  \"devices\": %d, \"bytes\": %zu, \"halo_bytes\": %zu, "
            "\"latency_bytes\": %zu, \"repeat\": %d, \"warmup\": %d, \"spin_us\": ",
            ctx->n, opt->bytes, opt->halo, opt->latency_bytes, opt->repeat, opt->warmup);
    print_json_number(ctx->cuda ? opt->spin_us : 0.0, out);
    fprintf(out, ", \"gapped_samples\": %ld", ctx->gapped);
    fputs(",\n  \"figures\": {\n", out);
    for (int i = 0; i < ctx->results->count; i++) {
        print_json_figure(ctx->results->figure[i], out);
        fputs(i + 1 < ctx->results->count ? ",\n" : "\n", out);
    }
    fputs("  }\n}\n", out);
}

mgpu_status p2p_print(const p2p_ctx *ctx, mgpu_format format, FILE *out)
{
    switch (format) {
    case MGPU_FORMAT_CSV:
        print_csv(ctx, out);
        break;
    case MGPU_FORMAT_JSON:
        print_json(ctx, out);
        break;
    case MGPU_FORMAT_TABLE:
    default:
        print_table(ctx, out);
        break;
    }
    return mgpu_output_flush(out, "the measurements");
}
