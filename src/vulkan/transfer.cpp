// SPDX-License-Identifier: BSL-1.0
// Device copies: the path for device-heap data the CPU must not read (a GPU's
// BAR reads at ~0.03 GB/s) or cannot map, and for large host puts into a
// device heap, where a DMA copy beats CPU stores through the BAR (DESIGN §1).
#include "vulkan/device.hpp"

#include "core/log.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fmt/format.h>

namespace vkshmem {
namespace {
constexpr std::size_t kStagingBytes = 8u << 20;
}

Result<void> VulkanDevice::ensure_staging() {
    if (staging_.memory) return {};
    auto m = allocate_mapped(kStagingBytes, MappedUse::HostReads); // the CPU reads it back after gets
    if (!m) return make_error(fmt::format("staging buffer: {}", m.error().message), m.error().vk_result);
    staging_ = *m;
    return {};
}

void VulkanDevice::begin_copy() {
    (void)drain(); // (its error, if any, was the earlier submission's)
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(copy_.cmd, &bi);
}

void VulkanDevice::open_batch() {
    (void)settle_copy();
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(copy_.cmd, &bi);
    batch_open_ = true;
    batch_staged_ = 0;
}

void VulkanDevice::nbi_grew() {
    nbi_pending_.store(true, std::memory_order_relaxed);
    // One writer (under copy_mu_), read by the proxy thread every few microseconds: no clock read
    // per copy (a clock read and a store per 8-byte put_nbi cost an H200's rate 10-15 %).
    nbi_grown_.store(nbi_grown_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (!nbi_open_.load(std::memory_order_relaxed)) {
        nbi_open_.store(true, std::memory_order_release);
        if (nbi_starter_) nbi_starter_(); // a new batch
    }
}

Result<void> VulkanDevice::flush_batch() {
    if (!batch_open_) return {};
    nbi_open_.store(false, std::memory_order_relaxed);
    batch_.record(copy_.cmd);
    if (batch_host_reads_)
        barrier_for_host_reads(copy_.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    batch_host_reads_ = false;
    batch_open_ = false;
    batch_staged_ = 0;
    return submit_copy_cmd();
}

void VulkanDevice::CopyRegions::record(VkCommandBuffer cmd) {
    if (regions.empty()) return;
    vkCmdCopyBuffer(cmd, src, dst, static_cast<std::uint32_t>(regions.size()), regions.data());
    regions.clear();
}

void VulkanDevice::CopyRegions::add(VkCommandBuffer cmd, VkBuffer from, VkBuffer to, const VkBufferCopy& region) {
    // The regions of one command must not overlap (their destinations, nor a destination and a
    // source of the same buffer). 256 regions at most per command keep this check short.
    auto overlap = [](VkDeviceSize a, VkDeviceSize b, VkDeviceSize n, VkDeviceSize m) { return a < b + m && b < a + n; };
    bool conflict = false;
    if (from == src && to == dst)
        for (const VkBufferCopy& r : regions)
            if (overlap(r.dstOffset, region.dstOffset, r.size, region.size) ||
                (from == to && (overlap(r.srcOffset, region.dstOffset, r.size, region.size) ||
                                overlap(r.dstOffset, region.srcOffset, r.size, region.size)))) {
                conflict = true;
                break;
            }
    if (from != src || to != dst || conflict || regions.size() >= 256) {
        record(cmd);
        if (conflict) {
            VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
            mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
            mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
            vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                                 nullptr, 0, nullptr);
        }
        src = from;
        dst = to;
    }
    // A region that continues the last one on both sides extends it: the copy engine pays a few
    // microseconds per region (an H100 moves 32 KiB regions at a fifth of its rate), and pieces
    // of one transfer often arrive in order.
    if (!regions.empty()) {
        VkBufferCopy& last = regions.back();
        if (last.srcOffset + last.size == region.srcOffset && last.dstOffset + last.size == region.dstOffset) {
            last.size += region.size;
            return;
        }
    }
    regions.push_back(region);
}

Result<void> VulkanDevice::drain() {
    auto f = flush_batch();
    auto s = settle_copy();
    if (!f) return f;
    return s;
}

Result<void> VulkanDevice::submit_copy_cmd() {
    vkEndCommandBuffer(copy_.cmd);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &copy_.cmd;
    if (VkResult r = vkQueueSubmit(copy_.queue, 1, &si, copy_.fence); r != VK_SUCCESS) {
        vkResetCommandBuffer(copy_.cmd, 0);
        return make_error(vk_result_name(r), r);
    }
    copy_pending_ = true;
    return {};
}

VkResult VulkanDevice::wait_fence(VkFence fence) {
    // A small copy or a short dispatch on a GPU is done within tens to hundreds of microseconds:
    // poll the fence for up to 200 us (by the clock, not a count of looks) before a blocking wait,
    // which sleeps until an interrupt: on an H200 a dispatch of a 256 MiB putmem_wg took ~172 us
    // polled and 190-220 us waited for by vkWaitForFences. On a CPU driver the work runs on this
    // CPU's threads, which a poll would only hold up.
    VkResult r = VK_NOT_READY;
    if (!is_cpu()) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
        do r = vkGetFenceStatus(device_, fence);
        while (r == VK_NOT_READY && std::chrono::steady_clock::now() < until);
    }
    if (r == VK_NOT_READY) {
        const DebugTimer timer;
        // (Diagnostics: a copy held up behind other work for long, and one that never ends, which
        // a single unbounded wait would leave unsaid.)
        constexpr std::uint64_t kSlice = 2'000'000'000; // ns
        for (int slice = 1; (r = vkWaitForFences(device_, 1, &fence, VK_TRUE, kSlice)) == VK_TIMEOUT; ++slice)
            VKSHMEM_DEBUG("device: a copy's fence not signalled after {} s", 2 * slice);
        if (const double ms = timer.over(std::chrono::milliseconds(100)))
            VKSHMEM_DEBUG("device: a copy's fence took {:.1f} ms ({})", ms, vk_result_name(r));
    }
    return r;
}

void barrier_for_host_reads(VkCommandBuffer cmd, VkPipelineStageFlags stage, VkAccessFlags access) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = access;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, stage, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

Result<void> VulkanDevice::settle_copy() {
    if (!copy_pending_) return {};
    copy_pending_ = false;
    const VkResult r = wait_fence(copy_.fence);
    vkResetFences(device_, 1, &copy_.fence);
    vkResetCommandBuffer(copy_.cmd, 0);
    // The gets of the batch (read_nbi) to their destinations, before the staging buffer is reused.
    if (r == VK_SUCCESS)
        for (const Readback& b : readbacks_) std::memcpy(b.dst, static_cast<const char*>(staging_.mapped) + b.at, b.n);
    readbacks_.clear();
    if (r != VK_SUCCESS) return make_error(vk_result_name(r), r);
    return {};
}

Result<void> VulkanDevice::submit_copy(VkBuffer dst, std::size_t dst_off, VkBuffer src, std::size_t src_off,
                                       std::size_t n) {
    begin_copy();
    VkBufferCopy region{src_off, dst_off, n};
    vkCmdCopyBuffer(copy_.cmd, src, dst, 1, &region);
    barrier_for_host_reads(copy_.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    auto r = submit_copy_cmd();
    if (r) r = settle_copy();
    if (!r) return make_error(fmt::format("device copy of {} bytes: {}", n, r.error().message), r.error().vk_result);
    return {};
}

Result<void> VulkanDevice::make_submitter(Submitter& s) {
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = s.family;
    VkResult r;
    if ((r = vkCreateCommandPool(device_, &pci, nullptr, &s.pool)) != VK_SUCCESS)
        return make_error(fmt::format("vkCreateCommandPool: {}", vk_result_name(r)), r);
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = s.pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    if ((r = vkAllocateCommandBuffers(device_, &cai, &s.cmd)) != VK_SUCCESS)
        return make_error(fmt::format("vkAllocateCommandBuffers: {}", vk_result_name(r)), r);
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = vkCreateFence(device_, &fci, nullptr, &s.fence)) != VK_SUCCESS)
        return make_error(fmt::format("vkCreateFence: {}", vk_result_name(r)), r);
    return {};
}

Result<void> VulkanDevice::write(const DeviceMemory& dst, std::size_t dst_off, const void* src, std::size_t n) {
    if (!dst.buffer) return make_error("the device heap has no transfer buffer bound");
    std::lock_guard lk(copy_mu_);
    if (auto r = ensure_staging(); !r) return r;
    if (auto r = drain(); !r) return r; // the staging buffer is free again
    const auto* s = static_cast<const char*>(src);
    for (std::size_t done = 0; done < n;) {
        std::size_t chunk = std::min(kStagingBytes, n - done);
        std::memcpy(staging_.mapped, s + done, chunk);
        if (auto r = submit_copy(dst.buffer, dst_off + done, staging_.buffer, 0, chunk); !r) return r;
        done += chunk;
    }
    return {};
}

Result<void> VulkanDevice::read(void* dst, const DeviceMemory& src, std::size_t src_off, std::size_t n) {
    if (!src.buffer) return make_error("the device heap has no transfer buffer bound");
    std::lock_guard lk(copy_mu_);
    if (auto r = ensure_staging(); !r) return r;
    if (auto r = drain(); !r) return r; // the staging buffer is free again
    auto* d = static_cast<char*>(dst);
    for (std::size_t done = 0; done < n;) {
        std::size_t chunk = std::min(kStagingBytes, n - done);
        if (auto r = submit_copy(staging_.buffer, 0, src.buffer, src_off + done, chunk); !r) return r;
        std::memcpy(d + done, staging_.mapped, chunk);
        done += chunk;
    }
    return {};
}

Result<void> VulkanDevice::copy(const DeviceMemory& dst, std::size_t dst_off, const DeviceMemory& src,
                                std::size_t src_off, std::size_t n) {
    if (!dst.buffer || !src.buffer) return make_error("a device heap has no transfer buffer bound");
    std::lock_guard lk(copy_mu_);
    return submit_copy(dst.buffer, dst_off, src.buffer, src_off, n);
}

Result<std::size_t> VulkanDevice::stage_nbi(VkBuffer heap, std::size_t heap_off, std::size_t n, bool into) {
    if (auto r = ensure_staging(); !r) return r.error();
    if (batch_open_ && batch_staged_ + n > kStagingBytes)
        if (auto r = drain(); !r) return r.error();
    if (!batch_open_) open_batch();
    // A copy whose heap side continues the last one's has its bytes right after the last one's
    // in the staging buffer, and the two become one region: the copy engine pays about 2 us per
    // region (an H200: 64 8-byte put_nbi to consecutive words of a same-GPU peer's heap per
    // quiet took 2.3 us each as 64 regions).
    const VkBuffer from = into ? staging_.buffer : heap, to = into ? heap : staging_.buffer;
    std::size_t at = batch_staged_;
    if (const VkBufferCopy* l = batch_.last(from, to); l && (into ? l->dstOffset : l->srcOffset) + l->size == heap_off)
        at = (into ? l->srcOffset : l->dstOffset) + l->size; // (<= batch_staged_: nothing is staged after it)
    batch_.add(copy_.cmd, from, to, into ? VkBufferCopy{at, heap_off, n} : VkBufferCopy{heap_off, at, n});
    batch_staged_ = (at + n + 15) & ~std::size_t{15};
    nbi_grew();
    return at;
}

Result<void> VulkanDevice::write_nbi(const DeviceMemory& dst, std::size_t dst_off, const void* src, std::size_t n) {
    // Past a quarter of the staging buffer a copy costs more than its submission: no batch.
    if (n > kStagingBytes / 4) return write(dst, dst_off, src, n);
    if (!dst.buffer) return make_error("the device heap has no transfer buffer bound");
    std::lock_guard lk(copy_mu_);
    auto at = stage_nbi(dst.buffer, dst_off, n, true);
    if (!at) return at.error();
    std::memcpy(static_cast<char*>(staging_.mapped) + *at, src, n); // (the batch runs later)
    return {};
}

Result<void> VulkanDevice::copy_nbi(const DeviceMemory& dst, std::size_t dst_off, const DeviceMemory& src,
                                    std::size_t src_off, std::size_t n, bool host_reads) {
    if (!dst.buffer || !src.buffer) return make_error("a device heap has no transfer buffer bound");
    std::lock_guard lk(copy_mu_);
    if (!batch_open_) open_batch();
    batch_.add(copy_.cmd, src.buffer, dst.buffer, VkBufferCopy{src_off, dst_off, n});
    batch_host_reads_ = batch_host_reads_ || host_reads;
    nbi_grew();
    return {};
}

Result<void> VulkanDevice::read_nbi(void* dst, const DeviceMemory& src, std::size_t src_off, std::size_t n) {
    // As write_nbi: past a quarter of the staging buffer a get costs more than its submission.
    if (n > kStagingBytes / 4) return read(dst, src, src_off, n);
    if (!src.buffer) return make_error("the device heap has no transfer buffer bound");
    std::lock_guard lk(copy_mu_);
    auto at = stage_nbi(src.buffer, src_off, n, false);
    if (!at) return at.error();
    readbacks_.push_back({dst, *at, n});
    batch_host_reads_ = true;
    return {};
}

Result<void> VulkanDevice::quiet() {
    if (!nbi_pending_.load(std::memory_order_relaxed)) return {};
    std::lock_guard lk(copy_mu_);
    nbi_pending_.store(false, std::memory_order_relaxed);
    if (auto r = drain(); !r) return make_error(fmt::format("non-blocking device copies: {}", r.error().message),
                                                r.error().vk_result);
    return {};
}

Result<void> VulkanDevice::start_nbi() {
    if (!nbi_pending_.load(std::memory_order_relaxed)) return {};
    std::lock_guard lk(copy_mu_);
    if (auto r = flush_batch(); !r)
        return make_error(fmt::format("non-blocking device copies: {}", r.error().message), r.error().vk_result);
    return {};
}

} // namespace vkshmem
