// SPDX-License-Identifier: BSL-1.0
// The network transport interface (DESIGN §4): what the core asks of UCX or
// libfabric to reach PEs whose memory it cannot map. A transport sees bytes,
// widths and operation codes, never the C API: offsets into a PE's segments
// (the host heap, the device heap, the program's static data), which each PE
// registers and whose keys the transport exchanges itself at connect().
//
// Completion: put() returns once the source may be reused, get() and amo()
// once their results are here; quiet() returns once every put and AMO this
// PE issued is complete at its target, fence() orders those before later
// ones to the same PE. Every operation may be called from any thread.
//
// Domains and non-blocking forms (the *_on calls): a Domain is a context's own
// resources (shmem_ctx_create), opened by open_domain(); operations posted on
// it are completed by quiet_on(it) and ordered by fence_on(it) only, and
// threads on different domains do not wait for each other. Null is the
// PE's default domain, the one put() and quiet() use. A non-blocking post
// (Post::nbi) returns once the operation is issued: a put's source must then
// stay unchanged, a get's destination and an AMO's fetch buffer are filled,
// until quiet_on() of its domain returns (the OpenSHMEM rules for _nbi). The
// defaults here complete every operation before returning, on the default
// domain (the shm transport).
#pragma once

#include "core/config.hpp" // OfiAtomics, NbiDefer
#include "core/result.hpp"
#include "core/wait.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vkshmem {

class Bootstrap;

namespace net {

// The operation codes of api::detail::AmoOp, in the same order.
enum class AmoOp : std::uint8_t { Fetch, Set, Swap, CompareSwap, Add, And, Or, Xor };

struct Caps {
    unsigned amo_widths = 0; // bit w set: AMOs of w bytes (4, 8) on every operation
};

// Whether amo() returns the old value: the fetching operations always, the others when asked.
inline bool returns_old(AmoOp op, bool fetch) {
    return fetch || op == AmoOp::Fetch || op == AmoOp::Swap || op == AmoOp::CompareSwap;
}

// A context's own completion domain (a UCX worker, libfabric completion counts).
class Domain {
public:
    virtual ~Domain() = default;
};

// How an operation is posted: on which domain (null: the default), whether it may return
// before it completes, and whether a non-blocking one must leave at once rather than wait in a
// batch for others to the same PE (a blocking non-fetching AMO, which the specification lets
// return before it executes, but which a peer may be waiting for while its caller computes).
struct Post {
    Domain* domain = nullptr;
    bool nbi = false;
    bool prompt = false;
};

class Transport {
public:
    virtual ~Transport() = default;
    virtual const char* name() const = 0;
    virtual const Caps& caps() const = 0;

    // Before connect(): offers [addr, addr + size) as segment `space` of this
    // PE (a space with size 0 or null address is not offered). The transport
    // registers what it can; the error says why not.
    virtual Result<void> register_segment(int space, void* addr, std::size_t size) = 0;
    // Collective over every PE: exchanges addresses and keys, and opens a
    // connection to each PE in `peers` (a vector of n_pes flags).
    virtual Result<void> connect(Bootstrap& boot, const std::vector<bool>& peers) = 0;
    // Whether `pe`'s segment `space` was registered and is reachable.
    virtual bool reach(int pe, int space) const = 0;

    virtual Result<void> put(int pe, int space, std::uint64_t offset, const void* src, std::size_t n) = 0;
    virtual Result<void> get(int pe, int space, std::uint64_t offset, void* dst, std::size_t n) = 0;
    // A native AMO (width in caps().amo_widths); returns the old value for
    // fetching operations (Fetch, Swap, CompareSwap, and any when fetch is set).
    virtual Result<std::uint64_t> amo(int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                                      std::uint64_t operand, std::uint64_t cond, bool fetch) = 0;
    virtual Result<void> fence() = 0;
    virtual Result<void> quiet() = 0;

    // The same operations posted as `how` says. amo_on's old value goes to `fetch` (`width`
    // bytes; null: not fetching): before it returns, or for a non-blocking post by quiet_on.
    virtual Result<void> put_on(const Post& how, int pe, int space, std::uint64_t offset, const void* src,
                                std::size_t n) {
        (void)how;
        return put(pe, space, offset, src, n);
    }
    virtual Result<void> get_on(const Post& how, int pe, int space, std::uint64_t offset, void* dst, std::size_t n) {
        (void)how;
        return get(pe, space, offset, dst, n);
    }
    virtual Result<void> amo_on(const Post& how, int pe, int space, std::uint64_t offset, AmoOp op, unsigned width,
                                std::uint64_t operand, std::uint64_t cond, void* fetch);
    // A put with signal: n bytes to `pe`, then an 8-byte atomic `op` (Set or Add) of `signal` on
    // the word at sig_offset of segment sig_space there, which lands only once the bytes have.
    // Both posted as `how` says (the source may be reused on return in any case).
    virtual Result<void> put_signal_on(const Post& how, int pe, int space, std::uint64_t offset, const void* src,
                                       std::size_t n, int sig_space, std::uint64_t sig_offset, AmoOp op,
                                       std::uint64_t signal);
    // A new domain, or null when this transport has none to give (its operations then use the
    // default). close_domain completes what is in flight on it first.
    virtual Domain* open_domain() { return nullptr; }
    virtual void close_domain(Domain* d) { (void)d; }
    virtual Result<void> fence_on(Domain* d) {
        (void)d;
        return fence();
    }
    virtual Result<void> quiet_on(Domain* d) {
        (void)d;
        return quiet();
    }
    // Carries out what arrived, if no other thread is at it (a PE's waits
    // call this; a transport's own thread does it otherwise).
    virtual void progress() = 0;
    // A PE's wait that naps: returns when something arrived for this PE (carried out, where the
    // transport can tell) or after `ns`. Sleeping on the transport's events rather than a timer
    // lets a waiter answer a peer at once, also when other programs hold the CPUs.
    virtual void nap(long ns) {
        progress();
        timer_nap(ns);
    }
    // For vkshmem-info and debug logs: library version, devices, settings.
    virtual std::string describe() const = 0;
};

inline Result<void> Transport::amo_on(const Post& how, int pe, int space, std::uint64_t offset, AmoOp op,
                                      unsigned width, std::uint64_t operand, std::uint64_t cond, void* fetch) {
    (void)how;
    auto r = amo(pe, space, offset, op, width, operand, cond, fetch != nullptr);
    if (!r) return r.error();
    if (fetch) {
        if (width == 4) *static_cast<std::uint32_t*>(fetch) = static_cast<std::uint32_t>(*r);
        else *static_cast<std::uint64_t*>(fetch) = *r;
    }
    return {};
}

// The default: the put, a fence, the atomic (a transport that orders them otherwise overrides it).
inline Result<void> Transport::put_signal_on(const Post& how, int pe, int space, std::uint64_t offset,
                                             const void* src, std::size_t n, int sig_space, std::uint64_t sig_offset,
                                             AmoOp op, std::uint64_t signal) {
    if (auto r = put_on(how, pe, space, offset, src, n); !r) return r;
    if (auto r = fence_on(how.domain); !r) return r;
    return amo_on(how, pe, sig_space, sig_offset, op, 8, signal, 0, nullptr);
}

// The node-local transport (shm/shm.cpp): peers' symmetric spaces as this
// process maps them; for the conformance suite (the core's Direct routes do
// the same inline). Needs a running runtime.
Result<std::unique_ptr<Transport>> make_shm(int my_pe, int n_pes);
// The UCX transport (ucx/ucx.cpp); the error says why it cannot run here. Every context's
// non-blocking puts and gets of up to `batch_max` bytes to one PE travel together
// (transports/batch.hpp; 0: each on its own); `defer`: whether the default context's large ones
// are posted by the progress thread (VKSHMEM_NBI_DEFER; auto: yes).
Result<std::unique_ptr<Transport>> make_ucx(int my_pe, int n_pes, std::size_t batch_max, NbiDefer defer);
// The libfabric transport (ofi/ofi.cpp): `provider` as FI_PROVIDER names it
// (empty: libfabric's first choice); `atomics` auto, native or messages; `batch_max` as for UCX;
// `defer` as for UCX (auto: where the node has at least two CPUs per PE).
Result<std::unique_ptr<Transport>> make_ofi(int my_pe, int n_pes, const std::string& provider, OfiAtomics atomics,
                                            std::size_t batch_max, NbiDefer defer);

} // namespace net
} // namespace vkshmem
