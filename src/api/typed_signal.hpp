// SPDX-License-Identifier: BSL-1.0
// Definitions of the put-with-signal, strided-block and deprecated-wait templates declared in
// typed.hpp. They are built from the contiguous transfers and the AMOs of rma/rma.hpp, so every
// route (a mapped peer, a device copy, a proxy, the network) is the one those take.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace vkshmem::api {
namespace detail {

inline constexpr int kSignalSet = 0; // SHMEM_SIGNAL_SET
inline constexpr int kSignalAdd = 1; // SHMEM_SIGNAL_ADD

// The signal update of put_signal_nbi: over the network posted without waiting, on a device or
// through an owner's proxy deferred (rma::detail::defer_amo); complete by the next quiet of the
// calling context (signal.cpp).
void post_signal(std::uint64_t* sig_addr, std::uint64_t signal, int sig_op, int pe, const char* call);
// Diagnoses a sig_op that is neither and ends the job (signal.cpp). Never returns.
[[noreturn]] void bad_sig_op(int sig_op, const char* call);
// Data that went to `pe` other than by CPU stores into mapped memory: completes or orders it
// before what this PE issues next to `pe`, here the signal at sig_addr (signal.cpp).
// nbi: put_signal_nbi's, whose signal post_signal may defer behind the data by itself.
void order_before_signal(const void* data, const std::uint64_t* sig_addr, int pe, const char* call, bool nbi);

// A put with signal whose data goes over the network (signal.cpp): where the signal does too,
// one transport operation that keeps it behind the data (net::Transport::put_signal_on).
void put_signal_net(const void* dest, const void* source, std::size_t bytes, std::uint64_t* sig_addr,
                    std::uint64_t signal, int sig_op, int pe, const char* call, bool nbi);
inline bool to_network(const void* dest, int pe, const char* call) {
    return target(dest, 0, pe, call).route == Route::Network;
}

inline void check_sig_op(int sig_op, const char* call) {
    if (sig_op != kSignalSet && sig_op != kSignalAdd) [[unlikely]]
        bad_sig_op(sig_op, call);
}

// The signal update of a put with signal whose data (at `data` on `pe`) has been issued. On a
// mapped peer the update is a seq_cst store or add, so a reader that sees it with an acquire
// load also sees the data stored before it.
inline void update_signal(const void* data, std::size_t bytes, std::uint64_t* sig_addr, std::uint64_t signal,
                          int sig_op, int pe, const char* call, bool nbi = false) {
    if (bytes && target(data, 0, pe, call).route != Route::Direct) [[unlikely]]
        order_before_signal(data, sig_addr, pe, call, nbi);
    if (nbi) return post_signal(sig_addr, signal, sig_op, pe, call);
    amo(sig_addr, sig_op == kSignalAdd ? AmoOp::Add : AmoOp::Set, signal, std::uint64_t{0}, pe, call, false);
}

} // namespace detail

// ---- Put with signal ------------------------------------------------------------------
template <class T>
void put_signal(T* dest, const T* source, std::size_t nelems, std::uint64_t* sig_addr, std::uint64_t signal, int sig_op,
                int pe, const char* call) {
    detail::check_sig_op(sig_op, call);
    if (nelems && detail::to_network(dest, pe, call)) [[unlikely]]
        return detail::put_signal_net(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, call, false);
    put(dest, source, nelems, pe, call);
    // With no data (nelems 0: dest may be NULL) the signal is still delivered.
    detail::update_signal(dest, nelems * sizeof(T), sig_addr, signal, sig_op, pe, call);
}

// Over the network the data and the signal are both posted without waiting; the transport keeps
// the signal behind the data (put_signal_net).
template <class T>
void put_signal_nbi(T* dest, const T* source, std::size_t nelems, std::uint64_t* sig_addr, std::uint64_t signal,
                    int sig_op, int pe, const char* call) {
    detail::check_sig_op(sig_op, call);
    if (nelems && detail::to_network(dest, pe, call)) [[unlikely]]
        return detail::put_signal_net(dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe, call, true);
    put_nbi(dest, source, nelems, pe, call);
    detail::update_signal(dest, nelems * sizeof(T), sig_addr, signal, sig_op, pe, call, true);
}

// ---- Strided blocks -------------------------------------------------------------------
namespace detail {
// xfer(dest block, source block, elements) once per block; blocks that abut on both sides are one
// contiguous transfer.
template <class D, class S, class Xfer>
void for_each_block(D* dest, S* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t bsize, std::size_t nblocks,
                    Xfer xfer) {
    if (nblocks > 1 && dst == sst && static_cast<std::size_t>(dst) == bsize) return xfer(dest, source, bsize * nblocks);
    for (std::size_t i = 0; i < nblocks; ++i) {
        const auto k = static_cast<std::ptrdiff_t>(i);
        xfer(dest + k * dst, source + k * sst, bsize);
    }
}
} // namespace detail

template <class T>
void ibput(T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t bsize, std::size_t nblocks,
           int pe, const char* call) {
    detail::for_each_block(dest, source, dst, sst, bsize, nblocks,
                           [&](T* d, const T* s, std::size_t n) { put(d, s, n, pe, call); });
}

template <class T>
void ibget(T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t bsize, std::size_t nblocks,
           int pe, const char* call) {
    detail::for_each_block(dest, source, dst, sst, bsize, nblocks,
                           [&](T* d, const T* s, std::size_t n) { get(d, s, n, pe, call); });
}

// ---- Deprecated -------------------------------------------------------------------------
template <class T> void wait_while_equal(T* ivar, T value, const char* call) {
    wait_until(ivar, 1 /* SHMEM_CMP_NE */, value, call);
}

} // namespace vkshmem::api
