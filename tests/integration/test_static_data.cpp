// SPDX-License-Identifier: BSL-1.0
// Symmetric static data in less common layouts: an over-aligned (64 KiB) global, which makes the
// linker emit a second writable PT_LOAD segment after a gap, a large zero-initialized array, and
// thread-independent function statics. Every one must be symmetric (reachable by put/get and
// shmem_ptr on every PE) and keep its initial contents.
#include "spmd.hpp"

// 64 KiB alignment: the linker starts a new RW segment for it, leaving an unmapped gap after the
// regular .data/.bss.
alignas(65536) unsigned char g_overaligned[3 * 65536 + 17];
alignas(65536) long g_overaligned_data[4] = {11, 22, 33, 44};
unsigned char g_big_bss[6 << 20];
int g_plain_data = 4242;

namespace {

template <class T> void check_symmetric(T* obj, std::size_t n, const char* what) {
    INFO(what);
    const int me = spmd::me(), npes = spmd::npes();
    REQUIRE(shmemx_addr_space(obj) == SHMEMX_SPACE_STATIC);
    REQUIRE(shmemx_addr_space(obj + n - 1) == SHMEMX_SPACE_STATIC);
    const std::uint64_t key = spmd::shared_key();
    std::vector<T> src(n), want(n);
    spmd::fill_values(src.data(), n, spmd::Gen(key, me));
    shmem_barrier_all();
    shmem_putmem(obj, src.data(), n * sizeof(T), spmd::right());
    shmem_barrier_all();
    spmd::fill_values(want.data(), n, spmd::Gen(key, spmd::left()));
    SPMD_REQUIRE_OK(spmd::diff_bytes(obj, want.data(), n * sizeof(T)));
    for (int pe = 0; pe < npes; ++pe) {
        INFO("shmem_ptr and shmem_addr_accessible for PE " << pe);
        REQUIRE(shmem_addr_accessible(obj, pe) == 1);
        auto* peer = static_cast<T*>(shmem_ptr(obj + n - 1, pe));
        T last{};
        if (spmd::same_node(pe)) {
            REQUIRE(peer != nullptr);
            last = *peer;
        } else {
            REQUIRE(peer == nullptr); // another node: only through the network
            shmem_getmem(&last, obj + n - 1, sizeof last, pe);
        }
        spmd::Gen g(key, (pe + npes - 1) % npes);
        std::vector<T> theirs(n);
        spmd::fill_values(theirs.data(), n, g);
        REQUIRE(last == theirs[n - 1]);
    }
    shmem_barrier_all();
}

TEST_CASE("initial values of static data survive shmem_init") {
    REQUIRE(g_plain_data == 4242);
    REQUIRE(g_overaligned_data[0] == 11);
    REQUIRE(g_overaligned_data[3] == 44);
    REQUIRE(reinterpret_cast<std::uintptr_t>(g_overaligned) % 65536 == 0);
    REQUIRE(g_big_bss[0] == 0);
    REQUIRE(g_big_bss[sizeof g_big_bss - 1] == 0);
}

TEST_CASE("over-aligned, large and plain globals are symmetric") {
    check_symmetric(&g_plain_data, 1, "int in .data");
    check_symmetric(g_overaligned_data, 4, "64 KiB-aligned long[4] in .data");
    check_symmetric(g_overaligned, sizeof g_overaligned, "64 KiB-aligned array in .bss");
    check_symmetric(g_big_bss, sizeof g_big_bss, "6 MiB array in .bss");
}

} // namespace
