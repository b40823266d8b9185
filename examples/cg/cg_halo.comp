// SPDX-License-Identifier: BSL-1.0
// The halo exchange of the GPU-resident solver: workgroup 0 puts this PE's first row of p into the
// halo row below the band of the PE above, workgroup 1 its last row into row 0 of the PE below,
// each followed by that neighbour's signal (shmem_putmem_signal_wg: the whole workgroup copies the
// row, and the signal is set only once it has arrived). The neighbours wait for it in their own
// queues (vkshmemx_cmd_signal_wait_until) and reset it in the kernel that reads the halo
// (cg_apply.comp).
#version 460
#extension GL_GOOGLE_include_directive : require
// The workgroup size comes before the device library (shaders/README.md).
layout(local_size_x = 64) in;
#include "vkshmem.glsl"
#include "cg.glsl"

void main() {
    vkshmem_init(pc.state);
    const bool to_up = gl_WorkGroupID.x == 0u;
    const int pe = to_up ? pc.up : pc.down;
    if (pe < 0) return; // the whole workgroup: uniform
    const uint row = to_up ? 1u : pc.rows;
    const uint64_t bytes = 8ul * uint64_t(pc.nx);
    // One call site: lavapipe's compile time grows with the number of library calls in a shader.
    // Symmetric addresses: our own p's, at the rows where the neighbours keep ours.
    const uint64_t dest = to_up ? pc.p + bytes * uint64_t(pc.rows_up + 1u) : pc.p;
    shmem_putmem_signal_wg(dest, pc.p + bytes * uint64_t(row), bytes, to_up ? pc.sig + 8ul : pc.sig, 1ul,
                           SHMEM_SIGNAL_SET, pe);
}
