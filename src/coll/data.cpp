// SPDX-License-Identifier: BSL-1.0
// Collectives where every member sends to every member: fcollect, collect,
// alltoall, alltoalls. Each member puts its blocks straight into every
// destination (starting with its right neighbour, so members do not all write
// to the same PE at once), orders them before its signals with a fence, and
// signals; it is done when every other member has signalled it. No opening
// sync: destinations are ready when the call is made (the specification's
// precondition), and a member finishes only after hearing from all, so none
// runs more than one call ahead; the flags alternate between consecutive calls
// (Team::exchanges).
#include "coll/coll.hpp"
#include "coll/ops.hpp"

#include <cstring>

namespace vkshmem::coll {
using namespace detail;

namespace {
// Members me + 1, me + 2, ..., me (this PE last).
template <class F> void each_from_right(const Team& t, F f) {
    const int n = t.size();
    for (int k = 1; k <= n; ++k) f((t.me + k) % n);
}

// The flag of this exchange: kExchange or kSizes, plus the call's parity.
int parity_flag(const Team& t, int f) { return f + (t.psync ? 0 : static_cast<int>(t.exchanges & 1)); }

// Signals flag f of every other member, then waits for all of theirs.
void exchange_done(Team& t, int f, const char* call) {
    f = parity_flag(t, f);
    const int n = t.size();
    if (n == 1) return;
    order(call);
    each_from_right(t, [&](int i) {
        if (i != t.me) signal(t, i, f, call);
    });
    wait(t, f, static_cast<std::uint64_t>(n - 1));
}

// Counts a call: the next one signals the other flag of each pair.
struct Exchange {
    Team& t;
    ~Exchange() { ++t.exchanges; }
};
} // namespace

void fcollect(Team& t, void* dest, const void* source, std::size_t bytes, const char* call) {
    Exchange counted{t};
    const std::size_t off = static_cast<std::size_t>(t.me) * bytes;
    each_from_right(t, [&](int i) { put(t, i, at(dest, off), source, bytes, call); });
    exchange_done(t, kExchange, call);
}

void collect(Team& t, void* dest, const void* source, std::size_t bytes, const char* call) {
    Exchange counted{t};
    // Each member leaves its size in its scratch word and says so to all;
    // each then reads the sizes of the members before it. A member rewrites
    // its word only in a later call, after every member has finished this one.
    std::uint64_t* size_word = t.flag(kScratchIn);
    std::atomic_ref<std::uint64_t>(*size_word).store(bytes, std::memory_order_relaxed);
    exchange_done(t, kSizes, call);
    std::size_t off = 0;
    std::vector<byte> buf;
    for (int i = 0; i < t.me; ++i) {
        std::uint64_t theirs;
        std::memcpy(&theirs, view(size_word, sizeof theirs, t.world(i), buf, call), sizeof theirs);
        off += static_cast<std::size_t>(theirs);
    }
    each_from_right(t, [&](int i) { put(t, i, at(dest, off), source, bytes, call); });
    exchange_done(t, kExchange, call);
    // Every member has read it now (each signalled after reading): back to
    // SHMEM_SYNC_VALUE, as a pSync must be.
    std::atomic_ref<std::uint64_t>(*size_word).store(0, std::memory_order_relaxed);
}

void alltoall(Team& t, void* dest, const void* source, std::size_t bytes, const char* call) {
    Exchange counted{t};
    const std::size_t off = static_cast<std::size_t>(t.me) * bytes;
    each_from_right(t, [&](int j) { put(t, j, at(dest, off), at(source, static_cast<std::size_t>(j) * bytes), bytes, call); });
    exchange_done(t, kExchange, call);
}

void alltoalls(Team& t, void* dest, const void* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems,
               std::size_t elem, const char* call) {
    if (dst == 1 && sst == 1) return alltoall(t, dest, source, nelems * elem, call);
    Exchange counted{t};
    // Element k of block j: source[sst * (j * nelems + k)] -> dest[dst * (me * nelems + k)] on member j.
    const auto ne = static_cast<std::ptrdiff_t>(nelems), e = static_cast<std::ptrdiff_t>(elem);
    each_from_right(t, [&](int j) {
        for (std::ptrdiff_t k = 0; k < ne; ++k)
            put(t, j, static_cast<byte*>(dest) + dst * (t.me * ne + k) * e,
                static_cast<const byte*>(source) + sst * (j * ne + k) * e, elem, call);
    });
    exchange_done(t, kExchange, call);
}

} // namespace vkshmem::coll
