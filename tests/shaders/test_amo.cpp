// SPDX-License-Identifier: BSL-1.0
// Shader atomics: every AMO routine of the GLSL device library for every type of its table
// (extended: fetch, set, swap; standard: compare_swap, fetch_inc, inc, fetch_add, add; bitwise:
// fetch_and/or/xor and and/or/xor), each on its own 8-byte slot of a PE chosen at random (itself
// included), on the host heap and the device heap; old values and new values checked exactly,
// the unused half of a 4-byte type's slot untouched. Then contention: 8 workgroups x 64
// invocations hitting counters on every PE (fetch_add, fetch_inc, add): exact totals and unique
// tickets. Run directly and with VKSHMEM_FORCE_PROXY=1 (then every AMO goes through the proxy).
// On GPUs with private device heaps (VKSHMEM_SHARE_DEVICE_HEAPS=0), atomics on the device heaps of
// other PEs on the same GPU are kept out (shaders/README.md, "Limits").
#include "shader_test.hpp"
#include "shader_amo_kernels.hpp"


#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace {

using namespace shader_test;
using spmd::Gen;
using spmd::Space;

constexpr Space kSpaces[] = {Space::Host, Space::Device};

enum class Kind { Fetch, Set, Swap, CompareSwap, FetchInc, Inc, FetchAdd, Add, FetchAnd, And, FetchOr, Or, FetchXor, Xor };

struct OpInfo {
    std::uint32_t code; // r.op in amo.glsl
    Kind kind;
    bool fetching;
    const char* name;
};

// The new value of a slot (its low `size` bytes) after the operation.
std::uint64_t apply(Kind k, std::uint64_t old, std::uint64_t a, std::uint64_t b, std::size_t size) {
    std::uint64_t v = old;
    switch (k) {
    case Kind::Fetch: break;
    case Kind::Set:
    case Kind::Swap: v = a; break;
    case Kind::CompareSwap: v = old == b ? a : old; break;
    case Kind::FetchInc:
    case Kind::Inc: v = old + 1; break;
    case Kind::FetchAdd:
    case Kind::Add: v = old + a; break;
    case Kind::FetchAnd:
    case Kind::And: v = old & a; break;
    case Kind::FetchOr:
    case Kind::Or: v = old | a; break;
    case Kind::FetchXor:
    case Kind::Xor: v = old ^ a; break;
    }
    return v & low_mask(size);
}

// One dispatch of the kernel of type ti of `table`: per op, `per` records, each on its own slot of
// PE (me + shift) % n_pes.
void run_amo(const Kernel& k, Space s, const TypeInfo* table, std::uint32_t ti, const std::vector<OpInfo>& ops,
             std::size_t per) {
    const TypeInfo& t = table[ti];
    const int n = spmd::npes(), me = spmd::me();
    const std::size_t N = ops.size() * per;
    spmd::SymArray<std::uint64_t> tgt(s, N), res(Space::Host, N);
    Records recs(N);
    const std::uint64_t key = spmd::shared_key();
    auto initial = [&](int pe) {
        std::vector<std::uint64_t> v(N);
        Gen g(key, static_cast<std::uint64_t>(pe));
        for (auto& x : v) x = g.next();
        return v;
    };
    const std::vector<std::uint64_t> mine = initial(me);
    spmd::local_write(tgt.get(), mine);
    res.poison();
    struct Draw {
        int shift;
        std::uint64_t a, b_random;
        bool cas_hits;
    };
    std::vector<Draw> draws(N);
    // With private device heaps (VKSHMEM_SHARE_DEVICE_HEAPS=0) an atomic on another PE's device
    // heap on this GPU waits for that PE's kernel or sweeper, which do not run while this kernel
    // does (shaders/README.md, "Limits"): on GPUs such shifts become 0 (every PE on itself).
    const bool private_heaps = s == Space::Device && device_heaps_unshared();
    for (std::size_t i = 0; i < N; ++i) {
        Gen g(key ^ 0x6f70657261ull, i);
        draws[i] = Draw{static_cast<int>(spmd::shared_range(0, static_cast<std::uint64_t>(n - 1))), random_bits(t, g),
                        random_bits(t, g), spmd::shared_range(0, 1) == 1};
        if (private_heaps && !shift_served(draws[i].shift, [](int, int) { return false; })) draws[i].shift = 0;
    }
    for (std::size_t i = 0; i < N; ++i) {
        const OpInfo& op = ops[i % ops.size()];
        const int target = (me + draws[i].shift) % n;
        const std::uint64_t m = low_mask(t.size);
        const std::uint64_t b = draws[i].cas_hits ? initial(target)[i] & m : draws[i].b_random;
        recs[i] = Rec{op.code, ti, target, 0, dev(tgt.at(i)), 0, 0, draws[i].a, b, dev(res.at(i))};
    }
    shmem_barrier_all();
    Push p;
    p.recs = recs.address();
    p.count = static_cast<std::uint32_t>(N);
    REQUIRE(k.run(static_cast<std::uint32_t>((N + 63) / 64), p) == 0);
    shmem_barrier_all();

    const std::vector<std::uint64_t> now = tgt.load_all();
    std::uint64_t poison;
    std::memset(&poison, spmd::poison_byte(), 8);
    for (std::size_t i = 0; i < N; ++i) {
        const OpInfo& op = ops[i % ops.size()];
        const Draw& d = draws[i];
        const std::uint64_t m = low_mask(t.size);
        INFO("slot " << i << ": shmem_" << t.name << "_atomic_" << op.name << ", operand 0x" << std::hex << d.a
                     << std::dec << ", by PE " << (me - d.shift + n) % n);
        // This PE's slot: changed by the PE whose target it was.
        const std::uint64_t b = d.cas_hits ? mine[i] & m : d.b_random;
        const std::uint64_t expect = (mine[i] & ~m) | apply(op.kind, mine[i] & m, d.a, b, t.size);
        CHECK(now[i] == expect);
        // What this PE's own operation fetched: the old value on its target.
        const int target = (me + d.shift) % n;
        const std::uint64_t fetched = res.get()[i];
        if (op.fetching) {
            CHECK((fetched & m) == (initial(target)[i] & m));
            CHECK((fetched & ~m) == (poison & ~m));
        } else {
            CHECK(fetched == poison);
        }
    }
    shmem_barrier_all();
}

} // namespace

// Every type of a table through its kernel (`kernel`_<index>: one type each, common.glsl), on both
// heaps, each operation 4 times per dispatch.
template <std::size_t NT>
static void run_table(const char* kernel, const TypeInfo (&table)[NT], const std::vector<OpInfo>& ops) {
    for (std::size_t t = 0; t < NT; ++t) {
        const Kernel k(kernel_spv(std::string(kernel) + "_" + std::to_string(t)));
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s));
            run_amo(k, s, table, static_cast<std::uint32_t>(t), ops, 4);
        }
    }
}

TEST_CASE("extended AMOs: fetch, set, swap of every type, both heaps", "[amo]") {
    run_table("amo_ext", kValue,
              {{0, Kind::Fetch, true, "fetch"}, {1, Kind::Set, false, "set"}, {2, Kind::Swap, true, "swap"}});
}

TEST_CASE("standard AMOs: compare_swap, fetch_inc, inc, fetch_add, add of every type, both heaps", "[amo]") {
    run_table("amo_std_cas_inc", kStd,
              {{0, Kind::CompareSwap, true, "compare_swap"}, {1, Kind::FetchInc, true, "fetch_inc"},
               {2, Kind::Inc, false, "inc"}});
    run_table("amo_std_add", kStd, {{3, Kind::FetchAdd, true, "fetch_add"}, {4, Kind::Add, false, "add"}});
}

TEST_CASE("bitwise AMOs: fetch_and/or/xor and and/or/xor of every type, both heaps", "[amo]") {
    run_table("amo_bit", kBit,
              {{0, Kind::FetchAnd, true, "fetch_and"}, {1, Kind::And, false, "and"},
               {2, Kind::FetchOr, true, "fetch_or"}, {3, Kind::Or, false, "or"},
               {4, Kind::FetchXor, true, "fetch_xor"}, {5, Kind::Xor, false, "xor"}});
}

// VKSHMEM_HOST_AMO_ROUTE (default auto: through the proxy where this node's PEs use several
// GPUs), VKSHMEM_FORCE_PROXY: whether a shader's AMO on its own host heap took a proxy ticket.
TEST_CASE("an AMO on a host heap takes the route VKSHMEM_HOST_AMO_ROUTE gives", "[amo][route]") {
    const Kernel k(kernel_spv("amo_contend_0"));
    const char* e = std::getenv("VKSHMEM_HOST_AMO_ROUTE");
    const std::string route = e && *e ? e : "auto";
    const bool proxied = force_proxy() || route == "proxy" || (route == "auto" && on_several_gpus());
    spmd::SymArray<std::uint64_t> ctr(Space::Host, 1), tickets(Space::Host, 1);
    const std::uint64_t start = spmd::shared_key();
    ctr.store(0, start);
    tickets.store(0, ~std::uint64_t{0});
    Push p;
    p.arg0 = dev(ctr.get());
    p.arg1 = dev(tickets.get());
    p.mode = 3;
    REQUIRE(k.run(1, p) == 0);
    CHECK(ctr.load(0) == start + 1);
    CHECK(tickets.load(0) == (proxied ? 1u : 0u));
    report("VKSHMEM_HOST_AMO_ROUTE=%s: a fetch_add on this PE's host heap took %llu proxy tickets", route.c_str(),
           static_cast<unsigned long long>(tickets.load(0)));
    shmem_barrier_all();
}

TEST_CASE("contention: 8 workgroups x 64 invocations on counters of every PE", "[amo][contention]") {
    const Kernel k(kernel_spv("amo_contend_0"));
    const int n = spmd::npes(), me = spmd::me();
    constexpr std::uint32_t kGroups = 8, kInvocations = kGroups * 64;
    const char* what[] = {"long fetch_add(1)", "int fetch_inc", "uint64 add(global id + 1)"};
    bool gpu_shared = false; // by PEs (collective)
    for (int sh = 1; sh < n; ++sh) gpu_shared = gpu_shared || !shift_served(sh, [](int, int) { return false; });
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        if (s == Space::Device && device_heaps_unshared() && gpu_shared) {
            // (see run_amo)
            report("skipped contention on private device heaps of PEs that share a GPU");
            continue;
        }
        spmd::SymArray<std::uint64_t> ctr(s, 3), res(Space::Host, kInvocations);
        for (std::uint32_t mode = 0; mode < 3; ++mode) {
            INFO(what[mode]);
            spmd::local_write(ctr.get(), std::vector<std::uint64_t>(3, 0));
            res.poison();
            shmem_barrier_all();
            Push p;
            p.arg0 = dev(ctr.get());
            p.arg1 = dev(res.get());
            p.mode = mode;
            const auto t0 = std::chrono::steady_clock::now();
            REQUIRE(k.run(kGroups, p) == 0);
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            shmem_barrier_all();
            report("%s: %u invocations, %s on counters of %d PEs: %.2f ms", spmd::name(s), kInvocations,
                   what[mode], n, ms);
            const std::vector<std::uint64_t> c = ctr.load_all();
            if (mode == 2) {
                std::uint64_t sum = 0;
                for (int src = 0; src < n; ++src)
                    for (std::uint32_t gid = 0; gid < kInvocations; ++gid)
                        if ((static_cast<std::uint32_t>(src) + gid) % static_cast<std::uint32_t>(n) ==
                            static_cast<std::uint32_t>(me))
                            sum += gid + 1;
                CHECK(c[2] == sum);
                CHECK(c[0] == 0);
                CHECK(c[1] == 0);
            } else {
                // Every invocation of every PE whose target was this PE got a distinct ticket.
                CHECK(c[mode] == kInvocations);
                CHECK(c[1 - mode] == 0);
                std::vector<std::uint64_t> tickets;
                std::vector<std::uint64_t> theirs(kInvocations);
                for (int src = 0; src < n; ++src) {
                    shmem_getmem(theirs.data(), res.get(), kInvocations * 8, src);
                    for (std::uint32_t gid = 0; gid < kInvocations; ++gid)
                        if ((static_cast<std::uint32_t>(src) + gid) % static_cast<std::uint32_t>(n) ==
                            static_cast<std::uint32_t>(me))
                            tickets.push_back(theirs[gid]);
                }
                std::sort(tickets.begin(), tickets.end());
                std::vector<std::uint64_t> expect(kInvocations);
                std::iota(expect.begin(), expect.end(), 0);
                CHECK(tickets == expect);
            }
            shmem_barrier_all();
        }
    }
}
