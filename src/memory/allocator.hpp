// SPDX-License-Identifier: BSL-1.0
// The symmetric allocator: first fit over [0, capacity) with coalescing.
//
// Allocation is collective and every PE runs this same code on the same
// request sequence, so an object gets the same offset in every PE's heap.
// Nothing here may depend on the PE (no addresses, no timing, no randomness).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

namespace vkshmem {

class SymmetricAllocator {
public:
    static constexpr std::size_t kMinAlign = 64; // a cache line: no false sharing between objects

    // `max_align`: the alignment of the heap's base address; larger alignments
    // cannot be honoured (an aligned offset would not be an aligned address).
    explicit SymmetricAllocator(std::size_t capacity = 0, std::size_t max_align = SIZE_MAX);

    // Offset of a new block of `size` bytes aligned to `align` (a power of two;
    // raised to kMinAlign), or nullopt when no free range fits or `align`
    // exceeds max_align().
    std::optional<std::size_t> allocate(std::size_t size, std::size_t align = kMinAlign);
    // Frees a block returned by allocate. False when `offset` is not a live block.
    bool free(std::size_t offset);
    // Grows or shrinks in place when the following range allows it.
    bool resize_in_place(std::size_t offset, std::size_t new_size);
    // Size of the live block at `offset`, or nullopt.
    std::optional<std::size_t> block_size(std::size_t offset) const;

    std::size_t capacity() const { return capacity_; }
    std::size_t max_align() const { return max_align_; }
    std::size_t bytes_in_use() const { return in_use_; }
    std::size_t largest_free() const;
    std::size_t free_ranges() const { return free_.size(); }
    std::size_t live_blocks() const { return used_.size(); }

private:
    static std::size_t round_up(std::size_t v, std::size_t a) { return (v + a - 1) & ~(a - 1); }
    void insert_free(std::size_t off, std::size_t len);

    std::size_t capacity_;
    std::size_t max_align_;
    std::size_t in_use_ = 0;
    std::map<std::size_t, std::size_t> free_; // offset -> length
    std::map<std::size_t, std::size_t> used_; // offset -> length (rounded)
};

} // namespace vkshmem
