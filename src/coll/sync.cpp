// SPDX-License-Identifier: BSL-1.0
// Team sync and barrier, and broadcast: the algorithms that move one thing
// from one PE to all (or from all to one and back).
#include "coll/coll.hpp"
#include "coll/ops.hpp"

#include <bit>

namespace vkshmem::coll {
using namespace detail;

void sync(Team& t, const char* call) {
    const int n = t.size(), me = t.me;
    if (n == 1) return;
    if (t.algorithms->barrier == Algorithm::Linear) {
        if (me == 0) {
            wait(t, kArrive, static_cast<std::uint64_t>(n - 1));
            for (int i = 1; i < n; ++i) signal(t, i, kRelease, call);
        } else {
            signal(t, 0, kArrive, call);
            wait(t, kRelease);
        }
        return;
    }
    // Dissemination: in round r, signal member me + 2^r and wait for me - 2^r.
    for (int r = 0, d = 1; d < n; ++r, d <<= 1) {
        signal(t, (me + d) % n, kDiss + r, call);
        wait(t, kDiss + r);
    }
}

void barrier(Team& t, const char* call) {
    quiet();
    sync(t, call);
}

void broadcast(Team& t, void* dest, const void* source, std::size_t bytes, int root, bool to_root, const char* call) {
    // Linear: a root's signal could count for a call another root has not yet
    // made (kData has one writer per call, not per PE): no PE may run ahead.
    // Tree: a parent returns only once its children have entered the call, so in the next call
    // with this root each child is done with the last-but-one call's data. Programs rely on that:
    // calls alternating between two pSync arrays and two halves of dest, with no barrier between
    // them, each PE refilling a half after reading it (tests-mellanox's broadcast cases; SOS and
    // Open MPI's OSHMEM pass them). Pushing without it, a root two calls ahead overwrote a half
    // its PE had yet to refill. Waiting at the end rather than before each put leaves the
    // children's signals a whole call to arrive (a loop of 8-byte broadcasts: 0.40 us a call
    // with the wait before the put, at 2 PEs; bench/results/2026-12-02-vm-bcast-handover.md).
    const int n = t.size();
    const bool handover = t.algorithms->bcast != Algorithm::Linear && n <= (1 << kReadyLevels);
    if (!handover) sync(t, call);
    const int v = (t.me - root + n) % n;
    if (handover && v) {
        const int k = std::bit_width(static_cast<unsigned>(v)) - 1;
        signal(t, (t.me - (1 << k) + n) % n, kReady + k, call);
    }
    if (t.me == root && to_root) put(t, t.me, dest, source, bytes, call);
    spread(t, dest, source, bytes, root, call);
    if (!handover) return;
    // Child v + 2^j (j above v's highest bit) is the only sender of this PE's kReady + j.
    for (int j = v ? std::bit_width(static_cast<unsigned>(v)) : 0; v + (1 << j) < n; ++j) wait(t, kReady + j);
}

namespace detail {
void spread(Team& t, void* dest, const void* source, std::size_t bytes, int root, const char* call) {
    const int n = t.size(), me = t.me;
    if (n == 1) return;
    if (t.algorithms->bcast == Algorithm::Linear) {
        if (me != root) return wait(t, kData);
        for (int i = 0; i < n; ++i)
            if (i != root) put(t, i, dest, source, bytes, call);
        order(call);
        for (int i = 0; i < n; ++i)
            if (i != root) signal(t, i, kData, call);
        return;
    }
    // Binomial tree over ranks relative to the root: member v receives from
    // v - 2^k (2^k: v's highest bit), then sends to v + 2^j for every j > k.
    // The sender of flag kDown + j is always member me - 2^j, whatever the root.
    const int v = (me - root + n) % n;
    int first = 0;
    if (v) {
        const int k = std::bit_width(static_cast<unsigned>(v)) - 1;
        wait(t, kDown + k);
        first = k + 1;
    }
    const void* from = v ? dest : source;
    int j = first;
    for (; v + (1 << j) < n; ++j) put(t, (v + (1 << j) + root) % n, dest, from, bytes, call);
    if (j == first) return;
    order(call);
    for (j = first; v + (1 << j) < n; ++j) signal(t, (v + (1 << j) + root) % n, kDown + j, call);
}
} // namespace detail

} // namespace vkshmem::coll
