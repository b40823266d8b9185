// SPDX-License-Identifier: BSL-1.0
// The GPU-resident solver's scalars, one workgroup: sums the reduced folded sums (red, the same on
// every PE after the recorded reduction, summed here in the same order, so every PE gets the same
// alpha and beta) and
//   mode 0: alpha = rr / p.Ap
//   mode 1: beta = rr_new / rr, rr = rr_new, counts the iteration and records ||r|| in hist.
// A zero denominator (an exactly solved system) gives 0, as in the host and CPU solvers.
#version 460
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "cg.glsl"

void main() {
    Doubles red = Doubles(pc.red);
    double v = 0.0;
    for (uint k = gl_LocalInvocationID.x; k < pc.nfold; k += CG_WG) v += red.v[k];
    const double total = cg_workgroup_sum(v);
    if (gl_LocalInvocationID.x != 0u) return;
    Scalars s = Scalars(pc.scal);
    if (pc.mode == 0u) {
        s.alpha = total > 0.0 ? s.rr / total : 0.0;
    } else {
        s.beta = s.rr > 0.0 ? total / s.rr : 0.0;
        s.rr = total;
        const uint64_t it = s.iter + 1ul;
        s.iter = it;
        if (it < s.hist_len) Doubles(pc.hist).v[uint(it)] = sqrt(total);
    }
}
