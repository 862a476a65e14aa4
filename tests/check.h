/* check.h - the few assertions the C unit tests share.
 *
 * CHECK(cond, fmt, ...) prints "ok"/"FAIL" with the message and counts
 * failures; check_done() returns the exit code (0 when all passed).
 * check_skip(reason) exits 77, the Automake code for a skipped test. */
#ifndef MGPU_TESTS_CHECK_H
#define MGPU_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_failures;
static int check_count;

#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        check_count++;                                                                \
        if (cond) {                                                                   \
            printf("ok %d - ", check_count);                                          \
        } else {                                                                      \
            check_failures++;                                                         \
            printf("FAIL %d (%s:%d: %s) - ", check_count, __FILE__, __LINE__, #cond); \
        }                                                                             \
        printf(__VA_ARGS__);                                                          \
        printf("\n");                                                                 \
        fflush(stdout);                                                               \
    } while (0)

static inline int check_done(void)
{
    printf("%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}

static inline void check_skip(const char *reason)
{
    printf("SKIP: %s\n", reason);
    exit(77);
}

#endif
