// SPDX-License-Identifier: BSL-1.0
// Distributed locks (OpenSHMEM 1.6 §9.13): shmem_set_lock, shmem_test_lock, shmem_clear_lock,
// with the lock variable in the host heap, the device heap and the program's globals.
//
// Mutual exclusion is checked with a critical section that is not atomic on its own: it reads
// PE 0's counter with a get, and puts it back one higher, and appends its PE (and thread) to a
// log at PE 0. Any overlap of two critical sections loses an increment or a log entry.
#include "spmd.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

using spmd::Space;

namespace {

long g_lock_in_globals; // symmetric: the program's static data

[[maybe_unused]] const bool kThreads = [] {
    spmd::init_config().requested_thread_level = SHMEM_THREAD_MULTIPLE;
    return true;
}();

constexpr Space kSpaces[] = {Space::Host, Space::Device};

// Each of `threads` threads of every PE takes the lock `rounds` times.
void contend(long* lock, Space s, int threads, int rounds) {
    const int n = spmd::npes(), me = spmd::me();
    const std::size_t total = static_cast<std::size_t>(n * threads * rounds);
    spmd::SymArray<long> counter(s, 1), log(s, total + 1);
    counter.store(0, 0);
    log.poison();
    shmem_barrier_all();
    auto worker = [&](int t) {
        for (int r = 0; r < rounds; ++r) {
            shmem_set_lock(lock);
            const long c = shmem_long_g(counter.get(), 0); // a plain read-modify-write: only safe alone
            std::this_thread::sleep_for(std::chrono::microseconds(20)); // widens any overlap
            shmem_long_p(log.at(static_cast<std::size_t>(c)), me * 16 + t, 0);
            shmem_long_p(counter.get(), c + 1, 0);
            shmem_clear_lock(lock);
        }
    };
    std::vector<std::thread> others;
    for (int t = 1; t < threads; ++t) others.emplace_back(worker, t);
    worker(0);
    for (auto& th : others) th.join();
    shmem_barrier_all();
    if (me == 0) {
        INFO("space: " << spmd::name(s) << ", " << threads << " threads per PE");
        REQUIRE(counter.load(0) == static_cast<long>(total));
        // Every PE and thread appears exactly `rounds` times.
        std::vector<long> entries = log.load_all();
        entries.resize(total);
        std::vector<int> seen(static_cast<std::size_t>(n * 16), 0);
        for (long e : entries) {
            REQUIRE(e >= 0);
            REQUIRE(e < n * 16);
            REQUIRE(e % 16 < threads);
            ++seen[static_cast<std::size_t>(e)];
        }
        for (int pe = 0; pe < n; ++pe)
            for (int t = 0; t < threads; ++t) REQUIRE(seen[static_cast<std::size_t>(pe * 16 + t)] == rounds);
    }
    shmem_barrier_all();
}

} // namespace

TEST_CASE("set_lock / clear_lock exclude each other: one thread per PE, both heaps and globals") {
    for (Space s : kSpaces) {
        spmd::SymArray<long> lock(s, 1);
        lock.store(0, 0);
        shmem_barrier_all();
        contend(lock.get(), s, 1, 60);
    }
    g_lock_in_globals = 0;
    shmem_barrier_all();
    contend(&g_lock_in_globals, Space::Host, 1, 60);
}

TEST_CASE("set_lock / clear_lock with three threads per PE (SHMEM_THREAD_MULTIPLE)") {
    REQUIRE(spmd::init_config().provided == SHMEM_THREAD_MULTIPLE);
    spmd::SymArray<long> lock(Space::Host, 1);
    lock.store(0, 0);
    shmem_barrier_all();
    contend(lock.get(), Space::Host, 3, 25);
}

TEST_CASE("test_lock: 1 while another PE holds the lock, 0 (and held) when free") {
    const int n = spmd::npes(), me = spmd::me();
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        spmd::SymArray<long> lock(s, 1), winners(Space::Host, 1);
        lock.store(0, 0);
        winners.store(0, 0);
        shmem_barrier_all();
        // The last PE holds it; every other PE's test fails without waiting.
        if (me == n - 1) shmem_set_lock(lock.get());
        shmem_barrier_all();
        if (me != n - 1) REQUIRE(shmem_test_lock(lock.get()) == 1);
        shmem_barrier_all();
        if (me == n - 1) {
            REQUIRE(shmem_test_lock(lock.get()) == 1); // not reentrant: held is held
            shmem_clear_lock(lock.get());
        }
        shmem_barrier_all();
        // Free: everyone tries once at the same time; exactly one wins.
        const int won = shmem_test_lock(lock.get()) == 0 ? 1 : 0;
        shmem_int_atomic_add(reinterpret_cast<int*>(winners.get()), won, 0);
        shmem_barrier_all();
        if (me == 0) REQUIRE(winners.load(0) == 1);
        shmem_barrier_all();
        if (won) shmem_clear_lock(lock.get());
        shmem_barrier_all();
        // Released: it can be taken again, and a waiter gets it after a test_lock holder clears it.
        if (me == 0) {
            REQUIRE(shmem_test_lock(lock.get()) == 0);
            shmem_clear_lock(lock.get());
        }
        shmem_barrier_all();
    }
}

TEST_CASE("waiters are served in the order they asked") {
    // PE 0 holds the lock while every other PE, one after another, starts waiting for it; they
    // must then enter in that order.
    const int n = spmd::npes(), me = spmd::me();
    spmd::SymArray<long> lock(Space::Host, 1), order(Space::Host, static_cast<std::size_t>(n) + 1);
    spmd::SymArray<int> go(Space::Host, 1);
    lock.store(0, 0);
    order.store(0, 0);
    go.store(0, 0);
    shmem_barrier_all();
    if (me == 0) {
        shmem_set_lock(lock.get());
        for (int pe = 1; pe < n; ++pe) {
            shmem_int_atomic_set(go.get(), 1, pe); // let pe queue up
            // pe has its ticket once the lock word's next ticket (its high half: the layout
            // src/api/locks.cpp gives it) moved on: wait for that
            long v;
            do v = shmem_long_atomic_fetch(lock.get(), 0);
            while (static_cast<unsigned long>(v) >> 32 != static_cast<unsigned long>(pe + 1));
        }
        shmem_clear_lock(lock.get());
    } else {
        shmem_int_wait_until(go.get(), SHMEM_CMP_EQ, 1);
        shmem_set_lock(lock.get());
        const long slot = shmem_long_atomic_fetch_inc(order.at(0), 0);
        shmem_long_p(order.at(static_cast<std::size_t>(slot) + 1), me, 0);
        shmem_clear_lock(lock.get());
    }
    shmem_barrier_all();
    if (me == 0) {
        const std::vector<long> o = order.load_all();
        REQUIRE(o[0] == n - 1);
        for (int k = 1; k < n; ++k) REQUIRE(o[static_cast<std::size_t>(k)] == k);
    }
    shmem_barrier_all();
}
