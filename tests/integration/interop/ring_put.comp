// SPDX-License-Identifier: BSL-1.0
// The interop test's kernel: the workgroup puts `bytes` from this PE's `src`
// into `dst` of PE `pe` with the workgroup-cooperative putmem.
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "vkshmem.glsl"
layout(push_constant) uniform Push { uint64_t state, dst, src, bytes; int pe; uint pad; } pc;
void main() {
    vkshmem_init(pc.state);
    shmem_putmem_wg(pc.dst, pc.src, pc.bytes, pc.pe);
    if (gl_LocalInvocationIndex == 0) shmem_quiet();
}
