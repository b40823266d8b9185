// SPDX-License-Identifier: BSL-1.0
// A private pipeline of copy batches (VulkanDevice::CopyStream): the proxy's
// puts into heaps that only device copies reach, and its bulk puts into host
// heaps. Waiting for each batch before serving more left the copy engine idle
// while the proxy waited and the shaders idle while the ring was full; with
// batches in flight the proxy keeps serving and completes tickets as their
// batch finishes.
#include "vulkan/device.hpp"

#include <fmt/format.h>

namespace vkshmem {

Result<std::unique_ptr<VulkanDevice::CopyStream>> VulkanDevice::copy_stream() {
    std::unique_ptr<CopyStream> s(new CopyStream(*this));
    // Batches go to the copy family's queues in turn: a copy engine pays microseconds per region,
    // which several engines pay side by side.
    for (std::size_t i = 0; i < CopyStream::kDepth; ++i) {
        CopyStream::Slot& slot = s->slots_[i];
        slot.sub.family = copy_family_;
        slot.sub.queue = stream_queues_.empty() ? copy_.queue : stream_queues_[i % stream_queues_.size()];
        if (auto r = make_submitter(slot.sub); !r) return r.error();
    }
    return s;
}

VulkanDevice::CopyStream::~CopyStream() {
    (void)submit();
    (void)done(true);
    VkDevice d = dev_.device_;
    for (Slot& slot : slots_) {
        if (slot.sub.fence) vkDestroyFence(d, slot.sub.fence, nullptr);
        if (slot.sub.pool) vkDestroyCommandPool(d, slot.sub.pool, nullptr); // frees its command buffer
    }
}

void VulkanDevice::CopyStream::add(const DeviceMemory& dst, std::size_t dst_off, const DeviceMemory& src,
                                   std::size_t src_off, std::size_t n, bool host_reads) {
    if (open_ < 0) {
        // Batch n is slot (n - 1) % kDepth; submit() left the next one free.
        open_ = static_cast<int>(submitted_ % kDepth);
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        vkBeginCommandBuffer(slots_[open_].sub.cmd, &bi);
    }
    regions_.add(slots_[open_].sub.cmd, src.buffer, dst.buffer, VkBufferCopy{src_off, dst_off, n});
    open_bytes_ += n;
    open_host_reads_ = open_host_reads_ || host_reads;
}

Result<void> VulkanDevice::CopyStream::retire(Slot& s, bool wait) {
    if (s.seq <= done_) return {};
    VkResult r = wait ? dev_.wait_fence(s.sub.fence) : vkGetFenceStatus(dev_.device_, s.sub.fence);
    if (r == VK_NOT_READY) return {};
    if (r != VK_SUCCESS) return make_error(fmt::format("a batch of copies: {}", vk_result_name(r)), r);
    vkResetFences(dev_.device_, 1, &s.sub.fence);
    vkResetCommandBuffer(s.sub.cmd, 0);
    done_ = s.seq;
    return {};
}

Result<std::uint64_t> VulkanDevice::CopyStream::submit() {
    if (open_ < 0) return std::uint64_t{0};
    Slot& s = slots_[open_];
    regions_.record(s.sub.cmd);
    if (open_host_reads_) {
        // What the copies wrote, visible to host reads. Only where a host heap is among the
        // targets: in every batch, it added 2-3 us to the proxy's 8-byte put round trip into a
        // same-GPU peer's device heap (an H200: 20-23 us against 18-20).
        barrier_for_host_reads(s.sub.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    }
    vkEndCommandBuffer(s.sub.cmd);
    open_ = -1;
    open_bytes_ = 0;
    open_host_reads_ = false;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &s.sub.cmd;
    VkResult r;
    {
        std::lock_guard lk(dev_.copy_mu_); // the queue is the runtime's copy queue
        r = vkQueueSubmit(s.sub.queue, 1, &si, s.sub.fence);
    }
    if (r != VK_SUCCESS) {
        vkResetCommandBuffer(s.sub.cmd, 0);
        return make_error(fmt::format("submitting a batch of copies: {}", vk_result_name(r)), r);
    }
    s.seq = ++submitted_;
    // The next batch's slot (the oldest's) must be free before anything is recorded into it.
    while (submitted_ - done_ >= kDepth)
        if (auto w = retire(slots_[done_ % kDepth], true); !w) return w.error();
    return submitted_;
}

Result<std::uint64_t> VulkanDevice::CopyStream::done(bool wait) {
    // In order: the oldest in flight first.
    while (done_ < submitted_) {
        const std::uint64_t before = done_;
        if (auto r = retire(slots_[done_ % kDepth], wait); !r) return r.error(); // batch done_ + 1's
        if (done_ == before) break;
    }
    return done_;
}

} // namespace vkshmem
