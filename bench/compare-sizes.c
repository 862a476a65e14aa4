/* compare-sizes.c - a comparison across grid sizes: the --sizes list, the
 * sizes a set of rows spans, the fastest row of a program at a size, device
 * count and halo depth, and the crossover; and the --halo list, whose
 * entries are walked as those of --sizes are.
 *
 * Strategies that look alike at a large grid differ where a step is short
 * and the host's cost per step is most of it; the crossover names, per
 * program and device count, the smallest grid from which the devices pay
 * for themselves.  Every figure here is derived again from the rows, so
 * that --from prints the same as the comparison did. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "mgpu.h"
#include "mgpu/harness.h"

/* ------------------------------------------------------------- the list */

int cmp_size_order(const cmp_size *a, const cmp_size *b)
{
    /* By cells, then by columns: cells and columns fix the rows. */
    long long ca = a->nx * a->ny, cb = b->nx * b->ny;
    if (ca != cb)
        return ca < cb ? -1 : 1;
    return a->nx < b->nx ? -1 : a->nx > b->nx;
}

static int by_order(const void *a, const void *b) { return cmp_size_order(a, b); }

/* An entry can be as long as the list: messages show its start. */
void cmp_list_refuse(char *error, size_t error_size, const char *entry, size_t len, const char *fmt,
                     ...)
{
    char why[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(error, error_size, "'%.*s%s': %s", len > 40 ? 40 : (int) len, entry,
             len > 40 ? "..." : "", why);
}

int cmp_list_each(const char *text, int (*each)(void *context, const char *entry, size_t len),
                  void *context, char *error, size_t error_size)
{
    if (!*text) {
        snprintf(error, error_size, "an empty list");
        return -1;
    }
    int rc = 0, index = 1;
    for (const char *entry = text; rc == 0; index++) {
        size_t len = strcspn(entry, ",");
        if (len == 0) {
            /* "1024,,2048" and "1024," are typos, not one entry fewer. */
            snprintf(error, error_size, "entry %d is empty%s", index,
                     entry[0] ? "" : " (a ',' at the end)");
            return -1;
        }
        char *copy = strndup(entry, len); /* NUL-ended, for the entry's parser */
        rc = copy ? each(context, copy, len) : -2;
        free(copy);
        if (!entry[len])
            break;
        entry += len + 1;
    }
    if (rc == -2)
        snprintf(error, error_size, "out of memory");
    return rc;
}

typedef struct list {
    cmp_size *size;
    int count, capacity;
    char *error;
    size_t error_size;
} list;

static int add_size(list *l, long long nx, long long ny)
{
    if (l->count == l->capacity) {
        int capacity = l->capacity ? 2 * l->capacity : 16;
        cmp_size *grown = realloc(l->size, (size_t) capacity * sizeof *grown);
        if (!grown)
            return -2;
        l->size = grown;
        l->capacity = capacity;
    }
    l->size[l->count++] = (cmp_size){.nx = nx, .ny = ny};
    return 0;
}

#define NOT_A_SIZE "not N, NXxNY or A:B (N x N, NX x NY, or A, 2A, 4A, ... up to B)"

/* A side at *P: digits only (no sign, blank or suffix: "4k" is a typo, not
 * 4096), in [CMP_MIN_GRID, CMP_MAX_GRID].  *P moves past the digits. */
static int side(list *l, const char *entry, size_t len, const char **p, long long *value)
{
    const char *start = *p;
    long long v = 0;
    while (**p >= '0' && **p <= '9') {
        if (v <= CMP_MAX_GRID)
            v = 10 * v + (**p - '0');
        (*p)++;
    }
    if (*p == start) {
        cmp_list_refuse(l->error, l->error_size, entry, len, NOT_A_SIZE);
        return -1;
    }
    if (v < CMP_MIN_GRID || v > CMP_MAX_GRID) {
        cmp_list_refuse(l->error, l->error_size, entry, len, "%.*s is not a side from %lld to %lld",
                        *p - start > 20 ? 20 : (int) (*p - start), start, CMP_MIN_GRID,
                        CMP_MAX_GRID);
        return -1;
    }
    *value = v;
    return 0;
}

/* One entry (LEN bytes at ENTRY, NUL-ended, no comma in it) onto the list. */
static int parse_entry(void *context, const char *entry, size_t len)
{
    list *l = context;
    const char *p = entry;
    long long a, b = 0;
    int rc = side(l, entry, len, &p, &a);
    char form = rc == 0 ? *p : '\0';
    if (rc == 0 && (form == 'x' || form == ':')) {
        p++;
        rc = side(l, entry, len, &p, &b);
    }
    if (rc == 0 && *p) {
        cmp_list_refuse(l->error, l->error_size, entry, len, NOT_A_SIZE);
        rc = -1;
    }
    if (rc == 0 && form == ':' && a > b) {
        cmp_list_refuse(l->error, l->error_size, entry, len,
                        "a range from %lld down to %lld (A:B needs A <= B)", a, b);
        rc = -1;
    }
    if (rc == 0 && form == ':') {
        /* A, 2A, 4A, ...: B bounds it, so at most 30 doublings. */
        for (long long n = a; n <= b && rc == 0; n *= 2)
            rc = add_size(l, n, n);
    } else if (rc == 0) {
        rc = add_size(l, a, form == 'x' ? b : a);
    }
    return rc;
}

int cmp_sizes_parse(const char *text, cmp_sizes *sizes, char *error, size_t error_size)
{
    list l = {.error = error, .error_size = error_size};
    int rc = cmp_list_each(text, parse_entry, &l, error, error_size);
    if (rc != 0) {
        free(l.size);
        return rc;
    }
    /* Smallest first, each once: "1024:4096,2048" means three sizes. */
    qsort(l.size, (size_t) l.count, sizeof *l.size, by_order);
    int kept = 0;
    for (int i = 0; i < l.count; i++) {
        if (kept == 0 || cmp_size_order(&l.size[kept - 1], &l.size[i]) != 0)
            l.size[kept++] = l.size[i];
    }
    free(sizes->size);
    sizes->size = l.size;
    sizes->count = kept;
    return 0;
}

void cmp_sizes_free(cmp_sizes *sizes)
{
    free(sizes->size);
    sizes->size = NULL;
    sizes->count = 0;
}

/* ------------------------------------------------------- the halo list */

typedef struct halo_list {
    char seen[MGPU_HALO_MAX + 1];
    char *error;
    size_t error_size;
} halo_list;

/* One depth, the library's integer (mgpu_parse_integer, as the programs
 * read --halo), from 1 to MGPU_HALO_MAX. */
static int parse_halo(void *context, const char *entry, size_t len)
{
    halo_list *h = context;
    long long k = 0;
    if (mgpu_parse_integer(entry, &k) != 0 || k < 1 || k > MGPU_HALO_MAX) {
        cmp_list_refuse(h->error, h->error_size, entry, len, "not an integer from 1 to %d",
                        MGPU_HALO_MAX);
        return -1;
    }
    h->seen[k] = 1;
    return 0;
}

int cmp_halos_parse(const char *text, int *halos, int *count, char *error, size_t error_size)
{
    halo_list *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(error, error_size, "out of memory");
        return -2;
    }
    h->error = error;
    h->error_size = error_size;
    int rc = cmp_list_each(text, parse_halo, h, error, error_size);
    if (rc == 0) {
        /* Shallowest first, each once. */
        *count = 0;
        for (int k = 1; k <= MGPU_HALO_MAX; k++) {
            if (h->seen[k])
                halos[(*count)++] = k;
        }
    }
    free(h);
    return rc;
}

/* ------------------------------------------------------- sizes of rows */

static cmp_size size_of(const cmp_row *r) { return (cmp_size){.nx = r->nx, .ny = r->ny}; }

int cmp_rows_next_size(const cmp_rows *rows, int ok_only, const cmp_size *after, cmp_size *next)
{
    /* AFTER may be NEXT (a loop walks the sizes in one variable): it is
     * read before NEXT is written. */
    cmp_size from = after ? *after : (cmp_size){.nx = 0, .ny = 0}, best = from;
    int found = 0;
    for (int i = 0; i < rows->count; i++) {
        cmp_size s = size_of(&rows->row[i]);
        if ((ok_only && rows->row[i].status != RUN_OK) || cmp_size_order(&s, &from) <= 0)
            continue;
        if (!found || cmp_size_order(&s, &best) < 0)
            best = s;
        found = 1;
    }
    if (found)
        *next = best;
    return found;
}

int cmp_rows_size_count(const cmp_rows *rows, int ok_only)
{
    int count = 0;
    cmp_size s;
    for (const cmp_size *after = NULL; cmp_rows_next_size(rows, ok_only, after, &s); after = &s)
        count++;
    return count;
}

int cmp_row_at(const cmp_row *r, const cmp_size *size)
{
    return r->nx == size->nx && r->ny == size->ny;
}

int cmp_first_of_pair(const cmp_rows *rows, int i)
{
    const cmp_row *r = &rows->row[i];
    if (r->status != RUN_OK)
        return 0;
    for (int j = 0; j < i; j++) {
        const cmp_row *o = &rows->row[j];
        if (o->status == RUN_OK && o->devices == r->devices && o->halo == r->halo &&
            strcmp(cmp_series(o), cmp_series(r)) == 0)
            return 0;
    }
    return 1;
}

const cmp_row *cmp_fastest(const cmp_rows *rows, const char *series, int devices, int halo,
                           const cmp_size *size)
{
    const cmp_row *best = NULL;
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        if (r->status == RUN_OK && r->devices == devices && r->halo == halo &&
            cmp_row_at(r, size) && strcmp(cmp_series(r), series) == 0 &&
            (!best || r->time_s < best->time_s))
            best = r;
    }
    return best;
}

int cmp_rows_deep(const cmp_rows *rows)
{
    for (int i = 0; i < rows->count; i++) {
        if (rows->row[i].halo != 1)
            return 1;
    }
    return 0;
}

/* ----------------------------------------------------------- crossover */

/* The crossover of one SERIES (a program, of one set) on DEVICES devices
 * with HALO: the line after "crossover SERIES N devices:". */
static void crossover_of(const cmp_rows *rows, const char *series, int devices, int halo, FILE *out)
{
    cmp_size s, largest;
    double best = NAN;
    int measured = 0;
    for (const cmp_size *after = NULL; cmp_rows_next_size(rows, 1, after, &s); after = &s) {
        const cmp_row *r = cmp_fastest(rows, series, devices, halo, &s);
        if (!r || !isfinite(r->speedup))
            continue; /* no run here, or no 1-device run to hold it against */
        if (r->speedup >= CMP_CROSSOVER) {
            fprintf(out, "%lld x %lld (%.2fx, %s)\n", s.nx, s.ny, r->speedup, r->exchange);
            return;
        }
        if (!(best >= r->speedup))
            best = r->speedup;
        largest = s;
        measured = 1;
    }
    if (measured)
        fprintf(out, "none up to %lld x %lld (at most %.2fx)\n", largest.nx, largest.ny, best);
    else
        fprintf(out, "not measured (no size with a 1-device and a %d-device run)\n", devices);
}

void cmp_print_crossover(const cmp_rows *rows, FILE *out)
{
    if (cmp_rows_size_count(rows, 1) < 2)
        return; /* one size: the table's speedup column says it all */
    int deep = cmp_rows_deep(rows);
    fprintf(out,
            "\n# crossover: the smallest grid at which N devices are at least %.1fx faster "
            "than the program's own 1-device run%s (the fastest exchange mode at each "
            "size)\n",
            CMP_CROSSOVER, deep ? " with the same halo" : "");
    int pairs = 0;
    for (int i = 0; i < rows->count; i++) {
        const cmp_row *r = &rows->row[i];
        if (r->devices < 2 || !cmp_first_of_pair(rows, i))
            continue;
        fprintf(out, "crossover %-15s %2d devices", cmp_series(r), r->devices);
        if (deep)
            fprintf(out, ", halo %d", r->halo);
        fputs(": ", out);
        crossover_of(rows, cmp_series(r), r->devices, r->halo, out);
        pairs++;
    }
    if (!pairs)
        fprintf(out, "# none: no run on more than one device succeeded\n");
}
