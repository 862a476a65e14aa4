/* test-ceiling.c - how large the copy that measures the copy ceiling is
 * (ceiling.c): past the last cache, four times it for both buffers; none at
 * all for a grid that fits in the cache or a memory too full (a 1 MiB copy
 * once measured the cache, and the roofline was 83). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "check.h"
#include "mgpu-private.h"

#define MiB ((size_t) 1 << 20)
#define GiB ((size_t) 1 << 30)

int main(void)
{
    size_t host_memory = 24 * GiB;

    /* The host: as large as the field, at least twice the cache, at most
     * 256 MiB unless the cache asks for more. */
    CHECK(mgpu_copy_ceiling_bytes(0, 32 * MiB, 257 * 131 * 4, host_memory) == 0,
          "a 257 x 131 grid fits in a 32 MiB cache: no ceiling");
    CHECK(mgpu_copy_ceiling_bytes(0, 32 * MiB, 16 * MiB, host_memory) == 0,
          "two buffers of 16 MiB fit in a 32 MiB cache: no ceiling");
    CHECK(mgpu_copy_ceiling_bytes(0, 32 * MiB, 17 * MiB, host_memory) == 64 * MiB,
          "17 MiB beside a 32 MiB cache: a 64 MiB copy");
    CHECK(mgpu_copy_ceiling_bytes(0, 32 * MiB, 100 * MiB, host_memory) == 100 * MiB,
          "100 MiB: a copy as large as the field");
    CHECK(mgpu_copy_ceiling_bytes(0, 32 * MiB, 4 * GiB, host_memory) == 256 * MiB,
          "4 GiB: a copy of 256 MiB, well past the cache");
    CHECK(mgpu_copy_ceiling_bytes(0, 512 * MiB, 4 * GiB, host_memory) == GiB,
          "a 512 MiB cache: a copy of 1 GiB");
    CHECK(mgpu_copy_ceiling_bytes(0, 0, 16 * MiB, host_memory) == 0,
          "a cache of unknown size is taken as 64 MiB: 16 MiB fits");
    CHECK(mgpu_copy_ceiling_bytes(0, 32 * MiB, 100 * MiB, 256 * MiB) == 0,
          "a memory too small for a copy past the cache: no ceiling");

    /* A GPU: 1 GiB, halved to fit a quarter of the free memory, never
     * below twice the L2. */
    CHECK(mgpu_copy_ceiling_bytes(1, 50 * MiB, 20 * MiB, 80 * GiB) == 0,
          "a grid of 2 x 20 MiB fits in a 50 MiB L2: no ceiling");
    CHECK(mgpu_copy_ceiling_bytes(1, 50 * MiB, 64 * MiB, 80 * GiB) == GiB,
          "an 80 GiB GPU: a 1 GiB copy");
    CHECK(mgpu_copy_ceiling_bytes(1, 50 * MiB, 64 * MiB, 2 * GiB) == 512 * MiB,
          "2 GiB free: a 512 MiB copy, a quarter of it");
    CHECK(mgpu_copy_ceiling_bytes(1, 50 * MiB, 64 * MiB, 300 * MiB) == 0,
          "300 MiB free: no copy twice the L2 fits, no ceiling");
    CHECK(mgpu_copy_ceiling_bytes(1, GiB, 4 * GiB, 80 * GiB) == 2 * GiB,
          "a 1 GiB L2: a 2 GiB copy");

    size_t cache = mgpu_host_cache_bytes();
    CHECK(1, "this host's last-level cache: %zu bytes (0: unknown)", cache);
    return check_done();
}
