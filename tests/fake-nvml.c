/* fake-nvml.c - a libnvidia-ml.so.1 for tests/nvml-links.tap: the few NVML
 * functions lib/nvml.c loads, describing three GPUs and no driver.
 *
 *   GPU 0 (0000:18:00.0): links 0-3 to GPU 1, link 4 to GPU 1 but down,
 *                         links 5-6 to an NVSwitch
 *   GPU 1 (0000:2a:00.0): links 0-3 to GPU 0
 *   GPU 2 (0001:3b:00.0): links 0-2 to the NVSwitch
 *   PCIe: 0-1 under one switch (PIX), 1-2 one NUMA node (NODE), 0-2 SYS.
 *
 * Its driver is version 999.99.1-fake (nvmlSystemGetDriverVersion).
 * FAKE_NVML_NO_DRIVER=1 makes nvmlInit_v2 fail as it does where the library
 * is installed but the driver is not loaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINKS 8

typedef struct pci {
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} pci;

typedef struct link {
    int active;
    int remote; /* a GPU, or SWITCH */
} link;

enum { SWITCH = -1, NONE = -2 };

static const struct gpu {
    unsigned int domain, bus;
    link links[MAX_LINKS];
} gpus[3] = {
    {0, 0x18, {{1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 1}, {1, SWITCH}, {1, SWITCH}, {0, NONE}}},
    {0, 0x2a, {{1, 0}, {1, 0}, {1, 0}, {1, 0}, {0, NONE}, {0, NONE}, {0, NONE}, {0, NONE}}},
    {1,
     0x3b,
     {{1, SWITCH},
      {1, SWITCH},
      {1, SWITCH},
      {0, NONE},
      {0, NONE},
      {0, NONE},
      {0, NONE},
      {0, NONE}}},
};

/* nvmlReturn_t values */
enum { OK = 0, INVALID_ARGUMENT = 2, NOT_FOUND = 6, DRIVER_NOT_LOADED = 9 };

/* A handle is a pointer to one of the GPUs above. */
static const struct gpu *gpu_of(void *handle)
{
    const struct gpu *g = handle;
    return g >= gpus && g < gpus + 3 ? g : NULL;
}

int nvmlInit_v2(void)
{
    const char *no_driver = getenv("FAKE_NVML_NO_DRIVER");
    return no_driver && *no_driver == '1' ? DRIVER_NOT_LOADED : OK;
}

const char *nvmlErrorString(int result)
{
    return result == DRIVER_NOT_LOADED ? "Driver Not Loaded"
           : result == NOT_FOUND       ? "Not Found"
                                       : "Invalid Argument";
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, void **device)
{
    unsigned int domain, bus, dev, function;
    if (sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &function) != 4)
        return INVALID_ARGUMENT;
    for (int i = 0; i < 3; i++) {
        if (gpus[i].domain == domain && gpus[i].bus == bus && dev == 0) {
            *device = (void *) &gpus[i];
            return OK;
        }
    }
    return NOT_FOUND;
}

static const link *link_of(void *device, unsigned int n)
{
    const struct gpu *g = gpu_of(device);
    return g && n < MAX_LINKS && g->links[n].remote != NONE ? &g->links[n] : NULL;
}

int nvmlDeviceGetNvLinkState(void *device, unsigned int n, int *active)
{
    const link *l = link_of(device, n);
    if (!l)
        return INVALID_ARGUMENT;
    *active = l->active;
    return OK;
}

int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *device, unsigned int n, pci *remote)
{
    const link *l = link_of(device, n);
    if (!l)
        return INVALID_ARGUMENT;
    memset(remote, 0, sizeof *remote);
    remote->domain = l->remote == SWITCH ? 0 : gpus[l->remote].domain;
    remote->bus = l->remote == SWITCH ? 0xc0 : gpus[l->remote].bus;
    snprintf(remote->bus_id, sizeof remote->bus_id, "%08X:%02X:00.0", remote->domain, remote->bus);
    return OK;
}

int nvmlDeviceGetNvLinkRemoteDeviceType(void *device, unsigned int n, int *type)
{
    const link *l = link_of(device, n);
    if (!l)
        return INVALID_ARGUMENT;
    *type = l->remote == SWITCH ? 2 : 0;
    return OK;
}

int nvmlDeviceGetTopologyCommonAncestor(void *a, void *b, int *level)
{
    const struct gpu *ga = gpu_of(a), *gb = gpu_of(b);
    if (!ga || !gb)
        return INVALID_ARGUMENT;
    int pair = (int) (ga - gpus) + (int) (gb - gpus); /* 0+1, 1+2, 0+2 */
    *level = pair == 1 ? 10 : pair == 3 ? 40 : 50;
    return OK;
}

int nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    static const char text[] = "999.99.1-fake";
    if (!version || length < sizeof text)
        return INVALID_ARGUMENT;
    memcpy(version, text, sizeof text);
    return OK;
}
