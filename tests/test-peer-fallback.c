/* test-peer-fallback.c - where two devices have no peer access, copies take
 * the staged path through pinned host memory and still deliver the bytes;
 * the stencil's auto exchange falls back to staged (with peer access, and
 * for one part alone, it takes direct), and `direct', which needs peer
 * access, is refused as a usage error.  Likewise `managed' on a device
 * without concurrent managed access, which auto never takes; and managed's
 * layout, in which no exchange copies anything. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "mgpu.h"
#include "mgpu-test.h"

static void copy_between(int can, mgpu_copy_path expected)
{
    enum { N = 4096 };
    void *a, *b, *staging;
    unsigned char pattern[N], back[N];
    for (int i = 0; i < N; i++)
        pattern[i] = (unsigned char) (i * 7 + 3);
    mgpu_host_peer_set(0, 1, can);
    mgpu_host_peer_set(1, 0, can);
    CHECK(mgpu_malloc(0, N, &a) == MGPU_OK && mgpu_malloc(1, N, &b) == MGPU_OK &&
              mgpu_host_alloc(N, MGPU_HOST_PINNED, &staging) == MGPU_OK,
          "buffers on devices 0 and 1 and a pinned staging buffer");
    mgpu_memcpy(a, pattern, N);
    mgpu_memset(1, b, 0, N);
    mgpu_copy_path path = (mgpu_copy_path) -1;
    mgpu_status status = mgpu_copy_device_to_device(b, 1, a, 0, N, staging, &path);
    mgpu_memcpy(back, b, N);
    CHECK(status == MGPU_OK && path == expected && memcmp(back, pattern, N) == 0,
          "peer access %s: the copy took the %s path and delivered every byte", can ? "on" : "off",
          expected == MGPU_PATH_PEER ? "peer" : "staged");
    CHECK(can || mgpu_copy_device_to_device(b, 1, a, 0, N, NULL, NULL) == MGPU_ERR_USAGE,
          "without peer access and without a staging buffer the copy is refused");
    mgpu_free(0, a);
    mgpu_free(1, b);
    mgpu_host_free(staging);
}

/* Managed memory's layout: one field a buffer, the parts' slabs one after
 * the other, so that a part's halo rows are its neighbours' own rows (no
 * copy can fill them) and the field is counted once, NY rows a buffer. */
static void managed_layout(mgpu_stencil_desc *desc)
{
    mgpu_stencil_desc three = *desc;
    three.kernel = MGPU_KERNEL_PATTERN2D;
    three.exchange = MGPU_EXCHANGE_MANAGED;
    three.nparts = 3;
    three.devices = (int[]){0, 1, 0};
    three.ny = 13;
    mgpu_stencil *st;
    mgpu_status created = mgpu_stencil_create(&st, &three);
    CHECK(created == MGPU_OK, "managed on 3 parts, devices 0, 1, 0: %s",
          created == MGPU_OK ? "made" : mgpu_last_error());
    bool shared = true;
    for (long long step = 0; step < 2; step++)
        for (int p = 0; p + 1 < three.nparts; p++)
            shared = shared &&
                     mgpu_stencil_row(st, p, step, MGPU_ROW_HALO_BOTTOM) ==
                         mgpu_stencil_row(st, p + 1, step, MGPU_ROW_FIRST) &&
                     mgpu_stencil_row(st, p + 1, step, MGPU_ROW_HALO_TOP) ==
                         mgpu_stencil_row(st, p, step, MGPU_ROW_LAST);
    CHECK(shared, "managed: each part's halo rows are its neighbours' edge rows, in both buffers");
    size_t pitch = (size_t) (mgpu_stencil_row(st, 1, 0, MGPU_ROW_FIRST) -
                             mgpu_stencil_row(st, 0, 0, MGPU_ROW_LAST));
    size_t device_bytes, host_bytes, want = 2 * (size_t) three.ny * pitch * sizeof(float);
    CHECK(mgpu_stencil_bytes(&three, &device_bytes, &host_bytes) == MGPU_OK &&
              device_bytes == want && host_bytes == 0,
          "managed: the field counted once, %zu bytes (want %zu), no host memory", device_bytes,
          want);
    mgpu_stencil_destroy(st);
}

int main(void)
{
    CHECK(mgpu_init(MGPU_BACKEND_HOST, 2) == MGPU_OK, "host backend with 2 devices");
    copy_between(1, MGPU_PATH_PEER);
    copy_between(0, MGPU_PATH_STAGED);

    /* Devices 0 and 1 cannot reach each other now. */
    mgpu_stencil_desc desc = {.nx = 40,
                              .ny = 12,
                              .kernel = MGPU_KERNEL_PATTERN2D,
                              .exchange = MGPU_EXCHANGE_AUTO,
                              .seed = 1,
                              .nparts = 2};
    mgpu_stencil *st;
    CHECK(mgpu_stencil_create(&st, &desc) == MGPU_OK &&
              mgpu_stencil_exchange_mode(st) == MGPU_EXCHANGE_STAGED,
          "auto exchange without peer access falls back to staged");
    mgpu_stencil_destroy(st);
    desc.exchange = MGPU_EXCHANGE_DIRECT;
    CHECK(mgpu_stencil_create(&st, &desc) == MGPU_ERR_USAGE && st == NULL,
          "direct exchange without peer access is a usage error: %s", mgpu_last_error());
    mgpu_host_peer_set(0, 1, 1);
    mgpu_host_peer_set(1, 0, 1);
    desc.exchange = MGPU_EXCHANGE_AUTO;
    CHECK(mgpu_stencil_create(&st, &desc) == MGPU_OK &&
              mgpu_stencil_exchange_mode(st) == MGPU_EXCHANGE_DIRECT,
          "auto exchange with peer access is direct");
    mgpu_stencil_destroy(st);

    /* One part is its own neighbour (jacobi's periodic rows): direct too,
     * whatever the other devices reach. */
    mgpu_host_peer_set(0, 1, 0);
    desc.kernel = MGPU_KERNEL_JACOBI;
    desc.nparts = 1;
    CHECK(mgpu_stencil_create(&st, &desc) == MGPU_OK &&
              mgpu_stencil_exchange_mode(st) == MGPU_EXCHANGE_DIRECT,
          "auto exchange of one part is direct");
    mgpu_stencil_destroy(st);

    /* Managed memory needs no peer access, but devices that use it at the
     * same time as each other; auto takes direct even where it could run. */
    desc.nparts = 2;
    desc.exchange = MGPU_EXCHANGE_MANAGED;
    CHECK(mgpu_stencil_create(&st, &desc) == MGPU_OK &&
              mgpu_stencil_exchange_mode(st) == MGPU_EXCHANGE_MANAGED,
          "managed without peer access, both devices with concurrent managed access");
    mgpu_stencil_destroy(st);
    mgpu_host_managed_set(1, 0);
    CHECK(mgpu_stencil_create(&st, &desc) == MGPU_ERR_USAGE && st == NULL &&
              strstr(mgpu_last_error(), "device 1") &&
              strstr(mgpu_last_error(), "cudaDevAttrConcurrentManagedAccess 0"),
          "managed on a device without concurrent managed access is a usage error: %s",
          mgpu_last_error());
    mgpu_host_managed_set(1, 1);
    managed_layout(&desc);
    mgpu_host_peer_set(0, 1, 1);
    desc.exchange = MGPU_EXCHANGE_AUTO;
    CHECK(mgpu_stencil_create(&st, &desc) == MGPU_OK &&
              mgpu_stencil_exchange_mode(st) == MGPU_EXCHANGE_DIRECT,
          "auto takes direct, never managed");
    mgpu_stencil_destroy(st);
    return check_done();
}
