// SPDX-License-Identifier: BSL-1.0
// The HLSL device library (shaders/vkshmem.hlsl): bulk puts and gets (mem, typed, sized; blocking,
// nbi and workgroup forms) to and from the right neighbour at random offsets and sizes with
// poisoned destinations; p and g of 4- and 8-byte types (uint/long p, int/ulong g); every 32-bit atomic (int, uint, int32,
// uint32; fetch/set/swap of float) on a PE drawn at random, old and new values exact; put_signal
// with SET and ADD, including the cases the library hands to the proxy (a high word, a carry);
// signal_fetch, signal_wait_until, wait_until and test (signed and unsigned, 4 and 8 bytes);
// a kernel that waits for 8-byte signals it sends itself (through the proxy where the value needs
// it, or forced); a host's atomic on a word another PE's kernel waits for (that PE's kernel carries
// it out from the host's AMO mailbox on a GPU); fence and quiet; my_pe, n_pes, shmem_ptr; and
// shmem_barrier_all_wg. Both heaps;
// run directly and with VKSHMEM_FORCE_PROXY=1. On GPUs the cases HLSL cannot serve while its
// kernel runs (shaders/README.md, "Limits") are kept out and reported.
#include "shader_test.hpp"
#include "shader_hlsl_kernels.hpp"

#include <deque>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace shader_test;
using spmd::Gen;
using spmd::Space;

constexpr Space kSpaces[] = {Space::Host, Space::Device};
constexpr int kSignalSet = 0, kSignalAdd = 1; // SHMEM_SIGNAL_SET / _ADD of the device library

// One record of the RMA or WG kernels: bytes moved to `doff` of the destination region (on the
// right neighbour for puts and p, locally for gets and g) from `soff` of the source region (local
// for puts, on the right neighbour for gets), or the value `a` for a p.
struct Spec {
    std::uint32_t op = 0;
    bool put = true;
    std::size_t elem = 1;
    std::size_t doff = 0, soff = 0, n = 0; // n in elements
    std::uint64_t a = 0;
    bool value = false; // a p: the destination holds the low `elem` bytes of a
};

// The kernels <base>_0 .. <base>_<n-1> of a variant in which kernel c carries out the records of
// op c and leaves the others (hlsl_ops.hlsl: lavapipe compiles a kernel of one routine in a
// fraction of the time of one of several); run() dispatches them in turn.
class KernelSet {
public:
    KernelSet(const std::string& base, int n) {
        for (int c = 0; c < n; ++c) ks_.push_back(std::make_unique<Kernel>(kernel_spv(base + "_" + std::to_string(c))));
    }
    int run(std::uint32_t groups, const Push& p) const {
        for (const auto& k : ks_)
            if (const int rc = k->run(groups, p); rc != 0) return rc;
        return 0;
    }

private:
    std::vector<std::unique_ptr<Kernel>> ks_;
};

template <class K> double run_rma(const K& k, bool wg, Space s, std::size_t region, const std::vector<Spec>& specs) {
    const std::size_t total = region * specs.size();
    spmd::SymArray<unsigned char> dst(s, total), src(s, total);
    Records recs(specs.size());
    const std::uint64_t key = spmd::shared_key();
    spmd::local_fill_bytes(src.get(), total, Gen(key, static_cast<std::uint64_t>(spmd::me())));
    dst.poison();
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const Spec& sp = specs[i];
        REQUIRE(sp.doff + sp.n * sp.elem <= region);
        REQUIRE(sp.soff + sp.n * sp.elem <= region);
        Rec& r = recs[i];
        r.op = sp.op;
        r.pe = spmd::right();
        r.dst = dev(dst.get()) + i * region + sp.doff;
        r.src = dev(src.get()) + i * region + sp.soff;
        r.n = sp.n;
        r.a = sp.a;
    }
    shmem_barrier_all();
    Push p;
    p.recs = recs.address();
    p.count = static_cast<std::uint32_t>(specs.size());
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(k.run(wg ? p.count : (p.count + 63) / 64, p) == 0);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    shmem_barrier_all();
    const std::vector<unsigned char> got = dst.load_all();
    std::vector<unsigned char> from_left(total), from_right(total);
    spmd::fill_bytes(from_left.data(), total, Gen(key, static_cast<std::uint64_t>(spmd::left())));
    spmd::fill_bytes(from_right.data(), total, Gen(key, static_cast<std::uint64_t>(spmd::right())));
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const Spec& sp = specs[i];
        INFO("record " << i << ": op " << sp.op << ", " << sp.n << " x " << sp.elem << " B, dst offset " << sp.doff
                       << ", src offset " << sp.soff);
        const std::size_t base = i * region, bytes = sp.n * sp.elem;
        if (sp.value)
            SPMD_REQUIRE_OK(spmd::diff_bytes(got.data() + base + sp.doff, &sp.a, bytes));
        else
            SPMD_REQUIRE_OK(spmd::diff_bytes(got.data() + base + sp.doff,
                                             (sp.put ? from_left : from_right).data() + base + sp.soff, bytes));
        SPMD_REQUIRE_OK(spmd::check_poison(got.data() + base, 0, sp.doff, spmd::poison_byte()));
        SPMD_REQUIRE_OK(spmd::check_poison(got.data() + base, sp.doff + bytes, region, spmd::poison_byte()));
    }
    shmem_barrier_all();
    return ms;
}

std::size_t random_count(std::size_t max) {
    switch (spmd::shared_range(0, 5)) {
    case 0: return 0;
    case 1: return 1;
    default: return spmd::shared_range(2, max);
    }
}

// For every PE, the PEs whose objects in space s its HLSL kernels reach directly (shmem_ptr from a
// kernel is not 0), as bit masks; and (`bound`) those whose heaps in space s have bindings in its
// kernels (a device heap's AMO mailbox and atomics its waiting kernels serve). Collective.
struct Reach {
    std::vector<std::uint64_t> direct, bound;
};
Reach hlsl_reach(Space s) {
    const int n = spmd::npes();
    const Kernel wait(kernel_spv("hlsl_ops_wait_0"));
    spmd::SymArray<std::uint64_t> obj(s, 1), info(Space::Host, 4 * static_cast<std::size_t>(n));
    Records recs(static_cast<std::size_t>(n));
    for (int pe = 0; pe < n; ++pe) {
        Rec& r = recs[static_cast<std::size_t>(pe)];
        r.op = 5;
        r.pe = pe;
        r.src = dev(obj.get());
        r.dst = dev(info.get() + 4 * pe);
    }
    info.poison();
    Push p;
    p.recs = recs.address();
    p.count = static_cast<std::uint32_t>(n);
    REQUIRE(wait.run(1, p) == 0);
    const std::vector<std::uint64_t> v = info.load_all();
    std::uint64_t direct = 0, bound = 0;
    for (int pe = 0; pe < n; ++pe) {
        const std::size_t at = 4 * static_cast<std::size_t>(pe);
        REQUIRE(v[at + 1] == static_cast<std::uint64_t>(n));
        REQUIRE(v[at + 3] <= 1);
        if (v[at + 2] != 0) direct |= std::uint64_t{1} << pe;
        if (v[at + 3] != 0) bound |= std::uint64_t{1} << pe;
    }
    return {spmd::gather(direct), spmd::gather(bound)};
}

} // namespace

TEST_CASE("HLSL: putmem/getmem (+nbi), typed and sized put/get, p and g; both heaps", "[hlsl]") {
    // op: element bytes, put or get (kernel hlsl_ops.hlsl, VARIANT_RMA; chunk op / 2, p and g in 5)
    struct Op {
        std::uint32_t op;
        std::size_t elem;
        bool put;
    };
    const Op bulk[] = {{0, 1, true}, {1, 1, false}, {2, 1, true}, {3, 1, false}, {4, 4, true},
                       {5, 8, false}, {6, 4, true}, {7, 8, false}, {8, 16, true}, {9, 1, false}};
    // Up to ten proxy ring slots and more (VKSHMEM_RING_PAYLOAD_BYTES, 8 KiB): proxied transfers
    // of several pieces, and of more than one round of an invocation's batch (8 pieces).
    constexpr std::size_t region = 10 * 8192 + 256;
    constexpr std::uint32_t kChunks = 6;
    for (std::uint32_t chunk = 0; chunk < kChunks; ++chunk) {
        const Kernel k(kernel_spv("hlsl_ops_rma_" + std::to_string(chunk)));
        for (Space s : kSpaces) {
            std::vector<Spec> specs;
            for (const Op& o : bulk) {
                if (o.op / 2 != chunk) continue;
                for (int rep = 0; rep < 4; ++rep) {
                    Spec sp;
                    sp.op = o.op;
                    sp.put = o.put;
                    sp.elem = o.elem;
                    const std::size_t step = o.elem == 1 ? 1 : o.elem;
                    sp.doff = spmd::shared_range(0, 63 / step) * step;
                    sp.soff = spmd::shared_range(0, 63 / step) * step;
                    sp.n = random_count((region - 64) / o.elem);
                    specs.push_back(sp);
                }
            }
            if (chunk == kChunks - 1)
                for (std::uint32_t op = 10; op <= 13; ++op)
                    for (int rep = 0; rep < 2; ++rep) {
                        Spec sp;
                        sp.op = op;
                        sp.elem = op == 10 || op == 12 ? 4 : 8;
                        sp.put = op <= 11;
                        sp.value = op <= 11;
                        sp.doff = spmd::shared_range(0, 15) * sp.elem;
                        sp.soff = spmd::shared_range(0, 15) * sp.elem;
                        sp.n = 1;
                        sp.a = spmd::shared_key() & low_mask(sp.elem);
                        specs.push_back(sp);
                    }
            const double ms = run_rma(k, false, s, region, specs);
            report("hlsl rma chunk %u, %s heap: %zu records in %.1f ms", chunk, s == Space::Host ? "host" : "device",
                   specs.size(), ms);
        }
    }
}

TEST_CASE("HLSL: putmem_wg, getmem_wg, short_put_wg, get64_wg; both heaps", "[hlsl]") {
    const KernelSet k("hlsl_ops_wg", 4);
    // Through the proxy, up to 80 pieces of 8 KiB over the workgroup's 64 invocations: one piece
    // each, or two (a batch) for the first of them.
    constexpr std::size_t region = 80 * 8192;
    for (Space s : kSpaces) {
        std::vector<Spec> specs;
        const std::size_t elems[] = {1, 1, 2, 8};
        for (std::uint32_t op = 0; op < 4; ++op) {
            Spec sp;
            sp.op = op;
            sp.put = op == 0 || op == 2;
            sp.elem = elems[op];
            sp.doff = spmd::shared_range(0, 7) * (op == 0 || op == 1 ? 1 : sp.elem);
            sp.soff = spmd::shared_range(0, 7) * (op == 0 || op == 1 ? 1 : sp.elem);
            sp.n = spmd::shared_range(1, (region - 64) / sp.elem);
            specs.push_back(sp);
        }
        const double ms = run_rma(k, true, s, region, specs);
        report("hlsl wg, %s heap: %.1f ms", s == Space::Host ? "host" : "device", ms);
    }
}

namespace {
enum Kind : std::uint32_t { Fetch, Set, Swap, CompareSwap, FetchInc, Inc, FetchAdd, Add, FetchAnd, And, FetchOr, Or,
                            FetchXor, Xor };

std::uint32_t apply(std::uint32_t k, std::uint32_t old, std::uint32_t a, std::uint32_t b) {
    switch (k) {
    case Set:
    case Swap: return a;
    case CompareSwap: return old == b ? a : old;
    case FetchInc:
    case Inc: return old + 1;
    case FetchAdd:
    case Add: return old + a;
    case FetchAnd:
    case And: return old & a;
    case FetchOr:
    case Or: return old | a;
    case FetchXor:
    case Xor: return old ^ a;
    default: return old;
    }
}
bool fetching(std::uint32_t k) {
    return k == Fetch || k == Swap || k == CompareSwap || k == FetchInc || k == FetchAdd || k == FetchAnd ||
           k == FetchOr || k == FetchXor;
}
} // namespace

TEST_CASE("HLSL: 32-bit atomics of every kind on a random PE; both heaps", "[hlsl]") {
    // One kernel per chunk of types, each carrying out the records of its own.
    std::deque<Kernel> chunks; // (Kernel does not move)
    for (int c = 0; c < 5; ++c) chunks.emplace_back(kernel_spv("hlsl_ops_amo_" + std::to_string(c)));
    // (type, op) pairs the kernel implements
    std::vector<std::pair<std::uint32_t, std::uint32_t>> ops;
    for (std::uint32_t op = 0; op < 8; ++op) ops.push_back({0, op});
    for (std::uint32_t op = 0; op < 14; ++op) ops.push_back({1, op});
    for (std::uint32_t op : {0u, 3u, 8u, 9u, 10u, 11u, 12u, 13u}) ops.push_back({2, op});
    for (std::uint32_t op : {4u, 6u, 8u, 12u}) ops.push_back({3, op});
    for (std::uint32_t op : {0u, 1u, 2u}) ops.push_back({4, op});
    const int n = spmd::npes(), me = spmd::me();
    (void)device_of(); // (collective the first time)
    for (Space s : kSpaces) {
        const std::size_t N = ops.size() * 2;
        spmd::SymArray<std::uint64_t> tgt(s, N), res(Space::Host, N);
        Records recs(N);
        const std::uint64_t key = spmd::shared_key();
        auto initial = [&](int pe) {
            std::vector<std::uint64_t> v(N);
            Gen g(key, static_cast<std::uint64_t>(pe));
            for (auto& x : v) x = g.next();
            // float slots hold numbers in [2, 4) (no NaN, whose bits a float may not keep)
            for (std::size_t i = 0; i < N; ++i)
                if (ops[i / 2].first == 4) v[i] = (v[i] & 0xffffffff00000000ull) | 0x40000000u | (v[i] & 0x7fffffu);
            return v;
        };
        spmd::local_write(tgt.get(), initial(me));
        res.poison();
        std::vector<int> shift(N);
        std::vector<std::uint32_t> a(N), hit(N), rnd(N);
        // On a GPU, an atomic through the proxy on another PE's device heap on the same GPU (forced,
        // or that heap beyond the kernel's bindings) is a device atomic in this PE's AMO mailbox,
        // which this kernel carries out only where that heap has bindings here: other shifts
        // become 0 (every PE on itself).
        const bool gpu_device_heap = on_gpu() && s == Space::Device;
        const std::vector<std::uint64_t> bound = gpu_device_heap ? hlsl_reach(s).bound : std::vector<std::uint64_t>();
        auto shift_ok = [&](int sh) {
            return !gpu_device_heap ||
                   shift_served(sh, [&](int pe, int t) { return (bound[static_cast<std::size_t>(pe)] >> t & 1) != 0; });
        };
        for (std::size_t i = 0; i < N; ++i) {
            shift[i] = static_cast<int>(spmd::shared_range(0, static_cast<std::uint64_t>(n - 1)));
            if (!shift_ok(shift[i])) shift[i] = 0;
            a[i] = static_cast<std::uint32_t>(spmd::shared_key());
            if (ops[i / 2].first == 4) a[i] = 0x3f800000u | (a[i] & 0x7fffffu);
            hit[i] = static_cast<std::uint32_t>(spmd::shared_range(0, 1));
            rnd[i] = static_cast<std::uint32_t>(spmd::shared_key());
        }
        auto cas_b = [&](std::size_t i, int target) {
            return hit[i] ? static_cast<std::uint32_t>(initial(target)[i]) : rnd[i];
        };
        for (std::size_t i = 0; i < N; ++i) {
            const int target = (me + shift[i]) % n;
            Rec& r = recs[i];
            r.type = ops[i / 2].first;
            r.op = ops[i / 2].second;
            r.pe = target;
            r.dst = dev(tgt.get() + i);
            r.a = a[i];
            r.b = cas_b(i, target);
            r.c = dev(res.get() + i);
        }
        shmem_barrier_all();
        Push p;
        p.recs = recs.address();
        p.count = static_cast<std::uint32_t>(N);
        for (const Kernel& k : chunks) REQUIRE(k.run((p.count + 63) / 64, p) == 0);
        shmem_barrier_all();
        const std::vector<std::uint64_t> got = tgt.load_all(), fetched = res.load_all();
        const std::vector<std::uint64_t> mine = initial(me);
        for (std::size_t i = 0; i < N; ++i) {
            const std::uint32_t op = ops[i / 2].second;
            INFO("record " << i << ": type " << ops[i / 2].first << " op " << op);
            // slot i here was hit by the PE `shift` to the left
            const std::uint32_t old = static_cast<std::uint32_t>(mine[i]);
            const std::uint32_t now = apply(op, old, a[i], cas_b(i, me));
            REQUIRE(static_cast<std::uint32_t>(got[i]) == now);
            REQUIRE((got[i] >> 32) == (mine[i] >> 32)); // the other half untouched
            const int target = (me + shift[i]) % n;
            const std::uint32_t expect = fetching(op) ? static_cast<std::uint32_t>(initial(target)[i]) : 0u;
            REQUIRE(static_cast<std::uint32_t>(fetched[i]) == expect);
        }
        shmem_barrier_all();
    }
}

TEST_CASE("HLSL: put_signal (SET, ADD, through the proxy where 32-bit atomics cannot), signal_fetch, "
          "signal_wait_until, wait_until, test, fence; both heaps", "[hlsl]") {
    const KernelSet sig("hlsl_ops_sig", 3);
    const Kernel wait(kernel_spv("hlsl_ops_wait_0"));
    const int n = spmd::npes(), me = spmd::me();
    (void)device_of(); // (collective the first time)
    for (Space s : kSpaces) {
        // On a GPU a signal that goes through the proxy into a device heap is a device atomic,
        // which only a waiting kernel of the device library can carry out while kernels run
        // (shaders/README.md): HLSL carries out those that keep the high word on the heaps that
        // have bindings in it. On another PE's heap on this GPU without them it waits for this
        // kernel, so there every signal must be one HLSL makes directly.
        const bool gpu_device_heap = on_gpu() && s == Space::Device;
        const int right = spmd::right();
        const bool peer_here = gpu_device_heap && right != me && same_device(right);
        if (gpu_device_heap) { // (the same decision on every PE)
            const bool proxied = peer_here && !(hlsl_reach(s).bound[static_cast<std::size_t>(me)] >> right & 1);
            bool any = false;
            for (std::uint64_t b : spmd::gather(proxied ? 1 : 0)) any = any || b != 0;
            if (any) {
                report("skipped put_signal through the proxy to another PE's device heap on the same GPU (HLSL)");
                continue;
            }
        }
        // put_signal: record i puts its bytes to the right neighbour and signals slot i there.
        constexpr std::size_t kRecs = 8, region = 6000;
        spmd::SymArray<unsigned char> dst(s, kRecs * region), src(s, kRecs * region);
        spmd::SymArray<std::uint64_t> sigs(s, kRecs);
        Records recs(kRecs);
        const std::uint64_t key = spmd::shared_key();
        spmd::local_fill_bytes(src.get(), kRecs * region, Gen(key, static_cast<std::uint64_t>(me)));
        dst.poison();
        // initial signal, value, op: low/high words chosen to take each path of vkshmem_signal_
        // (on a GPU's device heap, none that needs a 64-bit atomic: a new high word or a carry)
        const std::uint64_t init_all[kRecs] = {0, 5, 0x100000003ull, 7, 0xfffffff0ull, 0x200000000ull, 1, 0};
        const std::uint64_t val_all[kRecs] = {9, 0x700000001ull, 11, 13, 0x20, 3, 0xffffffffull, 2};
        const std::uint64_t init_gpu[kRecs] = {0, 0x700000005ull, 3, 7, 0x10, 0x200000000ull, 1, 0};
        const std::uint64_t val_gpu[kRecs] = {9, 0x700000001ull, 11, 13, 0x20, 3, 0xffff, 2};
        const std::uint64_t* init = gpu_device_heap ? init_gpu : init_all;
        const std::uint64_t* val = gpu_device_heap ? val_gpu : val_all;
        const int op[kRecs] = {kSignalSet, kSignalSet, kSignalSet, kSignalAdd,
                               kSignalAdd, kSignalAdd, kSignalAdd, kSignalSet};
        spmd::local_write(sigs.get(), init, kRecs);
        std::vector<std::size_t> bytes(kRecs);
        for (std::size_t i = 0; i < kRecs; ++i) {
            Rec& r = recs[i];
            r.op = static_cast<std::uint32_t>(i % 3);
            const std::size_t elem = r.op == 1 ? 4 : r.op == 2 ? 8 : 1;
            r.n = spmd::shared_range(0, (region - 16) / elem);
            bytes[i] = r.n * elem;
            r.pe = spmd::right();
            r.dst = dev(dst.get() + i * region);
            r.src = dev(src.get() + i * region);
            r.a = dev(sigs.get() + i);
            r.b = val[i];
            r.flags = static_cast<std::uint32_t>(op[i]);
        }
        shmem_barrier_all();
        Push p;
        p.recs = recs.address();
        p.count = kRecs;
        REQUIRE(sig.run(1, p) == 0);
        shmem_barrier_all();
        const std::vector<unsigned char> got = dst.load_all();
        std::vector<unsigned char> from_left(kRecs * region);
        spmd::fill_bytes(from_left.data(), from_left.size(), Gen(key, static_cast<std::uint64_t>(spmd::left())));
        const std::vector<std::uint64_t> sv = sigs.load_all();
        for (std::size_t i = 0; i < kRecs; ++i) {
            INFO("put_signal record " << i);
            SPMD_REQUIRE_OK(spmd::diff_bytes(got.data() + i * region, from_left.data() + i * region, bytes[i]));
            SPMD_REQUIRE_OK(spmd::check_poison(got.data() + i * region, bytes[i], region, spmd::poison_byte()));
            REQUIRE(sv[i] == (op[i] == kSignalAdd ? init[i] + val[i] : val[i]));
        }
        shmem_barrier_all();

        // Waits and tests on this PE's values (already true, so nothing waits on another PE),
        // fence, and the queries.
        constexpr std::size_t kW = 16;
        spmd::SymArray<std::uint64_t> ivars(s, kW), out(Space::Host, kW), info(Space::Host, 4);
        spmd::SymArray<unsigned char> fdata(s, 256), fsrc(s, 256);
        spmd::SymArray<std::uint64_t> flag(s, 1);
        Records wr(kW);
        std::vector<std::uint64_t> iv(kW);
        std::vector<int> cmp(kW);
        std::vector<std::uint64_t> cv(kW);
        Gen g(spmd::shared_key(), static_cast<std::uint64_t>(me));
        for (std::size_t i = 0; i < kW; ++i) {
            iv[i] = g.next();
            if (i % 4 == 0) iv[i] |= 0x8000000080000000ull; // negative as signed
            cmp[i] = static_cast<int>(g.next() % 6);
        }
        spmd::local_write(ivars.get(), iv);
        out.poison();
        spmd::local_fill_bytes(fsrc.get(), 256, Gen(key, 99, static_cast<std::uint64_t>(me)));
        spmd::local_set(flag.get(), std::uint64_t{0});
        // the value each wait compares with, chosen so that its unsigned comparison holds
        auto holds_u = [](std::uint64_t a, std::uint64_t b, int c) {
            return c == 0 ? a == b : c == 1 ? a != b : c == 2 ? a > b : c == 3 ? a >= b : c == 4 ? a < b : a <= b;
        };
        auto holds_s = [](std::int64_t a, std::int64_t b, int c) {
            return c == 0 ? a == b : c == 1 ? a != b : c == 2 ? a > b : c == 3 ? a >= b : c == 4 ? a < b : a <= b;
        };
        for (std::size_t i = 0; i < kW; ++i) {
            Rec& r = wr[i];
            const bool wide = i % 2 == 1 || i >= 12;
            r.op = i < 12 ? static_cast<std::uint32_t>(i % 2) : static_cast<std::uint32_t>(i - 10);
            if (i == 15) r.op = 5;
            const std::uint64_t cur = wide ? iv[i] : (iv[i] & 0xffffffffu);
            std::uint64_t v = cur;
            switch (cmp[i]) {
            case 1: v = cur ^ 1; break;
            case 2: v = cur == 0 ? 0 : cur - 1; if (cur == 0) cmp[i] = 3; break;
            case 4: v = cur == (wide ? ~0ull : 0xffffffffull) ? cur : cur + 1; if (v == cur) cmp[i] = 5; break;
            default: break;
            }
            cv[i] = v;
            r.dst = dev(ivars.get() + i);
            r.flags = static_cast<std::uint32_t>(cmp[i]);
            r.a = v;
            r.c = dev(out.get() + i);
            if (r.op == 2 || r.op == 3) r.flags = static_cast<std::uint32_t>(cmp[i]);
            if (r.op == 4) { // fence: data to the right, then a flag after it
                r.dst = dev(fdata.get());
                r.src = dev(fsrc.get());
                r.n = 200;
                r.pe = spmd::right();
                r.a = dev(flag.get());
                r.b = 0x1234567800000001ull;
            }
            if (r.op == 5) {
                r.dst = dev(info.get());
                r.src = dev(ivars.get());
                r.pe = spmd::right();
            }
        }
        shmem_barrier_all();
        Push wp;
        wp.recs = wr.address();
        wp.count = kW;
        REQUIRE(wait.run(1, wp) == 0);
        shmem_barrier_all();
        const std::vector<std::uint64_t> o = out.load_all();
        for (std::size_t i = 0; i < 12; ++i) {
            INFO("wait/test record " << i << " cmp " << cmp[i]);
            if (i % 2 == 0) {
                const std::uint32_t a = static_cast<std::uint32_t>(iv[i]), b = static_cast<std::uint32_t>(cv[i]);
                const std::uint32_t expect = (holds_s(static_cast<std::int32_t>(a), static_cast<std::int32_t>(b), cmp[i]) ? 1u : 0u) +
                                             (holds_u(a, b, cmp[i]) ? 2u : 0u);
                REQUIRE(static_cast<std::uint32_t>(o[i]) == expect);
            } else {
                const std::uint32_t expect =
                    (holds_s(static_cast<std::int64_t>(iv[i]), static_cast<std::int64_t>(cv[i]), cmp[i]) ? 1u : 0u) +
                    (holds_u(iv[i], cv[i], cmp[i]) ? 2u : 0u);
                REQUIRE(static_cast<std::uint32_t>(o[i]) == expect);
            }
        }
        REQUIRE(o[12] == iv[12]); // signal_wait_until returns the value
        REQUIRE(o[13] == iv[13]); // signal_fetch
        const std::vector<std::uint64_t> in = info.load_all();
        REQUIRE(in[0] == static_cast<std::uint64_t>(me));
        REQUIRE(in[1] == static_cast<std::uint64_t>(n));
        const std::uint64_t right_addr = in[2];
        INFO("symmetric space: " << spmd::name(s));
        // The right neighbour's object by address: none where the proxy must carry everything or
        // where its heap has no bindings in the kernel (VKSHMEM_HLSL_HEAPS).
        const bool bound = in[3] != 0;
        INFO("the right neighbour's heap has bindings: " << bound);
        if (!shader_reaches(s, spmd::right()) || !bound) REQUIRE(right_addr == 0);
        else REQUIRE(right_addr != 0);
        REQUIRE(spmd::local_get(flag.get()) == 0x1234567800000001ull);
        std::vector<unsigned char> fexp(256);
        spmd::fill_bytes(fexp.data(), 256, Gen(key, 99, static_cast<std::uint64_t>(spmd::left())));
        SPMD_REQUIRE_OK(spmd::diff_bytes(fdata.load_all().data(), fexp.data(), 200));
        shmem_barrier_all();
    }
}

// A host's atomic on another PE's word while that PE's HLSL kernel waits for it. On a GPU a host
// atomic on a device heap is posted in the AMO mailbox of the host's PE, which the waiting kernel
// carries out: another PE's mailbox where the two share a GPU and its heaps (whose copy and reply
// the kernel reaches through its bindings), else its own, posted by its proxy. 4 and 8 bytes (the
// high word kept, as HLSL needs), fetching, with random values.
TEST_CASE("HLSL: a host atomic on a peer's word while the peer's kernel waits for it", "[hlsl][live]") {
    const int n = spmd::npes(), me = spmd::me();
    if (n < 2) {
        report("skipped the host-to-running-HLSL-kernel test: it needs 2 PEs");
        return;
    }
    const Kernel wait(kernel_spv("hlsl_ops_wait_0"));
    Push none;
    none.count = 0;
    REQUIRE(wait.run(1, none) == 0); // (its pipeline compiled before the timed runs)
    const bool waiter = me % 2 == 0 && me + 1 < n;
    for (Space s : kSpaces) {
        if (s == Space::Host && on_gpu()) {
            report("skipped the host heap: a GPU's running shader need not see host writes to it");
            continue;
        }
        for (bool wide : {false, true}) {
            INFO("space: " << spmd::name(s)
                           << (wide ? ", shmem_uint64_atomic_fetch_add" : ", shmem_uint_atomic_fetch_add"));
            spmd::SymArray<std::uint64_t> word(s, 1), out(Space::Host, 1);
            Gen g(spmd::shared_key(), static_cast<std::uint64_t>(me / 2));
            // no carry out of the low word: HLSL carries out only what keeps the high word
            const std::uint64_t start = (g.next() & 0xffffffff00000000ull) | (g.next() & 0x7fffffffull);
            const std::uint64_t add = (g.next() & 0x7fffffffull) | 1;
            word.store(0, start);
            out.poison();
            Records recs(1);
            recs[0].op = wide ? 1 : 0; // (u)long or uint wait_until, then the tests
            recs[0].flags = 0;         // SHMEM_CMP_EQ
            recs[0].dst = dev(word.get());
            recs[0].a = wide ? start + add : static_cast<std::uint32_t>(start + add);
            recs[0].c = dev(out.get());
            Push p;
            p.recs = recs.address();
            p.count = 1;
            double us = 0;
            const double ms = host_call_during_dispatch(wait, p, [&](int waiter_pe) {
                const std::uint64_t old =
                    wide ? shmem_uint64_atomic_fetch_add(word.get(), add, waiter_pe)
                         : shmem_uint_atomic_fetch_add(reinterpret_cast<unsigned*>(word.get()),
                                                       static_cast<unsigned>(add), waiter_pe);
                CHECK(old == (wide ? start : static_cast<std::uint32_t>(start)));
            }, us);
            if (waiter) {
                const std::uint64_t expect = wide ? start + add : (start & 0xffffffff00000000ull) |
                                                                      static_cast<std::uint32_t>(start + add);
                CHECK(word.load(0) == expect);
                CHECK(static_cast<std::uint32_t>(out.load(0)) == 3); // both tests true (signed and unsigned EQ; 4 bytes)
                report("%s: PE %d's %d-byte fetch-add took %.1f us, 20 ms into PE %d's HLSL dispatch of %.1f ms",
                       spmd::name(s), me + 1, wide ? 8 : 4, us, me, ms);
            }
            shmem_barrier_all();
        }
    }
}

// A kernel that waits for 8-byte signals it updates through the proxy: on a GPU the proxy makes a
// device atomic on this PE's device heap, which on NVIDIA only a waiting kernel of the device
// library can carry out (the AMO mailbox, shaders/README.md); HLSL carries out those that leave
// the high word as it is. The others (a new high word, a carry) it leaves to the runtime's sweeper
// kernel, which on NVIDIA waits for this kernel, so they run only on CPU devices (lavapipe, where
// the proxy's atomics are CPU atomics).
TEST_CASE("HLSL: put_signal to this PE, then signal_wait_until for the 8-byte signal; both heaps", "[hlsl]") {
    const KernelSet sig("hlsl_ops_sig", 3);
    const bool gpu = on_gpu();
    const int me = spmd::me();
    Gen g(spmd::shared_key(), 7, static_cast<std::uint64_t>(me));
    auto hi = [&] { return (g.next() | 1) << 32; };      // a random nonzero high word
    auto lo = [&] { return g.next() & 0xffffffffull; };  // a random low word
    auto small = [&] { return g.next() & 0x7fffffffull; };
    for (Space s : kSpaces) {
        if (s == Space::Host && gpu) {
            // The proxy's CPU atomics on a host heap are behind the GPU's cache for a running
            // kernel that polls with atomics (docs/architecture.md).
            report("skipped the 8-byte signal wait on the host heap: on a GPU");
            continue;
        }
        constexpr std::size_t region = 512;
        std::vector<std::uint64_t> init, val;
        std::vector<int> op;
        auto add = [&](std::uint64_t i, std::uint64_t v, int o) {
            init.push_back(i);
            val.push_back(v);
            op.push_back(o);
        };
        const std::uint64_t h1 = hi(), h2 = hi();
        add(h1 | lo(), h1 | lo(), kSignalSet);  // a high word: through the proxy; HLSL keeps it
        add(lo(), lo(), kSignalSet);            // high words 0
        add(h2 | small(), small(), kSignalAdd); // no carry
        add(small(), small(), kSignalAdd);
        if (!gpu) {                             // these need a 64-bit atomic
            add(hi() | lo(), hi() | lo(), kSignalSet);
            add(hi() | (0xffffff00ull + (g.next() & 0xff)), 0x100 + (g.next() & 0xff), kSignalAdd);
            add(lo(), hi() | lo(), kSignalAdd);
            add(hi() | lo(), lo(), kSignalSet);
        }
        const std::size_t k = init.size();
        spmd::SymArray<unsigned char> dst(s, k * region), src(s, k * region);
        spmd::SymArray<std::uint64_t> sigs(s, k), out(Space::Host, 2 * k);
        spmd::local_fill_bytes(src.get(), k * region, Gen(g.next(), static_cast<std::uint64_t>(me)));
        dst.poison();
        out.poison();
        spmd::local_write(sigs.get(), init.data(), k);
        Records recs(k);
        for (std::size_t i = 0; i < k; ++i) {
            Rec& r = recs[i];
            r.op = static_cast<std::uint32_t>(i % 3);
            const std::size_t elem = r.op == 1 ? 4 : r.op == 2 ? 8 : 1;
            r.n = 1 + g.next() % (region / elem);
            r.pe = me;
            r.dst = dev(dst.get() + i * region);
            r.src = dev(src.get() + i * region);
            r.a = dev(sigs.get() + i);
            r.b = val[i];
            r.flags = static_cast<std::uint32_t>(op[i]);
            r.c = dev(out.get() + 2 * i);
            spmd::local_set(out.get() + 2 * i, op[i] == kSignalAdd ? init[i] + val[i] : val[i]);
        }
        Push p;
        p.recs = recs.address();
        p.count = static_cast<std::uint32_t>(k);
        p.mode = 1;
        REQUIRE(sig.run(1, p) == 0);
        const std::vector<std::uint64_t> sv = sigs.load_all(), o = out.load_all();
        const std::vector<unsigned char> want = spmd::local_bytes(src.get(), k * region), got = dst.load_all();
        for (std::size_t i = 0; i < k; ++i) {
            INFO("record " << i << ": signal " << std::hex << init[i] << (op[i] == kSignalAdd ? " + " : " := ")
                           << val[i]);
            const std::uint64_t expect = op[i] == kSignalAdd ? init[i] + val[i] : val[i];
            REQUIRE(sv[i] == expect);
            REQUIRE(o[2 * i + 1] == expect); // what signal_wait_until returned
            const std::size_t elem = recs[i].op == 1 ? 4 : recs[i].op == 2 ? 8 : 1, bytes = recs[i].n * elem;
            SPMD_REQUIRE_OK(spmd::diff_bytes(got.data() + i * region, want.data() + i * region, bytes));
            SPMD_REQUIRE_OK(spmd::check_poison(got.data() + i * region, bytes, region, spmd::poison_byte()));
        }
        shmem_barrier_all();
    }
}

// The barrier waits for the other PEs' running shaders (why_not_concurrent, shader_test.hpp).
TEST_CASE("HLSL: shmem_barrier_all_wg, 3 rounds; both heaps", "[hlsl]") {
    if (const char* why = why_not_concurrent()) {
        report("skipped the HLSL barrier test: %s", why);
        return;
    }
    bool other_devices = false;
    for (int pe = 0; pe < spmd::npes(); ++pe) other_devices = other_devices || !same_device(pe);
    // Through the proxy, or from another GPU, the counter's adds on a host heap are writes behind
    // this GPU's cache, which the running barrier need not see; on a device heap they are device
    // atomics posted in this PE's AMO mailbox, which the HLSL waits carry out (4-byte ones:
    // the barrier's are) (shaders/README.md, "Host and shaders").
    const bool host_heap_unseen = on_gpu() && (force_proxy() || other_devices);
    const Kernel k(kernel_spv("hlsl_ops_barrier_0"));
    const int n = spmd::npes();
    Push none; // zero rounds: compiled before the PEs meet (lavapipe compiles at the first dispatch)
    REQUIRE(k.run(1, none) == 0);
    for (Space s : kSpaces) {
        if (s == Space::Host && host_heap_unseen) {
            report("skipped the HLSL barrier test on the host heap: on a GPU, through the proxy or across GPUs");
            continue;
        }
        spmd::SymArray<std::uint64_t> counter(s, 1), slots(s, static_cast<std::size_t>(n) + 1);
        spmd::local_set(counter.get(), std::uint64_t{0});
        std::vector<std::uint64_t> zero(static_cast<std::size_t>(n) + 1, 0);
        spmd::local_write(slots.get(), zero);
        shmem_barrier_all();
        Push p;
        p.arg0 = dev(counter.get());
        p.arg1 = dev(slots.get());
        p.mode = 3;
        REQUIRE(k.run(1, p) == 0);
        shmem_barrier_all();
        const std::vector<std::uint64_t> v = slots.load_all();
        for (int pe = 0; pe < n; ++pe) REQUIRE(v[static_cast<std::size_t>(pe)] == 3);
        REQUIRE(v[static_cast<std::size_t>(n)] == 0); // no round saw a PE behind
        REQUIRE(spmd::local_get(counter.get()) == ((std::uint64_t{6} << 32) | std::uint64_t(6 * n)));
        shmem_barrier_all();
    }
}
