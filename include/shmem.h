/* SPDX-License-Identifier: BSL-1.0 */
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

/* Every routine is noexcept in C++: errors end the job, they never throw (throw() before C++11). */
#ifndef VKSHMEM_NOEXCEPT
#if defined(__cplusplus) && __cplusplus >= 201103L
#define VKSHMEM_NOEXCEPT noexcept
#elif defined(__cplusplus)
#define VKSHMEM_NOEXCEPT throw()
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

/* vkshmem's own release, for programs and bindings (shmem4py, ...) that tell implementations
 * apart at compile time: `#ifdef VKSHMEM_VERSION` identifies vkshmem; VKSHMEM_NUMVERSION
 * compares releases (major * 10000 + minor * 100 + patch). The build takes its version from
 * here, and shmem_info_get_name returns SHMEM_VENDOR_STRING. */
#define VKSHMEM_MAJOR_VERSION 0
#define VKSHMEM_MINOR_VERSION 1
#define VKSHMEM_PATCH_VERSION 0
#define VKSHMEM_VERSION "0.1.0"
#define VKSHMEM_NUMVERSION (VKSHMEM_MAJOR_VERSION * 10000 + VKSHMEM_MINOR_VERSION * 100 + VKSHMEM_PATCH_VERSION)

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

/* ---- Teams ------------------------------------------------------------------------ */
/* A team handle. SHMEM_TEAM_WORLD holds every PE; SHMEM_TEAM_SHARED the PEs of
 * this node whose memory this PE maps (shmem_ptr reaches them); a split hands
 * SHMEM_TEAM_INVALID to the PEs it leaves out. */
typedef struct vkshmem_team *shmem_team_t;
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
#define SHMEM_TEAM_WORLD ((shmem_team_t)1)
#define SHMEM_TEAM_SHARED ((shmem_team_t)2)
/* What a team is created with (config_mask bits say which fields count). */
typedef struct {
    int num_contexts;
} shmem_team_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

/* ---- Contexts ----------------------------------------------------------------------- */
/* A communication context: the shmem_ctx_ form of every RMA, AMO and signal
 * routine takes one first, and numbers its PE in the context's team. Ordering
 * (shmem_ctx_fence) and completion (shmem_ctx_quiet) apply to the context's
 * operations; here every context shares this PE's one set of resources, so
 * they also order and complete the other contexts' operations, which the
 * specification allows. */
typedef struct vkshmem_ctx *shmem_ctx_t;
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)
#define SHMEM_CTX_DEFAULT ((shmem_ctx_t)1)
/* Options of shmem_ctx_create: promises the program makes (used by one thread
 * only; by one thread at a time; no stores through it that need ordering). */
#define SHMEM_CTX_PRIVATE (1L << 0)
#define SHMEM_CTX_SERIALIZED (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

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
 * without completing outstanding operations. The algorithm:
 * VKSHMEM_BARRIER_ALGORITHM (dissemination or linear). */
void shmem_barrier_all(void) VKSHMEM_NOEXCEPT;
void shmem_sync_all(void) VKSHMEM_NOEXCEPT;

/* ---- Teams (all collective over the parent team, or the team) --------------------- */
/* This PE's number in the team, and the team's size; -1 for SHMEM_TEAM_INVALID. */
int shmem_team_my_pe(shmem_team_t team) VKSHMEM_NOEXCEPT;
int shmem_team_n_pes(shmem_team_t team) VKSHMEM_NOEXCEPT;
/* The fields of config_mask from the config the team was created with; 0, or
 * nonzero for SHMEM_TEAM_INVALID. */
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config) VKSHMEM_NOEXCEPT;
/* src_pe of src_team as numbered in dest_team; -1 if it is not in dest_team. */
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team) VKSHMEM_NOEXCEPT;
/* Collective over parent_team (same arguments on every PE): the team of the
 * parent's PEs start, start + stride, ... (size of them). *new_team is
 * SHMEM_TEAM_INVALID on the others. Returns 0, or nonzero on every PE (with a
 * message from the parent's PE 0) when the arguments are bad or all 64 team
 * slots are in use. */
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team) VKSHMEM_NOEXCEPT;
/* Collective over parent_team: the parent as a grid xrange PEs wide (the last
 * row may be short). *xaxis_team: this PE's row; *yaxis_team: its column. */
int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team) VKSHMEM_NOEXCEPT;
/* Collective over the team. SHMEM_TEAM_INVALID: nothing happens. */
void shmem_team_destroy(shmem_team_t team) VKSHMEM_NOEXCEPT;
/* shmem_ptr for team PE `pe`. */
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe) VKSHMEM_NOEXCEPT;
/* Waits for every PE of the team (no completion of outstanding operations).
 * Returns 0; nonzero for SHMEM_TEAM_INVALID. */
int shmem_team_sync(shmem_team_t team) VKSHMEM_NOEXCEPT;

/* ---- Deprecated: collectives on active sets ---------------------------------------- */
/* The active set is PE_start, PE_start + 2^logPE_stride, ... (PE_size PEs); only
 * its PEs call. pSync is a symmetric array of SHMEM_*_SYNC_SIZE longs, every
 * element SHMEM_SYNC_VALUE before its first use; it is back to that value when
 * the call returns on every PE of the set. Two collectives that may run at once
 * on overlapping sets need different pSync arrays. pWrk is not used. The typed
 * reductions (shmem_TYPENAME_OP_to_all) and sized forms (shmem_broadcast32 ...)
 * are in vkshmem/shmem_typed.h; shmem_broadcast32/64 leave the root's dest as it
 * was (the 1.6 team forms write it too). */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_SYNC_SIZE 128
#define SHMEM_BARRIER_SYNC_SIZE 128
#define SHMEM_BCAST_SYNC_SIZE 128
#define SHMEM_REDUCE_SYNC_SIZE 128
#define SHMEM_COLLECT_SYNC_SIZE 128
#define SHMEM_ALLTOALL_SYNC_SIZE 128
#define SHMEM_ALLTOALLS_SYNC_SIZE 128
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_ALLTOALL_SYNC_SIZE SHMEM_ALLTOALL_SYNC_SIZE
#define _SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_ALLTOALLS_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE
/* quiet, then wait for every PE of the active set. */
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync) VKSHMEM_NOEXCEPT;
/* Wait for every PE of the active set, without completing this PE's operations. With one
 * argument, shmem_sync(team) is shmem_team_sync (OpenSHMEM 1.5): in C a macro that counts its
 * arguments (C99 and later), in C++ an overload; see the end of this file. */
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync) VKSHMEM_NOEXCEPT;

/* ---- Contexts (not collective) ------------------------------------------------------ */
/* A context on SHMEM_TEAM_WORLD (ctx_create) or on `team`. Returns 0, or
 * nonzero with *ctx = SHMEM_CTX_INVALID (an unknown option bit, an invalid team). */
int shmem_ctx_create(long options, shmem_ctx_t *ctx) VKSHMEM_NOEXCEPT;
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx) VKSHMEM_NOEXCEPT;
/* Completes the context's operations, then frees it. SHMEM_CTX_INVALID: nothing happens. */
void shmem_ctx_destroy(shmem_ctx_t ctx) VKSHMEM_NOEXCEPT;
/* *team = the context's team (SHMEM_TEAM_WORLD for SHMEM_CTX_DEFAULT); nonzero for SHMEM_CTX_INVALID. */
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team) VKSHMEM_NOEXCEPT;
/* Sessions (OpenSHMEM 1.6): hints that a burst of operations on ctx begins and ends. options:
 * SHMEM_CTX_SESSION_BATCH (many small operations follow); config (read only for the fields
 * config_mask names, and may be NULL when it names none): total_ops, the number of operations
 * expected. They change no semantics; on SHMEM_CTX_INVALID they do nothing. */
typedef struct {
    size_t total_ops;
} shmem_ctx_session_config_t;
#define SHMEM_CTX_SESSION_BATCH (1L << 0)
#define SHMEM_CTX_SESSION_TOTAL_OPS (1L << 0)
void shmem_ctx_session_start(shmem_ctx_t ctx, long options, const shmem_ctx_session_config_t *config,
                             long config_mask) VKSHMEM_NOEXCEPT;
void shmem_ctx_session_stop(shmem_ctx_t ctx) VKSHMEM_NOEXCEPT;
void shmem_ctx_fence(shmem_ctx_t ctx) VKSHMEM_NOEXCEPT;
void shmem_ctx_quiet(shmem_ctx_t ctx) VKSHMEM_NOEXCEPT;
/* target_pes are numbered in the context's team. */
void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes) VKSHMEM_NOEXCEPT;
void shmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe) VKSHMEM_NOEXCEPT;
void shmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe) VKSHMEM_NOEXCEPT;

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
/* DEPRECATED (OpenSHMEM 1.0/1.1): shmem_malloc, shmem_free, shmem_realloc, shmem_align. */
void *shmalloc(size_t size) VKSHMEM_NOEXCEPT;
void shfree(void *ptr) VKSHMEM_NOEXCEPT;
void *shrealloc(void *ptr, size_t size) VKSHMEM_NOEXCEPT;
void *shmemalign(size_t alignment, size_t size) VKSHMEM_NOEXCEPT;
/* DEPRECATED: the session names of drafts of OpenSHMEM 1.6, which some implementations shipped:
 * shmem_session_start/stop are shmem_ctx_session_start/stop. */
typedef shmem_ctx_session_config_t shmem_session_config_t;
#define SHMEM_SESSION_SAME_AMO SHMEM_CTX_SESSION_BATCH
#define SHMEM_SESSION_TOTAL_OPS SHMEM_CTX_SESSION_TOTAL_OPS
void shmem_session_start(shmem_ctx_t ctx, long options, const shmem_session_config_t *config,
                         long config_mask) VKSHMEM_NOEXCEPT;
void shmem_session_stop(shmem_ctx_t ctx) VKSHMEM_NOEXCEPT;
/* DEPRECATED: shmem_my_pe, shmem_n_pes. */
int _my_pe(void) VKSHMEM_NOEXCEPT;
int _num_pes(void) VKSHMEM_NOEXCEPT;
#if !defined(__cplusplus) && (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L)
/* DEPRECATED: shmem_long_wait_until(ivar, SHMEM_CMP_NE, cmp_value): waits while
 * *ivar == cmp_value. */
void shmem_wait(long *ivar, long cmp_value) VKSHMEM_NOEXCEPT;
/* DEPRECATED: shmem_long_atomic_swap. */
long shmem_swap(long *target, long value, int pe) VKSHMEM_NOEXCEPT;
/* Under C11 shmem_wait and shmem_swap are the generic macros of OpenSHMEM 1.3 instead (any type of
 * their tables), and in C++ overloads, among them these signatures. */
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

/* shmem_sync(team): the team sync; shmem_sync(PE_start, logPE_stride, PE_size, pSync): the
 * deprecated active-set one. (shmem_sync)(...) always names the active-set function. */
#if defined(__cplusplus) && !defined(VKSHMEM_NO_CXX_OVERLOADS)
extern "C++" inline int shmem_sync(shmem_team_t team) VKSHMEM_NOEXCEPT { return shmem_team_sync(team); }
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
#define VKSHMEM_SYNC_PICK_(_1, _2, _3, _4, NAME, ...) NAME
#define shmem_sync(...) VKSHMEM_SYNC_PICK_(__VA_ARGS__, shmem_sync, 0, 0, shmem_team_sync, 0)(__VA_ARGS__)
#endif

#endif /* VKSHMEM_SHMEM_H */
