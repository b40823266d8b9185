// SPDX-License-Identifier: BSL-1.0
// Device-side teams and collectives (shaders/vkshmem_coll.glsl), one workgroup per PE, all PEs'
// kernels at once: barrier/sync rounds on SHMEM_TEAM_WORLD and a split team (thread and _wg
// forms, team queries), back-to-back broadcastmem/collectmem/fcollectmem/alltoallmem with
// changing teams, roots, sizes and alignments (thread and _wg forms), typed data collectives of
// every element size, and every reduction operation on every element kind of the reduction core
// (int, uint, long, ulong, float, double; thread and _wg forms, in place too, more elements than
// one pass of the team's scratch area holds). Every typed routine is compile-checked
// (gen_all_calls.py); at run time one type per element size or kind keeps the kernels small. Exact checks with fresh random data and poisoned
// destinations, on the host heap and the device heap; run directly and through the proxy.
#include "shader_test.hpp"
#include "shader_coll_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace shader_test;
using spmd::Gen;
using spmd::Space;

constexpr Space kSpaces[] = {Space::Host, Space::Device};

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
void run_together(const Kernel& k, const Push& p, bool take_part = true) {
    shmem_barrier_all();
    if (take_part) CHECK(k.run(1, p) == 0);
    shmem_barrier_all();
}

// Runs records (one per collective of the sequence, absent where this PE is not in its team) in
// order, all PEs at once, several per dispatch. On lavapipe a dispatch's loops, device-side waits
// included, share one budget of about 60,000 iterations, some 100 ms of waiting (shaders/README.md,
// "Limits"): there a dispatch takes 4 collectives, and only one where PEs outnumber CPUs (each
// PE's waits spin while the others are descheduled) or the network carries every operation
// (a sync over TCP takes milliseconds). Collective.
void run_records(const Kernel& k, const std::vector<std::optional<Rec>>& all) {
    const char* net = std::getenv("VKSHMEM_FORCE_NETWORK");
    const bool slow = sysconf(_SC_NPROCESSORS_ONLN) < spmd::npes() || (net && std::strcmp(net, "1") == 0);
    const std::size_t group = !loop_budget_applies() ? all.size() : slow ? 1 : 4;
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
bool skip_here() {
    const char* why = why_not_concurrent();
    if (!why || !on_gpu()) return false;
    report("skipped the in-kernel collectives: %s", why);
    return true;
}

// lavapipe compiles a pipeline at its first dispatch (up to a minute with a cold shader cache),
// longer than other PEs' device-side waits last: every kernel is dispatched once without work
// first.
std::unique_ptr<Kernel> warm(const std::string& name) {
    auto k = std::make_unique<Kernel>(kernel_spv(name));
    Records none(1);
    Push p;
    p.recs = none.address();
    p.count = 0;
    CHECK(k->run(1, p) == 0);
    shmem_barrier_all();
    return k;
}

TEST_CASE("device barrier and sync rounds on SHMEM_TEAM_WORLD and a split team", "[sync]") {
    if (skip_here()) return;
    const auto kp = warm("coll_sync_0");
    const Kernel& k = *kp;
    const Teams teams;
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        static const char* const kModes[] = {"shmem_barrier_all_wg", "shmem_barrier_all",  "shmem_team_sync_wg",
                                             "shmem_team_sync",      "shmem_sync_all_wg", "shmem_sync_all"};
        for (std::uint32_t mode = 0; mode < 6; ++mode) {
            INFO("mode: " << kModes[mode]);
            const bool on_split = mode == 2 || mode == 3;
            const TestTeam& t = on_split ? teams.split : teams.world;
            // box: one slot per member, then the mismatch count
            spmd::SymArray<std::uint64_t> box(s, 65);
            box.poison();
            box.store(64, 0);
            Push p;
            p.arg0 = dev(box.get());
            p.arg1 = teams.split.dev;
            p.count = 5;
            p.mode = mode;
            const auto t0 = std::chrono::steady_clock::now();
            run_together(k, p, t.me >= 0);
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            CHECK(box.load(64) == 0);
            report("%s: 5 rounds of p to every member + 2 x %s at %d PEs: %.2f ms", spmd::name(s), kModes[mode],
                   static_cast<int>(t.members.size()), ms);
        }
    }
}

// ---- Data collectives ---------------------------------------------------------------------------
enum Op : std::uint32_t { kBroadcast = 0, kCollect = 1, kFcollect = 2, kAlltoall = 3 };
constexpr const char* kOpName[] = {"broadcast", "collect", "fcollect", "alltoall"};

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
std::vector<unsigned char> source_of(std::uint64_t key, std::size_t i, int pe, std::size_t bytes) {
    std::vector<unsigned char> v(bytes);
    spmd::fill_bytes(v.data(), bytes, Gen(key, i, static_cast<std::uint64_t>(pe)));
    return v;
}

// Runs the records on every PE at once (one dispatch of `kernel`) in space s and checks every
// destination of this PE.
void run_xfers(const Kernel& k, Space s, const Teams& teams, const std::vector<XferSpec>& specs) {
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
XferSpec random_spec(Op op, std::size_t elem, std::size_t most, const Teams& teams, bool wg) {
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

TEST_CASE("broadcastmem, collectmem, fcollectmem, alltoallmem back to back", "[mem]") {
    if (skip_here()) return;
    const Teams teams;
    for (bool wg : {false, true}) {
        const auto kp = warm(wg ? "coll_mem_1" : "coll_mem_0");
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s) << (wg ? ", _wg forms" : ", thread forms"));
            std::vector<XferSpec> specs;
            for (int rep = 0; rep < 3; ++rep)
                for (Op op : {kBroadcast, kCollect, kFcollect, kAlltoall})
                    specs.push_back(random_spec(op, 1, rep == 2 ? 9000 : 700, teams, wg));
            std::shuffle(specs.begin(), specs.end(), spmd::shared_rng());
            run_xfers(*kp, s, teams, specs);
        }
    }
}

TEST_CASE("typed broadcast, collect, fcollect, alltoall", "[typed]") {
    if (skip_here()) return;
    const Teams teams;
    // coll.glsl's TYPED kernels: the element size of each operation's type, and its form.
    static const std::size_t kElem[2][4] = {{sizeof(short), sizeof(int), sizeof(long), sizeof(float)},
                                            {sizeof(char), sizeof(double), sizeof(std::uint64_t), sizeof(std::int16_t)}};
    static const bool kWg[2][4] = {{false, true, false, true}, {true, false, true, false}};
    for (int c = 0; c < 2; ++c) {
        const auto kp = warm("coll_typed_" + std::to_string(c));
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s) << ", kernel " << c);
            std::vector<XferSpec> specs;
            for (int rep = 0; rep < 2; ++rep)
                for (Op op : {kBroadcast, kCollect, kFcollect, kAlltoall})
                    specs.push_back(random_spec(op, kElem[c][op], 300, teams, kWg[c][op]));
            std::shuffle(specs.begin(), specs.end(), spmd::shared_rng());
            run_xfers(*kp, s, teams, specs);
        }
    }
}

// ---- Reductions ------------------------------------------------------------------------------------
// The tables of coll.glsl (RED_BIT, RED_ALL): one type per element kind of the reduction core.
constexpr TypeInfo kRedBit[] = {
    {"uint", 4, false, false}, {"ulong", 8, false, false}, {"int32", 4, true, false}, {"int64", 8, true, false}};
constexpr TypeInfo kRedAll[] = {
    {"int", 4, true, false},   {"uint", 4, false, false}, {"long", 8, true, false},
    {"ulong", 8, false, false}, {"float", 4, true, true},  {"double", 8, true, true},
};
enum RedOp { kAnd, kOr, kXor, kMax, kMin, kSum, kProd };
constexpr const char* kRedName[] = {"and", "or", "xor", "max", "min", "sum", "prod"};

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
std::uint64_t combine(const TypeInfo& t, std::uint64_t a, std::uint64_t b, RedOp op) {
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

TEST_CASE("every reduction of every type", "[reduce]") {
    if (skip_here()) return;
    const Teams teams;
    const int n = spmd::npes();
    for (int op = 0; op < 7; ++op) {
        const auto kp = warm("coll_red_" + std::to_string(op));
        const Kernel& k = *kp;
        const bool bitwise = op <= kXor;
        const TypeInfo* types = bitwise ? kRedBit : kRedAll;
        const std::size_t ntypes = bitwise ? std::size(kRedBit) : std::size(kRedAll);
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s) << ", " << kRedName[op] << "_reduce");
            struct One {
                std::size_t type, count;
                int team;
                bool wg, in_place;
            };
            std::vector<One> ones;
            for (int rep = 0; rep < 2; ++rep)
                for (std::size_t t = 0; t < ntypes; ++t) {
                    // Now and then more elements than one pass of the scratch area takes (16 KiB
                    // over the members). The form is the kernel's (coll.glsl).
                    const std::size_t most = spmd::shared_range(0, 2) == 0 ? 3000 : 200;
                    ones.push_back({t, spmd::shared_range(1, most), static_cast<int>(spmd::shared_range(0, 1)),
                                    ((op + static_cast<int>(t)) & 1) == 1, spmd::shared_range(0, 3) == 0});
                }
            const std::size_t region = 3000 * 8 + 64, N = ones.size();
            spmd::SymArray<unsigned char> dst(s, region * N), src(s, region * N);
            spmd::SymArray<std::uint32_t> rcs(Space::Host, N);
            const std::uint64_t key = spmd::shared_key();
            dst.poison();
            std::vector<std::optional<Rec>> recs(N);
            auto values = [&](std::size_t i, int pe) {
                const One& o = ones[i];
                std::vector<std::uint64_t> v(o.count);
                Gen g(key, i, static_cast<std::uint64_t>(pe));
                for (auto& x : v) x = random_bits(types[o.type], g);
                return v;
            };
            for (std::size_t i = 0; i < N; ++i) {
                const One& o = ones[i];
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
                const One& o = ones[i];
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
                    for (std::size_t e = 0; e < o.count; ++e) acc[e] = combine(ti, acc[e], v[e], static_cast<RedOp>(op));
                }
                std::vector<unsigned char> expect(o.count * ti.size);
                for (std::size_t e = 0; e < o.count; ++e) std::memcpy(expect.data() + e * ti.size, &acc[e], ti.size);
                const unsigned char* at = dst.get() + i * region;
                SPMD_REQUIRE_OK(spmd::diff_sym(at, expect.data(), expect.size()));
                if (!o.in_place)
                    SPMD_REQUIRE_OK(spmd::check_poison_sym(at, expect.size(), region, spmd::poison_byte()));
            }
        }
    }
}

} // namespace
