// SPDX-License-Identifier: BSL-1.0
// Batches of small non-blocking puts and gets to one PE (VKSHMEM_NBI_BATCH): the
// records a transport gathers into one message, and how the target carries them
// out. Where every put or get is a network message of its own (tcp), one message
// for many costs one system call on each side instead of one per operation.
//
// A batch of puts is a sequence of PutRec, each followed by its bytes; a batch of
// gets a sequence of GetRec; the answer to gets a DataRec and the bytes for each.
// Records start 8-byte aligned. The target answers a batch of puts once it has
// carried them out (an acknowledgement) and a batch of gets with their bytes, so
// the sender's quiet waits for the answers of what it sent.
//
// Atomics travel as records too (kAmoRec in the space field), carried out by the target's CPU in
// their place in the batch: one without a reply (a put-with-signal's signal, after its data; a
// non-fetching AMO) among the puts, a fetching one among the gets, its old value in the answer.
// A signal then needs neither a fence (a round trip) nor a message of its own. This is coherent
// with the transport's own atomics only where those are the target CPU's as well (tcp's software
// atomics), which the transport checks before it gathers any.
#pragma once

#include "core/log.hpp"
#include "transports/cpu_amo.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace vkshmem::net::batch {

constexpr std::size_t kBytes = 8192; // a batch's records at most, and its answer's

struct PutRec {
    std::uint64_t offset;
    std::uint32_t len;
    std::uint32_t space; // with kAmoRec: an atomic, its AmoOp in bits 8-15, its operand the bytes
};
constexpr std::uint32_t kAmoRec = 0x8000'0000u;
struct GetRec {
    std::uint64_t offset;
    std::uint64_t dst; // where the answer goes, in the asking PE
    std::uint32_t len;
    std::uint32_t space; // with kAmoRec: a fetching atomic (as PutRec's), its operand and comparand after it
};
struct DataRec {
    std::uint64_t dst;
    std::uint64_t len;
};
constexpr std::size_t padded(std::size_t n) { return (n + 7) & ~std::size_t(7); }

// The largest operation a batch takes, given what the setting asks.
inline std::size_t max_op(std::size_t asked) { return std::min(asked, kBytes - sizeof(GetRec) - sizeof(DataRec)); }

// What one PE has gathered for another.
struct Gathered {
    std::vector<unsigned char> puts, gets;
    std::size_t answer = 0; // the gets' answer's size

    bool empty() const { return puts.empty() && gets.empty(); }
    // Whether a put (or get) of n bytes still fits (the gets' answer too).
    bool fits(bool is_put, std::size_t n) const {
        return is_put ? puts.size() + sizeof(PutRec) + padded(n) <= kBytes
                      : gets.size() + sizeof(GetRec) <= kBytes && answer + sizeof(DataRec) + padded(n) <= kBytes;
    }
    // Gathers a put (its bytes copied in) or a get (where its answer goes); fits() must hold.
    void add(bool is_put, int space, std::uint64_t offset, void* buf, std::size_t n) {
        if (is_put) put(space, offset, buf, n);
        else get(space, offset, buf, n);
    }
    // Whether a put of n bytes and an atomic after it still fit.
    bool fits_signal(std::size_t n) const { return puts.size() + 2 * sizeof(PutRec) + padded(n) + 8 <= kBytes; }
    // Whether an atomic still fits: a fetching one among the gets (its answer too), else among the puts.
    bool fits_amo(bool fetching) const {
        return fetching ? gets.size() + sizeof(GetRec) + 16 <= kBytes && answer + sizeof(DataRec) + 8 <= kBytes
                        : fits(true, 8);
    }
    // Gathers an atomic: one whose old value goes to `fetch` among the gets, one without (fetch
    // null) among the puts.
    void add_amo(int space, std::uint64_t offset, AmoOp op, unsigned width, std::uint64_t operand,
                 std::uint64_t cond, void* fetch) {
        if (fetch) fetch_amo(space, offset, op, width, operand, cond, fetch);
        else amo(space, offset, op, width, operand);
    }
    // Gathers a put with signal: n bytes, then an 8-byte atomic on the signal.
    void put_signal(int space, std::uint64_t offset, const void* src, std::size_t n, int sig_space,
                    std::uint64_t sig_offset, AmoOp op, std::uint64_t signal) {
        put(space, offset, src, n);
        amo(sig_space, sig_offset, op, 8, signal);
    }
    static std::uint32_t amo_code(int space, AmoOp op) {
        return kAmoRec | static_cast<std::uint32_t>(op) << 8 | static_cast<std::uint32_t>(space);
    }
    // Gathers an atomic without a reply (a signal), carried out after the puts before it.
    void amo(int space, std::uint64_t offset, AmoOp op, unsigned width, std::uint64_t operand) {
        const PutRec rec{offset, width, amo_code(space, op)};
        const std::size_t at = puts.size();
        puts.resize(at + sizeof rec + 8);
        std::memcpy(puts.data() + at, &rec, sizeof rec);
        std::memcpy(puts.data() + at + sizeof rec, &operand, width); // the low bytes (little-endian)
    }
    void put(int space, std::uint64_t offset, const void* src, std::size_t n) {
        const PutRec rec{offset, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(space)};
        const std::size_t at = puts.size();
        puts.resize(at + sizeof rec + padded(n));
        std::memcpy(puts.data() + at, &rec, sizeof rec);
        std::memcpy(puts.data() + at + sizeof rec, src, n); // the source may be reused at once
    }
    // Gathers a fetching atomic, whose old value (`width` bytes) the answer takes to `fetch`.
    void fetch_amo(int space, std::uint64_t offset, AmoOp op, unsigned width, std::uint64_t operand,
                   std::uint64_t cond, void* fetch) {
        const GetRec rec{offset, reinterpret_cast<std::uintptr_t>(fetch), width, amo_code(space, op)};
        const std::uint64_t args[2] = {operand, cond};
        const std::size_t at = gets.size();
        gets.resize(at + sizeof rec + sizeof args);
        std::memcpy(gets.data() + at, &rec, sizeof rec);
        std::memcpy(gets.data() + at + sizeof rec, args, sizeof args);
        answer += sizeof(DataRec) + 8;
    }
    void get(int space, std::uint64_t offset, void* dst, std::size_t n) {
        const GetRec rec{offset, reinterpret_cast<std::uintptr_t>(dst), static_cast<std::uint32_t>(n),
                         static_cast<std::uint32_t>(space)};
        const std::size_t at = gets.size();
        gets.resize(at + sizeof rec);
        std::memcpy(gets.data() + at, &rec, sizeof rec);
        answer += sizeof(DataRec) + padded(n);
    }
};

// The target's side: its registered segments (addresses and sizes, by space), and the
// transport's name for its warnings.
struct Segments {
    void* const* addr;
    const std::size_t* size;
    std::uint32_t count;
    const char* who;

    // This PE's bytes [offset, offset + len) of `space`, or null (with a warning) when they lie
    // outside it.
    unsigned char* at(std::uint32_t space, std::uint64_t offset, std::uint64_t len, const char* what) const {
        if (space < count && addr[space] && offset <= size[space] && len <= size[space] - offset)
            return static_cast<unsigned char*>(addr[space]) + offset;
        VKSHMEM_WARN("{}: a peer's batched {} of {} bytes at offset {:#x} of segment {} lies outside it", who, what,
                     len, offset, space);
        return nullptr;
    }
};

// Carries out an atomic record (`code`: kAmoRec, its AmoOp, its space) on this PE's word; the old
// value, or nothing when the record is bad.
inline std::optional<std::uint64_t> carry_out_amo(std::uint32_t code, std::uint64_t offset, std::uint32_t width,
                                                  std::uint64_t operand, std::uint64_t cond, const Segments& seg) {
    const std::uint32_t space = code & 0xff, op = code >> 8 & 0xff;
    unsigned char* to =
        (width == 4 || width == 8) && op <= unsigned(AmoOp::Xor) ? seg.at(space, offset, width, "atomic") : nullptr;
    if (!to || reinterpret_cast<std::uintptr_t>(to) % width) return std::nullopt;
    return cpu_amo(to, static_cast<AmoOp>(op), width, operand, cond);
}

// Carries out a batch of puts in order; false when a record was bad (the rest is skipped).
inline bool carry_out_puts(const unsigned char* p, std::size_t len, const Segments& seg) {
    for (std::size_t at = 0; at + sizeof(PutRec) <= len;) {
        PutRec rec;
        std::memcpy(&rec, p + at, sizeof rec);
        at += sizeof rec;
        if (rec.space & kAmoRec) {
            std::uint64_t operand = 0;
            if (len - at < 8) return false;
            std::memcpy(&operand, p + at, 8);
            if (!carry_out_amo(rec.space, rec.offset, rec.len, operand, 0, seg)) return false;
            at += 8;
            continue;
        }
        unsigned char* to = rec.len <= len - at ? seg.at(rec.space, rec.offset, rec.len, "put") : nullptr;
        if (!to) return false;
        std::memcpy(to, p + at, rec.len);
        at += padded(rec.len);
    }
    return true;
}

// Appends the answer to a batch of gets to `out`; false when a record was bad (its bytes read
// as zeros).
inline bool answer_gets(const unsigned char* p, std::size_t len, std::vector<unsigned char>& out, const Segments& seg) {
    bool ok = true;
    for (std::size_t at = 0; at + sizeof(GetRec) <= len;) {
        GetRec rec;
        std::memcpy(&rec, p + at, sizeof rec);
        at += sizeof rec;
        if (rec.space & kAmoRec) {
            std::uint64_t args[2] = {};
            if (len - at < sizeof args) return false;
            std::memcpy(args, p + at, sizeof args);
            at += sizeof args;
            const auto old = carry_out_amo(rec.space, rec.offset, rec.len, args[0], args[1], seg);
            ok = ok && old;
            const DataRec head{rec.dst, old ? rec.len : 0u}; // (a bad one's answer is empty)
            const std::size_t o = out.size();
            out.resize(o + sizeof head + (old ? 8 : 0));
            std::memcpy(out.data() + o, &head, sizeof head);
            if (old) std::memcpy(out.data() + o + sizeof head, &*old, 8); // the low bytes first
            continue;
        }
        const DataRec head{rec.dst, rec.len};
        const std::size_t o = out.size();
        out.resize(o + sizeof head + padded(rec.len));
        std::memcpy(out.data() + o, &head, sizeof head);
        if (const unsigned char* from = seg.at(rec.space, rec.offset, rec.len, "get"))
            std::memcpy(out.data() + o + sizeof head, from, rec.len);
        else ok = false;
    }
    return ok;
}

// The sender's side of an answer to gets: each get's bytes to where it asked for them.
inline void take_answer(const unsigned char* p, std::size_t len) {
    for (std::size_t at = 0; at + sizeof(DataRec) <= len;) {
        DataRec rec;
        std::memcpy(&rec, p + at, sizeof rec);
        at += sizeof rec;
        if (rec.len > len - at) return;
        std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(rec.dst)), p + at, rec.len);
        at += padded(rec.len);
    }
}

} // namespace vkshmem::net::batch
