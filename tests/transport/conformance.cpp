// SPDX-License-Identifier: BSL-1.0
// The transport conformance suite: one program, run under oshrun, that checks a transport (shm,
// ucx or ofi; argv[1]) through the interface alone (transports/transport.hpp), with the
// runtime started underneath only for its bootstrap and, for shm, its mapped symmetric spaces.
//
// Every PE is an initiator towards every other PE at once. Segment 0 is a block of the host heap,
// segment 1 a plain malloc'd buffer (a network transport registers it; shm refuses it), segment 2
// is never registered. Checks, with fresh random data and exact comparisons: puts and gets of
// 1 B .. 1 MiB at odd offsets into each peer's slot, seen by the owner after a barrier and read
// back by the writer; zero-byte operations; every atomic operation in both widths, fetching and
// not, with the old values it returns and the value it leaves; concurrent adds from every PE and
// from two threads per PE on one word; errors (not crashes) for operations past a segment or on
// an unregistered one; put with signal, the signal after its data. Capabilities decide what is
// skipped (caps().amo_widths).
//
//   oshrun -np N transport_conformance shm|ucx|ofi
#include "bootstrap/bootstrap.hpp"
#include "runtime/runtime.hpp"
#include "core/state.hpp"
#include "transports/transport.hpp"

#include <shmem.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace vkshmem;
using net::AmoOp;

namespace {

std::atomic<int> g_failures{0}; // the atomicity checks call CHECK from two threads
std::atomic<int> g_checks{0};
int g_me = 0, g_n = 1;

#define CHECK(cond, ...)                                                                                              \
    do {                                                                                                              \
        ++g_checks;                                                                                                   \
        if (!(cond)) {                                                                                                \
            ++g_failures;                                                                                             \
            std::fprintf(stderr, "[conformance] PE %d: FAILED %s:%d: %s: ", g_me, __FILE__, __LINE__, #cond);         \
            std::fprintf(stderr, __VA_ARGS__);                                                                        \
            std::fprintf(stderr, "\n");                                                                               \
        }                                                                                                             \
    } while (0)

#define OK(expr)                                                                                                      \
    ([&] {                                                                                                            \
        auto r_ = (expr);                                                                                             \
        CHECK(static_cast<bool>(r_), "%s", r_ ? "" : r_.error().message.c_str());                                            \
        return static_cast<bool>(r_);                                                                                        \
    }())

constexpr std::size_t kSlot = (1u << 20) + 64; // one writer's slot in segment 0
constexpr std::size_t kAmoArea = 4096;         // atomics' words, after the slots
constexpr std::size_t kSlot1 = 65537 + 64;     // one writer's slot in segment 1

std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
// The byte a writer puts at position i of a transfer of `size` (depends on writer, target, size).
unsigned char byte_at(std::uint64_t seed, int writer, int target, std::size_t size, std::size_t i) {
    return static_cast<unsigned char>(mix(seed ^ mix((std::uint64_t(writer) << 40) ^ (std::uint64_t(target) << 32) ^
                                                     size) ^ (i / 8)) >> (8 * (i % 8)));
}

Bootstrap& boot() { return g_runtime->bootstrap(); }
void barrier() {
    if (auto r = boot().barrier(); !r) {
        std::fprintf(stderr, "[conformance] barrier: %s\n", r.error().message.c_str());
        std::exit(2);
    }
}

struct Setup {
    std::unique_ptr<net::Transport> t;
    char* seg0 = nullptr; // host heap block: n slots + the atomics' area
    std::size_t seg0_size = 0;
    std::vector<unsigned char> seg1;
    bool seg1_registered = false;
};

void rma_checks(Setup& s, std::uint64_t seed) {
    const std::size_t sizes[] = {1, 7, 8, 63, 4096, 65537, 1u << 20};
    for (std::size_t size : sizes) {
        const std::size_t off = size == (1u << 20) ? 0 : 3; // odd offsets where they fit
        for (int pe = 0; pe < g_n; ++pe) {
            if (pe == g_me) continue;
            std::vector<unsigned char> src(size), back(size, 0xee);
            for (std::size_t i = 0; i < size; ++i) src[i] = byte_at(seed, g_me, pe, size, i);
            const std::uint64_t at = kSlot * static_cast<std::size_t>(g_me) + off;
            OK(s.t->put(pe, 0, at, src.data(), size));
            OK(s.t->quiet());
            OK(s.t->get(pe, 0, at, back.data(), size));
            CHECK(back == src, "put then get of %zu bytes to PE %d differ", size, pe);
            if (s.seg1_registered && size <= 65537) { // a buffer from malloc as the target, a slot per writer
                const std::uint64_t at1 = kSlot1 * static_cast<std::size_t>(g_me) + off;
                OK(s.t->put(pe, 1, at1, src.data(), size));
                std::fill(back.begin(), back.end(), 0xee);
                OK(s.t->get(pe, 1, at1, back.data(), size));
                CHECK(back == src, "segment 1: put then get of %zu bytes to PE %d differ", size, pe);
            }
        }
        OK(s.t->quiet());
        barrier();
        // The owner sees every writer's data in its slots.
        for (int w = 0; w < g_n; ++w) {
            if (w == g_me) continue;
            const unsigned char* got = reinterpret_cast<unsigned char*>(s.seg0) + kSlot * static_cast<std::size_t>(w) + off;
            std::size_t bad = 0;
            for (std::size_t i = 0; i < size; ++i) bad += got[i] != byte_at(seed, w, g_me, size, i);
            CHECK(bad == 0, "%zu of %zu bytes from PE %d wrong in this PE's memory", bad, size, w);
        }
        barrier();
    }
    // Zero bytes: nothing happens, and it completes.
    for (int pe = 0; pe < g_n; ++pe) {
        if (pe == g_me) continue;
        char c = 0;
        OK(s.t->put(pe, 0, 0, &c, 0));
        OK(s.t->get(pe, 0, 0, &c, 0));
    }
}

// Non-blocking posts (put_on, get_on, amo_on with Post::nbi) on the default domain and on a domain
// of their own: many in flight to every peer at once, complete after quiet_on of their domain.
void nbi_checks(Setup& s, std::uint64_t seed) {
    const std::size_t sizes[] = {1, 7, 8, 63, 4096, 65537};
    constexpr int kAdds = 40;
    char* area = s.seg0 + kSlot * static_cast<std::size_t>(g_n);
    net::Domain* own = s.t->open_domain(); // null where the transport has none: the default again
    for (net::Domain* d : {static_cast<net::Domain*>(nullptr), own}) {
        const net::Post how{d, true};
        const std::uint64_t salt = seed ^ (d ? 0x5a5a : 0);
        // Word w of the area (from 2048) counts writer w's adds; its owner zeroes it first.
        auto* words = reinterpret_cast<std::uint64_t*>(area + 2048);
        for (int w = 0; w < g_n; ++w) words[w] = 0;
        barrier();
        std::vector<std::vector<unsigned char>> src, back;
        std::vector<std::uint64_t> olds(static_cast<std::size_t>(g_n) * kAdds, ~0ull);
        for (int pe = 0; pe < g_n; ++pe) {
            if (pe == g_me) continue;
            std::uint64_t at = kSlot * static_cast<std::size_t>(g_me);
            for (std::size_t size : sizes) {
                src.emplace_back(size);
                for (std::size_t i = 0; i < size; ++i) src.back()[i] = byte_at(salt, g_me, pe, size, i);
                OK(s.t->put_on(how, pe, 0, at + 3, src.back().data(), size));
                at += size + 16;
            }
            for (int k = 0; k < kAdds; ++k)
                OK(s.t->amo_on(how, pe, 0, kSlot * static_cast<std::size_t>(g_n) + 2048 + 8 * static_cast<unsigned>(g_me),
                               AmoOp::Add, 8, static_cast<std::uint64_t>(k + 1), 0,
                               &olds[static_cast<std::size_t>(pe) * kAdds + static_cast<std::size_t>(k)]));
        }
        OK(s.t->quiet_on(d));
        for (int pe = 0; pe < g_n; ++pe) {
            if (pe == g_me) continue;
            // Every old value of one writer's adds to its word: 0, 1, 3, 6, ... in some order.
            std::vector<std::uint64_t> got(olds.begin() + pe * kAdds, olds.begin() + (pe + 1) * kAdds);
            std::sort(got.begin(), got.end());
            bool prefix = true;
            for (int k = 0; k < kAdds; ++k) prefix &= got[static_cast<std::size_t>(k)] == std::uint64_t(k) * (k + 1) / 2;
            CHECK(prefix, "non-blocking fetch-adds to PE %d returned other old values than 0, 1, 3, ...", pe);
            // Read the puts back with non-blocking gets into poisoned buffers.
            std::uint64_t at = kSlot * static_cast<std::size_t>(g_me);
            for (std::size_t size : sizes) {
                back.emplace_back(size, 0xee);
                OK(s.t->get_on(how, pe, 0, at + 3, back.back().data(), size));
                at += size + 16;
            }
        }
        OK(s.t->quiet_on(d));
        CHECK(back == src, "non-blocking puts read back with non-blocking gets differ%s", d ? " (own domain)" : "");
        barrier();
        for (int w = 0; w < g_n; ++w)
            if (w != g_me)
                CHECK(words[w] == std::uint64_t(kAdds) * (kAdds + 1) / 2, "PE %d's non-blocking adds left %" PRIu64, w,
                      words[w]);
        barrier();
    }
    s.t->close_domain(own);
}

// Fence orders non-blocking puts whatever way each goes (small ones in batches, large ones on
// their own or posted later), on the default domain and on a domain of its own: each writer
// leaves in each peer's slot a large put overwritten after a fence by a small one, and a small
// one overwritten after a fence by a large one; the owner checks what is left after the writers'
// quiet and a barrier.
void order_checks(Setup& s, std::uint64_t seed) {
    constexpr std::size_t kBig = 20000, kSmall = 8, kAt = 200000, kSecond = kAt + kBig + 64;
    net::Domain* own = s.t->open_domain();
    for (net::Domain* d : {static_cast<net::Domain*>(nullptr), own}) {
        const net::Post how{d, true};
        const std::uint64_t salt = seed ^ (d ? 0x0f0f : 0xf0f0);
        auto fill = [&](std::uint64_t k, int writer, int target, std::size_t size) {
            std::vector<unsigned char> v(size);
            for (std::size_t i = 0; i < size; ++i) v[i] = byte_at(salt + k, writer, target, size, i);
            return v;
        };
        std::vector<std::vector<unsigned char>> src; // unchanged until the quiet
        for (int pe = 0; pe < g_n; ++pe) {
            if (pe == g_me) continue;
            const std::uint64_t mine = kSlot * static_cast<std::size_t>(g_me);
            src.push_back(fill(0, g_me, pe, kBig));
            OK(s.t->put_on(how, pe, 0, mine + kAt, src.back().data(), kBig));
            OK(s.t->fence_on(d));
            src.push_back(fill(1, g_me, pe, kSmall));
            OK(s.t->put_on(how, pe, 0, mine + kAt, src.back().data(), kSmall));
            src.push_back(fill(2, g_me, pe, kSmall));
            OK(s.t->put_on(how, pe, 0, mine + kSecond, src.back().data(), kSmall));
            OK(s.t->fence_on(d));
            src.push_back(fill(3, g_me, pe, kBig));
            OK(s.t->put_on(how, pe, 0, mine + kSecond, src.back().data(), kBig));
        }
        OK(s.t->quiet_on(d));
        barrier();
        for (int w = 0; w < g_n; ++w) {
            if (w == g_me) continue;
            const unsigned char* first =
                reinterpret_cast<unsigned char*>(s.seg0) + kSlot * static_cast<std::size_t>(w) + kAt;
            const unsigned char* second = first + (kSecond - kAt);
            std::vector<unsigned char> expect = fill(0, w, g_me, kBig);
            const std::vector<unsigned char> small = fill(1, w, g_me, kSmall);
            std::copy(small.begin(), small.end(), expect.begin());
            CHECK(std::equal(expect.begin(), expect.end(), first),
                  "PE %d's small put after a fence did not land on its large one%s", w, d ? " (own domain)" : "");
            expect = fill(3, w, g_me, kBig);
            CHECK(std::equal(expect.begin(), expect.end(), second),
                  "PE %d's large put after a fence did not land on its small one%s", w, d ? " (own domain)" : "");
        }
        barrier();
    }
    s.t->close_domain(own);
}

void errors(Setup& s) {
    for (int pe = 0; pe < g_n; ++pe) {
        if (pe == g_me) continue;
        CHECK(s.t->reach(pe, 0), "segment 0 of PE %d is not reached", pe);
        CHECK(!s.t->reach(pe, 2), "segment 2 of PE %d was never registered but is reached", pe);
        std::uint64_t v = 0;
        CHECK(!s.t->put(pe, 0, s.seg0_size - 4, &v, 8), "a put past the segment's end did not fail");
        CHECK(!s.t->get(pe, 0, s.seg0_size + 64, &v, 8), "a get past the segment's end did not fail");
        CHECK(!s.t->get(pe, 2, 0, &v, 8), "a get from an unregistered segment did not fail");
        CHECK(!s.t->amo(pe, 0, s.seg0_size, AmoOp::Add, 8, 1, 0, false), "an atomic past the end did not fail");
    }
}

std::uint64_t apply(AmoOp op, std::uint64_t old, std::uint64_t x, std::uint64_t c, std::uint64_t mask) {
    switch (op) {
    case AmoOp::Fetch: return old;
    case AmoOp::Set:
    case AmoOp::Swap: return x & mask;
    case AmoOp::CompareSwap: return old == (c & mask) ? x & mask : old;
    case AmoOp::Add: return (old + x) & mask;
    case AmoOp::And: return old & x & mask;
    case AmoOp::Or: return (old | x) & mask;
    case AmoOp::Xor: return (old ^ x) & mask;
    }
    return old;
}

void atomics(Setup& s, std::uint64_t seed) {
    const AmoOp ops[] = {AmoOp::Fetch, AmoOp::Set,  AmoOp::Swap, AmoOp::CompareSwap,
                         AmoOp::Add,   AmoOp::And, AmoOp::Or,   AmoOp::Xor};
    const int right = (g_me + 1) % g_n, left = (g_me + g_n - 1) % g_n;
    char* area = s.seg0 + kSlot * static_cast<std::size_t>(g_n);
    for (unsigned width : {4u, 8u}) {
        if (!(s.t->caps().amo_widths & (1u << width))) {
            std::printf("[conformance] %u-byte atomics skipped: not in caps\n", width);
            continue;
        }
        const std::uint64_t mask = width == 8 ? ~0ull : 0xffffffffull;
        for (int fetch = 0; fetch < 2; ++fetch) {
            // Word k of this PE is operated on by its left neighbour with op k; the owner writes the
            // initial values before the barrier.
            auto init = [&](int owner, int k) { return mix(seed ^ (std::uint64_t(owner) << 20) ^ (k * 16 + width + fetch)) & mask; };
            auto operand = [&](int owner, int k) { return mix(seed ^ 0xabcdef ^ (std::uint64_t(owner) << 20) ^ k) & mask; };
            for (int k = 0; k < 8; ++k) {
                const std::uint64_t v = init(g_me, k);
                std::memcpy(area + 8 * k, &v, width);
            }
            barrier();
            if (right != g_me) {
                for (int k = 0; k < 8; ++k) {
                    const AmoOp op = ops[k];
                    const std::uint64_t old = init(right, k), x = operand(right, k);
                    const std::uint64_t c = (k == 3 && (seed & 1)) ? x : old; // compare-swap: hit or miss
                    auto r = s.t->amo(right, 0, kSlot * static_cast<std::size_t>(g_n) + 8 * k, op, width, x, c, fetch != 0);
                    if (!OK(r)) continue;
                    const bool returns = fetch || op == AmoOp::Fetch || op == AmoOp::Swap || op == AmoOp::CompareSwap;
                    if (returns)
                        CHECK(*r == old, "%u-byte op %d returned %#" PRIx64 ", expected the old %#" PRIx64, width, k, *r,
                              old);
                }
            }
            OK(s.t->quiet());
            barrier();
            if (left != g_me) {
                for (int k = 0; k < 8; ++k) {
                    std::uint64_t got = 0;
                    std::memcpy(&got, area + 8 * k, width);
                    const std::uint64_t old = init(g_me, k), x = operand(g_me, k);
                    const std::uint64_t c = (k == 3 && (seed & 1)) ? x : old;
                    const std::uint64_t want = apply(ops[k], old, x, c, mask);
                    CHECK(got == want, "%u-byte op %d (fetch %d) left %#" PRIx64 ", expected %#" PRIx64, width, k,
                          fetch, got, want);
                }
            }
            barrier();
        }
    }
    // Atomicity: every PE, with two threads, adds to PE 0's counters at once.
    constexpr int kAdds = 300;
    std::uint64_t* counter = reinterpret_cast<std::uint64_t*>(area + 512);
    auto* counter32 = reinterpret_cast<std::uint32_t*>(area + 520);
    *counter = 0;
    *counter32 = 0;
    barrier();
    if (g_me != 0) {
        auto adder = [&](std::uint64_t step) {
            for (int i = 0; i < kAdds; ++i) {
                OK(s.t->amo(0, 0, kSlot * static_cast<std::size_t>(g_n) + 512, AmoOp::Add, 8, step, 0, i % 3 == 0));
                OK(s.t->amo(0, 0, kSlot * static_cast<std::size_t>(g_n) + 520, AmoOp::Add, 4, step, 0, i % 5 == 0));
            }
        };
        std::thread t1(adder, 1), t2(adder, 2);
        t1.join();
        t2.join();
    }
    OK(s.t->quiet());
    barrier();
    // Fetch-adds hand out tickets: every value exactly once. Every PE but PE 1 takes tickets from
    // PE 1 with two threads, and marks each in PE 1's bitmap with a fetching OR, whose old value
    // must not have that bit yet.
    constexpr int kTickets = 256; // per thread
    const std::uint64_t bitmap_at = kSlot * static_cast<std::size_t>(g_n) + 1024;
    const std::size_t words = (2 * kTickets * static_cast<std::size_t>(g_n) + 63) / 64;
    const std::uint64_t ticket_at = bitmap_at + 8 * words;
    std::memset(s.seg0 + bitmap_at, 0, 8 * words + 8);
    barrier();
    if (g_me != 1) {
        auto taker = [&] {
            for (int i = 0; i < kTickets; ++i) {
                auto t = s.t->amo(1, 0, ticket_at, AmoOp::Add, 8, 1, 0, true);
                if (!OK(t)) return;
                const std::uint64_t bit = 1ull << (*t % 64);
                auto old = s.t->amo(1, 0, bitmap_at + 8 * (*t / 64), AmoOp::Or, 8, bit, 0, true);
                if (OK(old)) CHECK(!(*old & bit), "ticket %" PRIu64 " was handed out twice", *t);
            }
        };
        std::thread a(taker), b(taker);
        a.join();
        b.join();
    }
    OK(s.t->quiet());
    barrier();
    if (g_me == 1) {
        const std::uint64_t taken = 2ull * kTickets * static_cast<std::uint64_t>(g_n - 1);
        std::uint64_t next = 0;
        std::memcpy(&next, s.seg0 + ticket_at, 8);
        CHECK(next == taken, "%" PRIu64 " tickets handed out, expected %" PRIu64, next, taken);
        std::size_t set = 0;
        for (std::size_t w = 0; w < words; ++w) {
            std::uint64_t v;
            std::memcpy(&v, s.seg0 + bitmap_at + 8 * w, 8);
            set += static_cast<std::size_t>(__builtin_popcountll(v));
        }
        CHECK(set == taken, "%zu distinct tickets, expected %" PRIu64, set, taken);
    }
    barrier();
    if (g_me == 0) {
        const std::uint64_t want = 3ull * kAdds * static_cast<std::uint64_t>(g_n - 1);
        CHECK(*counter == want, "64-bit counter %" PRIu64 ", expected %" PRIu64, *counter, want);
        CHECK(*counter32 == want, "32-bit counter %u, expected %" PRIu64, *counter32, want);
    }
    barrier();
}

} // namespace

// Put with signal (put_signal_on) keeps the signal behind its data, blocking or not, on the
// default domain and on one of its own, whichever way the data goes (in a batch with the signal,
// or on its own and then fenced): the signal word is the data's last word, so the owner finds
// data + signal there after an add, and the signal after a set, never the data alone. A stream of
// them with no quiet in between, then the owner checks every one.
void signal_checks(Setup& s, std::uint64_t seed) {
    const std::size_t sizes[] = {8, 16, 200, 256, 264, 4096, 20000};
    constexpr std::size_t kMsgs = 20, kAt = 400000, kStride = 24000;
    net::Domain* own = s.t->open_domain();
    for (net::Domain* d : {static_cast<net::Domain*>(nullptr), own})
        for (bool nbi : {false, true}) {
            const net::Post how{d, nbi};
            const std::uint64_t salt = seed ^ (d ? 0x3c3c : 0xc3c3) ^ (nbi ? 0x1111 : 0);
            auto size_of = [&](std::size_t j) { return sizes[j % std::size(sizes)]; };
            auto signal_of = [&](int writer, int target, std::size_t j) {
                return mix(salt ^ mix(std::uint64_t(writer) * 977 + std::uint64_t(target) * 31 + j));
            };
            std::vector<std::vector<unsigned char>> src; // unchanged until the quiet
            for (int pe = 0; pe < g_n; ++pe) {
                if (pe == g_me) continue;
                for (std::size_t j = 0; j < kMsgs; ++j) {
                    const std::size_t n = size_of(j);
                    src.emplace_back(n);
                    for (std::size_t i = 0; i < n; ++i) src.back()[i] = byte_at(salt + j, g_me, pe, n, i);
                    const std::uint64_t at = kSlot * static_cast<std::size_t>(g_me) + kAt + j * kStride;
                    OK(s.t->put_signal_on(how, pe, 0, at, src.back().data(), n, 0, at + n - 8,
                                          j % 2 ? AmoOp::Add : AmoOp::Set, signal_of(g_me, pe, j)));
                }
            }
            OK(s.t->quiet_on(d));
            barrier();
            for (int w = 0; w < g_n; ++w) {
                if (w == g_me) continue;
                for (std::size_t j = 0; j < kMsgs; ++j) {
                    const std::size_t n = size_of(j);
                    std::vector<unsigned char> expect(n);
                    for (std::size_t i = 0; i < n; ++i) expect[i] = byte_at(salt + j, w, g_me, n, i);
                    std::uint64_t last = 0;
                    std::memcpy(&last, expect.data() + n - 8, 8);
                    last = j % 2 ? last + signal_of(w, g_me, j) : signal_of(w, g_me, j);
                    std::memcpy(expect.data() + n - 8, &last, 8);
                    const char* got = s.seg0 + kSlot * static_cast<std::size_t>(w) + kAt + j * kStride;
                    CHECK(std::memcmp(got, expect.data(), n) == 0,
                          "PE %d's put with signal %zu (%zu bytes, %s, %s%s): the data or the signal after it differ",
                          w, j, n, j % 2 ? "add" : "set", nbi ? "non-blocking" : "blocking", d ? ", own domain" : "");
                }
            }
            barrier();
        }
    s.t->close_domain(own);
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: oshrun -np N transport_conformance shm|ucx|ofi\n");
        return 2;
    }
    const std::string which = argv[1];
    if (auto r = Runtime::init(SHMEM_THREAD_MULTIPLE); !r) {
        std::fprintf(stderr, "[conformance] init: %s\n", r.error().message.c_str());
        return 2;
    }
    g_me = shmem_my_pe();
    g_n = shmem_n_pes();
    Setup s;
    Result<std::unique_ptr<net::Transport>> made = Error{"unknown transport: use shm, ucx or ofi"};
    // VKSHMEM_OFI_PROVIDER, VKSHMEM_OFI_ATOMICS, VKSHMEM_NBI_BATCH and VKSHMEM_NBI_DEFER: batches of
    // small non-blocking operations and deferred large ones as the runtime has them.
    const Config& cfg = g_runtime->config();
    if (which == "shm") made = net::make_shm(g_me, g_n);
    else if (which == "ucx") made = net::make_ucx(g_me, g_n, cfg.VKSHMEM_NBI_BATCH, cfg.VKSHMEM_NBI_DEFER);
    else if (which == "ofi")
        made = net::make_ofi(g_me, g_n, cfg.VKSHMEM_OFI_PROVIDER, cfg.VKSHMEM_OFI_ATOMICS, cfg.VKSHMEM_NBI_BATCH,
                             cfg.VKSHMEM_NBI_DEFER);
    if (!made) {
        std::fprintf(stderr, "[conformance] %s: %s\n", which.c_str(), made.error().message.c_str());
        return 2;
    }
    s.t = std::move(*made);
    // The seed: PE 0's, for every PE.
    std::uint64_t mine = std::random_device{}() ^ (std::uint64_t(std::random_device{}()) << 32);
    if (const char* e = std::getenv("VKSHMEM_TEST_SEED")) mine = std::strtoull(e, nullptr, 0);
    std::vector<std::uint64_t> seeds(static_cast<std::size_t>(g_n));
    if (auto r = boot().allgather(&mine, sizeof mine, seeds.data()); !r) return 2;
    const std::uint64_t seed = seeds[0];

    s.seg0_size = kSlot * static_cast<std::size_t>(g_n) + kAmoArea;
    s.seg0 = static_cast<char*>(g_runtime->allocate(kHostHeap, s.seg0_size, 64, "conformance"));
    s.seg1.resize(kSlot1 * static_cast<std::size_t>(g_n));
    if (!s.seg0) return 2;
    OK(s.t->register_segment(0, s.seg0, s.seg0_size));
    auto r1 = s.t->register_segment(1, s.seg1.data(), s.seg1.size());
    s.seg1_registered = static_cast<bool>(r1);
    if (which == "shm") CHECK(!s.seg1_registered, "shm registered memory outside the symmetric spaces");
    else CHECK(s.seg1_registered, "registering a malloc'd buffer: %s", r1 ? "" : r1.error().message.c_str());
    std::vector<bool> peers(static_cast<std::size_t>(g_n), true);
    peers[static_cast<std::size_t>(g_me)] = false;
    if (!OK(s.t->connect(boot(), peers))) return 2;
    if (g_me == 0)
        std::printf("[conformance] %s at %d PEs, seed %#" PRIx64 " (VKSHMEM_TEST_SEED): %s\n", which.c_str(), g_n, seed,
                    s.t->describe().c_str());
    // What the transport must have chosen on this host (e.g. libfabric's contexts on domains of
    // their own, where local buffers need no registration): a fallback would pass every other check.
    if (const char* want = std::getenv("VKSHMEM_TEST_EXPECT_DESCRIPTION"))
        CHECK(s.t->describe().find(want) != std::string::npos, "the transport does not describe itself with \"%s\": %s",
              want, s.t->describe().c_str());

    rma_checks(s, seed);
    nbi_checks(s, seed);
    order_checks(s, seed);
    signal_checks(s, seed);
    errors(s);
    atomics(s, seed);

    barrier();
    s.t.reset(); // closes connections while every PE still serves the others
    std::printf("[conformance] PE %d: %d checks, %d failed\n", g_me, g_checks.load(), g_failures.load());
    Runtime::finalize();
    return g_failures ? 1 : 0;
}
