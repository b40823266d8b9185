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
        for (std::uint32_t s = serving_.load(std::memory_order_acquire); s != mine;
             s = serving_.load(std::memory_order_acquire))
            serving_.wait(s, std::memory_order_acquire); // spins briefly, then sleeps on the futex
    }
    bool try_lock() noexcept {
        std::uint32_t s = serving_.load(std::memory_order_acquire);
        // Free exactly when nobody holds a ticket beyond the one served: take that one.
        return next_.compare_exchange_strong(s, s + 1, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void unlock() noexcept {
        serving_.fetch_add(1, std::memory_order_release);
        serving_.notify_all(); // a system call only while someone sleeps on it
    }

    // How many threads wait for it (a snapshot; tests).
    std::uint32_t waiting() const noexcept {
        const std::uint32_t n = next_.load(std::memory_order_acquire) - serving_.load(std::memory_order_acquire);
        return n > 0 ? n - 1 : 0;
    }

private:
    std::atomic<std::uint32_t> next_{0}, serving_{0};
};

} // namespace vkshmem
