/* compare-text.c - what text from outside (a program's record, its
 * stderr, a results.json) may be in mgpu-compare's output: a name
 * (cmp_is_name) goes into a table column, a CSV cell or a gnuplot string as
 * it is; other text is made plain (cmp_plain_text), one line of UTF-8,
 * before it goes into a table or results.json. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "compare.h"

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

int cmp_is_name(const char *text)
{
    if (!*text)
        return 0;
    for (const char *c = text; *c; c++) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              (c > text && strchr("._+-", *c))))
            return 0;
    }
    return 1;
}

void cmp_plain_text(char *text)
{
    for (unsigned char *c = (unsigned char *) text; *c;) {
        size_t n = cmp_utf8_length(c);
        if (n == 0)
            *c = '?';
        else if (*c < 0x20 || *c == 0x7F)
            *c = ' ';
        c += n ? n : 1;
    }
}
