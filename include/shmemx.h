/* SPDX-License-Identifier: BSL-1.0 */
/*
 * shmemx.h — vkshmem extensions to OpenSHMEM.
 */
#ifndef VKSHMEM_SHMEMX_H
#define VKSHMEM_SHMEMX_H

#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hint for shmem_malloc_with_hints: allocate in the device heap (Vulkan
 * DEVICE_LOCAL memory, size VKSHMEM_DEVICE_HEAP_SIZE). Collective like
 * shmem_malloc. Without a Vulkan device the device heap is host memory. */
#define SHMEMX_MALLOC_DEVICE (1L << 16)

/* Same as shmem_malloc_with_hints(size, SHMEMX_MALLOC_DEVICE). */
void *shmemx_device_malloc(size_t size) VKSHMEM_NOEXCEPT;

/* Which heap holds a symmetric address: SHMEMX_SPACE_HOST (shmem_malloc),
 * SHMEMX_SPACE_DEVICE (SHMEMX_MALLOC_DEVICE), SHMEMX_SPACE_STATIC (global and
 * static variables of the program), or SHMEMX_SPACE_NONE. */
#define SHMEMX_SPACE_NONE (-1)
#define SHMEMX_SPACE_HOST 0
#define SHMEMX_SPACE_DEVICE 1
#define SHMEMX_SPACE_STATIC 2
int shmemx_addr_space(const void *addr) VKSHMEM_NOEXCEPT;

/* Seconds from an arbitrary moment before the first call, on a clock that never goes back
 * (CLOCK_MONOTONIC), as Sandia OpenSHMEM's shmemx_wtime; callable before shmem_init. */
double shmemx_wtime(void) VKSHMEM_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* VKSHMEM_SHMEMX_H */
