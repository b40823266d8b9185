// SPDX-License-Identifier: BSL-1.0
// Put with signal and signals (OpenSHMEM 1.6): put_signal and put_signal_nbi for all 24 standard
// RMA types, the sized forms and putmem, with SHMEM_SIGNAL_SET and SHMEM_SIGNAL_ADD, 1 B .. 1 MiB,
// in the ring (every distance) and all-to-all, data and signal in either heap. The receiver waits
// for the signal with shmem_signal_wait_until and checks the data at once, with no barrier in
// between: a signal that became visible before its data fails the check. Also signal_add from
// every PE at once (summed exactly), signal_set, signal_fetch, signal_wait_until's return value,
// shmem_pe_quiet completing nbi puts to a subset of PEs before a flag, and a stream of small puts
// with signal with no quiet in between.
#include "spmd.hpp"
#include "spmd_types.hpp"

#include <algorithm>

namespace {

using spmd::Gen;
using spmd::Space;

// Ops structs: the typed, sized and mem put-with-signal routines under one name.
#define SPMD_SIGNAL_STRUCT(NAME, T, PUT, PUT_NBI)                                                            \
    struct NAME {                                                                                            \
        using type = T;                                                                                      \
        static void put(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe, bool nbi) {  \
            if (nbi) PUT_NBI(d, s, n, sig, v, op, pe);                                                       \
            else PUT(d, s, n, sig, v, op, pe);                                                               \
        }                                                                                                    \
    };
#define SPMD_SIGNAL_OPS(T, N) SPMD_SIGNAL_STRUCT(sig_##N, T, shmem_##N##_put_signal, shmem_##N##_put_signal_nbi)
SPMD_RMA_TYPES(SPMD_SIGNAL_OPS)
#undef SPMD_SIGNAL_OPS

struct Bits128 {
    std::uint64_t w[2];
};

#define SPMD_SIZED_SIGNAL_OPS(BITS, T)                                                                       \
    SPMD_SIGNAL_STRUCT(sized_##BITS, T, shmem_put##BITS##_signal, shmem_put##BITS##_signal_nbi)
SPMD_SIZED_SIGNAL_OPS(8, std::uint8_t)
SPMD_SIZED_SIGNAL_OPS(16, std::uint16_t)
SPMD_SIZED_SIGNAL_OPS(32, std::uint32_t)
SPMD_SIZED_SIGNAL_OPS(64, std::uint64_t)
SPMD_SIZED_SIGNAL_OPS(128, Bits128)
#undef SPMD_SIZED_SIGNAL_OPS
SPMD_SIGNAL_STRUCT(sized_mem, unsigned char, shmem_putmem_signal, shmem_putmem_signal_nbi)
#undef SPMD_SIGNAL_STRUCT

// The other heap, for signals that take another route than their data.
Space other(Space s) { return s == Space::Host ? Space::Device : Space::Host; }

// Targets at every distance: PE me+1 .. me+n-1 (or this PE itself when it is alone).
template <class F> void for_each_distance(F&& f) {
    for (int shift = spmd::npes() == 1 ? 0 : 1; shift < std::max(spmd::npes(), 1); ++shift) {
        INFO("target: PE me+" << shift);
        f(shift);
    }
}

// One put with signal of n elements of Ops::type from every PE to PE me+shift, into `buf` at
// element offset `off`, with the signal in `sig`; the receiver waits for the signal and checks
// the data and the poison around it at once.
template <class Ops>
void signal_round(unsigned char* buf, std::size_t buf_bytes, std::uint64_t* sig, int shift, std::size_t n,
                  std::size_t off, int sig_op, bool nbi) {
    using T = typename Ops::type;
    const unsigned char poison = spmd::poison_byte();
    const int me = spmd::me(), to = spmd::right(shift), from = spmd::left(shift);
    const std::uint64_t key = spmd::shared_key();
    REQUIRE((off + n) * sizeof(T) <= buf_bytes);
    INFO((nbi ? "put_signal_nbi" : "put_signal") << " with " << (sig_op == SHMEM_SIGNAL_ADD ? "ADD" : "SET") << ": "
                                                 << n << " elements of " << sizeof(T) << " bytes at element offset "
                                                 << off);

    // The signal's value before the put (ADD adds to it) and what each PE sends.
    auto base_of = [&](int pe) { return sig_op == SHMEM_SIGNAL_ADD ? Gen(key, pe, 3).next() : 0; };
    auto value_of = [&](int pe) { return Gen(key, pe, 2).next() | 1; }; // nonzero: SET must change the signal
    const std::uint64_t expect_sig = sig_op == SHMEM_SIGNAL_ADD ? base_of(me) + value_of(from) : value_of(from);

    spmd::local_fill(buf, poison, buf_bytes);
    spmd::local_set(sig, base_of(me));
    shmem_barrier_all();

    {
        const std::vector<T> src = spmd::make_values<T>(n, Gen(key, me, 1));
        Ops::put(reinterpret_cast<T*>(buf) + off, src.data(), n, sig, value_of(me), sig_op, to, nbi);
        if (nbi) shmem_quiet(); // src goes out of scope
    }

    // Wait on a comparison the old value fails, then check at once: no barrier, no quiet here.
    const std::uint64_t got =
        sig_op == SHMEM_SIGNAL_ADD ? shmem_signal_wait_until(sig, SHMEM_CMP_NE, base_of(me))
                                   : shmem_signal_wait_until(sig, SHMEM_CMP_EQ, expect_sig);
    // The last bytes first: data is written front to back, so they are the last to arrive.
    const std::size_t end = (off + n) * sizeof(T), tail = std::min<std::size_t>(end - off * sizeof(T), 64);
    const std::vector<unsigned char> last = spmd::local_bytes(buf + end - tail, tail);
    REQUIRE(got == expect_sig);
    std::vector<unsigned char> expect(buf_bytes, poison);
    spmd::fill_values(reinterpret_cast<T*>(expect.data() + off * sizeof(T)), n, Gen(key, from, 1));
    SPMD_REQUIRE_OK(spmd::diff_bytes(last.data(), expect.data() + end - tail, tail, end - tail));
    SPMD_REQUIRE_OK(spmd::diff_sym(buf, expect.data(), buf_bytes));
    REQUIRE(shmem_signal_fetch(sig) == expect_sig);
    shmem_barrier_all(); // nobody poisons its buffer for the next round while a peer still checks
}

// Every PE uses the same sequence of shared random choices, so all PEs run the same rounds.
template <class Ops> void signal_rounds(unsigned char* buf, std::size_t buf_bytes, std::uint64_t* sig, int shift,
                                        std::size_t max_n) {
    int round = 0;
    for (int sig_op : {SHMEM_SIGNAL_SET, SHMEM_SIGNAL_ADD})
        for (bool nbi : {false, true}) {
            const std::size_t n = round++ == 0 ? 1 : spmd::shared_range(1, max_n);
            const std::size_t off = spmd::shared_range(0, 7);
            signal_round<Ops>(buf, buf_bytes, sig, shift, n, off, sig_op, nbi);
        }
}

constexpr std::size_t kTypedBytes = 16 * 80;

TEST_CASE("put_signal/put_signal_nbi, all 24 standard RMA types, SET and ADD, every distance") {
    for (Space s : {Space::Host, Space::Device}) {
        INFO("data in the " << spmd::name(s) << ", signal in the " << spmd::name(other(s)));
        spmd::SymArray<unsigned char> buf(s, kTypedBytes);
        spmd::SymArray<std::uint64_t> sig(other(s), 1);
        for_each_distance([&](int shift) {
#define SPMD_RUN(T, N)                                                                                       \
    {                                                                                                        \
        INFO("type " #T " (shmem_" #N "_put_signal*)");                                                     \
        signal_rounds<sig_##N>(buf.get(), buf.bytes(), sig.get(), shift, 64);                                \
    }
            SPMD_RMA_TYPES(SPMD_RUN)
#undef SPMD_RUN
        });
    }
}

TEST_CASE("put8/16/32/64/128_signal(_nbi) and putmem_signal(_nbi), data and signal in each heap") {
    for (Space s : {Space::Host, Space::Device})
        for (Space ss : {Space::Host, Space::Device}) {
            INFO("data in the " << spmd::name(s) << ", signal in the " << spmd::name(ss));
            spmd::SymArray<unsigned char> buf(s, kTypedBytes);
            spmd::SymArray<std::uint64_t> sig(ss, 1);
            for_each_distance([&](int shift) {
                signal_rounds<sized_8>(buf.get(), buf.bytes(), sig.get(), shift, 64);
                signal_rounds<sized_16>(buf.get(), buf.bytes(), sig.get(), shift, 64);
                signal_rounds<sized_32>(buf.get(), buf.bytes(), sig.get(), shift, 64);
                signal_rounds<sized_64>(buf.get(), buf.bytes(), sig.get(), shift, 64);
                signal_rounds<sized_128>(buf.get(), buf.bytes(), sig.get(), shift, 64);
                signal_rounds<sized_mem>(buf.get(), buf.bytes(), sig.get(), shift, 1000);
            });
        }
}

// Large transfers: a signal that overtook its data would be seen while the data is still arriving.
TEST_CASE("putmem_signal 1 B .. 1 MiB, odd sizes, unaligned offsets") {
    constexpr std::size_t kMax = std::size_t{1} << 20, kSlack = 64;
    const std::size_t sizes[] = {1, 7, 8, 4097, 65536 + 13, 262144 - 1, kMax};
    for (Space s : {Space::Host, Space::Device}) {
        INFO("data in the " << spmd::name(s) << ", signal in the " << spmd::name(other(s)));
        spmd::SymArray<unsigned char> buf(s, kMax + kSlack);
        spmd::SymArray<std::uint64_t> sig(other(s), 1);
        int round = 0;
        for (std::size_t size : sizes) {
            const int sig_op = round % 2 ? SHMEM_SIGNAL_ADD : SHMEM_SIGNAL_SET;
            const bool nbi = round % 3 == 1;
            ++round;
            const std::size_t off = spmd::shared_range(0, kSlack - 1);
            signal_round<sized_mem>(buf.get(), buf.bytes(), sig.get(), 1 % spmd::npes(), size, off, sig_op, nbi);
        }
    }
}

// Every PE sends a block into its own slot of every PE (itself included) and adds 1 to one
// counter there; the receiver waits for n_pes adds, then checks every slot.
TEST_CASE("all-to-all putmem_signal_nbi with one ADD counter per receiver") {
    const unsigned char poison = spmd::poison_byte();
    const int n = spmd::npes(), me = spmd::me();
    for (Space s : {Space::Host, Space::Device}) {
        INFO("data in the " << spmd::name(s));
        constexpr std::size_t kSlot = 32768 + 64;
        spmd::SymArray<unsigned char> recv(s, kSlot * n);
        spmd::SymArray<std::uint64_t> counter(s, 1);
        for (int round = 0; round < 3; ++round) {
            const std::uint64_t key = spmd::shared_key();
            const std::size_t bytes = round == 0 ? kSlot - 64 : spmd::shared_range(1, kSlot - 64);
            const std::size_t off = spmd::shared_range(0, 63);
            INFO("round " << round << ": " << bytes << " bytes at slot offset " << off);
            recv.poison();
            counter.store(0, 0);
            shmem_barrier_all();
            std::vector<unsigned char> block(bytes);
            for (int k = 1; k <= n; ++k) {
                const int j = (me + k) % n;
                spmd::fill_bytes(block.data(), bytes, Gen(key, me, j));
                if (round % 2) shmem_putmem_signal(recv.get() + me * kSlot + off, block.data(), bytes, counter.get(), 1,
                                                   SHMEM_SIGNAL_ADD, j);
                else shmem_putmem_signal_nbi(recv.get() + me * kSlot + off, block.data(), bytes, counter.get(), 1,
                                             SHMEM_SIGNAL_ADD, j);
                shmem_quiet(); // the next block reuses `block`
            }
            REQUIRE(shmem_signal_wait_until(counter.get(), SHMEM_CMP_GE, static_cast<std::uint64_t>(n)) ==
                    static_cast<std::uint64_t>(n));
            std::vector<unsigned char> expect(kSlot * n, poison);
            for (int j = 0; j < n; ++j) spmd::fill_bytes(expect.data() + j * kSlot + off, bytes, Gen(key, j, me));
            SPMD_REQUIRE_OK(spmd::diff_sym(recv.get(), expect.data(), expect.size()));
            shmem_barrier_all();
        }
    }
}

// A stream of small puts with signal to one PE with no quiet in between: each signal must land
// after its own data, also where the network transport gathers many into one message (up to
// VKSHMEM_NBI_BATCH bytes each, 8 KiB a message) and carries the signal among them. A blocking
// form's source is overwritten as soon as it returns (it may be reused then); every third goes
// through a private context.
TEST_CASE("a stream of small put_signal(_nbi) without quiet: each signal after its own data") {
    const int me = spmd::me(), to = spmd::right(), from = spmd::left();
    constexpr std::size_t kMsgs = 96, kSlot = 320;
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    const bool own_ctx = shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0;
    for (Space s : {Space::Host, Space::Device}) {
        INFO("data and signals in the " << spmd::name(s));
        spmd::SymArray<unsigned char> buf(s, kSlot * kMsgs);
        spmd::SymArray<std::uint64_t> sig(s, kMsgs);
        const std::uint64_t key = spmd::shared_key();
        std::vector<std::size_t> size(kMsgs);
        std::vector<bool> nbi(kMsgs);
        for (std::size_t i = 0; i < kMsgs; ++i) {
            size[i] = spmd::shared_range(1, kSlot);
            nbi[i] = spmd::shared_range(0, 1) == 1;
        }
        auto value_of = [&](int pe, std::size_t i) { return Gen(key, pe, i).next() | 1; };
        buf.poison();
        for (std::size_t i = 0; i < kMsgs; ++i) sig.store(i, 0);
        shmem_barrier_all();
        std::vector<std::vector<unsigned char>> kept(kMsgs); // nbi sources, unchanged until the quiet
        std::vector<unsigned char> scratch(kSlot);
        for (std::size_t i = 0; i < kMsgs; ++i) {
            unsigned char* dest = buf.get() + i * kSlot;
            const int op = i % 2 ? SHMEM_SIGNAL_ADD : SHMEM_SIGNAL_SET; // ADD to 0: the value as well
            const shmem_ctx_t c = i % 3 == 0 ? ctx : SHMEM_CTX_DEFAULT;
            if (nbi[i]) {
                kept[i].resize(size[i]);
                spmd::fill_bytes(kept[i].data(), size[i], Gen(key, me, i, 1));
                shmem_ctx_putmem_signal_nbi(c, dest, kept[i].data(), size[i], sig.at(i), value_of(me, i), op, to);
            } else {
                spmd::fill_bytes(scratch.data(), size[i], Gen(key, me, i, 1));
                shmem_ctx_putmem_signal(c, dest, scratch.data(), size[i], sig.at(i), value_of(me, i), op, to);
                std::fill(scratch.begin(), scratch.end(), spmd::poison_byte());
            }
        }
        for (std::size_t i = 0; i < kMsgs; ++i) {
            INFO("message " << i << ": " << size[i] << " bytes, " << (nbi[i] ? "put_signal_nbi" : "put_signal"));
            REQUIRE(shmem_signal_wait_until(sig.at(i), SHMEM_CMP_NE, 0) == value_of(from, i));
            std::vector<unsigned char> expect(size[i]);
            spmd::fill_bytes(expect.data(), size[i], Gen(key, from, i, 1));
            const std::vector<unsigned char> got = spmd::local_bytes(buf.get() + i * kSlot, size[i]);
            SPMD_REQUIRE_OK(spmd::diff_bytes(got.data(), expect.data(), size[i]));
        }
        shmem_ctx_quiet(ctx);
        shmem_quiet();
        shmem_barrier_all();
    }
    if (own_ctx) shmem_ctx_destroy(ctx);
}

TEST_CASE("signal_add from every PE at once is summed exactly; signal_set; signal_fetch") {
    const int n = spmd::npes(), me = spmd::me();
    spmd::for_each_space([&](Space s) {
        spmd::SymArray<std::uint64_t> sig(s, 2);
        const std::uint64_t key = spmd::shared_key();
        constexpr int kAdds = 40;
        // What PE p adds to PE t's counter, k-th time: values near 2^64 wrap like the atomic does.
        auto add_of = [&](int p, int t, int k) { return Gen(key, p, t, k).next(); };
        const std::uint64_t base = Gen(key, me, 99).next();
        sig.store(0, base);
        sig.store(1, 0);
        shmem_barrier_all();
        for (int k = 0; k < kAdds; ++k)
            for (int d = 0; d < n; ++d) {
                const int t = (me + d + k) % n; // spread the targets: every PE adds to every counter at once
                shmem_signal_add(sig.at(0), add_of(me, t, k), t);
            }
        std::uint64_t expect = base;
        for (int p = 0; p < n; ++p)
            for (int k = 0; k < kAdds; ++k) expect += add_of(p, me, k);
        // The sum is complete only after every add arrived: wait for it, then check it stays.
        REQUIRE(shmem_signal_wait_until(sig.at(0), SHMEM_CMP_EQ, expect) == expect);
        shmem_barrier_all();
        REQUIRE(shmem_signal_fetch(sig.at(0)) == expect);
        REQUIRE(sig.load(0) == expect);

        // signal_set: every PE sets its right neighbour's second signal; then all PEs set PE 0's,
        // which ends up holding one of the values set.
        shmem_signal_set(sig.at(1), Gen(key, me, 7).next() | 1, spmd::right());
        const std::uint64_t from_left = Gen(key, spmd::left(), 7).next() | 1;
        REQUIRE(shmem_signal_wait_until(sig.at(1), SHMEM_CMP_NE, 0) == from_left);
        REQUIRE(shmem_signal_fetch(sig.at(1)) == from_left);
        shmem_barrier_all();
        shmem_signal_set(sig.at(1), static_cast<std::uint64_t>(1000 + me), 0);
        shmem_barrier_all();
        if (me == 0) {
            const std::uint64_t v = shmem_signal_fetch(sig.at(1));
            INFO("PE 0's signal after every PE set it: " << v);
            REQUIRE(v >= 1000);
            REQUIRE(v < static_cast<std::uint64_t>(1000 + n));
        }
        // Every comparison returns the value that satisfied it.
        shmem_barrier_all();
        sig.store(1, 50);
        REQUIRE(shmem_signal_wait_until(sig.at(1), SHMEM_CMP_EQ, 50) == 50);
        REQUIRE(shmem_signal_wait_until(sig.at(1), SHMEM_CMP_NE, 49) == 50);
        REQUIRE(shmem_signal_wait_until(sig.at(1), SHMEM_CMP_GT, 49) == 50);
        REQUIRE(shmem_signal_wait_until(sig.at(1), SHMEM_CMP_GE, 50) == 50);
        REQUIRE(shmem_signal_wait_until(sig.at(1), SHMEM_CMP_LT, 51) == 50);
        REQUIRE(shmem_signal_wait_until(sig.at(1), SHMEM_CMP_LE, 50) == 50);
        shmem_barrier_all();
    });
}

// Each PE puts (nbi) to a subset of the PEs, completes just those with shmem_pe_quiet, then
// raises a flag on each of them with a plain p: only completion orders the p after the puts.
TEST_CASE("pe_quiet completes nbi puts to a subset before a flag") {
    const unsigned char poison = spmd::poison_byte();
    const int n = spmd::npes(), me = spmd::me();
    for (Space s : {Space::Host, Space::Device}) {
        INFO("data in the " << spmd::name(s));
        constexpr std::size_t kSlot = 65536;
        spmd::SymArray<unsigned char> recv(s, kSlot * n);
        spmd::SymArray<long> flags(Space::Host, n);
        for (int round = 0; round < 4; ++round) {
            const std::uint64_t key = spmd::shared_key();
            const std::uint64_t mask = spmd::shared_rng()(); // bit (p * n + t): PE p sends to PE t
            auto sends = [&](int p, int t) { return (mask >> ((p * n + t) % 64) & 1) != 0; };
            const std::size_t bytes = spmd::shared_range(1, kSlot);
            INFO("round " << round << ": " << bytes << " bytes");
            recv.poison();
            for (int j = 0; j < n; ++j) flags.store(j, 0);
            shmem_barrier_all();
            std::vector<int> targets;
            std::vector<std::vector<unsigned char>> blocks;
            for (int k = 1; k <= n; ++k) {
                const int t = (me + k) % n;
                if (!sends(me, t)) continue;
                targets.push_back(t);
                blocks.emplace_back(bytes);
                spmd::fill_bytes(blocks.back().data(), bytes, Gen(key, me, t));
                shmem_putmem_nbi(recv.get() + me * kSlot, blocks.back().data(), bytes, t);
            }
            shmem_pe_quiet(targets.data(), targets.size());
            for (int t : targets) shmem_long_p(flags.at(me), round + 1, t);
            shmem_pe_quiet(nullptr, 0); // nothing to complete: returns at once
            std::vector<unsigned char> expect(kSlot * n, poison);
            for (int p = 0; p < n; ++p) {
                if (!sends(p, me)) continue;
                shmem_long_wait_until(flags.at(p), SHMEM_CMP_EQ, round + 1);
                spmd::fill_bytes(expect.data() + p * kSlot, bytes, Gen(key, p, me));
            }
            // Checked before any barrier: the flag alone says the data is there.
            SPMD_REQUIRE_OK(spmd::diff_sym(recv.get(), expect.data(), expect.size()));
            shmem_barrier_all();
        }
    }
}

} // namespace
