// SPDX-License-Identifier: BSL-1.0
// The queue-ordered operations (vkshmemx_cmd_*, api/cmd.cpp): what the generated typed
// reductions forward to.
#pragma once

#include <vkshmem/vulkan.h>

#include <cstddef>
#include <cstdint>

namespace vkshmem::api {

// Records a reduction of `nreduce` elements of kind `kind` (VKSHMEM_RK_*) with operation `op`
// (VKSHMEM_RED_*) over `team` into `cmd`.
void cmd_reduce(VkCommandBuffer cmd, shmem_team_t team, void* dest, const void* source, std::size_t nreduce,
                std::uint32_t kind, std::uint32_t op, const char* call);

} // namespace vkshmem::api
