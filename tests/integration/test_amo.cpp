// SPDX-License-Identifier: BSL-1.0
// Atomic memory operations: every routine for every type of its table (extended 14: fetch, set,
// swap; standard 12: compare_swap, fetch_inc, inc, fetch_add, add; bitwise 7: and, or, xor), the
// fetching _nbi forms completed by shmem_quiet, on the ring and on the PE itself; then contention:
// exact totals of concurrent adds, unique tickets, one compare_swap winner, bitwise folds of
// random masks, and special float/double values set and swapped bit-exactly.
#include "spmd.hpp"
#include "spmd_types.hpp"

#include <algorithm>
#include <cmath>

namespace {

using spmd::Gen;
using spmd::Space;

#define SPMD_EXT_OPS(T, N)                                                                                   \
    struct ext_##N {                                                                                         \
        using type = T;                                                                                      \
        static T fetch(const T* s, int pe) { return shmem_##N##_atomic_fetch(s, pe); }                      \
        static void set(T* d, T v, int pe) { shmem_##N##_atomic_set(d, v, pe); }                            \
        static T swap(T* d, T v, int pe) { return shmem_##N##_atomic_swap(d, v, pe); }                      \
        static void fetch_nbi(T* f, const T* s, int pe) { shmem_##N##_atomic_fetch_nbi(f, s, pe); }         \
        static void swap_nbi(T* f, T* d, T v, int pe) { shmem_##N##_atomic_swap_nbi(f, d, v, pe); }         \
    };
SPMD_AMO_EXTENDED_TYPES(SPMD_EXT_OPS)
#undef SPMD_EXT_OPS

#define SPMD_STD_OPS(T, N)                                                                                   \
    struct std_##N {                                                                                         \
        using type = T;                                                                                      \
        static T compare_swap(T* d, T c, T v, int pe) { return shmem_##N##_atomic_compare_swap(d, c, v, pe); } \
        static T fetch_inc(T* d, int pe) { return shmem_##N##_atomic_fetch_inc(d, pe); }                    \
        static void inc(T* d, int pe) { shmem_##N##_atomic_inc(d, pe); }                                     \
        static T fetch_add(T* d, T v, int pe) { return shmem_##N##_atomic_fetch_add(d, v, pe); }            \
        static void add(T* d, T v, int pe) { shmem_##N##_atomic_add(d, v, pe); }                            \
        static void compare_swap_nbi(T* f, T* d, T c, T v, int pe) {                                        \
            shmem_##N##_atomic_compare_swap_nbi(f, d, c, v, pe);                                             \
        }                                                                                                    \
        static void fetch_inc_nbi(T* f, T* d, int pe) { shmem_##N##_atomic_fetch_inc_nbi(f, d, pe); }       \
        static void fetch_add_nbi(T* f, T* d, T v, int pe) { shmem_##N##_atomic_fetch_add_nbi(f, d, v, pe); } \
        static T fetch(const T* s, int pe) { return shmem_##N##_atomic_fetch(s, pe); }                      \
    };
SPMD_AMO_STANDARD_TYPES(SPMD_STD_OPS)
#undef SPMD_STD_OPS

#define SPMD_BIT_OPS(T, N)                                                                                   \
    struct bit_##N {                                                                                         \
        using type = T;                                                                                      \
        static T fetch_and(T* d, T v, int pe) { return shmem_##N##_atomic_fetch_and(d, v, pe); }            \
        static void and_(T* d, T v, int pe) { shmem_##N##_atomic_and(d, v, pe); }                           \
        static T fetch_or(T* d, T v, int pe) { return shmem_##N##_atomic_fetch_or(d, v, pe); }              \
        static void or_(T* d, T v, int pe) { shmem_##N##_atomic_or(d, v, pe); }                             \
        static T fetch_xor(T* d, T v, int pe) { return shmem_##N##_atomic_fetch_xor(d, v, pe); }            \
        static void xor_(T* d, T v, int pe) { shmem_##N##_atomic_xor(d, v, pe); }                           \
        static void fetch_and_nbi(T* f, T* d, T v, int pe) { shmem_##N##_atomic_fetch_and_nbi(f, d, v, pe); } \
        static void fetch_or_nbi(T* f, T* d, T v, int pe) { shmem_##N##_atomic_fetch_or_nbi(f, d, v, pe); } \
        static void fetch_xor_nbi(T* f, T* d, T v, int pe) { shmem_##N##_atomic_fetch_xor_nbi(f, d, v, pe); } \
        static T fetch(const T* s, int pe) { return shmem_##N##_atomic_fetch(s, pe); }                      \
    };
SPMD_AMO_BITWISE_TYPES(SPMD_BIT_OPS)
#undef SPMD_BIT_OPS

// Values for arithmetic: signed integers stay within +-2^(bits-4), so sums of a few of them never
// overflow; unsigned integers cover the whole range (they wrap, as defined); floating values are
// exact binary fractions.
template <class T> T amo_value(Gen& g) {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        using U = std::make_unsigned_t<T>;
        constexpr unsigned bits = sizeof(T) * 8;
        const U span = U(1) << (bits - 3); // [-2^(bits-4), 2^(bits-4))
        return static_cast<T>(static_cast<T>(static_cast<U>(g.next()) % span) - static_cast<T>(span / 2));
    } else {
        return spmd::random_value<T>(g);
    }
}
template <class T> std::vector<T> amo_values(std::size_t n, Gen g) {
    std::vector<T> v(n);
    for (auto& x : v) x = amo_value<T>(g);
    return v;
}
template <class T> T plus(T a, T b) { return static_cast<T>(a + b); }

constexpr std::size_t kCells = 16;
constexpr std::size_t kSeq = 16; // operations in a sequence on one cell
constexpr std::size_t kAmoBytes = 4 * kCells * 16;

// Some fetch results land in private memory, some in symmetric memory of this PE (read back with
// local_get: it may be in the device heap).
template <class T> struct FetchSlots {
    std::vector<T> priv;
    T* sym;
    T* at(std::size_t k) { return k % 2 ? sym + k : priv.data() + k; }
    T value(std::size_t k) { return k % 2 ? spmd::local_get(sym + k) : priv[k]; }
};

template <class Ops> void amo_extended(unsigned char* raw, int shift) {
    using T = typename Ops::type;
    T* const c = reinterpret_cast<T*>(raw);
    FetchSlots<T> f{std::vector<T>(kCells), c + kCells};
    const int me = spmd::me(), to = spmd::right(shift), from = spmd::left(shift);
    const std::uint64_t key = spmd::shared_key();
    auto init = [&](int pe) { return amo_values<T>(kCells, Gen(key, pe, 0)); };
    auto ops = [&](int pe) { return amo_values<T>(kCells, Gen(key, pe, 1)); };

    {
        spmd::local_write(c, init(me));
    }
    shmem_barrier_all();
    {
        const auto peer = init(to), op = ops(me);
        INFO("shmem_*_atomic_fetch");
        REQUIRE(Ops::fetch(c + 0, to) == peer[0]);
        Ops::set(c + 1, op[1], to);
        INFO("shmem_*_atomic_swap");
        REQUIRE(Ops::swap(c + 2, op[2], to) == peer[2]);
        Ops::fetch_nbi(f.at(3), c + 3, to);
        Ops::swap_nbi(f.at(4), c + 4, op[4], to);
        for (std::size_t k = 5; k < kCells; ++k) Ops::fetch_nbi(f.at(k), c + k, to);
        shmem_quiet();
        INFO("shmem_*_atomic_fetch_nbi / swap_nbi after shmem_quiet");
        REQUIRE(f.value(3) == peer[3]);
        REQUIRE(f.value(4) == peer[4]);
        for (std::size_t k = 5; k < kCells; ++k) {
            INFO("fetch_nbi of cell " << k);
            REQUIRE(f.value(k) == peer[k]);
        }
    }
    shmem_barrier_all();
    {
        auto mine = init(me), op = ops(from);
        mine[1] = op[1];
        mine[2] = op[2];
        mine[4] = op[4];
        const auto now = spmd::local_read(c, kCells);
        for (std::size_t k = 0; k < kCells; ++k) {
            INFO("cell " << k << " after set (1), swap (2), swap_nbi (4); the others unchanged");
            REQUIRE(now[k] == mine[k]);
        }
    }
}

template <class Ops> void amo_standard(unsigned char* raw, int shift) {
    using T = typename Ops::type;
    T* const c = reinterpret_cast<T*>(raw);
    FetchSlots<T> f{std::vector<T>(kCells + kSeq), c + kCells};
    const int me = spmd::me(), to = spmd::right(shift), from = spmd::left(shift);
    const std::uint64_t key = spmd::shared_key();
    auto init = [&](int pe) { return amo_values<T>(kCells, Gen(key, pe, 0)); };
    auto ops = [&](int pe) { return amo_values<T>(kCells, Gen(key, pe, 1)); };
    auto small = [&](int pe) { // operands of the sequences: 1 .. 1000
        std::vector<T> v(kSeq);
        Gen g(key, pe, 2);
        for (auto& x : v) x = static_cast<T>(g.range(1, 1000));
        return v;
    };

    {
        spmd::local_write(c, init(me));
    }
    shmem_barrier_all();
    {
        const auto peer = init(to), op = ops(me), sm = small(me);
        INFO("compare_swap with a matching cond");
        REQUIRE(Ops::compare_swap(c + 0, peer[0], op[0], to) == peer[0]);
        INFO("compare_swap with a different cond");
        REQUIRE(Ops::compare_swap(c + 1, plus<T>(peer[1], 1), op[1], to) == peer[1]);
        INFO("fetch_inc");
        REQUIRE(Ops::fetch_inc(c + 2, to) == peer[2]);
        Ops::inc(c + 3, to);
        INFO("fetch_add");
        REQUIRE(Ops::fetch_add(c + 4, op[4], to) == peer[4]);
        Ops::add(c + 5, op[5], to);
        Ops::compare_swap_nbi(f.at(6), c + 6, peer[6], op[6], to);
        Ops::compare_swap_nbi(f.at(7), c + 7, plus<T>(peer[7], 1), op[7], to);
        Ops::fetch_inc_nbi(f.at(8), c + 8, to);
        Ops::fetch_add_nbi(f.at(9), c + 9, op[9], to);
        T sum = peer[10];
        for (std::size_t k = 0; k < kSeq; ++k) {
            INFO("fetch_add sequence, step " << k);
            REQUIRE(Ops::fetch_add(c + 10, sm[k], to) == sum);
            sum = plus<T>(sum, sm[k]);
        }
        std::vector<T> tickets(kSeq);
        for (std::size_t k = 0; k < kSeq; ++k) Ops::fetch_inc_nbi(&tickets[k], c + 11, to);
        for (std::size_t k = 0; k < kSeq; ++k) Ops::add(c + 12, sm[k], to);
        for (std::size_t k = 0; k < kSeq; ++k) Ops::inc(c + 13, to);
        shmem_quiet();
        INFO("compare_swap_nbi (match), compare_swap_nbi (no match), fetch_inc_nbi, fetch_add_nbi after quiet");
        REQUIRE(f.value(6) == peer[6]);
        REQUIRE(f.value(7) == peer[7]);
        REQUIRE(f.value(8) == peer[8]);
        REQUIRE(f.value(9) == peer[9]);
        // Unordered among themselves, the nbi tickets are exactly peer[11] .. peer[11]+15.
        std::vector<T> want(kSeq);
        for (std::size_t k = 0; k < kSeq; ++k) want[k] = plus<T>(peer[11], static_cast<T>(k));
        std::sort(tickets.begin(), tickets.end());
        std::sort(want.begin(), want.end());
        INFO("fetch_inc_nbi tickets of one cell");
        REQUIRE(tickets == want);
        INFO("atomic_fetch after quiet sees the sequences");
        REQUIRE(Ops::fetch(c + 10, to) == sum);
    }
    shmem_barrier_all();
    {
        auto want = init(me);
        const auto op = ops(from), sm = small(from);
        want[0] = op[0];
        want[2] = plus<T>(want[2], 1);
        want[3] = plus<T>(want[3], 1);
        want[4] = plus<T>(want[4], op[4]);
        want[5] = plus<T>(want[5], op[5]);
        want[6] = op[6];
        want[8] = plus<T>(want[8], 1);
        want[9] = plus<T>(want[9], op[9]);
        for (std::size_t k = 0; k < kSeq; ++k) {
            want[10] = plus<T>(want[10], sm[k]);
            want[12] = plus<T>(want[12], sm[k]);
        }
        want[11] = plus<T>(want[11], static_cast<T>(kSeq));
        want[13] = plus<T>(want[13], static_cast<T>(kSeq));
        const auto now = spmd::local_read(c, kCells);
        for (std::size_t k = 0; k < kCells; ++k) {
            INFO("cell " << k << " (0 cas, 1 cas no match, 2 fetch_inc, 3 inc, 4 fetch_add, 5 add, 6-9 nbi, "
                                 "10-13 sequences, 14-15 untouched)");
            REQUIRE(now[k] == want[k]);
        }
    }
}

template <class Ops> void amo_bitwise(unsigned char* raw, int shift) {
    using T = typename Ops::type;
    T* const c = reinterpret_cast<T*>(raw);
    FetchSlots<T> f{std::vector<T>(kCells), c + kCells};
    const int me = spmd::me(), to = spmd::right(shift), from = spmd::left(shift);
    const std::uint64_t key = spmd::shared_key();
    auto init = [&](int pe) { return spmd::make_values<T>(kCells, Gen(key, pe, 0)); };
    auto masks = [&](int pe) { return spmd::make_values<T>(kCells + kSeq, Gen(key, pe, 1)); };

    {
        spmd::local_write(c, init(me));
    }
    shmem_barrier_all();
    {
        const auto peer = init(to), m = masks(me);
        INFO("fetch_and / fetch_or / fetch_xor return the old value");
        REQUIRE(Ops::fetch_and(c + 0, m[0], to) == peer[0]);
        Ops::and_(c + 1, m[1], to);
        REQUIRE(Ops::fetch_or(c + 2, m[2], to) == peer[2]);
        Ops::or_(c + 3, m[3], to);
        REQUIRE(Ops::fetch_xor(c + 4, m[4], to) == peer[4]);
        Ops::xor_(c + 5, m[5], to);
        Ops::fetch_and_nbi(f.at(6), c + 6, m[6], to);
        Ops::fetch_or_nbi(f.at(7), c + 7, m[7], to);
        Ops::fetch_xor_nbi(f.at(8), c + 8, m[8], to);
        // A mixed sequence on one cell, each step's old value checked.
        T v = peer[9];
        for (std::size_t k = 0; k < kSeq; ++k) {
            const T mk = m[kCells + k];
            INFO("mixed sequence, step " << k);
            switch (k % 3) {
            case 0: REQUIRE(Ops::fetch_and(c + 9, static_cast<T>(mk | (mk << 1)), to) == v); v &= static_cast<T>(mk | (mk << 1)); break;
            case 1: REQUIRE(Ops::fetch_or(c + 9, static_cast<T>(mk & (mk >> 1)), to) == v); v |= static_cast<T>(mk & (mk >> 1)); break;
            case 2: REQUIRE(Ops::fetch_xor(c + 9, mk, to) == v); v ^= mk; break;
            }
        }
        shmem_quiet();
        INFO("fetching nbi forms after quiet");
        REQUIRE(f.value(6) == peer[6]);
        REQUIRE(f.value(7) == peer[7]);
        REQUIRE(f.value(8) == peer[8]);
        REQUIRE(Ops::fetch(c + 9, to) == v);
    }
    shmem_barrier_all();
    {
        auto want = init(me);
        const auto m = masks(from);
        want[0] &= m[0];
        want[1] &= m[1];
        want[2] |= m[2];
        want[3] |= m[3];
        want[4] ^= m[4];
        want[5] ^= m[5];
        want[6] &= m[6];
        want[7] |= m[7];
        want[8] ^= m[8];
        for (std::size_t k = 0; k < kSeq; ++k) {
            const T mk = m[kCells + k];
            switch (k % 3) {
            case 0: want[9] &= static_cast<T>(mk | (mk << 1)); break;
            case 1: want[9] |= static_cast<T>(mk & (mk >> 1)); break;
            case 2: want[9] ^= mk; break;
            }
        }
        const auto now = spmd::local_read(c, kCells);
        for (std::size_t k = 0; k < kCells; ++k) {
            INFO("cell " << k << " (0-1 and, 2-3 or, 4-5 xor, 6-8 nbi, 9 sequence, 10-15 untouched)");
            REQUIRE(now[k] == want[k]);
        }
    }
}

template <class F> void for_shifts(F&& f) {
    for (int shift : {1, 0}) {
        if (shift == 0 && spmd::npes() == 1) continue;
        INFO("target: PE me+" << shift);
        f(shift);
    }
}

TEST_CASE("extended AMOs (fetch, set, swap, fetch_nbi, swap_nbi), 14 types") {
    spmd::for_each_space([](Space s) {
        spmd::SymArray<unsigned char> raw(s, kAmoBytes);
        for_shifts([&](int shift) {
#define SPMD_RUN(T, N)                                                                                       \
    {                                                                                                        \
        INFO("type " #T);                                                                                    \
        amo_extended<ext_##N>(raw.get(), shift);                                                             \
    }
            SPMD_AMO_EXTENDED_TYPES(SPMD_RUN)
#undef SPMD_RUN
        });
    });
}

TEST_CASE("standard AMOs (compare_swap, fetch_inc, inc, fetch_add, add and nbi forms), 12 types") {
    spmd::for_each_space([](Space s) {
        spmd::SymArray<unsigned char> raw(s, kAmoBytes);
        for_shifts([&](int shift) {
#define SPMD_RUN(T, N)                                                                                       \
    {                                                                                                        \
        INFO("type " #T);                                                                                    \
        amo_standard<std_##N>(raw.get(), shift);                                                             \
    }
            SPMD_AMO_STANDARD_TYPES(SPMD_RUN)
#undef SPMD_RUN
        });
    });
}

TEST_CASE("bitwise AMOs (and, or, xor, fetching and nbi forms), 7 types, random masks") {
    spmd::for_each_space([](Space s) {
        spmd::SymArray<unsigned char> raw(s, kAmoBytes);
        for_shifts([&](int shift) {
#define SPMD_RUN(T, N)                                                                                       \
    {                                                                                                        \
        INFO("type " #T);                                                                                    \
        amo_bitwise<bit_##N>(raw.get(), shift);                                                              \
    }
            SPMD_AMO_BITWISE_TYPES(SPMD_RUN)
#undef SPMD_RUN
        });
    });
}

// ---- Contention ---------------------------------------------------------------------------------

// All PEs hammer counters on one PE: fetch_inc tickets form a permutation, fetch_add(me+1) returns
// distinct values, and the totals are exact.
template <class Ops> void contention_counters(Space s, int owner, std::size_t per_pe) {
    using T = typename Ops::type;
    const int n = spmd::npes(), me = spmd::me();
    const std::uint64_t key = spmd::shared_key();
    Gen g(key);
    const T init_a = static_cast<T>(g.range(0, 1000000)), init_b = static_cast<T>(g.range(0, 1000000));
    const T init_c = static_cast<T>(g.range(0, 1000000));
    spmd::SymArray<T> cnt(s, 3);
    spmd::SymArray<T> gathered(s, 2 * per_pe * n); // [pe][ticket] for counter a, then counter b
    if (me == owner) spmd::local_write(cnt.get(), std::vector<T>{init_a, init_b, init_c});
    shmem_barrier_all();
    std::vector<T> a(per_pe), b(per_pe);
    for (std::size_t i = 0; i < per_pe; ++i) {
        a[i] = Ops::fetch_inc(cnt.at(0), owner);
        b[i] = Ops::fetch_add(cnt.at(1), static_cast<T>(me + 1), owner);
        if (i % 2) Ops::inc(cnt.at(2), owner);
        else Ops::add(cnt.at(2), static_cast<T>(2), owner);
    }
    shmem_putmem(gathered.at(me * per_pe), a.data(), per_pe * sizeof(T), owner);
    shmem_putmem(gathered.at((n + me) * per_pe), b.data(), per_pe * sizeof(T), owner);
    shmem_barrier_all();
    if (me == owner) {
        const std::size_t total = per_pe * n;
        const std::vector<T> counters = cnt.load_all(), all = gathered.load_all();
        REQUIRE(counters[0] == static_cast<T>(init_a + total));
        REQUIRE(counters[1] == static_cast<T>(init_b + per_pe * (n * (n + 1) / 2)));
        REQUIRE(counters[2] == static_cast<T>(init_c + n * (per_pe / 2 + 2 * (per_pe - per_pe / 2))));
        std::vector<T> t(all.begin(), all.begin() + total);
        std::sort(t.begin(), t.end());
        for (std::size_t i = 0; i < total; ++i) {
            INFO("fetch_inc tickets must be init.." << total - 1 << "+init, each once; position " << i);
            REQUIRE(t[i] == static_cast<T>(init_a + i));
        }
        std::vector<T> u(all.begin() + total, all.begin() + 2 * total);
        std::sort(u.begin(), u.end());
        INFO("fetch_add results must be distinct");
        REQUIRE(std::adjacent_find(u.begin(), u.end()) == u.end());
        REQUIRE(u.front() == init_b);
    }
    shmem_barrier_all();
}

TEST_CASE("contention: fetch_inc/fetch_add/add/inc on one PE, exact totals and unique tickets") {
    spmd::for_each_space([](Space s) {
        {
            INFO("long, 2000 operations per PE on PE 0's counter");
            contention_counters<std_long>(s, 0, 2000);
        }
        int owner = 0;
#define SPMD_RUN(T, N)                                                                                       \
    {                                                                                                        \
        INFO("type " #T ", counters on PE " << owner);                                                       \
        contention_counters<std_##N>(s, owner, 100);                                                         \
        owner = (owner + 1) % spmd::npes();                                                                  \
    }
        SPMD_AMO_STANDARD_TYPES(SPMD_RUN)
#undef SPMD_RUN
    });
}

// Every PE tries compare_swap(cell, init, me+1) on the same cells in the same order: exactly one
// wins each cell, the losers see the winner's value, and the cell holds it.
template <class Ops> void contention_compare_swap(Space s) {
    using T = typename Ops::type;
    constexpr std::size_t kRaces = 64;
    const int n = spmd::npes(), me = spmd::me();
    const std::uint64_t key = spmd::shared_key();
    std::vector<T> init(kRaces);
    {
        Gen g(key);
        for (auto& v : init) v = static_cast<T>(g.range(0, 1000000));
    }
    spmd::SymArray<T> cells(s, kRaces);
    spmd::SymArray<T> seen(s, kRaces * n); // [pe][race]: what each PE's compare_swap returned
    for (std::size_t r = 0; r < kRaces; ++r)
        if (static_cast<int>(r % n) == me) cells.store(r, init[r]);
    shmem_barrier_all();
    std::vector<T> mine(kRaces);
    for (std::size_t r = 0; r < kRaces; ++r)
        mine[r] = Ops::compare_swap(cells.at(r), init[r], static_cast<T>(init[r] + me + 1), static_cast<int>(r % n));
    for (int j = 0; j < n; ++j) shmem_putmem(seen.at(me * kRaces), mine.data(), kRaces * sizeof(T), j);
    shmem_barrier_all();
    const std::vector<T> all_seen = seen.load_all();
    for (std::size_t r = 0; r < kRaces; ++r) {
        int winners = 0, winner = -1;
        for (int p = 0; p < n; ++p)
            if (all_seen[p * kRaces + r] == init[r]) {
                ++winners;
                winner = p;
            }
        INFO("race " << r << " on PE " << r % n);
        REQUIRE(winners == 1);
        const T won = static_cast<T>(init[r] + winner + 1);
        for (int p = 0; p < n; ++p) {
            INFO("PE " << p << " lost and must have seen the winner's value");
            if (p != winner) REQUIRE(all_seen[p * kRaces + r] == won);
        }
        REQUIRE(Ops::fetch(cells.at(r), static_cast<int>(r % n)) == won);
    }
    shmem_barrier_all();
}

TEST_CASE("contention: compare_swap races have exactly one winner") {
    spmd::for_each_space([](Space s) {
#define SPMD_RUN(T, N)                                                                                       \
    {                                                                                                        \
        INFO("type " #T);                                                                                    \
        contention_compare_swap<std_##N>(s);                                                                 \
    }
        SPMD_AMO_STANDARD_TYPES(SPMD_RUN)
#undef SPMD_RUN
    });
}

// Every PE folds its random masks into three cells of one PE with and/or/xor (plain, fetching and
// fetching-nbi forms): the results are exact whatever the interleaving.
template <class Ops> void contention_bitwise(Space s, int owner) {
    using T = typename Ops::type;
    constexpr std::size_t kMasks = 12;
    const int n = spmd::npes(), me = spmd::me();
    const std::uint64_t key = spmd::shared_key();
    const auto init = spmd::make_values<T>(3, Gen(key, 1000));
    auto masks = [&](int pe) { return spmd::make_values<T>(3 * kMasks, Gen(key, pe)); };
    spmd::SymArray<T> cells(s, 3);
    if (me == owner) spmd::local_write(cells.get(), init);
    shmem_barrier_all();
    {
        const auto m = masks(me);
        std::vector<T> fetched(3 * kMasks);
        for (std::size_t k = 0; k < kMasks; ++k) {
            // Dense masks for and (sparse ones would clear everything at once), sparse for or.
            const T am = static_cast<T>(m[k] | (m[k] << 1) | (m[k] >> 1));
            const T om = static_cast<T>(m[kMasks + k] & (m[kMasks + k] >> 1) & (m[kMasks + k] << 2));
            const T xm = m[2 * kMasks + k];
            switch (k % 3) {
            case 0:
                Ops::and_(cells.at(0), am, owner);
                Ops::or_(cells.at(1), om, owner);
                Ops::xor_(cells.at(2), xm, owner);
                break;
            case 1:
                fetched[k] = Ops::fetch_and(cells.at(0), am, owner);
                fetched[kMasks + k] = Ops::fetch_or(cells.at(1), om, owner);
                fetched[2 * kMasks + k] = Ops::fetch_xor(cells.at(2), xm, owner);
                break;
            case 2:
                Ops::fetch_and_nbi(&fetched[k], cells.at(0), am, owner);
                Ops::fetch_or_nbi(&fetched[kMasks + k], cells.at(1), om, owner);
                Ops::fetch_xor_nbi(&fetched[2 * kMasks + k], cells.at(2), xm, owner);
                break;
            }
        }
        shmem_quiet();
    }
    shmem_barrier_all();
    T want_and = init[0], want_or = init[1], want_xor = init[2];
    for (int p = 0; p < n; ++p) {
        const auto m = masks(p);
        for (std::size_t k = 0; k < kMasks; ++k) {
            want_and &= static_cast<T>(m[k] | (m[k] << 1) | (m[k] >> 1));
            want_or |= static_cast<T>(m[kMasks + k] & (m[kMasks + k] >> 1) & (m[kMasks + k] << 2));
            want_xor ^= m[2 * kMasks + k];
        }
    }
    INFO("and, or, xor folds of every PE's masks on PE " << owner);
    REQUIRE(Ops::fetch(cells.at(0), owner) == want_and);
    REQUIRE(Ops::fetch(cells.at(1), owner) == want_or);
    REQUIRE(Ops::fetch(cells.at(2), owner) == want_xor);
    shmem_barrier_all();
}

TEST_CASE("contention: bitwise folds of random masks are exact") {
    spmd::for_each_space([](Space s) {
        int owner = spmd::npes() - 1;
#define SPMD_RUN(T, N)                                                                                       \
    {                                                                                                        \
        INFO("type " #T ", cells on PE " << owner);                                                          \
        contention_bitwise<bit_##N>(s, owner);                                                               \
        owner = (owner + 1) % spmd::npes();                                                                  \
    }
        SPMD_AMO_BITWISE_TYPES(SPMD_RUN)
#undef SPMD_RUN
    });
}

// float/double fetch, set, swap (and nbi forms) keep every bit: signed zeros, infinities,
// subnormals, extremes, NaN payloads.
template <class Ops> void float_specials(Space s) {
    using T = typename Ops::type;
    using L = std::numeric_limits<T>;
    const T specials[] = {T(0), -T(0), L::infinity(), -L::infinity(), L::denorm_min(), -L::denorm_min(),
                          L::min(), L::max(), L::lowest(), L::epsilon(), T(-1.5), L::quiet_NaN(), -L::quiet_NaN()};
    constexpr std::size_t kN = sizeof(specials) / sizeof(specials[0]);
    auto bits_equal = [](T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; };
    const int to = spmd::right();
    spmd::SymArray<T> cell(s, 2);
    spmd::local_write(cell.get(), std::vector<T>{T(7), T(7)});
    shmem_barrier_all();
    T prev = T(7);
    for (std::size_t i = 0; i < kN; ++i) {
        INFO("special value #" << i << " (" << specials[i] << ")");
        Ops::set(cell.at(0), specials[i], to);
        T got = Ops::fetch(cell.at(0), to);
        REQUIRE(bits_equal(got, specials[i]));
        got = Ops::swap(cell.at(1), specials[i], to);
        REQUIRE(bits_equal(got, prev));
        T f1{}, f2{};
        Ops::fetch_nbi(&f1, cell.at(1), to);
        shmem_quiet();
        REQUIRE(bits_equal(f1, specials[i]));
        Ops::swap_nbi(&f2, cell.at(1), specials[i], to);
        shmem_quiet();
        REQUIRE(bits_equal(f2, specials[i]));
        prev = specials[i];
    }
    shmem_barrier_all();
    INFO("the last value swapped in by the left neighbour");
    REQUIRE(bits_equal(cell.load(1), specials[kN - 1]));
    shmem_barrier_all();
}

TEST_CASE("float/double fetch/set/swap keep special values bit-exact") {
    spmd::for_each_space([](Space s) {
        {
            INFO("float");
            float_specials<ext_float>(s);
        }
        {
            INFO("double");
            float_specials<ext_double>(s);
        }
    });
}

// A non-fetching AMO may return before it executes (over the network it does), yet the same
// PE's next fetching AMO or get of that word, with no quiet between, must read its result: on the
// default context and on a private one, to every PE in turn, one word each, random operands.
template <class Ctx> void amo_then_read(Ctx&& ctx_of, spmd::SymArray<std::uint64_t>& cells) {
    using T = std::uint64_t;
    const int n = spmd::npes(), me = spmd::me();
    Gen g(spmd::shared_key(), static_cast<std::uint64_t>(me));
    for (int round = 0; round < 40; ++round) {
        const int to = (me + 1 + round) % n;
        T* const w = cells.at(static_cast<std::size_t>(me)); // my word on every PE
        const shmem_ctx_t ctx = ctx_of(round);
        T want = static_cast<T>(g.next());
        shmem_ctx_uint64_atomic_set(ctx, w, want, to);
        REQUIRE(shmem_ctx_uint64_atomic_fetch(ctx, w, to) == want);
        for (int k = 0; k < 6; ++k) {
            const T v = static_cast<T>(g.next());
            switch ((round + k) % 5) {
            case 0: shmem_ctx_uint64_atomic_add(ctx, w, v, to), want += v; break;
            case 1: shmem_ctx_uint64_atomic_inc(ctx, w, to), want += 1; break;
            case 2: shmem_ctx_uint64_atomic_and(ctx, w, v | (v >> 7), to), want &= v | (v >> 7); break;
            case 3: shmem_ctx_uint64_atomic_or(ctx, w, v & (v >> 5), to), want |= v & (v >> 5); break;
            default: shmem_ctx_uint64_atomic_xor(ctx, w, v, to), want ^= v; break;
            }
            INFO("round " << round << ", operation " << k << " to PE " << to);
            if (k % 2) {
                T got = 0;
                shmem_ctx_getmem(ctx, &got, w, sizeof got, to);
                REQUIRE(got == want);
            } else {
                REQUIRE(shmem_ctx_uint64_atomic_fetch(ctx, w, to) == want);
            }
        }
        // A burst of adds with no read between, then one read.
        for (int k = 0; k < 64; ++k) shmem_ctx_uint64_atomic_add(ctx, w, static_cast<T>(k), to);
        want += 64 * 63 / 2;
        REQUIRE(shmem_ctx_uint64_atomic_fetch(ctx, w, to) == want);
    }
    shmem_barrier_all();
}

TEST_CASE("a blocking non-fetching AMO is seen by the next fetch or get of its PE, without a quiet") {
    shmem_ctx_t mine = SHMEM_CTX_INVALID;
    const bool has_ctx = shmem_ctx_create(SHMEM_CTX_PRIVATE, &mine) == 0;
    spmd::for_each_space([&](Space s) {
        spmd::SymArray<std::uint64_t> cells(s, static_cast<std::size_t>(spmd::npes()));
        shmem_barrier_all();
        amo_then_read(
            [&](int round) { return has_ctx && round % 2 ? mine : SHMEM_CTX_DEFAULT; }, cells);
    });
    if (has_ctx) shmem_ctx_destroy(mine);
}

} // namespace
