/*
 * vkshmem/vulkan.h — Vulkan interop: the runtime's Vulkan objects, device
 * addresses of symmetric objects for shaders, and a small dispatch helper.
 *
 * Shaders include "vkshmem.glsl" (see shaders/README.md) and receive the
 * address of the device state block (vkshmemx_device_state()) in a push
 * constant; every shmem_* call in the shader uses it.
 *
 * All routines need shmem_init first and return 0 / VK_NULL_HANDLE / NULL
 * (with a message) when the PE runs without a Vulkan device.
 */
#ifndef VKSHMEM_VULKAN_H
#define VKSHMEM_VULKAN_H

#include <shmem.h>
#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The runtime's Vulkan objects ------------------------------------------ */
VkInstance vkshmemx_vk_instance(void) VKSHMEM_NOEXCEPT;
VkPhysicalDevice vkshmemx_vk_physical_device(void) VKSHMEM_NOEXCEPT;
VkDevice vkshmemx_vk_device(void) VKSHMEM_NOEXCEPT;
/* The compute queue the runtime submits to, and its family (may be NULL).
 * Submissions to it from the application must not overlap the runtime's own:
 * use vkshmemx_dispatch, or call shmem_quiet before submitting yourself. */
VkQueue vkshmemx_vk_queue(uint32_t *family) VKSHMEM_NOEXCEPT;

/* The device extensions vkshmem needs on a VkDevice (for applications that
 * create their own device for the same physical device). *count receives the
 * number of names. */
const char *const *vkshmemx_required_device_extensions(uint32_t *count) VKSHMEM_NOEXCEPT;

/* ---- Addresses for shaders --------------------------------------------------- */
/* The buffer device address of a symmetric object of this PE (host heap or
 * device heap), as shaders pass it to shmem_* calls; 0 for an address in
 * neither heap (globals and static variables are not reachable from shaders). */
uint64_t vkshmemx_device_address(const void *sym) VKSHMEM_NOEXCEPT;
/* The device address of this PE's device state block: pass it to the shader
 * (push constant) and call vkshmem_init(state) first thing in main(). */
uint64_t vkshmemx_device_state(void) VKSHMEM_NOEXCEPT;

/* ---- Dispatching a compute shader ------------------------------------------ */
typedef struct vkshmemx_kernel vkshmemx_kernel;

/* A compute pipeline from SPIR-V (entry point "main") whose layout is a push
 * constant block of push_bytes (at most 128) and nothing else. NULL on error
 * (with a message). */
vkshmemx_kernel *vkshmemx_kernel_create(const uint32_t *spirv, size_t spirv_bytes, uint32_t push_bytes) VKSHMEM_NOEXCEPT;
/* Runs the kernel on this PE's device and waits for it while this PE's proxy
 * serves what the shader sends it. Afterwards reports a device-side error
 * (a bounded wait that gave up, a bad PE) as
 * "[host:pid:PE n] vkshmem error: vkshmemx_dispatch: ..." and returns
 * nonzero; 0 on success. */
int vkshmemx_dispatch(vkshmemx_kernel *kernel, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                      const void *push, uint32_t push_bytes) VKSHMEM_NOEXCEPT;
void vkshmemx_kernel_destroy(vkshmemx_kernel *kernel) VKSHMEM_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* VKSHMEM_VULKAN_H */
