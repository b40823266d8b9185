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
 * shaderBufferInt64Atomics, subgroup basic/ballot/arithmetic operations in
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

#include "vkshmem_abi.h"

/* ---- Constants (values as in the host's shmem.h) ------------------------------------------ */
#ifndef SHMEM_CMP_EQ
#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_GE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_LE 5
#endif
#ifndef SHMEM_SIGNAL_SET
#define SHMEM_SIGNAL_SET 0 /* = VKSHMEM_SIGNAL_SET */
#define SHMEM_SIGNAL_ADD 1 /* = VKSHMEM_SIGNAL_ADD */
#endif

/* Which wait gave up: the error_info of VKSHMEM_ERR_WAIT_TIMEOUT / VKSHMEM_ERR_PROXY_TIMEOUT.
 * VKSHMEM_WAIT_BUDGET_BIT is added when the loop budget (not wait_polls) ended the wait. */
#define VKSHMEM_WAIT_ID_WAIT_UNTIL 1u        /* shmem_TYPE_wait_until               (WAIT_TIMEOUT)  */
#define VKSHMEM_WAIT_ID_SIGNAL_WAIT_UNTIL 2u /* shmem_signal_wait_until             (WAIT_TIMEOUT)  */
#define VKSHMEM_WAIT_ID_BARRIER 3u           /* shmem_barrier_all_wg                (WAIT_TIMEOUT)  */
#define VKSHMEM_WAIT_ID_RING_SLOT 4u         /* a free proxy ring slot              (PROXY_TIMEOUT) */
#define VKSHMEM_WAIT_ID_PROXY_REPLY 5u       /* the answer to a get or fetching AMO (PROXY_TIMEOUT) */
#define VKSHMEM_WAIT_ID_QUIET 6u             /* shmem_quiet / shmem_fence           (PROXY_TIMEOUT) */
#define VKSHMEM_WAIT_BUDGET_BIT 0x100u

/* Loop budget (see README: lavapipe ends every loop silently after 65,535 iterations per SIMD
 * subgroup). Iterations of the library's loops are counted per subgroup against this budget; an
 * operation that cannot fit is reported (VKSHMEM_ERR_TOO_LARGE) instead of being truncated.
 * Define it before including this file: 0 turns the accounting off (drivers without the cap). */
#ifndef VKSHMEM_LOOP_BUDGET
#define VKSHMEM_LOOP_BUDGET 60000
#endif
/* Budget cells in shared memory, one per subgroup (a power of two; more subgroups share cells). */
#ifndef VKSHMEM_BUDGET_CELLS
#define VKSHMEM_BUDGET_CELLS 256u
#endif
/* Checks per iteration of a wait loop (8, 16 or 32): one iteration is one "poll" of
 * state.wait_polls. On lavapipe an iteration of 32 costs about 0.45 us, so the 65,535-iteration
 * cap still allows a wait of about 30 ms per subgroup; fewer checks make shaders compile faster
 * and waits shorter. */
#ifndef VKSHMEM_POLL_UNROLL
#define VKSHMEM_POLL_UNROLL 32
#endif

#define VKSHMEM_REP4_(S) S S S S
#define VKSHMEM_REP8_(S) S S S S S S S S
#if VKSHMEM_POLL_UNROLL == 8
#define VKSHMEM_REP_POLL_(S) VKSHMEM_REP8_(S)
#elif VKSHMEM_POLL_UNROLL == 16
#define VKSHMEM_REP_POLL_(S) VKSHMEM_REP8_(S) VKSHMEM_REP8_(S)
#elif VKSHMEM_POLL_UNROLL == 32
#define VKSHMEM_REP_POLL_(S) VKSHMEM_REP8_(S) VKSHMEM_REP8_(S) VKSHMEM_REP8_(S) VKSHMEM_REP8_(S)
#else
#error "VKSHMEM_POLL_UNROLL must be 8, 16 or 32"
#endif

/* ---- Buffer references ----------------------------------------------------------------------- */
layout(buffer_reference, std430, buffer_reference_align = 8) coherent buffer vkshmem_state_ref_ {
    vkshmem_state_layout s;
};
layout(buffer_reference, std430, buffer_reference_align = 16) coherent buffer vkshmem_peers_ref_ {
    vkshmem_peer_layout p[];
};
layout(buffer_reference, std430, buffer_reference_align = 8) coherent buffer vkshmem_ring_ref_ {
    vkshmem_ring_layout r;
};
layout(buffer_reference, std430, buffer_reference_align = 16) coherent buffer vkshmem_req_ref_ {
    vkshmem_request_layout q;
};
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer vkshmem_w32_ { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 8) coherent buffer vkshmem_w64_ { uint64_t v; };
layout(buffer_reference, std430, buffer_reference_align = 16) coherent buffer vkshmem_w128_ { uvec4 v; };

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
uint64_t vkshmem_reqs_, vkshmem_payload_;
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

/* ---- Loop budget (per subgroup) -------------------------------------------------------------- */
uint vkshmem_budget_cell_() { return gl_SubgroupID & (VKSHMEM_BUDGET_CELLS - 1u); }

/* Iterations the subgroup may still run. */
uint vkshmemx_budget_left() {
#if VKSHMEM_LOOP_BUDGET != 0
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
    uint left = vkshmemx_budget_left();
    uint m = subgroupMax(iters);
    if (subgroupElect()) vkshmem_budget_[vkshmem_budget_cell_()] = left > m ? left - m : 0u;
    subgroupMemoryBarrierShared();
#endif
}

/* For the shader's own loops: charge `iters` iterations it is about to run (or has run) to the
 * same budget. Returns false (and charges nothing) when they do not fit. */
bool vkshmemx_budget_charge(uint iters) { return vkshmem_reserve_(iters); }

/* Iterations a bounded wait may run: wait_polls, or what the budget leaves (2 kept for the loop's
 * own entry and exit). */
uint vkshmem_wait_iters_() {
    uint left = vkshmemx_budget_left();
    return min(vkshmem_polls_, left > 2u ? left - 2u : 0u);
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
    vkshmem_last_ticket_ = 0u;
    if (state != uint64_t(0)) {
        vkshmem_st_ = vkshmem_state_ref_(state);
        if (vkshmem_st_.s.magic == VKSHMEM_ABI_MAGIC && vkshmem_st_.s.version == VKSHMEM_ABI_VERSION) {
            vkshmem_me_ = vkshmem_st_.s.my_pe;
            vkshmem_npes_ = vkshmem_st_.s.n_pes;
            vkshmem_hbase_ = vkshmem_st_.s.host_base;
            vkshmem_hsize_ = vkshmem_st_.s.host_size;
            vkshmem_dbase_ = vkshmem_st_.s.device_base;
            vkshmem_dsize_ = vkshmem_st_.s.device_size;
            vkshmem_peers_ = vkshmem_peers_ref_(vkshmem_st_.s.peers);
            vkshmem_flags_ = vkshmem_st_.s.flags;
            vkshmem_polls_ = max(vkshmem_st_.s.wait_polls, 1u);
            vkshmem_slots_ = 0u;
            vkshmem_pbytes_ = 0u;
            if (vkshmem_st_.s.ring != uint64_t(0)) {
                vkshmem_ring_ = vkshmem_ring_ref_(vkshmem_st_.s.ring);
                vkshmem_slots_ = vkshmem_ring_.r.slots;
                vkshmem_pbytes_ = vkshmem_ring_.r.payload_bytes;
                vkshmem_reqs_ = vkshmem_ring_.r.requests;
                vkshmem_payload_ = vkshmem_ring_.r.payload;
                /* The copies into and out of payload slots assume 16-byte aligned slots, and
                 * tickets map to slots by masking: anything else leaves the proxy route unusable
                 * (reported as VKSHMEM_ERR_PROXY_TIMEOUT with detail 0). */
                if (((uint(vkshmem_payload_) | vkshmem_pbytes_) & 15u) != 0u || vkshmem_pbytes_ == 0u ||
                    vkshmem_slots_ == 0u || (vkshmem_slots_ & (vkshmem_slots_ - 1u)) != 0u)
                    vkshmem_slots_ = 0u;
            }
            vkshmem_ok_ = true;
        }
    }
#if VKSHMEM_LOOP_BUDGET != 0
    if (subgroupElect()) vkshmem_budget_[vkshmem_budget_cell_()] = uint(VKSHMEM_LOOP_BUDGET);
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
/* k (1..3) bytes at src, in the low bits. Reads only aligned words holding at least one of them. */
uint vkshmem_load_bytes_(uint64_t src, uint k) {
    uint64_t sa = src & ~uint64_t(3);
    uint sh = uint(src & uint64_t(3)) * 8u;
    uint v = vkshmem_w32_(sa).v >> sh;
    if (sh + 8u * k > 32u) v |= vkshmem_w32_(sa + uint64_t(4)).v << (32u - sh);
    return v;
}

/* Stores k (1..3) bytes from src at dst, which lie in one aligned word, without touching the
 * word's other bytes (two atomics: concurrent writers of the neighbouring bytes are safe). */
void vkshmem_store_part_(uint64_t dst, uint64_t src, uint k) {
    uint v = vkshmem_load_bytes_(src, k);
    uint dsh = uint(dst & uint64_t(3)) * 8u;
    uint mask = ((1u << (8u * k)) - 1u) << dsh;
    vkshmem_w32_ w = vkshmem_w32_(dst & ~uint64_t(3));
    atomicAnd(w.v, ~mask);
    atomicOr(w.v, (v << dsh) & mask);
}

/* How a copy of n bytes from src to dst is cut:
 *   head   bytes (0..3) up to dst's next 4-byte boundary: a partial-word store
 *   mode 0 (src and dst equally aligned mod 16): pre words (0..3) up to a 16-byte boundary,
 *          `units` 16-byte blocks, post words (0..3)
 *   mode 1 (equally aligned mod 4): `units` words
 *   mode 2 (otherwise): `units` destination words, each assembled from two aligned source words
 *   tail   bytes (0..3) after the last whole word: a partial-word store
 * The loop moves 4 units per iteration per invocation; `lanes` invocations share it. */
struct vkshmem_plan_ {
    uint head;
    uint mode;
    uint pre;
    uint post;
    uint tail;
    uint64_t words;
    uint64_t units;
    uint iters; /* loop iterations per invocation, 0xffffffff when absurd */
};

vkshmem_plan_ vkshmem_plan_copy_(uint64_t dst, uint64_t src, uint64_t n, uint lanes) {
    vkshmem_plan_ p;
    p.head = uint(min(n, uint64_t((4u - uint(dst & uint64_t(3))) & 3u)));
    uint64_t d = dst + uint64_t(p.head), s = src + uint64_t(p.head), m = n - uint64_t(p.head);
    p.words = m >> 2;
    p.tail = uint(m & uint64_t(3));
    p.pre = 0u;
    p.post = 0u;
    if ((s & uint64_t(3)) == uint64_t(0)) {
        if (((d ^ s) & uint64_t(15)) == uint64_t(0)) {
            p.mode = 0u;
            p.pre = uint(min(p.words, uint64_t(((16u - uint(d & uint64_t(15))) & 15u) >> 2)));
            p.units = (p.words - uint64_t(p.pre)) >> 2;
            p.post = uint((p.words - uint64_t(p.pre)) & uint64_t(3));
        } else {
            p.mode = 1u;
            p.units = p.words;
        }
    } else {
        p.mode = 2u;
        p.units = p.words;
    }
    uint64_t per = uint64_t(4u) * uint64_t(max(lanes, 1u));
    p.iters = vkshmem_clamp32_((p.units + per - uint64_t(1)) / per);
    return p;
}

/* Budget a copy needs: its loop and 2 for the loop's entry and exit. */
uint vkshmem_plan_cost_(vkshmem_plan_ p) { return p.iters >= 0xfffffff0u ? 0xffffffffu : p.iters + 2u; }

void vkshmem_copy_word_(uint64_t dst, uint64_t src) { vkshmem_w32_(dst).v = vkshmem_w32_(src).v; }

/* Runs a planned copy (its budget already reserved): this invocation's share of the loop, and
 * with lane 0 the partial words at both ends. */
void vkshmem_run_copy_(vkshmem_plan_ p, uint64_t dst, uint64_t src, uint lane, uint lanes) {
    uint64_t d = dst + uint64_t(p.head), s = src + uint64_t(p.head);
    if (lane == 0u) {
        if (p.head != 0u) vkshmem_store_part_(dst, src, p.head);
        if (p.pre > 0u) vkshmem_copy_word_(d, s);
        if (p.pre > 1u) vkshmem_copy_word_(d + uint64_t(4), s + uint64_t(4));
        if (p.pre > 2u) vkshmem_copy_word_(d + uint64_t(8), s + uint64_t(8));
    }
    uint64_t bd = d + uint64_t(4u * p.pre), bs = s + uint64_t(4u * p.pre);
    uint64_t sa = bs & ~uint64_t(3);
    uint sh = uint(bs & uint64_t(3)) * 8u;
    uint64_t stride = uint64_t(lanes);
    uint64_t idx = uint64_t(lane);
    for (uint it = 0u; it < p.iters; ++it) {
        VKSHMEM_REP4_(
            if (idx < p.units) {
                if (p.mode == 0u) {
                    vkshmem_w128_(bd + (idx << 4)).v = vkshmem_w128_(bs + (idx << 4)).v;
                } else if (p.mode == 1u) {
                    vkshmem_copy_word_(bd + (idx << 2), bs + (idx << 2));
                } else {
                    uint64_t a = sa + (idx << 2);
                    vkshmem_w32_(bd + (idx << 2)).v =
                        (vkshmem_w32_(a).v >> sh) | (vkshmem_w32_(a + uint64_t(4)).v << (32u - sh));
                }
            }
            idx += stride;
        )
    }
    if (lane == 0u) {
        uint64_t pd = bd + (p.units << 4), ps = bs + (p.units << 4);
        if (p.post > 0u) vkshmem_copy_word_(pd, ps);
        if (p.post > 1u) vkshmem_copy_word_(pd + uint64_t(4), ps + uint64_t(4));
        if (p.post > 2u) vkshmem_copy_word_(pd + uint64_t(8), ps + uint64_t(8));
        uint64_t t = uint64_t(p.head) + (p.words << 2);
        if (p.tail != 0u) vkshmem_store_part_(dst + t, src + t, p.tail);
    }
}

/* Copies n bytes (any alignment); false, copying nothing, when the budget cannot cover it. */
bool vkshmem_copy_(uint64_t dst, uint64_t src, uint64_t n, uint lane, uint lanes) {
    if (n == uint64_t(0)) return true;
    vkshmem_plan_ p = vkshmem_plan_copy_(dst, src, n, lanes);
    if (!vkshmem_reserve_(vkshmem_plan_cost_(p))) return false;
    vkshmem_run_copy_(p, dst, src, lane, lanes);
    return true;
}

/* ---- The proxy ring ------------------------------------------------------------------------------- */
vkshmem_req_ref_ vkshmem_req_(uint ticket) {
    return vkshmem_req_ref_(vkshmem_reqs_ + uint64_t(ticket & (vkshmem_slots_ - 1u)) * uint64_t(64));
}
uint64_t vkshmem_slot_payload_(uint ticket) {
    return vkshmem_payload_ + uint64_t(ticket & (vkshmem_slots_ - 1u)) * uint64_t(vkshmem_pbytes_);
}

/* Up to VKSHMEM_POLL_UNROLL attempts (by one invocation) to take cnt tickets whose slots are free:
 * the last one (ticket h + cnt - 1) is free once completed >= h + cnt - slots. */
bool vkshmem_try_tickets_(uint cnt, out uint h) {
    bool ok = false;
    h = 0u;
    VKSHMEM_REP_POLL_(
        if (!ok) {
            h = atomicLoad(vkshmem_ring_.r.head, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
            uint c = atomicLoad(vkshmem_ring_.r.completed, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                                gl_SemanticsAcquire);
            if (int(c + vkshmem_slots_ - h - cnt) >= 0) ok = atomicCompSwap(vkshmem_ring_.r.head, h, h + cnt) == h;
        }
    )
    return ok;
}

/* One ticket for every active invocation, taken together per subgroup, and only once all their
 * slots are free (so a taken ticket is always filled and published at once: the proxy, which
 * serves tickets in order, never waits for one). False on timeout (no ticket taken; recorded). */
bool vkshmem_take_ticket_(out uint ticket) {
    uvec4 ballot = subgroupBallot(true);
    uint cnt = subgroupBallotBitCount(ballot);
    uint rank = subgroupBallotExclusiveBitCount(ballot);
    uint n = vkshmem_wait_iters_();
    bool ok = false;
    uint h = 0u;
    uint i;
    for (i = 0u; i < n; ++i) {
        if (subgroupElect()) ok = vkshmem_try_tickets_(cnt, h);
        if (subgroupBroadcastFirst(ok)) break;
    }
    vkshmem_charge_(i + 2u);
    if (!subgroupBroadcastFirst(ok) && subgroupElect()) ok = vkshmem_try_tickets_(cnt, h); /* the re-check */
    if (!subgroupBroadcastFirst(ok)) {
        vkshmem_wait_failed_(VKSHMEM_ERR_PROXY_TIMEOUT, VKSHMEM_WAIT_ID_RING_SLOT, i);
        return false;
    }
    ticket = subgroupBroadcastFirst(h) + rank;
    vkshmem_last_ticket_ = ticket;
    vkshmem_pending_ = true;
    return true;
}

void vkshmem_fill_(uint ticket, uint op, int pe, uint bytes, uint64_t target, uint64_t operand, uint64_t cond,
                   uint amo_op, uint width) {
    vkshmem_req_ref_ r = vkshmem_req_(ticket);
    r.q.op = op;
    r.q.pe = pe;
    r.q.bytes = bytes;
    r.q.target = target;
    r.q.operand = operand;
    r.q.cond = cond;
    r.q.amo_op = amo_op;
    r.q.width = width;
}

/* Hands the filled request (and its payload) to the proxy. */
void vkshmem_publish_(uint ticket) {
    atomicStore(vkshmem_req_(ticket).q.ready, ticket + 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                gl_SemanticsRelease);
}

/* Waits until the proxy has completed `ticket` (completed > ticket). */
bool vkshmem_wait_done_(uint ticket, uint id) {
    uint n = vkshmem_wait_iters_();
    bool done = false;
    uint i;
    for (i = 0u; i < n; ++i) {
        VKSHMEM_REP_POLL_(
            if (int(atomicLoad(vkshmem_ring_.r.completed, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                               gl_SemanticsAcquire) - ticket) > 0) {
                done = true;
                break;
            }
        )
    }
    vkshmem_charge_(i + 2u);
    if (!done)
        done = int(atomicLoad(vkshmem_ring_.r.completed, gl_ScopeDevice, gl_StorageSemanticsBuffer,
                              gl_SemanticsAcquire) - ticket) > 0;
    if (!done) vkshmem_wait_failed_(VKSHMEM_ERR_PROXY_TIMEOUT, id, i);
    return done;
}

/* A put (optionally the data of a put_signal) through the proxy, in payload-sized pieces; this
 * invocation sends pieces lane, lane + lanes, ... With `signal`, the last piece (an empty one
 * when bytes == 0) is a PUT_SIGNAL: the proxy delivers the data before the signal. */
void vkshmem_proxy_put_(uint64_t dest, uint64_t src, uint64_t bytes, int pe, uint lane, uint lanes, bool signal,
                        uint64_t sig_addr, uint64_t sig_value, uint sig_op) {
    uint64_t pb = uint64_t(vkshmem_pbytes_);
    uint64_t pieces = (bytes + pb - uint64_t(1)) / pb;
    if (signal && pieces == uint64_t(0)) pieces = uint64_t(1);
    uint64_t mine = pieces > uint64_t(lane) ? (pieces - uint64_t(lane) + uint64_t(lanes) - uint64_t(1)) / uint64_t(lanes)
                                            : uint64_t(0);
    if (!vkshmem_reserve_(vkshmem_clamp32_(mine + uint64_t(2)))) {
        vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(bytes));
        return;
    }
    for (uint64_t k = uint64_t(lane); k < pieces; k += uint64_t(lanes)) {
        uint64_t off = k * pb;
        uint len = uint(min(bytes - off, pb));
        bool last = k + uint64_t(1) == pieces;
        /* The payload slot is 16-byte aligned: plan with any 16-aligned destination. */
        vkshmem_plan_ p = vkshmem_plan_copy_(uint64_t(0), src + off, uint64_t(len), 1u);
        if (!vkshmem_reserve_(vkshmem_plan_cost_(p))) {
            vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(bytes));
            break;
        }
        uint t;
        if (!vkshmem_take_ticket_(t)) break;
        if (signal && last)
            vkshmem_fill_(t, VKSHMEM_OP_PUT_SIGNAL, pe, len, dest + off, sig_value, sig_addr, sig_op, 8u);
        else
            vkshmem_fill_(t, VKSHMEM_OP_PUT, pe, len, dest + off, uint64_t(0), uint64_t(0), 0u, 0u);
        if (len != 0u) vkshmem_run_copy_(p, vkshmem_slot_payload_(t), src + off, 0u, 1u);
        vkshmem_publish_(t);
    }
}

/* A get through the proxy: pieces lane, lane + lanes, ..., each waited for and copied out. */
void vkshmem_proxy_get_(uint64_t dest, uint64_t src, uint64_t bytes, int pe, uint lane, uint lanes) {
    uint64_t pb = uint64_t(vkshmem_pbytes_);
    uint64_t pieces = (bytes + pb - uint64_t(1)) / pb;
    uint64_t mine = pieces > uint64_t(lane) ? (pieces - uint64_t(lane) + uint64_t(lanes) - uint64_t(1)) / uint64_t(lanes)
                                            : uint64_t(0);
    if (!vkshmem_reserve_(vkshmem_clamp32_(mine + uint64_t(2)))) {
        vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(bytes));
        return;
    }
    for (uint64_t k = uint64_t(lane); k < pieces; k += uint64_t(lanes)) {
        uint64_t off = k * pb;
        uint len = uint(min(bytes - off, pb));
        vkshmem_plan_ p = vkshmem_plan_copy_(dest + off, uint64_t(0), uint64_t(len), 1u);
        if (!vkshmem_reserve_(vkshmem_plan_cost_(p))) {
            vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(bytes));
            break;
        }
        uint t;
        if (!vkshmem_take_ticket_(t)) break;
        vkshmem_fill_(t, VKSHMEM_OP_GET, pe, len, src + off, uint64_t(0), uint64_t(0), 0u, 0u);
        vkshmem_publish_(t);
        if (!vkshmem_wait_done_(t, VKSHMEM_WAIT_ID_PROXY_REPLY)) break;
        vkshmem_run_copy_(p, dest + off, vkshmem_slot_payload_(t), 0u, 1u);
    }
}

/* An AMO through the proxy (width 4 or 8); a fetching one waits for the old value. */
uint64_t vkshmem_proxy_amo_(uint64_t dest, uint op, uint width, uint64_t operand, uint64_t cond, int pe, bool fetch) {
    uint t;
    if (!vkshmem_take_ticket_(t)) return uint64_t(0);
    vkshmem_fill_(t, VKSHMEM_OP_AMO, pe, width, dest, operand, cond, op, width);
    vkshmem_publish_(t);
    if (!fetch || !vkshmem_wait_done_(t, VKSHMEM_WAIT_ID_PROXY_REPLY)) return uint64_t(0);
    uint64_t pl = vkshmem_slot_payload_(t);
    return width == 4u ? uint64_t(vkshmem_w32_(pl).v) : vkshmem_w64_(pl).v;
}

/* ---- Ordering and completion -------------------------------------------------------------------- */
/* Completes every operation this invocation issued: its stores are visible device-wide and the
 * proxy has executed every request it sent. */
void shmem_quiet() {
    memoryBarrierBuffer();
    if (vkshmem_pending_ && vkshmem_wait_done_(vkshmem_last_ticket_, VKSHMEM_WAIT_ID_QUIET))
        vkshmem_pending_ = false;
    memoryBarrierBuffer();
}

/* Orders this invocation's puts, AMOs and signals to each PE. Direct stores need only a memory
 * barrier; with proxy requests in flight (possibly to a heap reached directly by later stores) it
 * waits for them, like shmem_quiet. */
void shmem_fence() {
    if (vkshmem_pending_) shmem_quiet();
    else memoryBarrierBuffer();
}

/* ---- RMA cores --------------------------------------------------------------------------------- */
void vkshmem_put_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    uint64_t remote;
    uint route = vkshmem_route_(dest, bytes, pe, true, remote);
    if (route == VKSHMEM_ROUTE_DIRECT_) {
        if (!vkshmem_copy_(remote, src, bytes, 0u, 1u)) vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(bytes));
    } else if (route == VKSHMEM_ROUTE_PROXY_) {
        vkshmem_proxy_put_(dest, src, bytes, pe, 0u, 1u, false, uint64_t(0), uint64_t(0), 0u);
    }
}

void vkshmem_get_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    uint64_t remote;
    uint route = vkshmem_route_(src, bytes, pe, true, remote);
    if (route == VKSHMEM_ROUTE_DIRECT_) {
        if (!vkshmem_copy_(dest, remote, bytes, 0u, 1u)) vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(bytes));
    } else if (route == VKSHMEM_ROUTE_PROXY_) {
        vkshmem_proxy_get_(dest, src, bytes, pe, 0u, 1u);
    }
}

uint vkshmem_wg_lanes_() { return gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z; }

/* Workgroup-cooperative forms: every invocation of the workgroup calls them with the same
 * arguments, in uniform control flow; they begin and end with memoryBarrierBuffer() + barrier(). */
void vkshmem_put_wg_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    memoryBarrierBuffer();
    barrier();
    uint64_t remote;
    uint route = vkshmem_route_(dest, bytes, pe, true, remote);
    uint lane = gl_LocalInvocationIndex, lanes = vkshmem_wg_lanes_();
    if (route == VKSHMEM_ROUTE_DIRECT_) {
        if (!vkshmem_copy_(remote, src, bytes, lane, lanes)) vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(bytes));
    } else if (route == VKSHMEM_ROUTE_PROXY_) {
        vkshmem_proxy_put_(dest, src, bytes, pe, lane, lanes, false, uint64_t(0), uint64_t(0), 0u);
    }
    memoryBarrierBuffer();
    barrier();
}

void vkshmem_get_wg_(uint64_t dest, uint64_t src, uint64_t bytes, int pe) {
    memoryBarrierBuffer();
    barrier();
    uint64_t remote;
    uint route = vkshmem_route_(src, bytes, pe, true, remote);
    uint lane = gl_LocalInvocationIndex, lanes = vkshmem_wg_lanes_();
    if (route == VKSHMEM_ROUTE_DIRECT_) {
        if (!vkshmem_copy_(dest, remote, bytes, lane, lanes)) vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(bytes));
    } else if (route == VKSHMEM_ROUTE_PROXY_) {
        vkshmem_proxy_get_(dest, src, bytes, pe, lane, lanes);
    }
    memoryBarrierBuffer();
    barrier();
}

void shmem_putmem(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_put_(dest, source, nelems, pe); }
void shmem_getmem(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_get_(dest, source, nelems, pe); }
void shmem_putmem_nbi(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_put_(dest, source, nelems, pe); }
void shmem_getmem_nbi(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_get_(dest, source, nelems, pe); }
void shmem_putmem_wg(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_put_wg_(dest, source, nelems, pe); }
void shmem_getmem_wg(uint64_t dest, uint64_t source, uint64_t nelems, int pe) { vkshmem_get_wg_(dest, source, nelems, pe); }

/* Single elements (p, g): 4 or 8 bytes, naturally aligned. */
void vkshmem_p32_(uint64_t dest, uint value, int pe) {
    uint64_t remote;
    uint route = vkshmem_route_(dest, uint64_t(4), pe, true, remote);
    if (route == VKSHMEM_ROUTE_DIRECT_) {
        vkshmem_w32_(remote).v = value;
    } else if (route == VKSHMEM_ROUTE_PROXY_) {
        uint t;
        if (!vkshmem_take_ticket_(t)) return;
        vkshmem_fill_(t, VKSHMEM_OP_PUT, pe, 4u, dest, uint64_t(0), uint64_t(0), 0u, 0u);
        vkshmem_w32_(vkshmem_slot_payload_(t)).v = value;
        vkshmem_publish_(t);
    }
}

void vkshmem_p64_(uint64_t dest, uint64_t value, int pe) {
    uint64_t remote;
    uint route = vkshmem_route_(dest, uint64_t(8), pe, true, remote);
    if (route == VKSHMEM_ROUTE_DIRECT_) {
        vkshmem_w64_(remote).v = value;
    } else if (route == VKSHMEM_ROUTE_PROXY_) {
        uint t;
        if (!vkshmem_take_ticket_(t)) return;
        vkshmem_fill_(t, VKSHMEM_OP_PUT, pe, 8u, dest, uint64_t(0), uint64_t(0), 0u, 0u);
        vkshmem_w64_(vkshmem_slot_payload_(t)).v = value;
        vkshmem_publish_(t);
    }
}

uint vkshmem_g32_(uint64_t src, int pe) {
    uint64_t remote;
    uint route = vkshmem_route_(src, uint64_t(4), pe, true, remote);
    if (route == VKSHMEM_ROUTE_DIRECT_) return vkshmem_w32_(remote).v;
    if (route != VKSHMEM_ROUTE_PROXY_) return 0u;
    uint t;
    if (!vkshmem_take_ticket_(t)) return 0u;
    vkshmem_fill_(t, VKSHMEM_OP_GET, pe, 4u, src, uint64_t(0), uint64_t(0), 0u, 0u);
    vkshmem_publish_(t);
    if (!vkshmem_wait_done_(t, VKSHMEM_WAIT_ID_PROXY_REPLY)) return 0u;
    return vkshmem_w32_(vkshmem_slot_payload_(t)).v;
}

uint64_t vkshmem_g64_(uint64_t src, int pe) {
    uint64_t remote;
    uint route = vkshmem_route_(src, uint64_t(8), pe, true, remote);
    if (route == VKSHMEM_ROUTE_DIRECT_) return vkshmem_w64_(remote).v;
    if (route != VKSHMEM_ROUTE_PROXY_) return uint64_t(0);
    uint t;
    if (!vkshmem_take_ticket_(t)) return uint64_t(0);
    vkshmem_fill_(t, VKSHMEM_OP_GET, pe, 8u, src, uint64_t(0), uint64_t(0), 0u, 0u);
    vkshmem_publish_(t);
    if (!vkshmem_wait_done_(t, VKSHMEM_WAIT_ID_PROXY_REPLY)) return uint64_t(0);
    return vkshmem_w64_(vkshmem_slot_payload_(t)).v;
}

/* ---- Atomics (op: VKSHMEM_AMO_*) ------------------------------------------------------------- */
uint vkshmem_amo32_(uint64_t dest, uint op, uint operand, uint cond, int pe, bool fetch) {
    uint64_t remote;
    uint route = vkshmem_route_(dest, uint64_t(4), pe, true, remote);
    if (route == VKSHMEM_ROUTE_PROXY_)
        return uint(vkshmem_proxy_amo_(dest, op, 4u, uint64_t(operand), uint64_t(cond), pe, fetch));
    if (route != VKSHMEM_ROUTE_DIRECT_) return 0u;
    vkshmem_w32_ w = vkshmem_w32_(remote);
    switch (op) {
    case VKSHMEM_AMO_FETCH:
        return atomicLoad(w.v, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
    case VKSHMEM_AMO_SET:
    case VKSHMEM_AMO_SWAP: return atomicExchange(w.v, operand);
    case VKSHMEM_AMO_COMPARE_SWAP: return atomicCompSwap(w.v, cond, operand);
    case VKSHMEM_AMO_ADD: return atomicAdd(w.v, operand);
    case VKSHMEM_AMO_AND: return atomicAnd(w.v, operand);
    case VKSHMEM_AMO_OR: return atomicOr(w.v, operand);
    case VKSHMEM_AMO_XOR: return atomicXor(w.v, operand);
    }
    return 0u;
}

uint64_t vkshmem_amo64_(uint64_t dest, uint op, uint64_t operand, uint64_t cond, int pe, bool fetch) {
    uint64_t remote;
    uint route = vkshmem_route_(dest, uint64_t(8), pe, true, remote);
    if (route == VKSHMEM_ROUTE_PROXY_) return vkshmem_proxy_amo_(dest, op, 8u, operand, cond, pe, fetch);
    if (route != VKSHMEM_ROUTE_DIRECT_) return uint64_t(0);
    vkshmem_w64_ w = vkshmem_w64_(remote);
    switch (op) {
    case VKSHMEM_AMO_FETCH:
        return atomicLoad(w.v, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
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

/* ---- Signals ----------------------------------------------------------------------------------- */
/* put_signal: the data, then (after it is delivered) the signal: SHMEM_SIGNAL_SET or _ADD of
 * `signal` to the uint64_t at sig_addr on pe. Any other sig_op is taken as SET. */
void vkshmem_put_signal_(uint64_t dest, uint64_t src, uint64_t bytes, uint64_t sig_addr, uint64_t signal, int sig_op,
                         int pe) {
    uint64_t remote, sig_remote;
    uint route = vkshmem_route_(dest, bytes, pe, true, remote);
    if (route == VKSHMEM_ROUTE_NONE_) return;
    if (vkshmem_route_(sig_addr, uint64_t(8), pe, true, sig_remote) == VKSHMEM_ROUTE_NONE_) return;
    uint op = sig_op == SHMEM_SIGNAL_ADD ? VKSHMEM_SIGNAL_ADD : VKSHMEM_SIGNAL_SET;
    if (route == VKSHMEM_ROUTE_PROXY_) {
        vkshmem_proxy_put_(dest, src, bytes, pe, 0u, 1u, true, sig_addr, signal, op);
        return;
    }
    if (!vkshmem_copy_(remote, src, bytes, 0u, 1u)) {
        vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(bytes));
        return;
    }
    memoryBarrierBuffer();
    vkshmem_amo64_(sig_addr, op == VKSHMEM_SIGNAL_ADD ? VKSHMEM_AMO_ADD : VKSHMEM_AMO_SET, signal, uint64_t(0), pe, false);
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
    return atomicLoad(vkshmem_w64_(sig_addr).v, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
}

/* ---- Point-to-point synchronization (on this PE's own memory) ------------------------------- */
bool vkshmem_cmp32_(uint a, int cmp, uint b, bool sgn) {
    int c = sgn ? (int(a) < int(b) ? -1 : (int(a) > int(b) ? 1 : 0)) : (a < b ? -1 : (a > b ? 1 : 0));
    switch (cmp) {
    case SHMEM_CMP_EQ: return c == 0;
    case SHMEM_CMP_NE: return c != 0;
    case SHMEM_CMP_GT: return c > 0;
    case SHMEM_CMP_GE: return c >= 0;
    case SHMEM_CMP_LT: return c < 0;
    case SHMEM_CMP_LE: return c <= 0;
    }
    return false;
}

bool vkshmem_cmp64_(uint64_t a, int cmp, uint64_t b, bool sgn) {
    int c = sgn ? (int64_t(a) < int64_t(b) ? -1 : (int64_t(a) > int64_t(b) ? 1 : 0)) : (a < b ? -1 : (a > b ? 1 : 0));
    switch (cmp) {
    case SHMEM_CMP_EQ: return c == 0;
    case SHMEM_CMP_NE: return c != 0;
    case SHMEM_CMP_GT: return c > 0;
    case SHMEM_CMP_GE: return c >= 0;
    case SHMEM_CMP_LT: return c < 0;
    case SHMEM_CMP_LE: return c <= 0;
    }
    return false;
}

#define VKSHMEM_LOAD32_(a) atomicLoad(vkshmem_w32_(a).v, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire)
#define VKSHMEM_LOAD64_(a) atomicLoad(vkshmem_w64_(a).v, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire)

/* Bounded waits: at most wait_polls iterations of VKSHMEM_POLL_UNROLL acquire loads, then one more
 * check; on timeout the error is recorded (id) and the last value seen is returned. */
uint vkshmem_wait32_(uint64_t ivar, int cmp, uint value, bool sgn, uint id) {
    uint n = vkshmem_wait_iters_();
    uint v = 0u;
    bool done = false;
    uint i;
    for (i = 0u; i < n; ++i) {
        VKSHMEM_REP_POLL_(
            v = VKSHMEM_LOAD32_(ivar);
            if (vkshmem_cmp32_(v, cmp, value, sgn)) {
                done = true;
                break;
            }
        )
    }
    vkshmem_charge_(i + 2u);
    if (!done) {
        v = VKSHMEM_LOAD32_(ivar);
        done = vkshmem_cmp32_(v, cmp, value, sgn);
    }
    if (!done) vkshmem_wait_failed_(VKSHMEM_ERR_WAIT_TIMEOUT, id, i);
    return v;
}

uint64_t vkshmem_wait64_(uint64_t ivar, int cmp, uint64_t value, bool sgn, uint id) {
    uint n = vkshmem_wait_iters_();
    uint64_t v = uint64_t(0);
    bool done = false;
    uint i;
    for (i = 0u; i < n; ++i) {
        VKSHMEM_REP_POLL_(
            v = VKSHMEM_LOAD64_(ivar);
            if (vkshmem_cmp64_(v, cmp, value, sgn)) {
                done = true;
                break;
            }
        )
    }
    vkshmem_charge_(i + 2u);
    if (!done) {
        v = VKSHMEM_LOAD64_(ivar);
        done = vkshmem_cmp64_(v, cmp, value, sgn);
    }
    if (!done) vkshmem_wait_failed_(VKSHMEM_ERR_WAIT_TIMEOUT, id, i);
    return v;
}

int vkshmem_test32_(uint64_t ivar, int cmp, uint value, bool sgn) {
    return vkshmem_cmp32_(VKSHMEM_LOAD32_(ivar), cmp, value, sgn) ? 1 : 0;
}
int vkshmem_test64_(uint64_t ivar, int cmp, uint64_t value, bool sgn) {
    return vkshmem_cmp64_(VKSHMEM_LOAD64_(ivar), cmp, value, sgn) ? 1 : 0;
}

/* Waits (bounded) until the signal at sig_addr (this PE) satisfies cmp; returns its value. */
uint64_t shmem_signal_wait_until(uint64_t sig_addr, int cmp, uint64_t cmp_value) {
    return vkshmem_wait64_(sig_addr, cmp, cmp_value, false, VKSHMEM_WAIT_ID_SIGNAL_WAIT_UNTIL);
}

/* ---- Barrier: one workgroup per PE ------------------------------------------------------------ */
/* All PEs, each with exactly one workgroup in this call, meet here. `counter` is a symmetric
 * uint64_t that the host zeroes once (shmem_calloc) and passes to every PE; it must be used by
 * nothing else. Its low 32 bits count arrivals (every PE adds 1 on every PE), its high 32 bits
 * count this PE's own barriers, so the counter never needs resetting: after 2^32 / n_pes barriers
 * the low half overflows (about 10^9 at 4 PEs). Every invocation of the workgroup calls it, in
 * uniform control flow. It completes (shmem_quiet) every invocation's operations first. */
void shmem_barrier_all_wg(uint64_t counter) {
    shmem_quiet();
    barrier();
    if (gl_LocalInvocationIndex == 0u && vkshmem_ok_) {
        uint64_t remote;
        if (vkshmem_route_(counter, uint64_t(8), vkshmem_me_, true, remote) != VKSHMEM_ROUTE_NONE_) {
            uint epoch = uint(VKSHMEM_LOAD64_(counter) >> 32);
            if (!vkshmem_reserve_(uint(vkshmem_npes_) + 2u)) {
                vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, uint(vkshmem_npes_));
            } else {
                /* This PE first: through the proxy, which serves requests in order, no other PE
                 * can see this barrier complete (and arrive at the next one) before the high half
                 * counts it. */
                for (int k = 0; k < vkshmem_npes_; ++k) {
                    int pe = (vkshmem_me_ + k) % vkshmem_npes_;
                    uint64_t add = k == 0 ? (uint64_t(1) << 32) + uint64_t(1) : uint64_t(1);
                    vkshmem_amo64_(counter, VKSHMEM_AMO_ADD, add, uint64_t(0), pe, false);
                }
                uint target = uint(vkshmem_npes_) * (epoch + 1u);
                /* low half >= target, compared modulo 2^32 */
                uint n = vkshmem_wait_iters_();
                bool done = false;
                uint i;
                for (i = 0u; i < n; ++i) {
                    VKSHMEM_REP_POLL_(
                        if (int(uint(VKSHMEM_LOAD64_(counter)) - target) >= 0) {
                            done = true;
                            break;
                        }
                    )
                }
                vkshmem_charge_(i + 2u);
                if (!done) done = int(uint(VKSHMEM_LOAD64_(counter)) - target) >= 0;
                if (!done) vkshmem_wait_failed_(VKSHMEM_ERR_WAIT_TIMEOUT, VKSHMEM_WAIT_ID_BARRIER, i);
            }
        }
    }
    memoryBarrierBuffer();
    barrier();
}

/* ---- Typed and sized routines (generated) ----------------------------------------------------- */
#include "vkshmem_typed.glsl"

#endif /* VKSHMEM_GLSL */
