// SPDX-License-Identifier: BSL-1.0
// Vulkan interop (include/vkshmem/vulkan.h): the runtime's Vulkan objects,
// device addresses for shaders, and the dispatch helper.
#include <vkshmem/vulkan.h>

#include "api/guard.hpp"
#include "api/team_handle.hpp"
#include "vulkan/kernel.hpp"

#include "vkshmem_abi.h"

using namespace vkshmem;

struct vkshmemx_kernel {
    std::unique_ptr<VulkanKernel> k;
};

namespace {
VulkanDevice* require_device(const char* call) {
    VulkanDevice* d = require_runtime(call).device();
    if (!d)
        error(call, "this PE runs without a Vulkan device ({}); unset VKSHMEM_DEVICE=none or install a driver",
              g_runtime->no_device_reason());
    return d;
}

} // namespace

extern "C" {

VkInstance vkshmemx_vk_instance(void) noexcept {
    VulkanDevice* d = require_device("vkshmemx_vk_instance");
    return d ? d->instance() : VK_NULL_HANDLE;
}
VkPhysicalDevice vkshmemx_vk_physical_device(void) noexcept {
    VulkanDevice* d = require_device("vkshmemx_vk_physical_device");
    return d ? d->physical() : VK_NULL_HANDLE;
}
VkDevice vkshmemx_vk_device(void) noexcept {
    VulkanDevice* d = require_device("vkshmemx_vk_device");
    return d ? d->device() : VK_NULL_HANDLE;
}
VkQueue vkshmemx_vk_queue(uint32_t* family) noexcept {
    VulkanDevice* d = require_device("vkshmemx_vk_queue");
    if (!d) return VK_NULL_HANDLE;
    if (family) *family = d->queue_family();
    return d->queue();
}

VkResult vkshmemx_queue_submit(uint32_t count, const VkSubmitInfo* submits, VkFence fence) noexcept {
    VulkanDevice* d = require_device("vkshmemx_queue_submit");
    if (!d) return VK_ERROR_INITIALIZATION_FAILED;
    std::lock_guard lk(d->queue_mutex());
    return vkQueueSubmit(d->queue(), count, submits, fence);
}

int vkshmemx_use_vk_device(VkInstance instance, VkPhysicalDevice physical, VkDevice device, VkQueue queue,
                           uint32_t queue_family) noexcept {
    if (g_runtime) {
        error("vkshmemx_use_vk_device", "called after shmem_init; call it before");
        return 1;
    }
    if (!instance || !physical || !device || !queue) {
        error("vkshmemx_use_vk_device", "a handle is VK_NULL_HANDLE");
        return 1;
    }
    Runtime::use_device(AdoptedDevice{instance, physical, device, queue, queue_family});
    return 0;
}

const char* const* vkshmemx_required_device_extensions(uint32_t* count) noexcept {
    static const char* const names[] = {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
                                        VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME};
    if (count) *count = 2;
    return names;
}

uint64_t vkshmemx_device_address(const void* sym) noexcept {
    Runtime& rt = require_runtime("vkshmemx_device_address");
    const int s = space_of(sym);
    if (s != kHostHeap && s != kDeviceHeap) return 0;
    const std::uint64_t base = rt.memory().device_address(g_state.my_pe, static_cast<Space>(s));
    return base ? base + (reinterpret_cast<std::uintptr_t>(sym) - g_state.space[s].lo) : 0;
}

uint64_t vkshmemx_device_state(void) noexcept {
    Runtime& rt = require_runtime("vkshmemx_device_state");
    return rt.proxy() ? rt.proxy()->state_address() : 0;
}

uint64_t vkshmemx_team_device(shmem_team_t team) noexcept {
    coll::Team* t = api::team_of(team, "vkshmemx_team_device");
    Proxy* proxy = g_runtime->proxy();
    return t && proxy ? proxy->team_address(t->slot) : 0;
}

VkDescriptorSetLayout vkshmemx_descriptor_set_layout(void) noexcept {
    if (!require_device("vkshmemx_descriptor_set_layout")) return VK_NULL_HANDLE;
    Proxy* proxy = g_runtime->proxy();
    return proxy && proxy->descriptors() ? proxy->descriptors()->layout() : VK_NULL_HANDLE;
}

VkDescriptorSet vkshmemx_descriptor_set(void) noexcept {
    if (!require_device("vkshmemx_descriptor_set")) return VK_NULL_HANDLE;
    Proxy* proxy = g_runtime->proxy();
    return proxy && proxy->descriptors() ? proxy->descriptors()->set() : VK_NULL_HANDLE;
}

vkshmemx_kernel* vkshmemx_kernel_create(const uint32_t* spirv, size_t spirv_bytes, uint32_t push_bytes) noexcept {
    VulkanDevice* d = require_device("vkshmemx_kernel_create");
    if (!d) return nullptr;
    if (push_bytes > 128) {
        error("vkshmemx_kernel_create", "{} push-constant bytes: at most 128 are portable", push_bytes);
        return nullptr;
    }
    Proxy* proxy = g_runtime->proxy();
    auto k = VulkanKernel::create(*d, spirv, spirv_bytes, push_bytes, proxy ? proxy->descriptors() : nullptr);
    if (!k) {
        error("vkshmemx_kernel_create", "{}", k.error().message);
        return nullptr;
    }
    return new vkshmemx_kernel{std::move(*k)};
}

int vkshmemx_dispatch(vkshmemx_kernel* kernel, uint32_t gx, uint32_t gy, uint32_t gz, const void* push,
                      uint32_t push_bytes) noexcept {
    static constexpr const char* call = "vkshmemx_dispatch";
    Runtime& rt = require_runtime(call);
    if (!kernel) {
        error(call, "kernel is NULL");
        return 1;
    }
    if (push_bytes != kernel->k->push_bytes()) {
        error(call, "{} push-constant bytes given, the kernel was created for {}", push_bytes,
              kernel->k->push_bytes());
        return 1;
    }
    Proxy* proxy = rt.proxy();
    proxy->dispatch_begin();
    auto r = kernel->k->submit(gx, gy, gz, push, push_bytes);
    if (r) r = kernel->k->wait();
    // Taken while the dispatch counts as running: the proxy thread reports errors that no
    // dispatch call will (kernels the application recorded itself) only when none runs.
    const auto [code, info] = proxy->take_error();
    // A shader that reserved a ticket and then stopped before publishing it
    // (a wait that gave up) leaves the ring behind: say so instead of hanging.
    const bool drained = proxy->dispatch_end(10000);
    if (!r) {
        error(call, "{}", r.error().message);
        return 1;
    }
    if (!drained) {
        error(call, "the shader left proxy requests unpublished or unserved for 10 s");
        return 1;
    }
    if (code) {
        error(call, "{} (code {}, detail {})", Proxy::device_error_text(code), code, info);
        return 1;
    }
    return 0;
}

int vkshmemx_kernel_record(VkCommandBuffer cmd, vkshmemx_kernel* kernel, uint32_t gx, uint32_t gy, uint32_t gz,
                           const void* push, uint32_t push_bytes) noexcept {
    static constexpr const char* call = "vkshmemx_kernel_record";
    require_runtime(call);
    if (!kernel || cmd == VK_NULL_HANDLE) {
        error(call, "kernel is NULL or cmd is VK_NULL_HANDLE");
        return 1;
    }
    if (push_bytes != kernel->k->push_bytes()) {
        error(call, "{} push-constant bytes given, the kernel was created for {}", push_bytes,
              kernel->k->push_bytes());
        return 1;
    }
    kernel->k->record(cmd, gx, gy, gz, push, push_bytes);
    return 0;
}

void vkshmemx_kernel_destroy(vkshmemx_kernel* kernel) noexcept { delete kernel; }

} // extern "C"
