// The spin budget of wait_for (core/wait.hpp): a wait satisfied while it spins restores the whole
// budget; a wait that spins all of it in vain (its writer shares the core) leaves a quarter for
// the next, down to kMinSpin; a budget of 0 (more PEs than CPUs) never spins.
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
