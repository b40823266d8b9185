// SPDX-License-Identifier: BSL-1.0
// Communication contexts (OpenSHMEM 1.6 §9.5): creation and options, ctx_get_team, the context
// forms of RMA, AMO, signal and ordering routines with PEs numbered in the context's team, and
// threads that each drive their own private context at once (SHMEM_THREAD_MULTIPLE).
#include "spmd.hpp"

#include <atomic>
#include <thread>

using spmd::Gen;
using spmd::Space;

namespace {

[[maybe_unused]] const bool kThreads = [] {
    spmd::init_config().requested_thread_level = SHMEM_THREAD_MULTIPLE;
    return true;
}();

constexpr Space kSpaces[] = {Space::Host, Space::Device};

TEST_CASE("contexts: create, options, get_team, destroy", "[ctx]") {
    shmem_team_t team = SHMEM_TEAM_INVALID;
    REQUIRE(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &team) == 0);
    REQUIRE(team == SHMEM_TEAM_WORLD);
    REQUIRE(shmem_ctx_get_team(SHMEM_CTX_INVALID, &team) != 0);
    REQUIRE(team == SHMEM_TEAM_INVALID);
    for (long options : {0L, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED, SHMEM_CTX_NOSTORE,
                         SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE}) {
        shmem_ctx_t ctx = SHMEM_CTX_INVALID;
        REQUIRE(shmem_ctx_create(options, &ctx) == 0);
        REQUIRE(ctx != SHMEM_CTX_INVALID);
        REQUIRE(shmem_ctx_get_team(ctx, &team) == 0);
        REQUIRE(team == SHMEM_TEAM_WORLD);
        // A session around a batch of puts: a hint, so the puts complete as without one.
        static long box[8];
        const long base = static_cast<long>(spmd::shared_range(1, 1 << 20)) * 16;
        const shmem_ctx_session_config_t cfg = {8};
        shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, &cfg, SHMEM_CTX_SESSION_TOTAL_OPS);
        for (int i = 0; i < 8; ++i) shmem_ctx_long_p(ctx, &box[i], base + i, spmd::right());
        shmem_ctx_session_stop(ctx);
        shmem_ctx_quiet(ctx);
        shmem_session_start(ctx, SHMEM_SESSION_SAME_AMO, nullptr, 0); // the draft names
        shmem_session_stop(ctx);
        shmem_ctx_session_start(SHMEM_CTX_INVALID, 0, nullptr, 0);
        shmem_ctx_session_stop(SHMEM_CTX_INVALID);
        shmem_barrier_all();
        for (int i = 0; i < 8; ++i) REQUIRE(spmd::local_get(&box[i]) == base + i);
        shmem_barrier_all();
        shmem_ctx_destroy(ctx);
    }
    shmem_ctx_t bad = SHMEM_CTX_DEFAULT;
    REQUIRE(shmem_ctx_create(1L << 20, &bad) != 0); // no such option
    REQUIRE(bad == SHMEM_CTX_INVALID);
    REQUIRE(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &bad) != 0);
    REQUIRE(bad == SHMEM_CTX_INVALID);
    shmem_ctx_destroy(SHMEM_CTX_INVALID); // does nothing
    shmem_ctx_t shared;
    REQUIRE(shmem_team_create_ctx(SHMEM_TEAM_SHARED, 0, &shared) == 0);
    REQUIRE(shmem_ctx_get_team(shared, &team) == 0);
    REQUIRE(team == SHMEM_TEAM_SHARED);
    shmem_ctx_destroy(shared);
}

TEST_CASE("context routines number PEs in the context's team", "[ctx]") {
    // The team of PEs n-1, n-2, ..., 0 (stride -1): team PE k is world PE n-1-k.
    const int n = spmd::npes(), me = spmd::me();
    shmem_team_t rev;
    REQUIRE(shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, nullptr, 0, &rev) == 0);
    shmem_ctx_t ctx;
    REQUIRE(shmem_team_create_ctx(rev, SHMEM_CTX_SERIALIZED, &ctx) == 0);
    shmem_team_t got;
    REQUIRE(shmem_ctx_get_team(ctx, &got) == 0);
    REQUIRE(got == rev);
    const int right_world = (me + 1) % n;
    const int right_in_team = n - 1 - right_world;
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        const std::size_t count = spmd::shared_range(1, 5000);
        const auto key = spmd::shared_key();
        spmd::SymArray<long> data(s, count), strided(s, 2 * count), cells(s, 4);
        spmd::SymArray<uint64_t> sig(s, 1);
        data.poison();
        strided.poison();
        cells.store(0, 0), cells.store(1, 0), cells.store(2, 0), cells.store(3, 0);
        sig.store(0, 0);
        shmem_barrier_all();
        auto mine = spmd::make_values<long>(count, Gen(key, static_cast<std::uint64_t>(me)));
        // put_signal to the right neighbour, through its team number.
        shmem_ctx_long_put_signal(ctx, data.get(), mine.data(), count, sig.get(), 1, SHMEM_SIGNAL_ADD, right_in_team);
        // iput into every other element; p, atomics on the neighbour's cells.
        shmem_ctx_long_iput(ctx, strided.get(), mine.data(), 2, 1, count, right_in_team);
        shmem_ctx_long_p(ctx, cells.at(0), mine[0], right_in_team);
        shmem_ctx_long_atomic_add(ctx, cells.at(1), me + 1, right_in_team);
        long old = shmem_ctx_long_atomic_fetch_inc(ctx, cells.at(2), right_in_team);
        CHECK(old >= 0);
        shmem_ctx_uint64_atomic_set(ctx, reinterpret_cast<uint64_t*>(cells.at(3)), 77, right_in_team);
        shmem_ctx_quiet(ctx);
        shmem_uint64_wait_until(sig.get(), SHMEM_CMP_EQ, 1);
        shmem_barrier_all();
        const int left = (me + n - 1) % n;
        auto theirs = spmd::make_values<long>(count, Gen(key, static_cast<std::uint64_t>(left)));
        SPMD_REQUIRE_OK(spmd::diff_sym(data.get(), theirs.data(), count * sizeof(long)));
        auto got_strided = strided.load_all();
        for (std::size_t i = 0; i < count; ++i) REQUIRE(got_strided[2 * i] == theirs[i]);
        REQUIRE(cells.load(0) == theirs[0]);
        REQUIRE(cells.load(1) == left + 1);
        REQUIRE(cells.load(2) == 1);
        REQUIRE(cells.load(3) == 77);
        // get and g through the context read the neighbour's copy.
        std::vector<long> back(count);
        shmem_ctx_long_get(ctx, back.data(), data.get(), count, right_in_team);
        REQUIRE(back == mine);
        REQUIRE(shmem_ctx_long_g(ctx, cells.at(3), right_in_team) == 77);
        REQUIRE(shmem_ctx_long_atomic_fetch(ctx, cells.at(1), right_in_team) == me + 1);
        shmem_barrier_all();
    }
    shmem_ctx_destroy(ctx);
    shmem_team_destroy(rev);
}

TEST_CASE("ctx_fence orders a context's puts: data before its flag", "[ctx]") {
    const int n = spmd::npes(), me = spmd::me();
    shmem_ctx_t ctx;
    REQUIRE(shmem_ctx_create(0, &ctx) == 0);
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        constexpr int kRounds = 50;
        spmd::SymArray<long> data(s, 64), flag(s, 1);
        flag.store(0, 0);
        shmem_barrier_all();
        const int right = (me + 1) % n;
        for (int r = 1; r <= kRounds; ++r) {
            std::vector<long> v(64, me * 1000 + r);
            shmem_ctx_long_put_nbi(ctx, data.get(), v.data(), 64, right);
            shmem_ctx_fence(ctx);
            shmem_ctx_long_atomic_set(ctx, flag.get(), r, right);
            shmem_long_wait_until(flag.get(), SHMEM_CMP_GE, r);
            const int left = (me + n - 1) % n;
            auto got = data.load_all();
            for (long x : got) REQUIRE(x == left * 1000 + r);
            shmem_barrier_all(); // nobody writes the next round before all have checked
        }
    }
    shmem_ctx_destroy(ctx);
}

TEST_CASE("threads each drive a private context at once: puts, atomics, quiet", "[ctx][threads]") {
    constexpr int kThreadsPerPe = 4, kOps = 300;
    const int n = spmd::npes(), me = spmd::me();
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        spmd::SymArray<long> slots(s, static_cast<std::size_t>(n * kThreadsPerPe * kOps)), counter(s, 1);
        slots.poison();
        counter.store(0, 0);
        shmem_barrier_all();
        std::atomic<int> failures{0};
        auto worker = [&](int t) {
            shmem_ctx_t ctx;
            if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
                ++failures;
                return;
            }
            for (int i = 0; i < kOps; ++i) {
                const int pe = (me + i) % n;
                const long v = (static_cast<long>(me) << 32) | (t << 16) | i;
                const std::size_t at = static_cast<std::size_t>((me * kThreadsPerPe + t) * kOps + i);
                shmem_ctx_long_put_nbi(ctx, slots.at(at), &v, 1, pe);
                shmem_ctx_long_atomic_inc(ctx, counter.get(), (me + t) % n);
                if (i % 37 == 0) shmem_ctx_quiet(ctx);
            }
            shmem_ctx_destroy(ctx); // completes its operations
        };
        std::vector<std::thread> pool;
        for (int t = 0; t < kThreadsPerPe; ++t) pool.emplace_back(worker, t);
        for (auto& th : pool) th.join();
        REQUIRE(failures == 0);
        shmem_barrier_all();
        // Slot (p, t, i) was written on PE (p + i) % n; the counters add up to every increment.
        auto got = slots.load_all();
        for (int p = 0; p < n; ++p)
            for (int t = 0; t < kThreadsPerPe; ++t)
                for (int i = 0; i < kOps; ++i) {
                    if ((p + i) % n != me) continue;
                    const std::size_t at = static_cast<std::size_t>((p * kThreadsPerPe + t) * kOps + i);
                    REQUIRE(got[at] == ((static_cast<long>(p) << 32) | (t << 16) | i));
                }
        long total = 0;
        for (int pe = 0; pe < n; ++pe) total += shmem_long_g(counter.get(), pe);
        REQUIRE(total == static_cast<long>(n) * kThreadsPerPe * kOps);
        shmem_barrier_all();
    }
}

TEST_CASE("ctx_pe_quiet takes PEs of the context's team", "[ctx]") {
    const int n = spmd::npes(), me = spmd::me();
    shmem_ctx_t ctx;
    REQUIRE(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &ctx) == 0);
    long* box = static_cast<long*>(shmem_calloc(static_cast<std::size_t>(n), sizeof(long)));
    for (int pe = 0; pe < n; ++pe) shmem_ctx_long_p(ctx, box + me, me + 100, pe);
    std::vector<int> all(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
    shmem_ctx_pe_quiet(ctx, all.data(), all.size());
    shmem_ctx_pe_quiet(ctx, nullptr, 0);
    shmem_barrier_all();
    for (int pe = 0; pe < n; ++pe) REQUIRE(box[pe] == pe + 100);
    shmem_barrier_all();
    shmem_free(box);
    shmem_ctx_destroy(ctx);
}

// The specification's team-context example (§9.5.1): PEs outside a team get SHMEM_CTX_INVALID from
// shmem_team_create_ctx and still call fence and quiet on it, which must do nothing.
TEST_CASE("fence, quiet and pe_quiet on SHMEM_CTX_INVALID do nothing", "[ctx]") {
    const int n = spmd::npes(), me = spmd::me();
    shmem_team_t evens = SHMEM_TEAM_INVALID;
    REQUIRE(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, nullptr, 0, &evens) == 0);
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    const int rc = shmem_team_create_ctx(evens, 0, &ctx);
    CHECK((rc == 0) == (me % 2 == 0));
    CHECK((ctx == SHMEM_CTX_INVALID) == (me % 2 == 1));
    static long box;
    box = 0;
    shmem_barrier_all();
    if (ctx != SHMEM_CTX_INVALID) shmem_ctx_long_p(ctx, &box, me + 1, 0); // team PE 0 is world PE 0
    const int pes[] = {0};
    shmem_ctx_fence(ctx);
    shmem_ctx_quiet(ctx);
    shmem_ctx_pe_quiet(ctx, pes, 1);
    shmem_ctx_fence(SHMEM_CTX_INVALID);
    shmem_ctx_quiet(SHMEM_CTX_INVALID);
    shmem_ctx_pe_quiet(SHMEM_CTX_INVALID, nullptr, 0);
    shmem_barrier_all();
    if (me == 0) CHECK(spmd::local_get(&box) >= 1);
    shmem_barrier_all();
    shmem_ctx_destroy(ctx);
    shmem_team_destroy(evens);
}

} // namespace

namespace {

TEST_CASE("C++ overloads of the generic interfaces, with and without a context", "[ctx][cxx]") {
    const int n = spmd::npes(), me = spmd::me();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    shmem_ctx_t ctx;
    REQUIRE(shmem_ctx_create(0, &ctx) == 0);
    double* d = static_cast<double*>(shmem_calloc(4, sizeof(double)));
    int* i = static_cast<int*>(shmem_calloc(4, sizeof(int)));
    long* sum = static_cast<long*>(shmem_calloc(2, sizeof(long)));
    const double dv[2] = {me + 0.25, me + 0.75};
    shmem_put(d, dv, 2, right);
    shmem_put(ctx, d + 2, dv, 2, right);
    shmem_p(i, me * 3, right);
    shmem_p(ctx, i + 1, me * 5, right);
    shmem_atomic_add(ctx, i + 2, me + 1, right);
    (void)shmem_atomic_fetch_add(i + 3, 2, right);
    shmem_quiet();
    shmem_barrier_all();
    REQUIRE(d[0] == left + 0.25);
    REQUIRE(d[1] == left + 0.75);
    REQUIRE(d[2] == left + 0.25);
    REQUIRE(d[3] == left + 0.75);
    REQUIRE(i[0] == left * 3);
    REQUIRE(i[1] == left * 5);
    REQUIRE(i[2] == left + 1);
    REQUIRE(i[3] == 2);
    REQUIRE(shmem_g(ctx, i, right) == me * 3);
    long one[2] = {me, 1};
    long* src = static_cast<long*>(shmem_malloc(2 * sizeof(long)));
    src[0] = one[0], src[1] = one[1];
    shmem_barrier_all();
    REQUIRE(shmem_sum_reduce(SHMEM_TEAM_WORLD, sum, src, 2) == 0);
    REQUIRE(sum[0] == static_cast<long>(n) * (n - 1) / 2);
    REQUIRE(sum[1] == n);
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(sum);
    shmem_free(i);
    shmem_free(d);
    shmem_ctx_destroy(ctx);
}

} // namespace
