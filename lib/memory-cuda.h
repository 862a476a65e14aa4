/* memory-cuda.h - the CUDA backend's half of memory.c's functions, in
 * memory-cuda.c, which memory.c calls when mgpu_on_cuda(). */
#ifndef MGPU_MEMORY_CUDA_H
#define MGPU_MEMORY_CUDA_H

#include "mgpu-private.h"

#ifdef MGPU_HAVE_CUDA
/* Each does on the CUDA backend what the mgpu_ function of its name does. */
mgpu_status mgpu_cuda_malloc(int device, size_t bytes, void **ptr);
void mgpu_cuda_free(void *ptr);
mgpu_status mgpu_cuda_host_alloc(size_t bytes, unsigned flags, void **ptr);
void mgpu_cuda_host_free(void *ptr);
mgpu_status mgpu_cuda_host_device_pointer(void *host, void **device_ptr);
mgpu_status mgpu_cuda_managed_concurrent(int device, int *concurrent);
mgpu_status mgpu_cuda_managed_alloc(size_t bytes, void **ptr);
mgpu_status mgpu_cuda_managed_advise(void *ptr, size_t bytes, mgpu_managed_hint hint, int device);
mgpu_status mgpu_cuda_managed_prefetch(void *ptr, size_t bytes, int device, mgpu_stream *stream);
mgpu_status mgpu_cuda_memcpy(void *dst, const void *src, size_t bytes);
mgpu_status mgpu_cuda_memcpy_async(void *dst, const void *src, size_t bytes, mgpu_stream *stream);
mgpu_status mgpu_cuda_memset_2d(int device, void *ptr, size_t pitch_bytes, int byte,
                                size_t width_bytes, size_t rows);
#else
/* A build without CUDA never runs on its backend: these stand in for it,
 * so that memory.c needs no #ifdef. */
#define mgpu_cuda_malloc(device, bytes, ptr) mgpu_cuda_absent()
#define mgpu_cuda_free(ptr) ((void) 0)
#define mgpu_cuda_host_alloc(bytes, flags, ptr) mgpu_cuda_absent()
#define mgpu_cuda_host_free(ptr) ((void) 0)
#define mgpu_cuda_host_device_pointer(host, device_ptr) mgpu_cuda_absent()
#define mgpu_cuda_managed_concurrent(device, concurrent) mgpu_cuda_absent()
#define mgpu_cuda_managed_alloc(bytes, ptr) mgpu_cuda_absent()
#define mgpu_cuda_managed_advise(ptr, bytes, hint, device) mgpu_cuda_absent()
#define mgpu_cuda_managed_prefetch(ptr, bytes, device, stream) mgpu_cuda_absent()
#define mgpu_cuda_memcpy(dst, src, bytes) mgpu_cuda_absent()
#define mgpu_cuda_memcpy_async(dst, src, bytes, stream) mgpu_cuda_absent()
#define mgpu_cuda_memset_2d(device, ptr, pitch_bytes, byte, width_bytes, rows) mgpu_cuda_absent()
#endif

#endif /* MGPU_MEMORY_CUDA_H */
