// SPDX-License-Identifier: BSL-1.0
// Host-initiated atomics on device memory that the CPU may not touch
// atomically (a GPU's BAR, or memory it cannot map). The host posts the atomic
// in its PE's mailbox and submits the sweeper kernel (kernels/amo.comp); a
// kernel of the device library that is waiting on this GPU takes it first, so
// a kernel that waits for an atomic the proxy makes for it does not wait for
// itself, nor for another PE's kernel that holds the GPU
// (shaders/vkshmem_mailbox.glsl).
#include "vulkan/device.hpp"

#include "amo_comp_spv.h"
#include "core/log.hpp"
#include "vkshmem_abi.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <fmt/format.h>
#include <thread>

namespace vkshmem {
namespace {
// Must match the push constant block of kernels/amo.comp.
struct AmoPush {
    std::uint64_t request, claim, reply;
};
static_assert(sizeof(AmoPush) == 24);

template <class T> std::atomic_ref<T> word(void* mailbox, std::size_t off) {
    return std::atomic_ref<T>(*reinterpret_cast<T*>(static_cast<char*>(mailbox) + off));
}
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

    // The request (and the reply, unless shared) where running kernels see
    // host writes at once (the BAR on a GPU); the sweeper's command buffer,
    // recorded once and resubmitted.
    using M = abi::vkshmem_mailbox_layout;
    auto mb = allocate_mapped(sizeof(M) + sizeof(abi::vkshmem_mailbox_reply), MappedUse::ShaderReads);
    if (!mb) return make_error(fmt::format("AMO mailbox: {}", mb.error().message));
    amo_mailbox_ = *mb;
    std::memset(amo_mailbox_.mapped, 0, amo_mailbox_.size);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const std::uint64_t own = amo_mailbox_.address;
    if (amo_shared_.buffer) {
        amo_at_ = {own, amo_shared_.address + offsetof(M, taken), amo_shared_.reply_address, amo_shared_.buffer,
                   amo_shared_.reply_buffer, amo_shared_.offset, amo_shared_.reply_offset};
        amo_reply_host_ = amo_shared_.reply_host;
    } else {
        amo_at_ = {own, own + offsetof(M, taken), own + sizeof(M), amo_mailbox_.buffer, amo_mailbox_.buffer, 0,
                   sizeof(M)};
        amo_reply_host_ = static_cast<char*>(amo_mailbox_.mapped) + sizeof(M);
    }
    const AmoPush push{amo_at_.request, amo_at_.claim, amo_at_.reply};
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(amo_.cmd, &bi);
    vkCmdBindPipeline(amo_.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, amo_pipeline_);
    vkCmdPushConstants(amo_.cmd, amo_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
    vkCmdDispatch(amo_.cmd, 1, 1, 1);
    barrier_for_host_reads(amo_.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
    if ((r = vkEndCommandBuffer(amo_.cmd)) != VK_SUCCESS)
        return make_error(fmt::format("recording the AMO sweeper: {}", vk_result_name(r)), r);
    return {};
}

void VulkanDevice::share_amo_mailbox(const DeviceMemory& heap, std::size_t offset, const DeviceMemory& reply_mem,
                                     std::size_t reply_offset, void* reply_host) {
    std::lock_guard lk(copy_mu_);
    amo_shared_ = {heap.buffer,          offset,
                   heap.address + offset, reply_mem.buffer,
                   reply_offset,         reply_mem.address + reply_offset,
                   reply_host};
}

VulkanDevice::AmoMailbox VulkanDevice::amo_mailbox() {
    std::lock_guard lk(copy_mu_);
    if (auto r = ensure_amo_pipeline(); !r) {
        VKSHMEM_DEBUG("device: no AMO mailbox: {}", r.error().message);
        return {};
    }
    return amo_at_;
}

Result<std::uint64_t> VulkanDevice::atomic(std::uint64_t address, int target_pe, std::uint64_t target_off,
                                           unsigned op, unsigned width, std::uint64_t operand, std::uint64_t cond) {
    using M = abi::vkshmem_mailbox_layout;
    using R = abi::vkshmem_mailbox_reply;
    std::lock_guard lk(copy_mu_);
    if (auto r = ensure_amo_pipeline(); !r) return r.error();
    const std::uint32_t seq = ++amo_seq_;
    M req{};
    req.target_pe = target_pe;
    req.op_width = op | width << 8;
    req.target = address;
    req.target_off = target_off;
    req.operand = operand;
    req.cond = cond;
    constexpr std::size_t kFields = offsetof(M, target_pe); // what precedes them: posted, taken
    void* mb = amo_mailbox_.mapped;
    std::memcpy(static_cast<char*>(mb) + kFields, reinterpret_cast<const char*>(&req) + kFields, sizeof(M) - kFields);
    // The fields before `posted`, and all of it out of the write-combining
    // buffers now: a release store orders neither.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    word<std::uint32_t>(mb, offsetof(M, posted)).store(seq, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (amo_shared_.buffer) {
        // The copy for the other PEs' kernels: two updates by the copy
        // queue, whose copies run beside running kernels (of other
        // processes too), the fields strictly before `posted`. Not waited
        // for: the next user of copy_ does (begin_copy).
        begin_copy();
        vkCmdUpdateBuffer(copy_.cmd, amo_shared_.buffer, amo_shared_.offset + kFields, sizeof(M) - kFields,
                          reinterpret_cast<const char*>(&req) + kFields);
        VkMemoryBarrier bar{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        bar.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        bar.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        vkCmdPipelineBarrier(copy_.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &bar, 0,
                             nullptr, 0, nullptr);
        vkCmdUpdateBuffer(copy_.cmd, amo_shared_.buffer, amo_shared_.offset + offsetof(M, posted),
                          sizeof(std::uint32_t), &seq);
        if (auto r = submit_copy_cmd(); !r) // this PE's kernels and sweeper still see the request
            VKSHMEM_DEBUG("device atomic: posting the shared copy: {}", r.error().message);
    }
    void* rp = amo_reply_host_;
    auto done = [&] { return word<std::uint32_t>(rp, offsetof(R, done)).load(std::memory_order_acquire) == seq; };
    // (Where the claim word is the shared copy's, the CPU cannot read it: a
    // sweeper that finds the atomic taken does nothing.)
    auto taken = [&] {
        return !amo_shared_.buffer &&
               word<std::uint32_t>(mb, offsetof(M, taken)).load(std::memory_order_acquire) == seq;
    };
    // A sweeper still queued from an earlier atomic (behind a running kernel
    // that served that one) serves this one when it runs. Another is
    // submitted whenever none is queued and nobody holds this one: one that
    // ran before this was posted did not serve it, and a waiting HLSL kernel
    // hands back an 8-byte atomic it took when the word changed under it.
    // (A diagnostic: whether an atomic waits long, and for whom; only with debug logging on.)
    const auto posted_at = std::chrono::steady_clock::now();
    bool slow_logged = !log_enabled(LogLevel::Debug);
    while (!done()) {
        if (!slow_logged && std::chrono::steady_clock::now() - posted_at > std::chrono::milliseconds(500)) {
            slow_logged = true;
            VKSHMEM_DEBUG("device atomic {} (op {}, {} bytes, PE {} offset {:#x}) not done after 0.5 s; a sweeper {}",
                          seq, op, width, target_pe, target_off, sweeper_pending_ ? "is queued" : "is not queued");
        }
        if (sweeper_pending_) {
            const VkResult s = vkGetFenceStatus(device_, amo_.fence);
            if (s == VK_SUCCESS) {
                vkResetFences(device_, 1, &amo_.fence);
                sweeper_pending_ = false;
            } else if (s != VK_NOT_READY) {
                return make_error(fmt::format("device atomic: {}", vk_result_name(s)), s);
            }
        }
        if (!sweeper_pending_ && !done() && !taken()) {
            VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
            si.commandBufferCount = 1;
            si.pCommandBuffers = &amo_.cmd;
            if (VkResult r = vkQueueSubmit(amo_.queue, 1, &si, amo_.fence); r != VK_SUCCESS)
                return make_error(fmt::format("device atomic: vkQueueSubmit: {}", vk_result_name(r)), r);
            sweeper_pending_ = true;
        }
        std::this_thread::yield();
    }
    std::uint64_t old = word<std::uint64_t>(rp, offsetof(R, result)).load(std::memory_order_relaxed);
    if (width == 4) old &= 0xffffffffu;
    VKSHMEM_TRACE("device atomic {}: op {}, {} bytes, PE {} offset {:#x}, operand {:#x}: old {:#x}", seq, op, width,
                  target_pe, target_off, operand, old);
    if (slow_logged && log_enabled(LogLevel::Debug))
        VKSHMEM_DEBUG("device atomic {} done after {:.1f} ms", seq,
                      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - posted_at).count());
    return old;
}

} // namespace vkshmem
