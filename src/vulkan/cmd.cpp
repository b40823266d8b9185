// SPDX-License-Identifier: BSL-1.0
#include "vulkan/cmd.hpp"

#include "cmd_combine_comp_spv.h"
#include "cmd_combine_f64_comp_spv.h"
#include "cmd_sync_comp_spv.h"
#include "cmd_xfer_comp_spv.h"

#include "core/log.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace vkshmem {

namespace {
bool on_cpu(const VulkanDevice& d) { return d.report().driver_id == VK_DRIVER_ID_MESA_LLVMPIPE; }
constexpr std::size_t kArgsEntries = 4096;
// The slices of a sliced wait and their polls: 64, 256, 1024, ... up to 2^20 each (seconds in all
// on an H100). Each slice that runs after the condition held is an empty dispatch between two
// pipeline barriers (about 12 us each measured on an H100 with 34 of them), so few slices whose
// length grows fast: a wait that is soon over costs little, a long one still yields often.
constexpr int kSlices = 12;
std::uint64_t slice_polls(int i) { return std::uint64_t(64) << std::min(2 * i, 14); }
} // namespace

CmdKernels::~CmdKernels() {
    if (args_.memory) dev_.release(args_);
}

std::uint32_t CmdKernels::bulk_groups(std::size_t bytes) const {
    if (on_cpu(dev_)) return 1;
    return static_cast<std::uint32_t>(std::clamp<std::size_t>(bytes / 16384, 1, 1024));
}

Result<VulkanKernel*> CmdKernels::kernel(Which w) {
    if (!k_[w]) {
        static const struct {
            const std::uint32_t* words;
            std::size_t bytes;
        } spv[kCount] = {{cmd_xfer_comp_spv, sizeof cmd_xfer_comp_spv},
                         {cmd_sync_comp_spv, sizeof cmd_sync_comp_spv},
                         {cmd_combine_comp_spv, sizeof cmd_combine_comp_spv},
                         {cmd_combine_f64_comp_spv, sizeof cmd_combine_f64_comp_spv}};
        auto k = VulkanKernel::create(dev_, spv[w].words, spv[w].bytes, sizeof(CmdPush), nullptr);
        if (!k) return make_error(fmt::format("the pipeline of a queue-ordered operation: {}", k.error().message));
        k_[w] = std::move(*k);
    }
    return k_[w].get();
}

Result<void> CmdKernels::record(VkCommandBuffer cb, CmdOp op, std::uint32_t groups, CmdPush push, bool f64) {
    Which w = kXfer;
    switch (op) {
    case CmdOp::Put:
    case CmdOp::Get:
    case CmdOp::Signal:
    case CmdOp::Move: w = kXfer; break;
    case CmdOp::Arrive:
    case CmdOp::WaitSignal:
    case CmdOp::WaitTeam:
    case CmdOp::WaitQuiet: w = kSync; break;
    case CmdOp::Combine: w = f64 ? kCombineF64 : kCombine; break;
    }
    std::lock_guard lk(mu_);
    auto k = kernel(w);
    if (!k) return k.error();
    push.op = static_cast<std::uint32_t>(op);
    (*k)->record(cb, groups, 1, 1, &push, sizeof push);
    return {};
}

Result<void> CmdKernels::record_wait(VkCommandBuffer cb, CmdOp op, CmdPush push) {
    if (on_cpu(dev_)) return record(cb, op, 64, push);
    if (!shared_) return record(cb, op, 1, push);
    std::lock_guard lk(mu_);
    auto k = kernel(kSync);
    if (!k) return k.error();
    if (!args_.memory) {
        auto m = dev_.allocate_mapped(kArgsEntries * 16, VulkanDevice::MappedUse::ShaderReads);
        if (!m) return make_error(fmt::format("the recorded waits' dispatch arguments: {}", m.error().message));
        args_ = *m;
        auto* a = static_cast<std::uint32_t*>(args_.mapped);
        for (std::size_t i = 0; i < kArgsEntries * 4; ++i) a[i] = i % 4 == 3 ? 0 : 1;
    }
    const VkDeviceSize off = (next_args_++ % kArgsEntries) * 16;
    if (next_args_ == kArgsEntries + 1)
        VKSHMEM_WARN("more than {} recorded waits: their dispatch arguments are reused; command buffers recorded "
                     "{} waits ago must not be submitted again",
                     kArgsEntries, kArgsEntries);
    // The chain starts with one group each time it runs.
    vkCmdFillBuffer(cb, args_.buffer, off, 4, 1);
    push.op = static_cast<std::uint32_t>(op);
    push.dest = args_.address + off;
    for (int i = 0; i < kSlices; ++i) {
        push.arg2 = 1;
        push.bytes = slice_polls(i);
        (*k)->record_indirect(cb, args_.buffer, off, &push, sizeof push);
    }
    push.arg2 = 2; // the last look, which reports a wait that never ended
    push.bytes = 1;
    (*k)->record(cb, 1, 1, 1, &push, sizeof push);
    return {};
}

} // namespace vkshmem
