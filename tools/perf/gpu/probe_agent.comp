// SPDX-License-Identifier: BSL-1.0
// vk-submit-probe (persistent): one invocation that stays resident and serves 8-byte puts from
// the host. It polls mailbox.seq; when seq exceeds the last one served it reads value and offset
// (after seq: acquire), stores value at dev + offset, and then writes status.ack = seq (release),
// which the host spins on. It leaves after max_polls polls (lavapipe ends any loop after 65,535
// iterations, so the host keeps max_polls below that there) or when the host sets mailbox.stop
// (with a new seq); status.alive tells the host whether a dispatch is still serving, status.exits
// counts the dispatches that left. A new dispatch resumes from status.ack.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 1) in;
// Written by the host while this runs: every read goes to memory.
layout(buffer_reference, std430, buffer_reference_align = 8) coherent volatile readonly buffer Mailbox {
    uint64_t seq;
    uint64_t value;
    uint64_t offset;
    uint64_t stop;
};
// Read by the host while this runs: plain stores (a shader's atomics on host memory may stay in the
// GPU's cache until the dispatch ends).
layout(buffer_reference, std430, buffer_reference_align = 8) coherent volatile buffer Status {
    uint64_t ack;
    uint64_t alive;
    uint64_t exits;
};
layout(buffer_reference, std430, buffer_reference_align = 8) coherent writeonly buffer Word { uint64_t v; };
layout(push_constant) uniform Push { uint64_t mailbox, status, dev; uint max_polls, pad; } pc;
void main() {
    Mailbox m = Mailbox(pc.mailbox);
    Status st = Status(pc.status);
    uint64_t last = st.ack;
    st.alive = 1ul;
    for (uint n = 0u; n < pc.max_polls; ++n) {
        const uint64_t s = m.seq; // one load per poll
        if (s <= last) continue;
        memoryBarrierBuffer(); // acquire: stop, value and offset were written before seq
        if (m.stop != 0ul) break;
        Word(pc.dev + m.offset).v = m.value;
        memoryBarrierBuffer(); // release: the store is done before the host sees ack
        st.ack = s;
        last = s;
    }
    st.exits = st.exits + 1ul;
    memoryBarrierBuffer();
    st.alive = 0ul;
}
