// SPDX-License-Identifier: BSL-1.0
// Diagnostic (--diag): one shmem_long_p per 8 bytes (grid-stride): the cost
// of the library's per-call path (route, translation) without its copy loop.
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "vkshmem.glsl"
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Units { int64_t u[]; };
layout(push_constant) uniform Push { uint64_t state, dst, src, bytes; int pe; uint pad; } pc;
void main() {
    vkshmem_init(pc.state);
    Units s = Units(pc.src);
    const uint n8 = uint(pc.bytes / 8);
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < n8; i += stride) shmem_long_p(pc.dst + uint64_t(i) * 8, s.u[i], pc.pe);
}
