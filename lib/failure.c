/* failure.c - one worker's failure, passed to its team and to the thread
 * that reports it, so that no worker waits forever at a barrier. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdio.h>

#include "mgpu-private.h"

void mgpu_failure_init(mgpu_failure *failure)
{
    failure->barrier = LLONG_MAX;
    failure->status = MGPU_OK;
    failure->message[0] = '\0';
}

void mgpu_failure_record(mgpu_failure *failure, mgpu_status status, long long barrier)
{
    long long none = LLONG_MAX;
    /* The first failure wins; it writes its status and message before it
     * arrives at the barrier, and they are read only after that barrier or
     * once the workers are joined, so these plain writes race with nothing. */
    if (__atomic_compare_exchange_n(&failure->barrier, &none, barrier, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        failure->status = status;
        snprintf(failure->message, sizeof failure->message, "%s", mgpu_error_message(status));
    }
}

int mgpu_failure_before(const mgpu_failure *failure, long long barrier)
{
    return __atomic_load_n(&failure->barrier, __ATOMIC_ACQUIRE) <= barrier;
}

mgpu_status mgpu_failure_status(const mgpu_failure *failure)
{
    if (__atomic_load_n(&failure->barrier, __ATOMIC_ACQUIRE) == LLONG_MAX)
        return MGPU_OK;
    return mgpu_fail(failure->status, "%s", failure->message);
}
