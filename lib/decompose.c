/* decompose.c - the row-slab decomposition of the grid over the parts. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mgpu-private.h"

mgpu_status mgpu_decompose(long long ny, int nparts, mgpu_slab *slabs)
{
    if (nparts < 1)
        return mgpu_fail(MGPU_ERR_USAGE, "--devices: %d; at least 1 is needed", nparts);
    long long interior = ny - 2;
    if (interior < nparts)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "--devices: %d devices need at least %d interior rows, but --ny=%lld "
                         "has %lld (accepted: 1 to %lld devices)",
                         nparts, nparts, ny, interior > 0 ? interior : 0,
                         interior > 0 ? interior : 0);
    long long base = interior / nparts, extra = interior % nparts;
    long long row = 1; /* row 0 is the boundary */
    for (int p = 0; p < nparts; p++) {
        long long rows = base + (p < extra ? 1 : 0);
        slabs[p].part = p;
        slabs[p].device = p;
        slabs[p].row_begin = row;
        slabs[p].row_end = row + rows;
        row += rows;
    }
    return MGPU_OK;
}
