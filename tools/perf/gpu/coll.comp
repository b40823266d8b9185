// SPDX-License-Identifier: BSL-1.0
// vkshmem-coll-perf's in-kernel collectives: `rounds` of one collective of the device library
// by one workgroup per PE (mode 0 shmem_barrier_all_wg, 1 an 8-byte double sum_reduce_wg,
// 2 fcollectmem_wg, 3 alltoallmem_wg of `bytes` per PE).
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "vkshmem.glsl"
layout(push_constant) uniform Push { uint64_t state, dst, src, bytes; uint rounds, mode; } pc;
void main() {
    vkshmem_init(pc.state);
    if (!vkshmemx_budget_charge(pc.rounds + 1u)) return;
    for (uint r = 0u; r < pc.rounds; ++r) {
        if (pc.mode == 0u) shmem_barrier_all_wg();
        else if (pc.mode == 1u) shmem_double_sum_reduce_wg(SHMEM_TEAM_WORLD, pc.dst, pc.src, 1ul);
        else if (pc.mode == 2u) shmem_fcollectmem_wg(SHMEM_TEAM_WORLD, pc.dst, pc.src, pc.bytes);
        else shmem_alltoallmem_wg(SHMEM_TEAM_WORLD, pc.dst, pc.src, pc.bytes);
    }
}
