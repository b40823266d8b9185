// SPDX-License-Identifier: BSL-1.0
// folded[g] = the sum of partials [g * CG_WG, (g + 1) * CG_WG) (those below nparts): the
// GPU-resident solver's per-PE step between a vector kernel's partials and the reduction across
// PEs, so that the vector kernels keep short loops and many workgroups while the recorded
// reduction stays one chunk of a few doubles.
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "cg.glsl"

void main() {
    const uint i = gl_WorkGroupID.x * CG_WG + gl_LocalInvocationID.x;
    double v = 0.0;
    if (i < pc.nparts) v = Doubles(pc.parts).v[i];
    const double total = cg_workgroup_sum(v);
    if (gl_LocalInvocationID.x == 0u) Doubles(pc.folded).v[gl_WorkGroupID.x] = total;
}
