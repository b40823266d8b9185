// SPDX-License-Identifier: BSL-1.0
// Diagnostic (--diag): copy.comp with 8-byte units.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 256) in;
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Units { uint64_t u[]; };
layout(push_constant) uniform Push { uint64_t dst, src; uint n8, pad; } pc;
void main() {
    Units d = Units(pc.dst), s = Units(pc.src);
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n8; i += stride) d.u[i] = s.u[i];
}
