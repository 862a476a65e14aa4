/* memory.c - device buffers, pinned and mapped host buffers, managed
 * (unified) memory, plain copies, and the byte count of a buffer checked
 * for overflow: the host backend, and the calls into the CUDA backend,
 * memory-cuda.c. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "memory-cuda.h"
#include "mgpu-test.h"

/* Host-backend buffers are aligned as cudaMalloc's are, so that code which
 * relies on that alignment (vector loads) behaves the same on both.  Those
 * of a huge page or more are aligned to it and offered to the kernel's
 * transparent huge pages: a grid's first touch then takes one fault a
 * 2 MiB page instead of 512, which in a virtual machine that pays dearly
 * for each fault was most of a large run's time (the copy ceiling's
 * buffers of twice the last-level cache: 14 s for a one-step 8192² run,
 * 2.5 s with them, BENCHMARKS.md section 23).  It is advice: a kernel
 * without huge pages ignores it, and the buffer works the same. */
enum { HOST_ALIGN = 256, HUGE_PAGE = 2 << 20 };

static void *host_aligned(size_t bytes)
{
    size_t align = bytes >= HUGE_PAGE ? HUGE_PAGE : HOST_ALIGN;
    size_t rounded = (bytes + align - 1) / align * align;
    if (rounded < bytes)
        return NULL;
    void *p = aligned_alloc(align, rounded ? rounded : align);
#ifdef MADV_HUGEPAGE
    if (p && align == HUGE_PAGE)
        (void) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
}

mgpu_status mgpu_malloc(int device, size_t bytes, void **ptr)
{
    *ptr = NULL;
    MGPU_TRY(mgpu_check_device(device));
    if (mgpu_on_cuda())
        return mgpu_cuda_malloc(device, bytes, ptr);
    /* A host "device" holds at most the machine's memory, as a GPU holds at
     * most its own: asking for more fails at once, where an overcommitting
     * kernel would grant it and then page for minutes. */
    size_t capacity = mgpu_host_memory_bytes();
    if (capacity && bytes > capacity)
        return mgpu_fail(MGPU_ERR_NOMEM,
                         "allocation of %zu bytes on host device %d: more "
                         "than the %zu bytes of host memory",
                         bytes, device, capacity);
    *ptr = host_aligned(bytes);
    if (!*ptr)
        return mgpu_fail(MGPU_ERR_NOMEM, "allocation of %zu bytes on host device %d failed", bytes,
                         device);
    return MGPU_OK;
}

void mgpu_free(int device, void *ptr)
{
    if (!ptr)
        return;
    if (mgpu_on_cuda()) {
        mgpu_cuda_free(ptr);
        return;
    }
    free(ptr);
}

mgpu_status mgpu_host_alloc(size_t bytes, unsigned flags, void **ptr)
{
    *ptr = NULL;
    if (mgpu_on_cuda())
        return mgpu_cuda_host_alloc(bytes, flags, ptr);
    *ptr = host_aligned(bytes);
    if (!*ptr)
        return mgpu_fail(MGPU_ERR_NOMEM, "allocation of %zu host bytes failed", bytes);
    return MGPU_OK;
}

void mgpu_host_free(void *ptr)
{
    if (!ptr)
        return;
    if (mgpu_on_cuda()) {
        mgpu_cuda_host_free(ptr);
        return;
    }
    free(ptr);
}

mgpu_status mgpu_host_device_pointer(void *host, void **device_ptr)
{
    if (mgpu_on_cuda())
        return mgpu_cuda_host_device_pointer(host, device_ptr);
    *device_ptr = host;
    return MGPU_OK;
}

/* Host backend: which devices lack concurrent managed access; none, unless
 * a test says otherwise. */
static unsigned char host_no_concurrent[MGPU_MAX_DEVICES];

void mgpu_host_managed_set(int device, int concurrent)
{
    if (device >= 0 && device < MGPU_MAX_DEVICES)
        host_no_concurrent[device] = !concurrent;
}

mgpu_status mgpu_managed_concurrent(int device, int *concurrent)
{
    MGPU_TRY(mgpu_check_device(device));
    if (mgpu_on_cuda())
        return mgpu_cuda_managed_concurrent(device, concurrent);
    *concurrent = !host_no_concurrent[device];
    return MGPU_OK;
}

/* Managed memory on the host backend is host memory, which every host
 * "device" reaches: the hints and the prefetch have nothing to move. */
mgpu_status mgpu_managed_alloc(size_t bytes, void **ptr)
{
    *ptr = NULL;
    if (mgpu_on_cuda())
        return mgpu_cuda_managed_alloc(bytes, ptr);
    return mgpu_host_alloc(bytes, MGPU_HOST_PINNED, ptr);
}

void mgpu_managed_free(void *ptr)
{
    if (mgpu_on_cuda())
        mgpu_cuda_free(ptr);
    else
        mgpu_host_free(ptr);
}

mgpu_status mgpu_managed_advise(void *ptr, size_t bytes, mgpu_managed_hint hint, int device)
{
    MGPU_TRY(mgpu_check_device(device));
    return mgpu_on_cuda() ? mgpu_cuda_managed_advise(ptr, bytes, hint, device) : MGPU_OK;
}

mgpu_status mgpu_managed_prefetch(void *ptr, size_t bytes, int device, mgpu_stream *stream)
{
    MGPU_TRY(mgpu_check_device(device));
    return mgpu_on_cuda() ? mgpu_cuda_managed_prefetch(ptr, bytes, device, stream) : MGPU_OK;
}

mgpu_status mgpu_memcpy(void *dst, const void *src, size_t bytes)
{
    if (mgpu_on_cuda())
        return mgpu_cuda_memcpy(dst, src, bytes);
    memmove(dst, src, bytes);
    return MGPU_OK;
}

mgpu_status mgpu_memcpy_async(void *dst, const void *src, size_t bytes, mgpu_stream *stream)
{
    if (mgpu_on_cuda())
        return mgpu_cuda_memcpy_async(dst, src, bytes, stream);
    memmove(dst, src, bytes);
    return MGPU_OK;
}

mgpu_status mgpu_memset(int device, void *ptr, int byte, size_t bytes)
{
    return mgpu_memset_2d(device, ptr, bytes, byte, bytes, 1);
}

mgpu_status mgpu_memset_2d(int device, void *ptr, size_t pitch_bytes, int byte, size_t width_bytes,
                           size_t rows)
{
    if (mgpu_on_cuda())
        return mgpu_cuda_memset_2d(device, ptr, pitch_bytes, byte, width_bytes, rows);
    for (size_t r = 0; r < rows; r++)
        memset((char *) ptr + r * pitch_bytes, byte, width_bytes);
    return MGPU_OK;
}

mgpu_status mgpu_mul_size(size_t count, size_t size, size_t *bytes)
{
    if (size != 0 && count > SIZE_MAX / size)
        return mgpu_fail(MGPU_ERR_USAGE, "%zu items of %zu bytes overflow the address space", count,
                         size);
    *bytes = count * size;
    return MGPU_OK;
}
