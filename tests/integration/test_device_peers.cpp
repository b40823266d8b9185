// SPDX-License-Identifier: BSL-1.0
// Other PEs' device heaps: bulk puts and gets larger than the runtime's staging area (odd
// sizes, from and to private memory, this PE's host heap and this PE's own device heap), and
// several threads per PE doing puts and atomics at once. Registered with the default routes and
// with VKSHMEM_SHARE_DEVICE_HEAPS=0, where every access to a peer's device heap is an active
// message served by that PE's proxy thread (what PEs on different GPUs do).
#include "spmd.hpp"

#include <algorithm>
#include <thread>

namespace {

using spmd::Gen;
using spmd::Space;

const bool g_threads = [] {
    spmd::init_config().requested_thread_level = SHMEM_THREAD_MULTIPLE;
    return true;
}();

// Where the local side of a transfer lives.
enum class Local { Private, HostHeap, DeviceHeap };
const char* name(Local l) {
    switch (l) {
    case Local::Private: return "private memory";
    case Local::HostHeap: return "host heap";
    case Local::DeviceHeap: return "own device heap";
    }
    return "?";
}

TEST_CASE("bulk put and get of another PE's device heap, every kind of local buffer") {
    REQUIRE(g_threads);
    // Larger than one staging area (512 KiB) and odd, so pieces and tails are both exercised.
    const std::size_t n = spmd::shared_range(1200 * 1024, 1700 * 1024) | 1;
    const std::uint64_t key = spmd::shared_key();
    const unsigned char poison = spmd::poison_byte();
    spmd::SymArray<unsigned char> remote(Space::Device, n + 64);
    spmd::SymArray<unsigned char> host(Space::Host, n);
    spmd::SymArray<unsigned char> dev(Space::Device, n);
    std::vector<unsigned char> priv(n);
    for (Local l : {Local::Private, Local::HostHeap, Local::DeviceHeap}) {
        INFO("local buffer: " << name(l));
        const auto round = static_cast<std::uint64_t>(l);
        // Put: this PE's data into the right neighbour's device heap, 32 bytes in.
        std::vector<unsigned char> mine(n);
        spmd::fill_bytes(mine.data(), n, Gen(key, round, spmd::me()));
        const unsigned char* src = mine.data();
        if (l == Local::HostHeap) {
            spmd::local_write(host.get(), mine);
            src = host.get();
        } else if (l == Local::DeviceHeap) {
            spmd::local_write(dev.get(), mine);
            src = dev.get();
        }
        remote.poison();
        shmem_barrier_all();
        shmem_putmem(remote.at(32), src, n, spmd::right());
        shmem_quiet();
        shmem_barrier_all();
        std::vector<unsigned char> want(n);
        spmd::fill_bytes(want.data(), n, Gen(key, round, spmd::left()));
        SPMD_REQUIRE_OK(spmd::diff_sym(remote.at(32), want.data(), n));
        SPMD_REQUIRE_OK(spmd::check_poison_sym(remote.get(), 0, 32, poison));
        SPMD_REQUIRE_OK(spmd::check_poison_sym(remote.get(), 32 + n, n + 64, poison));

        // Get: the left neighbour's copy of what it received (from this PE's left-left), into
        // the same kind of local buffer, poisoned first.
        unsigned char* dst = priv.data();
        if (l == Local::Private) std::fill(priv.begin(), priv.end(), poison);
        if (l == Local::HostHeap) dst = host.get();
        if (l == Local::DeviceHeap) dst = dev.get();
        if (l != Local::Private) spmd::local_fill(dst, poison, n);
        shmem_getmem(dst, remote.at(32), n, spmd::left());
        std::vector<unsigned char> got = l == Local::Private ? priv : spmd::local_read(dst, n);
        std::vector<unsigned char> want_back(n);
        spmd::fill_bytes(want_back.data(), n, Gen(key, round, spmd::left(2)));
        SPMD_REQUIRE_OK(spmd::diff_bytes(got.data(), want_back.data(), n));
        shmem_barrier_all();
    }
}

TEST_CASE("several threads per PE: puts and atomics on other PEs' device heaps at once") {
    constexpr int kThreads = 3;
    constexpr int kAdds = 200;
    const std::size_t piece = spmd::shared_range(1000, 70000);
    const std::uint64_t key = spmd::shared_key();
    const int n = spmd::npes();
    spmd::SymArray<std::uint64_t> counters(Space::Device, 2);
    spmd::SymArray<unsigned char> area(Space::Device, piece * kThreads);
    counters.store(0, 0);
    counters.store(1, 0);
    area.poison();
    shmem_barrier_all();
    std::vector<std::vector<std::uint64_t>> tickets(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            // Each thread's slice of the right neighbour's area, then adds on every PE's counter.
            std::vector<unsigned char> data(piece);
            spmd::fill_bytes(data.data(), piece, Gen(key, spmd::me(), t));
            shmem_putmem(area.at(piece * static_cast<std::size_t>(t)), data.data(), piece, spmd::right());
            for (int i = 0; i < kAdds; ++i) {
                const int pe = (spmd::me() + t + i) % n;
                shmem_uint64_atomic_add(counters.at(0), 1, pe);
                tickets[static_cast<std::size_t>(t)].push_back(shmem_uint64_atomic_fetch_inc(counters.at(1), 0));
            }
        });
    }
    for (auto& th : threads) th.join();
    shmem_quiet();
    shmem_barrier_all();
    for (int t = 0; t < kThreads; ++t) {
        std::vector<unsigned char> want(piece);
        spmd::fill_bytes(want.data(), piece, Gen(key, spmd::left(), t));
        SPMD_REQUIRE_OK(spmd::diff_sym(area.at(piece * static_cast<std::size_t>(t)), want.data(), piece));
    }
    // Every PE's counter got kThreads * kAdds adds in all (each thread spreads them round the
    // ring), and PE 0's ticket counter handed out every value once.
    CHECK(counters.load(0) == static_cast<std::uint64_t>(kThreads * kAdds));
    if (spmd::me() == 0) CHECK(counters.load(1) == static_cast<std::uint64_t>(n * kThreads * kAdds));
    std::vector<std::uint64_t> mine;
    for (auto& v : tickets) mine.insert(mine.end(), v.begin(), v.end());
    std::sort(mine.begin(), mine.end());
    CHECK(std::adjacent_find(mine.begin(), mine.end()) == mine.end());
    REQUIRE(mine.back() < static_cast<std::uint64_t>(n * kThreads * kAdds));
    shmem_barrier_all();
}

} // namespace
