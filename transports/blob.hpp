// SPDX-License-Identifier: BSL-1.0
// Connection blobs: what a transport tells every other PE at connect()
// (addresses, segment bases, keys), written and read as plain values and
// length-prefixed byte strings, and exchanged through the bootstrap.
#pragma once

#include "bootstrap/bootstrap.hpp"
#include "core/result.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace vkshmem::net {

struct Writer {
    std::vector<std::uint8_t> out;
    template <class T> void value(T v) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
        out.insert(out.end(), p, p + sizeof v);
    }
    void bytes(const void* p, std::size_t n) {
        value<std::uint64_t>(n);
        out.insert(out.end(), static_cast<const std::uint8_t*>(p), static_cast<const std::uint8_t*>(p) + n);
    }
};

// Reads what a Writer wrote; past the end values read as 0 and bytes() returns null.
struct Reader {
    const std::uint8_t* p;
    const std::uint8_t* end;
    template <class T> T value() {
        T v{};
        if (end - p >= static_cast<std::ptrdiff_t>(sizeof v)) std::memcpy(&v, p, sizeof v);
        p += sizeof v;
        return v;
    }
    const std::uint8_t* bytes(std::size_t* n) {
        *n = value<std::uint64_t>();
        const std::uint8_t* b = p;
        p += *n;
        return p <= end ? b : nullptr;
    }
};

// Every PE's blob, gathered. Blobs differ in length: the PEs agree on the
// longest, then exchange them padded to it.
class Blobs {
public:
    Result<void> gather(Bootstrap& boot, int n_pes, std::vector<std::uint8_t> mine) {
        const std::uint64_t len = mine.size();
        std::vector<std::uint64_t> lens(static_cast<std::size_t>(n_pes));
        if (auto r = boot.allgather(&len, sizeof len, lens.data()); !r) return r;
        stride_ = *std::max_element(lens.begin(), lens.end());
        mine.resize(stride_);
        all_.assign(stride_ * static_cast<std::size_t>(n_pes), 0);
        return boot.allgather(mine.data(), stride_, all_.data());
    }
    Reader of(int pe) const {
        const std::uint8_t* b = all_.data() + stride_ * static_cast<std::size_t>(pe);
        return Reader{b, b + stride_};
    }

private:
    std::vector<std::uint8_t> all_;
    std::size_t stride_ = 0;
};

} // namespace vkshmem::net
