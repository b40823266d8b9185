// Waiting on memory that another PE writes: spin briefly, then yield, so that
// several PEs per core (tests run 4 PEs on 2 cores) still make progress.
#pragma once

#include "core/state.hpp"

#include <sched.h>
#include <time.h>

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
        if (g_state.net_progress) g_state.net_progress();
        if (spins < g_state.spin_before_yield) {
            ++spins;
            cpu_relax();
        } else {
            sched_yield();
        }
    }
}

// The pause of a thread that serves a proxy or waits on one, once spinning is
// over. Where kernels run on the CPU (lavapipe), a shader that polls never
// yields its core, and sched_yield leaves the core to it for the rest of its
// time slice (milliseconds per hop of a proxied operation, which outlast a
// shader's bounded wait); a thread that sleeps briefly instead is run as soon
// as it wakes, ahead of the spinning shader.
inline void proxy_pause() {
    if (g_state.proxy_nap_ns > 0) {
        timespec ts{0, g_state.proxy_nap_ns};
        nanosleep(&ts, nullptr);
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
}

} // namespace vkshmem
