// SPDX-License-Identifier: BSL-1.0
// ring.comp in HLSL: each invocation puts one int into the next PE's copy of the symmetric array.
#include "vkshmem.hlsl"

struct Push {
    uint64_t state; // unused in HLSL: the library reaches the state through its descriptor set
    uint64_t dst;   // symmetric int[n]
    uint n;
    int base;
};
[[vk::push_constant]] ConstantBuffer<Push> pc;

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID, uint li : SV_GroupIndex) {
    vkshmem_init(li, 64);
    if (id.x >= pc.n) return;
    uint64_t dst = pc.dst;
    uint64_t off = id.x;
    dst += off * 4;
    shmem_int_p(dst, pc.base + int(id.x), (shmem_my_pe() + 1) % shmem_n_pes());
}
