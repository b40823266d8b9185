// SPDX-License-Identifier: BSL-1.0
// How fast HLSL (through glslang) copies within this PE's heaps by the runtime's descriptor set
// (vkshmem-gpu-perf --diag): grid-stride over n16 16-byte units from src to dst (device addresses
// of this PE's symmetric objects), mode 0 as the library does (one uint Load/Store per 4 bytes,
// each through its switch over the bindings), 1 with Load4/Store4, 2 through uint4 structured
// buffers aliasing the same bindings; n16 = 0 times the library's setup alone, without the mailbox
// serving that waits compile in (VKSHMEM_HLSL_NO_MAILBOX).
#define VKSHMEM_HLSL_NO_MAILBOX
#include "vkshmem.hlsl"
struct Push {
    uint64_t dst;
    uint64_t src;
    uint n16;
    uint mode;
    uint groups;
};
[[vk::push_constant]] ConstantBuffer<Push> pc;
#define ALIAS_(i) [[vk::binding(i, VKSHMEM_HLSL_SET)]] globallycoherent RWStructuredBuffer<uint4> v4_##i##_;
ALIAS_(1) ALIAS_(2) ALIAS_(3) ALIAS_(4)
uint4 ld4_(uint b, uint o) {
    uint4 v = uint4(0u, 0u, 0u, 0u);
    if (b == 1u) v = v4_1_[o >> 4];
    else if (b == 2u) v = v4_2_[o >> 4];
    else if (b == 3u) v = v4_3_[o >> 4];
    else if (b == 4u) v = v4_4_[o >> 4];
    return v;
}
void st4_(uint b, uint o, uint4 v) {
    if (b == 1u) v4_1_[o >> 4] = v;
    else if (b == 2u) v4_2_[o >> 4] = v;
    else if (b == 3u) v4_3_[o >> 4] = v;
    else if (b == 4u) v4_4_[o >> 4] = v;
}
[numthreads(256, 1, 1)]
void main(uint li : SV_GroupIndex, uint3 gid : SV_GroupID) {
    vkshmem_init(li, 256u);
    uint db, sb;
    uint64_t doff, soff;
    uint64_t n = vkshmem_u64_(pc.n16) * 16u;
    if (!vkshmem_local_(pc.dst, n, db, doff) || !vkshmem_local_(pc.src, n, sb, soff)) return;
    uint stride = pc.groups * 256u;
    for (uint i = gid.x * 256u + li; i < pc.n16; i += stride) {
        uint64_t at = vkshmem_u64_(i) * 16u;
        uint64_t d = doff + at, s = soff + at;
        if (pc.mode == 0u) {
            for (uint k = 0u; k < 16u; k += 4u) vkshmem_st_(db, d + k, vkshmem_ld_(sb, s + k));
        } else {
            uint b = vkshmem_bind_(sb, s), o = vkshmem_boff_(sb, s);
            uint4 v = uint4(0u, 0u, 0u, 0u);
            if (pc.mode == 1u) {
#define X_(B) v = B.Load4(o);
                VKSHMEM_ON_(X_)
#undef X_
            } else {
                v = ld4_(b, o);
            }
            b = vkshmem_bind_(db, d);
            o = vkshmem_boff_(db, d);
            if (pc.mode == 1u) {
#define X_(B) B.Store4(o, v);
                VKSHMEM_ON_(X_)
#undef X_
            } else {
                st4_(b, o, v);
            }
        }
    }
}
