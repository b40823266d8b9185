// SPDX-License-Identifier: BSL-1.0
// Non-blocking operations in flight (OpenSHMEM 1.6: RMA, AMO, signal, contexts, ordering): put_nbi,
// get_nbi, put_signal_nbi and the fetching _nbi atomics may return before they complete, so only
// what the specification promises is checked, never timing:
//   - hundreds of put_nbi (1 B .. 64 KiB, odd offsets, putmem and typed/sized forms, private and
//     symmetric sources) to every PE at once are all delivered by shmem_quiet; sources overwritten
//     right after the quiet must not leak into the targets;
//   - hundreds of get_nbi from every PE into poisoned private and symmetric slots hold the data
//     after shmem_quiet;
//   - hundreds of fetching nbi atomics (int, long, uint32, uint64) return exactly the old values,
//     and those of one PE on one cell form running sums in some order (they are unordered among
//     themselves without a fence);
//   - shmem_fence / shmem_ctx_fence order put_nbi before a flag, and put_nbi + fence before a
//     put_signal_nbi (SET and ADD): the target checks the data as soon as it sees flag or signal;
//   - outstanding put_nbi, put_signal_nbi and fetching nbi atomics reach a PE that waits for
//     them (wait_until, signal_wait_until, test loops) while their initiator, before any quiet,
//     waits for another PE's: a ring of PEs each waiting on its left neighbour;
//   - each created context completes its own operations: shmem_ctx_quiet of one context while
//     another still has operations outstanding (one thread and several), threads that each drive
//     a private context (SHMEM_THREAD_MULTIPLE), and shmem_ctx_destroy, which completes them.
// The put, get, atomic, fence and signal cases run on the default context (plain routines,
// shmem_quiet) and on a created one (shmem_ctx_ routines, shmem_ctx_quiet); every case runs with
// destinations and cells in both heaps. Destinations are poisoned first, so a write that never
// happened, or landed outside its range, is seen. Targets learn that puts completed from a flag
// set after the quiet, not from a barrier (which completes default-context operations itself).
#include "spmd.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

namespace {

using spmd::Gen;
using spmd::Space;

[[maybe_unused]] const bool kThreads = [] {
    spmd::init_config().requested_thread_level = SHMEM_THREAD_MULTIPLE;
    return true;
}();

// The thread cases need SHMEM_THREAD_MULTIPLE; the provided level is the same on every PE, so
// every PE skips them alike.
bool have_thread_multiple() { return spmd::init_config().provided >= SHMEM_THREAD_MULTIPLE; }

constexpr Space kSpaces[] = {Space::Host, Space::Device};

std::size_t align_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }
std::size_t uz(int x) { return static_cast<std::size_t>(x); }

// Every PE, starting with the next one and ending with this PE itself (the only one at 1 PE).
std::vector<int> targets() {
    std::vector<int> t;
    for (int k = 1; k <= spmd::npes(); ++k) t.push_back(spmd::right(k));
    return t;
}

// Completion is checked without a barrier (which completes the default context's operations by
// itself): after the quiet (or ctx_destroy) that must have completed this PE's operations, it
// sets its flag on every PE to `value`, and each PE checks what was written to it once every
// flag has arrived.
void flag_all(long* flags, long value) {
    for (int to : targets()) shmem_long_atomic_set(flags + spmd::me(), value, to);
}
void wait_all(long* flags, long value) {
    for (int p = 0; p < spmd::npes(); ++p) shmem_long_wait_until(flags + p, SHMEM_CMP_EQ, value);
}

// ---- Where operations are issued ------------------------------------------------------------
// The plain routine on the default context, its shmem_ctx_ form on a created one.
#define NBI_CALL(v, name, ...) ((v).plain() ? shmem_##name(__VA_ARGS__) : shmem_ctx_##name((v).ctx, __VA_ARGS__))

// The routines a planned transfer goes through: putmem/getmem (any size, any offset), the typed
// short/int/long forms and the sized 64-bit form (whole elements at aligned addresses).
enum Kind : int { kMem, kShort, kInt, kLong, kSized64, kKinds };
constexpr std::size_t kElemSize[kKinds] = {1, sizeof(short), sizeof(int), sizeof(long), 8};

struct Via {
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    bool plain() const { return ctx == SHMEM_CTX_DEFAULT; }
    void quiet() const {
        if (plain()) shmem_quiet();
        else shmem_ctx_quiet(ctx);
    }
    void fence() const {
        if (plain()) shmem_fence();
        else shmem_ctx_fence(ctx);
    }
    void put_nbi(int kind, void* d, const void* s, std::size_t bytes, int pe) const {
        switch (kind) {
        case kMem: NBI_CALL(*this, putmem_nbi, d, s, bytes, pe); break;
        case kShort:
            NBI_CALL(*this, short_put_nbi, static_cast<short*>(d), static_cast<const short*>(s), bytes / sizeof(short),
                     pe);
            break;
        case kInt:
            NBI_CALL(*this, int_put_nbi, static_cast<int*>(d), static_cast<const int*>(s), bytes / sizeof(int), pe);
            break;
        case kLong:
            NBI_CALL(*this, long_put_nbi, static_cast<long*>(d), static_cast<const long*>(s), bytes / sizeof(long), pe);
            break;
        case kSized64: NBI_CALL(*this, put64_nbi, d, s, bytes / 8, pe); break;
        }
    }
    void get_nbi(int kind, void* d, const void* s, std::size_t bytes, int pe) const {
        switch (kind) {
        case kMem: NBI_CALL(*this, getmem_nbi, d, s, bytes, pe); break;
        case kShort:
            NBI_CALL(*this, short_get_nbi, static_cast<short*>(d), static_cast<const short*>(s), bytes / sizeof(short),
                     pe);
            break;
        case kInt:
            NBI_CALL(*this, int_get_nbi, static_cast<int*>(d), static_cast<const int*>(s), bytes / sizeof(int), pe);
            break;
        case kLong:
            NBI_CALL(*this, long_get_nbi, static_cast<long*>(d), static_cast<const long*>(s), bytes / sizeof(long), pe);
            break;
        case kSized64: NBI_CALL(*this, get64_nbi, d, s, bytes / 8, pe); break;
        }
    }
    void put_signal_nbi(int kind, void* d, const void* s, std::size_t bytes, std::uint64_t* sig, std::uint64_t value,
                        int sig_op, int pe) const {
        switch (kind) {
        case kMem: NBI_CALL(*this, putmem_signal_nbi, d, s, bytes, sig, value, sig_op, pe); break;
        case kShort:
            NBI_CALL(*this, short_put_signal_nbi, static_cast<short*>(d), static_cast<const short*>(s),
                     bytes / sizeof(short), sig, value, sig_op, pe);
            break;
        case kInt:
            NBI_CALL(*this, int_put_signal_nbi, static_cast<int*>(d), static_cast<const int*>(s), bytes / sizeof(int),
                     sig, value, sig_op, pe);
            break;
        case kLong:
            NBI_CALL(*this, long_put_signal_nbi, static_cast<long*>(d), static_cast<const long*>(s),
                     bytes / sizeof(long), sig, value, sig_op, pe);
            break;
        case kSized64: NBI_CALL(*this, put64_signal_nbi, d, s, bytes / 8, sig, value, sig_op, pe); break;
        }
    }
    void long_p(long* d, long v, int pe) const { NBI_CALL(*this, long_p, d, v, pe); }
    void long_atomic_set(long* d, long v, int pe) const { NBI_CALL(*this, long_atomic_set, d, v, pe); }
};

// Runs f(via) on the default context, then on a context created for it (destroyed afterwards).
template <class F> void for_each_via(F&& f) {
    {
        INFO("default context: plain routines, shmem_fence, shmem_quiet");
        f(Via{});
    }
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    REQUIRE(shmem_ctx_create(0, &ctx) == 0);
    {
        INFO("created context: shmem_ctx_ routines, shmem_ctx_fence, shmem_ctx_quiet");
        f(Via{ctx});
    }
    shmem_ctx_destroy(ctx);
}

// ---- Fetching nbi atomics through a Via -----------------------------------------------------
#define NBI_STD_OPS(T, N)                                                                                    \
    struct std_##N {                                                                                         \
        using type = T;                                                                                      \
        static void fetch(const Via& v, T* f, const T* s, int pe) {                                          \
            NBI_CALL(v, N##_atomic_fetch_nbi, f, s, pe);                                                     \
        }                                                                                                    \
        static void swap(const Via& v, T* f, T* d, T x, int pe) {                                            \
            NBI_CALL(v, N##_atomic_swap_nbi, f, d, x, pe);                                                   \
        }                                                                                                    \
        static void compare_swap(const Via& v, T* f, T* d, T c, T x, int pe) {                               \
            NBI_CALL(v, N##_atomic_compare_swap_nbi, f, d, c, x, pe);                                        \
        }                                                                                                    \
        static void fetch_inc(const Via& v, T* f, T* d, int pe) {                                            \
            NBI_CALL(v, N##_atomic_fetch_inc_nbi, f, d, pe);                                                 \
        }                                                                                                    \
        static void fetch_add(const Via& v, T* f, T* d, T x, int pe) {                                       \
            NBI_CALL(v, N##_atomic_fetch_add_nbi, f, d, x, pe);                                              \
        }                                                                                                    \
    };
NBI_STD_OPS(int, int)
NBI_STD_OPS(long, long)
NBI_STD_OPS(std::uint32_t, uint32)
NBI_STD_OPS(std::uint64_t, uint64)
#undef NBI_STD_OPS

#define NBI_BIT_OPS(T, N)                                                                                    \
    struct bit_##N {                                                                                         \
        static void fetch_and(const Via& v, T* f, T* d, T x, int pe) {                                       \
            NBI_CALL(v, N##_atomic_fetch_and_nbi, f, d, x, pe);                                              \
        }                                                                                                    \
        static void fetch_or(const Via& v, T* f, T* d, T x, int pe) {                                        \
            NBI_CALL(v, N##_atomic_fetch_or_nbi, f, d, x, pe);                                               \
        }                                                                                                    \
        static void fetch_xor(const Via& v, T* f, T* d, T x, int pe) {                                       \
            NBI_CALL(v, N##_atomic_fetch_xor_nbi, f, d, x, pe);                                              \
        }                                                                                                    \
    };
NBI_BIT_OPS(std::uint32_t, uint32)
NBI_BIT_OPS(std::uint64_t, uint64)
#undef NBI_BIT_OPS

// ---- Planned transfers ----------------------------------------------------------------------
// 1 B .. max: mostly small, some up to 2 KiB, a few up to 16 KiB, now and then up to 64 KiB.
std::size_t pick_size(Gen& g, std::size_t max) {
    const std::uint64_t c = g.range(0, 99);
    const std::size_t b = c < 60 ? g.range(1, 64) : c < 90 ? g.range(65, 2048) : c < 98 ? g.range(2049, 16384)
                                                                                        : g.range(16385, 65536);
    return std::min(b, max);
}

struct Xfer {
    int kind;
    std::size_t off, bytes; // where in the destination region (put) or source pool (get), how much
};

// Up to `count` transfers packed one after another into a region of `region` bytes, with gaps of
// 0-9 poisoned bytes between them (so putmem lands at odd offsets); typed ones aligned.
std::vector<Xfer> plan_xfers(Gen g, std::size_t count, std::size_t region, std::size_t max_bytes, bool with_max) {
    std::vector<Xfer> ops;
    std::size_t at = g.range(0, 7);
    for (std::size_t i = 0; i < count; ++i) {
        Xfer x{};
        x.kind = static_cast<int>(g.range(0, kKinds - 1));
        const std::size_t e = kElemSize[x.kind];
        const std::size_t b = i == 0 && with_max ? max_bytes : pick_size(g, max_bytes);
        x.bytes = std::max(e, b / e * e);
        at = align_up(at, e);
        if (at + x.bytes > region) break; // the region is full: the plan is shorter (the same on every PE)
        x.off = at;
        at += x.bytes + g.range(0, 9);
        ops.push_back(x);
    }
    return ops;
}

// The puts each PE makes to each PE: any PE can rebuild what PE `from` planned for PE `to`.
struct PutPlan {
    std::uint64_t key;
    std::size_t per_target; // puts planned to each PE (fewer when the region fills up)
    std::size_t region;     // bytes a source owns at each target
    std::size_t max_bytes;
    bool with_max = false; // the first put to each target is max_bytes long
    std::vector<Xfer> plan(int from, int to) const {
        return plan_xfers(Gen(key, uz(from), uz(to)), per_target, region, max_bytes, with_max);
    }
    void fill(void* p, const Xfer& x, int from, int to, std::size_t i) const {
        spmd::fill_bytes(p, x.bytes, Gen(key, uz(from), uz(to), i + 1));
    }
    // What PE `to` must hold in the region PE `from` wrote: the data, poison everywhere else.
    std::vector<unsigned char> image(int from, int to) const {
        std::vector<unsigned char> img(region, spmd::poison_byte());
        const auto ops = plan(from, to);
        for (std::size_t i = 0; i < ops.size(); ++i) fill(img.data() + ops[i].off, ops[i], from, to, i);
        return img;
    }
};

// This PE's planned puts to every PE, issued round robin over the targets so all are in flight at
// once. Their sources are staged in a private buffer (every fourth, where given, in a symmetric
// one): neither may change until the puts complete; poison_sources() overwrites both after.
class PutBatch {
public:
    explicit PutBatch(const PutPlan& p, unsigned char* sym_src = nullptr, std::size_t sym_cap = 0) : sym_(sym_src) {
        const int me = spmd::me();
        const std::vector<int> tg = targets();
        std::vector<std::vector<Xfer>> plans;
        for (int to : tg) plans.push_back(p.plan(me, to));
        for (std::size_t i = 0;; ++i) {
            bool any = false;
            for (std::size_t t = 0; t < tg.size(); ++t) {
                if (i >= plans[t].size()) continue;
                ops_.push_back(Op{tg[t], i, plans[t][i], false, 0});
                any = true;
            }
            if (!any) break;
        }
        // Source offsets: typed sources aligned, putmem sources at any offset.
        Gen g(p.key, uz(me), 0x737263);
        std::size_t priv_at = 0, sym_at = 0;
        for (std::size_t k = 0; k < ops_.size(); ++k) {
            Op& op = ops_[k];
            const std::size_t e = kElemSize[op.x.kind];
            const std::size_t jitter = e == 1 ? g.range(0, 7) : 0;
            op.sym = sym_ && k % 4 == 3 && align_up(sym_at, e) + jitter + op.x.bytes <= sym_cap;
            std::size_t& at = op.sym ? sym_at : priv_at;
            op.src = align_up(at, e) + jitter;
            at = op.src + op.x.bytes;
        }
        priv_.assign(priv_at + 1, 0);
        std::vector<unsigned char> sym_img(sym_at);
        for (const Op& op : ops_)
            p.fill((op.sym ? sym_img.data() : priv_.data()) + op.src, op.x, me, op.to, op.index);
        sym_used_ = sym_at;
        if (sym_used_) spmd::local_store(sym_, sym_img.data(), sym_used_);
    }
    // Puts into `region`, the address of this PE's region in the targets' receive array.
    void issue(const Via& v, unsigned char* region) const {
        for (const Op& op : ops_)
            v.put_nbi(op.x.kind, region + op.x.off, (op.sym ? sym_ : priv_.data()) + op.src, op.x.bytes, op.to);
    }
    // Only after the puts completed: a put that read its source later would deliver poison.
    void poison_sources() {
        std::fill(priv_.begin(), priv_.end(), spmd::poison_byte());
        if (sym_used_) spmd::local_fill(sym_, spmd::poison_byte(), sym_used_);
    }
    std::size_t size() const { return ops_.size(); }

private:
    struct Op {
        int to;
        std::size_t index; // in the plan for `to`
        Xfer x;
        bool sym;
        std::size_t src;
    };
    std::vector<Op> ops_;
    std::vector<unsigned char> priv_;
    unsigned char* sym_;
    std::size_t sym_used_ = 0;
};

// Every PE's symmetric pool of source data for gets: any PE can rebuild any PE's pool.
constexpr std::size_t kPoolBytes = 128 * 1024;
std::vector<unsigned char> pool_image(std::uint64_t key, int pe) {
    std::vector<unsigned char> v(kPoolBytes);
    spmd::fill_bytes(v.data(), kPoolBytes, Gen(key, uz(pe), 0x706f6f6c));
    return v;
}
void fill_pool(const spmd::SymArray<unsigned char>& pool, std::uint64_t key) {
    spmd::local_write(pool.get(), pool_image(key, spmd::me()));
}

struct GetPlan {
    std::uint64_t key;       // this batch
    std::uint64_t pool_key;  // what the pools hold
    std::size_t count;       // gets this PE issues, round robin over every PE
    std::size_t max_bytes;
    std::size_t sym_cap = 0; // bytes of the symmetric destination (0: private destinations only)
};

// This PE's gets from every PE's pool into distinct poisoned slots of a private buffer (every
// fourth, where given, into a symmetric one), gaps of poison between them.
class GetBatch {
public:
    explicit GetBatch(const GetPlan& p, unsigned char* sym_dst = nullptr) : p_(p), sym_(sym_dst) {
        const std::vector<int> tg = targets();
        Gen g(p.key, uz(spmd::me()), 0x676574);
        std::size_t priv_at = g.range(0, 7), sym_at = g.range(0, 7);
        for (std::size_t i = 0; i < p.count; ++i) {
            Op op{};
            op.from = tg[i % tg.size()];
            op.kind = static_cast<int>(g.range(0, kKinds - 1));
            const std::size_t e = kElemSize[op.kind];
            op.bytes = std::max(e, pick_size(g, p.max_bytes) / e * e);
            op.src = g.range(0, (kPoolBytes - op.bytes) / e) * e;
            op.sym = sym_ && i % 4 == 3 && align_up(sym_at, e) + op.bytes <= p.sym_cap;
            std::size_t& at = op.sym ? sym_at : priv_at;
            op.dst = align_up(at, e);
            at = op.dst + op.bytes + g.range(0, 9);
            ops_.push_back(op);
        }
        priv_.assign(priv_at + 16, spmd::poison_byte());
    }
    void issue(const Via& v, const unsigned char* pool) {
        for (const Op& op : ops_)
            v.get_nbi(op.kind, (op.sym ? sym_ : priv_.data()) + op.dst, pool + op.src, op.bytes, op.from);
    }
    // Only after the gets completed: every slot holds its data, every gap its poison.
    std::string check() const {
        std::vector<std::vector<unsigned char>> pools(uz(spmd::npes()));
        std::vector<unsigned char> want(priv_.size(), spmd::poison_byte());
        std::vector<unsigned char> want_sym(sym_ ? p_.sym_cap : 0, spmd::poison_byte());
        for (const Op& op : ops_) {
            auto& pool = pools[uz(op.from)];
            if (pool.empty()) pool = pool_image(p_.pool_key, op.from);
            std::memcpy((op.sym ? want_sym.data() : want.data()) + op.dst, pool.data() + op.src, op.bytes);
        }
        std::string e = spmd::diff_bytes(priv_.data(), want.data(), want.size());
        if (!e.empty()) return "private get_nbi destinations: " + e;
        if (sym_) {
            e = spmd::diff_sym(sym_, want_sym.data(), want_sym.size());
            if (!e.empty()) return "symmetric get_nbi destinations: " + e;
        }
        return {};
    }
    std::size_t size() const { return ops_.size(); }

private:
    struct Op {
        int from, kind;
        std::size_t src, dst, bytes;
        bool sym;
    };
    GetPlan p_;
    unsigned char* sym_;
    std::vector<Op> ops_;
    std::vector<unsigned char> priv_;
};

// ---- Fetching atomics -----------------------------------------------------------------------
// Values for arithmetic: signed integers stay within +-2^(bits-4), so a sum of two never
// overflows; unsigned integers cover the whole range (they wrap, as defined).
template <class T> T amo_value(Gen g) {
    if constexpr (std::is_signed_v<T>) {
        using U = std::make_unsigned_t<T>;
        const U span = U(1) << (sizeof(T) * 8 - 3);
        return static_cast<T>(static_cast<T>(static_cast<U>(g.next()) % span) - static_cast<T>(span / 2));
    } else {
        return static_cast<T>(g.next());
    }
}
template <class T> T plus(T a, T b) { return static_cast<T>(a + b); }
template <class T> T poison_value() {
    T v;
    std::memset(static_cast<void*>(&v), spmd::poison_byte(), sizeof v);
    return v;
}

// The values fetched by one PE's operations on one cell, unordered among themselves (no fence
// between them), must be the running sums of their operands in some order of application: sorted
// (the operands are positive and small), the first is `start` and each next one is the previous
// plus the previous operation's operand.
template <class T> std::string check_running_sums(std::vector<std::pair<T, T>> fetched_operand, T start) {
    std::sort(fetched_operand.begin(), fetched_operand.end());
    T want = start;
    for (std::size_t i = 0; i < fetched_operand.size(); ++i) {
        if (fetched_operand[i].first != want) {
            std::ostringstream out;
            out << "sorted fetched value " << i << " of " << fetched_operand.size() << " is "
                << +fetched_operand[i].first << ", expected " << +want
                << " (the old values of one PE's operations on one cell are not running sums of its operands)";
            return out.str();
        }
        want = plus(want, fetched_operand[i].second);
    }
    return {};
}

// fetch_add_nbi of operands 1..1000 from this PE to its own counter on every PE; the fetched
// values land in private slots.
template <class Ops> class AddBatch {
public:
    using T = typename Ops::type;
    AddBatch(std::uint64_t key, std::size_t adds) : key_(key), adds_(adds), tg_(targets()) {
        fetched_.assign(tg_.size() * adds_, poison_value<T>());
    }
    static T operand(std::uint64_t key, int from, int to, std::size_t k) {
        return static_cast<T>(Gen(key, uz(from), uz(to), k).range(1, 1000));
    }
    // What the counter PE `from` adds to on PE `to` must hold at the end.
    static T total(std::uint64_t key, int from, int to, std::size_t adds) {
        T sum = 0;
        for (std::size_t k = 0; k < adds; ++k) sum = plus(sum, operand(key, from, to, k));
        return sum;
    }
    void issue(const Via& v, T* counter) {
        for (std::size_t k = 0; k < adds_; ++k)
            for (std::size_t t = 0; t < tg_.size(); ++t)
                Ops::fetch_add(v, &fetched_[t * adds_ + k], counter, operand(key_, spmd::me(), tg_[t], k), tg_[t]);
    }
    // Only after the operations completed (the counters started at 0).
    std::string check_fetched() const {
        for (std::size_t t = 0; t < tg_.size(); ++t) {
            std::vector<std::pair<T, T>> fo;
            for (std::size_t k = 0; k < adds_; ++k)
                fo.emplace_back(fetched_[t * adds_ + k], operand(key_, spmd::me(), tg_[t], k));
            std::string e = check_running_sums(fo, T(0));
            if (!e.empty()) return "fetch_add_nbi to PE " + std::to_string(tg_[t]) + ": " + e;
        }
        return {};
    }

private:
    std::uint64_t key_;
    std::size_t adds_;
    std::vector<int> tg_;
    std::vector<T> fetched_;
};

// Fetching nbi atomics of one type from this PE to every PE, all in flight at once. On each
// target, each source PE owns a block of cells: kCells cells that see exactly one operation each
// (so the fetched value is exactly the cell's initial value, and the final value is known), then
// a counter for kAdds fetch_add_nbi and one for kIncs fetch_inc_nbi (whose fetched values must be
// running sums). Fetch results alternate between private and symmetric slots of this PE.
template <class Std, class Bit> class AmoBatch {
public:
    using T = typename Std::type;
    static constexpr std::size_t kCells = 12, kAdds = 6, kIncs = 6;
    static constexpr std::size_t kBlock = kCells + 2;             // cells per source PE on each target
    static constexpr std::size_t kSlots = kCells + kAdds + kIncs; // fetch results per target
    static constexpr bool kBitwise = !std::is_void_v<Bit>;
    static constexpr std::uint64_t kKinds = kBitwise ? 9 : 6;
    static constexpr const char* kAmoName[9] = {
        "fetch_nbi",     "swap_nbi",      "compare_swap_nbi (match)", "compare_swap_nbi (no match)",
        "fetch_inc_nbi", "fetch_add_nbi", "fetch_and_nbi",            "fetch_or_nbi",
        "fetch_xor_nbi"};

    AmoBatch(Space s, std::uint64_t key)
        : key_(key), n_(spmd::npes()), tg_(targets()), cells_(s, uz(n_) * kBlock), sym_(s, uz(n_) * kSlots),
          priv_(uz(n_) * kSlots, poison_value<T>()) {
        const int me = spmd::me();
        std::vector<T> mine(uz(n_) * kBlock, T(0));
        for (int p = 0; p < n_; ++p)
            for (std::size_t k = 0; k < kCells; ++k) mine[uz(p) * kBlock + k] = init(me, p, k);
        spmd::local_write(cells_.get(), mine);
        sym_.poison();
    }
    void issue(const Via& v) {
        const int me = spmd::me();
        T* const block = cells_.at(uz(me) * kBlock);
        for (std::size_t j = 0; j < kSlots; ++j) {
            for (std::size_t t = 0; t < tg_.size(); ++t) {
                const int to = tg_[t];
                T* const f = slot(t * kSlots + j);
                if (j < kCells) {
                    const T x = operand(me, to, j), old = init(to, me, j);
                    switch (kind(me, to, j)) {
                    case 0: Std::fetch(v, f, block + j, to); break;
                    case 1: Std::swap(v, f, block + j, x, to); break;
                    case 2: Std::compare_swap(v, f, block + j, old, x, to); break;
                    case 3: Std::compare_swap(v, f, block + j, static_cast<T>(old ^ T(1)), x, to); break;
                    case 4: Std::fetch_inc(v, f, block + j, to); break;
                    case 5: Std::fetch_add(v, f, block + j, x, to); break;
                    default:
                        if constexpr (kBitwise) {
                            if (kind(me, to, j) == 6) Bit::fetch_and(v, f, block + j, x, to);
                            else if (kind(me, to, j) == 7) Bit::fetch_or(v, f, block + j, x, to);
                            else Bit::fetch_xor(v, f, block + j, x, to);
                        }
                        break;
                    }
                } else if (j < kCells + kAdds) {
                    Std::fetch_add(v, f, block + kCells, add_operand(me, to, j - kCells), to);
                } else {
                    Std::fetch_inc(v, f, block + kCells + 1, to);
                }
            }
        }
    }
    // Only after the operations completed.
    void check_fetched() const {
        const int me = spmd::me();
        const std::vector<T> sym = sym_.load_all();
        auto value = [&](std::size_t i) { return i % 2 ? sym[i] : priv_[i]; };
        for (std::size_t t = 0; t < tg_.size(); ++t) {
            const int to = tg_[t];
            INFO("operations on PE " << to);
            std::vector<std::pair<T, T>> adds, incs;
            for (std::size_t j = 0; j < kSlots; ++j) {
                const T got = value(t * kSlots + j);
                if (j < kCells) {
                    INFO("cell " << j << ": " << kAmoName[kind(me, to, j)] << ", fetched into "
                                 << ((t * kSlots + j) % 2 ? "symmetric" : "private") << " memory");
                    REQUIRE(+got == +init(to, me, j));
                } else if (j < kCells + kAdds) {
                    adds.emplace_back(got, add_operand(me, to, j - kCells));
                } else {
                    incs.emplace_back(got, T(1));
                }
            }
            {
                INFO(kAdds << " fetch_add_nbi on one counter");
                SPMD_REQUIRE_OK(check_running_sums(adds, T(0)));
            }
            {
                INFO(kIncs << " fetch_inc_nbi on one counter");
                SPMD_REQUIRE_OK(check_running_sums(incs, T(0)));
            }
        }
    }
    // After a barrier that follows every PE's completion: this PE's cells.
    void check_cells() const {
        const int me = spmd::me();
        const std::vector<T> now = cells_.load_all();
        for (int p = 0; p < n_; ++p) {
            INFO("cells of source PE " << p);
            const T* got = now.data() + uz(p) * kBlock;
            for (std::size_t k = 0; k < kCells; ++k) {
                const T old = init(me, p, k), x = operand(p, me, k);
                T want = old;
                switch (kind(p, me, k)) {
                case 1:
                case 2: want = x; break;
                case 4: want = plus(old, T(1)); break;
                case 5: want = plus(old, x); break;
                case 6: want = static_cast<T>(old & x); break;
                case 7: want = static_cast<T>(old | x); break;
                case 8: want = static_cast<T>(old ^ x); break;
                default: break; // fetch and a compare_swap that does not match leave the cell alone
                }
                INFO("cell " << k << " after " << kAmoName[kind(p, me, k)]);
                REQUIRE(+got[k] == +want);
            }
            T sum = 0;
            for (std::size_t k = 0; k < kAdds; ++k) sum = plus(sum, add_operand(p, me, k));
            {
                INFO("the fetch_add_nbi counter");
                REQUIRE(+got[kCells] == +sum);
            }
            {
                INFO("the fetch_inc_nbi counter");
                REQUIRE(+got[kCells + 1] == +static_cast<T>(kIncs));
            }
        }
    }

private:
    T init(int owner, int from, std::size_t k) const { return amo_value<T>(Gen(key_, uz(owner), uz(from), k)); }
    T operand(int from, int to, std::size_t k) const { return amo_value<T>(Gen(key_ + 1, uz(from), uz(to), k)); }
    T add_operand(int from, int to, std::size_t k) const {
        return static_cast<T>(Gen(key_ + 2, uz(from), uz(to), k).range(1, 1000));
    }
    std::uint64_t kind(int from, int to, std::size_t k) const {
        return Gen(key_ + 3, uz(from), uz(to), k).range(0, kKinds - 1);
    }
    T* slot(std::size_t i) { return i % 2 ? sym_.at(i) : &priv_[i]; }

    std::uint64_t key_;
    int n_;
    std::vector<int> tg_;
    spmd::SymArray<T> cells_, sym_;
    std::vector<T> priv_;
};

// ---- Test cases ------------------------------------------------------------------------------

TEST_CASE("hundreds of put_nbi to every PE at once, all delivered by quiet", "[nbi][put]") {
    constexpr std::size_t kRegion = 512 * 1024, kSymSrc = 256 * 1024;
    const int n = spmd::npes(), me = spmd::me();
    // About 300 puts from each PE (fewer at 1 PE, where they all fit in one region).
    const std::size_t per_target = std::max<std::size_t>(75, (300 + uz(n) - 1) / uz(n));
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        spmd::SymArray<unsigned char> recv(s, uz(n) * kRegion), sym_src(s, kSymSrc);
        spmd::SymArray<long> flags(s, uz(n));
        spmd::local_write(flags.get(), std::vector<long>(uz(n), 0));
        long round = 0;
        for_each_via([&](const Via& v) {
            const PutPlan plan{spmd::shared_key(), per_target, kRegion, 65536, true};
            recv.poison();
            PutBatch puts(plan, sym_src.get(), kSymSrc);
            shmem_barrier_all(); // every target is poisoned before anyone writes
            puts.issue(v, recv.get() + uz(me) * kRegion);
            v.quiet();
            puts.poison_sources();
            flag_all(flags.get(), ++round);
            wait_all(flags.get(), round);
            for (int p = 0; p < n; ++p) {
                INFO(plan.plan(p, me).size() << " puts from PE " << p);
                SPMD_REQUIRE_OK(spmd::diff_sym(recv.get() + uz(p) * kRegion, plan.image(p, me).data(), kRegion));
            }
            shmem_barrier_all();
        });
    }
}

TEST_CASE("hundreds of get_nbi from every PE into poisoned slots, all complete after quiet", "[nbi][get]") {
    constexpr std::size_t kSymDst = 256 * 1024;
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        spmd::SymArray<unsigned char> pool(s, kPoolBytes), sym_dst(s, kSymDst);
        for_each_via([&](const Via& v) {
            const std::uint64_t pool_key = spmd::shared_key();
            fill_pool(pool, pool_key);
            sym_dst.poison();
            GetBatch gets(GetPlan{spmd::shared_key(), pool_key, 300, 65536, kSymDst}, sym_dst.get());
            shmem_barrier_all(); // every pool is filled before anyone reads
            gets.issue(v, pool.get());
            v.quiet();
            INFO(gets.size() << " gets");
            SPMD_REQUIRE_OK(gets.check());
            shmem_barrier_all(); // nobody refills its pool while another PE still reads it
        });
    }
}

// A run of small transfers to consecutive addresses may travel as one copy (vulkan/transfer.cpp,
// rma/am.cpp): pieces of 1-24 bytes covering a region, their sources (puts) or destinations (gets)
// private and symmetric by turns in runs of 1-12 pieces, the gets' pieces laid out in reverse
// order in their destinations.
TEST_CASE("runs of small put_nbi and get_nbi to consecutive addresses: exact after quiet", "[nbi][put][get]") {
    constexpr std::size_t kBytes = 4096;
    const int n = spmd::npes(), me = spmd::me();
    struct Piece {
        std::size_t off, len;
        bool sym;
    };
    auto pieces = [](Gen g) {
        std::vector<Piece> v;
        bool sym = false;
        for (std::size_t off = 0, run = 0; off < kBytes; off += v.back().len) {
            if (run-- == 0) {
                sym = !sym;
                run = g.range(0, 11);
            }
            v.push_back({off, std::min<std::size_t>(g.range(1, 24), kBytes - off), sym});
        }
        return v;
    };
    auto bytes = [](Gen g) {
        std::vector<unsigned char> b(kBytes);
        for (auto& c : b) c = static_cast<unsigned char>(g.next());
        return b;
    };
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        spmd::SymArray<unsigned char> recv(s, uz(n) * kBytes), src_sym(s, uz(n) * kBytes), pool(s, kBytes),
            got_sym(s, uz(n) * kBytes);
        spmd::SymArray<long> flags(s, uz(n));
        spmd::local_write(flags.get(), std::vector<long>(uz(n), 0));
        long round = 0;
        for_each_via([&](const Via& v) {
            const std::uint64_t key = spmd::shared_key();
            auto image = [&](int from, int to) { return bytes(Gen(key, uz(from), uz(to))); };
            std::vector<std::vector<unsigned char>> src(uz(n));
            for (int to : targets()) {
                src[uz(to)] = image(me, to);
                spmd::local_write(src_sym.get() + uz(to) * kBytes, src[uz(to)]);
            }
            spmd::local_write(pool.get(), bytes(Gen(key + 1, uz(me))));
            recv.poison();
            got_sym.poison();
            std::vector<unsigned char> got(uz(n) * kBytes, spmd::poison_byte());
            std::vector<unsigned char> want(got), want_sym(got);
            shmem_barrier_all(); // every target is poisoned and every pool filled before anyone starts
            for (int to : targets()) {
                for (const Piece& p : pieces(Gen(key + 2, uz(me), uz(to)))) {
                    const unsigned char* from = p.sym ? src_sym.get() + uz(to) * kBytes : src[uz(to)].data();
                    v.put_nbi(kMem, recv.get() + uz(me) * kBytes + p.off, from + p.off, p.len, to);
                }
                const std::vector<unsigned char> theirs = bytes(Gen(key + 1, uz(to)));
                for (const Piece& p : pieces(Gen(key + 3, uz(me), uz(to)))) {
                    const std::size_t at = uz(to) * kBytes + (kBytes - p.off - p.len);
                    v.get_nbi(kMem, (p.sym ? got_sym.get() : got.data()) + at, pool.get() + p.off, p.len, to);
                    std::memcpy((p.sym ? want_sym : want).data() + at, theirs.data() + p.off, p.len);
                }
            }
            v.quiet();
            SPMD_REQUIRE_OK(spmd::diff_bytes(got.data(), want.data(), got.size()));
            SPMD_REQUIRE_OK(spmd::diff_sym(got_sym.get(), want_sym.data(), want_sym.size()));
            flag_all(flags.get(), ++round);
            wait_all(flags.get(), round);
            for (int p = 0; p < n; ++p) {
                INFO("puts from PE " << p);
                SPMD_REQUIRE_OK(spmd::diff_sym(recv.get() + uz(p) * kBytes, image(p, me).data(), kBytes));
            }
            shmem_barrier_all(); // nobody refills its pool while another PE still reads it
        });
    }
}

TEST_CASE("fetching nbi atomics in flight to every PE: exact old values after quiet", "[nbi][amo]") {
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        for_each_via([&](const Via& v) {
            const std::uint64_t key = spmd::shared_key();
            AmoBatch<std_int, void> a(s, spmd::mix(key + 1));
            AmoBatch<std_long, void> b(s, spmd::mix(key + 2));
            AmoBatch<std_uint32, bit_uint32> c(s, spmd::mix(key + 3));
            AmoBatch<std_uint64, bit_uint64> d(s, spmd::mix(key + 4));
            shmem_barrier_all(); // every PE's cells hold their initial values before anyone's atomics
            a.issue(v);
            b.issue(v);
            c.issue(v);
            d.issue(v);
            v.quiet();
            {
                INFO("int");
                a.check_fetched();
            }
            {
                INFO("long");
                b.check_fetched();
            }
            {
                INFO("uint32_t");
                c.check_fetched();
            }
            {
                INFO("uint64_t");
                d.check_fetched();
            }
            shmem_barrier_all();
            {
                INFO("int");
                a.check_cells();
            }
            {
                INFO("long");
                b.check_cells();
            }
            {
                INFO("uint32_t");
                c.check_cells();
            }
            {
                INFO("uint64_t");
                d.check_cells();
            }
            shmem_barrier_all();
        });
    }
}

TEST_CASE("fence orders put_nbi before a flag: the target sees the data once it sees the flag", "[nbi][fence]") {
    constexpr int kRounds = 12;
    constexpr std::size_t kRegion = 72 * 1024;
    const int n = spmd::npes(), me = spmd::me();
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        spmd::SymArray<unsigned char> recv(s, uz(n) * kRegion);
        spmd::SymArray<long> flags(s, uz(n)); // flags[p]: the round whose data PE p has delivered here
        for_each_via([&](const Via& v) {
            recv.poison();
            spmd::local_write(flags.get(), std::vector<long>(uz(n), 0));
            shmem_barrier_all();
            for (int r = 1; r <= kRounds; ++r) {
                const PutPlan plan{spmd::shared_key(), spmd::shared_range(1, 4), kRegion, 65536, r % 4 == 0};
                const bool amo_flag = r % 2 == 0;
                INFO("round " << r << ": up to " << plan.per_target << " put_nbi to each PE, fence, then the flag by "
                              << (amo_flag ? "atomic_set" : "p"));
                PutBatch puts(plan);
                puts.issue(v, recv.get() + uz(me) * kRegion);
                v.fence();
                for (int to : targets()) {
                    if (amo_flag) v.long_atomic_set(flags.at(uz(me)), r, to);
                    else v.long_p(flags.at(uz(me)), r, to);
                }
                for (int p = 0; p < n; ++p) {
                    shmem_long_wait_until(flags.at(uz(p)), SHMEM_CMP_EQ, r);
                    INFO("the data from PE " << p << ", checked as soon as its flag arrived");
                    SPMD_REQUIRE_OK(spmd::diff_sym(recv.get() + uz(p) * kRegion, plan.image(p, me).data(), kRegion));
                }
                v.quiet(); // the sources may go now
                puts.poison_sources();
                recv.poison();
                shmem_barrier_all(); // nobody writes the next round before every PE checked and re-poisoned
            }
        });
    }
}

TEST_CASE("put_signal_nbi (SET and ADD), after put_nbi and a fence: the data is there with the signal",
          "[nbi][signal][fence]") {
    constexpr int kRounds = 12;
    constexpr std::size_t kRegion = 2 * 65536 + 64;
    const int n = spmd::npes(), me = spmd::me();
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        spmd::SymArray<unsigned char> recv(s, uz(n) * kRegion);
        spmd::SymArray<std::uint64_t> sigs(s, uz(n)); // sigs[p]: rounds PE p has delivered here
        for_each_via([&](const Via& v) {
            recv.poison();
            spmd::local_write(sigs.get(), std::vector<std::uint64_t>(uz(n), 0));
            shmem_barrier_all();
            for (int r = 1; r <= kRounds; ++r) {
                // Two transfers per target (both always fit the region): the first by put_nbi and
                // a fence (in some rounds), the second by put_signal_nbi. ADD 1 and SET r both
                // leave the signal at r.
                const PutPlan plan{spmd::shared_key(), 2, kRegion, 65536, r % 3 == 0};
                const bool lead = spmd::shared_range(0, 1) == 1;
                const int sig_op = spmd::shared_range(0, 1) ? SHMEM_SIGNAL_SET : SHMEM_SIGNAL_ADD;
                INFO("round " << r << ": " << (lead ? "put_nbi, fence, " : "") << "put_signal_nbi with "
                              << (sig_op == SHMEM_SIGNAL_SET ? "SET" : "ADD"));
                std::vector<std::vector<unsigned char>> src;
                const std::vector<int> tg = targets();
                for (int to : tg) {
                    const auto ops = plan.plan(me, to);
                    src.emplace_back(ops.size() * 65536 + 8);
                    for (std::size_t i = 0; i < ops.size(); ++i)
                        plan.fill(src.back().data() + i * 65536, ops[i], me, to, i);
                }
                for (std::size_t t = 0; t < tg.size(); ++t) {
                    const auto ops = plan.plan(me, tg[t]);
                    unsigned char* const region = recv.get() + uz(me) * kRegion;
                    if (lead) {
                        v.put_nbi(ops[0].kind, region + ops[0].off, src[t].data(), ops[0].bytes, tg[t]);
                        v.fence();
                    }
                    const Xfer& x = ops.back();
                    v.put_signal_nbi(x.kind, region + x.off, src[t].data() + (ops.size() - 1) * 65536, x.bytes,
                                     sigs.at(uz(me)), sig_op == SHMEM_SIGNAL_SET ? std::uint64_t(r) : 1, sig_op, tg[t]);
                }
                for (int p = 0; p < n; ++p) {
                    shmem_signal_wait_until(sigs.at(uz(p)), SHMEM_CMP_EQ, std::uint64_t(r));
                    // What PE p delivered: the signalled transfer, and the first one if it led.
                    const auto ops = plan.plan(p, me);
                    std::vector<unsigned char> want(kRegion, spmd::poison_byte());
                    for (std::size_t i = lead || ops.size() == 1 ? 0 : 1; i < ops.size(); ++i)
                        plan.fill(want.data() + ops[i].off, ops[i], p, me, i);
                    INFO("the data from PE " << p << ", checked as soon as its signal arrived");
                    SPMD_REQUIRE_OK(spmd::diff_sym(recv.get() + uz(p) * kRegion, want.data(), kRegion));
                }
                v.quiet(); // the sources may go now
                for (auto& b : src) std::fill(b.begin(), b.end(), spmd::poison_byte());
                recv.poison();
                shmem_barrier_all();
            }
        });
    }
}

// No quiet, fence or barrier comes before every PE has seen what its left neighbour sent it: each
// PE waits for that (wait_until, signal_wait_until, or a loop of shmem_test) while its own
// operations to its right neighbour are still outstanding, so they must go while it waits, as a
// peer on the network would need anyway: a batch of device copies, puts queued for an owner's
// proxy, deferred atomics and signals. At 1 PE each PE is its own neighbour.
TEST_CASE("outstanding nbi operations reach a PE that waits for them while their initiator waits too",
          "[nbi][progress]") {
    constexpr std::size_t kBlock = 4096 + 24;
    const int me = spmd::me(), from = spmd::left(), to = spmd::right();
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        spmd::SymArray<long> word(s, 1), counter(s, 1);
        spmd::SymArray<std::uint64_t> sig(s, 1);
        spmd::SymArray<unsigned char> block(s, kBlock);
        for (const bool by_test : {false, true}) {
            INFO((by_test ? "waiting by shmem_test loops" : "waiting by wait_until and signal_wait_until"));
            for_each_via([&](const Via& v) {
                const std::uint64_t key = spmd::shared_key();
                const bool add = spmd::shared_range(0, 1) == 1;
                auto word_of = [&](int p) { return static_cast<long>(spmd::mix(key ^ uz(p)) | 1); };
                auto start_of = [&](int p) { return static_cast<long>(spmd::mix(key + 7 + uz(p)) >> 8); };
                auto delta_of = [&](int p) { return static_cast<long>(spmd::mix(key + 99 + uz(p)) & 0xffff) + 1; };
                auto signal_of = [&](int p) { return (spmd::mix(key + 5 + uz(p)) >> 4) | 1; };
                auto block_of = [&](int p) {
                    std::vector<unsigned char> b(kBlock);
                    spmd::fill_bytes(b.data(), kBlock, Gen(key, uz(p), 3));
                    return b;
                };
                word.store(0, 0);
                counter.store(0, start_of(me));
                sig.store(0, 0);
                block.poison();
                shmem_barrier_all();

                const std::vector<unsigned char> mine = block_of(me);
                const long w = word_of(me);
                long fetched = -1;
                v.put_nbi(kLong, word.get(), &w, sizeof(long), to);
                NBI_CALL(v, long_atomic_fetch_add_nbi, &fetched, counter.get(), delta_of(me), to);
                v.put_signal_nbi(kMem, block.get(), mine.data(), kBlock, sig.get(), signal_of(me),
                                 add ? SHMEM_SIGNAL_ADD : SHMEM_SIGNAL_SET, to);
                INFO("PE " << me << " waits for what PE " << from << " sent it (its own operations to PE " << to
                           << " still outstanding)");
                if (by_test) {
                    while (!shmem_long_test(word.get(), SHMEM_CMP_EQ, word_of(from))) {
                    }
                    while (!shmem_long_test(counter.get(), SHMEM_CMP_EQ, start_of(me) + delta_of(from))) {
                    }
                    while (!shmem_uint64_test(sig.get(), SHMEM_CMP_EQ, signal_of(from))) {
                    }
                } else {
                    shmem_long_wait_until(word.get(), SHMEM_CMP_EQ, word_of(from));
                    shmem_long_wait_until(counter.get(), SHMEM_CMP_EQ, start_of(me) + delta_of(from));
                    REQUIRE(shmem_signal_wait_until(sig.get(), SHMEM_CMP_EQ, signal_of(from)) == signal_of(from));
                }
                {
                    INFO("the block PE " << from << " put with its signal, checked as soon as the signal arrived");
                    SPMD_REQUIRE_OK(spmd::diff_sym(block.get(), block_of(from).data(), kBlock));
                }
                v.quiet();
                INFO("the old value of PE " << to << "'s counter, fetched by PE " << me << "'s fetch_add_nbi");
                REQUIRE(fetched == start_of(to));
                shmem_barrier_all();
            });
        }
    }
}

// Two created contexts on one thread: A's operations are completed by shmem_ctx_quiet(A) while B
// still has hundreds outstanding. The targets learn of A's completion by a flag set after the
// quiet, and check A's data right away; B's data is checked after B's own quiet.
TEST_CASE("ctx_quiet completes its context while another context still has operations outstanding", "[nbi][ctx]") {
    constexpr std::size_t kRegionA = 128 * 1024, kRegionB = 256 * 1024, kSymDst = 64 * 1024;
    const int n = spmd::npes(), me = spmd::me();
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        const std::uint64_t key = spmd::shared_key();
        const PutPlan pa{spmd::mix(key + 1), (120 + uz(n) - 1) / uz(n), kRegionA, 16384};
        const PutPlan pb{spmd::mix(key + 2), (160 + uz(n) - 1) / uz(n), kRegionB, 65536, true};
        spmd::SymArray<unsigned char> recv_a(s, uz(n) * kRegionA), recv_b(s, uz(n) * kRegionB), pool(s, kPoolBytes);
        spmd::SymArray<unsigned char> dst_a(s, kSymDst), dst_b(s, kSymDst);
        // flags[p]: PE p's context A completed; flags[n + p]: its context B. Separate cells: flags
        // set on different contexts are not ordered with each other.
        spmd::SymArray<long> flags(s, 2 * uz(n)), counters(s, uz(n));
        recv_a.poison();
        recv_b.poison();
        dst_a.poison();
        dst_b.poison();
        spmd::local_write(flags.get(), std::vector<long>(2 * uz(n), 0));
        spmd::local_write(counters.get(), std::vector<long>(uz(n), 0));
        fill_pool(pool, key);
        shmem_barrier_all();

        shmem_ctx_t a, b;
        REQUIRE(shmem_ctx_create(0, &a) == 0);
        REQUIRE(shmem_ctx_create(0, &b) == 0);
        PutBatch puts_b(pb), puts_a(pa);
        GetBatch gets_b(GetPlan{spmd::mix(key + 3), key, 120, 65536, kSymDst}, dst_b.get());
        GetBatch gets_a(GetPlan{spmd::mix(key + 4), key, 100, 16384, kSymDst}, dst_a.get());
        const std::uint64_t add_key = spmd::mix(key + 5);
        AddBatch<std_long> adds_a(add_key, 16);
        puts_b.issue(Via{b}, recv_b.get() + uz(me) * kRegionB);
        gets_b.issue(Via{b}, pool.get());
        puts_a.issue(Via{a}, recv_a.get() + uz(me) * kRegionA);
        gets_a.issue(Via{a}, pool.get());
        adds_a.issue(Via{a}, counters.at(uz(me)));
        shmem_ctx_quiet(a);
        {
            INFO("context A after its quiet, B not yet quieted");
            SPMD_REQUIRE_OK(gets_a.check());
            SPMD_REQUIRE_OK(adds_a.check_fetched());
        }
        puts_a.poison_sources();
        // A's puts are complete: a flag set after the quiet tells each target so.
        for (int to : targets()) shmem_ctx_long_atomic_set(a, flags.at(uz(me)), 1, to);
        for (int p = 0; p < n; ++p) {
            shmem_long_wait_until(flags.at(uz(p)), SHMEM_CMP_EQ, 1);
            INFO("context A's puts from PE " << p << ", checked as soon as its flag arrived");
            SPMD_REQUIRE_OK(spmd::diff_sym(recv_a.get() + uz(p) * kRegionA, pa.image(p, me).data(), kRegionA));
        }
        shmem_ctx_quiet(b);
        {
            INFO("context B after its quiet");
            SPMD_REQUIRE_OK(gets_b.check());
        }
        puts_b.poison_sources();
        for (int to : targets()) shmem_ctx_long_atomic_set(b, flags.at(uz(n + me)), 1, to);
        shmem_ctx_destroy(a);
        shmem_ctx_destroy(b);
        wait_all(flags.get() + n, 1);
        for (int p = 0; p < n; ++p) {
            {
                INFO("context B's puts from PE " << p);
                SPMD_REQUIRE_OK(spmd::diff_sym(recv_b.get() + uz(p) * kRegionB, pb.image(p, me).data(), kRegionB));
            }
            INFO("context A's fetch_add_nbi counter of PE " << p);
            REQUIRE(counters.load(uz(p)) == AddBatch<std_long>::total(add_key, p, me, 16));
        }
        shmem_barrier_all();
    }
}

TEST_CASE("threads each drive a private context: put_nbi, get_nbi, fetch_add_nbi, completed by its ctx_quiet",
          "[nbi][ctx][threads]") {
    if (!have_thread_multiple()) {
        WARN("shmem_init_thread provided " << spmd::init_config().provided << ", not SHMEM_THREAD_MULTIPLE: skipped");
        return;
    }
    constexpr int kT = 3;
    constexpr std::size_t kRegion = 64 * 1024, kAdds = 12;
    const int n = spmd::npes(), me = spmd::me();
    const std::size_t per_target = (90 + uz(n) - 1) / uz(n);
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        const std::uint64_t key = spmd::shared_key();
        auto put_plan = [&](int t) { return PutPlan{spmd::mix(key + 10 + uz(t)), per_target, kRegion, 4096}; };
        auto add_key = [&](int t) { return spmd::mix(key + 20 + uz(t)); };
        // Thread t of PE p owns region p*kT+t and counter p*kT+t on every PE.
        spmd::SymArray<unsigned char> recv(s, uz(n * kT) * kRegion), pool(s, kPoolBytes);
        spmd::SymArray<long> counters(s, uz(n * kT)), flags(s, uz(n * kT));
        recv.poison();
        spmd::local_write(counters.get(), std::vector<long>(uz(n * kT), 0));
        spmd::local_write(flags.get(), std::vector<long>(uz(n * kT), 0));
        fill_pool(pool, key);
        shmem_barrier_all();

        std::vector<std::string> errors(kT);
        auto worker = [&](int t) {
            shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
            const bool own = shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0;
            if (!own) {
                errors[uz(t)] = "shmem_ctx_create(SHMEM_CTX_PRIVATE) failed";
                ctx = SHMEM_CTX_DEFAULT; // go on, so the other PEs' checks do not wait for this one
            }
            const Via v{ctx};
            PutBatch puts(put_plan(t));
            GetBatch gets(GetPlan{spmd::mix(key + 30 + uz(t)), key, 90, 8192});
            AddBatch<std_long> adds(add_key(t), kAdds);
            puts.issue(v, recv.get() + uz(me * kT + t) * kRegion);
            gets.issue(v, pool.get());
            adds.issue(v, counters.at(uz(me * kT + t)));
            v.quiet();
            puts.poison_sources();
            std::string e = gets.check();
            if (e.empty()) e = adds.check_fetched();
            if (!e.empty() && errors[uz(t)].empty()) errors[uz(t)] = e;
            // Completed by the quiet: a flag set after it tells each target so.
            for (int to : targets()) v.long_atomic_set(flags.at(uz(me * kT + t)), 1, to);
            if (own) shmem_ctx_destroy(ctx); // completes the flags
        };
        std::vector<std::thread> pool_of_threads;
        for (int t = 0; t < kT; ++t) pool_of_threads.emplace_back(worker, t);
        for (auto& th : pool_of_threads) th.join();
        for (int t = 0; t < kT; ++t) {
            INFO("thread " << t << ", after its shmem_ctx_quiet");
            SPMD_REQUIRE_OK(errors[uz(t)]);
        }
        for (std::size_t i = 0; i < uz(n * kT); ++i) shmem_long_wait_until(flags.at(i), SHMEM_CMP_EQ, 1);
        const std::vector<long> got = counters.load_all();
        for (int p = 0; p < n; ++p) {
            for (int t = 0; t < kT; ++t) {
                INFO("thread " << t << " of PE " << p);
                const std::size_t slot = uz(p * kT + t);
                SPMD_REQUIRE_OK(spmd::diff_sym(recv.get() + slot * kRegion, put_plan(t).image(p, me).data(), kRegion));
                REQUIRE(got[slot] == AddBatch<std_long>::total(add_key(t), p, me, kAdds));
            }
        }
        shmem_barrier_all();
    }
}

// Thread B issues on its private context and then waits; thread A issues on its own, quiets it,
// checks its gets and sets a flag on each target; each target's main thread checks A's puts as
// soon as the flags arrive, and only then lets B quiet its context.
TEST_CASE("one thread's ctx_quiet completes its context while another thread's context has operations outstanding",
          "[nbi][ctx][threads]") {
    if (!have_thread_multiple()) {
        WARN("shmem_init_thread provided " << spmd::init_config().provided << ", not SHMEM_THREAD_MULTIPLE: skipped");
        return;
    }
    constexpr std::size_t kRegionA = 64 * 1024, kRegionB = 256 * 1024;
    const int n = spmd::npes(), me = spmd::me();
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        const std::uint64_t key = spmd::shared_key();
        const PutPlan pa{spmd::mix(key + 1), (90 + uz(n) - 1) / uz(n), kRegionA, 8192};
        const PutPlan pb{spmd::mix(key + 2), (160 + uz(n) - 1) / uz(n), kRegionB, 65536, true};
        spmd::SymArray<unsigned char> recv_a(s, uz(n) * kRegionA), recv_b(s, uz(n) * kRegionB), pool(s, kPoolBytes);
        // flags[p]: PE p's context A completed; flags[n + p]: its context B. Separate cells: flags
        // set on different contexts are not ordered with each other.
        spmd::SymArray<long> flags(s, 2 * uz(n));
        recv_a.poison();
        recv_b.poison();
        spmd::local_write(flags.get(), std::vector<long>(2 * uz(n), 0));
        fill_pool(pool, key);
        shmem_barrier_all();

        std::atomic<bool> b_issued{false}, a_checked{false};
        std::string err_a, err_b, err_main; // each written by one thread, read after the joins
        auto open = [](shmem_ctx_t& ctx, std::string& err) {
            if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0) return true;
            err = "shmem_ctx_create(SHMEM_CTX_PRIVATE) failed";
            ctx = SHMEM_CTX_DEFAULT; // go on, so no PE waits forever
            return false;
        };
        std::thread tb([&] {
            shmem_ctx_t ctx;
            const bool own = open(ctx, err_b);
            PutBatch puts(pb);
            GetBatch gets(GetPlan{spmd::mix(key + 3), key, 120, 65536});
            puts.issue(Via{ctx}, recv_b.get() + uz(me) * kRegionB);
            gets.issue(Via{ctx}, pool.get());
            b_issued = true;
            b_issued.notify_one();
            a_checked.wait(false);
            Via{ctx}.quiet();
            puts.poison_sources();
            if (err_b.empty()) err_b = gets.check();
            for (int to : targets()) Via{ctx}.long_atomic_set(flags.at(uz(n + me)), 1, to);
            if (own) shmem_ctx_destroy(ctx); // completes the flags
        });
        std::thread ta([&] {
            b_issued.wait(false);
            shmem_ctx_t ctx;
            const bool own = open(ctx, err_a);
            PutBatch puts(pa);
            GetBatch gets(GetPlan{spmd::mix(key + 4), key, 90, 8192});
            puts.issue(Via{ctx}, recv_a.get() + uz(me) * kRegionA);
            gets.issue(Via{ctx}, pool.get());
            Via{ctx}.quiet();
            puts.poison_sources();
            if (err_a.empty()) err_a = gets.check();
            for (int to : targets()) Via{ctx}.long_atomic_set(flags.at(uz(me)), 1, to);
            if (own) shmem_ctx_destroy(ctx); // completes the flags
        });
        bool a_ok = true;
        for (int p = 0; p < n && a_ok; ++p) {
            shmem_long_wait_until(flags.at(uz(p)), SHMEM_CMP_EQ, 1);
            const std::string e = spmd::diff_sym(recv_a.get() + uz(p) * kRegionA, pa.image(p, me).data(), kRegionA);
            if (!e.empty()) {
                // Reported after the joins, not while the threads still run.
                err_main = "context A's puts from PE " + std::to_string(p) +
                           ", checked as soon as its flag arrived: " + e;
                a_ok = false;
            }
        }
        a_checked = true;
        a_checked.notify_one();
        ta.join();
        tb.join();
        {
            INFO("thread A: its own context quieted while B's had operations outstanding");
            SPMD_REQUIRE_OK(err_a);
            SPMD_REQUIRE_OK(err_main);
        }
        {
            INFO("thread B, after its shmem_ctx_quiet");
            SPMD_REQUIRE_OK(err_b);
        }
        wait_all(flags.get() + n, 1);
        for (int p = 0; p < n; ++p) {
            INFO("context B's puts from PE " << p);
            SPMD_REQUIRE_OK(spmd::diff_sym(recv_b.get() + uz(p) * kRegionB, pb.image(p, me).data(), kRegionB));
        }
        shmem_barrier_all();
    }
}

TEST_CASE("ctx_destroy completes the context's outstanding put_nbi, get_nbi and fetch_add_nbi", "[nbi][ctx]") {
    constexpr std::size_t kRegion = 256 * 1024, kSymSrc = 64 * 1024, kSymDst = 64 * 1024, kAdds = 16;
    const int n = spmd::npes(), me = spmd::me();
    for (Space s : kSpaces) {
        INFO("space: " << spmd::name(s));
        const std::uint64_t key = spmd::shared_key();
        const PutPlan plan{spmd::mix(key + 1), (150 + uz(n) - 1) / uz(n), kRegion, 65536, true};
        spmd::SymArray<unsigned char> recv(s, uz(n) * kRegion), pool(s, kPoolBytes), sym_src(s, kSymSrc),
            sym_dst(s, kSymDst);
        spmd::SymArray<long> counters(s, uz(n)), flags(s, uz(n));
        recv.poison();
        sym_dst.poison();
        spmd::local_write(counters.get(), std::vector<long>(uz(n), 0));
        spmd::local_write(flags.get(), std::vector<long>(uz(n), 0));
        fill_pool(pool, key);
        PutBatch puts(plan, sym_src.get(), kSymSrc);
        GetBatch gets(GetPlan{spmd::mix(key + 2), key, 100, 65536, kSymDst}, sym_dst.get());
        AddBatch<std_long> adds(spmd::mix(key + 3), kAdds);
        shmem_barrier_all();

        shmem_ctx_t ctx;
        REQUIRE(shmem_ctx_create(0, &ctx) == 0);
        puts.issue(Via{ctx}, recv.get() + uz(me) * kRegion);
        gets.issue(Via{ctx}, pool.get());
        adds.issue(Via{ctx}, counters.at(uz(me)));
        shmem_ctx_destroy(ctx); // no quiet: destroying the context completes its operations
        {
            INFO("after shmem_ctx_destroy");
            SPMD_REQUIRE_OK(gets.check());
            SPMD_REQUIRE_OK(adds.check_fetched());
        }
        puts.poison_sources();
        flag_all(flags.get(), 1);
        wait_all(flags.get(), 1);
        const std::vector<long> got = counters.load_all();
        for (int p = 0; p < n; ++p) {
            INFO(plan.plan(p, me).size() << " puts and " << kAdds << " fetch_add_nbi from PE " << p
                                         << ", its context destroyed");
            SPMD_REQUIRE_OK(spmd::diff_sym(recv.get() + uz(p) * kRegion, plan.image(p, me).data(), kRegion));
            REQUIRE(got[uz(p)] == AddBatch<std_long>::total(spmd::mix(key + 3), p, me, kAdds));
        }
        shmem_barrier_all();
    }
}

} // namespace
