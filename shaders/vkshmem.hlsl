// SPDX-License-Identifier: BSL-1.0
/*
 * vkshmem.hlsl — the OpenSHMEM device library for HLSL compute shaders (compiled by glslang:
 * glslangValidator -D -V --target-env vulkan1.1 -S comp -e main -I shaders -I shaders/generated).
 *
 *   #include "vkshmem.hlsl"
 *   struct Push { uint64_t buf; };
 *   [[vk::push_constant]] ConstantBuffer<Push> pc;
 *   [numthreads(64, 1, 1)]
 *   void main(uint li : SV_GroupIndex) {
 *       vkshmem_init(li, 64);            // first, by every invocation, in uniform control flow
 *       shmem_int_p(pc.buf, 42, (shmem_my_pe() + 1) % shmem_n_pes());
 *   }
 *
 * Symmetric objects are named by the same uint64_t device addresses as in GLSL
 * (vkshmemx_device_address() on the host). HLSL through glslang has no buffer device addresses,
 * so the library reaches memory through the runtime's descriptor set (vkshmemx_descriptor_set(),
 * set VKSHMEM_HLSL_SET): binding 0 holds the device state block and the proxy ring, binding 1 what
 * the proxy writes for shaders, bindings 2..VKSHMEM_HLSL_HEAPS segments of the heaps this device
 * reaches (vkshmem_abi.h). Local buffers
 * of puts and gets must be symmetric objects of this PE. Heaps without a binding go through the
 * proxy. shaders/README.md documents every routine and how it differs from the GLSL library.
 *
 * This file is the hand-written core; teams, barriers and collectives are in vkshmem_coll.hlsl and
 * the typed routines are generated into vkshmem_typed.hlsl by tools/gen/gen.py, both included at
 * the end. Names ending in '_' are internal. glslang's HLSL front end constrains the code: no
 * methods on elements of buffer arrays (one binding per segment, selected by if-chains), no 64-bit
 * constructors or casts (conversions by assignment), no int64_t, no min/max on uint64_t, no 64-bit
 * atomics; and, as HLSL defines them, `&&`, `||` and `?:` evaluate both operands: a call with an
 * effect (an atomic, a wait, a load that may lie outside its buffer) goes behind an `if` instead.
 */
#ifndef VKSHMEM_HLSL
#define VKSHMEM_HLSL

#include "vkshmem_abi.h"

/* ---- Constants (the values of the host's shmem.h; generated from tools/gen/types.py) -------- */
#include "vkshmem_constants.h"

#define VKSHMEM_WAIT_ID_WAIT_UNTIL 1u
#define VKSHMEM_WAIT_ID_SIGNAL_WAIT_UNTIL 2u
#define VKSHMEM_WAIT_ID_BARRIER 3u
#define VKSHMEM_WAIT_ID_RING_SLOT 4u
#define VKSHMEM_WAIT_ID_PROXY_REPLY 5u
#define VKSHMEM_WAIT_ID_QUIET 6u
#define VKSHMEM_WAIT_ID_TEAM_SYNC 7u
#define VKSHMEM_WAIT_BUDGET_BIT 0x100u

/* The descriptor set the runtime binds (vkshmemx_kernel: 0), and how many heap bindings this
 * shader declares (1..16): every memory access tests them in turn, so fewer make shaders
 * compile faster on lavapipe; heaps whose segments lie beyond them go through the proxy. */
#ifndef VKSHMEM_HLSL_SET
#define VKSHMEM_HLSL_SET 0
#endif
#ifndef VKSHMEM_HLSL_HEAPS
#define VKSHMEM_HLSL_HEAPS 8
#endif
#if VKSHMEM_HLSL_HEAPS < 1 || VKSHMEM_HLSL_HEAPS > 16
#error "VKSHMEM_HLSL_HEAPS must be 1..16 (VKSHMEM_HLSL_HEAP_BINDINGS)"
#endif

/* Loop budget, back-off and copy unrolling: as in vkshmem.glsl (see shaders/README.md). */
#ifndef VKSHMEM_LOOP_BUDGET
#define VKSHMEM_LOOP_BUDGET 60000
#endif
#ifndef VKSHMEM_BUDGET_CELLS
#define VKSHMEM_BUDGET_CELLS 256u
#endif
#ifndef VKSHMEM_POLL_DELAY
#define VKSHMEM_POLL_DELAY 16
#endif
#ifndef VKSHMEM_POLL_DELAY_NOFENCE
#define VKSHMEM_POLL_DELAY_NOFENCE 256
#endif
#ifndef VKSHMEM_COPY_UNROLL
#define VKSHMEM_COPY_UNROLL 4
#endif
#ifndef VKSHMEM_PROXY_BATCH
#define VKSHMEM_PROXY_BATCH 8
#endif

/* The back-off steps (vkshmem_steps.h says why these two). */
#define VKSHMEM_DIV_ f = f / q + 1.0;
#define VKSHMEM_RSQ_ f = rsqrt(f + q);
#include "vkshmem_steps.h"
#if VKSHMEM_COPY_UNROLL == 2
#define VKSHMEM_REP_COPY_(S) VKSHMEM_REP2_(S)
#elif VKSHMEM_COPY_UNROLL == 4
#define VKSHMEM_REP_COPY_(S) VKSHMEM_REP4_(S)
#else
#error "VKSHMEM_COPY_UNROLL must be 2 or 4"
#endif

/* ---- Bindings ------------------------------------------------------------------------------- */
/* A buffer is named by its binding b: 0 the state block's allocation, 1.. heap segments.
 * VKSHMEM_ON_(X) runs X(buffer) for binding `b` (a variable at the place of use). */
[[vk::binding(0, VKSHMEM_HLSL_SET)]] globallycoherent RWByteAddressBuffer vkshmem_state_buf_;
/* This PE's AMO mailbox (vkshmem_mailbox.glsl): its request and its reply, which the waits serve
 * on GPUs. */
[[vk::binding(VKSHMEM_HLSL_MAILBOX_BINDING, VKSHMEM_HLSL_SET)]] globallycoherent RWByteAddressBuffer vkshmem_mailbox_buf_;
[[vk::binding(VKSHMEM_HLSL_REPLY_BINDING, VKSHMEM_HLSL_SET)]] globallycoherent RWByteAddressBuffer vkshmem_reply_buf_;
/* Binding 0's head (state, peer table, ring layout) and the heap map again, in device memory where
 * the device has memory the host maps there (vkshmem_abi.h): written once before any dispatch. */
[[vk::binding(VKSHMEM_HLSL_HEAD_BINDING, VKSHMEM_HLSL_SET)]] ByteAddressBuffer vkshmem_head_buf_;
/* The highest heap binding the runtime filled (VKSHMEM_SPEC_HLSL_BINDINGS): the tests of the
 * bindings above it fold away. */
[[vk::constant_id(VKSHMEM_SPEC_HLSL_BINDINGS)]] const uint vkshmem_bindings_ = VKSHMEM_HLSL_HEAP_BINDINGS;
#define VKSHMEM_HEAP_(i) [[vk::binding(i, VKSHMEM_HLSL_SET)]] globallycoherent RWByteAddressBuffer vkshmem_heap##i##_;
VKSHMEM_HEAP_(1)
#define VKSHMEM_ON1_(X) else if (b == 1u) { X(vkshmem_heap1_) }
#if VKSHMEM_HLSL_HEAPS >= 2
VKSHMEM_HEAP_(2)
#define VKSHMEM_ON2_(X) else if (b == 2u && 2u <= vkshmem_bindings_) { X(vkshmem_heap2_) }
#else
#define VKSHMEM_ON2_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 3
VKSHMEM_HEAP_(3)
#define VKSHMEM_ON3_(X) else if (b == 3u && 3u <= vkshmem_bindings_) { X(vkshmem_heap3_) }
#else
#define VKSHMEM_ON3_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 4
VKSHMEM_HEAP_(4)
#define VKSHMEM_ON4_(X) else if (b == 4u && 4u <= vkshmem_bindings_) { X(vkshmem_heap4_) }
#else
#define VKSHMEM_ON4_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 5
VKSHMEM_HEAP_(5)
#define VKSHMEM_ON5_(X) else if (b == 5u && 5u <= vkshmem_bindings_) { X(vkshmem_heap5_) }
#else
#define VKSHMEM_ON5_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 6
VKSHMEM_HEAP_(6)
#define VKSHMEM_ON6_(X) else if (b == 6u && 6u <= vkshmem_bindings_) { X(vkshmem_heap6_) }
#else
#define VKSHMEM_ON6_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 7
VKSHMEM_HEAP_(7)
#define VKSHMEM_ON7_(X) else if (b == 7u && 7u <= vkshmem_bindings_) { X(vkshmem_heap7_) }
#else
#define VKSHMEM_ON7_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 8
VKSHMEM_HEAP_(8)
#define VKSHMEM_ON8_(X) else if (b == 8u && 8u <= vkshmem_bindings_) { X(vkshmem_heap8_) }
#else
#define VKSHMEM_ON8_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 9
VKSHMEM_HEAP_(9)
#define VKSHMEM_ON9_(X) else if (b == 9u && 9u <= vkshmem_bindings_) { X(vkshmem_heap9_) }
#else
#define VKSHMEM_ON9_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 10
VKSHMEM_HEAP_(10)
#define VKSHMEM_ON10_(X) else if (b == 10u && 10u <= vkshmem_bindings_) { X(vkshmem_heap10_) }
#else
#define VKSHMEM_ON10_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 11
VKSHMEM_HEAP_(11)
#define VKSHMEM_ON11_(X) else if (b == 11u && 11u <= vkshmem_bindings_) { X(vkshmem_heap11_) }
#else
#define VKSHMEM_ON11_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 12
VKSHMEM_HEAP_(12)
#define VKSHMEM_ON12_(X) else if (b == 12u && 12u <= vkshmem_bindings_) { X(vkshmem_heap12_) }
#else
#define VKSHMEM_ON12_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 13
VKSHMEM_HEAP_(13)
#define VKSHMEM_ON13_(X) else if (b == 13u && 13u <= vkshmem_bindings_) { X(vkshmem_heap13_) }
#else
#define VKSHMEM_ON13_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 14
VKSHMEM_HEAP_(14)
#define VKSHMEM_ON14_(X) else if (b == 14u && 14u <= vkshmem_bindings_) { X(vkshmem_heap14_) }
#else
#define VKSHMEM_ON14_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 15
VKSHMEM_HEAP_(15)
#define VKSHMEM_ON15_(X) else if (b == 15u && 15u <= vkshmem_bindings_) { X(vkshmem_heap15_) }
#else
#define VKSHMEM_ON15_(X)
#endif
#if VKSHMEM_HLSL_HEAPS >= 16
VKSHMEM_HEAP_(16)
#define VKSHMEM_ON16_(X) else if (b == 16u && 16u <= vkshmem_bindings_) { X(vkshmem_heap16_) }
#else
#define VKSHMEM_ON16_(X)
#endif
#define VKSHMEM_ON_(X)                                                                                       \
    if (b == 0u) { X(vkshmem_state_buf_) }                                                                   \
    VKSHMEM_ON1_(X) VKSHMEM_ON2_(X) VKSHMEM_ON3_(X) VKSHMEM_ON4_(X) VKSHMEM_ON5_(X) VKSHMEM_ON6_(X)         \
    VKSHMEM_ON7_(X) VKSHMEM_ON8_(X) VKSHMEM_ON9_(X) VKSHMEM_ON10_(X) VKSHMEM_ON11_(X) VKSHMEM_ON12_(X)      \
    VKSHMEM_ON13_(X) VKSHMEM_ON14_(X) VKSHMEM_ON15_(X) VKSHMEM_ON16_(X)

/* ---- Per-invocation state (set by vkshmem_init) --------------------------------------------- */
static bool vkshmem_ok_ = false;
static int vkshmem_me_ = -1;
static int vkshmem_npes_ = 0;
static uint64_t vkshmem_hbase_ = 0;
static uint64_t vkshmem_hsize_ = 0;
static uint64_t vkshmem_dbase_ = 0;
static uint64_t vkshmem_dsize_ = 0;
static uint vkshmem_flags_ = 0u;
static uint vkshmem_polls_ = 1u;
static uint vkshmem_slots_ = 0u;
static uint vkshmem_pbytes_ = 0u;
static uint vkshmem_peers_off_ = 0u; /* byte offsets in binding 0 */
static uint vkshmem_ring_off_ = 0u;
static uint vkshmem_reqs_off_ = 0u;
static uint vkshmem_payload_off_ = 0u;
/* Offsets in binding 1 (vkshmem_abi.h) of the proxy's `completed` and answers: memory where a
 * running shader sees host writes (on NVIDIA, a running shader's atomic loads never see host writes
 * to host memory), or the state block's allocation again. */
static uint vkshmem_done_off_ = 0u;
/* The ring's head and the slots' answer flags, in binding 1 (vkshmem_ring_layout) */
static uint vkshmem_head_off_ = 0u, vkshmem_busy_off_ = 0u, vkshmem_busy_stride_ = 0u;
static uint vkshmem_ans_off_ = 0u;
static uint vkshmem_map_off_ = 0u;
static uint vkshmem_shift_ = 31u; /* heap segments: 1 << shift bytes */
static uint vkshmem_mask_ = 0x7fffffffu;
static uint vkshmem_nseg_h_ = 0u; /* segments of a host heap, of a device heap */
static uint vkshmem_nseg_d_ = 0u;
static float vkshmem_spin_ = 1.0;
static float vkshmem_spin_q_ = 3.0;
static float vkshmem_spin_stop_ = -1.0;
static bool vkshmem_has_mailbox_ = false; /* the waits serve the AMO mailboxes: */
static uint vkshmem_n_mailboxes_ = 0u;     /* the ring's list (vkshmem_mailbox_entry[]) */
static uint vkshmem_mailboxes_off_ = 0u;   /* at this offset in binding 0 */
static bool vkshmem_mb_tail_ = false;      /* the page after a device heap is in its last segment */
static bool vkshmem_pending_ = false;
static uint vkshmem_last_ticket_ = 0u;
static uint vkshmem_lane_ = 0u;  /* SV_GroupIndex */
static uint vkshmem_lanes_ = 1u; /* invocations per workgroup */
static uint vkshmem_cell_ = 0u;  /* this subgroup's loop budget cell */
/* The team records (vkshmem_coll.hlsl): team slot 0's device address (a team handle is a record's
 * address, as in GLSL) and offset in binding 0, which holds them; the state block's address. */
static uint64_t vkshmem_self_ = 0;
static uint64_t vkshmem_teams_ = 0;
static uint vkshmem_teams_off_ = 0u;
static uint vkshmem_team_stride_ = 0u;
static uint vkshmem_n_teams_ = 0u;

#if VKSHMEM_LOOP_BUDGET != 0
groupshared uint vkshmem_budget_[VKSHMEM_BUDGET_CELLS];
#endif

/* ---- 64-bit helpers (glslang: conversions by assignment only) ------------------------------- */
uint64_t vkshmem_u64_(uint v) { uint64_t r = v; return r; }
uint64_t vkshmem_join_(uint lo, uint hi) {
    uint64_t r = hi;
    return (r << 32) | vkshmem_u64_(lo);
}
uint vkshmem_hi_(uint64_t v) { return (uint)(v >> 32); }
uint64_t vkshmem_min64_(uint64_t a, uint64_t b) { return a < b ? a : b; }
uint vkshmem_clamp32_(uint64_t v) { return vkshmem_hi_(v) != 0u ? 0xffffffffu : (uint)v; }

/* ---- Memory access by (first binding, byte offset) ------------------------------------------ */
/* bf: the binding of a heap's first segment (the segment of `off` is bf + off >> shift), or 0
 * for binding 0 (offsets within the state block's allocation). */
uint vkshmem_bind_(uint bf, uint64_t off) { return bf == 0u ? 0u : bf + (uint)(off >> vkshmem_shift_); }
uint vkshmem_boff_(uint bf, uint64_t off) { return bf == 0u ? (uint)off : ((uint)off & vkshmem_mask_); }

uint vkshmem_ld_(uint bf, uint64_t off) {
    uint b = vkshmem_bind_(bf, off), o = vkshmem_boff_(bf, off), v = 0u;
#define VKSHMEM_X_(B) v = B.Load(o);
    VKSHMEM_ON_(VKSHMEM_X_)
#undef VKSHMEM_X_
    return v;
}
void vkshmem_st_(uint bf, uint64_t off, uint v) {
    uint b = vkshmem_bind_(bf, off), o = vkshmem_boff_(bf, off);
#define VKSHMEM_X_(B) B.Store(o, v);
    VKSHMEM_ON_(VKSHMEM_X_)
#undef VKSHMEM_X_
}
/* 16 bytes at a 16-byte aligned offset (never across a segment: segments are aligned beyond). */
uint4 vkshmem_ld4_(uint bf, uint64_t off) {
    uint b = vkshmem_bind_(bf, off), o = vkshmem_boff_(bf, off);
    uint4 v = uint4(0u, 0u, 0u, 0u);
#define VKSHMEM_X_(B) v = B.Load4(o);
    VKSHMEM_ON_(VKSHMEM_X_)
#undef VKSHMEM_X_
    return v;
}
void vkshmem_st4_(uint bf, uint64_t off, uint4 v) {
    uint b = vkshmem_bind_(bf, off), o = vkshmem_boff_(bf, off);
#define VKSHMEM_X_(B) B.Store4(o, v);
    VKSHMEM_ON_(VKSHMEM_X_)
#undef VKSHMEM_X_
}
/* Operation op (VKSHMEM_AMO_*) with operands x, c on word o of buffer B; the old value into r. */
#define VKSHMEM_AMO_SWITCH_(B, r)                                                                            \
    switch (op) {                                                                                            \
    case VKSHMEM_AMO_FETCH: B.InterlockedOr(o, 0u, r); break;                                                \
    case VKSHMEM_AMO_SET:                                                                                    \
    case VKSHMEM_AMO_SWAP: B.InterlockedExchange(o, x, r); break;                                            \
    case VKSHMEM_AMO_COMPARE_SWAP: B.InterlockedCompareExchange(o, c, x, r); break;                          \
    case VKSHMEM_AMO_ADD: B.InterlockedAdd(o, x, r); break;                                                  \
    case VKSHMEM_AMO_AND: B.InterlockedAnd(o, x, r); break;                                                  \
    case VKSHMEM_AMO_OR: B.InterlockedOr(o, x, r); break;                                                    \
    case VKSHMEM_AMO_XOR: B.InterlockedXor(o, x, r); break;                                                  \
    }
/* One 32-bit atomic (op: VKSHMEM_AMO_*; FETCH is an atomic load, as an OR of 0). Device scope,
 * relaxed. Polls use it too: HLSL has no atomic load, and a plain load in a loop may be hoisted. */
uint vkshmem_atomic_(uint bf, uint64_t off, uint op, uint x, uint c) {
    uint b = vkshmem_bind_(bf, off), o = vkshmem_boff_(bf, off), r = 0u;
#define VKSHMEM_X_(B) VKSHMEM_AMO_SWITCH_(B, r)
    VKSHMEM_ON_(VKSHMEM_X_)
#undef VKSHMEM_X_
    return r;
}
uint vkshmem_ald_(uint bf, uint64_t off) { return vkshmem_atomic_(bf, off, VKSHMEM_AMO_FETCH, 0u, 0u); }
/* State-block words (binding 0). */
uint vkshmem_sld_(uint off) { return vkshmem_state_buf_.Load(off); }
uint64_t vkshmem_sld64_(uint off) {
    uint2 v = vkshmem_state_buf_.Load2(off);
    return vkshmem_join_(v.x, v.y);
}
/* Words of binding 0's head (offsets as there), read from its copy. */
uint vkshmem_hld_(uint off) { return vkshmem_head_buf_.Load(off); }
uint64_t vkshmem_hld64_(uint off) {
    uint2 v = vkshmem_head_buf_.Load2(off);
    return vkshmem_join_(v.x, v.y);
}
uint vkshmem_sald_(uint off) {
    uint r;
    vkshmem_state_buf_.InterlockedOr(off, 0u, r);
    return r;
}
void vkshmem_sst_(uint off, uint v) { vkshmem_state_buf_.Store(off, v); }
void vkshmem_sst64_(uint off, uint64_t v) { vkshmem_state_buf_.Store2(off, uint2((uint)v, vkshmem_hi_(v))); }
void vkshmem_sxchg_(uint off, uint v) {
    uint r;
    vkshmem_state_buf_.InterlockedExchange(off, v, r);
}

/* A 64-bit value read with 32-bit atomics: high, low, high again, and the low word once more
 * when the high word changed in between, so a value that changes at most once meanwhile is
 * never seen torn. */
uint64_t vkshmem_ald64_(uint bf, uint64_t off) {
    uint h1 = vkshmem_ald_(bf, off + 4u);
    uint lo = vkshmem_ald_(bf, off);
    uint h2 = vkshmem_ald_(bf, off + 4u);
    if (h1 != h2) lo = vkshmem_ald_(bf, off);
    return vkshmem_join_(lo, h2);
}

/* ---- Errors --------------------------------------------------------------------------------- */
void vkshmem_error_(uint code, uint info) {
    if (!vkshmem_ok_) return;
    uint old;
    vkshmem_state_buf_.InterlockedCompareExchange(68u, 0u, code, old);
    if (old == 0u) vkshmem_state_buf_.Store(72u, info);
}

/* ---- Ordering ------------------------------------------------------------------------------- */
#ifdef VKSHMEM_DEVICE_FENCES
static const bool vkshmem_fences_ = VKSHMEM_DEVICE_FENCES != 0;
#else
[[vk::constant_id(VKSHMEM_SPEC_DEVICE_FENCES)]] const bool vkshmem_fences_ = true;
#endif
void vkshmem_fence_() {
    if (vkshmem_fences_) DeviceMemoryBarrier();
}

/* ---- Loop budget (per subgroup; see vkshmem.glsl) ------------------------------------------- */
/* As in vkshmem.glsl it counts only where the pipeline was specialised without device fences (the
 * driver with the loop cap, lavapipe); elsewhere the budget is unlimited. The cell is read and
 * written with atomics by one invocation of the subgroup: no barrier, and whichever invocation is
 * first next time sees the last value. */
uint vkshmemx_budget_left() {
#if VKSHMEM_LOOP_BUDGET != 0
    if (vkshmem_fences_) return 0xffffffffu;
    uint v = 0u;
    if (WaveIsFirstLane()) InterlockedOr(vkshmem_budget_[vkshmem_cell_], 0u, v);
    return WaveReadLaneFirst(v);
#else
    return 0xffffffffu;
#endif
}
bool vkshmem_reserve_(uint iters) {
#if VKSHMEM_LOOP_BUDGET != 0
    if (vkshmem_fences_) return true;
    uint left = vkshmemx_budget_left();
    bool fits = iters <= left;
    uint m = WaveActiveMax(fits ? iters : 0u);
    uint old;
    if (WaveIsFirstLane()) InterlockedExchange(vkshmem_budget_[vkshmem_cell_], left - m, old);
    return fits;
#else
    return true;
#endif
}
void vkshmem_charge_(uint iters) {
#if VKSHMEM_LOOP_BUDGET != 0
    if (vkshmem_fences_) return;
    uint left = vkshmemx_budget_left();
    uint m = WaveActiveMax(iters);
    uint old;
    if (WaveIsFirstLane()) InterlockedExchange(vkshmem_budget_[vkshmem_cell_], left > m ? left - m : 0u, old);
#endif
}
bool vkshmemx_budget_charge(uint iters) { return vkshmem_reserve_(iters); }

uint vkshmem_wait_iters_() {
    uint left = vkshmemx_budget_left();
    uint keep = left > 3u ? left - 3u : 0u;
    return vkshmem_polls_ < keep ? vkshmem_polls_ : keep;
}

void vkshmem_mailbox_serve_(); /* (below, with the address translation) */
uint vkshmem_first_binding_(int pe, uint space);

/* Keep the lavapipe branch as it is: with the mailbox serving (even reduced to one load and a
 * conditional return) compiled into it, lavapipe (Mesa 22.3) lost the invocations of a kernel
 * that called put_signal through the proxy on divergent branches: nothing after those calls ran
 * and no error was recorded (test_hlsl.cpp's 8-byte signal test, VKSHMEM_FORCE_PROXY=1). There
 * the serving is not needed: the proxy's atomics on a CPU device's heap are CPU atomics. */
bool vkshmem_backoff_() {
    float f = vkshmem_spin_, q = vkshmem_spin_q_;
    if (vkshmem_fences_) {
        if (vkshmem_has_mailbox_) vkshmem_mailbox_serve_();
        VKSHMEM_STEPS_(VKSHMEM_POLL_DELAY, VKSHMEM_DIV_)
    } else {
        VKSHMEM_STEPS_(VKSHMEM_POLL_DELAY_NOFENCE, VKSHMEM_RSQ_)
    }
    vkshmem_spin_ = f;
    return f == vkshmem_spin_stop_;
}

void vkshmem_wait_failed_(uint code, uint id, uint ran) {
    vkshmem_error_(code, id | (ran < vkshmem_polls_ ? VKSHMEM_WAIT_BUDGET_BIT : 0u));
}

/* ---- Setup and queries ---------------------------------------------------------------------- */
/* Call first in main(), from every invocation, in uniform control flow: local_index is
 * SV_GroupIndex, wg_size the workgroup's invocation count (HLSL has no global access to them). */
void vkshmem_init(uint local_index, uint wg_size) {
    vkshmem_ok_ = false;
    vkshmem_me_ = -1;
    vkshmem_npes_ = 0;
    vkshmem_has_mailbox_ = false;
    vkshmem_n_mailboxes_ = 0u;
    vkshmem_pending_ = false;
    vkshmem_last_ticket_ = 0u;
    vkshmem_teams_ = 0u;
    vkshmem_n_teams_ = 0u;
    vkshmem_lane_ = local_index;
    vkshmem_lanes_ = wg_size > 0u ? wg_size : 1u;
    vkshmem_cell_ = (WaveReadLaneFirst(local_index) / WaveGetLaneCount()) & (VKSHMEM_BUDGET_CELLS - 1u);
    if (vkshmem_hld_(0u) == VKSHMEM_ABI_MAGIC && vkshmem_hld_(4u) == VKSHMEM_ABI_VERSION) {
        uint64_t self = vkshmem_hld64_(80u);
        vkshmem_self_ = self;
        vkshmem_me_ = asint(vkshmem_hld_(8u));
        vkshmem_npes_ = asint(vkshmem_hld_(12u));
        vkshmem_hbase_ = vkshmem_hld64_(16u);
        vkshmem_hsize_ = vkshmem_hld64_(24u);
        vkshmem_dbase_ = vkshmem_hld64_(32u);
        vkshmem_dsize_ = vkshmem_hld64_(40u);
        vkshmem_peers_off_ = (uint)(vkshmem_hld64_(48u) - self);
        vkshmem_flags_ = vkshmem_hld_(64u);
        uint polls = vkshmem_hld_(76u);
        vkshmem_polls_ = polls > 1u ? polls : 1u;
        vkshmem_shift_ = vkshmem_hld_(88u);
        vkshmem_mask_ = (1u << vkshmem_shift_) - 1u;
        vkshmem_map_off_ = vkshmem_hld_(92u);
        uint64_t teams = vkshmem_hld64_(96u);
        if (teams != 0u) {
            vkshmem_teams_ = teams;
            vkshmem_teams_off_ = (uint)(teams - self);
            vkshmem_team_stride_ = vkshmem_hld_(104u);
            vkshmem_n_teams_ = vkshmem_hld_(108u);
        }
        vkshmem_nseg_h_ = (uint)((vkshmem_hsize_ + vkshmem_u64_(vkshmem_mask_)) >> vkshmem_shift_);
        vkshmem_nseg_d_ = (uint)((vkshmem_dsize_ + vkshmem_u64_(vkshmem_mask_)) >> vkshmem_shift_);
        vkshmem_spin_ = float(vkshmem_polls_);
        vkshmem_spin_q_ = float(vkshmem_polls_ | 3u);
        vkshmem_spin_stop_ = -float(VKSHMEM_ABI_MAGIC);
        vkshmem_slots_ = 0u;
        vkshmem_pbytes_ = 0u;
        uint64_t ring = vkshmem_hld64_(56u);
        if (ring != 0u) {
            vkshmem_ring_off_ = (uint)(ring - self);
            vkshmem_slots_ = vkshmem_hld_(vkshmem_ring_off_ + 8u);
            vkshmem_pbytes_ = vkshmem_hld_(vkshmem_ring_off_ + 12u);
            vkshmem_reqs_off_ = (uint)(vkshmem_hld64_(vkshmem_ring_off_ + 16u) - self);
            vkshmem_payload_off_ = (uint)(vkshmem_hld64_(vkshmem_ring_off_ + 24u) - self);
            uint64_t done_at = vkshmem_hld64_(vkshmem_ring_off_ + 32u);
            uint64_t answers = vkshmem_hld64_(vkshmem_ring_off_ + 40u);
            if (done_at != 0u && answers != 0u) {
                vkshmem_done_off_ = 0u;
                vkshmem_ans_off_ = (uint)(answers - done_at);
                vkshmem_head_off_ = VKSHMEM_RING_HEAD_AT;
                vkshmem_busy_off_ = VKSHMEM_RING_BUSY_AT;
                vkshmem_busy_stride_ = 4u;
            } else {
                vkshmem_done_off_ = vkshmem_ring_off_ + 4u;
                vkshmem_ans_off_ = vkshmem_payload_off_;
                vkshmem_head_off_ = vkshmem_ring_off_;
                vkshmem_busy_off_ = vkshmem_reqs_off_ + 48u;
                vkshmem_busy_stride_ = 64u;
            }
            vkshmem_n_mailboxes_ = vkshmem_hld_(vkshmem_ring_off_ + 56u);
            vkshmem_has_mailbox_ = vkshmem_n_mailboxes_ != 0u;
            if (vkshmem_has_mailbox_) vkshmem_mailboxes_off_ = (uint)(vkshmem_hld64_(vkshmem_ring_off_ + 48u) - self);
            vkshmem_mb_tail_ = (uint)((vkshmem_dsize_ + 47u) >> vkshmem_shift_) < vkshmem_nseg_d_;
            if (((vkshmem_payload_off_ | vkshmem_ans_off_ | vkshmem_pbytes_) & 15u) != 0u || vkshmem_pbytes_ == 0u ||
                vkshmem_slots_ == 0u || (vkshmem_slots_ & (vkshmem_slots_ - 1u)) != 0u)
                vkshmem_slots_ = 0u;
        }
        vkshmem_ok_ = true;
    }
#if VKSHMEM_LOOP_BUDGET != 0
    uint old;
    if (!vkshmem_fences_ && WaveIsFirstLane())
        InterlockedExchange(vkshmem_budget_[vkshmem_cell_], uint(VKSHMEM_LOOP_BUDGET), old);
#endif
}

int shmem_my_pe() { return vkshmem_me_; }
int shmem_n_pes() { return vkshmem_npes_; }

/* ---- Address translation -------------------------------------------------------------------- */
#define VKSHMEM_ROUTE_NONE_ 0u
#define VKSHMEM_ROUTE_DIRECT_ 1u
#define VKSHMEM_ROUTE_PROXY_ 2u

/* The heap (0 host, 1 device) holding [addr, addr + bytes) of this PE, and the offset; false
 * when none does. */
bool vkshmem_heap_of_(uint64_t addr, uint64_t bytes, out uint space, out uint64_t off) {
    space = 0u;
    off = addr - vkshmem_hbase_;
    if (vkshmem_hbase_ != 0u && off < vkshmem_hsize_ && bytes <= vkshmem_hsize_ - off) return true;
    space = 1u;
    off = addr - vkshmem_dbase_;
    return vkshmem_dbase_ != 0u && off < vkshmem_dsize_ && bytes <= vkshmem_dsize_ - off;
}

/* The first binding of (pe, space), or 0 when it has none within this shader's bindings. */
uint vkshmem_first_binding_(int pe, uint space) {
    uint first = vkshmem_hld_(vkshmem_map_off_ + (uint(pe) * 2u + space) * 4u);
    uint nseg = space == 0u ? vkshmem_nseg_h_ : vkshmem_nseg_d_;
    if (first == VKSHMEM_HLSL_NO_SLOT || first == 0u || first + nseg - 1u > uint(VKSHMEM_HLSL_HEAPS)) return 0u;
    return first;
}

/* Where [addr, addr + bytes) of PE pe is: DIRECT (binding bf, offset off), PROXY, or NONE (bad PE
 * or address; recorded as an error when report). For an AMO (amo), PROXY also on a host heap
 * where this node's PEs use several GPUs: the proxies' CPU atomics are atomic with each other,
 * two GPUs' atomics there are not (VKSHMEM_FLAG_HOST_AMO_PROXY). */
uint vkshmem_route_(uint64_t addr, uint64_t bytes, int pe, bool report, out uint bf, out uint64_t off,
                    bool amo = false) {
    bf = 0u;
    off = 0u;
    if (!vkshmem_ok_) return VKSHMEM_ROUTE_NONE_;
    if (pe < 0 || pe >= vkshmem_npes_) {
        if (report) vkshmem_error_(VKSHMEM_ERR_BAD_PE, uint(pe));
        return VKSHMEM_ROUTE_NONE_;
    }
    uint space;
    if (!vkshmem_heap_of_(addr, bytes, space, off)) {
        if (report) vkshmem_error_(VKSHMEM_ERR_NOT_SYMMETRIC, (uint)addr);
        return VKSHMEM_ROUTE_NONE_;
    }
    uint64_t base = vkshmem_hld64_(vkshmem_peers_off_ + uint(pe) * 16u + space * 8u);
    if (base != 0u) bf = vkshmem_first_binding_(pe, space);
    if (bf == 0u || (vkshmem_flags_ & VKSHMEM_FLAG_FORCE_PROXY) != 0u ||
        (amo && space == 0u && (vkshmem_flags_ & VKSHMEM_FLAG_HOST_AMO_PROXY) != 0u)) {
        bf = 0u;
        if (vkshmem_slots_ == 0u) {
            if (report) vkshmem_error_(VKSHMEM_ERR_PROXY_TIMEOUT, 0u);
            return VKSHMEM_ROUTE_NONE_;
        }
        return VKSHMEM_ROUTE_PROXY_;
    }
    return VKSHMEM_ROUTE_DIRECT_;
}

/* This PE's own [addr, addr + bytes) (the local side of a transfer, waits): always direct, also
 * under VKSHMEM_FORCE_PROXY. False (recorded) when it is in neither heap or has no binding. */
bool vkshmem_local_(uint64_t addr, uint64_t bytes, out uint bf, out uint64_t off) {
    bf = 0u;
    uint space;
    if (!vkshmem_ok_) return false;
    if (vkshmem_heap_of_(addr, bytes, space, off)) bf = vkshmem_first_binding_(vkshmem_me_, space);
    if (bf == 0u) vkshmem_error_(VKSHMEM_ERR_NOT_SYMMETRIC, (uint)addr);
    return bf != 0u;
}

/* The AMO mailboxes (vkshmem_mailbox.glsl, same protocol): a waiting invocation carries out the
 * atomics that hosts posted for this GPU's device heaps, which the hosts' own dispatches of them
 * would wait for on NVIDIA: this PE's mailbox (bindings 17 and 18), then those of the PEs that
 * share this GPU and its heaps (the ring's list), each where its request (after the PE's device
 * heap), its reply (in the PE's host heap) and the atomic's target (a device heap) have bindings
 * here. glslang's HLSL has no 64-bit Interlocked, so each atomic runs as a compare-and-swap of
 * its (low) word from the value read: it fails, and hands the atomic back to the next poll or the
 * sweeper, if the word changed in between; an 8-byte one runs here only where it leaves the high
 * word as it is (a signal set below 2^32 or to a value of the same high word, an add without
 * carry, a failed compare, a fetch), any other is the runtime's sweeper kernel's
 * (shaders/README.md).
 * The drivers inline this into every wait, so it is written as a loop of steps that each make one
 * access through one switch over the bindings (and the runtime specialises away the bindings it
 * does not fill: VKSHMEM_SPEC_HLSL_BINDINGS). First compiles of the test kernel with every atomic
 * on an H100: 9.8 s without serving, 39.5 s serving this PE's mailbox only (as before), 133 s with
 * every access written out where it happens, 81 s as this loop, 41-55 s specialised at 1-2 PEs;
 * lavapipe's test of it ran 151 s written out, 82 s as the loop (it drops the serving, which
 * CPU devices do not need, but only after inlining it). Define VKSHMEM_HLSL_NO_MAILBOX before the
 * include to leave it out of kernels that never wait for such an atomic. */
#ifndef VKSHMEM_HLSL_NO_MAILBOX
/* X(buffer) for binding b of a mailbox's words: this PE's request and reply, or a heap segment. */
#define VKSHMEM_ON_MB_(X)                                                                                    \
    if (b == VKSHMEM_HLSL_MAILBOX_BINDING) { X(vkshmem_mailbox_buf_) }                                       \
    else if (b == VKSHMEM_HLSL_REPLY_BINDING) { X(vkshmem_reply_buf_) }                                      \
    VKSHMEM_ON2_(X) VKSHMEM_ON3_(X) VKSHMEM_ON4_(X) VKSHMEM_ON5_(X) VKSHMEM_ON6_(X) VKSHMEM_ON7_(X)         \
    VKSHMEM_ON8_(X) VKSHMEM_ON9_(X) VKSHMEM_ON10_(X) VKSHMEM_ON11_(X) VKSHMEM_ON12_(X) VKSHMEM_ON13_(X)     \
    VKSHMEM_ON14_(X) VKSHMEM_ON15_(X) VKSHMEM_ON16_(X)
#define VKSHMEM_MB_LOAD_ 0u /* 16 bytes */
#define VKSHMEM_MB_CAS_ 1u  /* compare c, swap in x; the old word (c == x: an atomic load) */
#define VKSHMEM_MB_STORE_ 2u /* (c, x) as 8 bytes */
uint4 vkshmem_mb_access_(uint b, uint o, uint kind, uint c, uint x) {
    uint4 v = uint4(0u, 0u, 0u, 0u);
    uint r = 0u;
#define VKSHMEM_X_(B)                                                                                        \
    if (kind == VKSHMEM_MB_LOAD_) v = B.Load4(o);                                                            \
    else if (kind == VKSHMEM_MB_CAS_) B.InterlockedCompareExchange(o, c, x, r);                              \
    else B.Store2(o, uint2(c, x));
    VKSHMEM_ON_MB_(VKSHMEM_X_)
#undef VKSHMEM_X_
    if (kind == VKSHMEM_MB_CAS_) v.x = r;
    return v;
}
#endif
void vkshmem_mailbox_serve_() {
#ifndef VKSHMEM_HLSL_NO_MAILBOX
    /* Mailbox k's request at ro of binding rb (its claim word `taken` at ro + 4), its reply at po
     * of binding pb; its atomic's word at o of binding tb. */
    uint k = 0u, step = 0u, rb = 0u, ro = 0u, pb = 0u, po = 0u, tb = 0u, o = 0u;
    uint p = 0u, w = 0u, op = 0u, x = 0u, xh = 0u, c = 0u, ch = 0u, l = 0u, h = 0u, nl = 0u;
    while (k < vkshmem_n_mailboxes_) {
        uint b = rb, at = ro, kind = VKSHMEM_MB_LOAD_, c0 = 0u, x0 = 0u;
        if (step == 0u) { /* find mailbox k; read posted, taken */
            if (k == 0u) {
                rb = VKSHMEM_HLSL_MAILBOX_BINDING;
                ro = 0u;
                pb = VKSHMEM_HLSL_REPLY_BINDING;
                po = 0u;
            } else { /* vkshmem_mailbox_entry k: the request is the copy after its PE's device heap */
                uint e = vkshmem_mailboxes_off_ + k * 32u;
                int pe = asint(vkshmem_sld_(e + 24u));
                uint rf = vkshmem_first_binding_(pe, 1u), pf = vkshmem_first_binding_(pe, 0u);
                uint64_t ra = vkshmem_sld64_(e + 16u) - vkshmem_hld64_(vkshmem_peers_off_ + uint(pe) * 16u);
                if (rf == 0u || pf == 0u || !vkshmem_mb_tail_ || ra >= vkshmem_hsize_) {
                    ++k;
                    continue;
                }
                rb = vkshmem_bind_(rf, vkshmem_dsize_);
                ro = vkshmem_boff_(rf, vkshmem_dsize_);
                pb = vkshmem_bind_(pf, ra);
                po = vkshmem_boff_(pf, ra);
            }
            b = rb;
            at = ro;
        } else if (step <= 3u) { /* after the barrier: the request, 16 bytes at a time */
            at = ro + (step - 1u) * 16u;
        } else if (step <= 5u) { /* the atomic's word, low then high */
            b = tb;
            at = o + (step - 4u) * 4u;
            kind = VKSHMEM_MB_CAS_;
        } else if (step == 6u) { /* claim it */
            at = ro + 4u;
            kind = VKSHMEM_MB_CAS_;
            c0 = p - 1u;
            x0 = p;
        } else if (step == 7u) { /* carry it out */
            b = tb;
            at = o;
            kind = VKSHMEM_MB_CAS_;
            c0 = l;
            x0 = nl;
        } else if (step == 8u) { /* the word changed since it was read: hand it back */
            at = ro + 4u;
            kind = VKSHMEM_MB_CAS_;
            c0 = p;
            x0 = p - 1u;
        } else { /* the reply (host memory, plain stores: vkshmem_abi.h): result, then done */
            b = pb;
            at = step == 9u ? po + 8u : po;
            kind = VKSHMEM_MB_STORE_;
            c0 = step == 9u ? l : p;
            x0 = step == 9u ? h : 0u;
        }
        uint4 v = vkshmem_mb_access_(b, at, kind, c0, x0);
        uint next = step + 1u;
        if (step == 0u) {
            p = v.x;
            if (p == 0u || v.y != p - 1u) next = 11u; /* nothing posted, or taken */
            else DeviceMemoryBarrier();
        } else if (step == 1u) {
            int pe = asint(v.z);
            w = v.w >> 8;
            op = v.w & 255u;
            tb = 0u;
            if ((w == 4u || w == 8u) && pe >= 0 && pe < vkshmem_npes_) tb = vkshmem_first_binding_(pe, 1u);
            if (tb == 0u) next = 11u;
        } else if (step == 2u) {
            uint64_t toff = vkshmem_join_(v.z, v.w);
            if (toff >= vkshmem_dsize_) next = 11u; /* (aligned to its width, as the heap's size is) */
            o = vkshmem_boff_(tb, toff);
            tb = vkshmem_bind_(tb, toff);
        } else if (step == 3u) {
            x = v.x;
            xh = w == 8u ? v.y : 0u;
            c = v.z;
            ch = w == 8u ? v.w : 0u;
            h = 0u;
        } else if (step == 4u) {
            l = v.x;
            if (w == 4u) next = 6u;
        } else if (step == 5u) {
            h = v.x;
        } else if (step == 6u) {
            if (v.x != p - 1u) next = 11u; /* another took it */
            else DeviceMemoryBarrier();
        } else if (step == 7u) {
            if (v.x == l) next = 9u;
        } else if (step == 8u) {
            next = 11u;
        } else if (step == 9u) {
            DeviceMemoryBarrier();
        }
        if (next == 6u) { /* before the claim: the new value, where this library can make it */
            uint nh = h;
            nl = l;
            if (op == VKSHMEM_AMO_SET || op == VKSHMEM_AMO_SWAP ||
                (op == VKSHMEM_AMO_COMPARE_SWAP && l == c && h == ch)) {
                nl = x;
                nh = xh;
            } else if (op == VKSHMEM_AMO_ADD) {
                nl = l + x;
                nh = h + xh + (nl < l ? 1u : 0u);
            } else if (op == VKSHMEM_AMO_AND) {
                nl = l & x;
                nh = h & xh;
            } else if (op == VKSHMEM_AMO_OR) {
                nl = l | x;
                nh = h | xh;
            } else if (op == VKSHMEM_AMO_XOR) {
                nl = l ^ x;
                nh = h ^ xh;
            }
            if (w == 8u && nh != h) next = 11u; /* needs a 64-bit atomic: the sweeper's */
        }
        if (next >= 11u) {
            ++k;
            next = 0u;
        }
        step = next;
    }
#endif
}

/* The device address of `dest` on PE pe when this shader reaches it directly (through its
 * bindings), else 0. HLSL cannot dereference it: it says whether the operations on it are
 * direct, and GLSL shaders or the host may use it. */
uint64_t shmem_ptr(uint64_t dest, int pe) {
    uint bf;
    uint64_t off;
    if (vkshmem_route_(dest, 1u, pe, false, bf, off) != VKSHMEM_ROUTE_DIRECT_) return 0u;
    uint space = dest - vkshmem_hbase_ == off ? 0u : 1u;
    return vkshmem_hld64_(vkshmem_peers_off_ + uint(pe) * 16u + space * 8u) + off;
}

/* Plain loads and stores of this PE's symmetric memory by device address (HLSL cannot
 * dereference addresses): 4 or 8 bytes, naturally aligned. Not atomic. */
uint vkshmemx_load32(uint64_t addr) {
    uint bf;
    uint64_t off;
    if (!vkshmem_local_(addr, 4u, bf, off)) return 0u;
    return vkshmem_ld_(bf, off);
}
uint64_t vkshmemx_load64(uint64_t addr) {
    uint bf;
    uint64_t off;
    if (!vkshmem_local_(addr, 8u, bf, off)) return 0u;
    return vkshmem_join_(vkshmem_ld_(bf, off), vkshmem_ld_(bf, off + 4u));
}
void vkshmemx_store32(uint64_t addr, uint v) {
    uint bf;
    uint64_t off;
    if (vkshmem_local_(addr, 4u, bf, off)) vkshmem_st_(bf, off, v);
}
void vkshmemx_store64(uint64_t addr, uint64_t v) {
    uint bf;
    uint64_t off;
    if (!vkshmem_local_(addr, 8u, bf, off)) return;
    vkshmem_st_(bf, off, (uint)v);
    vkshmem_st_(bf, off + 4u, vkshmem_hi_(v));
}

/* ---- Byte-exact copies ---------------------------------------------------------------------- */
/* k (1..3) bytes at (bs, s), in the low bits; reads only words holding at least one of them. */
uint vkshmem_load_bytes_(uint bs, uint64_t s, uint k) {
    uint64_t sa = s & ~3ul;
    uint sh = ((uint)s & 3u) * 8u;
    uint lo = vkshmem_ld_(bs, sa);
    uint hi = vkshmem_ld_(bs, sa + (sh + 8u * k > 32u ? 4u : 0u));
    return sh == 0u ? lo : (lo >> sh) | (hi << (32u - sh));
}

/* k (1..3) bytes from (bs, s) to (bd, d), within one word of d, without touching its other
 * bytes (atomic and, then or: concurrent writers of the neighbouring bytes are safe). */
void vkshmem_store_part_(uint bd, uint64_t d, uint bs, uint64_t s, uint k) {
    uint v = vkshmem_load_bytes_(bs, s, k);
    uint dsh = ((uint)d & 3u) * 8u;
    uint mask = ((1u << (8u * k)) - 1u) << dsh;
    uint64_t w = d & ~3ul;
    vkshmem_atomic_(bd, w, VKSHMEM_AMO_AND, ~mask, 0u);
    vkshmem_atomic_(bd, w, VKSHMEM_AMO_OR, (v << dsh) & mask, 0u);
}

/* How a copy of n bytes to d from s is cut: head bytes (0..3) up to d's first word boundary,
 * whole destination words (each assembled from the one or two source words holding its bytes;
 * sh: the source's misalignment in bits), tail bytes (0..3). Alignments of offsets are those of
 * the addresses (segments and heaps are aligned far beyond 4). The loop moves
 * VKSHMEM_COPY_UNROLL words per iteration and invocation, `lanes` invocations sharing it. */
struct vkshmem_plan_ {
    uint head;
    uint tail;
    uint sh;
    uint64_t words;
    uint iters;
};

vkshmem_plan_ vkshmem_plan_copy_(uint64_t d, uint64_t s, uint64_t n, uint lanes) {
    vkshmem_plan_ p;
    uint64_t head = vkshmem_min64_(n, vkshmem_u64_((4u - ((uint)d & 3u)) & 3u));
    p.head = (uint)head;
    uint64_t m = n - head;
    p.words = m >> 2;
    p.tail = (uint)m & 3u;
    p.sh = (((uint)s + p.head) & 3u) * 8u;
    uint64_t per = vkshmem_u64_(uint(VKSHMEM_COPY_UNROLL) * (lanes > 0u ? lanes : 1u));
    p.iters = vkshmem_clamp32_((p.words + per - 1u) / per);
    return p;
}

uint vkshmem_plan_cost_(vkshmem_plan_ p) { return p.iters >= 0xfffffff0u ? 0xffffffffu : p.iters + 6u; }

void vkshmem_copy_word_(vkshmem_plan_ p, uint bd, uint64_t d, uint bs, uint64_t s, uint64_t idx) {
    if (idx < p.words) {
        uint64_t o = idx << 2;
        uint64_t a = (s + o) & ~3ul;
        uint lo = vkshmem_ld_(bs, a);
        uint hi = vkshmem_ld_(bs, a + (p.sh != 0u ? 4u : 0u));
        vkshmem_st_(bd, d + o, p.sh == 0u ? lo : (lo >> p.sh) | (hi << (32u - p.sh)));
    }
}

void vkshmem_copy_unit_(uint64_t units, uint bd, uint64_t d, uint bs, uint64_t s, uint64_t idx) {
    if (idx < units) {
        uint64_t o = idx << 4;
        vkshmem_st4_(bd, d + o, vkshmem_ld4_(bs, s + o));
    }
}

/* Runs a planned copy (its budget reserved): this invocation's share. Where both sides' words
 * are 16-byte aligned, in 16-byte units first (Load4/Store4: twice the rate of single words on
 * an H200), then the remaining words: at most one iteration more than the plan's (its cost
 * allows six). */
void vkshmem_run_copy_(vkshmem_plan_ p, uint bd, uint64_t dst, uint bs, uint64_t src, uint lane, uint lanes) {
    uint64_t d = dst + p.head, s = src + p.head;
    uint64_t per = vkshmem_u64_(uint(VKSHMEM_COPY_UNROLL) * lanes);
    uint64_t from = 0u;
    if (p.sh == 0u && (((uint)d | (uint)s) & 15u) == 0u) {
        uint64_t units = p.words >> 2;
        uint iters = vkshmem_clamp32_((units + per - 1u) / per);
        uint64_t u = lane;
        for (uint it = 0u; it < iters; ++it) {
            VKSHMEM_REP_COPY_(vkshmem_copy_unit_(units, bd, d, bs, s, u); u += lanes;)
        }
        from = units << 2;
    }
    uint64_t idx = from + lane;
    uint iters = from == 0u ? p.iters : vkshmem_clamp32_((p.words - from + per - 1u) / per);
    for (uint it = 0u; it < iters; ++it) {
        VKSHMEM_REP_COPY_(vkshmem_copy_word_(p, bd, d, bs, s, idx); idx += lanes;)
    }
    if (lane == 0u) {
        uint64_t t = vkshmem_u64_(p.head) + (p.words << 2);
        for (uint j = 0u; j < 2u; ++j) {
            uint k = j == 0u ? p.head : p.tail;
            uint64_t o = j == 0u ? 0u : t;
            if (k != 0u) vkshmem_store_part_(bd, dst + o, bs, src + o, k);
        }
    }
}

/* ---- The proxy ring (the protocol of vkshmem.glsl: requests on binding 0, completion and answers
 * on binding 1) ------------------------------------------------------------------------------ */
uint vkshmem_slot_req_(uint ticket) { return vkshmem_reqs_off_ + (ticket & (vkshmem_slots_ - 1u)) * 64u; }
uint vkshmem_slot_payload_(uint ticket) {
    return vkshmem_payload_off_ + (ticket & (vkshmem_slots_ - 1u)) * vkshmem_pbytes_;
}

/* Where the proxy answers ticket t (a get's bytes, an AMO's old value), and how far it is. */
uint vkshmem_slot_answer_(uint ticket) {
    return vkshmem_ans_off_ + (ticket & (vkshmem_slots_ - 1u)) * vkshmem_pbytes_;
}
/* Binding 1 by name rather than through the binding chain of vkshmem_atomic_: polls are inlined
 * at every wait, and the chain made one kernel's driver compile 2.5x slower on lavapipe. */
uint vkshmem_done_() {
    uint r;
    vkshmem_heap1_.InterlockedOr(vkshmem_done_off_, 0u, r);
    return r;
}
uint64_t vkshmem_answer64_(uint ticket) {
    uint2 v = vkshmem_heap1_.Load2(vkshmem_slot_answer_(ticket));
    return vkshmem_join_(v.x, v.y);
}

/* Binding 1's words: the head and the answer flags. */
uint vkshmem_h1ld_(uint off) {
    uint r;
    vkshmem_heap1_.InterlockedOr(off, 0u, r);
    return r;
}
uint vkshmem_slot_busy_(uint t) { return vkshmem_busy_off_ + (t & (vkshmem_slots_ - 1u)) * vkshmem_busy_stride_; }

bool vkshmem_slot_free_(uint t, uint c) {
    if (asint(c - (t - vkshmem_slots_)) <= 0) return false;
    return vkshmem_h1ld_(vkshmem_slot_busy_(t)) == 0u;
}

bool vkshmem_slots_free_(uint t, uint want, uint c) {
    bool free = vkshmem_slot_free_(t, c);
    if (want > 1u && free) free = vkshmem_slot_free_(t + 1u, c);
    if (want > 2u && free) free = vkshmem_slot_free_(t + 2u, c);
    if (want > 3u && free) free = vkshmem_slot_free_(t + 3u, c);
    if (want > 4u && free) free = vkshmem_slot_free_(t + 4u, c);
    if (want > 5u && free) free = vkshmem_slot_free_(t + 5u, c);
    if (want > 6u && free) free = vkshmem_slot_free_(t + 6u, c);
    if (want > 7u && free) free = vkshmem_slot_free_(t + 7u, c);
    return free;
}

/* `want` (1..8) consecutive tickets for every active invocation, taken together per subgroup: a
 * wait (reads only) until the ring has room for them all, one atomic add on head, then a wait
 * until their slots are free (see vkshmem.glsl). False on timeout (recorded; nothing taken when
 * the first wait times out). */
bool vkshmem_take_tickets_(uint want, out uint first) {
    first = 0u;
    uint total = WaveActiveSum(want);
    /* glslang emits WavePrefixSum as an inclusive scan (HLSL defines it exclusive): the first
     * active invocation's sum tells which one this compiler made (want is never 0). */
    uint scan = WavePrefixSum(want);
    uint offset = WaveReadLaneFirst(scan) == 0u ? scan : scan - want;
    uint n = vkshmem_wait_iters_();
    bool ok = false;
    uint i;
    for (i = 0u; i <= n; ++i) {
        uint h = 0u;
        if (WaveIsFirstLane()) h = vkshmem_h1ld_(vkshmem_head_off_);
        h = WaveReadLaneFirst(h);
        ok = asint(h + total - vkshmem_done_()) <= asint(vkshmem_slots_);
        if (ok || i == n) break;
        if (vkshmem_backoff_()) break;
    }
    vkshmem_charge_(i + 2u);
    if (!ok) {
        vkshmem_wait_failed_(VKSHMEM_ERR_PROXY_TIMEOUT, VKSHMEM_WAIT_ID_RING_SLOT, i);
        return false;
    }
    uint h = 0u;
    if (WaveIsFirstLane()) vkshmem_heap1_.InterlockedAdd(vkshmem_head_off_, total, h);
    first = WaveReadLaneFirst(h) + offset;
    vkshmem_last_ticket_ = first + want - 1u;
    vkshmem_pending_ = true;
    n = vkshmem_wait_iters_();
    for (i = 0u; i <= n; ++i) {
        ok = WaveActiveAllTrue(vkshmem_slots_free_(first, want, vkshmem_done_()));
        if (ok || i == n) break;
        if (vkshmem_backoff_()) break;
    }
    vkshmem_charge_(i + 2u);
    if (!ok) { /* taken and never published: the dispatch reports the ring left behind */
        vkshmem_wait_failed_(VKSHMEM_ERR_PROXY_TIMEOUT, VKSHMEM_WAIT_ID_RING_SLOT, i);
        return false;
    }
    vkshmem_fence_();
    return true;
}

void vkshmem_fill_(uint ticket, uint op, int pe, uint bytes, uint64_t target, uint64_t operand, uint64_t cond,
                   uint amo_op, uint width, bool answer) {
    uint r = vkshmem_slot_req_(ticket);
    vkshmem_sst_(r + 4u, op);
    vkshmem_state_buf_.Store2(r + 8u, uint2(uint(pe), bytes));
    vkshmem_sst64_(r + 16u, target);
    vkshmem_sst64_(r + 24u, operand);
    vkshmem_sst64_(r + 32u, cond);
    vkshmem_state_buf_.Store2(r + 40u, uint2(amo_op, width));
    vkshmem_heap1_.Store(vkshmem_slot_busy_(ticket), answer ? 1u : 0u);
}

void vkshmem_publish_(uint ticket) {
    vkshmem_fence_(); /* release: the request and its payload before `ready` */
    vkshmem_sxchg_(vkshmem_slot_req_(ticket), ticket + 1u);
}

void vkshmem_consume_(uint ticket) {
    vkshmem_fence_(); /* release: the payload read before the slot is handed on */
    uint r;
    vkshmem_heap1_.InterlockedExchange(vkshmem_slot_busy_(ticket), 0u, r);
}

bool vkshmem_wait_done_(uint ticket, uint id) {
    uint n = vkshmem_wait_iters_();
    bool done = false;
    uint i;
    for (i = 0u; i < n; ++i) {
        if (asint(vkshmem_done_() - ticket) > 0) {
            done = true;
            break;
        }
        if (vkshmem_backoff_()) break;
    }
    vkshmem_charge_(i + 2u);
    if (!done) done = asint(vkshmem_done_() - ticket) > 0;
    if (!done) vkshmem_wait_failed_(VKSHMEM_ERR_PROXY_TIMEOUT, id, i);
    else vkshmem_fence_();
    return done;
}

uint64_t vkshmem_proxy_small_(uint op, int pe, uint bytes, uint64_t target, uint64_t operand, uint64_t cond,
                              uint amo_op, uint width, bool answer, out bool ok) {
    ok = false;
    uint t;
    if (!vkshmem_take_tickets_(1u, t)) return 0u;
    vkshmem_fill_(t, op, pe, bytes, target, operand, cond, amo_op, width, answer);
    if (op == VKSHMEM_OP_PUT) vkshmem_sst64_(vkshmem_slot_payload_(t), operand); /* a p's value */
    vkshmem_publish_(t);
    if (!answer) {
        ok = true;
        return 0u;
    }
    ok = vkshmem_wait_done_(t, VKSHMEM_WAIT_ID_PROXY_REPLY);
    uint64_t v = 0u;
    if (ok) v = vkshmem_answer64_(t);
    vkshmem_consume_(t);
    return v;
}

/* ---- Ordering and completion ---------------------------------------------------------------- */
void shmem_quiet() {
    vkshmem_fence_();
    if (vkshmem_pending_) {
        if (vkshmem_wait_done_(vkshmem_last_ticket_, VKSHMEM_WAIT_ID_QUIET)) vkshmem_pending_ = false;
    }
    vkshmem_fence_();
}

void shmem_fence() {
    if (vkshmem_pending_) shmem_quiet();
    else vkshmem_fence_();
}

/* ---- Signals (64-bit words, 32-bit atomics) ------------------------------------------------- */
/* SET or ADD of `value` to the uint64_t signal at sig_addr on pe, exactly: directly where 32-bit
 * atomics on the low word make the same change as one 64-bit atomic (SET: value and the current
 * high word 0; ADD: no carry, checked by a compare-and-swap), else by a proxy AMO of 8 bytes
 * after the earlier stores (which the proxy serves in order). */
void vkshmem_signal_(uint64_t sig_addr, uint64_t value, uint sig_op, int pe) {
    uint bf;
    uint64_t off;
    uint route = vkshmem_route_(sig_addr, 8u, pe, true, bf, off, true);
    if (route == VKSHMEM_ROUTE_NONE_) return;
    uint amo = sig_op == VKSHMEM_SIGNAL_ADD ? VKSHMEM_AMO_ADD : VKSHMEM_AMO_SET;
    if (route == VKSHMEM_ROUTE_DIRECT_ && vkshmem_hi_(value) == 0u) {
        uint v = (uint)value;
        if (amo == VKSHMEM_AMO_SET) {
            if (vkshmem_ald_(bf, off + 4u) == 0u) {
                vkshmem_atomic_(bf, off, VKSHMEM_AMO_SWAP, v, 0u);
                return;
            }
        } else {
            uint old = vkshmem_ald_(bf, off);
            if (old <= 0xffffffffu - v) {
                if (vkshmem_atomic_(bf, off, VKSHMEM_AMO_COMPARE_SWAP, old + v, old) == old) return;
            }
        }
    }
    if (vkshmem_slots_ == 0u) {
        vkshmem_error_(VKSHMEM_ERR_PROXY_TIMEOUT, 0u);
        return;
    }
    bool ok;
    vkshmem_fence_();
    vkshmem_proxy_small_(VKSHMEM_OP_AMO, pe, 8u, sig_addr, value, 0u, amo, 8u, false, ok);
}

/* ---- Transfers ------------------------------------------------------------------------------ */
/* A put (local src -> dest on pe) or a get (src on pe -> local dest) of `bytes`, any alignment,
 * as in vkshmem.glsl: direct, one copy shared by `lanes` invocations; through the proxy, pieces
 * of the payload size in batches. With `signal` (puts), the signal follows the data. The loop
 * budget of every copy is reserved before anything is sent. */
void vkshmem_xfer_(bool put, uint64_t dest, uint64_t src, uint64_t bytes, int pe, uint lane, uint lanes, bool signal,
                   uint64_t sig_addr, uint64_t sig_value, uint sig_op) {
    uint64_t sym = put ? dest : src;
    uint64_t loc = put ? src : dest;
    uint rb, lb;
    uint64_t ro, lo;
    uint route = vkshmem_route_(sym, bytes, pe, true, rb, ro);
    if (route == VKSHMEM_ROUTE_NONE_) return;
    if (!vkshmem_local_(loc, bytes, lb, lo)) return;
    if (signal) {
        uint sb;
        uint64_t so;
        if (vkshmem_route_(sig_addr, 8u, pe, true, sb, so) == VKSHMEM_ROUTE_NONE_) return;
    }
    bool proxy = route == VKSHMEM_ROUTE_PROXY_;
    uint64_t pb = proxy ? vkshmem_u64_(vkshmem_pbytes_) : (bytes > 1u ? bytes : 1u);
    uint64_t pieces = proxy ? (bytes + pb - 1u) / pb : 1u;
    if (signal && pieces == 0u) pieces = 1u;
    /* Through the proxy, each of the `lanes` invocations sends `batch` consecutive pieces per
     * round (the pieces from first, step apart by round), and its tickets follow those of the
     * invocations before it in its wave: a wave's tickets carry consecutive pieces, which the
     * proxy carries out as one transfer (its device copies cost a few microseconds per region).
     * The batch is no larger than spreads the pieces over every invocation, which copy them side
     * by side. */
    uint lanes_per_wave = WaveGetLaneCount();
    uint cap = vkshmem_slots_ / (lanes_per_wave > 0u ? lanes_per_wave : 1u);
    uint64_t spread = (pieces + vkshmem_u64_(lanes) - 1u) / vkshmem_u64_(lanes);
    uint batch = proxy ? clamp((uint)vkshmem_min64_(spread, vkshmem_u64_(min(uint(VKSHMEM_PROXY_BATCH), cap))), 1u, 8u)
                       : 1u;
    uint64_t first = proxy ? vkshmem_u64_(lane) * batch : 0u;
    uint64_t step = proxy ? vkshmem_u64_(lanes) * batch : 1u;
    uint copy_lane = proxy ? 0u : lane, copy_lanes = proxy ? 1u : lanes;
    uint64_t batches = first < pieces ? (pieces - first + step - 1u) / step : 0u;
    uint64_t mine = batches == 0u ? 0u
                                  : (batches - 1u) * batch +
                                        vkshmem_min64_(vkshmem_u64_(batch), pieces - first - (batches - 1u) * step);
    /* Plan of the first piece (payload slots are 16-byte aligned: offset 0 stands for one). */
    uint64_t pd = put ? (proxy ? 0u : ro) : lo + first * pb;
    uint64_t ps = put ? lo + first * pb : (proxy ? 0u : ro);
    uint64_t cost = mine * vkshmem_plan_cost_(vkshmem_plan_copy_(pd, ps, vkshmem_min64_(bytes, pb), copy_lanes)) +
                    batches * (2u * batch + 6u) + 2u;
    if (!vkshmem_reserve_(vkshmem_clamp32_(cost))) {
        vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(bytes));
        return;
    }
    uint t0 = 0u;
    for (uint64_t k0 = first; k0 < pieces; k0 += step) {
        uint nb = (uint)vkshmem_min64_(vkshmem_u64_(batch), pieces - k0);
        uint sent = proxy ? 0u : nb;
        bool took = false;
        if (proxy) took = vkshmem_take_tickets_(nb, t0);
        if (took) {
            for (uint j = 0u; j < nb; ++j) {
                uint64_t k = k0 + j, off = k * pb, n = vkshmem_min64_(bytes - off, pb);
                uint t = t0 + j;
                bool with_signal = signal && k + 1u == pieces;
                vkshmem_fill_(t, put ? (with_signal ? VKSHMEM_OP_PUT_SIGNAL : VKSHMEM_OP_PUT) : VKSHMEM_OP_GET, pe,
                              (uint)n, sym + off, with_signal ? sig_value : 0u, with_signal ? sig_addr : 0u,
                              with_signal ? sig_op : 0u, with_signal ? 8u : 0u, !put);
                if (put) {
                    uint64_t slot = vkshmem_slot_payload_(t);
                    vkshmem_run_copy_(vkshmem_plan_copy_(slot, lo + off, n, 1u), 0u, slot, lb, lo + off, 0u, 1u);
                }
                vkshmem_publish_(t);
            }
            sent = nb;
        }
        if (put && proxy) {
            if (sent < nb) break;
            continue;
        }
        bool answered = !proxy;
        if (proxy && sent != 0u) answered = vkshmem_wait_done_(t0 + sent - 1u, VKSHMEM_WAIT_ID_PROXY_REPLY);
        for (uint j2 = 0u; j2 < sent; ++j2) {
            uint64_t off = proxy ? (k0 + j2) * pb : 0u;
            uint64_t n = vkshmem_min64_(bytes - off, pb);
            uint cb = put ? rb : lb, sbnd = put ? lb : (proxy ? VKSHMEM_HLSL_ANSWERS_BINDING : rb);
            uint64_t cd = put ? ro : lo + off;
            uint64_t cs = put ? lo : ro;
            if (!put && proxy) cs = vkshmem_u64_(vkshmem_slot_answer_(t0 + j2));
            if (answered)
                vkshmem_run_copy_(vkshmem_plan_copy_(cd, cs, n, copy_lanes), cb, cd, sbnd, cs, copy_lane, copy_lanes);
            if (proxy) vkshmem_consume_(t0 + j2);
        }
        if (!answered || sent < nb) break;
    }
    if (signal && !proxy) {
        vkshmem_fence_();
        vkshmem_signal_(sig_addr, sig_value, sig_op, pe);
    }
}

void vkshmem_put_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    vkshmem_xfer_(true, dest, src, bytes, pe, 0u, 1u, false, 0u, 0u, 0u);
}
void vkshmem_get_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    vkshmem_xfer_(false, dest, src, bytes, pe, 0u, 1u, false, 0u, 0u, 0u);
}

/* Workgroup-cooperative forms: every invocation of the workgroup calls them with the same
 * arguments, in uniform control flow; they begin and end with a memory barrier and a
 * workgroup barrier. */

/* What invocation 0 tells the workgroup in a proxied put_wg: its round's first ticket, and
 * whether it got them (1) or every invocation stops (0); whether every wave's budget fits. */
groupshared uint vkshmem_wg_first_;
groupshared uint vkshmem_wg_ok_;

/* A proxied put of the whole workgroup. Each round, invocation 0 takes the tickets of up to
 * VKSHMEM_WG_PROXY_PIECES pieces (as many as the workgroup has invocations, at most), then the
 * workgroup copies the pieces into their payload slots together, consecutive invocations on
 * consecutive 16-byte units, and invocation j publishes piece j. (Each invocation filling a slot
 * of its own scatters a wave's stores over host memory: 2-9 GB/s on an H200.) HLSL has no subgroup
 * barrier, but a _wg call is in uniform control flow, so workgroup barriers order the rounds. */
#ifndef VKSHMEM_WG_PROXY_PIECES
#define VKSHMEM_WG_PROXY_PIECES 64u
#endif
void vkshmem_put_wg_proxy_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    uint lb;
    uint64_t lo;
    if (!vkshmem_local_(src, bytes, lb, lo)) return; /* the same for every invocation */
    uint lane = vkshmem_lane_, lanes = vkshmem_lanes_;
    uint64_t pb = vkshmem_u64_(vkshmem_pbytes_);
    uint64_t pieces = (bytes + pb - 1u) / pb;
    uint per = min(lanes, VKSHMEM_WG_PROXY_PIECES);
    uint64_t rounds = (pieces + per - 1u) / vkshmem_u64_(per);
    uint64_t cost = pieces * vkshmem_plan_cost_(vkshmem_plan_copy_(0u, lo, vkshmem_min64_(bytes, pb), lanes)) +
                    rounds * 8u + 2u;
    /* Each wave reserves its own budget (lavapipe): all stop where one does not fit. */
    if (lane == 0u) vkshmem_wg_ok_ = 1u;
    GroupMemoryBarrierWithGroupSync();
    if (!vkshmem_reserve_(vkshmem_clamp32_(cost))) vkshmem_wg_ok_ = 0u;
    GroupMemoryBarrierWithGroupSync();
    bool ok = vkshmem_wg_ok_ != 0u;
    GroupMemoryBarrierWithGroupSync();
    if (!ok) {
        if (lane == 0u) vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(bytes));
        return;
    }
    for (uint64_t k0 = 0u; k0 < pieces; k0 += vkshmem_u64_(per)) {
        uint nb = (uint)vkshmem_min64_(vkshmem_u64_(per), pieces - k0);
        if (lane == 0u) {
            uint t = 0u;
            bool took = vkshmem_take_tickets_(nb, t);
            vkshmem_wg_first_ = t;
            vkshmem_wg_ok_ = took ? 1u : 0u;
        }
        GroupMemoryBarrierWithGroupSync();
        uint t0 = vkshmem_wg_first_;
        ok = vkshmem_wg_ok_ != 0u;
        GroupMemoryBarrierWithGroupSync(); /* read before invocation 0 writes them again */
        if (!ok) break;
        for (uint j = 0u; j < nb; ++j) {
            uint64_t off = (k0 + j) * pb, n = vkshmem_min64_(bytes - off, pb);
            uint64_t slot = vkshmem_slot_payload_(t0 + j);
            vkshmem_run_copy_(vkshmem_plan_copy_(slot, lo + off, n, lanes), 0u, slot, lb, lo + off, lane, lanes);
        }
        uint64_t mine = (k0 + lane) * pb;
        if (lane < nb)
            vkshmem_fill_(t0 + lane, VKSHMEM_OP_PUT, pe, (uint)vkshmem_min64_(bytes - mine, pb), dest + mine, 0u, 0u,
                          0u, 0u, false);
        /* every invocation's payload stores, device-wide, before any of the slots is published (the
         * library's fence: none on lavapipe, where a device-scope barrier may lose subgroups) */
        vkshmem_fence_();
        GroupMemoryBarrierWithGroupSync();
        if (lane < nb) vkshmem_publish_(t0 + lane);
        /* a later quiet of any invocation waits for the last of them */
        vkshmem_last_ticket_ = t0 + nb - 1u;
        vkshmem_pending_ = true;
    }
}

void vkshmem_put_wg_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    vkshmem_fence_();
    GroupMemoryBarrierWithGroupSync();
    uint rb;
    uint64_t ro;
    if (bytes != 0u && vkshmem_route_(dest, bytes, pe, false, rb, ro) == VKSHMEM_ROUTE_PROXY_)
        vkshmem_put_wg_proxy_(dest, src, bytes, pe);
    else
        vkshmem_xfer_(true, dest, src, bytes, pe, vkshmem_lane_, vkshmem_lanes_, false, 0u, 0u, 0u);
    vkshmem_fence_();
    GroupMemoryBarrierWithGroupSync();
}
void vkshmem_get_wg_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    vkshmem_fence_();
    GroupMemoryBarrierWithGroupSync();
    vkshmem_xfer_(false, dest, src, bytes, pe, vkshmem_lane_, vkshmem_lanes_, false, 0u, 0u, 0u);
    vkshmem_fence_();
    GroupMemoryBarrierWithGroupSync();
}

void shmem_putmem(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_put_(dest, source, nelems, pe); }
void shmem_getmem(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_get_(dest, source, nelems, pe); }
void shmem_putmem_nbi(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_put_(dest, source, nelems, pe); }
void shmem_getmem_nbi(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_get_(dest, source, nelems, pe); }
void shmem_putmem_wg(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_put_wg_(dest, source, nelems, pe); }
void shmem_getmem_wg(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_get_wg_(dest, source, nelems, pe); }

/* Single elements (p, g): 4 or 8 bytes, naturally aligned; an 8-byte one is two word stores. */
void vkshmem_pw_(uint64_t dest, uint64_t value, int pe, uint width) {
    uint bf;
    uint64_t off;
    uint route = vkshmem_route_(dest, width, pe, true, bf, off);
    if (route == VKSHMEM_ROUTE_DIRECT_) {
        vkshmem_st_(bf, off, (uint)value);
        if (width == 8u) vkshmem_st_(bf, off + 4u, vkshmem_hi_(value));
    } else if (route == VKSHMEM_ROUTE_PROXY_) {
        bool ok;
        vkshmem_proxy_small_(VKSHMEM_OP_PUT, pe, width, dest, value, 0u, 0u, 0u, false, ok);
    }
}
void vkshmem_p32_(uint64_t dest, uint value, int pe) { vkshmem_pw_(dest, vkshmem_u64_(value), pe, 4u); }
void vkshmem_p64_(uint64_t dest, uint64_t value, int pe) { vkshmem_pw_(dest, value, pe, 8u); }

uint64_t vkshmem_gw_(uint64_t src, int pe, uint width) {
    uint bf;
    uint64_t off;
    uint route = vkshmem_route_(src, width, pe, true, bf, off);
    if (route == VKSHMEM_ROUTE_PROXY_) {
        bool ok;
        uint64_t v = vkshmem_proxy_small_(VKSHMEM_OP_GET, pe, width, src, 0u, 0u, 0u, 0u, true, ok);
        return width == 4u ? vkshmem_u64_((uint)v) : v;
    }
    if (route != VKSHMEM_ROUTE_DIRECT_) return 0u;
    uint lo = vkshmem_ld_(bf, off);
    if (width == 4u) return vkshmem_u64_(lo);
    return vkshmem_join_(lo, vkshmem_ld_(bf, off + 4u));
}
uint vkshmem_g32_(uint64_t src, int pe) { return (uint)vkshmem_gw_(src, pe, 4u); }
uint64_t vkshmem_g64_(uint64_t src, int pe) { return vkshmem_gw_(src, pe, 8u); }

/* ---- Atomics: 4-byte types (op: VKSHMEM_AMO_*) ---------------------------------------------- */
uint vkshmem_amo32_(uint64_t dest, uint op, uint operand, uint cond, int pe, bool fetch) {
    uint bf;
    uint64_t off;
    uint route = vkshmem_route_(dest, 4u, pe, true, bf, off, true);
    if (route == VKSHMEM_ROUTE_PROXY_) {
        bool ok;
        return (uint)vkshmem_proxy_small_(VKSHMEM_OP_AMO, pe, 4u, dest, vkshmem_u64_(operand), vkshmem_u64_(cond),
                                          op, 4u, fetch, ok);
    }
    if (route != VKSHMEM_ROUTE_DIRECT_) return 0u;
    return vkshmem_atomic_(bf, off, op, operand, cond);
}

/* put_signal: the data, then (once delivered) SHMEM_SIGNAL_SET or _ADD of `signal` to the
 * uint64_t at sig_addr on pe. Any other sig_op is taken as SET. */
void vkshmem_put_signal_(uint64_t dest, uint64_t src, uint64_t bytes, uint64_t sig_addr, uint64_t signal, int sig_op,
                         int pe) {
    vkshmem_xfer_(true, dest, src, bytes, pe, 0u, 1u, true, sig_addr, signal,
                  sig_op == SHMEM_SIGNAL_ADD ? VKSHMEM_SIGNAL_ADD : VKSHMEM_SIGNAL_SET);
}
void shmem_putmem_signal(uint64_t dest, uint64_t source, uint64_t nelems, uint64_t sig_addr, uint64_t signal,
                         int sig_op, int pe) {
    vkshmem_put_signal_(dest, source, nelems, sig_addr, signal, sig_op, pe);
}
void shmem_putmem_signal_nbi(uint64_t dest, uint64_t source, uint64_t nelems, uint64_t sig_addr, uint64_t signal,
                             int sig_op, int pe) {
    vkshmem_put_signal_(dest, source, nelems, sig_addr, signal, sig_op, pe);
}

/* The signal at sig_addr, a symmetric uint64_t of this PE. */
uint64_t shmem_signal_fetch(uint64_t sig_addr) {
    uint bf;
    uint64_t off;
    uint64_t v = 0u;
    if (vkshmem_local_(sig_addr, 8u, bf, off)) v = vkshmem_ald64_(bf, off);
    vkshmem_fence_();
    return v;
}

/* ---- Point-to-point synchronization (on this PE's own memory) ------------------------------- */
uint vkshmem_cmp_set_(int cmp) {
    return cmp == SHMEM_CMP_EQ ? 2u : cmp == SHMEM_CMP_NE ? 5u : cmp == SHMEM_CMP_GT ? 4u :
           cmp == SHMEM_CMP_GE ? 6u : cmp == SHMEM_CMP_LT ? 1u : cmp == SHMEM_CMP_LE ? 3u : 0u;
}

/* Whether `a cmp b` holds for `width` bytes (4: the low halves), signed or not (no int64_t in
 * glslang's HLSL: 64-bit signed order from the halves). */
bool vkshmem_holds_(uint64_t a, uint64_t b, uint set, bool sgn, uint width) {
    uint al = (uint)a, bl = (uint)b, ah = vkshmem_hi_(a), bh = vkshmem_hi_(b);
    bool lt, eq;
    if (width == 4u) {
        lt = sgn ? asint(al) < asint(bl) : al < bl;
        eq = al == bl;
    } else {
        bool hlt = sgn ? asint(ah) < asint(bh) : ah < bh;
        lt = hlt || (ah == bh && al < bl);
        eq = ah == bh && al == bl;
    }
    return (set & (eq ? 2u : (lt ? 1u : 4u))) != 0u;
}

uint64_t vkshmem_load_(uint bf, uint64_t off, uint width) {
    if (width == 4u) return vkshmem_u64_(vkshmem_ald_(bf, off));
    return vkshmem_ald64_(bf, off);
}

/* Bounded wait (as in vkshmem.glsl) on this PE's ivar. */
uint64_t vkshmem_wait_(uint64_t ivar, int cmp, uint64_t value, bool sgn, uint width, uint code, uint id) {
    uint bf;
    uint64_t off;
    if (!vkshmem_local_(ivar, width, bf, off)) return 0u;
    uint set = vkshmem_cmp_set_(cmp);
    uint n = vkshmem_wait_iters_();
    uint64_t v = 0u;
    bool done = false;
    uint i;
    for (i = 0u; i < n; ++i) {
        v = vkshmem_load_(bf, off, width);
        if (vkshmem_holds_(v, value, set, sgn, width)) {
            done = true;
            break;
        }
        if (vkshmem_backoff_()) break;
    }
    vkshmem_charge_(i + 2u);
    if (!done) {
        v = vkshmem_load_(bf, off, width);
        done = vkshmem_holds_(v, value, set, sgn, width);
    }
    if (!done) vkshmem_wait_failed_(code, id, i);
    vkshmem_fence_();
    return v;
}

uint vkshmem_wait32_(uint64_t ivar, int cmp, uint value, bool sgn, uint id) {
    return (uint)vkshmem_wait_(ivar, cmp, vkshmem_u64_(value), sgn, 4u, VKSHMEM_ERR_WAIT_TIMEOUT, id);
}
uint64_t vkshmem_wait64_(uint64_t ivar, int cmp, uint64_t value, bool sgn, uint id) {
    return vkshmem_wait_(ivar, cmp, value, sgn, 8u, VKSHMEM_ERR_WAIT_TIMEOUT, id);
}
int vkshmem_test_(uint64_t ivar, int cmp, uint64_t value, bool sgn, uint width) {
    uint bf;
    uint64_t off;
    if (!vkshmem_local_(ivar, width, bf, off)) return 0;
    bool ok = vkshmem_holds_(vkshmem_load_(bf, off, width), value, vkshmem_cmp_set_(cmp), sgn, width);
    vkshmem_fence_();
    return ok ? 1 : 0;
}
int vkshmem_test32_(uint64_t ivar, int cmp, uint value, bool sgn) { return vkshmem_test_(ivar, cmp, vkshmem_u64_(value), sgn, 4u); }
int vkshmem_test64_(uint64_t ivar, int cmp, uint64_t value, bool sgn) { return vkshmem_test_(ivar, cmp, value, sgn, 8u); }

uint64_t shmem_signal_wait_until(uint64_t sig_addr, int cmp, uint64_t cmp_value) {
    return vkshmem_wait_(sig_addr, cmp, cmp_value, false, 8u, VKSHMEM_ERR_WAIT_TIMEOUT, VKSHMEM_WAIT_ID_SIGNAL_WAIT_UNTIL);
}

/* ---- Teams, barriers and collectives -------------------------------------------------------- */
#include "vkshmem_coll.hlsl"

/* ---- Typed and sized routines (generated) --------------------------------------------------- */
#include "vkshmem_typed.hlsl"

#endif /* VKSHMEM_HLSL */
