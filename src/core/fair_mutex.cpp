// SPDX-License-Identifier: BSL-1.0
// FairMutex's slow path: the futex sleep of a thread whose ticket is not yet served.
#include "core/fair_mutex.hpp"

#include "core/log.hpp"
#include "core/wait.hpp"

#include <chrono>
#include <cerrno>
#include <climits>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

namespace vkshmem {
namespace {
long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t val, const timespec* timeout) {
    return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, val, timeout, nullptr, 0);
}
} // namespace

int FairMutex::self() noexcept {
    static thread_local const int id = static_cast<int>(::syscall(SYS_gettid));
    return id;
}

void FairMutex::wake_all() noexcept { futex(&serving_, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr); }

void FairMutex::wait_for_turn(std::uint32_t mine) noexcept {
    // A hand-off between threads on other CPUs takes well under a microsecond: look a few times
    // before sleeping.
    for (int i = 0; i < 16; ++i) {
        if (serving_.load(std::memory_order_acquire) == mine) return;
        if (i < 12) cpu_relax();
        else std::this_thread::yield();
    }
    using clock = std::chrono::steady_clock;
    const bool report = log_enabled(LogLevel::Debug);
    auto since = report ? clock::now() : clock::time_point{};
    std::uint32_t seen = serving_.load(std::memory_order_relaxed);
    for (;;) {
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        const std::uint32_t s = serving_.load(std::memory_order_seq_cst);
        long r = 0;
        if (s != mine) {
            const timespec nap{0, kNapNs};
            r = futex(&serving_, FUTEX_WAIT_PRIVATE, s, &nap);
        }
        sleepers_.fetch_sub(1, std::memory_order_release);
        const std::uint32_t now = serving_.load(std::memory_order_acquire);
        if (now == mine) {
            if (report && s != mine && r != 0 && errno == ETIMEDOUT)
                VKSHMEM_DEBUG("lock: ticket {} was served while its thread slept, unwoken", mine);
            return;
        }
        if (!report) continue;
        // (A diagnostic: a lock that does not move for long, and who holds it.)
        const auto t = clock::now();
        if (now != seen) {
            seen = now;
            since = t;
        } else if (t - since > std::chrono::seconds(2)) {
            VKSHMEM_DEBUG("lock: ticket {} (thread {}) has waited 2 s more for ticket {} (drawn by thread {}, held by "
                          "thread {}), the next is {}",
                          mine, self(), now, drawn_by_[now % kDrawers].load(std::memory_order_relaxed),
                          owner_.load(std::memory_order_relaxed), next_.load(std::memory_order_relaxed));
            since = t;
        }
    }
}

} // namespace vkshmem
