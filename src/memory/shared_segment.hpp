// SPDX-License-Identifier: BSL-1.0
// Anonymous shared memory (memfd) segments: nothing in /dev/shm or on disk, so
// nothing is left behind when a PE dies, however it dies.
#pragma once

#include "core/result.hpp"

#include <cstddef>
#include <vector>

namespace vkshmem {

class SharedSegment {
public:
    SharedSegment() = default;
    SharedSegment(const SharedSegment&) = delete;
    SharedSegment& operator=(const SharedSegment&) = delete;
    SharedSegment(SharedSegment&& o) noexcept { *this = std::move(o); }
    SharedSegment& operator=(SharedSegment&& o) noexcept;
    ~SharedSegment();

    // A new memfd of `size` bytes (a page multiple), mapped read-write at an
    // address that is a multiple of `align` (a power of two; 0: any page).
    static Result<SharedSegment> create(const char* name, std::size_t size, std::size_t align = 0);
    // Maps a peer's memfd. Takes ownership of `fd` (closed after mapping).
    // populate: map every page now (MAP_POPULATE), so the first access from this process takes no
    // page fault; only for segments whose pages the owner has all written already.
    static Result<SharedSegment> map_peer(int fd, std::size_t size, bool populate = false);
    // Replaces the pieces of `range` in this process by one new memfd holding
    // the same bytes, piece k at file offset (piece.lo - range.lo), so a peer
    // that maps the whole memfd sees the range laid out as here (used for the
    // program's data segment).
    static Result<SharedSegment> remap_in_place(const struct ExeDataRange& range, const char* name);

    char* base() const { return base_; }
    std::size_t size() const { return size_; }
    int fd() const { return fd_; }
    // Closes the fd but keeps the mapping (after peers have their copies).
    void close_fd();
    // Keep the mapping on destruction (the data segment must outlive us).
    void leak_mapping() { owns_mapping_ = false; }

private:
    int fd_ = -1;
    char* base_ = nullptr;
    std::size_t size_ = 0;
    bool owns_mapping_ = true;
};

std::size_t page_size();

// The writable, non-RELRO parts of the main executable (its .data and .bss),
// page aligned: [lo, lo+size) spans them all; `pieces` are the mapped parts
// (over-aligned globals make the linker split them into several segments with
// unmapped gaps between). Empty when nothing is found.
struct ExeDataRange {
    struct Piece {
        char* lo;
        std::size_t size;
    };
    char* lo = nullptr;
    std::size_t size = 0;
    std::vector<Piece> pieces;
};
ExeDataRange find_exe_data_range();

} // namespace vkshmem
