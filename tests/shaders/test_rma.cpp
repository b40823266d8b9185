// SPDX-License-Identifier: BSL-1.0
// Shader RMA: every typed, sized and mem put/get of the GLSL device library (blocking, nbi and
// workgroup forms) and every p/g, to the right neighbour (puts) and from it (gets), on the host
// heap and the device heap, at random offsets and sizes with poisoned destinations; transfers of
// 0.25-4 MiB; shmem_ptr, my_pe, n_pes; shmem_quiet and shmem_fence; and the errors a shader can
// make (bad PE, an address outside the heaps, a transfer larger than the loop budget), which
// vkshmemx_dispatch must report. Run directly and with VKSHMEM_FORCE_PROXY=1.
#include "shader_test.hpp"
#include "shader_rma_kernels.hpp"


#include <vector>

namespace {

using namespace shader_test;
using spmd::Gen;
using spmd::Space;

constexpr Space kSpaces[] = {Space::Host, Space::Device};

// One transfer of a bulk test: record fields and where its bytes go. Offsets are in bytes
// within the record's region; n is in elements.
struct Spec {
    std::uint32_t type = 0;
    std::uint32_t op = 0;
    bool put = true;       // put to the right neighbour, else get from it
    std::size_t elem = 1;  // bytes per element
    std::size_t doff = 0;
    std::size_t soff = 0;
    std::size_t n = 0;
    const char* name = "";
};

// Runs one dispatch of `specs` (one record each: per invocation, or per workgroup when wg),
// each in its own region of `region` bytes of a source and a destination array in space s,
// and checks every destination region: the peer's source bytes where written, poison around.
double run_bulk(const Kernel& k, bool wg, Space s, std::size_t region, const std::vector<Spec>& specs) {
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
        r.type = sp.type;
        r.pe = spmd::right();
        r.dst = dev(dst.get()) + i * region + sp.doff;
        r.src = dev(src.get()) + i * region + sp.soff;
        r.n = sp.n;
    }
    shmem_barrier_all();
    Push p;
    p.recs = recs.address();
    p.count = static_cast<std::uint32_t>(specs.size());
    const std::uint32_t groups = wg ? p.count : (p.count + 63) / 64;
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = k.run(groups, p);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE(rc == 0);
    shmem_barrier_all();

    const std::vector<unsigned char> got = dst.load_all();
    std::vector<unsigned char> from_left(total), from_right(total);
    spmd::fill_bytes(from_left.data(), total, Gen(key, static_cast<std::uint64_t>(spmd::left())));
    spmd::fill_bytes(from_right.data(), total, Gen(key, static_cast<std::uint64_t>(spmd::right())));
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const Spec& sp = specs[i];
        INFO("record " << i << ": " << (sp.put ? "put" : "get") << " " << sp.name << " op " << sp.op << ", " << sp.n
                       << " elements of " << sp.elem << " B, destination offset " << sp.doff
                       << ", source offset " << sp.soff);
        const std::size_t base = i * region, bytes = sp.n * sp.elem;
        const std::vector<unsigned char>& expected = sp.put ? from_left : from_right;
        SPMD_REQUIRE_OK(spmd::diff_bytes(got.data() + base + sp.doff, expected.data() + base + sp.soff, bytes));
        SPMD_REQUIRE_OK(spmd::check_poison(got.data() + base, 0, sp.doff, spmd::poison_byte()));
        SPMD_REQUIRE_OK(spmd::check_poison(got.data() + base, sp.doff + bytes, region, spmd::poison_byte()));
    }
    shmem_barrier_all();
    return ms;
}

// Random element counts up to what fits in `region` with offsets of up to 7 elements; now and
// then an empty or a one-element transfer.
std::size_t random_count(std::size_t region, std::size_t elem) {
    const std::size_t max = region / elem - 8;
    switch (spmd::shared_range(0, 7)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return spmd::shared_range(2, 16);
    default: return spmd::shared_range(0, max);
    }
}

// `per` records of bulk type t (its kernel's one type), run side by side.
std::vector<Spec> typed_specs(std::size_t region, bool put, std::uint32_t t, int per = 3) {
    std::vector<Spec> v;
    for (int k = 0; k < per; ++k) {
        Spec sp;
        sp.type = t;
        sp.put = put;
        sp.elem = kBulk[t].size;
        sp.doff = spmd::shared_range(0, 7) * sp.elem;
        sp.soff = spmd::shared_range(0, 7) * sp.elem;
        sp.n = random_count(region, sp.elem);
        sp.name = kBulk[t].name;
        v.push_back(sp);
    }
    return v;
}

// `per` records of sized form t (0 mem, then 8 .. 128: its kernel's one form); mem at any byte
// offset, the others at multiples of their element size.
std::vector<Spec> sized_specs(std::size_t region, bool put, std::uint32_t t, int per = 4) {
    std::vector<Spec> v;
    for (int k = 0; k < per; ++k) {
        Spec sp;
        sp.type = t;
        sp.put = put;
        sp.elem = kSizedBytes[t];
        const std::size_t step = t == 0 ? 1 : sp.elem;
        sp.doff = spmd::shared_range(0, 31 / step) * step;
        sp.soff = spmd::shared_range(0, 31 / step) * step;
        sp.n = random_count(region - 32, sp.elem);
        sp.name = kSizedName[t];
        v.push_back(sp);
    }
    return v;
}

// The kernel of `kernel` for the one type (or sized form) t of its table (common.glsl).
std::string chunk_name(const char* kernel, std::size_t t) { return std::string(kernel) + "_" + std::to_string(t); }

} // namespace

TEST_CASE("typed put, put_nbi, get, get_nbi: every type, both heaps", "[rma]") {
    struct Op {
        const char* kernel;
        const char* routine;
        bool put;
    };
    const Op ops[] = {{"rma_put", "shmem_TYPE_put", true},
                      {"rma_put_nbi", "shmem_TYPE_put_nbi + shmem_quiet", true},
                      {"rma_get", "shmem_TYPE_get", false},
                      {"rma_get_nbi", "shmem_TYPE_get_nbi + shmem_quiet", false}};
    for (const Op& op : ops) {
        INFO(op.routine);
        for (std::uint32_t t = 0; t < std::size(kBulk); ++t) {
            const Kernel k(kernel_spv(chunk_name(op.kernel, t)));
            for (Space s : kSpaces) {
                INFO("space: " << spmd::name(s));
                run_bulk(k, false, s, 1024, typed_specs(1024, op.put, t));
            }
        }
    }
}

TEST_CASE("typed put_wg and get_wg: one workgroup per type, both heaps", "[rma]") {
    for (int put = 1; put >= 0; --put) {
        INFO((put ? "shmem_TYPE_put_wg" : "shmem_TYPE_get_wg"));
        for (std::uint32_t t = 0; t < std::size(kBulk); ++t) {
            const Kernel k(kernel_spv(chunk_name(put ? "rma_put_wg" : "rma_get_wg", t)));
            for (Space s : kSpaces) {
                INFO("space: " << spmd::name(s));
                run_bulk(k, true, s, 16384, typed_specs(16384, put != 0, t, 2));
            }
        }
    }
}

TEST_CASE("putmem, getmem and put/get 8..128, blocking and nbi, at any alignment", "[rma]") {
    struct Op {
        const char* kernel;
        const char* routine;
        bool put;
    };
    const Op ops[] = {{"rma_mem_put", "shmem_putmem / shmem_putSIZE", true},
                      {"rma_mem_put_nbi", "shmem_putmem_nbi / shmem_putSIZE_nbi + shmem_quiet", true},
                      {"rma_mem_get", "shmem_getmem / shmem_getSIZE", false},
                      {"rma_mem_get_nbi", "shmem_getmem_nbi / shmem_getSIZE_nbi + shmem_quiet", false}};
    for (const Op& op : ops) {
        INFO(op.routine);
        for (std::uint32_t t = 0; t < std::size(kSizedBytes); ++t) {
            const Kernel k(kernel_spv(chunk_name(op.kernel, t)));
            for (Space s : kSpaces) {
                INFO("space: " << spmd::name(s));
                run_bulk(k, false, s, 8192, sized_specs(8192, op.put, t));
            }
        }
    }
}

TEST_CASE("putmem_wg, getmem_wg and put/get 8..128 _wg, at any alignment", "[rma]") {
    for (int put = 1; put >= 0; --put) {
        INFO((put ? "shmem_putmem_wg / shmem_putSIZE_wg" : "shmem_getmem_wg / shmem_getSIZE_wg"));
        for (std::uint32_t t = 0; t < std::size(kSizedBytes); ++t) {
            const Kernel k(kernel_spv(chunk_name(put ? "rma_mem_put_wg" : "rma_mem_get_wg", t)));
            for (Space s : kSpaces) {
                INFO("space: " << spmd::name(s));
                run_bulk(k, true, s, 65536, sized_specs(65536, put != 0, t, 3));
            }
        }
    }
}

TEST_CASE("transfers of 0.25-4 MiB: one invocation and one workgroup", "[rma][large]") {
    const Kernel put(kernel_spv("rma_mem_put_0")), get(kernel_spv("rma_mem_get_0"));
    const Kernel put_wg(kernel_spv("rma_mem_put_wg_0")), get_wg(kernel_spv("rma_mem_get_wg_0"));
    constexpr std::size_t MiB = std::size_t{1} << 20;
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        Spec aligned;
        aligned.n = MiB;
        aligned.name = "mem, 16-byte aligned";
        Spec shifted = aligned;
        shifted.n = 600 * 1024;
        shifted.doff = 3;
        shifted.soff = 1;
        shifted.name = "mem, source and destination 2 bytes apart";
        const double put_ms = run_bulk(put, false, s, MiB + 64, {aligned});
        report("%s: putmem 1 MiB by one invocation: %.2f ms", spmd::name(s), put_ms);
        run_bulk(put, false, s, MiB + 64, {shifted});
        // A get by one invocation through the proxy waits for its answers (once per
        // VKSHMEM_PROXY_BATCH pieces), and on lavapipe every poll of those waits counts against
        // the subgroup's loop budget (about 100 ms of waiting in all): a quarter of a MiB keeps it
        // inside also when 4 PEs share 2 cores and the proxies answer in milliseconds.
        Spec g = aligned;
        g.put = false;
        g.n = MiB / 4;
        const double get_ms = run_bulk(get, false, s, MiB + 64, {g});
        report("%s: getmem 256 KiB by one invocation: %.2f ms", spmd::name(s), get_ms);
        Spec big = aligned;
        big.n = 4 * MiB;
        big.doff = 16;
        big.soff = 48;
        big.name = "mem, 4 MiB";
        const double wg_ms = run_bulk(put_wg, true, s, 4 * MiB + 64, {big});
        report("%s: putmem_wg 4 MiB by one workgroup of 64: %.2f ms", spmd::name(s), wg_ms);
        big.put = false;
        big.doff = 5;
        big.soff = 9;
        const double get_wg_ms = run_bulk(get_wg, true, s, 4 * MiB + 64, {big});
        report("%s: getmem_wg 4 MiB (misaligned) by one workgroup of 64: %.2f ms", spmd::name(s), get_wg_ms);
    }
}

TEST_CASE("p and g: every value type, both heaps", "[rma]") {
    constexpr std::size_t kPerType = 8;
    for (std::size_t c = 0; c < std::size(kValue); ++c) {
        const Kernel pg(kernel_spv(chunk_name("rma_pg", c)));
        const std::size_t N = kPerType; // records of the kernel's one type c
        for (Space s : kSpaces) {
            INFO("space: " << spmd::name(s));
            for (std::uint32_t op = 0; op < 2; ++op) {
                INFO((op == 0 ? "shmem_TYPE_p to the right neighbour" : "shmem_TYPE_g from the right neighbour"));
                spmd::SymArray<std::uint64_t> dst(s, N), src(s, N);
                Records recs(N);
                const std::uint64_t key = spmd::shared_key();
                auto values_of = [&](int pe) {
                    std::vector<std::uint64_t> v(N);
                    Gen g(key, static_cast<std::uint64_t>(pe));
                    for (std::size_t i = 0; i < N; ++i) {
                        const TypeInfo& t = kValue[c];
                        const std::uint64_t value = random_bits(t, g);
                        const std::uint64_t junk = (g.next() << 32) & ~low_mask(t.size); // unused half
                        v[i] = value | junk;
                    }
                    return v;
                };
                spmd::local_write(src.get(), values_of(spmd::me()));
                dst.poison();
                for (std::size_t i = 0; i < N; ++i) {
                    Rec& r = recs[i];
                    r.op = op;
                    r.type = static_cast<std::uint32_t>(c);
                    r.pe = spmd::right();
                    r.dst = dev(dst.at(i));
                    r.src = dev(src.at(i));
                }
                shmem_barrier_all();
                Push p;
                p.recs = recs.address();
                p.count = static_cast<std::uint32_t>(N);
                REQUIRE(pg.run(1, p) == 0);
                shmem_barrier_all();
                const std::vector<std::uint64_t> expected = values_of(op == 0 ? spmd::left() : spmd::right());
                const std::vector<std::uint64_t> got = dst.load_all();
                std::uint64_t poison;
                std::memset(&poison, spmd::poison_byte(), 8);
                for (std::size_t i = 0; i < N; ++i) {
                    const TypeInfo& t = kValue[c];
                    INFO("element " << i << ", type " << t.name);
                    const std::uint64_t m = low_mask(t.size);
                    CHECK((got[i] & m) == (expected[i] & m));
                    CHECK((got[i] & ~m) == (poison & ~m)); // the other half of a 4-byte type's slot
                }
                shmem_barrier_all();
            }
        }
    }
}

TEST_CASE("shmem_ptr, shmem_my_pe, shmem_n_pes", "[rma]") {
    const Kernel misc(kernel_spv("rma_misc_0"));
    const int n = spmd::npes(), me = spmd::me();
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        spmd::SymArray<std::uint64_t> obj(s, static_cast<std::size_t>(n)), out(Space::Host, 3 * static_cast<std::size_t>(n));
        Records recs(static_cast<std::size_t>(n));
        const std::uint64_t key = spmd::shared_key();
        auto value = [&](int from, int to) { return spmd::mix(key ^ static_cast<std::uint64_t>(from * 1000 + to)); };
        obj.poison();
        for (int pe = 0; pe < n; ++pe) {
            Rec& r = recs[static_cast<std::size_t>(pe)];
            r.op = 0;
            r.pe = pe;
            r.dst = dev(out.at(3 * static_cast<std::size_t>(pe)));
            r.src = dev(obj.at(static_cast<std::size_t>(me)));
            r.n = value(me, pe);
        }
        shmem_barrier_all();
        Push p;
        p.recs = recs.address();
        p.count = static_cast<std::uint32_t>(n);
        REQUIRE(misc.run(1, p) == 0);
        shmem_barrier_all();
        for (int pe = 0; pe < n; ++pe) {
            INFO("target PE " << pe);
            const std::uint64_t* o = out.get() + 3 * pe;
            CHECK(o[0] == static_cast<std::uint64_t>(me));
            CHECK(o[1] == static_cast<std::uint64_t>(n));
            const std::uint64_t ptr = o[2];
            if (force_proxy()) {
                CHECK(ptr == 0); // VKSHMEM_FORCE_PROXY: nothing is directly reachable
                continue;
            }
            // The host heaps of node-local PEs are reachable by device address, but for those on
            // another GPU, which shaders reach through the proxy (shaders/README.md, "Routes").
            if (s == Space::Host) {
                if (on_gpu() && !same_device(pe)) CHECK(ptr == 0);
                else CHECK(ptr != 0);
            }
            if (pe == me && ptr != 0) CHECK(ptr == dev(obj.at(static_cast<std::size_t>(me))));
            if (ptr != 0) {
                std::uint64_t v = 0;
                shmem_getmem(&v, obj.at(static_cast<std::size_t>(me)), 8, pe);
                CHECK(v == value(me, pe)); // the store through the pointer landed on that PE
            }
        }
        shmem_barrier_all();
    }
}

TEST_CASE("shmem_quiet completes and shmem_fence orders puts", "[rma]") {
    const Kernel nbi_quiet(kernel_spv("rma_misc_2")), fence_quiet(kernel_spv("rma_misc_3"));
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        constexpr std::size_t B = 10000;
        spmd::SymArray<unsigned char> dst(s, 2 * B), src(s, 2 * B), back(Space::Host, 2 * B);
        spmd::SymArray<std::uint64_t> flag(s, 1);
        Records recs(2);
        const std::uint64_t key = spmd::shared_key(), flag_value = spmd::shared_key();
        spmd::local_fill_bytes(src.get(), 2 * B, Gen(key, static_cast<std::uint64_t>(spmd::me())));
        dst.poison();
        flag.store(0, 0);
        const std::size_t n1 = spmd::shared_range(1, B), n2 = spmd::shared_range(1, B);
        // 3: putmem_nbi, quiet, getmem back; 4: putmem, fence, p of the flag, quiet, getmem back
        recs[0] = Rec{3, 0, spmd::right(), 0, dev(dst.get()), dev(src.get()), n1, dev(back.get()), 0, 0};
        recs[1] = Rec{4, 0, spmd::right(), 0, dev(dst.at(B)), dev(src.at(B)), n2, dev(back.at(B)), flag_value,
                      dev(flag.get())};
        shmem_barrier_all();
        Push p;
        p.recs = recs.address();
        p.count = 1;
        REQUIRE(nbi_quiet.run(1, p) == 0);
        p.recs = recs.address() + sizeof(Rec);
        REQUIRE(fence_quiet.run(1, p) == 0);
        std::vector<unsigned char> mine(2 * B);
        spmd::fill_bytes(mine.data(), 2 * B, Gen(key, static_cast<std::uint64_t>(spmd::me())));
        {
            INFO("what the shader read back after shmem_quiet");
            SPMD_REQUIRE_OK(spmd::diff_bytes(back.get(), mine.data(), n1));
            SPMD_REQUIRE_OK(spmd::diff_bytes(back.get() + B, mine.data() + B, n2));
        }
        shmem_barrier_all();
        std::vector<unsigned char> left(2 * B);
        spmd::fill_bytes(left.data(), 2 * B, Gen(key, static_cast<std::uint64_t>(spmd::left())));
        SPMD_REQUIRE_OK(spmd::diff_sym(dst.get(), left.data(), n1));
        SPMD_REQUIRE_OK(spmd::diff_sym(dst.at(B), left.data() + B, n2));
        CHECK(flag.load(0) == flag_value);
        shmem_barrier_all();
    }
}

TEST_CASE("errors: a bad PE, an address outside the heaps, a transfer over the loop budget", "[rma][errors]") {
    const Kernel misc(kernel_spv("rma_misc_1"));
    const std::size_t big = std::size_t{2} << 20;
    spmd::SymArray<unsigned char> dst(Space::Host, big + 64), src(Space::Host, big + 64);
    Records recs(1);
    dst.poison();
    shmem_barrier_all();
    Push p;
    p.recs = recs.address();
    p.count = 1;
    struct Case {
        const char* what;
        Rec rec;
        const char* expect;
    };
    const Case cases[] = {
        {"putmem to PE n_pes", Rec{1, 0, spmd::npes(), 0, dev(dst.get()), dev(src.get()), 64, 0, 0, 0},
         "a shader named a PE that does not exist"},
        {"getmem from PE -1", Rec{2, 0, -1, 0, dev(dst.get()), dev(src.get()), 64, 0, 0, 0},
         "a shader named a PE that does not exist"},
        {"putmem to address 64", Rec{1, 0, spmd::right(), 0, 64, dev(src.get()), 64, 0, 0, 0},
         "a shader passed an address in neither symmetric heap"},
        {"putmem running past the end of the host heap",
         Rec{1, 0, spmd::right(), 0, dev(dst.get()), dev(src.get()), std::uint64_t{1} << 40, 0, 0, 0},
         "a shader passed an address in neither symmetric heap"},
        {"putmem of 2 MiB, misaligned, by one invocation",
         Rec{1, 0, spmd::right(), 0, dev(dst.get()), dev(src.at(1)), big, 0, 0, 0},
         "one shader operation was larger than the device library takes"},
    };
    // The last case exists only where the loop budget applies (lavapipe); elsewhere a transfer
    // of any size runs.
    const std::size_t n_cases = std::size(cases) - (loop_budget_applies() ? 0 : 1);
    for (std::size_t i = 0; i < n_cases; ++i) {
        const Case& c = cases[i];
        INFO(c.what);
        recs[0] = c.rec;
        shmem_barrier_all();
        const Kernel::Outcome o = misc.run_capturing(1, p);
        INFO("vkshmemx_dispatch printed: " << o.text);
        CHECK(o.rc != 0);
        CHECK(o.text.find("vkshmem error: vkshmemx_dispatch") != std::string::npos);
        CHECK(o.text.find(c.expect) != std::string::npos);
    }
    shmem_barrier_all();
    // Nothing was written anywhere, and the next dispatch runs clean.
    SPMD_REQUIRE_OK(spmd::check_poison_sym(dst.get(), 0, big + 64, spmd::poison_byte()));
    recs[0] = Rec{1, 0, spmd::right(), 0, dev(dst.get()), dev(src.get()), 64, 0, 0, 0};
    shmem_barrier_all();
    CHECK(misc.run(1, p) == 0);
    shmem_barrier_all();
}
