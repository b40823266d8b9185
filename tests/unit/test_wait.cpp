// SPDX-License-Identifier: BSL-1.0
// The spin budget of wait_for (core/wait.hpp): a wait satisfied while it spins restores the whole
// budget; a wait that spins all of it in vain (its writer shares the core) leaves a quarter for
// the next, down to kMinSpin; a budget of 0 (more PEs than CPUs) never spins. And its naps: a
// yield that loses the core to a thread that never yields makes the next waits nap.
#include "core/wait.hpp"

#include <catch2/catch.hpp>

using namespace vkshmem;

namespace {
// A wait whose condition holds from the given poll on (poll 0: at once).
std::int64_t polls_needed(std::int64_t from) {
    std::int64_t polls = 0;
    wait_for([&] { return polls++ >= from; });
    return polls;
}
struct SpinCap {
    std::int64_t saved = g_state.spin_before_yield;
    explicit SpinCap(std::int64_t cap) {
        g_state.spin_before_yield = cap;
        t_spin_budget = -1;
    }
    ~SpinCap() {
        g_state.spin_before_yield = saved;
        t_spin_budget = -1;
    }
};
} // namespace

TEST_CASE("wait_for: waits that spin in vain shrink the spin, one that ends while spinning restores it") {
    SpinCap cap(2000);
    polls_needed(0); // satisfied at once: no change
    CHECK(t_spin_budget == -1);
    polls_needed(10); // ends while spinning
    CHECK(t_spin_budget == 2000);
    polls_needed(2100); // spins all 2000 in vain, then yields
    CHECK(t_spin_budget == 500);
    polls_needed(600);
    CHECK(t_spin_budget == 125);
    for (int i = 0; i < 4; ++i) polls_needed(1000);
    CHECK(t_spin_budget == kMinSpin);
    polls_needed(1000);
    CHECK(t_spin_budget == kMinSpin);
    polls_needed(5); // the writer runs elsewhere again
    CHECK(t_spin_budget == 2000);
}

TEST_CASE("wait_for: a budget of 0 never spins") {
    SpinCap cap(0);
    polls_needed(3);
    CHECK(t_spin_budget == 0);
    polls_needed(1);
    CHECK(t_spin_budget == 0);
}

// A yield that comes back only after kLongYieldNs (it lost the core to a thread that does not
// yield) makes the wait nap for the rest of it and for kNapWaits more waits; the count goes down
// one per wait. The slow yield is simulated: a real one depends on the scheduler and on whatever
// else the machine runs (on a loaded machine the busy thread may be done before the wait starts).
TEST_CASE("wait_for: a yield that loses the core for long turns the waits into naps") {
    SpinCap cap(16);
    t_nap_waits = 0;
    t_probe_every = kProbeFirst;
    int yields = 0, naps = 0;
    const auto count_nap = [&](long) { ++naps; };
    const auto slow_yield = [&] {
        ++yields;
        const std::int64_t t0 = monotonic_ns();
        while (monotonic_ns() - t0 <= kLongYieldNs) {
        }
    };
    {
        Pause pause;
        pause(count_nap, slow_yield); // the first pause yields, and slowly
        CHECK(yields == 1);
        CHECK(naps == 0);
        for (std::int64_t i = 1; i < kProbeFirst; ++i) pause(count_nap, slow_yield);
        CHECK(yields == 1); // naps until the probe
        CHECK(naps == kProbeFirst - 1);
        pause(count_nap, slow_yield); // the probe: still slow, so probe half as often
        CHECK(yields == 2);
        CHECK(t_probe_every == 2 * kProbeFirst);
    }
    CHECK(t_nap_waits == kNapWaits);
    t_probe_every = kProbeFirst;
    polls_needed(20); // a wait that naps (the count goes down by one)
    CHECK(t_nap_waits == kNapWaits - 1);
    t_nap_waits = 0;
}

// A wait that naps while nothing holds its core goes back to yields at its next probe: its
// naps end. (A probe can lose the core to another program on a loaded machine; the wait lasts
// through several probes, of which one that finds the core free is enough.)
TEST_CASE("wait_for: a long wait that naps goes back to yields once a yield is cheap again") {
    SpinCap cap(16);
    t_nap_waits = kNapWaits; // as after a slow yield
    t_probe_every = kProbeFirst;
    polls_needed(20000); // kProbeFirst naps, then probes (at most 9 of them in this many polls)
    CHECK(t_nap_waits == 0);
    CHECK(t_probe_every == kProbeFirst);
    t_nap_waits = 0;
}
