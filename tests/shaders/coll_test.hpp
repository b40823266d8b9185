// SPDX-License-Identifier: BSL-1.0
// Helpers of the device collective tests, GLSL (test_coll.cpp) and HLSL (test_hlsl_coll.cpp), whose
// kernels take the same records: the tests' teams, dispatches of every PE at once (several
// collectives per dispatch where the loop budget allows), barrier/sync rounds, data collective
// records with their exact checks, and reductions with their host model. Include it after the
// program's <target>_kernels.hpp: warm() finds kernels by name there.
#pragma once

#include "shader_test.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace coll_test {

using namespace shader_test;
using spmd::Gen;
using spmd::Space;

inline constexpr Space kSpaces[] = {Space::Host, Space::Device};

// A team of the test: its host handle, its device handle, and its members (world PEs).
struct TestTeam {
    shmem_team_t host = SHMEM_TEAM_INVALID;
    std::uint64_t dev = 0;
    std::vector<int> members;
    int me = -1; // this PE's index, or -1
    int index_of(int pe) const {
        auto it = std::find(members.begin(), members.end(), pe);
        return it == members.end() ? -1 : static_cast<int>(it - members.begin());
    }
};

// SHMEM_TEAM_WORLD, and PEs 1 .. n-1 (PE 0 alone at 1 PE) split from it. Collective.
struct Teams {
    TestTeam world, split;
    Teams() {
        const int n = spmd::npes();
        world.host = SHMEM_TEAM_WORLD;
        world.dev = vkshmemx_team_device(SHMEM_TEAM_WORLD);
        REQUIRE(world.dev != 0);
        for (int pe = 0; pe < n; ++pe) world.members.push_back(pe);
        world.me = spmd::me();
        const int first = n > 1 ? 1 : 0;
        REQUIRE(shmem_team_split_strided(SHMEM_TEAM_WORLD, first, 1, n - first, nullptr, 0, &split.host) == 0);
        for (int pe = first; pe < n; ++pe) split.members.push_back(pe);
        split.me = split.index_of(spmd::me());
        split.dev = vkshmemx_team_device(split.host);
        CHECK((split.dev != 0) == (split.me >= 0));
    }
    ~Teams() {
        if (split.host != SHMEM_TEAM_INVALID) shmem_team_destroy(split.host);
    }
    const TestTeam& operator[](int i) const { return i == 0 ? world : split; }
};

// Dispatches one workgroup of `k` on every PE at once (after a host barrier); PEs that are not
// in the dispatch's teams pass `take_part` false and only meet the barriers.
inline void run_together(const Kernel& k, const Push& p, bool take_part = true) {
    shmem_barrier_all();
    if (take_part) CHECK(k.run(1, p) == 0);
    shmem_barrier_all();
}

// On lavapipe a dispatch's loops, device-side waits included, share one budget of about 60,000
// iterations, some 100 ms of waiting (shaders/README.md, "Limits"). Waits are slow where PEs
// outnumber CPUs (each PE's waits spin while the others are descheduled) or the network carries
// every operation (a sync over TCP takes milliseconds): there tests give a dispatch less to do.
inline bool waits_are_slow() {
    const char* net = std::getenv("VKSHMEM_FORCE_NETWORK");
    return sysconf(_SC_NPROCESSORS_ONLN) < spmd::npes() || (net && std::strcmp(net, "1") == 0);
}
// The most elements of a reduction that takes several passes of the scratch area (16 KiB over
// the members, so 256 to 2048 elements a pass): each pass is a team sync, and where waits are slow
// a dozen of them in one dispatch could spend lavapipe's loop budget (a CI run at 3 PEs on 2 CPUs
// did). There 1000 elements still take 2 to 4 passes of 8-byte types.
inline std::size_t reduce_most_multipass() { return loop_budget_applies() && waits_are_slow() ? 1000 : 3000; }
// Runs records (one per collective of the sequence, absent where this PE is not in its team) in
// order, all PEs at once, several per dispatch: 4 on lavapipe, one where waits are slow.
// Collective.
inline void run_records(const Kernel& k, const std::vector<std::optional<Rec>>& all) {
    const std::size_t group = !loop_budget_applies() ? all.size() : waits_are_slow() ? 1 : 4;
    Records recs(std::max<std::size_t>(all.size(), 1));
    for (std::size_t g = 0; g < all.size(); g += group) {
        std::uint32_t mine = 0;
        for (std::size_t i = g; i < std::min(all.size(), g + group); ++i)
            if (all[i]) recs[mine++] = *all[i];
        Push p;
        p.recs = recs.address();
        p.count = mine;
        run_together(k, p, mine > 0);
    }
}

// In-kernel collectives wait for the other members' running kernels: PEs that share a GPU do not
// run theirs at once (the driver time-slices processes), so there these cases are skipped (the
// queue-ordered ones, shader_cmd, cover those PEs). On lavapipe they run at every PE count.
// Collective.
inline bool skip_here() {
    const char* why = why_not_concurrent();
    if (!why || !on_gpu()) return false;
    report("skipped the in-kernel collectives: %s", why);
    return true;
}

// lavapipe compiles a pipeline at its first dispatch (up to a minute with a cold shader cache),
// longer than other PEs' device-side waits last: every kernel is dispatched once without work
// first.
inline std::unique_ptr<Kernel> warm(const std::string& name) {
    auto k = std::make_unique<Kernel>(kernel_spv(name));
    Records none(1);
    Push p;
    p.recs = none.address();
    p.count = 0;
    CHECK(k->run(1, p) == 0);
    shmem_barrier_all();
    return k;
}

// ---- Barrier and sync rounds ----------------------------------------------------------------------
// The modes of the SYNC kernels (coll.glsl, hlsl_coll.hlsl): the routine each round meets with.
inline constexpr const char* kSyncModes[] = {"shmem_barrier_all_wg", "shmem_barrier_all",  "shmem_team_sync_wg",
                                             "shmem_team_sync",      "shmem_sync_all_wg", "shmem_sync_all"};

// Runs `rounds` rounds of a SYNC kernel in `mode` on every PE at once (modes 2 and 3 on the split
// team, the others on the world), with the box in space s, and checks that no member saw a stale
// value: in one dispatch, or one dispatch per round where lavapipe's waits are slow (the box is
// poisoned again before each). Collective.
inline void run_sync_rounds(const Kernel& k, Space s, const Teams& teams, std::uint32_t mode, std::uint32_t rounds) {
    INFO("mode: " << kSyncModes[mode]);
    const bool on_split = mode == 2 || mode == 3;
    const TestTeam& t = on_split ? teams.split : teams.world;
    const std::uint32_t per_dispatch = loop_budget_applies() && waits_are_slow() ? 1 : rounds;
    // box: one slot per member, then the mismatch count
    spmd::SymArray<std::uint64_t> box(s, 65);
    Push p;
    p.arg0 = dev(box.get());
    p.arg1 = teams.split.dev;
    p.count = per_dispatch;
    p.mode = mode;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::uint32_t done = 0; done < rounds; done += per_dispatch) {
        box.poison();
        box.store(64, 0);
        run_together(k, p, t.me >= 0);
        CHECK(box.load(64) == 0);
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    report("%s: %u rounds (%u per dispatch) of p to every member + 2 x %s at %d PEs: %.2f ms", spmd::name(s), rounds,
           per_dispatch, kSyncModes[mode], static_cast<int>(t.members.size()), ms);
}

// ---- Data collectives ---------------------------------------------------------------------------
enum Op : std::uint32_t { kBroadcast = 0, kCollect = 1, kFcollect = 2, kAlltoall = 3 };
inline constexpr const char* kOpName[] = {"broadcast", "collect", "fcollect", "alltoall"};

// One collective of a dispatch, the same on every PE (but `bytes` of collect, which is per member).
struct XferSpec {
    Op op;
    int team;   // 0 world, 1 split
    bool wg;
    int root;   // broadcast: a member index
    std::size_t elem;        // element size (1 for the mem forms)
    std::uint32_t type;      // TYPED: the type index
    std::vector<std::size_t> count; // elements per member (all equal but for collect)
    std::size_t doff, soff;  // byte offsets of dest and source in the record's regions
};

// The source bytes of member `pe` for record i.
inline std::vector<unsigned char> source_of(std::uint64_t key, std::size_t i, int pe, std::size_t bytes) {
    std::vector<unsigned char> v(bytes);
    spmd::fill_bytes(v.data(), bytes, Gen(key, i, static_cast<std::uint64_t>(pe)));
    return v;
}

// Runs the records on every PE at once (one dispatch of `kernel`) in space s and checks every
// destination of this PE.
inline void run_xfers(const Kernel& k, Space s, const Teams& teams, const std::vector<XferSpec>& specs) {
    const int n = spmd::npes();
    std::size_t region = 16;
    for (const XferSpec& x : specs) {
        std::size_t most = 0;
        for (std::size_t c : x.count) most = std::max(most, c * x.elem);
        // the offsets (up to 3 elements) and room to see a write past the end
        region = std::max(region, (most * static_cast<std::size_t>(n) + 4 * x.elem + 16 + 15) / 16 * 16);
    }
    const std::size_t N = specs.size();
    spmd::SymArray<unsigned char> dst(s, region * N), src(s, region * N);
    spmd::SymArray<std::uint32_t> rcs(Space::Host, N);
    const std::uint64_t key = spmd::shared_key();
    dst.poison();
    std::vector<std::optional<Rec>> recs(N);
    for (std::size_t i = 0; i < N; ++i) {
        const XferSpec& x = specs[i];
        const TestTeam& t = teams[x.team];
        rcs.store(i, 0xdeadu);
        if (t.me < 0) continue;
        const std::size_t my_bytes = x.count[static_cast<std::size_t>(t.me)] * x.elem;
        const std::size_t src_bytes = x.op == kAlltoall ? my_bytes * t.members.size() : my_bytes;
        spmd::local_store(src.get() + i * region + x.soff, source_of(key, i, spmd::me(), src_bytes).data(),
                          src_bytes);
        Rec& r = recs[i].emplace();
        r.op = x.op;
        r.type = x.type;
        r.pe = x.root;
        r.flags = x.wg ? 1 : 0;
        r.dst = dev(dst.get() + i * region + x.doff);
        r.src = dev(src.get() + i * region + x.soff);
        r.n = x.count[static_cast<std::size_t>(t.me)];
        r.a = t.dev;
        r.c = dev(rcs.get() + i);
    }
    run_records(k, recs);
    for (std::size_t i = 0; i < N; ++i) {
        const XferSpec& x = specs[i];
        const TestTeam& t = teams[x.team];
        INFO("record " << i << ": " << kOpName[x.op] << (x.wg ? " (_wg)" : "") << " on "
                       << (x.team ? "the split team" : "SHMEM_TEAM_WORLD") << ", element " << x.elem << " bytes, root "
                       << x.root);
        if (t.me < 0) continue;
        CHECK(rcs.load(i) == 0);
        std::vector<unsigned char> expect;
        const std::size_t m = t.members.size();
        for (std::size_t j = 0; j < m; ++j) {
            const int pe = t.members[j];
            const std::size_t b = x.count[j] * x.elem;
            if (x.op == kBroadcast) {
                if (static_cast<int>(j) == x.root) expect = source_of(key, i, pe, b);
            } else if (x.op == kAlltoall) {
                const auto all = source_of(key, i, pe, b * m);
                const auto* blk = all.data() + static_cast<std::size_t>(t.me) * b;
                expect.insert(expect.end(), blk, blk + b);
            } else {
                const auto v = source_of(key, i, pe, b);
                expect.insert(expect.end(), v.begin(), v.end());
            }
        }
        const unsigned char* at = dst.get() + i * region;
        SPMD_REQUIRE_OK(spmd::diff_sym(at + x.doff, expect.data(), expect.size()));
        SPMD_REQUIRE_OK(spmd::check_poison_sym(at, 0, x.doff, spmd::poison_byte()));
        SPMD_REQUIRE_OK(spmd::check_poison_sym(at, x.doff + expect.size(), region, spmd::poison_byte()));
    }
}

// A random spec of `op` on a random team (elements of `elem` bytes, at most `most` per member).
inline XferSpec random_spec(Op op, std::size_t elem, std::size_t most, const Teams& teams, bool wg) {
    XferSpec x;
    x.op = op;
    x.team = static_cast<int>(spmd::shared_range(0, 1));
    x.wg = wg;
    const std::size_t m = teams[x.team].members.size();
    x.root = static_cast<int>(spmd::shared_range(0, m - 1));
    x.elem = elem;
    x.type = 0;
    const std::size_t c = spmd::shared_range(1, most);
    for (std::size_t j = 0; j < m; ++j) x.count.push_back(op == kCollect ? spmd::shared_range(0, most) : c);
    x.doff = elem * spmd::shared_range(0, 3);
    x.soff = elem * spmd::shared_range(0, 3);
    return x;
}

// ---- Reductions ------------------------------------------------------------------------------------
enum RedOp { kAnd, kOr, kXor, kMax, kMin, kSum, kProd };
inline constexpr const char* kRedName[] = {"and", "or", "xor", "max", "min", "sum", "prod"};

template <class T> T combine_as(T a, T b, RedOp op) {
    switch (op) {
    case kMax: return b > a ? b : a;
    case kMin: return b < a ? b : a;
    case kSum: return static_cast<T>(a + b);
    case kProd: return static_cast<T>(a * b);
    default: break;
    }
    if constexpr (std::is_integral_v<T>) {
        if (op == kAnd) return a & b;
        if (op == kOr) return a | b;
        return a ^ b;
    }
    return a;
}

// a op b on the bit patterns of type t (in the low bytes).
inline std::uint64_t combine(const TypeInfo& t, std::uint64_t a, std::uint64_t b, RedOp op) {
    auto as = [&](auto zero) {
        using T = decltype(zero);
        T x, y;
        std::memcpy(&x, &a, sizeof(T));
        std::memcpy(&y, &b, sizeof(T));
        // Unsigned arithmetic for sums and products of signed integers: they wrap, as on the device.
        T r;
        if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
            using U = std::make_unsigned_t<T>;
            r = op == kSum || op == kProd ? static_cast<T>(combine_as(static_cast<U>(x), static_cast<U>(y), op))
                                          : combine_as(x, y, op);
        } else {
            r = combine_as(x, y, op);
        }
        std::uint64_t out = 0;
        std::memcpy(&out, &r, sizeof(T));
        return out;
    };
    if (t.is_float) return t.size == 4 ? as(0.0f) : as(0.0);
    if (t.size == 4) return t.is_signed ? as(std::int32_t{}) : as(std::uint32_t{});
    return t.is_signed ? as(std::int64_t{}) : as(std::uint64_t{});
}

// One reduction of a dispatch: `type` indexes the kernel's type table (the record's r.type), `count`
// elements, on team 0 (world) or 1 (split), in the kernel's form for that type (`wg`, for messages),
// in place (source = dest) or not.
struct RedSpec {
    std::size_t type, count;
    int team;
    bool wg, in_place;
};

// Runs the reductions `ones` of operation `op` on every PE at once (dispatches of `k`) in space s
// with fresh random values, and checks every destination of this PE against the host model
// (members combined in member order). Collective.
inline void run_reductions(const Kernel& k, Space s, const Teams& teams, RedOp op, const TypeInfo* types,
                           const std::vector<RedSpec>& ones) {
    const int n = spmd::npes();
    const std::size_t region = 3000 * 8 + 64, N = ones.size();
    spmd::SymArray<unsigned char> dst(s, region * N), src(s, region * N);
    spmd::SymArray<std::uint32_t> rcs(Space::Host, N);
    const std::uint64_t key = spmd::shared_key();
    dst.poison();
    std::vector<std::optional<Rec>> recs(N);
    auto values = [&](std::size_t i, int pe) {
        const RedSpec& o = ones[i];
        std::vector<std::uint64_t> v(o.count);
        Gen g(key, i, static_cast<std::uint64_t>(pe));
        for (auto& x : v) x = random_bits(types[o.type], g);
        return v;
    };
    for (std::size_t i = 0; i < N; ++i) {
        const RedSpec& o = ones[i];
        const TestTeam& t = teams[o.team];
        rcs.store(i, 0xdeadu);
        if (t.me < 0) continue;
        const std::size_t w = types[o.type].size;
        std::vector<unsigned char> bytes(o.count * w);
        const auto v = values(i, spmd::me());
        for (std::size_t e = 0; e < o.count; ++e) std::memcpy(bytes.data() + e * w, &v[e], w);
        unsigned char* sp = (o.in_place ? dst.get() : src.get()) + i * region;
        spmd::local_store(sp, bytes.data(), bytes.size());
        Rec& r = recs[i].emplace();
        r.type = static_cast<std::uint32_t>(o.type);
        r.flags = o.wg ? 1 : 0;
        r.dst = dev(dst.get() + i * region);
        r.src = dev(sp);
        r.n = o.count;
        r.a = t.dev;
        r.c = dev(rcs.get() + i);
    }
    run_records(k, recs);
    for (std::size_t i = 0; i < N; ++i) {
        const RedSpec& o = ones[i];
        const TestTeam& t = teams[o.team];
        const TypeInfo& ti = types[o.type];
        INFO("record " << i << ": shmem_" << ti.name << "_" << kRedName[op] << "_reduce" << (o.wg ? "_wg" : "")
                       << " of " << o.count << " elements on " << (o.team ? "the split team" : "the world")
                       << (o.in_place ? ", in place" : "") << " at " << n << " PEs");
        if (t.me < 0) continue;
        CHECK(rcs.load(i) == 0);
        std::vector<std::uint64_t> acc = values(i, t.members[0]);
        for (std::size_t j = 1; j < t.members.size(); ++j) {
            const auto v = values(i, t.members[j]);
            for (std::size_t e = 0; e < o.count; ++e) acc[e] = combine(ti, acc[e], v[e], op);
        }
        std::vector<unsigned char> expect(o.count * ti.size);
        for (std::size_t e = 0; e < o.count; ++e) std::memcpy(expect.data() + e * ti.size, &acc[e], ti.size);
        const unsigned char* at = dst.get() + i * region;
        SPMD_REQUIRE_OK(spmd::diff_sym(at, expect.data(), expect.size()));
        if (!o.in_place) SPMD_REQUIRE_OK(spmd::check_poison_sym(at, expect.size(), region, spmd::poison_byte()));
    }
}

} // namespace coll_test
