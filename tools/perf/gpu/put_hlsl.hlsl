// SPDX-License-Identifier: BSL-1.0
// put.comp in HLSL (shaders/vkshmem.hlsl): each workgroup puts its share of `bytes` with the
// workgroup-cooperative putmem. HLSL has no count of workgroups: `groups` carries it.
#include "vkshmem.hlsl"
struct Push {
    uint64_t state; /* unused: HLSL reaches the state through the runtime's descriptor set */
    uint64_t dst;
    uint64_t src;
    uint64_t bytes;
    int pe;
    uint groups;
};
[[vk::push_constant]] ConstantBuffer<Push> pc;
[numthreads(256, 1, 1)]
void main(uint li : SV_GroupIndex, uint3 gid : SV_GroupID) {
    vkshmem_init(li, 256u);
    uint64_t share = pc.bytes / vkshmem_u64_(pc.groups);
    uint64_t off = share * vkshmem_u64_(gid.x);
    shmem_putmem_wg(pc.dst + off, pc.src + off, share, pc.pe);
    if (li == 0u) shmem_quiet();
}
