// SPDX-License-Identifier: BSL-1.0
// User compute kernels: a pipeline with one push-constant block and the
// device library's descriptor set, dispatched on the application queue and
// waited for; and that descriptor set.
#pragma once

#include "core/result.hpp"
#include "vulkan/device.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace vkshmem {

// The descriptor set of the HLSL device library (shaders/vkshmem.hlsl), which
// cannot use buffer device addresses: binding 0 is the device state block's
// allocation, bindings 1 .. VKSHMEM_HLSL_HEAP_BINDINGS are segments of the
// heaps this device reaches (vkshmem_abi.h). GLSL shaders ignore it.
class ShaderDescriptors {
public:
    struct Heap {
        VkBuffer buffer = VK_NULL_HANDLE; // null: not reachable directly
        std::size_t size = 0;
        std::size_t offset = 0; // (for answers, mailbox and reply)
    };
    // heaps[pe * 2 + space]; this PE's own heaps get bindings first, then the
    // other PEs' in the order my_pe + 1, my_pe + 2, ... while bindings last.
    // `answers` is bound at VKSHMEM_HLSL_ANSWERS_BINDING, `mailbox` and
    // `reply` (this PE's AMO mailbox) at VKSHMEM_HLSL_MAILBOX_BINDING and
    // VKSHMEM_HLSL_REPLY_BINDING, `head` (the copy of the state block's head) at
    // VKSHMEM_HLSL_HEAD_BINDING (`state`, the state block, again where null).
    static Result<std::unique_ptr<ShaderDescriptors>> create(VulkanDevice& dev, Heap state,
                                                             Heap answers, Heap mailbox, Heap reply, Heap head,
                                                             const std::vector<Heap>& heaps, int my_pe);
    ~ShaderDescriptors();
    VkDescriptorSetLayout layout() const { return layout_; }
    VkDescriptorSet set() const { return set_; }
    std::uint32_t seg_shift() const { return seg_shift_; }
    // The first binding of each heap (pe * 2 + space), or VKSHMEM_HLSL_NO_SLOT.
    const std::vector<std::uint32_t>& map() const { return map_; }
    std::uint32_t bindings_used() const { return used_; }

private:
    explicit ShaderDescriptors(VulkanDevice& d) : dev_(d) {}
    VulkanDevice& dev_;
    VkDescriptorSetLayout layout_ = VK_NULL_HANDLE;
    VkDescriptorPool pool_ = VK_NULL_HANDLE;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    std::uint32_t seg_shift_ = 0;
    std::uint32_t used_ = 0;
    std::vector<std::uint32_t> map_;
};

class VulkanKernel {
public:
    // `descriptors` (may be null) becomes set 0 of the pipeline layout and is
    // bound at every dispatch.
    static Result<std::unique_ptr<VulkanKernel>> create(VulkanDevice& dev, const std::uint32_t* spirv,
                                                        std::size_t bytes, std::uint32_t push_bytes,
                                                        const ShaderDescriptors* descriptors);
    ~VulkanKernel();
    // Submits one dispatch; wait() blocks until it has finished.
    Result<void> submit(std::uint32_t gx, std::uint32_t gy, std::uint32_t gz, const void* push,
                        std::uint32_t push_bytes);
    Result<void> wait();
    // Records one dispatch into the application's command buffer `cb`, ordered after everything
    // recorded before it and before everything recorded after it (memory barriers on both
    // sides). The compute pipeline, descriptor sets and push constants bound in `cb` are this
    // kernel's afterwards.
    void record(VkCommandBuffer cb, std::uint32_t gx, std::uint32_t gy, std::uint32_t gz, const void* push,
                std::uint32_t push_bytes) const;
    // The same with the group counts read from `args` at `offset` when the dispatch runs
    // (vkCmdDispatchIndirect).
    void record_indirect(VkCommandBuffer cb, VkBuffer args, VkDeviceSize offset, const void* push,
                         std::uint32_t push_bytes) const;
    std::uint32_t push_bytes() const { return push_bytes_; }

private:
    explicit VulkanKernel(VulkanDevice& d) : dev_(d) {}
    void record_around(VkCommandBuffer cb, const void* push, std::uint32_t push_bytes,
                       const std::function<void()>& dispatch) const;
    VulkanDevice& dev_;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    VkShaderModule module_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    std::uint32_t push_bytes_ = 0;
};

} // namespace vkshmem
