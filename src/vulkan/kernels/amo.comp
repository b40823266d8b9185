// One atomic memory operation on device memory, for host-initiated AMOs on a
// device heap that the CPU reaches only through a GPU's BAR (where CPU atomics
// are not atomic with respect to the device). One invocation; the old value
// goes to result_address. Addresses are buffer device addresses.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require

layout(local_size_x = 1) in;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Word32 { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Word64 { uint64_t v; };

// Must match AmoPush in vulkan/amo.cpp and AmoOp in api/typed_impl.hpp.
layout(push_constant) uniform Push {
    uint64_t target;
    uint64_t result;
    uint64_t operand;
    uint64_t cond;
    uint op;    // 0 fetch, 1 set, 2 swap, 3 compare_swap, 4 add, 5 and, 6 or, 7 xor
    uint width; // 4 or 8
} pc;

void main() {
    if (pc.width == 4) {
        Word32 t = Word32(pc.target);
        uint x = uint(pc.operand), c = uint(pc.cond), old = 0;
        switch (pc.op) {
        case 0: old = atomicAdd(t.v, 0u); break;
        case 1: old = atomicExchange(t.v, x); break;
        case 2: old = atomicExchange(t.v, x); break;
        case 3: old = atomicCompSwap(t.v, c, x); break;
        case 4: old = atomicAdd(t.v, x); break;
        case 5: old = atomicAnd(t.v, x); break;
        case 6: old = atomicOr(t.v, x); break;
        case 7: old = atomicXor(t.v, x); break;
        }
        Word32(pc.result).v = old;
    } else {
        Word64 t = Word64(pc.target);
        uint64_t x = pc.operand, c = pc.cond, old = 0;
        switch (pc.op) {
        case 0: old = atomicAdd(t.v, uint64_t(0)); break;
        case 1: old = atomicExchange(t.v, x); break;
        case 2: old = atomicExchange(t.v, x); break;
        case 3: old = atomicCompSwap(t.v, c, x); break;
        case 4: old = atomicAdd(t.v, x); break;
        case 5: old = atomicAnd(t.v, x); break;
        case 6: old = atomicOr(t.v, x); break;
        case 7: old = atomicXor(t.v, x); break;
        }
        Word64(pc.result).v = old;
    }
}
