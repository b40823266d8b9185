// Anonymous shared memory (memfd) segments: nothing in /dev/shm or on disk, so
// nothing is left behind when a PE dies, however it dies.
#pragma once

#include "core/result.hpp"

#include <cstddef>

namespace vkshmem {

class SharedSegment {
public:
    SharedSegment() = default;
    SharedSegment(const SharedSegment&) = delete;
    SharedSegment& operator=(const SharedSegment&) = delete;
    SharedSegment(SharedSegment&& o) noexcept { *this = std::move(o); }
    SharedSegment& operator=(SharedSegment&& o) noexcept;
    ~SharedSegment();

    // A new memfd of `size` bytes (a page multiple), mapped read-write.
    static Result<SharedSegment> create(const char* name, std::size_t size);
    // Maps a peer's memfd. Takes ownership of `fd` (closed after mapping).
    static Result<SharedSegment> map_peer(int fd, std::size_t size);
    // Replaces [addr, addr+size) of this process, page aligned, by a new memfd
    // holding the same bytes (used for the program's data segment).
    static Result<SharedSegment> remap_in_place(void* addr, std::size_t size, const char* name);

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

// The writable, non-RELRO part of the main executable's data segment (its
// .data and .bss), page aligned. Empty when it cannot be found.
struct ExeDataRange {
    char* lo = nullptr;
    std::size_t size = 0;
};
ExeDataRange find_exe_data_range();

} // namespace vkshmem
