/* host-memory.c - how much memory and last-level cache the host has: the
 * capacity of a host-backend device, and the cache a copy must leave
 * behind to measure the memory's bandwidth. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mgpu-private.h"

size_t mgpu_host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 0; /* unknown: no limit */
    return (size_t) pages * (size_t) page;
}

/* The size in a sysfs cache file, "32768K"; 0 when it is not one. */
static size_t read_cache_size(const char *path)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return 0;
    unsigned long long number = 0;
    char unit = '\0';
    int fields = fscanf(file, "%llu%c", &number, &unit);
    fclose(file);
    unsigned long long scale = unit == 'K' ? 1ull << 10 : unit == 'M' ? 1ull << 20 : 1;
    /* No cache is as large as 64 GiB: a larger number is not a cache size. */
    if (fields < 1 || number == 0 || number > (64ull << 30) / scale)
        return 0;
    return (size_t) (number * scale);
}

size_t mgpu_host_cache_bytes(void)
{
    /* The kernel's view of CPU 0's caches, which a virtual machine shows as
     * its own; the C library's answer (CPUID) may be the host's whole chip.
     * The largest data or unified cache is the last level. */
    size_t largest = 0;
    for (int index = 0; index < 8; index++) {
        char path[96], type[16] = "";
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
        FILE *file = fopen(path, "r");
        if (!file)
            break;
        int got = fscanf(file, "%15s", type);
        fclose(file);
        if (got != 1 || strcmp(type, "Instruction") == 0)
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
        size_t size = read_cache_size(path);
        if (size > largest)
            largest = size;
    }
    if (largest)
        return largest;
#ifdef _SC_LEVEL3_CACHE_SIZE
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l3 > 0)
        return (size_t) l3;
    if (l2 > 0)
        return (size_t) l2;
#endif
    return 0;
}
