/* test-device.c - devices on the host backend: how many there are, what
 * each says of itself, and making one current, by setting it (each thread
 * its own) or by pushing and popping contexts, as single_thread/ does. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <string.h>

#include "check.h"
#include "mgpu.h"

static void test_info(void)
{
    int count = 0;
    CHECK(mgpu_device_count(&count) == MGPU_OK && count == 3, "3 host devices: %d", count);
    mgpu_device_info info;
    CHECK(mgpu_device_info_get(2, &info) == MGPU_OK && info.index == 2 &&
              strcmp(info.name, "host device 2") == 0 && info.total_bytes > 0 &&
              info.free_bytes == info.total_bytes,
          "device 2 names itself and has the machine's memory: %s", info.name);
    CHECK(mgpu_device_info_get(3, &info) == MGPU_ERR_USAGE, "device 3 of 3 does not exist");
    CHECK(mgpu_device_synchronize(1) == MGPU_OK && mgpu_device_synchronize(-1) == MGPU_ERR_USAGE,
          "synchronising a device, and refusing one that is not");
}

static void *other_thread(void *arg)
{
    int *seen = arg;
    mgpu_device_get(seen);
    return NULL;
}

static void test_current(void)
{
    int device = -1;
    CHECK(mgpu_device_get(&device) == MGPU_OK && device == 0, "device 0 is current first");
    CHECK(mgpu_device_set(2) == MGPU_OK && mgpu_device_get(&device) == MGPU_OK && device == 2,
          "setting device 2 makes it current");
    int seen = -1;
    pthread_t thread;
    pthread_create(&thread, NULL, other_thread, &seen);
    pthread_join(thread, NULL);
    CHECK(seen == 0, "another thread has its own current device: %d", seen);
    CHECK(mgpu_device_set(3) == MGPU_ERR_USAGE && mgpu_device_get(&device) == MGPU_OK &&
              device == 2,
          "setting a device that does not exist fails and changes nothing");
    mgpu_device_set(0);
}

static void test_contexts(void)
{
    int device = -1;
    CHECK(mgpu_context_push(1) == MGPU_OK && mgpu_context_push(2) == MGPU_OK &&
              mgpu_device_get(&device) == MGPU_OK && device == 2,
          "pushing contexts makes the last one current");
    CHECK(mgpu_context_pop() == MGPU_OK && mgpu_device_get(&device) == MGPU_OK && device == 1,
          "popping one brings back the one before");
    CHECK(mgpu_context_pop() == MGPU_OK && mgpu_device_get(&device) == MGPU_OK && device == 0,
          "and the device current before any push");
    CHECK(mgpu_context_pop() == MGPU_ERR_USAGE, "popping with none pushed is refused: %s",
          mgpu_last_error());
    CHECK(mgpu_context_push(5) == MGPU_ERR_USAGE, "pushing a device that does not exist too");
    int pushed = 0;
    while (pushed < 100 && mgpu_context_push(1) == MGPU_OK)
        pushed++;
    CHECK(pushed == 16, "the stack holds 16 contexts, then refuses: %d", pushed);
    while (pushed-- > 0)
        mgpu_context_pop();
    CHECK(mgpu_device_get(&device) == MGPU_OK && device == 0, "all popped, device 0 again");
}

int main(void)
{
    CHECK(mgpu_init(MGPU_BACKEND_HOST, 3) == MGPU_OK, "host backend with 3 devices");
    test_info();
    test_current();
    test_contexts();
    return check_done();
}
