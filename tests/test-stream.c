/* test-stream.c - streams, events and signals on the host backend: a
 * stream belongs to its device, work issued on it is done when the call
 * returns, events carry the time they were recorded, a device that does not
 * exist is refused, and a signal wait that is not met (it would never be)
 * is refused. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "check.h"
#include "mgpu.h"
#include "mgpu/measurement.h"

static void test_streams(void)
{
    mgpu_stream *s = NULL;
    CHECK(mgpu_stream_create(1, 0, &s) == MGPU_OK && s && mgpu_stream_device(s) == 1,
          "a stream of device 1 says so");
    int least = 5, greatest = 5;
    CHECK(mgpu_stream_priority_range(1, &least, &greatest) == MGPU_OK && least == 0 &&
              greatest == 0,
          "the host backend has one priority, 0");

    /* Host streams run eagerly: the copy is done when the call returns. */
    char src[64], dst[64];
    for (int i = 0; i < 64; i++)
        src[i] = (char) (i + 1);
    memset(dst, 0, sizeof dst);
    CHECK(mgpu_memcpy_async(dst, src, sizeof src, s) == MGPU_OK &&
              memcmp(dst, src, sizeof src) == 0,
          "a copy issued on a host stream is done on return");
    CHECK(mgpu_stream_synchronize(s) == MGPU_OK, "synchronising the stream");
    mgpu_stream_destroy(s);
    mgpu_stream_destroy(NULL);

    s = (mgpu_stream *) &s;
    CHECK(mgpu_stream_create(2, 0, &s) == MGPU_ERR_USAGE && s == NULL,
          "a stream of device 2 of 2 is refused, no stream: %s", mgpu_last_error());
    CHECK(mgpu_stream_create(-1, 0, &s) == MGPU_ERR_USAGE && s == NULL,
          "a stream of device -1 is refused");
}

static void test_events(void)
{
    mgpu_stream *s = NULL;
    mgpu_event *start = NULL, *stop = NULL;
    CHECK(mgpu_stream_create(0, 0, &s) == MGPU_OK &&
              mgpu_event_create(0, MGPU_EVENT_TIMING, &start) == MGPU_OK &&
              mgpu_event_create(1, MGPU_EVENT_TIMING, &stop) == MGPU_OK,
          "a stream and two timing events");
    double before = mgpu_now();
    CHECK(mgpu_event_record(start, s) == MGPU_OK, "recording the start");
    while (mgpu_now() - before < 0.02) {
    }
    CHECK(mgpu_event_record(stop, s) == MGPU_OK, "recording the stop");
    double after = mgpu_now(), seconds = -1.0;
    CHECK(mgpu_event_elapsed(start, stop, &seconds) == MGPU_OK && seconds >= 0.019 &&
              seconds <= after - before,
          "the time between the events is the time between the records: %g s", seconds);
    CHECK(mgpu_event_elapsed(stop, start, &seconds) == MGPU_OK && seconds < 0,
          "the other way round it is negative");
    CHECK(mgpu_stream_wait_event(s, stop) == MGPU_OK && mgpu_event_synchronize(stop) == MGPU_OK,
          "waiting for an event of another device");
    mgpu_event_destroy(start);
    mgpu_event_destroy(stop);
    mgpu_event_destroy(NULL);
    mgpu_stream_destroy(s);

    mgpu_event *e = (mgpu_event *) &e;
    CHECK(mgpu_event_create(7, 0, &e) == MGPU_ERR_USAGE && e == NULL,
          "an event of device 7 of 2 is refused, no event");
}

/* Signals on the host backend: a write stores at once; a wait that is met
 * passes, one that is not would wait forever and is refused. */
static void test_signals(void)
{
    mgpu_stream *s = NULL;
    CHECK(mgpu_stream_create(0, 0, &s) == MGPU_OK, "a stream of device 0");
    uint32_t signal = 0;
    CHECK(mgpu_stream_write_signal(s, &signal, 7) == MGPU_OK && signal == 7, "a write stores 7");
    CHECK(mgpu_stream_wait_signal(s, &signal, 7) == MGPU_OK &&
              mgpu_stream_wait_signal(s, &signal, 3) == MGPU_OK,
          "waits for 7 and for 3 are met by 7");
    CHECK(mgpu_stream_wait_signal(s, &signal, 8) == MGPU_ERR_USAGE, "a wait for 8 is refused: %s",
          mgpu_last_error());
    CHECK(mgpu_stream_write_signal(s, &signal, 2) == MGPU_OK &&
              mgpu_stream_wait_signal(s, &signal, UINT32_MAX - 1) == MGPU_OK,
          "the comparison is cyclic: 2 comes after %u", (unsigned) (UINT32_MAX - 1));
    CHECK(mgpu_stream_wait_signal(s, &signal, 0x80000001u) == MGPU_ERR_USAGE,
          "but a value 2^31 - 1 ahead of 2 is not met");
    mgpu_stream_destroy(s);
}

int main(void)
{
    CHECK(mgpu_init(MGPU_BACKEND_HOST, 2) == MGPU_OK, "host backend with 2 devices");
    test_streams();
    test_events();
    test_signals();
    return check_done();
}
