// SPDX-License-Identifier: BSL-1.0
// Definitions of the templates declared in rma.hpp. The fast path (a mapped
// peer: Route::Direct) is inline; everything else is in slow_path.cpp.
#pragma once

#include "core/state.hpp"
#include "core/tsan.hpp"
#include "core/wait.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace vkshmem::rma {
namespace detail {

struct Target {
    char* ptr; // where the bytes are, when mapped (route Direct or BarWrite)
    int space;
    std::size_t offset;
    Route route;
};

// Diagnoses a bad (address, length, PE) and ends the job. Never returns.
[[noreturn]] void bad_target(const void* addr, std::size_t len, int pe, const char* call);
[[noreturn]] void misaligned(const void* addr, std::size_t align, const char* call);
[[noreturn]] void bad_cmp(int cmp, const char* call);

inline Target target(const void* addr, std::size_t len, int pe, const char* call) {
    cross_process_release(); // every operation: what this thread wrote may now be acted upon
    cross_process_acquire(); // and what other PEs did is visible to it
    if (static_cast<unsigned>(pe) >= static_cast<unsigned>(g_state.n_pes)) [[unlikely]]
        bad_target(addr, len, pe, call);
    const int s = space_of(addr);
    if (s < 0) [[unlikely]]
        bad_target(addr, len, pe, call);
    const SpaceView& v = g_state.space[s];
    const std::size_t off = reinterpret_cast<std::uintptr_t>(addr) - v.lo;
    if (g_state.checks && len > v.size - off) [[unlikely]]
        bad_target(addr, len, pe, call);
    char* base = v.peer[pe];
    return {base ? base + off : nullptr, s, off, v.route[pe]};
}

// Routes other than Direct, and local buffers in unmapped memory (slow_path.cpp). nbi: the
// transfer may still be in flight when it returns (route Network, device copies), until the next quiet.
void put_slow(const Target& t, const void* src, std::size_t n, int pe, const char* call, bool nbi = false);
void get_slow(void* dst, const Target& t, std::size_t n, int pe, const char* call, bool nbi = false);
enum class AmoOp : std::uint8_t { Fetch, Set, Swap, CompareSwap, Add, And, Or, Xor };
// fetch: the caller uses the old value (a network AMO without it is one-way).
std::uint64_t amo_slow(const Target& t, AmoOp op, std::size_t width, std::uint64_t operand, std::uint64_t cond,
                       int pe, const char* call, bool fetch);
// A fetching AMO over the network posted without waiting: the old value lands in `fetch`
// (`width` bytes of memory the CPU maps) by the next quiet of the calling context.
void amo_nbi_net(const Target& t, AmoOp op, std::size_t width, std::uint64_t operand, std::uint64_t cond, void* fetch,
                 int pe, const char* call);

// Whether an AMO on route `r` is carried out by a device or by its owner's proxy (BarWrite,
// Proxy, this PE's own unmapped heap): then a non-blocking form defers it (defer_amo).
inline bool deferred_route(Route r) { return r != Route::Direct && r != Route::Network; }
// An AMO of a non-blocking form (a fetching _nbi AMO, put_signal_nbi's signal) on a deferred_route:
// carried out after this PE's queued puts and device copies, at the next quiet or fence of any
// context, or once a thread of this PE waits or tests in vain (start_queued). `fetch` (or null)
// receives the old value: `width` bytes of memory the CPU maps, or of this PE's device heap.
void defer_amo(const Target& t, AmoOp op, std::size_t width, std::uint64_t operand, std::uint64_t cond, void* fetch,
               int pe, const char* call);

template <class T> T* local_ivar(T* ivar, const char* call) {
    if (g_state.checks && space_of(ivar) < 0) [[unlikely]]
        bad_target(ivar, sizeof(T), g_state.my_pe, call);
    return ivar;
}

template <class T> inline void store_elem(char* p, T v) {
    if constexpr (sizeof(T) <= 8 && std::is_integral_v<T>) {
        // A single aligned store, so a peer polling the word never sees half of it.
        if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0) {
            std::atomic_ref<T>(*reinterpret_cast<T*>(p)).store(v, std::memory_order_relaxed);
            return;
        }
    }
    std::memcpy(p, &v, sizeof(T));
}

// memcpy with the small sizes of latency-bound puts inlined (a call into
// libc's memcpy costs as much as the copy itself at 8 bytes).
inline void copy_bytes(void* dst, const void* src, std::size_t n) {
    switch (n) {
    case 8: __builtin_memcpy(dst, src, 8); return;
    case 4: __builtin_memcpy(dst, src, 4); return;
    case 16: __builtin_memcpy(dst, src, 16); return;
    case 1: __builtin_memcpy(dst, src, 1); return;
    case 2: __builtin_memcpy(dst, src, 2); return;
    default: std::memcpy(dst, src, n);
    }
}

template <class T> inline T load_elem(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

template <class T> std::uint64_t to_bits(T v) {
    std::uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T> T from_bits(std::uint64_t b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}

template <class T> T amo(T* dest, AmoOp op, T operand, T cond, int pe, const char* call, bool fetch = true) {
    Target t = target(dest, sizeof(T), pe, call);
    if (reinterpret_cast<std::uintptr_t>(dest) % sizeof(T)) [[unlikely]]
        misaligned(dest, sizeof(T), call);
    if (t.route != Route::Direct) [[unlikely]]
        return from_bits<T>(amo_slow(t, op, sizeof(T), to_bits(operand), to_bits(cond), pe, call, fetch));
    std::atomic_ref<T> a(*reinterpret_cast<T*>(t.ptr));
    switch (op) {
    case AmoOp::Fetch: return a.load(std::memory_order_seq_cst);
    case AmoOp::Set: a.store(operand, std::memory_order_seq_cst); return T{};
    case AmoOp::Swap: return a.exchange(operand, std::memory_order_seq_cst);
    case AmoOp::CompareSwap: a.compare_exchange_strong(cond, operand, std::memory_order_seq_cst); return cond;
    case AmoOp::Add:
        if constexpr (std::is_integral_v<T>) return a.fetch_add(operand, std::memory_order_seq_cst);
        break;
    case AmoOp::And:
        if constexpr (std::is_integral_v<T>) return a.fetch_and(operand, std::memory_order_seq_cst);
        break;
    case AmoOp::Or:
        if constexpr (std::is_integral_v<T>) return a.fetch_or(operand, std::memory_order_seq_cst);
        break;
    case AmoOp::Xor:
        if constexpr (std::is_integral_v<T>) return a.fetch_xor(operand, std::memory_order_seq_cst);
        break;
    }
    return T{};
}

template <class T> bool compare(T a, int cmp, T b) {
    switch (cmp) {
    case 0: return a == b; // SHMEM_CMP_EQ
    case 1: return a != b; // SHMEM_CMP_NE
    case 2: return a > b;  // SHMEM_CMP_GT
    case 3: return a >= b; // SHMEM_CMP_GE
    case 4: return a < b;  // SHMEM_CMP_LT
    case 5: return a <= b; // SHMEM_CMP_LE
    }
    return false;
}

// An ivar in a device heap the CPU cannot map (a GPU's DEVICE_LOCAL memory)
// is read with a device copy; everything else with an acquire load.
inline bool unmapped(const void* ivar) {
    const int s = space_of(ivar);
    return s >= 0 && g_state.space[s].route[g_state.my_pe] == Route::None;
}

template <class T> T watch(T* ivar, bool slow) {
    if (slow) [[unlikely]]
        return vkshmem::rma::g(ivar, g_state.my_pe, "shmem_wait_until");
    return std::atomic_ref<T>(*ivar).load(std::memory_order_acquire);
}

// Shared by the test_* and wait_until_* forms: how many live elements satisfy
// the comparison now (their indices into `indices` when given) and, in
// *active, how many are live. values == nullptr: every element compares
// against `value`.
template <class T>
std::size_t scan(T* ivars, std::size_t n, const int* status, int cmp, T value, const T* values, std::size_t* indices,
                 std::size_t* active) {
    const bool slow = n && unmapped(ivars);
    std::size_t hits = 0, live = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (status && status[i]) continue;
        ++live;
        if (compare(watch(&ivars[i], slow), cmp, values ? values[i] : value)) {
            if (indices) indices[hits] = i;
            ++hits;
        }
    }
    if (active) *active = live;
    return hits;
}

// Where this thread's next test_any/wait_until_any scan starts: one past the index the last one
// returned, so repeated calls with several satisfied entries return each in turn rather than
// always the first (OpenSHMEM 1.6 §9.10: a program that serves the returned entry and calls again
// must not starve the others).
inline thread_local std::size_t any_cursor = 0;

template <class T>
std::size_t first_hit(T* ivars, std::size_t n, const int* status, int cmp, T value, const T* values) {
    if (n == 0) return SIZE_MAX;
    const bool slow = unmapped(ivars);
    std::size_t i = any_cursor % n;
    for (std::size_t k = 0; k < n; ++k, i = i + 1 == n ? 0 : i + 1) {
        if (status && status[i]) continue;
        if (compare(watch(&ivars[i], slow), cmp, values ? values[i] : value)) {
            any_cursor = i + 1;
            return i;
        }
    }
    return SIZE_MAX;
}

// A test's result; one that is `unmet` starts the PE's queued work, as a wait does (wait.hpp).
template <class R> R tested(R result, R unmet) {
    if (result == unmet) start_queued();
    return result;
}

inline std::size_t live_count(std::size_t n, const int* status) {
    std::size_t live = 0;
    for (std::size_t i = 0; i < n; ++i) live += !(status && status[i]);
    return live;
}

template <class T> void check_ivars(T* ivars, std::size_t n, int cmp, const char* call) {
    if (cmp < 0 || cmp > 5) [[unlikely]]
        bad_cmp(cmp, call);
    if (n) local_ivar(ivars, call);
}

template <class T>
void wait_all(T* ivars, std::size_t n, const int* status, int cmp, T value, const T* values, const char* call) {
    check_ivars(ivars, n, cmp, call);
    wait_for(
        [&] {
            std::size_t live = 0;
            return scan(ivars, n, status, cmp, value, values, nullptr, &live) == live;
        },
        unmapped(ivars));
}

template <class T>
std::size_t wait_any(T* ivars, std::size_t n, const int* status, int cmp, T value, const T* values, const char* call) {
    check_ivars(ivars, n, cmp, call);
    if (!live_count(n, status)) return SIZE_MAX;
    std::size_t hit = SIZE_MAX;
    wait_for([&] { return (hit = first_hit(ivars, n, status, cmp, value, values)) != SIZE_MAX; }, unmapped(ivars));
    return hit;
}

template <class T>
std::size_t wait_some(T* ivars, std::size_t n, std::size_t* indices, const int* status, int cmp, T value,
                      const T* values, const char* call) {
    check_ivars(ivars, n, cmp, call);
    if (!live_count(n, status)) return 0;
    std::size_t hits = 0;
    wait_for([&] { return (hits = scan(ivars, n, status, cmp, value, values, indices, nullptr)) > 0; },
             unmapped(ivars));
    return hits;
}

} // namespace detail

// ---- RMA ----------------------------------------------------------------------------
// A transfer of zero elements is a no-op that looks at none of its arguments: programs pass NULL
// or private buffers with it (as the collectives and strided forms do below). Transfers to a
// mapped peer are CPU copies, complete when they return; elsewhere the nbi forms return once the
// transfer is issued where the route queues work (the network, device copies): the source must
// stay unchanged, and the destination is filled, by the next quiet of the calling context.
namespace detail {
template <class T> void put(T* dest, const T* source, std::size_t nelems, int pe, const char* call, bool nbi) {
    const std::size_t n = nelems * sizeof(T);
    if (n == 0) [[unlikely]]
        return;
    Target t = target(dest, n, pe, call);
    if (t.route == Route::Direct && !g_state.local_unmapped) [[likely]] {
        copy_bytes(t.ptr, source, n);
        return;
    }
    put_slow(t, source, n, pe, call, nbi);
}
template <class T> void get(T* dest, const T* source, std::size_t nelems, int pe, const char* call, bool nbi) {
    const std::size_t n = nelems * sizeof(T);
    if (n == 0) [[unlikely]]
        return;
    Target t = target(source, n, pe, call);
    if (t.route == Route::Direct && !g_state.local_unmapped) [[likely]] {
        copy_bytes(dest, t.ptr, n);
        return;
    }
    get_slow(dest, t, n, pe, call, nbi);
}
} // namespace detail
template <class T> void put(T* dest, const T* source, std::size_t nelems, int pe, const char* call) {
    detail::put(dest, source, nelems, pe, call, false);
}
template <class T> void get(T* dest, const T* source, std::size_t nelems, int pe, const char* call) {
    detail::get(dest, source, nelems, pe, call, false);
}
template <class T> void put_nbi(T* dest, const T* source, std::size_t nelems, int pe, const char* call) {
    detail::put(dest, source, nelems, pe, call, true);
}
template <class T> void get_nbi(T* dest, const T* source, std::size_t nelems, int pe, const char* call) {
    detail::get(dest, source, nelems, pe, call, true);
}

template <class T> void p(T* dest, T value, int pe, const char* call) {
    detail::Target t = detail::target(dest, sizeof(T), pe, call);
    if (t.route == Route::Direct || t.route == Route::BarWrite) [[likely]] {
        detail::store_elem(t.ptr, value);
        return;
    }
    detail::put_slow(t, &value, sizeof(T), pe, call);
}

template <class T> T g(const T* source, int pe, const char* call) {
    detail::Target t = detail::target(source, sizeof(T), pe, call);
    if (t.route == Route::Direct) [[likely]]
        return detail::load_elem<T>(t.ptr);
    T v;
    detail::get_slow(&v, t, sizeof(T), pe, call);
    return v;
}

template <class T>
void iput(T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems, int pe,
          const char* call) {
    for (std::size_t i = 0; i < nelems; ++i) {
        const auto k = static_cast<std::ptrdiff_t>(i);
        p(dest + k * dst, source[k * sst], pe, call);
    }
}

template <class T>
void iget(T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems, int pe,
          const char* call) {
    for (std::size_t i = 0; i < nelems; ++i) {
        const auto k = static_cast<std::ptrdiff_t>(i);
        dest[k * dst] = g(source + k * sst, pe, call);
    }
}

// ---- AMO ----------------------------------------------------------------------------
using detail::AmoOp;
template <class T> T atomic_fetch(const T* source, int pe, const char* call) {
    return detail::amo(const_cast<T*>(source), AmoOp::Fetch, T{}, T{}, pe, call);
}
template <class T> void atomic_set(T* dest, T value, int pe, const char* call) {
    detail::amo(dest, AmoOp::Set, value, T{}, pe, call, false);
}
template <class T> T atomic_swap(T* dest, T value, int pe, const char* call) {
    return detail::amo(dest, AmoOp::Swap, value, T{}, pe, call);
}
template <class T> T atomic_compare_swap(T* dest, T cond, T value, int pe, const char* call) {
    return detail::amo(dest, AmoOp::CompareSwap, value, cond, pe, call);
}
template <class T> T atomic_fetch_inc(T* dest, int pe, const char* call) {
    return detail::amo(dest, AmoOp::Add, T{1}, T{}, pe, call);
}
template <class T> void atomic_inc(T* dest, int pe, const char* call) {
    detail::amo(dest, AmoOp::Add, T{1}, T{}, pe, call, false);
}
template <class T> T atomic_fetch_add(T* dest, T value, int pe, const char* call) {
    return detail::amo(dest, AmoOp::Add, value, T{}, pe, call);
}
template <class T> void atomic_add(T* dest, T value, int pe, const char* call) {
    detail::amo(dest, AmoOp::Add, value, T{}, pe, call, false);
}
template <class T> T atomic_fetch_and(T* dest, T value, int pe, const char* call) {
    return detail::amo(dest, AmoOp::And, value, T{}, pe, call);
}
template <class T> void atomic_and(T* dest, T value, int pe, const char* call) {
    detail::amo(dest, AmoOp::And, value, T{}, pe, call, false);
}
template <class T> T atomic_fetch_or(T* dest, T value, int pe, const char* call) {
    return detail::amo(dest, AmoOp::Or, value, T{}, pe, call);
}
template <class T> void atomic_or(T* dest, T value, int pe, const char* call) {
    detail::amo(dest, AmoOp::Or, value, T{}, pe, call, false);
}
template <class T> T atomic_fetch_xor(T* dest, T value, int pe, const char* call) {
    return detail::amo(dest, AmoOp::Xor, value, T{}, pe, call);
}
template <class T> void atomic_xor(T* dest, T value, int pe, const char* call) {
    detail::amo(dest, AmoOp::Xor, value, T{}, pe, call, false);
}

// The fetching nbi forms. Over the network the AMO is posted and the old value lands in *fetch
// by the next quiet of the calling context; on a device or through an owner's proxy it is
// deferred to then (defer_amo); on a mapped peer it completes before returning. `fetch` may
// itself be symmetric memory the CPU cannot store to (a GPU's device heap): then the value goes
// there like a put to this PE.
namespace detail {
template <class T> void deliver(T* fetch, T value, const char* call) {
    if (unmapped(fetch)) [[unlikely]] {
        vkshmem::rma::put(fetch, &value, 1, g_state.my_pe, call);
        return;
    }
    *fetch = value;
}
template <class T> void amo_nbi(T* fetch, T* dest, AmoOp op, T operand, T cond, int pe, const char* call) {
    Target t = target(dest, sizeof(T), pe, call);
    if (t.route != Route::Direct && (t.route != Route::Network || !unmapped(fetch))) [[unlikely]] {
        if (reinterpret_cast<std::uintptr_t>(dest) % sizeof(T)) [[unlikely]]
            misaligned(dest, sizeof(T), call);
        if (t.route == Route::Network)
            amo_nbi_net(t, op, sizeof(T), to_bits(operand), to_bits(cond), fetch, pe, call);
        else
            defer_amo(t, op, sizeof(T), to_bits(operand), to_bits(cond), fetch, pe, call);
        return;
    }
    deliver(fetch, amo(dest, op, operand, cond, pe, call), call);
}
} // namespace detail
template <class T> void atomic_fetch_nbi(T* fetch, const T* source, int pe, const char* call) {
    detail::amo_nbi(fetch, const_cast<T*>(source), AmoOp::Fetch, T{}, T{}, pe, call);
}
template <class T> void atomic_swap_nbi(T* fetch, T* dest, T value, int pe, const char* call) {
    detail::amo_nbi(fetch, dest, AmoOp::Swap, value, T{}, pe, call);
}
template <class T> void atomic_compare_swap_nbi(T* fetch, T* dest, T cond, T value, int pe, const char* call) {
    detail::amo_nbi(fetch, dest, AmoOp::CompareSwap, value, cond, pe, call);
}
template <class T> void atomic_fetch_inc_nbi(T* fetch, T* dest, int pe, const char* call) {
    detail::amo_nbi(fetch, dest, AmoOp::Add, T{1}, T{}, pe, call);
}
template <class T> void atomic_fetch_add_nbi(T* fetch, T* dest, T value, int pe, const char* call) {
    detail::amo_nbi(fetch, dest, AmoOp::Add, value, T{}, pe, call);
}
template <class T> void atomic_fetch_and_nbi(T* fetch, T* dest, T value, int pe, const char* call) {
    detail::amo_nbi(fetch, dest, AmoOp::And, value, T{}, pe, call);
}
template <class T> void atomic_fetch_or_nbi(T* fetch, T* dest, T value, int pe, const char* call) {
    detail::amo_nbi(fetch, dest, AmoOp::Or, value, T{}, pe, call);
}
template <class T> void atomic_fetch_xor_nbi(T* fetch, T* dest, T value, int pe, const char* call) {
    detail::amo_nbi(fetch, dest, AmoOp::Xor, value, T{}, pe, call);
}

// ---- Point-to-point synchronization -------------------------------------------------
template <class T> void wait_until(T* ivar, int cmp, T value, const char* call) {
    detail::check_ivars(ivar, 1, cmp, call);
    const bool slow = detail::unmapped(ivar);
    wait_for([&] { return detail::compare(detail::watch(ivar, slow), cmp, value); }, slow);
}
template <class T> int test(T* ivar, int cmp, T value, const char* call) {
    detail::check_ivars(ivar, 1, cmp, call);
    return detail::tested(detail::compare(detail::watch(ivar, detail::unmapped(ivar)), cmp, value) ? 1 : 0, 0);
}
template <class T>
void wait_until_all(T* ivars, std::size_t nelems, const int* status, int cmp, T value, const char* call) {
    detail::wait_all(ivars, nelems, status, cmp, value, static_cast<const T*>(nullptr), call);
}
template <class T>
std::size_t wait_until_any(T* ivars, std::size_t nelems, const int* status, int cmp, T value, const char* call) {
    return detail::wait_any(ivars, nelems, status, cmp, value, static_cast<const T*>(nullptr), call);
}
template <class T>
std::size_t wait_until_some(T* ivars, std::size_t nelems, std::size_t* indices, const int* status, int cmp, T value,
                            const char* call) {
    return detail::wait_some(ivars, nelems, indices, status, cmp, value, static_cast<const T*>(nullptr), call);
}
template <class T>
void wait_until_all_vector(T* ivars, std::size_t nelems, const int* status, int cmp, const T* values,
                           const char* call) {
    detail::wait_all(ivars, nelems, status, cmp, T{}, values, call);
}
template <class T>
std::size_t wait_until_any_vector(T* ivars, std::size_t nelems, const int* status, int cmp, const T* values,
                                  const char* call) {
    return detail::wait_any(ivars, nelems, status, cmp, T{}, values, call);
}
template <class T>
std::size_t wait_until_some_vector(T* ivars, std::size_t nelems, std::size_t* indices, const int* status, int cmp,
                                   const T* values, const char* call) {
    return detail::wait_some(ivars, nelems, indices, status, cmp, T{}, values, call);
}
template <class T> int test_all(T* ivars, std::size_t nelems, const int* status, int cmp, T value, const char* call) {
    detail::check_ivars(ivars, nelems, cmp, call);
    std::size_t live = 0;
    return detail::tested(
        detail::scan(ivars, nelems, status, cmp, value, static_cast<const T*>(nullptr), nullptr, &live) == live ? 1 : 0,
        0);
}
template <class T>
std::size_t test_any(T* ivars, std::size_t nelems, const int* status, int cmp, T value, const char* call) {
    detail::check_ivars(ivars, nelems, cmp, call);
    return detail::tested(detail::first_hit(ivars, nelems, status, cmp, value, static_cast<const T*>(nullptr)),
                          SIZE_MAX);
}
template <class T>
std::size_t test_some(T* ivars, std::size_t nelems, std::size_t* indices, const int* status, int cmp, T value,
                      const char* call) {
    detail::check_ivars(ivars, nelems, cmp, call);
    return detail::tested(
        detail::scan(ivars, nelems, status, cmp, value, static_cast<const T*>(nullptr), indices, nullptr),
        std::size_t{0});
}
template <class T>
int test_all_vector(T* ivars, std::size_t nelems, const int* status, int cmp, const T* values, const char* call) {
    detail::check_ivars(ivars, nelems, cmp, call);
    std::size_t live = 0;
    return detail::tested(detail::scan(ivars, nelems, status, cmp, T{}, values, nullptr, &live) == live ? 1 : 0, 0);
}
template <class T>
std::size_t test_any_vector(T* ivars, std::size_t nelems, const int* status, int cmp, const T* values,
                            const char* call) {
    detail::check_ivars(ivars, nelems, cmp, call);
    return detail::tested(detail::first_hit(ivars, nelems, status, cmp, T{}, values), SIZE_MAX);
}
template <class T>
std::size_t test_some_vector(T* ivars, std::size_t nelems, std::size_t* indices, const int* status, int cmp,
                             const T* values, const char* call) {
    detail::check_ivars(ivars, nelems, cmp, call);
    return detail::tested(detail::scan(ivars, nelems, status, cmp, T{}, values, indices, nullptr), std::size_t{0});
}

} // namespace vkshmem::rma
