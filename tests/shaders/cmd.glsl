// SPDX-License-Identifier: BSL-1.0
// The application's own kernels in the queue-ordered test (test_cmd.cpp), recorded with
// vkshmemx_kernel_record around the recorded communication. Record 0 of the push constants:
//   GEN: r.dst the uint words (pc.count of them) of this round's data, r.src the int, r.a the
//        float, r.b the double values (pc.mode each), from the seed at r.c, this PE and the index
//        (gen_word in test_cmd.cpp mirrors it)
//   MIX: out[i] = recv[i] + 3 * got[i] for i < pc.count (r.dst out, r.src recv, r.a got), and
//        twice the int sums (r.b, pc.mode of them) after them: it reads what the recorded
//        operations before it delivered
layout(local_size_x = 64) in;
#include "vkshmem.glsl"
#include "common.glsl"

uint gen_word(uint seed, uint salt, uint i) {
    uint h = seed ^ (uint(shmem_my_pe()) * 0x9e3779b9u) ^ (i * 0x85ebca6bu) ^ (salt * 0xc2b2ae35u);
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

void main() {
    vkshmem_init(pc.state);
    uint i = gl_GlobalInvocationID.x;
    Rec r = rec(0u);
#if defined(VARIANT_GEN)
    uint seed = L32(r.c).v;
    if (i < pc.count) L32(r.dst + 4ul * i).v = gen_word(seed, 0u, i);
    if (i < pc.mode) {
        L32(r.src + 4ul * i).v = gen_word(seed, 1u, i);
        // exact binary fractions: sums and maxima are exact in any order
        st(r.a + 4ul * i, float(int(gen_word(seed, 2u, i) % 2001u) - 1000) / 64.0);
        st(r.b + 8ul * i, double(int(gen_word(seed, 3u, i) % 2001u) - 1000) / 64.0lf);
    }
#else
    if (i < pc.count) L32(r.dst + 4ul * i).v = L32(r.src + 4ul * i).v + 3u * L32(r.a + 4ul * i).v;
    if (i < pc.mode) L32(r.dst + 4ul * (pc.count + i)).v = 2u * L32(r.b + 4ul * i).v;
#endif
}
