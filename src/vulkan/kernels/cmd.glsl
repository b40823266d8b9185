// SPDX-License-Identifier: BSL-1.0
// The kernels of the queue-ordered operations (vkshmem/vulkan.h, vkshmemx_cmd_*; vulkan/cmd.cpp):
// each recorded operation is one or a few dispatches of these, over the device library, so it
// takes every route the library takes. The including file defines one of CMD_XFER, CMD_SYNC,
// CMD_COMBINE, CMD_COMBINE_F64 (a pipeline each: lavapipe compiles a pipeline at its first use,
// in time that grows faster than its code, and only double reductions need shaderFloat64).
layout(local_size_x = 64) in;

#include "vkshmem.glsl"

// Must match CmdPush in vulkan/cmd.cpp.
layout(push_constant) uniform Push {
    uint64_t state; // the recorded operations' own state block (their errors go there)
    uint64_t dest;
    uint64_t src;
    uint64_t bytes; // COMBINE: elements
    uint64_t team;  // a team record
    uint64_t sig;   // a signal (PUT_SIGNAL, WAIT_SIGNAL); COMBINE: the chunk (elements per member)
    uint64_t value; // the signal value or the value compared with
    uint op;
    int pe;         // the target PE; a broadcast's root
    uint arg;       // sig_op, cmp, the collective's kind, the reduction's element kind
    uint arg2;      // the reduction's operation
} pc;

#define CMD_PUT 0u
#define CMD_GET 1u
#define CMD_MOVE 3u
#define CMD_ARRIVE 4u
#define CMD_WAIT_SIGNAL 5u
#define CMD_WAIT_TEAM 6u
#define CMD_WAIT_QUIET 7u
#define CMD_COMBINE_OP 8u
#define CMD_SIGNAL 9u
// CMD_MOVE's kind beyond the collectives' (VKSHMEM_COLL_*_): a reduction's chunk of this PE into its
// slot (dest: the offset in the half) of the team's scratch half of this sync on every member.
#define CMD_MOVE_REDUCE 4u
// Which relayed wait gave up (error_info of VKSHMEM_ERR_WAIT_TIMEOUT / PROXY_TIMEOUT).
#define CMD_WAIT_ID_SIGNAL 2u
#define CMD_WAIT_ID_TEAM 7u
#define CMD_WAIT_ID_QUIET 6u

// A team sync's arrival (vkshmem_arrive_wait_ without the wait): adds to every member's counter.
// It does not wait for the adds that go through the proxy: the proxy carries out requests in
// ticket order, each after those before it (a put's data before the arrival that follows it), and
// a kernel that waits for the proxy may hold up the other processes on its GPU, whose copies the
// requests may need (PEs on two GPUs). The relayed wait that follows finds the count it waits for
// in the low half of the team record's reserved0, and the recorded reduction's combine the parity of this
// sync (its scratch half) in the high half.
void cmd_arrive(uint64_t team) {
    vkshmem_team_ref_ ref = vkshmem_team_(team);
    vkshmem_team_layout t = ref.t;
    uint epoch = uint(vkshmem_load_(t.sync, 8u) >> 32);
    ref.t.reserved0 = (uint64_t(epoch) << 32) | uint64_t(uint(t.size) * (epoch + 1u));
    if (!vkshmem_reserve_(uint(t.size) + 1u)) return;
    for (int k = 0; k < t.size; ++k) {
        uint64_t add = k == 0 ? (1ul << 32) + 1ul : 1ul;
        vkshmem_amo64_(t.sync, VKSHMEM_AMO_ADD, add, 0ul, vkshmem_member_(t, (t.me + k) % t.size), false);
    }
}

#if defined(CMD_SYNC)
uint cmd_head = 0u;       // CMD_WAIT_QUIET: the ring's head when this workgroup began
uint64_t cmd_sync = 0ul;  // CMD_WAIT_TEAM: the team's sync counter and the count to wait for,
uint cmd_target = 0u;     // read once (the record is in host memory on GPUs)

// Whether the relayed wait's condition holds now.
bool cmd_holds() {
    if (pc.op == CMD_WAIT_SIGNAL)
        return vkshmem_holds_(vkshmem_ld64_(pc.sig), pc.value, vkshmem_cmp_set_(int(pc.arg)), false, 8u);
    if (pc.op == CMD_WAIT_TEAM) return vkshmem_ld32_(cmd_sync) >= cmd_target;
    // quiet: the proxy has completed every request taken before this workgroup looked
    return vkshmem_slots_ == 0u || int(vkshmem_ld32_(vkshmem_done_addr_) - cmd_head) >= 0;
}
#endif

void main() {
    vkshmem_init(pc.state);
    uint lane = gl_LocalInvocationIndex, lanes = gl_WorkGroupSize.x;
#if defined(CMD_XFER)
    // Transfers are split over every invocation of the dispatch (none waits for another).
    lane = gl_GlobalInvocationID.x;
    lanes = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    if (pc.op == CMD_SIGNAL) {
        // after the data (a relayed quiet between them): the signal alone
        if (lane == 0u)
            vkshmem_amo64_(pc.sig, int(pc.arg) == SHMEM_SIGNAL_ADD ? VKSHMEM_AMO_ADD : VKSHMEM_AMO_SET, pc.value, 0ul,
                           pc.pe, false);
        return;
    }
    if (pc.op == CMD_MOVE) {
        vkshmem_team_ref_ ref = vkshmem_team_(pc.team);
        vkshmem_team_layout t = ref.t;
        uint kind = pc.arg;
        uint64_t dest = pc.dest;
        if (kind == CMD_MOVE_REDUCE) {
            // Every workgroup reads the parity before the last one arrives (which changes it).
            kind = VKSHMEM_COLL_FCOLLECT_;
            dest += t.scratch + uint64_t((uint(vkshmem_load_(t.sync, 8u) >> 32) & 1u) * (t.scratch_bytes / 2u));
        }
        vkshmem_coll_move_(kind, t, dest, pc.src, pc.bytes, pc.pe, lane, lanes);
        if (pc.arg2 == 0u) {
            shmem_quiet();
            return;
        }
        // Then (arg2 1) this PE's arrival at the team's next sync, made by the last workgroup to
        // finish its part (counted in the record's reserved1, which it sets back to 0): every
        // part is visible (stores) or taken before it (proxy requests, which the proxy carries out
        // in order: cmd_arrive) before any member sees the arrival; completed first only where an
        // arrival would not go through the proxy after it.
        bool overtakes = false;
        for (int k = 0; k < t.size && !overtakes; ++k)
            overtakes = vkshmem_overtakes_(dest, t.sync, vkshmem_member_(t, k));
        if (overtakes) shmem_quiet();
        else vkshmem_fence_();
        barrier();
        if (gl_LocalInvocationIndex != 0u) return;
        vkshmem_fence_();
        if (atomicAdd(ref.t.reserved1, 1ul) + 1ul != uint64_t(gl_NumWorkGroups.x)) return;
        atomicExchange(ref.t.reserved1, 0ul);
        vkshmem_fence_();
        cmd_arrive(pc.team);
        return;
    }
    vkshmem_xfer_(pc.op != CMD_GET, pc.dest, pc.src, pc.bytes, pc.pe, lane, lanes, false, 0ul, 0ul, 0u);
#elif defined(CMD_SYNC)
    if (lane != 0u) return;
    if (pc.op == CMD_ARRIVE) {
        // A team sync's arrival (cmd_arrive). A barrier's (arg 1) first waits for the proxy to
        // complete every request taken so far (a quiet: it waits for this PE's CPU, never for
        // another PE's kernel).
        if (pc.arg == 1u && vkshmem_slots_ != 0u) {
            cmd_head = vkshmem_ld32_(vkshmem_head_addr_);
            uint n = vkshmem_wait_iters_(), i;
            bool quiet = false;
            for (i = 0u; i < n; ++i) {
                if (cmd_holds()) {
                    quiet = true;
                    break;
                }
                if (vkshmem_backoff_()) break;
            }
            vkshmem_charge_(i + 2u);
            if (!quiet && !cmd_holds()) vkshmem_error_(VKSHMEM_ERR_PROXY_TIMEOUT, CMD_WAIT_ID_QUIET);
            vkshmem_fence_();
        }
        cmd_arrive(pc.team);
        return;
    }
    if (vkshmem_slots_ != 0u) cmd_head = vkshmem_ld32_(vkshmem_head_addr_);
    if (pc.op == CMD_WAIT_TEAM) {
        cmd_sync = vkshmem_team_(pc.team).t.sync;
        cmd_target = uint(vkshmem_team_(pc.team).t.reserved0);
    }
    // A relayed wait (arg2 0): the dispatch's workgroups wait in turn (on lavapipe one after
    // another, each with a loop budget of its own, so the wait can outlast one workgroup's
    // ~100 ms), each ending once the condition holds; the last to finish re-checks and reports a
    // timeout. A sliced wait (GPUs; arg2 1, and 2 for the last slice, which reports): one slice
    // of a chain of short dispatches, each polling at most `bytes` times, so that the kernels of
    // other processes on the GPU run between them; the slice that sees the condition hold sets
    // the group count of the chain's later slices (the uint at `dest`) to 0.
    bool done = cmd_holds();
    uint n = done ? 0u : vkshmem_wait_iters_(), i;
    if (pc.arg2 != 0u && pc.bytes != 0ul) n = min(n, uint(min(pc.bytes, 0xffffffful)));
    for (i = 0u; i < n; ++i) {
        if (cmd_holds()) {
            done = true;
            break;
        }
        if (vkshmem_backoff_()) break;
    }
    vkshmem_charge_(i + 2u);
    if (pc.arg2 != 0u) {
        if (done && pc.dest != 0ul) atomicExchange(vkshmem_w32_(pc.dest).v, 0u);
        if (pc.arg2 == 1u || done) return;
    }
    uint finished = pc.arg2 != 0u ? 0u : atomicAdd(vkshmem_st_.s.relay, 1u) + 1u;
    if (finished % gl_NumWorkGroups.x == 0u && !cmd_holds()) {
        uint id = pc.op == CMD_WAIT_SIGNAL ? CMD_WAIT_ID_SIGNAL : pc.op == CMD_WAIT_TEAM ? CMD_WAIT_ID_TEAM : CMD_WAIT_ID_QUIET;
        vkshmem_error_(pc.op == CMD_WAIT_QUIET ? VKSHMEM_ERR_PROXY_TIMEOUT : VKSHMEM_ERR_WAIT_TIMEOUT, id);
    }
    vkshmem_fence_();
#else
    // The combine step of a recorded reduction: elements [0, bytes) of the chunk in this PE's
    // scratch slots (sig elements apart) of the half of the sync just made (cmd_arrive) into
    // dest, in member order.
    vkshmem_team_layout t = vkshmem_team_(pc.team).t;
    uint64_t slots = t.scratch + uint64_t((uint(t.reserved0 >> 32) & 1u) * (t.scratch_bytes / 2u));
    uint w = vkshmem_kind_bytes_(pc.arg);
    uint per = uint((pc.bytes + uint64_t(lanes) - 1ul) / uint64_t(lanes));
    if (!vkshmem_reserve_(per * uint(t.size) + 2u)) {
        vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(pc.bytes * uint64_t(w)));
        return;
    }
    for (uint64_t e = uint64_t(lane); e < pc.bytes; e += uint64_t(lanes)) {
        uint64_t acc = vkshmem_load_(slots + e * uint64_t(w), w);
        for (int j = 1; j < t.size; ++j) {
            uint64_t v = vkshmem_load_(slots + (uint64_t(j) * pc.sig + e) * uint64_t(w), w);
#if defined(CMD_COMBINE_F64)
            acc = vkshmem_combine_f64_(acc, v, pc.arg, pc.arg2);
#else
            acc = vkshmem_combine_(acc, v, pc.arg, pc.arg2);
#endif
        }
        uint64_t d = pc.dest + e * uint64_t(w);
        if (w == 4u) vkshmem_w32_(d).v = uint(acc);
        else vkshmem_w64_(d).v = acc;
    }
#endif
}
