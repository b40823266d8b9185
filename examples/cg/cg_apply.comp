// SPDX-License-Identifier: BSL-1.0
// ap = A p on this PE's band (A: the 5-point -Laplacian, zero Dirichlet boundary) and the
// workgroup's partial sum of p.ap. Reads the halo rows of p, so it also resets the halo signals
// (when pc.sig is set): no neighbour puts again before the reductions after this kernel, which
// every PE reaches only after its own apply.
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "cg.glsl"

void main() {
    const uint n = pc.rows * pc.nx;
    Doubles p = Doubles(pc.p), ap = Doubles(pc.ap);
    Scalars s = Scalars(pc.scal);
    const double cx = s.cx, cy = s.cy;
    double sum = 0.0;
    for (uint k = 0u; k < pc.per_inv; ++k) {
        const uint i = cg_point(k);
        if (i >= n) continue;
        const uint c = i % pc.nx, j = i + pc.nx;
        const double u = p.v[j];
        // Left and right of the grid are the boundary (0); above and below are p's rows, halos
        // included (0 at the top and bottom of the grid).
        const double w = c > 0u ? p.v[j - 1u] : 0.0;
        const double e = c + 1u < pc.nx ? p.v[j + 1u] : 0.0;
        const double a = cx * (2.0 * u - w - e) + cy * (2.0 * u - p.v[j - pc.nx] - p.v[j + pc.nx]);
        ap.v[i] = a;
        sum += u * a;
    }
    const double total = cg_workgroup_sum(sum);
    if (gl_LocalInvocationID.x == 0u) {
        Doubles(pc.parts).v[gl_WorkGroupID.x] = total;
        if (gl_WorkGroupID.x == 0u && pc.sig != 0ul) {
            Words g = Words(pc.sig);
            g.v[0] = 0ul;
            g.v[1] = 0ul;
        }
    }
}
