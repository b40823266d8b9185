// SPDX-License-Identifier: BSL-1.0
// vkshmem/vkshmem.hpp — a C++ API over <shmem.h>: RAII for the library's lifetime, symmetric
// arrays, teams and contexts, and typed templates. C++17 or later.
//
// Every class here wraps the C API one to one, so the rules of OpenSHMEM hold unchanged: the
// constructors and destructors of session, symmetric_array and team are collective (every PE runs
// them at the same point of the program, in the same order); a context's are not. Errors end the
// job, as in C, except a failed allocation or context creation, which throws (std::bad_alloc,
// std::runtime_error) on the PEs where it failed.
#ifndef VKSHMEM_VKSHMEM_HPP
#define VKSHMEM_VKSHMEM_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "vkshmem/vkshmem.hpp needs C++17 or later (compile with -std=c++17); from C or older C++, include <shmem.h>"
#endif

#include <shmem.h>
#include <shmemx.h>

#include <cstddef>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace vkshmem {

// ---- The library ------------------------------------------------------------------------
// shmem_init (or shmem_init_thread) for the lifetime of the object; shmem_finalize after.
class session {
public:
    session() { shmem_init(); }
    // requested: SHMEM_THREAD_SINGLE .. SHMEM_THREAD_MULTIPLE; provided() says what was granted.
    explicit session(int requested) {
        if (shmem_init_thread(requested, &provided_) != 0) throw std::runtime_error("shmem_init_thread failed");
    }
    ~session() { shmem_finalize(); }
    session(const session&) = delete;
    session& operator=(const session&) = delete;
    int provided() const noexcept { return provided_; }

private:
    int provided_ = SHMEM_THREAD_SINGLE;
};

inline int my_pe() noexcept { return shmem_my_pe(); }
inline int n_pes() noexcept { return shmem_n_pes(); }
inline void barrier_all() noexcept { shmem_barrier_all(); }
inline void sync_all() noexcept { shmem_sync_all(); }
inline void quiet() noexcept { shmem_quiet(); }
inline void fence() noexcept { shmem_fence(); }

// ---- Symmetric memory ---------------------------------------------------------------------
enum class heap { host, device };

// n elements of T in every PE's chosen heap, zeroed (host heap) and freed by the destructor.
// Construction and destruction are collective. Elements of the host heap are this PE's memory
// (operator[]); a device heap may have no CPU mapping: reach it with put/get to my_pe().
template <class T> class symmetric_array {
    static_assert(std::is_trivially_copyable_v<T>, "symmetric memory holds trivially copyable types");

public:
    symmetric_array() = default;
    explicit symmetric_array(std::size_t n, heap h = heap::host) : n_(n) {
        p_ = static_cast<T*>(h == heap::host ? shmem_calloc(n, sizeof(T))
                                             : shmem_malloc_with_hints(n * sizeof(T), SHMEMX_MALLOC_DEVICE));
        if (!p_ && n) throw std::bad_alloc();
    }
    ~symmetric_array() { reset(); }
    symmetric_array(symmetric_array&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
    symmetric_array& operator=(symmetric_array&& o) noexcept {
        if (this != &o) {
            reset();
            p_ = std::exchange(o.p_, nullptr);
            n_ = std::exchange(o.n_, 0);
        }
        return *this;
    }
    symmetric_array(const symmetric_array&) = delete;
    symmetric_array& operator=(const symmetric_array&) = delete;

    // Collective: frees the array on every PE.
    void reset() noexcept {
        if (p_) shmem_free(p_);
        p_ = nullptr;
        n_ = 0;
    }
    T* data() const noexcept { return p_; }
    std::size_t size() const noexcept { return n_; }
    T& operator[](std::size_t i) const noexcept { return p_[i]; }
    T* begin() const noexcept { return p_; }
    T* end() const noexcept { return p_ + n_; }

    // count elements from src into PE pe's copy, starting at element `at`.
    void put(const T* src, std::size_t count, int pe, std::size_t at = 0) const noexcept {
        shmem_putmem(p_ + at, src, count * sizeof(T), pe);
    }
    void get(T* dst, std::size_t count, int pe, std::size_t at = 0) const noexcept {
        shmem_getmem(dst, p_ + at, count * sizeof(T), pe);
    }
    void p(std::size_t i, const T& v, int pe) const noexcept { shmem_putmem(p_ + i, &v, sizeof(T), pe); }
    T g(std::size_t i, int pe) const noexcept {
        T v;
        shmem_getmem(&v, p_ + i, sizeof(T), pe);
        return v;
    }

private:
    T* p_ = nullptr;
    std::size_t n_ = 0;
};

// ---- Teams --------------------------------------------------------------------------------
// A team handle; one made by split() is destroyed (collectively) by the destructor.
class team {
public:
    static team world() noexcept { return team(SHMEM_TEAM_WORLD, false); }
    static team shared() noexcept { return team(SHMEM_TEAM_SHARED, false); }
    // Collective over parent: parent PEs start, start + stride, ... (size of them). On the PEs left
    // out, valid() is false.
    static team split_strided(const team& parent, int start, int stride, int size, int num_contexts = 0) {
        shmem_team_config_t cfg{num_contexts};
        shmem_team_t t;
        if (shmem_team_split_strided(parent.t_, start, stride, size, &cfg, SHMEM_TEAM_NUM_CONTEXTS, &t) != 0)
            throw std::runtime_error("shmem_team_split_strided failed");
        return team(t, true);
    }
    team(team&& o) noexcept : t_(std::exchange(o.t_, SHMEM_TEAM_INVALID)), owned_(o.owned_) {}
    team& operator=(team&& o) noexcept {
        if (this != &o) {
            release();
            t_ = std::exchange(o.t_, SHMEM_TEAM_INVALID);
            owned_ = o.owned_;
        }
        return *this;
    }
    team(const team&) = delete;
    team& operator=(const team&) = delete;
    ~team() { release(); }

    bool valid() const noexcept { return t_ != SHMEM_TEAM_INVALID; }
    shmem_team_t handle() const noexcept { return t_; }
    int my_pe() const noexcept { return shmem_team_my_pe(t_); }
    int n_pes() const noexcept { return shmem_team_n_pes(t_); }
    // This team's PE `pe` as `to` numbers it (-1: not in `to`).
    int translate(int pe, const team& to) const noexcept { return shmem_team_translate_pe(t_, pe, to.t_); }
    void sync() const noexcept { shmem_team_sync(t_); }

    template <class T> void broadcast(T* dest, const T* source, std::size_t n, int root) const noexcept {
        shmem_broadcastmem(t_, dest, source, n * sizeof(T), root);
    }
    template <class T> void fcollect(T* dest, const T* source, std::size_t n) const noexcept {
        shmem_fcollectmem(t_, dest, source, n * sizeof(T));
    }
    template <class T> void collect(T* dest, const T* source, std::size_t n) const noexcept {
        shmem_collectmem(t_, dest, source, n * sizeof(T));
    }
    template <class T> void alltoall(T* dest, const T* source, std::size_t n) const noexcept {
        shmem_alltoallmem(t_, dest, source, n * sizeof(T));
    }
    // Reductions over the types of the specification's table (shmem.h's overloads).
    template <class T> void sum_reduce(T* dest, const T* source, std::size_t n) const noexcept {
        shmem_sum_reduce(t_, dest, source, n);
    }
    template <class T> void prod_reduce(T* dest, const T* source, std::size_t n) const noexcept {
        shmem_prod_reduce(t_, dest, source, n);
    }
    template <class T> void max_reduce(T* dest, const T* source, std::size_t n) const noexcept {
        shmem_max_reduce(t_, dest, source, n);
    }
    template <class T> void min_reduce(T* dest, const T* source, std::size_t n) const noexcept {
        shmem_min_reduce(t_, dest, source, n);
    }
    template <class T> void and_reduce(T* dest, const T* source, std::size_t n) const noexcept {
        shmem_and_reduce(t_, dest, source, n);
    }
    template <class T> void or_reduce(T* dest, const T* source, std::size_t n) const noexcept {
        shmem_or_reduce(t_, dest, source, n);
    }
    template <class T> void xor_reduce(T* dest, const T* source, std::size_t n) const noexcept {
        shmem_xor_reduce(t_, dest, source, n);
    }

private:
    team(shmem_team_t t, bool owned) noexcept : t_(t), owned_(owned) {}
    void release() noexcept {
        if (owned_ && t_ != SHMEM_TEAM_INVALID) shmem_team_destroy(t_);
        t_ = SHMEM_TEAM_INVALID;
    }
    shmem_team_t t_ = SHMEM_TEAM_INVALID;
    bool owned_ = false;
};

// ---- Contexts -----------------------------------------------------------------------------
// A communication context, destroyed (after completing its operations) by the destructor. PEs
// are numbered in its team. Not collective.
class context {
public:
    explicit context(long options = 0) {
        if (shmem_ctx_create(options, &c_) != 0) throw std::runtime_error("shmem_ctx_create failed");
    }
    explicit context(const team& t, long options = 0) {
        if (shmem_team_create_ctx(t.handle(), options, &c_) != 0)
            throw std::runtime_error("shmem_team_create_ctx failed");
    }
    context(context&& o) noexcept : c_(std::exchange(o.c_, SHMEM_CTX_INVALID)) {}
    context& operator=(context&& o) noexcept {
        if (this != &o) {
            shmem_ctx_destroy(c_);
            c_ = std::exchange(o.c_, SHMEM_CTX_INVALID);
        }
        return *this;
    }
    context(const context&) = delete;
    context& operator=(const context&) = delete;
    ~context() { shmem_ctx_destroy(c_); }

    shmem_ctx_t handle() const noexcept { return c_; }
    template <class T> void put(T* dest, const T* source, std::size_t n, int pe) const noexcept {
        shmem_ctx_putmem(c_, dest, source, n * sizeof(T), pe);
    }
    template <class T> void get(T* dest, const T* source, std::size_t n, int pe) const noexcept {
        shmem_ctx_getmem(c_, dest, source, n * sizeof(T), pe);
    }
    template <class T> void put_nbi(T* dest, const T* source, std::size_t n, int pe) const noexcept {
        shmem_ctx_putmem_nbi(c_, dest, source, n * sizeof(T), pe);
    }
    template <class T> void get_nbi(T* dest, const T* source, std::size_t n, int pe) const noexcept {
        shmem_ctx_getmem_nbi(c_, dest, source, n * sizeof(T), pe);
    }
    template <class T> void p(T* dest, const T& v, int pe) const noexcept { put(dest, &v, 1, pe); }
    template <class T> T g(const T* source, int pe) const noexcept {
        T v;
        get(&v, source, 1, pe);
        return v;
    }
    // Atomics over the specification's AMO types (shmem.h's overloads).
    template <class T> T atomic_fetch(const T* source, int pe) const noexcept { return shmem_atomic_fetch(c_, source, pe); }
    template <class T> void atomic_set(T* dest, T v, int pe) const noexcept { shmem_atomic_set(c_, dest, v, pe); }
    template <class T> T atomic_swap(T* dest, T v, int pe) const noexcept { return shmem_atomic_swap(c_, dest, v, pe); }
    template <class T> T atomic_compare_swap(T* dest, T cond, T v, int pe) const noexcept {
        return shmem_atomic_compare_swap(c_, dest, cond, v, pe);
    }
    template <class T> T atomic_fetch_add(T* dest, T v, int pe) const noexcept {
        return shmem_atomic_fetch_add(c_, dest, v, pe);
    }
    template <class T> void atomic_add(T* dest, T v, int pe) const noexcept { shmem_atomic_add(c_, dest, v, pe); }
    void fence() const noexcept { shmem_ctx_fence(c_); }
    void quiet() const noexcept { shmem_ctx_quiet(c_); }

private:
    shmem_ctx_t c_ = SHMEM_CTX_INVALID;
};

} // namespace vkshmem

#endif // VKSHMEM_VKSHMEM_HPP
