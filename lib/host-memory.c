/* host-memory.c - how much memory and last-level cache the host has: the
 * capacity of a host-backend device, the room a run may still take (what
 * the machine has available, and what the process's cgroup leaves under
 * its limit), whether the kernel's out-of-memory killer has struck, and
 * the cache a copy must leave behind to measure the memory's bandwidth.
 *
 * A run that needs more memory than it can have is refused before it
 * allocates (mgpu_host_memory_check): Linux grants more than it has
 * (overcommit), and the out-of-memory killer then ends the program with
 * SIGKILL, which leaves it no word to say.  The check counts what is free
 * now: what the machine has available (MemAvailable: free memory and the
 * page cache it can drop) and, walking the process's cgroups up to their
 * root, each one's limit less what it holds that is not file cache
 * (cgroup v2 memory.max and memory.current, v1 memory.limit_in_bytes and
 * memory.usage_in_bytes; file pages, which the kernel drops before it
 * kills, do not count against the room). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The number in the line of FILE (a /proc or cgroup file of "key value"
 * lines) whose key is KEY, scaled by SCALE; -1 when there is none. */
static long long keyed_number(const char *path, const char *key, long long scale)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return -1;
    char line[256];
    long long found = -1;
    size_t len = strlen(key);
    while (found < 0 && fgets(line, sizeof line, file)) {
        if (strncmp(line, key, len) == 0 &&
            (line[len] == ' ' || line[len] == ':' || line[len] == '\t')) {
            const char *digits = line + len + 1 + strspn(line + len + 1, " \t");
            char *end;
            long long v = strtoll(digits, &end, 10);
            if (end != digits && v >= 0 && v <= LLONG_MAX / scale)
                found = v * scale;
        }
    }
    fclose(file);
    return found;
}

/* The one number in PATH (a cgroup file): bytes; "max" (v2's none) and
 * v1's page-rounded 2^63 are -2, no limit; -1 when unreadable. */
static long long file_number(const char *path)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return -1;
    char text[64] = "";
    int got = fscanf(file, "%63s", text);
    fclose(file);
    if (got != 1)
        return -1;
    if (strcmp(text, "max") == 0)
        return -2;
    char *end;
    long long v = strtoll(text, &end, 10);
    if (*end || v < 0)
        return -1;
    return v >= (1LL << 62) ? -2 : v;
}

/* One kind of cgroup: where its files are and what they are called. */
typedef struct cgroup_kind {
    const char *limit, *usage;     /* file names */
    const char *active, *inactive; /* memory.stat's file cache, of the subtree */
} cgroup_kind;

static const cgroup_kind cgroup_v2 = {"memory.max", "memory.current", "active_file",
                                      "inactive_file"};
static const cgroup_kind cgroup_v1 = {"memory.limit_in_bytes", "memory.usage_in_bytes",
                                      "total_active_file", "total_inactive_file"};

/* The room under the limits of DIR and the folders above it up to ROOT
 * (the hierarchy's mount point), into *ROOM when smaller, with the limit
 * that sets it in WHY. */
static void cgroup_walk(const cgroup_kind *kind, const char *root, char *dir, size_t *room,
                        char *why, size_t why_size)
{
    size_t root_len = strlen(root);
    for (;;) {
        char path[2 * PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", dir, kind->limit);
        long long limit = file_number(path);
        snprintf(path, sizeof path, "%s/%s", dir, kind->usage);
        long long usage = limit >= 0 ? file_number(path) : -1;
        if (limit >= 0 && usage >= 0) {
            snprintf(path, sizeof path, "%s/memory.stat", dir);
            long long active = keyed_number(path, kind->active, 1);
            long long inactive = keyed_number(path, kind->inactive, 1);
            long long cache = (active > 0 ? active : 0) + (inactive > 0 ? inactive : 0);
            long long held = usage > cache ? usage - cache : 0;
            size_t left = held < limit ? (size_t) (limit - held) : 0;
            if (left < *room) {
                *room = left;
                snprintf(why, why_size,
                         "left under the limit of the cgroup %s (%s %lld MiB, "
                         "%lld MiB held)",
                         dir, kind->limit, limit >> 20, held >> 20);
            }
        }
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t) (slash - dir) < root_len)
            break;
        *slash = '\0';
    }
}

/* The mount point and root of the cgroup hierarchy FSTYPE ("cgroup2", or
 * "cgroup" with the memory controller: OPTION "memory"), from
 * /proc/self/mountinfo: 1 when found. */
static int cgroup_mount(const char *fstype, const char *option, char *point, size_t point_size,
                        char *root, size_t root_size)
{
    FILE *file = fopen("/proc/self/mountinfo", "r");
    if (!file)
        return 0;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof line, file)) {
        char mroot[PATH_MAX], mpoint[PATH_MAX], type[32], super[512];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", mroot, mpoint) != 2 ||
            sscanf(dash + 3, "%31s %*s %511s", type, super) != 2 || strcmp(type, fstype) != 0)
            continue;
        if (option) {
            int has = 0;
            for (char *save = NULL, *o = strtok_r(super, ",", &save); o && !has;
                 o = strtok_r(NULL, ",", &save))
                has = strcmp(o, option) == 0;
            if (!has)
                continue;
        }
        snprintf(point, point_size, "%s", mpoint);
        snprintf(root, root_size, "%s", mroot);
        found = 1;
    }
    fclose(file);
    return found;
}

/* The room the process's memory cgroups leave (SIZE_MAX: no limit). */
static size_t cgroup_room(char *why, size_t why_size)
{
    size_t room = SIZE_MAX;
    FILE *file = fopen("/proc/self/cgroup", "r");
    if (!file)
        return room;
    char line[PATH_MAX + 128];
    while (fgets(line, sizeof line, file)) {
        line[strcspn(line, "\n")] = '\0';
        char *controllers = strchr(line, ':');
        char *path = controllers ? strchr(controllers + 1, ':') : NULL;
        if (!path)
            continue;
        *controllers++ = '\0';
        *path++ = '\0';
        const cgroup_kind *kind = NULL;
        char point[PATH_MAX], root[PATH_MAX], dir[2 * PATH_MAX];
        if (strcmp(line, "0") == 0 && !*controllers) {
            if (cgroup_mount("cgroup2", NULL, point, sizeof point, root, sizeof root))
                kind = &cgroup_v2;
        } else {
            int memory = 0;
            for (char *save = NULL, *c = strtok_r(controllers, ",", &save); c && !memory;
                 c = strtok_r(NULL, ",", &save))
                memory = strcmp(c, "memory") == 0;
            if (memory && cgroup_mount("cgroup", "memory", point, sizeof point, root, sizeof root))
                kind = &cgroup_v1;
        }
        if (!kind)
            continue;
        /* The path is seen from the hierarchy's root; the mount shows the
         * folder ROOT of it (a container's own, under a cgroup namespace). */
        size_t root_len = strcmp(root, "/") == 0 ? 0 : strlen(root);
        if (strncmp(path, root, root_len) != 0 || (path[root_len] && path[root_len] != '/'))
            continue;
        const char *below = path + root_len;
        snprintf(dir, sizeof dir, "%s%s", point, strcmp(below, "/") == 0 ? "" : below);
        cgroup_walk(kind, point, dir, &room, why, why_size);
    }
    fclose(file);
    return room;
}

size_t mgpu_host_memory_room(char *why, size_t why_size)
{
    snprintf(why, why_size, "no limit known");
    size_t room = SIZE_MAX;
    long long available = keyed_number("/proc/meminfo", "MemAvailable:", 1024);
    if (available >= 0) {
        room = (size_t) available;
        snprintf(why, why_size, "available on this machine (MemAvailable in /proc/meminfo)");
    }
    char cgroup_why[2 * PATH_MAX + 128];
    size_t cgroup = cgroup_room(cgroup_why, sizeof cgroup_why);
    if (cgroup < room) {
        room = cgroup;
        snprintf(why, why_size, "%s", cgroup_why);
    }
    return room;
}

/* BYTES in MiB or GiB, "1.50 GiB". */
static void bytes_text(size_t bytes, char *text, size_t size)
{
    if (bytes >= ((size_t) 1 << 30))
        snprintf(text, size, "%.2f GiB", (double) bytes / (1 << 30));
    else
        snprintf(text, size, "%.1f MiB", (double) bytes / (1 << 20));
}

mgpu_status mgpu_host_memory_check(size_t bytes, const char *what)
{
    char why[2 * PATH_MAX + 160];
    size_t room = mgpu_host_memory_room(why, sizeof why);
    if (bytes <= room)
        return MGPU_OK;
    char need[32], have[32];
    bytes_text(bytes, need, sizeof need);
    bytes_text(room, have, sizeof have);
    return mgpu_fail(MGPU_ERR_NOMEM, "%s needs %s of host memory, more than the %s %s", what, need,
                     have, why);
}

long long mgpu_oom_kills(void) { return keyed_number("/proc/vmstat", "oom_kill", 1); }

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
