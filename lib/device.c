/* device.c - devices: what they are, and making one current (runtime API
 * cudaSetDevice, or the driver API's context push and pop, book 10.1). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mgpu-private.h"

#ifdef MGPU_HAVE_CUDA
#include <cuda.h> /* types only: the driver is reached through the runtime */
#endif

/* Host backend: the current device of each thread, and a context stack. */
static _Thread_local int host_current;
static _Thread_local int host_stack[16];
static _Thread_local int host_depth;

mgpu_status mgpu_device_count(int *count)
{
    *count = mgpu_devices_available();
    return MGPU_OK;
}

#ifdef MGPU_HAVE_CUDA
/* A GPU's UUID as nvidia-smi -L names it: "GPU-" and its 16 bytes in
 * lower-case hex, grouped 4-2-2-2-6. */
static void uuid_text(const struct cudaDeviceProp *prop, char *text, size_t size)
{
    const unsigned char *u = (const unsigned char *) prop->uuid.bytes;
    snprintf(text, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}
#endif

mgpu_status mgpu_device_by_uuid(const char *uuid, int *device)
{
    *device = -1;
#ifdef MGPU_HAVE_CUDA
    /* The properties, not mgpu_device_info_get: no context is made on the
     * devices passed by. */
    for (int d = 0; mgpu_on_cuda() && d < mgpu_devices_available(); d++) {
        struct cudaDeviceProp prop;
        char text[sizeof((mgpu_device_info *) 0)->uuid];
        MGPU_CUDA(cudaGetDeviceProperties(&prop, d), d);
        uuid_text(&prop, text, sizeof text);
        if (strcmp(text, uuid) == 0) {
            *device = d;
            break;
        }
    }
#else
    (void) uuid;
#endif
    return MGPU_OK;
}

mgpu_status mgpu_device_info_get(int device, mgpu_device_info *info)
{
    MGPU_TRY(mgpu_check_device(device));
    memset(info, 0, sizeof *info);
    info->index = device;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        struct cudaDeviceProp prop;
        int clock_khz = 0, bus_bits = 0;
        MGPU_CUDA(cudaGetDeviceProperties(&prop, device), device);
        snprintf(info->name, sizeof info->name, "%s", prop.name);
        info->total_bytes = prop.totalGlobalMem;
        info->multiprocessors = prop.multiProcessorCount;
        info->cc_major = prop.major;
        info->cc_minor = prop.minor;
        info->pci_domain = prop.pciDomainID;
        info->pci_bus = prop.pciBusID;
        info->pci_device = prop.pciDeviceID;
        uuid_text(&prop, info->uuid, sizeof info->uuid);
        snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "%04x:%02x:%02x.0",
                 (unsigned) prop.pciDomainID, (unsigned) prop.pciBusID,
                 (unsigned) prop.pciDeviceID);
        MGPU_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device), device);
        MGPU_CUDA(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device),
                  device);
        /* Double data rate: two transfers per clock. */
        info->peak_gbps = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
        int l2_bytes = 0;
        MGPU_CUDA(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device), device);
        info->cache_bytes = l2_bytes > 0 ? (size_t) l2_bytes : 0;
        size_t free_bytes = 0, total = 0;
        MGPU_CUDA_ON(device, cudaMemGetInfo(&free_bytes, &total));
        info->free_bytes = free_bytes;
        return MGPU_OK;
    }
#endif
    snprintf(info->name, sizeof info->name, "host device %d", device);
    info->total_bytes = info->free_bytes = mgpu_host_memory_bytes();
    info->cache_bytes = mgpu_host_cache_bytes();
    return MGPU_OK;
}

mgpu_status mgpu_device_set(int device)
{
    MGPU_TRY(mgpu_check_device(device));
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(cudaSetDevice(device), device);
        return MGPU_OK;
    }
#endif
    host_current = device;
    return MGPU_OK;
}

mgpu_status mgpu_device_get(int *device)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(cudaGetDevice(device), -1);
        return MGPU_OK;
    }
#endif
    *device = host_current;
    return MGPU_OK;
}

mgpu_status mgpu_device_synchronize(int device)
{
    MGPU_TRY(mgpu_check_device(device));
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda())
        MGPU_CUDA_ON(device, cudaDeviceSynchronize());
#endif
    return MGPU_OK;
}

#ifdef MGPU_HAVE_CUDA
/* The few driver entry points context switching needs, looked up once. */
typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*primary_retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);
static struct {
    device_get_fn device_get;
    primary_retain_fn primary_retain;
    ctx_push_fn push;
    ctx_pop_fn pop;
    cudaError_t error;
    const char *missing;
} driver;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary[MGPU_MAX_DEVICES];

cudaError_t mgpu_driver_entries(const char *const *names, void **fns, int count,
                                const char **missing)
{
    for (int i = 0; i < count; i++) {
        enum cudaDriverEntryPointQueryResult found;
#if CUDART_VERSION >= 12050
        cudaError_t err = cudaGetDriverEntryPointByVersion(names[i], &fns[i], 12000,
                                                           cudaEnableDefault, &found);
#else
        cudaError_t err = cudaGetDriverEntryPoint(names[i], &fns[i], cudaEnableDefault, &found);
#endif
        if (err == cudaSuccess && found != cudaDriverEntryPointSuccess)
            err = cudaErrorSymbolNotFound;
        if (err != cudaSuccess) {
            *missing = names[i];
            return err;
        }
    }
    return cudaSuccess;
}

mgpu_status mgpu_driver_entry_fail(const char *missing, cudaError_t err)
{
    return mgpu_fail(MGPU_ERR_CUDA, "cudaGetDriverEntryPoint(%s): %s", missing,
                     cudaGetErrorString(err));
}

static void driver_load(void)
{
    void *fn[4] = {NULL, NULL, NULL, NULL};
    static const char *const names[4] = {"cuDeviceGet", "cuDevicePrimaryCtxRetain",
                                         "cuCtxPushCurrent", "cuCtxPopCurrent"};
    driver.error = mgpu_driver_entries(names, fn, 4, &driver.missing);
    if (driver.error != cudaSuccess)
        return;
    driver.device_get = (device_get_fn) fn[0];
    driver.primary_retain = (primary_retain_fn) fn[1];
    driver.push = (ctx_push_fn) fn[2];
    driver.pop = (ctx_pop_fn) fn[3];
}

static mgpu_status driver_fail(const char *call, CUresult result, int device)
{
    if (device < 0)
        return mgpu_fail(MGPU_ERR_CUDA, "%s: driver error %d", call, (int) result);
    return mgpu_fail(MGPU_ERR_CUDA, "%s on device %d: driver error %d", call, device, (int) result);
}

/* The primary context of DEVICE, retained once and kept for the life of the
 * process: it is the same context the runtime API uses. */
static mgpu_status primary_context(int device, CUcontext *ctx)
{
    pthread_once(&driver_once, driver_load);
    if (driver.error != cudaSuccess)
        return mgpu_driver_entry_fail(driver.missing, driver.error);
    mgpu_status status = MGPU_OK;
    pthread_mutex_lock(&primary_lock);
    if (!primary[device]) {
        CUdevice dev;
        CUresult r = driver.device_get(&dev, device);
        if (r == CUDA_SUCCESS)
            r = driver.primary_retain(&primary[device], dev);
        if (r != CUDA_SUCCESS)
            status = driver_fail("cuDevicePrimaryCtxRetain", r, device);
    }
    *ctx = primary[device];
    pthread_mutex_unlock(&primary_lock);
    return status;
}
#endif

mgpu_status mgpu_context_push(int device)
{
    MGPU_TRY(mgpu_check_device(device));
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        CUcontext ctx = NULL;
        MGPU_TRY(primary_context(device, &ctx));
        CUresult r = driver.push(ctx);
        if (r != CUDA_SUCCESS)
            return driver_fail("cuCtxPushCurrent", r, device);
        return MGPU_OK;
    }
#endif
    if (host_depth == (int) (sizeof host_stack / sizeof host_stack[0]))
        return mgpu_fail(MGPU_ERR_USAGE, "context stack overflow");
    host_stack[host_depth++] = host_current;
    host_current = device;
    return MGPU_OK;
}

mgpu_status mgpu_context_pop(void)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        CUcontext ctx;
        pthread_once(&driver_once, driver_load);
        if (driver.error != cudaSuccess)
            return mgpu_driver_entry_fail(driver.missing, driver.error);
        CUresult r = driver.pop(&ctx);
        if (r != CUDA_SUCCESS)
            return driver_fail("cuCtxPopCurrent", r, -1);
        return MGPU_OK;
    }
#endif
    if (host_depth == 0)
        return mgpu_fail(MGPU_ERR_USAGE, "context pop with no context pushed");
    host_current = host_stack[--host_depth];
    return MGPU_OK;
}
