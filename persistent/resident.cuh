// resident.cuh - what mgpu-persistent's two resident kernels (persistent-cuda.cu, one-row
// halos; deep-cuda.cu, --halo=K) meet their neighbours and the host through: counters in
// device memory that the neighbours write through peer pointers, the host's STOP word, and
// the one decision every block takes alike when a wait gives up.
#ifndef MGPU_PERSISTENT_RESIDENT_CUH
#define MGPU_PERSISTENT_RESIDENT_CUH

#include <cuda/atomic>

#include "persistent.h"

namespace {

typedef unsigned long long u64;
typedef cuda::atomic_ref<u64, cuda::thread_scope_system> system_word;
typedef cuda::atomic_ref<u64, cuda::thread_scope_device> device_word;

__device__ __forceinline__ u64 global_ns()
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ int stop_word(const persistent_part &d)
{
    return *static_cast<volatile int *>(&d.signal->stop);
}

// VALUE into the counters UP and DOWN of the neighbours (either NULL: none there).  The
// release store at system scope orders before it everything this thread has seen done:
// the halo writes its writers fenced at system scope, the reads that ended at the grid
// barrier before.
__device__ __forceinline__ void publish_to(u64 *up, u64 *down, u64 value)
{
    if (up)
        system_word(*up).store(value, cuda::memory_order_release);
    if (down)
        system_word(*down).store(value, cuda::memory_order_release);
}

// Wait until my counters ABOVE and BELOW (written by the part above and the part below; only
// those that WAIT_ABOVE and WAIT_BELOW name) reach WANT.  False when the run is stopped or the
// wait outlasts the limit, then stopped for every kernel with STEP and the part for the host's
// message.  The acquire loads order the caller's reads of the neighbours' memory after.
__device__ bool wait_sides(const persistent_part &d, u64 *above_word, bool wait_above,
                           u64 *below_word, bool wait_below, u64 want, long long step)
{
    system_word above(*above_word), below(*below_word);
    u64 since = 0;
    for (unsigned spins = 1;; spins++) {
        if ((!wait_above || above.load(cuda::memory_order_acquire) >= want) &&
            (!wait_below || below.load(cuda::memory_order_acquire) >= want))
            return true;
        // The stop word is in host memory, a bus round trip away: looked at now and then.
        if (spins % 256 == 0) {
            if (stop_word(d))
                return false;
            const u64 now = global_ns();
            if (since == 0) {
                since = now;
            } else if (now - since > static_cast<u64>(d.wait_limit_ns)) {
                volatile persistent_signal *signal = d.signal;
                signal->part = d.part;
                signal->step = step;
                __threadfence_system();
                signal->stop = STOP_TIMEOUT;
                __threadfence_system();
                return false;
            }
        }
    }
}

// The same for both counters of the parts that are my neighbours (D.wait_above, D.wait_below).
__device__ __forceinline__ bool wait_words(const persistent_part &d, u64 *above_word,
                                           u64 *below_word, u64 want, long long step)
{
    return wait_sides(d, above_word, d.wait_above, below_word, d.wait_below, want, step);
}

// MGPU_INJECT_DELAY's slow part: sleep, at the start and after each wait for the neighbours
// (before reading what they gave, or going on), so that at every exchange they run ahead of
// this part and only the counters keep them from overwriting what it has yet to read, or
// from reading what it has yet to write (a test hook; doc/persistent.md).  UNIT (a block or
// warp) sleeps D.delay_ns if odd, half as long if even: the part's own blocks then reach the
// barrier or count before its next publish at different times, which that barrier or count
// must wait out.  The STOP word (host memory) is looked at now and then, as wait_words does:
// false when the run is stopped meanwhile, and the caller gives up as after a failed wait.
__device__ bool dawdle(const persistent_part &d, long long unit)
{
    if (d.delay_ns <= 0)
        return true;
    const u64 until = global_ns() + static_cast<u64>(unit % 2 ? d.delay_ns : d.delay_ns / 2);
    for (unsigned naps = 1; global_ns() < until; naps++) {
        if (naps % 64 == 0 && stop_word(d))
            return false;
        __nanosleep(1000);
    }
    return true;
}

// The slow part's sleep before it starts: each block's first thread, then the block.  Its
// first exchange (phase 0, cycle 0) waits for no one, so only this sleep makes it late.
__device__ __forceinline__ void dawdle_at_start(const persistent_part &d)
{
    if (d.delay_ns <= 0)
        return;
    if (threadIdx.x == 0)
        (void) dawdle(d, blockIdx.x); // stopped: the first wait sees the STOP word too
    __syncthreads();
}

// A wait gave up at STEP: every block leaves after the next grid barrier.
__device__ __forceinline__ void record_abort(const persistent_part &d, long long step)
{
    atomicCAS(&d.flags->abort_at, 0ull, static_cast<u64>(step) + 1);
}

// After the grid barrier that follows a wait of STEP: whether a wait gave up at STEP or
// before.  The caller makes every wait after that barrier record a later step than STEP, so
// that a record made while some block has yet to look is not taken for one made before the
// barrier: every block decides alike.
__device__ __forceinline__ bool aborted(const persistent_part &d, long long step)
{
    const u64 at = device_word(d.flags->abort_at).load(cuda::memory_order_relaxed);
    return at != 0 && at <= static_cast<u64>(step) + 1;
}

} // namespace

// A resident kernel, and deep-cuda.cu's for PART, whose rows take float4 loads.
typedef void (*persistent_kernel_fn)(persistent_part);
persistent_kernel_fn deep_kernel_of(const persistent_part *part);

#endif /* MGPU_PERSISTENT_RESIDENT_CUH */
