// SPDX-License-Identifier: BSL-1.0
// vkshmem-coll-perf's in-kernel collectives: `rounds` of one collective of the device library
// by one workgroup per PE (mode 0 shmem_barrier_all_wg, 1 an 8-byte double sum_reduce_wg,
// 2 fcollectmem_wg, 3 alltoallmem_wg of `bytes` per PE), and the steps they are made of, each
// timed alone by invocation 0 (`--probe`; modes 4 and up, dst an 8-byte word of the device heap):
// 4 a device-scope memory barrier, 5 a read of this PE's peer table, 6 a read of the state
// block, 7 an atomic add to dst, 8 a poll of dst (the wait's load), 9 a route lookup to this PE,
// 10 vkshmem_init, 11 shmem_team_sync (thread form), 12 claiming and releasing the world team's
// busy word. Each read depends on the one before, so reads do not overlap. Modes 13 and up run in
// every invocation: 13 shmem_sync_all_wg (no quiet), 14 a workgroup barrier and a memory barrier,
// 15 shmem_team_sync (thread form) by invocation 0 between two workgroup barriers, 16 shmem_quiet.
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "vkshmem.glsl"
layout(push_constant) uniform Push { uint64_t state, dst, src, bytes; uint rounds, mode; } pc;

uint64_t probe(uint mode, uint r, uint64_t acc) {
    uint k = uint(acc >> 62); /* 0 here, but the compiler cannot know: each step waits for the last */
    if (mode == 4u) {
        vkshmem_fence_();
        return acc + uint64_t(r);
    }
    if (mode == 5u) return acc + vkshmem_peers_.p[(uint(vkshmem_me_) + k) % uint(vkshmem_npes_)].device_base;
    if (mode == 6u) return acc + uint64_t(vkshmem_state_ref_(pc.state + uint64_t(k * 8u)).s.flags);
    if (mode == 7u) return acc + atomicAdd(vkshmem_w64_(pc.dst + uint64_t(k * 8u)).v, uint64_t(1));
    if (mode == 8u) return acc + vkshmem_ld64_(pc.dst + uint64_t(k * 8u));
    if (mode == 9u) {
        uint64_t remote;
        vkshmem_route_(pc.dst + uint64_t(k * 8u), uint64_t(8), vkshmem_me_, true, remote);
        return acc + remote;
    }
    if (mode == 10u) {
        vkshmem_init(pc.state + uint64_t(k * 8u));
        return acc + uint64_t(vkshmem_npes_);
    }
    if (mode == 11u) {
        shmem_team_sync(SHMEM_TEAM_WORLD + uint64_t(k));
        return acc + uint64_t(1);
    }
    vkshmem_team_layout t;
    bool ok = vkshmem_coll_begin_(SHMEM_TEAM_WORLD + uint64_t(k), false, t);
    vkshmem_coll_end_(SHMEM_TEAM_WORLD, false, ok);
    return acc + uint64_t(t.size);
}

void main() {
    vkshmem_init(pc.state);
    if (!vkshmemx_budget_charge(pc.rounds + 1u)) return;
    if (pc.mode >= 13u) {
        for (uint r = 0u; r < pc.rounds; ++r) {
            if (pc.mode == 13u) shmem_sync_all_wg();
            else if (pc.mode == 14u) {
                barrier();
                vkshmem_fence_();
            } else if (pc.mode == 15u) {
                barrier();
                if (gl_LocalInvocationIndex == 0u) shmem_team_sync(SHMEM_TEAM_WORLD);
                barrier();
            } else shmem_quiet();
        }
        return;
    }
    if (pc.mode >= 4u) {
        if (gl_LocalInvocationIndex != 0u) return;
        uint64_t acc = uint64_t(0);
        for (uint r = 0u; r < pc.rounds; ++r) acc = probe(pc.mode, r, acc);
        vkshmem_w64_(pc.dst + uint64_t(8)).v = acc;
        return;
    }
    for (uint r = 0u; r < pc.rounds; ++r) {
        if (pc.mode == 0u) shmem_barrier_all_wg();
        else if (pc.mode == 1u) shmem_double_sum_reduce_wg(SHMEM_TEAM_WORLD, pc.dst, pc.src, 1ul);
        else if (pc.mode == 2u) shmem_fcollectmem_wg(SHMEM_TEAM_WORLD, pc.dst, pc.src, pc.bytes);
        else shmem_alltoallmem_wg(SHMEM_TEAM_WORLD, pc.dst, pc.src, pc.bytes);
    }
}
