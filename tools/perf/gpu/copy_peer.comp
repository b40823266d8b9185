// SPDX-License-Identifier: BSL-1.0
// Baseline for putmem_wg into a peer (vkshmem-gpu-perf --diag): a plain copy of 16-byte words
// into PE `pe`'s heap at the address shmem_ptr gives, grid-stride (pad 0) or one contiguous
// share per workgroup as putmem_wg makes them (pad 1). Whether a put's shortfall is the
// library's or the peer's memory's.
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "vkshmem.glsl"
layout(buffer_reference, std430, buffer_reference_align = 16) buffer vkperf_words { uvec4 w[]; };
layout(push_constant) uniform Push { uint64_t state, dst, src, bytes; int pe; uint pad; } pc;
void main() {
    vkshmem_init(pc.state);
    const uint64_t remote = shmem_ptr(pc.dst, pc.pe);
    if (remote == uint64_t(0)) return;
    vkperf_words d = vkperf_words(remote), s = vkperf_words(pc.src);
    const uint n16 = uint(pc.bytes / uint64_t(16));
    if (pc.pad == 0u) {
        const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
        for (uint i = gl_GlobalInvocationID.x; i < n16; i += stride) d.w[i] = s.w[i];
    } else {
        const uint share = n16 / gl_NumWorkGroups.x, first = share * gl_WorkGroupID.x;
        for (uint i = gl_LocalInvocationIndex; i < share; i += gl_WorkGroupSize.x) d.w[first + i] = s.w[first + i];
    }
}
