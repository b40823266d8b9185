// SPDX-License-Identifier: BSL-1.0
// Waiting on memory that another PE writes: spin briefly, then yield (or nap), so that several PEs
// per core (tests run 4 PEs on 2 cores), and PEs beside other programs, still make progress.
#pragma once

#include "core/state.hpp"
#include "core/tsan.hpp"

#include <algorithm>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

namespace vkshmem {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// How many polls this thread's next wait spins before it yields. A wait that is satisfied while it
// spins (after at least one poll found it unsatisfied) saw its writer run on another core at the
// same time: spinning pays, and the next wait may spin the whole VKSHMEM_SPIN_BEFORE_YIELD. A wait
// that spins all of it in vain most likely waits for a PE that shares this core (the scheduler put
// both there, or another job holds the other cores): every further poll only delays that PE, so
// the next wait spins a quarter as long, down to kMinSpin polls (which still notice a writer that
// runs elsewhere). Measured at 2 PEs on 2 cores: a fixed 2,000-poll spin made barriers on a shared
// core cost 50-100 us each, in about one run in four, against 0.07 us on separate cores.
inline constexpr std::int64_t kMinSpin = 16;
inline thread_local std::int64_t t_spin_budget = -1;

// After the spin, a wait yields between polls. A yield that gives the core to another PE for a
// moment is cheap; one that comes back only after kLongYieldNs gave it to a thread that does not
// yield (another job's busy process): while such a thread shares the core, every yield costs its
// whole time slice (1-2 ms per hand-off, measured with 4 PEs beside two busy processes on 2 cores).
// The wait then naps (kNapNs) between polls instead, for the rest of this wait and the next
// kNapWaits waits of the thread: a napping PE leaves the core to whoever needs it and, having
// slept, is run again soon after it wakes.
// A long wait that naps tries a yield again now and then (after kProbeFirst naps, then twice as
// many after each probe that still lost the core, up to kProbeMax): once yields are cheap again it
// goes back to them. A napping PE answers a peer only when it wakes: a PE that waited in a barrier
// while its peer timed blocking 8-byte gets over UCX tcp (2 PEs on 2 cores) served each one 13 us
// later than a polling one (24 us per get against 10), for the whole of that wait, because one
// slow yield early in it had turned it into naps.
inline constexpr std::int64_t kLongYieldNs = 200'000;
inline constexpr long kNapNs = 20'000;
inline constexpr int kNapWaits = 64;
inline constexpr std::int64_t kProbeFirst = 64, kProbeMax = 4096;
inline thread_local int t_nap_waits = 0;
inline thread_local std::int64_t t_probe_every = kProbeFirst;

inline std::int64_t monotonic_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Makes this thread's timed sleeps end within 1 us of their time instead of the kernel's default
// 50 us slack, which more than tripled a 20 us nap: on this PE's waits, and so on a peer's round
// trip to it (libfabric fetch-add at 2 PEs on the test VM: 104 us with the slack, 18 us without,
// raw libfabric 17.5). Once per thread, before its first nap.
inline void precise_timers() {
    static thread_local const bool done = [] { return prctl(PR_SET_TIMERSLACK, 1000UL) == 0; }();
    (void)done;
}

inline void timer_nap(long ns) {
    precise_timers();
    timespec ts{0, ns};
    nanosleep(&ts, nullptr);
}

// A nap of `ns`: on the network transport's events while one runs (a peer's write or request
// wakes the napper at once), else a timer.
inline void nap(long ns) {
    if (g_state.net_nap) return g_state.net_nap(ns);
    timer_nap(ns);
}

// The pause between two polls of a wait whose spin is over, by the rules above: a yield while
// yields are cheap; once one loses the core for over kLongYieldNs, sleep(kNapNs) for the rest of
// this wait and the thread's next kNapWaits waits. One object per wait. (The yield is a parameter
// so that a unit test can make one lose the core for long without depending on the scheduler.)
class Pause {
public:
    template <class Sleep, class Yield> void operator()(Sleep sleep, Yield yield) {
        if (nap_ && ++naps_ < t_probe_every) return sleep(kNapNs);
        const bool probe = nap_;
        const std::int64_t t0 = monotonic_ns();
        yield();
        if (monotonic_ns() - t0 > kLongYieldNs) {
            nap_ = true;
            naps_ = 0;
            t_nap_waits = kNapWaits + 1;
            if (probe) t_probe_every = std::min(t_probe_every * 2, kProbeMax);
        } else if (probe) { // the core is free again: yields from now on
            nap_ = false;
            t_nap_waits = 0;
            t_probe_every = kProbeFirst;
        }
    }
    template <class Sleep> void operator()(Sleep sleep) { (*this)(sleep, sched_yield); }
    void operator()() { (*this)(timer_nap); }
    ~Pause() {
        if (t_nap_waits > 0) --t_nap_waits;
    }

private:
    bool nap_ = t_nap_waits > 0;
    std::int64_t naps_ = 0; // since this wait began to nap, or last probed
};

// What a wait or test that finds its condition unmet does first: the peer it waits for may be
// waiting for this PE's queued non-blocking operations (FastState::start_queued), which would
// otherwise go only at its next quiet.
inline void start_queued() {
    if (auto f = g_state.start_queued) f();
}

// Calls done() until it returns true.
template <class Pred> void wait_for(Pred done) {
    if (done()) return cross_process_acquire();
    start_queued();
    const std::int64_t cap = g_state.spin_before_yield;
    std::int64_t budget = t_spin_budget < 0 || t_spin_budget > cap ? cap : t_spin_budget;
    std::int64_t spins = 0;
    {
        Pause pause;
        do {
            // Peers' requests served here do not restart the spin: a target that spun on while
            // serving answered blocking gets about 0.3 us sooner, but over tcp at 2 PEs on 2 CPUs
            // it held the core that the initiator's progress thread needed, and the overlap of
            // 64 KiB get_nbi and put_nbi with computation fell from 0.2-0.9 to 0.0-0.3.
            if (g_state.net_progress) g_state.net_progress();
            if (spins < budget) {
                ++spins;
                cpu_relax();
                continue;
            }
            spins = budget + 1; // the spin is over
            pause(nap);
        } while (!done());
    }
    t_spin_budget = spins <= budget ? cap : std::max(std::min(kMinSpin, cap), budget / 4);
    cross_process_acquire();
}

// Calls done() until it returns true, where each call runs on a GPU: a device copy (an ivar in a
// device heap that the CPU cannot map) or a device atomic (a lock word there). Every poll is then a
// queue submission, some 20 us of the GPU's time: a few back to back, then naps that grow to
// kDevicePollGapNs. Polling without a pause, three PEs waiting on one H200 for a fourth's flag
// held back that PE's own copies and atomics for tens of seconds (spmd_nbi at 4 PEs on one GPU),
// until they stopped.
inline constexpr long kDevicePollGapNs = 100'000;
template <class Pred> void wait_for_device(Pred done) {
    long gap = 0;
    bool started = false;
    for (int polls = 0; !done();) {
        if (!started) start_queued();
        started = true;
        if (g_state.net_progress) g_state.net_progress();
        if (polls < 4) {
            ++polls;
            continue;
        }
        gap = gap == 0 ? 5'000 : std::min(2 * gap, kDevicePollGapNs);
        nap(gap);
    }
    cross_process_acquire();
}
// wait_for_device where each poll runs on a GPU, else wait_for.
template <class Pred> void wait_for(Pred done, bool on_device) {
    if (on_device) wait_for_device(done);
    else wait_for(done);
}

// The pause of a thread that serves a proxy or waits on one, once spinning is
// over. Where kernels run on the CPU (lavapipe), a shader that polls never
// yields its core, and sched_yield leaves the core to it for the rest of its
// time slice (milliseconds per hop of a proxied operation, which outlast a
// shader's bounded wait); a thread that sleeps briefly instead is run as soon
// as it wakes, ahead of the spinning shader.
inline void proxy_pause() {
    if (g_state.proxy_nap_ns > 0) {
        nap(g_state.proxy_nap_ns);
    } else {
        sched_yield();
    }
}

// wait_for for waits on a proxy: spins, then proxy_pause.
template <class Pred> void wait_for_proxy(Pred done) {
    for (int spins = 0; !done(); ++spins) {
        if (g_state.net_progress) g_state.net_progress(); // the proxy may answer over the network
        if (spins < 256) cpu_relax();
        else proxy_pause();
    }
    cross_process_acquire();
}

} // namespace vkshmem
