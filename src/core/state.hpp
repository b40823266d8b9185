// SPDX-License-Identifier: BSL-1.0
// The data path's view of the runtime: plain arrays indexed by PE, filled once
// at init. Every RMA/AMO call translates its address here; nothing on this
// path allocates, locks or searches.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vkshmem {

// Symmetric spaces. The order is the order translate() tries them in.
enum Space : int { kHostHeap = 0, kDeviceHeap = 1, kStaticData = 2, kSpaceCount = 3 };
inline constexpr const char* kSpaceNames[kSpaceCount] = {"host heap", "device heap", "static data"};

// How this PE reaches one (peer, space). Computed at init (DESIGN §2).
enum class Route : std::uint8_t {
    None = 0,  // not reachable from this PE's CPU
    Direct,    // mapped, cached memory: memcpy, loads, stores and CPU atomics
    BarWrite,  // mapped device memory (resizable BAR): stores only; reads and AMOs use the device
    Proxy,     // only the owner reaches it: active messages to its proxy (rma/am.hpp)
    Network,   // the network transport (transports/transport.hpp)
};

struct SpaceView {
    std::uintptr_t lo = 0; // this PE's range [lo, lo + size)
    std::size_t size = 0;
    char** peer = nullptr;  // [n_pes] mapped base of each PE's copy (nullptr: not mapped)
    Route* route = nullptr; // [n_pes]
};

struct FastState {
    int my_pe = -1;
    int n_pes = 0;
    bool initialized = false;
    bool checks = false;            // VKSHMEM_ERROR_CHECKS
    std::size_t bar_put_max = 0;    // VKSHMEM_BAR_PUT_MAX
    std::size_t bar_get_max = 0;    // VKSHMEM_BAR_GET_MAX
    std::int64_t spin_before_yield = 2000;
    // >0: threads that serve or wait on a proxy sleep this long instead of
    // yielding (proxy_pause, wait.hpp); set where this PE's kernels run on the CPU.
    long proxy_nap_ns = 0;
    // Set while a network transport runs: progresses it from a PE's waits,
    // so incoming operations need no thread wake-up (wait.hpp).
    void (*net_progress)() = nullptr;
    // And sleeps on it (Transport::nap): a napping wait wakes when something arrives.
    void (*net_nap)(long ns) = nullptr;
    // Set while the runtime runs: starts this PE's queued non-blocking work (a batch of device
    // copies, active messages queued for owners, deferred atomics), which otherwise goes at the
    // next quiet or fence; called by a wait or test that finds its condition unmet (wait.hpp).
    void (*start_queued)() = nullptr;
    // Some space of this PE has no CPU mapping (a GPU's shared device heap):
    // local source and destination buffers must then be checked too.
    bool local_unmapped = false;
    SpaceView space[kSpaceCount];
};

// Hidden: the data path reaches it PC-relative, not through the GOT.
extern FastState g_state __attribute__((visibility("hidden")));

inline int space_of(const void* addr) {
    auto a = reinterpret_cast<std::uintptr_t>(addr);
    for (int s = 0; s < kSpaceCount; ++s)
        if (a - g_state.space[s].lo < g_state.space[s].size) return s;
    return -1;
}

} // namespace vkshmem
