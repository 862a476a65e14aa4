/* progress.c - how far a long run has got, on one line of stderr. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mgpu-private.h"

/* The line is drawn again at most this often, and the clock is read about
 * this often: between two readings a step costs one comparison, whatever
 * the step's length. */
#define DRAW_S 0.25
#define LOOK_S 0.05
/* The line stays within an 80-column terminal, whose wrapping would defeat
 * the carriage return. */
#define LINE_MAX_WIDTH 79

void mgpu_progress_init(mgpu_progress *p, const mgpu_options *opt, FILE *out)
{
    *p = (mgpu_progress){.out = out, .steps = opt->steps, .run = -1, .next = LLONG_MAX};
    p->cells = (double) (opt->nx - 2) * (double) (opt->ny - 2);
    p->on = opt->progress == MGPU_PROGRESS_ALWAYS ||
            (opt->progress == MGPU_PROGRESS_AUTO && isatty(fileno(out)));
}

void mgpu_progress_begin(mgpu_progress *p, const char *what, int warmup, int repeats, int compute)
{
    if (!p || !p->on)
        return;
    p->what = what;
    p->warmup = warmup;
    p->runs = warmup + repeats;
    p->compute = compute;
    p->run = -1;
    p->next = LLONG_MAX; /* until a run begins */
    p->drawn = 0.0;
}

void mgpu_progress_run(mgpu_progress *p, int run)
{
    if (!p || !p->on)
        return;
    if (p->run < 0)
        p->start = mgpu_now();
    p->run = run;
    p->base = (long long) run * p->steps;
    p->next = p->base + 1; /* the run's first step is looked at */
}

/* TEXT in place of the line on the screen, blanks over what is left of it. */
static void draw(mgpu_progress *p, const char *text, int width)
{
    if (width > LINE_MAX_WIDTH)
        width = LINE_MAX_WIDTH;
    int blanks = p->width > width ? p->width - width : 0;
    fprintf(p->out, "\r%.*s%*s", width, text, blanks, "");
    fflush(p->out);
    p->width = width;
}

/* H:MM:SS, or M:SS below an hour. */
static void format_time(char *buf, size_t size, double seconds)
{
    long long s = (long long) (seconds + 0.5);
    if (s >= 3600)
        snprintf(buf, size, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, size, "%lld:%02lld", s / 60, s % 60);
}

/* The line for AT steps of the phase, RATE steps a second (0: not known yet). */
static void show(mgpu_progress *p, long long at, double rate)
{
    char line[256], left[32];
    int timed = p->run >= p->warmup;
    int n = snprintf(line, sizeof line, "%s%s%s %d/%d, step %lld/%lld", p->what ? p->what : "",
                     p->what ? ": " : "", timed ? "repeat" : "warmup",
                     timed ? p->run - p->warmup + 1 : p->run + 1,
                     timed ? p->runs - p->warmup : p->warmup, at - p->base, p->steps);
    if (rate > 0.0 && n < (int) sizeof line) {
        /* The time left first: a line cut short loses the rates. */
        format_time(left, sizeof left, (double) (p->runs * p->steps - at) / rate);
        n += snprintf(line + n, sizeof line - (size_t) n, ", %s left, %.0f steps/s", left, rate);
        if (p->compute && n < (int) sizeof line)
            n += snprintf(line + n, sizeof line - (size_t) n, " (%.3g Gcells/s)",
                          rate * p->cells * 1e-9);
    }
    draw(p, line, n < (int) sizeof line ? n : (int) sizeof line - 1);
}

void mgpu_progress_step(mgpu_progress *p, long long done)
{
    if (!p || p->base + done < p->next)
        return;
    long long at = p->base + done;
    double now = mgpu_now(), elapsed = now - p->start;
    double rate = elapsed > 0.0 ? (double) at / elapsed : 0.0;
    long long stride = (long long) (rate * LOOK_S);
    p->next = at + (stride > 1 ? stride : 1);
    /* Each phase shows itself at once, then a few times a second. */
    if (p->drawn > 0.0 && now - p->drawn < DRAW_S)
        return;
    p->drawn = now;
    show(p, at, rate);
}

void mgpu_progress_note(mgpu_progress *p, const char *what)
{
    if (!p || !p->on)
        return;
    p->next = LLONG_MAX;
    draw(p, what, (int) strlen(what));
}

void mgpu_progress_elsewhere(mgpu_progress *p)
{
    if (p && p->on)
        p->width = LINE_MAX_WIDTH;
}

void mgpu_progress_end(mgpu_progress *p)
{
    if (!p || !p->on)
        return;
    p->next = LLONG_MAX;
    p->on = 0; /* the end: nothing more to draw */
    /* Only a line this process drew: a run stopped before its first step
     * (a usage error the strategy finds) leaves stderr with its one line. */
    if (p->width > 0) {
        fprintf(p->out, "\r%*s\r", p->width, "");
        fflush(p->out);
        p->width = 0;
    }
}
