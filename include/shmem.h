/*
 * shmem.h — the OpenSHMEM 1.6 C API of vkshmem.
 *
 * Typed routines (shmem_TYPENAME_op, sized and mem forms) and the C11 generic
 * selections are generated from one type table into vkshmem/shmem_typed.h;
 * this file holds the constants and the untyped routines.
 *
 * Every routine must be called between shmem_init and shmem_finalize. Routines
 * that take a PE number and a symmetric address end the job with a message of
 * the form "[host:pid:PE n] vkshmem error: <routine>: <cause>" when the
 * address is not symmetric or the PE does not exist (VKSHMEM_ERROR_CHECKS=1
 * adds bounds and alignment checks).
 */
#ifndef VKSHMEM_SHMEM_H
#define VKSHMEM_SHMEM_H

#include <stddef.h>
#include <stdint.h>

/* Every routine is noexcept in C++: errors end the job, they never throw. */
#ifndef VKSHMEM_NOEXCEPT
#ifdef __cplusplus
#define VKSHMEM_NOEXCEPT noexcept
#else
#define VKSHMEM_NOEXCEPT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Library and specification versions ---------------------------------- */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 6
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define SHMEM_MAX_NAME_LEN 256
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define SHMEM_VENDOR_STRING "vkshmem"
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING

/* ---- Thread levels ---------------------------------------------------------- */
#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

/* ---- Comparison operators for wait_until and test --------------------------- */
/* SHMEM_CMP_EQ, _NE, _GT, _GE, _LT, _LE are defined in vkshmem/shmem_typed.h
 * (generated: the device libraries share their values). */
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

/* ---- Memory hints for shmem_malloc_with_hints ------------------------------- */
#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

/* ---- Setup, exit and query ---------------------------------------------------- */
/* Initializes the library; collective over all PEs. Ends the job with a
 * message when the launcher, the Vulkan device or the heaps cannot be set up. */
void shmem_init(void) VKSHMEM_NOEXCEPT;
/* As shmem_init; *provided receives the thread level granted. Returns 0 on
 * success and nonzero (with a message) when initialization fails. */
int shmem_init_thread(int requested, int *provided) VKSHMEM_NOEXCEPT;
void shmem_query_thread(int *provided) VKSHMEM_NOEXCEPT;
/* *initialized = 1 between shmem_init and shmem_finalize, else 0 (also before
 * the first init and after finalize). shmem_init may follow shmem_finalize. */
void shmem_query_initialized(int *initialized) VKSHMEM_NOEXCEPT;
/* Profiling control (levels 0-2 and up): a hint for a profiling layer; a no-op here. */
void shmem_pcontrol(int level, ...) VKSHMEM_NOEXCEPT;
/* Collective: completes outstanding operations, then releases every resource. */
void shmem_finalize(void) VKSHMEM_NOEXCEPT;
/* Ends every PE of the job with exit status `status`. Never returns. */
void shmem_global_exit(int status) VKSHMEM_NOEXCEPT;
int shmem_my_pe(void) VKSHMEM_NOEXCEPT;
int shmem_n_pes(void) VKSHMEM_NOEXCEPT;
/* Fills *major and *minor with the OpenSHMEM version implemented (1.6). */
void shmem_info_get_version(int *major, int *minor) VKSHMEM_NOEXCEPT;
/* Copies the vendor string (at most SHMEM_MAX_NAME_LEN bytes with the NUL). */
void shmem_info_get_name(char *name) VKSHMEM_NOEXCEPT;

/* ---- Symmetric memory ------------------------------------------------------- */
/* Collective over all PEs, with the same size on every PE; each ends with a
 * barrier. On exhaustion every PE gets NULL and PE 0 prints one message naming
 * SHMEM_SYMMETRIC_SIZE (host heap) or VKSHMEM_DEVICE_HEAP_SIZE (device heap). */
void *shmem_malloc(size_t size) VKSHMEM_NOEXCEPT;
void *shmem_calloc(size_t count, size_t size) VKSHMEM_NOEXCEPT;
void *shmem_align(size_t alignment, size_t size) VKSHMEM_NOEXCEPT;
void *shmem_realloc(void *ptr, size_t size) VKSHMEM_NOEXCEPT;
void shmem_free(void *ptr) VKSHMEM_NOEXCEPT;
/* hints: the SHMEM_MALLOC_ bits and SHMEMX_MALLOC_DEVICE (shmemx.h), which places the
 * object in the device heap (Vulkan DEVICE_LOCAL memory). */
void *shmem_malloc_with_hints(size_t size, long hints) VKSHMEM_NOEXCEPT;

/* ---- Accessibility ---------------------------------------------------------- */
/* Returns a local address for `dest` on `pe` when this PE can load and store
 * it directly (node-local peers), else NULL. */
void *shmem_ptr(const void *dest, int pe) VKSHMEM_NOEXCEPT;
int shmem_addr_accessible(const void *addr, int pe) VKSHMEM_NOEXCEPT;
int shmem_pe_accessible(int pe) VKSHMEM_NOEXCEPT;

/* ---- Memory ordering ---------------------------------------------------------- */
/* fence: puts, AMOs and stores to each PE are delivered in order.
 * quiet: every operation issued by this PE has completed. */
void shmem_fence(void) VKSHMEM_NOEXCEPT;
void shmem_quiet(void) VKSHMEM_NOEXCEPT;

/* ---- Synchronization ---------------------------------------------------------- */
/* barrier_all: quiet, then wait for every PE. sync_all: wait for every PE
 * without completing outstanding operations. */
void shmem_barrier_all(void) VKSHMEM_NOEXCEPT;
void shmem_sync_all(void) VKSHMEM_NOEXCEPT;

/* ---- Distributed locking -------------------------------------------------------- */
/* `lock` is a symmetric long that every PE zeroes before first use and touches
 * only through these calls. set_lock waits until this PE (or thread) holds it;
 * waiting PEs get it in the order they asked (a ticket lock in PE 0's copy).
 * test_lock takes it only if it is free and returns 0 then, else 1 at once.
 * clear_lock completes this PE's operations (shmem_quiet), then releases it. */
void shmem_set_lock(long *lock) VKSHMEM_NOEXCEPT;
int shmem_test_lock(long *lock) VKSHMEM_NOEXCEPT;
void shmem_clear_lock(long *lock) VKSHMEM_NOEXCEPT;

/* ---- Signals and per-PE completion (OpenSHMEM 1.6) ------------------------------ */
/* A signal is a symmetric uint64_t changed only by these routines and the put-with-signal
 * routines (shmem_put_signal, shmem_putmem_signal_nbi, ..., in vkshmem/shmem_typed.h), whose
 * sig_op is SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD: the signal update becomes visible only after
 * the data of the same call; any other sig_op ends the job. signal_add/set update the signal on
 * `pe` atomically; signal_fetch reads this PE's own signal atomically. */
uint64_t shmem_signal_fetch(const uint64_t *sig_addr) VKSHMEM_NOEXCEPT;
void shmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe) VKSHMEM_NOEXCEPT;
void shmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe) VKSHMEM_NOEXCEPT;
/* Waits until this PE's *sig_addr compares to cmp_value by cmp (SHMEM_CMP_*) and returns the
 * value that satisfied the comparison. */
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value) VKSHMEM_NOEXCEPT;
/* Completes this PE's puts, AMOs and signals to each of the npes PEs in target_pes (it may
 * complete others too). A PE number outside 0..n_pes-1 ends the job. */
void shmem_pe_quiet(const int *target_pes, size_t npes) VKSHMEM_NOEXCEPT;

/* ---- DEPRECATED: names of OpenSHMEM 1.0-1.3, for programs written against them ----- */
/* Not marked with a deprecation attribute: old benchmarks build with -Werror. New code uses
 * the routine named in each comment. The typed ones (shmem_int_fadd, shmem_long_swap,
 * shmem_int_wait, ...) are in vkshmem/shmem_typed.h, section DEPRECATED. */
/* DEPRECATED: shmem_init (the argument is ignored). */
void start_pes(int npes) VKSHMEM_NOEXCEPT;
/* DEPRECATED: shmem_my_pe, shmem_n_pes. */
int _my_pe(void) VKSHMEM_NOEXCEPT;
int _num_pes(void) VKSHMEM_NOEXCEPT;
/* DEPRECATED: shmem_long_wait_until(ivar, SHMEM_CMP_NE, cmp_value): waits while
 * *ivar == cmp_value. */
void shmem_wait(long *ivar, long cmp_value) VKSHMEM_NOEXCEPT;
#if defined(__cplusplus) || !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
/* DEPRECATED: shmem_long_atomic_swap. Under C11 shmem_swap is the generic macro instead. */
long shmem_swap(long *target, long value, int pe) VKSHMEM_NOEXCEPT;
#endif
/* DEPRECATED: no-ops. They managed the data cache of machines whose remote writes did not
 * invalidate it; every system vkshmem runs on keeps caches coherent with other PEs, DMA and the
 * network, so there is nothing to flush or invalidate. */
void shmem_clear_cache_inv(void) VKSHMEM_NOEXCEPT;
void shmem_set_cache_inv(void) VKSHMEM_NOEXCEPT;
void shmem_clear_cache_line_inv(void *dest) VKSHMEM_NOEXCEPT;
void shmem_set_cache_line_inv(void *dest) VKSHMEM_NOEXCEPT;
void shmem_udcflush(void) VKSHMEM_NOEXCEPT;
void shmem_udcflush_line(void *dest) VKSHMEM_NOEXCEPT;

#include "vkshmem/shmem_typed.h"

#ifdef __cplusplus
}
#endif

#endif /* VKSHMEM_SHMEM_H */
