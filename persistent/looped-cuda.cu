// looped-cuda.cu - mgpu-persistent's graph form (--form=graph): each device loops over the
// library's own launched kernels by itself.  The host launches one CUDA graph per device per
// run; the graph's conditional WHILE node replays a body of whole pairs of cycles (about 32
// steps) until the run is done, and the device's scheduler, not the host, launches every pass.
// The passes are the library's, so a step runs at the launched kernels' speed; what the
// resident kernels (persistent-cuda.cu, deep-cuda.cu) pay for holding every block for the
// whole run, too few loads in flight, is not paid here.  Between devices, instead of the host
// strategies' events, the kernels meet through the resident form's counters in device memory
// (resident.cuh).
//
// One-row halos.  A step is one kernel, the library's one-step kernel (stencil-warp.cuh's
// step_block and launch shape) whose blocks also store the first and last rows into the
// neighbours' halos of the buffer they write, through peer pointers, as --exchange=direct
// does.  Only the blocks of the first strip (row 1, which reads the top halo and fills the
// part above's bottom halo) and of the last (row ROWS) meet the neighbours; the others
// compute meanwhile:
//  - before its rows, such a block waits (one thread, acquire loads) until the neighbour on
//    its side has ended step t-1 (its word, from_above or from_below, in my memory, >= t);
//  - after them, every thread fences at system scope, and the block that ends its strip's
//    step last (a count of its strip's blocks) tells the neighbour with a system-scope
//    release store: t + 1.
// So for a part P and a neighbour N: read after write, P's step t reads its halo of buffer
// t%2, which N's step t-1 stored; write after read, P's step t stores into N's halo of
// buffer (t+1)%2, which N's step t-1 read.  Both are over when N's word reaches t.  The step
// number comes from the loop's count of iterations, which the body's last node advances.
// The halo row is read with the one-step kernel's plain loads, though N wrote it while this
// kernel may run: no block of the kernel touches those lines before its strip's acquire of
// N's word (the strip reads them only after it), so no stale copy can be in L1.
// Before step 0 an exchange node (below) fills the halos that the reset poisoned.
//
// Deep halos (--halo=K).  The passes are the library's (mgpu_stencil_compute, captured).  An
// exchange at step s = cK (cycle c) is one node of its own:
//  1. it tells the neighbours that this part has ended c cycles (from_above/from_below in
//     their memory, a system-scope release after a system-scope fence: every pass of the
//     cycles before it ended before this node began, in the graph's order);
//  2. it waits until both neighbours have ended c cycles;
//  3. it copies, through peer pointers, the neighbours' edge blocks into this part's halo
//     blocks (it pulls), then says so in the neighbours' pulled_by_* words.
// For a part P and a neighbour N at cycle c (B: the buffer holding step cK): read after
// write, P reads N's edge rows of B, which N's passes of cycle c-1 wrote and N said so (1)
// before P's wait (2) ends; write after read, P writes only its own memory, and N's passes
// overwrite the rows P pulls only at N's cycle c+1 (after N waited for P to end cycle c) or,
// with several passes a cycle (T < K), at N's second pass of cycle c, before which a wait node
// waits for P's pulled_by_* word (3).  The exchange-alone run pulls at every exchange.
//
// Inside a device the graph's edges order every kernel after the one before.  A wait that
// gives up (the host's STOP word, or --wait-limit) leaves its block's work undone; the loop
// ends at its next test and the host reports the stop.
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <atomic>
#include <stdint.h>

#include "mgpu-private.h"
#include "persistent.h"
#include "resident-wave.cuh"
#include "resident.cuh"
#include "stencil-warp.cuh"

// Conditional nodes, and capture into a graph that is already there, came with CUDA 12.3.
#if CUDART_VERSION >= 12030

namespace {

// The steps of the loop's body: whole pairs of cycles (the buffers and the exchanges' parity
// repeat after two), about this many.  More steps a body make the loop's own node rarer.
const long long body_steps = 32;

// What one exchange node moves: the halo block at TO[side] from the neighbour's edge block at
// FROM[side] (NULL: no neighbour on that side), FLOATS floats each.
struct exchange_args {
    float *to[2];
    const float *from[2];
    long long floats;
    long long base, per; // its step, for the message of a wait that gives up: see step_of
};

__device__ __forceinline__ u64 read_word(const u64 *word)
{
    return *static_cast<const volatile u64 *>(word);
}

// The step of a node captured at step BASE: inside the loop's body, whose iterations so far
// the body's last node counts, BASE + PER x that count (PER, the body's steps; 0 outside it).
__device__ __forceinline__ long long step_of(const persistent_part &d, long long base,
                                             long long per)
{
    return base + static_cast<long long>(read_word(&d.flags->loops)) * per;
}

// One more of the blocks counted in WORD has ended its work (fenced at system scope before):
// the count before it.  Acquire and release, as the resident kernels count, so that the
// block that counts last sees every block's work done before it publishes.
__device__ __forceinline__ u64 arrive(u64 *word)
{
    return device_word(*word).fetch_add(1ull, cuda::memory_order_acq_rel);
}

// Copy the pulled blocks, one side after the other, float4 by float4 across the grid (rows
// start 128-byte aligned: the library's pitch).
__device__ __forceinline__ void pull_blocks(const exchange_args &a)
{
    for (int side = 0; side < 2; side++)
        if (a.to[side])
            copy_floats<4>(a.to[side], a.from[side], a.floats);
}

// One exchange of deep halos, or of one-row halos before step 0 (see the top).  The cycle
// count is this part's own word, which the last block of each exchange advances: every block
// of the next exchange reads it after this kernel ends.  A part whose only neighbour is itself
// (jacobi on one device) meets no one: it copies, and the graph's order does the rest.
__global__ void exchange_kernel(persistent_part d, exchange_args a)
{
    if (!d.wait_above && !d.wait_below) {
        pull_blocks(a);
        return;
    }
    __shared__ bool go;
    const u64 c = read_word(&d.flags->cycle);
    if (threadIdx.x == 0) {
        if (blockIdx.x == 0) {
            __threadfence_system();
            publish_to(d.up_flag, d.down_flag, c);
        }
        go = wait_words(d, &d.flags->from_above, &d.flags->from_below, c,
                        step_of(d, a.base, a.per)) &&
             dawdle(d, blockIdx.x);
    }
    __syncthreads();
    if (go)
        pull_blocks(a);
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0 && arrive(&d.flags->arrivals) == gridDim.x - 1) {
        // The last block: every block's copies are done.
        d.flags->arrivals = 0;
        d.flags->cycle = c + 1;
        publish_to(d.up_pulled, d.down_pulled, c + 1);
    }
}

// One step of one-row halos (see the top): the one-step kernel's rows [1, ROWS + 1), the
// blocks of the first and last strips meeting the neighbours.
struct step_args {
    const float *in;
    float *out;
    long long nx, pitch, rows, strip;
    edge_rows edges;     // the neighbours' halo rows of OUT's buffer (NULL: none)
    long long base, per; // the step: BASE + PER x the loop's iterations so far
};

template <mgpu_kernel K, int VEC, bool RAGGED>
__global__ void __launch_bounds__(stencil_block_max) pushing_step(persistent_part d, step_args a)
{
    // The edge strips first: the blocks of the first two rows of the grid, which the device
    // starts first, so that the neighbours' next steps find the rows there early (with the
    // last strip in the last wave, a step took 277.3 us at 16384^2 on 2 H200s, 270.7 with them
    // first).
    const long long last = gridDim.y - 1;
    const long long strip = blockIdx.y == 0 ? 0 : blockIdx.y == 1 ? last : blockIdx.y - 1;
    const bool top = strip == 0, bottom = strip == last;
    if (!top && !bottom) {
        step_block<K, VEC, RAGGED>(a.in, a.out, a.nx, a.pitch, 1, a.rows + 1, a.strip, a.edges,
                                   strip);
        return;
    }
    __shared__ bool go;
    const long long t = step_of(d, a.base, a.per);
    if (threadIdx.x == 0)
        go = wait_sides(d, &d.flags->from_above, top && d.wait_above, &d.flags->from_below,
                        bottom && d.wait_below, static_cast<u64>(t), t) &&
             dawdle(d, blockIdx.x);
    __syncthreads();
    if (!go)
        return;
    step_block<K, VEC, RAGGED>(a.in, a.out, a.nx, a.pitch, 1, a.rows + 1, a.strip, a.edges, strip);
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        const u64 strip_blocks = gridDim.x;
        if (top && d.up_flag && arrive(&d.flags->top_arrivals) % strip_blocks == strip_blocks - 1)
            publish_to(d.up_flag, NULL, static_cast<u64>(t) + 1);
        if (bottom && d.down_flag &&
            arrive(&d.flags->bottom_arrivals) % strip_blocks == strip_blocks - 1)
            publish_to(NULL, d.down_flag, static_cast<u64>(t) + 1);
    }
}

// Before the second pass of a cycle that has several (T < K): wait until both neighbours
// have pulled this cycle's edge rows, which the pass overwrites.
__global__ void pulled_kernel(persistent_part d, long long base, long long per)
{
    const u64 c = read_word(&d.flags->cycle); // the cycle's exchange advanced it to c + 1
    if (wait_words(d, &d.flags->pulled_by_above, &d.flags->pulled_by_below, c,
                   step_of(d, base, per)))
        (void) dawdle(d, 1);
}

// The body's last node: whether the loop runs again.  Not once the host or a wait has
// stopped the run: the graph then ends at once, its last steps unmade, and the host reports.
__global__ void loop_kernel(persistent_part d, cudaGraphConditionalHandle loop, u64 iterations)
{
    const u64 done = ++d.flags->loops;
    cudaGraphSetConditional(loop, done < iterations && !stop_word(d) ? 1u : 0u);
}

// ------------------------------------------------------------- the graph's calls

// CUDA 13 gave these two calls the edge data of their _v2/_v3 forms of 12.3 to 12.9; plain
// edges here.
cudaError_t capture_ends(cudaStream_t s, const cudaGraphNode_t **deps, size_t *n)
{
    cudaStreamCaptureStatus state;
#if CUDART_VERSION >= 13000
    return cudaStreamGetCaptureInfo(s, &state, NULL, NULL, deps, NULL, n);
#else
    return cudaStreamGetCaptureInfo(s, &state, NULL, NULL, deps, n);
#endif
}

cudaError_t add_node(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *after,
                     size_t n_after, cudaGraphNodeParams *params)
{
#if CUDART_VERSION >= 13000
    return cudaGraphAddNode(node, graph, after, NULL, n_after, params);
#else
    return cudaGraphAddNode(node, graph, after, n_after, params);
#endif
}

// ------------------------------------------------------------- issuing the steps

struct issuer {
    mgpu_stencil *st;
    const persistent_part *d;
    cudaStream_t s;
    int device;
    int pull_blocks; // the exchange's grid
    long long per;   // steps a loop iteration: 0 outside the loop's body
};

// The exchange at STEP, where there is one to make: deep halos at every cycle, one-row halos
// before step 0 (after it the steps push their rows), and the exchange-alone run at every
// exchange.  A part with no neighbour (pattern2d on one device) makes none.
mgpu_status issue_exchange(const issuer &is, long long step)
{
    const persistent_part *d = is.d;
    const int p = d->part;
    const int from[2] = {mgpu_stencil_above(is.st, p), mgpu_stencil_below(is.st, p)};
    if ((from[0] < 0 && from[1] < 0) || (d->halo == 1 && d->compute && step > 0))
        return MGPU_OK;
    exchange_args a = {};
    a.floats = static_cast<long long>(mgpu_stencil_block_bytes(is.st) / sizeof(float));
    a.base = step;
    a.per = is.per;
    const mgpu_row halo[2] = {MGPU_ROW_HALO_TOP, MGPU_ROW_HALO_BOTTOM};
    const mgpu_row edge[2] = {MGPU_ROW_LAST, MGPU_ROW_FIRST};
    for (int side = 0; side < 2; side++)
        if (from[side] >= 0) {
            a.to[side] = mgpu_stencil_block(is.st, p, step, halo[side]);
            a.from[side] = mgpu_stencil_block(is.st, from[side], step, edge[side]);
        }
    exchange_kernel<<<is.pull_blocks, 256, 0, is.s>>>(*d, a);
    MGPU_CUDA(cudaGetLastError(), is.device);
    return MGPU_OK;
}

// The shape of the one-step kernel's launch, asked once a device: the grid of every step.
template <mgpu_kernel K, int VEC, bool RAGGED>
mgpu_status launch_pushing(const issuer &is, const step_args &a)
{
    const auto kernel = pushing_step<K, VEC, RAGGED>;
    static std::atomic<int> wave_cache[MGPU_MAX_DEVICES];
    long long wave;
    step_shape sh;
    MGPU_CUDA(resident_wave(kernel, stencil_block_max, wave_cache, &wave), is.device);
    if (!step_shape_of(a.nx, a.rows, VEC, wave, &sh))
        return mgpu_fail(MGPU_ERR_USAGE, "--nx: %lld columns are more than a grid holds", a.nx);
    step_args b = a;
    b.strip = sh.strip;
    kernel<<<dim3(static_cast<unsigned>(sh.col_blocks), static_cast<unsigned>(sh.strips)),
             static_cast<unsigned>(sh.threads), 0, is.s>>>(*is.d, b);
    MGPU_CUDA(cudaGetLastError(), is.device);
    return MGPU_OK;
}

template <mgpu_kernel K> mgpu_status launch_pushing_kernel(const issuer &is, const step_args &a)
{
    if (!rows_take_float4(a.in, a.out, a.edges, a.pitch))
        return launch_pushing<K, 1, false>(is, a);
    return a.nx % 4 ? launch_pushing<K, 4, true>(is, a) : launch_pushing<K, 4, false>(is, a);
}

// Step STEP of one-row halos (see the top), its rows pushed to the neighbours.
mgpu_status issue_pushing_step(const issuer &is, long long step)
{
    const persistent_part *d = is.d;
    const int p = d->part;
    const int above = mgpu_stencil_above(is.st, p), below = mgpu_stencil_below(is.st, p);
    step_args a = {};
    a.in = mgpu_stencil_buffer(is.st, p, step);
    a.out = mgpu_stencil_buffer(is.st, p, step + 1);
    a.nx = d->nx;
    a.pitch = static_cast<long long>(d->pitch);
    a.rows = d->rows;
    a.edges.first_to = above >= 0 ? mgpu_stencil_row(is.st, above, step + 1, MGPU_ROW_HALO_BOTTOM)
                                  : NULL;
    a.edges.last_to = below >= 0 ? mgpu_stencil_row(is.st, below, step + 1, MGPU_ROW_HALO_TOP)
                                 : NULL;
    a.base = step;
    a.per = is.per;
    if (d->kernel == MGPU_KERNEL_JACOBI)
        return launch_pushing_kernel<MGPU_KERNEL_JACOBI>(is, a);
    return launch_pushing_kernel<MGPU_KERNEL_PATTERN2D>(is, a);
}

// Steps [FROM, TO) of the part, as the graph replays them.
mgpu_status issue_steps(const issuer &is, long long from, long long to)
{
    const persistent_part *d = is.d;
    const bool waits = d->wait_above || d->wait_below;
    for (long long step = from; step < to; step++) {
        if (mgpu_stencil_exchanges_at(is.st, step))
            MGPU_TRY(issue_exchange(is, step));
        if (!d->compute)
            continue;
        // One-row halos: a part that meets no one (one device) runs the library's kernel
        // itself, which the edge strips' waits and fences would only slow (3.7 us a step
        // against 3.3 at 1024^2 on one H200).
        if (d->halo == 1 && waits) {
            MGPU_TRY(issue_pushing_step(is, step));
            continue;
        }
        if (waits && d->time_block < d->halo && step % d->halo == d->time_block) {
            pulled_kernel<<<1, 32, 0, is.s>>>(*d, step, is.per);
            MGPU_CUDA(cudaGetLastError(), is.device);
        }
        MGPU_TRY(mgpu_stencil_compute(is.st, d->part, step));
    }
    return MGPU_OK;
}

// Capture steps [FROM, TO) (and, with LOOP, the body's last node) into GRAPH after the nodes
// AFTER; *LEAVES (at most 16) get what the next node must follow.
mgpu_status capture(const issuer &is, cudaGraph_t graph, const cudaGraphNode_t *after,
                    size_t n_after, long long from, long long to,
                    const cudaGraphConditionalHandle *loop, u64 iterations, cudaGraphNode_t *leaves,
                    size_t *n_leaves)
{
    MGPU_CUDA(cudaStreamBeginCaptureToGraph(is.s, graph, after, NULL, n_after,
                                            cudaStreamCaptureModeThreadLocal),
              is.device);
    mgpu_status status = issue_steps(is, from, to);
    if (status == MGPU_OK && loop) {
        loop_kernel<<<1, 1, 0, is.s>>>(*is.d, *loop, iterations);
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess)
            status = mgpu_cuda_fail(err, "loop_kernel", is.device, __FILE__, __LINE__);
    }
    if (status == MGPU_OK && leaves) {
        const cudaGraphNode_t *deps = NULL;
        size_t n = 0;
        cudaError_t err = capture_ends(is.s, &deps, &n);
        if (err != cudaSuccess)
            status = mgpu_cuda_fail(err, "cudaStreamGetCaptureInfo", is.device, __FILE__, __LINE__);
        else if (n > 16)
            status = mgpu_fail(MGPU_ERR_SYSTEM, "device %d: %zu ends of a captured segment",
                               is.device, n);
        else
            for (size_t i = 0; i < n; i++)
                leaves[i] = deps[i];
        *n_leaves = n;
    }
    // The stream leaves capture mode whatever happened; the first failure is the one told.
    cudaGraph_t same;
    cudaError_t ended = cudaStreamEndCapture(is.s, &same);
    if (status != MGPU_OK)
        return status;
    MGPU_CUDA(ended, is.device);
    return MGPU_OK;
}

} // namespace

struct looped_graph {
    int device;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};

extern "C" void looped_destroy(looped_graph *g)
{
    if (!g)
        return;
    if (g->exec)
        cudaGraphExecDestroy(g->exec);
    if (g->graph)
        cudaGraphDestroy(g->graph);
    free(g);
}

// The first cycle plainly (it holds the exchange that fills the halos the reset poisoned),
// then the loop over whole bodies, then the steps left.
extern "C" mgpu_status looped_build(mgpu_stencil *st, const persistent_part *d, looped_graph **out)
{
    *out = NULL;
    looped_graph *g = static_cast<looped_graph *>(calloc(1, sizeof *g));
    if (!g)
        return mgpu_fail(MGPU_ERR_NOMEM, "graph form: out of host memory");
    issuer is = {
        st, d, mgpu_stream_cuda(mgpu_stencil_stream(st, d->part)), mgpu_stencil_device(st, d->part),
        0,  0};
    g->device = is.device;
    int sms = 0;
    mgpu_status status = MGPU_OK;
    cudaError_t err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, is.device);
    if (err == cudaSuccess)
        err = cudaGraphCreate(&g->graph, 0);
    if (err != cudaSuccess)
        status = mgpu_cuda_fail(err, "the graph's device and cudaGraphCreate", is.device, __FILE__,
                                __LINE__);
    // Enough blocks to keep a link busy with a block's rows, no more than two a multiprocessor.
    const long long quads = 2 * static_cast<long long>(mgpu_stencil_block_bytes(st)) / 16;
    const long long blocks = (quads + 255) / 256;
    is.pull_blocks = static_cast<int>(blocks < 1 ? 1 : blocks < 2 * sms ? blocks : 2 * sms);

    const long long steps = d->steps, k = d->halo;
    const long long first = steps < k ? steps : k;
    const long long body = (body_steps + 2 * k - 1) / (2 * k) * (2 * k);
    const long long iterations = (steps - first) / body;
    cudaGraphNode_t leaves[16];
    size_t n_leaves = 0;
    if (status == MGPU_OK)
        status = capture(is, g->graph, NULL, 0, 0, first, NULL, 0, leaves, &n_leaves);
    if (status == MGPU_OK && iterations > 0) {
        cudaGraphConditionalHandle loop;
        cudaGraphNodeParams params = {};
        cudaGraphNode_t node;
        err = cudaGraphConditionalHandleCreate(&loop, g->graph, 1, cudaGraphCondAssignDefault);
        if (err == cudaSuccess) {
            params.type = cudaGraphNodeTypeConditional;
            params.conditional.handle = loop;
            params.conditional.type = cudaGraphCondTypeWhile;
            params.conditional.size = 1;
            err = add_node(&node, g->graph, leaves, n_leaves, &params);
        }
        if (err != cudaSuccess)
            status = mgpu_cuda_fail(err, "the loop's conditional node", is.device, __FILE__,
                                    __LINE__);
        is.per = body;
        if (status == MGPU_OK)
            status = capture(is, params.conditional.phGraph_out[0], NULL, 0, first, first + body,
                             &loop, static_cast<u64>(iterations), NULL, NULL);
        is.per = 0;
        leaves[0] = node;
        n_leaves = 1;
    }
    if (status == MGPU_OK)
        status = capture(is, g->graph, leaves, n_leaves, first + iterations * body, steps, NULL, 0,
                         NULL, NULL);
    if (status == MGPU_OK) {
        // Uploaded now, so that the run's first launch (timed, with --warmup=0) does not.
        err = cudaGraphInstantiate(&g->exec, g->graph, 0);
        if (err == cudaSuccess)
            err = cudaGraphUpload(g->exec, is.s);
        if (err != cudaSuccess)
            status = mgpu_cuda_fail(err, "cudaGraphInstantiate and cudaGraphUpload", is.device,
                                    __FILE__, __LINE__);
    }
    if (status != MGPU_OK) {
        looped_destroy(g);
        return status;
    }
    *out = g;
    return MGPU_OK;
}

extern "C" mgpu_status looped_launch(looped_graph *g, mgpu_stream *stream)
{
    MGPU_CUDA(cudaGraphLaunch(g->exec, mgpu_stream_cuda(stream)), g->device);
    return MGPU_OK;
}

extern "C" int looped_supported(void)
{
    int driver = 0;
    return cudaDriverGetVersion(&driver) == cudaSuccess && driver >= 12030;
}

#else // CUDA before 12.3: no graph form; persistent.c asks looped_supported first

struct looped_graph {
    int unused;
};

extern "C" int looped_supported(void) { return 0; }

extern "C" mgpu_status looped_build(mgpu_stencil *st, const persistent_part *d, looped_graph **out)
{
    (void) st;
    (void) d;
    *out = NULL;
    return mgpu_fail(MGPU_ERR_UNSUPPORTED, "--form=graph: needs CUDA 12.3 or newer to build");
}

extern "C" mgpu_status looped_launch(looped_graph *g, mgpu_stream *stream)
{
    (void) g;
    (void) stream;
    return mgpu_fail(MGPU_ERR_UNSUPPORTED, "--form=graph: needs CUDA 12.3 or newer to build");
}

extern "C" void looped_destroy(looped_graph *g) { (void) g; }

#endif
