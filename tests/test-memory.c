/* test-memory.c - device and host buffers on the host backend: aligned as
 * cudaMalloc's are, no larger than the machine's memory, on a device that
 * exists; copies and memsets done on return; mapped memory seen by the
 * devices at its own address. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdint.h>
#include <string.h>

#include "check.h"
#include "mgpu.h"
#include "mgpu/processes.h"

static void test_device_buffers(void)
{
    void *a = NULL, *b = NULL;
    CHECK(mgpu_malloc(0, 1000, &a) == MGPU_OK && mgpu_malloc(1, 1, &b) == MGPU_OK,
          "buffers on devices 0 and 1");
    CHECK(((uintptr_t) a % 256) == 0 && ((uintptr_t) b % 256) == 0,
          "aligned to 256 bytes, as cudaMalloc's are");
    CHECK(mgpu_memset(0, a, 0xab, 1000) == MGPU_OK, "a memset");
    const unsigned char *bytes = a;
    int all = 1;
    for (int i = 0; i < 1000; i++)
        all &= bytes[i] == 0xab;
    CHECK(all, "sets every byte");
    CHECK(mgpu_memcpy(b, a, 1) == MGPU_OK && *(unsigned char *) b == 0xab,
          "a copy between devices is done on return");
    /* Overlapping copies behave as memmove. */
    unsigned char line[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    mgpu_memcpy(line + 2, line, 4);
    CHECK(memcmp(line, (unsigned char[]){1, 2, 1, 2, 3, 4, 7, 8}, 8) == 0,
          "an overlapping copy moves the bytes as memmove does");
    mgpu_free(0, a);
    mgpu_free(1, b);
    mgpu_free(0, NULL);

    void *p = &p;
    CHECK(mgpu_malloc(2, 16, &p) == MGPU_ERR_USAGE && p == NULL,
          "a buffer on device 2 of 2 is refused, no pointer: %s", mgpu_last_error());
    p = &p;
    mgpu_status status = mgpu_malloc(0, SIZE_MAX / 2, &p);
    CHECK(status == MGPU_ERR_NOMEM && p == NULL && strstr(mgpu_last_error(), "bytes") &&
              strstr(mgpu_last_error(), "device 0"),
          "more than the machine's memory fails at once, naming bytes and device: %s",
          mgpu_last_error());
}

static void test_host_buffers(void)
{
    void *pinned = NULL, *mapped = NULL, *seen = NULL;
    CHECK(mgpu_host_alloc(100, MGPU_HOST_PINNED, &pinned) == MGPU_OK && pinned &&
              ((uintptr_t) pinned % 256) == 0,
          "pinned host memory, aligned");
    CHECK(mgpu_host_alloc(100, MGPU_HOST_MAPPED, &mapped) == MGPU_OK &&
              mgpu_host_device_pointer(mapped, &seen) == MGPU_OK && seen == mapped,
          "mapped host memory: the devices see it at its own address");
    CHECK(mgpu_host_register(pinned, 100) == MGPU_OK, "registering host memory");
    mgpu_host_unregister(pinned);
    mgpu_host_free(pinned);
    mgpu_host_free(mapped);
    mgpu_host_free(NULL);
}

int main(void)
{
    CHECK(mgpu_init(MGPU_BACKEND_HOST, 2) == MGPU_OK, "host backend with 2 devices");
    test_device_buffers();
    test_host_buffers();
    return check_done();
}
