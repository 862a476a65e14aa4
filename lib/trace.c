/* trace.c - NVTX ranges (trace.h), built where configure found NVTX 3.
 *
 * No cost without a profiler: NVTX 3 loads the tool named by
 * NVTX_INJECTION64_PATH (Nsight Systems sets it) at the first call, and
 * without one nvtxDomainCreateA gives NULL.  That NULL is the one cheap
 * "is a tool attached" answer NVTX has; mgpu_init asks once, and every
 * range then costs, inline (trace.h), a load and a branch on the answer: no
 * call, no attributes filled, no lock.  With a tool, no name is formatted
 * per step either: each range's name is a string registered once (per kind
 * and device), and the step rides along as the range's payload, which the
 * timeline shows beside the name. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stdio.h>

#include <nvtx3/nvToolsExt.h>

#include "mgpu-private.h"
#include "trace.h"

static const char *const kind_names[MGPU_TRACE_KINDS] = {
    [MGPU_TRACE_STEP] = "step",          [MGPU_TRACE_SEND] = "exchange send",
    [MGPU_TRACE_RECV] = "exchange recv", [MGPU_TRACE_EXCHANGE] = "exchange",
    [MGPU_TRACE_COMPUTE] = "compute",
};

int mgpu_trace_tool;

/* Names by kind and device; index MGPU_MAX_DEVICES: every device. */
static struct {
    nvtxDomainHandle_t domain; /* NULL: no tool, nothing to do */
    nvtxStringHandle_t names[MGPU_TRACE_KINDS][MGPU_MAX_DEVICES + 1];
    nvtxStringHandle_t replay[MGPU_GRAPH_STEPS + 1]; /* by steps; 0: other counts */
} trace;
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;

static void create_domain(void)
{
    trace.domain = nvtxDomainCreateA("mgpu");
    if (!trace.domain)
        return;
    mgpu_trace_tool = 1;
    char name[64];
    for (int d = 0; d < MGPU_MAX_DEVICES; d++) {
        snprintf(name, sizeof name, "dev %d", d);
        nvtxDomainNameCategoryA(trace.domain, (uint32_t) d + 1, name);
    }
    for (int k = 0; k < MGPU_TRACE_KINDS; k++) {
        for (int d = 0; d < MGPU_MAX_DEVICES; d++) {
            snprintf(name, sizeof name, "%s dev %d", kind_names[k], d);
            trace.names[k][d] = nvtxDomainRegisterStringA(trace.domain, name);
        }
        trace.names[k][MGPU_MAX_DEVICES] = nvtxDomainRegisterStringA(trace.domain, kind_names[k]);
    }
    trace.replay[0] = nvtxDomainRegisterStringA(trace.domain, "graph replay");
    for (int s = 1; s <= MGPU_GRAPH_STEPS; s++) {
        snprintf(name, sizeof name, "graph replay %d steps", s);
        trace.replay[s] = nvtxDomainRegisterStringA(trace.domain, name);
    }
}

/* Before any worker thread starts: they only read what it sets. */
void mgpu_trace_init(void) { pthread_once(&trace_once, create_domain); }

/* Push a range named NAME, STEP as its payload, in category CATEGORY (the
 * device + 1, 0: none), which a timeline can colour or filter by. */
static void push(nvtxStringHandle_t name, uint32_t category, long long step)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = category;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = name;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = step;
    nvtxDomainRangePushEx(trace.domain, &a);
}

void mgpu_trace_push(mgpu_trace_kind kind, int device, long long step)
{
    int d = device >= 0 && device < MGPU_MAX_DEVICES ? device : MGPU_MAX_DEVICES;
    push(trace.names[kind][d], d < MGPU_MAX_DEVICES ? (uint32_t) d + 1 : 0, step);
}

void mgpu_trace_push_replay(long long first, long long steps)
{
    push(trace.replay[steps > 0 && steps <= MGPU_GRAPH_STEPS ? steps : 0], 0, first);
}

void mgpu_trace_pop(void) { nvtxDomainRangePop(trace.domain); }
