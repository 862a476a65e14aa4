/* test-decompose.c - the row-slab decomposition covers every interior row
 * once, in order, as evenly as possible, and refuses empty parts. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "check.h"
#include "mgpu.h"

static void check_split(long long ny, int nparts)
{
    mgpu_slab slabs[MGPU_MAX_DEVICES];
    mgpu_status status = mgpu_decompose(ny, nparts, slabs);
    CHECK(status == MGPU_OK, "ny=%lld into %d parts is accepted", ny, nparts);
    if (status != MGPU_OK)
        return;
    long long next = 1, smallest = ny, largest = 0;
    int contiguous = 1;
    for (int p = 0; p < nparts; p++) {
        long long rows = slabs[p].row_end - slabs[p].row_begin;
        contiguous &= slabs[p].row_begin == next && rows >= 1 && slabs[p].part == p;
        next = slabs[p].row_end;
        smallest = rows < smallest ? rows : smallest;
        largest = rows > largest ? rows : largest;
    }
    CHECK(contiguous && next == ny - 1, "ny=%lld, %d parts: rows 1..%lld covered once, in order",
          ny, nparts, ny - 2);
    CHECK(largest - smallest <= 1,
          "ny=%lld, %d parts: slabs differ by at most one row (%lld..%lld)", ny, nparts, smallest,
          largest);
    CHECK(slabs[0].row_end - slabs[0].row_begin == largest,
          "ny=%lld, %d parts: the first slabs take the extra rows", ny, nparts);
}

int main(void)
{
    static const long long sizes[] = {3, 4, 5, 7, 13, 29, 100, 101, 16384, 50000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (int n = 1; n <= 8 && n <= sizes[k] - 2; n++)
            check_split(sizes[k], n);
    check_split(MGPU_MAX_DEVICES + 2, MGPU_MAX_DEVICES);

    mgpu_slab slabs[MGPU_MAX_DEVICES];
    CHECK(mgpu_decompose(5, 4, slabs) == MGPU_ERR_USAGE, "3 interior rows cannot feed 4 parts");
    CHECK(mgpu_decompose(3, 2, slabs) == MGPU_ERR_USAGE, "1 interior row cannot feed 2 parts");
    CHECK(mgpu_decompose(100, 0, slabs) == MGPU_ERR_USAGE, "0 parts is refused");
    CHECK(*mgpu_last_error() != '\0', "the refusal says why: %s", mgpu_last_error());

    /* 64-bit rows: a grid taller than 2^31 rows still splits exactly. */
    long long tall = (1LL << 33) + 7;
    CHECK(mgpu_decompose(tall, 3, slabs) == MGPU_OK && slabs[2].row_end == tall - 1,
          "a grid of 2^33+7 rows splits with 64-bit row numbers");
    return check_done();
}
