// SPDX-License-Identifier: BSL-1.0
#include "memory/allocator.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

using vkshmem::SymmetricAllocator;

namespace {
struct Op {
    bool alloc;
    std::size_t size, align, victim;
};

std::vector<Op> random_ops(std::uint64_t seed, int n) {
    std::mt19937_64 rng(seed);
    std::vector<Op> ops;
    for (int i = 0; i < n; ++i)
        ops.push_back({rng() % 3 != 0, 1 + rng() % 100000, std::size_t(1) << (rng() % 14), rng()});
    return ops;
}

// Replays ops and returns every offset handed out (or SIZE_MAX for a failure).
std::vector<std::size_t> replay(const std::vector<Op>& ops, std::size_t cap) {
    SymmetricAllocator a(cap);
    std::vector<std::size_t> live, out;
    for (const auto& op : ops) {
        if (op.alloc || live.empty()) {
            auto off = a.allocate(op.size, op.align);
            out.push_back(off ? *off : SIZE_MAX);
            if (off) live.push_back(*off);
        } else {
            std::size_t k = op.victim % live.size();
            REQUIRE(a.free(live[k]));
            live.erase(live.begin() + static_cast<long>(k));
        }
    }
    return out;
}
} // namespace

TEST_CASE("allocation is deterministic: the same requests give the same offsets") {
    std::random_device rd;
    const std::uint64_t seed = (std::uint64_t(rd()) << 32) | rd();
    INFO("seed " << seed);
    auto ops = random_ops(seed, 3000);
    REQUIRE(replay(ops, 64u << 20) == replay(ops, 64u << 20));
}

TEST_CASE("blocks are aligned, inside the heap and never overlap") {
    std::random_device rd;
    const std::uint64_t seed = rd();
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    const std::size_t cap = 16u << 20;
    SymmetricAllocator a(cap);
    std::vector<std::pair<std::size_t, std::size_t>> live;
    for (int i = 0; i < 4000; ++i) {
        if (rng() % 3 && true) {
            std::size_t size = 1 + rng() % 50000, align = std::size_t(1) << (rng() % 16);
            auto off = a.allocate(size, align);
            if (!off) continue;
            REQUIRE(*off % std::max(align, SymmetricAllocator::kMinAlign) == 0);
            REQUIRE(*off + size <= cap);
            for (auto& [o, s] : live) REQUIRE((*off + size <= o || o + s <= *off));
            live.emplace_back(*off, size);
        } else if (!live.empty()) {
            std::size_t k = rng() % live.size();
            REQUIRE(a.free(live[k].first));
            live.erase(live.begin() + static_cast<long>(k));
        }
    }
    for (auto& [o, s] : live) REQUIRE(a.free(o));
    REQUIRE(a.bytes_in_use() == 0);
    // Everything coalesced back into one free range.
    REQUIRE(a.free_ranges() == 1);
    REQUIRE(a.largest_free() == a.capacity());
}

TEST_CASE("fragmentation: freed holes are reused and exhaustion is reported") {
    SymmetricAllocator a(1u << 20);
    std::vector<std::size_t> blocks;
    while (auto off = a.allocate(4096)) blocks.push_back(*off);
    REQUIRE(blocks.size() == (1u << 20) / 4096);
    REQUIRE_FALSE(a.allocate(1).has_value());
    // Free every other block: 128 KiB free in total, but no 8 KiB hole.
    for (std::size_t i = 0; i < blocks.size(); i += 2) REQUIRE(a.free(blocks[i]));
    REQUIRE_FALSE(a.allocate(8192).has_value());
    REQUIRE(a.largest_free() == 4096);
    auto hole = a.allocate(4000);
    REQUIRE(hole);
    REQUIRE(*hole == blocks[0]);
    // Freeing the neighbours coalesces.
    REQUIRE(a.free(blocks[1]));
    REQUIRE(a.largest_free() >= 4096 * 2);
}

TEST_CASE("free rejects unknown offsets and double frees") {
    SymmetricAllocator a(1u << 20);
    auto off = a.allocate(100);
    REQUIRE(off);
    REQUIRE_FALSE(a.free(*off + 64));
    REQUIRE(a.free(*off));
    REQUIRE_FALSE(a.free(*off));
}

TEST_CASE("resize in place grows into free space and shrinks") {
    SymmetricAllocator a(1u << 20);
    auto x = a.allocate(1000);
    REQUIRE(a.resize_in_place(*x, 100000));
    REQUIRE(*a.block_size(*x) >= 100000);
    auto y = a.allocate(64);
    REQUIRE(y);
    REQUIRE_FALSE(a.resize_in_place(*x, 900000 + 200000));
    REQUIRE(a.resize_in_place(*x, 64));
    REQUIRE(*a.block_size(*x) == 64);
    REQUIRE_FALSE(a.allocate(0, 3).has_value()); // alignment not a power of two
}

TEST_CASE("requests larger than the heap fail without overflow") {
    SymmetricAllocator a(1u << 20);
    REQUIRE_FALSE(a.allocate(SIZE_MAX).has_value());
    REQUIRE_FALSE(a.allocate(SIZE_MAX - 10, 64).has_value());
    REQUIRE_FALSE(a.allocate((1u << 20) + 1).has_value());
    REQUIRE(a.allocate(1u << 20).has_value());
}
