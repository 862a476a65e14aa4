/* compare-sets.c - comparisons side by side: several results.json read
 * with --from, each a set of its own (a machine, a build, a day), named,
 * and printed as one table with a column per set and each set's time over
 * the first's.
 *
 * The rows of every set stay in one cmp_rows.  A row knows its set, and its
 * series (cmp_series: "PROGRAM@SET") is what the speedups, the crossover
 * and the plots group by, so that each set's runs are held against its own
 * one-device runs and each line of a plot is named by its set.  A grid, a
 * mode or a device count that only one set has gets its line with "-" in
 * the others' columns: nothing is dropped. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"

/* ------------------------------------------------------- naming a set */

/* The name PATH gives its set, into NAME (SIZE bytes): the folder of a
 * results.json, else the file's name without ".json". */
static void name_of_path(const char *path, char *name, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (strcmp(base, "results.json") != 0) {
        size_t len = strlen(base);
        if (len > 5 && strcmp(base + len - 5, ".json") == 0)
            len -= 5;
        snprintf(name, size, "%.*s", (int) len, base);
        return;
    }
    char folder[PATH_MAX], where[PATH_MAX];
    cmp_folder_of(path, folder, sizeof folder);
    /* "./results.json", "../results.json": the folder's own name. */
    if (realpath(folder, where))
        snprintf(folder, sizeof folder, "%s", where);
    /* "a/b/" and "a/b/." name b. */
    size_t len = strlen(folder);
    while (len > 1 &&
           (folder[len - 1] == '/' || (folder[len - 1] == '.' && folder[len - 2] == '/')))
        folder[--len] = '\0';
    const char *last = strrchr(folder, '/');
    snprintf(name, size, "%s", !last ? folder : last[1] ? last + 1 : "results");
}

/* NAME made a name (cmp_is_name): what is not a letter, a digit, '.',
 * '_', '+' or '-' becomes '_', and a name that starts with none of a
 * letter or a digit is "set" before it. */
static void make_name(char *name, size_t size)
{
    for (char *c = name; *c; c++) {
        if (!isalnum((unsigned char) *c) && !strchr("._+-", *c))
            *c = '_';
    }
    if (!isalnum((unsigned char) name[0])) {
        char copy[24];
        snprintf(copy, sizeof copy, "%s", name);
        snprintf(name, size, "set%.20s", copy);
    }
}

/* 1 when a row before FIRST has the set NAME. */
static int set_taken(const cmp_rows *rows, int first, const char *name)
{
    for (int i = 0; i < first; i++) {
        if (strcmp(rows->row[i].set, name) == 0)
            return 1;
    }
    return 0;
}

void cmp_rows_name_set(cmp_rows *rows, int first, const char *path)
{
    char base[24], name[sizeof rows->row[0].set];
    name_of_path(path, base, sizeof base);
    make_name(base, sizeof base);
    snprintf(name, sizeof name, "%s", base);
    for (int n = 2; set_taken(rows, first, name); n++)
        snprintf(name, sizeof name, "%.20s-%d", base, n % 1000000);
    for (int i = first; i < rows->count; i++) {
        cmp_row *r = &rows->row[i];
        snprintf(r->set, sizeof r->set, "%s", name);
        snprintf(r->series, sizeof r->series, "%s@%s", r->program, name);
    }
}

/* ------------------------------------------------------- the table */

/* The sets of ROWS in the order they were read, into SETS (room for
 * CMP_MAX_SETS): the first row of each.  How many. */
static int sets_of(const cmp_rows *rows, const cmp_row **sets)
{
    int n = 0;
    for (int i = 0; i < rows->count; i++) {
        int known = 0;
        for (int s = 0; s < n && !known; s++)
            known = strcmp(sets[s]->set, rows->row[i].set) == 0;
        if (!known && n < CMP_MAX_SETS)
            sets[n++] = &rows->row[i];
    }
    return n;
}

/* 1 when A and B are the same run asked of two sets: program, mode,
 * devices, grid, halo depth and kernel. */
static int same_run(const cmp_row *a, const cmp_row *b)
{
    return strcmp(a->program, b->program) == 0 && strcmp(a->exchange, b->exchange) == 0 &&
           a->devices == b->devices && a->nx == b->nx && a->ny == b->ny && a->halo == b->halo &&
           strcmp(a->kernel, b->kernel) == 0;
}

/* The row of SET that is the same run as LIKE, or NULL. */
static const cmp_row *in_set(const cmp_rows *rows, const char *set, const cmp_row *like)
{
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        if (strcmp(r->set, set) == 0 && same_run(r, like))
            return r;
    }
    return NULL;
}

/* Where a set's run is in a column: its time per step, or why not. */
static void time_cell(FILE *out, int width, const cmp_row *r)
{
    if (!r)
        fprintf(out, " %*s", width, "-");
    else if (r->status == RUN_FAILED)
        fprintf(out, " %*s", width, "FAILED");
    else if (r->status == RUN_SKIPPED)
        fprintf(out, " %*s", width, "skipped");
    else
        fprintf(out, " %*.1f", width, r->us_per_step);
}

/* A record's text field, or "?". */
static const char *record_text(const cmp_row *r, const char *key)
{
    const char *text = r->record ? json_string_value(json_object_get(r->record, key)) : NULL;
    return text && *text ? text : "?";
}

/* Each set's name, and where its runs ran: the host and GPUs its first
 * run that ran names. */
static void print_sets(const cmp_rows *rows, const cmp_row **sets, int n, FILE *out)
{
    fprintf(out, "# sets, side by side:");
    for (int s = 0; s < n; s++) {
        const cmp_row *ran = sets[s];
        for (int i = 0; i < rows->count; i++) {
            const cmp_row *r = &rows->row[i];
            if (strcmp(r->set, sets[s]->set) == 0 && r->status == RUN_OK) {
                ran = r;
                break;
            }
        }
        fprintf(out, "%s %s: %s backend on %s (%s)", s ? ";" : "", ran->set, ran->backend,
                record_text(ran, "hostname"), record_text(ran, "gpus"));
    }
    fputc('\n', out);
}

void cmp_print_side_by_side(const cmp_rows *rows, FILE *out)
{
    const cmp_row *sets[CMP_MAX_SETS];
    int n = sets_of(rows, sets);
    if (n == 0)
        return;
    print_sets(rows, sets, n, out);
    fprintf(out,
            "# each set's us_per_step (time_s / steps); %s/...: its us_per_step over %s's "
            "(below 1: faster); -: a run the set does not have\n",
            sets[0]->set, sets[0]->set);
    int width[CMP_MAX_SETS];
    fprintf(out, "%-15s %7s %-10s %4s %-9s %6s %6s", "program", "devices", "exchange", "halo",
            "kernel", "nx", "ny");
    for (int s = 0; s < n; s++) {
        width[s] = (int) strlen(sets[s]->set) > 9 ? (int) strlen(sets[s]->set) : 9;
        fprintf(out, " %*s", width[s], sets[s]->set);
    }
    for (int s = 1; s < n; s++)
        fprintf(out, " %*s/%s", width[s], sets[s]->set, sets[0]->set);
    fputc('\n', out);
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        /* Each run once: at its first row, in the order the sets were read. */
        int first = 1;
        for (int j = 0; j < i && first; j++)
            first = !same_run(&rows->row[j], r);
        if (!first)
            continue;
        fprintf(out, "%-15s %7d %-10s %4d %-9s %6lld %6lld", r->program, r->devices, r->exchange,
                r->halo, r->kernel, r->nx, r->ny);
        const cmp_row *cells[CMP_MAX_SETS];
        for (int s = 0; s < n; s++) {
            cells[s] = in_set(rows, sets[s]->set, r);
            time_cell(out, width[s], cells[s]);
        }
        for (int s = 1; s < n; s++) {
            int both = cells[0] && cells[s] && cells[0]->status == RUN_OK &&
                       cells[s]->status == RUN_OK && cells[0]->us_per_step > 0.0;
            int w = width[s] + 1 + (int) strlen(sets[0]->set);
            if (both)
                fprintf(out, " %*.3f", w, cells[s]->us_per_step / cells[0]->us_per_step);
            else
                fprintf(out, " %*s", w, "-");
        }
        fputc('\n', out);
    }
}
