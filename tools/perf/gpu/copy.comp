// SPDX-License-Identifier: BSL-1.0
// Baseline: a plain compute-shader copy of n16 16-byte words (grid-stride).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 256) in;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Words { uvec4 w[]; };
layout(push_constant) uniform Push { uint64_t dst, src; uint n16, pad; } pc;
void main() {
    Words d = Words(pc.dst), s = Words(pc.src);
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n16; i += stride) d.w[i] = s.w[i];
}
