/* fault.c - MGPU_INJECT_FAULT=STEP:DEVICE: make one worker fail on purpose,
 * so that every strategy's failure handling can be tested; and
 * MGPU_INJECT_DELAY=US:DEVICE, a device slower than its neighbours, for
 * the kernels that order their exchanges themselves (mgpu-persistent). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mgpu-private.h"

static struct {
    int set, valid;
    long long step, device;
} fault;
static pthread_once_t fault_once = PTHREAD_ONCE_INIT;

/* TEXT as two whole numbers A:B as the command line's are
 * (mgpu_parse_integer): no blank before or after either, and a number
 * past the largest long long is refused, not clamped to it. */
static int parse_pair(const char *text, long long *a, long long *b)
{
    char first[32];
    const char *colon = strchr(text, ':');
    if (!colon || (size_t) (colon - text) >= sizeof first)
        return -1;
    memcpy(first, text, (size_t) (colon - text));
    first[colon - text] = '\0';
    return mgpu_parse_integer(first, a) != 0 || mgpu_parse_integer(colon + 1, b) != 0 ? -1 : 0;
}

static void fault_read(void)
{
    /* Set, even empty, it asks for a fault: a value that names none is a
     * usage error, never a run without one. */
    const char *text = getenv("MGPU_INJECT_FAULT");
    if (!text)
        return;
    fault.set = 1;
    fault.valid = parse_pair(text, &fault.step, &fault.device) == 0 && fault.step >= 0 &&
                  fault.device >= 0;
}

/* Whether a fault is asked for, into *WANTED; a usage error when the
 * variable is set but not STEP:DEVICE. */
static mgpu_status fault_requested(int *wanted)
{
    pthread_once(&fault_once, fault_read);
    *wanted = fault.set;
    if (fault.set && !fault.valid)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "MGPU_INJECT_FAULT: '%s' is not STEP:DEVICE "
                         "(two non-negative integers, STEP below 2^63)",
                         getenv("MGPU_INJECT_FAULT"));
    return MGPU_OK;
}

mgpu_status mgpu_fault_validate(int ndevices, long long steps)
{
    int wanted;
    MGPU_TRY(fault_requested(&wanted));
    if (!wanted)
        return MGPU_OK;
    /* A fault that can never fire would let a test of failure handling
     * pass by running normally.  Steps are counted from 0 in each run (a
     * warmup run, a timed one), so --warmup and --repeat add no step. */
    if (fault.device >= ndevices)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "MGPU_INJECT_FAULT: device %lld is not in this run "
                         "(accepted: DEVICE from 0 to %d, one of the %d "
                         "device%s)",
                         fault.device, ndevices - 1, ndevices, ndevices == 1 ? "" : "s");
    if (fault.step >= steps)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "MGPU_INJECT_FAULT: step %lld never runs "
                         "(accepted: STEP from 0 to %lld, as --steps=%lld; "
                         "each run counts its steps from 0)",
                         fault.step, steps - 1, steps);
    return MGPU_OK;
}

mgpu_status mgpu_fault_check(int part, long long step)
{
    int wanted;
    MGPU_TRY(fault_requested(&wanted));
    if (wanted && part == fault.device && step == fault.step)
        return mgpu_fail(MGPU_ERR_FAULT, "device %d failed at step %lld (MGPU_INJECT_FAULT)", part,
                         step);
    return MGPU_OK;
}

mgpu_status mgpu_fault_check_steps(int nparts, long long first, long long count)
{
    for (int p = 0; p < nparts; p++)
        for (long long step = first; step < first + count; step++)
            MGPU_TRY(mgpu_fault_check(p, step));
    return MGPU_OK;
}

mgpu_status mgpu_delay_requested(int ndevices, int *device, long long *us)
{
    const char *text = getenv("MGPU_INJECT_DELAY");
    *device = -1;
    *us = 0;
    if (!text || !*text)
        return MGPU_OK;
    long long d, wait;
    if (parse_pair(text, &wait, &d) != 0 || wait < 1 || wait > MGPU_DELAY_MAX_US || d < 0 ||
        d >= ndevices)
        return mgpu_fail(MGPU_ERR_USAGE,
                         "MGPU_INJECT_DELAY: '%s' is not US:DEVICE "
                         "(accepted: US from 1 to %d microseconds, DEVICE from 0 to %d, "
                         "one of the %d device%s)",
                         text, MGPU_DELAY_MAX_US, ndevices - 1, ndevices, ndevices == 1 ? "" : "s");
    *device = (int) d;
    *us = wait;
    return MGPU_OK;
}
