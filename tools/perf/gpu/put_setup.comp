// SPDX-License-Identifier: BSL-1.0
// What a workgroup's putmem_wg costs besides its copy (vkshmem-gpu-perf --diag): the library's
// setup alone (pad 0), and with an empty putmem_wg and a quiet (pad 1), as put.comp makes them.
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "vkshmem.glsl"
layout(push_constant) uniform Push { uint64_t state, dst, src, bytes; int pe; uint pad; } pc;
void main() {
    vkshmem_init(pc.state);
    if (pc.pad == 0u) return;
    shmem_putmem_wg(pc.dst, pc.src, uint64_t(0), pc.pe);
    if (gl_LocalInvocationIndex == 0) shmem_quiet();
}
