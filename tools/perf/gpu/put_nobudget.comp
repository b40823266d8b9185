// Diagnostic (--diag): put.comp with the loop budget accounting off.
#version 460
#extension GL_GOOGLE_include_directive : require
#define VKSHMEM_LOOP_BUDGET 0
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
