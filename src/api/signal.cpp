// SPDX-License-Identifier: BSL-1.0
// Signals and per-PE completion (OpenSHMEM 1.6 §9.8.3, §9.9.4): shmem_signal_fetch,
// shmem_signal_add, shmem_signal_set, shmem_signal_wait_until, shmem_pe_quiet, and the ordering
// step of the put-with-signal routines (api/typed_signal.hpp).
//
// A signal is a symmetric uint64_t updated only by the library's atomics, so it lives in either
// heap or in static data and is reached on every route the AMOs take.
#include <shmem.h>

#include "api/guard.hpp"
#include "api/typed.hpp"
#include "core/wait.hpp"
#include "rma/am.hpp"
#include "transports/transport.hpp"
#include "vulkan/device.hpp"

#include <atomic>
#include <cstdint>

using namespace vkshmem;
using api::detail::AmoOp;

static_assert(api::detail::kSignalSet == SHMEM_SIGNAL_SET && api::detail::kSignalAdd == SHMEM_SIGNAL_ADD,
              "the templates' signal operators are shmem.h's");
static_assert(SHMEM_SIGNAL_SET != SHMEM_SIGNAL_ADD);

namespace vkshmem::api::detail {

void bad_sig_op(int sig_op, const char* call) {
    fatal(call, "signal operator {} is not SHMEM_SIGNAL_SET ({}) or SHMEM_SIGNAL_ADD ({})", sig_op, SHMEM_SIGNAL_SET,
          SHMEM_SIGNAL_ADD);
}

void order_before_signal(const void* data, const std::uint64_t* sig_addr, int pe, const char* call, bool nbi) {
    // Stores into a GPU's BAR wait in write-combining buffers until a full fence; proxied puts
    // are complete once their queue is sent (put_signal_nbi's data may be queued, rma/am.hpp),
    // and device copies once waited for (it may be in the batch of non-blocking copies).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (target(data, 0, pe, call).route != Route::Network) {
        // put_signal_nbi's signal on a device or through a proxy is deferred (post_signal), and
        // carried out only once the queued puts and copies before it are complete.
        if (nbi && rma::detail::deferred_route(target(sig_addr, sizeof(std::uint64_t), pe, call).route)) return;
        am::flush_queue();
        if (VulkanDevice* dev = rma::g_subsystems.device)
            if (auto r = dev->quiet(); !r) fatal(call, "{}", r.error().message);
        return;
    }
    // A network put may still be in flight. The transport orders its own operations to one PE
    // (fence); a signal that takes another route (a device heap through its owner's proxy) is
    // ordered only by completing the data first.
    net::Transport& net = *g_runtime->network();
    const bool same_transport = target(sig_addr, sizeof(std::uint64_t), pe, call).route == Route::Network;
    if (auto r = same_transport ? net.fence_on(rma::t_domain) : net.quiet_on(rma::t_domain); !r)
        fatal(call, "{}", r.error().message);
}

void put_signal_net(const void* dest, const void* source, std::size_t bytes, std::uint64_t* sig_addr,
                    std::uint64_t signal, int sig_op, int pe, const char* call, bool nbi) {
    const Target t = target(dest, bytes, pe, call);
    const Target s = target(sig_addr, sizeof(std::uint64_t), pe, call);
    // A signal on another route (a device heap through its owner's proxy), or a source the CPU
    // cannot read (this PE's device heap): the data, then the signal, each on its own route.
    if (s.route != Route::Network || unmapped(source)) {
        rma::detail::put_slow(t, source, bytes, pe, call, nbi);
        update_signal(dest, bytes, sig_addr, signal, sig_op, pe, call, nbi);
        return;
    }
    if (reinterpret_cast<std::uintptr_t>(sig_addr) % sizeof(std::uint64_t)) misaligned(sig_addr, 8, call);
    const net::AmoOp op = sig_op == kSignalAdd ? net::AmoOp::Add : net::AmoOp::Set;
    auto r = g_runtime->network()->put_signal_on({rma::t_domain, nbi}, pe, t.space, t.offset, source, bytes, s.space,
                                                 s.offset, op, signal);
    if (!r) fatal(call, "{}", r.error().message);
}

void post_signal(std::uint64_t* sig_addr, std::uint64_t signal, int sig_op, int pe, const char* call) {
    const Target t = target(sig_addr, sizeof(std::uint64_t), pe, call);
    const AmoOp op = sig_op == kSignalAdd ? AmoOp::Add : AmoOp::Set;
    if (t.route == Route::Direct) {
        amo(sig_addr, op, signal, std::uint64_t{0}, pe, call, false);
        return;
    }
    if (reinterpret_cast<std::uintptr_t>(sig_addr) % sizeof(std::uint64_t)) misaligned(sig_addr, 8, call);
    if (t.route == Route::Network)
        amo_nbi_net(t, op, sizeof(std::uint64_t), signal, 0, nullptr, pe, call);
    else
        rma::detail::defer_amo(t, op, sizeof(std::uint64_t), signal, 0, nullptr, pe, call);
}

} // namespace vkshmem::api::detail

extern "C" {

uint64_t shmem_signal_fetch(const uint64_t* sig_addr) noexcept {
    const char* call = "shmem_signal_fetch";
    require_runtime(call);
    return api::detail::amo(const_cast<uint64_t*>(sig_addr), AmoOp::Fetch, uint64_t{0}, uint64_t{0}, g_state.my_pe,
                            call);
}

void shmem_signal_add(uint64_t* sig_addr, uint64_t signal, int pe) noexcept {
    const char* call = "shmem_signal_add";
    require_runtime(call);
    api::detail::amo(sig_addr, AmoOp::Add, signal, uint64_t{0}, pe, call, false);
}

void shmem_signal_set(uint64_t* sig_addr, uint64_t signal, int pe) noexcept {
    const char* call = "shmem_signal_set";
    require_runtime(call);
    api::detail::amo(sig_addr, AmoOp::Set, signal, uint64_t{0}, pe, call, false);
}

uint64_t shmem_signal_wait_until(uint64_t* sig_addr, int cmp, uint64_t cmp_value) noexcept {
    const char* call = "shmem_signal_wait_until";
    require_runtime(call);
    api::detail::check_ivars(sig_addr, 1, cmp, call);
    const bool slow = api::detail::unmapped(sig_addr);
    // The value that satisfied the comparison is the one returned, not a later reread.
    uint64_t seen = 0;
    wait_for([&] { return api::detail::compare(seen = api::detail::watch(sig_addr, slow), cmp, cmp_value); }, slow);
    return seen;
}

// Completing every operation of this PE completes those to target_pes, which the specification
// allows; the PE numbers are still checked, so a wrong list fails here as it would elsewhere.
void shmem_pe_quiet(const int* target_pes, size_t npes) noexcept {
    const char* call = "shmem_pe_quiet";
    require_runtime(call);
    if (npes && !target_pes) fatal(call, "target_pes is NULL but npes is {}", npes);
    for (size_t i = 0; i < npes; ++i)
        if (static_cast<unsigned>(target_pes[i]) >= static_cast<unsigned>(g_state.n_pes))
            fatal(call, "target_pes[{}] = {} is out of range: the job has {} PEs (0..{})", i, target_pes[i],
                  g_state.n_pes, g_state.n_pes - 1);
    if (npes) shmem_quiet();
}

} // extern "C"
