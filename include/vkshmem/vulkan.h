/* SPDX-License-Identifier: BSL-1.0 */
/*
 * vkshmem/vulkan.h — Vulkan interop: the runtime's Vulkan objects, device
 * addresses of symmetric objects for shaders, and a small dispatch helper.
 *
 * GLSL shaders include "vkshmem.glsl" (see shaders/README.md) and receive the
 * address of the device state block (vkshmemx_device_state()) in a push
 * constant; every shmem_* call in the shader uses it. HLSL shaders include
 * "vkshmem.hlsl" and reach the state block and the heaps through the
 * runtime's descriptor set (vkshmemx_descriptor_set()) instead.
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
 * Submissions to it from the application must not overlap the runtime's own
 * (its proxy thread may copy through it at any time): submit with
 * vkshmemx_queue_submit, which takes the runtime's lock. */
VkQueue vkshmemx_vk_queue(uint32_t *family) VKSHMEM_NOEXCEPT;
/* vkQueueSubmit to vkshmemx_vk_queue() under the runtime's lock; its VkResult. */
VkResult vkshmemx_queue_submit(uint32_t count, const VkSubmitInfo *submits, VkFence fence) VKSHMEM_NOEXCEPT;

/* The device extensions vkshmem needs on a VkDevice (for applications that
 * create their own device, see vkshmemx_use_vk_device). *count receives the
 * number of names. */
const char *const *vkshmemx_required_device_extensions(uint32_t *count) VKSHMEM_NOEXCEPT;

/* Makes the next shmem_init use the application's own device instead of
 * creating one (call it before shmem_init, on every PE; the physical device
 * must be Vulkan 1.2+). The device must have been created with the extensions
 * above and the features bufferDeviceAddress (required), shaderInt64 and
 * shaderBufferInt64Atomics (the GLSL library), descriptorIndexing features
 * and shaderFloat64 where shaders use them. `queue` (a compute queue of
 * `queue_family`) is the one the runtime submits to, for dispatches and for
 * its own copies: the application must not submit to it from another thread
 * while a vkshmem call runs, and its own submissions that touch symmetric
 * memory are ordered with vkshmem's by shmem_quiet. The application keeps
 * owning every handle and destroys them after shmem_finalize. Returns 0, or
 * nonzero with a message (after shmem_init, or a null handle). */
int vkshmemx_use_vk_device(VkInstance instance, VkPhysicalDevice physical, VkDevice device, VkQueue queue,
                           uint32_t queue_family) VKSHMEM_NOEXCEPT;

/* ---- Addresses for shaders --------------------------------------------------- */
/* The buffer device address of a symmetric object of this PE (host heap or
 * device heap), as shaders pass it to shmem_* calls; 0 for an address in
 * neither heap (globals and static variables are not reachable from shaders). */
uint64_t vkshmemx_device_address(const void *sym) VKSHMEM_NOEXCEPT;
/* The device address of this PE's device state block: pass it to the shader
 * (push constant) and call vkshmem_init(state) first thing in main(). */
uint64_t vkshmemx_device_state(void) VKSHMEM_NOEXCEPT;

/* The device library's handle of `team` (its shmem_team_t in shaders: pass it in a push constant
 * or buffer) for the device collectives (shaders/README.md, "Teams and collectives"); 0
 * (SHMEM_TEAM_INVALID) for SHMEM_TEAM_INVALID, without a Vulkan device, or when this PE is not a
 * member. Shaders name SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED themselves. Valid until the team
 * is destroyed. */
uint64_t vkshmemx_team_device(shmem_team_t team) VKSHMEM_NOEXCEPT;

/* ---- The HLSL device library's descriptor set --------------------------------- */
/* HLSL (through glslang) has no buffer device addresses, so vkshmem.hlsl
 * reaches memory through one descriptor set the runtime owns: binding 0 the
 * device state block's allocation, binding 1 the proxy's answers, bindings
 * 2..16 segments of the heaps this device reaches (storage buffers, compute
 * stage; vkshmem_abi.h). Kernels made
 * by vkshmemx_kernel_create have it as set 0 and vkshmemx_dispatch binds it.
 * Applications with their own pipelines put this layout in their pipeline
 * layout at the set the shader was compiled for (VKSHMEM_HLSL_SET, default 0)
 * and bind this set there before dispatching. Both stay valid until
 * shmem_finalize; do not update or free them. VK_NULL_HANDLE without a device. */
VkDescriptorSetLayout vkshmemx_descriptor_set_layout(void) VKSHMEM_NOEXCEPT;
VkDescriptorSet vkshmemx_descriptor_set(void) VKSHMEM_NOEXCEPT;

/* ---- Dispatching a compute shader ------------------------------------------ */
typedef struct vkshmemx_kernel vkshmemx_kernel;

/* A compute pipeline from SPIR-V (entry point "main") whose layout is a push
 * constant block of push_bytes (at most 128) and, as set 0, the device
 * library's descriptor set (used by HLSL shaders, ignored by GLSL ones). NULL
 * on error (with a message). */
vkshmemx_kernel *vkshmemx_kernel_create(const uint32_t *spirv, size_t spirv_bytes, uint32_t push_bytes) VKSHMEM_NOEXCEPT;
/* Runs the kernel on this PE's device and waits for it while this PE's proxy
 * serves what the shader sends it. Afterwards reports a device-side error
 * (a bounded wait that gave up, a bad PE) as
 * "[host:pid:PE n] vkshmem error: vkshmemx_dispatch: ..." and returns
 * nonzero; 0 on success. */
int vkshmemx_dispatch(vkshmemx_kernel *kernel, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                      const void *push, uint32_t push_bytes) VKSHMEM_NOEXCEPT;
void vkshmemx_kernel_destroy(vkshmemx_kernel *kernel) VKSHMEM_NOEXCEPT;
/* Records a dispatch of the kernel into the application's command buffer `cmd` (a compute-capable
 * queue's, recording), between memory barriers over all commands, so that it runs in queue order
 * with the queue-ordered operations below and the application's own work; binds the kernel's
 * pipeline, descriptor set and push constants there. Nothing waits: device-side errors of such a
 * dispatch are reported as those of the queue-ordered operations. 0, or nonzero with a message. */
int vkshmemx_kernel_record(VkCommandBuffer cmd, vkshmemx_kernel *kernel, uint32_t groups_x, uint32_t groups_y,
                           uint32_t groups_z, const void *push, uint32_t push_bytes) VKSHMEM_NOEXCEPT;

/* ---- Queue-ordered operations ---------------------------------------------------------------- */
/* The host routines, recorded into the application's command buffer `cmd` (a compute-capable
 * queue's, in the recording state): they run when the queue reaches them, in order with the
 * commands recorded before and after (each is one or a few compute dispatches between memory
 * barriers over all commands), with no CPU wait while recording or submitting. A command buffer
 * may be recorded once and submitted many times. Like their host counterparts:
 *   putmem, putmem_signal   the source may be overwritten by later commands; delivery is complete
 *                           at the next recorded quiet or barrier (putmem_signal: the signal
 *                           follows the data, as shmem_putmem_signal)
 *   getmem                  dest holds the data for the commands after it
 *   signal_wait_until       later commands wait until the signal (this PE's) satisfies cmp
 *   quiet                   every put and AMO this PE's shaders and recorded operations issued
 *                           before it is complete
 *   barrier_all, team_sync  the members' queues meet (barrier_all: quiet first)
 *   broadcastmem, fcollectmem, alltoallmem, TYPENAME_OP_reduce   the team-based collectives
 * Arguments are as in the host API: symmetric objects (both heaps; a source or destination
 * outside them, a bad PE or team ends the job with a message at recording time), nelems in bytes
 * for the mem forms. The commands must run on every member, in the same order for each team.
 * After one of them, the compute pipeline, descriptor sets and push constants bound in `cmd` are
 * undefined: bind yours again. With the application's own semaphores: a signal operation after
 * the submission that holds them covers them like any other command; work on other queues orders
 * with them through semaphores as with any compute work. A device-side failure (a wait that
 * outlasted its bound: VKSHMEM_DEVICE_WAIT_POLLS; on lavapipe recorded waits last up to ~6 s)
 * is reported by this PE's proxy thread, which ends the job. Pipelines are made at the first
 * use of each kind of operation (lavapipe compiles them then: seconds). */
void vkshmemx_cmd_putmem(VkCommandBuffer cmd, void *dest, const void *source, size_t nelems, int pe) VKSHMEM_NOEXCEPT;
void vkshmemx_cmd_getmem(VkCommandBuffer cmd, void *dest, const void *source, size_t nelems, int pe) VKSHMEM_NOEXCEPT;
void vkshmemx_cmd_putmem_signal(VkCommandBuffer cmd, void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                uint64_t signal, int sig_op, int pe) VKSHMEM_NOEXCEPT;
void vkshmemx_cmd_signal_wait_until(VkCommandBuffer cmd, uint64_t *sig_addr, int cmp, uint64_t cmp_value) VKSHMEM_NOEXCEPT;
void vkshmemx_cmd_quiet(VkCommandBuffer cmd) VKSHMEM_NOEXCEPT;
void vkshmemx_cmd_barrier_all(VkCommandBuffer cmd) VKSHMEM_NOEXCEPT;
void vkshmemx_cmd_team_sync(VkCommandBuffer cmd, shmem_team_t team) VKSHMEM_NOEXCEPT;
void vkshmemx_cmd_broadcastmem(VkCommandBuffer cmd, shmem_team_t team, void *dest, const void *source, size_t nelems,
                               int PE_root) VKSHMEM_NOEXCEPT;
void vkshmemx_cmd_fcollectmem(VkCommandBuffer cmd, shmem_team_t team, void *dest, const void *source,
                              size_t nelems) VKSHMEM_NOEXCEPT;
void vkshmemx_cmd_alltoallmem(VkCommandBuffer cmd, shmem_team_t team, void *dest, const void *source,
                              size_t nelems) VKSHMEM_NOEXCEPT;
/* vkshmemx_cmd_TYPENAME_OP_reduce(cmd, team, dest, source, nreduce) for and/or/xor, max/min and
 * sum/prod over the types the device library reduces (generated). */
#include "vulkan_reduce.h"

#ifdef __cplusplus
}
#endif

#endif /* VKSHMEM_VULKAN_H */
