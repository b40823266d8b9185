// SPDX-License-Identifier: BSL-1.0
#include "vulkan/cmd.hpp"

#include "cmd_combine_comp_spv.h"
#include "cmd_combine_f64_comp_spv.h"
#include "cmd_sync_comp_spv.h"
#include "cmd_xfer_comp_spv.h"

#include <fmt/format.h>

#include <algorithm>

namespace vkshmem {

std::uint32_t CmdKernels::wait_groups() const {
    return dev_.report().driver_id == VK_DRIVER_ID_MESA_LLVMPIPE ? 64 : 1;
}

std::uint32_t CmdKernels::bulk_groups(std::size_t bytes) const {
    if (dev_.report().driver_id == VK_DRIVER_ID_MESA_LLVMPIPE) return 1;
    return static_cast<std::uint32_t>(std::clamp<std::size_t>(bytes / 16384, 1, 1024));
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
    push.op = static_cast<std::uint32_t>(op);
    k_[w]->record(cb, groups, 1, 1, &push, sizeof push);
    return {};
}

} // namespace vkshmem
