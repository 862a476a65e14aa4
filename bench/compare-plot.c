/* compare-plot.c - the plots of a comparison: at the largest grid, the
 * parallel efficiency against devices, a line per program (its fastest
 * mode at each device count), and the exchange modes side by side on the
 * most devices; across grid sizes, the time per step (log-log) and the
 * efficiency against cells, and across halo depths the same against K, a
 * line per program and device count.  Each point's error bar is the spread
 * of its runs, and a line's look says its program, devices and depth or set
 * (look_of).  The data go into one gnuplot script, DIR/plots.gp, that draws
 * them as PNG and SVG and stays, so that a user can restyle and draw them
 * again (`cd DIR && gnuplot plots.gp'); gnuplot is found at run time.
 *
 * The script is code that gnuplot runs, so nothing from the rows goes into
 * it but names (cmp_is_name: no blank, quote or newline) and numbers, each
 * name quoted in the data blocks: no data line can start with "EOD" and end
 * a block early.  gnuplot runs in the folder, never named in a command. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"

#define MAX_NAMES 32

const char *const cmp_plot_files[] = {CMP_PLOT_FILE_NAMES, NULL};

/* Distinct strings, in order of first appearance. */
typedef struct names {
    const char *name[MAX_NAMES];
    int count;
} names;

static int index_of(names *set, const char *name, int add)
{
    for (int i = 0; i < set->count; i++) {
        if (strcmp(set->name[i], name) == 0)
            return i;
    }
    if (!add || set->count == MAX_NAMES)
        return -1;
    set->name[set->count] = name;
    return set->count++;
}

/* "single" for "mgpu-single": six full names overlap under
 * their bars, a dozen crowd a key. */
static const char *short_name(const char *program)
{
    return strncmp(program, "mgpu-", 5) == 0 ? program + 5 : program;
}

/* A line's look.  A plot against size or depth has a line per program,
 * device count and depth or set, a score of them in a full comparison, on
 * which gnuplot's eight colours would come round again.  So the
 * colour says the program (the same in every set of --from), the dash the
 * device count, and the point shape the set and depth where there are
 * several (else the device count again); each a place among the values of
 * the rows that ran (programs in order of first appearance, device counts
 * smallest first: solid for the fewest), so that one comparison's plots
 * agree with each other. */
typedef struct look {
    int colour, dash, point;
} look;

/* Whether two rows have one value: one program, device count, or set and
 * (BY_HALO) depth. */
typedef int same_fn(const cmp_row *a, const cmp_row *b, int by_halo);

static int same_program(const cmp_row *a, const cmp_row *b, int by_halo)
{
    (void) by_halo;
    return strcmp(a->program, b->program) == 0;
}

static int same_devices(const cmp_row *a, const cmp_row *b, int by_halo)
{
    (void) by_halo;
    return a->devices == b->devices;
}

static int same_variant(const cmp_row *a, const cmp_row *b, int by_halo)
{
    return strcmp(a->set, b->set) == 0 && (!by_halo || a->halo == b->halo);
}

/* Of the distinct values (SAME) of the rows that ran: how many there are
 * (the first MAX_NAMES), and in *PLACE the place of ROW's among them, in
 * order of first appearance or, by SMALLER where not NULL, of size. */
static int place_of(const cmp_rows *rows, const cmp_row *row, same_fn *same, int by_halo,
                    int (*smaller)(const cmp_row *, const cmp_row *), int *place)
{
    const cmp_row *distinct[MAX_NAMES];
    int count = 0, found = 0;
    *place = 0;
    for (int i = 0; i < rows->count && count < MAX_NAMES; i++) {
        const cmp_row *r = &rows->row[i];
        int first = r->status == RUN_OK;
        for (int j = 0; first && j < count; j++)
            first = !same(distinct[j], r, by_halo);
        if (!first)
            continue;
        distinct[count++] = r;
        if (same(r, row, by_halo))
            found = 1;
        else if (smaller ? smaller(r, row) : !found)
            ++*place;
    }
    return count;
}

static int fewer_devices(const cmp_row *a, const cmp_row *b) { return a->devices < b->devices; }

/* The look of ROW's line; DEVICES 0: a line across device counts (solid). */
static look look_of(const cmp_rows *rows, const cmp_row *row, int devices, int by_halo)
{
    look k;
    place_of(rows, row, same_program, 0, NULL, &k.colour);
    k.dash = 0;
    if (devices)
        place_of(rows, row, same_devices, 0, fewer_devices, &k.dash);
    if (place_of(rows, row, same_variant, by_halo, NULL, &k.point) < 2)
        k.point = k.dash;
    return k;
}

/* gnuplot arrays NAME_colour, NAME_dash and NAME_point: the LOOKS of the
 * SETS lines of $NAME.  Eight colours (seven programs), eight dashes and
 * ten shapes before one comes round again. */
static void write_styles(FILE *gp, const char *name, const look *looks, int sets)
{
    static const char *const dash[] = {"1", "2",        "3",         "4",
                                       "5", "\"__ .\"", "\". _ .\"", "\"__  __\""};
    static const int point[] = {7, 5, 9, 11, 13, 15, 6, 4, 8, 12};
    if (sets == 0)
        return;
    fprintf(gp, "array %s_colour[%d] = [", name, sets);
    for (int k = 0; k < sets; k++)
        fprintf(gp, "%s%d", k ? "," : "", looks[k].colour % 8 + 1);
    fprintf(gp, "]\narray %s_dash[%d] = [", name, sets);
    for (int k = 0; k < sets; k++)
        fprintf(gp, "%s%s", k ? "," : "", dash[looks[k].dash % 8]);
    fprintf(gp, "]\narray %s_point[%d] = [", name, sets);
    for (int k = 0; k < sets; k++)
        fprintf(gp, "%s%d", k ? "," : "", point[looks[k].point % 10]);
    fputs("]\n", gp);
}

/* The most devices a run that succeeded had (AT: at that grid; NULL: at
 * any), or 0. */
static int max_devices(const cmp_rows *rows, const cmp_size *at)
{
    int most = 0;
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        if (r->status == RUN_OK && (!at || cmp_row_at(r, at)) && r->devices > most)
            most = r->devices;
    }
    return most;
}

/* A number of a data block, or "-" (set datafile missing) where there is
 * none. */
static void data_cell(FILE *gp, double value)
{
    if (isfinite(value))
        fprintf(gp, " %.4f", value);
    else
        fputs(" -", gp);
}

/* What a point of a line shows, each with the spread of the row's runs
 * (time_min_s, time_max_s besides the median time_s) as its error bar. */
typedef enum measure {
    US_PER_STEP,       /* proportional to the time */
    GCELLS_PER_S,      /* inversely */
    EFFICIENCY_PERCENT /* inversely: speedup / devices, in percent */
} measure;

static double measured(const cmp_row *r, measure what)
{
    switch (what) {
    case US_PER_STEP:
        return r->us_per_step;
    case GCELLS_PER_S:
        return r->gcells_per_s;
    default:
        return 100 * r->efficiency;
    }
}

/* The bar of VALUE (WHAT of R): from the slowest run to the fastest.  The
 * speedup and the efficiency hold each run against the median of the
 * 1-device run, whose own spread is the bar of its point (the reference
 * every point of its line is divided by).  Without a spread (older
 * results, one run), a bar of no length. */
static void bar(const cmp_row *r, measure what, double value, double *low, double *high)
{
    *low = *high = value;
    if (!(r->time_s > 0 && r->time_min_s > 0 && r->time_max_s >= r->time_min_s))
        return;
    if (what == US_PER_STEP) {
        *low = value * r->time_min_s / r->time_s;
        *high = value * r->time_max_s / r->time_s;
    } else {
        *low = value * r->time_s / r->time_max_s;
        *high = value * r->time_s / r->time_min_s;
    }
}

/* The span of the bars drawn, for an axis set from the data. */
typedef struct span {
    double low, high;
} span;

/* A line of a plot: its rows, one per point (NULL: no point there), in
 * the order of its x. */
typedef struct line {
    const cmp_row **row;
    int count;
} line;

/* Whether the exchange mode of R, a point of L, says anything: on one
 * device nothing is exchanged between devices (each program runs its
 * default mode there), so a line that has points on more devices is
 * told by those. */
static int mode_counts(const line *l, const cmp_row *r)
{
    if (r->devices > 1)
        return 1;
    for (int i = 0; i < l->count; i++) {
        if (l->row[i] && l->row[i]->devices > 1)
            return 0;
    }
    return 1;
}

/* The exchange mode of the points of L that tell one (mode_counts) when
 * they all have the same, else NULL; *VARIES says whether they differ. */
static const char *line_mode(const line *l, int *varies)
{
    const char *mode = NULL;
    *varies = 0;
    for (int i = 0; i < l->count; i++) {
        const cmp_row *r = l->row[i];
        if (!r || !mode_counts(l, r))
            continue;
        if (!mode)
            mode = r->exchange;
        else if (strcmp(mode, r->exchange) != 0)
            *varies = 1;
    }
    return *varies ? NULL : mode;
}

/* What the points of a line stand at. */
typedef enum axis { X_DEVICES, X_CELLS, X_HALO } axis;

/* One data set of a block (the sets are two blank lines apart, plotted
 * with `index'): a header whose third column is the line's title, "single,
 * 2 dev (direct)" (DEVICES 0: no device count; HALO 0: no depth), then a
 * row per point: x, its tic, the value, the bar's low and high, and the
 * point's exchange mode where the line's mode varies from point to point
 * ("" elsewhere: the key says it).  1 when the line labels its points. */
static int write_line(FILE *gp, const char *program, int devices, int halo, const line *l,
                      measure what, axis x, span *range)
{
    int varies;
    const char *mode = line_mode(l, &varies);
    fprintf(gp, "x tic \"%s", short_name(program));
    if (devices)
        fprintf(gp, ", %d dev", devices);
    if (cmp_is_floor(program))
        fputs(", device-driven floor", gp);
    if (halo)
        fprintf(gp, ", halo %d", halo);
    if (varies)
        fputs(" (mode per point)", gp);
    else if (mode)
        fprintf(gp, " (%s)", mode);
    fputs("\" low high mode\n", gp);
    for (int i = 0; i < l->count; i++) {
        const cmp_row *r = l->row[i];
        double value = r ? measured(r, what) : NAN, low, high;
        if (!isfinite(value))
            continue;
        bar(r, what, value, &low, &high);
        if (x == X_CELLS)
            fprintf(gp, "%lld \"%lldx%lld\"", r->nx * r->ny, r->nx, r->ny);
        else if (x == X_HALO)
            fprintf(gp, "%d \"%d\"", r->halo, r->halo);
        else
            fprintf(gp, "%d \"%d\"", r->devices, r->devices);
        data_cell(gp, value);
        data_cell(gp, low);
        data_cell(gp, high);
        fprintf(gp, " \"%s\"\n", varies && mode_counts(l, r) ? r->exchange : "");
        if (!(range->low <= low))
            range->low = low;
        if (!(range->high >= high))
            range->high = high;
    }
    fputs("\n\n", gp);
    return varies;
}

/* The halo depths of the rows that ran (AT: at that grid), shallowest
 * first, into DEPTHS (room for MAX); how many there are. */
static int depths_of(const cmp_rows *rows, const cmp_size *at, int *depths, int max)
{
    int count = 0;
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        int k = 0;
        if (r->status != RUN_OK || (at && !cmp_row_at(r, at)))
            continue;
        while (k < count && depths[k] < r->halo)
            k++;
        if ((k < count && depths[k] == r->halo) || count == max)
            continue;
        memmove(depths + k + 1, depths + k, (size_t) (count - k) * sizeof *depths);
        depths[k] = r->halo;
        count++;
    }
    return count;
}

/* $scaling: a data set per program (its order in PROGRAMS) and halo depth
 * (DEEP: named in the title), a point per device count: the efficiency of
 * its fastest mode there, at the grid AT.  The number of sets; *LABELS:
 * whether a line labels its points. */
static int write_scaling(FILE *gp, const cmp_rows *rows, const cmp_size *at, names *programs,
                         int deep, span *range, int *labels)
{
    int depths[MAX_NAMES];
    int ndepths = depths_of(rows, at, depths, MAX_NAMES);
    int most = max_devices(rows, at), sets = 0;
    line l = {.row = malloc((size_t) (most > 0 ? most : 1) * sizeof *l.row), .count = 0};
    look *looks = malloc((size_t) (rows->count > 0 ? rows->count : 1) * sizeof *looks);
    if (!l.row || !looks) {
        free(l.row);
        free(looks);
        return -1;
    }
    for (int i = 0; i < rows->count; i++) {
        if (rows->row[i].status == RUN_OK && cmp_row_at(&rows->row[i], at))
            index_of(programs, cmp_series(&rows->row[i]), 1);
    }
    fputs("$scaling << EOD\n", gp);
    for (int p = 0; p < programs->count; p++) {
        for (int k = 0; k < ndepths; k++) {
            l.count = 0;
            const cmp_row *any = NULL;
            for (int d = 1; d <= most; d++) {
                const cmp_row *r = cmp_fastest(rows, programs->name[p], d, depths[k], at);
                if (r && !isfinite(r->speedup))
                    r = NULL;
                l.row[l.count++] = r;
                any = any ? any : r;
            }
            if (!any)
                continue;
            *labels |= write_line(gp, programs->name[p], 0, deep ? depths[k] : 0, &l,
                                  EFFICIENCY_PERCENT, X_DEVICES, range);
            looks[sets++] = look_of(rows, any, 0, deep);
        }
    }
    fputs("EOD\n", gp);
    write_styles(gp, "scaling", looks, sets);
    free(l.row);
    free(looks);
    return sets;
}

/* $modes: a row per program (and halo depth, DEEP: named in its tic),
 * three columns per exchange mode (Gcells/s, the bar's low and high) at
 * the largest device count at the grid AT. */
static void write_modes(FILE *gp, const cmp_rows *rows, const cmp_size *at, int most, int deep,
                        names *modes)
{
    names programs = {.count = 0};
    int depths[MAX_NAMES];
    int ndepths = depths_of(rows, at, depths, MAX_NAMES);
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        if (r->status == RUN_OK && r->devices == most && cmp_row_at(r, at)) {
            index_of(&programs, cmp_series(r), 1);
            index_of(modes, r->exchange, 1);
        }
    }
    fputs("$modes << EOD\nprogram", gp);
    for (int m = 0; m < modes->count; m++)
        fprintf(gp, " \"%s\" low high", modes->name[m]);
    fputc('\n', gp);
    for (int p = 0; p < programs.count * ndepths; p++) {
        const char *program = programs.name[p / ndepths];
        int halo = depths[p % ndepths], any = 0;
        for (int i = 0; i < rows->count && !any; i++) {
            const cmp_row *r = &rows->row[i];
            any = r->status == RUN_OK && r->devices == most && cmp_row_at(r, at) &&
                  r->halo == halo && strcmp(cmp_series(r), program) == 0;
        }
        if (!any)
            continue;
        fprintf(gp, "\"%s", short_name(program));
        if (deep)
            fprintf(gp, " K=%d", halo);
        fputc('"', gp);
        for (int m = 0; m < modes->count; m++) {
            double value = NAN, low = NAN, high = NAN;
            for (int i = 0; i < rows->count; i++) {
                const cmp_row *r = &rows->row[i];
                if (r->status == RUN_OK && r->devices == most && cmp_row_at(r, at) &&
                    r->halo == halo && strcmp(cmp_series(r), program) == 0 &&
                    strcmp(r->exchange, modes->name[m]) == 0 && isfinite(r->gcells_per_s)) {
                    value = r->gcells_per_s;
                    bar(r, GCELLS_PER_S, value, &low, &high);
                }
            }
            data_cell(gp, value);
            data_cell(gp, low);
            data_cell(gp, high);
        }
        fputc('\n', gp);
    }
    fputs("EOD\n", gp);
}

/* R (NULL: none) as the next point of L, none where WHAT of it was not
 * measured.  1 when it is a point. */
static int add_point(line *l, const cmp_row *r, measure what)
{
    if (r && !isfinite(measured(r, what)))
        r = NULL;
    l->row[l->count++] = r;
    return r != NULL;
}

/* $NAME: a data set per program, device count (FROM devices up) and halo
 * depth (DEEP: named in the title), a point per grid size: WHAT of its
 * fastest row at that size.  The number of sets; *LABELS: whether a line
 * labels its points. */
static int write_by_size(FILE *gp, const cmp_rows *rows, const char *name, int from, measure what,
                         int deep, span *range, int *labels)
{
    int sizes = cmp_rows_size_count(rows, 1), sets = 0;
    line l = {.row = malloc((size_t) (sizes > 0 ? sizes : 1) * sizeof *l.row), .count = 0};
    look *looks = malloc((size_t) (rows->count > 0 ? rows->count : 1) * sizeof *looks);
    if (!l.row || !looks) {
        free(l.row);
        free(looks);
        return -1;
    }
    fprintf(gp, "$%s << EOD\n", name);
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        if (r->devices < from || !cmp_first_of_pair(rows, i))
            continue;
        cmp_size s;
        int any = 0;
        l.count = 0;
        for (const cmp_size *after = NULL;
             l.count < sizes && cmp_rows_next_size(rows, 1, after, &s); after = &s) {
            any |= add_point(&l, cmp_fastest(rows, cmp_series(r), r->devices, r->halo, &s), what);
        }
        if (!any)
            continue;
        *labels |= write_line(gp, cmp_series(r), r->devices, deep ? r->halo : 0, &l, what, X_CELLS,
                              range);
        looks[sets++] = look_of(rows, r, r->devices, deep);
    }
    fputs("EOD\n", gp);
    write_styles(gp, name, looks, sets);
    free(l.row);
    free(looks);
    return sets;
}

/* $NAME: a data set per program and device count (FROM devices up), a
 * point per halo depth: WHAT of its fastest row with that depth at the
 * grid AT.  The number of sets; *LABELS: whether a line labels its
 * points. */
static int write_by_halo(FILE *gp, const cmp_rows *rows, const cmp_size *at, const char *name,
                         int from, measure what, span *range, int *labels)
{
    int depths[MAX_NAMES], sets = 0;
    line l = {.row = NULL, .count = 0};
    const cmp_row *points[MAX_NAMES];
    int ndepths = depths_of(rows, at, depths, MAX_NAMES);
    look *looks = malloc((size_t) (rows->count > 0 ? rows->count : 1) * sizeof *looks);
    if (!looks)
        return -1;
    l.row = points;
    fprintf(gp, "$%s << EOD\n", name);
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        int first = r->status == RUN_OK && r->devices >= from && cmp_row_at(r, at);
        for (int j = 0; first && j < i; j++) {
            const cmp_row *o = &rows->row[j];
            first = !(o->status == RUN_OK && o->devices == r->devices && cmp_row_at(o, at) &&
                      strcmp(cmp_series(o), cmp_series(r)) == 0);
        }
        if (!first)
            continue;
        int any = 0;
        l.count = 0;
        for (int k = 0; k < ndepths; k++) {
            any |= add_point(&l, cmp_fastest(rows, cmp_series(r), r->devices, depths[k], at), what);
        }
        if (!any)
            continue;
        *labels |= write_line(gp, cmp_series(r), r->devices, 0, &l, what, X_HALO, range);
        looks[sets++] = look_of(rows, r, r->devices, 0);
    }
    fputs("EOD\n", gp);
    write_styles(gp, name, looks, sets);
    free(looks);
    return sets;
}

/* The range of a percent axis: the bars with a margin, whole percents.
 * Efficiency close to ideal is the usual case on a few GPUs joined by
 * NVLink, where a reader wants to tell lines a few per cent apart, and
 * whether they differ by more than the spread of the runs: an axis from 0
 * puts every line on top of the others.  So the axis spans
 * the data (the ideal 100% is drawn when it falls in it, and in the
 * scaling plot it always does: the 1-device points are there), and is
 * labelled in percent so that the zoom is read as a zoom. */
static void percent_axis(FILE *gp, const span *range)
{
    double low = range->low, high = range->high;
    if (!(isfinite(low) && isfinite(high))) {
        fputs("    set yrange [0:110]\n", gp); /* no data: the ideal in sight */
        return;
    }
    double margin = fmax(0.08 * (high - low), 1.0);
    low = fmax(0, floor(low - margin));
    high = ceil(high + margin);
    fprintf(gp, "    set yrange [%.0f:%.0f]\n", low, high);
}

/* The points' exchange modes, where a line's mode varies, next to them in
 * its colour (write_styles). */
static void plot_labels(FILE *gp, const char *block, int sets, const char *columns)
{
    fprintf(gp,
            "for [i=0:%d] $%s index i using %s with labels left offset char "
            "0.6,0.4 font \",9\" tc lt %s_colour[i+1] notitle",
            sets - 1, block, columns, block);
}

/* The plot command of the lines of $BLOCK (SETS data sets, styled by
 * write_styles) against their x tics: bars, the points' modes where
 * LABELS, the ideal 100% where IDEAL. */
static void plot_lines(FILE *gp, const char *block, int sets, int labels, int ideal)
{
    fprintf(gp,
            "    plot for [i=0:%d] $%s index i using 1:3:4:5:xtic(2) with yerrorlines lw 2 "
            "lc %s_colour[i+1] dt %s_dash[i+1] pt %s_point[i+1] title columnhead(3)",
            sets - 1, block, block, block, block);
    if (labels) {
        fputs(", \\\n         ", gp);
        plot_labels(gp, block, sets, "1:3:6");
    }
    if (ideal)
        fputs(", \\\n         100 with lines dt 2 lc rgb \"gray\" title \"ideal\"", gp);
    fputc('\n', gp);
}

/* Within the loop over formats: its terminal, WIDTH x HEIGHT pixels. */
static void set_terminal(FILE *gp, int width, int height)
{
    fprintf(gp,
            "    if (format eq \"svg\") {\n"
            "        set terminal svg size %d,%d noenhanced\n"
            "    } else {\n"
            "        if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
            "            set terminal pngcairo size %d,%d noenhanced\n"
            "        } else {\n"
            "            set terminal png size %d,%d noenhanced\n"
            "        }\n"
            "    }\n",
            width, height, width, height, width, height);
}

/* A plot's page and key, within the loop over formats.  The key of a
 * score of lines (a program on a device count each) goes beside the plot,
 * on a wider page, in a smaller font, each line's sample before its title:
 * below the plot it would take one column and leave the plot a strip.  A
 * few lines' key goes below. */
static void layout(FILE *gp, int lines)
{
    if (lines > 8) {
        set_terminal(gp, 1120, 600);
        fputs("    set key default noenhanced outside right top vertical Left reverse "
              "font \",9\"\n",
              gp);
    } else {
        set_terminal(gp, 960, 600);
        fputs("    set key default noenhanced outside below\n", gp);
    }
}

/* The plots against grid size, within the loop over formats. */
static void plot_sizes(FILE *gp, int time_sets, int time_labels, int efficiency_sets,
                       int efficiency_labels, const span *efficiency_range)
{
    layout(gp, time_sets);
    fputs("    set output \"sizes-time.\".format\n"
          "    set title \"time per step against grid size, fastest exchange mode\\n\".across\n"
          "    set xlabel \"grid cells\"\n"
          "    set ylabel \"us per step (bars: fastest to slowest run)\"\n"
          "    set logscale xy\n"
          "    set xrange [*:*]\n"
          "    set yrange [*:*]\n"
          "    set xtics autofreq rotate by -30\n",
          gp);
    plot_lines(gp, "time", time_sets, time_labels, 0);
    if (efficiency_sets) {
        fputs("    set output \"sizes-efficiency.\".format\n"
              "    set title \"parallel efficiency against grid size\\n(speedup over the "
              "program's own 1-device run at that grid / devices)\\n\".across\n"
              "    set ylabel \"parallel efficiency, % (bars: fastest to slowest run)\"\n"
              "    unset logscale y\n",
              gp);
        percent_axis(gp, efficiency_range);
        plot_lines(gp, "efficiency", efficiency_sets, efficiency_labels, 1);
    }
    fputs("    unset logscale\n"
          "    set xtics norotate\n",
          gp);
}

/* The plots against the halo depth at the largest grid. */
typedef struct halo_plot {
    int time_sets, time_labels, efficiency_sets, efficiency_labels;
    const span *range; /* of the efficiency */
    int shallowest, deepest;
} halo_plot;

/* The plots against the halo depth, within the loop over formats: K on a
 * log2 axis, the depths that ran as its tics. */
static void plot_halos(FILE *gp, const halo_plot *h)
{
    layout(gp, h->time_sets);
    fprintf(gp,
            "    set output \"halo-time.\".format\n"
            "    set title \"time per step against halo depth K, fastest exchange mode\\n(K rows "
            "a side, exchanged every K steps)\\n\".what\n"
            "    set xlabel \"halo depth K\"\n"
            "    set ylabel \"us per step (bars: fastest to slowest run)\"\n"
            "    set logscale x 2\n"
            "    set xrange [%.4g:%.4g]\n" /* room for the points' labels */
            "    set yrange [0:*]\n"
            "    set xtics autofreq\n",
            h->shallowest / 1.5, h->deepest * 1.5);
    plot_lines(gp, "halotime", h->time_sets, h->time_labels, 0);
    if (h->efficiency_sets) {
        fputs("    set output \"halo-efficiency.\".format\n"
              "    set title \"parallel efficiency against halo depth K\\n(speedup over the "
              "program's own 1-device run with that K / devices)\\n\".what\n"
              "    set ylabel \"parallel efficiency, % (bars: fastest to slowest run)\"\n",
              gp);
        percent_axis(gp, h->range);
        plot_lines(gp, "haloefficiency", h->efficiency_sets, h->efficiency_labels, 1);
    }
    fputs("    unset logscale\n", gp);
}

/* The host backend's note on lines of its own in a title string: one line
 * is wider than the plot. */
static void host_note(FILE *gp)
{
    const char *note = CMP_HOST_NOTE, *cut = strstr(note, "; ");
    if (cut)
        fprintf(gp, "\\n%.*s;\\n%s", (int) (cut - note), note, cut + 2);
    else
        fprintf(gp, "\\n%s", note);
}

/* Add the plot STEM (its PNG and SVG) to the set *DRAWN: bits by index
 * in cmp_plot_files. */
static void draws(unsigned *drawn, const char *stem)
{
    size_t len = strlen(stem);
    for (int i = 0; cmp_plot_files[i]; i++) {
        const char *name = cmp_plot_files[i];
        if (strncmp(name, stem, len) == 0 &&
            (strcmp(name + len, ".png") == 0 || strcmp(name + len, ".svg") == 0))
            *drawn |= 1u << i;
    }
}

/* Write DIR/plots.gp; *DRAWN gets the plots it draws.  0, or -1 after a
 * message (the file is then removed: a script cut short is no script). */
static int write_script(const char *dir, const cmp_rows *rows, int host, unsigned *drawn)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, CMP_PLOT_SCRIPT);
    FILE *gp = fopen(path, "w");
    if (!gp) {
        fprintf(stderr, "%s: cannot write %s: %s\n", COMPARE_NAME, path, strerror(errno));
        return -1;
    }
    const cmp_row *m = NULL;
    for (int i = 0; i < rows->count && !m; i++)
        m = rows->row[i].status == RUN_OK ? &rows->row[i] : NULL;
    /* Scaling and exchange modes at the largest grid: there the devices
     * have the most work each, as in a comparison at one size. */
    cmp_size at, s;
    int sizes = 0;
    for (const cmp_size *after = NULL; cmp_rows_next_size(rows, 1, after, &s); after = &s)
        at = s, sizes++;
    int most = max_devices(rows, &at);
    names programs = {.count = 0}, modes = {.count = 0};
    fprintf(gp,
            "# plots.gp - written by %s: the scaling and exchange-mode plots%s.\n"
            "# Draw them again with: gnuplot plots.gp (in this folder)\n"
            "# Error bars: from the fastest to the slowest of the runs of each row.\n"
            "set datafile missing \"-\"\n",
            COMPARE_NAME, sizes > 1 ? ", and time and efficiency against grid size" : "");
    /* Nothing drawn yet. */
    const span none = {.low = NAN, .high = NAN};
    span scaling_range = none, unused = none, efficiency_range = none, halo_range = none;
    int scaling_labels = 0, time_labels = 0, efficiency_labels = 0;
    /* Lines per halo depth, named, when any ran deeper than 1. */
    int deep = cmp_rows_deep(rows), depths[MAX_NAMES];
    int scaling_sets = write_scaling(gp, rows, &at, &programs, deep, &scaling_range,
                                     &scaling_labels);
    write_modes(gp, rows, &at, most, deep, &modes);
    int time_sets = 0, efficiency_sets = 0;
    halo_plot halo = {0};
    int ndepths = depths_of(rows, &at, depths, MAX_NAMES);
    if (ndepths > 1) {
        halo.shallowest = depths[0];
        halo.deepest = depths[ndepths - 1];
        halo.time_sets = write_by_halo(gp, rows, &at, "halotime", 1, US_PER_STEP, &unused,
                                       &halo.time_labels);
        halo.efficiency_sets = write_by_halo(gp, rows, &at, "haloefficiency", 2, EFFICIENCY_PERCENT,
                                             &halo_range, &halo.efficiency_labels);
        halo.range = &halo_range;
    }
    if (sizes > 1) {
        time_sets = write_by_size(gp, rows, "time", 1, US_PER_STEP, deep, &unused, &time_labels);
        efficiency_sets = write_by_size(gp, rows, "efficiency", 2, EFFICIENCY_PERCENT, deep,
                                        &efficiency_range, &efficiency_labels);
        fprintf(gp, "across = \"%s backend, %s, %lld steps", m->backend, m->kernel, m->steps);
        if (host)
            host_note(gp);
        fputs("\"\n", gp);
    }
    if (scaling_sets < 0 || time_sets < 0 || efficiency_sets < 0 || halo.time_sets < 0 ||
        halo.efficiency_sets < 0) {
        fclose(gp);
        unlink(path);
        fprintf(stderr, "%s: cannot write %s: out of memory\n", COMPARE_NAME, path);
        return -1;
    }
    fprintf(gp, "what = \"%s backend, %s %lld x %lld, %lld steps", m->backend, m->kernel, at.nx,
            at.ny, m->steps);
    if (host)
        host_note(gp);
    fputs("\"\n", gp);
    fprintf(gp, "set grid\n"
                "set key noenhanced\n"
                "set style histogram errorbars gap 1 lw 1\n"
                "set style fill solid 0.8 border -1\n"
                "set errorbars small\n"
                "do for [format in \"png svg\"] {\n");
    layout(gp, scaling_sets);
    fprintf(gp,
            "    set output \"scaling.\".format\n"
            "    set title \"parallel efficiency (speedup over each program's own 1-device run "
            "/ devices), fastest exchange mode\\n\".what\n"
            "    set xlabel \"devices\"\n"
            "    set ylabel \"parallel efficiency, %% (bars: fastest to slowest run)\"\n"
            "    set xrange [0.5:%d.5]\n",
            most);
    percent_axis(gp, &scaling_range);
    fputs("    set xtics 1\n    plot ", gp);
    /* Without a 1-device run there is no efficiency: the ideal alone, and
     * the title says why. */
    if (scaling_sets) {
        fprintf(gp,
                "for [i=0:%d] $scaling index i using 1:3:4:5 with yerrorlines lw 2 "
                "lc scaling_colour[i+1] dt scaling_dash[i+1] pt scaling_point[i+1] "
                "title columnhead(3), \\\n         ",
                scaling_sets - 1);
        if (scaling_labels) {
            plot_labels(gp, "scaling", scaling_sets, "1:3:6");
            fputs(", \\\n         ", gp);
        }
    }
    fprintf(gp, "100 with lines dt 2 lc rgb \"gray\" title \"ideal%s\"\n",
            scaling_sets ? "" : " (no 1-device run: no efficiency)");
    set_terminal(gp, 960, 600);
    fprintf(gp,
            "    set output \"exchange-modes.\".format\n"
            "    set key default noenhanced outside right top\n"
            "    set title \"Gcells/s by exchange mode on %d device%s\\n\".what\n"
            "    unset xlabel\n"
            "    set ylabel \"Gcells/s (bars: slowest to fastest run)\"\n"
            "    set xrange [*:*]\n"
            "    set yrange [0:*]\n"
            "    set xtics autofreq\n"
            "    plot for [m=0:%d] $modes using 2+3*m:3+3*m:4+3*m:xtic(1) with histograms "
            "title columnhead(2+3*m)\n",
            most, most == 1 ? "" : "s", modes.count - 1);
    *drawn = 0;
    draws(drawn, "scaling");
    draws(drawn, "exchange-modes");
    if (time_sets) {
        plot_sizes(gp, time_sets, time_labels, efficiency_sets, efficiency_labels,
                   &efficiency_range);
        draws(drawn, "sizes-time");
        if (efficiency_sets)
            draws(drawn, "sizes-efficiency");
    }
    if (halo.time_sets) {
        plot_halos(gp, &halo);
        draws(drawn, "halo-time");
        if (halo.efficiency_sets)
            draws(drawn, "halo-efficiency");
    }
    fputs("}\n", gp);
    /* A write that failed (a full disk) may be known only when the buffer
     * is flushed; the commit syncs the file (compare-output.c). */
    errno = 0;
    int failed = fflush(gp) != 0 || ferror(gp);
    int saved = errno;
    if (fclose(gp) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    if (failed) {
        unlink(path);
        fprintf(stderr, "%s: cannot write %s: %s\n", COMPARE_NAME, path,
                saved ? strerror(saved) : "a write failed");
        return -1;
    }
    return 0;
}

/* Whether the plot NAME that gnuplot left in DIR is whole, else a line
 * that says why: gnuplot exits 0 when its writes fail (a full disk), and
 * leaves a PNG cut short or an empty SVG, or none.  A PNG ends with its
 * IEND chunk, an SVG with its closing tag.  Every plot the script asked
 * for must be there: a tool that says it succeeded is not believed without
 * its file. */
static int plot_whole(const char *dir, const char *name)
{
    char path[PATH_MAX + 32], tail[64] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: gnuplot exited 0 but made no %s (%s): no PNG or SVG\n", COMPARE_NAME,
                name, strerror(errno));
        return 0;
    }
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    size_t want = size > (long) sizeof tail ? sizeof tail : size > 0 ? (size_t) size : 0;
    size_t got = size >= 0 && fseek(f, -(long) want, SEEK_END) == 0 ? fread(tail, 1, want, f) : 0;
    fclose(f);
    static const char png_end[] = "IEND\xae\x42\x60\x82";
    int whole = strstr(name, ".png") ? got >= 8 && memcmp(tail + got - 8, png_end, 8) == 0
                                     : got > 0 && memmem(tail, got, "</svg>", 6) != NULL;
    if (!whole)
        fprintf(stderr,
                "%s: gnuplot left %s incomplete (%ld bytes, a write failed?): no PNG or SVG\n",
                COMPARE_NAME, name, size);
    return whole;
}

int cmp_plot(const cmp_rows *rows, const char *dir, long long timeout_s)
{
    if (max_devices(rows, NULL) == 0) {
        fprintf(stderr, "%s: no run succeeded: nothing to plot\n", COMPARE_NAME);
        return CMP_PLOTS_NONE;
    }
    unsigned drawn = 0;
    if (write_script(dir, rows, cmp_host_ran(rows), &drawn) != 0)
        return CMP_PLOTS_FAILED;
    /* Plots are asked for when GNUPLOT names a program, or a gnuplot is on
     * PATH; none there is no failure, only the script is written. */
    const char *gnuplot = getenv("GNUPLOT");
    int asked = gnuplot && *gnuplot;
    if (!asked)
        gnuplot = "gnuplot";
    char *argv[] = {(char *) gnuplot, CMP_PLOT_SCRIPT, NULL};
    cmp_output out;
    char error[256];
    int status = CMP_PLOTS_MADE;
    long long limit = timeout_s < CMP_PLOT_TIMEOUT_S ? timeout_s : CMP_PLOT_TIMEOUT_S;
    if (cmp_spawn(argv, dir, (double) limit, &out, error, sizeof error) != 0) {
        if (asked || out.start_errno != ENOENT) {
            fprintf(stderr, "%s: GNUPLOT: %s: no PNG or SVG\n", COMPARE_NAME, error);
            status = CMP_PLOTS_FAILED;
        } else {
            fprintf(stderr,
                    "%s: no gnuplot on PATH: plots.gp written, no PNG or SVG (set "
                    "GNUPLOT to a gnuplot)\n",
                    COMPARE_NAME);
            status = CMP_PLOTS_SCRIPT;
        }
    } else if (out.timed_out) {
        fprintf(stderr,
                "%s: %s stopped after %lld s (--timeout, at most %d s for the plots): no PNG or "
                "SVG\n",
                COMPARE_NAME, gnuplot, limit, CMP_PLOT_TIMEOUT_S);
        status = CMP_PLOTS_FAILED;
    } else if (out.exit_code != 0 || cmp_interrupted()) {
        char last[256], ended[96];
        cmp_last_line(out.err, NULL, last, sizeof last);
        cmp_ended(&out, ended, sizeof ended);
        fprintf(stderr, "%s: %s failed (%s): no PNG or SVG%s%s\n", COMPARE_NAME, gnuplot, ended,
                last[0] ? ": " : "", last);
        status = CMP_PLOTS_FAILED;
    }
    cmp_output_free(&out);
    for (int i = 1; status == CMP_PLOTS_MADE && cmp_plot_files[i]; i++)
        if ((drawn & (1u << i)) && !plot_whole(dir, cmp_plot_files[i]))
            status = CMP_PLOTS_FAILED;
    return status;
}
