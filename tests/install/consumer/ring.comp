// SPDX-License-Identifier: BSL-1.0
// Each invocation puts one int into the next PE's copy of the symmetric array.
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "vkshmem.glsl"

layout(push_constant) uniform Push {
    uint64_t state; // vkshmemx_device_state()
    uint64_t dst;   // symmetric int[n]
    uint n;
    int base;
} pc;

void main() {
    vkshmem_init(pc.state);
    const uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    shmem_int_p(pc.dst + 4ul * i, pc.base + int(i), (shmem_my_pe() + 1) % shmem_n_pes());
}
