// SPDX-License-Identifier: BSL-1.0
// Checks shared by the hand-written entry points.
#pragma once

#include "core/log.hpp"
#include "runtime/runtime.hpp"

namespace vkshmem {

inline Runtime& require_runtime(const char* call) {
    if (!g_runtime) [[unlikely]]
        fatal(call, "called before shmem_init (or after shmem_finalize)");
    return *g_runtime;
}

} // namespace vkshmem
