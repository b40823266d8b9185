// SPDX-License-Identifier: BSL-1.0
// Collectives on teams (OpenSHMEM 1.6 §9.9): broadcast, collect, fcollect, alltoall, alltoalls,
// the reductions and the scans, on SHMEM_TEAM_WORLD and on a strided team, in the host and the
// device heap, with fresh random data, poisoned destinations and exact expected results.
//
// The algorithms (VKSHMEM_BARRIER_ALGORITHM, VKSHMEM_BCAST_ALGORITHM, VKSHMEM_REDUCE_ALGORITHM)
// are picked by the environment; CMakeLists.txt runs this program with each.
#include "spmd.hpp"

#include <algorithm>
#include <complex>
#include <functional>
#include <type_traits>

using spmd::Gen;
using spmd::Space;

namespace {

constexpr Space kSpaces[] = {Space::Host, Space::Device};

// ---- The C routines of each type ----------------------------------------------------------
template <class T> struct Coll;
#define COLL_TYPE(T, N)                                                                                           \
    template <> struct Coll<T> {                                                                                  \
        static int broadcast(shmem_team_t t, T* d, const T* s, size_t n, int r) {                                 \
            return shmem_##N##_broadcast(t, d, s, n, r);                                                          \
        }                                                                                                         \
        static int collect(shmem_team_t t, T* d, const T* s, size_t n) { return shmem_##N##_collect(t, d, s, n); } \
        static int fcollect(shmem_team_t t, T* d, const T* s, size_t n) {                                         \
            return shmem_##N##_fcollect(t, d, s, n);                                                              \
        }                                                                                                         \
        static int alltoall(shmem_team_t t, T* d, const T* s, size_t n) {                                         \
            return shmem_##N##_alltoall(t, d, s, n);                                                              \
        }                                                                                                         \
        static int alltoalls(shmem_team_t t, T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n) {         \
            return shmem_##N##_alltoalls(t, d, s, dst, sst, n);                                                   \
        }                                                                                                         \
    };
COLL_TYPE(char, char)
COLL_TYPE(short, short)
COLL_TYPE(int, int)
COLL_TYPE(long, long)
COLL_TYPE(float, float)
COLL_TYPE(double, double)
COLL_TYPE(long double, longdouble)
COLL_TYPE(unsigned long long, ulonglong)
#undef COLL_TYPE
// unsigned char stands for the untyped (mem) routines.
template <> struct Coll<unsigned char> {
    static int broadcast(shmem_team_t t, unsigned char* d, const unsigned char* s, size_t n, int r) {
        return shmem_broadcastmem(t, d, s, n, r);
    }
    static int collect(shmem_team_t t, unsigned char* d, const unsigned char* s, size_t n) {
        return shmem_collectmem(t, d, s, n);
    }
    static int fcollect(shmem_team_t t, unsigned char* d, const unsigned char* s, size_t n) {
        return shmem_fcollectmem(t, d, s, n);
    }
    static int alltoall(shmem_team_t t, unsigned char* d, const unsigned char* s, size_t n) {
        return shmem_alltoallmem(t, d, s, n);
    }
    static int alltoalls(shmem_team_t t, unsigned char* d, const unsigned char* s, ptrdiff_t dst, ptrdiff_t sst,
                         size_t n) {
        return shmem_alltoallsmem(t, d, s, dst, sst, n);
    }
};

// ---- Teams to run on --------------------------------------------------------------------------
// WORLD, and (from 3 PEs) the team of every other PE starting at PE 1: a strided team whose
// numbering differs from the world's. f(team, its size, my index, g) runs on every PE for each
// team; on PEs outside it team is SHMEM_TEAM_INVALID and size and index are -1. Symmetric
// allocation is collective over the world, so f allocates on every PE (sizes from g, which is the
// same on every PE, and from spmd::npes()) and only the members then call the collectives.
template <class F> void on_teams(F&& f) {
    const auto base = spmd::shared_key();
    const bool split = spmd::npes() >= 3;
    shmem_team_t odd = SHMEM_TEAM_INVALID;
    if (split) REQUIRE(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, spmd::npes() / 2, nullptr, 0, &odd) == 0);
    const shmem_team_t teams[] = {SHMEM_TEAM_WORLD, odd};
    for (int c = 0; c < (split ? 2 : 1); ++c) {
        INFO("team: " << (c ? "odd PEs" : "world"));
        f(teams[c], shmem_team_n_pes(teams[c]), shmem_team_my_pe(teams[c]), Gen(base, static_cast<std::uint64_t>(c)));
    }
    shmem_team_destroy(odd);
}

// on_teams in the host heap and in the device heap: f(space, team, size, index, g).
template <class F> void on_spaces_and_teams(F&& f) {
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        on_teams([&](shmem_team_t team, int n, int me, Gen g) { f(s, team, n, me, g); });
    }
}

// The specification's precondition of every collective: each PE's destination is ready before
// any PE calls (the binomial algorithms and the exchanges start without a sync of their own).
void ready(shmem_team_t team) { REQUIRE(shmem_team_sync(team) == 0); }

template <class T> std::vector<T> data_of(std::uint64_t key, int pe, std::size_t n) {
    return spmd::make_values<T>(n, Gen(key, static_cast<std::uint64_t>(pe)));
}

// Elements [from, to) of a symmetric object must still be poison.
template <class T> void require_poison(const T* obj, std::size_t from, std::size_t to) {
    SPMD_REQUIRE_OK(spmd::check_poison_sym(obj, from * sizeof(T), to * sizeof(T), spmd::poison_byte()));
}
template <class T> void require_equal(const T* obj, const std::vector<T>& expected, std::size_t at = 0) {
    SPMD_REQUIRE_OK(spmd::diff_sym(obj + at, expected.data(), expected.size() * sizeof(T), at * sizeof(T)));
}

constexpr std::size_t kMargin = 5;

#define DATA_TYPES char, short, int, long, float, double, long double, unsigned long long, unsigned char

TEMPLATE_TEST_CASE("broadcast from every root into every member, root included", "[coll]", DATA_TYPES) {
    using T = TestType;
    on_spaces_and_teams([&](Space s, shmem_team_t team, int n, int me, Gen g) {
        for (std::size_t nelems : {std::size_t(0), std::size_t(1), std::size_t(g.range(2, 3000))}) {
            INFO("nelems " << nelems);
            spmd::SymArray<T> src(s, nelems + 1), dst(s, nelems + kMargin);
            for (int root = 0; root < n; ++root) {
                const auto key = g.next();
                spmd::local_write(src.get(), data_of<T>(key, me, nelems)); // only the root's counts
                dst.poison();
                ready(team); // every destination is prepared before any PE writes to it
                REQUIRE(Coll<T>::broadcast(team, dst.get(), src.get(), nelems, root) == 0);
                require_equal(dst.get(), data_of<T>(key, root, nelems));
                require_poison(dst.get(), nelems, nelems + kMargin);
            }
        }
    });
}

TEMPLATE_TEST_CASE("fcollect and collect concatenate in team order", "[coll]", DATA_TYPES) {
    using T = TestType;
    const auto N = static_cast<std::size_t>(spmd::npes());
    on_spaces_and_teams([&](Space s, shmem_team_t team, int n, int me, Gen g) {
        const auto un = static_cast<std::size_t>(n);
        const std::size_t each = g.range(0, 700);
        const auto key = g.next();
        // fcollect: `each` elements from every member.
        spmd::SymArray<T> fsrc(s, each + 1), fdst(s, each * N + kMargin);
        // collect: a different count from each member (some of them 0).
        std::vector<std::size_t> counts(N);
        for (auto& c : counts) c = g.range(0, 2) ? g.range(0, 900) : 0;
        std::size_t total = 0, most = 0;
        for (std::size_t i = 0; i < N; ++i) (i < un ? total : most) += counts[i];
        spmd::SymArray<T> src(s, 901), dst(s, total + most + kMargin);
        if (team == SHMEM_TEAM_INVALID) return;

        spmd::local_write(fsrc.get(), data_of<T>(key, me, each));
        fdst.poison();
        ready(team); // every destination is prepared before any PE writes to it
        REQUIRE(Coll<T>::fcollect(team, fdst.get(), fsrc.get(), each) == 0);
        for (int i = 0; i < n; ++i) require_equal(fdst.get(), data_of<T>(key, i, each), static_cast<std::size_t>(i) * each);
        require_poison(fdst.get(), each * un, each * un + kMargin);

        const std::size_t mine = counts[static_cast<std::size_t>(me)];
        spmd::local_write(src.get(), data_of<T>(key, me, mine));
        dst.poison();
        ready(team); // every destination is prepared before any PE writes to it
        REQUIRE(Coll<T>::collect(team, dst.get(), src.get(), mine) == 0);
        std::size_t at = 0;
        for (int i = 0; i < n; ++i) {
            require_equal(dst.get(), data_of<T>(key, i, counts[static_cast<std::size_t>(i)]), at);
            at += counts[static_cast<std::size_t>(i)];
        }
        require_poison(dst.get(), total, total + kMargin);
    });
}

TEMPLATE_TEST_CASE("alltoall and alltoalls exchange block j of each member with member j", "[coll]", DATA_TYPES) {
    using T = TestType;
    const auto N = static_cast<std::size_t>(spmd::npes());
    on_spaces_and_teams([&](Space s, shmem_team_t team, int n, int me, Gen g) {
        const auto un = static_cast<std::size_t>(n);
        const std::size_t each = g.range(0, 400);
        const auto key = g.next();
        // Strided: element k of block j at source[sst * (j * each + k)], to dest[dst * (i * each + k)].
        const auto dst_stride = static_cast<std::ptrdiff_t>(g.range(1, 3));
        const auto src_stride = static_cast<std::ptrdiff_t>(g.range(1, 3));
        const std::size_t src_len = static_cast<std::size_t>(src_stride) * each * N + 1;
        const std::size_t dst_len = static_cast<std::size_t>(dst_stride) * each * N + kMargin;
        spmd::SymArray<T> asrc(s, each * N + 1), adst(s, each * N + kMargin);
        spmd::SymArray<T> src(s, src_len), dst(s, dst_len);
        if (team == SHMEM_TEAM_INVALID) return;

        spmd::local_write(asrc.get(), data_of<T>(key, me, each * un));
        adst.poison();
        ready(team); // every destination is prepared before any PE writes to it
        REQUIRE(Coll<T>::alltoall(team, adst.get(), asrc.get(), each) == 0);
        for (int i = 0; i < n; ++i) {
            auto theirs = data_of<T>(key, i, each * un);
            std::vector<T> block(theirs.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(me) * each),
                                 theirs.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(me + 1) * each));
            require_equal(adst.get(), block, static_cast<std::size_t>(i) * each);
        }
        require_poison(adst.get(), each * un, each * un + kMargin);

        INFO("dst " << dst_stride << ", sst " << src_stride << ", nelems " << each);
        spmd::local_write(src.get(), data_of<T>(key + 1, me, src_len));
        dst.poison();
        ready(team); // every destination is prepared before any PE writes to it
        REQUIRE(Coll<T>::alltoalls(team, dst.get(), src.get(), dst_stride, src_stride, each) == 0);
        auto got = spmd::local_bytes(dst.get(), dst.bytes());
        std::vector<bool> written(dst_len, false);
        for (int i = 0; i < n; ++i) {
            auto theirs = data_of<T>(key + 1, i, src_len);
            for (std::size_t k = 0; k < each; ++k) {
                const std::size_t d = static_cast<std::size_t>(dst_stride) * (static_cast<std::size_t>(i) * each + k);
                const std::size_t from = static_cast<std::size_t>(src_stride) * (static_cast<std::size_t>(me) * each + k);
                INFO("from member " << i << ", element " << k);
                REQUIRE(std::memcmp(got.data() + d * sizeof(T), &theirs[from], sizeof(T)) == 0);
                written[d] = true;
            }
        }
        for (std::size_t d = 0; d < dst_len; ++d)
            if (!written[d]) require_poison(dst.get(), d, d + 1);
    });
}

// ---- Reductions ------------------------------------------------------------------------------
enum class Op { And, Or, Xor, Max, Min, Sum, Prod };
const char* op_name(Op o) {
    static const char* names[] = {"and", "or", "xor", "max", "min", "sum", "prod"};
    return names[static_cast<int>(o)];
}

using complexd = double _Complex;
using complexf = float _Complex;
template <class T> constexpr bool is_complex = std::is_same_v<T, complexd> || std::is_same_v<T, complexf>;

// The C reduction routine of (T, op); null where the spec defines none.
template <class T> struct Red;
#define RED_COMMON(T, N)                                                                                   \
    static int sum(shmem_team_t t, T* d, const T* s, size_t n) { return shmem_##N##_sum_reduce(t, d, s, n); } \
    static int prod(shmem_team_t t, T* d, const T* s, size_t n) { return shmem_##N##_prod_reduce(t, d, s, n); } \
    static int inscan(shmem_team_t t, T* d, const T* s, size_t n) { return shmem_##N##_sum_inscan(t, d, s, n); } \
    static int exscan(shmem_team_t t, T* d, const T* s, size_t n) { return shmem_##N##_sum_exscan(t, d, s, n); }
#define RED_ORDERED(T, N)                                                                                  \
    static int max(shmem_team_t t, T* d, const T* s, size_t n) { return shmem_##N##_max_reduce(t, d, s, n); } \
    static int min(shmem_team_t t, T* d, const T* s, size_t n) { return shmem_##N##_min_reduce(t, d, s, n); }
#define RED_BITWISE(T, N)                                                                                  \
    static int band(shmem_team_t t, T* d, const T* s, size_t n) { return shmem_##N##_and_reduce(t, d, s, n); } \
    static int bor(shmem_team_t t, T* d, const T* s, size_t n) { return shmem_##N##_or_reduce(t, d, s, n); }   \
    static int bxor(shmem_team_t t, T* d, const T* s, size_t n) { return shmem_##N##_xor_reduce(t, d, s, n); }
#define RED_SIGNED(T, N) template <> struct Red<T> { RED_COMMON(T, N) RED_ORDERED(T, N) };
#define RED_UNSIGNED(T, N) template <> struct Red<T> { RED_COMMON(T, N) RED_ORDERED(T, N) RED_BITWISE(T, N) };
RED_SIGNED(char, char)
RED_SIGNED(short, short)
RED_SIGNED(int, int)
RED_SIGNED(long long, longlong)
RED_SIGNED(float, float)
RED_SIGNED(double, double)
RED_SIGNED(long double, longdouble)
RED_UNSIGNED(unsigned char, uchar)
RED_UNSIGNED(unsigned short, ushort)
RED_UNSIGNED(unsigned long, ulong)
RED_UNSIGNED(signed char, int8)
RED_UNSIGNED(int64_t, int64)
template <> struct Red<complexd> { RED_COMMON(complexd, complexd) };
template <> struct Red<complexf> { RED_COMMON(complexf, complexf) };

template <class T> constexpr bool has_bitwise = std::is_integral_v<T> && !std::is_same_v<T, char> &&
                                                !std::is_same_v<T, short> && !std::is_same_v<T, int> &&
                                                !std::is_same_v<T, long long>;

// Values whose sums and products every order of combination gets exactly: any integer (they wrap
// the same way in any order); small integers for floating and complex types.
template <class T> T value(Gen& g) {
    if constexpr (is_complex<T>) {
        T z;
        __real__ z = static_cast<double>(static_cast<int>(g.range(0, 6)) - 3);
        __imag__ z = static_cast<double>(static_cast<int>(g.range(0, 6)) - 3);
        return z;
    } else if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(static_cast<int>(g.range(0, 16)) - 8);
    } else {
        return static_cast<T>(g.next());
    }
}
template <class T> std::vector<T> values_of(std::uint64_t key, int pe, std::size_t n) {
    Gen g(key, static_cast<std::uint64_t>(pe));
    std::vector<T> v(n);
    std::memset(static_cast<void*>(v.data()), 0, n * sizeof(T));
    for (auto& x : v) x = value<T>(g);
    return v;
}

template <class T> T apply(Op o, T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        using W = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
        switch (o) {
        case Op::And: return static_cast<T>(a & b);
        case Op::Or: return static_cast<T>(a | b);
        case Op::Xor: return static_cast<T>(a ^ b);
        case Op::Max: return std::max(a, b);
        case Op::Min: return std::min(a, b);
        case Op::Sum: return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
        case Op::Prod: return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
        }
    } else if constexpr (is_complex<T>) {
        return o == Op::Sum ? a + b : a * b;
    } else {
        switch (o) {
        case Op::Max: return std::max(a, b);
        case Op::Min: return std::min(a, b);
        case Op::Sum: return a + b;
        case Op::Prod: return a * b;
        default: break;
        }
    }
    return a;
}

template <class T> int call_reduce(Op o, shmem_team_t t, T* d, const T* s, std::size_t n) {
    if constexpr (!is_complex<T>) {
        if (o == Op::Max) return Red<T>::max(t, d, s, n);
        if (o == Op::Min) return Red<T>::min(t, d, s, n);
    }
    if constexpr (has_bitwise<T>) {
        if (o == Op::And) return Red<T>::band(t, d, s, n);
        if (o == Op::Or) return Red<T>::bor(t, d, s, n);
        if (o == Op::Xor) return Red<T>::bxor(t, d, s, n);
    }
    if (o == Op::Sum) return Red<T>::sum(t, d, s, n);
    return Red<T>::prod(t, d, s, n);
}

template <class T> std::vector<Op> ops_of() {
    if constexpr (is_complex<T>) return {Op::Sum, Op::Prod};
    else if constexpr (has_bitwise<T>) return {Op::And, Op::Or, Op::Xor, Op::Max, Op::Min, Op::Sum, Op::Prod};
    else return {Op::Max, Op::Min, Op::Sum, Op::Prod};
}

// Results of floating arithmetic compare by value: products of complex numbers give +0 or -0
// depending on the order of combination.
template <class T> void require_results(const T* obj, const std::vector<T>& want) {
    if constexpr (std::is_floating_point_v<T> || is_complex<T>) {
        auto got = spmd::local_read(obj, want.size());
        for (std::size_t k = 0; k < want.size(); ++k) {
            INFO("element " << k);
            REQUIRE(got[k] == want[k]);
        }
    } else {
        require_equal(obj, want);
    }
}

// Members first..last of the team combined in order.
template <class T> std::vector<T> combined(Op o, std::uint64_t key, int first, int last, std::size_t n) {
    std::vector<T> acc = values_of<T>(key, first, n);
    for (int i = first + 1; i <= last; ++i) {
        auto v = values_of<T>(key, i, n);
        for (std::size_t k = 0; k < n; ++k) acc[k] = apply(o, acc[k], v[k]);
    }
    return acc;
}

#define REDUCE_TYPES char, short, int, long long, float, double, long double, unsigned char, unsigned short, \
                     unsigned long, signed char, int64_t, complexd, complexf

TEMPLATE_TEST_CASE("reductions combine every member's source, also in place", "[coll][reduce]", REDUCE_TYPES) {
    using T = TestType;
    on_spaces_and_teams([&](Space s, shmem_team_t team, int n, int me, Gen g) {
        for (Op o : ops_of<T>()) {
            INFO("operation: " << op_name(o));
            const std::size_t count = g.range(1, 2) == 1 ? 1 : g.range(2, 2500);
            const auto key = g.next();
            INFO("nreduce " << count);
            spmd::SymArray<T> src(s, count), dst(s, count + kMargin);
            if (team == SHMEM_TEAM_INVALID) continue;
            spmd::local_write(src.get(), values_of<T>(key, me, count));
            dst.poison();
            ready(team); // every destination is prepared before any PE writes to it
            REQUIRE(call_reduce(o, team, dst.get(), src.get(), count) == 0);
            auto want = combined<T>(o, key, 0, n - 1, count);
            require_results(dst.get(), want);
            require_poison(dst.get(), count, count + kMargin);
            require_equal(src.get(), values_of<T>(key, me, count)); // the source is left alone
            // In place: dest and source are the same array.
            REQUIRE(call_reduce(o, team, src.get(), src.get(), count) == 0);
            require_results(src.get(), want);
        }
    });
}

TEMPLATE_TEST_CASE("sum_inscan and sum_exscan give prefix sums in team order", "[coll][scan]", int, long long,
                   double, unsigned char, complexd) {
    using T = TestType;
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        on_teams([&](shmem_team_t team, int, int me, Gen g) {
            const std::size_t count = g.range(1, 1500);
            const auto key = g.next();
            spmd::SymArray<T> src(s, count), dst(s, count + kMargin);
            if (team == SHMEM_TEAM_INVALID) return;
            spmd::local_write(src.get(), values_of<T>(key, me, count));
            dst.poison();
            ready(team); // every destination is prepared before any PE writes to it
            REQUIRE(Red<T>::inscan(team, dst.get(), src.get(), count) == 0);
            require_results(dst.get(), combined<T>(Op::Sum, key, 0, me, count));
            require_poison(dst.get(), count, count + kMargin);
            dst.poison();
            ready(team); // every destination is prepared before any PE writes to it
            REQUIRE(Red<T>::exscan(team, dst.get(), src.get(), count) == 0);
            if (me == 0) require_results(dst.get(), std::vector<T>(count, T{})); // the empty sum: zero
            else require_results(dst.get(), combined<T>(Op::Sum, key, 0, me - 1, count));
            require_poison(dst.get(), count, count + kMargin);
            // In place (dest == source, which the specification allows): each member's source is
            // read by the members after it while they compute.
            for (const bool inclusive : {true, false}) {
                INFO((inclusive ? "sum_inscan" : "sum_exscan") << " in place");
                spmd::local_write(dst.get(), values_of<T>(key, me, count));
                ready(team);
                REQUIRE((inclusive ? Red<T>::inscan : Red<T>::exscan)(team, dst.get(), dst.get(), count) == 0);
                const int upto = inclusive ? me : me - 1;
                if (upto < 0) require_results(dst.get(), std::vector<T>(count, T{}));
                else require_results(dst.get(), combined<T>(Op::Sum, key, 0, upto, count));
                require_poison(dst.get(), count, count + kMargin);
            }
        });
    }
}

TEST_CASE("consecutive collectives with different roots and no barrier between them", "[coll]") {
    // Fast members run ahead into the next broadcast; nothing of it may land in the previous one.
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        const int n = spmd::npes(), me = spmd::me();
        constexpr int kRounds = 40;
        const std::size_t count = spmd::shared_range(1, 64);
        const auto key = spmd::shared_key();
        spmd::SymArray<long> src(s, count), dst(s, count), sum(s, count);
        for (int r = 0; r < kRounds; ++r) {
            const int root = static_cast<int>(Gen(key, r).range(0, static_cast<std::uint64_t>(n - 1)));
            spmd::local_write(src.get(), data_of<long>(key + static_cast<std::uint64_t>(r), me, count));
            REQUIRE(shmem_long_broadcast(SHMEM_TEAM_WORLD, dst.get(), src.get(), count, root) == 0);
            INFO("round " << r << ", root " << root);
            require_equal(dst.get(), data_of<long>(key + static_cast<std::uint64_t>(r), root, count));
            REQUIRE(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, sum.get(), dst.get(), count) == 0);
            auto want = data_of<long>(key + static_cast<std::uint64_t>(r), root, count);
            for (auto& x : want) x = static_cast<long>(static_cast<unsigned long>(x) * static_cast<unsigned long>(n));
            require_equal(sum.get(), want);
        }
    }
}

TEST_CASE("broadcasts back to back into alternating halves, each refilled once read", "[coll]") {
    // No barrier between the calls: a root may run a call ahead, but must not write into a
    // half before its PE has read and refilled it (the idiom of older programs and of public
    // suites, which SOS and Open MPI's OSHMEM keep).
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        const int n = spmd::npes(), me = spmd::me();
        constexpr int kRounds = 120;
        const std::size_t count = spmd::shared_range(1, 48);
        const auto key = spmd::shared_key();
        const int root = static_cast<int>(Gen(key, 7).range(0, static_cast<std::uint64_t>(n - 1)));
        spmd::SymArray<long> src(s, 2 * count), dst(s, 2 * count);
        const std::vector<long> poison(count, -1);
        spmd::local_write(dst.get(), poison);
        spmd::local_write(dst.get() + count, poison);
        shmem_barrier_all();
        for (int r = 0; r < kRounds; ++r) {
            long* half = dst.get() + static_cast<std::size_t>(r % 2) * count;
            long* from = src.get() + static_cast<std::size_t>(r % 2) * count;
            const auto want = data_of<long>(key + static_cast<std::uint64_t>(r), root, count);
            spmd::local_write(from, data_of<long>(key + static_cast<std::uint64_t>(r), me, count));
            REQUIRE(shmem_long_broadcast(SHMEM_TEAM_WORLD, half, from, count, root) == 0);
            INFO("round " << r << ", root " << root);
            require_equal(half, want);
            spmd::local_write(half, poison);
        }
        shmem_barrier_all();
    }
}

TEST_CASE("collectives on SHMEM_TEAM_INVALID return nonzero and do nothing", "[coll]") {
    int x = 0, y = 0;
    CHECK(shmem_int_broadcast(SHMEM_TEAM_INVALID, &x, &y, 1, 0) != 0);
    CHECK(shmem_int_sum_reduce(SHMEM_TEAM_INVALID, &x, &y, 1) != 0);
    CHECK(shmem_int_fcollect(SHMEM_TEAM_INVALID, &x, &y, 1) != 0);
    CHECK(shmem_team_sync(SHMEM_TEAM_INVALID) != 0);
}

} // namespace
