/* fuzz-from.c - a libFuzzer target: random and mutated results files fed
 * to what mgpu-compare --from reads them with (cmp_results_parse), under
 * AddressSanitizer and UndefinedBehaviorSanitizer.  Every input must be
 * read or refused with a message, never crash, hang or leak; what is read
 * must hold only rows that keep the rules the reader promises. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "mgpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The reader takes text with a NUL after it, as cmp_read_json gives. */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cmp_rows rows = {0};
    char error[512] = "";
    int rc = cmp_results_parse(text, size, &rows, error, sizeof error);
    if (rc != 0 && (!error[0] || strchr(error, '\n')))
        abort(); /* a refusal says why, in one line */
    for (int i = 0; rc == 0 && i < rows.count; i++) {
        const cmp_row *r = &rows.row[i];
        if (!cmp_is_name(r->program) || !cmp_is_name(r->exchange) || !cmp_is_name(r->backend) ||
            !cmp_is_name(r->kernel) || (r->verify[0] && !cmp_is_name(r->verify)) ||
            strpbrk(r->reason, "\n\r\t") || r->devices < 1 || r->devices > MGPU_MAX_DEVICES ||
            r->nx < CMP_MIN_GRID || r->nx > CMP_MAX_GRID || r->ny < CMP_MIN_GRID ||
            r->ny > CMP_MAX_GRID || r->steps < 1 || r->steps > CMP_MAX_STEPS ||
            (r->status == RUN_OK && !(r->time_s > 0)))
            abort();
    }
    cmp_rows_free(&rows);
    free(text);
    return 0;
}
