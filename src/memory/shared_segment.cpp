#include "memory/shared_segment.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <link.h>
#include <sys/mman.h>
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

Result<SharedSegment> SharedSegment::create(const char* name, std::size_t size) {
    SharedSegment s;
    s.fd_ = memfd_create(name, MFD_CLOEXEC);
    if (s.fd_ < 0) return make_error(fmt::format("memfd_create({}): {}", name, std::strerror(errno)));
    if (ftruncate(s.fd_, static_cast<off_t>(size)) != 0)
        return make_error(fmt::format("ftruncate of a {}-byte memfd: {}", size, std::strerror(errno)));
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd_, 0);
    if (p == MAP_FAILED) return make_error(fmt::format("mmap of {} bytes: {}", size, std::strerror(errno)));
    s.base_ = static_cast<char*>(p);
    s.size_ = size;
    return s;
}

Result<SharedSegment> SharedSegment::map_peer(int fd, std::size_t size) {
    SharedSegment s;
    s.fd_ = fd;
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return make_error(fmt::format("mmap of a peer's {}-byte heap: {}", size, std::strerror(errno)));
    s.base_ = static_cast<char*>(p);
    s.size_ = size;
    s.close_fd();
    return s;
}

Result<SharedSegment> SharedSegment::remap_in_place(void* addr, std::size_t size, const char* name) {
    auto seg = create(name, size);
    if (!seg) return seg.error();
    SharedSegment s = std::move(seg.value());
    std::memcpy(s.base_, addr, size);
    // MAP_FIXED replaces the private pages atomically with the shared ones,
    // which now hold the same bytes.
    void* p = mmap(addr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s.fd_, 0);
    if (p == MAP_FAILED) return make_error(fmt::format("remapping the data segment: {}", std::strerror(errno)));
    munmap(s.base_, size);
    s.base_ = static_cast<char*>(p);
    s.owns_mapping_ = false; // unmapping it would take the program's globals with it
    return s;
}

ExeDataRange find_exe_data_range() {
    ExeDataRange r;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* arg) -> int {
            // The first object is the main program.
            auto* out = static_cast<ExeDataRange*>(arg);
            std::uintptr_t lo = 0, hi = 0, relro_end = 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const auto& ph = info->dlpi_phdr[i];
                if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W)) {
                    std::uintptr_t a = info->dlpi_addr + ph.p_vaddr;
                    if (!lo || a < lo) lo = a;
                    hi = std::max<std::uintptr_t>(hi, a + ph.p_memsz);
                }
                if (ph.p_type == PT_GNU_RELRO) relro_end = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
            }
            const std::uintptr_t pg = page_size();
            if (relro_end > lo) lo = relro_end;
            lo = lo & ~(pg - 1);
            // RELRO ends on a page boundary by construction; if it did not we
            // would start inside read-only pages, so round up instead.
            if (relro_end && lo < relro_end) lo += pg;
            hi = (hi + pg - 1) & ~(pg - 1);
            if (hi > lo) {
                out->lo = reinterpret_cast<char*>(lo);
                out->size = hi - lo;
            }
            return 1; // stop after the main program
        },
        &r);
    return r;
}

} // namespace vkshmem
