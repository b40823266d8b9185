// SPDX-License-Identifier: BSL-1.0
// The untyped routines of OpenSHMEM 1.0-1.3 that older programs and benchmarks still call; each
// is a newer routine under its old name. The typed deprecated names (shmem_int_fadd,
// shmem_long_wait, ...) are generated (tools/gen, family "deprecated").
#include <shmem.h>

#include "api/typed.hpp"
#include "runtime/runtime.hpp"

extern "C" {

// The PE count was always ignored. No shmem_finalize is needed: the library is finalized when the
// program exits (OpenSHMEM 1.4-1.6, start_pes).
void start_pes(int) noexcept {
    shmem_init();
    vkshmem::Runtime::finalize_at_exit();
}
void* shmalloc(size_t size) noexcept { return shmem_malloc(size); }
void shfree(void* ptr) noexcept { shmem_free(ptr); }
void* shrealloc(void* ptr, size_t size) noexcept { return shmem_realloc(ptr, size); }
void* shmemalign(size_t alignment, size_t size) noexcept { return shmem_align(alignment, size); }
int _my_pe(void) noexcept { return shmem_my_pe(); }
int _num_pes(void) noexcept { return shmem_n_pes(); }

long shmem_swap(long* target, long value, int pe) noexcept {
    return vkshmem::api::atomic_swap(target, value, pe, "shmem_swap");
}

void shmem_wait(long* ivar, long cmp_value) noexcept {
    vkshmem::api::wait_while_equal(ivar, cmp_value, "shmem_wait");
}

// Cache management of the Cray T3D/T3E era, where remote writes did not invalidate the target's
// data cache. Every system vkshmem runs on keeps CPU caches coherent with the stores of other
// PEs, with DMA and with the network, and symmetric device memory the CPU maps is uncached or
// coherent, so there is nothing to invalidate or flush: these are no-ops by design.
void shmem_clear_cache_inv(void) noexcept {}
void shmem_set_cache_inv(void) noexcept {}
void shmem_clear_cache_line_inv(void*) noexcept {}
void shmem_set_cache_line_inv(void*) noexcept {}
void shmem_udcflush(void) noexcept {}
void shmem_udcflush_line(void*) noexcept {}

} // extern "C"
