// SPDX-License-Identifier: BSL-1.0
// Shader put bandwidth: each workgroup puts its share of `bytes` from this
// PE's buffer into PE `pe`'s copy with the workgroup-cooperative putmem.
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "vkshmem.glsl"
layout(push_constant) uniform Push { uint64_t state, dst, src, bytes; int pe; uint pad; } pc;
void main() {
    vkshmem_init(pc.state);
    const uint64_t share = pc.bytes / uint64_t(gl_NumWorkGroups.x);
    const uint64_t off = share * uint64_t(gl_WorkGroupID.x);
    shmem_putmem_wg(pc.dst + off, pc.src + off, share, pc.pe);
    if (gl_LocalInvocationIndex == 0) shmem_quiet();
}
