/* test-trace.c - the NVTX ranges (lib/trace.h) cost nothing without a
 * profiler.  With NVTX_INJECTION64_PATH naming no library, as when no tool
 * is attached, every call returns at once and nothing records; in a build
 * without NVTX (configure's summary says which) they are empty inline
 * functions.  Either way the calls compile as the strategies make them. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>

#include "check.h"
#include "mgpu.h"
#include "mgpu/measurement.h"
#include "mgpu/graph.h"
#include "trace.h"

#define PAIRS 1000000

int main(void)
{
#ifdef MGPU_HAVE_NVTX
    printf("# built with NVTX\n");
#else
    printf("# built without NVTX: the calls are empty\n");
#endif
    /* Whatever the environment of the tests: a tool that cannot be loaded. */
    setenv("NVTX_INJECTION64_PATH", "/nonexistent/mgpu-no-tool.so", 1);
    CHECK(mgpu_init(MGPU_BACKEND_HOST, 2) == MGPU_OK, "host backend");
    CHECK(!mgpu_trace_recording(), "no tool loaded: nothing records");

    /* Every kind, on devices in and out of range, nested as the strategies
     * nest them, and every kind of replay. */
    const int devices[] = {MGPU_TRACE_ALL, 0, 1, MGPU_MAX_DEVICES - 1, MGPU_MAX_DEVICES};
    for (size_t d = 0; d < sizeof devices / sizeof devices[0]; d++) {
        mgpu_trace_begin(MGPU_TRACE_STEP, devices[d], 7);
        for (int k = MGPU_TRACE_SEND; k < MGPU_TRACE_KINDS; k++) {
            mgpu_trace_begin((mgpu_trace_kind) k, devices[d], 7);
            mgpu_trace_end();
        }
        mgpu_trace_end();
    }
    const long long replays[] = {0, 1, MGPU_GRAPH_STEPS, MGPU_GRAPH_STEPS + 1};
    for (size_t r = 0; r < sizeof replays / sizeof replays[0]; r++) {
        mgpu_trace_replay_begin(1, replays[r]);
        mgpu_trace_end();
    }
    CHECK(!mgpu_trace_recording(), "every kind of range opened and closed, still nothing records");

    /* A step's ranges against a step of at least microseconds: a range
     * must cost well under one, sanitizers included. */
    double start = mgpu_now();
    for (long long i = 0; i < PAIRS; i++) {
        mgpu_trace_begin(MGPU_TRACE_COMPUTE, (int) (i & 3), i);
        mgpu_trace_end();
    }
    double each = (mgpu_now() - start) / PAIRS;
    CHECK(each < 1e-6, "a range costs %.1f ns without a profiler (under 1000)", each * 1e9);
    return check_done();
}
