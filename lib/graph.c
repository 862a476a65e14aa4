/* graph.c - CUDA graphs: work issued on streams captured once, replayed for
 * the host cost of one launch. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>

#include "mgpu-private.h"

struct mgpu_graph {
    int device;
#ifdef MGPU_HAVE_CUDA
    cudaGraph_t graph;
    cudaGraphExec_t exec;
#endif
};

/* The host backend runs work as it is issued: there is nothing to record. */
static mgpu_status no_graphs(void)
{
    return mgpu_fail(MGPU_ERR_UNSUPPORTED,
                     "CUDA graphs need the CUDA backend (the %s backend "
                     "runs work as it is issued)",
                     mgpu_backend_name(mgpu_backend_active()));
}

mgpu_status mgpu_graph_begin(mgpu_stream *origin)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        /* Global: while this capture lasts, a call anywhere in the process
         * that would synchronise with the captured streams is an error,
         * instead of work that silently runs outside the graph. */
        MGPU_CUDA(cudaStreamBeginCapture(mgpu_stream_cuda(origin), cudaStreamCaptureModeGlobal),
                  mgpu_stream_device(origin));
        return MGPU_OK;
    }
#endif
    (void) origin;
    return no_graphs();
}

mgpu_status mgpu_graph_end(mgpu_stream *origin, mgpu_graph **graph)
{
    *graph = NULL;
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        int device = mgpu_stream_device(origin);
        mgpu_graph *g = calloc(1, sizeof *g);
        cudaGraph_t captured = NULL;
        /* End the capture first, whatever happens: the stream must leave
         * capture mode even when the graph is not wanted. */
        cudaError_t err = cudaStreamEndCapture(mgpu_stream_cuda(origin), &captured);
        if (err != cudaSuccess) {
            free(g);
            if (captured)
                cudaGraphDestroy(captured);
            return mgpu_cuda_fail(err, "cudaStreamEndCapture", device, __FILE__, __LINE__);
        }
        if (!g) {
            cudaGraphDestroy(captured);
            return mgpu_fail(MGPU_ERR_NOMEM, "graph: out of host memory");
        }
        g->device = device;
        g->graph = captured;
#if CUDART_VERSION >= 12000
        err = cudaGraphInstantiate(&g->exec, captured, 0);
#else
        err = cudaGraphInstantiate(&g->exec, captured, NULL, NULL, 0);
#endif
        if (err != cudaSuccess) {
            cudaGraphDestroy(captured);
            free(g);
            return mgpu_cuda_fail(err, "cudaGraphInstantiate", device, __FILE__, __LINE__);
        }
        *graph = g;
        return MGPU_OK;
    }
#endif
    (void) origin;
    return no_graphs();
}

mgpu_status mgpu_graph_launch(mgpu_graph *graph, mgpu_stream *stream)
{
#ifdef MGPU_HAVE_CUDA
    if (mgpu_on_cuda()) {
        MGPU_CUDA(cudaGraphLaunch(graph->exec, mgpu_stream_cuda(stream)), graph->device);
        return MGPU_OK;
    }
#endif
    (void) graph;
    (void) stream;
    return no_graphs();
}

void mgpu_graph_destroy(mgpu_graph *graph)
{
    if (!graph)
        return;
#ifdef MGPU_HAVE_CUDA
    if (graph->exec)
        cudaGraphExecDestroy(graph->exec);
    if (graph->graph)
        cudaGraphDestroy(graph->graph);
#endif
    free(graph);
}
