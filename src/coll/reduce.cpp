// SPDX-License-Identifier: BSL-1.0
// Reductions and scans. The arithmetic comes in as a Combine function (one
// per type and operation, api/coll_impl.hpp); everything here is bytes.
#include "coll/coll.hpp"
#include "coll/ops.hpp"

#include <cstring>

namespace vkshmem::coll {
using namespace detail;

namespace {
// The first `bytes` of `src` (member `index`'s copy of a symmetric object) into acc.
void load(Team& t, std::vector<byte>& acc, const void* src, std::size_t bytes, int index, std::vector<byte>& buf,
          const char* call) {
    acc.resize(bytes);
    if (bytes) std::memcpy(acc.data(), view(src, bytes, t.world(index), buf, call), bytes);
}

// The calling thread's buffers for a partial result and a peer's operand, kept from call to call:
// a network transport registers a buffer for large transfers once and then finds it in its cache,
// where a fresh buffer per call is registered (and the registration dropped) each time (a 1 MiB
// float sum at 2 PEs over UCX tcp: 25 ms, against 3.6 ms at 768 KiB;
// bench/results/2026-12-02-vm-osu-openshmem.md). Buffers past kScratchKeep go back after the call.
constexpr std::size_t kScratchKeep = 64 << 20;
struct Scratch {
    std::vector<byte> acc, buf;
};
class UseScratch {
public:
    UseScratch() : s_(scratch()) {}
    ~UseScratch() {
        for (std::vector<byte>* v : {&s_.acc, &s_.buf})
            if (v->capacity() > kScratchKeep) std::vector<byte>().swap(*v);
    }
    UseScratch(const UseScratch&) = delete;
    UseScratch& operator=(const UseScratch&) = delete;
    std::vector<byte>& acc() { return s_.acc; }
    std::vector<byte>& buf() { return s_.buf; }

private:
    static Scratch& scratch() {
        thread_local Scratch s;
        return s;
    }
    Scratch& s_;
};
} // namespace

void reduce(Team& t, void* dest, const void* source, std::size_t n, std::size_t elem, Combine combine,
            const char* call) {
    const int size = t.size(), me = t.me;
    const std::size_t bytes = n * elem;
    UseScratch scratch;
    std::vector<byte>&acc = scratch.acc(), &buf = scratch.buf();
    const Algorithm algo = t.algorithms->reduce;
    if (algo == Algorithm::Linear || (algo == Algorithm::Auto && size <= kLinearReduceMax)) {
        // Every member tells member 0 its source is ready; member 0 reads
        // them all, puts the result everywhere and signals. Two hops. A
        // member can only signal the next call's readiness after this
        // call's result, so the counts never mix.
        if (me != 0) {
            signal(t, 0, kGather, call);
            return wait(t, kData);
        }
        wait(t, kGather, static_cast<std::uint64_t>(size - 1));
        load(t, acc, source, bytes, me, buf, call);
        for (int i = 1; i < size; ++i) combine(acc.data(), view(source, bytes, t.world(i), buf, call), n);
        for (int i = 0; i < size; ++i) put(t, i, dest, acc.data(), bytes, call);
        if (size == 1) return;
        order(call);
        for (int i = 1; i < size; ++i) signal(t, i, kData, call);
        return;
    }
    // Binomial tree: member v combines the partials of v + 2^j (for each j
    // below v's lowest set bit) into its own, leaves the sum in its dest and
    // signals v - 2^(lowest bit). Member 0 ends with the whole result, which
    // goes back down by broadcast. A parent reads a child's dest before the
    // child can receive anything into it.
    load(t, acc, source, bytes, me, buf, call);
    for (int j = 0; (1 << j) < size; ++j) {
        if (me & (1 << j)) {
            put(t, me, dest, acc.data(), bytes, call);
            std::atomic_thread_fence(std::memory_order_seq_cst);
            signal(t, me - (1 << j), kUp + j, call);
            break;
        }
        const int child = me + (1 << j);
        if (child >= size) continue; // none this round; v still sends up at its lowest set bit
        wait(t, kUp + j);
        combine(acc.data(), view(dest, bytes, t.world(child), buf, call), n);
    }
    if (me == 0) put(t, 0, dest, acc.data(), bytes, call);
    spread(t, dest, dest, bytes, 0, call);
}

void scan(Team& t, void* dest, const void* source, std::size_t n, std::size_t elem, Combine combine, bool inclusive,
          const char* call) {
    const std::size_t bytes = n * elem;
    const int last = inclusive ? t.me : t.me - 1; // the members this PE's result combines
    sync(t, call);
    // Member 0's exclusive scan is zero (all bits clear for every type of the SUM table).
    UseScratch scratch;
    std::vector<byte>&acc = scratch.acc(), &buf = scratch.buf();
    acc.assign(bytes, 0);
    if (last >= 0) {
        load(t, acc, source, bytes, 0, buf, call);
        for (int i = 1; i <= last; ++i) combine(acc.data(), view(source, bytes, t.world(i), buf, call), n);
    }
    // Sources are read by members up the line: nobody may write its dest, which in place is its
    // source, nor return (and change its source) before all have read.
    sync(t, call);
    put(t, t.me, dest, acc.data(), bytes, call);
}

} // namespace vkshmem::coll
