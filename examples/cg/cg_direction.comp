// SPDX-License-Identifier: BSL-1.0
// p = r + beta p on this PE's band (not its halo rows). beta comes from the Scalars block.
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "cg.glsl"

void main() {
    const uint n = pc.rows * pc.nx;
    Doubles r = Doubles(pc.r), p = Doubles(pc.p);
    const double beta = Scalars(pc.scal).beta;
    for (uint k = 0u; k < pc.per_inv; ++k) {
        const uint i = cg_point(k);
        if (i < n) p.v[i + pc.nx] = r.v[i] + beta * p.v[i + pc.nx];
    }
}
