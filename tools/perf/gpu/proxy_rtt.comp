// SPDX-License-Identifier: BSL-1.0
// Round trips through the proxy: `count` times a 4-byte put to PE `pe`
// followed by shmem_quiet (run with VKSHMEM_FORCE_PROXY=1).
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 1) in;
#include "vkshmem.glsl"
layout(push_constant) uniform Push { uint64_t state, dst; uint count; int pe; } pc;
void main() {
    vkshmem_init(pc.state);
    for (uint i = 0; i < pc.count; ++i) {
        shmem_int_p(pc.dst, int(i), pc.pe);
        shmem_quiet();
    }
}
