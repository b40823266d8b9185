// SPDX-License-Identifier: BSL-1.0
// The pipelines of the queue-ordered operations (vkshmemx_cmd_*, api/cmd.cpp): internal kernels
// over the device library (kernels/cmd.glsl), created at their first use and recorded into the
// application's command buffers.
#pragma once

#include "core/result.hpp"
#include "vulkan/device.hpp"
#include "vulkan/kernel.hpp"

#include <cstdint>
#include <memory>
#include <mutex>

namespace vkshmem {

// Mirrors the push constant block of kernels/cmd.glsl.
struct CmdPush {
    std::uint64_t state = 0, dest = 0, src = 0, bytes = 0, team = 0, sig = 0, value = 0;
    std::uint32_t op = 0;
    std::int32_t pe = 0;
    std::uint32_t arg = 0, arg2 = 0;
};
static_assert(sizeof(CmdPush) == 72);

// kernels/cmd.glsl's operations (CMD_*).
enum class CmdOp : std::uint32_t {
    Put = 0,
    Get = 1,
    Move = 3,
    Arrive = 4,
    WaitSignal = 5,
    WaitTeam = 6,
    WaitQuiet = 7,
    Combine = 8,
    Signal = 9
};

class CmdKernels {
public:
    // shared: another PE of this node uses the same device (its waits are sliced on GPUs).
    CmdKernels(VulkanDevice& dev, bool shared) : dev_(dev), shared_(shared) {}
    ~CmdKernels();
    // Records one operation: `groups` workgroups of the pipeline that carries it out (created
    // now if this is its first use; lavapipe compiles it at the first dispatch). f64: a
    // reduction of doubles (a pipeline of its own, the only one that needs shaderFloat64).
    Result<void> record(VkCommandBuffer cb, CmdOp op, std::uint32_t groups, CmdPush push, bool f64 = false);
    // Records a wait (WaitSignal, WaitTeam, WaitQuiet). On lavapipe: one dispatch of 64
    // workgroups that wait in turn, each with a loop budget of its own, so the wait can last
    // seconds. On a GPU of this PE alone: one dispatch. On a GPU that other PEs share: a chain of
    // short dispatches (slices) of growing length, the later ones reduced to nothing (an
    // indirect dispatch of 0 groups) once one sees the condition hold: the driver runs no other
    // process's kernel while one of a process's runs (measured on an H100), so such a PE must not
    // wait inside one long kernel for another's work.
    Result<void> record_wait(VkCommandBuffer cb, CmdOp op, CmdPush push);
    // Workgroups of a transfer of `bytes` (split over all their invocations): enough to spread it
    // over a GPU's multiprocessors, one on lavapipe, whose workgroups run one after another.
    std::uint32_t bulk_groups(std::size_t bytes) const;

private:
    enum Which { kXfer, kSync, kCombine, kCombineF64, kCount };
    VulkanDevice& dev_;
    bool shared_;
    Result<VulkanKernel*> kernel(Which w); // (mu_ held)
    std::unique_ptr<VulkanKernel> k_[kCount];
    // The group counts of the sliced waits: one entry of 16 bytes (x, y, z) per recorded wait,
    // handed out in turn; a recorded command buffer keeps using its entries.
    DeviceMemory args_{};
    std::size_t next_args_ = 0;
    std::mutex mu_;
};

} // namespace vkshmem
