// SPDX-License-Identifier: BSL-1.0
// Accessibility, ordering and whole-job synchronization (OpenSHMEM 1.6 §9.2,
// §9.9, §9.10), and the extensions shmemx_addr_space and shmemx_wtime.
#include <shmem.h>
#include <shmemx.h>

#include "api/guard.hpp"

#include <atomic>
#include <time.h>

using namespace vkshmem;

extern "C" {

void* shmem_ptr(const void* dest, int pe) noexcept {
    if (!g_state.initialized || static_cast<unsigned>(pe) >= static_cast<unsigned>(g_state.n_pes)) return nullptr;
    int s = space_of(dest);
    // Only memory the CPU may load from is handed out: not a GPU's BAR. A
    // node-local peer sent through the network (VKSHMEM_FORCE_NETWORK) is
    // still mapped, and only where its route was Direct (runtime.cpp).
    if (s < 0) return nullptr;
    const Route r = g_state.space[s].route[pe];
    if (r != Route::Direct && !(r == Route::Network && g_state.space[s].peer[pe])) return nullptr;
    return g_state.space[s].peer[pe] + (reinterpret_cast<std::uintptr_t>(dest) - g_state.space[s].lo);
}

int shmem_pe_accessible(int pe) noexcept {
    return g_state.initialized && static_cast<unsigned>(pe) < static_cast<unsigned>(g_state.n_pes) &&
           g_state.space[kHostHeap].route[pe] != Route::None;
}

int shmem_addr_accessible(const void* addr, int pe) noexcept {
    if (!shmem_pe_accessible(pe)) return 0;
    int s = space_of(addr);
    return s >= 0 && (g_state.space[s].route[pe] != Route::None || g_runtime->memory().device_memory(pe, Space(s)));
}

int shmemx_addr_space(const void* addr) noexcept {
    switch (space_of(addr)) {
    case kHostHeap: return SHMEMX_SPACE_HOST;
    case kDeviceHeap: return SHMEMX_SPACE_DEVICE;
    case kStaticData: return SHMEMX_SPACE_STATIC;
    default: return SHMEMX_SPACE_NONE;
    }
}

double shmemx_wtime(void) noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Node-local routes complete their operations before returning, so for them
// fence and quiet only order this PE's stores (a full fence also drains the
// write-combining buffers of stores into a GPU's BAR); the network transport
// has puts and AMOs in flight until its own fence or flush.
void shmem_fence(void) noexcept {
    rma::fence_on(nullptr, "shmem_fence");
}
void shmem_quiet(void) noexcept {
    if (Runtime* rt = g_runtime) rt->quiet();
    else std::atomic_thread_fence(std::memory_order_seq_cst);
}

} // extern "C"
