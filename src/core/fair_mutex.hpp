// SPDX-License-Identifier: BSL-1.0
// A mutex that hands itself over in the order it was asked for (a ticket lock whose waiters sleep
// on the ticket being served).
//
// Why not std::mutex: it lets the thread that unlocks take it straight back. A thread that holds
// the lock for most of a loop (an application thread polling a lock word in its own device heap:
// each poll is a device atomic of tens of microseconds under the lock, then a few nanoseconds
// without it) kept the same process's proxy thread out for seconds at a time on an H100 host, and
// with it every active message the proxy serves: PEs on the other GPU, queued behind their own
// atomics, waited for 10 s and more per lock hand-off.
//
// Waiters sleep on a futex of their own accounting (sleepers_), with a timeout, rather than in
// std::atomic::wait: a waiter that is not woken looks again within kNapNs, and one that waits
// long says so, and for whom, with debug logging on (fair_mutex.cpp).
#pragma once

#include <atomic>
#include <cstdint>

namespace vkshmem {

class FairMutex {
public:
    FairMutex() = default;
    FairMutex(const FairMutex&) = delete;
    FairMutex& operator=(const FairMutex&) = delete;

    void lock() noexcept {
        const std::uint32_t mine = next_.fetch_add(1, std::memory_order_relaxed);
        const int me = self();
        drawn_by_[mine % kDrawers].store(me, std::memory_order_relaxed);
        if (serving_.load(std::memory_order_acquire) != mine) wait_for_turn(mine);
        owner_.store(me, std::memory_order_relaxed);
    }
    bool try_lock() noexcept {
        std::uint32_t s = serving_.load(std::memory_order_acquire);
        // Free exactly when nobody holds a ticket beyond the one served: take that one.
        if (!next_.compare_exchange_strong(s, s + 1, std::memory_order_acquire, std::memory_order_relaxed))
            return false;
        owner_.store(self(), std::memory_order_relaxed);
        return true;
    }
    void unlock() noexcept {
        owner_.store(0, std::memory_order_relaxed);
        // seq_cst, with the load of sleepers_ after it: a waiter counts itself in, then reads
        // serving_ (both seq_cst), so either it sees this ticket or this sees it and wakes it.
        serving_.fetch_add(1, std::memory_order_seq_cst);
        if (sleepers_.load(std::memory_order_seq_cst) != 0) wake_all();
    }

    // How many threads wait for it (a snapshot; tests).
    std::uint32_t waiting() const noexcept {
        const std::uint32_t n = next_.load(std::memory_order_acquire) - serving_.load(std::memory_order_acquire);
        return n > 0 ? n - 1 : 0;
    }

private:
    static constexpr long kNapNs = 100'000'000; // a waiter's futex sleep at most
    // This thread's kernel id, read once per thread.
    static int self() noexcept;
    void wait_for_turn(std::uint32_t mine) noexcept;
    void wake_all() noexcept;

    std::atomic<std::uint32_t> next_{0}, serving_{0};
    std::atomic<std::uint32_t> sleepers_{0}; // threads in (or about to enter) the futex sleep
    std::atomic<int> owner_{0};              // the holder's thread id, for the long-wait report
    static constexpr std::uint32_t kDrawers = 8;
    std::atomic<int> drawn_by_[kDrawers] = {}; // who drew the last tickets (the same report)
};

} // namespace vkshmem
