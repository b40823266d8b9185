// SPDX-License-Identifier: BSL-1.0
// The C++ templates behind every typed OpenSHMEM routine.
//
// The generated C entry points (src/api/generated/*.cpp, written by tools/gen)
// are one-line forwarders into these templates, so each operation is written
// once and instantiated per type. T is always the C element type of the
// routine (int, long, uint64_t, ...); sized routines (put32, putmem, ...) use
// the unsigned integer of that width, and 128-bit ones use b128. RMA, atomics
// and point-to-point waits are the data path's (rma/rma.hpp); what is declared
// here is built on it: contexts, collectives, put with signal, strided blocks.
#pragma once

#include "rma/rma.hpp"

#include <cstddef>
#include <cstdint>

struct vkshmem_team; // shmem_team_t (api/team_handle.hpp)
struct vkshmem_ctx;  // shmem_ctx_t (api/contexts.cpp)

namespace vkshmem::api {
// The generated forwarders name one namespace for every operation: the data
// path's element operations are the API's too.
using namespace vkshmem::rma;
namespace detail {
using namespace vkshmem::rma::detail;
}

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
// The network domain of a context other than the default (checked as ctx_pe checks it).
net::Domain* ctx_domain(vkshmem_ctx* ctx, const char* call);
// The scope of one context routine: the data path posts its network operations on the
// context's domain (rma::t_domain) until it returns. The default context's is null.
class InCtx {
public:
    explicit InCtx(vkshmem_ctx* ctx, const char* call = __builtin_FUNCTION()) {
        if (reinterpret_cast<std::uintptr_t>(ctx) != 1) [[unlikely]]
            rma::t_domain = ctx_domain(ctx, call);
    }
    ~InCtx() { rma::t_domain = nullptr; }
    InCtx(const InCtx&) = delete;
    InCtx& operator=(const InCtx&) = delete;
};

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

#include "api/coll_impl.hpp"
#include "api/typed_signal.hpp"
