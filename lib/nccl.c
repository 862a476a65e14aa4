/* nccl.c - NCCL for the exchange mode nccl: communicator ids, a
 * communicator per part (rank = part) in one process or several, the
 * transfers of a part's halos grouped on its stream, waiting for them with
 * an eye on NCCL's asynchronous errors, and aborting what waits for a peer
 * that failed.  The halo exchange (exchange.c) decides what moves where.
 *
 * The communicators are blocking ones (ncclConfig_t.blocking = 1): a
 * nonblocking communicator's ncclGroupEnd hands every group to a thread it
 * creates, which would cost each step far more than the transfers of a
 * small grid.  Nothing here waits on the host inside a run, so blocking
 * calls cannot hang it: after the communicators are connected (the stencil
 * domain connects them when it is made) a group only queues kernels, and
 * the one host wait, mgpu_nccl_wait, polls the stream and the communicator's
 * asynchronous error instead of blocking in cudaStreamSynchronize.  A kernel
 * that waits for a peer that failed is stopped by ncclCommAbort
 * (mgpu_nccl_comm_free), which every failure path reaches.
 *
 * NVLink multicast is never used: NCCL_NVLS_ENABLE=0 is put in the
 * environment, where it is unset, before the first id or communicator. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "mgpu-private.h"

#ifdef MGPU_HAVE_NCCL
#include <nccl.h>
#endif

int mgpu_nccl_built(void)
{
#ifdef MGPU_HAVE_NCCL
    return 1;
#else
    return 0;
#endif
}

const char *mgpu_nccl_missing(void)
{
    return mgpu_nccl_built() ? NULL
                             : "this build has no NCCL (configure found no nccl.h with "
                               "libnccl: install NCCL, libnccl-dev for one, then configure "
                               "--with-nccl[=DIR])";
}

mgpu_status mgpu_nccl_check(void)
{
    if (!mgpu_nccl_built())
        return mgpu_fail(MGPU_ERR_USAGE, "--exchange=nccl: %s", mgpu_nccl_missing());
    if (mgpu_backend_active() != MGPU_BACKEND_CUDA)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "--exchange=nccl needs the cuda backend, and this run "
                         "has the %s backend (%s): a host device has no "
                         "device memory for NCCL to move",
                         mgpu_backend_name(mgpu_backend_active()), mgpu_backend_reason());
    return MGPU_OK;
}

#ifdef MGPU_HAVE_NCCL

_Static_assert(sizeof(ncclUniqueId) == sizeof(mgpu_nccl_id), "NCCL unique id size");

struct mgpu_nccl_comm {
    ncclComm_t comm; /* NULL once aborted */
    int device, rank, nranks;
};

/* Before NCCL reads its parameters, at the first id or communicator: a
 * user's own setting stays. */
static void multicast_off(void) { setenv("NCCL_NVLS_ENABLE", "0", 0); }

/* Turn a failed NCCL call into a status, naming the call, where (the
 * device and rank of C, when known) and why: NCCL's words for the result
 * and its own last error, which says more. */
static mgpu_status nccl_fail(ncclResult_t result, const char *call, const mgpu_nccl_comm *c,
                             const char *file, int line)
{
    size_t name_len = strcspn(call, "(");
    const char *last = ncclGetLastError(c ? c->comm : NULL);
    const char *sep = last && last[0] ? ": " : "";
    mgpu_status status = result == ncclUnhandledCudaError ? MGPU_ERR_CUDA : MGPU_ERR_SYSTEM;
    if (!last)
        last = "";
    if (c)
        return mgpu_fail(status, "%.*s on device %d (rank %d of %d): %s%s%s (%s:%d)",
                         (int) name_len, call, c->device, c->rank, c->nranks,
                         ncclGetErrorString(result), sep, last, file, line);
    return mgpu_fail(status, "%.*s: %s%s%s (%s:%d)", (int) name_len, call,
                     ncclGetErrorString(result), sep, last, file, line);
}

#define MGPU_NCCL(call, c)                                                       \
    do {                                                                         \
        ncclResult_t mgpu_nccl_result_ = (call);                                 \
        if (mgpu_nccl_result_ != ncclSuccess)                                    \
            return nccl_fail(mgpu_nccl_result_, #call, (c), __FILE__, __LINE__); \
    } while (0)

mgpu_status mgpu_nccl_id_create(mgpu_nccl_id *id)
{
    multicast_off();
    ncclUniqueId unique;
    /* No CUDA: it starts a thread that serves the ranks' meeting (bootstrap). */
    MGPU_NCCL(ncclGetUniqueId(&unique), NULL);
    memcpy(id->bytes, &unique, sizeof unique);
    return MGPU_OK;
}

static mgpu_status alive(const mgpu_nccl_comm *c)
{
    if (!c->comm)
        return mgpu_fail(MGPU_ERR_INTERRUPTED,
                         "NCCL on device %d (rank %d of %d): the "
                         "communicator was aborted after a failure",
                         c->device, c->rank, c->nranks);
    return MGPU_OK;
}

/* The ranks' communicators in one group: ncclCommInitRankConfig of each
 * with its device current, the joining done by ncclGroupEnd. */
static mgpu_status init_ranks(ncclUniqueId unique, int nranks, mgpu_nccl_comm **comms, int count)
{
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;
    MGPU_NCCL(ncclGroupStart(), NULL);
    mgpu_status status = MGPU_OK;
    for (int i = 0; i < count && status == MGPU_OK; i++) {
        mgpu_nccl_comm *c = comms[i];
        cudaError_t err = cudaSetDevice(c->device);
        ncclResult_t result = err == cudaSuccess ? ncclCommInitRankConfig(&c->comm, nranks, unique,
                                                                          c->rank, &config)
                                                 : ncclSuccess;
        if (err != cudaSuccess)
            status = mgpu_cuda_fail(err, "cudaSetDevice", c->device, __FILE__, __LINE__);
        else if (result != ncclSuccess)
            status = nccl_fail(result, "ncclCommInitRankConfig", c, __FILE__, __LINE__);
    }
    ncclResult_t ended = ncclGroupEnd();
    if (status == MGPU_OK && ended != ncclSuccess)
        status = nccl_fail(ended, "ncclGroupEnd of ncclCommInitRankConfig",
                           count == 1 ? comms[0] : NULL, __FILE__, __LINE__);
    return status;
}

mgpu_status mgpu_nccl_comms_create(const mgpu_nccl_id *id, int nranks, int first, int count,
                                   const int *devices, mgpu_nccl_comm **comms)
{
    multicast_off();
    for (int i = 0; i < count; i++)
        comms[i] = NULL;
    for (int i = 0; i < count; i++) {
        comms[i] = calloc(1, sizeof *comms[i]);
        if (!comms[i]) {
            for (int k = 0; k < i; k++)
                free(comms[k]);
            return mgpu_fail(MGPU_ERR_NOMEM, "NCCL communicators: out of host memory");
        }
        *comms[i] = (mgpu_nccl_comm){NULL, devices[i], first + i, nranks};
    }
    ncclUniqueId unique;
    memcpy(&unique, id->bytes, sizeof unique);
    int previous;
    MGPU_CUDA(cudaGetDevice(&previous), -1);
    mgpu_status status = init_ranks(unique, nranks, comms, count);
    cudaError_t restored = cudaSetDevice(previous);
    if (status == MGPU_OK && restored != cudaSuccess)
        status = mgpu_cuda_fail(restored, "cudaSetDevice", previous, __FILE__, __LINE__);
    if (status != MGPU_OK) {
        for (int i = 0; i < count; i++) {
            mgpu_nccl_comm_free(comms[i], true);
            comms[i] = NULL;
        }
    }
    return status;
}

void mgpu_nccl_comm_free(mgpu_nccl_comm *c, bool abort)
{
    if (!c)
        return;
    if (c->comm) {
        /* The result is of no use to anyone once the communicator goes;
         * the caller's device stays current. */
        int previous;
        bool restore = cudaGetDevice(&previous) == cudaSuccess;
        if (abort)
            ncclCommAbort(c->comm);
        else
            ncclCommDestroy(c->comm);
        c->comm = NULL;
        if (restore)
            cudaSetDevice(previous);
        cudaGetLastError();
    }
    free(c);
}

mgpu_status mgpu_nccl_group_begin(void)
{
    MGPU_NCCL(ncclGroupStart(), NULL);
    return MGPU_OK;
}

mgpu_status mgpu_nccl_group_end(void)
{
    MGPU_NCCL(ncclGroupEnd(), NULL);
    return MGPU_OK;
}

mgpu_status mgpu_nccl_send(mgpu_nccl_comm *c, const float *buf, size_t count, int peer,
                           mgpu_stream *stream)
{
    MGPU_TRY(alive(c));
    MGPU_NCCL(ncclSend(buf, count, ncclFloat, peer, c->comm, mgpu_stream_cuda(stream)), c);
    return MGPU_OK;
}

mgpu_status mgpu_nccl_recv(mgpu_nccl_comm *c, float *buf, size_t count, int peer,
                           mgpu_stream *stream)
{
    MGPU_TRY(alive(c));
    MGPU_NCCL(ncclRecv(buf, count, ncclFloat, peer, c->comm, mgpu_stream_cuda(stream)), c);
    return MGPU_OK;
}

mgpu_status mgpu_nccl_wait(mgpu_nccl_comm *c, mgpu_stream *stream)
{
    MGPU_TRY(alive(c));
    for (;;) {
        int done;
        MGPU_TRY(mgpu_stream_query(stream, &done));
        if (done)
            return MGPU_OK;
        /* A peer whose connection broke (another host's rank died) shows
         * here; the caller's failure path then aborts the communicator. */
        ncclResult_t state;
        MGPU_NCCL(ncclCommGetAsyncError(c->comm, &state), c);
        if (state != ncclSuccess && state != ncclInProgress)
            return nccl_fail(state, "ncclCommGetAsyncError", c, __FILE__, __LINE__);
        sched_yield();
    }
}

#else /* no NCCL in this build: mgpu_nccl_check said so before any of these */

struct mgpu_nccl_comm {
    int unused;
};

static mgpu_status no_nccl(void)
{
    return mgpu_fail(MGPU_ERR_UNSUPPORTED, "NCCL: %s", mgpu_nccl_missing());
}

mgpu_status mgpu_nccl_id_create(mgpu_nccl_id *id)
{
    memset(id, 0, sizeof *id);
    return no_nccl();
}

mgpu_status mgpu_nccl_comms_create(const mgpu_nccl_id *id, int nranks, int first, int count,
                                   const int *devices, mgpu_nccl_comm **comms)
{
    (void) id, (void) nranks, (void) first, (void) devices;
    for (int i = 0; i < count; i++)
        comms[i] = NULL;
    return no_nccl();
}

void mgpu_nccl_comm_free(mgpu_nccl_comm *comm, bool abort)
{
    (void) abort;
    free(comm);
}

mgpu_status mgpu_nccl_group_begin(void) { return no_nccl(); }
mgpu_status mgpu_nccl_group_end(void) { return no_nccl(); }

mgpu_status mgpu_nccl_send(mgpu_nccl_comm *comm, const float *buf, size_t count, int peer,
                           mgpu_stream *stream)
{
    (void) comm, (void) buf, (void) count, (void) peer, (void) stream;
    return no_nccl();
}

mgpu_status mgpu_nccl_recv(mgpu_nccl_comm *comm, float *buf, size_t count, int peer,
                           mgpu_stream *stream)
{
    (void) comm, (void) buf, (void) count, (void) peer, (void) stream;
    return no_nccl();
}

mgpu_status mgpu_nccl_wait(mgpu_nccl_comm *comm, mgpu_stream *stream)
{
    (void) comm, (void) stream;
    return no_nccl();
}

#endif
