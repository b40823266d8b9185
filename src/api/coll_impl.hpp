// SPDX-License-Identifier: BSL-1.0
// Definitions of the collective templates declared in typed.hpp: the team
// handle is resolved, the element type becomes a size and a Combine function,
// and src/coll does the rest.
#pragma once

#include "api/team_handle.hpp"
#include "coll/coll.hpp"

#include <type_traits>

namespace vkshmem::api {
namespace detail {

// The operations of reductions. Integer sums and products wrap around (in
// the unsigned type of the same width, at least unsigned int), as two's
// complement hardware does, rather than overflowing a signed type.
template <class T> using wide_unsigned = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
struct OpAnd { template <class T> T operator()(T a, T b) const { return static_cast<T>(a & b); } };
struct OpOr { template <class T> T operator()(T a, T b) const { return static_cast<T>(a | b); } };
struct OpXor { template <class T> T operator()(T a, T b) const { return static_cast<T>(a ^ b); } };
struct OpMax { template <class T> T operator()(T a, T b) const { return b > a ? b : a; } };
struct OpMin { template <class T> T operator()(T a, T b) const { return b < a ? b : a; } };
struct OpSum {
    template <class T> T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>) {
            using W = wide_unsigned<T>;
            return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
        } else {
            return a + b;
        }
    }
};
struct OpProd {
    template <class T> T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>) {
            using W = wide_unsigned<T>;
            return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
        } else {
            return a * b;
        }
    }
};

template <class T, class Op> void combine(void* acc, const void* in, std::size_t n) {
    T* a = static_cast<T*>(acc);
    const T* b = static_cast<const T*>(in);
    for (std::size_t i = 0; i < n; ++i) a[i] = Op{}(a[i], b[i]);
}

// Team PE `root` of `t`, or the job ends naming it.
void check_root(const coll::Team& t, int root, const char* call);

template <class T, class Op> int reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call) {
    coll::Team* t = team_of(team, call);
    if (!t) return -1;
    if (n == 0) return 0;
    coll::reduce(*t, dest, source, n, sizeof(T), &combine<T, Op>, call);
    return 0;
}

template <class T> int scan(team_t team, T* dest, const T* source, std::size_t n, bool inclusive, const char* call) {
    coll::Team* t = team_of(team, call);
    if (!t) return -1;
    if (n == 0) return 0;
    coll::scan(*t, dest, source, n, sizeof(T), &combine<T, OpSum>, inclusive, call);
    return 0;
}

// The active set's team (its flags in pSync), or the job ends: bad set, or this PE not in it.
// Every collective here with zero elements (the same count on every PE, as the specification
// requires; collect's counts may differ, so it always runs) returns at once, looking at none of
// its pointers.
coll::Team& active_set(int start, int log_stride, int size, long* psync, const char* call);
[[noreturn]] void bad_count(int nreduce, const char* call);

template <class T, class Op>
void reduce_set(T* dest, const T* source, int nreduce, int start, int log_stride, int size, long* psync,
                const char* call) {
    if (nreduce < 0) bad_count(nreduce, call);
    if (nreduce == 0) return;
    coll::reduce(active_set(start, log_stride, size, psync, call), dest, source, static_cast<std::size_t>(nreduce),
                 sizeof(T), &combine<T, Op>, call);
}

} // namespace detail

template <class T> int broadcast(team_t team, T* dest, const T* source, std::size_t nelems, int root, const char* call) {
    coll::Team* t = team_of(team, call);
    if (!t) return -1;
    if (nelems == 0) return 0;
    detail::check_root(*t, root, call);
    coll::broadcast(*t, dest, source, nelems * sizeof(T), root, true, call);
    return 0;
}
template <class T> int collect(team_t team, T* dest, const T* source, std::size_t nelems, const char* call) {
    coll::Team* t = team_of(team, call);
    if (!t) return -1;
    coll::collect(*t, dest, source, nelems * sizeof(T), call);
    return 0;
}
template <class T> int fcollect(team_t team, T* dest, const T* source, std::size_t nelems, const char* call) {
    coll::Team* t = team_of(team, call);
    if (!t) return -1;
    if (nelems == 0) return 0;
    coll::fcollect(*t, dest, source, nelems * sizeof(T), call);
    return 0;
}
template <class T> int alltoall(team_t team, T* dest, const T* source, std::size_t nelems, const char* call) {
    coll::Team* t = team_of(team, call);
    if (!t) return -1;
    if (nelems == 0) return 0;
    coll::alltoall(*t, dest, source, nelems * sizeof(T), call);
    return 0;
}
template <class T>
int alltoalls(team_t team, T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems,
              const char* call) {
    coll::Team* t = team_of(team, call);
    if (!t) return -1;
    if (nelems == 0) return 0;
    coll::alltoalls(*t, dest, source, dst, sst, nelems, sizeof(T), call);
    return 0;
}

template <class T> int and_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call) {
    return detail::reduce<T, detail::OpAnd>(team, dest, source, n, call);
}
template <class T> int or_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call) {
    return detail::reduce<T, detail::OpOr>(team, dest, source, n, call);
}
template <class T> int xor_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call) {
    return detail::reduce<T, detail::OpXor>(team, dest, source, n, call);
}
template <class T> int max_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call) {
    return detail::reduce<T, detail::OpMax>(team, dest, source, n, call);
}
template <class T> int min_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call) {
    return detail::reduce<T, detail::OpMin>(team, dest, source, n, call);
}
template <class T> int sum_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call) {
    return detail::reduce<T, detail::OpSum>(team, dest, source, n, call);
}
template <class T> int prod_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call) {
    return detail::reduce<T, detail::OpProd>(team, dest, source, n, call);
}
template <class T> int sum_inscan(team_t team, T* dest, const T* source, std::size_t n, const char* call) {
    return detail::scan(team, dest, source, n, true, call);
}
template <class T> int sum_exscan(team_t team, T* dest, const T* source, std::size_t n, const char* call) {
    return detail::scan(team, dest, source, n, false, call);
}

// ---- Deprecated collectives on active sets -------------------------------------------------
template <class T>
void broadcast_set(T* dest, const T* source, std::size_t nelems, int root, int start, int log_stride, int size,
                   long* psync, const char* call) {
    if (nelems == 0) return;
    coll::Team& t = detail::active_set(start, log_stride, size, psync, call);
    detail::check_root(t, root, call);
    coll::broadcast(t, dest, source, nelems * sizeof(T), root, false, call); // the root's dest stays as it was
}
template <class T>
void collect_set(T* dest, const T* source, std::size_t nelems, int start, int log_stride, int size, long* psync,
                 const char* call) {
    coll::collect(detail::active_set(start, log_stride, size, psync, call), dest, source, nelems * sizeof(T), call);
}
template <class T>
void fcollect_set(T* dest, const T* source, std::size_t nelems, int start, int log_stride, int size, long* psync,
                  const char* call) {
    if (nelems == 0) return;
    coll::fcollect(detail::active_set(start, log_stride, size, psync, call), dest, source, nelems * sizeof(T), call);
}
template <class T>
void alltoall_set(T* dest, const T* source, std::size_t nelems, int start, int log_stride, int size, long* psync,
                  const char* call) {
    if (nelems == 0) return;
    coll::alltoall(detail::active_set(start, log_stride, size, psync, call), dest, source, nelems * sizeof(T), call);
}
template <class T>
void alltoalls_set(T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems, int start,
                   int log_stride, int size, long* psync, const char* call) {
    if (nelems == 0) return;
    coll::alltoalls(detail::active_set(start, log_stride, size, psync, call), dest, source, dst, sst, nelems,
                    sizeof(T), call);
}
#define VKSHMEM_TO_ALL(op, Op)                                                                                    \
    template <class T>                                                                                            \
    void op##_to_all(T* dest, const T* source, int nreduce, int start, int log_stride, int size, T*, long* psync, \
                     const char* call) {                                                                          \
        detail::reduce_set<T, detail::Op>(dest, source, nreduce, start, log_stride, size, psync, call);           \
    }
VKSHMEM_TO_ALL(and, OpAnd)
VKSHMEM_TO_ALL(or, OpOr)
VKSHMEM_TO_ALL(xor, OpXor)
VKSHMEM_TO_ALL(max, OpMax)
VKSHMEM_TO_ALL(min, OpMin)
VKSHMEM_TO_ALL(sum, OpSum)
VKSHMEM_TO_ALL(prod, OpProd)
#undef VKSHMEM_TO_ALL

} // namespace vkshmem::api
