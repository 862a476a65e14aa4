/* test-nvml.c - mgpu_link_query and its NVML part without a GPU, run by
 * tests/nvml-links.tap in one of three worlds (the first argument):
 *   absent     no libnvidia-ml.so.1: NVML's part says why and nothing stops;
 *              the host backend's links are unknown, no driver version
 *   fake       tests/fake-nvml.c's three GPUs: NVLinks counted, the switch
 *              and the PCIe paths found, the driver's version read
 *   no-driver  the library is there but nvmlInit fails: said, not fatal */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>
#ifdef MGPU_HAVE_NVML
#include <dlfcn.h>
#endif

#include "check.h"
#include "mgpu-private.h"

static mgpu_device_info gpu_at(int domain, int bus)
{
    return (mgpu_device_info){.pci_domain = domain, .pci_bus = bus, .pci_device = 0};
}

static void host_backend(void)
{
    mgpu_link_info info;
    CHECK(mgpu_init(MGPU_BACKEND_HOST, 2) == MGPU_OK, "the host backend, 2 devices");
    CHECK(mgpu_link_query(0, 1, &info) == MGPU_OK, "host backend: a link query succeeds");
    CHECK(info.source == MGPU_LINK_UNKNOWN && !info.type && info.nvlinks == -1 && !info.pcie_path &&
              info.why[0],
          "host backend: nothing known, and why (%s)", info.why);
    CHECK(strcmp(mgpu_link_source_name(info.source), "unknown") == 0, "its source: unknown");
    CHECK(mgpu_link_query(0, 2, &info) == MGPU_ERR_USAGE, "a device that is not there: usage");
}

static void absent(void)
{
    mgpu_device_info a = gpu_at(0, 0x18), b = gpu_at(0, 0x2a);
    mgpu_link_info info = {0};
#ifdef MGPU_HAVE_NVML
    void *real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (real) {
        dlclose(real);
        check_skip("libnvidia-ml.so.1 is installed here");
    }
    CHECK(mgpu_nvml_link(&a, &b, &info) == MGPU_ERR_UNSUPPORTED, "no NVML: unsupported");
    CHECK(strstr(info.why, "libnvidia-ml.so.1") != NULL, "no NVML: the reason names it (%s)",
          info.why);
    CHECK(mgpu_nvml_link(&a, &b, &info) == MGPU_ERR_UNSUPPORTED && info.why[0],
          "no NVML: asked again, the same answer, no retry");
#else
    CHECK(mgpu_nvml_link(&a, &b, &info) == MGPU_ERR_UNSUPPORTED && info.why[0],
          "a build without NVML: unsupported, and why (%s)", info.why);
#endif
    char version[32] = "untouched";
    CHECK(mgpu_nvml_driver_version(version, sizeof version) == MGPU_ERR_UNSUPPORTED &&
              strcmp(version, "untouched") == 0,
          "no NVML: no driver version (%s)", version);
    CHECK(*mgpu_last_error() == '\0', "the fallback is no failure: mgpu_last_error is empty");
    host_backend();
}

static void expect(int from_bus, int from_domain, int to_bus, int to_domain, const char *type,
                   int nvlinks, const char *path)
{
    mgpu_device_info a = gpu_at(from_domain, from_bus), b = gpu_at(to_domain, to_bus);
    mgpu_link_info info = {0};
    mgpu_status status = mgpu_nvml_link(&a, &b, &info);
    CHECK(status == MGPU_OK && info.source == MGPU_LINK_NVML && info.type &&
              strcmp(info.type, type) == 0 && info.nvlinks == nvlinks && info.pcie_path &&
              strcmp(info.pcie_path, path) == 0,
          "%02x -> %02x: %s, %d NVLinks, %s (got %s, %d, %s; %s)", from_bus, to_bus, type, nvlinks,
          path, info.type ? info.type : "-", info.nvlinks, info.pcie_path ? info.pcie_path : "-",
          info.why);
}

static void fake(void)
{
    expect(0x18, 0, 0x2a, 0, "NVLink", 4, "PIX"); /* link 4 is down */
    expect(0x2a, 0, 0x18, 0, "NVLink", 4, "PIX");
    expect(0x18, 0, 0x3b, 1, "NVSwitch", 2, "SYS"); /* the narrower side: 2 of 3 */
    expect(0x3b, 1, 0x18, 0, "NVSwitch", 2, "SYS");
    expect(0x2a, 0, 0x3b, 1, "PCIe", 0, "NODE");
    mgpu_device_info a = gpu_at(0, 0x18), stranger = gpu_at(0, 0x77);
    mgpu_link_info info = {0};
    CHECK(mgpu_nvml_link(&a, &stranger, &info) == MGPU_ERR_UNSUPPORTED &&
              strstr(info.why, "0000:77:00") != NULL,
          "a GPU NVML does not know: unsupported, named (%s)", info.why);
    char version[32] = "", small[8] = "";
    CHECK(mgpu_nvml_driver_version(version, sizeof version) == MGPU_OK &&
              strcmp(version, "999.99.1-fake") == 0,
          "the driver's version, as NVML tells it (%s)", version);
    CHECK(mgpu_nvml_driver_version(small, sizeof small) == MGPU_OK && strcmp(small, "999.99.") == 0,
          "a short buffer: the version cut to fit (%s)", small);
}

static void no_driver(void)
{
    mgpu_device_info a = gpu_at(0, 0x18), b = gpu_at(0, 0x2a);
    mgpu_link_info info = {0};
    CHECK(mgpu_nvml_link(&a, &b, &info) == MGPU_ERR_UNSUPPORTED &&
              strstr(info.why, "nvmlInit_v2: Driver Not Loaded") != NULL,
          "nvmlInit fails: unsupported, and NVML's words (%s)", info.why);
    char version[32] = "untouched";
    CHECK(mgpu_nvml_driver_version(version, sizeof version) == MGPU_ERR_UNSUPPORTED &&
              strcmp(version, "untouched") == 0,
          "nvmlInit fails: no driver version");
    host_backend();
}

int main(int argc, char **argv)
{
    const char *world = argc > 1 ? argv[1] : "absent";
#ifndef MGPU_HAVE_NVML
    if (strcmp(world, "absent") != 0)
        check_skip("this build does not load NVML");
#endif
    if (strcmp(world, "fake") == 0)
        fake();
    else if (strcmp(world, "no-driver") == 0)
        no_driver();
    else
        absent();
    return check_done();
}
