// SPDX-License-Identifier: BSL-1.0
/* The AMO mailbox (vkshmem_mailbox_layout in vkshmem_abi.h): how an atomic that the host asks of
 * a device heap reaches memory while kernels run on that GPU. On NVIDIA (driver 580) a compute
 * dispatch the host submits does not run beside a running kernel, even on another queue family,
 * nor beside another process's kernel on the same GPU, so a kernel that waits for such an atomic
 * would wait for itself, or for a kernel that waits for it. The host posts the atomic in its PE's
 * mailbox and submits the runtime's sweeper kernel (src/vulkan/kernels/amo.comp); a kernel of the
 * device library that is waiting on that GPU carries it out from its wait loop, whichever PE's
 * it is. Whoever moves `taken` from posted - 1 to posted first does it, so it runs once.
 *
 * Included by vkshmem.glsl and by amo.comp; needs GL_EXT_buffer_reference,
 * GL_EXT_shader_explicit_arithmetic_types_int64 and GL_EXT_shader_atomic_int64. */
#ifndef VKSHMEM_MAILBOX_GLSL
#define VKSHMEM_MAILBOX_GLSL

layout(buffer_reference, std430, buffer_reference_align = 8) buffer vkshmem_mailbox_ref_ {
    uint posted;
    uint taken;
    int target_pe;
    uint op_width;
    uint64_t target;
    uint64_t target_off;
    uint64_t operand;
    uint64_t cond;
};
layout(buffer_reference, std430, buffer_reference_align = 8) coherent buffer vkshmem_mailbox_reply_ {
    uint done;
    uint pad;
    uint64_t result;
};
layout(buffer_reference, std430, buffer_reference_align = 4) buffer vkshmem_mb32_ { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer vkshmem_mb64_ { uint64_t v; };

/* Operation `op` (VKSHMEM_AMO_*: fetch, set, swap, compare_swap, add, and, or, xor) on word w. */
#define VKSHMEM_MAILBOX_OP_(w, x, c, zero, old)                                                      \
    switch (op) {                                                                                    \
    case 0u: old = atomicAdd(w, zero); break;                                                        \
    case 1u:                                                                                         \
    case 2u: old = atomicExchange(w, x); break;                                                      \
    case 3u: old = atomicCompSwap(w, c, x); break;                                                   \
    case 4u: old = atomicAdd(w, x); break;                                                           \
    case 5u: old = atomicAnd(w, x); break;                                                           \
    case 6u: old = atomicOr(w, x); break;                                                            \
    case 7u: old = atomicXor(w, x); break;                                                           \
    }

/* Carries out the atomic posted in the mailbox at `request` if nobody has taken it yet (the word
 * at `claim` is posted - 1); true if this invocation did. `peers` is 0 for this PE's own mailbox (its target is an address of this
 * device), else this PE's peer table (vkshmem_peer_layout[]), which gives the target PE's device
 * heap here; a mailbox whose target this PE does not reach is left to others. The request lives
 * where running kernels see the host's writes; every access to it is atomic so none is served
 * from a stale cache line. The reply is host memory, written with plain stores (see
 * vkshmem_abi.h). */
bool vkshmem_mailbox_serve_(uint64_t request, uint64_t claim, uint64_t reply, uint64_t peers) {
    vkshmem_mailbox_ref_ m = vkshmem_mailbox_ref_(request);
    vkshmem_mb32_ taken = vkshmem_mb32_(claim);
    uint p = atomicAdd(m.posted, 0u);
    if (p == 0u || atomicAdd(taken.v, 0u) != p - 1u) return false;
    memoryBarrierBuffer();
    uint64_t target = atomicAdd(m.target, uint64_t(0));
    if (peers != uint64_t(0)) {
        int pe = atomicAdd(m.target_pe, 0);
        uint64_t base = pe < 0 ? uint64_t(0) : vkshmem_mb64_(peers + uint64_t(pe) * 16ul + 8ul).v;
        if (base == uint64_t(0)) return false;
        target = base + atomicAdd(m.target_off, uint64_t(0));
    }
    if (atomicCompSwap(taken.v, p - 1u, p) != p - 1u) return false;
    memoryBarrierBuffer();
    uint ow = atomicAdd(m.op_width, 0u);
    uint op = ow & 255u;
    uint64_t x = atomicAdd(m.operand, uint64_t(0));
    uint64_t c = atomicAdd(m.cond, uint64_t(0));
    uint64_t old = 0;
    if ((ow >> 8) == 4u) {
        vkshmem_mb32_ t = vkshmem_mb32_(target);
        uint x32 = uint(x), c32 = uint(c), o = 0u;
        VKSHMEM_MAILBOX_OP_(t.v, x32, c32, 0u, o)
        old = uint64_t(o);
    } else {
        vkshmem_mb64_ t = vkshmem_mb64_(target);
        VKSHMEM_MAILBOX_OP_(t.v, x, c, uint64_t(0), old)
    }
    vkshmem_mailbox_reply_ r = vkshmem_mailbox_reply_(reply);
    r.result = old;
    memoryBarrierBuffer();
    r.done = p;
    return true;
}

#endif /* VKSHMEM_MAILBOX_GLSL */
