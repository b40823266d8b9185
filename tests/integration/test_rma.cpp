// SPDX-License-Identifier: BSL-1.0
// RMA: put, get, put_nbi, get_nbi, p, g, iput, iget for all 24 standard types; the sized forms
// (8/16/32/64/128) and putmem/getmem; ring, self and all-to-all patterns; 1 B .. 1 MiB transfers
// at unaligned offsets. Destinations are poisoned first: every byte outside the written range
// must still hold the poison afterwards.
#include "spmd.hpp"
#include "spmd_types.hpp"

#include <algorithm>

namespace {

using spmd::Gen;
using spmd::Space;

// ---- One ops struct per type: the typed C routines under uniform names ------------------------
#define SPMD_RMA_OPS(T, N)                                                                                   \
    struct rma_##N {                                                                                         \
        using type = T;                                                                                      \
        static void put(T* d, const T* s, size_t n, int pe) { shmem_##N##_put(d, s, n, pe); }               \
        static void get(T* d, const T* s, size_t n, int pe) { shmem_##N##_get(d, s, n, pe); }               \
        static void put_nbi(T* d, const T* s, size_t n, int pe) { shmem_##N##_put_nbi(d, s, n, pe); }       \
        static void get_nbi(T* d, const T* s, size_t n, int pe) { shmem_##N##_get_nbi(d, s, n, pe); }       \
        static void p(T* d, T v, int pe) { shmem_##N##_p(d, v, pe); }                                        \
        static T g(const T* s, int pe) { return shmem_##N##_g(s, pe); }                                      \
        static void iput(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {                \
            shmem_##N##_iput(d, s, dst, sst, n, pe);                                                         \
        }                                                                                                    \
        static void iget(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {                \
            shmem_##N##_iget(d, s, dst, sst, n, pe);                                                         \
        }                                                                                                    \
    };
SPMD_RMA_TYPES(SPMD_RMA_OPS)
#undef SPMD_RMA_OPS

struct Bits128 {
    std::uint64_t w[2];
};

#define SPMD_SIZED_OPS(BITS, T)                                                                              \
    struct sized_##BITS {                                                                                    \
        using type = T;                                                                                      \
        static void put(T* d, const T* s, size_t n, int pe) { shmem_put##BITS(d, s, n, pe); }               \
        static void get(T* d, const T* s, size_t n, int pe) { shmem_get##BITS(d, s, n, pe); }               \
        static void put_nbi(T* d, const T* s, size_t n, int pe) { shmem_put##BITS##_nbi(d, s, n, pe); }     \
        static void get_nbi(T* d, const T* s, size_t n, int pe) { shmem_get##BITS##_nbi(d, s, n, pe); }     \
        static void iput(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {                \
            shmem_iput##BITS(d, s, dst, sst, n, pe);                                                         \
        }                                                                                                    \
        static void iget(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) {                \
            shmem_iget##BITS(d, s, dst, sst, n, pe);                                                         \
        }                                                                                                    \
    };
SPMD_SIZED_OPS(8, std::uint8_t)
SPMD_SIZED_OPS(16, std::uint16_t)
SPMD_SIZED_OPS(32, std::uint32_t)
SPMD_SIZED_OPS(64, std::uint64_t)
SPMD_SIZED_OPS(128, Bits128)
#undef SPMD_SIZED_OPS

struct sized_mem {
    using type = unsigned char;
    static void put(void* d, const void* s, size_t n, int pe) { shmem_putmem(d, s, n, pe); }
    static void get(void* d, const void* s, size_t n, int pe) { shmem_getmem(d, s, n, pe); }
    static void put_nbi(void* d, const void* s, size_t n, int pe) { shmem_putmem_nbi(d, s, n, pe); }
    static void get_nbi(void* d, const void* s, size_t n, int pe) { shmem_getmem_nbi(d, s, n, pe); }
};

template <class Ops> constexpr bool has_pg = requires { &Ops::p; };
template <class Ops> constexpr bool has_strided = requires { &Ops::iput; };

// Bytes of T that hold its value: x87 long double is 10 value bytes in 16, and the padding is not
// part of what an element-wise copy (iget/iput of long double) has to carry.
template <class T> constexpr std::size_t value_bytes() {
    if constexpr (std::is_same_v<T, long double> && std::numeric_limits<long double>::digits == 64) return 10;
    else return sizeof(T);
}

// diff_bytes over n elements of T, ignoring padding bytes inside elements.
template <class T> std::string diff_elems(const T* actual, const T* expected, std::size_t n, std::size_t base = 0) {
    if constexpr (value_bytes<T>() == sizeof(T)) {
        return spmd::diff_bytes(actual, expected, n * sizeof(T), base * sizeof(T));
    } else {
        std::vector<unsigned char> a(n * sizeof(T)), e(n * sizeof(T));
        std::memcpy(a.data(), static_cast<const void*>(actual), a.size());
        std::memcpy(e.data(), static_cast<const void*>(expected), e.size());
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t b = value_bytes<T>(); b < sizeof(T); ++b) a[i * sizeof(T) + b] = e[i * sizeof(T) + b] = 0;
        return spmd::diff_bytes(a.data(), e.data(), a.size(), base * sizeof(T));
    }
}

// Region layout of the ring test, in elements of T.
constexpr std::size_t R = 40;
constexpr std::size_t kSrc = 0;        // 4R: this PE's data, read by gets
constexpr std::size_t kPut = 4 * R;    // R: written by put
constexpr std::size_t kPutNbi = 5 * R; // R: written by put_nbi
constexpr std::size_t kP = 6 * R;      // R: written by p
constexpr std::size_t kIput = 7 * R;   // 4R: written by iput; its last element only by zero-length ops
constexpr std::size_t kTotal = 11 * R;
constexpr std::size_t kRingBytes = kTotal * 16;

struct Strided {
    std::size_t off, soff, n; // destination offset, source offset, element count
    std::ptrdiff_t dst, sst;
};

// A strided transfer of n >= 1 elements whose destination (stride dst) fits in dst_room
// elements and whose source (stride sst) fits in src_room elements, all PEs agreeing.
Strided pick_strided(std::size_t dst_room, std::size_t src_room, std::size_t max_n) {
    Strided s{};
    s.dst = static_cast<std::ptrdiff_t>(spmd::shared_range(1, 4));
    s.sst = static_cast<std::ptrdiff_t>(spmd::shared_range(1, 3));
    std::size_t fit = std::min((dst_room - 1) / s.dst, (src_room - 1) / s.sst) + 1;
    s.n = spmd::shared_range(1, std::min(fit, max_n));
    s.off = spmd::shared_range(0, dst_room - 1 - (s.n - 1) * s.dst);
    s.soff = spmd::shared_range(0, src_room - 1 - (s.n - 1) * s.sst);
    return s;
}

// The ring test of one type: this PE writes into PE me+shift and reads from PE me+shift (shift 0:
// itself), so it receives writes from PE me-shift.
template <class Ops> void rma_ring(unsigned char* raw, int shift) {
    using T = typename Ops::type;
    T* const buf = reinterpret_cast<T*>(raw);
    const unsigned char poison = spmd::poison_byte();
    const int me = spmd::me(), to = spmd::right(shift), from = spmd::left(shift);
    const std::uint64_t key = spmd::shared_key();

    // Everything all PEs agree on.
    const std::size_t put_off = spmd::shared_range(0, R / 2), put_n = spmd::shared_range(1, R - put_off);
    const std::size_t nbi_off = spmd::shared_range(0, R / 2), nbi_n = spmd::shared_range(1, R - nbi_off);
    const std::uint64_t p_mask = spmd::shared_rng()() | 1; // which elements of the P region get a p
    const Strided ip = pick_strided(4 * R - 1, 4 * R, R);
    const std::size_t get_src = spmd::shared_range(0, 3 * R), get_n = spmd::shared_range(1, R);
    const std::size_t get_dst = spmd::shared_range(0, 15);
    const std::size_t gnbi_src = spmd::shared_range(0, 3 * R), gnbi_n = spmd::shared_range(1, R);
    const std::size_t gnbi_dst = spmd::shared_range(0, 15);
    const Strided ig = pick_strided(2 * R, 4 * R, R); // dst: private, src: the SRC region
    std::vector<std::size_t> g_at;
    for (int i = 0; i < 8; ++i) g_at.push_back(spmd::shared_range(0, 4 * R - 1));

    // What PE `pe` sends; any PE can rebuild it.
    auto put_src = [&](int pe) { return spmd::make_values<T>(R, Gen(key, pe, 1)); };
    auto nbi_src = [&](int pe) { return spmd::make_values<T>(R, Gen(key, pe, 2)); };
    auto p_vals = [&](int pe) { return spmd::make_values<T>(R, Gen(key, pe, 3)); };
    auto iput_src = [&](int pe) { return spmd::make_values<T>(4 * R, Gen(key, pe, 4)); };
    auto src_region = [&](int pe) { return spmd::make_values<T>(4 * R, Gen(key, pe, 0)); };

    // Private (non-symmetric) destinations of the gets, poisoned.
    auto poisoned = [&](std::size_t n) {
        std::vector<T> v(n);
        std::memset(static_cast<void*>(v.data()), poison, n * sizeof(T));
        return v;
    };
    std::vector<T> got = poisoned(R + 16), got_nbi = poisoned(R + 16), got_i = poisoned(2 * R);
    std::vector<T> got_zero = poisoned(4);
    std::vector<T> got_g(g_at.size());

    {
        // Poison everything, then this PE's source region (buf may be in the device heap).
        std::vector<unsigned char> init(kTotal * sizeof(T), poison);
        spmd::fill_values(reinterpret_cast<T*>(init.data()) + kSrc, 4 * R, Gen(key, me, 0));
        spmd::local_store(raw, init.data(), init.size());
    }
    shmem_barrier_all();

    {
        auto ps = put_src(me), ns = nbi_src(me), is = iput_src(me);
        Ops::put(buf + kPut + put_off, ps.data(), put_n, to);
        Ops::put_nbi(buf + kPutNbi + nbi_off, ns.data(), nbi_n, to);
        if constexpr (has_pg<Ops>) {
            auto pv = p_vals(me);
            for (std::size_t i = 0; i < R; ++i)
                if (p_mask >> (i % 64) & 1) Ops::p(buf + kP + i, pv[i], to);
        }
        if constexpr (has_strided<Ops>) Ops::iput(buf + kIput + ip.off, is.data() + ip.soff, ip.dst, ip.sst, ip.n, to);
        // Zero-length operations must not touch anything.
        Ops::put(buf + kTotal - 1, ps.data(), 0, to);
        Ops::put_nbi(buf + kTotal - 1, ps.data(), 0, to);
        Ops::get(got_zero.data(), buf + kSrc, 0, to);
        Ops::get_nbi(got_zero.data() + 1, buf + kSrc, 0, to);
        if constexpr (has_strided<Ops>) {
            Ops::iput(buf + kTotal - 1, ps.data(), 1, 1, 0, to);
            Ops::iget(got_zero.data() + 2, buf + kSrc, 1, 1, 0, to);
        }

        Ops::get(got.data() + get_dst, buf + kSrc + get_src, get_n, to);
        Ops::get_nbi(got_nbi.data() + gnbi_dst, buf + kSrc + gnbi_src, gnbi_n, to);
        if constexpr (has_pg<Ops>)
            for (std::size_t i = 0; i < g_at.size(); ++i) got_g[i] = Ops::g(buf + kSrc + g_at[i], to);
        if constexpr (has_strided<Ops>) Ops::iget(got_i.data() + ig.off, buf + kSrc + ig.soff, ig.dst, ig.sst, ig.n, to);
        shmem_quiet();
    }
    shmem_barrier_all();

    // ---- What arrived here from PE `from` ----
    {
        // This PE's whole buffer as it is now, read through local_load.
        const std::vector<unsigned char> now_bytes = spmd::local_bytes(raw, kTotal * sizeof(T));
        const T* now = reinterpret_cast<const T*>(now_bytes.data());
        std::vector<unsigned char> image(kTotal * sizeof(T), poison);
        T* img = reinterpret_cast<T*>(image.data());
        spmd::fill_values(img + kSrc, 4 * R, Gen(key, me, 0));
        auto ps = put_src(from), ns = nbi_src(from), is = iput_src(from);
        std::memcpy(static_cast<void*>(img + kPut + put_off), ps.data(), put_n * sizeof(T));
        std::memcpy(static_cast<void*>(img + kPutNbi + nbi_off), ns.data(), nbi_n * sizeof(T));
        if constexpr (has_strided<Ops>)
            for (std::size_t i = 0; i < ip.n; ++i)
                std::memcpy(static_cast<void*>(img + kIput + ip.off + i * ip.dst), &is[ip.soff + i * ip.sst], sizeof(T));

        INFO("put: offset " << put_off << ", " << put_n << " elements");
        SPMD_REQUIRE_OK(diff_elems(now + kPut, img + kPut, R, kPut));
        INFO("put_nbi: offset " << nbi_off << ", " << nbi_n << " elements");
        SPMD_REQUIRE_OK(diff_elems(now + kPutNbi, img + kPutNbi, R, kPutNbi));
        INFO("iput: offset " << ip.off << ", source offset " << ip.soff << ", dst stride " << ip.dst << ", src stride " << ip.sst << ", " << ip.n
                             << " elements; the last element only sees zero-length operations");
        SPMD_REQUIRE_OK(diff_elems(now + kIput, img + kIput, 4 * R, kIput));
        INFO("source region (nobody writes it)");
        SPMD_REQUIRE_OK(diff_elems(now + kSrc, img + kSrc, 4 * R));
        if constexpr (has_pg<Ops>) {
            // p transfers a value: compare values (long double padding is not part of the value).
            auto pv = p_vals(from);
            for (std::size_t i = 0; i < R; ++i) {
                INFO("p: element " << i);
                if (p_mask >> (i % 64) & 1) {
                    REQUIRE(now[kP + i] == pv[i]);
                } else {
                    SPMD_REQUIRE_OK(spmd::check_poison(now + kP + i, 0, sizeof(T), poison));
                }
            }
        } else {
            SPMD_REQUIRE_OK(spmd::check_poison(now + kP, 0, R * sizeof(T), poison));
        }
    }
    // ---- What the gets read from PE `to` ----
    {
        auto src = src_region(to);
        auto expect = poisoned(R + 16);
        std::memcpy(static_cast<void*>(expect.data() + get_dst), src.data() + get_src, get_n * sizeof(T));
        INFO("get: source offset " << get_src << ", dest offset " << get_dst << ", " << get_n << " elements");
        SPMD_REQUIRE_OK(diff_elems(got.data(), expect.data(), expect.size()));

        expect = poisoned(R + 16);
        std::memcpy(static_cast<void*>(expect.data() + gnbi_dst), src.data() + gnbi_src, gnbi_n * sizeof(T));
        INFO("get_nbi: source offset " << gnbi_src << ", dest offset " << gnbi_dst << ", " << gnbi_n << " elements");
        SPMD_REQUIRE_OK(diff_elems(got_nbi.data(), expect.data(), expect.size()));

        INFO("zero-length get/get_nbi/iget");
        SPMD_REQUIRE_OK(spmd::check_poison(got_zero.data(), 0, got_zero.size() * sizeof(T), poison));

        if constexpr (has_pg<Ops>) {
            for (std::size_t i = 0; i < g_at.size(); ++i) {
                INFO("g: element " << g_at[i]);
                REQUIRE(got_g[i] == src[g_at[i]]);
            }
        }
        if constexpr (has_strided<Ops>) {
            expect = poisoned(2 * R);
            for (std::size_t i = 0; i < ig.n; ++i)
                std::memcpy(static_cast<void*>(&expect[ig.off + i * ig.dst]), &src[ig.soff + i * ig.sst], sizeof(T));
            INFO("iget: dest offset " << ig.off << ", source offset " << ig.soff << ", dst stride " << ig.dst
                                      << ", src stride " << ig.sst << ", " << ig.n << " elements");
            SPMD_REQUIRE_OK(diff_elems(got_i.data(), expect.data(), expect.size()));
        }
    }
}

template <class F> void for_ring_shifts(F&& f) {
    // shift 1: the ring (PE i writes into PE i+1); shift 0: every PE targets itself.
    for (int shift : {1, 0}) {
        if (shift == 0 && spmd::npes() == 1) continue; // same on every PE: npes is global
        INFO("target: PE me+" << shift);
        f(shift);
    }
}

TEST_CASE("typed put/get/put_nbi/get_nbi/p/g/iput/iget, all 24 standard RMA types") {
    spmd::for_each_space([](Space s) {
        spmd::SymArray<unsigned char> raw(s, kRingBytes);
        for_ring_shifts([&](int shift) {
#define SPMD_RUN(T, N)                                                                                       \
    {                                                                                                        \
        INFO("type " #T " (shmem_" #N "_*)");                                                               \
        rma_ring<rma_##N>(raw.get(), shift);                                                                 \
    }
            SPMD_RMA_TYPES(SPMD_RUN)
#undef SPMD_RUN
        });
    });
}

TEST_CASE("sized put/get/nbi/iput/iget 8/16/32/64/128 and putmem/getmem") {
    spmd::for_each_space([](Space s) {
        spmd::SymArray<unsigned char> raw(s, kRingBytes);
        for_ring_shifts([&](int shift) {
            {
                INFO("shmem_*8");
                rma_ring<sized_8>(raw.get(), shift);
            }
            {
                INFO("shmem_*16");
                rma_ring<sized_16>(raw.get(), shift);
            }
            {
                INFO("shmem_*32");
                rma_ring<sized_32>(raw.get(), shift);
            }
            {
                INFO("shmem_*64");
                rma_ring<sized_64>(raw.get(), shift);
            }
            {
                INFO("shmem_*128");
                rma_ring<sized_128>(raw.get(), shift);
            }
            {
                INFO("shmem_*mem");
                rma_ring<sized_mem>(raw.get(), shift);
            }
        });
    });
}

// putmem/getmem (blocking and nbi) of 1 B .. 1 MiB at unaligned offsets on both ends.
TEST_CASE("putmem/getmem 1 B .. 1 MiB, odd sizes, unaligned offsets") {
    constexpr std::size_t kMax = std::size_t{1} << 20, kSlack = 128;
    const std::size_t sizes[] = {1,     2,     3,     5,     7,      8,         9,          15,       16,
                                 17,    31,    63,    64,    65,     127,       255,        256,      1000,
                                 4095,  4096,  4097,  8191,  65535,  65536 + 13, 262144 - 1, 300007,   kMax};
    const unsigned char poison = spmd::poison_byte();
    spmd::for_each_space([&](Space s) {
        spmd::SymArray<unsigned char> buf(s, kMax + kSlack);
        std::vector<unsigned char> src(kMax + 64), priv(kMax + kSlack), expect(kMax + kSlack);
        int round = 0;
        for (std::size_t size : sizes) {
            const int shift = round % 3 == 2 ? 0 : 1; // every third size targets this PE itself
            const bool nbi = round % 2 == 1;
            ++round;
            const int to = spmd::right(shift), from = spmd::left(shift);
            const std::uint64_t key = spmd::shared_key();
            const std::size_t soff = spmd::shared_range(0, 63), doff = spmd::shared_range(0, 63);
            INFO((nbi ? "putmem_nbi/getmem_nbi" : "putmem/getmem") << " of " << size << " bytes to PE " << to
                                                                   << ", source offset " << soff
                                                                   << ", dest offset " << doff);

            // put: this PE's bytes land in PE `to` at doff.
            buf.poison();
            spmd::fill_bytes(src.data() + soff, size, Gen(key, spmd::me(), 1));
            shmem_barrier_all();
            if (nbi) shmem_putmem_nbi(buf.get() + doff, src.data() + soff, size, to);
            else shmem_putmem(buf.get() + doff, src.data() + soff, size, to);
            shmem_barrier_all();
            std::memset(expect.data(), poison, expect.size());
            spmd::fill_bytes(expect.data() + doff, size, Gen(key, from, 1));
            SPMD_REQUIRE_OK(spmd::diff_sym(buf.get(), expect.data(), buf.size()));

            // get: read bytes at soff of PE `to` into a private buffer at doff.
            spmd::local_fill_bytes(buf.get(), buf.size(), Gen(key, spmd::me(), 2));
            std::memset(priv.data(), poison, priv.size());
            shmem_barrier_all();
            if (nbi) {
                shmem_getmem_nbi(priv.data() + doff, buf.get() + soff, size, to);
                shmem_quiet();
            } else {
                shmem_getmem(priv.data() + doff, buf.get() + soff, size, to);
            }
            std::vector<unsigned char> peer(buf.size());
            spmd::fill_bytes(peer.data(), peer.size(), Gen(key, to, 2));
            std::memset(expect.data(), poison, expect.size());
            std::memcpy(expect.data() + doff, peer.data() + soff, size);
            SPMD_REQUIRE_OK(spmd::diff_bytes(priv.data(), expect.data(), priv.size()));
            shmem_barrier_all(); // nobody rewrites its buffer while a peer still reads it
        }
    });
}

// Every PE writes a block into a slot of every PE (itself included), then reads a block from
// every PE; a few rounds with different block sizes and offsets.
TEST_CASE("all-to-all puts and gets") {
    const unsigned char poison = spmd::poison_byte();
    const int n = spmd::npes(), me = spmd::me();
    spmd::for_each_space([&](Space s) {
        constexpr std::size_t kSlot = 4096 + 64;
        spmd::SymArray<unsigned char> recv(s, kSlot * n), mine(s, kSlot * n);
        spmd::SymArray<long> ids(s, n);
        for (int round = 0; round < 4; ++round) {
            const std::uint64_t key = spmd::shared_key();
            const std::size_t bytes = round == 0 ? 4096 : spmd::shared_range(1, 4096);
            const std::size_t off = spmd::shared_range(0, 63);
            INFO("round " << round << ": " << bytes << " bytes at slot offset " << off);

            recv.poison();
            ids.poison();
            for (int j = 0; j < n; ++j)
                spmd::local_fill_bytes(mine.get() + j * kSlot, kSlot, Gen(key, me, j, 2));
            shmem_barrier_all();
            std::vector<unsigned char> block(bytes);
            for (int k = 1; k <= n; ++k) {
                const int j = (me + k) % n; // start with the next PE so targets are spread out
                spmd::fill_bytes(block.data(), bytes, Gen(key, me, j, 1));
                if ((j + round) % 2) shmem_putmem_nbi(recv.get() + me * kSlot + off, block.data(), bytes, j);
                else shmem_putmem(recv.get() + me * kSlot + off, block.data(), bytes, j);
                shmem_long_p(ids.get() + me, 1000L * round + me, j);
            }
            std::vector<unsigned char> got(kSlot * n, poison);
            for (int k = 1; k <= n; ++k) {
                const int j = (me + k) % n;
                shmem_getmem_nbi(got.data() + j * kSlot + off, mine.get() + me * kSlot + off, bytes, j);
            }
            shmem_barrier_all(); // completes the nbi puts and gets

            std::vector<unsigned char> expect(kSlot * n, poison);
            for (int j = 0; j < n; ++j) spmd::fill_bytes(expect.data() + j * kSlot + off, bytes, Gen(key, j, me, 1));
            SPMD_REQUIRE_OK(spmd::diff_sym(recv.get(), expect.data(), expect.size()));
            const std::vector<long> got_ids = ids.load_all();
            for (int j = 0; j < n; ++j) {
                INFO("id written by PE " << j);
                REQUIRE(got_ids[j] == 1000L * round + j);
            }
            std::fill(expect.begin(), expect.end(), poison);
            for (int j = 0; j < n; ++j) {
                std::vector<unsigned char> peer(kSlot);
                spmd::fill_bytes(peer.data(), kSlot, Gen(key, j, me, 2));
                std::memcpy(expect.data() + j * kSlot + off, peer.data() + off, bytes);
            }
            SPMD_REQUIRE_OK(spmd::diff_bytes(got.data(), expect.data(), expect.size()));
            for (int j = 0; j < n; ++j) {
                INFO("shmem_long_g of the id on PE " << j);
                REQUIRE(shmem_long_g(ids.get() + me, j) == 1000L * round + me);
            }
            shmem_barrier_all();
        }
    });
}

} // namespace
