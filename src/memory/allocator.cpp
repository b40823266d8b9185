// SPDX-License-Identifier: BSL-1.0
#include "memory/allocator.hpp"

#include <algorithm>

namespace vkshmem {

SymmetricAllocator::SymmetricAllocator(std::size_t capacity, std::size_t max_align)
    : capacity_(capacity & ~(kMinAlign - 1)), max_align_(max_align) {
    if (capacity_) free_.emplace(0, capacity_);
}

std::optional<std::size_t> SymmetricAllocator::allocate(std::size_t size, std::size_t align) {
    if (align == 0 || (align & (align - 1))) return std::nullopt;
    if (align < kMinAlign) align = kMinAlign;
    if (align > max_align_) return std::nullopt;
    if (size == 0) size = 1;
    if (size > capacity_) return std::nullopt;
    std::size_t len = round_up(size, kMinAlign);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        std::size_t start = it->first, flen = it->second;
        std::size_t aligned = round_up(start, align);
        if (aligned < start || aligned - start >= flen || flen - (aligned - start) < len) continue;
        free_.erase(it);
        if (aligned > start) free_.emplace(start, aligned - start);
        std::size_t tail = start + flen - (aligned + len);
        if (tail) free_.emplace(aligned + len, tail);
        used_.emplace(aligned, len);
        in_use_ += len;
        return aligned;
    }
    return std::nullopt;
}

void SymmetricAllocator::insert_free(std::size_t off, std::size_t len) {
    auto next = free_.lower_bound(off);
    if (next != free_.end() && off + len == next->first) {
        len += next->second;
        next = free_.erase(next);
    }
    if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == off) {
            prev->second += len;
            return;
        }
    }
    free_.emplace(off, len);
}

bool SymmetricAllocator::free(std::size_t offset) {
    auto it = used_.find(offset);
    if (it == used_.end()) return false;
    std::size_t len = it->second;
    used_.erase(it);
    in_use_ -= len;
    insert_free(offset, len);
    return true;
}

bool SymmetricAllocator::resize_in_place(std::size_t offset, std::size_t new_size) {
    auto it = used_.find(offset);
    if (it == used_.end()) return false;
    std::size_t old_len = it->second;
    std::size_t len = round_up(std::max<std::size_t>(new_size, 1), kMinAlign);
    if (len == old_len) return true;
    if (len < old_len) {
        it->second = len;
        in_use_ -= old_len - len;
        insert_free(offset + len, old_len - len);
        return true;
    }
    auto next = free_.find(offset + old_len);
    std::size_t extra = len - old_len;
    if (next == free_.end() || next->second < extra) return false;
    std::size_t rest = next->second - extra;
    free_.erase(next);
    if (rest) free_.emplace(offset + len, rest);
    it->second = len;
    in_use_ += extra;
    return true;
}

std::optional<std::size_t> SymmetricAllocator::block_size(std::size_t offset) const {
    auto it = used_.find(offset);
    if (it == used_.end()) return std::nullopt;
    return it->second;
}

std::size_t SymmetricAllocator::largest_free() const {
    std::size_t m = 0;
    for (auto& [o, l] : free_) m = std::max(m, l);
    return m;
}

} // namespace vkshmem
