/* mgpu-test.h - hooks that only the tests call, to reach paths a machine
 * does not offer by itself; implemented beside what they steer
 * (lib/peer.c, lib/memory.c).
 * Not installed.
 */
#ifndef MGPU_TEST_H
#define MGPU_TEST_H

#include "mgpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The host backend normally lets every pair access each other; tests turn
 * a pair off to exercise the fallback. */
void mgpu_host_peer_set(int device, int peer, int can);
/* Likewise every host device has concurrent managed access, unless a test
 * turns it off (lib/memory.c). */
void mgpu_host_managed_set(int device, int concurrent);

#ifdef __cplusplus
}
#endif

#endif /* MGPU_TEST_H */
