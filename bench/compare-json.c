/* compare-json.c - reading the flat JSON objects mgpu programs print (one
 * record per run: string keys; string, number, true, false or null values;
 * see lib/record.c), and arrays of them.  A small parser for exactly that
 * shape; anything else (nesting, a bad escape, a lone surrogate, bytes that
 * are not UTF-8, a key given twice, trailing junk in a number) is an error
 * that says where, never a guess.  String values are not copied: a field
 * points at its text in the source, and cmp_json_text decodes it into the
 * caller's buffer or says that it does not fit, so that no string is ever
 * cut short without a word. */
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
    snprintf(ps->error, ps->error_size, "%s at byte %ld%s", what, (long) (ps->p - ps->start),
             *ps->p ? "" : " (the end: cut short?)");
    return -1;
}

static void skip_space(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

/* ------------------------------------------------------------- strings */

/* Append code point CP as UTF-8 to OUT, when OUT is given; *LEN counts the
 * bytes either way. */
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
    } else if (cp < 0x10000) {
        bytes[0] = (char) (0xE0 | (cp >> 12));
        bytes[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
        bytes[2] = (char) (0x80 | (cp & 0x3F));
        n = 3;
    } else {
        bytes[0] = (char) (0xF0 | (cp >> 18));
        bytes[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
        bytes[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
        bytes[3] = (char) (0x80 | (cp & 0x3F));
        n = 4;
    }
    if (out && *len + (size_t) n < size)
        memcpy(out + *len, bytes, (size_t) n);
    *len += (size_t) n;
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

size_t cmp_utf8_length(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n = s[0] >= 0xC2 && s[0] <= 0xDF   ? 2
               : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
               : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4
                                              : 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    }
    if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F) ||
        (s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] > 0x8F))
        return 0;
    return n;
}

/* The string at ps->p (its opening quote), checked and decoded: into OUT
 * (SIZE bytes) when OUT is given, its decoded length in *LEN.  Whether it
 * fit is the caller's to check (*LEN < SIZE). */
static int parse_string(parser *ps, char *out, size_t size, size_t *len)
{
    *len = 0;
    if (*ps->p != '"')
        return fail(ps, "expected a string");
    ps->p++;
    for (;;) {
        unsigned char c = (unsigned char) *ps->p;
        if (c == '\0')
            return fail(ps, "unterminated string");
        if (c < 0x20)
            return fail(ps, "control character in a string");
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c != '\\') {
            size_t n = cmp_utf8_length((const unsigned char *) ps->p);
            if (n == 0)
                return fail(ps, "a byte that is not UTF-8 in a string");
            if (out && *len + n < size)
                memcpy(out + *len, ps->p, n);
            *len += n;
            ps->p += n;
            continue;
        }
        ps->p++;
        char e = *ps->p;
        const char *simple = e ? strchr("\"\\/bfnrt", e) : NULL;
        if (simple) {
            static const char decoded[] = "\"\\/\b\f\n\r\t";
            if (out && *len + 1 < size)
                out[*len] = decoded[simple - "\"\\/bfnrt"];
            ++*len;
            ps->p++;
        } else if (e == 'u') {
            ps->p++;
            unsigned cp, low;
            if (hex4(ps, &cp) != 0)
                return -1;
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return fail(ps, "lone surrogate in a string");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (ps->p[0] != '\\' || ps->p[1] != 'u')
                    return fail(ps, "lone surrogate in a string");
                ps->p += 2;
                if (hex4(ps, &low) != 0)
                    return -1;
                if (low < 0xDC00 || low > 0xDFFF)
                    return fail(ps, "lone surrogate in a string");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            }
            put_utf8(out, size, len, cp);
        } else {
            return fail(ps, "bad escape");
        }
    }
    if (out)
        out[*len < size ? *len : 0] = '\0';
    return 0;
}

int cmp_json_text(const cmp_json_field *f, char *out, size_t size)
{
    char unused[8];
    parser ps = {f->text, f->text, unused, sizeof unused};
    size_t len;
    if (f->kind != JSON_STRING || size == 0 || parse_string(&ps, out, size, &len) != 0)
        return -1;
    return len < size ? (int) len : -1;
}

/* -------------------------------------------------------------- values */

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
    /* strtod reads more than JSON allows (hex, "1." and ".5" forms). */
    for (s = ps->p; s < end; s++) {
        if (!strchr("0123456789+-.eE", *s) ||
            (*s == '.' && (s == ps->p || !isdigit((unsigned char) s[-1]) ||
                           !isdigit((unsigned char) s[1]))))
            return fail(ps, "bad number");
    }
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
    size_t len;
    f->number = 0;
    f->text = ps->p;
    switch (*ps->p) {
    case '"':
        f->kind = JSON_STRING;
        return parse_string(ps, NULL, 0, &len);
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

static int parse_key(parser *ps, cmp_json_object *object, cmp_json_field *f)
{
    const char *at = ps->p;
    size_t len;
    if (parse_string(ps, f->key, sizeof f->key, &len) != 0)
        return -1;
    if (len >= sizeof f->key) {
        ps->p = at;
        return fail(ps, "a key longer than %zu bytes", sizeof f->key - 1);
    }
    for (int i = 0; i < object->count; i++) {
        if (strcmp(object->field[i].key, f->key) == 0) {
            ps->p = at;
            return fail(ps, "\"%s\" given twice", f->key);
        }
    }
    return 0;
}

/* ------------------------------------------------------------- objects */

static int parse_object(parser *ps, cmp_json_object *object)
{
    object->count = 0;
    skip_space(ps);
    if (*ps->p != '{')
        return fail(ps, "expected '{'");
    ps->p++;
    skip_space(ps);
    if (*ps->p == '}') {
        ps->p++;
        return 0;
    }
    for (;;) {
        if (object->count == CMP_JSON_FIELDS)
            return fail(ps, "more than %d fields", CMP_JSON_FIELDS);
        cmp_json_field *f = &object->field[object->count];
        skip_space(ps);
        if (parse_key(ps, object, f) != 0)
            return -1;
        skip_space(ps);
        if (*ps->p != ':')
            return fail(ps, "expected ':'");
        ps->p++;
        skip_space(ps);
        if (parse_value(ps, f) != 0)
            return -1;
        object->count++;
        skip_space(ps);
        if (*ps->p == '}')
            break;
        if (*ps->p != ',')
            return fail(ps, "expected ',' or '}'");
        ps->p++;
    }
    ps->p++;
    return 0;
}

int cmp_json_parse_object(const char **text, cmp_json_object *object, char *error,
                          size_t error_size)
{
    parser ps = {*text, *text, error, error_size};
    if (parse_object(&ps, object) != 0)
        return -1;
    *text = ps.p;
    return 0;
}

int cmp_json_parse_array(const char *text, cmp_json_each each, void *arg, char *error,
                         size_t error_size)
{
    parser ps = {text, text, error, error_size};
    static cmp_json_object object;
    skip_space(&ps);
    if (*ps.p != '[')
        return fail(&ps, "expected '[' (an array of runs)");
    ps.p++;
    skip_space(&ps);
    for (int index = 0; *ps.p != ']'; index++) {
        char why[200];
        parser item = {ps.p, ps.start, why, sizeof why};
        if (parse_object(&item, &object) != 0) {
            snprintf(error, error_size, "run %d: %s", index + 1, why);
            return -1;
        }
        ps.p = item.p;
        if (each(&object, index, arg, why, sizeof why) != 0) {
            snprintf(error, error_size, "run %d: %s", index + 1, why);
            return -1;
        }
        skip_space(&ps);
        if (*ps.p == ',') {
            ps.p++;
            skip_space(&ps);
            if (*ps.p == ']')
                return fail(&ps, "a ',' before ']'");
        } else if (*ps.p != ']') {
            return fail(&ps, "expected ',' or ']'");
        }
    }
    ps.p++;
    skip_space(&ps);
    if (*ps.p)
        return fail(&ps, "trailing text after the array");
    return 0;
}

const cmp_json_field *cmp_json_get(const cmp_json_object *object, const char *key)
{
    for (int i = 0; i < object->count; i++) {
        if (strcmp(object->field[i].key, key) == 0)
            return &object->field[i];
    }
    return NULL;
}
