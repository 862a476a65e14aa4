/* compare-json.c - reading the flat JSON objects mgpu programs print (one
 * record per run: string keys; string, number, true, false or null values;
 * see lib/record.c), and the results.json that mgpu-compare writes, an
 * array of such objects.  A small parser for exactly that shape; anything
 * else (nesting, a bad escape, trailing junk in a number) is an error that
 * says where, never a guess. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

typedef struct parser {
    const char *p, *start;
    char *error;
    size_t error_size;
} parser;

static int fail(parser *ps, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(ps->error, ps->error_size, "%s at byte %ld", what, (long) (ps->p - ps->start));
    return -1;
}

static void skip_space(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

/* Append code point CP as UTF-8 to OUT (SIZE bytes, *LEN used), cutting
 * rather than overflowing. */
static void put_utf8(char *out, size_t size, size_t *len, unsigned cp)
{
    char bytes[4];
    int n;
    if (cp < 0x80) {
        bytes[0] = (char) cp;
        n = 1;
    } else if (cp < 0x800) {
        bytes[0] = (char) (0xC0 | (cp >> 6));
        bytes[1] = (char) (0x80 | (cp & 0x3F));
        n = 2;
    } else {
        bytes[0] = (char) (0xE0 | (cp >> 12));
        bytes[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
        bytes[2] = (char) (0x80 | (cp & 0x3F));
        n = 3;
    }
    if (*len + (size_t) n < size) {
        memcpy(out + *len, bytes, (size_t) n);
        *len += (size_t) n;
    }
}

static int hex4(parser *ps, unsigned *cp)
{
    *cp = 0;
    for (int i = 0; i < 4; i++) {
        char c = ps->p[i];
        if (!isxdigit((unsigned char) c))
            return fail(ps, "bad \\u escape");
        *cp = *cp * 16 + (unsigned) (isdigit((unsigned char) c)
                                         ? c - '0'
                                         : tolower((unsigned char) c) - 'a' + 10);
    }
    ps->p += 4;
    return 0;
}

/* A string at ps->p (at its opening quote) into OUT, cut at SIZE-1 bytes.
 * Surrogate pairs (characters outside the BMP) become U+FFFD. */
static int parse_string(parser *ps, char *out, size_t size)
{
    size_t len = 0;
    if (*ps->p != '"')
        return fail(ps, "expected a string");
    ps->p++;
    for (;;) {
        unsigned char c = (unsigned char) *ps->p;
        if (c == '\0')
            return fail(ps, "unterminated string");
        if (c < 0x20)
            return fail(ps, "control character in a string");
        ps->p++;
        if (c == '"')
            break;
        if (c != '\\') {
            if (len + 1 < size)
                out[len++] = (char) c;
            continue;
        }
        char e = *ps->p++;
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            static const char decoded[] = "\"\\/\b\f\n\r\t";
            if (len + 1 < size)
                out[len++] = decoded[simple - "\"\\/bfnrt"];
        } else if (e == 'u') {
            unsigned cp;
            if (hex4(ps, &cp) != 0)
                return -1;
            put_utf8(out, size, &len, cp >= 0xD800 && cp <= 0xDFFF ? 0xFFFD : cp);
        } else {
            ps->p--;
            return fail(ps, "bad escape");
        }
    }
    out[len] = '\0';
    return 0;
}

/* A JSON number: the grammar's shape is checked before strtod reads it. */
static int parse_number(parser *ps, double *value)
{
    const char *s = ps->p;
    if (*s == '-')
        s++;
    if (!isdigit((unsigned char) *s))
        return fail(ps, "expected a value");
    if (*s == '0' && isdigit((unsigned char) s[1]))
        return fail(ps, "leading zero in a number");
    char *end;
    errno = 0;
    *value = strtod(ps->p, &end);
    if (end == ps->p || errno == ERANGE || !isfinite(*value))
        return fail(ps, "bad number");
    ps->p = end;
    return 0;
}

static int parse_word(parser *ps, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(ps->p, word, n) != 0 || isalnum((unsigned char) ps->p[n]))
        return fail(ps, "expected a value");
    ps->p += n;
    return 0;
}

static int parse_value(parser *ps, cmp_json_field *f)
{
    f->number = 0;
    f->text[0] = '\0';
    switch (*ps->p) {
    case '"':
        f->kind = JSON_STRING;
        return parse_string(ps, f->text, sizeof f->text);
    case 't':
        f->kind = JSON_BOOL;
        f->number = 1;
        return parse_word(ps, "true");
    case 'f':
        f->kind = JSON_BOOL;
        return parse_word(ps, "false");
    case 'n':
        f->kind = JSON_NULL;
        return parse_word(ps, "null");
    case '{':
    case '[':
        return fail(ps, "nested value in a flat object");
    default:
        f->kind = JSON_NUMBER;
        return parse_number(ps, &f->number);
    }
}

int cmp_json_parse_object(const char **text, cmp_json_object *object, char *error,
                          size_t error_size)
{
    parser ps = {*text, *text, error, error_size};
    object->count = 0;
    skip_space(&ps);
    if (*ps.p != '{')
        return fail(&ps, "expected '{'");
    ps.p++;
    skip_space(&ps);
    if (*ps.p == '}') {
        *text = ps.p + 1;
        return 0;
    }
    for (;;) {
        if (object->count == CMP_JSON_FIELDS)
            return fail(&ps, "more than %d fields", CMP_JSON_FIELDS);
        cmp_json_field *f = &object->field[object->count];
        skip_space(&ps);
        if (parse_string(&ps, f->key, sizeof f->key) != 0)
            return -1;
        skip_space(&ps);
        if (*ps.p != ':')
            return fail(&ps, "expected ':'");
        ps.p++;
        skip_space(&ps);
        if (parse_value(&ps, f) != 0)
            return -1;
        object->count++;
        skip_space(&ps);
        if (*ps.p == '}')
            break;
        if (*ps.p != ',')
            return fail(&ps, "expected ',' or '}'");
        ps.p++;
    }
    *text = ps.p + 1;
    return 0;
}

static const cmp_json_field *cmp_json_get(const cmp_json_object *object, const char *key)
{
    for (int i = 0; i < object->count; i++) {
        if (strcmp(object->field[i].key, key) == 0)
            return &object->field[i];
    }
    return NULL;
}

/* ---------------------------------------------------- fields into a row */

static double number_of(const cmp_json_object *o, const char *key)
{
    const cmp_json_field *f = cmp_json_get(o, key);
    return f && f->kind == JSON_NUMBER ? f->number : NAN;
}

static void text_of(const cmp_json_object *o, const char *key, char *out, size_t size)
{
    const cmp_json_field *f = cmp_json_get(o, key);
    if (f && f->kind == JSON_STRING)
        snprintf(out, size, "%.*s", (int) size - 1, f->text);
}

static long long integer_of(const cmp_json_object *o, const char *key)
{
    double v = number_of(o, key);
    return isfinite(v) ? (long long) v : 0;
}

void cmp_row_from_record(cmp_row *row, const cmp_json_object *o)
{
    text_of(o, "program", row->program, sizeof row->program);
    text_of(o, "strategy", row->strategy, sizeof row->strategy);
    text_of(o, "exchange", row->exchange, sizeof row->exchange);
    text_of(o, "backend", row->backend, sizeof row->backend);
    text_of(o, "kernel", row->kernel, sizeof row->kernel);
    text_of(o, "verify", row->verify, sizeof row->verify);
    row->devices = (int) integer_of(o, "devices");
    row->nx = integer_of(o, "nx");
    row->ny = integer_of(o, "ny");
    row->steps = integer_of(o, "steps");
    row->repeats = (int) integer_of(o, "repeats");
    row->time_s = number_of(o, "time_s");
    row->time_min_s = number_of(o, "time_min_s");
    row->time_max_s = number_of(o, "time_max_s");
    row->us_per_step = number_of(o, "us_per_step");
    row->gcells_per_s = number_of(o, "gcells_per_s");
    row->gbytes_per_s = number_of(o, "gbytes_per_s");
    row->exchange_s = number_of(o, "exchange_s");
    row->exchange_share = number_of(o, "exchange_share");
    row->copy_gbps = number_of(o, "copy_gbps");
    row->roofline = number_of(o, "roofline");
    row->max_error = number_of(o, "max_error");
    const cmp_json_field *v = cmp_json_get(o, "verified");
    row->verified = v && v->kind == JSON_BOOL ? (int) v->number : -1;
    /* results.json also holds what mgpu-compare itself adds */
    const cmp_json_field *status = cmp_json_get(o, "status");
    if (status && status->kind == JSON_STRING) {
        row->status = strcmp(status->text, "ok") == 0        ? RUN_OK
                      : strcmp(status->text, "skipped") == 0 ? RUN_SKIPPED
                                                             : RUN_FAILED;
        text_of(o, "reason", row->reason, sizeof row->reason);
        row->baseline_s = number_of(o, "baseline_s");
        row->speedup = number_of(o, "speedup");
        row->efficiency = number_of(o, "efficiency");
    }
}

/* ------------------------------------------------------- results.json */

int cmp_read_json(const char *path, cmp_rows *rows, char *error, size_t error_size)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    size_t n;
    while (text && (n = fread(text + len, 1, cap - 1 - len, f)) > 0) {
        len += n;
        if (len == cap - 1) {
            char *grown = realloc(text, 2 * cap);
            if (!grown) {
                free(text);
                text = NULL;
                break;
            }
            text = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (!text) {
        snprintf(error, error_size, "%s: out of memory", path);
        return -1;
    }
    text[len] = '\0';
    parser ps = {text, text, error, error_size};
    int rc = 0;
    skip_space(&ps);
    if (*ps.p != '[') {
        rc = fail(&ps, "%s: expected '[' (an array of runs)", path);
    } else {
        ps.p++;
        skip_space(&ps);
        while (rc == 0 && *ps.p != ']') {
            static cmp_json_object object;
            char why[200];
            if (cmp_json_parse_object(&ps.p, &object, why, sizeof why) != 0) {
                snprintf(error, error_size, "%s: run %d: %s of it", path, rows->count + 1, why);
                rc = -1;
                break;
            }
            cmp_row *row = cmp_rows_add(rows);
            if (!row) {
                snprintf(error, error_size, "%s: out of memory", path);
                rc = -1;
                break;
            }
            cmp_row_from_record(row, &object);
            skip_space(&ps);
            if (*ps.p == ',') {
                ps.p++;
                skip_space(&ps);
            } else if (*ps.p != ']') {
                rc = fail(&ps, "%s: expected ',' or ']'", path);
            }
        }
    }
    free(text);
    return rc;
}
