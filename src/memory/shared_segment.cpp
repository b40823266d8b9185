// SPDX-License-Identifier: BSL-1.0
#include "memory/shared_segment.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>

namespace vkshmem {

std::size_t page_size() {
    static const std::size_t p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return p;
}

SharedSegment& SharedSegment::operator=(SharedSegment&& o) noexcept {
    std::swap(fd_, o.fd_);
    std::swap(base_, o.base_);
    std::swap(size_, o.size_);
    std::swap(owns_mapping_, o.owns_mapping_);
    return *this;
}

SharedSegment::~SharedSegment() {
    if (base_ && owns_mapping_) munmap(base_, size_);
    if (fd_ >= 0) ::close(fd_);
}

void SharedSegment::close_fd() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

Result<SharedSegment> SharedSegment::create(const char* name, std::size_t size, std::size_t align) {
    SharedSegment s;
    s.fd_ = memfd_create(name, MFD_CLOEXEC);
    if (s.fd_ < 0) return make_error(fmt::format("memfd_create({}): {}", name, std::strerror(errno)));
    if (ftruncate(s.fd_, static_cast<off_t>(size)) != 0)
        return make_error(fmt::format("ftruncate of a {}-byte memfd: {}", size, std::strerror(errno)));
    void* where = nullptr;
    if (align > page_size()) {
        // Reserve room to slide to an aligned start; the slack is given back.
        void* r = mmap(nullptr, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (r == MAP_FAILED)
            return make_error(fmt::format("reserving {} bytes of address space: {}", size + align, std::strerror(errno)));
        auto lo = reinterpret_cast<std::uintptr_t>(r);
        auto start = (lo + align - 1) & ~(static_cast<std::uintptr_t>(align) - 1);
        if (start > lo) munmap(r, start - lo);
        munmap(reinterpret_cast<void*>(start + size), lo + align - start);
        where = reinterpret_cast<void*>(start);
    }
    void* p = mmap(where, size, PROT_READ | PROT_WRITE, MAP_SHARED | (where ? MAP_FIXED : 0), s.fd_, 0);
    if (p == MAP_FAILED) return make_error(fmt::format("mmap of {} bytes: {}", size, std::strerror(errno)));
    s.base_ = static_cast<char*>(p);
    s.size_ = size;
    return s;
}

Result<SharedSegment> SharedSegment::map_peer(int fd, std::size_t size, bool populate) {
    SharedSegment s;
    s.fd_ = fd;
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
    if (p == MAP_FAILED) return make_error(fmt::format("mmap of a peer's {}-byte heap: {}", size, std::strerror(errno)));
    s.base_ = static_cast<char*>(p);
    s.size_ = size;
    s.close_fd();
    return s;
}

Result<SharedSegment> SharedSegment::remap_in_place(const ExeDataRange& range, const char* name) {
    auto seg = create(name, range.size);
    if (!seg) return seg.error();
    SharedSegment s = std::move(seg.value());
    for (const auto& piece : range.pieces) {
        const std::size_t off = static_cast<std::size_t>(piece.lo - range.lo);
        // The kernel copies the pages into the memfd (a raw pwrite, which no
        // sanitizer intercepts): a memcpy would read the redzones that
        // AddressSanitizer keeps between globals and stop the program.
        for (std::size_t done = 0; done < piece.size;) {
            const long w = syscall(SYS_pwrite64, s.fd_, piece.lo + done, piece.size - done,
                                   static_cast<off_t>(off + done));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0)
                return make_error(fmt::format("copying the data segment: {}", w < 0 ? std::strerror(errno) : "short write"));
            done += static_cast<std::size_t>(w);
        }
        // MAP_FIXED replaces the private pages atomically with shared ones
        // that already hold the same bytes.
        void* p = mmap(piece.lo, piece.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s.fd_,
                       static_cast<off_t>(off));
        if (p == MAP_FAILED)
            return make_error(fmt::format("remapping the data segment: {}", std::strerror(errno)));
    }
    munmap(s.base_, range.size);
    s.base_ = range.lo;
    s.owns_mapping_ = false; // unmapping it would take the program's globals with it
    return s;
}

ExeDataRange find_exe_data_range() {
    ExeDataRange r;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* arg) -> int {
            // The first object is the main program.
            auto* out = static_cast<ExeDataRange*>(arg);
            const std::uintptr_t pg = page_size();
            std::uintptr_t relro_end = 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const auto& ph = info->dlpi_phdr[i];
                if (ph.p_type == PT_GNU_RELRO)
                    relro_end = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz + pg - 1) & ~(pg - 1);
            }
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const auto& ph = info->dlpi_phdr[i];
                if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_W)) continue;
                std::uintptr_t lo = (info->dlpi_addr + ph.p_vaddr) & ~(pg - 1);
                std::uintptr_t hi = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz + pg - 1) & ~(pg - 1);
                // RELRO pages become read-only after relocation: leave them out.
                if (relro_end > lo) lo = std::min(relro_end, hi);
                if (hi > lo) out->pieces.push_back({reinterpret_cast<char*>(lo), hi - lo});
            }
            if (!out->pieces.empty()) {
                std::sort(out->pieces.begin(), out->pieces.end(),
                          [](const auto& a, const auto& b) { return a.lo < b.lo; });
                out->lo = out->pieces.front().lo;
                out->size = static_cast<std::size_t>(out->pieces.back().lo + out->pieces.back().size - out->lo);
            }
            return 1; // stop after the main program
        },
        &r);
    return r;
}

} // namespace vkshmem
