/* failure.c - one worker's failure, passed to its team and to the thread
 * that reports it, so that no worker waits forever at a barrier. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdio.h>

#include "mgpu-private.h"

/* No failure yet, and a failure claimed but not yet written: a worker
 * process may be killed between the two, and its half-written failure is
 * then none.  Both lie above every barrier's number. */
#define NONE LLONG_MAX
#define WRITING (LLONG_MAX - 1)

void mgpu_failure_init(mgpu_failure *failure)
{
    failure->barrier = NONE;
    failure->status = MGPU_OK;
    failure->message[0] = '\0';
}

void mgpu_failure_record(mgpu_failure *failure, mgpu_status status, long long barrier)
{
    long long none = NONE;
    /* The first failure wins; it writes its status and message, then
     * publishes the barrier, before it arrives at that barrier; they are
     * read only after the barrier or once the workers are joined, so these
     * plain writes race with nothing. */
    if (__atomic_compare_exchange_n(&failure->barrier, &none, WRITING, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        failure->status = status;
        snprintf(failure->message, sizeof failure->message, "%s", mgpu_error_message(status));
        __atomic_store_n(&failure->barrier, barrier, __ATOMIC_RELEASE);
    }
}

int mgpu_failure_before(const mgpu_failure *failure, long long barrier)
{
    return __atomic_load_n(&failure->barrier, __ATOMIC_ACQUIRE) <= barrier;
}

mgpu_status mgpu_failure_status(const mgpu_failure *failure)
{
    if (__atomic_load_n(&failure->barrier, __ATOMIC_ACQUIRE) >= WRITING)
        return MGPU_OK;
    return mgpu_fail(failure->status, "%s", failure->message);
}
