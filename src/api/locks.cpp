// SPDX-License-Identifier: BSL-1.0
// Distributed locks (OpenSHMEM 1.6 §9.13): shmem_set_lock, shmem_test_lock, shmem_clear_lock.
//
// A ticket lock in PE 0's copy of the symmetric `long`: its high 32 bits are the next ticket to
// hand out, its low 32 bits the ticket being served; zero (as the specification requires the
// variable to start) is unlocked. Tickets are served in the order they were taken, so waiting PEs
// (and threads) acquire the lock first come, first served: nobody starves under contention.
// Every access is one of the library's own atomics, so the lock works on any route to PE 0 (its
// memory mapped here, a device heap through its proxy, or the network).
#include <shmem.h>

#include "api/guard.hpp"
#include "api/typed.hpp"
#include "core/wait.hpp"

#include <atomic>
#include <cstdint>

using namespace vkshmem;
using api::detail::AmoOp;

namespace {

constexpr int kHome = 0; // the PE whose copy of the lock variable is the lock
constexpr std::uint64_t kTicket = std::uint64_t{1} << 32;

std::uint64_t* word(long* lock) { return reinterpret_cast<std::uint64_t*>(lock); }
std::uint64_t atomic(long* lock, AmoOp op, std::uint64_t operand, std::uint64_t cond, const char* call) {
    return api::detail::amo(word(lock), op, operand, cond, kHome, call);
}
// Whether the lock word's atomics run on a GPU (a device heap the CPU does not map, or maps only
// for stores): each poll is then a queue submission, paced like any wait on device memory.
bool on_device(const long* lock) {
    const int s = space_of(lock);
    if (s < 0) return false;
    const Route r = g_state.space[s].route[kHome];
    return r == Route::None || r == Route::BarWrite;
}
std::uint32_t serving(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
std::uint32_t next(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }

} // namespace

extern "C" {

void shmem_set_lock(long* lock) noexcept {
    const char* call = "shmem_set_lock";
    require_runtime(call);
    const std::uint32_t mine = next(atomic(lock, AmoOp::Add, kTicket, 0, call));
    // Polls PE 0's word; each poll of a remote word is a round trip, which is its own back-off.
    wait_for([&] { return serving(atomic(lock, AmoOp::Fetch, 0, 0, call)) == mine; }, on_device(lock));
    std::atomic_thread_fence(std::memory_order_acquire); // nothing of the critical section before this
}

int shmem_test_lock(long* lock) noexcept {
    const char* call = "shmem_test_lock";
    require_runtime(call);
    const std::uint64_t v = atomic(lock, AmoOp::Fetch, 0, 0, call);
    if (next(v) != serving(v)) return 1; // held, or others wait for it
    // Free: take the next ticket only if nobody took it in between; it is then served at once.
    if (atomic(lock, AmoOp::CompareSwap, v + kTicket, v, call) != v) return 1;
    std::atomic_thread_fence(std::memory_order_acquire);
    return 0;
}

void shmem_clear_lock(long* lock) noexcept {
    const char* call = "shmem_clear_lock";
    require_runtime(call);
    // Everything this PE did in the critical section is complete before the next holder enters.
    shmem_quiet();
    // Serve the next ticket. The low half is bumped without a carry into the high half (which
    // other PEs keep adding to), so after 2^32 acquisitions it simply wraps.
    std::uint64_t v = atomic(lock, AmoOp::Fetch, 0, 0, call);
    for (;;) {
        const std::uint64_t want = (v & ~std::uint64_t{0xffffffff}) | std::uint32_t(serving(v) + 1);
        const std::uint64_t seen = atomic(lock, AmoOp::CompareSwap, want, v, call);
        if (seen == v) return;
        v = seen;
    }
}

} // extern "C"
