// Waiting on memory that another PE writes: spin briefly, then yield, so that
// several PEs per core (tests run 4 PEs on 2 cores) still make progress.
#pragma once

#include "core/state.hpp"

#include <sched.h>

namespace vkshmem {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Calls done() until it returns true.
template <class Pred> void wait_for(Pred done) {
    std::int64_t spins = 0;
    while (!done()) {
        if (spins < g_state.spin_before_yield) {
            ++spins;
            cpu_relax();
        } else {
            sched_yield();
        }
    }
}

} // namespace vkshmem
