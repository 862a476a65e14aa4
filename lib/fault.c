/* fault.c - MGPU_INJECT_FAULT=STEP:DEVICE: make one worker fail on purpose,
 * so that every strategy's failure handling can be tested. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stdlib.h>

#include "mgpu-private.h"

static struct {
    int set, valid;
    long long step;
    int device;
} fault;
static pthread_once_t fault_once = PTHREAD_ONCE_INIT;

static void fault_read(void)
{
    const char *text = getenv("MGPU_INJECT_FAULT");
    if (!text || !*text)
        return;
    fault.set = 1;
    char *end;
    fault.step = strtoll(text, &end, 10);
    if (end == text || *end != ':' || fault.step < 0)
        return;
    const char *dev = end + 1;
    long device = strtol(dev, &end, 10);
    if (end == dev || *end || device < 0 || device >= MGPU_MAX_DEVICES)
        return;
    fault.device = (int) device;
    fault.valid = 1;
}

mgpu_status mgpu_fault_check(int part, long long step)
{
    pthread_once(&fault_once, fault_read);
    if (!fault.set)
        return MGPU_OK;
    if (!fault.valid)
        return mgpu_fail(MGPU_ERR_USAGE, "MGPU_INJECT_FAULT: '%s' is not STEP:DEVICE "
                                         "(two non-negative integers)",
                         getenv("MGPU_INJECT_FAULT"));
    if (part == fault.device && step == fault.step)
        return mgpu_fail(MGPU_ERR_FAULT, "device %d failed at step %lld (MGPU_INJECT_FAULT)",
                         part, step);
    return MGPU_OK;
}
