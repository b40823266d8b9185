// SPDX-License-Identifier: BSL-1.0
// x += alpha p, r -= alpha ap on this PE's band, and the workgroup's partial sum of r.r (of the
// new r). alpha comes from the Scalars block: the scalar kernel's (GPU-resident) or the host's.
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "cg.glsl"

void main() {
    const uint n = pc.rows * pc.nx;
    Doubles x = Doubles(pc.x), r = Doubles(pc.r), p = Doubles(pc.p), ap = Doubles(pc.ap);
    const double alpha = Scalars(pc.scal).alpha;
    double sum = 0.0;
    for (uint k = 0u; k < pc.per_inv; ++k) {
        const uint i = cg_point(k);
        if (i >= n) continue;
        x.v[i] += alpha * p.v[i + pc.nx];
        const double ri = r.v[i] - alpha * ap.v[i];
        r.v[i] = ri;
        sum += ri * ri;
    }
    const double total = cg_workgroup_sum(sum);
    if (gl_LocalInvocationID.x == 0u) Doubles(pc.parts).v[gl_WorkGroupID.x] = total;
}
