// SPDX-License-Identifier: BSL-1.0
// FairMutex (core/fair_mutex.hpp): the thread that unlocks cannot take the lock back ahead of one
// that already waits for it, neither by lock() nor by try_lock(); waiters enter in the order
// they asked.
#include "core/fair_mutex.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <thread>
#include <vector>

using namespace vkshmem;

namespace {
void until_waiting(const FairMutex& m, std::uint32_t n) {
    while (m.waiting() != n) std::this_thread::yield();
}
} // namespace

TEST_CASE("FairMutex: an unlocking thread does not overtake a waiting one") {
    FairMutex m;
    std::vector<int> order;
    m.lock();
    std::thread waiter([&] {
        std::lock_guard lk(m);
        order.push_back(1);
    });
    until_waiting(m, 1);
    m.unlock();
    // The waiter's turn now, whether or not it has woken: nobody else gets in first.
    const bool overtook = m.try_lock();
    if (overtook) {
        order.push_back(0);
        m.unlock();
    }
    m.lock();
    order.push_back(2);
    m.unlock();
    waiter.join();
    CHECK_FALSE(overtook);
    CHECK(order == std::vector<int>{1, 2});
}

TEST_CASE("FairMutex: waiters enter in the order they asked") {
    FairMutex m;
    std::vector<int> order;
    std::vector<std::thread> threads;
    m.lock();
    for (int i = 0; i < 4; ++i) {
        threads.emplace_back([&, i] {
            std::lock_guard lk(m);
            order.push_back(i);
        });
        until_waiting(m, static_cast<std::uint32_t>(i + 1)); // thread i holds its ticket
    }
    m.unlock();
    for (auto& t : threads) t.join();
    CHECK(order == std::vector<int>{0, 1, 2, 3});
    CHECK(m.try_lock()); // free again
    m.unlock();
}

TEST_CASE("FairMutex: many threads contending lose no hand-off and no update") {
    // More threads than this machine's CPUs, so that waiters really sleep and are woken; a lost
    // wake-up costs its waiter the futex timeout, and a broken hand-off an update or a hang.
    constexpr int kThreads = 8, kRounds = 20000;
    FairMutex m;
    long counter = 0; // guarded by m alone
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < kRounds; ++i) {
                std::lock_guard lk(m);
                ++counter;
            }
        });
    for (auto& th : threads) th.join();
    CHECK(counter == long{kThreads} * kRounds);
    CHECK(m.waiting() == 0);
    CHECK(m.try_lock());
    m.unlock();
}
