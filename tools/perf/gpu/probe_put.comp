// SPDX-License-Identifier: BSL-1.0
// vk-submit-probe (prerecorded-dispatch, timeline): one 8-byte put per dispatch. Reads
// {value, offset} from the mailbox the host wrote before the dispatch could start and stores
// value at dev + offset.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 1) in;
// Coherent volatile: with a batch submitted ahead (timeline), the host writes the mailbox after
// the submission; read it from memory, not from what a cache may still hold.
layout(buffer_reference, std430, buffer_reference_align = 8) coherent volatile readonly buffer Mailbox {
    uint64_t value;
    uint64_t offset;
};
layout(buffer_reference, std430, buffer_reference_align = 8) writeonly buffer Word { uint64_t v; };
layout(push_constant) uniform Push { uint64_t mailbox, dev; } pc;
void main() {
    Mailbox m = Mailbox(pc.mailbox);
    Word(pc.dev + m.offset).v = m.value;
}
