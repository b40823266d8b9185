// SPDX-License-Identifier: BSL-1.0
// Synchronization and ordering: barrier_all and sync_all over many rounds, fence and quiet
// ordering of data before a flag, wait_until/test for every comparison and every point-to-point
// type, the _all/_any/_some (and _vector) forms with status arrays that exclude elements, and
// their empty-set edge cases.
#include "spmd.hpp"
#include "spmd_types.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

namespace {

using spmd::Gen;
using spmd::Space;

// The specification's vector forms take cmp_values as TYPE * (not const): the const arrays of the
// tests are cast for them.
#define SPMD_SYNC_OPS(T, N)                                                                                  \
    struct sync_##N {                                                                                        \
        using type = T;                                                                                      \
        static void p(T* d, T v, int pe) { shmem_##N##_p(d, v, pe); }                                        \
        static void wait_until(T* iv, int c, T v) { shmem_##N##_wait_until(iv, c, v); }                     \
        static int test(T* iv, int c, T v) { return shmem_##N##_test(iv, c, v); }                           \
        static void wait_until_all(T* iv, size_t n, const int* st, int c, T v) {                            \
            shmem_##N##_wait_until_all(iv, n, st, c, v);                                                     \
        }                                                                                                    \
        static size_t wait_until_any(T* iv, size_t n, const int* st, int c, T v) {                          \
            return shmem_##N##_wait_until_any(iv, n, st, c, v);                                              \
        }                                                                                                    \
        static size_t wait_until_some(T* iv, size_t n, size_t* ix, const int* st, int c, T v) {             \
            return shmem_##N##_wait_until_some(iv, n, ix, st, c, v);                                         \
        }                                                                                                    \
        static void wait_until_all_vector(T* iv, size_t n, const int* st, int c, const T* v) {              \
            shmem_##N##_wait_until_all_vector(iv, n, st, c, const_cast<T*>(v));                          \
        }                                                                                                    \
        static size_t wait_until_any_vector(T* iv, size_t n, const int* st, int c, const T* v) {            \
            return shmem_##N##_wait_until_any_vector(iv, n, st, c, const_cast<T*>(v));                   \
        }                                                                                                    \
        static size_t wait_until_some_vector(T* iv, size_t n, size_t* ix, const int* st, int c, const T* v) { \
            return shmem_##N##_wait_until_some_vector(iv, n, ix, st, c, const_cast<T*>(v));              \
        }                                                                                                    \
        static int test_all(T* iv, size_t n, const int* st, int c, T v) {                                   \
            return shmem_##N##_test_all(iv, n, st, c, v);                                                    \
        }                                                                                                    \
        static size_t test_any(T* iv, size_t n, const int* st, int c, T v) {                                \
            return shmem_##N##_test_any(iv, n, st, c, v);                                                    \
        }                                                                                                    \
        static size_t test_some(T* iv, size_t n, size_t* ix, const int* st, int c, T v) {                   \
            return shmem_##N##_test_some(iv, n, ix, st, c, v);                                               \
        }                                                                                                    \
        static int test_all_vector(T* iv, size_t n, const int* st, int c, const T* v) {                     \
            return shmem_##N##_test_all_vector(iv, n, st, c, const_cast<T*>(v));                         \
        }                                                                                                    \
        static size_t test_any_vector(T* iv, size_t n, const int* st, int c, const T* v) {                  \
            return shmem_##N##_test_any_vector(iv, n, st, c, const_cast<T*>(v));                         \
        }                                                                                                    \
        static size_t test_some_vector(T* iv, size_t n, size_t* ix, const int* st, int c, const T* v) {     \
            return shmem_##N##_test_some_vector(iv, n, ix, st, c, const_cast<T*>(v));                    \
        }                                                                                                    \
    };
SPMD_SYNC_TYPES(SPMD_SYNC_OPS)
#undef SPMD_SYNC_OPS

constexpr int kCmps[] = {SHMEM_CMP_EQ, SHMEM_CMP_NE, SHMEM_CMP_GT, SHMEM_CMP_GE, SHMEM_CMP_LT, SHMEM_CMP_LE};
const char* cmp_name(int c) {
    switch (c) {
    case SHMEM_CMP_EQ: return "SHMEM_CMP_EQ";
    case SHMEM_CMP_NE: return "SHMEM_CMP_NE";
    case SHMEM_CMP_GT: return "SHMEM_CMP_GT";
    case SHMEM_CMP_GE: return "SHMEM_CMP_GE";
    case SHMEM_CMP_LT: return "SHMEM_CMP_LT";
    case SHMEM_CMP_LE: return "SHMEM_CMP_LE";
    }
    return "?";
}

template <class T> bool satisfies(T x, int cmp, T v) {
    switch (cmp) {
    case SHMEM_CMP_EQ: return x == v;
    case SHMEM_CMP_NE: return x != v;
    case SHMEM_CMP_GT: return x > v;
    case SHMEM_CMP_GE: return x >= v;
    case SHMEM_CMP_LT: return x < v;
    case SHMEM_CMP_LE: return x <= v;
    }
    return false;
}

// A comparison value and two values of the variable: one that fails the comparison and one that
// satisfies it, often right at the boundary (GT: v fails, GE: v satisfies ...).
template <class T> struct CmpCase {
    T value, unsat, sat;
};
template <class T> T sync_threshold(Gen& g) {
    if constexpr (std::is_signed_v<T>) {
        const long long span = 1LL << (sizeof(T) * 8 - 4);
        return static_cast<T>(static_cast<long long>(g.range(0, 2 * span - 1)) - span);
    } else {
        return static_cast<T>(g.range(200, std::numeric_limits<T>::max() / 2));
    }
}
template <class T> CmpCase<T> make_case(int cmp, T v, Gen& g) {
    const T k = static_cast<T>(g.range(1, 100));
    const bool edge = g.next() % 2;
    auto add = [](T a, T b) { return static_cast<T>(a + b); };
    auto sub = [](T a, T b) { return static_cast<T>(a - b); };
    switch (cmp) {
    case SHMEM_CMP_EQ: return {v, edge ? add(v, k) : sub(v, k), v};
    case SHMEM_CMP_NE: return {v, v, edge ? add(v, k) : sub(v, k)};
    case SHMEM_CMP_GT: return {v, edge ? v : sub(v, k), add(v, k)};
    case SHMEM_CMP_GE: return {v, sub(v, k), edge ? v : add(v, k)};
    case SHMEM_CMP_LT: return {v, edge ? v : add(v, k), sub(v, k)};
    case SHMEM_CMP_LE: return {v, add(v, k), edge ? v : sub(v, k)};
    }
    return {v, v, v};
}

// ---- The multi-variable plan: built identically by the owner of the variables and the writer --
enum Kind { kAll, kAny, kSome };
constexpr std::size_t kG = 8;                     // variables per group
constexpr std::size_t kGroups = 3 * 2 * 6;        // kind x (scalar, vector) x cmp
constexpr std::size_t kSingles = 6;               // wait_until/test, one per cmp
constexpr std::size_t kVars = kSingles + kGroups * kG;

template <class T> struct Group {
    Kind kind;
    bool vec;
    int cmp;
    bool null_status;
    int status[kG];
    T values[kG]; // comparison values (all equal unless vec)
    T init[kG];
    T sat[kG];
    bool write[kG]; // the writer sets sat[i]
    std::size_t nwrite;
    const int* st() const { return null_status ? nullptr : status; }
};

template <class T> Group<T> make_group(std::uint64_t key, int owner, std::size_t gi) {
    Gen g(key, owner, gi, 7);
    Group<T> gr{};
    gr.kind = static_cast<Kind>(gi / 12);
    gr.vec = (gi / 6) % 2;
    gr.cmp = kCmps[gi % 6];
    gr.null_status = g.range(0, 3) == 0;
    const int nonzero[] = {1, -1, 7, 1 << 30};
    std::size_t included = 0;
    for (std::size_t i = 0; i < kG; ++i) {
        gr.status[i] = (!gr.null_status && g.range(0, 2) == 0) ? nonzero[g.range(0, 3)] : 0;
        included += gr.status[i] == 0;
    }
    if (included == 0) gr.status[g.range(0, kG - 1)] = 0;
    const T scalar = sync_threshold<T>(g);
    for (std::size_t i = 0; i < kG; ++i) {
        gr.values[i] = gr.vec ? sync_threshold<T>(g) : scalar;
        CmpCase<T> c = make_case(gr.cmp, gr.values[i], g);
        const bool excluded = gr.status[i] != 0;
        // Excluded variables of _any/_some already satisfy: an implementation that ignores
        // status would report them. Those of _all never do: it would wait forever (test_all: 0).
        gr.init[i] = excluded && gr.kind != kAll ? c.sat : c.unsat;
        gr.sat[i] = c.sat;
        gr.write[i] = !excluded && (gr.kind == kAll || g.range(0, 1) == 0);
    }
    gr.nwrite = 0;
    for (std::size_t i = 0; i < kG; ++i) gr.nwrite += gr.write[i];
    if (gr.nwrite == 0) {
        for (std::size_t i = 0; i < kG; ++i)
            if (gr.status[i] == 0) {
                gr.write[i] = true;
                gr.nwrite = 1;
                break;
            }
    }
    return gr;
}

template <class T> struct Single {
    int cmp;
    CmpCase<T> c;
};
template <class T> Single<T> make_single(std::uint64_t key, int owner, std::size_t i) {
    Gen g(key, owner, i, 11);
    T v = sync_threshold<T>(g);
    return {kCmps[i], make_case(kCmps[i], v, g)};
}

template <class Ops, class T = typename Ops::type>
std::size_t call_some(bool wait, bool vec, T* iv, std::size_t* ix, const Group<T>& gr) {
    if (wait) {
        return vec ? Ops::wait_until_some_vector(iv, kG, ix, gr.st(), gr.cmp, gr.values)
                   : Ops::wait_until_some(iv, kG, ix, gr.st(), gr.cmp, gr.values[0]);
    }
    return vec ? Ops::test_some_vector(iv, kG, ix, gr.st(), gr.cmp, gr.values)
               : Ops::test_some(iv, kG, ix, gr.st(), gr.cmp, gr.values[0]);
}

template <class Ops> void wait_family(typename Ops::type* vars) {
    using T = typename Ops::type;
    const int me = spmd::me(), to = spmd::right();
    const std::uint64_t key = spmd::shared_key();
    auto singles = [&](int pe) {
        std::vector<Single<T>> v;
        for (std::size_t i = 0; i < kSingles; ++i) v.push_back(make_single<T>(key, pe, i));
        return v;
    };
    auto groups = [&](int pe) {
        std::vector<Group<T>> v;
        for (std::size_t gi = 0; gi < kGroups; ++gi) v.push_back(make_group<T>(key, pe, gi));
        return v;
    };
    const auto my_singles = singles(me);
    const auto my_groups = groups(me);
    T* const gvars = vars + kSingles;
    auto describe = [](const Group<T>& gr) {
        static const char* kinds[] = {"all", "any", "some"};
        std::string s = std::string("_") + kinds[gr.kind] + (gr.vec ? "_vector" : "") + ", " + cmp_name(gr.cmp) +
                        (gr.null_status ? ", status NULL" : ", status {");
        if (!gr.null_status)
            for (std::size_t i = 0; i < kG; ++i) s += std::to_string(gr.status[i]) + (i + 1 < kG ? "," : "}");
        return s;
    };

    // ---- Phase 1: nothing satisfied yet ----
    // The variables may be in the device heap: written and read back through local_store/load;
    // only the wait/test routines look at them directly.
    {
        std::vector<T> init(kVars);
        for (std::size_t i = 0; i < kSingles; ++i) init[i] = my_singles[i].c.unsat;
        for (std::size_t gi = 0; gi < kGroups; ++gi)
            for (std::size_t i = 0; i < kG; ++i) init[kSingles + gi * kG + i] = my_groups[gi].init[i];
        spmd::local_write(vars, init);
    }
    for (std::size_t i = 0; i < kSingles; ++i) {
        INFO("test, " << cmp_name(my_singles[i].cmp) << " before the write");
        REQUIRE(Ops::test(vars + i, my_singles[i].cmp, my_singles[i].c.value) == 0);
    }
    for (std::size_t gi = 0; gi < kGroups; ++gi) {
        const Group<T>& gr = my_groups[gi];
        T* iv = gvars + gi * kG;
        INFO("test" << describe(gr) << " before the writes");
        std::size_t ix[kG];
        switch (gr.kind) {
        case kAll:
            REQUIRE((gr.vec ? Ops::test_all_vector(iv, kG, gr.st(), gr.cmp, gr.values)
                            : Ops::test_all(iv, kG, gr.st(), gr.cmp, gr.values[0])) == 0);
            break;
        case kAny:
            REQUIRE((gr.vec ? Ops::test_any_vector(iv, kG, gr.st(), gr.cmp, gr.values)
                            : Ops::test_any(iv, kG, gr.st(), gr.cmp, gr.values[0])) == SIZE_MAX);
            break;
        case kSome: REQUIRE(call_some<Ops>(false, gr.vec, iv, ix, gr) == 0); break;
        }
    }
    shmem_barrier_all();

    // ---- Phase 2: write the right neighbour's variables, then wait for ours ----
    {
        const auto peer_singles = singles(to);
        const auto peer_groups = groups(to);
        for (std::size_t i = 0; i < kSingles; ++i) Ops::p(vars + i, peer_singles[i].c.sat, to);
        for (std::size_t gi = 0; gi < kGroups; ++gi)
            for (std::size_t i = 0; i < kG; ++i)
                if (peer_groups[gi].write[i]) Ops::p(gvars + gi * kG + i, peer_groups[gi].sat[i], to);
        shmem_quiet();
    }
    for (std::size_t i = 0; i < kSingles; ++i) {
        const Single<T>& s = my_singles[i];
        INFO("wait_until, " << cmp_name(s.cmp));
        Ops::wait_until(vars + i, s.cmp, s.c.value);
        const T now = spmd::local_get(vars + i);
        REQUIRE(satisfies(now, s.cmp, s.c.value));
        REQUIRE(now == s.c.sat);
    }
    for (std::size_t gi = 0; gi < kGroups; ++gi) {
        const Group<T>& gr = my_groups[gi];
        T* iv = gvars + gi * kG;
        INFO("wait_until" << describe(gr));
        switch (gr.kind) {
        case kAll: {
            if (gr.vec) Ops::wait_until_all_vector(iv, kG, gr.st(), gr.cmp, gr.values);
            else Ops::wait_until_all(iv, kG, gr.st(), gr.cmp, gr.values[0]);
            const auto now = spmd::local_read(iv, kG);
            for (std::size_t i = 0; i < kG; ++i) {
                INFO("variable " << i);
                if (gr.status[i] == 0 || gr.null_status) REQUIRE(now[i] == gr.sat[i]);
            }
            break;
        }
        case kAny: {
            std::size_t r = gr.vec ? Ops::wait_until_any_vector(iv, kG, gr.st(), gr.cmp, gr.values)
                                   : Ops::wait_until_any(iv, kG, gr.st(), gr.cmp, gr.values[0]);
            INFO("returned index " << r);
            REQUIRE(r < kG);
            REQUIRE(gr.write[r]);
            REQUIRE(spmd::local_get(iv + r) == gr.sat[r]);
            break;
        }
        case kSome: {
            std::size_t ix[kG];
            std::size_t cnt = call_some<Ops>(true, gr.vec, iv, ix, gr);
            INFO("returned count " << cnt);
            REQUIRE(cnt >= 1);
            REQUIRE(cnt <= gr.nwrite);
            std::set<std::size_t> seen;
            for (std::size_t k = 0; k < cnt; ++k) {
                INFO("index " << ix[k]);
                REQUIRE(ix[k] < kG);
                REQUIRE(gr.write[ix[k]]);
                REQUIRE(seen.insert(ix[k]).second);
            }
            break;
        }
        }
    }
    shmem_barrier_all();

    // ---- Phase 3: every write has landed: the test forms give exact answers ----
    for (std::size_t i = 0; i < kSingles; ++i) {
        INFO("test, " << cmp_name(my_singles[i].cmp) << " after the write");
        REQUIRE(Ops::test(vars + i, my_singles[i].cmp, my_singles[i].c.value) == 1);
    }
    for (std::size_t gi = 0; gi < kGroups; ++gi) {
        const Group<T>& gr = my_groups[gi];
        T* iv = gvars + gi * kG;
        INFO("test" << describe(gr) << " after the writes");
        switch (gr.kind) {
        case kAll:
            REQUIRE((gr.vec ? Ops::test_all_vector(iv, kG, gr.st(), gr.cmp, gr.values)
                            : Ops::test_all(iv, kG, gr.st(), gr.cmp, gr.values[0])) == 1);
            break;
        case kAny: {
            std::size_t r = gr.vec ? Ops::test_any_vector(iv, kG, gr.st(), gr.cmp, gr.values)
                                   : Ops::test_any(iv, kG, gr.st(), gr.cmp, gr.values[0]);
            INFO("returned index " << r);
            REQUIRE(r < kG);
            REQUIRE(gr.write[r]);
            break;
        }
        case kSome:
            for (bool wait : {false, true}) {
                INFO((wait ? "wait_until_some" : "test_some") << " when all writes are visible");
                std::size_t ix[kG];
                std::size_t cnt = call_some<Ops>(wait, gr.vec, iv, ix, gr);
                REQUIRE(cnt == gr.nwrite);
                std::set<std::size_t> got(ix, ix + cnt), want;
                for (std::size_t i = 0; i < kG; ++i)
                    if (gr.write[i]) want.insert(i);
                REQUIRE(got == want);
            }
            break;
        }
    }
    shmem_barrier_all(); // nobody reinitializes its variables while a neighbour still tests them
}

// Empty sets: nelems == 0, or every variable excluded by status. Local only (no communication).
template <class Ops> void empty_sets(typename Ops::type* vars) {
    using T = typename Ops::type;
    const T v = static_cast<T>(42);
    T values[kG];
    int all_excluded[kG];
    std::size_t ix[kG];
    for (std::size_t i = 0; i < kG; ++i) {
        values[i] = v;
        all_excluded[i] = 1;
    }
    spmd::local_write(vars, std::vector<T>(kG, static_cast<T>(1))); // 1 != 42: unsatisfied for EQ
    const int c = SHMEM_CMP_EQ;
    INFO("nelems == 0");
    REQUIRE(Ops::test_all(vars, 0, nullptr, c, v) == 1);
    REQUIRE(Ops::test_all_vector(vars, 0, nullptr, c, values) == 1);
    REQUIRE(Ops::test_any(vars, 0, nullptr, c, v) == SIZE_MAX);
    REQUIRE(Ops::test_any_vector(vars, 0, nullptr, c, values) == SIZE_MAX);
    REQUIRE(Ops::test_some(vars, 0, ix, nullptr, c, v) == 0);
    REQUIRE(Ops::test_some_vector(vars, 0, ix, nullptr, c, values) == 0);
    Ops::wait_until_all(vars, 0, nullptr, c, v);
    Ops::wait_until_all_vector(vars, 0, nullptr, c, values);
    REQUIRE(Ops::wait_until_any(vars, 0, nullptr, c, v) == SIZE_MAX);
    REQUIRE(Ops::wait_until_any_vector(vars, 0, nullptr, c, values) == SIZE_MAX);
    REQUIRE(Ops::wait_until_some(vars, 0, ix, nullptr, c, v) == 0);
    REQUIRE(Ops::wait_until_some_vector(vars, 0, ix, nullptr, c, values) == 0);
    INFO("every variable excluded by status");
    REQUIRE(Ops::test_all(vars, kG, all_excluded, c, v) == 1);
    REQUIRE(Ops::test_all_vector(vars, kG, all_excluded, c, values) == 1);
    REQUIRE(Ops::test_any(vars, kG, all_excluded, c, v) == SIZE_MAX);
    REQUIRE(Ops::test_any_vector(vars, kG, all_excluded, c, values) == SIZE_MAX);
    REQUIRE(Ops::test_some(vars, kG, ix, all_excluded, c, v) == 0);
    REQUIRE(Ops::test_some_vector(vars, kG, ix, all_excluded, c, values) == 0);
    Ops::wait_until_all(vars, kG, all_excluded, c, v);
    Ops::wait_until_all_vector(vars, kG, all_excluded, c, values);
    REQUIRE(Ops::wait_until_any(vars, kG, all_excluded, c, v) == SIZE_MAX);
    REQUIRE(Ops::wait_until_any_vector(vars, kG, all_excluded, c, values) == SIZE_MAX);
    REQUIRE(Ops::wait_until_some(vars, kG, ix, all_excluded, c, v) == 0);
    REQUIRE(Ops::wait_until_some_vector(vars, kG, ix, all_excluded, c, values) == 0);
    INFO("only satisfied variables excluded: nothing to report");
    spmd::local_set(vars + 3, v);
    int only3[kG] = {0, 0, 0, 1, 0, 0, 0, 0};
    REQUIRE(Ops::test_any(vars, kG, only3, c, v) == SIZE_MAX);
    REQUIRE(Ops::test_some(vars, kG, ix, only3, c, v) == 0);
    REQUIRE(Ops::test_all(vars, kG, only3, c, v) == 0);
    REQUIRE(Ops::test_any(vars, kG, nullptr, c, v) == 3);
}

TEST_CASE("wait_until/test and the _all/_any/_some(_vector) forms, every cmp, every type") {
    spmd::for_each_space([](Space s) {
        spmd::SymArray<std::uint64_t> raw(s, kVars);
#define SPMD_RUN(T, N)                                                                                       \
    {                                                                                                        \
        INFO("type " #T);                                                                                    \
        wait_family<sync_##N>(reinterpret_cast<T*>(raw.get()));                                              \
    }
        SPMD_SYNC_TYPES(SPMD_RUN)
#undef SPMD_RUN
    });
}

TEST_CASE("test_all/any/some and wait_until_all/any/some on empty sets") {
    spmd::for_each_space([](Space s) {
        spmd::SymArray<std::uint64_t> raw(s, kG);
#define SPMD_RUN(T, N)                                                                                       \
    {                                                                                                        \
        INFO("type " #T);                                                                                    \
        empty_sets<sync_##N>(reinterpret_cast<T*>(raw.get()));                                               \
    }
        SPMD_SYNC_TYPES(SPMD_RUN)
#undef SPMD_RUN
        shmem_barrier_all();
    });
}

// Fairness of the _any forms: with several entries satisfied and no status array, repeated calls
// return each satisfied index in turn (a program that serves the returned entry and calls again
// must not starve the others); entries not satisfied are never returned.
constexpr std::size_t kN = 7;
TEST_CASE("test_any/wait_until_any (and _vector) return every satisfied index in turn") {
    const int to = spmd::right();
    spmd::for_each_space([&](Space s) {
        spmd::SymArray<long> vars(s, kN);
        // A random set of at least two satisfied entries, the same on every PE.
        Gen g(spmd::shared_key());
        std::vector<bool> sat(kN, false);
        std::size_t nsat = 0;
        while (nsat < 2)
            for (std::size_t i = 0; i < kN; ++i)
                if (!sat[i] && g.next() % 2) sat[i] = true, ++nsat;
        for (std::size_t i = 0; i < kN; ++i) vars.store(i, 0);
        shmem_barrier_all();
        for (std::size_t i = 0; i < kN; ++i)
            if (sat[i]) shmem_long_p(vars.at(i), 5, to);
        shmem_barrier_all();
        const std::vector<long> fives(kN, 5);
        using Call = std::size_t (*)(long*, const long*);
        const std::pair<const char*, Call> forms[] = {
            {"test_any", [](long* v, const long*) { return shmem_long_test_any(v, kN, nullptr, SHMEM_CMP_EQ, 5); }},
            {"test_any_vector",
             [](long* v, const long* c) {
                 return shmem_long_test_any_vector(v, kN, nullptr, SHMEM_CMP_EQ, const_cast<long*>(c));
             }},
            {"wait_until_any",
             [](long* v, const long*) { return shmem_long_wait_until_any(v, kN, nullptr, SHMEM_CMP_EQ, 5); }},
            {"wait_until_any_vector",
             [](long* v, const long* c) {
                 return shmem_long_wait_until_any_vector(v, kN, nullptr, SHMEM_CMP_EQ, const_cast<long*>(c));
             }},
        };
        for (const auto& [name, call] : forms) {
            INFO(name << " over " << nsat << " satisfied entries of " << kN);
            std::set<std::size_t> seen;
            for (std::size_t k = 0; k < nsat; ++k) {
                const std::size_t r = call(vars.get(), fives.data());
                INFO("call " << k << " returned " << r);
                REQUIRE(r < kN);
                REQUIRE(sat[r]);
                seen.insert(r);
            }
            CHECK(seen.size() == nsat);
        }
        shmem_barrier_all();
    });
}

// One PE writes a variable only after another is certainly waiting on it: wait_until must block
// and then see the value, for each comparison.
TEST_CASE("wait_until blocks until a late write arrives") {
    const int n = spmd::npes(), me = spmd::me();
    spmd::for_each_space([&](Space s) {
        spmd::SymArray<long> flags(s, 6);
        for (int round = 0; round < n; ++round) {
            const int sender = round, receiver = (round + 1) % n;
            Gen g(spmd::shared_key());
            std::vector<CmpCase<long>> cases;
            for (int c : kCmps) cases.push_back(make_case(c, sync_threshold<long>(g), g));
            for (std::size_t i = 0; i < 6; ++i) flags.store(i, cases[i].unsat);
            shmem_barrier_all();
            if (me == sender) {
                for (std::size_t i = 0; i < 6; ++i) {
                    if (sender != receiver) std::this_thread::sleep_for(std::chrono::milliseconds(3));
                    shmem_long_atomic_set(flags.at(i), cases[i].sat, receiver);
                }
            }
            if (me == receiver) {
                for (std::size_t i = 0; i < 6; ++i) {
                    INFO("round " << round << ", " << cmp_name(kCmps[i]));
                    shmem_long_wait_until(flags.at(i), kCmps[i], cases[i].value);
                    REQUIRE(flags.load(i) == cases[i].sat);
                }
            }
            shmem_barrier_all();
        }
    });
}

// Many rounds of write-barrier-read with a changing value: a barrier that lets a PE through early
// shows up as a stale value. Slots alternate between two banks so round r+1's writes never land
// on what a slow PE still reads for round r.
TEST_CASE("barrier_all and sync_all: write, synchronize, read, many rounds") {
    const int n = spmd::npes(), me = spmd::me();
    constexpr int kRounds = 100;
    spmd::for_each_space([&](Space s) {
        spmd::SymArray<int> slots(s, 2 * n);
        spmd::SymArray<unsigned char> bulk(s, 2 * 4096 * n);
        spmd::local_write(slots.get(), std::vector<int>(2 * n, -1));
        shmem_barrier_all();
        for (int r = 0; r < kRounds; ++r) {
            const int bank = r % 2;
            const bool use_sync = r % 3 == 2;
            for (int k = 1; k <= n; ++k) {
                const int j = (me + k) % n;
                shmem_int_p(slots.at(bank * n + me), r * 1000 + me, j);
                if (r % 10 == 0) {
                    // A larger nbi put: barrier_all must complete it (sync_all rounds quiet first).
                    std::vector<unsigned char> data(4096, static_cast<unsigned char>(r + me));
                    shmem_putmem_nbi(bulk.get() + (bank * n + me) * 4096, data.data(), data.size(), j);
                }
            }
            if (use_sync) {
                shmem_quiet();
                shmem_sync_all();
            } else {
                shmem_barrier_all();
            }
            const std::vector<int> now = spmd::local_read(slots.at(bank * n), n);
            for (int j = 0; j < n; ++j) {
                INFO("round " << r << " (" << (use_sync ? "quiet + sync_all" : "barrier_all") << "), slot of PE "
                              << j);
                REQUIRE(now[j] == r * 1000 + j);
                if (r % 10 == 0) {
                    std::vector<unsigned char> want(4096, static_cast<unsigned char>(r + j));
                    SPMD_REQUIRE_OK(spmd::diff_sym(bulk.get() + (bank * n + j) * 4096, want.data(), 4096));
                }
            }
        }
        shmem_barrier_all();
    });
}

// Data, then fence, then a flag: the receiver waits for the flag and must see all the data. The
// receiver acknowledges each round to the sender, so rounds pipeline without barriers.
TEST_CASE("fence orders data before the flag; quiet completes puts and nbi gets") {
    const int me = spmd::me(), to = spmd::right(), from = spmd::left();
    constexpr std::size_t kBytes = 64 * 1024;
    constexpr long kRounds = 12;
    spmd::for_each_space([&](Space s) {
        spmd::SymArray<unsigned char> data(s, kBytes);
        spmd::SymArray<long> flag(s, 2); // [0]: data ready (from the left), [1]: ack (from the right)
        spmd::local_write(flag.get(), std::vector<long>{0, 0});
        const std::uint64_t key = spmd::shared_key();
        std::vector<unsigned char> src(kBytes), want(kBytes);
        shmem_barrier_all();
        for (long r = 1; r <= kRounds; ++r) {
            // Sender half: wait until the right neighbour consumed round r-1, then send round r.
            shmem_long_wait_until(flag.at(1), SHMEM_CMP_GE, r - 1);
            spmd::fill_bytes(src.data(), kBytes, Gen(key, me, r));
            const int mode = static_cast<int>(r % 4);
            switch (mode) {
            case 0: shmem_putmem(data.get(), src.data(), kBytes, to); break;
            case 1: shmem_putmem_nbi(data.get(), src.data(), kBytes, to); break;
            case 2: shmem_long_put_nbi(reinterpret_cast<long*>(data.get()), reinterpret_cast<long*>(src.data()),
                                       kBytes / sizeof(long), to); break;
            case 3:
                shmem_putmem_nbi(data.get(), src.data(), kBytes / 2, to);
                shmem_putmem(data.get() + kBytes / 2, src.data() + kBytes / 2, kBytes / 2, to);
                break;
            }
            if (r % 2) {
                shmem_fence();
                shmem_long_p(flag.at(0), r, to);
            } else {
                shmem_quiet();
                shmem_long_atomic_set(flag.at(0), r, to);
            }
            // Receiver half.
            shmem_long_wait_until(flag.at(0), SHMEM_CMP_EQ, r);
            spmd::fill_bytes(want.data(), kBytes, Gen(key, from, r));
            INFO("round " << r << ": data put (mode " << mode << ") before the flag, "
                          << (r % 2 ? "fence + p" : "quiet + atomic_set"));
            SPMD_REQUIRE_OK(spmd::diff_sym(data.get(), want.data(), kBytes));
            shmem_long_atomic_set(flag.at(1), r, from);
        }
        shmem_long_wait_until(flag.at(1), SHMEM_CMP_EQ, kRounds);
        shmem_barrier_all();

        // quiet completes nbi gets: read the right neighbour's data without a barrier.
        spmd::local_fill_bytes(data.get(), kBytes, Gen(key, me, 99));
        shmem_barrier_all();
        std::vector<unsigned char> got(kBytes, spmd::poison_byte());
        shmem_getmem_nbi(got.data(), data.get(), kBytes, to);
        shmem_quiet();
        spmd::fill_bytes(want.data(), kBytes, Gen(key, to, 99));
        INFO("getmem_nbi after shmem_quiet");
        SPMD_REQUIRE_OK(spmd::diff_bytes(got.data(), want.data(), kBytes));
        shmem_barrier_all();
    });
}

} // namespace
