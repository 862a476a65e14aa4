/* bind.c - each worker (thread or process) on the CPUs nearest its device.
 *
 * A GPU is attached to one socket's PCIe root: a worker that issues its
 * launches and copies from the other socket crosses the socket link for
 * every doorbell, every pinned buffer it touches, every completion it polls.
 * --bind=auto (doc/design.md section 3) puts each worker on the CPUs of its
 * GPU's NUMA node: with hwloc (hwloc_cudart_get_device_cpuset) where
 * configure found it, else from the file hwloc itself reads on Linux,
 * /sys/bus/pci/devices/BUS-ID/local_cpulist.  A host-backend "device" has
 * no locality: worker d of W gets the d-th of W equal shares of the CPUs
 * the process may use, so that the workers never share a CPU; with fewer
 * CPUs than workers none is bound.
 *
 * Only the thread is bound, and memory follows it by first touch (the
 * kernel's default policy places a page on the node of the CPU that first
 * writes it): no hwloc_set_membind, which container seccomp profiles often
 * refuse (set_mempolicy needs CAP_SYS_NICE there), and which would not move
 * what the thread allocated before it was bound anyway.
 *
 * What a worker got is read back (sched_getaffinity), not echoed from what
 * was asked: the record says where the workers really ran (doc/record.md,
 * field binding).  A binding that cannot be done never fails a run; the
 * record says why instead.
 *
 * Host-backend kernels share the cores the same way: each worker's OpenMP
 * team takes its share of them (mgpu_host_share_cores), not all of them,
 * and no more than OMP_NUM_THREADS where it is set.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "mgpu-private.h"

#if defined(MGPU_HAVE_HWLOC) && defined(MGPU_HAVE_CUDA)
#include <hwloc.h>
#include <hwloc/cudart.h>
#include <hwloc/glibc-sched.h>
#endif

/* ------------------------------------------------ the process's CPUs */

/* The CPUs the process was given (by taskset, a cgroup, a launcher), taken
 * once before any worker is bound: every binding stays within them, and
 * mgpu_bind_release gives them back. */
static cpu_set_t start_cpus;
static int start_known;
static int start_procs = 1; /* OpenMP's count of them, at least one */
static pthread_once_t start_once = PTHREAD_ONCE_INIT;

static void take_start_cpus(void)
{
    start_known = sched_getaffinity(0, sizeof start_cpus, &start_cpus) == 0;
#ifdef _OPENMP
    start_procs = omp_get_num_procs();
#endif
}

void mgpu_bind_start(void) { pthread_once(&start_once, take_start_cpus); }

/* SET in the cpulist form of Linux and hwloc ("0-15,32-47") into OUT, cut
 * at a comma with "..." when it does not fit. */
static void cpus_text(const cpu_set_t *set, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        char range[32];
        int n = last == c ? snprintf(range, sizeof range, "%s%d", used ? "," : "", c)
                          : snprintf(range, sizeof range, "%s%d-%d", used ? "," : "", c, last);
        if (used + (size_t) n + 4 >= size) {
            snprintf(out + used, size - used, ",...");
            return;
        }
        memcpy(out + used, range, (size_t) n + 1);
        used += (size_t) n;
        c = last;
    }
}

/* The calling thread's CPUs, read back, into CPUS (MGPU_BIND_TEXT bytes). */
static void read_back(char *cpus)
{
    cpu_set_t now;
    if (sched_getaffinity(0, sizeof now, &now) == 0)
        cpus_text(&now, cpus, MGPU_BIND_TEXT);
    else
        snprintf(cpus, MGPU_BIND_TEXT, "none (sched_getaffinity: %s)", strerror(errno));
}

/* OpenMP binds its threads itself when the user asks (OMP_PROC_BIND,
 * OMP_PLACES; libgomp also binds the initial thread, whose workers inherit
 * it): that placement is the user's, and wins. */
static const char *openmp_binding(void)
{
    const char *bind = getenv("OMP_PROC_BIND");
    const char *places = getenv("OMP_PLACES");
    if (bind && *bind && strcmp(bind, "false") != 0 && strcmp(bind, "FALSE") != 0)
        return "OMP_PROC_BIND";
    if (places && *places)
        return "OMP_PLACES";
    return NULL;
}

/* ------------------------------------------- the CPUs nearest a device */

/* Share WORKER of WORKERS of the process's CPUs: consecutive CPUs, as even
 * as can be.  0, or -1 with WHY, when there are fewer CPUs than workers. */
static int host_share(int worker, int workers, cpu_set_t *set, char *why, size_t size)
{
    int count = CPU_COUNT(&start_cpus);
    if (count < workers) {
        snprintf(why, size, "%d workers, %d CPU%s given to the process: they would share", workers,
                 count, count == 1 ? "" : "s");
        return -1;
    }
    long long first = (long long) worker * count / workers;
    long long end = (long long) (worker + 1) * count / workers;
    CPU_ZERO(set);
    for (int c = 0, i = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &start_cpus))
            continue;
        if (i >= first && i < end)
            CPU_SET(c, set);
        i++;
    }
    return 0;
}

#ifdef MGPU_HAVE_CUDA
#ifdef MGPU_HAVE_HWLOC
/* One topology for the process, loaded at its first binding and kept (its
 * load reads much of sysfs: once, not once a worker). */
static hwloc_topology_t topology;
static int topology_loaded;
static pthread_once_t topology_once = PTHREAD_ONCE_INIT;

static void load_topology(void)
{
    if (hwloc_topology_init(&topology) != 0)
        return;
    if (hwloc_topology_load(topology) != 0) {
        hwloc_topology_destroy(topology);
        return;
    }
    topology_loaded = 1;
}

/* hwloc's locality of DEVICE (the CPUs of the NUMA node its PCIe bus hangs
 * from) into SET; 0, or -1 with WHY. */
static int device_cpus(int device, cpu_set_t *set, char *why, size_t size)
{
    pthread_once(&topology_once, load_topology);
    if (!topology_loaded) {
        snprintf(why, size, "hwloc could not load the topology");
        return -1;
    }
    hwloc_cpuset_t near = hwloc_bitmap_alloc();
    int rc = near ? hwloc_cudart_get_device_cpuset(topology, device, near) : -1;
    if (rc == 0)
        rc = hwloc_cpuset_to_glibc_sched_affinity(topology, near, set, sizeof *set);
    hwloc_bitmap_free(near);
    if (rc != 0)
        snprintf(why, size, "hwloc finds no CPUs near device %d", device);
    return rc == 0 ? 0 : -1;
}
#else
/* The CPU list sysfs gives for DEVICE's PCI function, what hwloc would
 * read: taken only when it is small and nothing but digits, commas and
 * dashes.  0, or -1 with WHY. */
static int device_cpus(int device, cpu_set_t *set, char *why, size_t size)
{
    int domain, bus, slot;
    if (cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&slot, cudaDevAttrPciDeviceId, device) != cudaSuccess) {
        snprintf(why, size, "no PCI address for device %d", device);
        return -1;
    }
    char path[96], text[256];
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%04x:%02x:%02x.0/local_cpulist", domain, bus,
             slot);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text, f) : 0;
    if (f)
        fclose(f);
    while (n > 0 && text[n - 1] == '\n')
        n--;
    if (n == 0 || n >= sizeof text - 1) {
        snprintf(why, size, "no hwloc, and %s is %s", path, f ? "empty or too long" : "unreadable");
        return -1;
    }
    text[n] = '\0';
    CPU_ZERO(set);
    for (char *range = text; *range;) {
        char *end;
        long first = strtol(range, &end, 10), last = first;
        if (end > range && *end == '-')
            last = strtol(end + 1, &end, 10);
        if (end == range || first < 0 || last < first || last >= CPU_SETSIZE ||
            (*end != ',' && *end != '\0')) {
            snprintf(why, size, "no hwloc, and %s is not a plain CPU list", path);
            return -1;
        }
        for (long c = first; c <= last; c++)
            CPU_SET((int) c, set);
        range = *end ? end + 1 : end;
    }
    return 0;
}
#endif
#endif

/* The CPUs for the worker of DEVICE, within the process's; 0, or -1 with
 * WHY. */
static int chosen_cpus(int device, int workers, cpu_set_t *set, char *why, size_t size)
{
    if (!start_known) {
        snprintf(why, size, "sched_getaffinity failed");
        return -1;
    }
    if (!mgpu_on_cuda())
        return host_share(device, workers, set, why, size);
#ifdef MGPU_HAVE_CUDA
    cpu_set_t near;
    if (device_cpus(device, &near, why, size) != 0)
        return -1;
    CPU_AND(set, &near, &start_cpus);
    if (CPU_COUNT(set) > 0)
        return 0;
    snprintf(why, size, "the CPUs near device %d are not among this process's", device);
#endif
    return -1;
}

void mgpu_bind_worker(mgpu_bind bind, int device, int workers, char *cpus)
{
    char why[MGPU_BIND_TEXT - 8], ignored[MGPU_BIND_TEXT];
    cpu_set_t set;
    if (!cpus)
        cpus = ignored;
    pthread_once(&start_once, take_start_cpus);
    if (bind == MGPU_BIND_NONE) {
        snprintf(cpus, MGPU_BIND_TEXT, "none (--bind=none)");
    } else if (openmp_binding()) {
        read_back(cpus); /* mgpu_record_set_binding says whose placement it is */
    } else if (chosen_cpus(device, workers, &set, why, sizeof why) != 0) {
        snprintf(cpus, MGPU_BIND_TEXT, "none (%s)", why);
    } else if (sched_setaffinity(0, sizeof set, &set) != 0) {
        snprintf(cpus, MGPU_BIND_TEXT, "none (sched_setaffinity: %s)", strerror(errno));
    } else {
        read_back(cpus);
    }
}

void mgpu_bind_release(void)
{
    pthread_once(&start_once, take_start_cpus);
    if (start_known && !openmp_binding())
        sched_setaffinity(0, sizeof start_cpus, &start_cpus);
}

int mgpu_host_threads(void)
{
    /* The environment is OpenMP's word, read before main: a team of
     * OMP_NUM_THREADS=100000 (at any nesting level of a list) overflowed
     * libgomp's stack in the first region, exit 139 with no message.  No
     * team is larger than the CPUs, which bounds it whatever was asked. */
#ifdef _OPENMP
    mgpu_bind_start();
    int asked = omp_get_max_threads();
    return asked < start_procs ? asked : start_procs;
#else
    return 1;
#endif
}

void mgpu_host_share_cores(int workers)
{
#ifdef _OPENMP
    int share = omp_get_num_procs() / (workers > 0 ? workers : 1);
    /* A team never grows past what OMP_NUM_THREADS asks of each: a caller
     * running several programs at once (make -j check) keeps them small. */
    if (getenv("OMP_NUM_THREADS") && omp_get_max_threads() < share)
        share = omp_get_max_threads();
    omp_set_num_threads(share > 1 ? share : 1);
#else
    (void) workers;
#endif
}

/* ------------------------------------------------------------ the record */

/* "none (WHY)" when no worker was bound and all for one reason; else
 * "D:CPUS;..." in device order, a worker that was not bound as "D:none
 * (WHY)"; then whose placement it was when not mgpu's.  Cut at a device,
 * with ";...", when too long. */
void mgpu_record_set_binding(mgpu_record *record, const mgpu_binding *binding)
{
    char *out = record->binding;
    size_t size = sizeof record->binding, used = 0;
    int n = record->devices < MGPU_MAX_DEVICES ? record->devices : MGPU_MAX_DEVICES;
    int same_none = n > 0 && strncmp(binding->cpus[0], "none (", 6) == 0;
    for (int d = 1; d < n && same_none; d++)
        same_none = strcmp(binding->cpus[d], binding->cpus[0]) == 0;
    if (same_none) {
        snprintf(out, size, "%s", binding->cpus[0]);
        return;
    }
    out[0] = '\0';
    for (int d = 0; d < n; d++) {
        size_t need = strlen(binding->cpus[d]) + 16;
        if (used + need + 64 >= size) {
            snprintf(out + used, size - used, ";...");
            return;
        }
        used += (size_t) snprintf(out + used, size - used, "%s%d:%s", d ? ";" : "", d,
                                  binding->cpus[d][0] ? binding->cpus[d] : "none (not told)");
    }
    if (openmp_binding())
        snprintf(out + used, size - used, " (%s set: OpenMP's placement kept)", openmp_binding());
}
