/* compare-plot.c - the plots of a comparison: speedup against devices, one
 * line per program (its best exchange mode at each device count), and the
 * exchange modes side by side at the largest device count, both at the
 * largest grid; and, when the runs span several grid sizes, the time per
 * step (log-log) and the efficiency against the grid's cells, one line per
 * program and device count (its fastest exchange mode at each size).  The data go
 * into one gnuplot script, DIR/plots.gp, that draws both as PNG and SVG;
 * it stays there, so that a user can restyle the plots and draw them again
 * with `cd DIR && gnuplot plots.gp'.  gnuplot is found at run time ($GNUPLOT,
 * else on PATH); without it the script is still written.
 *
 * The script is code that gnuplot runs, so nothing from the rows goes into
 * it but names (cmp_is_name: no blank, quote or newline) and numbers, each
 * name in double quotes inside the data blocks: no data line can then start
 * with "EOD" and end a block early, after which the lines would be
 * commands.  gnuplot runs in the folder, which is never written into a
 * command. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* $scaling: a row per device count, a column per program, the best speedup
 * of its modes at the grid AT; "-" where the program did not run. */
static void write_scaling(FILE *gp, const cmp_rows *rows, const cmp_size *at, names *programs)
{
    int most = max_devices(rows, at);
    fputs("$scaling << EOD\ndevices", gp);
    for (int i = 0; i < rows->count; i++) {
        if (rows->row[i].status == RUN_OK && cmp_row_at(&rows->row[i], at))
            index_of(programs, rows->row[i].program, 1);
    }
    for (int p = 0; p < programs->count; p++)
        fprintf(gp, " \"%s\"", programs->name[p]);
    fputc('\n', gp);
    for (int d = 1; d <= most; d++) {
        double best[MAX_NAMES];
        int any = 0;
        for (int p = 0; p < programs->count; p++)
            best[p] = NAN;
        for (int i = 0; i < rows->count; i++) {
            const cmp_row *r = &rows->row[i];
            int p = index_of(programs, r->program, 0);
            if (r->status != RUN_OK || r->devices != d || !cmp_row_at(r, at) || p < 0 ||
                !isfinite(r->speedup))
                continue;
            if (!(best[p] >= r->speedup))
                best[p] = r->speedup;
            any = 1;
        }
        if (!any)
            continue;
        fprintf(gp, "%d", d);
        for (int p = 0; p < programs->count; p++)
            data_cell(gp, best[p]);
        fputc('\n', gp);
    }
    fputs("EOD\n", gp);
}

/* $modes: a row per program, a column per exchange mode, Gcells/s at the
 * largest device count at the grid AT. */
static void write_modes(FILE *gp, const cmp_rows *rows, const cmp_size *at, int most,
                        names *modes)
{
    names programs = {.count = 0};
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        if (r->status == RUN_OK && r->devices == most && cmp_row_at(r, at)) {
            index_of(&programs, r->program, 1);
            index_of(modes, r->exchange, 1);
        }
    }
    fputs("$modes << EOD\nprogram", gp);
    for (int m = 0; m < modes->count; m++)
        fprintf(gp, " \"%s\"", modes->name[m]);
    fputc('\n', gp);
    for (int p = 0; p < programs.count; p++) {
        fprintf(gp, "\"%s\"", short_name(programs.name[p]));
        for (int m = 0; m < modes->count; m++) {
            double value = NAN;
            for (int i = 0; i < rows->count; i++) {
                const cmp_row *r = &rows->row[i];
                if (r->status == RUN_OK && r->devices == most && cmp_row_at(r, at) &&
                    strcmp(r->program, programs.name[p]) == 0 &&
                    strcmp(r->exchange, modes->name[m]) == 0)
                    value = r->gcells_per_s;
            }
            data_cell(gp, value);
        }
        fputc('\n', gp);
    }
    fputs("EOD\n", gp);
}

/* $NAME: a row per grid size (its cells and "NXxNY"), a column per program
 * and device count (FROM devices up) with the VALUE of its fastest row at
 * that size; "-" where it did not run.  The number of columns, or 0 when
 * there is none. */
static int write_by_size(FILE *gp, const cmp_rows *rows, const char *name, int from,
                         double (*value)(const cmp_row *))
{
    int columns = 2;
    fprintf(gp, "$%s << EOD\ncells size", name);
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        if (r->devices >= from && cmp_first_of_pair(rows, i)) {
            fprintf(gp, " \"%s, %d\"", short_name(r->program), r->devices);
            columns++;
        }
    }
    fputc('\n', gp);
    cmp_size s;
    for (const cmp_size *after = NULL; cmp_rows_next_size(rows, 1, after, &s); after = &s) {
        fprintf(gp, "%lld \"%lldx%lld\"", s.nx * s.ny, s.nx, s.ny);
        for (int i = 0; i < rows->count; i++) {
            const cmp_row *r = &rows->row[i];
            if (r->devices < from || !cmp_first_of_pair(rows, i))
                continue;
            const cmp_row *best = cmp_fastest(rows, r->program, r->devices, &s);
            data_cell(gp, best ? value(best) : NAN);
        }
        fputc('\n', gp);
    }
    fputs("EOD\n", gp);
    return columns > 2 ? columns : 0;
}

static double us_per_step(const cmp_row *r) { return r->us_per_step; }
static double efficiency(const cmp_row *r) { return r->efficiency; }

/* The plots against grid size, within the loop over formats. */
static void plot_sizes(FILE *gp, int time_columns, int efficiency_columns)
{
    fprintf(gp,
            "    set output \"sizes-time.\".format\n"
            "    set key outside below\n"
            "    set title \"time per step against grid size, fastest exchange mode\\n\".across\n"
            "    set xlabel \"grid cells\"\n"
            "    set ylabel \"us per step\"\n"
            "    set logscale xy\n"
            "    set xrange [*:*]\n"
            "    set yrange [*:*]\n"
            "    set xtics autofreq rotate by -30\n"
            "    plot for [c=3:%d] $time using 1:c:xtic(2) with linespoints lw 2 pt 7 "
            "title columnhead(c)\n",
            time_columns);
    if (efficiency_columns)
        fprintf(gp,
                "    set output \"sizes-efficiency.\".format\n"
                "    set title \"parallel efficiency against grid size (speedup over the "
                "program's own 1-device run at that grid / devices)\\n\".across\n"
                "    set ylabel \"efficiency\"\n"
                "    unset logscale y\n"
                "    set yrange [0:*]\n"
                "    plot for [c=3:%d] $efficiency using 1:c:xtic(2) with linespoints lw 2 "
                "pt 7 title columnhead(c), \\\n"
                "         1 with lines dt 2 lc rgb \"gray\" title \"ideal\"\n",
                efficiency_columns);
    fputs("    unset logscale\n"
          "    set xtics norotate\n",
          gp);
}

static int write_script(const char *dir, const cmp_rows *rows, int host)
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
            "set datafile missing \"-\"\n",
            COMPARE_NAME, sizes > 1 ? ", and time and efficiency against grid size" : "");
    write_scaling(gp, rows, &at, &programs);
    write_modes(gp, rows, &at, most, &modes);
    int time_columns = 0, efficiency_columns = 0;
    if (sizes > 1) {
        time_columns = write_by_size(gp, rows, "time", 1, us_per_step);
        efficiency_columns = write_by_size(gp, rows, "efficiency", 2, efficiency);
        fprintf(gp, "across = \"%s backend, %s, %lld steps%s%s\"\n", m->backend, m->kernel,
                m->steps, host ? "\\n" : "", host ? CMP_HOST_NOTE : "");
    }
    fprintf(gp, "what = \"%s backend, %s %lld x %lld, %lld steps%s%s\"\n", m->backend, m->kernel,
            at.nx, at.ny, m->steps, host ? "\\n" : "", host ? CMP_HOST_NOTE : "");
    fprintf(gp,
            "set grid\n"
            "set key noenhanced\n"
            "set style histogram clustered gap 1\n"
            "set style fill solid 0.8 border -1\n"
            "do for [format in \"png svg\"] {\n"
            "    if (format eq \"svg\") {\n"
            "        set terminal svg size 960,600 noenhanced\n"
            "    } else {\n"
            "        if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
            "            set terminal pngcairo size 960,600 noenhanced\n"
            "        } else {\n"
            "            set terminal png size 960,600 noenhanced\n"
            "        }\n"
            "    }\n"
            "    set output \"scaling.\".format\n"
            "    set key inside top left\n"
            "    set title \"speedup over each program's own 1-device run, best exchange "
            "mode\\n\".what\n"
            "    set xlabel \"devices\"\n"
            "    set ylabel \"speedup\"\n"
            "    set xrange [0.5:%d.5]\n"
            "    set yrange [0:*]\n"
            "    set xtics 1\n"
            "    plot for [c=2:%d] $scaling using 1:c with linespoints lw 2 pt 7 "
            "title columnhead(c), \\\n"
            "         x with lines dt 2 lc rgb \"gray\" title \"ideal\"\n"
            "    set output \"exchange-modes.\".format\n"
            "    set key outside right top\n"
            "    set title \"Gcells/s by exchange mode on %d device%s\\n\".what\n"
            "    unset xlabel\n"
            "    set ylabel \"Gcells/s\"\n"
            "    set xrange [*:*]\n"
            "    set xtics autofreq\n"
            "    plot for [c=2:%d] $modes using c:xtic(1) with histograms title columnhead(c)\n",
            most, programs.count + 1, most, most == 1 ? "" : "s", modes.count + 1);
    if (time_columns)
        plot_sizes(gp, time_columns, efficiency_columns);
    fputs("}\n", gp);
    if (ferror(gp) | (fclose(gp) != 0)) {
        fprintf(stderr, "%s: cannot write %s: %s\n", COMPARE_NAME, path, strerror(errno));
        return -1;
    }
    return 0;
}

int cmp_plot(const cmp_rows *rows, const char *dir)
{
    if (max_devices(rows, NULL) == 0) {
        fprintf(stderr, "%s: no run succeeded: nothing to plot\n", COMPARE_NAME);
        return CMP_PLOTS_NONE;
    }
    if (write_script(dir, rows, cmp_host_ran(rows)) != 0)
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
    if (cmp_spawn(argv, dir, 60.0, &out, error, sizeof error) != 0) {
        if (asked || out.start_errno != ENOENT) {
            fprintf(stderr, "%s: GNUPLOT: %s: no PNG or SVG\n", COMPARE_NAME, error);
            status = CMP_PLOTS_FAILED;
        } else {
            fprintf(stderr, "%s: no gnuplot on PATH: plots.gp written, no PNG or SVG (set "
                    "GNUPLOT to a gnuplot)\n", COMPARE_NAME);
            status = CMP_PLOTS_SCRIPT;
        }
    } else if (out.exit_code != 0 || cmp_interrupted()) {
        char last[256];
        cmp_last_line(out.err, NULL, last, sizeof last);
        fprintf(stderr, "%s: %s failed (%s %d): no PNG or SVG%s%s\n", COMPARE_NAME, gnuplot,
                out.signal ? "signal" : "exit", out.signal ? out.signal : out.exit_code,
                last[0] ? ": " : "", last);
        status = CMP_PLOTS_FAILED;
    }
    cmp_output_free(&out);
    return status;
}
