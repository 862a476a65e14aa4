/* nvml.c - how two GPUs are linked, and which driver runs them (the record's
 * nvidia_driver), asked of NVML, the driver's management library.  NVML is
 * loaded at run time (dlopen of libnvidia-ml.so.1 and the few functions
 * used), never linked, so that every binary still starts where there is no
 * driver; where it cannot be loaded, the link is guessed from the CUDA
 * runtime's native-atomics attribute, and the answer says so. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>

#include "mgpu-private.h"

#ifdef MGPU_HAVE_NVML
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

/* The few NVML types used, declared here so that no nvml.h is needed to
 * build (the CUDA toolkit may lack it); where it is there, they are checked
 * against it below. */
typedef int nvml_return; /* 0: NVML_SUCCESS */
typedef struct nvml_device_st *nvml_device;
typedef struct nvml_pci { /* nvmlPciInfo_t, as nvmlDeviceGetNvLinkRemotePciInfo_v2 fills it */
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvml_pci;
enum {
    NVML_LINK_ACTIVE = 1,  /* NVML_FEATURE_ENABLED */
    NVML_REMOTE_GPU = 0,   /* NVML_NVLINK_DEVICE_TYPE_GPU */
    NVML_REMOTE_SWITCH = 2 /* NVML_NVLINK_DEVICE_TYPE_SWITCH */
};

#ifdef MGPU_HAVE_NVML_H
#include <nvml.h>
_Static_assert(sizeof(nvml_pci) == sizeof(nvmlPciInfo_t), "nvmlPciInfo_t");
_Static_assert(offsetof(nvml_pci, domain) == offsetof(nvmlPciInfo_t, domain), "domain");
_Static_assert(offsetof(nvml_pci, device) == offsetof(nvmlPciInfo_t, device), "device");
_Static_assert(NVML_LINK_ACTIVE == NVML_FEATURE_ENABLED, "nvmlEnableState_t");
_Static_assert(NVML_REMOTE_SWITCH == NVML_NVLINK_DEVICE_TYPE_SWITCH, "nvmlIntNvLinkDeviceType_t");
_Static_assert(NVML_TOPOLOGY_SYSTEM == 50 && NVML_TOPOLOGY_SINGLE == 10, "nvmlGpuTopologyLevel_t");
#endif

/* More than any GPU has (NVML_NVLINK_MAX_LINKS is 18 today); NVML refuses
 * the links a GPU does not have. */
#define MAX_LINKS 32

static struct {
    nvml_return (*init)(void);
    const char *(*error_string)(nvml_return);
    nvml_return (*handle)(const char *bus_id, nvml_device *device);
    nvml_return (*link_state)(nvml_device device, unsigned int link, int *active);
    nvml_return (*remote_pci)(nvml_device device, unsigned int link, nvml_pci *pci);
    nvml_return (*remote_type)(nvml_device device, unsigned int link, int *type); /* or NULL */
    nvml_return (*ancestor)(nvml_device a, nvml_device b, int *level);
    nvml_return (*driver_version)(char *text, unsigned int size); /* or NULL */
    char why[160]; /* why NVML cannot be used; empty when it can */
} nvml;
static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;

/* Once per process.  The library stays loaded and initialised until the
 * process ends (nvmlShutdown would only drop a reference count). */
static void nvml_load(void)
{
    static const char name[] = "libnvidia-ml.so.1";
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *error = dlerror();
        snprintf(nvml.why, sizeof nvml.why, "%s", error ? error : "dlopen failed");
        return;
    }
    static const char *const required[] = {"nvmlInit_v2",
                                           "nvmlErrorString",
                                           "nvmlDeviceGetHandleByPciBusId_v2",
                                           "nvmlDeviceGetNvLinkState",
                                           "nvmlDeviceGetNvLinkRemotePciInfo_v2",
                                           "nvmlDeviceGetTopologyCommonAncestor"};
    void *symbol[6];
    for (size_t i = 0; i < 6; i++) {
        if (!(symbol[i] = dlsym(library, required[i]))) {
            snprintf(nvml.why, sizeof nvml.why, "%s has no %s (driver too old?)", name,
                     required[i]);
            dlclose(library);
            return;
        }
    }
    /* dlsym returns function addresses as void *, as POSIX allows. */
    nvml.init = (nvml_return(*)(void)) symbol[0];
    nvml.error_string = (const char *(*) (nvml_return)) symbol[1];
    nvml.handle = (nvml_return(*)(const char *, nvml_device *)) symbol[2];
    nvml.link_state = (nvml_return(*)(nvml_device, unsigned int, int *)) symbol[3];
    nvml.remote_pci = (nvml_return(*)(nvml_device, unsigned int, nvml_pci *)) symbol[4];
    nvml.ancestor = (nvml_return(*)(nvml_device, nvml_device, int *)) symbol[5];
    /* Older drivers cannot tell a switch from a GPU: their links then count
     * only where they reach the other GPU itself. */
    nvml.remote_type = (nvml_return(*)(nvml_device, unsigned int, int *)) dlsym(
        library, "nvmlDeviceGetNvLinkRemoteDeviceType");
    nvml.driver_version = (nvml_return(*)(char *, unsigned int)) dlsym(
        library, "nvmlSystemGetDriverVersion");
    nvml_return rc = nvml.init();
    if (rc != 0)
        snprintf(nvml.why, sizeof nvml.why, "nvmlInit_v2: %s", nvml.error_string(rc));
}

/* NVML's handle of the GPU at INFO's PCI address. */
static nvml_return device_handle(const mgpu_device_info *info, nvml_device *device)
{
    char bus_id[32];
    snprintf(bus_id, sizeof bus_id, "%08X:%02X:%02X.0", (unsigned) info->pci_domain,
             (unsigned) info->pci_bus, (unsigned) info->pci_device);
    return nvml.handle(bus_id, device);
}

static int same_gpu(const nvml_pci *pci, const mgpu_device_info *info)
{
    return pci->domain == (unsigned) info->pci_domain && pci->bus == (unsigned) info->pci_bus &&
           pci->device == (unsigned) info->pci_device;
}

/* DEVICE's active NVLinks: into *TO_PEER those that reach PEER itself, into
 * *TO_SWITCH those that reach an NVSwitch. */
static void count_links(nvml_device device, const mgpu_device_info *peer, int *to_peer,
                        int *to_switch)
{
    *to_peer = *to_switch = 0;
    for (unsigned int link = 0; link < MAX_LINKS; link++) {
        int active = 0, type = -1;
        nvml_pci pci;
        if (nvml.link_state(device, link, &active) != 0 || active != NVML_LINK_ACTIVE ||
            nvml.remote_pci(device, link, &pci) != 0)
            continue;
        if (nvml.remote_type && nvml.remote_type(device, link, &type) != 0)
            type = -1;
        if (type != NVML_REMOTE_SWITCH && same_gpu(&pci, peer))
            (*to_peer)++;
        else if (type == NVML_REMOTE_SWITCH)
            (*to_switch)++;
    }
}

/* nvmlGpuTopologyLevel_t as nvidia-smi topo -m names it. */
static const char *path_name(int level)
{
    switch (level) {
    case 0:
        return "BOARD";
    case 10:
        return "PIX";
    case 20:
        return "PXB";
    case 30:
        return "PHB";
    case 40:
        return "NODE";
    case 50:
        return "SYS";
    default:
        return NULL;
    }
}

mgpu_status mgpu_nvml_link(const mgpu_device_info *a, const mgpu_device_info *b,
                           mgpu_link_info *info)
{
    pthread_once(&nvml_once, nvml_load);
    if (nvml.why[0]) {
        snprintf(info->why, sizeof info->why, "NVML: %s", nvml.why);
        return MGPU_ERR_UNSUPPORTED;
    }
    nvml_device da, db;
    const mgpu_device_info *unknown = a;
    nvml_return rc = device_handle(a, &da);
    if (rc == 0) {
        unknown = b;
        rc = device_handle(b, &db);
    }
    if (rc != 0) {
        snprintf(info->why, sizeof info->why, "NVML does not know GPU %04x:%02x:%02x: %s",
                 (unsigned) unknown->pci_domain, (unsigned) unknown->pci_bus,
                 (unsigned) unknown->pci_device, nvml.error_string(rc));
        return MGPU_ERR_UNSUPPORTED;
    }
    int direct, a_switch, b_direct, b_switch, level = -1;
    count_links(da, b, &direct, &a_switch);
    count_links(db, a, &b_direct, &b_switch);
    /* Through a switch, a pair gets the links of its narrower side. */
    int switched = a_switch < b_switch ? a_switch : b_switch;
    info->source = MGPU_LINK_NVML;
    info->nvlinks = direct + switched;
    info->type = direct ? "NVLink" : switched ? "NVSwitch" : "PCIe";
    info->pcie_path = nvml.ancestor(da, db, &level) == 0 ? path_name(level) : NULL;
    info->why[0] = '\0';
    return MGPU_OK;
}

mgpu_status mgpu_nvml_driver_version(char *text, size_t size)
{
    /* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80. */
    char version[96] = "";
    pthread_once(&nvml_once, nvml_load);
    if (nvml.why[0] || !nvml.driver_version ||
        nvml.driver_version(version, (unsigned int) sizeof version) != 0 || !version[0])
        return MGPU_ERR_UNSUPPORTED;
    version[sizeof version - 1] = '\0';
    snprintf(text, size, "%s", version);
    return MGPU_OK;
}

#else /* !MGPU_HAVE_NVML */

mgpu_status mgpu_nvml_driver_version(char *text, size_t size)
{
    (void) text;
    (void) size;
    return MGPU_ERR_UNSUPPORTED;
}

mgpu_status mgpu_nvml_link(const mgpu_device_info *a, const mgpu_device_info *b,
                           mgpu_link_info *info)
{
    (void) a;
    (void) b;
    snprintf(info->why, sizeof info->why,
             "NVML: this build cannot load it (no dlopen, "
             "or configured --without-nvml)");
    return MGPU_ERR_UNSUPPORTED;
}

#endif /* MGPU_HAVE_NVML */

const char *mgpu_link_source_name(mgpu_link_source source)
{
    switch (source) {
    case MGPU_LINK_NVML:
        return "nvml";
    case MGPU_LINK_GUESS:
        return "guess";
    case MGPU_LINK_UNKNOWN:
    default:
        return "unknown";
    }
}

mgpu_status mgpu_link_query(int device, int peer, mgpu_link_info *info)
{
    *info = (mgpu_link_info){.source = MGPU_LINK_UNKNOWN, .nvlinks = -1};
    MGPU_TRY(mgpu_check_device(device));
    MGPU_TRY(mgpu_check_device(peer));
    if (!mgpu_on_cuda() || device == peer) {
        snprintf(info->why, sizeof info->why, "%s",
                 device == peer ? "one device" : "the host backend has no links");
        return MGPU_OK;
    }
    mgpu_device_info a, b;
    MGPU_TRY(mgpu_device_info_get(device, &a));
    MGPU_TRY(mgpu_device_info_get(peer, &b));
    if (mgpu_nvml_link(&a, &b, info) == MGPU_OK)
        return MGPU_OK;
    /* The fallback keeps INFO->why: the reason NVML could not tell. */
    mgpu_peer_link guess;
    MGPU_TRY(mgpu_peer_link_get(device, peer, &guess));
    info->source = MGPU_LINK_GUESS;
    info->type = guess.native_atomics > 0 ? "NVLink" : "PCIe";
    return MGPU_OK;
}
