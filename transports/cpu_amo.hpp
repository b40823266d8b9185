// SPDX-License-Identifier: BSL-1.0
// An atomic carried out by this PE's CPU on memory it addresses: how the shm
// transport does every atomic, and how the libfabric transport serves one
// that another PE sent as a message.
#pragma once

#include "transports/transport.hpp"

#include <atomic>
#include <cstdint>

namespace vkshmem::net {

// Returns the old value (for every operation; the caller drops it where it was not asked for).
template <class T> T cpu_amo(void* p, AmoOp op, T x, T c) {
    std::atomic_ref<T> w(*static_cast<T*>(p));
    switch (op) {
    case AmoOp::Fetch: return w.load();
    case AmoOp::Set:
    case AmoOp::Swap: return w.exchange(x);
    case AmoOp::CompareSwap: w.compare_exchange_strong(c, x); return c;
    case AmoOp::Add: return w.fetch_add(x);
    case AmoOp::And: return w.fetch_and(x);
    case AmoOp::Or: return w.fetch_or(x);
    case AmoOp::Xor: return w.fetch_xor(x);
    }
    return 0;
}

// The same on a 4- or 8-byte word.
inline std::uint64_t cpu_amo(void* p, AmoOp op, unsigned width, std::uint64_t x, std::uint64_t c) {
    if (width == 4)
        return cpu_amo<std::uint32_t>(p, op, static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(c));
    return cpu_amo<std::uint64_t>(p, op, x, c);
}

} // namespace vkshmem::net
