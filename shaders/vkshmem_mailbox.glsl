/* The AMO mailbox (vkshmem_mailbox_layout in vkshmem_abi.h): how an atomic that the host asks of
 * a device reaches memory while a kernel of that device runs. On NVIDIA (driver 580) a compute
 * dispatch the host submits does not run beside a running kernel, even on another queue family,
 * so a kernel that waits for such an atomic would wait for itself. The host posts the atomic here
 * and submits the runtime's sweeper kernel (src/vulkan/kernels/amo.comp); a kernel of the device
 * library that is waiting carries it out from its wait loop. Whoever takes `taken` from posted - 1
 * to posted first does it, so it runs once.
 *
 * Included by vkshmem.glsl and by amo.comp; needs GL_EXT_buffer_reference,
 * GL_EXT_shader_explicit_arithmetic_types_int64 and GL_EXT_shader_atomic_int64. */
#ifndef VKSHMEM_MAILBOX_GLSL
#define VKSHMEM_MAILBOX_GLSL

layout(buffer_reference, std430, buffer_reference_align = 8) buffer vkshmem_mailbox_ref_ {
    uint posted;
    uint taken;
    uint done;
    uint op_width;
    uint64_t target;
    uint64_t operand;
    uint64_t cond;
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

/* Carries out the posted atomic if nobody has taken it yet; true if this invocation did. The
 * host writes the fields before `posted` and the mailbox lives where running kernels see host
 * writes at once; every access is atomic so none is served from a stale cache line. */
bool vkshmem_mailbox_serve_(uint64_t mailbox) {
    vkshmem_mailbox_ref_ m = vkshmem_mailbox_ref_(mailbox);
    uint p = atomicAdd(m.posted, 0u);
    if (p == 0u || atomicAdd(m.taken, 0u) == p) return false;
    if (atomicCompSwap(m.taken, p - 1u, p) != p - 1u) return false;
    memoryBarrierBuffer();
    uint ow = atomicAdd(m.op_width, 0u);
    uint op = ow & 255u;
    uint64_t target = atomicAdd(m.target, uint64_t(0));
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
    atomicExchange(m.result, old);
    memoryBarrierBuffer();
    atomicExchange(m.done, p);
    return true;
}

#endif /* VKSHMEM_MAILBOX_GLSL */
