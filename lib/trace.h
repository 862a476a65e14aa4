/* trace.h - NVTX ranges that make an Nsight Systems timeline read like the
 * strategy: "step dev 1", "exchange send dev 1", "compute dev 1", "graph
 * replay 32 steps", in the domain "mgpu", the step as each range's payload.
 *
 * Where configure found no NVTX (m4/mgpu_nvtx.m4), or was told --without-nvtx
 * (a build for the host backend alone has no CUDA toolkit to find it in), the
 * calls are empty inline functions.  Not part of the installed interface. */
#ifndef MGPU_TRACE_H
#define MGPU_TRACE_H

typedef enum mgpu_trace_kind {
    MGPU_TRACE_STEP,     /* a step of a device's part, or of all of them */
    MGPU_TRACE_SEND,     /* a part's edge rows on their way to the neighbours */
    MGPU_TRACE_RECV,     /* a part's halos completed */
    MGPU_TRACE_EXCHANGE, /* both, where a strategy moves halos itself (MPI) */
    MGPU_TRACE_COMPUTE,  /* a part's kernel, or some of its rows */
    MGPU_TRACE_KINDS
} mgpu_trace_kind;

/* DEVICE for a range that covers every device (one thread issues them all). */
#define MGPU_TRACE_ALL (-1)

#ifdef MGPU_HAVE_NVTX
/* Ask NVTX whether a tool is attached, once; mgpu_init does.  Until then,
 * and without a tool, the calls below cost a load and a branch, inline. */
void mgpu_trace_init(void);
/* Set by mgpu_trace_init when a tool (Nsight Systems) records the ranges. */
extern int mgpu_trace_tool;
void mgpu_trace_push(mgpu_trace_kind kind, int device, long long step);
void mgpu_trace_push_replay(long long first, long long steps);
void mgpu_trace_pop(void);

/* Open a range of KIND on DEVICE (or MGPU_TRACE_ALL) at STEP, on this thread;
 * mgpu_trace_end closes the innermost one. */
static inline void mgpu_trace_begin(mgpu_trace_kind kind, int device, long long step)
{
    if (mgpu_trace_tool)
        mgpu_trace_push(kind, device, step);
}
/* A graph replay of STEPS steps from FIRST. */
static inline void mgpu_trace_replay_begin(long long first, long long steps)
{
    if (mgpu_trace_tool)
        mgpu_trace_push_replay(first, steps);
}
static inline void mgpu_trace_end(void)
{
    if (mgpu_trace_tool)
        mgpu_trace_pop();
}
/* 1 when a tool records the ranges, 0 when they cost nothing. */
static inline int mgpu_trace_recording(void) { return mgpu_trace_tool; }
#else
static inline void mgpu_trace_init(void) {}
static inline void mgpu_trace_begin(mgpu_trace_kind kind, int device, long long step)
{
    (void) kind;
    (void) device;
    (void) step;
}
static inline void mgpu_trace_replay_begin(long long first, long long steps)
{
    (void) first;
    (void) steps;
}
static inline void mgpu_trace_end(void) {}
static inline int mgpu_trace_recording(void) { return 0; }
#endif

#endif /* MGPU_TRACE_H */
