// SPDX-License-Identifier: BSL-1.0
/*
 * vkshmem.glsl — the OpenSHMEM device library for GLSL compute shaders.
 *
 *   #version 460
 *   #extension GL_GOOGLE_include_directive : require
 *   layout(local_size_x = 64) in;
 *   #include "vkshmem.glsl"              // glslc -I shaders -I shaders/generated
 *   layout(push_constant) uniform Push { uint64_t state; uint64_t buf; } pc;
 *   void main() {
 *       vkshmem_init(pc.state);          // first, by every invocation, in uniform control flow
 *       shmem_int_p(pc.buf, 42, (shmem_my_pe() + 1) % shmem_n_pes());
 *   }
 *
 * Symmetric objects are uint64_t buffer device addresses of this PE
 * (vkshmemx_device_address() on the host). shaders/README.md documents every
 * routine, its limits, and the rules for waits and workgroup routines.
 *
 * This file is the hand-written core; the typed routines (shmem_int_put,
 * shmem_long_atomic_fetch_add, ...) are generated into vkshmem_typed.glsl by
 * tools/gen/gen.py and included at the end. Names ending in '_' are internal.
 *
 * Device features used: bufferDeviceAddress, shaderInt64,
 * shaderBufferInt64Atomics, subgroup basic/vote/ballot/arithmetic operations in
 * compute shaders, and shaderFloat64 only where a shader calls a double routine.
 */
#ifndef VKSHMEM_GLSL
#define VKSHMEM_GLSL

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_vote : require

#include "vkshmem_abi.h"
#include "vkshmem_mailbox.glsl"

/* ---- Constants (the values of the host's shmem.h; generated from tools/gen/types.py) -------- */
#include "vkshmem_constants.h"

/* Which wait gave up: the error_info of VKSHMEM_ERR_WAIT_TIMEOUT / VKSHMEM_ERR_PROXY_TIMEOUT.
 * VKSHMEM_WAIT_BUDGET_BIT is added when the loop budget (not wait_polls) ended the wait. */
#define VKSHMEM_WAIT_ID_WAIT_UNTIL 1u        /* shmem_TYPE_wait_until               (WAIT_TIMEOUT)  */
#define VKSHMEM_WAIT_ID_SIGNAL_WAIT_UNTIL 2u /* shmem_signal_wait_until             (WAIT_TIMEOUT)  */
#define VKSHMEM_WAIT_ID_BARRIER 3u           /* shmem_barrier_all_wg                (WAIT_TIMEOUT)  */
#define VKSHMEM_WAIT_ID_RING_SLOT 4u         /* a free proxy ring slot              (PROXY_TIMEOUT) */
#define VKSHMEM_WAIT_ID_PROXY_REPLY 5u       /* the answer to a get or fetching AMO (PROXY_TIMEOUT) */
#define VKSHMEM_WAIT_ID_QUIET 6u             /* shmem_quiet / shmem_fence           (PROXY_TIMEOUT) */
#define VKSHMEM_WAIT_ID_TEAM_SYNC 7u         /* a team sync, or one inside a collective (WAIT_TIMEOUT) */
#define VKSHMEM_WAIT_BUDGET_BIT 0x100u

/* Loop budget (see README: lavapipe ends every loop silently after 65,535 iterations per SIMD
 * subgroup). Iterations of the library's loops are counted per subgroup against this budget; an
 * operation that cannot fit is reported (VKSHMEM_ERR_TOO_LARGE) instead of being truncated.
 * It applies only where the pipeline was specialised for lavapipe (VKSHMEM_SPEC_DEVICE_FENCES
 * false); elsewhere waits are bounded by wait_polls alone and copies by nothing. Define it before
 * including this file: 0 turns the accounting off everywhere. */
#ifndef VKSHMEM_LOOP_BUDGET
#define VKSHMEM_LOOP_BUDGET 60000
#endif
/* Budget cells in shared memory, one per subgroup (a power of two; more subgroups share cells). */
#ifndef VKSHMEM_BUDGET_CELLS
#define VKSHMEM_BUDGET_CELLS 256u
#endif
/* Back-off after each poll of a wait: a chain of dependent float operations, which touch no
 * memory (no per-lane code) but take time. VKSHMEM_POLL_DELAY divisions on devices with device
 * fences (GPUs: a short pause between polls), VKSHMEM_POLL_DELAY_NOFENCE reciprocal square roots
 * where the pipeline was specialised without them (lavapipe): there every loop iteration counts
 * against the 65,535 that the driver allows a subgroup, so a longer back-off (256 steps, about
 * 1.7 us) lets a wait last about 100 ms (60,000 polls) for a proxy or another PE's shader on a
 * crowded CPU. Longer chains cost lavapipe's compiler dearly (512: 4x the time of 256 for a
 * kernel of 12 atomics). One poll is one iteration of state.wait_polls. 0, 16, 64, 256, 512 or
 * 1024. */
#ifndef VKSHMEM_POLL_DELAY
#define VKSHMEM_POLL_DELAY 16
#endif
#ifndef VKSHMEM_POLL_DELAY_NOFENCE
#define VKSHMEM_POLL_DELAY_NOFENCE 256
#endif
/* Units (8-byte units or 4-byte words) a copy loop moves per iteration and invocation: 2 or 4.
 * More units per iteration let one invocation copy more within the loop budget; fewer make
 * shaders compile faster. */
#ifndef VKSHMEM_COPY_UNROLL
#define VKSHMEM_COPY_UNROLL 4
#endif

/* The back-off steps (vkshmem_steps.h says why these two). */
#define VKSHMEM_DIV_ f = f / q + 1.0;
#define VKSHMEM_RSQ_ f = inversesqrt(f + q);
#include "vkshmem_steps.h"
#if VKSHMEM_COPY_UNROLL != 2 && VKSHMEM_COPY_UNROLL != 4
#error "VKSHMEM_COPY_UNROLL must be 2 or 4"
#endif

/* ---- Buffer references ----------------------------------------------------------------------- */
layout(buffer_reference, std430, buffer_reference_align = 8) coherent buffer vkshmem_state_ref_ {
    vkshmem_state_layout s;
};
/* What the host writes before dispatches and never while one runs (the state block's fields but
 * `error`, `error_info` and `relay`; the peer table; the ring's layout): plain loads, which the
 * GPU serves from each multiprocessor's cache. Coherent loads of these few words go to one slice
 * of the device cache from every subgroup of a dispatch, one after another. */
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer vkshmem_state_ro_ {
    vkshmem_state_layout s;
};
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer vkshmem_peers_ref_ {
    vkshmem_peer_layout p[];
};
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer vkshmem_ring_ref_ {
    vkshmem_ring_layout r;
};
layout(buffer_reference, std430, buffer_reference_align = 8) coherent buffer vkshmem_team_ref_ {
    vkshmem_team_layout t;
};
layout(buffer_reference, std430, buffer_reference_align = 4) buffer vkshmem_pes_ref_ { int p[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer vkshmem_mailboxes_ref_ {
    vkshmem_mailbox_entry e[];
};
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer vkshmem_w32_ { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 8) coherent buffer vkshmem_w64_ { uint64_t v; };
/* Volatile views, for reads of memory the host writes while the shader runs (see vkshmem_rd32_). */
layout(buffer_reference, std430, buffer_reference_align = 4) coherent volatile buffer vkshmem_v32_ { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 8) coherent volatile buffer vkshmem_v64_ { uint64_t v; };

/* ---- Per-invocation state (set by vkshmem_init) ------------------------------------------------ */
vkshmem_state_ref_ vkshmem_st_;
bool vkshmem_ok_ = false;
int vkshmem_me_ = -1;
int vkshmem_npes_ = 0;
uint64_t vkshmem_hbase_, vkshmem_hsize_, vkshmem_dbase_, vkshmem_dsize_;
vkshmem_peers_ref_ vkshmem_peers_;
vkshmem_ring_ref_ vkshmem_ring_;
uint vkshmem_flags_, vkshmem_polls_;
uint vkshmem_slots_, vkshmem_pbytes_;
uint64_t vkshmem_reqs_, vkshmem_payload_, vkshmem_ring_addr_;
/* The ring's head and the slots' answer flags (vkshmem_ring_layout): device memory where the ring
 * has it, so that taking tickets does not cross the bus */
uint64_t vkshmem_head_addr_, vkshmem_busy_addr_;
uint vkshmem_busy_stride_;
uint64_t vkshmem_done_addr_, vkshmem_answers_; /* where the proxy's completed and answers are read */
/* The AMO mailboxes this PE's waits carry out (vkshmem_mailbox.glsl; vkshmem_ring_layout) */
uint64_t vkshmem_mailboxes_ = 0, vkshmem_peers_addr_ = 0;
uint vkshmem_n_mailboxes_ = 0u;
float vkshmem_spin_, vkshmem_spin_q_, vkshmem_spin_stop_; /* the back-off chain (vkshmem_backoff_) */
uint64_t vkshmem_teams_ = 0; /* team slot 0's record (vkshmem_team_layout); 0: none */
uint64_t vkshmem_teams_local_ = 0; /* the same records in device-local memory; 0: none */
uint vkshmem_team_stride_ = 0u, vkshmem_n_teams_ = 0u;
bool vkshmem_pending_ = false; /* this invocation has proxy tickets that may not be complete */
uint vkshmem_last_ticket_ = 0u;

#if VKSHMEM_LOOP_BUDGET != 0
shared uint vkshmem_budget_[VKSHMEM_BUDGET_CELLS];
#endif

/* ---- Errors ------------------------------------------------------------------------------------ */
/* The first error of a dispatch wins; the host reports it after the dispatch. */
void vkshmem_error_(uint code, uint info) {
    if (!vkshmem_ok_) return;
    if (atomicCompSwap(vkshmem_st_.s.error, 0u, code) == 0u) vkshmem_st_.s.error_info = info;
}

uint vkshmem_clamp32_(uint64_t v) { return v > uint64_t(0xffffffffu) ? 0xffffffffu : uint(v); }

/* ---- Ordering --------------------------------------------------------------------------------- */
/* Device-scope ordering, unless the pipeline was specialised for a device that cannot take it
 * in divergent code (VKSHMEM_SPEC_DEVICE_FENCES false: lavapipe, where relaxed atomics are
 * ordered by the CPU). The condition is a specialization constant, so the unused side is gone
 * before the driver compiles the shader. */
#ifdef VKSHMEM_DEVICE_FENCES
const bool vkshmem_fences_ = VKSHMEM_DEVICE_FENCES != 0;
#else
layout(constant_id = VKSHMEM_SPEC_DEVICE_FENCES) const bool vkshmem_fences_ = true;
#endif
void vkshmem_fence_() {
    if (vkshmem_fences_) memoryBarrierBuffer();
}
/* The driver with the loop cap is the one specialised without device fences (see above). */
const bool vkshmem_budget_on_ = VKSHMEM_LOOP_BUDGET != 0 && !vkshmem_fences_;
/* Host writes during a dispatch. On NVIDIA (driver 580) a running shader never sees a host write to
 * host memory (the host heap, the ring) through an atomic load or read-modify-write, of any scope
 * or semantics: its GPU-side cache keeps the old line. A volatile load sees it once the line
 * leaves that cache (up to ~13 ms later); any load of DEVICE_LOCAL|HOST_VISIBLE memory sees it at
 * once, which is where the proxy writes what shaders wait for. So polls and the proxy's answers are
 * read with volatile loads where the pipeline has device fences (GPUs); lavapipe (no device fences)
 * shares the CPU's caches and uses relaxed atomic loads, which a compiler cannot hoist out of a
 * loop either. The choice is a specialization constant: the other side is gone before the driver
 * compiles. */
uint vkshmem_rd32_(uint64_t a, bool vol) { return vol ? vkshmem_v32_(a).v : vkshmem_w32_(a).v; }
uint64_t vkshmem_rd64_(uint64_t a, bool vol) { return vol ? vkshmem_v64_(a).v : vkshmem_w64_(a).v; }
/* Polls: volatile loads on GPUs, relaxed atomic loads on lavapipe. A wait that succeeds then calls
 * vkshmem_fence_() (acquire), and a hand-off calls it before its relaxed atomic store (release).
 * So no barrier sits in a loop. */
uint vkshmem_ld32_(uint64_t a) {
    if (vkshmem_fences_) return vkshmem_v32_(a).v;
    return atomicLoad(vkshmem_w32_(a).v, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}
uint64_t vkshmem_ld64_(uint64_t a) {
    if (vkshmem_fences_) return vkshmem_v64_(a).v;
    return atomicLoad(vkshmem_w64_(a).v, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}

/* ---- Loop budget (per subgroup) -------------------------------------------------------------- */
uint vkshmem_budget_cell_() { return gl_SubgroupID & (VKSHMEM_BUDGET_CELLS - 1u); }

/* Iterations the subgroup may still run. */
uint vkshmemx_budget_left() {
#if VKSHMEM_LOOP_BUDGET != 0
    if (!vkshmem_budget_on_) return 0xffffffffu;
    return subgroupBroadcastFirst(vkshmem_budget_[vkshmem_budget_cell_()]);
#else
    return 0xffffffffu;
#endif
}

/* Reserves `iters` loop iterations for a loop the active invocations are about to run (the
 * subgroup runs the largest count). Returns false for an invocation whose count does not fit:
 * it must skip its loop. */
bool vkshmem_reserve_(uint iters) {
#if VKSHMEM_LOOP_BUDGET != 0
    if (!vkshmem_budget_on_) return true;
    uint left = vkshmemx_budget_left();
    bool fits = iters <= left;
    uint m = subgroupMax(fits ? iters : 0u);
    if (subgroupElect()) vkshmem_budget_[vkshmem_budget_cell_()] = left - m;
    subgroupMemoryBarrierShared();
    return fits;
#else
    return true;
#endif
}

/* Charges iterations a loop has already run (the largest count of the active invocations). */
void vkshmem_charge_(uint iters) {
#if VKSHMEM_LOOP_BUDGET != 0
    if (!vkshmem_budget_on_) return;
    uint left = vkshmemx_budget_left();
    uint m = subgroupMax(iters);
    if (subgroupElect()) vkshmem_budget_[vkshmem_budget_cell_()] = left > m ? left - m : 0u;
    subgroupMemoryBarrierShared();
#endif
}

/* For the shader's own loops: charge `iters` iterations it is about to run (or has run) to the
 * same budget. Returns false (and charges nothing) when they do not fit. */
bool vkshmemx_budget_charge(uint iters) { return vkshmem_reserve_(iters); }

/* Iterations a bounded wait may run: wait_polls, or what the budget leaves (3 kept for the loop's
 * own entry and exit and a last check). */
uint vkshmem_wait_iters_() {
    uint left = vkshmemx_budget_left();
    return min(vkshmem_polls_, left > 3u ? left - 3u : 0u);
}

/* The back-off between polls. The chain stays positive and the stop value is negative, so this
 * never returns true; the compiler cannot know, so it keeps the chain. On GPUs a waiting
 * invocation also carries out the atomics that hosts posted for this GPU (vkshmem_mailbox.glsl):
 * this PE's own, then those of the PEs that share the GPU and its device heaps; the host's own
 * dispatch of one would wait for this kernel. */
bool vkshmem_backoff_() {
    float f = vkshmem_spin_, q = vkshmem_spin_q_;
    if (vkshmem_fences_) {
        for (uint k = 0u; k < vkshmem_n_mailboxes_; ++k) {
            vkshmem_mailbox_entry e = vkshmem_mailboxes_ref_(vkshmem_mailboxes_).e[k];
            vkshmem_mailbox_serve_(e.request, e.claim, e.reply, k == 0u ? uint64_t(0) : vkshmem_peers_addr_);
        }
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

/* ---- Setup and queries -------------------------------------------------------------------------- */
/* Call first in main(), from every invocation, in uniform control flow. */
void vkshmem_init(uint64_t state) {
    vkshmem_ok_ = false;
    vkshmem_me_ = -1;
    vkshmem_npes_ = 0;
    vkshmem_pending_ = false;
    vkshmem_n_mailboxes_ = 0u;
    vkshmem_last_ticket_ = 0u;
    vkshmem_teams_ = uint64_t(0);
    vkshmem_teams_local_ = uint64_t(0);
    if (state != uint64_t(0)) {
        vkshmem_state_ro_ st = vkshmem_state_ro_(state);
        if (st.s.magic == VKSHMEM_ABI_MAGIC && st.s.version == VKSHMEM_ABI_VERSION) {
            vkshmem_me_ = st.s.my_pe;
            vkshmem_npes_ = st.s.n_pes;
            vkshmem_hbase_ = st.s.host_base;
            vkshmem_hsize_ = st.s.host_size;
            vkshmem_dbase_ = st.s.device_base;
            vkshmem_dsize_ = st.s.device_size;
            vkshmem_peers_addr_ = st.s.peers;
            vkshmem_peers_ = vkshmem_peers_ref_(vkshmem_peers_addr_);
            vkshmem_flags_ = st.s.flags;
            vkshmem_polls_ = max(st.s.wait_polls, 1u);
            vkshmem_spin_ = float(vkshmem_polls_);
            vkshmem_spin_q_ = float(vkshmem_polls_ | 3u);
            vkshmem_spin_stop_ = -float(st.s.magic);
            vkshmem_teams_ = st.s.teams;
            vkshmem_teams_local_ = st.s.teams_local;
            vkshmem_team_stride_ = st.s.team_stride;
            vkshmem_n_teams_ = st.s.n_teams;
            vkshmem_slots_ = 0u;
            vkshmem_pbytes_ = 0u;
            if (st.s.ring != uint64_t(0)) {
                vkshmem_ring_addr_ = st.s.ring;
                vkshmem_ring_ = vkshmem_ring_ref_(vkshmem_ring_addr_);
                vkshmem_slots_ = vkshmem_ring_.r.slots;
                vkshmem_pbytes_ = vkshmem_ring_.r.payload_bytes;
                vkshmem_reqs_ = vkshmem_ring_.r.requests;
                vkshmem_payload_ = vkshmem_ring_.r.payload;
                uint64_t at = vkshmem_ring_.r.completed_at;
                vkshmem_done_addr_ = at != uint64_t(0) ? at : vkshmem_ring_addr_ + uint64_t(4);
                vkshmem_head_addr_ = at != uint64_t(0) ? at + uint64_t(VKSHMEM_RING_HEAD_AT) : vkshmem_ring_addr_;
                vkshmem_busy_addr_ = at != uint64_t(0) ? at + uint64_t(VKSHMEM_RING_BUSY_AT) : vkshmem_reqs_ + uint64_t(48);
                vkshmem_busy_stride_ = at != uint64_t(0) ? 4u : 64u;
                vkshmem_answers_ =
                    vkshmem_ring_.r.answers != uint64_t(0) ? vkshmem_ring_.r.answers : vkshmem_payload_;
                vkshmem_mailboxes_ = at != uint64_t(0) && vkshmem_ring_.r.local_mailboxes != 0u
                                         ? at + uint64_t(VKSHMEM_RING_MAILBOXES_AT)
                                         : vkshmem_ring_.r.mailboxes;
                vkshmem_n_mailboxes_ = vkshmem_ring_.r.n_mailboxes;
                /* The copies into and out of payload slots assume 16-byte aligned slots, and
                 * tickets map to slots by masking: anything else leaves the proxy route unusable
                 * (reported as VKSHMEM_ERR_PROXY_TIMEOUT with detail 0). */
                if (((uint(vkshmem_payload_) | uint(vkshmem_answers_) | vkshmem_pbytes_) & 15u) != 0u ||
                    vkshmem_pbytes_ == 0u ||
                    vkshmem_slots_ == 0u || (vkshmem_slots_ & (vkshmem_slots_ - 1u)) != 0u)
                    vkshmem_slots_ = 0u;
            }
            /* Errors (and the recorded operations' counters) go to the block `self` names: the
             * host's, also when `state` is its device-local copy (read here, never written). */
            vkshmem_st_ = vkshmem_state_ref_(st.s.self != uint64_t(0) ? st.s.self : state);
            vkshmem_ok_ = true;
        }
    }
#if VKSHMEM_LOOP_BUDGET != 0
    if (vkshmem_budget_on_ && subgroupElect()) vkshmem_budget_[vkshmem_budget_cell_()] = uint(VKSHMEM_LOOP_BUDGET);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
#endif
}

int shmem_my_pe() { return vkshmem_me_; }
int shmem_n_pes() { return vkshmem_npes_; }

/* ---- Address translation ------------------------------------------------------------------------ */
#define VKSHMEM_ROUTE_NONE_ 0u
#define VKSHMEM_ROUTE_DIRECT_ 1u
#define VKSHMEM_ROUTE_PROXY_ 2u

/* Where [addr, addr + bytes) of PE pe is: DIRECT (remote = its device address), PROXY, or NONE
 * (bad PE or not in a symmetric heap; recorded as an error when report). */
uint vkshmem_route_(uint64_t addr, uint64_t bytes, int pe, bool report, out uint64_t remote) {
    remote = uint64_t(0);
    if (!vkshmem_ok_) return VKSHMEM_ROUTE_NONE_;
    if (pe < 0 || pe >= vkshmem_npes_) {
        if (report) vkshmem_error_(VKSHMEM_ERR_BAD_PE, uint(pe));
        return VKSHMEM_ROUTE_NONE_;
    }
    uint64_t off = addr - vkshmem_hbase_;
    uint64_t base;
    if (off < vkshmem_hsize_ && bytes <= vkshmem_hsize_ - off) {
        base = vkshmem_peers_.p[pe].host_base;
    } else {
        off = addr - vkshmem_dbase_;
        if (off < vkshmem_dsize_ && bytes <= vkshmem_dsize_ - off) {
            base = vkshmem_peers_.p[pe].device_base;
        } else {
            if (report) vkshmem_error_(VKSHMEM_ERR_NOT_SYMMETRIC, uint(addr));
            return VKSHMEM_ROUTE_NONE_;
        }
    }
    if (base == uint64_t(0) || (vkshmem_flags_ & VKSHMEM_FLAG_FORCE_PROXY) != 0u) {
        if (vkshmem_slots_ == 0u) {
            if (report) vkshmem_error_(VKSHMEM_ERR_PROXY_TIMEOUT, 0u);
            return VKSHMEM_ROUTE_NONE_;
        }
        return VKSHMEM_ROUTE_PROXY_;
    }
    remote = base + off;
    return VKSHMEM_ROUTE_DIRECT_;
}

/* The device address through which this invocation reaches `dest` on PE pe, or 0 when it is not
 * directly reachable (the proxy route, VKSHMEM_FORCE_PROXY, a bad PE or address). */
uint64_t shmem_ptr(uint64_t dest, int pe) {
    uint64_t remote;
    return vkshmem_route_(dest, uint64_t(1), pe, false, remote) == VKSHMEM_ROUTE_DIRECT_ ? remote : uint64_t(0);
}

/* ---- Byte-exact copies -------------------------------------------------------------------------- */
/* k (1..3) bytes at src, in the low bits. Reads only aligned words holding at least one of them
 * (volatile loads with vol). */
uint vkshmem_load_bytes_(uint64_t src, uint k, bool vol) {
    uint64_t sa = src & ~uint64_t(3);
    uint sh = uint(src & uint64_t(3)) * 8u;
    uint lo = vkshmem_rd32_(sa, vol);
    /* the next word only when the bytes reach into it */
    uint hi = vkshmem_rd32_(sa + uint64_t(sh + 8u * k > 32u ? 4u : 0u), vol);
    return sh == 0u ? lo : (lo >> sh) | (hi << (32u - sh));
}

/* Stores k (1..3) bytes from src at dst, which lie in one aligned word, without touching the
 * word's other bytes (two atomics: concurrent writers of the neighbouring bytes are safe). With
 * `slot` (a proxy payload slot, 4-byte aligned, this invocation's alone, whose bytes past the data
 * the proxy ignores) one plain store instead: the host reads the slot while the shader runs, and
 * on NVIDIA a read-modify-write atomic on host memory stays in the GPU's cache until the dispatch
 * ends. */
void vkshmem_store_part_(uint64_t dst, uint64_t src, uint k, bool vol, bool slot) {
    uint v = vkshmem_load_bytes_(src, k, vol);
    if (slot) {
        vkshmem_w32_(dst).v = v;
        return;
    }
    uint dsh = uint(dst & uint64_t(3)) * 8u;
    uint mask = ((1u << (8u * k)) - 1u) << dsh;
    vkshmem_w32_ w = vkshmem_w32_(dst & ~uint64_t(3));
    atomicAnd(w.v, ~mask);
    atomicOr(w.v, (v << dsh) & mask);
}

/* How a copy of n bytes from src to dst is cut:
 *   head    bytes (0..3) up to dst's first 4-byte boundary: a partial-word store
 *   body    the loop's work, from there on. With src and dst equally aligned mod 8 (`dwords`): at
 *           most one word (pre) to an 8-byte boundary, 8-byte units, at most one word (post);
 *           otherwise whole destination words, each assembled from the one or two aligned source
 *           words that hold its bytes (sh: the source's misalignment in bits)
 *   tail    bytes (0..3) after the last whole word: a partial-word store
 * The loop moves VKSHMEM_COPY_UNROLL units per iteration and invocation, `lanes` invocations
 * sharing it: it loads them all, then stores them all, so each invocation keeps several loads in
 * flight (the references are coherent and may alias: the compiler cannot move a load above an
 * earlier store). Invocation 0 also stores the edges (head, pre, post, tail) in a loop of four
 * iterations. (8-byte units rather than 16: lavapipe turns every access into a loop over the
 * SIMD lanes per 32- or 64-bit component, and its JIT time grows faster than linearly with the
 * number of those.) */
struct vkshmem_plan_ {
    uint head;
    uint tail;
    uint sh;
    bool dwords;
    uint pre;
    uint post;
    uint64_t words;
    uint64_t dw;
    uint64_t units; /* the loop's units: dw, or the words */
    uint iters;     /* loop iterations per invocation, 0xffffffff when absurd */
};

vkshmem_plan_ vkshmem_plan_copy_(uint64_t dst, uint64_t src, uint64_t n, uint lanes) {
    vkshmem_plan_ p;
    p.head = uint(min(n, uint64_t((4u - uint(dst & uint64_t(3))) & 3u)));
    uint64_t d = dst + uint64_t(p.head), s = src + uint64_t(p.head), m = n - uint64_t(p.head);
    p.words = m >> 2;
    p.tail = uint(m & uint64_t(3));
    p.sh = uint(s & uint64_t(3)) * 8u;
    p.dwords = ((d ^ s) & uint64_t(7)) == uint64_t(0);
    p.pre = p.dwords && (d & uint64_t(4)) != uint64_t(0) && p.words != uint64_t(0) ? 1u : 0u;
    p.dw = p.dwords ? (p.words - uint64_t(p.pre)) >> 1 : uint64_t(0);
    p.post = p.dwords ? uint(p.words - uint64_t(p.pre) - (p.dw << 1)) : 0u;
    p.units = p.dwords ? p.dw : p.words;
    uint64_t per = uint64_t(VKSHMEM_COPY_UNROLL) * uint64_t(max(lanes, 1u));
    p.iters = vkshmem_clamp32_((p.units + per - uint64_t(1)) / per);
    return p;
}

/* Budget a copy needs: its loop, the edge loop, and 2 for each loop's entry and exit. */
uint vkshmem_plan_cost_(vkshmem_plan_ p) { return p.iters >= 0xfffffff0u ? 0xffffffffu : p.iters + 8u; }

/* One unrolled step of the copy loop: unit i of this iteration is idx + i * lanes. */
#define VKSHMEM_LD8_(i) \
    uint64_t k##i = idx + uint64_t(i * lanes); \
    uint64_t v##i = k##i < p.units ? vkshmem_rd64_(s + (k##i << 3), vol) : uint64_t(0);
#define VKSHMEM_ST8_(i) \
    if (k##i < p.units) vkshmem_w64_(d + (k##i << 3)).v = v##i;
#define VKSHMEM_LD4_(i) \
    uint64_t k##i = idx + uint64_t(i * lanes); \
    uint lo##i = 0u, hi##i = 0u; \
    if (k##i < p.units) { \
        uint64_t a##i = (s + (k##i << 2)) & ~uint64_t(3); \
        lo##i = vkshmem_rd32_(a##i, vol); \
        if (p.sh != 0u) hi##i = vkshmem_rd32_(a##i + uint64_t(4), vol); \
    }
#define VKSHMEM_ST4_(i) \
    if (k##i < p.units) \
        vkshmem_w32_(d + (k##i << 2)).v = p.sh == 0u ? lo##i : (lo##i >> p.sh) | (hi##i << (32u - p.sh));
#if VKSHMEM_COPY_UNROLL == 2
#define VKSHMEM_UNITS_(M) M(0u) M(1u)
#else
#define VKSHMEM_UNITS_(M) M(0u) M(1u) M(2u) M(3u)
#endif

/* Runs a planned copy (its budget already reserved): this invocation's share. vsrc: the source is
 * what the proxy wrote for this shader (volatile loads on GPUs); slot: the destination is a proxy
 * payload slot (see vkshmem_store_part_). */
void vkshmem_run_copy_(vkshmem_plan_ p, uint64_t dst, uint64_t src, uint lane, uint lanes, bool vsrc, bool slot) {
    bool vol = vkshmem_fences_ && vsrc;
    uint64_t d = dst + uint64_t(p.head), s = src + uint64_t(p.head);
    uint64_t idx = uint64_t(lane), stride = uint64_t(VKSHMEM_COPY_UNROLL) * uint64_t(lanes);
    if (p.dwords) {
        d += uint64_t(p.pre << 2);
        s += uint64_t(p.pre << 2);
        for (uint it = 0u; it < p.iters; ++it) {
            VKSHMEM_UNITS_(VKSHMEM_LD8_)
            VKSHMEM_UNITS_(VKSHMEM_ST8_)
            idx += stride;
        }
    } else {
        for (uint it = 0u; it < p.iters; ++it) {
            VKSHMEM_UNITS_(VKSHMEM_LD4_)
            VKSHMEM_UNITS_(VKSHMEM_ST4_)
            idx += stride;
        }
    }
    if (lane == 0u) {
        /* the edges: head (partial), pre (a word), post (a word), tail (partial) */
        uint64_t body = uint64_t(p.head) + (p.words << 2);
        for (uint j = 0u; j < 4u; ++j) {
            uint k = j == 0u ? p.head : j == 1u ? p.pre << 2 : j == 2u ? p.post << 2 : p.tail;
            uint64_t o = j == 0u ? uint64_t(0)
                         : j == 1u ? uint64_t(p.head)
                         : j == 2u ? body - uint64_t(4)
                                   : body;
            if (k == 4u) vkshmem_w32_(dst + o).v = vkshmem_rd32_(src + o, vol); /* dwords: src aligned alike */
            else if (k != 0u) vkshmem_store_part_(dst + o, src + o, k, vol, slot);
        }
    }
}

/* ---- The proxy ring ------------------------------------------------------------------------------- */
/* A slot is reused by ticket T once the proxy has completed its previous ticket P = T - slots and
 * no sender still has to read an answer from it: a sender that will (a get, g, fetching AMO) sets
 * the slot's answer flag to 1 and back to 0 once it has read the answer or given up on it. */
uint64_t vkshmem_slot_req_(uint ticket) { return vkshmem_reqs_ + uint64_t(ticket & (vkshmem_slots_ - 1u)) * uint64_t(64); }
uint64_t vkshmem_slot_busy_(uint ticket) {
    return vkshmem_busy_addr_ + uint64_t(ticket & (vkshmem_slots_ - 1u)) * uint64_t(vkshmem_busy_stride_);
}
uint64_t vkshmem_slot_payload_(uint ticket) {
    return vkshmem_payload_ + uint64_t(ticket & (vkshmem_slots_ - 1u)) * uint64_t(vkshmem_pbytes_);
}
/* Where the proxy's answer to a get or fetching AMO of ticket is read (vkshmem_ring_layout). */
uint64_t vkshmem_slot_answer_(uint ticket) {
    return vkshmem_answers_ + uint64_t(ticket & (vkshmem_slots_ - 1u)) * uint64_t(vkshmem_pbytes_);
}

/* Whether ticket t's slot is free: its previous ticket completed (c: `completed`) and its answer,
 * if any, read. */
bool vkshmem_slot_free_(uint t, uint c) {
    return int(c - (t - vkshmem_slots_)) > 0 && vkshmem_ld32_(vkshmem_slot_busy_(t)) == 0u;
}

/* Whether this invocation's `want` (0..8) slots from ticket t are free (c: `completed`). */
bool vkshmem_slots_free_(uint t, uint want, uint c) {
    bool free = want == 0u || vkshmem_slot_free_(t, c);
    if (want > 1u) free = free && vkshmem_slot_free_(t + 1u, c);
    if (want > 2u) free = free && vkshmem_slot_free_(t + 2u, c);
    if (want > 3u) free = free && vkshmem_slot_free_(t + 3u, c);
    if (want > 4u) free = free && vkshmem_slot_free_(t + 4u, c);
    if (want > 5u) free = free && vkshmem_slot_free_(t + 5u, c);
    if (want > 6u) free = free && vkshmem_slot_free_(t + 6u, c);
    if (want > 7u) free = free && vkshmem_slot_free_(t + 7u, c);
    return free;
}

/* `want` (0..8) consecutive tickets for every active invocation, taken together per subgroup.
 * The subgroup first waits, reading only, until the ring has room for them all; then takes them
 * with one atomic add on head, and waits until their own slots are free (at once, unless other
 * subgroups took room at the same time). An add never fails, so subgroups do not serialize on
 * head, as a compare-and-swap loop makes them do (one winner per round trip). A taken ticket is
 * published as soon as its slot is free; the earliest unpublished ticket always has its slot
 * freed (its previous occupant's senders are running and its earlier tickets are published), so
 * nobody waits forever however full the ring, and a wait that times out in the first step has
 * taken nothing. Returns the first ticket; false on timeout (recorded). */
bool vkshmem_take_tickets_(uint want, out uint first) {
    uint total = subgroupAdd(want);
    uint offset = subgroupExclusiveAdd(want);
    uint n = vkshmem_wait_iters_();
    bool ok = false;
    uint i;
    /* wait_polls attempts with the back-off after each, and a last one (the re-check) */
    for (i = 0u; i <= n; ++i) {
        uint h = 0u;
        if (subgroupElect()) h = vkshmem_ld32_(vkshmem_head_addr_);
        h = subgroupBroadcastFirst(h);
        ok = int(h + total - vkshmem_ld32_(vkshmem_done_addr_)) <= int(vkshmem_slots_);
        if (ok || i == n || vkshmem_backoff_()) break;
    }
    vkshmem_charge_(i + 2u);
    if (!ok) {
        vkshmem_wait_failed_(VKSHMEM_ERR_PROXY_TIMEOUT, VKSHMEM_WAIT_ID_RING_SLOT, i);
        return false;
    }
    uint h = 0u;
    if (subgroupElect()) h = atomicAdd(vkshmem_w32_(vkshmem_head_addr_).v, total);
    first = subgroupBroadcastFirst(h) + offset;
    vkshmem_last_ticket_ = first + want - 1u;
    vkshmem_pending_ = true;
    n = vkshmem_wait_iters_();
    for (i = 0u; i <= n; ++i) {
        ok = subgroupAll(vkshmem_slots_free_(first, want, vkshmem_ld32_(vkshmem_done_addr_)));
        if (ok || i == n || vkshmem_backoff_()) break;
    }
    vkshmem_charge_(i + 2u);
    if (!ok) { /* taken and never published: the dispatch reports the ring left behind */
        vkshmem_wait_failed_(VKSHMEM_ERR_PROXY_TIMEOUT, VKSHMEM_WAIT_ID_RING_SLOT, i);
        return false;
    }
    vkshmem_fence_(); /* acquire: the slots' last occupants are done before these requests reuse them */
    return true;
}
bool vkshmem_take_ticket_(out uint ticket) { return vkshmem_take_tickets_(1u, ticket); }

/* Fills a request, all but `ready`; `answer`: the sender will read an answer from the payload. */
void vkshmem_fill_(uint ticket, uint op, int pe, uint bytes, uint64_t target, uint64_t operand, uint64_t cond,
                   uint amo_op, uint width, bool answer) {
    uint64_t r = vkshmem_slot_req_(ticket);
    vkshmem_w32_(r + uint64_t(4)).v = op;
    vkshmem_w64_(r + uint64_t(8)).v = packUint2x32(uvec2(uint(pe), bytes));
    vkshmem_w64_(r + uint64_t(16)).v = target;
    vkshmem_w64_(r + uint64_t(24)).v = operand;
    vkshmem_w64_(r + uint64_t(32)).v = cond;
    vkshmem_w64_(r + uint64_t(40)).v = packUint2x32(uvec2(amo_op, width));
    vkshmem_w32_(vkshmem_slot_busy_(ticket)).v = answer ? 1u : 0u;
}

/* Hands the filled request (and its payload) to the proxy. */
void vkshmem_publish_(uint ticket) {
    vkshmem_fence_(); /* release: the request and its payload before `ready` */
    atomicStore(vkshmem_w32_(vkshmem_slot_req_(ticket)).v, ticket + 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                gl_SemanticsRelaxed);
}

/* The sender of an answered request is done with its payload (read it, or gave up: the proxy may
 * still answer later, which is harmless, as the next sender waits for completion too). */
void vkshmem_consume_(uint ticket) {
    vkshmem_fence_(); /* release: the payload read before the slot is handed on */
    atomicStore(vkshmem_w32_(vkshmem_slot_busy_(ticket)).v, 0u, gl_ScopeDevice,
                gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}

/* Waits until the proxy has completed `ticket` (completed > ticket). */
bool vkshmem_wait_done_(uint ticket, uint id) {
    uint n = vkshmem_wait_iters_();
    bool done = false;
    uint i;
    for (i = 0u; i < n; ++i) {
        uint c = vkshmem_ld32_(vkshmem_done_addr_);
        if (int(c - ticket) > 0) {
            done = true;
            break;
        }
        if (vkshmem_backoff_()) break;
    }
    vkshmem_charge_(i + 2u);
    if (!done) /* the re-check */
        done = int(vkshmem_ld32_(vkshmem_done_addr_) - ticket) > 0;
    if (!done) vkshmem_wait_failed_(VKSHMEM_ERR_PROXY_TIMEOUT, id, i);
    else vkshmem_fence_(); /* acquire: the answer in the payload after `completed` */
    return done;
}

/* One request that carries at most 8 bytes each way (p, g, AMO). With `answer`, waits for it and
 * returns the first 8 bytes of the payload (ok false and 0 on failure). */
uint64_t vkshmem_proxy_small_(uint op, int pe, uint bytes, uint64_t target, uint64_t operand, uint64_t cond,
                              uint amo_op, uint width, bool answer, out bool ok) {
    ok = false;
    uint t;
    if (!vkshmem_take_ticket_(t)) return uint64_t(0);
    vkshmem_fill_(t, op, pe, bytes, target, operand, cond, amo_op, width, answer);
    if (op == VKSHMEM_OP_PUT) vkshmem_w64_(vkshmem_slot_payload_(t)).v = operand; /* a p's value */
    vkshmem_publish_(t);
    if (!answer) {
        ok = true;
        return uint64_t(0);
    }
    ok = vkshmem_wait_done_(t, VKSHMEM_WAIT_ID_PROXY_REPLY);
    uint64_t v = ok ? vkshmem_ld64_(vkshmem_slot_answer_(t)) : uint64_t(0);
    vkshmem_consume_(t);
    return v;
}

/* Whether a store or atomic on `flag` at `pe` could arrive before data put to `data` there: the
 * data goes through the proxy and the flag does not (their heaps have different routes, as with
 * VKSHMEM_SHARE_DEVICE_HEAPS=0). Otherwise stores are ordered by memory barriers, and the proxy's
 * requests by their tickets. */
bool vkshmem_overtakes_(uint64_t data, uint64_t flag, int pe) {
    uint64_t r;
    return vkshmem_route_(data, uint64_t(1), pe, false, r) == VKSHMEM_ROUTE_PROXY_ &&
           vkshmem_route_(flag, uint64_t(8), pe, false, r) == VKSHMEM_ROUTE_DIRECT_;
}

/* ---- Ordering and completion -------------------------------------------------------------------- */
/* Completes every operation this invocation issued: its stores are visible device-wide and the
 * proxy has executed every request it sent. */
void shmem_quiet() {
    vkshmem_fence_();
    if (vkshmem_pending_ && vkshmem_wait_done_(vkshmem_last_ticket_, VKSHMEM_WAIT_ID_QUIET))
        vkshmem_pending_ = false;
    vkshmem_fence_();
}

/* Orders this invocation's puts, AMOs and signals to each PE. Direct stores need only a memory
 * barrier; with proxy requests in flight (possibly to a heap reached directly by later stores) it
 * waits for them, like shmem_quiet. */
void shmem_fence() {
    if (vkshmem_pending_) shmem_quiet();
    else vkshmem_fence_();
}

/* ---- Transfers ------------------------------------------------------------------------------------ */
uint64_t vkshmem_amo64_(uint64_t dest, uint op, uint64_t operand, uint64_t cond, int pe, bool fetch);

/* Proxy requests one invocation keeps in flight in a transfer: a get sends this many pieces, then
 * waits once (the proxy completes in order) and copies them out. (1..8) */
#ifndef VKSHMEM_PROXY_BATCH
#define VKSHMEM_PROXY_BATCH 8
#endif
/* The same for a subgroup that copies its pieces together (workgroup forms): at most 8 tickets
 * per invocation. (1..8 * subgroup size) A subgroup's batch is one region of the proxy's device
 * copies, which cost a few microseconds per region: the larger, the faster. */
#ifndef VKSHMEM_PROXY_SUBGROUP_BATCH
#define VKSHMEM_PROXY_SUBGROUP_BATCH 64
#endif

/* A put (local src -> dest on pe) or a get (src on pe -> local dest) of `bytes`, any alignment.
 * Direct: one copy, shared by `lanes` invocations (lane is this one's index). Proxy: pieces of
 * the payload size, each through its own ticket, in rounds of a batch of consecutive pieces per
 * sender whose tickets it takes at once: a put copies each piece into its slot and publishes it;
 * a get publishes the batch, waits for its last ticket, copies the answers out and releases the
 * slots. The sender is the invocation alone (lanes 1), or in the workgroup forms each subgroup,
 * whose invocations copy every piece together: one invocation's stores, 16 bytes at a time, keep
 * too few in flight to fill a slot in host memory at the bus's rate.
 * With `signal` (puts), the signal follows the data: through the proxy as the last piece's
 * PUT_SIGNAL, directly as an AMO after a memory barrier. The loop budget for every copy is
 * reserved before anything is sent: a transfer that cannot fit sends nothing. */
void vkshmem_xfer_(bool put, uint64_t dest, uint64_t src, uint64_t bytes, int pe, uint lane, uint lanes, bool signal,
                   uint64_t sig_addr, uint64_t sig_value, uint sig_op) {
    uint64_t sym = put ? dest : src, remote, sig_remote;
    uint route = vkshmem_route_(sym, bytes, pe, true, remote);
    if (route == VKSHMEM_ROUTE_NONE_) return;
    if (signal && vkshmem_route_(sig_addr, uint64_t(8), pe, true, sig_remote) == VKSHMEM_ROUTE_NONE_) return;
    bool proxy = route == VKSHMEM_ROUTE_PROXY_;
    /* together: the subgroup is the sender (uniform: the workgroup forms run in uniform control
     * flow); its active invocations, counted, share each copy */
    bool together = proxy && lanes > 1u;
    uvec4 here = subgroupBallot(true);
    uint sub_lane = subgroupBallotExclusiveBitCount(here), sub_lanes = subgroupBallotBitCount(here);
    bool leader = !together || sub_lane == 0u; /* hands answered slots back */
    /* Together, the senders are the subgroups of every workgroup that takes part (lanes counts
     * whole workgroups: one for the workgroup forms, the dispatch for recorded transfers). */
    uint wgs = max(lanes / (gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z), 1u);
    uint sender = together ? (lane / (lanes / wgs)) * gl_NumSubgroups + gl_SubgroupID : lane;
    uint senders = together ? wgs * gl_NumSubgroups : lanes;
    uint64_t pb = proxy ? uint64_t(vkshmem_pbytes_) : max(bytes, uint64_t(1));
    uint64_t pieces = proxy ? (bytes + pb - uint64_t(1)) / pb : uint64_t(1);
    if (signal && pieces == uint64_t(0)) pieces = uint64_t(1);
    /* a subgroup never asks for more tickets at once than the ring has */
    uint batch = !proxy    ? 1u
                 : together ? clamp(min(uint(VKSHMEM_PROXY_SUBGROUP_BATCH), 8u * sub_lanes), 1u, vkshmem_slots_ / 2u)
                            : uint(clamp(min(VKSHMEM_PROXY_BATCH, int(vkshmem_slots_ / gl_SubgroupSize)), 1, 8));
    /* Rounds: in each, the sender sends the `batch` consecutive pieces from first + r * step, so
     * a subgroup's tickets (taken together, sender after sender) carry consecutive pieces, which
     * the proxy carries out as one transfer. */
    uint64_t first = proxy ? uint64_t(sender) * uint64_t(batch) : uint64_t(0);
    uint64_t step = proxy ? uint64_t(senders) * uint64_t(batch) : uint64_t(1);
    uint copy_lane = !proxy ? lane : together ? sub_lane : 0u;
    uint copy_lanes = !proxy ? lanes : together ? sub_lanes : 1u;
    uint64_t batches = first < pieces ? (pieces - first + step - uint64_t(1)) / step : uint64_t(0);
    uint64_t mine = batches == uint64_t(0) ? uint64_t(0)
                    : (batches - uint64_t(1)) * uint64_t(batch) +
                          min(uint64_t(batch), pieces - first - (batches - uint64_t(1)) * step);
    /* Payload slots are 16-byte aligned (address 0 stands for one); every piece but the last is
     * planned like the first, and the last is no larger. Budget: the copies, the batch loop and
     * its three inner loops. */
    uint64_t pd = put ? (proxy ? uint64_t(0) : remote) : dest + first * pb;
    uint64_t ps = put ? src + first * pb : (proxy ? uint64_t(0) : remote);
    uint64_t cost = mine * uint64_t(vkshmem_plan_cost_(vkshmem_plan_copy_(pd, ps, min(bytes, pb), copy_lanes))) +
                    batches * uint64_t(3u * batch + 8u) + uint64_t(2);
    if (!vkshmem_reserve_(vkshmem_clamp32_(cost))) {
        vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(bytes));
        return;
    }
    uint t0 = 0u;
    for (uint64_t k0 = first; k0 < pieces; k0 += step) {
        /* the sender's pieces k0 .. k0 + nb - 1, tickets t0 .. t0 + nb - 1 */
        uint nb = uint(min(uint64_t(batch), pieces - k0));
        uint sent = proxy ? 0u : nb;
        /* together, invocation i takes (and checks the slots of) as many tickets as it fills
         * below: those of t0 + i, t0 + i + sub_lanes, ... before t0 + nb */
        if (proxy && vkshmem_take_tickets_(together ? (nb + sub_lanes - 1u - sub_lane) / sub_lanes : nb, t0)) {
            if (together) {
                t0 = subgroupBroadcastFirst(t0);
                vkshmem_last_ticket_ = t0 + nb - 1u;
            }
            /* The requests: together, invocation i fills and publishes tickets t0 + i,
             * t0 + i + sub_lanes, ... (each store into the ring's host memory costs its invocation
             * a bus transaction). */
            uint r0 = together ? sub_lane : 0u, rstep = together ? sub_lanes : 1u;
            for (uint j = r0; j < nb; j += rstep) {
                uint64_t k = k0 + uint64_t(j), off = k * pb;
                bool with_signal = signal && k + uint64_t(1) == pieces;
                vkshmem_fill_(t0 + j, put ? (with_signal ? VKSHMEM_OP_PUT_SIGNAL : VKSHMEM_OP_PUT) : VKSHMEM_OP_GET,
                              pe, uint(min(bytes - off, pb)), sym + off, with_signal ? sig_value : uint64_t(0),
                              with_signal ? sig_addr : uint64_t(0), with_signal ? sig_op : 0u, with_signal ? 8u : 0u,
                              !put);
            }
            for (uint j = 0u; j < nb && put; ++j) {
                uint64_t off = (k0 + uint64_t(j)) * pb, n = min(bytes - off, pb), slot = vkshmem_slot_payload_(t0 + j);
                vkshmem_run_copy_(vkshmem_plan_copy_(slot, src + off, n, copy_lanes), slot, src + off, copy_lane,
                                  copy_lanes, false, true);
            }
            /* every invocation's share of the payloads, then one release for the batch */
            vkshmem_fence_();
            if (together) subgroupBarrier();
            for (uint j = r0; j < nb; j += rstep)
                atomicStore(vkshmem_w32_(vkshmem_slot_req_(t0 + j)).v, t0 + j + 1u, gl_ScopeDevice,
                            gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
            sent = nb;
        }
        if (put && proxy) {
            if (sent < nb) break; /* no ticket: recorded */
            continue;
        }
        /* direct transfers and the answers of a batch of gets */
        bool answered = !proxy || (sent != 0u && vkshmem_wait_done_(t0 + sent - 1u, VKSHMEM_WAIT_ID_PROXY_REPLY));
        for (uint j = 0u; j < sent; ++j) {
            uint64_t off = proxy ? (k0 + uint64_t(j)) * pb : uint64_t(0);
            uint64_t n = min(bytes - off, pb);
            uint64_t cd = put ? remote : dest + off;
            uint64_t cs = put ? src : (proxy ? vkshmem_slot_answer_(t0 + j) : remote);
            /* the source: the proxy's answer (volatile loads on GPUs), or memory of a heap */
            if (answered)
                vkshmem_run_copy_(vkshmem_plan_copy_(cd, cs, n, copy_lanes), cd, cs, copy_lane, copy_lanes, proxy,
                                  false);
            if (together) subgroupBarrier(); /* every invocation has read the answer */
            if (proxy && leader) vkshmem_consume_(t0 + j);
        }
        if (!answered || sent < nb) break;
    }
    if (signal && !proxy) {
        vkshmem_fence_();
        vkshmem_amo64_(sig_addr, sig_op == VKSHMEM_SIGNAL_ADD ? VKSHMEM_AMO_ADD : VKSHMEM_AMO_SET, sig_value,
                       uint64_t(0), pe, false);
    }
}

void vkshmem_put_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    vkshmem_xfer_(true, dest, src, bytes, pe, 0u, 1u, false, uint64_t(0), uint64_t(0), 0u);
}
void vkshmem_get_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    vkshmem_xfer_(false, dest, src, bytes, pe, 0u, 1u, false, uint64_t(0), uint64_t(0), 0u);
}

/* The workgroup's size. glslang takes gl_WorkGroupSize as (1, 1, 1) in code that precedes the
 * shader's layout(local_size_...) declaration, which would make every invocation do the whole
 * workgroup's work: that is checked against the subgroups the workgroup runs and reported. */
uint vkshmem_wg_lanes_() {
    uint lanes = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
    uint seen = gl_NumSubgroups * gl_SubgroupSize;
    if (lanes > seen || lanes + gl_SubgroupSize <= seen) vkshmem_error_(VKSHMEM_ERR_WG_SIZE, lanes);
    return lanes;
}

/* Workgroup-cooperative forms: every invocation of the workgroup calls them with the same
 * arguments, in uniform control flow; they begin and end with a memory barrier and barrier(). */
void vkshmem_put_wg_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    vkshmem_fence_();
    barrier();
    vkshmem_xfer_(true, dest, src, bytes, pe, gl_LocalInvocationIndex, vkshmem_wg_lanes_(), false, uint64_t(0),
                  uint64_t(0), 0u);
    vkshmem_fence_();
    barrier();
}
void vkshmem_get_wg_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    vkshmem_fence_();
    barrier();
    vkshmem_xfer_(false, dest, src, bytes, pe, gl_LocalInvocationIndex, vkshmem_wg_lanes_(), false, uint64_t(0),
                  uint64_t(0), 0u);
    vkshmem_fence_();
    barrier();
}

void shmem_putmem(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_put_(dest, source, nelems, pe); }
void shmem_getmem(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_get_(dest, source, nelems, pe); }
void shmem_putmem_nbi(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_put_(dest, source, nelems, pe); }
void shmem_getmem_nbi(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_get_(dest, source, nelems, pe); }
void shmem_putmem_wg(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_put_wg_(dest, source, nelems, pe); }
void shmem_getmem_wg(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_get_wg_(dest, source, nelems, pe); }

/* Single elements (p, g): 4 or 8 bytes, naturally aligned. */
void vkshmem_pw_(uint64_t dest, uint64_t value, int pe, uint width) {
    uint64_t remote;
    uint route = vkshmem_route_(dest, uint64_t(width), pe, true, remote);
    if (route == VKSHMEM_ROUTE_DIRECT_) {
        if (width == 4u) vkshmem_w32_(remote).v = uint(value);
        else vkshmem_w64_(remote).v = value;
    } else if (route == VKSHMEM_ROUTE_PROXY_) {
        bool ok;
        vkshmem_proxy_small_(VKSHMEM_OP_PUT, pe, width, dest, value, uint64_t(0), 0u, 0u, false, ok);
    }
}
void vkshmem_p32_(uint64_t dest, uint value, int pe) { vkshmem_pw_(dest, uint64_t(value), pe, 4u); }
void vkshmem_p64_(uint64_t dest, uint64_t value, int pe) { vkshmem_pw_(dest, value, pe, 8u); }

uint64_t vkshmem_gw_(uint64_t src, int pe, uint width) {
    uint64_t remote;
    uint route = vkshmem_route_(src, uint64_t(width), pe, true, remote);
    bool ok;
    if (route == VKSHMEM_ROUTE_PROXY_) {
        uint64_t v = vkshmem_proxy_small_(VKSHMEM_OP_GET, pe, width, src, uint64_t(0), uint64_t(0), 0u, 0u, true, ok);
        return width == 4u ? uint64_t(uint(v)) : v;
    }
    if (route != VKSHMEM_ROUTE_DIRECT_) return uint64_t(0);
    return width == 4u ? uint64_t(vkshmem_w32_(remote).v) : vkshmem_w64_(remote).v;
}
uint vkshmem_g32_(uint64_t src, int pe) { return uint(vkshmem_gw_(src, pe, 4u)); }
uint64_t vkshmem_g64_(uint64_t src, int pe) { return vkshmem_gw_(src, pe, 8u); }

/* ---- Atomics (op: VKSHMEM_AMO_*) ------------------------------------------------------------- */
/* One AMO of width 4 or 8 bytes (naturally aligned); the old value when fetch. A fetch is a poll's
 * load (volatile on GPUs). On NVIDIA (driver 580) a shader's read-modify-write on a host heap is
 * performed in the GPU's cache: atomic with other shaders' on that GPU, but neither the host's
 * atomics nor its reads see it until the dispatch ends (README: host and shaders during a
 * dispatch). */
uint64_t vkshmem_amo_(uint64_t dest, uint op, uint64_t operand, uint64_t cond, int pe, bool fetch, uint width) {
    uint64_t remote;
    uint route = vkshmem_route_(dest, uint64_t(width), pe, true, remote);
    /* Several GPUs on this node: a host heap's atomics by the proxies' CPU atomics, which are
     * atomic with each other, as two GPUs' atomics there are not (VKSHMEM_FLAG_HOST_AMO_PROXY). */
    if (route == VKSHMEM_ROUTE_DIRECT_ && (vkshmem_flags_ & VKSHMEM_FLAG_HOST_AMO_PROXY) != 0u &&
        dest - vkshmem_hbase_ < vkshmem_hsize_ && vkshmem_slots_ != 0u)
        route = VKSHMEM_ROUTE_PROXY_;
    if (route == VKSHMEM_ROUTE_PROXY_) {
        bool ok;
        uint64_t v = vkshmem_proxy_small_(VKSHMEM_OP_AMO, pe, width, dest, operand, cond, op, width, fetch, ok);
        return width == 4u ? uint64_t(uint(v)) : v;
    }
    if (route != VKSHMEM_ROUTE_DIRECT_) return uint64_t(0);
    if (width == 4u) {
        vkshmem_w32_ w = vkshmem_w32_(remote);
        uint x = uint(operand), c = uint(cond);
        switch (op) {
        case VKSHMEM_AMO_FETCH: return uint64_t(vkshmem_ld32_(remote));
        case VKSHMEM_AMO_SET:
        case VKSHMEM_AMO_SWAP: return uint64_t(atomicExchange(w.v, x));
        case VKSHMEM_AMO_COMPARE_SWAP: return uint64_t(atomicCompSwap(w.v, c, x));
        case VKSHMEM_AMO_ADD: return uint64_t(atomicAdd(w.v, x));
        case VKSHMEM_AMO_AND: return uint64_t(atomicAnd(w.v, x));
        case VKSHMEM_AMO_OR: return uint64_t(atomicOr(w.v, x));
        case VKSHMEM_AMO_XOR: return uint64_t(atomicXor(w.v, x));
        }
        return uint64_t(0);
    }
    vkshmem_w64_ w = vkshmem_w64_(remote);
    switch (op) {
    case VKSHMEM_AMO_FETCH: return vkshmem_ld64_(remote);
    case VKSHMEM_AMO_SET:
    case VKSHMEM_AMO_SWAP: return atomicExchange(w.v, operand);
    case VKSHMEM_AMO_COMPARE_SWAP: return atomicCompSwap(w.v, cond, operand);
    case VKSHMEM_AMO_ADD: return atomicAdd(w.v, operand);
    case VKSHMEM_AMO_AND: return atomicAnd(w.v, operand);
    case VKSHMEM_AMO_OR: return atomicOr(w.v, operand);
    case VKSHMEM_AMO_XOR: return atomicXor(w.v, operand);
    }
    return uint64_t(0);
}

uint vkshmem_amo32_(uint64_t dest, uint op, uint operand, uint cond, int pe, bool fetch) {
    return uint(vkshmem_amo_(dest, op, uint64_t(operand), uint64_t(cond), pe, fetch, 4u));
}
uint64_t vkshmem_amo64_(uint64_t dest, uint op, uint64_t operand, uint64_t cond, int pe, bool fetch) {
    return vkshmem_amo_(dest, op, operand, cond, pe, fetch, 8u);
}

/* ---- Signals ----------------------------------------------------------------------------------- */
/* put_signal: the data, then (once it is delivered) SHMEM_SIGNAL_SET or _ADD of `signal` to the
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

/* put_signal by the whole workgroup (every invocation calls it with the same arguments, in
 * uniform control flow): the data split over every invocation as shmem_putmem_wg, then the signal
 * alone, by invocation 0. Stores are visible (put_wg's memory barrier) before it; requests to the
 * proxy come before it in ticket order, and the proxy carries out a signal only after the puts
 * before it. Nothing here waits for the proxy: a kernel that waits on a GPU that other processes
 * share holds them up, and with them copies the proxy's requests may need (PEs on two GPUs). */
void shmem_putmem_signal_wg(uint64_t dest, uint64_t source, uint64_t nelems, uint64_t sig_addr, uint64_t signal,
                            int sig_op, int pe) {
    vkshmem_put_wg_(dest, source, nelems, pe);
    if (vkshmem_overtakes_(dest, sig_addr, pe)) {
        shmem_quiet();
        barrier();
    }
    if (gl_LocalInvocationIndex == 0u) vkshmem_put_signal_(dest, source, uint64_t(0), sig_addr, signal, sig_op, pe);
    vkshmem_fence_();
    barrier();
}

/* The signal at sig_addr, a symmetric uint64_t of this PE. */
uint64_t shmem_signal_fetch(uint64_t sig_addr) {
    uint64_t v = vkshmem_ld64_(sig_addr);
    vkshmem_fence_();
    return v;
}

/* ---- Point-to-point synchronization (on this PE's own memory) ------------------------------- */
/* A comparison as a set of outcomes: bit 0 when a < b satisfies it, bit 1 when a == b, bit 2 when
 * a > b (so that a poll compares without branching). */
uint vkshmem_cmp_set_(int cmp) {
    return cmp == SHMEM_CMP_EQ ? 2u : cmp == SHMEM_CMP_NE ? 5u : cmp == SHMEM_CMP_GT ? 4u :
           cmp == SHMEM_CMP_GE ? 6u : cmp == SHMEM_CMP_LT ? 1u : cmp == SHMEM_CMP_LE ? 3u : 0u;
}

/* Whether `a cmp b` holds for a value of `width` bytes (4: the low halves) compared signed or not. */
bool vkshmem_holds_(uint64_t a, uint64_t b, uint set, bool sgn, uint width) {
    bool lt;
    if (width == 4u) lt = sgn ? int(uint(a)) < int(uint(b)) : uint(a) < uint(b);
    else lt = sgn ? int64_t(a) < int64_t(b) : a < b;
    bool eq = width == 4u ? uint(a) == uint(b) : a == b;
    return (set & (eq ? 2u : (lt ? 1u : 4u))) != 0u;
}

uint64_t vkshmem_load_(uint64_t addr, uint width) {
    return width == 4u ? uint64_t(vkshmem_ld32_(addr)) : vkshmem_ld64_(addr);
}

/* Bounded wait: at most wait_polls polls (relaxed atomic loads, each followed by the back-off),
 * then one more check, then an acquire fence; on timeout the error is recorded (code, id) and the
 * last value seen is returned. */
uint64_t vkshmem_wait_(uint64_t ivar, int cmp, uint64_t value, bool sgn, uint width, uint code, uint id) {
    uint set = vkshmem_cmp_set_(cmp);
    uint n = vkshmem_wait_iters_();
    uint64_t v = uint64_t(0);
    bool done = false;
    uint i;
    for (i = 0u; i < n; ++i) {
        v = vkshmem_load_(ivar, width);
        if (vkshmem_holds_(v, value, set, sgn, width)) {
            done = true;
            break;
        }
        if (vkshmem_backoff_()) break;
    }
    vkshmem_charge_(i + 2u);
    if (!done) { /* the re-check */
        v = vkshmem_load_(ivar, width);
        done = vkshmem_holds_(v, value, set, sgn, width);
    }
    if (!done) vkshmem_wait_failed_(code, id, i);
    vkshmem_fence_();
    return v;
}

uint vkshmem_wait32_(uint64_t ivar, int cmp, uint value, bool sgn, uint id) {
    return uint(vkshmem_wait_(ivar, cmp, uint64_t(value), sgn, 4u, VKSHMEM_ERR_WAIT_TIMEOUT, id));
}
uint64_t vkshmem_wait64_(uint64_t ivar, int cmp, uint64_t value, bool sgn, uint id) {
    return vkshmem_wait_(ivar, cmp, value, sgn, 8u, VKSHMEM_ERR_WAIT_TIMEOUT, id);
}
int vkshmem_test_(uint64_t ivar, int cmp, uint64_t value, bool sgn, uint width) {
    bool ok = vkshmem_holds_(vkshmem_load_(ivar, width), value, vkshmem_cmp_set_(cmp), sgn, width);
    vkshmem_fence_();
    return ok ? 1 : 0;
}
int vkshmem_test32_(uint64_t ivar, int cmp, uint value, bool sgn) { return vkshmem_test_(ivar, cmp, uint64_t(value), sgn, 4u); }
int vkshmem_test64_(uint64_t ivar, int cmp, uint64_t value, bool sgn) { return vkshmem_test_(ivar, cmp, value, sgn, 8u); }

/* Waits (bounded) until the signal at sig_addr (this PE) satisfies cmp; returns its value. */
uint64_t shmem_signal_wait_until(uint64_t sig_addr, int cmp, uint64_t cmp_value) {
    return vkshmem_wait_(sig_addr, cmp, cmp_value, false, 8u, VKSHMEM_ERR_WAIT_TIMEOUT, VKSHMEM_WAIT_ID_SIGNAL_WAIT_UNTIL);
}

/* ---- Arrive and wait: barriers and team syncs ---------------------------------------------------- */
/* One invocation: adds an arrival to `counter` (a symmetric uint64_t) on each of the n PEs
 * (members: the world PEs listed at `pes`, an i32 table, or when it is 0 the PEs 0..n-1; `me`
 * indexes this PE among them), then waits until its own counter has n arrivals for each sync so
 * far. The low 32 bits count arrivals, the high 32 bits this PE's own syncs (its own add carries
 * both), so the counter never needs resetting: its low half overflows after 2^32 / n syncs. */
void vkshmem_arrive_wait_(uint64_t counter, uint64_t pes, int n, int me) {
    uint64_t remote;
    if (vkshmem_route_(counter, uint64_t(8), vkshmem_me_, true, remote) == VKSHMEM_ROUTE_NONE_) return;
    uint epoch = uint(vkshmem_load_(counter, 8u) >> 32);
    if (!vkshmem_reserve_(uint(n) + 2u)) {
        vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, uint(n));
        return;
    }
    /* This PE first: through the proxy, which serves requests in order, no other PE can see this
     * sync complete (and arrive at the next one) before the high half counts it. */
    for (int k = 0; k < n; ++k) {
        int i = (me + k) % n;
        int pe = pes == uint64_t(0) ? i : vkshmem_pes_ref_(pes).p[i];
        uint64_t add = k == 0 ? (uint64_t(1) << 32) + uint64_t(1) : uint64_t(1);
        vkshmem_amo64_(counter, VKSHMEM_AMO_ADD, add, uint64_t(0), pe, false);
    }
    /* Until the low half (the first 4 bytes) reaches n * (epoch + 1). */
    vkshmem_wait_(counter, SHMEM_CMP_GE, uint64_t(uint(n) * (epoch + 1u)), false, 4u, VKSHMEM_ERR_WAIT_TIMEOUT,
                  pes == uint64_t(0) ? VKSHMEM_WAIT_ID_BARRIER : VKSHMEM_WAIT_ID_TEAM_SYNC);
}

/* ---- Barrier on a counter of the application's: one workgroup per PE ----------------------------- */
/* All PEs, each with exactly one workgroup in this call, meet here. `counter` is a symmetric
 * uint64_t that the host zeroes once (shmem_calloc) and passes to every PE; it must be used by
 * nothing else (see vkshmem_arrive_wait_). Every invocation of the workgroup calls it, in uniform
 * control flow. It completes (shmem_quiet) every invocation's operations first. The team
 * collectives (vkshmem_coll.glsl, shmem_barrier_all_wg() without arguments) need no counter. */
void shmem_barrier_all_wg(uint64_t counter) {
    shmem_quiet();
    barrier();
    if (gl_LocalInvocationIndex == 0u && vkshmem_ok_) vkshmem_arrive_wait_(counter, uint64_t(0), vkshmem_npes_, vkshmem_me_);
    vkshmem_fence_();
    barrier();
}

/* ---- Teams and collectives ------------------------------------------------------------------------ */
#include "vkshmem_coll.glsl"

/* ---- Typed and sized routines (generated) ----------------------------------------------------- */
#include "vkshmem_typed.glsl"

#endif /* VKSHMEM_GLSL */
