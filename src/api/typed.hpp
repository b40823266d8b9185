// The C++ templates behind every typed OpenSHMEM routine.
//
// The generated C entry points (src/api/generated/*.cpp, written by tools/gen)
// are one-line forwarders into these templates, so each operation is written
// once here and instantiated per type. T is always the C element type of the
// routine (int, long, uint64_t, ...); sized routines (put32, putmem, ...) use
// the unsigned integer of that width, and 128-bit ones use b128.
#pragma once

#include <cstddef>
#include <cstdint>

struct vkshmem_team; // shmem_team_t (api/team_handle.hpp)
struct vkshmem_ctx;  // shmem_ctx_t (api/contexts.cpp)

namespace vkshmem::api {

// Opaque 16-byte element for shmem_put128/get128/iput128/iget128.
struct alignas(8) b128 {
    std::uint64_t w[2];
};

// `call` defaults to the name of the C routine that called the template
// (GCC's __builtin_FUNCTION), so error messages name the exact routine.

// ---- Contexts ------------------------------------------------------------------------
// The world PE of `pe` as the context numbers it (its team's PE `pe`); the
// context forms of the generated routines pass their PE through this.
int ctx_pe_slow(vkshmem_ctx* ctx, int pe, const char* call);
inline int ctx_pe(vkshmem_ctx* ctx, int pe, const char* call = __builtin_FUNCTION()) {
    if (reinterpret_cast<std::uintptr_t>(ctx) == 1) [[likely]] // SHMEM_CTX_DEFAULT: the world's numbering
        return pe;
    return ctx_pe_slow(ctx, pe, call);
}

// ---- RMA, contiguous and elemental -------------------------------------------------
template <class T> void put(T* dest, const T* source, std::size_t nelems, int pe, const char* call = __builtin_FUNCTION());
template <class T> void get(T* dest, const T* source, std::size_t nelems, int pe, const char* call = __builtin_FUNCTION());
template <class T> void put_nbi(T* dest, const T* source, std::size_t nelems, int pe, const char* call = __builtin_FUNCTION());
template <class T> void get_nbi(T* dest, const T* source, std::size_t nelems, int pe, const char* call = __builtin_FUNCTION());
template <class T> void p(T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> T g(const T* source, int pe, const char* call = __builtin_FUNCTION());
template <class T>
void iput(T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems, int pe, const char* call = __builtin_FUNCTION());
template <class T>
void iget(T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems, int pe, const char* call = __builtin_FUNCTION());

// ---- Atomic memory operations ------------------------------------------------------
template <class T> T atomic_fetch(const T* source, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_set(T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> T atomic_swap(T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> T atomic_compare_swap(T* dest, T cond, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> T atomic_fetch_inc(T* dest, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_inc(T* dest, int pe, const char* call = __builtin_FUNCTION());
template <class T> T atomic_fetch_add(T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_add(T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> T atomic_fetch_and(T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_and(T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> T atomic_fetch_or(T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_or(T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> T atomic_fetch_xor(T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_xor(T* dest, T value, int pe, const char* call = __builtin_FUNCTION());

// Non-blocking fetching forms: the old value lands in *fetch by the next quiet.
template <class T> void atomic_fetch_nbi(T* fetch, const T* source, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_swap_nbi(T* fetch, T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_compare_swap_nbi(T* fetch, T* dest, T cond, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_fetch_inc_nbi(T* fetch, T* dest, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_fetch_add_nbi(T* fetch, T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_fetch_and_nbi(T* fetch, T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_fetch_or_nbi(T* fetch, T* dest, T value, int pe, const char* call = __builtin_FUNCTION());
template <class T> void atomic_fetch_xor_nbi(T* fetch, T* dest, T value, int pe, const char* call = __builtin_FUNCTION());

// ---- Point-to-point synchronization ------------------------------------------------
// cmp is one of SHMEM_CMP_EQ/NE/GT/GE/LT/LE. status may be NULL; a nonzero
// status[i] excludes ivars[i]. values[] holds one comparison value per element.
template <class T> void wait_until(T* ivar, int cmp, T value, const char* call = __builtin_FUNCTION());
template <class T> int test(T* ivar, int cmp, T value, const char* call = __builtin_FUNCTION());
template <class T> void wait_until_all(T* ivars, std::size_t nelems, const int* status, int cmp, T value, const char* call = __builtin_FUNCTION());
template <class T> std::size_t wait_until_any(T* ivars, std::size_t nelems, const int* status, int cmp, T value, const char* call = __builtin_FUNCTION());
template <class T>
std::size_t wait_until_some(T* ivars, std::size_t nelems, std::size_t* indices, const int* status, int cmp, T value, const char* call = __builtin_FUNCTION());
template <class T>
void wait_until_all_vector(T* ivars, std::size_t nelems, const int* status, int cmp, const T* values, const char* call = __builtin_FUNCTION());
template <class T>
std::size_t wait_until_any_vector(T* ivars, std::size_t nelems, const int* status, int cmp, const T* values, const char* call = __builtin_FUNCTION());
template <class T>
std::size_t wait_until_some_vector(T* ivars, std::size_t nelems, std::size_t* indices, const int* status, int cmp,
                                   const T* values, const char* call = __builtin_FUNCTION());
template <class T> int test_all(T* ivars, std::size_t nelems, const int* status, int cmp, T value, const char* call = __builtin_FUNCTION());
template <class T> std::size_t test_any(T* ivars, std::size_t nelems, const int* status, int cmp, T value, const char* call = __builtin_FUNCTION());
template <class T>
std::size_t test_some(T* ivars, std::size_t nelems, std::size_t* indices, const int* status, int cmp, T value, const char* call = __builtin_FUNCTION());
template <class T> int test_all_vector(T* ivars, std::size_t nelems, const int* status, int cmp, const T* values, const char* call = __builtin_FUNCTION());
template <class T>
std::size_t test_any_vector(T* ivars, std::size_t nelems, const int* status, int cmp, const T* values, const char* call = __builtin_FUNCTION());
template <class T>
std::size_t test_some_vector(T* ivars, std::size_t nelems, std::size_t* indices, const int* status, int cmp,
                             const T* values, const char* call = __builtin_FUNCTION());

// ---- Collectives on teams (src/coll; coll_impl.hpp) ----------------------------------
// Each returns 0, or -1 for SHMEM_TEAM_INVALID (where nothing happens).
using team_t = vkshmem_team*;
template <class T> int broadcast(team_t team, T* dest, const T* source, std::size_t nelems, int root, const char* call = __builtin_FUNCTION());
template <class T> int collect(team_t team, T* dest, const T* source, std::size_t nelems, const char* call = __builtin_FUNCTION());
template <class T> int fcollect(team_t team, T* dest, const T* source, std::size_t nelems, const char* call = __builtin_FUNCTION());
template <class T> int alltoall(team_t team, T* dest, const T* source, std::size_t nelems, const char* call = __builtin_FUNCTION());
template <class T>
int alltoalls(team_t team, T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems,
              const char* call = __builtin_FUNCTION());
template <class T> int and_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call = __builtin_FUNCTION());
template <class T> int or_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call = __builtin_FUNCTION());
template <class T> int xor_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call = __builtin_FUNCTION());
template <class T> int max_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call = __builtin_FUNCTION());
template <class T> int min_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call = __builtin_FUNCTION());
template <class T> int sum_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call = __builtin_FUNCTION());
template <class T> int prod_reduce(team_t team, T* dest, const T* source, std::size_t n, const char* call = __builtin_FUNCTION());
template <class T> int sum_inscan(team_t team, T* dest, const T* source, std::size_t n, const char* call = __builtin_FUNCTION());
template <class T> int sum_exscan(team_t team, T* dest, const T* source, std::size_t n, const char* call = __builtin_FUNCTION());

// ---- Deprecated collectives on active sets (PE_start, 2^logPE_stride, PE_size; pSync) ------
#define VKSHMEM_ASET int start, int log_stride, int size
template <class T>
void broadcast_set(T* dest, const T* source, std::size_t nelems, int root, VKSHMEM_ASET, long* psync, const char* call = __builtin_FUNCTION());
template <class T> void collect_set(T* dest, const T* source, std::size_t nelems, VKSHMEM_ASET, long* psync, const char* call = __builtin_FUNCTION());
template <class T> void fcollect_set(T* dest, const T* source, std::size_t nelems, VKSHMEM_ASET, long* psync, const char* call = __builtin_FUNCTION());
template <class T> void alltoall_set(T* dest, const T* source, std::size_t nelems, VKSHMEM_ASET, long* psync, const char* call = __builtin_FUNCTION());
template <class T>
void alltoalls_set(T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems, VKSHMEM_ASET, long* psync,
                   const char* call = __builtin_FUNCTION());
// pWrk is not needed: partial results live in dest.
#define VKSHMEM_TO_ALL(op)                                                                                             \
    template <class T>                                                                                                 \
    void op##_to_all(T* dest, const T* source, int nreduce, VKSHMEM_ASET, T* pWrk, long* psync,                        \
                     const char* call = __builtin_FUNCTION());
VKSHMEM_TO_ALL(and)
VKSHMEM_TO_ALL(or)
VKSHMEM_TO_ALL(xor)
VKSHMEM_TO_ALL(max)
VKSHMEM_TO_ALL(min)
VKSHMEM_TO_ALL(sum)
VKSHMEM_TO_ALL(prod)
#undef VKSHMEM_TO_ALL
#undef VKSHMEM_ASET
// ---- Put with signal, strided blocks (1.6), deprecated waits: api/typed_signal.hpp ---------
// sig_op is SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD; the signal update becomes visible after the data.
template <class T>
void put_signal(T* dest, const T* source, std::size_t nelems, std::uint64_t* sig_addr, std::uint64_t signal, int sig_op,
                int pe, const char* call = __builtin_FUNCTION());
template <class T>
void put_signal_nbi(T* dest, const T* source, std::size_t nelems, std::uint64_t* sig_addr, std::uint64_t signal,
                    int sig_op, int pe, const char* call = __builtin_FUNCTION());
// nblocks blocks of bsize elements: block i of source + i * sst lands at dest + i * dst.
template <class T>
void ibput(T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t bsize, std::size_t nblocks,
           int pe, const char* call = __builtin_FUNCTION());
template <class T>
void ibget(T* dest, const T* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t bsize, std::size_t nblocks,
           int pe, const char* call = __builtin_FUNCTION());
// shmem_TYPENAME_wait (deprecated): waits while *ivar == value.
template <class T> void wait_while_equal(T* ivar, T value, const char* call = __builtin_FUNCTION());

} // namespace vkshmem::api

#include "api/typed_impl.hpp"
#include "api/coll_impl.hpp"
#include "api/typed_signal.hpp"
