// SPDX-License-Identifier: BSL-1.0
// The node-local transport behind the interface: every node-local PE's copy
// of each symmetric space is mapped into this process (src/memory), so an
// operation is a copy or a CPU atomic on the peer's mapping. The core's data
// path does the same inline (routes Direct); this class gives that path the
// interface's shape, so that one conformance suite (tests/transport) checks
// it beside the network transports.
//
// A segment must lie inside one of this PE's symmetric spaces (it is then at
// the same offset of that space on every PE that registers it likewise).
#include "transports/transport.hpp"

#include "bootstrap/bootstrap.hpp"
#include "core/state.hpp"
#include "transports/blob.hpp"
#include "transports/cpu_amo.hpp"

#include <array>
#include <atomic>
#include <cstring>
#include <fmt/format.h>

namespace vkshmem::net {
namespace {

constexpr int kSegments = 3;

struct Seg {
    int space = -1;          // the symmetric space it lies in
    std::uint64_t start = 0; // its offset in that space
    std::uint64_t size = 0;
};

class Shm final : public Transport {
public:
    Shm(int me, int n) : me_(me), n_(n), remote_(static_cast<std::size_t>(n)) {
        caps_.amo_widths = (1u << 4) | (1u << 8);
    }
    const char* name() const override { return "shm"; }
    const Caps& caps() const override { return caps_; }

    Result<void> register_segment(int space, void* addr, std::size_t size) override {
        if (!addr || !size) return {};
        const auto a = reinterpret_cast<std::uintptr_t>(addr);
        for (int s = 0; s < kSpaceCount; ++s) {
            const SpaceView& v = g_state.space[s];
            if (v.size && a >= v.lo && a + size <= v.lo + v.size && v.route[me_] == Route::Direct) {
                local_[space] = Seg{s, a - v.lo, size};
                return {};
            }
        }
        return Error{fmt::format("shm: [{}, +{}) lies in no symmetric space this PE's CPU maps", fmt::ptr(addr), size)};
    }

    Result<void> connect(Bootstrap& boot, const std::vector<bool>& peers) override {
        Writer w;
        for (const Seg& s : local_) {
            w.value<std::int64_t>(s.space);
            w.value<std::uint64_t>(s.start);
            w.value<std::uint64_t>(s.size);
        }
        Blobs blobs;
        if (auto r = blobs.gather(boot, n_, std::move(w.out)); !r) return r;
        for (int pe = 0; pe < n_; ++pe) {
            Reader rd = blobs.of(pe);
            for (int sp = 0; sp < kSegments; ++sp) {
                Seg s;
                s.space = static_cast<int>(rd.value<std::int64_t>());
                s.start = rd.value<std::uint64_t>();
                s.size = rd.value<std::uint64_t>();
                const bool mapped = s.space >= 0 && s.space < kSpaceCount && g_state.space[s.space].peer[pe] &&
                                    g_state.space[s.space].route[pe] == Route::Direct;
                if (peers[static_cast<std::size_t>(pe)] && pe != me_ && mapped)
                    remote_[static_cast<std::size_t>(pe)][sp] = s;
            }
        }
        return {};
    }

    bool reach(int pe, int space) const override { return remote_[static_cast<std::size_t>(pe)][space].space >= 0; }

    Result<void> put(int pe, int space, std::uint64_t offset, const void* src, std::size_t n) override {
        auto p = at(pe, space, offset, n, "put");
        if (!p) return p.error();
        std::memcpy(*p, src, n);
        return {};
    }
    Result<void> get(int pe, int space, std::uint64_t offset, void* dst, std::size_t n) override {
        auto p = at(pe, space, offset, n, "get");
        if (!p) return p.error();
        std::memcpy(dst, *p, n);
        return {};
    }
    Result<std::uint64_t> amo(int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                              std::uint64_t operand, std::uint64_t cond, bool) override {
        if (width != 4 && width != 8) return Error{fmt::format("shm atomic: {}-byte operands are not native", width)};
        auto p = at(pe, space, offset, width, "atomic");
        if (!p) return p.error();
        if (offset % width) return Error{fmt::format("shm atomic: offset {:#x} is not {}-byte aligned", offset, width)};
        return cpu_amo(*p, op, width, operand, cond);
    }
    // Stores to mapped memory are ordered and complete once a fence has run.
    Result<void> fence() override {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        return {};
    }
    Result<void> quiet() override { return fence(); }
    void progress() override {}
    std::string describe() const override { return "shared memory: peers' symmetric spaces mapped into this process"; }

private:
    Result<char*> at(int pe, int space, std::uint64_t offset, std::size_t n, const char* what) const {
        const Seg& s = remote_[static_cast<std::size_t>(pe)][space];
        if (s.space < 0) return Error{fmt::format("shm {}: PE {}'s segment {} is not mapped here", what, pe, space)};
        if (offset > s.size || n > s.size - offset)
            return Error{fmt::format("shm {}: {} bytes at offset {:#x} run past PE {}'s segment ({} bytes)", what, n,
                                     offset, pe, s.size)};
        return g_state.space[s.space].peer[pe] + s.start + offset;
    }

    int me_, n_;
    Caps caps_;
    std::array<Seg, kSegments> local_{};
    std::vector<std::array<Seg, kSegments>> remote_;
};

} // namespace

Result<std::unique_ptr<Transport>> make_shm(int my_pe, int n_pes) {
    return std::unique_ptr<Transport>(std::make_unique<Shm>(my_pe, n_pes));
}

} // namespace vkshmem::net
