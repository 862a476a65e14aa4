/* test-peer.c - peer access and peer copies on the host backend: every pair
 * may reach each other unless a test says otherwise, enabling what cannot
 * be is refused, and the copies (plain, on a stream, staged) deliver every
 * byte.  test-peer-fallback.c has the choice between the peer and staged
 * paths. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "check.h"
#include "mgpu.h"
#include "mgpu-test.h"

enum { N = 1000 };

static void fill(unsigned char *p, int seed)
{
    for (int i = 0; i < N; i++)
        p[i] = (unsigned char) (i * 13 + seed);
}

static void test_access(void)
{
    int can = -1;
    CHECK(mgpu_peer_can_access(0, 1, &can) == MGPU_OK && can == 1, "host devices reach each other");
    mgpu_host_peer_set(0, 1, 0);
    CHECK(mgpu_peer_can_access(0, 1, &can) == MGPU_OK && can == 0,
          "unless a test says they cannot");
    CHECK(mgpu_peer_can_access(1, 0, &can) == MGPU_OK && can == 1, "which is one direction only");
    CHECK(mgpu_peer_enable(0, 1) == MGPU_ERR_UNSUPPORTED,
          "enabling access that cannot be is refused: %s", mgpu_last_error());
    CHECK(mgpu_peer_enable(1, 0) == MGPU_OK && mgpu_peer_enable(1, 0) == MGPU_OK,
          "enabling access that can be, twice");
    CHECK(mgpu_peer_can_access(1, 1, &can) == MGPU_OK && can == 1 &&
              mgpu_peer_enable(0, 0) == MGPU_OK,
          "a device reaches itself");
    mgpu_host_peer_set(0, 1, 1);
    CHECK(mgpu_peer_can_access(0, 2, &can) == MGPU_ERR_USAGE,
          "a device that does not exist is refused");
}

static void test_all(void)
{
    int all = -1, pair[2] = {-1, -1};
    CHECK(mgpu_peer_all(2, &all, pair) == MGPU_OK && all == 1 && pair[0] == -1,
          "every pair reaches the other, and no pair is named");
    mgpu_host_peer_set(1, 0, 0);
    CHECK(mgpu_peer_all(2, &all, pair) == MGPU_OK && all == 0 && pair[0] == 1 && pair[1] == 0,
          "one direction missing names its device and peer: %d, %d", pair[0], pair[1]);
    CHECK(mgpu_peer_all(1, &all, NULL) == MGPU_OK && all == 1, "one device alone reaches itself");
    mgpu_host_peer_set(1, 0, 1);
    CHECK(mgpu_peer_all(3, &all, pair) == MGPU_ERR_USAGE,
          "a device that does not exist is refused");
}

static void test_copies(void)
{
    unsigned char *a, *b, *staging, pattern[N], back[N];
    mgpu_stream *s;
    CHECK(mgpu_malloc(0, N, (void **) &a) == MGPU_OK &&
              mgpu_malloc(1, N, (void **) &b) == MGPU_OK &&
              mgpu_host_alloc(N, MGPU_HOST_PINNED, (void **) &staging) == MGPU_OK &&
              mgpu_stream_create(0, 0, &s) == MGPU_OK,
          "buffers on devices 0 and 1, a staging buffer and a stream");
    fill(pattern, 1);
    mgpu_memcpy(a, pattern, N);
    CHECK(mgpu_copy_peer(b, 1, a, 0, N) == MGPU_OK && mgpu_memcpy(back, b, N) == MGPU_OK &&
              memcmp(back, pattern, N) == 0,
          "a peer copy delivers every byte");
    fill(pattern, 2);
    mgpu_memcpy(b, pattern, N);
    CHECK(mgpu_copy_peer_async(a, 0, b, 1, N, s) == MGPU_OK &&
              mgpu_stream_synchronize(s) == MGPU_OK && mgpu_memcpy(back, a, N) == MGPU_OK &&
              memcmp(back, pattern, N) == 0,
          "a peer copy on a stream, the other way");
    fill(pattern, 3);
    mgpu_memcpy(a, pattern, N);
    mgpu_memset(1, b, 0, N);
    CHECK(mgpu_copy_staged(b, 1, a, 0, N, staging) == MGPU_OK &&
              mgpu_memcpy(back, b, N) == MGPU_OK && memcmp(back, pattern, N) == 0 &&
              memcmp(staging, pattern, N) == 0,
          "a staged copy passes through the staging buffer and delivers every byte");
    mgpu_stream_destroy(s);
    mgpu_free(0, a);
    mgpu_free(1, b);
    mgpu_host_free(staging);
}

int main(void)
{
    CHECK(mgpu_init(MGPU_BACKEND_HOST, 2) == MGPU_OK, "host backend with 2 devices");
    test_access();
    test_all();
    test_copies();
    return check_done();
}
