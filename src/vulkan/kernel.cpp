// SPDX-License-Identifier: BSL-1.0
#include "vulkan/kernel.hpp"

#include "core/log.hpp"

#include "vkshmem_abi.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace vkshmem {

Result<std::unique_ptr<ShaderDescriptors>> ShaderDescriptors::create(VulkanDevice& dev, Heap state, Heap answers,
                                                                     Heap mailbox, Heap reply, Heap head,
                                                                     const std::vector<Heap>& heaps, int my_pe) {
    std::unique_ptr<ShaderDescriptors> s(new ShaderDescriptors(dev));
    VkDevice d = dev.device();
    constexpr std::uint32_t kHeapEnd = 1 + VKSHMEM_HLSL_HEAP_BINDINGS; // bindings below it: state, answers, heaps
    static_assert(VKSHMEM_HLSL_MAILBOX_BINDING == kHeapEnd && VKSHMEM_HLSL_REPLY_BINDING == kHeapEnd + 1 &&
                  VKSHMEM_HLSL_HEAD_BINDING == kHeapEnd + 2);
    constexpr std::uint32_t kBindings = kHeapEnd + 3;
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(dev.physical(), &props);
    if (props.limits.maxPerStageDescriptorStorageBuffers < kBindings)
        return make_error(fmt::format("the device allows {} storage buffers per shader stage, the HLSL device "
                                      "library's descriptor set has {}",
                                      props.limits.maxPerStageDescriptorStorageBuffers, kBindings));
    // Segments: the largest power of two a descriptor may span, but no larger
    // than the largest heap needs. Their starts are multiples of it, so also
    // of minStorageBufferOffsetAlignment (a power of two far below it).
    // (Binding 1, the answers or the state block again, lies in one segment too.)
    std::size_t largest = std::max(answers.size, state.size);
    for (const Heap& h : heaps) largest = std::max(largest, h.size);
    const std::size_t seg = std::min<std::size_t>(std::bit_floor(std::uint64_t{props.limits.maxStorageBufferRange}),
                                                  std::bit_ceil(largest));
    s->seg_shift_ = static_cast<std::uint32_t>(std::countr_zero(seg));
    if (seg < props.limits.minStorageBufferOffsetAlignment)
        return make_error(fmt::format("heap segments of {} bytes are not aligned to minStorageBufferOffsetAlignment {}",
                                      seg, props.limits.minStorageBufferOffsetAlignment));

    // Every binding gets a buffer (the state block where no heap segment is
    // left), so the set is complete without partially-bound descriptors.
    std::vector<VkDescriptorBufferInfo> infos(kBindings,
                                              VkDescriptorBufferInfo{state.buffer, state.offset, state.size});
    s->map_.assign(heaps.size(), VKSHMEM_HLSL_NO_SLOT);
    const int n = static_cast<int>(heaps.size() / 2);
    std::uint32_t next = VKSHMEM_HLSL_ANSWERS_BINDING + 1;
    for (int k = 0; k < n; ++k) {
        const int pe = (my_pe + k) % n;
        for (int space = 0; space < 2; ++space) {
            const Heap& h = heaps[static_cast<std::size_t>(pe * 2 + space)];
            if (!h.buffer || !h.size) continue;
            const auto segs = static_cast<std::uint32_t>((h.size + seg - 1) / seg);
            if (next + segs > kHeapEnd) continue; // through the proxy
            s->map_[static_cast<std::size_t>(pe * 2 + space)] = next;
            for (std::uint32_t j = 0; j < segs; ++j) {
                const std::size_t off = std::size_t(j) * seg;
                infos[next + j] = {h.buffer, off, std::min(seg, h.size - off)};
            }
            next += segs;
        }
    }
    s->used_ = next - 1;
    if (answers.buffer) infos[VKSHMEM_HLSL_ANSWERS_BINDING] = {answers.buffer, answers.offset, answers.size};
    if (mailbox.buffer && reply.buffer) {
        infos[VKSHMEM_HLSL_MAILBOX_BINDING] = {mailbox.buffer, mailbox.offset, mailbox.size};
        infos[VKSHMEM_HLSL_REPLY_BINDING] = {reply.buffer, reply.offset, reply.size};
    }
    if (head.buffer) infos[VKSHMEM_HLSL_HEAD_BINDING] = {head.buffer, head.offset, head.size};

    std::vector<VkDescriptorSetLayoutBinding> bindings(kBindings);
    for (std::uint32_t b = 0; b < kBindings; ++b)
        bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo lci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    lci.bindingCount = kBindings;
    lci.pBindings = bindings.data();
    VkResult r = vkCreateDescriptorSetLayout(d, &lci, nullptr, &s->layout_);
    if (r != VK_SUCCESS) return make_error(fmt::format("vkCreateDescriptorSetLayout: {}", vk_result_name(r)), r);
    const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kBindings};
    VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pci.maxSets = 1;
    pci.poolSizeCount = 1;
    pci.pPoolSizes = &size;
    if ((r = vkCreateDescriptorPool(d, &pci, nullptr, &s->pool_)) != VK_SUCCESS)
        return make_error(fmt::format("vkCreateDescriptorPool: {}", vk_result_name(r)), r);
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = s->pool_;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &s->layout_;
    if ((r = vkAllocateDescriptorSets(d, &ai, &s->set_)) != VK_SUCCESS)
        return make_error(fmt::format("vkAllocateDescriptorSets: {}", vk_result_name(r)), r);
    std::vector<VkWriteDescriptorSet> writes(kBindings);
    for (std::uint32_t b = 0; b < kBindings; ++b) {
        writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[b].dstSet = s->set_;
        writes[b].dstBinding = b;
        writes[b].descriptorCount = 1;
        writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[b].pBufferInfo = &infos[b];
    }
    vkUpdateDescriptorSets(d, kBindings, writes.data(), 0, nullptr);
    return s;
}

ShaderDescriptors::~ShaderDescriptors() {
    VkDevice d = dev_.device();
    if (pool_) vkDestroyDescriptorPool(d, pool_, nullptr);
    if (layout_) vkDestroyDescriptorSetLayout(d, layout_, nullptr);
}

namespace {
// Whether SPIR-V module `words` decorates a specialization constant with
// SpecId `id` (OpDecorate %c SpecId id).
bool declares_spec_id(const std::uint32_t* words, std::size_t n, std::uint32_t id) {
    constexpr std::uint32_t kOpDecorate = 71, kSpecId = 1;
    for (std::size_t i = 5; i < n;) { // (after the header)
        const std::uint32_t count = words[i] >> 16, op = words[i] & 0xffffu;
        if (count == 0) return false;
        if (op == kOpDecorate && count == 4 && i + 3 < n && words[i + 2] == kSpecId && words[i + 3] == id) return true;
        i += count;
    }
    return false;
}
} // namespace

Result<std::unique_ptr<VulkanKernel>> VulkanKernel::create(VulkanDevice& dev, const std::uint32_t* spirv,
                                                           std::size_t bytes, std::uint32_t push_bytes,
                                                           const ShaderDescriptors* descriptors) {
    std::unique_ptr<VulkanKernel> k(new VulkanKernel(dev));
    VkDevice d = dev.device();
    k->push_bytes_ = push_bytes;
    VkShaderModuleCreateInfo sm{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    sm.codeSize = bytes;
    sm.pCode = spirv;
    VkResult r = vkCreateShaderModule(d, &sm, nullptr, &k->module_);
    if (r != VK_SUCCESS) return make_error(fmt::format("vkCreateShaderModule: {}", vk_result_name(r)), r);
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.pushConstantRangeCount = push_bytes ? 1 : 0;
    pl.pPushConstantRanges = &range;
    // Set 0: the HLSL library's descriptors (a GLSL shader declares none, and
    // an unused set in the layout costs nothing).
    VkDescriptorSetLayout set_layout = descriptors ? descriptors->layout() : VK_NULL_HANDLE;
    pl.setLayoutCount = descriptors ? 1 : 0;
    pl.pSetLayouts = &set_layout;
    k->set_ = descriptors ? descriptors->set() : VK_NULL_HANDLE;
    if ((r = vkCreatePipelineLayout(d, &pl, nullptr, &k->layout_)) != VK_SUCCESS)
        return make_error(fmt::format("vkCreatePipelineLayout: {}", vk_result_name(r)), r);
    VkComputePipelineCreateInfo cp{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cp.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cp.stage.module = k->module_;
    cp.stage.pName = "main";
    // The device library's specialization constants (vkshmem_abi.h), which
    // shaders that do not use them ignore: whether it may use device-scope
    // barriers (not on lavapipe), and for HLSL the highest heap binding the
    // descriptor set fills. The latter only where the shader declares it and
    // not on lavapipe: drivers key their shader caches by the specialization
    // too, and one key for every PE count keeps lavapipe's cache (and that of
    // GLSL kernels everywhere) as useful as before.
    const bool lavapipe = dev.report().driver_id == VK_DRIVER_ID_MESA_LLVMPIPE;
    struct {
        VkBool32 fences;
        std::uint32_t bindings;
    } const values{lavapipe ? VK_FALSE : VK_TRUE,
                   descriptors ? descriptors->bindings_used() : VKSHMEM_HLSL_HEAP_BINDINGS};
    const VkSpecializationMapEntry entries[] = {{VKSHMEM_SPEC_DEVICE_FENCES, 0, sizeof(VkBool32)},
                                                {VKSHMEM_SPEC_HLSL_BINDINGS, 4, sizeof(std::uint32_t)}};
    const bool bindings = !lavapipe && declares_spec_id(spirv, bytes / 4, VKSHMEM_SPEC_HLSL_BINDINGS);
    const VkSpecializationInfo spec{bindings ? 2u : 1u, entries, sizeof values, &values};
    cp.stage.pSpecializationInfo = &spec;
    cp.layout = k->layout_;
    if ((r = vkCreateComputePipelines(d, VK_NULL_HANDLE, 1, &cp, nullptr, &k->pipeline_)) != VK_SUCCESS)
        return make_error(fmt::format("vkCreateComputePipelines: {}", vk_result_name(r)), r);
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = dev.queue_family();
    if ((r = vkCreateCommandPool(d, &pci, nullptr, &k->pool_)) != VK_SUCCESS)
        return make_error(fmt::format("vkCreateCommandPool: {}", vk_result_name(r)), r);
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = k->pool_;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    if ((r = vkAllocateCommandBuffers(d, &cai, &k->cmd_)) != VK_SUCCESS)
        return make_error(fmt::format("vkAllocateCommandBuffers: {}", vk_result_name(r)), r);
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = vkCreateFence(d, &fci, nullptr, &k->fence_)) != VK_SUCCESS)
        return make_error(fmt::format("vkCreateFence: {}", vk_result_name(r)), r);
    return k;
}

VulkanKernel::~VulkanKernel() {
    VkDevice d = dev_.device();
    if (fence_) vkDestroyFence(d, fence_, nullptr);
    if (pool_) vkDestroyCommandPool(d, pool_, nullptr);
    if (pipeline_) vkDestroyPipeline(d, pipeline_, nullptr);
    if (layout_) vkDestroyPipelineLayout(d, layout_, nullptr);
    if (module_) vkDestroyShaderModule(d, module_, nullptr);
}

Result<void> VulkanKernel::submit(std::uint32_t gx, std::uint32_t gy, std::uint32_t gz, const void* push,
                                  std::uint32_t push_bytes) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkResetCommandBuffer(cmd_, 0);
    vkBeginCommandBuffer(cmd_, &bi);
    // Host writes before the dispatch (puts through the API) are made visible
    // by the submission itself; the shader's writes are made visible to the
    // host after it.
    vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
    if (set_)
        vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set_, 0, nullptr);
    if (push_bytes) vkCmdPushConstants(cmd_, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
    vkCmdDispatch(cmd_, gx, gy, gz);
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0,
                         nullptr);
    vkEndCommandBuffer(cmd_);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd_;
    std::lock_guard lk(dev_.queue_mutex());
    VkResult r = vkQueueSubmit(dev_.queue(), 1, &si, fence_);
    if (r != VK_SUCCESS) return make_error(fmt::format("vkQueueSubmit: {}", vk_result_name(r)), r);
    return {};
}

void VulkanKernel::record_around(VkCommandBuffer cb, const void* push, std::uint32_t push_bytes,
                                 const std::function<void()>& dispatch) const {
    VkMemoryBarrier before{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    before.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    before.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_INDIRECT_COMMAND_READ_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT, 0, 1, &before, 0,
                         nullptr, 0, nullptr);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
    if (set_) vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set_, 0, nullptr);
    if (push_bytes) vkCmdPushConstants(cb, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
    dispatch();
    VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    after.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    after.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &after, 0,
                         nullptr, 0, nullptr);
}

void VulkanKernel::record(VkCommandBuffer cb, std::uint32_t gx, std::uint32_t gy, std::uint32_t gz, const void* push,
                          std::uint32_t push_bytes) const {
    record_around(cb, push, push_bytes, [&] { vkCmdDispatch(cb, gx, gy, gz); });
}

void VulkanKernel::record_indirect(VkCommandBuffer cb, VkBuffer args, VkDeviceSize offset, const void* push,
                                  std::uint32_t push_bytes) const {
    record_around(cb, push, push_bytes, [&] { vkCmdDispatchIndirect(cb, args, offset); });
}

Result<void> VulkanKernel::wait() {
    // Polled first on GPUs: a blocking wait sleeps until an interrupt, which a short dispatch ends
    // well before.
    VkResult r = dev_.wait_fence(fence_);
    vkResetFences(dev_.device(), 1, &fence_);
    if (r != VK_SUCCESS) return make_error(fmt::format("waiting for a dispatch: {}", vk_result_name(r)), r);
    return {};
}

} // namespace vkshmem
