/* compare-plot.c - the plots of a comparison: speedup against devices, one
 * line per program (its best exchange mode at each device count), and the
 * exchange modes side by side at the largest device count.  The data go
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

const char *const cmp_plot_files[] = {CMP_PLOT_SCRIPT,     "scaling.png",        "scaling.svg",
                                      "exchange-modes.png", "exchange-modes.svg", NULL};

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

static int max_devices(const cmp_rows *rows)
{
    int most = 0;
    for (int i = 0; i < rows->count; i++) {
        if (rows->row[i].status == RUN_OK && rows->row[i].devices > most)
            most = rows->row[i].devices;
    }
    return most;
}

/* $scaling: a row per device count, a column per program, the best speedup
 * of its modes; "-" where the program did not run. */
static void write_scaling(FILE *gp, const cmp_rows *rows, names *programs)
{
    int most = max_devices(rows);
    fputs("$scaling << EOD\ndevices", gp);
    for (int i = 0; i < rows->count; i++) {
        if (rows->row[i].status == RUN_OK)
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
            if (r->status != RUN_OK || r->devices != d || p < 0 || !isfinite(r->speedup))
                continue;
            if (!(best[p] >= r->speedup))
                best[p] = r->speedup;
            any = 1;
        }
        if (!any)
            continue;
        fprintf(gp, "%d", d);
        for (int p = 0; p < programs->count; p++) {
            if (isfinite(best[p]))
                fprintf(gp, " %.4f", best[p]);
            else
                fputs(" -", gp);
        }
        fputc('\n', gp);
    }
    fputs("EOD\n", gp);
}

/* $modes: a row per program, a column per exchange mode, Gcells/s at the
 * largest device count. */
static void write_modes(FILE *gp, const cmp_rows *rows, int most, names *modes)
{
    names programs = {.count = 0};
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        if (r->status == RUN_OK && r->devices == most) {
            index_of(&programs, r->program, 1);
            index_of(modes, r->exchange, 1);
        }
    }
    fputs("$modes << EOD\nprogram", gp);
    for (int m = 0; m < modes->count; m++)
        fprintf(gp, " \"%s\"", modes->name[m]);
    fputc('\n', gp);
    for (int p = 0; p < programs.count; p++) {
        /* "single", not "mgpu-single": six full names overlap under their bars. */
        const char *name = programs.name[p];
        fprintf(gp, "\"%s\"", strncmp(name, "mgpu-", 5) == 0 ? name + 5 : name);
        for (int m = 0; m < modes->count; m++) {
            double value = NAN;
            for (int i = 0; i < rows->count; i++) {
                const cmp_row *r = &rows->row[i];
                if (r->status == RUN_OK && r->devices == most &&
                    strcmp(r->program, programs.name[p]) == 0 &&
                    strcmp(r->exchange, modes->name[m]) == 0)
                    value = r->gcells_per_s;
            }
            if (isfinite(value))
                fprintf(gp, " %.4f", value);
            else
                fputs(" -", gp);
        }
        fputc('\n', gp);
    }
    fputs("EOD\n", gp);
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
    int most = max_devices(rows);
    names programs = {.count = 0}, modes = {.count = 0};
    fprintf(gp,
            "# plots.gp - written by %s: the scaling and exchange-mode plots.\n"
            "# Draw them again with: gnuplot plots.gp (in this folder)\n"
            "set datafile missing \"-\"\n",
            COMPARE_NAME);
    write_scaling(gp, rows, &programs);
    write_modes(gp, rows, most, &modes);
    fprintf(gp, "what = \"%s backend, %s %lld x %lld, %lld steps%s%s\"\n", m->backend, m->kernel,
            m->nx, m->ny, m->steps, host ? "\\n" : "", host ? CMP_HOST_NOTE : "");
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
            "    plot for [c=2:%d] $modes using c:xtic(1) with histograms title columnhead(c)\n"
            "}\n",
            most, programs.count + 1, most, most == 1 ? "" : "s", modes.count + 1);
    if (ferror(gp) | (fclose(gp) != 0)) {
        fprintf(stderr, "%s: cannot write %s: %s\n", COMPARE_NAME, path, strerror(errno));
        return -1;
    }
    return 0;
}

int cmp_plot(const cmp_rows *rows, const char *dir)
{
    if (max_devices(rows) == 0) {
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
