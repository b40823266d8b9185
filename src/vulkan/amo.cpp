// Host-initiated atomics on device memory that the CPU may not touch
// atomically (a GPU's BAR): a one-invocation compute dispatch does the
// operation on the device and returns the old value.
#include "vulkan/device.hpp"

#include "amo_comp_spv.h"

#include <cstring>
#include <fmt/format.h>

namespace vkshmem {
namespace {
// Must match the push constant block of kernels/amo.comp.
struct AmoPush {
    std::uint64_t target, result, operand, cond;
    std::uint32_t op, width;
};
static_assert(sizeof(AmoPush) == 40);
} // namespace

Result<void> VulkanDevice::ensure_amo_pipeline() {
    if (amo_pipeline_) return {};
    if (!report_.shader_int64) return make_error(fmt::format("{} lacks shaderInt64", report_.name));
    VkShaderModuleCreateInfo sm{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    sm.codeSize = sizeof amo_comp_spv;
    sm.pCode = amo_comp_spv;
    VkResult r = vkCreateShaderModule(device_, &sm, nullptr, &amo_module_);
    if (r != VK_SUCCESS) return make_error(fmt::format("vkCreateShaderModule(amo): {}", vk_result_name(r)), r);
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(AmoPush)};
    VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.pushConstantRangeCount = 1;
    pl.pPushConstantRanges = &range;
    if ((r = vkCreatePipelineLayout(device_, &pl, nullptr, &amo_layout_)) != VK_SUCCESS)
        return make_error(fmt::format("vkCreatePipelineLayout(amo): {}", vk_result_name(r)), r);
    VkComputePipelineCreateInfo cp{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cp.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cp.stage.module = amo_module_;
    cp.stage.pName = "main";
    cp.layout = amo_layout_;
    if ((r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &cp, nullptr, &amo_pipeline_)) != VK_SUCCESS)
        return make_error(fmt::format("vkCreateComputePipelines(amo): {}", vk_result_name(r)), r);

    // A small host-visible buffer with a device address for the old value.
    int type = -1;
    for (std::uint32_t i = 0; i < mem_props_.memoryTypeCount && type < 0; ++i) {
        auto fl = mem_props_.memoryTypes[i].propertyFlags;
        if ((fl & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (fl & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) &&
            !(fl & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
            type = static_cast<int>(i);
    }
    for (std::uint32_t i = 0; i < mem_props_.memoryTypeCount && type < 0; ++i)
        if (mem_props_.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) type = static_cast<int>(i);
    if (type < 0) return make_error("no host-visible memory type for atomic results");
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = 64;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    if ((r = vkCreateBuffer(device_, &bci, nullptr, &amo_result_.buffer)) != VK_SUCCESS)
        return make_error(fmt::format("vkCreateBuffer(amo result): {}", vk_result_name(r)), r);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, amo_result_.buffer, &req);
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.pNext = &flags;
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = static_cast<std::uint32_t>(type);
    if ((r = vkAllocateMemory(device_, &ai, nullptr, &amo_result_.memory)) != VK_SUCCESS)
        return make_error(fmt::format("vkAllocateMemory(amo result): {}", vk_result_name(r)), r);
    vkBindBufferMemory(device_, amo_result_.buffer, amo_result_.memory, 0);
    VkBufferDeviceAddressInfo bai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    bai.buffer = amo_result_.buffer;
    amo_result_.address = vkGetBufferDeviceAddress(device_, &bai);
    amo_result_.size = 64;
    amo_result_.type_index = static_cast<std::uint32_t>(type);
    return finish_memory(amo_result_, true);
}

Result<std::uint64_t> VulkanDevice::atomic(std::uint64_t address, unsigned op, unsigned width, std::uint64_t operand,
                                           std::uint64_t cond) {
    std::lock_guard lk(copy_mu_);
    if (auto r = ensure_amo_pipeline(); !r) return r.error();
    AmoPush push{address, amo_result_.address, operand, cond, op, width};
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(amo_.cmd, &bi);
    vkCmdBindPipeline(amo_.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, amo_pipeline_);
    vkCmdPushConstants(amo_.cmd, amo_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
    vkCmdDispatch(amo_.cmd, 1, 1, 1);
    if (auto r = submit_and_wait(amo_, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT); !r)
        return make_error(fmt::format("device atomic: {}", r.error().message), r.error().vk_result);
    std::uint64_t old = 0;
    std::memcpy(&old, amo_result_.mapped, width);
    return old;
}

} // namespace vkshmem
