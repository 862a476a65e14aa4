/* compare-json.c - reading JSON with jansson: the records mgpu programs
 * print and the results.json files mgpu-compare writes.  jansson's strict
 * parser refuses what is not JSON (a bad escape, a lone surrogate, bytes
 * that are not UTF-8, a leading zero); on top of it a key given twice,
 * a NUL in a string and text after the value are refused too.  Whether
 * what parsed makes a run is compare-row.c's to judge. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "compare.h"

/* jansson's message, in the words the rest of mgpu-compare uses where it
 * has them. */
static const char *what_failed(const json_error_t *e)
{
    switch (json_error_code(e)) {
    case json_error_invalid_utf8:
        return "a byte that is not UTF-8";
    case json_error_premature_end_of_input:
        return "the end came early (cut short?)";
    case json_error_duplicate_key:
        return "a key given twice";
    case json_error_null_character:
    case json_error_null_byte_in_key:
        return "a NUL character in a string";
    default:
        return e->text;
    }
}

json_t *cmp_json_load(const char *text, size_t len, char *error, size_t error_size)
{
    json_error_t e;
    /* DISABLE_EOF_CHECK: what follows the value is told apart from a value
     * that is not JSON, and said as such. */
    json_t *value = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, &e);
    if (!value) {
        const char *what = what_failed(&e);
        snprintf(error, error_size, "line %d, column %d (byte %d): %s%s%s%s", e.line, e.column,
                 e.position, what, what == e.text ? "" : " (", what == e.text ? "" : e.text,
                 what == e.text ? "" : ")");
        /* jansson quotes the text near the error: one line, whatever it was. */
        cmp_plain_text(error);
        return NULL;
    }
    size_t end = (size_t) e.position;
    while (end < len && strchr(" \t\r\n", text[end]) && text[end])
        end++;
    if (end < len) {
        snprintf(error, error_size, "byte %zu: trailing text after the JSON value", end);
        json_decref(value);
        return NULL;
    }
    if (!json_is_object(value) && !json_is_array(value)) {
        snprintf(error, error_size, "neither an object nor an array");
        json_decref(value);
        return NULL;
    }
    return value;
}
