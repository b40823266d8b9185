// SPDX-License-Identifier: BSL-1.0
// What the CG kernels share: the push constants (cg.cpp's Push, field for field), the buffers they
// reach by device address, the thread-to-point mapping and a workgroup sum.
//
// A PE's band is `rows` rows of `nx` points. x, r and ap hold rows * nx doubles; p holds
// (rows + 2) * nx: row 0 is the halo from the PE above, rows 1..rows the band, row rows + 1 the halo
// from the PE below (zero where the neighbour is the global boundary: zero Dirichlet).
// Point i of the band (i = row * nx + column) is p[i + nx].
//
// A vector kernel runs `nparts` workgroups of CG_WG invocations, each invocation `per_inv` points
// (CG_WG apart, so neighbouring invocations touch neighbouring points), and writes one partial sum
// per workgroup; the fold kernel sums each CG_WG of those into one (`nfold` of them, at most 240),
// which the GPU-resident solver reduces across PEs element by element. Both counts follow from the
// largest band, so they are the same on every PE.
#ifndef CG_GLSL
#define CG_GLSL

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#define CG_WG 64u

layout(buffer_reference, std430, buffer_reference_align = 8) buffer Doubles { double v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Words { uint64_t v[]; };
// cg.cpp's Scalars.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Scalars {
    double rr;         // r.r of the current residual
    double alpha;      // rr / p.Ap of this iteration
    double beta;       // rr_new / rr of this iteration
    double cx, cy;     // 1/hx^2, 1/hy^2: the 5-point operator's weights
    uint64_t iter;     // iterations done (the scalar kernel counts them: index into hist)
    uint64_t hist_len; // doubles in hist
};

layout(push_constant) uniform Push {
    uint64_t state;    // vkshmemx_device_state() (only the halo kernel uses the device library)
    uint64_t x, r, p, ap;
    uint64_t parts;    // nparts partial sums, one per workgroup of a vector kernel
    uint64_t folded;   // nfold sums of CG_WG partials each (the fold kernel's)
    uint64_t red;      // the folded sums added up over PEs (read by the scalar kernel)
    uint64_t scal;     // Scalars
    uint64_t hist;     // ||r|| after each iteration (written by the scalar kernel)
    uint64_t sig;      // uint64_t[2]: [0] the row from above arrived, [1] the row from below; 0: none
    uint nx, rows;
    uint rows_up;      // the band of PE `up`: our first row goes to row rows_up + 1 of its p
    uint per_inv, nparts, nfold;
    uint mode;         // the scalar kernel: 0 alpha, 1 beta
    int up, down;      // neighbouring PEs, -1 at the global boundary
} pc;

// The band index of this invocation's k-th point (>= rows * nx: none).
uint cg_point(uint k) { return (gl_WorkGroupID.x * pc.per_inv + k) * CG_WG + gl_LocalInvocationID.x; }

// The sum of v over the workgroup, in a fixed order (the same on every run), to every invocation.
// The loop is uniform (every invocation runs all 6 steps), as barrier() requires.
shared double cg_sum_[CG_WG];
double cg_workgroup_sum(double v) {
    const uint l = gl_LocalInvocationID.x;
    cg_sum_[l] = v;
    barrier();
    for (uint s = CG_WG / 2u; s > 0u; s >>= 1) {
        if (l < s) cg_sum_[l] += cg_sum_[l + s];
        barrier();
    }
    return cg_sum_[0];
}

#endif
