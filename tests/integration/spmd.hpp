// SPDX-License-Identifier: BSL-1.0
// The SPMD test harness: what every integration test program may use.
//
// Every PE runs the same Catch2 test cases in the same order (declaration order, never random),
// so collective calls (allocation, barriers) line up. A failed assertion on any PE prints the
// failure with the PE number and ends the whole job with shmem_global_exit(1) (spmd_main.cpp),
// so a failing PE never leaves the others waiting in a barrier.
//
// Randomness: one job seed (random, printed by PE 0, replayable with VKSHMEM_TEST_SEED=...).
//   shared_rng()   the same stream on every PE: sizes, offsets, strides, keys — anything all PEs
//                  must agree on. Call it the same number of times on every PE.
//   rng()          a stream of this PE only.
//   Gen(key, ...)  a small deterministic generator any PE can rebuild: data that PE p wrote with
//                  Gen(key, p, k) is checked by the receiver with the same Gen(key, p, k).
#pragma once

#include <shmem.h>
#include <shmemx.h>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace spmd {

// ---- PE identity (cached after shmem_init) --------------------------------------------------
int me();
int npes();
// Whether `pe` runs on this PE's node (same host name): shmem_ptr reaches exactly those.
bool same_node(int pe);
// Collective: every PE's `mine`, indexed by PE.
std::vector<std::uint64_t> gather(std::uint64_t mine);
inline int right(int shift = 1) { return (me() + shift) % npes(); }
inline int left(int shift = 1) { return ((me() - shift) % npes() + npes()) % npes(); }

// ---- Randomness ----------------------------------------------------------------------------
std::uint64_t seed();
std::mt19937_64& rng();
std::mt19937_64& shared_rng();

constexpr std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// splitmix64 seeded from up to four words.
struct Gen {
    std::uint64_t s;
    explicit Gen(std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0, std::uint64_t d = 0)
        : s(mix(a ^ mix(b ^ mix(c ^ mix(d))))) {}
    std::uint64_t next() {
        s += 0x9e3779b97f4a7c15ull;
        return mix(s);
    }
    // Uniform in [lo, hi] (inclusive).
    std::uint64_t range(std::uint64_t lo, std::uint64_t hi) { return lo + next() % (hi - lo + 1); }
};

// A value of shared_rng() in [lo, hi].
inline std::uint64_t shared_range(std::uint64_t lo, std::uint64_t hi) {
    return lo + shared_rng()() % (hi - lo + 1);
}
inline std::uint64_t shared_key() { return shared_rng()(); }

// A random value of T. Floating values are exact small binary fractions (no NaN), so they
// compare with == and survive any copy; integers cover the whole range of T.
template <class T> T random_value(Gen& g) {
    if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(static_cast<std::int64_t>(g.next() % 2000001) - 1000000) / static_cast<T>(64);
    } else if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(g.next());
    } else {
        T v;
        for (std::size_t i = 0; i < sizeof(T); i += 8) {
            std::uint64_t w = g.next();
            std::memcpy(reinterpret_cast<unsigned char*>(&v) + i, &w, sizeof(T) - i < 8 ? sizeof(T) - i : 8);
        }
        return v;
    }
}

// Zeroes the bytes first so padding (long double) is identical wherever the same data is built.
template <class T> void fill_values(T* buf, std::size_t n, Gen g) {
    if (!n) return; // buf may be null (an empty vector's data())
    std::memset(static_cast<void*>(buf), 0, n * sizeof(T));
    for (std::size_t i = 0; i < n; ++i) buf[i] = random_value<T>(g);
}
template <class T> std::vector<T> make_values(std::size_t n, Gen g) {
    std::vector<T> v(n);
    fill_values(v.data(), n, g);
    return v;
}
inline void fill_bytes(void* buf, std::size_t n, Gen g) {
    auto* p = static_cast<unsigned char*>(buf);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w = g.next();
        std::memcpy(p + i, &w, 8);
    }
    if (i < n) {
        std::uint64_t w = g.next();
        std::memcpy(p + i, &w, n - i);
    }
}

// ---- Checks (each returns "" when fine, else a description of the first difference) ---------
std::string diff_bytes(const void* actual, const void* expected, std::size_t n, std::size_t base = 0);
// Bytes [from, to) of buf must all be `pattern`.
std::string check_poison(const void* buf, std::size_t from, std::size_t to, unsigned char pattern);
inline std::string check_poison_outside(const void* buf, std::size_t size, std::size_t from, std::size_t to,
                                        unsigned char pattern) {
    std::string e = check_poison(buf, 0, from, pattern);
    return e.empty() ? check_poison(buf, to, size, pattern) : e;
}
// A poison byte for this run (the same on every PE).
unsigned char poison_byte();

// ---- This PE's own symmetric objects: loads and stores ------------------------------------
// A device-heap object may have no CPU mapping at all: on a GPU shared by several PEs (and under
// VKSHMEM_DEVICE_ROUTE=copy) its addresses are reserved but inaccessible, and any CPU load or store
// through them faults, as with cudaMalloc'd memory under NVSHMEM. Tests therefore touch their own
// device-heap objects only through OpenSHMEM calls: these helpers use shmem_putmem (completed by
// shmem_quiet) and shmem_getmem to this PE there, and plain memory copies on the host heap and
// static data, whose CPU view is part of what the tests check. Use them for every symmetric object
// that may live in the device heap; `obj` must be symmetric, the other side private memory.
bool cpu_inaccessible(const void* obj); // a device-heap address
void local_store(void* obj, const void* src, std::size_t bytes);
void local_load(void* dst, const void* obj, std::size_t bytes);
void local_fill(void* obj, unsigned char byte, std::size_t bytes);
std::vector<unsigned char> local_bytes(const void* obj, std::size_t bytes);
template <class T> void local_set(T* obj, const T& v) { local_store(obj, &v, sizeof(T)); }
template <class T> T local_get(const T* obj) {
    T v;
    local_load(&v, obj, sizeof(T));
    return v;
}
template <class T> void local_write(T* obj, const T* src, std::size_t n) { local_store(obj, src, n * sizeof(T)); }
template <class T> void local_write(T* obj, const std::vector<T>& src) { local_write(obj, src.data(), src.size()); }
template <class T> std::vector<T> local_read(const T* obj, std::size_t n) {
    std::vector<T> v(n);
    local_load(v.data(), obj, n * sizeof(T));
    return v;
}
// fill_bytes / fill_values into a symmetric object.
void local_fill_bytes(void* obj, std::size_t n, Gen g);
template <class T> void local_fill_values(T* obj, std::size_t n, Gen g) { local_write(obj, make_values<T>(n, g)); }

// The same checks of a symmetric object of this PE (read with local_load first).
std::string diff_sym(const void* obj, const void* expected, std::size_t n, std::size_t base = 0);
std::string check_poison_sym(const void* obj, std::size_t from, std::size_t to, unsigned char pattern);

#define SPMD_REQUIRE_OK(expr) REQUIRE((expr) == std::string())

// ---- Symmetric memory spaces ---------------------------------------------------------------
// Host: shmem_malloc. Device: shmem_malloc_with_hints(SHMEMX_MALLOC_DEVICE). Static: a file-scope
// array of the harness (the program's data segment is symmetric), handed out as a stack.
enum class Space { Host, Device, Static };
inline constexpr Space all_spaces[] = {Space::Host, Space::Device, Space::Static};
const char* name(Space s);
int expected_addr_space(Space s); // SHMEMX_SPACE_*

// Collective (same arguments on every PE); ends with a barrier like shmem_malloc. Returns NULL
// only when the heap is exhausted. `align` applies to the host heap (shmem_align) and the static
// space; device objects get the heap's natural alignment. Static allocations are freed in
// reverse order.
void* sym_alloc(Space s, std::size_t bytes, std::size_t align = 16);
void sym_free(Space s, void* p);

// RAII symmetric array of n elements of T in one space.
template <class T> class SymArray {
public:
    SymArray(Space s, std::size_t n, std::size_t align = 16)
        : space_(s), n_(n), p_(static_cast<T*>(sym_alloc(s, n * sizeof(T), align))) {
        REQUIRE(p_ != nullptr);
    }
    ~SymArray() { sym_free(space_, p_); }
    SymArray(const SymArray&) = delete;
    SymArray& operator=(const SymArray&) = delete;
    // The address (symmetric: for RMA, AMO and sync calls). Never dereference it: the object may
    // be in the device heap. Local access goes through load/store (local_load/local_store).
    T* get() const { return p_; }
    T* at(std::size_t i) const { return p_ + i; }
    T load(std::size_t i) const { return local_get(p_ + i); }
    void store(std::size_t i, const T& v) const { local_set(p_ + i, v); }
    std::vector<T> load_all() const { return local_read(p_, n_); }
    std::size_t size() const { return n_; }
    std::size_t bytes() const { return n_ * sizeof(T); }
    void poison() const { local_fill(p_, poison_byte(), bytes()); }

private:
    Space space_;
    std::size_t n_;
    T* p_;
};

// Runs f(space) for the host heap, the device heap and (when with_static) the static space,
// with the space named in any failure message.
template <class F> void for_each_space(F&& f, bool with_static = true) {
    for (Space s : all_spaces) {
        if (s == Space::Static && !with_static) continue;
        INFO("symmetric space: " << name(s));
        f(s);
    }
}

// ---- Harness configuration (set from a test program's static initializer) -------------------
// When >= 0, the harness starts with shmem_init_thread(level, &provided) instead of shmem_init.
struct InitConfig {
    int requested_thread_level = -1;
    int init_thread_ret = 0;
    int provided = -1;
};
InitConfig& init_config();

} // namespace spmd
