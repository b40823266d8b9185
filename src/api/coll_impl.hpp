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
    coll::reduce(*t, dest, source, n, sizeof(T), &combine<T, Op>, call);
    return 0;
}

template <class T> int scan(team_t team, T* dest, const T* source, std::size_t n, bool inclusive, const char* call) {
    coll::Team* t = team_of(team, call);
    if (!t) return -1;
    coll::scan(*t, dest, source, n, sizeof(T), &combine<T, OpSum>, inclusive, call);
    return 0;
}

} // namespace detail

template <class T> int broadcast(team_t team, T* dest, const T* source, std::size_t nelems, int root, const char* call) {
    coll::Team* t = team_of(team, call);
    if (!t) return -1;
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
    coll::fcollect(*t, dest, source, nelems * sizeof(T), call);
    return 0;
}
template <class T> int alltoall(team_t team, T* dest, const T* source, std::size_t nelems, const char* call) {
    coll::Team* t = team_of(team, call);
    if (!t) return -1;
    coll::alltoall(*t, dest, source, nelems * sizeof(T), call);
    return 0;
}
template <class T>
int alltoalls(team_t team, T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems,
              const char* call) {
    coll::Team* t = team_of(team, call);
    if (!t) return -1;
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

} // namespace vkshmem::api
