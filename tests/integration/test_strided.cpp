// SPDX-License-Identifier: BSL-1.0
// Strided block RMA (OpenSHMEM 1.6): ibput and ibget for all 24 standard RMA types and the sized
// forms 8/16/32/64/128, with random block sizes, block counts (0 included) and strides (equal to
// the block size included: abutting blocks), to the next PE and to this PE itself, in every
// symmetric space. Destinations are poisoned: the gaps between blocks must keep the poison.
#include "spmd.hpp"
#include "spmd_types.hpp"

#include <algorithm>

namespace {

using spmd::Gen;
using spmd::Space;

// Ops structs: the typed and sized ibput/ibget routines under one name.
#define SPMD_BLOCK_STRUCT(NAME, T, IBPUT, IBGET)                                                             \
    struct NAME {                                                                                            \
        using type = T;                                                                                      \
        static void ibput(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t b, size_t nb, int pe) {    \
            IBPUT(d, s, dst, sst, b, nb, pe);                                                                \
        }                                                                                                    \
        static void ibget(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t b, size_t nb, int pe) {    \
            IBGET(d, s, dst, sst, b, nb, pe);                                                                \
        }                                                                                                    \
    };
#define SPMD_BLOCK_OPS(T, N) SPMD_BLOCK_STRUCT(blk_##N, T, shmem_##N##_ibput, shmem_##N##_ibget)
SPMD_RMA_TYPES(SPMD_BLOCK_OPS)
#undef SPMD_BLOCK_OPS

struct Bits128 {
    std::uint64_t w[2];
};

#define SPMD_SIZED_BLOCK_OPS(BITS, T) SPMD_BLOCK_STRUCT(sized_##BITS, T, shmem_ibput##BITS, shmem_ibget##BITS)
SPMD_SIZED_BLOCK_OPS(8, std::uint8_t)
SPMD_SIZED_BLOCK_OPS(16, std::uint16_t)
SPMD_SIZED_BLOCK_OPS(32, std::uint32_t)
SPMD_SIZED_BLOCK_OPS(64, std::uint64_t)
SPMD_SIZED_BLOCK_OPS(128, Bits128)
#undef SPMD_SIZED_BLOCK_OPS
#undef SPMD_BLOCK_STRUCT

constexpr std::size_t kElems = 160; // per region, in elements
constexpr std::size_t kBufBytes = 2 * kElems * 16;

struct Blocks {
    std::size_t bsize, nblocks, doff, soff;
    std::ptrdiff_t dst, sst;
};

// A shape all PEs agree on whose destination and source both fit in kElems elements.
Blocks pick_blocks(int round) {
    Blocks b{};
    b.bsize = spmd::shared_range(1, 6);
    const bool abut = round % 3 == 0; // stride == block size: the blocks touch
    b.dst = static_cast<std::ptrdiff_t>(b.bsize + (abut ? 0 : spmd::shared_range(0, 4)));
    b.sst = static_cast<std::ptrdiff_t>(b.bsize + (abut ? 0 : spmd::shared_range(0, 4)));
    const std::size_t span = static_cast<std::size_t>(std::max(b.dst, b.sst));
    b.nblocks = round % 4 == 1 ? 0 : spmd::shared_range(1, (kElems - 8 - b.bsize) / span + 1);
    const std::size_t dlen = b.nblocks ? (b.nblocks - 1) * b.dst + b.bsize : 0;
    const std::size_t slen = b.nblocks ? (b.nblocks - 1) * b.sst + b.bsize : 0;
    b.doff = spmd::shared_range(0, kElems - dlen);
    b.soff = spmd::shared_range(0, kElems - slen);
    return b;
}

// The image of a destination region after the blocks of `src` landed in it.
template <class T> void apply(unsigned char* region, const Blocks& b, const std::vector<T>& src) {
    for (std::size_t i = 0; i < b.nblocks; ++i)
        std::memcpy(region + (b.doff + i * b.dst) * sizeof(T), &src[b.soff + i * b.sst], b.bsize * sizeof(T));
}

// Region 0 of `raw`: this PE's source data, read by the peers' ibget. Region 1: written by ibput.
template <class Ops> void blocks_round(unsigned char* raw, int shift, int round) {
    using T = typename Ops::type;
    T* const buf = reinterpret_cast<T*>(raw);
    const unsigned char poison = spmd::poison_byte();
    const int me = spmd::me(), to = spmd::right(shift), from = spmd::left(shift);
    const std::uint64_t key = spmd::shared_key();
    const Blocks put = pick_blocks(round), get = pick_blocks(round + 1);
    INFO("ibput: " << put.nblocks << " blocks of " << put.bsize << ", dst stride " << put.dst << " at " << put.doff
                   << ", src stride " << put.sst << " at " << put.soff);
    INFO("ibget: " << get.nblocks << " blocks of " << get.bsize << ", dst stride " << get.dst << " at " << get.doff
                   << ", src stride " << get.sst << " at " << get.soff);

    auto region0 = [&](int pe) { return spmd::make_values<T>(kElems, Gen(key, pe, 0)); };
    auto put_src = [&](int pe) { return spmd::make_values<T>(kElems, Gen(key, pe, 1)); };
    {
        std::vector<unsigned char> init(2 * kElems * sizeof(T), poison);
        spmd::fill_values(reinterpret_cast<T*>(init.data()), kElems, Gen(key, me, 0));
        spmd::local_store(raw, init.data(), init.size());
    }
    std::vector<unsigned char> got(kElems * sizeof(T), poison);
    shmem_barrier_all();

    const std::vector<T> ps = put_src(me);
    Ops::ibput(buf + kElems + put.doff, ps.data() + put.soff, put.dst, put.sst, put.bsize, put.nblocks, to);
    Ops::ibget(reinterpret_cast<T*>(got.data()) + get.doff, buf + get.soff, get.dst, get.sst, get.bsize, get.nblocks,
               to);
    shmem_barrier_all();

    std::vector<unsigned char> expect(2 * kElems * sizeof(T), poison);
    spmd::fill_values(reinterpret_cast<T*>(expect.data()), kElems, Gen(key, me, 0));
    apply<T>(expect.data() + kElems * sizeof(T), put, put_src(from));
    {
        INFO("what PE " << from << "'s ibput left here (and the source region, untouched)");
        SPMD_REQUIRE_OK(spmd::diff_sym(raw, expect.data(), expect.size()));
    }
    std::vector<unsigned char> expect_got(kElems * sizeof(T), poison);
    apply<T>(expect_got.data(), get, region0(to));
    {
        INFO("what ibget read from PE " << to);
        SPMD_REQUIRE_OK(spmd::diff_bytes(got.data(), expect_got.data(), got.size()));
    }
    shmem_barrier_all();
}

template <class F> void for_targets(F&& f) {
    for (int shift : {1, 0}) {
        if (shift == 0 && spmd::npes() == 1) continue;
        INFO("target: PE me+" << shift);
        f(shift);
    }
}

TEST_CASE("ibput/ibget, all 24 standard RMA types") {
    spmd::for_each_space([](Space s) {
        spmd::SymArray<unsigned char> raw(s, kBufBytes);
        for_targets([&](int shift) {
#define SPMD_RUN(T, N)                                                                                       \
    for (int round = 0; round < 3; ++round) {                                                                \
        INFO("type " #T " (shmem_" #N "_ibput/ibget), round " << round);                                     \
        blocks_round<blk_##N>(raw.get(), shift, round);                                                      \
    }
            SPMD_RMA_TYPES(SPMD_RUN)
#undef SPMD_RUN
        });
    });
}

TEST_CASE("ibput/ibget 8/16/32/64/128") {
    spmd::for_each_space([](Space s) {
        spmd::SymArray<unsigned char> raw(s, kBufBytes);
        for_targets([&](int shift) {
            for (int round = 0; round < 8; ++round) {
                INFO("round " << round);
                {
                    INFO("shmem_ibput8/ibget8");
                    blocks_round<sized_8>(raw.get(), shift, round);
                }
                {
                    INFO("shmem_ibput16/ibget16");
                    blocks_round<sized_16>(raw.get(), shift, round);
                }
                {
                    INFO("shmem_ibput32/ibget32");
                    blocks_round<sized_32>(raw.get(), shift, round);
                }
                {
                    INFO("shmem_ibput64/ibget64");
                    blocks_round<sized_64>(raw.get(), shift, round);
                }
                {
                    INFO("shmem_ibput128/ibget128");
                    blocks_round<sized_128>(raw.get(), shift, round);
                }
            }
        });
    });
}

} // namespace
