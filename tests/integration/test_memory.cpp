// SPDX-License-Identifier: BSL-1.0
// Symmetric memory management: shmem_malloc/calloc/align/realloc/free/malloc_with_hints and
// shmemx_device_malloc. Every object must be reachable on every PE (puts from a neighbour, shmem_ptr),
// sit at the same offset from the other objects of its heap on every PE, keep its contents
// (realloc), and the heaps must survive many alloc/free cycles and say NULL, not crash, when a
// request cannot be met.
#include "spmd.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

namespace {

using spmd::Gen;
using spmd::Space;

// The left neighbour fills the whole object through putmem; returns "" when this PE's object
// then holds exactly that. Collective.
std::string reachable_by_put(unsigned char* obj, std::size_t size, std::uint64_t key) {
    const int me = spmd::me(), to = spmd::right(), from = spmd::left();
    std::vector<unsigned char> src(size), want(size);
    spmd::fill_bytes(src.data(), size, Gen(key, me, 77));
    shmem_barrier_all();
    shmem_putmem(obj, src.data(), size, to);
    shmem_barrier_all();
    spmd::fill_bytes(want.data(), size, Gen(key, from, 77));
    std::string e = spmd::diff_sym(obj, want.data(), size); // obj may be in the device heap
    shmem_barrier_all();
    return e;
}

// Every PE's copy of `obj` lies at the same distance from `ref` (another object of the same heap)
// in each peer's mapping as locally: allocation is symmetric. The device heap may not be load/store
// accessible (shmem_ptr NULL, e.g. VKSHMEM_DEVICE_ROUTE=bar|copy); then there is nothing to compare.
void same_offsets(const void* ref, const void* obj) {
    const bool device = shmemx_addr_space(obj) == SHMEMX_SPACE_DEVICE;
    const auto local = reinterpret_cast<std::intptr_t>(obj) - reinterpret_cast<std::intptr_t>(ref);
    for (int pe = 0; pe < spmd::npes(); ++pe) {
        void* r = shmem_ptr(ref, pe);
        void* o = shmem_ptr(obj, pe);
        INFO("shmem_ptr on PE " << pe);
        if ((device || !spmd::same_node(pe)) && !r && !o) continue;
        REQUIRE(r != nullptr);
        REQUIRE(o != nullptr);
        REQUIRE(reinterpret_cast<std::intptr_t>(o) - reinterpret_cast<std::intptr_t>(r) == local);
    }
}

// Collective: every PE's value of x equals PE 0's.
void same_on_all_pes(std::int64_t x, const char* what) {
    auto* cell = static_cast<std::int64_t*>(shmem_malloc(sizeof(std::int64_t) * spmd::npes()));
    REQUIRE(cell != nullptr);
    for (int pe = 0; pe < spmd::npes(); ++pe) shmem_int64_p(cell + spmd::me(), x, pe);
    shmem_barrier_all();
    for (int pe = 0; pe < spmd::npes(); ++pe) {
        INFO(what << ": PE " << pe << " has " << cell[pe] << ", this PE " << x);
        REQUIRE(cell[pe] == x);
    }
    shmem_free(cell);
}

TEST_CASE("shmem_malloc: non-NULL, aligned, reachable, same offsets on every PE") {
    const std::size_t sizes[] = {1, 8, 24, 100, 4096, 65536 + 3, std::size_t{1} << 20};
    unsigned char* ref = static_cast<unsigned char*>(shmem_malloc(64));
    REQUIRE(ref != nullptr);
    std::vector<unsigned char*> objs;
    for (std::size_t size : sizes) {
        INFO("shmem_malloc(" << size << ")");
        auto* p = static_cast<unsigned char*>(shmem_malloc(size));
        REQUIRE(p != nullptr);
        REQUIRE(reinterpret_cast<std::uintptr_t>(p) % alignof(std::max_align_t) == 0);
        REQUIRE(shmemx_addr_space(p) == SHMEMX_SPACE_HOST);
        REQUIRE(shmemx_addr_space(p + size - 1) == SHMEMX_SPACE_HOST);
        SPMD_REQUIRE_OK(reachable_by_put(p, size, spmd::shared_key()));
        same_offsets(ref, p);
        same_on_all_pes(reinterpret_cast<std::intptr_t>(p) - reinterpret_cast<std::intptr_t>(ref),
                        "offset from the first object");
        objs.push_back(p);
    }
    // The objects do not overlap: each still holds what was written into it last.
    std::vector<std::vector<unsigned char>> snap;
    for (std::size_t i = 0; i < objs.size(); ++i) {
        spmd::fill_bytes(objs[i], sizes[i], Gen(spmd::me(), i));
    }
    for (std::size_t i = 0; i < objs.size(); ++i) {
        std::vector<unsigned char> want(sizes[i]);
        spmd::fill_bytes(want.data(), sizes[i], Gen(spmd::me(), i));
        INFO("object " << i << " of " << sizes[i] << " bytes after writing all of them");
        SPMD_REQUIRE_OK(spmd::diff_bytes(objs[i], want.data(), sizes[i]));
    }
    for (auto it = objs.rbegin(); it != objs.rend(); ++it) shmem_free(*it);
    shmem_free(ref);
}

TEST_CASE("shmem_calloc returns zeroed memory") {
    const std::size_t sizes[][2] = {{1, 1}, {3, 7}, {100, 8}, {1024, 64}, {1, std::size_t{1} << 20}};
    for (auto [count, size] : sizes) {
        INFO("shmem_calloc(" << count << ", " << size << ")");
        const std::size_t bytes = count * size;
        // Dirty the memory calloc is likely to hand out next.
        auto* dirty = static_cast<unsigned char*>(shmem_malloc(bytes));
        REQUIRE(dirty != nullptr);
        std::memset(dirty, 0xff, bytes);
        shmem_free(dirty);
        auto* p = static_cast<unsigned char*>(shmem_calloc(count, size));
        REQUIRE(p != nullptr);
        std::vector<unsigned char> zeros(bytes, 0);
        SPMD_REQUIRE_OK(spmd::diff_bytes(p, zeros.data(), bytes));
        SPMD_REQUIRE_OK(reachable_by_put(p, bytes, spmd::shared_key()));
        shmem_free(p);
    }
    {
        INFO("shmem_calloc with a zero count or size: NULL (OpenSHMEM 1.6 §9.3.1)");
        void* a = shmem_calloc(0, 8);
        void* b = shmem_calloc(8, 0);
        CHECK(a == nullptr);
        CHECK(b == nullptr);
        shmem_free(b);
        shmem_free(a);
    }
}

TEST_CASE("shmem_align honours 64 B .. 64 KiB") {
    for (std::size_t align = 64; align <= 65536; align *= 2) {
        const std::size_t size = spmd::shared_range(1, 3 * align);
        INFO("shmem_align(" << align << ", " << size << ")");
        void* skew = shmem_malloc(24); // leave the heap's next free byte unaligned
        REQUIRE(skew != nullptr);
        auto* p = static_cast<unsigned char*>(shmem_align(align, size));
        REQUIRE(p != nullptr);
        REQUIRE(reinterpret_cast<std::uintptr_t>(p) % align == 0);
        REQUIRE(shmemx_addr_space(p) == SHMEMX_SPACE_HOST);
        SPMD_REQUIRE_OK(reachable_by_put(p, size, spmd::shared_key()));
        same_offsets(skew, p);
        shmem_free(p);
        shmem_free(skew);
    }
}

TEST_CASE("shmem_realloc keeps the contents, moved or not") {
    const unsigned char poison = spmd::poison_byte();
    struct Step {
        std::size_t from, to;
    };
    const Step steps[] = {{100, 5000}, {256, 65536}, {65536, 100}, {4096, 4096}, {1, std::size_t{1} << 20}};
    for (Space s : {Space::Host, Space::Device}) {
        INFO("space " << spmd::name(s));
        for (auto [from, to] : steps) {
            INFO("shmem_realloc from " << from << " to " << to << " bytes");
            const std::uint64_t key = spmd::shared_key();
            auto* p = static_cast<unsigned char*>(spmd::sym_alloc(s, from));
            REQUIRE(p != nullptr);
            void* blocker = shmem_malloc_with_hints(64, s == Space::Device ? SHMEMX_MALLOC_DEVICE : 0);
            REQUIRE(blocker != nullptr); // sits after p, so growing p in place is not free
            SPMD_REQUIRE_OK(reachable_by_put(p, from, key));
            auto* q = static_cast<unsigned char*>(shmem_realloc(p, to));
            REQUIRE(q != nullptr);
            REQUIRE(shmemx_addr_space(q) == spmd::expected_addr_space(s));
            // What the left neighbour wrote before the realloc is still there.
            const std::size_t kept = std::min(from, to);
            std::vector<unsigned char> want(from);
            spmd::fill_bytes(want.data(), from, Gen(key, spmd::left(), 77));
            SPMD_REQUIRE_OK(spmd::diff_sym(q, want.data(), kept));
            // All of the new object is reachable.
            spmd::local_fill(q, poison, to);
            SPMD_REQUIRE_OK(reachable_by_put(q, to, spmd::shared_key()));
            same_on_all_pes(reinterpret_cast<std::intptr_t>(q) - reinterpret_cast<std::intptr_t>(blocker),
                            "offset of the reallocated object from the blocker");
            shmem_free(blocker);
            shmem_free(q);
        }
    }
    {
        INFO("shmem_realloc(NULL, n) allocates like shmem_malloc");
        auto* p = static_cast<unsigned char*>(shmem_realloc(nullptr, 4096));
        REQUIRE(p != nullptr);
        REQUIRE(shmemx_addr_space(p) == SHMEMX_SPACE_HOST);
        SPMD_REQUIRE_OK(reachable_by_put(p, 4096, spmd::shared_key()));
        shmem_free(p);
    }
}

TEST_CASE("shmem_malloc_with_hints and shmemx_device_malloc") {
    struct Case {
        long hints;
        int space;
        const char* name;
    };
    const Case cases[] = {
        {0, SHMEMX_SPACE_HOST, "0"},
        {SHMEM_MALLOC_ATOMICS_REMOTE, SHMEMX_SPACE_HOST, "SHMEM_MALLOC_ATOMICS_REMOTE"},
        {SHMEM_MALLOC_SIGNAL_REMOTE, SHMEMX_SPACE_HOST, "SHMEM_MALLOC_SIGNAL_REMOTE"},
        {SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE, SHMEMX_SPACE_HOST, "ATOMICS_REMOTE|SIGNAL_REMOTE"},
        {SHMEMX_MALLOC_DEVICE, SHMEMX_SPACE_DEVICE, "SHMEMX_MALLOC_DEVICE"},
        {SHMEMX_MALLOC_DEVICE | SHMEM_MALLOC_ATOMICS_REMOTE, SHMEMX_SPACE_DEVICE, "DEVICE|ATOMICS_REMOTE"},
        {-1, SHMEMX_SPACE_DEVICE, "shmemx_device_malloc"},
    };
    const int n = spmd::npes(), me = spmd::me();
    void* ref_host = shmem_malloc(64);
    void* ref_dev = shmemx_device_malloc(64);
    REQUIRE(ref_host != nullptr);
    REQUIRE(ref_dev != nullptr);
    for (const Case& c : cases) {
        INFO("hints " << c.name);
        constexpr std::size_t kBytes = 8192;
        auto* p = static_cast<unsigned char*>(c.hints == -1 ? shmemx_device_malloc(kBytes)
                                                            : shmem_malloc_with_hints(kBytes, c.hints));
        REQUIRE(p != nullptr);
        REQUIRE(reinterpret_cast<std::uintptr_t>(p) % alignof(std::max_align_t) == 0);
        REQUIRE(shmemx_addr_space(p) == c.space);
        REQUIRE(shmemx_addr_space(p + kBytes - 1) == c.space);
        SPMD_REQUIRE_OK(reachable_by_put(p, kBytes, spmd::shared_key()));
        same_offsets(c.space == SHMEMX_SPACE_DEVICE ? ref_dev : ref_host, p);
        same_on_all_pes(reinterpret_cast<std::intptr_t>(p) -
                            reinterpret_cast<std::intptr_t>(c.space == SHMEMX_SPACE_DEVICE ? ref_dev : ref_host),
                        "offset from the first object of the heap");
        // Remote atomics from every PE (what ATOMICS_REMOTE announces).
        auto* counter = reinterpret_cast<long*>(p);
        spmd::local_set(counter, 0L);
        shmem_barrier_all();
        for (int pe = 0; pe < n; ++pe) shmem_long_atomic_add(counter, me + 1, pe);
        shmem_barrier_all();
        REQUIRE(spmd::local_get(counter) == static_cast<long>(n) * (n + 1) / 2);
        shmem_free(p);
    }
    shmem_free(ref_dev);
    shmem_free(ref_host);
}

// Each zero-size request returns NULL (OpenSHMEM 1.6 §9.3.1) and is still a barrier: a put issued
// before it on one PE is visible on every PE after it.
TEST_CASE("zero-size requests return NULL and synchronize; shmem_free(NULL)") {
    static long mark[4];
    const int me = spmd::me(), n = spmd::npes();
    const long stamp = static_cast<long>(spmd::shared_range(1, 1 << 30));
    using Alloc = void* (*)();
    const std::pair<const char*, Alloc> calls[] = {
        {"shmem_malloc(0)", [] { return shmem_malloc(0); }},
        {"shmem_calloc(0, 8)", [] { return shmem_calloc(0, 8); }},
        {"shmem_calloc(8, 0)", [] { return shmem_calloc(8, 0); }},
        {"shmem_align(64, 0)", [] { return shmem_align(64, 0); }},
        {"shmem_malloc_with_hints(0, 0)", [] { return shmem_malloc_with_hints(0, 0); }},
        {"shmem_malloc_with_hints(0, SHMEMX_MALLOC_DEVICE)",
         [] { return shmem_malloc_with_hints(0, SHMEMX_MALLOC_DEVICE); }},
        {"shmemx_device_malloc(0)", [] { return shmemx_device_malloc(0); }},
        {"shmem_realloc(NULL, 0)", [] { return shmem_realloc(nullptr, 0); }},
    };
    long round = 0;
    for (const auto& [name, alloc] : calls) {
        INFO(name);
        ++round;
        mark[0] = 0;
        shmem_barrier_all();
        // Only the right neighbour writes this PE's mark, before the call; the call must order it.
        shmem_long_p(&mark[0], stamp + round, (me + 1) % n);
        void* p = alloc();
        CHECK(p == nullptr);
        CHECK(spmd::local_get(&mark[0]) == stamp + round);
        shmem_free(p);
    }
    shmem_free(nullptr);
    void* e = shmem_malloc(16);
    REQUIRE(e != nullptr);
    shmem_free(e);
}

// A random mix of malloc/calloc/align/realloc/device allocations and frees (the same on every PE).
// Every live object holds what its left neighbour put into it; overlapping objects would
// corrupt each other.
TEST_CASE("many allocation/free cycles keep objects intact") {
    struct Obj {
        unsigned char* p;
        std::size_t size;
        std::uint64_t key;
    };
    std::vector<Obj> live;
    auto verify = [&](const Obj& o) {
        std::vector<unsigned char> want(o.size);
        spmd::fill_bytes(want.data(), o.size, Gen(o.key, spmd::left(), 5));
        INFO("object of " << o.size << " bytes at heap space " << shmemx_addr_space(o.p));
        SPMD_REQUIRE_OK(spmd::diff_sym(o.p, want.data(), o.size));
    };
    auto fill_remote = [&](const Obj& o) {
        std::vector<unsigned char> src(o.size);
        spmd::fill_bytes(src.data(), o.size, Gen(o.key, spmd::me(), 5));
        shmem_putmem(o.p, src.data(), o.size, spmd::right());
    };
    constexpr int kSteps = 240;
    for (int step = 0; step < kSteps; ++step) {
        const bool allocate = live.size() < 3 || (live.size() < 24 && spmd::shared_range(0, 2) != 0);
        INFO("step " << step << ", " << live.size() << " live objects");
        if (allocate || step % 17 == 0) {
            const std::size_t size = spmd::shared_range(0, 3) == 0 ? spmd::shared_range(1, 200000)
                                                                    : spmd::shared_range(1, 2000);
            const std::uint64_t how = spmd::shared_range(0, 4);
            unsigned char* p = nullptr;
            switch (how) {
            case 0: p = static_cast<unsigned char*>(shmem_malloc(size)); break;
            case 1: p = static_cast<unsigned char*>(shmem_calloc(1, size)); break;
            case 2: p = static_cast<unsigned char*>(shmem_align(std::size_t{64} << spmd::shared_range(0, 6), size)); break;
            case 3: p = static_cast<unsigned char*>(shmemx_device_malloc(size)); break;
            case 4: {
                if (live.empty()) {
                    p = static_cast<unsigned char*>(shmem_malloc(size));
                    break;
                }
                // Grow or shrink a live object; what it held (up to the new size) must remain.
                const std::size_t i = spmd::shared_range(0, live.size() - 1);
                verify(live[i]);
                Obj o = live[i];
                live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
                p = static_cast<unsigned char*>(shmem_realloc(o.p, size));
                REQUIRE(p != nullptr);
                std::vector<unsigned char> want(o.size);
                spmd::fill_bytes(want.data(), o.size, Gen(o.key, spmd::left(), 5));
                SPMD_REQUIRE_OK(spmd::diff_sym(p, want.data(), std::min(o.size, size)));
                shmem_barrier_all(); // checked before the neighbour refills it
                break;
            }
            }
            INFO("allocation kind " << how << " of " << size << " bytes");
            REQUIRE(p != nullptr);
            Obj o{p, size, spmd::shared_key()};
            fill_remote(o);
            live.push_back(o);
            shmem_barrier_all();
        } else {
            const std::size_t i = spmd::shared_range(0, live.size() - 1);
            verify(live[i]);
            shmem_free(live[i].p);
            live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
    for (const Obj& o : live) verify(o);
    while (!live.empty()) {
        shmem_free(live.back().p);
        live.pop_back();
    }
}

// Large alloc/free cycles: a heap that leaked would run out long before the end.
TEST_CASE("alloc/free cycles of large objects do not leak") {
    for (int i = 0; i < 30; ++i) {
        INFO("cycle " << i);
        void* h = shmem_malloc(std::size_t{40} << 20);
        REQUIRE(h != nullptr);
        void* d = shmemx_device_malloc(std::size_t{24} << 20);
        REQUIRE(d != nullptr);
        shmem_free(d);
        shmem_free(h);
    }
}

// Requests no heap can meet: NULL on every PE, no crash, and the heaps keep working. (The
// runtime prints a message for each.)
TEST_CASE("exhaustion returns NULL on every PE and the heap stays usable") {
    const std::size_t huge = SIZE_MAX / 2;
    auto* keep = static_cast<unsigned char*>(shmem_malloc(4096));
    REQUIRE(keep != nullptr);
    const std::uint64_t key = spmd::shared_key();
    spmd::fill_bytes(keep, 4096, Gen(key, spmd::me()));

    REQUIRE(shmem_malloc(huge) == nullptr);
    REQUIRE(shmem_malloc(std::size_t{1} << 40) == nullptr);
    REQUIRE(shmem_malloc_with_hints(huge, SHMEMX_MALLOC_DEVICE) == nullptr);
    REQUIRE(shmemx_device_malloc(std::size_t{1} << 40) == nullptr);
    REQUIRE(shmem_malloc_with_hints(huge, SHMEM_MALLOC_ATOMICS_REMOTE) == nullptr);
    REQUIRE(shmem_align(4096, huge) == nullptr);
    {
        INFO("shmem_calloc whose count * size overflows");
        REQUIRE(shmem_calloc(huge, 4) == nullptr);
        REQUIRE(shmem_calloc(4, huge) == nullptr);
    }
    {
        INFO("a failed shmem_realloc leaves the object as it was");
        REQUIRE(shmem_realloc(keep, huge) == nullptr);
        std::vector<unsigned char> want(4096);
        spmd::fill_bytes(want.data(), 4096, Gen(key, spmd::me()));
        SPMD_REQUIRE_OK(spmd::diff_bytes(keep, want.data(), 4096));
    }
    auto* after = static_cast<unsigned char*>(shmem_malloc(1 << 16));
    REQUIRE(after != nullptr);
    SPMD_REQUIRE_OK(reachable_by_put(after, 1 << 16, spmd::shared_key()));
    shmem_free(after);
    SPMD_REQUIRE_OK(reachable_by_put(keep, 4096, spmd::shared_key()));
    shmem_free(keep);
}

} // namespace
