// SPDX-License-Identifier: BSL-1.0
// The data path: element operations on any PE's symmetric memory (put, get,
// atomics, point-to-point waits), each taking the route of its (PE, space).
//
// The API's typed routines (src/api/generated) forward here, and so do the
// layers that move bytes for the runtime: collectives (coll/), the proxy
// (proxy/) and active messages (am.hpp). T is the C element type (int, long,
// uint64_t, ...); sized routines use the unsigned integer of that width, and
// 128-bit ones use b128. The fast path (a mapped peer: Route::Direct) is inline
// (rma_impl.hpp); the other routes are in slow_path.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vkshmem {
struct Config;
class SymmetricMemory;
class VulkanDevice;
namespace net {
class Transport;
class Domain;
}
} // namespace vkshmem

namespace vkshmem::rma {

// What the slow routes reach beyond FastState: set by the runtime once its
// subsystems run, cleared before they stop. Null members: not there (no
// Vulkan device, no network transport).
struct Subsystems {
    const Config* config = nullptr;
    SymmetricMemory* memory = nullptr;
    VulkanDevice* device = nullptr;
    net::Transport* network = nullptr;
};
extern Subsystems g_subsystems;

// The network domain of the context whose routine the calling thread is in (api::InCtx sets it
// for the length of one call); null: the default context's. Every network operation is posted
// on it.
extern thread_local net::Domain* t_domain;
// Completes this PE's puts and AMOs on the default context (shmem_quiet): a full fence, and a
// flush of the network transport.
void quiet(const char* call = "shmem_quiet");
// The same for one context's network domain (null: the default's), and its fence.
void quiet_on(net::Domain* d, const char* call);
void fence_on(net::Domain* d, const char* call);
// Starts what this PE has queued without waiting for it to complete: the batch of device copies,
// the application's active-message queue, and the deferred atomics (which wait for both first);
// FastState::start_queued. Not on the proxy thread, nor within itself.
void start_queued();
// A context's own network domain, or null where there is no network or it has none to give
// (the context then shares the default's); close_domain completes what is in flight on it.
net::Domain* open_domain();
void close_domain(net::Domain* d);

// Opaque 16-byte element for shmem_put128/get128/iput128/iget128.
struct alignas(8) b128 {
    std::uint64_t w[2];
};

// `call` defaults to the name of the C routine that called the template
// (GCC's __builtin_FUNCTION), so error messages name the exact routine.

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

} // namespace vkshmem::rma

#include "rma/rma_impl.hpp"
