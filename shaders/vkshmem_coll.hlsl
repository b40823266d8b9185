// SPDX-License-Identifier: BSL-1.0
/*
 * vkshmem_coll.hlsl — teams, barriers and collectives of the HLSL device library: team queries,
 * barrier, sync, broadcast, collect, fcollect, alltoall and reductions, each in a thread form (one
 * invocation per PE calls it) and a workgroup form (`_wg`: every invocation of one workgroup per
 * PE calls it with the same arguments, in uniform control flow). Included by vkshmem.hlsl; the
 * typed routines are generated (vkshmem_typed.hlsl). The algorithms and rules are those of
 * vkshmem_coll.glsl (shaders/README.md, "Teams and collectives"), so HLSL and GLSL shaders of
 * different PEs may meet in one collective. What differs, and why:
 *   - Team records are read from binding 0: the runtime keeps them in the state block's
 *     allocation (vkshmem_abi.h), so a handle (a record's device address, as in GLSL) is found at
 *     handle - state address there.
 *   - The sync counter's 64-bit add of this PE's own arrival (2^32 + 1) is two 32-bit adds, the
 *     high word first: glslang's HLSL has no 64-bit Interlocked.
 *   - Reductions have no double (glslang cannot split a double into words) and compute the
 *     64-bit integer kinds on uint64_t bit patterns (signed order from the halves).
 * As everywhere in this library, `&&`, `||` and `?:` evaluate both operands: calls with effects
 * stay behind `if`s.
 */

/* ---- Team handles ----------------------------------------------------------------------------- */
/* A device team handle is the device address of this PE's record of the team (vkshmem_abi.h). */
typedef uint64_t shmem_team_t;
#define SHMEM_TEAM_INVALID vkshmem_u64_(0u)
#define SHMEM_TEAM_WORLD vkshmem_team_slot_(0u)
#define SHMEM_TEAM_SHARED vkshmem_team_slot_(1u)

uint64_t vkshmem_team_slot_(uint slot) {
    uint64_t r = 0u;
    if (vkshmem_teams_ != 0u && slot < vkshmem_n_teams_) r = vkshmem_teams_ + vkshmem_u64_(slot * vkshmem_team_stride_);
    return r;
}

/* Record fields (vkshmem_team_layout), as byte offsets. */
#define VKSHMEM_TEAM_SIZE_ 4u
#define VKSHMEM_TEAM_ME_ 8u
#define VKSHMEM_TEAM_SLOT_ 12u
#define VKSHMEM_TEAM_SYNC_ 16u
#define VKSHMEM_TEAM_SCRATCH_ 24u
#define VKSHMEM_TEAM_SCRATCH_BYTES_ 32u
#define VKSHMEM_TEAM_BUSY_ 36u
#define VKSHMEM_TEAM_PES_ 40u

/* The offset in binding 0 of the record `team` names, when it is a live team of this PE; false
 * otherwise (recorded as an error when report). */
bool vkshmem_team_rec_(uint64_t team, bool report, out uint rec) {
    rec = 0u;
    uint64_t off = team - vkshmem_teams_;
    bool ok = vkshmem_ok_ && team != 0u && vkshmem_teams_ != 0u && vkshmem_team_stride_ != 0u &&
              off < vkshmem_u64_(vkshmem_n_teams_ * vkshmem_team_stride_);
    if (ok) ok = (uint)off % vkshmem_team_stride_ == 0u;
    if (ok) {
        rec = vkshmem_teams_off_ + (uint)off;
        ok = vkshmem_sld_(rec) == VKSHMEM_TEAM_LIVE;
    }
    if (!ok && report) vkshmem_error_(VKSHMEM_ERR_BAD_TEAM, (uint)team);
    return ok;
}

int shmem_team_my_pe(shmem_team_t team) {
    uint rec;
    int r = -1;
    if (vkshmem_team_rec_(team, false, rec)) r = asint(vkshmem_sld_(rec + VKSHMEM_TEAM_ME_));
    return r;
}
int shmem_team_n_pes(shmem_team_t team) {
    uint rec;
    int r = -1;
    if (vkshmem_team_rec_(team, false, rec)) r = asint(vkshmem_sld_(rec + VKSHMEM_TEAM_SIZE_));
    return r;
}

/* The offset in binding 0 of a record's member table, and the world PE of member i. */
uint vkshmem_team_pes_(uint rec) { return (uint)(vkshmem_sld64_(rec + VKSHMEM_TEAM_PES_) - vkshmem_self_); }
int vkshmem_member_(uint pes, int i) { return asint(vkshmem_sld_(pes + 4u * uint(i))); }

/* src_pe of src_team as a PE of dest_team, or -1 (not a member, or a handle that is no team). */
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team) {
    uint s, d;
    if (!vkshmem_team_rec_(src_team, false, s)) return -1;
    if (!vkshmem_team_rec_(dest_team, false, d)) return -1;
    if (src_pe < 0 || src_pe >= asint(vkshmem_sld_(s + VKSHMEM_TEAM_SIZE_))) return -1;
    int world = vkshmem_member_(vkshmem_team_pes_(s), src_pe);
    int size = asint(vkshmem_sld_(d + VKSHMEM_TEAM_SIZE_));
    uint pes = vkshmem_team_pes_(d);
    if (!vkshmem_reserve_(uint(size) + 1u)) {
        vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, uint(size));
        return -1;
    }
    int found = -1;
    for (int i = 0; i < size; ++i) {
        if (vkshmem_member_(pes, i) == world) {
            found = i;
            break;
        }
    }
    return found;
}

/* ---- Arrivals on a sync counter --------------------------------------------------------------- */
/* `counter` is a symmetric uint64_t of this PE (a team's, or the application's): its low word
 * counts arrivals (every member adds 1 on every member per sync), its high word this PE's own
 * syncs (this PE adds 1 to it, before its arrivals; nobody else writes it), as in vkshmem.glsl,
 * whose one 64-bit add of 2^32 + 1 on this PE is two 32-bit adds here: the high word first, so
 * that (through the proxy, which serves in order, too) this sync cannot complete before the high
 * word counts it. Then it waits until the low word reaches n * (its syncs so far). Members are
 * world PEs listed at offset `pes` of binding 0 (a team record's table), or (pes 0) PEs 0..n-1. */
void vkshmem_arrive_wait_(uint64_t counter, uint pes, int n, int me) {
    uint bf;
    uint64_t off;
    if (!vkshmem_local_(counter, 8u, bf, off)) return;
    uint epoch = vkshmem_ald_(bf, off + 4u);
    if (!vkshmem_reserve_(uint(n) + 2u)) {
        vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, uint(n));
        return;
    }
    /* k = -1: this PE's high word; then the low word of every member. One call site: the driver
     * inlines each, and an atomic is an access through every binding. */
    for (int k = -1; k < n; ++k) {
        uint64_t at = counter + 4u;
        int pe = vkshmem_me_;
        if (k >= 0) {
            int i = (me + k) % n;
            at = counter;
            pe = i;
            if (pes != 0u) pe = vkshmem_member_(pes, i);
        }
        vkshmem_amo32_(at, VKSHMEM_AMO_ADD, 1u, 0u, pe, false);
        if (k < 0) vkshmem_fence_();
    }
    vkshmem_wait_(counter, SHMEM_CMP_GE, vkshmem_u64_(uint(n) * (epoch + 1u)), false, 4u, VKSHMEM_ERR_WAIT_TIMEOUT,
                  pes == 0u ? VKSHMEM_WAIT_ID_BARRIER : VKSHMEM_WAIT_ID_TEAM_SYNC);
}

/* ---- Barrier on a counter of the application's: one workgroup per PE -------------------------- */
/* All PEs, each with exactly one workgroup in this call, meet here. `counter` is a symmetric
 * uint64_t that the host zeroes once (shmem_calloc) and passes to every PE, used for nothing else;
 * GLSL shaders may share it (vkshmem.glsl counts the same way). Every invocation of the workgroup
 * calls it, in uniform control flow; it completes every invocation's operations first. The team
 * forms below (shmem_barrier_all_wg() without arguments) need no counter. */
void shmem_barrier_all_wg(uint64_t counter) {
    shmem_quiet();
    GroupMemoryBarrierWithGroupSync();
    if (vkshmem_lane_ == 0u && vkshmem_ok_) vkshmem_arrive_wait_(counter, 0u, vkshmem_npes_, vkshmem_me_);
    vkshmem_fence_();
    GroupMemoryBarrierWithGroupSync();
}

/* ---- The steps of a collective ---------------------------------------------------------------- */
/* Thread forms run them in the calling invocation (lane 0 of 1); workgroup forms in every
 * invocation of the workgroup (`wg` is a literal at every call, so the workgroup barriers below
 * are in uniform control flow once the driver has inlined the library). */
struct vkshmem_team_ {
    uint rec;  /* the record's offset in binding 0; 0: not entered */
    uint pes;  /* its member table's */
    int size;
    int me;
    uint64_t sync;
    uint64_t scratch;
    uint scratch_bytes;
};

/* The entered team's record (rec 0: size 0, nothing to do). */
vkshmem_team_ vkshmem_team_at_(uint rec) {
    vkshmem_team_ t;
    t.rec = rec;
    t.pes = 0u;
    t.size = 0;
    t.me = 0;
    t.sync = 0u;
    t.scratch = 0u;
    t.scratch_bytes = 0u;
    if (rec != 0u) {
        t.pes = vkshmem_team_pes_(rec);
        t.size = asint(vkshmem_sld_(rec + VKSHMEM_TEAM_SIZE_));
        t.me = asint(vkshmem_sld_(rec + VKSHMEM_TEAM_ME_));
        t.sync = vkshmem_sld64_(rec + VKSHMEM_TEAM_SYNC_);
        t.scratch = vkshmem_sld64_(rec + VKSHMEM_TEAM_SCRATCH_);
        t.scratch_bytes = vkshmem_sld_(rec + VKSHMEM_TEAM_SCRATCH_BYTES_);
    }
    return t;
}

/* Invocation 0's verdict for the workgroup forms: the record's offset, or 0. (The record's
 * offset is never 0: the state block comes first.) */
groupshared uint vkshmem_coll_entered_;

/* Claims the team for this collective: a team runs one collective of this PE at a time (the busy
 * word of its record); false, recorded, for a handle that is no team or a team that is busy. In a
 * workgroup form invocation 0 claims and the workgroup follows its verdict. */
bool vkshmem_coll_begin_(uint64_t team, bool wg, out vkshmem_team_ t) {
    uint rec = 0u;
    if (!wg || vkshmem_lane_ == 0u) {
        uint r;
        if (vkshmem_team_rec_(team, true, r)) {
            uint old;
            vkshmem_state_buf_.InterlockedCompareExchange(r + VKSHMEM_TEAM_BUSY_, 0u, 1u, old);
            if (old == 0u) rec = r;
            else vkshmem_error_(VKSHMEM_ERR_COLL_BUSY, vkshmem_sld_(r + VKSHMEM_TEAM_SLOT_));
        }
    }
    if (wg) {
        if (vkshmem_lane_ == 0u) vkshmem_coll_entered_ = rec;
        GroupMemoryBarrierWithGroupSync();
        rec = vkshmem_coll_entered_;
        GroupMemoryBarrierWithGroupSync();
    }
    t = vkshmem_team_at_(rec);
    return rec != 0u;
}

void vkshmem_coll_end_(vkshmem_team_ t, bool wg, bool entered) {
    if (entered && (!wg || vkshmem_lane_ == 0u)) vkshmem_sxchg_(t.rec + VKSHMEM_TEAM_BUSY_, 0u);
}

uint vkshmem_coll_lane_(bool wg) { return wg ? vkshmem_lane_ : 0u; }
uint vkshmem_coll_lanes_(bool wg) { return wg ? vkshmem_lanes_ : 1u; }

/* An element of w (4 or 8) bytes at (bf, off), in the low bytes. */
uint64_t vkshmem_ldw_(uint bf, uint64_t off, uint w) {
    uint hi = 0u;
    if (w == 8u) hi = vkshmem_ld_(bf, off + 4u);
    return vkshmem_join_(vkshmem_ld_(bf, off), hi);
}

/* A team sync inside a collective: this invocation's operations complete first when `quiet`; in a
 * workgroup form every invocation calls it and invocation 0 syncs. `ok` false: the workgroup
 * still meets (its barriers stay uniform) but nothing is sent. */
void vkshmem_coll_sync_(vkshmem_team_ t, bool wg, bool quiet, bool ok) {
    if (quiet) shmem_quiet();
    else vkshmem_fence_();
    if (wg) GroupMemoryBarrierWithGroupSync();
    if (ok && (!wg || vkshmem_lane_ == 0u)) vkshmem_arrive_wait_(t.sync, t.pes, t.size, t.me);
    vkshmem_fence_();
    if (wg) GroupMemoryBarrierWithGroupSync();
    /* the other invocations read what invocation 0's acquire made visible to it */
    if (wg) vkshmem_fence_();
}

/* The data collectives (vkshmem_coll_data_ kinds). */
#define VKSHMEM_COLL_BROADCAST_ 0u
#define VKSHMEM_COLL_COLLECT_ 1u
#define VKSHMEM_COLL_FCOLLECT_ 2u
#define VKSHMEM_COLL_ALLTOALL_ 3u

/* The data movement of a collective, as in vkshmem_coll.glsl: a broadcast gets `bytes` of root's
 * src into dest; the others put `bytes` from src (alltoall: src + i * bytes) to dest on every
 * member i, starting with this PE's right neighbour so that members do not all write to one PE at
 * once. Small transfers go one member per invocation, larger ones are split over every
 * invocation. One transfer call site: the driver inlines every call. */
void vkshmem_coll_move_(uint kind, vkshmem_team_ t, uint64_t dest, uint64_t src, uint64_t bytes, int root, uint lane,
                        uint lanes) {
    bool get = kind == VKSHMEM_COLL_BROADCAST_;
    if (get && dest == src && t.me == root) return;
    int n = get ? 1 : t.size;
    bool whole = lanes == 1u || bytes <= 4096u;
    if (!vkshmem_reserve_(uint(n) + 1u)) {
        vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, uint(n));
        return;
    }
    for (int k = 1; k <= n; ++k) {
        int i = get ? root : (t.me + k) % t.size;
        uint64_t s = src;
        if (kind == VKSHMEM_COLL_ALLTOALL_) s = src + vkshmem_u64_(uint(i)) * bytes;
        if (!whole || uint(k) % lanes == lane)
            vkshmem_xfer_(!get, dest, s, bytes, vkshmem_member_(t.pes, i), whole ? 0u : lane, whole ? 1u : lanes, false,
                          0u, 0u, 0u);
    }
}

/* ---- Synchronization -------------------------------------------------------------------------- */
/* Every member meets; with `quiet` (barriers) the operations of the calling invocation (of every
 * invocation of the workgroup) complete first. */
int vkshmem_team_sync_(uint64_t team, bool wg, bool quiet) {
    vkshmem_team_ t;
    bool ok = vkshmem_coll_begin_(team, wg, t);
    vkshmem_coll_sync_(t, wg, quiet, ok);
    vkshmem_coll_end_(t, wg, ok);
    return ok ? 0 : 1;
}

void shmem_barrier_all() { vkshmem_team_sync_(SHMEM_TEAM_WORLD, false, true); }
void shmem_barrier_all_wg() { vkshmem_team_sync_(SHMEM_TEAM_WORLD, true, true); }
void shmem_sync_all() { vkshmem_team_sync_(SHMEM_TEAM_WORLD, false, false); }
void shmem_sync_all_wg() { vkshmem_team_sync_(SHMEM_TEAM_WORLD, true, false); }
int shmem_team_sync(shmem_team_t team) { return vkshmem_team_sync_(team, false, false); }
int shmem_team_sync_wg(shmem_team_t team) { return vkshmem_team_sync_(team, true, false); }

/* ---- Data collectives (bytes; the typed routines multiply by the element size) ------------------ */
/* As in vkshmem_coll.glsl: broadcast: every member (the root too) gets root's source, fetching it
 * itself, and the closing sync keeps root's source unchanged until every member has it. fcollect:
 * member i's source lands at dest + i * bytes on every member. alltoall: block j of member i's
 * source lands at dest + i * bytes on member j. collect: the members' sources, of any sizes,
 * concatenated in member order on every member; the sizes go first, into word i of every
 * member's scratch area. Each step opens with a team sync (one call site, in a loop): before the
 * data moves, every member has arrived (its destination is free); after, every member's data has
 * arrived (each sender's quiet precedes its arrival). */
int vkshmem_coll_data_(uint kind, uint64_t team, uint64_t dest, uint64_t src, uint64_t bytes, int root, bool wg) {
    vkshmem_team_ t;
    bool entered = vkshmem_coll_begin_(team, wg, t);
    uint lane = vkshmem_coll_lane_(wg), lanes = vkshmem_coll_lanes_(wg);
    bool ok = entered;
    if (entered && kind == VKSHMEM_COLL_BROADCAST_ && (root < 0 || root >= t.size)) {
        ok = false;
        if (lane == 0u) vkshmem_error_(VKSHMEM_ERR_BAD_ROOT, uint(root));
    }
    if (entered && kind == VKSHMEM_COLL_COLLECT_ && uint(t.size) * 8u > t.scratch_bytes) {
        ok = false;
        if (lane == 0u) vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, uint(t.size));
    }
    uint steps = kind == VKSHMEM_COLL_COLLECT_ ? 3u : 2u;
    uint64_t at = dest;
    if (kind != VKSHMEM_COLL_BROADCAST_) at = dest + vkshmem_u64_(uint(t.me)) * bytes;
    for (uint step = 0u; step < steps; ++step) {
        vkshmem_coll_sync_(t, wg, step != 0u, ok);
        if (!ok || step + 1u == steps) continue;
        /* What moves in this step; one transfer call site (see vkshmem_coll_move_). */
        uint what = kind;
        uint64_t to = at, from = src, n = bytes;
        if (kind == VKSHMEM_COLL_COLLECT_) {
            uint sb;
            uint64_t so;
            bool here = vkshmem_local_(t.scratch, 8u * uint(t.size), sb, so);
            if (step == 0u) {
                /* the sizes: this PE's into word `me` of its own scratch area (by every invocation,
                 * which each read their own store), from there into that word of every member's */
                what = VKSHMEM_COLL_FCOLLECT_;
                to = t.scratch + 8u * uint(t.me);
                from = to;
                n = 8u;
                if (here) {
                    vkshmem_st_(sb, so + 8u * uint(t.me), (uint)bytes);
                    vkshmem_st_(sb, so + 8u * uint(t.me) + 4u, vkshmem_hi_(bytes));
                }
            } else if (here) {
                /* after the sizes of the members before this one */
                to = dest;
                if (vkshmem_reserve_(uint(t.me) + 1u)) {
                    for (int i = 0; i < t.me; ++i) to += vkshmem_ldw_(sb, so + 8u * uint(i), 8u);
                }
            }
        }
        vkshmem_coll_move_(what, t, to, from, n, root, lane, lanes);
    }
    vkshmem_coll_end_(t, wg, entered);
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
/* Element kinds (VKSHMEM_RK_*; no F64 here) and operations (VKSHMEM_RED_*): vkshmem_abi.h. */

/* a op b for the integer kinds and float, on bit patterns (4-byte kinds in the low word), exact:
 * 64-bit sums and products wrap as the signed ones do (two's complement), and signed order comes
 * from the high words compared as int, then the low ones as uint. */
uint64_t vkshmem_combine_(uint64_t a, uint64_t b, uint kind, uint op) {
    uint al = (uint)a, bl = (uint)b;
    if (kind == VKSHMEM_RK_F32) {
        float x = asfloat(al), y = asfloat(bl);
        float f = op == VKSHMEM_RED_MIN ? min(x, y) : op == VKSHMEM_RED_MAX ? max(x, y) :
                  op == VKSHMEM_RED_SUM ? x + y : x * y;
        return vkshmem_u64_(asuint(f));
    }
    bool narrow = kind == VKSHMEM_RK_I32 || kind == VKSHMEM_RK_U32;
    bool sgn = kind == VKSHMEM_RK_I32 || kind == VKSHMEM_RK_I64;
    uint ah = vkshmem_hi_(a), bh = vkshmem_hi_(b);
    bool less;
    if (narrow) less = sgn ? asint(al) < asint(bl) : al < bl;
    else less = (sgn ? asint(ah) < asint(bh) : ah < bh) || (ah == bh && al < bl);
    uint64_t r = op == VKSHMEM_RED_AND ? a & b : op == VKSHMEM_RED_OR ? a | b : op == VKSHMEM_RED_XOR ? a ^ b :
                 op == VKSHMEM_RED_MIN ? (less ? a : b) : op == VKSHMEM_RED_MAX ? (less ? b : a) :
                 op == VKSHMEM_RED_SUM ? a + b : a * b;
    if (narrow) r = vkshmem_u64_((uint)r);
    return r;
}

/* As vkshmem_reduce.glsl: the reduction goes in chunks that fit half the team's scratch area
 * (scratch_bytes / 2 / size bytes per member): each member puts its chunk of source into slot `me`
 * of one half of every member's scratch area, syncs (its puts complete first), and once every
 * member has arrived, combines the slots in member order (so every member computes the same
 * floating-point result) into its dest. The half is the parity of the member's syncs on the team
 * so far (its counter's high word), the same halves as the GLSL library's and the recorded
 * reductions'. source is read before dest is written, chunk by chunk, so they may be the same
 * array. */
int vkshmem_reduce_(uint64_t team, uint64_t dest, uint64_t src, uint64_t nelems, uint kind, uint op, bool wg) {
    vkshmem_team_ t;
    bool entered = vkshmem_coll_begin_(team, wg, t);
    uint lane = vkshmem_coll_lane_(wg), lanes = vkshmem_coll_lanes_(wg);
    uint w = kind == VKSHMEM_RK_I64 || kind == VKSHMEM_RK_U64 ? 8u : 4u;
    uint half_bytes = 0u, chunk = 0u;
    if (entered) {
        half_bytes = t.scratch_bytes / 2u;
        chunk = half_bytes / uint(t.size) / w;
    }
    bool ok = entered && chunk != 0u;
    if (entered && !ok && lane == 0u) vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, uint(t.size));
    /* This PE's scratch area, dest and sync counter, as (binding, offset): read and written
     * directly. */
    uint sb = 0u, db = 0u, cb = 0u;
    uint64_t so = 0u, dof = 0u, co = 0u;
    bool here = false;
    if (ok) here = vkshmem_local_(t.scratch, vkshmem_u64_(t.scratch_bytes), sb, so);
    if (here) here = vkshmem_local_(dest, nelems * w, db, dof);
    /* The half of the first chunk, read by every invocation before the first sync: only this
     * PE's own arrival changes it, and that comes after a workgroup barrier. */
    uint parity = 0u;
    if (ok && vkshmem_local_(t.sync, 8u, cb, co)) parity = vkshmem_ald_(cb, co + 4u) & 1u;
    uint64_t chunks = 0u;
    if (ok) chunks = (nelems + chunk - 1u) / chunk;
    uint steps = vkshmem_clamp32_(chunks);
    /* One sync per chunk (one call site). Not reserved: every invocation of a workgroup must run
     * the same steps (their syncs hold barriers); the waits inside take their polls from what the
     * budget leaves. */
    for (uint step = 0u; step < steps; ++step) {
        uint64_t first = vkshmem_u64_(step) * chunk;
        uint m = (uint)vkshmem_min64_(vkshmem_u64_(chunk), nelems - first);
        uint at = (parity ^ (step & 1u)) * half_bytes;
        vkshmem_coll_move_(VKSHMEM_COLL_FCOLLECT_, t, t.scratch + vkshmem_u64_(at + uint(t.me) * chunk * w),
                           src + first * w, vkshmem_u64_(m * w), 0, lane, lanes);
        vkshmem_coll_sync_(t, wg, true, ok);
        uint per = (m + lanes - 1u) / lanes;
        if (!vkshmem_reserve_(per * uint(t.size) + 2u)) {
            vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, m * w);
            continue;
        }
        if (!here) continue;
        for (uint e = lane; e < m; e += lanes) {
            uint64_t acc = 0u;
            for (int j = 0; j < t.size; ++j) { /* one load site */
                uint64_t v = vkshmem_ldw_(sb, so + vkshmem_u64_(at + (uint(j) * chunk + e) * w), w);
                acc = j == 0 ? v : vkshmem_combine_(acc, v, kind, op);
            }
            uint64_t d = dof + (first + e) * w;
            vkshmem_st_(db, d, (uint)acc);
            if (w == 8u) vkshmem_st_(db, d + 4u, vkshmem_hi_(acc));
        }
    }
    vkshmem_charge_(min(steps, 0xffffu));
    vkshmem_fence_();
    if (wg) GroupMemoryBarrierWithGroupSync();
    vkshmem_coll_end_(t, wg, entered);
    return ok ? 0 : 1;
}
