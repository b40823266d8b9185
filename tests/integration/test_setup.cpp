// SPDX-License-Identifier: BSL-1.0
// Setup and queries: my_pe/n_pes, versions and vendor name, init_thread/query_thread (this
// program starts with shmem_init_thread(SHMEM_THREAD_MULTIPLE)), pe_accessible, addr_accessible on
// symmetric and private addresses, shmem_ptr aliasing each peer's object in every space,
// shmemx_addr_space and shmemx_wtime.
#include "spmd.hpp"

#include <chrono>
#include <cstdlib>
#include <thread>

// Symmetric global variables: initialized data (.data), zero-initialized data (.bss), internal
// and external linkage.
long g_data_long[8] = {1, 2, 3, 4, 5, 6, 7, 8};
long g_bss_long[64];
static double s_data_double[4] = {0.5, 1.5, 2.5, 3.5};
static int s_bss_int[128];

namespace {

using spmd::Space;

// Ask the harness for shmem_init_thread instead of shmem_init (runs before main).
[[maybe_unused]] const bool g_requested = [] {
    spmd::init_config().requested_thread_level = SHMEM_THREAD_MULTIPLE;
    return true;
}();

int* function_static() {
    static int counter = 42;
    return &counter;
}

TEST_CASE("my_pe and n_pes") {
    const int n = shmem_n_pes(), me = shmem_my_pe();
    REQUIRE(n >= 1);
    REQUIRE(me >= 0);
    REQUIRE(me < n);
    REQUIRE(shmem_n_pes() == n); // stable
    REQUIRE(shmem_my_pe() == me);
    if (const char* want = std::getenv("SPMD_EXPECT_NPES"); want && *want) {
        INFO("the launcher started SPMD_EXPECT_NPES=" << want << " PEs");
        REQUIRE(n == std::atoi(want));
    }
    // Every PE number is taken exactly once.
    auto* seen = static_cast<int*>(shmem_calloc(static_cast<std::size_t>(n), sizeof(int)));
    REQUIRE(seen != nullptr);
    for (int pe = 0; pe < n; ++pe) shmem_int_atomic_inc(seen + me, pe);
    shmem_barrier_all();
    for (int pe = 0; pe < n; ++pe) {
        INFO("PE number " << pe);
        REQUIRE(seen[pe] == 1);
    }
    shmem_free(seen);
}

TEST_CASE("info_get_version is 1.6 and info_get_name is the vendor string") {
    int major = -1, minor = -1;
    shmem_info_get_version(&major, &minor);
    REQUIRE(major == 1);
    REQUIRE(minor == 6);
    REQUIRE(SHMEM_MAJOR_VERSION == 1);
    REQUIRE(SHMEM_MINOR_VERSION == 6);
    REQUIRE(_SHMEM_MAJOR_VERSION == SHMEM_MAJOR_VERSION);
    REQUIRE(_SHMEM_MINOR_VERSION == SHMEM_MINOR_VERSION);
    REQUIRE(std::string(_SHMEM_VENDOR_STRING) == SHMEM_VENDOR_STRING);
    // vkshmem's own release macros agree with each other (the build takes its version from them).
    REQUIRE(std::string(VKSHMEM_VERSION) == std::to_string(VKSHMEM_MAJOR_VERSION) + "." +
                                                std::to_string(VKSHMEM_MINOR_VERSION) + "." +
                                                std::to_string(VKSHMEM_PATCH_VERSION));
    REQUIRE(VKSHMEM_NUMVERSION == VKSHMEM_MAJOR_VERSION * 10000 + VKSHMEM_MINOR_VERSION * 100 + VKSHMEM_PATCH_VERSION);

    std::vector<char> name(SHMEM_MAX_NAME_LEN + 64, '\x5a');
    shmem_info_get_name(name.data());
    const std::size_t len = strnlen(name.data(), SHMEM_MAX_NAME_LEN);
    INFO("name: " << std::string(name.data(), len));
    REQUIRE(len > 0);
    REQUIRE(len < SHMEM_MAX_NAME_LEN); // NUL-terminated within the limit
    REQUIRE(std::string(name.data()) == SHMEM_VENDOR_STRING);
    for (std::size_t i = SHMEM_MAX_NAME_LEN; i < name.size(); ++i) {
        INFO("byte " << i << " past SHMEM_MAX_NAME_LEN");
        REQUIRE(name[i] == '\x5a');
    }
}

TEST_CASE("shmem_init_thread and shmem_query_thread") {
    const spmd::InitConfig& cfg = spmd::init_config();
    REQUIRE(SHMEM_THREAD_SINGLE < SHMEM_THREAD_FUNNELED);
    REQUIRE(SHMEM_THREAD_FUNNELED < SHMEM_THREAD_SERIALIZED);
    REQUIRE(SHMEM_THREAD_SERIALIZED < SHMEM_THREAD_MULTIPLE);
    REQUIRE(cfg.requested_thread_level == SHMEM_THREAD_MULTIPLE);
    REQUIRE(cfg.init_thread_ret == 0);
    REQUIRE(cfg.provided >= SHMEM_THREAD_SINGLE);
    REQUIRE(cfg.provided <= SHMEM_THREAD_MULTIPLE);
    int queried = -1;
    shmem_query_thread(&queried);
    REQUIRE(queried == cfg.provided);

    // With SHMEM_THREAD_MULTIPLE, two threads per PE may call the library at once.
    auto* counter = static_cast<long*>(shmem_calloc(1, sizeof(long)));
    REQUIRE(counter != nullptr);
    constexpr int kPerThread = 200;
    const bool multiple = cfg.provided == SHMEM_THREAD_MULTIPLE;
    if (multiple) {
        std::thread t1([&] {
            for (int i = 0; i < kPerThread; ++i) shmem_long_atomic_add(counter, 1, spmd::right());
        });
        std::thread t2([&] {
            for (int i = 0; i < kPerThread; ++i) shmem_long_atomic_add(counter, 2, spmd::right());
        });
        t1.join();
        t2.join();
        shmem_quiet();
    }
    shmem_barrier_all();
    if (multiple) REQUIRE(*counter == 3L * kPerThread);
    shmem_free(counter);
}

TEST_CASE("shmem_pe_accessible") {
    const int n = spmd::npes();
    for (int pe = 0; pe < n; ++pe) {
        INFO("PE " << pe);
        REQUIRE(shmem_pe_accessible(pe) == 1);
    }
    INFO("PE numbers outside 0..n_pes-1 are not accessible");
    REQUIRE(shmem_pe_accessible(-1) == 0);
    REQUIRE(shmem_pe_accessible(n) == 0);
}

TEST_CASE("shmem_addr_accessible: symmetric yes, private no") {
    const int n = spmd::npes();
    spmd::for_each_space([&](Space s) {
        spmd::SymArray<long> obj(s, 16);
        for (int pe = 0; pe < n; ++pe) {
            INFO("PE " << pe);
            REQUIRE(shmem_addr_accessible(obj.get(), pe) == 1);
            REQUIRE(shmem_addr_accessible(obj.get() + 15, pe) == 1);
        }
    });
    long on_stack[4] = {};
    auto* on_malloc = static_cast<long*>(std::malloc(64));
    REQUIRE(on_malloc != nullptr);
    for (int pe = 0; pe < n; ++pe) {
        INFO("PE " << pe);
        REQUIRE(shmem_addr_accessible(g_data_long, pe) == 1);
        REQUIRE(shmem_addr_accessible(g_bss_long + 63, pe) == 1);
        REQUIRE(shmem_addr_accessible(s_data_double, pe) == 1);
        REQUIRE(shmem_addr_accessible(s_bss_int, pe) == 1);
        REQUIRE(shmem_addr_accessible(function_static(), pe) == 1);
        INFO("a stack variable and a malloc'd object are not symmetric");
        REQUIRE(shmem_addr_accessible(on_stack, pe) == 0);
        REQUIRE(shmem_addr_accessible(on_malloc, pe) == 0);
    }
    std::free(on_malloc);
}

// Writes through shmem_ptr into every PE's copy of `obj` (n longs, slot me), then checks that each
// PE's own copy got every PE's value: the pointer really aliases the peer's object. With
// may_be_null (the device heap: a GPU's memory may not be load/store accessible from the CPU, and
// VKSHMEM_DEVICE_ROUTE=bar|copy says so on lavapipe too) shmem_ptr may answer NULL, and the slot
// is then written with a put; any pointer it does return must alias. The device heap may have no
// CPU mapping at all (copy), so this PE's own copy is initialized and read through
// local_store/local_load, never through `obj` itself.
void ptr_aliases(long* obj, const char* what, bool may_be_null = false) {
    const int n = spmd::npes(), me = spmd::me();
    const std::uint64_t key = spmd::shared_key();
    auto value = [&](int writer, int owner) { return static_cast<long>(spmd::mix(key ^ (writer * 131 + owner)) >> 2); };
    spmd::local_write(obj, std::vector<long>(static_cast<std::size_t>(n), -1L));
    shmem_barrier_all();
    INFO(what);
    for (int pe = 0; pe < n; ++pe) {
        INFO("shmem_ptr to PE " << pe);
        auto* peer = static_cast<long*>(shmem_ptr(obj, pe));
        if (!spmd::same_node(pe)) REQUIRE(peer == nullptr);
        else if (!may_be_null) REQUIRE(peer != nullptr);
        if (peer && pe == me) REQUIRE(peer == obj);
        if (peer) peer[me] = value(me, pe);
        else shmem_long_p(obj + me, value(me, pe), pe);
    }
    shmem_barrier_all();
    const std::vector<long> mine = spmd::local_read(obj, static_cast<std::size_t>(n));
    for (int w = 0; w < n; ++w) {
        INFO("slot written by PE " << w);
        REQUIRE(mine[w] == value(w, me));
    }
    // Reads through the pointer see the peer's memory as shmem_long_g does.
    for (int pe = 0; pe < n; ++pe) {
        auto* peer = static_cast<long*>(shmem_ptr(obj, pe));
        for (int w = 0; w < n; ++w) {
            INFO("reading PE " << pe << "'s slot " << w << (peer ? " through shmem_ptr" : " (shmem_ptr: NULL)"));
            if (peer) REQUIRE(peer[w] == value(w, pe));
            REQUIRE(shmem_long_g(obj + w, pe) == value(w, pe));
        }
    }
    shmem_barrier_all();
}

TEST_CASE("shmem_ptr: non-NULL for every PE of the node (host heap, static data), aliasing the peer's object; NULL for other nodes") {
    spmd::for_each_space([](Space s) {
        spmd::SymArray<long> obj(s, static_cast<std::size_t>(spmd::npes()));
        ptr_aliases(obj.get(), spmd::name(s), s == Space::Device);
    });
    ptr_aliases(g_bss_long, "global array in .bss");
    ptr_aliases(g_data_long, "global array in .data");
    {
        // Restore the initial values other tests might look at.
        static const long init[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        std::memcpy(g_data_long, init, sizeof init);
    }
    INFO("interior pointers translate too");
    for (int pe = 0; pe < spmd::npes(); ++pe) {
        auto* base = static_cast<char*>(shmem_ptr(s_bss_int, pe));
        auto* inner = static_cast<char*>(shmem_ptr(s_bss_int + 77, pe));
        if (!spmd::same_node(pe)) {
            REQUIRE(base == nullptr);
            REQUIRE(inner == nullptr);
            continue;
        }
        REQUIRE(base != nullptr);
        REQUIRE(inner == base + 77 * sizeof(int));
    }
    shmem_barrier_all();
}

TEST_CASE("shmemx_addr_space names the heap of an address") {
    spmd::for_each_space([](Space s) {
        spmd::SymArray<unsigned char> obj(s, 1000);
        REQUIRE(shmemx_addr_space(obj.get()) == spmd::expected_addr_space(s));
        REQUIRE(shmemx_addr_space(obj.get() + 999) == spmd::expected_addr_space(s));
    });
    REQUIRE(shmemx_addr_space(g_data_long) == SHMEMX_SPACE_STATIC);
    REQUIRE(shmemx_addr_space(g_bss_long + 10) == SHMEMX_SPACE_STATIC);
    REQUIRE(shmemx_addr_space(s_data_double + 3) == SHMEMX_SPACE_STATIC);
    REQUIRE(shmemx_addr_space(s_bss_int) == SHMEMX_SPACE_STATIC);
    REQUIRE(shmemx_addr_space(function_static()) == SHMEMX_SPACE_STATIC);
    int on_stack = 0;
    auto* on_malloc = static_cast<int*>(std::malloc(16));
    REQUIRE(on_malloc != nullptr);
    REQUIRE(shmemx_addr_space(&on_stack) == SHMEMX_SPACE_NONE);
    REQUIRE(shmemx_addr_space(on_malloc) == SHMEMX_SPACE_NONE);
    REQUIRE(shmemx_addr_space(nullptr) == SHMEMX_SPACE_NONE);
    std::free(on_malloc);
}

TEST_CASE("shmemx_wtime never goes back and counts seconds") {
    double prev = shmemx_wtime();
    REQUIRE(prev > 0.0);
    for (int i = 0; i < 1000; ++i) {
        const double t = shmemx_wtime();
        REQUIRE(t >= prev);
        prev = t;
    }
    // Against the standard library's monotonic clock over a 20 ms sleep (a lower bound only: the
    // sleep may last longer, never shorter).
    const auto c0 = std::chrono::steady_clock::now();
    const double w0 = shmemx_wtime();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const double w1 = shmemx_wtime();
    const double c = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
    REQUIRE(w1 - w0 >= 0.020);
    REQUIRE(w1 - w0 <= c + 0.001);
}

TEST_CASE("static variables keep their initial values and are symmetric") {
    // The data segment is symmetric, and its initial contents are the program's.
    REQUIRE(g_data_long[0] == 1);
    REQUIRE(g_data_long[7] == 8);
    REQUIRE(s_data_double[2] == 2.5);
    REQUIRE(*function_static() == 42);
    const int to = spmd::right(), me = spmd::me();
    for (int i = 0; i < 128; ++i) s_bss_int[i] = 0;
    shmem_barrier_all();
    std::vector<int> src(128);
    for (int i = 0; i < 128; ++i) src[i] = me * 1000 + i;
    shmem_int_put(s_bss_int, src.data(), 128, to);
    shmem_barrier_all();
    for (int i = 0; i < 128; ++i) {
        INFO("element " << i);
        REQUIRE(s_bss_int[i] == spmd::left() * 1000 + i);
    }
    shmem_barrier_all();
}

} // namespace
