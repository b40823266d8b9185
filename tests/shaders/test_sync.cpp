// SPDX-License-Identifier: BSL-1.0
// Shader signals and synchronization: put_signal / put_signal_nbi of every type and every sized
// form with SIGNAL_SET and SIGNAL_ADD, and putmem_signal_wg with data and signal in either heap;
// wait_until and test of every point-to-point type with
// every comparison; signal_wait_until and signal_fetch; a later workgroup waiting for an earlier
// one; a wait that can never complete, which vkshmemx_dispatch must report; and, with all PEs'
// shaders running at once, shmem_barrier_all_wg rounds and a put_signal ring. On both heaps;
// run directly and with VKSHMEM_FORCE_PROXY=1.
#include "shader_test.hpp"
#include "shader_sync_kernels.hpp"


#include <chrono>
#include <thread>
#include <vector>

namespace {

using namespace shader_test;
using spmd::Gen;
using spmd::Space;

constexpr Space kSpaces[] = {Space::Host, Space::Device};
constexpr int kSignalSet = 0, kSignalAdd = 1; // SHMEM_SIGNAL_SET / _ADD of the device library

struct SigSpec {
    std::uint32_t type, op;
    std::size_t elem, doff, soff, n;
    const char* name;
};

// One put_signal per record into its own region and signal slot on the right neighbour; checks
// the data that arrived from the left and this PE's signal slots. The signals are in `sig_space`;
// `per_workgroup`: a workgroup carries out each record (else an invocation).
void run_signal(const Kernel& k, Space s, std::size_t region, const std::vector<SigSpec>& specs, Space sig_space,
                bool per_workgroup = false) {
    const std::size_t N = specs.size(), total = region * N;
    spmd::SymArray<unsigned char> dst(s, total), src(s, total);
    spmd::SymArray<std::uint64_t> sig(sig_space, N);
    Records recs(N);
    const std::uint64_t key = spmd::shared_key();
    auto sig_initial = [&](int pe) {
        std::vector<std::uint64_t> v(N);
        Gen g(key ^ 0x7369676e616cull, static_cast<std::uint64_t>(pe));
        for (auto& x : v) x = g.next();
        return v;
    };
    spmd::local_fill_bytes(src.get(), total, Gen(key, static_cast<std::uint64_t>(spmd::me())));
    dst.poison();
    spmd::local_write(sig.get(), sig_initial(spmd::me()));
    std::vector<std::uint64_t> values(N);
    std::vector<int> sig_ops(N);
    for (std::size_t i = 0; i < N; ++i) {
        values[i] = spmd::shared_key();
        sig_ops[i] = spmd::shared_range(0, 1) ? kSignalAdd : kSignalSet;
        const SigSpec& sp = specs[i];
        recs[i] = Rec{sp.op, sp.type, spmd::right(), static_cast<std::uint32_t>(sig_ops[i]),
                      dev(dst.get()) + i * region + sp.doff, dev(src.get()) + i * region + sp.soff, sp.n,
                      dev(sig.at(i)), values[i], 0};
    }
    shmem_barrier_all();
    Push p;
    p.recs = recs.address();
    p.count = static_cast<std::uint32_t>(N);
    REQUIRE(k.run(static_cast<std::uint32_t>(per_workgroup ? N : (N + 63) / 64), p) == 0);
    shmem_barrier_all();
    const std::vector<unsigned char> got = dst.load_all();
    std::vector<unsigned char> left(total);
    spmd::fill_bytes(left.data(), total, Gen(key, static_cast<std::uint64_t>(spmd::left())));
    const std::vector<std::uint64_t> init = sig_initial(spmd::me()), now = sig.load_all();
    for (std::size_t i = 0; i < N; ++i) {
        const SigSpec& sp = specs[i];
        INFO("record " << i << ": " << sp.name << " op " << sp.op << ", " << sp.n << " elements, signal "
                       << (sig_ops[i] == kSignalAdd ? "ADD" : "SET"));
        const std::size_t base = i * region, bytes = sp.n * sp.elem;
        SPMD_REQUIRE_OK(spmd::diff_bytes(got.data() + base + sp.doff, left.data() + base + sp.soff, bytes));
        SPMD_REQUIRE_OK(spmd::check_poison(got.data() + base, 0, sp.doff, spmd::poison_byte()));
        SPMD_REQUIRE_OK(spmd::check_poison(got.data() + base, sp.doff + bytes, region, spmd::poison_byte()));
        CHECK(now[i] == (sig_ops[i] == kSignalAdd ? init[i] + values[i] : values[i]));
    }
    shmem_barrier_all();
}

std::size_t random_count(std::size_t max) {
    switch (spmd::shared_range(0, 5)) {
    case 0: return 0;
    case 1: return 1;
    default: return spmd::shared_range(0, max);
    }
}

// Whether `a cmp b` holds for values of type t (low t.size bytes; signed types compare signed).
bool holds(std::uint64_t a, int cmp, std::uint64_t b, const TypeInfo& t) {
    const std::uint64_t m = low_mask(t.size);
    a &= m;
    b &= m;
    int c;
    if (t.is_signed) {
        const auto sx = [&](std::uint64_t v) {
            return t.size == 8 ? static_cast<std::int64_t>(v) : static_cast<std::int64_t>(static_cast<std::int32_t>(v));
        };
        c = sx(a) < sx(b) ? -1 : sx(a) > sx(b) ? 1 : 0;
    } else {
        c = a < b ? -1 : a > b ? 1 : 0;
    }
    switch (cmp) {
    case 0: return c == 0; // SHMEM_CMP_EQ
    case 1: return c != 0; // NE
    case 2: return c > 0;  // GT
    case 3: return c >= 0; // GE
    case 4: return c < 0;  // LT
    case 5: return c <= 0; // LE
    }
    return false;
}

const char* cmp_name(int cmp) {
    static const char* names[] = {"EQ", "NE", "GT", "GE", "LT", "LE"};
    return names[cmp];
}

// A value for which `v cmp value` holds (regenerating v when none of the candidates does).
std::uint64_t satisfying(std::uint64_t& v, int cmp, const TypeInfo& t, Gen& g) {
    for (;;) {
        const std::uint64_t m = low_mask(t.size);
        const std::uint64_t cands[] = {v, v - 1, v + 1, v - 1000, v + 1000, g.next()};
        for (std::uint64_t c : cands)
            if (holds(v, cmp, c, t)) return c & m;
        v = (v & ~m) | (g.next() & m);
    }
}

} // namespace

TEST_CASE("put_signal, put_signal_nbi: every type and sized form, SET and ADD, both heaps", "[signal]") {
    constexpr std::size_t R = 2048;
    for (int nbi = 0; nbi < 2; ++nbi) {
        INFO((nbi ? "shmem_TYPE_put_signal_nbi" : "shmem_TYPE_put_signal"));
        for (std::uint32_t t = 0; t < std::size(kBulk); ++t) { // a kernel per type (common.glsl)
            const Kernel k(kernel_spv(std::string(nbi ? "sync_sig_nbi_" : "sync_sig_") + std::to_string(t)));
            for (Space s : kSpaces) {
                INFO("space: " << spmd::name(s));
                std::vector<SigSpec> specs;
                for (int k2 = 0; k2 < 3; ++k2) {
                    const std::size_t e = kBulk[t].size;
                    specs.push_back({t, 0, e, spmd::shared_range(0, 7) * e, spmd::shared_range(0, 7) * e,
                                     random_count(R / e - 8), kBulk[t].name});
                }
                run_signal(k, s, R, specs, s);
            }
        }
    }
    for (int nbi = 0; nbi < 2; ++nbi) {
        INFO((nbi ? "shmem_putmem_signal_nbi / shmem_putSIZE_signal_nbi" : "shmem_putmem_signal / shmem_putSIZE_signal"));
        for (std::uint32_t t = 0; t < std::size(kSizedBytes); ++t) { // a kernel per sized form
            const std::string name = nbi ? "sync_sig_sized_nbi_" : "sync_sig_sized_";
            const Kernel k(kernel_spv(name + std::to_string(t)));
            for (Space s : kSpaces) {
                INFO("space: " << spmd::name(s));
                std::vector<SigSpec> specs;
                for (int k2 = 0; k2 < 3; ++k2) {
                    const std::size_t e = kSizedBytes[t], step = t == 0 ? 1 : e;
                    specs.push_back({t, 0, e, spmd::shared_range(0, 31 / step) * step,
                                     spmd::shared_range(0, 31 / step) * step, random_count((R - 32) / e),
                                     kSizedName[t]});
                }
                run_signal(k, s, R, specs, s);
            }
        }
    }
}

TEST_CASE("putmem_signal_wg: a workgroup per record, every pair of heaps for data and signal", "[signal]") {
    // Up to 6 of the proxy's 8 KiB payload slots per record, so a record's data goes through the
    // proxy in several pieces (with VKSHMEM_FORCE_PROXY, or SHARE_DEVICE_HEAPS=0 for the device
    // heap), and the signal after all of them, through the proxy or straight.
    constexpr std::size_t R = 48 << 10;
    const Kernel k(kernel_spv("sync_sig_wg_0"));
    for (Space s : kSpaces)
        for (Space sig_space : kSpaces) {
            INFO("data: " << spmd::name(s) << ", signals: " << spmd::name(sig_space));
            std::vector<SigSpec> specs;
            for (std::size_t n : {std::size_t{0}, std::size_t{1}, spmd::shared_range(2, 8191),
                                  spmd::shared_range(8192, R - 64), R - 64})
                specs.push_back({0, 0, 1, spmd::shared_range(0, 63), spmd::shared_range(0, 63), n, "putmem_signal_wg"});
            run_signal(k, s, R, specs, sig_space, true);
        }
}

// Runs `plan` (records without addresses: each gets its own ivar slot, initialised to
// ivar_values[i], and result slot) and checks the results.
static void run_waits(const Kernel& k, Space s, std::vector<Rec> plan, const std::vector<std::uint64_t>& ivar_values,
                      const std::vector<std::uint64_t>& expected, const std::vector<std::string>& what) {
    const std::size_t N = plan.size();
    spmd::SymArray<std::uint64_t> ivars(s, N), res(Space::Host, N);
    Records recs(N);
    spmd::local_write(ivars.get(), ivar_values);
    res.poison();
    for (std::size_t i = 0; i < N; ++i) {
        recs[i] = plan[i];
        recs[i].dst = dev(ivars.at(i));
        recs[i].c = dev(res.at(i));
    }
    Push p;
    p.recs = recs.address();
    p.count = static_cast<std::uint32_t>(N);
    REQUIRE(k.run(static_cast<std::uint32_t>((N + 63) / 64), p) == 0);
    for (std::size_t i = 0; i < N; ++i) {
        INFO(what[i] << ", ivar 0x" << std::hex << ivar_values[i] << ", value 0x" << plan[i].a);
        CHECK(res.get()[i] == expected[i]);
    }
    shmem_barrier_all();
}

TEST_CASE("wait_until and test: every type and comparison, both heaps", "[wait]") {
    for (std::uint32_t t = 0; t < std::size(kStd); ++t) { // a kernel per type (common.glsl)
        const Kernel k(kernel_spv("sync_wait_" + std::to_string(t)));
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s));
            std::vector<Rec> plan;
            std::vector<std::uint64_t> ivar_values, expected;
            std::vector<std::string> what;
            Gen g(spmd::shared_key());
            for (int rep = 0; rep < 2; ++rep) // every comparison twice, side by side
                for (int cmp = 0; cmp < 6; ++cmp)
                    for (std::uint32_t op = 0; op < 2; ++op) {
                        std::uint64_t v = g.next(); // a 4-byte type's slot: the high half is junk it must ignore
                        std::uint64_t value;
                        if (op == 0) {
                            value = satisfying(v, cmp, kStd[t], g);
                            expected.push_back(1);
                        } else {
                            const std::uint64_t cands[] = {v, v - 1, v + 1, g.next()};
                            value = cands[g.next() % 4] & low_mask(kStd[t].size);
                            expected.push_back(holds(v, cmp, value, kStd[t]) ? 1 : 0);
                        }
                        ivar_values.push_back(v);
                        plan.push_back(Rec{op, t, 0, static_cast<std::uint32_t>(cmp), 0, 0, 0, value, 0, 0});
                        what.push_back(std::string("shmem_") + kStd[t].name + (op ? "_test, " : "_wait_until, ") +
                                       cmp_name(cmp));
                    }
            run_waits(k, s, plan, ivar_values, expected, what);
        }
    }
}

TEST_CASE("signal_wait_until and signal_fetch, both heaps", "[wait]") {
    const Kernel k(kernel_spv("sync_wait_misc_0"));
    const TypeInfo sig_type{"signal", 8, false, false};
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        std::vector<Rec> plan;
        std::vector<std::uint64_t> ivar_values, expected;
        std::vector<std::string> what;
        Gen g(spmd::shared_key());
        for (int cmp = 0; cmp < 6; ++cmp) {
            std::uint64_t v = g.next();
            const std::uint64_t value = satisfying(v, cmp, sig_type, g);
            ivar_values.push_back(v);
            expected.push_back(v);
            plan.push_back(Rec{2, 0, 0, static_cast<std::uint32_t>(cmp), 0, 0, 0, value, 0, 0});
            what.push_back(std::string("shmem_signal_wait_until, ") + cmp_name(cmp));
        }
        ivar_values.push_back(g.next());
        expected.push_back(ivar_values.back());
        plan.push_back(Rec{3, 0, 0, 0, 0, 0, 0, 0, 0, 0});
        what.push_back("shmem_signal_fetch");
        run_waits(k, s, plan, ivar_values, expected, what);
    }
}

TEST_CASE("a later workgroup waits for an earlier one", "[wait]") {
    const Kernel k(kernel_spv("sync_wait_misc_0"));
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        if (s == Space::Host && (force_proxy() || on_several_gpus()) && on_gpu()) {
            // The proxy, a host thread, sets the flag (forced, or as every host-heap AMO where PEs
            // use several GPUs): on a GPU a running shader may not see a host write to a host
            // heap during the dispatch (shaders/README.md, "Host and shaders").
            report("skipped a proxied flag in the host heap: a GPU's running shader need not see host writes");
            continue;
        }
        spmd::SymArray<std::uint64_t> flag(s, 1), count(Space::Host, 1);
        flag.store(0, 0);
        count.store(0, 0);
        Push p;
        p.arg0 = dev(flag.get());
        p.arg1 = dev(count.get());
        p.mode = 1;
        REQUIRE(k.run(8, p) == 0);
        CHECK(flag.load(0) == 1);
        CHECK(count.load(0) == 7 * 64);
        shmem_barrier_all();
    }
}

TEST_CASE("a wait that cannot complete is reported by vkshmemx_dispatch", "[wait][errors]") {
    const Kernel k(kernel_spv("sync_wait_misc_0"));
    spmd::SymArray<std::uint64_t> ivar(Space::Host, 1);
    ivar.store(0, 0);
    Push p;
    p.arg0 = dev(ivar.get());
    p.mode = 2;
    const Kernel::Outcome o = k.run_capturing(1, p);
    INFO("vkshmemx_dispatch printed: " << o.text);
    CHECK(o.rc != 0);
    CHECK(o.text.find("vkshmem error: vkshmemx_dispatch") != std::string::npos);
    CHECK(o.text.find("a device-side wait exceeded its bound") != std::string::npos);
    report("a shmem_uint64_wait_until that cannot complete gave up after %.1f ms", o.ms);
    // The error is cleared: the next dispatch runs clean.
    ivar.store(0, ~std::uint64_t{0});
    CHECK(k.run(1, p) == 0);
    shmem_barrier_all();
}

// The host (not a shader) writes a peer's flag while that peer's kernel waits for it: a put, and
// an atomic set, which on a GPU's device heap is a device atomic (the AMO mailbox). Even PEs
// wait, each odd PE writes its left neighbour after a delay. Where the two share a GPU, the
// waiting kernel holds the GPU: the put's copy and the atomic must reach it nonetheless.
TEST_CASE("a host put or atomic on a peer's flag while the peer's kernel waits for it", "[live][host]") {
    const int n = spmd::npes(), me = spmd::me();
    if (n < 2) {
        report("skipped the host-to-running-kernel test: it needs 2 PEs");
        return;
    }
    const Kernel k(kernel_spv("sync_wait_misc_0"));
    const bool waiter = me % 2 == 0 && me + 1 < n;
    for (Space s : kSpaces) {
        if (s == Space::Host && on_gpu()) {
            // A GPU's running shader need not see host writes to a host heap (shaders/README.md).
            report("skipped the host heap: a GPU's running shader need not see host writes to it");
            continue;
        }
        for (bool atomic : {false, true}) {
            INFO("space: " << spmd::name(s) << (atomic ? ", shmem_uint64_atomic_set" : ", shmem_uint64_p"));
            spmd::SymArray<std::uint64_t> flag(s, 1);
            flag.store(0, 0);
            Push p;
            p.arg0 = dev(flag.get());
            p.mode = 2; // invocation 0 waits until the flag is ~0
            double us = 0;
            const double ms = host_call_during_dispatch(k, p, [&](int waiter_pe) {
                if (atomic) shmem_uint64_atomic_set(flag.get(), ~std::uint64_t{0}, waiter_pe);
                else shmem_uint64_p(flag.get(), ~std::uint64_t{0}, waiter_pe);
                shmem_quiet();
            }, us);
            if (waiter) {
                CHECK(flag.load(0) == ~std::uint64_t{0});
                report("%s: PE %d's %s took %.1f us, 20 ms into PE %d's dispatch of %.1f ms", spmd::name(s), me + 1,
                       atomic ? "shmem_uint64_atomic_set" : "shmem_uint64_p", us, me, ms);
            }
            shmem_barrier_all();
        }
    }
}

TEST_CASE("live, all PEs at once: shmem_barrier_all_wg rounds, put_signal rings (an invocation's, a workgroup's)",
          "[live]") {
    if (const char* why = why_not_concurrent()) {
        report("skipped the live cross-PE test: %s", why);
        return;
    }
    // A kernel per mode (sync.glsl): barrier rounds, an invocation's ring, a workgroup's ring.
    const Kernel k(kernel_spv("sync_live_0")), ring(kernel_spv("sync_live_1")), ring_wg(kernel_spv("sync_live_2"));
    const int n = spmd::npes();
    spmd::SymArray<std::uint64_t> errors(Space::Host, 1);
    for (const Kernel* each : {&k, &ring, &ring_wg}) {
        // Compiled first (zero rounds; the ring kernels return at once in mode 0): lavapipe
        // compiles at the first dispatch, seconds with a cold shader cache, and the other PEs'
        // waits would outlast their bound meanwhile.
        Records none(1);
        Push w;
        w.recs = none.address();
        REQUIRE(each->run(1, w) == 0);
    }
    bool other_devices = false;
    for (int pe = 0; pe < n; ++pe) other_devices = other_devices || !same_device(pe);
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        if (s == Space::Host && on_gpu() && (other_devices || force_proxy())) {
            // Another GPU's stores and atomics, or the proxy's host writes, reach a host heap
            // behind this GPU's cache: a running shader need not see them (shaders/README.md).
            report("skipped the host heap: written by another GPU or the proxy while this GPU's shader runs");
            continue;
        }
        // The barrier's counter in the space under test (zeroed once; never reset).
        spmd::SymArray<std::uint64_t> counter(s, 1), box(s, static_cast<std::size_t>(n));
        counter.store(0, 0);
        Records recs(1);
        for (int rep = 0; rep < 3; ++rep) {
            INFO("shmem_barrier_all_wg, dispatch " << rep);
            errors.store(0, 0);
            recs[0] = Rec{};
            recs[0].c = dev(errors.get());
            shmem_barrier_all();
            Push p;
            p.recs = recs.address();
            p.arg0 = dev(box.get());
            p.arg1 = dev(counter.get());
            p.count = 4;
            p.mode = 0;
            const auto t0 = std::chrono::steady_clock::now();
            const int rc = k.run(1, p);
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            CHECK(rc == 0);
            CHECK(errors.load(0) == 0);
            report("%s: 4 rounds of p to every PE + 2 x shmem_barrier_all_wg at %d PEs: %.2f ms", spmd::name(s),
                   n, ms);
        }
        shmem_barrier_all();
        for (std::uint32_t mode : {1u, 2u}) {
            INFO((mode == 1 ? "shmem_putmem_signal" : "shmem_putmem_signal_wg")
                 << " to the right, shmem_signal_wait_until for the left");
            constexpr std::size_t B = 20000;
            spmd::SymArray<unsigned char> data(s, B), mine(s, B), seen(Space::Host, B);
            spmd::SymArray<std::uint64_t> sig(s, 1);
            const std::uint64_t key = spmd::shared_key();
            const std::size_t bytes = spmd::shared_range(1, B);
            spmd::local_fill_bytes(mine.get(), B, Gen(key, static_cast<std::uint64_t>(spmd::me())));
            data.poison();
            sig.store(0, 0);
            recs[0] = Rec{0, 0, 0, 0, dev(data.get()), dev(mine.get()), bytes, dev(sig.get()), dev(seen.get()), 0};
            shmem_barrier_all();
            Push p;
            p.recs = recs.address();
            p.mode = mode;
            CHECK((mode == 1 ? ring : ring_wg).run(1, p) == 0);
            std::vector<unsigned char> left(B);
            spmd::fill_bytes(left.data(), B, Gen(key, static_cast<std::uint64_t>(spmd::left())));
            SPMD_REQUIRE_OK(spmd::diff_bytes(seen.get(), left.data(), bytes)); // complete once signalled
            shmem_barrier_all();
            CHECK(sig.load(0) == 1);
            shmem_barrier_all();
        }
    }
}
