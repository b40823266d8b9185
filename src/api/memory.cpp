// SPDX-License-Identifier: BSL-1.0
// Symmetric memory management (OpenSHMEM 1.6 §9.3). Every routine here is
// collective and ends with a barrier, as the spec requires.
#include <shmem.h>
#include <shmemx.h>

#include "api/guard.hpp"

#include <cstring>
#include <limits>

using namespace vkshmem;

extern "C" {

void* shmem_malloc(size_t size) noexcept {
    return require_runtime("shmem_malloc").allocate(kHostHeap, size, SymmetricAllocator::kMinAlign, "shmem_malloc");
}

void* shmem_calloc(size_t count, size_t size) noexcept {
    Runtime& rt = require_runtime("shmem_calloc");
    if (size && count > std::numeric_limits<size_t>::max() / size) {
        if (g_state.my_pe == 0) error("shmem_calloc", "{} x {} bytes overflows size_t", count, size);
        rt.barrier_all();
        return nullptr;
    }
    void* p = rt.allocate(kHostHeap, count * size, SymmetricAllocator::kMinAlign, "shmem_calloc");
    if (p) std::memset(p, 0, count * size);
    // The zeroing must be complete on every PE before anyone writes into it.
    rt.barrier_all();
    return p;
}

void* shmem_align(size_t alignment, size_t size) noexcept {
    Runtime& rt = require_runtime("shmem_align");
    if (alignment == 0 || (alignment & (alignment - 1))) {
        if (g_state.my_pe == 0) error("shmem_align", "alignment {} is not a power of two", alignment);
        rt.barrier_all();
        return nullptr;
    }
    return rt.allocate(kHostHeap, size, alignment, "shmem_align");
}

void* shmem_realloc(void* ptr, size_t size) noexcept {
    return require_runtime("shmem_realloc").reallocate(ptr, size, "shmem_realloc");
}

void shmem_free(void* ptr) noexcept {
    Runtime& rt = require_runtime("shmem_free");
    if (!ptr) {
        rt.barrier_all();
        return;
    }
    rt.release(ptr, "shmem_free");
}

void* shmem_malloc_with_hints(size_t size, long hints) noexcept {
    Runtime& rt = require_runtime("shmem_malloc_with_hints");
    const long known = SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE | SHMEMX_MALLOC_DEVICE;
    if (hints & ~known)
        VKSHMEM_WARN_ONCE("shmem_malloc_with_hints: ignoring unknown hint bits {:#x}", hints & ~known);
    Space s = (hints & SHMEMX_MALLOC_DEVICE) ? kDeviceHeap : kHostHeap;
    return rt.allocate(s, size, SymmetricAllocator::kMinAlign, "shmem_malloc_with_hints");
}

void* shmemx_device_malloc(size_t size) noexcept {
    return require_runtime("shmemx_device_malloc")
        .allocate(kDeviceHeap, size, SymmetricAllocator::kMinAlign, "shmemx_device_malloc");
}

} // extern "C"
