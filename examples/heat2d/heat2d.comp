// SPDX-License-Identifier: BSL-1.0
// One explicit step of 2D heat diffusion on this PE's band of rows.
//
// The band has `rows` interior rows of `nx` floats plus one halo row above
// and below: (rows + 2) x nx floats in the device heap, twice (the step reads
// `src` and writes `dst`). Each invocation updates one point; the invocations
// of the first and last interior rows also put their new value into the halo
// row of the neighbouring PE's `dst`, so that PE's next step sees it. The
// global grid's outer edges are held fixed (Dirichlet boundary).
#version 460
#extension GL_GOOGLE_include_directive : require
// The workgroup size comes before the device library (shaders/README.md).
layout(local_size_x = 16, local_size_y = 16) in;
#include "vkshmem.glsl"

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };

layout(push_constant) uniform Push {
    uint64_t state; // vkshmemx_device_state()
    uint64_t src;   // symmetric: this step's input band
    uint64_t dst;   // symmetric: this step's output band
    uint nx;        // columns
    uint rows;      // interior rows of this PE
    uint first_row; // global index of this PE's first interior row
    uint ny;        // global rows
    float alpha;    // diffusion number (<= 0.25 for stability)
} pc;

void main() {
    vkshmem_init(pc.state);
    const uint x = gl_GlobalInvocationID.x;
    const uint r = gl_GlobalInvocationID.y + 1; // interior rows are 1..rows
    if (x >= pc.nx || r > pc.rows) return;
    Floats src = Floats(pc.src);
    Floats dst = Floats(pc.dst);
    const uint i = r * pc.nx + x;
    const uint gy = pc.first_row + r - 1;
    float u = src.v[i];
    if (x > 0 && x + 1 < pc.nx && gy > 0 && gy + 1 < pc.ny)
        u += pc.alpha * (src.v[i - pc.nx] + src.v[i + pc.nx] + src.v[i - 1] + src.v[i + 1] - 4.0 * u);
    dst.v[i] = u;

    const int me = shmem_my_pe(), npes = shmem_n_pes();
    // The neighbour above keeps our first row as its bottom halo (row rows+1
    // of its band); the neighbour below keeps our last row as its top halo
    // (row 0). Bands are equal, so offsets match on every PE.
    if (r == 1 && me > 0)
        shmem_float_p(pc.dst + 4ul * uint64_t((pc.rows + 1) * pc.nx + x), u, me - 1);
    if (r == pc.rows && me + 1 < npes)
        shmem_float_p(pc.dst + 4ul * uint64_t(x), u, me + 1);
}
