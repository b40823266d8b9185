// SPDX-License-Identifier: BSL-1.0
/*
 * vkshmem_coll.glsl — teams and collectives of the GLSL device library: team queries, barrier,
 * sync, broadcast, collect, fcollect, alltoall and reductions, each in a thread form (one
 * invocation per PE calls it) and a workgroup form (`_wg`: every invocation of one workgroup per
 * PE calls it with the same arguments, in uniform control flow). Included by vkshmem.glsl; the
 * typed routines are generated (vkshmem_typed.glsl). shaders/README.md, "Teams and collectives",
 * gives the rules.
 *
 * Every collective is built on the team's sync counter (vkshmem_arrive_wait_) and the library's
 * puts, so it takes whatever route each member is reached by (directly, or through the proxy).
 * A collective starts with a team sync (every member has arrived, so destinations and the
 * team's scratch area are free), moves its data, and ends with one (every member's data has
 * arrived: a put's completion is the sender's quiet before it).
 */

/* ---- Team handles ----------------------------------------------------------------------------- */
/* A device team handle is the device address of this PE's record of the team (vkshmem_abi.h). */
#define shmem_team_t uint64_t
#define SHMEM_TEAM_INVALID uint64_t(0)
#define SHMEM_TEAM_WORLD vkshmem_team_slot_(0u)
#define SHMEM_TEAM_SHARED vkshmem_team_slot_(1u)

uint64_t vkshmem_team_slot_(uint slot) {
    return vkshmem_teams_ != uint64_t(0) && slot < vkshmem_n_teams_
               ? vkshmem_teams_ + uint64_t(slot) * uint64_t(vkshmem_team_stride_)
               : uint64_t(0);
}

/* This PE's record of `team`: the copy in device-local memory the host also writes (state.teams_local)
 * where there is one, read there without crossing the bus; the handle names the state block's. */
vkshmem_team_ref_ vkshmem_team_(uint64_t team) {
    return vkshmem_team_ref_(vkshmem_teams_local_ != uint64_t(0) && team != uint64_t(0)
                                 ? vkshmem_teams_local_ + (team - vkshmem_teams_)
                                 : team);
}

/* Whether `team` is the record of a live team of this PE (recorded as an error otherwise, when
 * report). */
bool vkshmem_team_ok_(uint64_t team, bool report) {
    uint64_t off = team - vkshmem_teams_;
    bool ok = vkshmem_ok_ && team != uint64_t(0) && vkshmem_teams_ != uint64_t(0) && vkshmem_team_stride_ != 0u &&
              off < uint64_t(vkshmem_n_teams_) * uint64_t(vkshmem_team_stride_) &&
              off % uint64_t(vkshmem_team_stride_) == uint64_t(0);
    if (ok) ok = vkshmem_team_(team).t.live == VKSHMEM_TEAM_LIVE;
    if (!ok && report) vkshmem_error_(VKSHMEM_ERR_BAD_TEAM, uint(team));
    return ok;
}

int shmem_team_my_pe(shmem_team_t team) { return vkshmem_team_ok_(team, false) ? vkshmem_team_(team).t.me : -1; }
int shmem_team_n_pes(shmem_team_t team) {
    return vkshmem_team_ok_(team, false) ? vkshmem_team_(team).t.size : -1;
}

/* The world PE of member `i` of a team record. */
int vkshmem_member_(vkshmem_team_layout t, int i) { return vkshmem_pes_ref_(t.pes).p[i]; }

/* src_pe of src_team as a PE of dest_team, or -1 (not a member, or a handle that is no team). */
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team) {
    if (!vkshmem_team_ok_(src_team, false) || !vkshmem_team_ok_(dest_team, false)) return -1;
    vkshmem_team_layout s = vkshmem_team_(src_team).t, d = vkshmem_team_(dest_team).t;
    if (src_pe < 0 || src_pe >= s.size) return -1;
    int world = vkshmem_member_(s, src_pe);
    if (!vkshmem_reserve_(uint(d.size) + 1u)) {
        vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, uint(d.size));
        return -1;
    }
    int found = -1;
    for (int i = 0; i < d.size; ++i) {
        if (vkshmem_member_(d, i) == world) {
            found = i;
            break;
        }
    }
    return found;
}

/* ---- The steps of a collective ---------------------------------------------------------------- */
/* Thread forms run them in the calling invocation (lane 0 of 1); workgroup forms in every
 * invocation of the workgroup (`wg` is a literal at every call, so the barrier() calls below are
 * in uniform control flow once the library is inlined). */
shared uint vkshmem_coll_entered_; /* invocation 0's verdict, for the workgroup forms */

/* Claims the team for this collective: a team runs one collective of this PE at a time (the busy
 * word of its record); false, recorded, for a handle that is no team or a team that is busy. In a
 * workgroup form invocation 0 claims and the workgroup follows its verdict. */
bool vkshmem_coll_begin_(uint64_t team, bool wg, out vkshmem_team_layout t) {
    bool ok = false;
    if (!wg || gl_LocalInvocationIndex == 0u) {
        if (vkshmem_team_ok_(team, true)) {
            ok = atomicCompSwap(vkshmem_team_(team).t.busy, 0u, 1u) == 0u;
            if (!ok) vkshmem_error_(VKSHMEM_ERR_COLL_BUSY, uint(vkshmem_team_(team).t.slot));
        }
    }
    if (wg) {
        if (gl_LocalInvocationIndex == 0u) vkshmem_coll_entered_ = ok ? 1u : 0u;
        barrier();
        ok = vkshmem_coll_entered_ != 0u;
        barrier();
    }
    if (ok) t = vkshmem_team_(team).t;
    else t.size = 0;
    return ok;
}

void vkshmem_coll_end_(uint64_t team, bool wg, bool entered) {
    if (entered && (!wg || gl_LocalInvocationIndex == 0u)) atomicExchange(vkshmem_team_(team).t.busy, 0u);
}

uint vkshmem_coll_lane_(bool wg) { return wg ? gl_LocalInvocationIndex : 0u; }
uint vkshmem_coll_lanes_(bool wg) { return wg ? vkshmem_wg_lanes_() : 1u; }

/* A team sync inside a collective: this invocation's operations complete first when `quiet`; in a
 * workgroup form every invocation calls it and invocation 0 syncs. `ok` false: the workgroup
 * still meets (its barriers stay uniform) but nothing is sent. */
void vkshmem_coll_sync_(vkshmem_team_layout t, bool wg, bool quiet, bool ok) {
    if (quiet) shmem_quiet();
    else vkshmem_fence_();
    if (wg) barrier();
    if (ok && (!wg || gl_LocalInvocationIndex == 0u)) vkshmem_arrive_wait_(t.sync, t.pes, t.size, t.me);
    vkshmem_fence_();
    if (wg) barrier();
    /* the other invocations read what invocation 0's acquire made visible to it */
    if (wg) vkshmem_fence_();
}

/* The data collectives (vkshmem_coll_data_ kinds). */
#define VKSHMEM_COLL_BROADCAST_ 0u
#define VKSHMEM_COLL_COLLECT_ 1u
#define VKSHMEM_COLL_FCOLLECT_ 2u
#define VKSHMEM_COLL_ALLTOALL_ 3u

/* The data movement of a collective: a broadcast gets `bytes` of root's src into dest; the others
 * put `bytes` from src (alltoall: src + i * bytes) to dest on every member i, starting with this
 * PE's right neighbour so that members do not all write to one PE at once. Small transfers go
 * one member per invocation, larger ones are split over every invocation. One transfer call
 * site: lavapipe inlines every call, and its compile time grows faster than the code. */
void vkshmem_coll_move_(uint kind, vkshmem_team_layout t, uint64_t dest, uint64_t src, uint64_t bytes, int root,
                        uint lane, uint lanes) {
    bool get = kind == VKSHMEM_COLL_BROADCAST_;
    if (get && dest == src && t.me == root) return;
    int n = get ? 1 : t.size;
    bool whole = lanes == 1u || bytes <= uint64_t(4096);
    if (!vkshmem_reserve_(uint(n) + 1u)) {
        vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, uint(n));
        return;
    }
    for (int k = 1; k <= n; ++k) {
        int i = get ? root : (t.me + k) % t.size;
        uint64_t s = kind == VKSHMEM_COLL_ALLTOALL_ ? src + uint64_t(i) * bytes : src;
        if (!whole || uint(k) % lanes == lane)
            vkshmem_xfer_(!get, dest, s, bytes, vkshmem_member_(t, i), whole ? 0u : lane, whole ? 1u : lanes, false,
                          uint64_t(0), uint64_t(0), 0u);
    }
}

/* ---- Synchronization -------------------------------------------------------------------------- */
/* Every member meets; with `quiet` (barriers) the operations of the calling invocation (of every
 * invocation of the workgroup) complete first. */
int vkshmem_team_sync_(uint64_t team, bool wg, bool quiet) {
    vkshmem_team_layout t;
    bool ok = vkshmem_coll_begin_(team, wg, t);
    vkshmem_coll_sync_(t, wg, quiet, ok);
    vkshmem_coll_end_(team, wg, ok);
    return ok ? 0 : 1;
}

void shmem_barrier_all() { vkshmem_team_sync_(SHMEM_TEAM_WORLD, false, true); }
void shmem_barrier_all_wg() { vkshmem_team_sync_(SHMEM_TEAM_WORLD, true, true); }
void shmem_sync_all() { vkshmem_team_sync_(SHMEM_TEAM_WORLD, false, false); }
void shmem_sync_all_wg() { vkshmem_team_sync_(SHMEM_TEAM_WORLD, true, false); }
int shmem_team_sync(shmem_team_t team) { return vkshmem_team_sync_(team, false, false); }
int shmem_team_sync_wg(shmem_team_t team) { return vkshmem_team_sync_(team, true, false); }

/* ---- Data collectives (bytes; the typed routines multiply by the element size) ------------------ */
/* broadcast: every member gets root's source (the root too, as OpenSHMEM 1.5's team broadcast);
 * members fetch it themselves, all at once, and the closing sync keeps root's source unchanged
 * until every member has it. fcollect: member i's source lands at dest + i * bytes on every
 * member. alltoall: block j of member i's source lands at dest + i * bytes on member j. collect:
 * the members' sources, of any sizes, concatenated in member order on every member; the sizes go
 * first, into word i of every member's scratch area. Each step opens with a team sync (one call
 * site, in a loop): before the data moves, every member has arrived (its destination is free);
 * after, every member's data has arrived (each sender's quiet precedes its arrival). */
int vkshmem_coll_data_(uint kind, uint64_t team, uint64_t dest, uint64_t src, uint64_t bytes, int root, bool wg) {
    vkshmem_team_layout t;
    bool entered = vkshmem_coll_begin_(team, wg, t);
    uint lane = vkshmem_coll_lane_(wg), lanes = vkshmem_coll_lanes_(wg);
    bool ok = entered;
    if (entered && kind == VKSHMEM_COLL_BROADCAST_ && (root < 0 || root >= t.size)) {
        ok = false;
        if (lane == 0u) vkshmem_error_(VKSHMEM_ERR_BAD_ROOT, uint(root));
    }
    if (entered && kind == VKSHMEM_COLL_COLLECT_ && uint64_t(t.size) * uint64_t(8) > uint64_t(t.scratch_bytes)) {
        ok = false;
        if (lane == 0u) vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, uint(t.size));
    }
    uint steps = kind == VKSHMEM_COLL_COLLECT_ ? 3u : 2u;
    uint64_t at = kind == VKSHMEM_COLL_BROADCAST_ ? dest : dest + uint64_t(t.me) * bytes;
    for (uint step = 0u; step < steps; ++step) {
        vkshmem_coll_sync_(t, wg, step != 0u, ok);
        if (!ok || step + 1u == steps) continue;
        if (kind == VKSHMEM_COLL_COLLECT_ && step == 0u) {
            if (vkshmem_reserve_(uint(t.size) + 1u)) {
                for (int k = 0; k < t.size; ++k)
                    if (uint(k) % lanes == lane)
                        vkshmem_p64_(t.scratch + uint64_t(8 * t.me), bytes, vkshmem_member_(t, (t.me + k) % t.size));
            }
            continue;
        }
        if (kind == VKSHMEM_COLL_COLLECT_) {
            at = dest;
            if (vkshmem_reserve_(uint(t.me) + 1u)) {
                for (int i = 0; i < t.me; ++i) at += vkshmem_ld64_(t.scratch + uint64_t(8 * i));
            }
        }
        vkshmem_coll_move_(kind, t, at, src, bytes, root, lane, lanes);
    }
    vkshmem_coll_end_(team, wg, entered);
    return ok ? 0 : 1;
}
int vkshmem_broadcast_(uint64_t team, uint64_t dest, uint64_t src, uint64_t bytes, int root, bool wg) {
    return vkshmem_coll_data_(VKSHMEM_COLL_BROADCAST_, team, dest, src, bytes, root, wg);
}
int vkshmem_collect_(uint64_t team, uint64_t dest, uint64_t src, uint64_t bytes, bool wg) {
    return vkshmem_coll_data_(VKSHMEM_COLL_COLLECT_, team, dest, src, bytes, 0, wg);
}
int vkshmem_fcollect_(uint64_t team, uint64_t dest, uint64_t src, uint64_t bytes, bool wg) {
    return vkshmem_coll_data_(VKSHMEM_COLL_FCOLLECT_, team, dest, src, bytes, 0, wg);
}
int vkshmem_alltoall_(uint64_t team, uint64_t dest, uint64_t src, uint64_t bytes, bool wg) {
    return vkshmem_coll_data_(VKSHMEM_COLL_ALLTOALL_, team, dest, src, bytes, 0, wg);
}

/* ---- Reductions -------------------------------------------------------------------------------- */
/* Element kinds (VKSHMEM_RK_*) and operations (VKSHMEM_RED_*) of the reduction core: vkshmem_abi.h. */

uint vkshmem_kind_bytes_(uint kind) { return kind == VKSHMEM_RK_I64 || kind == VKSHMEM_RK_U64 || kind == VKSHMEM_RK_F64 ? 8u : 4u; }

/* a op b for the integer kinds and float, on bit patterns (4-byte kinds in the low half). */
uint64_t vkshmem_combine_(uint64_t a, uint64_t b, uint kind, uint op) {
    if (kind == VKSHMEM_RK_F32) {
        float x = uintBitsToFloat(uint(a)), y = uintBitsToFloat(uint(b));
        float r = op == VKSHMEM_RED_MIN ? min(x, y) : op == VKSHMEM_RED_MAX ? max(x, y) :
                  op == VKSHMEM_RED_SUM ? x + y : x * y;
        return uint64_t(floatBitsToUint(r));
    }
    bool narrow = kind == VKSHMEM_RK_I32 || kind == VKSHMEM_RK_U32;
    bool sgn = kind == VKSHMEM_RK_I32 || kind == VKSHMEM_RK_I64;
    /* Signed 4-byte values compare as sign-extended 64-bit ones. */
    int64_t sa = narrow ? int64_t(int(uint(a))) : int64_t(a), sb = narrow ? int64_t(int(uint(b))) : int64_t(b);
    bool less = sgn ? sa < sb : a < b;
    uint64_t r = op == VKSHMEM_RED_AND ? a & b : op == VKSHMEM_RED_OR ? a | b : op == VKSHMEM_RED_XOR ? a ^ b :
                 op == VKSHMEM_RED_MIN ? (less ? a : b) : op == VKSHMEM_RED_MAX ? (less ? b : a) :
                 op == VKSHMEM_RED_SUM ? a + b : a * b;
    return narrow ? r & uint64_t(0xffffffffu) : r;
}

/* The same for double (a routine of its own: a shader that reduces no double needs no
 * shaderFloat64). */
uint64_t vkshmem_combine_f64_(uint64_t a, uint64_t b, uint kind, uint op) {
    double x = uint64BitsToDouble(a), y = uint64BitsToDouble(b);
    double r = op == VKSHMEM_RED_MIN ? min(x, y) : op == VKSHMEM_RED_MAX ? max(x, y) :
               op == VKSHMEM_RED_SUM ? x + y : x * y;
    return doubleBitsToUint64(r);
}

#define VKSHMEM_REDUCE_NAME_ vkshmem_reduce_
#define VKSHMEM_REDUCE_COMBINE_ vkshmem_combine_
#include "vkshmem_reduce.glsl"
#undef VKSHMEM_REDUCE_NAME_
#undef VKSHMEM_REDUCE_COMBINE_
#define VKSHMEM_REDUCE_NAME_ vkshmem_reduce_f64_
#define VKSHMEM_REDUCE_COMBINE_ vkshmem_combine_f64_
#include "vkshmem_reduce.glsl"
#undef VKSHMEM_REDUCE_NAME_
#undef VKSHMEM_REDUCE_COMBINE_
