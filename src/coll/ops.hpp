// SPDX-License-Identifier: BSL-1.0
// What the collective algorithms are written in: signals on a team's flags,
// puts and gets that take each peer's route, and views of peers' data.
// Private to src/coll.
#pragma once

#include "coll/team.hpp"
#include "core/wait.hpp"
#include "rma/rma.hpp"

#include <atomic>
#include <cstdint>
#include <vector>

namespace vkshmem::coll::detail {

using byte = unsigned char;

inline byte* at(void* p, std::size_t off) { return static_cast<byte*>(p) + off; }
inline const byte* at(const void* p, std::size_t off) { return static_cast<const byte*>(p) + off; }

// One more on member `index`'s flag f.
inline void signal(Team& t, int index, int f, const char* call) {
    rma::atomic_add<std::uint64_t>(t.flag(f), 1, t.world(index), call);
}

// Waits until `count` more signals reached this PE's flag f.
inline void wait(Team& t, int f, std::uint64_t count = 1) {
    std::atomic_ref<std::uint64_t> a(*t.flag(f));
    if (t.psync) { // an active set: take the signals out of pSync
        wait_for([&] { return a.load(std::memory_order_acquire) >= count; });
        a.fetch_sub(count, std::memory_order_acq_rel);
        return;
    }
    const std::uint64_t want = t.seen[f] += count;
    wait_for([&] { return a.load(std::memory_order_acquire) >= want; });
}

// n bytes to member `index`'s copy of the symmetric `dest`.
inline void put(Team& t, int index, void* dest, const void* src, std::size_t n, const char* call) {
    if (!n || (dest == src && index == t.me)) return;
    rma::put<byte>(static_cast<byte*>(dest), static_cast<const byte*>(src), n, t.world(index), call);
}

// Completes this PE's puts: what it signals next is there.
inline void quiet() { rma::quiet(); }
// Orders this PE's puts before what it signals next to the same PEs (shmem_fence: a signal is an
// atomic add, which a fence orders after the puts before it), so a signal still says its data is
// there, without waiting for the puts to complete: over UCX that wait is a round trip.
inline void order(const char* call) { rma::fence_on(nullptr, call); }

// Bytes [sym, sym + n) of world PE pe's copy, readable by this CPU: the
// mapping where the route is Direct, else a copy fetched into buf.
inline const byte* view(const void* sym, std::size_t n, int pe, std::vector<byte>& buf, const char* call) {
    const int s = space_of(sym);
    if (s >= 0 && g_state.space[s].route[pe] == Route::Direct && !g_state.local_unmapped)
        return at(g_state.space[s].peer[pe], reinterpret_cast<std::uintptr_t>(sym) - g_state.space[s].lo);
    buf.resize(n);
    if (n) rma::get<byte>(buf.data(), static_cast<const byte*>(sym), n, pe, call);
    return buf.data();
}

// broadcast without its opening sync: source on member `root` to dest on
// every other member (the algorithm VKSHMEM_BCAST_ALGORITHM picks).
void spread(Team& t, void* dest, const void* source, std::size_t bytes, int root, const char* call);

} // namespace vkshmem::coll::detail
